/* SPDX-License-Identifier: MIT */
/*
 * The probe command: discover every host (over SSH, or from a saved
 * bundle), optionally save the raw outputs as a bundle, and print what was
 * found, as text or as one JSON document. Unreachable hosts are reported
 * together the way mlx.distributed_config does, or dropped on request.
 */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bundle.h"
#include "cmd.h"
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
	return platform_os_display(os);
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
	printf("  sudo:       %s\n", h->sudo_mode == JC_SUDO_SCOPED ?
	    "scoped (some commands without a password: jaccl-config doctor says which)" :
	    tri(h->sudo, "yes (passwordless)", "no (needs a password)"));
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
			printf(" -> %s %s%s", ph->name, pp->iface ? pp->iface : "?",
			    p->peer_inferred || pp->peer_inferred ? " (inferred: no domain UUID)" : "");
		else if (p->peer_id)
			printf(" -> %s (not probed)", p->peer_model ? p->peer_model : p->peer_id);
		else if (p->peer_no_id)
			printf(" -> %s%s%s (no domain UUID, not paired)",
			    p->peer_name ? p->peer_name : "a Mac", p->peer_model ? " " : "",
			    p->peer_model ? p->peer_model : "");
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

/* Probe every host (raws: one per host, filled), with progress on a terminal. */
static int
run_probe(struct jc_opts *o, struct cli_hosts *h, struct jc_raw *raws, struct progress *pg)
{
	struct probe_opts po = { 0 };

	po.tr = cli_tr_opts(o);
	po.command_timeout = o->command_timeout;
	po.from = o->from;
	pg->hosts = h->v;
	pg->n = h->n;
	pg->st = xcalloc(h->n, sizeof(*pg->st));
	pg->redraw = o->verbose == 0 && h->n <= 40;
	po.arg = pg;
	if (isatty(STDERR_FILENO))
		po.progress = progress_cb;
	if (o->verbose)
		po.log = log_cb;
	if (o->from == NULL) {
		struct jc_buf names = { 0 };

		for (size_t i = 0; i < h->n; i++)
			buf_printf(&names, "%s%s", i ? ", " : "", h->v[i].target);
		jc_info(NULL, "Checking for ssh access for %s", names.data);
		buf_free(&names);
		if (cli_tr_init() != 0)
			return JC_EXIT_FAIL;
	}
	probe_hosts(h->v, h->n, &po, raws);
	if (o->from == NULL)
		tr_global_cleanup();
	return 0;
}

static void
print_json(struct jc_opts *o, const struct cli_hosts *h)
{
	/* the inventory holds the hosts that were probed; errors the others */
	struct jc_host *good = xcalloc(h->n ? h->n : 1, sizeof(*good));
	size_t ngood = 0;
	json_t *doc;

	for (size_t i = 0; i < h->n; i++)
		if (h->v[i].error == NULL)
			good[ngood++] = h->v[i];	/* shallow copies */
	doc = inventory_to_json(good, ngood);
	free(good);
	if (json_is_object(doc))
		json_object_set_new(doc, "errors", errors_json(h->v, h->n));
	out_json(doc);
	o->json_printed = true;
	json_decref(doc);
}

static void
print_text(const struct cli_hosts *h)
{
	bool first = true;

	for (size_t i = 0; i < h->n; i++) {
		if (h->v[i].error != NULL)
			continue;
		if (!first)
			putchar('\n');
		print_host(h->v, h->n, &h->v[i]);
		first = false;
	}
}

int
cmd_probe(struct jc_opts *o)
{
	struct cli_hosts h = { 0 };
	struct jc_raw *raws = NULL;
	struct progress pg = { 0 };
	size_t nraws = 0;
	int rc;

	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if ((rc = cli_ssh_config_ok(o)) != 0 || (rc = cli_hosts_load(o, 0, &h)) != 0)
		goto out;
	if (h.n == 0) {
		jc_error(NULL, "no host to probe");
		rc = JC_EXIT_FAIL;
		goto out;
	}
	nraws = h.n;
	raws = xcalloc(nraws, sizeof(*raws));
	if ((rc = run_probe(o, &h, raws, &pg)) != 0)
		goto out;
	if (o->save != NULL)
		rc = cli_save_bundle(o->save, raws, nraws);
	if ((rc = cli_hosts_check(o, &h, "no reachable host left to probe")) != 0)
		goto out;
	if (cli_hosts_errors(&h) != 0)
		rc = JC_EXIT_FAIL;
	if (o->json)
		print_json(o, &h);
	else
		print_text(&h);
out:
	for (size_t i = 0; i < nraws; i++)
		raw_clear(&raws[i]);
	free(raws);
	free(pg.st);
	cli_hosts_clear(&h);
	return rc;
}
