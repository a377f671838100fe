/* SPDX-License-Identifier: MIT */
/*
 * The measurements of a verification, run by every rank of a group: each
 * cable alone in both directions (bandwidth, small-message latency), all
 * cables at once, an all-reduce sweep checked for correctness in the
 * nccl-tests format, then the all-gather and send/recv checked word by
 * word (verify_ops.c). Every rank ends with the same report (a JSON tree),
 * gathered through the side channel, so every rank knows the verdict.
 */
#ifndef JC_RT_VERIFY_H
#define JC_RT_VERIFY_H

#include <jansson.h>

#include "rt_group.h"

struct rt_verify_opts {
	size_t link_bytes;	/* per cable and direction (default 256 MiB) */
	double link_seconds;	/* ... or stop after this long (2; JACCL_VERIFY_SECONDS) */
	size_t msg_bytes;	/* message size of the bandwidth tests (4 MiB) */
	int lat_iters;		/* ping-pongs of 8 bytes (default 200) */
	size_t ar_min, ar_max;	/* all-reduce sweep, bytes (1 KiB .. 64 MiB) */
	double min_bw;		/* bytes/s per cable and direction; 0: none */
	const char *fabric;	/* names for the report */
	const char *side_channel;
	/*
	 * Test hooks, both off by default. trace_fd >= 0: one line per event
	 * ("rank R: up", "rank R: link K A-B start", ...) so a test can act
	 * when a measurement has started. corrupt_rank >= 0: that rank adds 1
	 * to element corrupt_elem of what it contributes to every all-reduce
	 * (JACCL_VERIFY_CORRUPT=RANK:ELEMENT).
	 */
	int trace_fd;
	int corrupt_rank;
	size_t corrupt_elem;
};

/*
 * Fill o with the defaults, scaled by JACCL_VERIFY_MB and JACCL_VERIFY_MAX_MB,
 * with the corruption hook of JACCL_VERIFY_CORRUPT and no trace.
 */
void rt_verify_defaults(struct rt_verify_opts *o);

/* Write "rank R: " and the event to o->trace_fd (nothing when it is < 0). */
void rt_verify_event(const struct rt_verify_opts *o, int rank, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The value rank contributes at element i of every all-reduce. */
double rt_verify_value(int rank, size_t i);

/*
 * Parse a rate: a decimal number and a unit among Gb/s, Gbit/s, Gbps,
 * GB/s, Mb/s, MB/s, Tb/s (b = bits, B = bytes; G = 10^9). Sets *bps in
 * bytes per second. Returns 0 or -EINVAL.
 */
int rt_parse_rate(const char *s, double *bps);

/*
 * The 8-byte word the all-gather and send/recv checks put at element i of
 * what rank from sends in their checked call number round (to: the rank
 * a send goes to, -1 for an all-gather): bits 62-56 round % 127 + 1,
 * 55-44 from, 43-32 to + 1, 31-0 i. Never 0, never all ones (the fill of
 * an output before the call).
 */
uint64_t rt_verify_word(unsigned round, int from, int to, size_t i);

/*
 * The block sizes in bytes of those checks on n ranks, at most 4: 8, 8008
 * and 65544 (those up to o->ar_max; 8 always), then o->ar_max / n in
 * whole words when larger.
 */
size_t rt_verify_ops_sizes(const struct rt_verify_opts *o, int n, size_t *sizes);

/*
 * The all-gather check (gather) or the send/recv check on g, when run
 * (else its section says "skipped"): its section ("allgather" or
 * "sendrecv") goes into rep and its failures into fail, with *ok false.
 * Returns 0, or a negative value with err filled when the side channel
 * failed.
 */
int rt_verify_ops(struct rt_group *g, const struct rt_verify_opts *o, bool gather, bool run,
    json_t *rep, json_t *fail, bool *ok, struct jc_err *err);

/*
 * Run the verification on g (sc: its side channel). On return *report (a
 * new reference) holds the whole report, the same on every rank, with
 * "ok" false when a cable is down or slow or a result is wrong. Returns 0
 * when the report could be gathered (whatever its verdict), or a negative
 * value with err filled when the side channel failed (*report NULL).
 */
int rt_verify_run(struct rt_group *g, const struct rt_config *c,
    const struct rt_verify_opts *o, json_t **report, struct jc_err *err);

#endif
