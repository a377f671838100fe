/* SPDX-License-Identifier: MIT */
/*
 * The pure parts of watch's sessions: cutting a remote loop's stream into
 * snapshots (only at a "TOKEN S" line of its own, never inside a line,
 * never before the whole line came) and parsing one snapshot with the
 * platform backend, checked against a real capture's expected reading
 * (tests/captures/apple-tn3205-m4pro-mini/EXPECTED.json: three RDMA devices,
 * all PORT_ACTIVE).
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "platform.h"
#include "watch_live.h"

#define TOK "jw0123456789abcdef0123456789abcd"

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct jc_buf b = { 0 };
	char chunk[4096];
	size_t n;

	if (f == NULL) {
		fprintf(stderr, "cannot open %s\n", path);
		exit(1);
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_append(&b, chunk, n);
	fclose(f);
	return b.len ? buf_steal(&b) : xstrdup("");
}

static void
test_end(void)
{
	const char *s;
	size_t body = 99, end;

	is_int((long long)wl_snapshot_end(TOK, "", 0, &body), 0, "empty stream: no snapshot");
	s = "x " TOK " S\n";
	is_int((long long)wl_snapshot_end(TOK, s, strlen(s), &body), 0,
	    "a marker inside a line is not one");
	s = "a\n" TOK " S";
	is_int((long long)wl_snapshot_end(TOK, s, strlen(s), &body), 0,
	    "a marker whose line has not ended yet is not one");
	s = "a\n" TOK " B x\n" TOK " S\nrest";
	end = wl_snapshot_end(TOK, s, strlen(s), &body);
	is_int((long long)end, (long long)(strlen(s) - 4), "the snapshot ends after its marker line");
	is_int((long long)body, (long long)(strlen("a\n" TOK " B x\n")),
	    "its body is what comes before the marker");
	s = TOK " S\n" TOK " S\n";
	end = wl_snapshot_end(TOK, s, strlen(s), &body);
	ok(end == strlen(TOK) + 3 && body == 0, "a marker at the very start: an empty snapshot");
	s = "jwffff S\n";
	is_int((long long)wl_snapshot_end(TOK, s, strlen(s), &body), 0, "another token is not ours");
}

static void
test_parse(const char *srcdir)
{
	char *path = xasprintf("%s/tests/captures/apple-tn3205-m4pro-mini/m4pro-mini/ibv_devinfo.txt",
	    srcdir);
	char *cap = slurp(path);
	struct jc_buf s = { 0 };
	struct jc_host *h = NULL;
	struct jc_err err = { 0 };
	size_t end, body;
	int r;

	buf_printf(&s, "login banner\n" TOK " B uname.txt\nDarwin\n\n" TOK " E uname.txt 0\n"
	    TOK " D ibv_devinfo.txt\n" TOK " B ibv_devinfo.txt\n%s\n" TOK " E ibv_devinfo.txt 0\n"
	    TOK " S\n", cap);
	end = wl_snapshot_end(TOK, s.data, s.len, &body);
	is_int((long long)end, (long long)s.len, "the whole stream is one snapshot");
	r = wl_parse(TOK, "mini", s.data, body, NULL, &h, &err);
	is_int(r, 0, "a snapshot of a real capture parses");
	if (r != 0)
		diag("%s", err.msg);
	if (h != NULL) {
		is_str(h->name, "mini", "the inventory is named after the host");
		is_int((long long)h->nrdma, 3, "three RDMA devices, as the capture's EXPECTED.json");
		for (size_t i = 0; i < h->nrdma; i++)
			ok(h->rdma[i].state == JC_PORT_ACTIVE, "%s is PORT_ACTIVE", h->rdma[i].name);
		is_int(h->os, JC_OS_MACOS, "Darwin: macOS");
		jc_host_clear(h);
		free(h);
	}
	h = (struct jc_host *)1;
	r = wl_parse(TOK, "mini", "garbage\n", 8, NULL, &h, &err);
	ok(r < 0 && h == NULL && strstr(err.msg, "system") != NULL,
	    "a snapshot without uname fails and says so: %s", err.msg);
	r = wl_parse(TOK, "mini", TOK " B uname.txt\nDarwin\n", strlen(TOK) + 19, NULL, &h, &err);
	ok(r < 0 && h == NULL, "a frame cut short fails: %s", err.msg);
	buf_free(&s);
	free(cap);
	free(path);
}

/* Occurrences of needle in s. */
static int
count(const char *s, const char *needle)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

/*
 * A session's later snapshots hold only what changes (here ibv_devinfo);
 * the rest (the model, from sysctl) comes from its first, which is kept
 * only once it parsed.
 */
static void
test_parse_later(void)
{
	struct jc_raw first = { 0 };
	struct jc_buf s1 = { 0 }, s2 = { 0 };
	struct jc_host *h = NULL;
	struct jc_err err = { 0 };
	int r;

	r = wl_parse(TOK, "mini", "garbage\n", 8, &first, &h, &err);
	ok(r < 0 && first.n == 0, "a snapshot that fails is not kept as the first");
	buf_puts(&s1, TOK " B uname.txt\nDarwin\n\n" TOK " E uname.txt 0\n"
	    TOK " B sysctl.txt\nhw.model: Mac16,11\nkern.osproductversion: 26.2\n"
	    "kern.osversion: 25C17\n\n" TOK " E sysctl.txt 0\n"
	    TOK " B ibv_devinfo.txt\nNo IB devices found\n\n" TOK " E ibv_devinfo.txt 255\n");
	r = wl_parse(TOK, "mini", s1.data, s1.len, &first, &h, &err);
	ok(r == 0 && h != NULL && h->model != NULL && strcmp(h->model, "Mac16,11") == 0,
	    "the first snapshot: its model from sysctl");
	ok(raw_get(&first, "sysctl.txt") != NULL, "and it is kept");
	if (h != NULL) {
		jc_host_clear(h);
		free(h);
		h = NULL;
	}
	buf_puts(&s2, TOK " B uname.txt\nDarwin\n\n" TOK " E uname.txt 0\n"
	    TOK " B ibv_devinfo.txt\nNo IB devices found\n\n" TOK " E ibv_devinfo.txt 255\n");
	r = wl_parse(TOK, "mini", s2.data, s2.len, &first, &h, &err);
	ok(r == 0 && h != NULL && h->model != NULL && strcmp(h->model, "Mac16,11") == 0,
	    "a later snapshot without sysctl: the model of the first");
	if (h != NULL) {
		jc_host_clear(h);
		free(h);
		h = NULL;
	}
	r = wl_parse(TOK, "mini", s2.data, s2.len, NULL, &h, &err);
	ok(r == 0 && h != NULL && h->model == NULL, "the same alone: the model unknown");
	if (h != NULL) {
		jc_host_clear(h);
		free(h);
	}
	raw_clear(&first);
	buf_free(&s1);
	buf_free(&s2);
}

static void
test_command(void)
{
	char *c = wl_command(0.5, 7);

	ok(strncmp(c, "exec /bin/sh -c '", 17) == 0, "one exec of /bin/sh");
	is_int(count(c, "uname -sn"), 1, "uname runs once, before the first look");
	is_int(count(c, "sudo"), 0, "no sudo in any look");
	is_int(count(c, "sysctl hw.model"), 1, "the model is asked once (the first look)");
	is_int(count(c, "\nibv_devinfo\n"), 2, "the RDMA ports' states in both scripts");
	ok(strstr(c, "sleep 0.500") != NULL, "it sleeps the interval between two looks");
	ok(strstr(c, "kill -TERM 0") != NULL, "a stop takes its process group along");
	ok(strstr(c, "jc_to=7") != NULL, "the probe's commands are bounded by the command timeout");
	free(c);
}

int
main(void)
{
	const char *srcdir = getenv("top_srcdir");

	test_end();
	test_parse(srcdir ? srcdir : ".");
	test_parse_later();
	test_command();
	return done_testing();
}
