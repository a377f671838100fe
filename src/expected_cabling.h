/* SPDX-License-Identifier: MIT */
/*
 * The expected cabling: a small readable JSON file that records the cables
 * of a cluster as they are (which receptacle and interface of which host is
 * cabled to which of another, the negotiated speed, and whether the link
 * goes through a dock), written by `configure --save-cabling FILE` and
 * compared with the live cabling by `doctor --expect FILE`, the way
 * ibnetdiscover's --diff compares a fabric with a saved one. Pure: the
 * reader parses a buffer, the writer returns a JSON tree or writes one file.
 *
 * Format (version 2, the one written; configure --save-cabling and
 * cabling_write() both write it):
 *   {"version": 2,
 *    "hosts": ["mac1", "mac2"],
 *    "cables": [{"a": "mac1", "a_port": "3", "a_iface": "en5",
 *                "b": "mac2", "b_port": "3", "b_iface": "en5",
 *                "gbps": 80, "via_dock": false}]}
 * The reader also takes version 1 files of either older form: this flat
 * one, and the nested one configure used to write ("hosts" as objects with
 * a "name", cable ends as {"host", "receptacle", "iface"}, a "rdma" key;
 * ssh targets count by host name).
 * a_port/b_port are receptacle numbers ("Thunderbolt N"), null when unknown;
 * a_iface/b_iface the interfaces, null when unknown (one of port and iface
 * is always given); gbps is 0 when the speed was not reported.
 */
#ifndef JC_CABLING_H
#define JC_CABLING_H

#include <jansson.h>

#include "graph.h"

/* The version written; the reader takes 1 to CABLING_VERSION. */
#define CABLING_VERSION 2

/*
 * The cabling a setup records in the state directory (configure
 * --auto-setup writes it there after a setup that succeeded), which doctor
 * compares with when --expect is not given.
 */
#define CABLING_STATE_FILE "cabling.json"

/* Files larger than this are refused. */
#define CABLING_MAX_SIZE ((size_t)4 << 20)

struct cabling_end {
	char *host;
	char *port;		/* receptacle "1".."6", or NULL */
	char *iface;		/* "en5", or NULL */
};

struct cabling_cable {
	struct cabling_end end[2];
	int gbps;		/* 0: unknown */
	bool via_dock;
};

struct cabling {
	char **hosts;
	size_t nhosts;
	struct cabling_cable *cables;
	size_t ncables;
};

/*
 * The cabling of g (hosts by graph_host_label order of g->hosts, cables in
 * g's order). Never fails; returns a new structure (free with
 * cabling_free()).
 */
struct cabling *cabling_from_graph(const struct graph *g);

/* The file's JSON document (new reference). */
json_t *cabling_to_json(const struct cabling *c);

/*
 * Write c to path, whole or not at all (jc_write_atomic()). Returns 0, or
 * negative with err naming path.
 */
int cabling_write(const char *path, const struct cabling *c, struct jc_err *err);

/*
 * What configure's --save-cabling calls: the cabling of g written to path.
 * Returns 0, or negative with err filled (as cabling_write()).
 */
int cabling_save(const char *path, const struct graph *g, struct jc_err *err);

/*
 * Parse len bytes of buf (need not be NUL-terminated), reported as name.
 * Strict: unknown keys, wrong types, names that are not plain words or
 * interface names, a cable with both ends on one host or naming a host that
 * "hosts" does not list are errors. Returns 0 with *out set (free with
 * cabling_free()), or negative with err filled ("NAME: cables[2].a_iface:
 * ...") and *out NULL.
 */
int cabling_parse(const char *buf, size_t len, const char *name, struct cabling **out,
    struct jc_err *err);

/* Read path (at most CABLING_MAX_SIZE bytes) and parse it as above. */
int cabling_load(const char *path, struct cabling **out, struct jc_err *err);

void cabling_free(struct cabling *c);

enum cabling_change {
	CABLING_MISSING,	/* an expected cable is not there */
	CABLING_MOVED,		/* the pair is still cabled, on other ports */
	CABLING_DOWNGRADED,	/* slower than expected, or now through a dock */
	CABLING_NEW,		/* a cable the file does not list */
	CABLING_HOST_GONE,	/* an expected host is not among those probed */
};

/* One difference; want/got index the cables of each side, -1 when none. */
struct cabling_delta {
	enum cabling_change kind;
	long want, got;
	char *host;		/* CABLING_HOST_GONE: the host, owned */
	char *msg;		/* one line, owned */
};

struct cabling_diff {
	struct cabling_delta *v;
	size_t n;
};

/*
 * Compare the live cabling got with the expected want. Ends are matched by
 * host and receptacle (by interface where a receptacle is unknown). A cable
 * of want with no identical one in got is "moved" when the same two hosts
 * have an unmatched cable in got (preferring one that keeps one end),
 * else "missing"; unmatched cables of got are "new". A matched cable whose
 * speed is lower, or that now goes through a dock, is "downgraded". Cables
 * of a host of want that got does not list are not reported one by one:
 * one CABLING_HOST_GONE names the host. Fills *d (free with
 * cabling_diff_free()); never fails.
 */
void cabling_diff(const struct cabling *want, const struct cabling *got, struct cabling_diff *d);

/* "missing", "moved", "downgraded", "new", "host-gone". */
const char *cabling_change_name(enum cabling_change k);

void cabling_diff_free(struct cabling_diff *d);

/* "mac1 Thunderbolt 3 (en5)", "mac1 en5": an end for messages. New string. */
char *cabling_end_label(const struct cabling_end *e);

#endif
