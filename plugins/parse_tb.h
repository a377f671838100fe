/* SPDX-License-Identifier: MIT */
/*
 * Parsers for `system_profiler SPThunderboltDataType` in its three forms
 * (-json, -xml plist, plain text). All three give the same list of
 * struct jc_port: one per Thunderbolt bus, sorted by numeric receptacle
 * (source order where a bus has none), with the peer Mac found depth first
 * through docks and hubs. They are pure and never print.
 */
#ifndef JC_PARSE_TB_H
#define JC_PARSE_TB_H

#include <jansson.h>

#include "util.h"

/* Largest system_profiler output accepted (bytes). */
#define PARSE_TB_MAX (8u * 1024 * 1024)

/* XDomain service protocol id of RDMA over Thunderbolt. */
#define PARSE_TB_RDMA_PROTOCOL 64087

/*
 * Parse one output. On success returns 0 and sets *ports to a new array of
 * *n ports (free with parse_tb_free; *ports may be NULL when n is 0). On
 * garbage (not JSON / not a plist / no Thunderbolt data) returns a negative
 * value with err filled; *ports is then NULL. Names that will reach a shell
 * command are not taken from this output, so nothing is validated here
 * beyond shape; notes (may be NULL) receives remarks on odd entries.
 */
int parse_tb_json(const char *data, size_t len, struct jc_port **ports, size_t *n,
    struct jc_strv *notes, struct jc_err *err);
int parse_tb_xml(const char *data, size_t len, struct jc_port **ports, size_t *n,
    struct jc_strv *notes, struct jc_err *err);
int parse_tb_text(const char *data, size_t len, struct jc_port **ports, size_t *n,
    struct jc_strv *notes, struct jc_err *err);

/*
 * The same, from an already decoded document: either the whole
 * {"SPThunderboltDataType": [...]} object, the plist's top array of data
 * type dicts, or the bare array of buses. Borrowed reference.
 */
int parse_tb_doc(const json_t *doc, struct jc_port **ports, size_t *n,
    struct jc_strv *notes, struct jc_err *err);

/*
 * Convert an Apple XML property list to a jansson value (dict -> object,
 * array -> array, string/date/data -> string, integer, real, true/false).
 * No network, no DTD loading, no entity expansion; a document with a DOCTYPE
 * that declares entities is rejected. Returns a new reference or NULL with
 * err filled.
 */
json_t *parse_plist_xml(const char *data, size_t len, struct jc_err *err);

/*
 * Pair the ports whose peer Mac reported no domain UUID (port.peer_no_id)
 * across hosts[0..n): port a of one host and port b of another are paired
 * when each sees the other (by UUID, or by describing the other's host:
 * its model when both are known, else its name as its buses report it),
 * at the same known link rate, and each is the only port that fits the
 * other. Then peer_id is set to the other's id and peer_inferred marks it,
 * with a note on each host. Never guesses between two candidates. Returns
 * the number of cables paired.
 */
size_t parse_tb_infer_peers(struct jc_host *hosts, size_t n);

/* Free an array of ports as returned above (NULL is fine). */
void parse_tb_free(struct jc_port *ports, size_t n);

/* Release one port's strings (not the port itself); used by other modules. */
void parse_tb_port_clear(struct jc_port *p);

/*
 * True when s is a negotiated link rate: a number followed by "Gb/s"
 * ("80 Gb/s", "40 Gb/s", "20 Gb/s x2"); false for capabilities ("Up to 120
 * Gb/s") and anything else. Stores the rate in *gbps when true.
 */
bool parse_tb_link_rate(const char *s, int *gbps);

#endif
