/* SPDX-License-Identifier: MIT */
/*
 * What several commands share: the hosts they work on (one loader for
 * --hosts, --hostfile and --from), mlx's handling of hosts that cannot be
 * reached, the transport options, the start of libssh, and the catching of
 * interrupts.
 */
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "bundle.h"
#include "cmd.h"
#include "hostfile_read.h"
#include "hosts.h"
#include "probe.h"

/* The hosts of an mlx hostfile, in its order (as mlx.distributed_config reads them). */
static int
hosts_of_hostfile(struct jc_opts *o, struct cli_hosts *h)
{
	struct jc_err err = { 0 };

	if (hostfile_read_mlx(o->hostfile, &h->hf, &err) != 0)
		return cli_usage_error(o->cmd, "%s", err.msg);
	h->v = xcalloc(h->hf->nhosts ? h->hf->nhosts : 1, sizeof(*h->v));
	for (; h->n < h->hf->nhosts; h->n++)
		if (hosts_parse_target(h->hf->hosts[h->n].ssh, &h->v[h->n], &err) != 0)
			return cli_usage_error(o->cmd, "Failed to parse hostfile %s (%s)",
			    o->hostfile, err.msg);
	return 0;
}

int
cli_hosts_load(struct jc_opts *o, unsigned flags, struct cli_hosts *h)
{
	struct jc_err err = { 0 };

	memset(h, 0, sizeof(*h));
	if (o->hostfile != NULL)
		return hosts_of_hostfile(o, h);
	if (o->from != NULL && !o->hosts_given) {
		if (probe_bundle_hosts(o->from, &h->v, &h->n, &err) != 0) {
			jc_error(NULL, "%s", err.msg);
			return JC_EXIT_FAIL;
		}
		return 0;
	}
	if ((flags & CLI_HOSTS_ONLY_GIVEN) && !o->hosts_given)
		return 0;
	if (hosts_from_list(o->hosts, &h->v, &h->n, &err) != 0)
		return cli_usage_error(o->cmd, "%s", err.msg);
	return 0;
}

void
cli_hosts_clear(struct cli_hosts *h)
{
	hosts_free(h->v, h->n);
	jc_hostfile_free(h->hf);
	memset(h, 0, sizeof(*h));
}

void
cli_hosts_drop_unreachable(struct cli_hosts *h)
{
	size_t k = 0;

	for (size_t i = 0; i < h->n; i++) {
		if (!h->v[i].reachable) {
			jc_warn(h->v[i].name, "unreachable, left out: %s", h->v[i].error);
			jc_host_clear(&h->v[i]);
			continue;
		}
		h->v[k++] = h->v[i];
	}
	h->n = k;
}

/* mlx's report of the hosts it could not reach, after each one's error. */
static void
report_unreachable(const struct cli_hosts *h)
{
	struct jc_buf b = { 0 };

	for (size_t i = 0; i < h->n; i++)
		if (!h->v[i].reachable)
			jc_error(h->v[i].name, "%s", h->v[i].error);
	buf_puts(&b, "Could not ssh to the following hosts:\n");
	for (size_t i = 0; i < h->n; i++)
		if (!h->v[i].reachable)
			buf_printf(&b, "  -  %s\n", h->v[i].name);
	buf_puts(&b, "\nMaybe they are not set-up for password-less ssh?\n");
	out_stderr(b.data);
	buf_free(&b);
}

int
cli_hosts_check(struct jc_opts *o, struct cli_hosts *h, const char *none_left)
{
	for (size_t i = 0; i < h->n; i++)
		if (!h->v[i].reachable && !o->ignore_unreachable) {
			report_unreachable(h);
			return JC_EXIT_UNREACHABLE;
		}
	cli_hosts_drop_unreachable(h);
	if (h->n == 0) {
		jc_error(NULL, "%s", none_left);
		return JC_EXIT_UNREACHABLE;
	}
	return 0;
}

int
cli_hosts_errors(const struct cli_hosts *h)
{
	int rc = 0;

	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].error != NULL) {
			jc_error(h->v[i].name, "%s", h->v[i].error);
			rc = JC_EXIT_FAIL;
		}
	return rc;
}

void
cli_rank_envs(const struct jc_opts *o, struct jc_strv *out)
{
	static const char *const pass[] = { "JACCL_PROGRESS_TIMEOUT_S",
		"MLX_JACCL_PROGRESS_TIMEOUT_S" };
	long v;

	memset(out, 0, sizeof(*out));
	for (size_t k = 0; k < JC_ARRAY_LEN(pass); k++) {
		const char *val = getenv(pass[k]);

		if (val == NULL)
			continue;
		if (!jc_parse_int(val, 0, 1L << 30, &v)) {
			jc_warn(NULL, "%s='%.40s' is not a whole number of seconds: not passed to "
			    "the ranks", pass[k], val);
			continue;
		}
		strv_push_owned(out, xasprintf("%s=%ld", pass[k], v));
	}
	for (size_t k = 0; k < o->envs.n; k++)
		strv_push(out, o->envs.v[k]);
}

struct tr_opts
cli_tr_opts(const struct jc_opts *o)
{
	struct tr_opts tr = { 0 };

	tr.ssh_config = o->ssh_config;
	tr.accept_new = o->accept_new;
	tr.connect_timeout = o->connect_timeout;
	return tr;
}

const char *
cli_remote_bin(const struct jc_opts *o)
{
	const char *env = getenv("JACCL_CONFIG_REMOTE");

	if (o->remote_bin != NULL)
		return o->remote_bin;
	return env != NULL && *env != '\0' ? env : NULL;
}

struct apply_opts
cli_apply_opts(const struct jc_opts *o, void (*event)(void *, const struct apply_event *))
{
	struct apply_opts ao = { 0 };

	ao.tr = cli_tr_opts(o);
	ao.command_timeout = o->command_timeout;
	ao.state_dir = o->state_dir;
	ao.event = event;
	return ao;
}

int
cli_tr_init(void)
{
	if (tr_global_init() == 0)
		return 0;
	jc_error(NULL, "cannot initialise libssh");
	return JC_EXIT_FAIL;
}

int
cli_ssh_config_ok(const struct jc_opts *o)
{
	if (o->ssh_config == NULL || o->from != NULL || access(o->ssh_config, R_OK) == 0)
		return 0;
	jc_error(NULL, "cannot read ssh configuration %s: %s", o->ssh_config, strerror(errno));
	return JC_EXIT_FAIL;
}

int
cli_python_ok(struct jc_opts *o)
{
	if (o->python == NULL || jc_plain_word(o->python))
		return 0;
	return cli_usage_error(o->cmd, "argument --python: invalid path '%s' (an absolute "
	    "path or a command name, of letters, digits and ._-+:@%%/,= only)", o->python);
}

volatile sig_atomic_t cli_interrupted;

static void
on_signal(int sig)
{
	cli_interrupted = sig;
}

void
cli_catch_interrupts(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

int
cli_save_bundle(const char *dir, const struct jc_raw *raws, size_t n)
{
	struct jc_raw *got = xcalloc(n + 1, sizeof(*got));
	struct jc_err err = { 0 };
	size_t ng = 0;
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		if (raws[i].n > 0)
			got[ng++] = raws[i];	/* shallow: raws keeps ownership */
	if (bundle_save(dir, got, ng, &err) != 0) {
		jc_error(NULL, "%s", err.msg);
		rc = JC_EXIT_FAIL;
	} else {
		jc_info(NULL, "saved the outputs of %zu host%s in %s", ng, ng == 1 ? "" : "s", dir);
	}
	free(got);
	return rc;
}
