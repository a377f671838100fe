/* SPDX-License-Identifier: MIT */
/*
 * The doctor command: probe every host (over SSH, or from a saved bundle),
 * build the cable graph, test from every host over SSH that rank 0's
 * coordinator address and port can be reached, run the checks of doctor.c
 * and print the findings grouped by host (or, with --json, one JSON report).
 * Exits 0 when no check is an error, 1 otherwise.
 *
 * The coordinator probe: nothing listens on the coordinator port while no
 * job runs, so "connection refused" counts as reachable (the host answered,
 * the path works and the port is free); an accepted connection is reachable
 * too, with a warning that something already holds the port. Unreachable
 * means a timeout, "no route to host", "network is unreachable" or a
 * permission error. The connection is made by /bin/bash's /dev/tcp on each
 * host (nc -z where bash is missing), bounded by the command timeout.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply.h"
#include "bundle.h"
#include "expected_cabling.h"
#include "cmd.h"
#include "doctor.h"
#include "hostfile_read.h"
#include "probe.h"

/* --- coordinator probe --- */

/*
 * Test addr:port from every probed host. Returns n results (free each
 * detail), statuses UNKNOWN for hosts that were not probed.
 */
static struct doctor_coord *
coord_probe(struct jc_opts *o, const struct jc_host *hosts, size_t n, const char *addr,
    long port)
{
	struct doctor_coord *res;
	struct jc_transport *tp;
	struct tr_opts tr = cli_tr_opts(o);
	double timeout = o->command_timeout > 0 && o->command_timeout < 10 ?
	    o->command_timeout : 10;

	tp = transport_ssh_new(&tr);
	res = doctor_coord_probe(tp, hosts, n, addr, port, timeout);
	transport_free(tp);
	for (size_t i = 0; i < n; i++)
		jc_info(hosts[i].name, "coordinator %s:%ld: %s%s%s", addr, port,
		    doctor_status_name(res[i].status), res[i].detail ? ": " : "",
		    res[i].detail ? res[i].detail : "");
	return res;
}

/* --- output --- */

static void
print_finding(const struct doctor_finding *f)
{
	printf("  %-7s %s: %s\n", doctor_status_name(f->status), f->check, f->msg);
	if (f->remedy != NULL && f->status != DOCTOR_UNKNOWN)
		printf("          fix: %s\n", f->remedy);
}

static void
print_human(const struct doctor_report *r, const struct jc_host *hosts, size_t n)
{
	static const enum doctor_status order[] = { DOCTOR_ERROR, DOCTOR_WARNING,
		DOCTOR_UNKNOWN };
	bool any = false;

	for (long h = 0; h <= (long)n; h++) {
		long host = h == (long)n ? -1 : h;
		bool head = false;

		for (size_t s = 0; s < JC_ARRAY_LEN(order); s++)
			for (size_t k = 0; k < r->n; k++) {
				const struct doctor_finding *f = &r->v[k];

				if (f->host != host || f->status != order[s])
					continue;
				if (!head)
					printf("%s%s:\n", any ? "\n" : "",
					    host >= 0 ? hosts[host].name : "cluster");
				head = any = true;
				print_finding(f);
			}
	}
	if (any)
		putchar('\n');
	printf("%zu checks: %zu ok, %zu %s, %zu %s, %zu unknown\n", r->nresults,
	    r->count[DOCTOR_OK], r->count[DOCTOR_WARNING],
	    r->count[DOCTOR_WARNING] == 1 ? "warning" : "warnings", r->count[DOCTOR_ERROR],
	    r->count[DOCTOR_ERROR] == 1 ? "error" : "errors", r->count[DOCTOR_UNKNOWN]);
	for (size_t s = 0; s < 4; s++) {
		bool first = true;

		for (size_t c = 0; c < r->nresults; c++) {
			if (r->results[c].status != (enum doctor_status)s)
				continue;
			printf("%s%s", first ? "  " : ", ", r->results[c].check->name);
			first = false;
		}
		if (!first)
			printf(": %s\n", doctor_status_name((enum doctor_status)s));
	}
}

/* Probe the hosts (raws: one per host); --ignore-unreachable leaves out those not reached. */
static int
probe_all(struct jc_opts *o, struct cli_hosts *h, struct jc_raw **raws, size_t *nraws)
{
	struct probe_opts po = { 0 };

	if (h->n == 0) {
		jc_error(NULL, "no host to examine");
		return JC_EXIT_FAIL;
	}
	po.tr = cli_tr_opts(o);
	po.command_timeout = o->command_timeout;
	po.from = o->from;
	po.doctor = true;	/* the doctor's own commands, in the same round trip */
	po.python = o->python;
	if (o->from == NULL && cli_tr_init() != 0)
		return JC_EXIT_FAIL;
	*raws = xcalloc(h->n, sizeof(**raws));
	*nraws = h->n;
	probe_hosts(h->v, h->n, &po, *raws);
	if (o->ignore_unreachable)
		cli_hosts_drop_unreachable(h);
	return 0;
}

/*
 * Rank 0's coordinator (the hostfile's first address, else its management
 * IP) as "ADDR:PORT" in *coordinator, tested from every host (*coord); or
 * in->coord_skip saying why it is not tested.
 */
static void
coordinator_check(struct jc_opts *o, const struct cli_hosts *h, struct doctor_input *in,
    char **coordinator, struct doctor_coord **coord)
{
	const struct jc_hostfile *hf = h->hf;
	const char *addr = NULL;

	if (hf != NULL && hf->nhosts > 0 && hf->hosts[0].nips > 0)
		addr = hf->hosts[0].ips[0];
	else if (h->n > 0)
		addr = h->v[0].mgmt_ip;
	if (addr != NULL && hostfile_ip_ok(addr) && jc_plain_word(addr))
		*coordinator = xasprintf("%s:%ld", addr, o->starting_port);
	if (o->from != NULL)
		in->coord_skip = "replaying a bundle: nothing to connect from";
	else if (*coordinator == NULL)
		in->coord_skip = "rank 0 has no usable address";
	else if (h->n < 1 || !h->v[0].reachable)
		in->coord_skip = "rank 0 was not probed";
	else
		*coord = coord_probe(o, h->v, h->n, addr, o->starting_port);
	in->coordinator = *coordinator;
	in->coord = *coord;
}

/*
 * The doctor's own outputs of every host (raws are matched by name: hosts
 * left out by --ignore-unreachable are gone from h). n results.
 */
static struct jc_sw *
gather_sw(const struct cli_hosts *h, const struct jc_raw *raws, size_t nraws)
{
	struct jc_sw *sw = xcalloc(h->n + 1, sizeof(*sw));
	static const struct jc_raw none;

	for (size_t i = 0; i < h->n; i++) {
		const struct jc_raw *raw = &none;

		for (size_t k = 0; k < nraws; k++)
			if (raws[k].host != NULL && strcmp(raws[k].host, h->v[i].name) == 0)
				raw = &raws[k];
		sw_from_raw(raw, &sw[i]);
	}
	return sw;
}

/*
 * The record of the last setup in the state directory (--state-dir, else
 * the default; a replayed bundle is compared only with an explicit one),
 * or in->record_skip saying why there is none.
 */
static struct setup_record *
load_record(struct jc_opts *o, struct doctor_input *in, char **skip)
{
	struct apply_opts ao = { .state_dir = o->state_dir };
	struct setup_record *rec = NULL;
	struct jc_err err = { 0 };
	char *dir;

	in->state_dir = o->state_dir;
	if (o->from != NULL && o->state_dir == NULL) {
		in->record_skip = "replaying a bundle: --state-dir DIR compares it with a setup";
		return NULL;
	}
	dir = apply_state_dir(&ao);
	if (setup_record_load(dir, &rec, &err) != 0)
		*skip = xasprintf("the record of the last setup cannot be read: %s", err.msg);
	else if (rec == NULL)
		*skip = xasprintf("no setup recorded in %s", dir);
	in->record_skip = *skip;
	free(dir);
	return rec;
}

/*
 * Without --expect, the cabling file of the state directory
 * (STATE_DIR/cabling.json, written there by a setup) when there is
 * one; never for a replayed bundle without --state-dir. Returns 0 (*out
 * NULL when there is none), or JC_EXIT_FAIL after saying why it is unusable.
 */
static int
state_cabling(struct jc_opts *o, struct cabling **out, char **name)
{
	struct apply_opts ao = { .state_dir = o->state_dir };
	struct jc_err err = { 0 };
	char *dir;

	*out = NULL;
	*name = NULL;
	if (o->expect != NULL || (o->from != NULL && o->state_dir == NULL))
		return 0;
	dir = apply_state_dir(&ao);
	*name = xasprintf("%s/" CABLING_STATE_FILE, dir);
	free(dir);
	if (access(*name, F_OK) != 0) {
		free(*name);
		*name = NULL;
		return 0;
	}
	if (cabling_load(*name, out, &err) != 0) {
		jc_error(NULL, "%s", err.msg);
		return JC_EXIT_FAIL;
	}
	return 0;
}

/* What drift and the sameness checks read, beyond the probe (owned here). */
struct dr_extra {
	struct cabling *sexpect;	/* the state directory's cabling file */
	char *sexpect_name;
	struct setup_record *rec;
	char *rskip;
	struct jc_sw *sw;		/* one per host */
	size_t nsw;
};

/* Fill x and in's fields for the drift and sameness checks. */
static void
extra_fill(struct jc_opts *o, const struct cli_hosts *h, const struct jc_raw *raws,
    size_t nraws, struct doctor_input *in, struct dr_extra *x)
{
	if (in->expect == NULL && x->sexpect != NULL) {
		in->expect = x->sexpect;
		in->expect_name = x->sexpect_name;
	}
	x->sw = gather_sw(h, raws, nraws);
	x->nsw = h->n;
	in->sw = x->sw;
	x->rec = load_record(o, in, &x->rskip);
	in->record = x->rec;
}

static void
extra_free(struct dr_extra *x)
{
	for (size_t i = 0; x->sw && i < x->nsw; i++)
		sw_clear(&x->sw[i]);
	free(x->sw);
	setup_record_free(x->rec);
	free(x->rskip);
	cabling_free(x->sexpect);
	free(x->sexpect_name);
}

static void
print_report(struct jc_opts *o, const struct doctor_report *rep, const struct cli_hosts *h,
    const char *coordinator, int rc)
{
	json_t *doc;

	if (!o->json) {
		print_human(rep, h->v, h->n);
		return;
	}
	doc = doctor_report_json(rep, h->v, h->n);
	json_object_set_new(doc, "code", json_string(cli_exit_code(rc)));
	json_object_set_new(doc, "coordinator", coordinator ? json_string(coordinator) :
	    json_null());
	out_json(doc);
	o->json_printed = true;
	json_decref(doc);
}

int
cmd_doctor(struct jc_opts *o)
{
	struct cabling *expect = NULL;
	struct cli_hosts h = { 0 };
	struct jc_raw *raws = NULL;
	struct jc_err err = { 0 };
	struct doctor_input in = { 0 };
	struct doctor_report *rep = NULL;
	struct doctor_coord *coord = NULL;
	struct graph *g = NULL;
	struct dr_extra x = { 0 };
	char *gerr = NULL, *coordinator = NULL;
	size_t nraws = 0;
	int rc;

	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if ((rc = cli_ssh_config_ok(o)) != 0 || (rc = cli_python_ok(o)) != 0)
		return rc;
	if (o->expect != NULL && cabling_load(o->expect, &expect, &err) != 0) {
		jc_error(NULL, "%s", err.msg);
		return JC_EXIT_FAIL;
	}
	if ((rc = state_cabling(o, &x.sexpect, &x.sexpect_name)) != 0)
		return rc;
	if ((rc = cli_hosts_load(o, 0, &h)) != 0 || (rc = probe_all(o, &h, &raws, &nraws)) != 0)
		goto out;
	if (o->save != NULL && (rc = cli_save_bundle(o->save, raws, nraws)) != 0)
		goto out;
	if (graph_build(h.v, h.n, &g, &err) != 0)
		gerr = xstrdup(err.msg);
	coordinator_check(o, &h, &in, &coordinator, &coord);
	if (o->from == NULL)
		tr_global_cleanup();
	in.hosts = h.v;
	in.n = h.n;
	in.g = g;
	in.graph_error = gerr;
	in.hf = h.hf;
	in.backend = o->backend;
	in.expect = expect;
	in.expect_name = o->expect;
	extra_fill(o, &h, raws, nraws, &in, &x);
	rep = doctor_run(&in);
	rc = doctor_passed(rep) ? JC_EXIT_OK : JC_EXIT_DOCTOR;
	print_report(o, rep, &h, in.coordinator, rc);
out:
	doctor_report_free(rep);
	for (size_t i = 0; coord && i < h.n; i++)
		free(coord[i].detail);
	free(coord);
	extra_free(&x);
	free(coordinator);
	free(gerr);
	graph_free(g);
	for (size_t i = 0; i < nraws; i++)
		raw_clear(&raws[i]);
	free(raws);
	cli_hosts_clear(&h);
	cabling_free(expect);
	return rc;
}
