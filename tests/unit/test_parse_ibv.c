/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the ibv_devices / ibv_devinfo parsers: TABs or spaces,
 * with and without indentation, unsorted lists, header only, elisions,
 * fields run together, "No IB devices found", unsafe names and garbage.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "parse_ibv.h"
#include "../tap.h"

static int
devs(const char *s, struct jc_rdma_dev **d, size_t *n, struct jc_strv *notes, struct jc_err *e)
{
	return parse_ibv_devices(s, strlen(s), d, n, notes, e);
}

static int
info(const char *s, struct jc_rdma_dev **d, size_t *n, struct jc_err *e)
{
	return parse_ibv_devinfo(s, strlen(s), d, n, NULL, e);
}

static void
test_devices(void)
{
	struct jc_rdma_dev *d;
	size_t n;
	struct jc_err e;
	struct jc_strv notes = { 0 };

	ok(devs("    device          \t   node GUID\n"
	    "    ------          \t----------------\n"
	    "    rdma_en1        \t0000000000000001\n"
	    "    rdma_en6        \t0000000000000002\n"
	    "    rdma_en2        \t0000000000000003\n", &d, &n, NULL, &e) == 0 && n == 3,
	    "rdma-core layout: 3 devices");
	if (n == 3) {
		is_str(d[0].name, "rdma_en1", "listed order kept (1)");
		is_str(d[1].name, "rdma_en6", "listed order kept (6)");
		is_str(d[2].name, "rdma_en2", "listed order kept (2)");
		is_str(d[1].netdev, "en6", "netdev without rdma_");
		is_str(d[1].guid, "0000000000000002", "guid");
		is_int(d[0].state, JC_PORT_UNKNOWN, "state unknown from ibv_devices");
	}
	parse_rdma_free(d, n);
	ok(devs("device\t   node GUID\n------\t----------------\nrdma_en2\t8096a9d9edbaac05\n",
	    &d, &n, NULL, &e) == 0 && n == 1, "no indentation");
	parse_rdma_free(d, n);
	ok(devs("   device node GUID\n  ------ ----\n\n  mlx5_0   0c42a1030065c8e4  \n", &d, &n,
	    NULL, &e) == 0 && n == 1 && strcmp(d[0].netdev, "mlx5_0") == 0,
	    "odd spacing, other driver name kept as netdev");
	parse_rdma_free(d, n);
	ok(devs("    device          \t   node GUID\n    ------          \t----------------\n",
	    &d, &n, NULL, &e) == 0 && n == 0, "header only: 0 devices");
	ok(devs("", &d, &n, NULL, &e) == 0 && n == 0, "empty: 0 devices");
	ok(devs("device node GUID\n------ ------\nrdma_en2 0011\n$(reboot) 0012\nen;x 0013\n",
	    &d, &n, &notes, &e) == 0 && n == 1, "unsafe names skipped");
	ok(notes.n >= 1, "with a note");
	parse_rdma_free(d, n);
	strv_free(&notes);
	ok(devs("Segmentation fault\nsomething else entirely here\n", &d, &n, NULL, &e) < 0,
	    "garbage: error");
	ok(devs("device node GUID\n------ ------\n...\nrdma_en2 0011\n", &d, &n, NULL, &e) == 0 &&
	    n == 1, "elision line ignored");
	parse_rdma_free(d, n);
}

static void
test_devinfo(void)
{
	struct jc_rdma_dev *d;
	size_t n;
	struct jc_err e;

	ok(info("hca_id:\trdma_en1\n\ttransport:\t\t\tThunderbolt (100)\n"
	    "\tnode_guid:\t\t\t0000:0000:0000:0002\n\tphys_port_cnt:\t\t\t1\n"
	    "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tlink_layer:\t\tThunderbolt\n\n"
	    "hca_id:\trdma_en6\n\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n",
	    &d, &n, &e) == 0 && n == 2, "two devices");
	if (n == 2) {
		is_int(d[0].state, JC_PORT_DOWN, "PORT_DOWN");
		is_int(d[1].state, JC_PORT_ACTIVE, "PORT_ACTIVE");
		is_str(d[0].guid, "0000:0000:0000:0002", "node_guid");
	}
	parse_rdma_free(d, n);
	ok(info("hca_id:    rdma_en2 transport:            Thunderbolt (100) node_guid:\n"
	    "9093:3a23:2588:ac05 ... port:    1 state:            PORT_ACTIVE (4)\n...\n"
	    "            GID[  0]:        fe80::344d:4ff:feea:4e40\n", &d, &n, &e) == 0 && n == 1 &&
	    d[0].state == JC_PORT_ACTIVE, "fields run together on one line");
	parse_rdma_free(d, n);
	ok(info("No IB devices found\n", &d, &n, &e) == 0 && n == 0, "No IB devices found");
	ok(info("", &d, &n, &e) == 0 && n == 0, "empty output: 0 devices");
	ok(info("hca_id: x\n port: 1\n  state: PORT_INIT (2)\n port: 2\n  state: PORT_ACTIVE (4)\n",
	    &d, &n, &e) == 0 && n == 1 && d[0].state == JC_PORT_INIT, "first port's state");
	parse_rdma_free(d, n);
	ok(info("hca_id: a;b\n port: 1\n state: PORT_ACTIVE (4)\nhca_id: ok1\n", &d, &n, &e) == 0 &&
	    n == 1 && strcmp(d[0].name, "ok1") == 0 && d[0].state == JC_PORT_UNKNOWN,
	    "unsafe hca skipped, its state not given to the next");
	parse_rdma_free(d, n);
	ok(info("this is not devinfo\n", &d, &n, &e) < 0, "garbage: error");
	ok(info("hca_id:", &d, &n, &e) < 0, "truncated: error");
}

static void
test_states(void)
{
	is_int(parse_ibv_state("PORT_ACTIVE (4)"), JC_PORT_ACTIVE, "PORT_ACTIVE (4)");
	is_int(parse_ibv_state("4: ACTIVE"), JC_PORT_ACTIVE, "sysfs 4: ACTIVE");
	is_int(parse_ibv_state("1: DOWN\n"), JC_PORT_DOWN, "sysfs 1: DOWN");
	is_int(parse_ibv_state("PORT_ARMED"), JC_PORT_ARMED, "PORT_ARMED");
	is_int(parse_ibv_state("PORT_INITX"), JC_PORT_UNKNOWN, "near miss unknown");
	is_int(parse_ibv_state(NULL), JC_PORT_UNKNOWN, "NULL unknown");
	is_str(parse_ibv_state_name(JC_PORT_DOWN), "PORT_DOWN", "name of DOWN");
	ok(parse_ibv_state_name(JC_PORT_UNKNOWN) == NULL, "no name for unknown");
}

int
main(void)
{
	(void)plan;
	(void)skip_all;
	test_devices();
	test_devinfo();
	test_states();
	return done_testing();
}
