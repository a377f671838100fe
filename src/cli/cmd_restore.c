/* SPDX-License-Identifier: MIT */
/*
 * The restore command: undo the last setup from the state each host had
 * before it (saved by configure --auto-setup in the state directory), on
 * every saved host at once, or only on the hosts named with --hosts or
 * --hostfile. Each host is compared with its saved state and only what
 * differs is changed back.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "cmd.h"
#include "hostfile_read.h"
#include "hosts.h"

static void
restore_event(void *arg, const struct apply_event *ev)
{
	(void)arg;
	if (ev->kind == APPLY_EV_UNDO)
		fprintf(stderr, "[#] %s: %s\n", ev->host, ev->command);
	else if (ev->kind == APPLY_EV_FAILED)
		jc_error(ev->host, "%s failed (exit %d)%s%s", ev->command, ev->status,
		    ev->stderr_text && *ev->stderr_text ? ": " : "",
		    ev->stderr_text ? ev->stderr_text : "");
	fflush(stderr);
}

/* The host names selected on the command line, or none (all saved hosts). */
static int
selected(struct jc_opts *o, struct jc_strv *names)
{
	struct jc_err err = { 0 };
	struct jc_host *hosts = NULL;
	size_t n = 0;

	if (o->hostfile != NULL) {
		struct jc_hostfile *hf = NULL;

		if (hostfile_read_mlx(o->hostfile, &hf, &err) != 0)
			return cli_usage_error(o->cmd, "%s", err.msg);
		hosts = xcalloc(hf->nhosts ? hf->nhosts : 1, sizeof(*hosts));
		for (size_t i = 0; i < hf->nhosts; i++, n++)
			if (hosts_parse_target(hf->hosts[i].ssh, &hosts[i], &err) != 0) {
				hosts_free(hosts, n);
				jc_hostfile_free(hf);
				return cli_usage_error(o->cmd, "Failed to parse hostfile %s (%s)",
				    o->hostfile, err.msg);
			}
		jc_hostfile_free(hf);
	} else if (o->hosts_given) {
		if (hosts_from_list(o->hosts, &hosts, &n, &err) != 0)
			return cli_usage_error(o->cmd, "%s", err.msg);
	}
	for (size_t i = 0; i < n; i++)
		strv_push(names, hosts[i].name);
	hosts_free(hosts, n);
	return 0;
}

int
cmd_restore(struct jc_opts *o)
{
	struct apply_opts ao = { 0 };
	struct apply_restored *res = NULL;
	struct jc_strv names = { 0 };
	struct jc_err err = { 0 };
	const char *why = NULL;
	size_t n = 0;
	int rc;

	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if (o->from != NULL)
		return cli_usage_error(o->cmd, "restore changes live hosts; --from cannot be used");
	if ((rc = selected(o, &names)) != 0)
		return rc;
	ao.tr.ssh_config = o->ssh_config;
	ao.tr.accept_new = o->accept_new;
	ao.tr.connect_timeout = o->connect_timeout;
	ao.command_timeout = o->command_timeout;
	ao.state_dir = o->state_dir;
	ao.event = restore_event;
	if (tr_global_init() != 0) {
		jc_error(NULL, "cannot initialise libssh");
		strv_free(&names);
		return JC_EXIT_FAIL;
	}
	rc = apply_restore(&ao, (const char *const *)names.v, names.n, &res, &n, &why, &err);
	tr_global_cleanup();
	strv_free(&names);
	if (rc != 0) {
		jc_error(NULL, "%s", err.msg);
		return JC_EXIT_FAIL;
	}
	if (why != NULL) {
		char *dir = apply_state_dir(&ao);

		printf("nothing to restore: %s (state directory %s)\n", why, dir);
		free(dir);
		return JC_EXIT_OK;
	}
	for (size_t i = 0; i < n; i++) {
		if (res[i].error != NULL) {
			jc_error(res[i].name, "not restored: %s", res[i].error);
			rc = JC_EXIT_FAIL;
		} else if (res[i].ran == 0) {
			printf("%s: already as saved, nothing to change\n", res[i].name);
		} else {
			printf("%s: restored (%zu command%s)\n", res[i].name, res[i].ran,
			    res[i].ran == 1 ? "" : "s");
		}
	}
	apply_restored_free(res, n);
	return rc;
}
