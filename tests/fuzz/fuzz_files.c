/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer targets for the readers of files on disk, built with
 * -DFUZZ_BUNDLE or -DFUZZ_STATE. The input is cut at its NUL bytes into
 * parts written as files into a scratch folder (emptied between runs):
 *
 * FUZZ_BUNDLE: part 0 is manifest.json (none when empty), then pairs of a
 *   path ("HOST/FILE", or "HOST" for a folder) and a content; the bundle's
 *   hosts are listed and each is loaded and parsed as a live probe would be.
 *   Every output loaded has a bundle name and a status in -1..255.
 * FUZZ_STATE: part 0 is last-setup.json, then pairs of a name under hosts/
 *   and a content; doctor's reader (setup_record_load) and restore (on a
 *   transport that reaches no host) read them.
 */
#include "config.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apply.h"
#include "bundle.h"
#include "probe.h"
#include "setup_record.h"
#include "../lib/transport-script.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size);

static char *scratch;

static void
rm_tree(const char *path, bool top)
{
	DIR *d = opendir(path);
	struct dirent *e;

	while (d != NULL && (e = readdir(d)) != NULL) {
		char *sub;
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		sub = xasprintf("%s/%s", path, e->d_name);
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			rm_tree(sub, false);
		else
			unlink(sub);
		free(sub);
	}
	if (d != NULL)
		closedir(d);
	if (!top)
		rmdir(path);
}

/* A relative path of plain words only, at most two deep: nothing outside the folder. */
static bool
rel_ok(const char *p, size_t n)
{
	size_t slashes = 0;

	if (n == 0 || n > 100 || p[0] == '/' || p[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];

		if (c == '/') {
			if (++slashes > 1 || p[i + 1] == '.' || p[i + 1] == '/')
				return false;
		} else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.')) {
			return false;
		}
	}
	return true;
}

static void
put(const char *dir, const char *rel, size_t rn, const char *data, size_t len)
{
	char *r = xstrndup(rel, rn), *path = xasprintf("%s/%s", dir, r), *slash;
	FILE *f;

	if ((slash = strchr(r, '/')) != NULL) {
		char *sub;

		*slash = '\0';
		sub = xasprintf("%s/%s", dir, r);
		mkdir(sub, 0700);
		free(sub);
	}
	if (len == 0 && slash == NULL) {
		mkdir(path, 0700);
	} else if ((f = fopen(path, "w")) != NULL) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
	free(path);
	free(r);
}

/* Part k of the input (cut at NULs) into *p, *n; false past the last. */
static bool
part(const char *d, size_t size, size_t k, const char **p, size_t *n)
{
	const char *s = d, *end = d + size;

	for (size_t i = 0; i < k; i++) {
		const char *z = memchr(s, '\0', (size_t)(end - s));

		if (z == NULL)
			return false;
		s = z + 1;
	}
	if (s > end)
		return false;
	*p = s;
	*n = (size_t)((const char *)(memchr(s, '\0', (size_t)(end - s)) ?: end) - s);
	return true;
}

int
LLVMFuzzerTestOneInput(const unsigned char *data, size_t size)
{
	const char *d = (const char *)data, *p, *c;
	size_t pn, cn;
	struct jc_err err = { 0 };

	if (scratch == NULL) {
		char tmpl[] = "/tmp/jc-fuzz-files-XXXXXX";

		if (mkdtemp(tmpl) == NULL)
			abort();
		scratch = xstrdup(tmpl);
	}
	rm_tree(scratch, true);
#if defined(FUZZ_BUNDLE)
	if (part(d, size, 0, &p, &pn) && pn > 0)
		put(scratch, "manifest.json", 13, p, pn);
	for (size_t k = 1; part(d, size, k, &p, &pn) && part(d, size, k + 1, &c, &cn); k += 2)
		if (rel_ok(p, pn))
			put(scratch, p, pn, c, cn);
	{
		struct jc_strv hosts = { 0 };

		if (bundle_hosts(scratch, &hosts, &err) == 0)
			for (size_t i = 0; i < hosts.n && i < 16; i++) {
				struct jc_raw raw = { 0 };
				struct jc_host h = { 0 };

				if (bundle_load_host(scratch, hosts.v[i], &raw, &err) != 0)
					continue;
				for (size_t j = 0; j < raw.n; j++)
					if (!bundle_name_ok(raw.outs[j].name) || raw.outs[j].status < -1 ||
					    raw.outs[j].status > 255 ||
					    raw.outs[j].data[raw.outs[j].len] != '\0')
						abort();
				(void)probe_parse_raw(&h, &raw, &err);
				jc_host_clear(&h);
				raw_clear(&raw);
			}
		strv_free(&hosts);
	}
#elif defined(FUZZ_STATE)
	{
		char *hd = xasprintf("%s/hosts", scratch);
		struct setup_record *rec = NULL;
		struct jc_transport *t = ts_new();
		struct apply_opts o = { 0 };
		struct apply_restored *r = NULL;
		const char *why = NULL;
		size_t n = 0;

		chmod(scratch, 0700);
		mkdir(hd, 0700);
		if (part(d, size, 0, &p, &pn))
			put(scratch, "last-setup.json", 15, p, pn);
		for (size_t k = 1; part(d, size, k, &p, &pn) && part(d, size, k + 1, &c, &cn);
		    k += 2)
			if (rel_ok(p, pn) && memchr(p, '/', pn) == NULL)
				put(hd, p, pn, c, cn);
		if (setup_record_load(scratch, &rec, &err) == 0)
			setup_record_free(rec);
		o.transport = t;
		o.state_dir = scratch;
		o.command_timeout = 1;
		(void)apply_restore(&o, NULL, 0, &r, &n, &why, &err);
		apply_restored_free(r, n);
		transport_free(t);
		free(hd);
	}
#else
#error "build with -DFUZZ_BUNDLE or -DFUZZ_STATE"
#endif
	return 0;
}
