/* SPDX-License-Identifier: MIT */
/*
 * JACCL's failure messages and what they mean (jaccl_failure.h). The forms
 * matched, from MLX's JACCL sources:
 *   "[jaccl] Changing queue pair to RTR failed with errno N"
 *   "[jaccl] Creating the queue pair failed with 'TEXT (N)'."
 *   "[jaccl] Couldn't allocate protection domain"
 *   "[jaccl] Recv failed with errno=N", "[jaccl] Send failed with errno=N"
 *     (the side channel; N is stale when the peer hung up)
 *   "peer closed the side channel" (the wording of MLX #4530)
 * The errnos are macOS's (the ranks run there): ETIMEDOUT 60, EINVAL 22,
 * EBUSY 16, EOPNOTSUPP 102; Linux's ETIMEDOUT 110 and EOPNOTSUPP 95 are
 * read the same way for a Linux verbs device.
 */
#include "config.h"

#include <string.h>

#include "jaccl_failure.h"
#include "util.h"

static const struct jaccl_failure known[] = {
	{ JF_PEER_GONE, "the side channel closed",
	  "another rank failed during init or exited: this rank lost its peer",
	  "look at the rank that failed first (its own error comes before this one)" },
	{ JF_RTR_UNREACHABLE, "RTR errno 60 (ETIMEDOUT)",
	  "the peer's IPv4-mapped GID is unreachable on this link: the two ends of the "
	  "cable have no addresses on one subnet, or the hostfile pairs devices that are not "
	  "cabled together",
	  "give both ends of every cable an address on one /30 (jaccl-config --auto-setup), "
	  "then jaccl-config doctor --hostfile HOSTFILE" },
	{ JF_RTR_GID, "RTR errno 22 (EINVAL)",
	  "a wrong GID or sgid_index: the device has no IPv4-mapped GID where the queue pair "
	  "looks (its interface lost its address), or the peer's GID is not one of this link",
	  "check that the cable's interfaces hold their addresses (jaccl-config doctor "
	  "--hostfile HOSTFILE: ipv4, hostfile-ifaces)" },
	{ JF_QP_RC, "ibv_create_qp errno 102 (EOPNOTSUPP)",
	  "RC queue pairs are not available: Apple's Thunderbolt RDMA offers UC queue pairs only",
	  "use a program or library that creates UC queue pairs (MLX's JACCL does)" },
	{ JF_QP_BUSY, "ibv_create_qp errno 16 (EBUSY)",
	  "the device has no queue pair left: Apple's driver gives at most 10 per device and the "
	  "next one fails every time (never transient: a retry does not help)",
	  "fewer queue pairs per device (jaccl-config check HOSTFILE: qp-budget), and no other "
	  "job holding the devices (jaccl-config launch stops and cleans its ranks)" },
	{ JF_PD_PORT_DOWN, "ibv_alloc_pd returned NULL",
	  "the device's port is down (PORT_DOWN): its cable is unplugged, runs at a rate "
	  "without RDMA, or the Mac at its other end has RDMA disabled",
	  "jaccl-config doctor --hostfile HOSTFILE (port-state, rdma-enabled)" },
	{ JF_TBT_CRASH, "SIGSEGV in tbt_post_recv",
	  "the known crash of Apple's Thunderbolt RDMA driver (libthunderboltrdma's "
	  "tbt_post_recv, MLX #4192, #4319): a pulled cable, and sometimes none, crashes both "
	  "ends",
	  "check the cables (jaccl-config watch), then run the job again" },
};

static const struct jaccl_failure likely_crash = {
	JF_TBT_CRASH, "SIGSEGV",
	"most likely the known crash of Apple's Thunderbolt RDMA driver (tbt_post_recv, MLX "
	"#4192, #4319): a pulled cable, and sometimes none, crashes both ends",
	"check the cables (jaccl-config watch), then run the job again",
};

static const struct jaccl_failure *
of(enum jaccl_failure_kind k)
{
	for (size_t i = 0; i < JC_ARRAY_LEN(known); i++)
		if (known[i].kind == k)
			return &known[i];
	return NULL;
}

/* The first place of needle in the len bytes of s, or NULL. */
static const char *
find(const char *s, size_t len, const char *needle)
{
	size_t n = strlen(needle);

	for (size_t i = 0; n <= len && i <= len - n; i++)
		if (memcmp(s + i, needle, n) == 0)
			return s + i;
	return NULL;
}

/* The decimal number at p (before end), or -1. */
static long
number_at(const char *p, const char *end)
{
	long v = 0;

	if (p >= end || *p < '0' || *p > '9')
		return -1;
	for (; p < end && *p >= '0' && *p <= '9'; p++)
		if ((v = v * 10 + (*p - '0')) > 100000)
			return -1;
	return v;
}

/* The N of "... (N)'" at the end of create_qp's message, or -1. */
static long
qp_errno(const char *from, const char *end)
{
	const char *q = find(from, (size_t)(end - from), ")'");
	const char *p;

	if (q == NULL)
		return -1;
	for (p = q; p > from && p[-1] >= '0' && p[-1] <= '9'; p--)
		;
	return p > from && p[-1] == '(' ? number_at(p, q) : -1;
}

const struct jaccl_failure *
jaccl_failure_line(const char *line, size_t len, bool *crash_mark)
{
	const char *end = line + len, *p;
	long e;

	if (crash_mark != NULL && find(line, len, "tbt_post_recv") != NULL)
		*crash_mark = true;
	if ((p = find(line, len, "[jaccl] Changing queue pair to RTR failed with errno ")) != NULL) {
		e = number_at(p + strlen("[jaccl] Changing queue pair to RTR failed with errno "), end);
		return e == 60 || e == 110 ? of(JF_RTR_UNREACHABLE) : e == 22 ? of(JF_RTR_GID) : NULL;
	}
	if ((p = find(line, len, "[jaccl] Creating the queue pair failed with '")) != NULL) {
		e = qp_errno(p, end);
		return e == 102 || e == 95 ? of(JF_QP_RC) : e == 16 ? of(JF_QP_BUSY) : NULL;
	}
	if (find(line, len, "[jaccl] Couldn't allocate protection domain") != NULL)
		return of(JF_PD_PORT_DOWN);
	if (find(line, len, "peer closed the side channel") != NULL ||
	    find(line, len, "[jaccl] Recv failed with errno=") != NULL ||
	    find(line, len, "[jaccl] Send failed with errno=") != NULL)
		return of(JF_PEER_GONE);
	return NULL;
}

const struct jaccl_failure *
jaccl_failure_signal(const char *signal, bool crash_mark)
{
	if (signal == NULL || strcmp(signal, "SEGV") != 0)
		return NULL;
	return crash_mark ? of(JF_TBT_CRASH) : &likely_crash;
}

const struct jaccl_failure *
jaccl_failure_better(const struct jaccl_failure *a, const struct jaccl_failure *b)
{
	if (a == NULL)
		return b;
	if (b == NULL)
		return a;
	return a->kind == JF_PEER_GONE && b->kind != JF_PEER_GONE ? b : a;
}
