/* SPDX-License-Identifier: MIT */
/*
 * The rules of a valid hostfile, as mlx.launch and the JACCL runtime apply
 * them (and a few they do not, such as Apple's queue-pair limit), run on a
 * parsed struct jc_hostfile. Pure: no I/O. The result is a report with a
 * verdict, the backend that applies, the coordinator address and every
 * problem and warning, each with a stable short code and the hosts
 * involved. The codes are listed in the man page (HOSTFILE CHECKS).
 */
#ifndef JC_CHECK_H
#define JC_CHECK_H

#include <jansson.h>

#include "hostfile_read.h"

#define CHECK_DEFAULT_PORT 32323
#define CHECK_MESH_MAX 8	/* ranks of a JACCL mesh */
#define CHECK_RING_MAX 4	/* cables per direction of a JACCL ring */
#define CHECK_QP_MAX 10		/* queue pairs per RDMA device (Apple's driver) */
#define CHECK_ARG_MAX 1048576	/* bytes of arguments and environment of an exec on macOS */
#define CHECK_SAME_CODE_MAX 20	/* items kept per code; the rest are summed up */

/* A problem or warning: code is static, msg owned, ranks index the hosts. */
struct check_item {
	const char *code;
	char *msg;
	size_t *ranks;
	size_t nranks;
};

struct check_report {
	bool valid;		/* no problem (warnings allowed) */
	char *backend;		/* "jaccl", "jaccl-ring", "ring", or NULL */
	const char *backend_source;	/* "option", "hostfile", "cabling" or NULL */
	char *coordinator;	/* rank 0's first IP and the port, or NULL */
	long port;
	const char *format;	/* "object", "list", or NULL when unreadable */
	size_t nhosts;
	char **names;		/* display name of each host: ssh, or "hosts[i]" */
	unsigned long mesh_links;	/* N(N-1)/2: cables of a full mesh */
	size_t cabled_pairs;	/* pairs that list a device both ways */
	size_t launch_line;	/* JACCL: bytes of the longest line mlx.launch runs, or 0 */
	size_t launch_rank;	/* the rank whose line that is */
	struct check_item *problems;
	size_t nproblems;
	struct check_item *warnings;
	size_t nwarnings;
};

/*
 * Check hf (NULL when the file could not be parsed at all), merging the
 * reader's diagnostics diags (may be NULL). backend overrides the file's
 * ("ring", "jaccl" or "jaccl-ring"; NULL: the file's, else chosen from the
 * rdma matrix); port is the coordinator port. Never fails; returns a new
 * report to release with check_report_free().
 */
struct check_report *check_hostfile(const struct jc_hostfile *hf,
    const struct hostfile_diags *diags, const char *backend, long port);

/*
 * The report as JSON: {"valid", "backend", "backend_source", "coordinator",
 * "port", "format", "hosts", "mesh_links", "cabled_pairs", "launch_line"
 * ({"bytes", "rank"} under JACCL, else null), "problems", "warnings"}, each item {"code", "message", "hosts", "ranks"}.
 * Returns a new reference.
 */
json_t *check_report_json(const struct check_report *r);

/* Release r (NULL is fine). */
void check_report_free(struct check_report *r);

#endif
