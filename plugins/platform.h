/* SPDX-License-Identifier: MIT */
/*
 * Platform backends: how to discover one host of a given OS. A backend
 * names the commands of its probe (run in one remote script, one round trip
 * per host) and parses their raw outputs into a struct jc_host. Parsing is
 * pure: it reads a struct jc_raw and never runs anything, so a saved probe
 * bundle replays exactly like a live probe.
 */
#ifndef JC_PLATFORM_H
#define JC_PLATFORM_H

#include "jc.h"

/* One raw output of a probe command, as saved in a bundle. */
struct jc_raw_out {
	char *name;		/* bundle file name: "ibv_devices.txt" */
	char *data;		/* NUL-terminated (data[len] == 0) */
	size_t len;
	int status;		/* exit status, -1 when unknown (no manifest) */
};

/* Every raw output of one host. */
struct jc_raw {
	char *host;
	struct jc_raw_out *outs;
	size_t n;
};

/* Borrowed; NULL when the output was not captured. */
const struct jc_raw_out *raw_get(const struct jc_raw *raw, const char *name);
void raw_add(struct jc_raw *raw, const char *name, const char *data, size_t len, int status);
void raw_clear(struct jc_raw *raw);

/* A command of the probe: the bundle file its output goes to, and sh text. */
struct jc_probe_cmd {
	const char *name;
	const char *sh;
};

struct jc_platform_ops {
	const char *name;		/* "macos", "linux" */
	const char *uname;		/* what uname -s prints: "Darwin", "Linux" */
	const struct jc_probe_cmd *cmds;	/* terminated by { NULL, NULL } */
	/*
	 * Fill h (whose name/target are already set) from raw. A missing output
	 * leaves what depends on it unknown and adds a note; never fails for
	 * that. Returns a negative value with err filled only when an output
	 * that is present cannot be understood at all (garbage).
	 */
	int (*parse)(struct jc_host *h, const struct jc_raw *raw, struct jc_err *err);
};

extern const struct jc_platform_ops jc_platform_macos;
extern const struct jc_platform_ops jc_platform_linux;

/*
 * The backend for a host's outputs: by "uname.txt" when it names a system
 * (NULL for one no backend knows), else by which files exist
 * (system_profiler, networksetup, sw_vers, rdma_ctl, then ibv_* or ifconfig
 * mean macOS; ip-* or os-release mean Linux). NULL if nothing tells.
 */
const struct jc_platform_ops *platform_for_raw(const struct jc_raw *raw);

/* The backend named "macos" / "linux", or NULL. */
const struct jc_platform_ops *platform_by_name(const char *name);

/* Append a note (printf-style) to h->notes; used by the backends. */
void platform_note(struct jc_host *h, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Largest raw output a backend accepts (bytes); a larger one is an error. */
#define PLATFORM_MAX_OUTPUT (8u * 1024 * 1024)

#endif
