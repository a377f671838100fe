/* SPDX-License-Identifier: MIT */
/*
 * The probe command: discover every host (over SSH, or from a saved
 * bundle), optionally save the raw outputs as a bundle, and print what was
 * found, as text or as one JSON document. Unreachable hosts are reported
 * together the way mlx.distributed_config does, or dropped on request.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "cmd.h"
#include "hostfile.h"
#include "hosts.h"
#include "inventory.h"
#include "probe.h"

/* progress on a terminal: one line per host, redrawn in place */
struct progress {
	const struct jc_host *hosts;
	size_t n;
	enum probe_state *st;
	bool redraw;		/* else one line per change */
	bool drawn;
};

static void
progress_cb(void *arg, size_t i, enum probe_state st)
{
	struct progress *p = arg;
	struct jc_buf b = { 0 };

	if (p->st[i] == st && p->drawn)
		return;
	p->st[i] = st;
	if (!p->redraw) {
		if (st != PROBE_WAITING)
			buf_printf(&b, "%s: %s\n", p->hosts[i].name, probe_state_name(st));
	} else {
		if (p->drawn)
			buf_printf(&b, "\033[%zuA", p->n);
		for (size_t k = 0; k < p->n; k++)
			buf_printf(&b, "\r\033[K  %-24s %s\n", p->hosts[k].name,
			    probe_state_name(p->st[k]));
		p->drawn = true;
	}
	if (b.len)
		fputs(b.data, stderr);
	fflush(stderr);
	buf_free(&b);
}

static void
log_cb(void *arg, size_t i, const char *command, int status, double seconds)
{
	struct progress *p = arg;

	jc_info(p->hosts[i].name, "%s: exit %d, %.3f s", command, status, seconds);
}

static const char *
tri(int v, const char *yes, const char *no)
{
	return v == JC_YES ? yes : v == JC_NO ? no : "unknown";
}

static const char *
os_name(enum jc_os os)
{
	return os == JC_OS_MACOS ? "macOS" : os == JC_OS_LINUX ? "Linux" : "unknown OS";
}

/* The host and port whose own id is id, among the probed hosts. */
static bool
find_peer(const struct jc_host *hosts, size_t n, const char *id, const struct jc_host **ph,
    const struct jc_port **pp)
{
	if (id == NULL)
		return false;
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < hosts[i].nports; k++)
			if (hosts[i].ports[k].id && strcmp(hosts[i].ports[k].id, id) == 0) {
				*ph = &hosts[i];
				*pp = &hosts[i].ports[k];
				return true;
			}
	return false;
}

static void
print_host(const struct jc_host *hosts, size_t n, const struct jc_host *h)
{
	printf("%s: %s", h->name, h->model ? h->model : "unknown model");
	printf(", %s", os_name(h->os));
	if (h->os_version)
		printf(" %s", h->os_version);
	if (h->os_build)
		printf(" (%s)", h->os_build);
	putchar('\n');
	if (h->hostname && strcmp(h->hostname, h->name) != 0)
		printf("  hostname:   %s\n", h->hostname);
	printf("  management: %s%s%s\n", h->mgmt_ip ? h->mgmt_ip : "none found",
	    h->mgmt_iface ? " on " : "", h->mgmt_iface ? h->mgmt_iface : "");
	printf("  sudo:       %s\n", tri(h->sudo, "yes (passwordless)", "no (needs a password)"));
	printf("  rdma:       %s", tri(h->rdma_enabled, "enabled", "disabled"));
	if (h->rdma_listed != JC_UNKNOWN)
		printf(", %zu device%s listed", h->nrdma, h->nrdma == 1 ? "" : "s");
	putchar('\n');
	for (size_t i = 0; i < h->nifaces; i++) {
		const struct jc_iface *f = &h->ifaces[i];

		if (!f->is_bridge)
			continue;
		printf("  bridge:     %s %s", f->name, f->up == JC_YES ? "up" :
		    f->up == JC_NO ? "down" : "state unknown");
		if (f->nmembers) {
			printf(", members");
			for (size_t k = 0; k < f->nmembers; k++)
				printf(" %s", f->members[k]);
		}
		putchar('\n');
	}
	if (h->nports)
		printf("  ports:\n");
	for (size_t i = 0; i < h->nports; i++) {
		const struct jc_port *p = &h->ports[i];
		const struct jc_host *ph;
		const struct jc_port *pp;

		printf("    %-6s", p->receptacle ? p->receptacle : "-");
		printf(" %-8s", p->iface ? p->iface : "?");
		printf(" %-10s", p->link ? p->link : "no link");
		if (find_peer(hosts, n, p->peer_id, &ph, &pp))
			printf(" -> %s %s", ph->name, pp->iface ? pp->iface : "?");
		else if (p->peer_id)
			printf(" -> %s (not probed)", p->peer_model ? p->peer_model : p->peer_id);
		if (p->peer_via_dock)
			printf(" via dock");
		for (size_t k = 0; k < p->ndevices; k++)
			printf("%s%s", k ? ", " : " [", p->devices[k]);
		if (p->ndevices)
			putchar(']');
		putchar('\n');
	}
	if (h->nrdma)
		printf("  rdma devices:\n");
	for (size_t i = 0; i < h->nrdma; i++)
		printf("    %-12s %-8s %s\n", h->rdma[i].name,
		    h->rdma[i].netdev ? h->rdma[i].netdev : "?", jc_port_state_name(h->rdma[i].state));
	for (size_t i = 0; i < h->nnotes; i++)
		printf("  note: %s\n", h->notes[i]);
}

static json_t *
errors_json(const struct jc_host *hosts, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++) {
		if (hosts[i].error == NULL)
			continue;
		json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:b}", "host", hosts[i].name,
		    "code", cli_exit_code(hosts[i].reachable ? JC_EXIT_FAIL : JC_EXIT_UNREACHABLE),
		    "error", hosts[i].error, "reachable", hosts[i].reachable));
	}
	return a;
}

static int
load_hosts(struct jc_opts *o, struct jc_host **hosts, size_t *n)
{
	struct jc_err err = { 0 };

	if (o->hostfile != NULL) {
		struct jc_hostfile *hf = NULL;

		if (hostfile_read_mlx(o->hostfile, &hf, &err) != 0) {
			jc_error(NULL, "%s", err.msg);
			return JC_EXIT_FAIL;
		}
		*hosts = xcalloc(hf->nhosts ? hf->nhosts : 1, sizeof(**hosts));
		for (size_t i = 0; i < hf->nhosts; i++) {
			if (hosts_parse_target(hf->hosts[i].ssh, &(*hosts)[i], &err) != 0) {
				jc_error(NULL, "%s: %s", o->hostfile, err.msg);
				hosts_free(*hosts, i);
				*hosts = NULL;
				jc_hostfile_free(hf);
				return JC_EXIT_FAIL;
			}
		}
		*n = hf->nhosts;
		jc_hostfile_free(hf);
		return 0;
	}
	if (o->from != NULL && !o->hosts_given) {
		if (probe_bundle_hosts(o->from, hosts, n, &err) != 0) {
			jc_error(NULL, "%s", err.msg);
			return JC_EXIT_FAIL;
		}
		return 0;
	}
	if (hosts_from_list(o->hosts, hosts, n, &err) != 0)
		return cli_usage_error(o->cmd, "%s", err.msg);
	return 0;
}

int
cmd_probe(struct jc_opts *o)
{
	struct jc_host *hosts = NULL, *kept;
	struct jc_raw *raws;
	struct probe_opts po = { 0 };
	struct progress pg = { 0 };
	struct jc_err err = { 0 };
	size_t n = 0, nkept = 0, nunreach = 0;
	int rc = JC_EXIT_OK, r;

	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if (o->ssh_config != NULL && o->from == NULL && access(o->ssh_config, R_OK) != 0) {
		jc_error(NULL, "cannot read ssh configuration %s: %s", o->ssh_config,
		    strerror(errno));
		return JC_EXIT_FAIL;
	}
	if ((r = load_hosts(o, &hosts, &n)) != 0)
		return r;
	if (n == 0) {
		jc_error(NULL, "no host to probe");
		hosts_free(hosts, n);
		return JC_EXIT_FAIL;
	}
	raws = xcalloc(n, sizeof(*raws));
	po.tr.ssh_config = o->ssh_config;
	po.tr.accept_new = o->accept_new;
	po.tr.connect_timeout = o->connect_timeout;
	po.command_timeout = o->command_timeout;
	po.from = o->from;
	pg.hosts = hosts;
	pg.n = n;
	pg.st = xcalloc(n, sizeof(*pg.st));
	pg.redraw = o->verbose == 0 && n <= 40;
	po.arg = &pg;
	if (isatty(STDERR_FILENO))
		po.progress = progress_cb;
	if (o->verbose)
		po.log = log_cb;
	if (o->from == NULL) {
		struct jc_buf names = { 0 };

		for (size_t i = 0; i < n; i++)
			buf_printf(&names, "%s%s", i ? ", " : "", hosts[i].target);
		jc_info(NULL, "Checking for ssh access for %s", names.data);
		buf_free(&names);
		if (tr_global_init() != 0) {
			jc_error(NULL, "cannot initialise libssh");
			rc = JC_EXIT_FAIL;
			goto out;
		}
	}
	probe_hosts(hosts, n, &po, raws);
	if (o->from == NULL)
		tr_global_cleanup();

	if (o->save != NULL) {
		struct jc_raw *got = xcalloc(n, sizeof(*got));
		size_t ng = 0;

		for (size_t i = 0; i < n; i++)
			if (raws[i].n > 0)
				got[ng++] = raws[i];	/* shallow: raws keeps ownership */
		if (bundle_save(o->save, got, ng, &err) != 0) {
			jc_error(NULL, "%s", err.msg);
			rc = JC_EXIT_FAIL;
		} else {
			jc_info(NULL, "saved the outputs of %zu host%s in %s", ng,
			    ng == 1 ? "" : "s", o->save);
		}
		free(got);
	}

	for (size_t i = 0; i < n; i++)
		if (!hosts[i].reachable)
			nunreach++;
	if (nunreach > 0 && !o->ignore_unreachable) {
		struct jc_buf b = { 0 };

		for (size_t i = 0; i < n; i++)
			if (!hosts[i].reachable)
				jc_error(hosts[i].name, "%s", hosts[i].error);
		buf_puts(&b, "Could not ssh to the following hosts:\n");
		for (size_t i = 0; i < n; i++)
			if (!hosts[i].reachable)
				buf_printf(&b, "  -  %s\n", hosts[i].name);
		buf_puts(&b, "\nMaybe they are not set-up for password-less ssh?\n");
		fputs(b.data, stderr);
		buf_free(&b);
		rc = JC_EXIT_UNREACHABLE;
		goto out;
	}
	/* drop the unreachable hosts (only with --ignore-unreachable) */
	kept = xcalloc(n ? n : 1, sizeof(*kept));
	for (size_t i = 0; i < n; i++) {
		if (!hosts[i].reachable) {
			jc_warn(hosts[i].name, "unreachable, left out: %s", hosts[i].error);
			jc_host_clear(&hosts[i]);
			continue;
		}
		kept[nkept++] = hosts[i];
	}
	free(hosts);
	hosts = kept;
	n = nkept;
	if (n == 0) {
		jc_error(NULL, "no reachable host left to probe");
		rc = JC_EXIT_UNREACHABLE;
		goto out;
	}

	for (size_t i = 0; i < n; i++)
		if (hosts[i].error != NULL) {
			jc_error(hosts[i].name, "%s", hosts[i].error);
			rc = JC_EXIT_FAIL;
		}
	if (o->json) {
		/* the inventory holds the hosts that were probed; errors the others */
		struct jc_host *good = xcalloc(n ? n : 1, sizeof(*good));
		size_t ngood = 0;
		json_t *doc;

		for (size_t i = 0; i < n; i++)
			if (hosts[i].error == NULL)
				good[ngood++] = hosts[i];	/* shallow copies */
		doc = inventory_to_json(good, ngood);
		free(good);

		if (json_is_object(doc))
			json_object_set_new(doc, "errors", errors_json(hosts, n));
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
		o->json_printed = true;
		json_decref(doc);
	} else {
		bool first = true;

		for (size_t i = 0; i < n; i++) {
			if (hosts[i].error != NULL)
				continue;
			if (!first)
				putchar('\n');
			print_host(hosts, n, &hosts[i]);
			first = false;
		}
	}
	if (fflush(stdout) != 0) {
		jc_error(NULL, "cannot write to standard output");
		rc = JC_EXIT_FAIL;
	}
out:
	for (size_t i = 0; i < pg.n; i++)
		raw_clear(&raws[i]);
	free(raws);
	free(pg.st);
	hosts_free(hosts, n);
	return rc;
}
