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

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "cmd.h"
#include "dot.h"
#include "expected_cabling.h"
#include "graph.h"
#include "hostfile_check.h"
#include "hostfile_read.h"
#include "hostfile_write.h"
#include "hosts.h"
#include "inventory.h"
#include "launch.h"
#include "plan.h"
#include "probe.h"
#include "subnet.h"
#include "sudo_rule.h"

/* Everything one run holds, released by run_clear(). */
struct run {
	struct jc_opts *o;
	struct cli_hosts h;		/* the hosts; h.hf: --hostfile */
	struct graph *g;
	struct graph_choice choice;
	bool chosen;
	struct plan *plan;
	struct jc_hostfile *hf;
	/* --auto-setup: the probe's sessions, kept for the setup, and their transport */
	struct jc_transport *tp;
	struct jc_conn **conns;
	size_t nconns;
	struct jc_raw *raws;	/* --auto-setup: the probe's outputs (prior state) */
	size_t nraws;
	bool tr_live;		/* libssh initialised until run_clear() */
};

static void
run_clear(struct run *r)
{
	for (size_t i = 0; i < r->nconns; i++)
		tp_close(r->conns[i]);
	free(r->conns);
	for (size_t i = 0; i < r->nraws; i++)
		raw_clear(&r->raws[i]);
	free(r->raws);
	transport_free(r->tp);
	if (r->tr_live)
		tr_global_cleanup();
	jc_hostfile_free(r->hf);
	plan_free(r->plan);
	if (r->chosen)
		graph_choice_clear(&r->choice);
	graph_free(r->g);
	cli_hosts_clear(&r->h);
}

static void
probe_log(void *arg, size_t i, const char *command, int status, double seconds)
{
	struct run *r = arg;

	jc_info(r->h.v[i].name, "%s: exit %d, %.3f s", command, status, seconds);
}

/* Discovery, and mlx's handling of hosts that cannot be reached. */
static int
discover(struct run *r)
{
	struct jc_opts *o = r->o;
	struct probe_opts po = { 0 };
	struct jc_buf names = { 0 };
	int rc;

	for (size_t i = 0; i < r->h.n; i++)
		buf_printf(&names, "%s%s", i ? ", " : "", r->h.v[i].name);
	jc_info(NULL, "Checking for ssh access for %s", names.data ? names.data : "");
	buf_free(&names);
	po.tr = cli_tr_opts(o);
	po.command_timeout = o->command_timeout;
	po.from = o->from;
	po.arg = r;
	if (o->verbose > 1)
		po.log = probe_log;
	/* --dot stops at the cabling: nothing reads sudo (but --over ethernet) */
	po.no_sudo_check = o->dot && strcmp(o->over, "ethernet") != 0;
	/* a plain --dot draws the cables: the model and RDMA only with -v */
	po.cabling_only = po.no_sudo_check && !o->verbose;
	/* a persistent setup refuses beside another tool that manages the ports */
	po.managers = o->persist;
	if (o->from == NULL && o->auto_setup == JC_YES && !o->dot) {
		/* the setup runs on the sessions the probe opened */
		r->tp = po.transport = transport_ssh_new(&po.tr);
		r->nconns = r->h.n;
		r->conns = po.keep = xcalloc(r->h.n, sizeof(*r->conns));
		r->nraws = r->h.n;
		r->raws = xcalloc(r->h.n, sizeof(*r->raws));
	}
	probe_hosts(r->h.v, r->h.n, &po, r->raws);
	if ((rc = cli_hosts_check(o, &r->h, "no host left to configure")) != 0)
		return rc;
	return cli_hosts_errors(&r->h);
}

/* ---- the cables of --json ---- */

static json_t *
port_ref(const struct jc_host *h, size_t p)
{
	const struct jc_port *pt = &h->ports[p];

	return json_pack("{s:s, s:s?, s:s?}", "host", graph_host_label(h), "receptacle",
	    pt->receptacle, "iface", pt->iface);
}

/* [{"a": {"host", "receptacle", "iface"}, "b": {...}, "gbps", "via_dock", "rdma"}] */
static json_t *
cables_json(const struct graph *g)
{
	json_t *cables = json_array();

	for (size_t c = 0; c < g->ncables; c++) {
		const struct graph_cable *cb = &g->cables[c];

		json_array_append_new(cables, json_pack("{s:o, s:o, s:i, s:b, s:o}",
		    "a", port_ref(&g->hosts[cb->end[0].host], cb->end[0].port),
		    "b", port_ref(&g->hosts[cb->end[1].host], cb->end[1].port),
		    "gbps", cb->gbps, "via_dock", cb->via_dock,
		    "rdma", cb->rdma == JC_UNKNOWN ? json_null() : json_boolean(cb->rdma == JC_YES)));
	}
	return cables;
}

/* ---- setup ---- */

static void
apply_event(void *arg, const struct apply_event *ev)
{
	(void)arg;
	switch (ev->kind) {
	case APPLY_EV_RUN:
		out_cmd_echo(ev->host, ev->command, NULL);
		break;
	case APPLY_EV_UNDO:
		out_cmd_echo(ev->host, ev->command, "(undo)");
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

/* What became of each host, then where its prior state was saved. */
static void
report_setup(const struct apply_result *res, const struct apply_opts *ao, int rc,
    const struct jc_err *err)
{
	for (size_t i = 0; i < res->n; i++) {
		if (res->hosts[i].status == APPLY_HOST_UNCHANGED)
			jc_note(res->hosts[i].name, "already configured, nothing to change");
		else if (res->hosts[i].status == APPLY_HOST_DONE)
			jc_info(res->hosts[i].name, "set up (%zu commands)", res->hosts[i].ran);
		else if (res->hosts[i].undone)
			jc_note(res->hosts[i].name, "put back as it was");
	}
	if (rc != 0) {
		jc_error(NULL, "setup failed: %s", err->msg);
	} else if (res->changed) {
		char *dir = apply_state_dir(ao);

		jc_info(NULL, "prior state saved in %s ('%s restore' undoes the setup)", dir, JC_PROG);
		free(dir);
	}
}

/*
 * After a setup that succeeded, the cabling it was made for, in the state
 * directory (CABLING_STATE_FILE) where doctor compares with it. A failure
 * to write it is only a warning: the setup is done.
 */
static void
record_cabling(struct run *r, const struct apply_opts *ao)
{
	struct jc_err err = { 0 };
	char *dir = apply_state_dir(ao), *path;

	if (access(dir, F_OK) != 0) {
		free(dir);
		return;		/* nothing was ever set up from here */
	}
	path = xasprintf("%s/%s", dir, CABLING_STATE_FILE);
	if (cabling_save(path, r->g, &err) != 0)
		jc_warn(NULL, "the cabling of this setup was not recorded: %s", err.msg);
	free(path);
	free(dir);
}

static int
auto_setup(struct run *r)
{
	struct apply_opts ao = cli_apply_opts(r->o, apply_event);
	struct apply_result res = { 0 };
	struct jc_err err = { 0 };
	int rc;

	if (cli_tr_init() != 0)
		return JC_EXIT_FAIL;
	ao.conns = r->conns;
	ao.nconns = r->nconns;
	ao.raws = r->raws;
	ao.nraws = r->nraws;
	rc = apply_run(r->plan, r->g, &ao, &res, &err);
	tr_global_cleanup();
	report_setup(&res, &ao, rc, &err);
	if (rc == 0)
		record_cabling(r, &ao);
	if (rc != 0) {
		rc = JC_EXIT_SETUP_RESTORED;
		for (size_t i = 0; i < res.n; i++)
			if (res.hosts[i].status == APPLY_HOST_ROLLBACK_FAILED)
				rc = JC_EXIT_SETUP_BROKEN;
	}
	apply_result_clear(&res);
	return rc;
}

static void
manual_setup(struct run *r)
{
	bool tty = isatty(STDIN_FILENO);

	for (size_t i = 0; i < r->plan->n; i++) {
		char *text = plan_host_text(r->plan, r->g, i);

		fputs(text, stdout);
		free(text);
		if (tty) {
			char line[256];

			fputs("Enter to continue", stdout);
			out_flush();
			if (fgets(line, sizeof(line), stdin) == NULL)
				tty = false;
			putchar('\n');
		}
	}
	out_flush();
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

/* {"range": CIDR, "numbering": "mlx"|"moved"|"user", "reason": text or null} */
static json_t *
subnet_json(const struct subnet_choice *c)
{
	char cidr[19];

	subnet_choice_cidr(c, cidr);
	return json_pack("{s:s, s:s, s:o}", "range", cidr, "numbering",
	    c->user ? "user" : c->reason != NULL ? "moved" : "mlx", "reason",
	    c->reason ? json_string(c->reason) : json_null());
}

static json_t *
summary_json(const struct run *r)
{
	json_t *a = json_array();

	for (size_t i = 0; i < r->h.n; i++) {
		const struct jc_host *h = &r->h.v[i];

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
	json_t *hfj = NULL;

	json_object_set_new(doc, "hosts", summary_json(r));
	if (r->g != NULL)
		json_object_set_new(doc, "cables", cables_json(r->g));
	if (r->chosen) {
		json_object_set_new(doc, "backend",
		    json_string(graph_backend_name(r->choice.backend)));
		for (size_t i = 0; r->choice.order != NULL && i < r->h.n; i++)
			json_array_append_new(order,
			    json_string(graph_host_label(&r->h.v[r->choice.order[i]])));
		json_object_set_new(doc, "ring", r->choice.backend == GRAPH_JACCL ? json_null() :
		    json_incref(order));
	} else {
		json_object_set_new(doc, "backend", json_string(""));
	}
	json_decref(order);
	if (r->plan != NULL) {
		json_object_set_new(doc, "plan", plan_json(r->plan, r->g));
		json_object_set_new(doc, "subnet", subnet_json(&r->plan->subnet));
	}
	if (setup != NULL)
		json_object_set_new(doc, "setup", setup);
	if (r->hf != NULL && (hfj = hostfile_write_to_json(r->hf, &err)) == NULL) {
		jc_error(NULL, "%s", err.msg);
		json_decref(doc);
		return JC_EXIT_FAIL;
	}
	json_object_set_new(doc, "hostfile", hfj ? hfj : json_null());
	out_json(doc);
	r->o->json_printed = true;
	json_decref(doc);
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

/* The hostfile to path, whole or not at all. */
static int
write_hostfile_file(const char *path, const struct jc_hostfile *hf)
{
	struct jc_err err = { 0 };
	char *text = hostfile_write_text(hf, &err);
	int r;

	if (text == NULL) {
		jc_error(NULL, "%s: %s", path, err.msg);
		return JC_EXIT_FAIL;
	}
	r = jc_write_atomic(path, text, strlen(text), 0666, &err);
	free(text);
	if (r != 0) {
		jc_error(NULL, "%s", err.msg);
		return JC_EXIT_FAIL;
	}
	return 0;
}

static int
write_hostfile(struct run *r)
{
	struct jc_err err = { 0 };

	check_written(r);
	if (r->o->output_hostfile != NULL)
		return write_hostfile_file(r->o->output_hostfile, r->hf);
	if (r->o->json)
		return 0;
	if (hostfile_write_stdout(stdout, r->hf, &err) != 0) {
		jc_error(NULL, "%s", err.msg);
		return JC_EXIT_FAIL;
	}
	return 0;
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
		const char *ip = hostfile_write_mgmt_ip(&r->h.v[hi], r->g, hi);

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
		case GRAPH_STRAY_NO_IFACE: {
			char *ends = graph_no_iface_ends(g, st);

			jc_warn(graph_host_label(h), "%s: the cable to %s %s has no network interface at %s; cable not used",
			    port, graph_host_label(&g->hosts[st->peer_host]), peer, ends);
			free(ends);
			break;
		}
		case GRAPH_STRAY_SELF:
			jc_warn(graph_host_label(h), "%s is cabled to %s of the same host; cable not used",
			    port, peer);
			break;
		}
		free(port);
		free(peer);
	}
	/* ports whose peer Mac reported no domain UUID */
	for (size_t i = 0; i < g->n; i++) {
		const struct jc_host *h = &g->hosts[i];

		for (size_t p = 0; p < h->nports; p++) {
			const struct jc_port *pt = &h->ports[p];
			char *port, *pname, *pmodel;

			if (!pt->peer_no_id)
				continue;
			port = graph_port_label(h, p);
			/* the name and model the device at the other end reports */
			pname = jc_printable(pt->peer_name, 64);
			pmodel = pt->peer_model ? jc_printable(pt->peer_model, 64) : NULL;
			if (pt->peer_inferred)
				jc_warn(graph_host_label(h), "%s: the Mac cabled here (%s%s%s) reports no "
				    "domain UUID; paired by inference with the only port that fits it",
				    port, pname, pmodel ? ", " : "", pmodel ? pmodel : "");
			else
				jc_warn(graph_host_label(h), "%s: the Mac cabled here (%s%s%s) reports no "
				    "domain UUID, and not exactly one port of the hosts fits it; cable "
				    "not used", port, pname, pmodel ? ", " : "", pmodel ? pmodel : "");
			free(port);
			free(pname);
			free(pmodel);
		}
	}
	for (size_t c = 0; c < g->ncables; c++) {
		const struct graph_cable *cb = &g->cables[c];

		if (cb->via_dock)
			jc_warn(NULL, "the cable %s %s - %s %s goes through a dock or hub: not used for RDMA",
			    graph_host_label(&g->hosts[cb->end[0].host]), cb->end[0].iface,
			    graph_host_label(&g->hosts[cb->end[1].host]), cb->end[1].iface);
	}
}

/* The combinations of options configure refuses; 0 when none. */
static int
refused(struct jc_opts *o)
{
	struct jc_err err = { 0 };
	uint32_t a;
	int len;

	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if (o->subnet != NULL && subnet_parse_cidr(o->subnet, &a, &len, &err) < 0)
		return cli_usage_error(o->cmd, "argument --subnet: %s", err.msg);
	if (o->subnet != NULL && len > 30)
		return cli_usage_error(o->cmd, "argument --subnet: '%s' holds no /30 "
		    "(a range such as 10.254.0.0/16)", o->subnet);
	if (o->subnet != NULL && strcmp(o->over, "ethernet") == 0)
		return cli_usage_error(o->cmd, "--subnet numbers the Thunderbolt cables; "
		    "--over ethernet configures none");
	if (o->verify && o->json)
		return cli_usage_error(o->cmd, "--verify prints its own report; for JSON run '%s verify --json'",
		    JC_PROG);
	if (o->verify && o->from != NULL)
		return cli_usage_error(o->cmd, "--verify measures live hosts; it cannot run on a replayed bundle (--from)");
	if (o->verify && o->dot)
		return cli_usage_error(o->cmd, "--dot prints the cabling and exits; it cannot be combined with --verify");
	if (o->verify && cli_remote_bin(o) != NULL && !launch_bin_ok(cli_remote_bin(o), &err))
		return cli_usage_error(o->cmd, "%s %s", o->remote_bin != NULL ?
		    "argument --remote-bin:" : "JACCL_CONFIG_REMOTE:", err.msg);
	if (o->remote_bin != NULL && !o->verify)
		return cli_usage_error(o->cmd, "--remote-bin names the %s that --verify starts "
		    "on the hosts; it needs --verify", JC_PROG);
	return 0;
}

/* The hosts, and what discovery finds on them. */
static int
load_and_discover(struct run *r)
{
	struct jc_opts *o = r->o;
	int rc;

	if ((rc = cli_hosts_load(o, 0, &r->h)) != 0)
		return rc;
	if (r->h.n == 0) {
		jc_error(NULL, "no host to configure");
		return JC_EXIT_FAIL;
	}
	if (o->from == NULL && cli_tr_init() != 0)
		return JC_EXIT_FAIL;
	rc = discover(r);
	if (o->from == NULL && r->conns == NULL)
		tr_global_cleanup();
	else if (o->from == NULL)
		r->tr_live = true;
	return rc;
}

/* --over ethernet: the hostfile of the management addresses, nothing to set up. */
static int
configure_ethernet(struct run *r, const struct hostfile_write_in *in)
{
	struct jc_strv warnings = { 0 };
	struct jc_err err = { 0 };
	int rc = 0;

	if (r->o->persist)
		jc_warn(NULL, "--persist has no effect with --over ethernet (nothing is set up)");
	jc_info(NULL, "Preparing an ethernet hostfile");
	if (hostfile_write_ethernet(r->h.v, r->h.n, NULL, in, &r->hf, &warnings, &err) != 0) {
		out_error_lines(err.msg);
		strv_free(&warnings);
		return JC_EXIT_FAIL;
	}
	out_warn_each(&warnings, "Could not extract ip for ");
	strv_free(&warnings);
	if (r->o->json)
		rc = print_json(r, NULL);
	return rc != 0 ? rc : write_hostfile(r);
}

/*
 * The cable graph (with what it could not use), the cabling file of
 * --save-cabling, and the DOT of --dot; *done when --dot ended the run.
 */
static int
build_graph(struct run *r, bool *done)
{
	struct jc_opts *o = r->o;
	struct jc_err err = { 0 };

	jc_info(NULL, "Preparing for communication over thunderbolt");
	for (size_t i = 0; i < r->h.n; i++) {
		jc_info(NULL, "Getting connectivity from %s", r->h.v[i].name);
		jc_info(NULL, "Getting interface names from %s", r->h.v[i].name);
	}
	if (graph_build(r->h.v, r->h.n, &r->g, &err) != 0) {
		out_error_lines(err.msg);
		return JC_EXIT_FAIL;
	}
	report_strays(r->g);
	if (o->save_cabling != NULL && cabling_save(o->save_cabling, r->g, &err) != 0) {
		jc_error(NULL, "%s", err.msg);
		return JC_EXIT_FAIL;
	}
	if (!o->dot)
		return 0;
	*done = true;
	if (dot_write(stdout, r->g, o->verbose ? DOT_EXTENDED : 0, &err) != 0) {
		jc_error(NULL, "%s", err.msg);
		return JC_EXIT_FAIL;
	}
	return 0;
}

/* Why h's routes are unknown: its probe's note on them (borrowed). */
static const char *
routes_why(const struct jc_host *h)
{
	for (size_t i = 0; i < h->nnotes; i++)
		if (strstr(h->notes[i], "routes unknown") != NULL)
			return h->notes[i];
	return "no routing table captured";
}

/* The backend, the per-cable plan and the hostfile. */
static int
plan_cluster(struct run *r, const struct hostfile_write_in *in)
{
	struct jc_strv warnings = { 0 };
	struct jc_err err = { 0 };
	int rc = JC_EXIT_FAIL;

	for (size_t i = 0; i < r->h.n; i++)
		jc_info(NULL, "Checking that %s supports RDMA", r->h.v[i].name);
	if (graph_choose(r->g, r->o->backend, &r->choice, &err) != 0) {
		rc = JC_EXIT_CABLING;
		goto out;
	}
	r->chosen = true;
	out_warn_each(&r->choice.warnings, "");
	jc_info(NULL, "Prepare a %s hostfile", graph_backend_name(r->choice.backend));
	if (plan_build_opts(r->g, &(struct plan_opts){ .subnet = r->o->subnet,
	    .persist = r->o->persist }, &r->plan, &err) != 0)
		goto out;
	if (r->plan->subnet.reason != NULL)
		jc_note(r->plan->note_host, "%s", r->plan->subnet.reason);
	/* a live host whose routes could not be read: said, and the plan goes on */
	for (size_t i = 0; r->o->from == NULL && i < r->h.n; i++)
		if (r->h.v[i].reachable && r->h.v[i].error == NULL && !r->h.v[i].routes_known)
			jc_note(r->h.v[i].name, "routes unknown (%s): the cables' subnets were not "
			    "checked against its routes", routes_why(&r->h.v[i]));
	for (size_t i = 0; r->choice.backend != GRAPH_RING && i < r->h.n; i++)
		jc_info(NULL, "Getting the ip from %s", r->h.v[i].name);
	if (hostfile_write_build(r->g, &r->choice, r->plan, in, &r->hf, &warnings, &err) != 0)
		goto out;
	out_warn_each(&warnings, "Could not extract ip for ");
	rc = 0;
out:
	if (rc != 0)
		out_error_lines(err.msg);
	strv_free(&warnings);
	return rc;
}

/*
 * A host whose sudo allows only some commands without a password (a
 * scoped rule) must allow every command of its plan and of what undoes it:
 * each one missing named, with the command that prints a rule allowing
 * them. True when every such host has them all.
 */
static bool
scoped_sudo_enough(struct run *r)
{
	bool enough = true;

	for (size_t k = 0; k < r->plan->n; k++) {
		const struct plan_host *ph = &r->plan->hosts[k];
		const struct jc_host *h = &r->g->hosts[ph->host];
		struct jc_strv miss = { 0 };

		if (h->sudo_mode != JC_SUDO_SCOPED || ph->applied ||
		    sudo_plan_missing(ph, h, &miss) == 0) {
			strv_free(&miss);
			continue;
		}
		if (enough)
			jc_warn(NULL, "Automatic setup requested but the sudo rule of these hosts does "
			    "not allow every command of the setup without a password "
			    "(`jaccl-config sudoers` prints one that does)");
		enough = false;
		fprintf(stderr, " -  %s:", h->name);
		for (size_t i = 0; i < miss.n; i++)
			fprintf(stderr, "%s %s", i ? "," : "", miss.v[i]);
		fputc('\n', stderr);
		strv_free(&miss);
	}
	return enough;
}

/*
 * The setup: automatic only when asked and every host has passwordless
 * sudo (for everything, or a rule allowing each of its commands), else each host's commands printed (in --json, only listed).
 * *setup: what --json says of it ("applied", "printed" or NULL).
 */
static int
setup_cluster(struct run *r, json_t **setup)
{
	struct jc_opts *o = r->o;
	bool autos = o->auto_setup == JC_YES;
	struct jc_buf b = { 0 };
	int rc;

	for (size_t i = 0; autos && i < r->h.n; i++)
		if (r->h.v[i].sudo_mode != JC_SUDO_ALL && r->h.v[i].sudo_mode != JC_SUDO_SCOPED)
			buf_printf(&b, " -  %s\n", r->h.v[i].name);
	if (b.len > 0) {
		jc_warn(NULL, "Automatic setup requested but the following hosts do not have passwordless sudo");
		fputs(b.data, stderr);
		autos = false;
	}
	buf_free(&b);
	if (autos && !scoped_sudo_enough(r))
		autos = false;
	if (autos && o->from != NULL) {
		jc_error(NULL, "--auto-setup changes live hosts; it cannot run on a replayed bundle (--from)");
		return JC_EXIT_FAIL;
	}
	if (autos) {
		if ((rc = auto_setup(r)) != 0)
			return rc;
		*setup = json_string("applied");
	} else if (!o->json) {
		manual_setup(r);
	} else {
		*setup = json_string("printed");
	}
	return 0;
}

/* --json, the hostfile, and --verify on it. */
static int
finish(struct run *r, json_t *setup)
{
	struct jc_opts *o = r->o;
	struct jc_hostfile *vhf;
	int rc;

	if (!o->json)
		json_decref(setup);
	else if ((rc = print_json(r, setup)) != 0)
		return rc;
	if ((rc = write_hostfile(r)) != 0 || !o->verify)
		return rc;
	vhf = verify_hostfile(r);
	if (vhf != NULL)
		jc_info(NULL, "verifying the ring's cables over TCP (the ring backend's hostfile names no devices)");
	rc = cmd_verify_hostfile(o, vhf ? vhf : r->hf, NULL,
	    o->output_hostfile ? o->output_hostfile : "the hostfile");
	jc_hostfile_free(vhf);
	return rc;
}

int
cmd_configure(struct jc_opts *o)
{
	struct run r = { .o = o };
	struct hostfile_write_in in = { 0 };
	json_t *setup = NULL;
	bool done = false;
	int rc;

	if ((rc = refused(o)) != 0)
		return rc;
	if ((rc = load_and_discover(&r)) != 0)
		goto out;
	in.envs = (const char *const *)o->envs.v;
	in.nenvs = o->envs.n;
	in.input = r.h.hf;
	if (strcmp(o->over, "ethernet") == 0) {
		rc = configure_ethernet(&r, &in);
		goto out;
	}
	if ((rc = build_graph(&r, &done)) != 0 || done)
		goto out;
	if ((rc = plan_cluster(&r, &in)) != 0 || (rc = setup_cluster(&r, &setup)) != 0)
		goto out;
	rc = finish(&r, setup);
	setup = NULL;	/* finish() took it */
out:
	json_decref(setup);
	run_clear(&r);
	return rc;
}

/* ---- sudoers: the rule of least privilege ---- */

static const char *
hwport_of(const struct jc_host *h, const char *dev)
{
	for (size_t i = 0; i < h->nhwports; i++)
		if (h->hwports[i].device != NULL && strcmp(h->hwports[i].device, dev) == 0)
			return h->hwports[i].port;
	return NULL;
}

static void
push_new(struct jc_strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return;
	strv_push(sv, s);
}

/* What the planned hosts of one system need named: their cables' names. */
static size_t
rule_systems(const struct run *r, struct sudo_rule_sys *sys)
{
	size_t n = 0;

	for (size_t k = 0; k < r->plan->n; k++) {
		const struct plan_host *ph = &r->plan->hosts[k];
		const struct jc_host *h = &r->g->hosts[ph->host];
		const char *bp = hwport_of(h, "bridge0");
		size_t s = 0;

		while (s < n && sys[s].plat != ph->plat)
			s++;
		if (s == n)
			sys[n++] = (struct sudo_rule_sys){ .plat = ph->plat, .netmgr = h->netmgr };
		else if (sys[s].netmgr != h->netmgr)
			sys[s].netmgr = JC_NETMGR_UNKNOWN;	/* several: all of them */
		for (size_t a = 0; a < ph->naddrs; a++) {
			const char *port = hwport_of(h, ph->addrs[a].iface);

			push_new(&sys[s].ifaces, ph->addrs[a].iface);
			if (port != NULL && jc_service_name_ok(port))
				push_new(&sys[s].ports, port);
		}
		if (bp != NULL && jc_service_name_ok(bp))
			push_new(&sys[s].bridge_svcs, bp);
	}
	for (size_t s = 0; s < n; s++)
		sudo_rule_defaults(&sys[s]);
	return n;
}

int
cmd_sudoers(struct jc_opts *o)
{
	struct sudo_rule_sys sys[2] = { { .plat = &jc_platform_macos } };
	struct run r = { .o = o };
	struct jc_err perr = { 0 };
	bool done = false;
	size_t n = 1;
	char *text;
	int rc = 0;

	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if (o->hosts_given || o->hostfile != NULL || o->from != NULL) {
		/* the systems and cable interfaces of these hosts, as a setup plans them */
		if ((rc = cli_ssh_config_ok(o)) != 0 || (rc = load_and_discover(&r)) != 0 ||
		    (rc = build_graph(&r, &done)) != 0)
			goto out;
		if (plan_build_opts(r.g, &(struct plan_opts){ .persist = o->persist }, &r.plan,
		    &perr) != 0) {
			jc_error(NULL, "%s: no rule to print", perr.msg);
			rc = JC_EXIT_FAIL;
			goto out;
		}
		if (r.plan->n == 0) {
			jc_error(NULL, "no cable to set up on these hosts: no rule to print");
			rc = JC_EXIT_FAIL;
			goto out;
		}
		n = rule_systems(&r, sys);
	} else {
		sudo_rule_defaults(&sys[0]);
	}
	text = sudo_rule_text(sys, n, o->persist, NULL);
	fputs(text, stdout);
	free(text);
out:
	for (size_t i = 0; i < JC_ARRAY_LEN(sys); i++)
		sudo_rule_sys_clear(&sys[i]);
	run_clear(&r);
	return rc;
}
