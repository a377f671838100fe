/* SPDX-License-Identifier: MIT */
/*
 * The configure command (the default), a drop-in for
 * mlx.distributed_config: hosts from --hosts or --hostfile, discovery (live
 * or from a bundle), the cabling graph (--dot prints it and stops), the
 * backend, the per-cable plan, then either the setup over SSH with rollback
 * (--auto-setup, when every host has passwordless sudo) or each host's
 * commands in mlx's layout, and finally the hostfile. Also --save-cabling
 * (the cabling as a small JSON file) and --json (everything as one document).
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "check.h"
#include "cmd.h"
#include "dot.h"
#include "graph.h"
#include "hostfile.h"
#include "hostfile_write.h"
#include "hosts.h"
#include "inventory.h"
#include "plan.h"
#include "probe.h"

/* Everything one run holds, released by run_clear(). */
struct run {
	struct jc_opts *o;
	struct jc_host *hosts;
	size_t n;
	struct jc_hostfile *input;	/* --hostfile */
	struct graph *g;
	struct graph_choice choice;
	bool chosen;
	struct plan *plan;
	struct jc_hostfile *hf;
};

static void
run_clear(struct run *r)
{
	jc_hostfile_free(r->hf);
	plan_free(r->plan);
	if (r->chosen)
		graph_choice_clear(&r->choice);
	graph_free(r->g);
	hosts_free(r->hosts, r->n);
	jc_hostfile_free(r->input);
}

/* Print a message of several lines: the first through jc_error, the rest as is. */
static void
error_lines(const char *msg)
{
	const char *nl = strchr(msg, '\n');

	if (nl == NULL) {
		jc_error(NULL, "%s", msg);
		return;
	}
	jc_error(NULL, "%.*s", (int)(nl - msg), msg);
	fprintf(stderr, "%s\n", nl + 1);
}

static int
load_hosts(struct run *r)
{
	struct jc_opts *o = r->o;
	struct jc_err err = { 0 };

	if (o->hostfile != NULL) {
		if (hostfile_read_mlx(o->hostfile, &r->input, &err) != 0)
			return cli_usage_error(o->cmd, "%s", err.msg);
		r->hosts = xcalloc(r->input->nhosts ? r->input->nhosts : 1, sizeof(*r->hosts));
		for (size_t i = 0; i < r->input->nhosts; i++) {
			if (hosts_parse_target(r->input->hosts[i].ssh, &r->hosts[i], &err) != 0) {
				hosts_free(r->hosts, i);
				r->hosts = NULL;
				return cli_usage_error(o->cmd, "Failed to parse hostfile %s (%s)",
				    o->hostfile, err.msg);
			}
		}
		r->n = r->input->nhosts;
		return 0;
	}
	if (o->from != NULL && !o->hosts_given) {
		if (probe_bundle_hosts(o->from, &r->hosts, &r->n, &err) != 0) {
			jc_error(NULL, "%s", err.msg);
			return JC_EXIT_FAIL;
		}
		return 0;
	}
	if (hosts_from_list(o->hosts, &r->hosts, &r->n, &err) != 0)
		return cli_usage_error(o->cmd, "%s", err.msg);
	return 0;
}

static void
probe_log(void *arg, size_t i, const char *command, int status, double seconds)
{
	struct run *r = arg;

	jc_info(r->hosts[i].name, "%s: exit %d, %.3f s", command, status, seconds);
}

/* Discovery, and mlx's handling of hosts that cannot be reached. */
static int
discover(struct run *r)
{
	struct jc_opts *o = r->o;
	struct probe_opts po = { 0 };
	struct jc_buf names = { 0 };
	struct jc_host *kept;
	size_t nkept = 0, nun = 0;
	int rc = 0;

	for (size_t i = 0; i < r->n; i++)
		buf_printf(&names, "%s%s", i ? ", " : "", r->hosts[i].name);
	jc_info(NULL, "Checking for ssh access for %s", names.data ? names.data : "");
	buf_free(&names);
	po.tr.ssh_config = o->ssh_config;
	po.tr.accept_new = o->accept_new;
	po.tr.connect_timeout = o->connect_timeout;
	po.command_timeout = o->command_timeout;
	po.from = o->from;
	po.arg = r;
	if (o->verbose > 1)
		po.log = probe_log;
	probe_hosts(r->hosts, r->n, &po, NULL);

	for (size_t i = 0; i < r->n; i++)
		if (!r->hosts[i].reachable)
			nun++;
	if (nun > 0 && !o->ignore_unreachable) {
		struct jc_buf b = { 0 };

		for (size_t i = 0; i < r->n; i++)
			if (!r->hosts[i].reachable)
				jc_error(r->hosts[i].name, "%s", r->hosts[i].error);
		buf_puts(&b, "Could not ssh to the following hosts:\n");
		for (size_t i = 0; i < r->n; i++)
			if (!r->hosts[i].reachable)
				buf_printf(&b, "  -  %s\n", r->hosts[i].name);
		buf_puts(&b, "\nMaybe they are not set-up for password-less ssh?\n");
		fputs(b.data, stderr);
		buf_free(&b);
		return JC_EXIT_UNREACHABLE;
	}
	kept = xcalloc(r->n ? r->n : 1, sizeof(*kept));
	for (size_t i = 0; i < r->n; i++) {
		if (!r->hosts[i].reachable) {
			jc_warn(r->hosts[i].name, "unreachable, left out: %s", r->hosts[i].error);
			jc_host_clear(&r->hosts[i]);
			continue;
		}
		kept[nkept++] = r->hosts[i];
	}
	free(r->hosts);
	r->hosts = kept;
	r->n = nkept;
	for (size_t i = 0; i < r->n; i++)
		if (r->hosts[i].error != NULL) {
			jc_error(r->hosts[i].name, "%s", r->hosts[i].error);
			rc = JC_EXIT_FAIL;
		}
	if (rc == 0 && r->n == 0) {
		jc_error(NULL, "no host left to configure");
		rc = JC_EXIT_UNREACHABLE;
	}
	return rc;
}

/* ---- the cabling file (--save-cabling) ---- */

static json_t *
port_ref(const struct jc_host *h, size_t p)
{
	const struct jc_port *pt = &h->ports[p];

	return json_pack("{s:s, s:s?, s:s?}", "host", graph_host_label(h), "receptacle",
	    pt->receptacle, "iface", pt->iface);
}

/*
 * {"version": 1, "hosts": [{"name", "model", "ports": [{"receptacle",
 * "iface", "link", "gbps", "peer": {"host", "receptacle", "iface"} or
 * null, "via_dock"}]}], "cables": [{"a": {...}, "b": {...}, "gbps",
 * "via_dock", "rdma": true/false/null}]}
 */
static json_t *
cabling_json(const struct graph *g)
{
	json_t *doc = json_object(), *hosts = json_array(), *cables = json_array();

	json_object_set_new(doc, "version", json_integer(1));
	for (size_t i = 0; i < g->n; i++) {
		const struct jc_host *h = &g->hosts[i];
		json_t *ports = json_array();

		for (size_t k = 0; k < g->norder[i]; k++) {
			size_t p = g->order[i][k];
			const struct jc_port *pt = &h->ports[p];
			json_t *peer = json_null();

			for (size_t c = 0; c < g->ncables; c++)
				for (int s = 0; s < 2; s++)
					if (g->cables[c].end[s].host == i && g->cables[c].end[s].port == p) {
						json_decref(peer);
						peer = port_ref(&g->hosts[g->cables[c].end[!s].host],
						    g->cables[c].end[!s].port);
					}
			json_array_append_new(ports, json_pack("{s:s?, s:s?, s:s?, s:i, s:o, s:b}",
			    "receptacle", pt->receptacle, "iface", pt->iface, "link", pt->link,
			    "gbps", pt->link_gbps, "peer", peer, "via_dock", pt->peer_via_dock));
		}
		json_array_append_new(hosts, json_pack("{s:s, s:s?, s:o}", "name",
		    graph_host_label(h), "model", h->model, "ports", ports));
	}
	for (size_t c = 0; c < g->ncables; c++) {
		const struct graph_cable *cb = &g->cables[c];

		json_array_append_new(cables, json_pack("{s:o, s:o, s:i, s:b, s:o}",
		    "a", port_ref(&g->hosts[cb->end[0].host], cb->end[0].port),
		    "b", port_ref(&g->hosts[cb->end[1].host], cb->end[1].port),
		    "gbps", cb->gbps, "via_dock", cb->via_dock,
		    "rdma", cb->rdma == JC_UNKNOWN ? json_null() : json_boolean(cb->rdma == JC_YES)));
	}
	json_object_set_new(doc, "hosts", hosts);
	json_object_set_new(doc, "cables", cables);
	return doc;
}

/* Write text (or j) to path through a temporary file and a rename. */
static int
write_file_atomic(const char *path, const json_t *j, const struct jc_hostfile *hf)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	struct jc_err err = { 0 };
	FILE *fp = fopen(tmp, "w");
	int rc = 0;

	if (fp == NULL) {
		jc_error(NULL, "cannot write %s: %s", tmp, strerror(errno));
		free(tmp);
		return JC_EXIT_FAIL;
	}
	if (hf != NULL) {
		if (hostfile_write_file(fp, hf, &err) != 0) {
			jc_error(NULL, "%s: %s", path, err.msg);
			rc = JC_EXIT_FAIL;
		}
	} else if (json_dumpf(j, fp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 ||
	    fputc('\n', fp) == EOF) {
		rc = JC_EXIT_FAIL;
	}
	if (fclose(fp) != 0)
		rc = JC_EXIT_FAIL;
	if (rc == 0 && rename(tmp, path) != 0)
		rc = JC_EXIT_FAIL;
	if (rc != 0) {
		if (err.msg[0] == '\0')
			jc_error(NULL, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
	}
	free(tmp);
	return rc;
}

/* ---- setup ---- */

static void
apply_event(void *arg, const struct apply_event *ev)
{
	(void)arg;
	switch (ev->kind) {
	case APPLY_EV_RUN:
		fprintf(stderr, "[#] %s: %s\n", ev->host, ev->command);
		break;
	case APPLY_EV_UNDO:
		fprintf(stderr, "[#] %s: %s   (undo)\n", ev->host, ev->command);
		break;
	case APPLY_EV_IGNORED:
		jc_info(ev->host, "%s: exit %d (ignored)%s%s", ev->command, ev->status,
		    *ev->stderr_text ? ": " : "", ev->stderr_text);
		break;
	case APPLY_EV_FAILED:
		jc_error(ev->host, "%s failed (exit %d)%s%s", ev->command, ev->status,
		    ev->stderr_text && *ev->stderr_text ? ": " : "",
		    ev->stderr_text ? ev->stderr_text : "");
		break;
	}
	fflush(stderr);
}

static int
auto_setup(struct run *r)
{
	struct jc_opts *o = r->o;
	struct apply_opts ao = { 0 };
	struct apply_result res = { 0 };
	struct jc_err err = { 0 };
	int rc, status = JC_EXIT_SETUP_RESTORED;

	ao.tr.ssh_config = o->ssh_config;
	ao.tr.accept_new = o->accept_new;
	ao.tr.connect_timeout = o->connect_timeout;
	ao.command_timeout = o->command_timeout;
	ao.state_dir = o->state_dir;
	ao.event = apply_event;
	if (tr_global_init() != 0) {
		jc_error(NULL, "cannot initialise libssh");
		return JC_EXIT_FAIL;
	}
	rc = apply_run(r->plan, r->g, &ao, &res, &err);
	tr_global_cleanup();
	for (size_t i = 0; i < res.n; i++) {
		if (res.hosts[i].status == APPLY_HOST_UNCHANGED)
			fprintf(stderr, "%s: %s: already configured, nothing to change\n", JC_PROG,
			    res.hosts[i].name);
		else if (res.hosts[i].status == APPLY_HOST_DONE)
			jc_info(res.hosts[i].name, "set up (%zu commands)", res.hosts[i].ran);
		else if (res.hosts[i].undone)
			fprintf(stderr, "%s: %s: put back as it was\n", JC_PROG, res.hosts[i].name);
		else if (res.hosts[i].status == APPLY_HOST_ROLLBACK_FAILED)
			status = JC_EXIT_SETUP_BROKEN;
	}
	if (rc != 0)
		jc_error(NULL, "setup failed: %s", err.msg);
	else if (res.changed) {
		char *dir = apply_state_dir(&ao);

		jc_info(NULL, "prior state saved in %s ('%s restore' undoes the setup)", dir, JC_PROG);
		free(dir);
	}
	apply_result_clear(&res);
	return rc == 0 ? 0 : status;
}

static void
manual_setup(struct run *r)
{
	bool tty = isatty(STDIN_FILENO);

	for (size_t i = 0; i < r->plan->n; i++) {
		plan_print_host(stdout, r->plan, r->g, i);
		if (tty) {
			char line[256];

			fputs("Enter to continue", stdout);
			fflush(stdout);
			if (fgets(line, sizeof(line), stdin) == NULL)
				tty = false;
			putchar('\n');
		}
	}
	fflush(stdout);
}

/* ---- --json ---- */

static json_t *
plan_json(const struct plan *p, const struct graph *g)
{
	json_t *a = json_array();

	for (size_t i = 0; i < p->n; i++) {
		const struct plan_host *ph = &p->hosts[i];
		json_t *addrs = json_array(), *cmds = json_array();

		for (size_t k = 0; k < ph->naddrs; k++)
			json_array_append_new(addrs, json_pack("{s:s, s:s, s:s, s:s}", "iface",
			    ph->addrs[k].iface, "ip", ph->addrs[k].ip, "peer",
			    graph_host_label(&g->hosts[ph->addrs[k].peer]), "peer_ip",
			    ph->addrs[k].peer_ip));
		for (size_t k = 0; k < ph->cmds.n; k++) {
			char *t = plan_cmd_text(&ph->cmds.v[k]);

			json_array_append_new(cmds, json_string(t));
			free(t);
		}
		json_array_append_new(a, json_pack("{s:s, s:o, s:o, s:b}", "host",
		    graph_host_label(&g->hosts[ph->host]), "addresses", addrs, "commands", cmds,
		    "applied", ph->applied));
	}
	return a;
}

static json_t *
summary_json(const struct run *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->n; i++) {
		const struct jc_host *h = &r->hosts[i];

		json_array_append_new(a, json_pack("{s:s, s:s?, s:s?, s:s?, s:i, s:i, s:o}",
		    "name", h->name, "model", h->model, "os_version", h->os_version,
		    "mgmt_ip", h->mgmt_ip, "ports", (int)h->nports, "rdma_devices", (int)h->nrdma,
		    "sudo", h->sudo == JC_UNKNOWN ? json_null() : json_boolean(h->sudo == JC_YES)));
	}
	return a;
}

static int
print_json(struct run *r, json_t *setup)
{
	json_t *doc = json_object(), *order = json_array();
	struct jc_err err = { 0 };
	json_t *hfj = NULL, *cab;

	json_object_set_new(doc, "hosts", summary_json(r));
	if (r->g != NULL) {
		cab = cabling_json(r->g);
		json_object_set_new(doc, "cables", json_incref(json_object_get(cab, "cables")));
		json_decref(cab);
	}
	if (r->chosen) {
		json_object_set_new(doc, "backend",
		    json_string(graph_backend_name(r->choice.backend)));
		for (size_t i = 0; r->choice.order != NULL && i < r->n; i++)
			json_array_append_new(order,
			    json_string(graph_host_label(&r->hosts[r->choice.order[i]])));
		json_object_set_new(doc, "ring", r->choice.backend == GRAPH_JACCL ? json_null() :
		    json_incref(order));
	} else {
		json_object_set_new(doc, "backend", json_string(""));
	}
	json_decref(order);
	if (r->plan != NULL)
		json_object_set_new(doc, "plan", plan_json(r->plan, r->g));
	if (setup != NULL)
		json_object_set_new(doc, "setup", setup);
	if (r->hf != NULL && (hfj = hostfile_write_to_json(r->hf, &err)) == NULL) {
		jc_error(NULL, "%s", err.msg);
		json_decref(doc);
		return JC_EXIT_FAIL;
	}
	json_object_set_new(doc, "hostfile", hfj ? hfj : json_null());
	json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	putchar('\n');
	json_decref(doc);
	r->o->json_printed = true;
	return 0;
}

/* The hostfile must pass the checks of `jaccl-config check`; say so if not. */
static void
check_written(const struct run *r)
{
	struct check_report *rep = check_hostfile(r->hf, NULL, NULL, r->o->starting_port);

	for (size_t i = 0; i < rep->nproblems; i++)
		jc_warn(NULL, "the hostfile will not work: %s", rep->problems[i].msg);
	check_report_free(rep);
}

static int
write_hostfile(struct run *r)
{
	struct jc_err err = { 0 };

	check_written(r);
	if (r->o->output_hostfile != NULL)
		return write_file_atomic(r->o->output_hostfile, NULL, r->hf);
	if (r->o->json)
		return 0;
	if (hostfile_write_stdout(stdout, r->hf, &err) != 0) {
		jc_error(NULL, "%s", err.msg);
		return JC_EXIT_FAIL;
	}
	return 0;
}

static void
warn_lines(const struct jc_strv *w)
{
	for (size_t i = 0; i < w->n; i++)
		jc_warn(NULL, "%s", w->v[i]);
}

/*
 * The hostfile the verification runs on. For the JACCL backends it is the
 * hostfile written. The TCP ring's hostfile names no devices, so for it the
 * same ring is described as jaccl-ring would see it: in ring order, each
 * rank's neighbour cells naming "rdma_" + the interface of each of the ring's
 * cables (the tcp fabric maps a name back to its interface), and rank 0's
 * management address as coordinator, which every rank can reach.
 */
static struct jc_hostfile *
verify_hostfile(const struct run *r)
{
	struct jc_hostfile *hf;
	size_t n = r->hf->nhosts;

	if (r->choice.backend != GRAPH_RING || n < 2)
		return NULL;
	hf = xcalloc(1, sizeof(*hf));
	hf->backend = xstrdup("jaccl-ring");
	hf->hosts = xcalloc(n, sizeof(*hf->hosts));
	hf->nhosts = n;
	for (size_t a = 0; a < n; a++) {
		struct jc_hf_host *h = &hf->hosts[a];
		size_t hi = r->choice.order[a];
		const char *ip = hostfile_write_mgmt_ip(&r->hosts[hi], r->g, hi);

		h->ssh = xstrdup(r->hf->hosts[a].ssh);
		if (ip != NULL) {
			h->ips = xcalloc(1, sizeof(*h->ips));
			h->ips[h->nips++] = xstrdup(ip);
		}
		h->rdma = xcalloc(n, sizeof(*h->rdma));
		h->nrdma = n;
		for (size_t side = 0; side < 2; side++) {
			size_t b = side == 0 ? (a + n - 1) % n : (a + 1) % n;
			struct jc_hf_cell *c = &h->rdma[b];

			if (c->n > 0)
				continue;	/* two ranks: left and right are one cell */
			c->names = xcalloc(r->choice.width, sizeof(*c->names));
			c->is_list = r->choice.width > 1;
			for (size_t k = 0; k < r->choice.width; k++) {
				int end = 0;
				long cab = graph_pair_cable(r->g, hi, r->choice.order[b], k, false, &end);

				if (cab < 0)
					continue;
				c->names[c->n++] = xasprintf("rdma_%s", r->g->cables[cab].end[end].iface);
			}
		}
	}
	return hf;
}

/*
 * Say what the graph could not use: a peer that does not see the cable
 * back, a port without an interface, a cable between two ports of one host,
 * and cables through a dock or hub (never used for RDMA) as warnings; peers
 * that are not in the host list only with --verbose, as they are ignored.
 */
static void
report_strays(const struct graph *g)
{
	for (size_t i = 0; i < g->nstrays; i++) {
		const struct graph_stray *st = &g->strays[i];
		const struct jc_host *h = &g->hosts[st->host];
		char *port = graph_port_label(h, st->port), *peer = NULL;

		if (st->kind != GRAPH_STRAY_OUTSIDE)
			peer = graph_port_label(&g->hosts[st->peer_host], st->peer_port);
		switch (st->kind) {
		case GRAPH_STRAY_OUTSIDE:
			jc_info(graph_host_label(h), "%s: the peer on this cable is not in the host list; ignored",
			    port);
			break;
		case GRAPH_STRAY_ONE_SIDED:
			jc_warn(graph_host_label(h), "%s sees %s %s, which does not see it back; cable not used",
			    port, graph_host_label(&g->hosts[st->peer_host]), peer);
			break;
		case GRAPH_STRAY_NO_IFACE:
			jc_warn(graph_host_label(h), "%s: the cable to %s %s has no network interface at one end; cable not used",
			    port, graph_host_label(&g->hosts[st->peer_host]), peer);
			break;
		case GRAPH_STRAY_SELF:
			jc_warn(graph_host_label(h), "%s is cabled to %s of the same host; cable not used",
			    port, peer);
			break;
		}
		free(port);
		free(peer);
	}
	for (size_t c = 0; c < g->ncables; c++) {
		const struct graph_cable *cb = &g->cables[c];

		if (cb->via_dock)
			jc_warn(NULL, "the cable %s %s - %s %s goes through a dock or hub: not used for RDMA",
			    graph_host_label(&g->hosts[cb->end[0].host]), cb->end[0].iface,
			    graph_host_label(&g->hosts[cb->end[1].host]), cb->end[1].iface);
	}
}

int
cmd_configure(struct jc_opts *o)
{
	struct run r = { .o = o };
	struct hostfile_write_in in = { 0 };
	struct jc_strv warnings = { 0 };
	struct jc_err err = { 0 };
	json_t *setup = NULL;
	int rc;

	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if (o->verify && o->json)
		return cli_usage_error(o->cmd, "--verify prints its own report; for JSON run '%s verify --json'",
		    JC_PROG);
	if (o->verify && o->from != NULL)
		return cli_usage_error(o->cmd, "--verify measures live hosts; it cannot run on a replayed bundle (--from)");
	if (o->verify && o->dot)
		return cli_usage_error(o->cmd, "--dot prints the cabling and exits; it cannot be combined with --verify");
	if ((rc = load_hosts(&r)) != 0)
		goto out;
	if (r.n == 0) {
		jc_error(NULL, "no host to configure");
		rc = JC_EXIT_FAIL;
		goto out;
	}
	if (o->from == NULL && tr_global_init() != 0) {
		jc_error(NULL, "cannot initialise libssh");
		rc = JC_EXIT_FAIL;
		goto out;
	}
	rc = discover(&r);
	if (o->from == NULL)
		tr_global_cleanup();
	if (rc != 0)
		goto out;
	in.envs = (const char *const *)o->envs.v;
	in.nenvs = o->envs.n;
	in.input = r.input;

	if (strcmp(o->over, "ethernet") == 0) {
		jc_info(NULL, "Preparing an ethernet hostfile");
		if (hostfile_write_ethernet(r.hosts, r.n, NULL, &in, &r.hf, &warnings, &err) != 0) {
			error_lines(err.msg);
			rc = JC_EXIT_FAIL;
			goto out;
		}
		for (size_t i = 0; i < warnings.n; i++)
			jc_warn(NULL, "Could not extract ip for %s", warnings.v[i]);
		if (o->json)
			rc = print_json(&r, NULL);
		if (rc == 0)
			rc = write_hostfile(&r);
		goto out;
	}

	jc_info(NULL, "Preparing for communication over thunderbolt");
	for (size_t i = 0; i < r.n; i++) {
		jc_info(NULL, "Getting connectivity from %s", r.hosts[i].name);
		jc_info(NULL, "Getting interface names from %s", r.hosts[i].name);
	}
	if (graph_build(r.hosts, r.n, &r.g, &err) != 0) {
		error_lines(err.msg);
		rc = JC_EXIT_FAIL;
		goto out;
	}
	report_strays(r.g);
	if (o->save_cabling != NULL) {
		json_t *cab = cabling_json(r.g);

		rc = write_file_atomic(o->save_cabling, cab, NULL);
		json_decref(cab);
		if (rc != 0)
			goto out;
	}
	if (o->dot) {
		if (dot_write(stdout, r.g, o->verbose ? DOT_EXTENDED : 0, &err) != 0) {
			jc_error(NULL, "%s", err.msg);
			rc = JC_EXIT_FAIL;
		}
		goto out;
	}
	for (size_t i = 0; i < r.n; i++)
		jc_info(NULL, "Checking that %s supports RDMA", r.hosts[i].name);
	if (graph_choose(r.g, o->backend, &r.choice, &err) != 0) {
		error_lines(err.msg);
		rc = JC_EXIT_CABLING;
		goto out;
	}
	r.chosen = true;
	warn_lines(&r.choice.warnings);
	jc_info(NULL, "Prepare a %s hostfile", graph_backend_name(r.choice.backend));
	if (plan_build(r.g, &r.plan, &err) != 0) {
		error_lines(err.msg);
		rc = JC_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; r.choice.backend != GRAPH_RING && i < r.n; i++)
		jc_info(NULL, "Getting the ip from %s", r.hosts[i].name);
	if (hostfile_write_build(r.g, &r.choice, r.plan, &in, &r.hf, &warnings, &err) != 0) {
		error_lines(err.msg);
		rc = JC_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < warnings.n; i++)
		jc_warn(NULL, "Could not extract ip for %s", warnings.v[i]);

	/* setup: automatic only when asked and every host has passwordless sudo */
	{
		bool autos = o->auto_setup == JC_YES;

		if (autos) {
			struct jc_buf b = { 0 };

			for (size_t i = 0; i < r.n; i++)
				if (r.hosts[i].sudo != JC_YES)
					buf_printf(&b, " -  %s\n", r.hosts[i].name);
			if (b.len > 0) {
				jc_warn(NULL, "Automatic setup requested but the following hosts do not have passwordless sudo");
				fputs(b.data, stderr);
				autos = false;
			}
			buf_free(&b);
		}
		if (autos && o->from != NULL) {
			jc_error(NULL, "--auto-setup changes live hosts; it cannot run on a replayed bundle (--from)");
			rc = JC_EXIT_FAIL;
			goto out;
		}
		if (autos) {
			if ((rc = auto_setup(&r)) != 0)
				goto out;
			setup = json_string("applied");
		} else if (!o->json) {
			manual_setup(&r);
		} else {
			setup = json_string("printed");
		}
	}
	if (o->json) {
		rc = print_json(&r, setup);
		setup = NULL;
		if (rc != 0)
			goto out;
	}
	rc = write_hostfile(&r);
	if (rc == 0 && o->verify) {
		struct jc_hostfile *vhf = verify_hostfile(&r);

		if (vhf != NULL)
			jc_info(NULL, "verifying the ring's cables over TCP (the ring backend's hostfile names no devices)");
		rc = cmd_verify_hostfile(o, vhf ? vhf : r.hf, NULL,
		    o->output_hostfile ? o->output_hostfile : "the hostfile");
		jc_hostfile_free(vhf);
	}
out:
	json_decref(setup);
	strv_free(&warnings);
	run_clear(&r);
	if (fflush(stdout) != 0 && rc == 0) {
		jc_error(NULL, "cannot write to standard output");
		rc = JC_EXIT_FAIL;
	}
	return rc;
}
