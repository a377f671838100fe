/* SPDX-License-Identifier: MIT */
/*
 * Side channel ABI of the built-in JACCL runtime: the slow all-gather that
 * ranks use to exchange connection records before any data moves (JACCL's
 * TCP star, or a user's "all_gather_factory"). The built-in channels (tcp,
 * file, ssh) implement it, and so can a plugin: a shared object exporting
 * a `const struct jc_sidechan_ops jc_sidechan_plugin` whose abi_version is
 * JC_SIDECHAN_ABI_VERSION. This header is plain C with no dependency on
 * the rest of jaccl-config so that plugins can be built out of tree.
 */
#ifndef JC_SIDECHAN_H
#define JC_SIDECHAN_H

#include <stddef.h>
#include <stdint.h>

#define JC_SIDECHAN_ABI_VERSION 1
#define JC_SIDECHAN_SYMBOL "jc_sidechan_plugin"

struct jc_sidechan_ops {
	uint32_t abi_version;	/* JC_SIDECHAN_ABI_VERSION */
	const char *name;	/* "tcp", "file", ... */

	/*
	 * Join the channel as rank of size ranks. params is the channel's
	 * parameter string (tcp: the coordinator "ip:port"; file: a
	 * directory; may be "" but never NULL). Every later call must return
	 * within timeout seconds. On success sets *ctx and returns 0; on
	 * failure returns a negative errno value with a message in errbuf
	 * (NUL-terminated, at most errlen bytes) and *ctx is not to be used.
	 */
	int (*open)(void **ctx, int rank, int size, const char *params,
	    double timeout, char *errbuf, size_t errlen);

	/*
	 * Give n bytes of src, receive size * n bytes in dst: every rank's
	 * block in rank order (dst + r * n holds rank r's src). All ranks
	 * call it with the same n, in the same order. Returns 0, or a
	 * negative errno value with errbuf filled (-ETIMEDOUT when a rank did
	 * not answer within the timeout, -EPIPE when one left).
	 */
	int (*all_gather)(void *ctx, const void *src, size_t n, void *dst,
	    char *errbuf, size_t errlen);

	/* Wait until every rank has called it. Returns as all_gather. */
	int (*barrier)(void *ctx, char *errbuf, size_t errlen);

	/* Leave the channel and free ctx. ctx may be NULL. */
	void (*close)(void *ctx);
};

#endif
