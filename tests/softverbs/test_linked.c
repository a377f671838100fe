/* SPDX-License-Identifier: MIT */
/*
 * The softverbs library linked like libibverbs (no dlopen), called through
 * the inline wrappers and macros of <infiniband/verbs.h> as any program
 * compiled against that header calls them: ibv_query_port (the
 * ___ibv_query_port inline), ibv_reg_mr with constant and variable access
 * flags (ibv_reg_mr or ibv_reg_mr_iova2), ibv_query_gid_ex and
 * ibv_query_gid_table. Uses the loopback interface; runs without root.
 */
#include "config.h"

#include <errno.h>
#include <infiniband/verbs.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"

int
main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr pa;
	struct ibv_gid_entry ge, table[8];
	struct ibv_pd *pd;
	struct ibv_mr *mr1, *mr2;
	int i, n = 0, access = argc + IBV_ACCESS_LOCAL_WRITE - 1;
	unsigned char *buf = malloc(8192);
	ssize_t k;

	(void)argv;
	(void)plan;
	(void)is_str;
	setenv("SOFTVERBS_IFACES", "lo", 1);
	list = ibv_get_device_list(&n);
	for (i = 0; list != NULL && i < n; i++)
		if (strcmp(ibv_get_device_name(list[i]), "rdma_lo") == 0)
			ctx = ibv_open_device(list[i]);
	if (list != NULL)
		ibv_free_device_list(list);
	if (ctx == NULL) {
		free(buf);
		skip_all("no rdma_lo device (loopback interface missing?)");
	}
	memset(&pa, 0xa5, sizeof(pa));
	ok(ibv_query_port(ctx, 1, &pa) == 0 && pa.gid_tbl_len == 4 &&
	    pa.port_cap_flags2 == 0, "inline ibv_query_port fills the struct "
	    "(and the newer fields stay zero)");
	if (pa.state != IBV_PORT_ACTIVE) {
		ibv_close_device(ctx);
		free(buf);
		skip_all("the loopback interface is down");
	}
	pd = ibv_alloc_pd(ctx);
	ok(pd != NULL, "alloc_pd");
	mr1 = ibv_reg_mr(pd, buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ok(mr1 != NULL && mr1->addr == buf && mr1->length == 4096,
	    "ibv_reg_mr with constant access flags");
	mr2 = ibv_reg_mr(pd, buf + 4096, 4096, access);
	ok(mr2 != NULL && mr2->addr == buf + 4096 && mr2->lkey != mr1->lkey,
	    "ibv_reg_mr with variable access flags (reg_mr_iova2)");
	ok(ibv_query_gid_ex(ctx, 1, 1, &ge, 0) == 0 && ge.gid_index == 1 &&
	    ge.gid.raw[10] == 0xff && ge.gid.raw[12] == 127,
	    "ibv_query_gid_ex(1) is ::ffff:127.0.0.1");
	is_int(ibv_query_gid_ex(ctx, 1, 2, &ge, 0), ENODATA,
	    "ibv_query_gid_ex on an empty entry: ENODATA");
	k = ibv_query_gid_table(ctx, table, 8, 0);
	ok(k == 2 && table[0].gid_index == 0 && table[1].gid_index == 1,
	    "ibv_query_gid_table lists GID 0 and 1");
	ok(ibv_dereg_mr(mr1) == 0 && ibv_dereg_mr(mr2) == 0 &&
	    ibv_dealloc_pd(pd) == 0 && ibv_close_device(ctx) == 0,
	    "teardown");
	free(buf);
	return done_testing();
}
