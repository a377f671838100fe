/* SPDX-License-Identifier: MIT */
/*
 * The side channels of the runtime: the built-in ones (tcp, file, ssh),
 * plugins loaded from a shared object, and one handle over all of them.
 * A spec names a channel: "tcp" (the coordinator from the environment),
 * "tcp=IP:PORT", "file=DIR", "ssh" (frames on stdin/stdout),
 * "ssh=INFD,OUTFD", or a path to a plugin ending in ".so" or ".dylib",
 * optionally followed by "=PARAMS".
 */
#ifndef JC_RT_SC_H
#define JC_RT_SC_H

#include "jc.h"
#include "sidechan.h"

extern const struct jc_sidechan_ops rt_sc_tcp_ops;
extern const struct jc_sidechan_ops rt_sc_file_ops;
extern const struct jc_sidechan_ops rt_sc_ssh_ops;

/* The tcp channel calls this with JACCL's connection attempt messages (NULL: silent). */
extern void (*rt_sc_tcp_log)(const char *msg);

struct rt_sc {
	const struct jc_sidechan_ops *ops;
	void *ctx;
	void *dl;		/* plugin handle, or NULL */
	int rank, size;
	char *name;		/* for messages */
};

/* True when spec (NULL: tcp) needs the coordinator of the environment. */
bool rt_sc_needs_coordinator(const char *spec);

/*
 * Open the side channel named by spec (NULL: "tcp") as rank of size;
 * coordinator is used by "tcp" without parameters. Loads plugins with
 * dlopen and checks their ABI version. Returns 0 and a new handle in *out,
 * or a negative errno value with err filled and *out NULL.
 */
int rt_sc_open(struct rt_sc **out, const char *spec, const char *coordinator,
    int rank, int size, double timeout, struct jc_err *err);

/* All-gather of n bytes (see struct jc_sidechan_ops); 0 or -errno with err filled. */
int rt_sc_all_gather(struct rt_sc *sc, const void *src, size_t n, void *dst,
    struct jc_err *err);
int rt_sc_barrier(struct rt_sc *sc, struct jc_err *err);

/* Close and free; sc may be NULL. */
void rt_sc_close(struct rt_sc *sc);

#endif
