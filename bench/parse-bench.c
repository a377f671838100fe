/* SPDX-License-Identifier: MIT */
/*
 * CPU time of the readers of what hosts send (not a test): probe_split() on
 * one host's output of 100,000 frames, and a probe bundle of 10,000 hosts
 * (its manifest parsed, the hosts listed, every host loaded). Each is
 * printed with the CPU seconds it took (clock(3)); both should stay well
 * under a second: the work is linear in the frames and in the hosts.
 * Usage: parse-bench [FRAMES [HOSTS]]
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "probe.h"
#include "util.h"

#define TOK "jc0123456789abcdef0123456789abcd"

static double
cpu(void)
{
	return (double)clock() / CLOCKS_PER_SEC;
}

static void
bench_frames(size_t n)
{
	struct jc_buf out = { 0 };
	struct jc_raw raw = { 0 };
	struct jc_err err = { 0 };
	double t;
	int got;

	for (size_t i = 0; i < n; i++)
		buf_printf(&out, TOK " B f%zu.txt\nline %zu\n" TOK " E f%zu.txt 0\n", i, i, i);
	t = cpu();
	got = probe_split(TOK, out.data, out.len, &raw, NULL, 0, &err);
	t = cpu() - t;
	if (got != (int)n) {
		fprintf(stderr, "parse-bench: probe_split: %d frames (%s)\n", got, err.msg);
		exit(1);
	}
	{
		double t2 = cpu();

		for (size_t i = 0; i < n; i += n / 100 + 1) {
			char name[32];

			snprintf(name, sizeof(name), "f%zu.txt", i);
			if (raw_get(&raw, name) == NULL)
				exit(1);
		}
		t2 = cpu() - t2;
		printf("frames: %zu frames (%.1f MiB) split in %.3f s CPU; 100 lookups %.3f s\n", n,
		    (double)out.len / (1 << 20), t, t2);
	}
	raw_clear(&raw);
	buf_free(&out);
}

static void
put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL || fputs(text, f) == EOF || fclose(f) != 0) {
		fprintf(stderr, "parse-bench: %s: %s\n", path, strerror(errno));
		exit(1);
	}
}

static void
bench_manifest(size_t n)
{
	char dir[] = "/tmp/jc-parse-bench-XXXXXX", *p;
	struct jc_buf m = { 0 };
	struct jc_strv hosts = { 0 };
	struct jc_err err = { 0 };
	double t, tp, tl;
	json_t *j;

	if (mkdtemp(dir) == NULL)
		exit(1);
	buf_puts(&m, "{\"version\": 1, \"hosts\": [");
	for (size_t i = 0; i < n; i++) {
		buf_printf(&m, "%s{\"name\": \"h%zu\", \"outputs\": {\"uname.txt\": {\"status\": 0}}}",
		    i ? ", " : "", i);
		p = xasprintf("%s/h%zu", dir, i);
		mkdir(p, 0755);
		free(p);
		p = xasprintf("%s/h%zu/uname.txt", dir, i);
		put(p, "Darwin\n");
		free(p);
	}
	buf_puts(&m, "]}\n");
	p = xasprintf("%s/manifest.json", dir);
	put(p, m.data);
	free(p);
	t = cpu();
	j = bundle_manifest_parse(m.data, m.len, &err);
	tp = cpu() - t;
	json_decref(j);
	t = cpu();
	if (bundle_hosts(dir, &hosts, &err) != 0 || hosts.n != n) {
		fprintf(stderr, "parse-bench: bundle_hosts: %s\n", err.msg);
		exit(1);
	}
	for (size_t i = 0; i < hosts.n; i++) {
		struct jc_raw r = { 0 };

		if (bundle_load_host(dir, hosts.v[i], &r, &err) != 0 || r.n != 1 ||
		    r.outs[0].status != 0) {
			fprintf(stderr, "parse-bench: %s: %s\n", hosts.v[i], err.msg);
			exit(1);
		}
		raw_clear(&r);
	}
	tl = cpu() - t;
	printf("manifest: %zu hosts (%.1f MiB): parsed in %.3f s CPU; listed and every host "
	    "loaded in %.3f s CPU\n", n, (double)m.len / (1 << 20), tp, tl);
	for (size_t i = 0; i < n; i++) {
		p = xasprintf("%s/h%zu/uname.txt", dir, i);
		unlink(p);
		free(p);
		p = xasprintf("%s/h%zu", dir, i);
		rmdir(p);
		free(p);
	}
	p = xasprintf("%s/manifest.json", dir);
	unlink(p);
	free(p);
	rmdir(dir);
	strv_free(&hosts);
	buf_free(&m);
}

int
main(int argc, char **argv)
{
	long frames = 100000, hosts = 10000;

	if ((argc > 1 && !jc_parse_int(argv[1], 1, 10000000, &frames)) ||
	    (argc > 2 && !jc_parse_int(argv[2], 1, 1000000, &hosts))) {
		fprintf(stderr, "usage: parse-bench [FRAMES [HOSTS]]\n");
		return 2;
	}
	bench_frames((size_t)frames);
	bench_manifest((size_t)hosts);
	return 0;
}
