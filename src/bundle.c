/* SPDX-License-Identifier: MIT */
/*
 * Probe bundles on disk: load one host's raw outputs from DIR/HOST/, list
 * the hosts of a bundle, and save a probe's outputs with a manifest that
 * keeps host order and exit statuses.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "bundle.h"

bool
bundle_name_ok(const char *s)
{
	if (!jc_plain_word(s) || s[0] == '.')
		return false;
	return strchr(s, '/') == NULL;
}

json_t *
bundle_manifest_parse(const char *data, size_t len, struct jc_err *err)
{
	json_error_t je;
	json_t *root, *hosts, *v, *h;
	size_t i;

	root = json_loadb(data, len, JSON_REJECT_DUPLICATES, &je);
	if (root == NULL) {
		jc_fail(err, -EINVAL, "manifest.json: line %d: %s", je.line, je.text);
		return NULL;
	}
	if (!json_is_object(root))
		goto bad;
	v = json_object_get(root, "version");
	if (v != NULL && (!json_is_integer(v) || json_integer_value(v) != 1)) {
		json_decref(root);
		jc_fail(err, -EINVAL, "manifest.json: unsupported version (want 1)");
		return NULL;
	}
	hosts = json_object_get(root, "hosts");
	if (!json_is_array(hosts))
		goto bad;
	json_array_foreach(hosts, i, h) {
		json_t *name = json_object_get(h, "name");
		json_t *outs = json_object_get(h, "outputs");
		const char *k;
		json_t *o;

		if (!json_is_object(h) || !json_is_string(name) ||
		    !bundle_name_ok(json_string_value(name))) {
			json_decref(root);
			jc_fail(err, -EINVAL, "manifest.json: host %zu has no valid name", i + 1);
			return NULL;
		}
		for (size_t j = 0; j < i; j++)
			if (strcmp(json_string_value(json_object_get(json_array_get(hosts, j), "name")),
			    json_string_value(name)) == 0) {
				json_decref(root);
				jc_fail(err, -EINVAL, "manifest.json: host %s listed twice",
				    json_string_value(name));
				return NULL;
			}
		if (outs == NULL)
			continue;
		if (!json_is_object(outs))
			goto bad;
		json_object_foreach(outs, k, o) {
			json_t *st = json_object_get(o, "status");

			if (!bundle_name_ok(k) || !json_is_object(o) ||
			    (st != NULL && !json_is_integer(st) && !json_is_null(st))) {
				json_decref(root);
				jc_fail(err, -EINVAL, "manifest.json: host %s: bad output entry",
				    json_string_value(name));
				return NULL;
			}
		}
	}
	return root;
bad:
	json_decref(root);
	jc_fail(err, -EINVAL, "manifest.json: not a probe bundle manifest "
	    "(want {\"version\": 1, \"hosts\": [...]})");
	return NULL;
}

int
bundle_manifest_status(const json_t *manifest, const char *host, const char *file)
{
	json_t *hosts = json_object_get(manifest, "hosts"), *h;
	size_t i;

	json_array_foreach(hosts, i, h) {
		json_t *st;

		if (strcmp(json_string_value(json_object_get(h, "name")), host) != 0)
			continue;
		st = json_object_get(json_object_get(json_object_get(h, "outputs"), file), "status");
		if (json_is_integer(st) && json_integer_value(st) >= -1 &&
		    json_integer_value(st) <= 255)
			return (int)json_integer_value(st);
		return -1;
	}
	return -1;
}

/* DIR/manifest.json parsed; *out NULL (and 0 returned) when there is none. */
static int
load_manifest(const char *dir, json_t **out, struct jc_err *err)
{
	char *path = xasprintf("%s/manifest.json", dir), *data = NULL;
	size_t len = 0;
	int rc;
	struct jc_err e2;

	*out = NULL;
	rc = jc_read_file(path, BUNDLE_MAX_MANIFEST, &data, &len, &e2);
	if (rc == -ENOENT) {
		free(path);
		return 0;
	}
	if (rc < 0) {
		free(path);
		if (err != NULL)
			*err = e2;
		return rc;
	}
	*out = bundle_manifest_parse(data, len, &e2);
	free(data);
	if (*out == NULL) {
		rc = jc_fail(err, -EINVAL, "%s: %s", path, e2.msg);
		free(path);
		return rc;
	}
	free(path);
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names of DIR's entries: folders when want_dir, else regular files. */
static int
list_dir(const char *dir, bool want_dir, struct jc_strv *out, struct jc_err *err)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (d == NULL)
		return jc_fail(err, -errno, "%s: %s", dir, strerror(errno));
	while ((de = readdir(d)) != NULL) {
		char *p;
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		p = xasprintf("%s/%s", dir, de->d_name);
		if (stat(p, &st) == 0 && (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode)))
			strv_push(out, de->d_name);
		free(p);
	}
	closedir(d);
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), cmp_str);
	return 0;
}

int
bundle_load_host(const char *dir, const char *host, struct jc_raw *raw, struct jc_err *err)
{
	json_t *man = NULL;
	struct jc_strv files = { 0 };
	char *hdir;
	int rc;

	memset(raw, 0, sizeof(*raw));
	if (!bundle_name_ok(host))
		return jc_fail(err, -EINVAL, "%s: not a valid host folder name", host);
	rc = load_manifest(dir, &man, err);
	if (rc < 0)
		return rc;
	hdir = xasprintf("%s/%s", dir, host);
	rc = list_dir(hdir, false, &files, err);
	if (rc < 0)
		goto out;
	raw->host = xstrdup(host);
	for (size_t i = 0; i < files.n; i++) {
		char *path, *data = NULL;
		size_t len = 0;

		if (!bundle_name_ok(files.v[i]))
			continue;
		path = xasprintf("%s/%s", hdir, files.v[i]);
		rc = jc_read_file(path, BUNDLE_MAX_FILE, &data, &len, err);
		free(path);
		if (rc < 0) {
			raw_clear(raw);
			goto out;
		}
		raw_add(raw, files.v[i], data, len,
		    man != NULL ? bundle_manifest_status(man, host, files.v[i]) : -1);
		free(data);
	}
	rc = 0;
out:
	strv_free(&files);
	free(hdir);
	json_decref(man);
	return rc;
}

int
bundle_hosts(const char *dir, struct jc_strv *hosts, struct jc_err *err)
{
	json_t *man = NULL, *h;
	size_t i;
	int rc;

	rc = load_manifest(dir, &man, err);
	if (rc < 0)
		return rc;
	if (man == NULL) {
		struct jc_strv sub = { 0 };

		rc = list_dir(dir, true, &sub, err);
		if (rc < 0)
			return rc;
		for (i = 0; i < sub.n; i++)
			if (bundle_name_ok(sub.v[i]))
				strv_push(hosts, sub.v[i]);
		strv_free(&sub);
		return 0;
	}
	json_array_foreach(json_object_get(man, "hosts"), i, h)
		strv_push(hosts, json_string_value(json_object_get(h, "name")));
	json_decref(man);
	return 0;
}

static int
make_dir(const char *path, struct jc_err *err)
{
	struct stat st;

	if (mkdir(path, 0755) == 0)
		return 0;
	if (errno == EEXIST && stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return 0;
	return jc_fail(err, -errno, "%s: cannot create folder: %s", path, strerror(errno));
}

/* Write a file whole or not at all (a temporary, fsynced and renamed). */
static int
write_file(const char *path, const char *data, size_t len, struct jc_err *err)
{
	return jc_write_atomic(path, data, len, 0644, err);
}

int
bundle_save(const char *dir, const struct jc_raw *raws, size_t n, struct jc_err *err)
{
	json_t *root, *hosts;
	char *path, *text, *nl;
	int rc;

	for (size_t i = 0; i < n; i++) {
		if (!bundle_name_ok(raws[i].host))
			return jc_fail(err, -EINVAL, "%s: not a valid bundle host name",
			    raws[i].host ? raws[i].host : "(null)");
		for (size_t j = 0; j < i; j++)
			if (strcmp(raws[i].host, raws[j].host) == 0)
				return jc_fail(err, -EINVAL, "%s: host given twice", raws[i].host);
		for (size_t j = 0; j < raws[i].n; j++)
			if (!bundle_name_ok(raws[i].outs[j].name))
				return jc_fail(err, -EINVAL, "%s: %s: not a valid bundle file name",
				    raws[i].host, raws[i].outs[j].name);
	}
	rc = make_dir(dir, err);
	if (rc < 0)
		return rc;
	root = json_object();
	hosts = json_array();
	json_object_set_new(root, "version", json_integer(1));
	json_object_set_new(root, "hosts", hosts);
	for (size_t i = 0; i < n; i++) {
		json_t *h = json_object(), *outs = json_object();
		char *hdir = xasprintf("%s/%s", dir, raws[i].host);

		json_object_set_new(h, "name", json_string(raws[i].host));
		json_object_set_new(h, "outputs", outs);
		json_array_append_new(hosts, h);
		rc = make_dir(hdir, err);
		for (size_t j = 0; rc == 0 && j < raws[i].n; j++) {
			const struct jc_raw_out *o = &raws[i].outs[j];
			json_t *e = json_object();

			path = xasprintf("%s/%s", hdir, o->name);
			rc = write_file(path, o->data, o->len, err);
			free(path);
			json_object_set_new(e, "status", json_integer(o->status));
			json_object_set_new(outs, o->name, e);
		}
		free(hdir);
		if (rc < 0) {
			json_decref(root);
			return rc;
		}
	}
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (text == NULL)
		return jc_fail(err, -ENOMEM, "manifest.json: cannot encode");
	nl = xasprintf("%s\n", text);
	free(text);
	path = xasprintf("%s/manifest.json", dir);
	rc = write_file(path, nl, strlen(nl), err);
	free(nl);
	free(path);
	return rc;
}
