/* SPDX-License-Identifier: MIT */
/*
 * A sync orchestrated from one machine: `jaccl-config sync-rank` started
 * on every host of a hostfile through the launcher, each told its part
 * over its SSH stream (the source's tree, what each host lacks, the free
 * space and permission checks before any byte moves, the route over the
 * cables and the addresses to connect to), their events collected. A run
 * that left hosts incomplete (a host or a cable lost, a chunk that arrived
 * damaged) is followed by another over what is left, routed around what
 * was lost, moving only the chunks still missing. Library code: events and
 * the result go to the caller, nothing is printed.
 */
#ifndef JC_SYNC_RUN_H
#define JC_SYNC_RUN_H

#include <signal.h>

#include <jansson.h>

#include "jc.h"
#include "sync_core.h"
#include "transport.h"

struct sync_opts {
	struct tr_opts tr;
	const char *remote_bin;	/* jaccl-config on the hosts (NULL: launch_bin_candidates()) */
	int source;		/* index of the source host in the hostfile */
	const char *src;	/* the folder on the source */
	const char *dest;	/* the folder on every other host; "%h": the host's name */
	bool checksum;		/* compare by hash, not size and mtime */
	bool verify_sha256;	/* Hugging Face blobs checked against their names */
	bool over_ethernet;	/* the management addresses instead of the cables */
	double timeout;		/* a connection with nothing moving for this long is lost */
	int max_runs;		/* runs in one sync (default 4) */
	volatile sig_atomic_t *interrupted;
	/* every event of a host (progress, file, lost ...), from the launcher's threads */
	void (*event)(void *arg, const char *host, json_t *ev);
	void *arg;
};

/* The cable graph of hf (one wire per name of each cell), or a full mesh for ethernet. */
void sync_graph_from_hostfile(const struct jc_hostfile *hf, bool ethernet,
    struct sync_graph *g);

/*
 * A route as JSON (a new reference): kind, parts (each a list of
 * "from", "to" edges by host name), and with gbps (n * n, from verify's
 * report; may be NULL) and bytes the expected seconds.
 */
json_t *sync_route_json(const struct sync_route *r, const struct jc_hostfile *hf,
    const double *gbps, double bytes);

/*
 * The measured rates of verify's report rep between the hosts of hf
 * (n * n Gb/s, summed over the cables of a pair; 0 where not measured).
 * Returns a new array, or NULL when rep names none of the hosts.
 */
double *sync_gbps_from_report(const struct jc_hostfile *hf, json_t *rep);

/* The folder on host i: dest with "%h" replaced by the host's name (new string). */
char *sync_dest_for(const char *dest, const char *host);

/*
 * Run the sync. *result receives a new object in every case where hosts
 * were reached: "ok", "source", "runs", "hosts" (each host's "state":
 * complete, incomplete, lost, refused, and what it wrote), "refusals",
 * "failures". Returns 0 when every host is complete, 1 when the sync ran
 * and some host is not, 2 when it was refused before any byte moved
 * (free space, permission, a tree that cannot be copied), or a negative
 * value with err filled when it could not run (*result NULL).
 */
int sync_run(const struct jc_hostfile *hf, const struct sync_opts *o, json_t **result,
    struct jc_err *err);

#endif
