/* SPDX-License-Identifier: MIT */
/*
 * What JACCL's failures mean. JACCL reports a failure of the verbs device
 * or of the side channel with a message whose form is fixed by its sources
 * (MLX's mlx/distributed/jaccl: rdma.cpp, tcp.cpp) and, for some, an errno
 * whose meaning on Apple's Thunderbolt RDMA is known from the field (MLX
 * #4530 and the issues it cites). jaccl_failure_line() reads one line of a
 * rank's output and names the cause and the fix; jaccl_failure_signal()
 * does the same for a rank that a signal ended. Pure: no output.
 */
#ifndef JC_JACCL_FAILURE_H
#define JC_JACCL_FAILURE_H

#include <stdbool.h>
#include <stddef.h>

enum jaccl_failure_kind {
	JF_NONE = 0,
	JF_PEER_GONE,		/* the side channel closed: another rank died (a consequence) */
	JF_RTR_UNREACHABLE,	/* RTR errno 60 (ETIMEDOUT) */
	JF_RTR_GID,		/* RTR errno 22 (EINVAL) */
	JF_QP_RC,		/* ibv_create_qp errno 102 (EOPNOTSUPP on macOS) */
	JF_QP_BUSY,		/* ibv_create_qp errno 16 (EBUSY): the 11th QP */
	JF_PD_PORT_DOWN,	/* ibv_alloc_pd gave NULL: the port is down */
	JF_TBT_CRASH,		/* SIGSEGV in tbt_post_recv (MLX #4192) */
};

struct jaccl_failure {
	enum jaccl_failure_kind kind;
	const char *what;	/* "ibv_create_qp errno 16 (EBUSY)" */
	const char *cause;
	const char *fix;
};

/*
 * The failure that one line of a rank's output (len bytes, no need of a
 * NUL) reports, or NULL when it is none of the known ones. *crash_mark is
 * set when the line names tbt_post_recv (a crash report's frame).
 */
const struct jaccl_failure *jaccl_failure_line(const char *line, size_t len,
    bool *crash_mark);

/*
 * A rank ended by signal ("SEGV", as SSH names it) under a JACCL backend:
 * SIGSEGV is MLX #4192's driver crash, certain when the rank's output named
 * tbt_post_recv (crash_mark), else the likely cause. NULL for other signals.
 */
const struct jaccl_failure *jaccl_failure_signal(const char *signal, bool crash_mark);

/*
 * Of two failures seen in one rank's output, the one that says more: a
 * cause of the rank's own over a closed side channel (another rank's).
 */
const struct jaccl_failure *jaccl_failure_better(const struct jaccl_failure *a,
    const struct jaccl_failure *b);

#endif
