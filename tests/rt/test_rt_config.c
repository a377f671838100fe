/* SPDX-License-Identifier: MIT */
/* The runtime's configuration: JACCL's device file, validity and group choice. */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tap.h"
#include "rt_config.h"
#include "verify_rank.h"
#include "util.h"

static struct jc_err err;

static int
parse(struct rt_config *c, const char *json, int rank, bool ring)
{
	rt_config_clear(c);
	c->rank = rank;
	c->prefer_ring = ring;
	c->coordinator = xstrdup("10.0.0.1:32323");
	return rt_config_parse_devices(c, json, strlen(json), &err);
}

static const char *
select_msg(struct rt_config *c, enum rt_kind *kind, int *wires)
{
	memset(&err, 0, sizeof(err));
	if (rt_config_select(c, true, kind, wires, &err) == 0)
		return "ok";
	return err.msg;
}

int
main(void)
{
	struct rt_config c = { 0 };
	enum rt_kind kind = 0;
	int wires = 0, k;
	char path[] = "/tmp/rtcfgXXXXXX";
	int fd;

	/* device file shapes and JACCL's errors */
	ok(parse(&c, "{}", 0, false) < 0, "object rejected");
	is_str(err.msg, "The device file should start with an array", "start with an array");
	ok(parse(&c, "[1]", 0, false) < 0, "row not an array");
	is_str(err.msg, "The device file should have an array of arrays", "array of arrays");
	ok(parse(&c, "[[null, \"a\"], [\"a\"]]", 0, false) < 0, "short row");
	is_str(err.msg, "The device file should contain the connectivity of each rank "
	    "to all other ranks but rank 1 contains only 1 entries.", "short row message");
	ok(parse(&c, "[[null, \"a\", \"b\"], [\"a\", null]]", 0, false) < 0, "long row");
	is_str(err.msg, "The full connectivity matrix should be provided but we have "
	    "2 rows and row 0 has 3 columns.", "long row message");
	ok(parse(&c, "[[null, 3], [\"a\", null]]", 0, false) < 0, "number cell");
	is_str(err.msg, "Device names should be null, a string or array of strings.",
	    "cell type message");
	ok(parse(&c, "[[null, [\"a\", 1]], [\"a\", null]]", 0, false) < 0, "number in list");
	ok(parse(&c, "[[null, \"a;b\"], [\"a\", null]]", 0, false) < 0, "bad device name");
	ok(parse(&c, "[[null, \"rdma_en2\"", 0, false) < 0 && strstr(err.msg, "line 1"),
	    "invalid JSON names the line");

	/* a 3-rank mesh */
	ok(parse(&c, "[[null, \"rdma_en2\", \"rdma_en3\"], [\"rdma_en2\", null, "
	    "\"rdma_en3\"], [\"rdma_en2\", \"rdma_en3\", null]]", 1, false) == 0,
	    "3-rank mesh parsed");
	is_int(c.size, 3, "world size = rows");
	is_str(rt_config_cell(&c, 1, 2)->names[0], "rdma_en3", "cell [1][2]");
	ok(rt_config_valid_mesh(&c), "valid mesh");
	ok(rt_config_valid_ring(&c, &k) && k == 1, "a triangle is also a ring of 1");
	is_str(select_msg(&c, &kind, &wires), "ok", "selects");
	ok(kind == RT_MESH && wires == 1, "mesh chosen without ring preference");
	c.prefer_ring = true;
	select_msg(&c, &kind, &wires);
	ok(kind == RT_RING && wires == 1, "ring chosen with ring preference");
	c.rank = 3;
	ok(strstr(select_msg(&c, &kind, &wires), "rank 3 is out of range") != NULL,
	    "rank out of range");
	c.rank = 0;
	free(c.coordinator);
	c.coordinator = NULL;
	ok(strstr(select_msg(&c, &kind, &wires), "JACCL_COORDINATOR") &&
	    strstr(err.msg, "--side-channel"), "missing coordinator names both fixes");
	ok(rt_config_select(&c, false, &kind, &wires, &err) == 0,
	    "no coordinator needed with another side channel");

	/* 4-rank ring with two cables per neighbour, not a mesh */
	ok(parse(&c, "[[null, [\"rdma_en2\", \"rdma_en3\"], null, [\"rdma_en4\", \"rdma_en5\"]],"
	    "[[\"rdma_en2\", \"rdma_en3\"], null, [\"rdma_en4\", \"rdma_en5\"], null],"
	    "[null, [\"rdma_en2\", \"rdma_en3\"], null, [\"rdma_en4\", \"rdma_en5\"]],"
	    "[[\"rdma_en2\", \"rdma_en3\"], null, [\"rdma_en4\", \"rdma_en5\"], null]]",
	    2, false) == 0, "4-rank ring parsed");
	ok(!rt_config_valid_mesh(&c), "not a mesh");
	ok(rt_config_valid_ring(&c, &k) && k == 2, "ring of 2 wires");
	is_str(select_msg(&c, &kind, &wires), "ok", "ring selected without preference");
	ok(kind == RT_RING && wires == 2, "ring, 2 wires");

	/* uneven ring */
	ok(parse(&c, "[[null, [\"a\", \"b\"], \"c\"], [\"a\", null, \"b\"], [\"a\", \"b\", null]]",
	    0, true) == 0, "uneven ring parsed");
	ok(!rt_config_valid_ring(&c, &k), "uneven ring invalid");
	ok(rt_config_valid_mesh(&c), "but a mesh");
	select_msg(&c, &kind, &wires);
	ok(kind == RT_MESH, "falls back to the mesh despite the ring preference");

	/* all null: JACCL's k = 0 ring is rejected */
	ok(parse(&c, "[[null, null], [null, null]]", 0, false) == 0, "all-null parsed");
	ok(!rt_config_valid_ring(&c, &k), "k = 0 is not a ring");
	ok(strstr(select_msg(&c, &kind, &wires), "The configuration should define a "
	    "valid mesh or a valid ring.") != NULL, "JACCL's message");
	ok(strstr(err.msg, "no device is listed from rank 0 to rank 1") != NULL,
	    "names the missing cell");
	ok(parse(&c, "[[\"x\", \"a\"], [\"a\", null]]", 0, false) == 0 &&
	    !rt_config_valid_mesh(&c), "diagonal set: not a mesh");
	ok(parse(&c, "[[null]]", 0, false) == 0 &&
	    strstr(select_msg(&c, &kind, &wires), "at least 2 ranks"), "one rank");

	/* limits */
	{
		struct jc_buf b = { 0 };

		buf_puts(&b, "[");
		for (int r = 0; r < 9; r++) {
			buf_puts(&b, r ? ",[" : "[");
			for (int p = 0; p < 9; p++)
				buf_printf(&b, "%s%s", p ? "," : "", p == r ? "null" : "\"d\"");
			buf_puts(&b, "]");
		}
		buf_puts(&b, "]");
		ok(parse(&c, b.data, 0, false) == 0, "9-rank mesh parsed");
		is_str(select_msg(&c, &kind, &wires), "The JACCL mesh supports up to 8 "
		    "peers but 9 were provided.", "mesh limit");
		buf_free(&b);
	}
	ok(parse(&c, "[[null, [\"a\",\"b\",\"c\",\"d\",\"e\"]], [[\"a\",\"b\",\"c\",\"d\",\"e\"], null]]",
	    0, true) == 0, "5-wire ring parsed");
	is_str(select_msg(&c, &kind, &wires), "Up to 4 per direction supported but 5 "
	    "were provided.", "ring limit");

	/* from the environment's values */
	rt_config_clear(&c);
	ok(rt_config_from_values(&c, NULL, "x", NULL, NULL, &err) < 0 &&
	    strstr(err.msg, "(JACCL_RANK/MLX_RANK)"), "missing rank: JACCL's message");
	rt_config_clear(&c);
	ok(rt_config_from_values(&c, "x1", "x", NULL, NULL, &err) < 0 &&
	    strstr(err.msg, "not a number"), "garbage rank");
	rt_config_clear(&c);
	fd = mkstemp(path);
	ok(fd >= 0 && write(fd, "[[null, \"rdma_en2\"], [\"rdma_en2\", null]]", 40) == 40,
	    "device file written");
	close(fd);
	ok(rt_config_from_values(&c, "1", path, "127.0.0.1:5000", "0", &err) == 0,
	    "read from values");
	ok(c.rank == 1 && c.size == 2 && c.prefer_ring &&
	    strcmp(c.coordinator, "127.0.0.1:5000") == 0, "rank, size, ring flag (\"0\" counts)");
	rt_config_clear(&c);
	setenv("MLX_RANK", "1", 1);
	setenv("JACCL_RANK", "0", 1);
	setenv("MLX_IBV_DEVICES", path, 1);
	setenv("MLX_JACCL_COORDINATOR", "1.2.3.4:1", 1);
	unsetenv("JACCL_IBV_DEVICES");
	unsetenv("JACCL_COORDINATOR");
	unsetenv("JACCL_RING");
	unsetenv("MLX_JACCL_RING");
	ok(rt_config_from_env(&c, &err) == 0 && c.rank == 0 && !c.prefer_ring &&
	    strcmp(c.coordinator, "1.2.3.4:1") == 0, "JACCL_RANK wins over MLX_RANK");
	rt_config_clear(&c);
	ok(rt_config_from_values(&c, "0", "/nonexistent/devs.json", NULL, NULL, &err) < 0 &&
	    strstr(err.msg, "/nonexistent/devs.json"), "missing device file named");
	rt_config_clear(&c);
	unlink(path);

	/* --min-bw rates */
	{
		double v = 0;

		ok(rt_parse_rate("50Gb/s", &v) == 0 && v == 50e9 / 8, "50Gb/s");
		ok(rt_parse_rate("6GB/s", &v) == 0 && v == 6e9, "6GB/s");
		ok(rt_parse_rate("6.25GB/s", &v) == 0 && v == 6.25e9, "6.25GB/s");
		ok(rt_parse_rate("40 Gbps", &v) == 0 && v == 5e9, "40 Gbps");
		ok(rt_parse_rate("6", &v) < 0 && rt_parse_rate("GB/s", &v) < 0 &&
		    rt_parse_rate("-1GB/s", &v) < 0 && rt_parse_rate("6gb/s", &v) < 0 &&
		    rt_parse_rate("nanGB/s", &v) < 0, "rates without a unit or a number rejected");
	}
	return done_testing();
}
