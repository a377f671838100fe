/* SPDX-License-Identifier: MIT */
/*
 * Writing the hostfile mlx.launch reads: build a struct jc_hostfile for the
 * chosen backend exactly as mlx.distributed_config does, turn it into a
 * jansson tree, and serialise that tree byte for byte as Python's
 * json.dump(obj, f, indent=4) (ensure_ascii, "," at line ends, ": " after
 * keys, "[]" for empty lists), which jansson's own dumper does not match.
 */
#ifndef JC_HOSTFILE_WRITE_H
#define JC_HOSTFILE_WRITE_H

#include <stdio.h>

#include <jansson.h>

#include "graph.h"
#include "plan.h"

/* Inputs of the hostfile besides the graph. */
struct hostfile_write_in {
	const char *const *envs;	/* --env values, copied verbatim */
	size_t nenvs;
	/*
	 * The hostfile given with --hostfile, or NULL. A host whose ssh string
	 * matches one of its hosts keeps that host's ips in front ("existing
	 * ips"); without it a host named by an IP literal starts with that IP.
	 */
	const struct jc_hostfile *input;
};

/*
 * The management address of host h: h->mgmt_ip when set, else the IPv4 of
 * en0, else of en1, else of another interface that is neither a cable
 * interface, a Thunderbolt port, a bridge nor loopback. Borrowed; NULL when
 * there is none (mlx warns "Could not extract ip for HOST").
 */
const char *hostfile_write_mgmt_ip(const struct jc_host *h, const struct graph *g, size_t i);

/*
 * Build the hostfile of choice c (§2.9): jaccl (host order, management ips,
 * rdma[j] = device of the first RDMA-usable cable to j), jaccl-ring (ring
 * order, neighbour cells only: a string when width is 1, else a list of
 * width devices in cable order), ring (ring order, the addresses facing the
 * left neighbour, rdma []). p supplies the cable addresses (ring backend).
 * Hosts without a management address are named in *warnings (may be NULL).
 * Returns 0 with *out set (free with jc_hostfile_free) or a negative value
 * with err filled.
 */
int hostfile_write_build(const struct graph *g, const struct graph_choice *c,
    const struct plan *p, const struct hostfile_write_in *in, struct jc_hostfile **out,
    struct jc_strv *warnings, struct jc_err *err);

/*
 * The --over ethernet hostfile: backend "", input order, management ips,
 * rdma []. g may be NULL (then no interface is excluded as a cable one).
 */
int hostfile_write_ethernet(const struct jc_host *hosts, size_t n, const struct graph *g,
    const struct hostfile_write_in *in, struct jc_hostfile **out, struct jc_strv *warnings,
    struct jc_err *err);

/*
 * The jansson tree of hf in mlx's key order (backend, envs, hosts; ssh,
 * ips, rdma). Returns a new reference, or NULL with err filled when a
 * string is not valid UTF-8.
 */
json_t *hostfile_write_to_json(const struct jc_hostfile *hf, struct jc_err *err);

/*
 * Serialise any jansson tree as Python's json.dumps(obj, indent=4) into
 * fp, no trailing newline. Returns 0, or -EIO when writing fails.
 */
int hostfile_write_dump_json(FILE *fp, const json_t *j);

/* The same bytes as a new string. */
char *hostfile_write_dump_text(const json_t *j);

/*
 * The file form (json.dump(..., indent=4): no trailing newline) as a new
 * string, or NULL with err filled.
 */
char *hostfile_write_text(const struct jc_hostfile *hf, struct jc_err *err);

/*
 * The file form (json.dump(..., indent=4): no trailing newline). Returns
 * 0, or a negative value with err filled.
 */
int hostfile_write_file(FILE *fp, const struct jc_hostfile *hf, struct jc_err *err);

/*
 * The standard output form: "Hostfile", "========", the JSON, a newline.
 * Returns 0, or a negative value with err filled.
 */
int hostfile_write_stdout(FILE *fp, const struct jc_hostfile *hf, struct jc_err *err);

#endif
