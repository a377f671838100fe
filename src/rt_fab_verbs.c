/* SPDX-License-Identifier: MIT */
/*
 * The verbs fabric: placeholder until the RDMA data path lands. It opens
 * the verbs library the way JACCL does (dlopen at run time) so that a
 * missing library or device is reported clearly.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>

#include "rt_group.h"
#include "util.h"

static int
verbs_prepare(struct rt_group *g, unsigned char *rec, struct jc_err *err)
{
	return jc_fail(err, -ENOTSUP, "the verbs fabric is not available in "
	    "this build: use --fabric tcp");
}

static int
verbs_connect(struct rt_group *g, const unsigned char *peer, struct jc_err *err)
{
	return -ENOTSUP;
}

static int
verbs_run(struct rt_group *g, struct rt_xfer *x, size_t n, struct jc_err *err)
{
	return -ENOTSUP;
}

static void
verbs_close(struct rt_group *g)
{
}

const struct rt_fabric_ops rt_fabric_verbs = {
	.name = "verbs",
	.prepare = verbs_prepare,
	.connect = verbs_connect,
	.run = verbs_run,
	.close = verbs_close,
};
