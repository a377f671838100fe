/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the reading of JACCL's failures (jaccl_failure.h): each
 * errno from a line formed exactly as JACCL's sources form it, with the
 * texts macOS's strerror gives; the forms themselves are found in MLX's
 * JACCL sources (the peer, when MLX_PEER points at it), so that a change
 * of wording there fails here; unknown errnos stay unknown; a closed side
 * channel gives way to a rank's own cause; SIGSEGV and tbt_post_recv.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "jaccl_failure.h"
#include "util.h"

static enum jaccl_failure_kind
kind(const char *line, bool *mark)
{
	const struct jaccl_failure *f = jaccl_failure_line(line, strlen(line), mark);

	return f ? f->kind : JF_NONE;
}

static void
test_lines(void)
{
	static const struct {
		const char *line;
		enum jaccl_failure_kind want;
	} v[] = {
		/* rdma.cpp, queue_pair_rtr(): "... to RTR failed with errno " << status */
		{ "[jaccl] Changing queue pair to RTR failed with errno 60", JF_RTR_UNREACHABLE },
		{ "[jaccl] Changing queue pair to RTR failed with errno 110", JF_RTR_UNREACHABLE },
		{ "[jaccl] Changing queue pair to RTR failed with errno 22", JF_RTR_GID },
		{ "[jaccl] Changing queue pair to RTR failed with errno 5", JF_NONE },
		{ "[jaccl] Changing queue pair to RTR failed with errno ", JF_NONE },
		{ "[jaccl] Changing queue pair to INIT failed with errno 22", JF_NONE },
		/* rdma.cpp, create_queue_pair(): "... with '" << message << " (" << errno << ")'." */
		{ "[jaccl] Creating the queue pair failed with 'Operation not supported on socket (102)'.",
		  JF_QP_RC },
		{ "[jaccl] Creating the queue pair failed with 'Operation not supported (95)'.", JF_QP_RC },
		{ "[jaccl] Creating the queue pair failed with 'Resource busy (16)'.", JF_QP_BUSY },
		{ "[jaccl] Creating the queue pair failed with 'Device or resource busy (16)'.",
		  JF_QP_BUSY },
		{ "[jaccl] Creating the queue pair failed with 'Cannot allocate memory (12)'.", JF_NONE },
		{ "[jaccl] Creating the queue pair failed with 'Resource busy 16'.", JF_NONE },
		/* rdma.cpp, allocate_protection_domain() */
		{ "[jaccl] Couldn't allocate protection domain", JF_PD_PORT_DOWN },
		/* what mlx.launch prints around it: the rank, Python's traceback */
		{ "[3] RuntimeError: [jaccl] Couldn't allocate protection domain\n", JF_PD_PORT_DOWN },
		/* tcp.cpp, TCPSocket::recv() and send() on the side channel */
		{ "RuntimeError: [jaccl] Recv failed with errno=2", JF_PEER_GONE },
		{ "[jaccl] Send failed with errno=32", JF_PEER_GONE },
		/* MLX #4530's wording */
		{ "[jaccl] peer closed the side channel (another rank failed during init or exited)",
		  JF_PEER_GONE },
		{ "[jaccl] Could not find device rdma_en9 (3 available)", JF_NONE },
		{ "", JF_NONE },
	};
	bool mark = false;

	for (size_t k = 0; k < JC_ARRAY_LEN(v); k++) {
		enum jaccl_failure_kind got = kind(v[k].line, &mark);

		int w = (int)strcspn(v[k].line, "\n");

		ok(got == v[k].want, "\"%.*s\": %d (want %d)", w > 70 ? 70 : w, v[k].line, (int)got,
		    (int)v[k].want);
	}
	ok(!mark, "none of them names tbt_post_recv");
	ok(kind("  frame #0: 0x1 libthunderboltrdma.dylib`tbt_post_recv + 92", &mark) == JF_NONE,
	    "a crash report's frame is no failure by itself");
	ok(mark, "but marks the rank");
	/* a line is read within its length only */
	ok(jaccl_failure_line("[jaccl] Couldn't allocate protection domain", 20, NULL) == NULL,
	    "a line cut before the message is not read past its length");
}

static void
test_rank(void)
{
	const char *peer = "[jaccl] Recv failed with errno=2";
	const char *own = "[jaccl] Creating the queue pair failed with 'Resource busy (16)'.";
	const struct jaccl_failure *a = jaccl_failure_line(peer, strlen(peer), NULL);
	const struct jaccl_failure *b = jaccl_failure_line(own, strlen(own), NULL);

	ok(jaccl_failure_better(a, b) == b && jaccl_failure_better(b, a) == b,
	    "a rank's own cause wins over a closed side channel, in either order");
	ok(jaccl_failure_better(NULL, a) == a && jaccl_failure_better(a, NULL) == a,
	    "one failure and none: that one");
	ok(b != NULL && strstr(b->cause, "at most 10 per device") && strstr(b->cause, "never transient") &&
	    strstr(b->fix, "qp-budget"), "EBUSY: the 10-QP limit, final; fix: the qp budget (%s)",
	    b ? b->fix : "");
	a = jaccl_failure_signal("SEGV", true);
	ok(a && a->kind == JF_TBT_CRASH && strstr(a->cause, "MLX #4192") &&
	    strncmp(a->cause, "the known crash", 15) == 0, "SIGSEGV with tbt_post_recv: the known crash");
	a = jaccl_failure_signal("SEGV", false);
	ok(a && strncmp(a->cause, "most likely", 11) == 0, "SIGSEGV alone: most likely that crash");
	ok(jaccl_failure_signal("KILL", true) == NULL && jaccl_failure_signal(NULL, false) == NULL,
	    "another signal: nothing known");
}

/* The forms read above are JACCL's own (MLX_PEER: MLX's code, see mk/jaccl.am). */
static void
test_sources(void)
{
	static const struct {
		const char *file, *text;
	} v[] = {
		{ "rdma.cpp", "\"[jaccl] Changing queue pair to RTR failed with errno \" << status" },
		{ "rdma.cpp", "msg << \"[jaccl] Creating the queue pair failed with '\" << error_message" },
		{ "rdma.cpp", "<< \" (\" << errno << \")'.\";" },
		{ "rdma.cpp", "\"[jaccl] Couldn't allocate protection domain\"" },
		{ "tcp.cpp", "msg << tag << \" Recv failed with errno=\" << errno;" },
		{ "tcp.cpp", "msg << tag << \" Send failed with errno=\" << errno;" },
		{ "rdma.h", "IBV_TAG = \"[jaccl]\";" },
		{ "rdma.cpp", "init_attr.qp_type = IBV_QPT_UC;" },
	};
	const char *peer = getenv("MLX_PEER");
	char *dir = peer && *peer ? xasprintf("%s/jaccl/jaccl", peer) : NULL, *path, *text;
	size_t len;

	path = dir ? xasprintf("%s/rdma.cpp", dir) : NULL;
	if (path == NULL || jc_read_file(path, 1 << 22, &text, &len, NULL) != 0) {
		for (size_t k = 0; k < JC_ARRAY_LEN(v); k++)
			ok(1, "# SKIP MLX's JACCL sources not found (MLX_PEER)");
		free(path);
		free(dir);
		return;
	}
	free(text);
	free(path);
	for (size_t k = 0; k < JC_ARRAY_LEN(v); k++) {
		path = xasprintf("%s/%s", dir, v[k].file);
		text = NULL;
		jc_read_file(path, 1 << 22, &text, &len, NULL);
		ok(text != NULL && strstr(text, v[k].text) != NULL, "JACCL's %s has %s", v[k].file,
		    v[k].text);
		free(text);
		free(path);
	}
	free(dir);
}

int
main(void)
{
	test_lines();
	test_rank();
	test_sources();
	return done_testing();
}
