/* SPDX-License-Identifier: MIT */
/*
 * The doctor's checks: every known cause of a broken Thunderbolt/RDMA
 * cluster, looked for in the inventory of a probe (live or replayed), the
 * cable graph, and optionally the hostfile in use and an expected cabling.
 * The checks are pure: they read their input and return findings; the one
 * check that needs the network (coordinator reachability) gets its
 * measurements from doctor_coord_probe(), which runs over the transport ops. Each check is a table entry {name, severity, function}; each
 * finding has a status, the hosts and ports involved, a message and a
 * remedy. The check names are listed in the man page (DOCTOR CHECKS).
 */
#ifndef JC_DOCTOR_H
#define JC_DOCTOR_H

#include <jansson.h>

#include "expected_cabling.h"
#include "graph.h"
#include "parse_sw.h"
#include "setup_record.h"
#include "transport.h"

/* Ordered: a check's status is the worst of its findings. */
enum doctor_status {
	DOCTOR_OK = 0,
	DOCTOR_UNKNOWN,		/* could not be checked; the message says why */
	DOCTOR_WARNING,
	DOCTOR_ERROR,
};

/* "ok", "unknown", "warning", "error". */
const char *doctor_status_name(enum doctor_status s);

/* What the coordinator probe of one host found (doctor_coord_probe()). */
struct doctor_coord {
	enum doctor_status status;	/* OK reachable, ERROR not, UNKNOWN not run */
	const char *err_name;	/* "ECONNREFUSED", "ETIMEDOUT" ... or NULL */
	char *detail;		/* what the remote side said, owned, or NULL */
	bool listening;		/* the connection was accepted */
};

/*
 * Test from every probed host (reachable, no error) that addr:port can be
 * reached, over tp, all hosts at once, each bounded by timeout seconds.
 * Nothing listens on the coordinator port while no job runs, so "connection
 * refused" counts as reachable (the host answered, the path works, the port
 * is free); an accepted connection is reachable too (listening set).
 * Unreachable (ERROR) means a timeout, "no route to host", "network is
 * unreachable" or a permission error, with err_name set. The connection is
 * made by /bin/bash's /dev/tcp on each host (nc -z where bash is missing).
 * A host that was not probed, cannot be connected to or has neither tool
 * is UNKNOWN. Returns n results; free with doctor_coord_free().
 */
struct doctor_coord *doctor_coord_probe(struct jc_transport *tp, const struct jc_host *hosts,
    size_t n, const char *addr, long port, double timeout);

void doctor_coord_free(struct doctor_coord *c, size_t n);

struct doctor_input {
	const struct jc_host *hosts;	/* probed hosts (error set when not probed) */
	size_t n;
	const struct graph *g;		/* NULL when the graph could not be built */
	const char *graph_error;	/* why g is NULL */
	const struct jc_hostfile *hf;	/* --hostfile, or NULL */
	const char *backend;		/* forced backend, or NULL */
	const struct cabling *expect;	/* --expect, or NULL */
	const char *expect_name;	/* its file name */
	const char *coordinator;	/* "ADDR:PORT" tested, or NULL */
	const struct doctor_coord *coord;	/* n results, or NULL (not run) */
	const char *coord_skip;		/* why coord is NULL */
	/* drift: the last setup recorded in the state directory */
	const struct setup_record *record;	/* or NULL */
	const char *record_skip;	/* why record is NULL */
	const char *state_dir;		/* --state-dir as given, or NULL (the default) */
	/* the doctor's own outputs (parse_sw.h), n of them, or NULL */
	const struct jc_sw *sw;
};

struct doctor_report;

struct doctor_finding {
	const char *check;	/* static name of the check */
	enum doctor_status status;
	long host;		/* index of the host it is shown under, -1: cluster */
	size_t *hosts;		/* every host involved */
	size_t nhosts;
	char **ports;		/* "mac1 Thunderbolt 3 (en5)" ... */
	size_t nports;
	char *msg;
	char *remedy;		/* NULL when there is nothing to do */
};

struct doctor_check {
	const char *name;
	enum doctor_status severity;	/* worst status it can report */
	const char *what;		/* one line: what it looks for */
	void (*run)(const struct doctor_input *in, struct doctor_report *r);
};

/* The table of checks, in the order they run and are shown. */
extern const struct doctor_check doctor_checks[];
extern const size_t doctor_nchecks;

struct doctor_result {
	const struct doctor_check *check;
	enum doctor_status status;
	const char *reason;	/* status UNKNOWN: the first unknown message (borrowed) */
};

struct doctor_report {
	struct doctor_result *results;	/* one per check, table order */
	size_t nresults;
	struct doctor_finding *v;	/* findings, in check order */
	size_t n;
	size_t count[4];	/* checks per status */
	const struct doctor_check *cur;	/* the check running (doctor_add) */
};

/*
 * Run every check on in. Never fails; returns a new report (free with
 * doctor_report_free()).
 */
struct doctor_report *doctor_run(const struct doctor_input *in);

/*
 * Used by the checks: append a finding of check (the report's current
 * check) with status, shown under host (-1: the cluster), involving the
 * nh hosts of hs; msg and remedy are copied (remedy may be NULL).
 */
struct doctor_finding *doctor_add(struct doctor_report *r, enum doctor_status status,
    long host, const size_t *hs, size_t nh, const char *remedy, const char *fmt, ...)
    __attribute__((format(printf, 7, 8)));

/* Add a port label to a finding (copied). */
void doctor_add_port(struct doctor_finding *f, const char *label);

/*
 * The report as JSON (new reference): {"version": 1, "hosts": [names],
 * "checks": [{"name", "severity", "description", "status", "reason",
 * "findings": [{"status", "host", "hosts", "ports", "message", "remedy"}]}],
 * "summary": {"ok", "warning", "error", "unknown"}}.
 */
json_t *doctor_report_json(const struct doctor_report *r, const struct jc_host *hosts,
    size_t n);

/* Host h answered its probe (reachable, no error): the checks can read it. */
bool doctor_probed(const struct jc_host *h);

/* True when no check is an error (the command then exits 0). */
bool doctor_passed(const struct doctor_report *r);

void doctor_report_free(struct doctor_report *r);

#endif
