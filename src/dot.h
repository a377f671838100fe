/* SPDX-License-Identifier: MIT */
/*
 * The cabling as Graphviz DOT. By default the text is byte for byte what
 * mlx.distributed_config --dot prints (node ids a, b, c..., one edge per
 * cable labelled "local/peer" from the lower host). With DOT_EXTENDED
 * (jaccl-config --dot --verbose) the graph is written by cgraph with extra
 * attributes that dot renders: link rate, dock, rails (cable k of a pair
 * drawn in colour k), cables RDMA cannot use (dashed), missing mesh links
 * (red, dotted), and peers that are not listed hosts or that do not see the
 * cable back (grey).
 */
#ifndef JC_DOT_H
#define JC_DOT_H

#include <stdio.h>

#include <cgraph.h>

#include "graph.h"

enum {
	DOT_EXTENDED = 1,	/* extra attributes; not mlx's bytes */
};

/*
 * Write the DOT text of g to fp. The default text is checked by reading it
 * back with cgraph (same node and edge counts) before it is written.
 * Returns 0, or a negative value with err filled (write error, or the
 * check failed).
 */
int dot_write(FILE *fp, const struct graph *g, unsigned flags, struct jc_err *err);

/*
 * The cgraph graph of g (extended attributes when extended). Returns a new
 * graph to be released with agclose(), or NULL with err filled.
 */
Agraph_t *dot_build(const struct graph *g, bool extended, struct jc_err *err);

/*
 * Parse DOT text with cgraph and count its nodes and edges. Returns 0, or
 * a negative value with err filled (cgraph's message) when it does not
 * parse. cgraph's own error printing is silenced during the call.
 */
int dot_check(const char *text, size_t *nnodes, size_t *nedges, struct jc_err *err);

#endif
