/* SPDX-License-Identifier: MIT */
/*
 * What changed between two looks at the cabling: a snapshot holds, per
 * cable, both ends (host, interface, carrier, first IPv4 address, RDMA
 * port state) and the link rate; the diff of two snapshots is a list of
 * events. A cable is the same cable when both ends are the same ports. A
 * cable that disappears while a new one appears with one end on the same
 * port, or between the same two hosts, was moved ("replugged elsewhere").
 * Pure: no I/O, no clock (the caller stamps the events).
 */
#ifndef JC_WATCH_H
#define JC_WATCH_H

#include <jansson.h>

#include "graph.h"

struct watch_end {
	char *host;
	char *iface;
	int carrier;			/* enum jc_tri */
	char *addr;			/* first IPv4 address, or NULL */
	enum jc_port_state rdma;	/* JC_PORT_UNKNOWN when not captured */
};

struct watch_cable {
	struct watch_end end[2];
	int gbps;			/* 0 when unknown */
};

struct watch_snapshot {
	struct watch_cable *cables;
	size_t n;
};

enum watch_kind {
	WATCH_PLUGGED,		/* a new cable */
	WATCH_UNPLUGGED,	/* a cable gone */
	WATCH_MOVED,		/* gone from old ports, back on others */
	WATCH_SPEED,		/* link rate changed (e.g. 80 -> 40 Gb/s) */
	WATCH_CARRIER,		/* an end's carrier changed */
	WATCH_RDMA,		/* an end's RDMA port state changed */
	WATCH_ADDRESS,		/* an end's address lost, gained or changed */
};

struct watch_event {
	enum watch_kind kind;
	const struct watch_cable *before;	/* NULL for PLUGGED */
	const struct watch_cable *after;	/* NULL for UNPLUGGED */
	int end;		/* the end concerned (CARRIER, RDMA, ADDRESS), else -1 */
};

/* The snapshot of g's cables (g and its hosts are only read). */
void watch_snapshot_build(const struct graph *g, struct watch_snapshot *out);

void watch_snapshot_free(struct watch_snapshot *s);

/*
 * Events that turn before into after, in a stable order (moves and
 * unplugs in before's cable order, then plugs, then per-cable changes in
 * after's order). *ev is a new array (free() it) of *nev events whose
 * cables point into the two snapshots.
 */
void watch_diff(const struct watch_snapshot *before, const struct watch_snapshot *after,
    struct watch_event **ev, size_t *nev);

/* "unplugged", "moved", ... (static). */
const char *watch_kind_name(enum watch_kind k);

/* One line for a terminal, without time (new string). */
char *watch_event_text(const struct watch_event *e);

/* The event as a JSON object: {"event", "cable": {...}, "before"/"after", ...}. */
json_t *watch_event_json(const struct watch_event *e);

/* The cables of a snapshot as a JSON array of cable objects (as in events). */
json_t *watch_snapshot_json(const struct watch_snapshot *s);

/* One line per cable of s for a terminal (new string, "" when none). */
char *watch_snapshot_text(const struct watch_snapshot *s);

/*
 * Whether g is a view caught in the middle of a change: hosts are probed
 * one by one, so a cable just moved may be seen from one end only (a port
 * naming a peer port that does not name it back). Returns NULL when every
 * port of a listed host that names a listed peer is named back, else a key
 * listing those one-sided ports (new string): a caller diffs such a view
 * only once the same key has come in enough looks in a row that every
 * host has been looked at again since (a one-sided cable that stays is
 * real; one that goes away was a change half seen).
 */
char *watch_unsettled_key(const struct graph *g);

#endif
