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
	r = wl_parse(TOK, "mini", s.data, body, &h, &err);
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
	r = wl_parse(TOK, "mini", "garbage\n", 8, &h, &err);
	ok(r < 0 && h == NULL && strstr(err.msg, "system") != NULL,
	    "a snapshot without uname fails and says so: %s", err.msg);
	r = wl_parse(TOK, "mini", TOK " B uname.txt\nDarwin\n", strlen(TOK) + 19, &h, &err);
	ok(r < 0 && h == NULL, "a frame cut short fails: %s", err.msg);
	buf_free(&s);
	free(cap);
	free(path);
}

static void
test_command(void)
{
	char *c = wl_command(0.5, 7);

	ok(strncmp(c, "exec /bin/sh -c '", 17) == 0, "one exec of /bin/sh");
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
	test_command();
	return done_testing();
}
