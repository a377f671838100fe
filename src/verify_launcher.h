/* SPDX-License-Identifier: MIT */
/*
 * The verification of a cluster, orchestrated from one machine: start
 * `jaccl-config verify-rank` on every host of a hostfile through the
 * launcher (with the environment mlx.launch gives a JACCL job), relay the
 * side channel through the SSH streams when asked to, collect rank 0's
 * report and merge into it what the launcher saw (which host each rank is,
 * how each rank ended, which rank failed first). Printing the report is
 * the only output, on a caller-supplied FILE.
 */
#ifndef JC_VERIFY_H
#define JC_VERIFY_H

#include <signal.h>
#include <stdio.h>

#include <jansson.h>

#include "jc.h"
#include "transport.h"

/* The default floor of a link with --fabric verbs (RDMA over Thunderbolt 5). */
#define VERIFY_RDMA_FLOOR "50Gb/s"

struct verify_opts {
	struct tr_opts tr;
	const char *remote_bin;	/* jaccl-config on the hosts */
	const char *fabric;	/* NULL: verify-rank's default */
	const char *side_channel;	/* NULL: tcp; "ssh": relayed; "file": a new local folder */
	const char *min_bw;	/* passed through; NULL: VERIFY_RDMA_FLOOR for verbs, else none */
	double timeout;		/* verify-rank's bound on any wait */
	long starting_port;
	char **envs;		/* --env entries */
	size_t nenvs;
	bool verbose;		/* -v for the ranks too */
	volatile sig_atomic_t *interrupted;
	/*
	 * Output of the ranks that is not the report (their standard error,
	 * the standard output of ranks other than 0), one line at a time;
	 * called from the launcher's threads, never two at a time. May be NULL.
	 */
	void (*line)(void *arg, size_t rank, const char *host, int fd, const char *data,
	    size_t len);
	void *arg;
};

/*
 * The overall bound of a verification of nlinks connections with the
 * per-wait bound timeout, in seconds: every phase of verify-rank is bounded
 * by timeout, so this only catches ranks that stop talking altogether.
 */
double verify_overall_bound(double timeout, size_t nlinks);

/*
 * Run the verification on the hosts of hf (checked beforehand by the
 * caller). *report receives a new JSON object in every case where ranks
 * were started: rank 0's report (or a skeleton when it sent none) with
 * "hosts", "processes" and the launcher's "failures" merged in and "ok"
 * false when any rank failed. Returns 0 when the verification passed, 1
 * when it ran and failed (a link down or slow, a wrong result, a rank that
 * failed), or a negative value with err filled when it could not run at
 * all (*report NULL).
 */
int verify_run(const struct jc_hostfile *hf, const struct verify_opts *o, json_t **report,
    struct jc_err *err);

#endif
