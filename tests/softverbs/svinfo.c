/* SPDX-License-Identifier: MIT */
/*
 * svinfo: prints what a verbs library reports, in the spirit of
 * ibv_devinfo, for the softverbs tests: one "device NAME" line per device,
 * then its port state, MTU, LID, the non-zero GIDs, and whether a
 * protection domain can be allocated. Loads the library like the runtime
 * (svload.h). Usage: svinfo [-d DEVICE]. Exit 0, or 1 if the library or
 * the named device cannot be opened.
 */
#include "config.h"
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "svload.h"

static const char *
state_name(enum ibv_port_state s)
{
	switch (s) {
	case IBV_PORT_ACTIVE: return "PORT_ACTIVE";
	case IBV_PORT_DOWN: return "PORT_DOWN";
	case IBV_PORT_INIT: return "PORT_INIT";
	default: return "PORT_OTHER";
	}
}

static int
show(struct svl *s, struct ibv_device *dev)
{
	static const union ibv_gid zero;
	struct ibv_port_attr pa;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int i, r;

	printf("device %s\n", s->get_device_name(dev));
	if ((ctx = s->open_device(dev)) == NULL) {
		printf("open failed: %s\n", strerror(errno));
		return 1;
	}
	memset(&pa, 0, sizeof(pa));
	if ((r = s->query_port(ctx, 1, &pa)) != 0) {
		printf("query_port failed: %s\n", strerror(r));
	} else {
		printf("state %s\n", state_name(pa.state));
		printf("active_mtu %d\n", 128 << pa.active_mtu);
		printf("lid %u\n", pa.lid);
		printf("gid_tbl_len %d\n", pa.gid_tbl_len);
	}
	for (i = 0; i < pa.gid_tbl_len; i++) {
		union ibv_gid g;
		char txt[INET6_ADDRSTRLEN];

		if (s->query_gid(ctx, 1, i, &g) != 0 ||
		    memcmp(&g, &zero, sizeof(g)) == 0)
			continue;
		inet_ntop(AF_INET6, g.raw, txt, sizeof(txt));
		printf("gid %d %s\n", i, txt);
	}
	if ((pd = s->alloc_pd(ctx)) != NULL) {
		printf("pd ok\n");
		s->dealloc_pd(pd);
	} else {
		printf("pd failed\n");
	}
	s->close_device(ctx);
	return 0;
}

int
main(int argc, char **argv)
{
	struct ibv_device **list;
	struct svl s;
	const char *only = NULL;
	char err[512];
	int c, i, n = 0, st = 0, found = 0;

	while ((c = getopt(argc, argv, "d:")) != -1) {
		if (c != 'd') {
			fprintf(stderr, "usage: svinfo [-d device]\n");
			return 1;
		}
		only = optarg;
	}
	if (svl_open(&s, err, sizeof(err)) != 0) {
		fprintf(stderr, "svinfo: %s\n", err);
		return 1;
	}
	if ((list = s.get_device_list(&n)) == NULL) {
		fprintf(stderr, "svinfo: no device list: %s\n", strerror(errno));
		dlclose(s.handle);
		return 1;
	}
	printf("devices %d\n", n);
	for (i = 0; i < n; i++) {
		if (only != NULL && strcmp(only, s.get_device_name(list[i])) != 0)
			continue;
		found = 1;
		st |= show(&s, list[i]);
	}
	s.free_device_list(list);
	dlclose(s.handle);
	if (only != NULL && !found) {
		fprintf(stderr, "svinfo: no device %s\n", only);
		return 1;
	}
	return st;
}
