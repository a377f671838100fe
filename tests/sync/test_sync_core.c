/* SPDX-License-Identifier: MIT */
/*
 * sync's pure parts: the hashes against published values, the path and
 * link rules, a tree scanned from a folder made here (with a link out of
 * it refused), what counts as the same file, frames encoded and decoded,
 * the routes of a ring, a mesh, a doubled pair and a ring that lost a
 * host or a cable, with the expected time from given rates, and the part
 * the source's next chunk takes.
 */
#include "config.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* the library's own XXH3, not through the dispatch sync uses (src/xxh.h) */
#include <xxhash.h>

#include "sync_core.h"
#include "util.h"
#include "../tap.h"

static void
write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd >= 0) {
		(void)!write(fd, text, strlen(text));
		close(fd);
	}
}

static void
test_hashes(void)
{
	char hx[33], sha[65];
	struct sync_hash h = sync_hash_buf("", 0), back;
	char tmpl[] = "/tmp/jc-sync-hash.XXXXXX";
	int fd = mkstemp(tmpl);

	/* XXH3-128 of nothing, as xxHash's own test vectors give it */
	sync_hash_hex(h, hx);
	ok(strcmp(hx, "99aa06d3014798d86001c324468d497f") == 0, "XXH3-128 of '' (%s)", hx);
	ok(sync_hash_parse(hx, &back) && sync_hash_eq(back, h), "hex and back");
	ok(!sync_hash_parse("99aa06d3014798d86001c324468d497", &back) &&
	    !sync_hash_parse("99AA06d3014798d86001c324468d497f", &back), "31 digits, upper case refused");
	/* FIPS 180-2's example: SHA-256("abc") */
	(void)!write(fd, "abc", 3);
	ok(sync_sha256_fd(fd, sha) == 0 &&
	    strcmp(sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0,
	    "SHA-256 of 'abc' (%s)", sha);
	/* 1000 bytes: several blocks, and the file hash equals the buffer's */
	{
		char buf[1000];
		struct sync_hash a, b;

		for (int i = 0; i < 1000; i++)
			buf[i] = (char)('a' + i % 26);
		(void)!ftruncate(fd, 0);
		(void)!pwrite(fd, buf, sizeof(buf), 0);
		a = sync_hash_buf(buf, sizeof(buf));
		ok(sync_hash_fd(fd, &b) == 0 && sync_hash_eq(a, b), "XXH3-128 of a file = of its bytes");
	}
	/*
	 * 3 MiB and a tail: the long path, where a dispatch picks a vector
	 * unit; sync's hash of the buffer and of the file read a MiB at a time
	 * are the library's plain XXH3-128 of it
	 */
	{
		size_t n = (3u << 20) + 17;
		unsigned char *buf = malloc(n);
		uint32_t x = 2463534242u;
		XXH128_hash_t ref;
		struct sync_hash a, b;

		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			buf[i] = (unsigned char)x;
		}
		ref = XXH3_128bits(buf, n);
		a = sync_hash_buf(buf, n);
		(void)!ftruncate(fd, 0);
		(void)!pwrite(fd, buf, n, 0);
		ok(a.hi == ref.high64 && a.lo == ref.low64,
		    "XXH3-128 of 3 MiB = the library's plain one");
		ok(sync_hash_fd(fd, &b) == 0 && sync_hash_eq(a, b),
		    "and of the file read by MiB");
		free(buf);
	}
	close(fd);
	unlink(tmpl);
}

static void
test_paths(void)
{
	ok(sync_path_ok("a") && sync_path_ok("a/b.safetensors") && sync_path_ok(".hidden/x"),
	    "plain relative paths");
	ok(!sync_path_ok("") && !sync_path_ok("/etc/passwd") && !sync_path_ok("../x") &&
	    !sync_path_ok("a/../../x") && !sync_path_ok("a//b") && !sync_path_ok("a/./b") &&
	    !sync_path_ok("a/") && !sync_path_ok("a\nb") && !sync_path_ok(".."),
	    "absolute, '..', empty components, newlines refused");
	ok(!sync_path_ok("d/.x" SYNC_PART_SUFFIX) && !sync_path_ok(".x" SYNC_MAP_SUFFIX),
	    "sync's temporary names refused");
	ok(sync_link_ok("snapshots/abc/config.json", "../../blobs/0123"),
	    "Hugging Face's snapshot link stays inside");
	ok(!sync_link_ok("snapshots/abc/config.json", "../../../blobs/0123") &&
	    !sync_link_ok("x", "../x") && !sync_link_ok("x", "/etc/passwd") &&
	    !sync_link_ok("a/b", "c/../../../d"), "links climbing out of the tree refused");
	ok(sync_link_ok("a/b", "c/../../d") && sync_link_ok("x", "."), "links that come back stay");
}

static void
test_tree(void)
{
	char tmpl[] = "/tmp/jc-sync-tree.XXXXXX";
	char *root = mkdtemp(tmpl), *p;
	struct sync_tree t, u;
	struct jc_err err = { 0 };
	const struct sync_entry *e;
	json_t *j;

	p = xasprintf("%s/blobs", root); mkdir(p, 0755); free(p);
	p = xasprintf("%s/snapshots", root); mkdir(p, 0755); free(p);
	p = xasprintf("%s/blobs/aa", root); write_file(p, "hello"); free(p);
	p = xasprintf("%s/snapshots/w", root); (void)!symlink("../blobs/aa", p); free(p);
	p = xasprintf("%s/blobs/.aa" SYNC_PART_SUFFIX, root); write_file(p, "he"); free(p);
	ok(sync_tree_scan(root, true, &t, &err) == 0, "scan: %s", err.msg);
	ok(t.n == 4 && strcmp(t.v[0].path, "blobs") == 0 && strcmp(t.v[1].path, "blobs/aa") == 0 &&
	    strcmp(t.v[3].path, "snapshots/w") == 0, "4 entries in path order, the part left out");
	e = sync_tree_find(&t, "blobs/aa");
	ok(e != NULL && e->type == SYNC_FILE && e->size == 5 && e->hashed &&
	    sync_hash_eq(e->hash, sync_hash_buf("hello", 5)) && e->mode == 0644,
	    "the file's size, mode and hash");
	e = sync_tree_find(&t, "snapshots/w");
	ok(e != NULL && e->type == SYNC_LINK && strcmp(e->target, "../blobs/aa") == 0, "the link kept");
	j = sync_tree_json(&t);
	ok(sync_tree_from_json(j, &u, &err) == 0 && u.n == t.n &&
	    sync_entry_same(&t.v[1], &u.v[1], true) && sync_entry_same(&t.v[3], &u.v[3], false),
	    "JSON and back");
	json_decref(j);
	sync_tree_free(&u);
	/* the same file: size and mtime; --checksum: the hash */
	{
		struct sync_entry a = t.v[1], b = t.v[1];

		b.mtime_ns++;
		ok(!sync_entry_same(&a, &b, false) && sync_entry_same(&a, &b, true),
		    "another mtime: not the same, unless the hashes say so");
		b = a;
		b.hash.lo ^= 1;
		ok(sync_entry_same(&a, &b, false) && !sync_entry_same(&a, &b, true),
		    "another hash: the same by size and mtime, not with --checksum");
	}
	sync_tree_free(&t);
	j = json_pack("[{s:s,s:s,s:i,s:i,s:i}]", "path", "../x", "type", "file", "size", 1,
	    "mtime_ns", 0, "mode", 0644);
	ok(sync_tree_from_json(j, &u, &err) < 0 && strstr(err.msg, "../x") != NULL,
	    "a tree with '..' refused: %s", err.msg);
	json_decref(j);
	j = json_pack("[{s:s,s:s,s:i,s:i,s:i,s:s}]", "path", "l", "type", "link", "size", 0,
	    "mtime_ns", 0, "mode", 0777, "target", "/etc/passwd");
	ok(sync_tree_from_json(j, &u, &err) < 0, "a link out of the tree refused in a tree");
	json_decref(j);
	/* a link out of the tree: the scan refuses it, naming it */
	p = xasprintf("%s/out", root); (void)!symlink("../../etc/passwd", p); free(p);
	ok(sync_tree_scan(root, false, &t, &err) < 0 && strstr(err.msg, "/out") != NULL &&
	    strstr(err.msg, "outside") != NULL, "scan refuses a link outside: %s", err.msg);
	p = xasprintf("rm -rf '%s'", root);
	(void)!system(p);
	free(p);
}

static void
test_frames(void)
{
	struct sync_frame f = { .type = SYNC_F_CHUNK, .part = 3, .file = 70000, .chunk = 12,
	    .len = SYNC_CHUNK, .hash = { 0x0123456789abcdefull, 0xfedcba9876543210ull } }, g;
	unsigned char b[SYNC_HDR];

	sync_frame_encode(&f, b);
	ok(sync_frame_decode(b, &g) == 0 && g.type == f.type && g.part == 3 && g.file == 70000 &&
	    g.chunk == 12 && g.len == SYNC_CHUNK && sync_hash_eq(g.hash, f.hash), "frame round trip");
	ok(b[0] == 0x4a && b[1] == 0x43 && b[2] == 0x53 && b[3] == 0x31, "magic JCS1 first");
	b[0] ^= 1;
	ok(sync_frame_decode(b, &g) < 0, "a bad magic refused");
	f.len = SYNC_CHUNK + 1;
	sync_frame_encode(&f, b);
	ok(sync_frame_decode(b, &g) < 0, "a chunk longer than a chunk refused");
	f.type = SYNC_F_FEND;
	f.len = 1;
	sync_frame_encode(&f, b);
	ok(sync_frame_decode(b, &g) < 0, "a file end with a payload refused");
	f.type = 9;
	f.len = 0;
	sync_frame_encode(&f, b);
	ok(sync_frame_decode(b, &g) < 0, "an unknown type refused");
	ok(sync_nchunks(0) == 0 && sync_nchunks(1) == 1 && sync_nchunks(SYNC_CHUNK) == 1 &&
	    sync_nchunks(SYNC_CHUNK + 1) == 2, "chunks of a size");
}

static void
ring(struct sync_graph *g, size_t n, int w)
{
	sync_graph_init(g, n);
	for (size_t i = 0; i < n; i++) {
		g->wires[i * n + (i + 1) % n] = w;
		g->wires[((i + 1) % n) * n + i] = w;
	}
}

static void
test_routes(void)
{
	struct sync_graph g;
	struct sync_route r;
	int kids[8];
	double gbps[64], load[64];

	/* a ring of 8 from host 2: the chain 2 -> 3 -> ... -> 1 */
	ring(&g, 8, 1);
	sync_route_plan(&g, 2, &r);
	ok(r.kind == SYNC_ROUTE_CHAIN && r.nparts == 1, "ring: a chain of one part");
	{
		bool chain = true;

		for (size_t k = 1; k < 8; k++)
			chain &= sync_route_parent(&r, 0, (2 + k) % 8) == (int)((2 + k - 1) % 8);
		ok(chain && sync_route_parent(&r, 0, 2) == -1, "ring: in ring order");
	}
	/* every cable carries the data once; the expected time is one cable's */
	for (int i = 0; i < 64; i++)
		gbps[i] = 8;
	sync_route_load(&r, 1e9, load);
	{
		int used = 0;

		for (int i = 0; i < 64; i++)
			used += load[i] > 0 && load[i] == 1e9;
		ok(used == 7, "ring: 7 cables, each 1 GB once");
	}
	ok(sync_route_seconds(&r, 1e9, gbps) == 1.0, "ring: 1 GB at 8 Gb/s takes 1 s");
	gbps[4 * 8 + 5] = 4;
	ok(sync_route_seconds(&r, 1e9, gbps) == 2.0, "ring: the slowest cable sets the time");
	gbps[4 * 8 + 5] = 0;
	ok(sync_route_seconds(&r, 1e9, gbps) < 0, "ring: an unmeasured cable: unknown");
	sync_route_free(&r);
	/* host 5 lost: 6 and 7 fed the other way round */
	g.dead_host[5] = true;
	sync_route_plan(&g, 2, &r);
	ok(r.kind == SYNC_ROUTE_TREE && !r.reached[5] && sync_route_parent(&r, 0, 4) == 3 &&
	    sync_route_parent(&r, 0, 1) == 2 && sync_route_parent(&r, 0, 0) == 1 &&
	    sync_route_parent(&r, 0, 7) == 0 && sync_route_parent(&r, 0, 6) == 7,
	    "ring without host 5: 6 and 7 fed around it");
	sync_route_free(&r);
	g.dead_host[5] = false;
	/* the cable 3-4 lost */
	g.dead_wire[3 * 8 + 4] = g.dead_wire[4 * 8 + 3] = 1;
	sync_route_plan(&g, 2, &r);
	ok(r.kind == SYNC_ROUTE_TREE && r.reached[4] && sync_route_parent(&r, 0, 4) == 5 &&
	    sync_route_parent(&r, 0, 3) == 2, "ring without the cable 3-4: 4 fed from 5");
	sync_route_free(&r);
	sync_graph_free(&g);

	/* a mesh of 4: the source's three cables busy, each host forwards its part */
	sync_graph_init(&g, 4);
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++)
			g.wires[i * 4 + j] = i != j;
	sync_route_plan(&g, 0, &r);
	ok(r.kind == SYNC_ROUTE_SCATTER && r.nparts == 3, "mesh: scatter of 3 parts");
	ok(sync_route_parent(&r, 0, 1) == 0 && sync_route_parent(&r, 0, 2) == 1 &&
	    sync_route_parent(&r, 0, 3) == 1 && sync_route_children(&r, 0, 1, kids) == 2 &&
	    kids[0] == 2 && kids[1] == 3, "mesh: part 1 goes 0 -> 1 -> {2, 3}");
	sync_route_load(&r, 3e9, load);
	{
		bool each = true;

		for (int i = 0; i < 4; i++)
			for (int j = 0; j < 4; j++)
				if (i != j)
					each &= (j == 0) ? load[i * 4 + j] == 0 : load[i * 4 + j] == 1e9;
		ok(each, "mesh: every cable into a host carries a third, once");
	}
	for (int i = 0; i < 16; i++)
		gbps[i] = 8;
	ok(sync_route_seconds(&r, 3e9, gbps) == 1.0, "mesh: 3 GB in the time of 1 GB on one cable");
	sync_route_free(&r);
	g.dead_host[3] = true;
	sync_route_plan(&g, 0, &r);
	ok(r.kind == SYNC_ROUTE_SCATTER && r.nparts == 2 && !r.reached[3], "mesh without host 3: "
	    "a scatter over the 2 others");
	sync_route_free(&r);
	sync_graph_free(&g);

	/* a pair with two cables: one chain, both wires */
	sync_graph_init(&g, 2);
	g.wires[1] = g.wires[2] = 2;
	sync_route_plan(&g, 1, &r);
	ok(r.kind == SYNC_ROUTE_CHAIN && sync_route_parent(&r, 0, 0) == 1 &&
	    sync_graph_wires(&g, 1, 0) == 2, "a doubled pair: one edge of two wires");
	g.dead_wire[1] = g.dead_wire[2] = 1;
	ok(sync_graph_wires(&g, 1, 0) == 1, "a doubled pair less a cable: one wire");
	sync_route_free(&r);
	sync_graph_free(&g);

	/* a host no cable reaches */
	ring(&g, 4, 1);
	g.dead_host[1] = g.dead_host[3] = true;
	sync_route_plan(&g, 0, &r);
	ok(!r.reached[2], "a ring of 4 that lost both neighbours of the source: 2 unreached");
	sync_route_free(&r);
	sync_graph_free(&g);
}

static void
test_pick(void)
{
	size_t even[3] = { 0, 0, 0 }, one_busy[3] = { 2, 9, 2 }, lost[3] = { SIZE_MAX, 5, 7 };
	size_t all_lost[2] = { SIZE_MAX, SIZE_MAX }, one[1] = { 16 };
	int turns = 0;

	for (uint64_t seq = 0; seq < 6; seq++)
		turns += sync_pick_part(even, 3, seq) == seq % 3;
	ok(turns == 6, "equal queues: the parts in turn (%d of 6)", turns);
	ok(sync_pick_part(one_busy, 3, 1) == 2 && sync_pick_part(one_busy, 3, 0) == 0,
	    "the busy part is passed over, the next free one taken");
	ok(sync_pick_part(lost, 3, 0) == 1 && sync_pick_part(lost, 3, 3) == 1,
	    "a lost first hop gets nothing while another part lives");
	ok(sync_pick_part(all_lost, 2, 1) == 1 && sync_pick_part(one, 1, 7) == 0,
	    "all lost: in turn; one part: that one");
}

int
main(void)
{
	test_hashes();
	test_paths();
	test_tree();
	test_frames();
	test_routes();
	test_pick();
	done_testing();
	return tap_failed != 0;
}
