/* SPDX-License-Identifier: MIT */
/*
 * Probe bundles on disk: load one host's raw outputs from DIR/HOST/, list
 * the hosts of a bundle, and save a probe's outputs with a manifest that
 * keeps host order and exit statuses.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
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
	json_t *root, *hosts, *v, *h, *seen;
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
	/* names seen so far, as the keys of an object: one lookup per host */
	seen = json_object();
	json_array_foreach(hosts, i, h) {
		json_t *name = json_object_get(h, "name");
		json_t *outs = json_object_get(h, "outputs");
		const char *k, *hn;
		json_t *o;

		if (!json_is_object(h) || !json_is_string(name) ||
		    !bundle_name_ok(json_string_value(name))) {
			jc_fail(err, -EINVAL, "manifest.json: host %zu has no valid name", i + 1);
			goto fail;
		}
		hn = json_string_value(name);
		if (json_object_get(seen, hn) != NULL) {
			jc_fail(err, -EINVAL, "manifest.json: host %s listed twice", hn);
			goto fail;
		}
		json_object_set_new(seen, hn, json_true());
		if (outs == NULL)
			continue;
		if (!json_is_object(outs)) {
			json_decref(seen);
			goto bad;
		}
		json_object_foreach(outs, k, o) {
			json_t *st = json_object_get(o, "status");

			if (!bundle_name_ok(k) || !json_is_object(o) ||
			    (st != NULL && !json_is_integer(st) && !json_is_null(st))) {
				jc_fail(err, -EINVAL, "manifest.json: host %s: bad output entry", hn);
				goto fail;
			}
		}
	}
	json_decref(seen);
	return root;
fail:
	/* err is filled (names copied) before anything is freed */
	json_decref(seen);
	json_decref(root);
	return NULL;
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

/* The status an output entry of a manifest host records, or -1. */
static int
entry_status(json_t *h, const char *file)
{
	json_t *st = json_object_get(json_object_get(json_object_get(h, "outputs"), file),
	    "status");

	if (json_is_integer(st) && json_integer_value(st) >= -1 && json_integer_value(st) <= 255)
		return (int)json_integer_value(st);
	return -1;
}

/*
 * The last manifest read, kept while the file is the same (device, inode,
 * size, change time), with an index from host name to entry: replaying a
 * bundle of N hosts reads and parses its manifest once, not N times.
 */
static struct {
	pthread_mutex_t lock;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim, ctim;
	json_t *root, *index;
} man_cache = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Open DIR as a folder, never through a link when nofollow. */
static int
open_dir(const char *dir, bool nofollow, struct jc_err *err)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));

	if (fd < 0 && errno == ELOOP)
		return jc_fail(err, -ELOOP, "%s: is a symbolic link; not followed", dir);
	if (fd < 0)
		return jc_fail(err, -errno, "%s: %s", dir, strerror(errno));
	return fd;
}

/* The folder name inside dfd, opened never through a link (-ELOOP). */
static int
open_subdir(int dfd, const char *name, const char *shown, struct jc_err *err)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
		struct stat st;

		if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
			return jc_fail(err, -ELOOP, "%s: is a symbolic link; not followed", shown);
		return jc_fail(err, -ENOTDIR, "%s: not a folder", shown);
	}
	if (fd < 0)
		return jc_fail(err, -errno, "%s: %s", shown, strerror(errno));
	return fd;
}

/*
 * DIR/manifest.json (dfd open on DIR) parsed, with its index (host name to
 * entry), both new references; *root NULL (and 0 returned) when there is none.
 */
static int
load_manifest(int dfd, const char *dir, json_t **root, json_t **index, struct jc_err *err)
{
	char *path = xasprintf("%s/manifest.json", dir), *data = NULL;
	size_t len = 0, i;
	struct jc_err e2 = { 0 };
	struct stat st = { 0 };
	json_t *h;
	int rc;

	*root = *index = NULL;
	if (fstatat(dfd, "manifest.json", &st, AT_SYMLINK_NOFOLLOW) != 0) {
		if (errno == ENOENT) {
			free(path);
			return 0;
		}
		st.st_mode = 0;		/* not cached; the read below says why */
	}
	pthread_mutex_lock(&man_cache.lock);
	if (man_cache.root != NULL && S_ISREG(st.st_mode) && st.st_dev == man_cache.dev &&
	    st.st_ino == man_cache.ino && st.st_size == man_cache.size &&
	    st.st_mtim.tv_sec == man_cache.mtim.tv_sec &&
	    st.st_mtim.tv_nsec == man_cache.mtim.tv_nsec &&
	    st.st_ctim.tv_sec == man_cache.ctim.tv_sec &&
	    st.st_ctim.tv_nsec == man_cache.ctim.tv_nsec) {
		*root = json_incref(man_cache.root);
		*index = json_incref(man_cache.index);
		pthread_mutex_unlock(&man_cache.lock);
		free(path);
		return 0;
	}
	pthread_mutex_unlock(&man_cache.lock);
	rc = jc_read_file_at(dfd, "manifest.json", path, BUNDLE_MAX_MANIFEST, &data, &len, &e2);
	if (rc < 0) {
		free(path);
		if (err != NULL)
			*err = e2;
		return rc;
	}
	*root = bundle_manifest_parse(data, len, &e2);
	free(data);
	if (*root == NULL) {
		rc = jc_fail(err, -EINVAL, "%s: %s", path, e2.msg);
		free(path);
		return rc;
	}
	free(path);
	*index = json_object();
	json_array_foreach(json_object_get(*root, "hosts"), i, h)
		json_object_set(*index, json_string_value(json_object_get(h, "name")), h);
	pthread_mutex_lock(&man_cache.lock);
	json_decref(man_cache.root);
	json_decref(man_cache.index);
	man_cache.root = json_incref(*root);
	man_cache.index = json_incref(*index);
	man_cache.dev = st.st_dev;
	man_cache.ino = st.st_ino;
	man_cache.size = st.st_size;
	man_cache.mtim = st.st_mtim;
	man_cache.ctim = st.st_ctim;
	pthread_mutex_unlock(&man_cache.lock);
	return 0;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * Sorted names of the folder open as dfd (named dir in messages): folders
 * when want_dir, else regular files; hidden names skipped. A symbolic link
 * with a name a bundle may use is an error, never followed.
 */
static int
list_dir(int dfd, const char *dir, bool want_dir, struct jc_strv *out, struct jc_err *err)
{
	int fd = dup(dfd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		rc = jc_fail(err, -errno, "%s: %s", dir, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;

		if (de->d_name[0] == '.')
			continue;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (S_ISLNK(st.st_mode) && bundle_name_ok(de->d_name)) {
			rc = jc_fail(err, -ELOOP, "%s/%s: is a symbolic link; not followed", dir,
			    de->d_name);
			break;
		}
		if (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode))
			strv_push(out, de->d_name);
	}
	closedir(d);
	if (rc < 0) {
		strv_free(out);
		return rc;
	}
	if (out->n > 1)
		qsort(out->v, out->n, sizeof(*out->v), cmp_str);
	return 0;
}

int
bundle_load_host(const char *dir, const char *host, struct jc_raw *raw, struct jc_err *err)
{
	json_t *man = NULL, *index = NULL, *entry;
	struct jc_strv files = { 0 };
	char *hdir;
	int rc, dfd, hfd = -1;

	memset(raw, 0, sizeof(*raw));
	if (!bundle_name_ok(host))
		return jc_fail(err, -EINVAL, "%s: not a valid host folder name", host);
	if ((dfd = open_dir(dir, false, err)) < 0)
		return dfd;
	hdir = xasprintf("%s/%s", dir, host);
	rc = load_manifest(dfd, dir, &man, &index, err);
	if (rc < 0)
		goto out;
	if ((hfd = open_subdir(dfd, host, hdir, err)) < 0) {
		rc = hfd;
		goto out;
	}
	rc = list_dir(hfd, hdir, false, &files, err);
	if (rc < 0)
		goto out;
	entry = index != NULL ? json_object_get(index, host) : NULL;
	raw->host = xstrdup(host);
	for (size_t i = 0; i < files.n; i++) {
		char *path, *data = NULL;
		size_t len = 0;

		if (!bundle_name_ok(files.v[i]))
			continue;
		path = xasprintf("%s/%s", hdir, files.v[i]);
		rc = jc_read_file_at(hfd, files.v[i], path, BUNDLE_MAX_FILE, &data, &len, err);
		free(path);
		if (rc < 0) {
			raw_clear(raw);
			goto out;
		}
		raw_add_new(raw, files.v[i], data, len,
		    entry != NULL ? entry_status(entry, files.v[i]) : -1);
		free(data);
	}
	rc = 0;
out:
	if (hfd >= 0)
		close(hfd);
	close(dfd);
	strv_free(&files);
	free(hdir);
	json_decref(man);
	json_decref(index);
	return rc;
}

int
bundle_hosts(const char *dir, struct jc_strv *hosts, struct jc_err *err)
{
	json_t *man = NULL, *index = NULL, *h;
	size_t i;
	int rc, dfd;

	if ((dfd = open_dir(dir, false, err)) < 0)
		return dfd;
	rc = load_manifest(dfd, dir, &man, &index, err);
	if (rc < 0) {
		close(dfd);
		return rc;
	}
	json_decref(index);
	if (man == NULL) {
		struct jc_strv sub = { 0 };

		rc = list_dir(dfd, dir, true, &sub, err);
		close(dfd);
		if (rc < 0)
			return rc;
		for (i = 0; i < sub.n; i++)
			if (bundle_name_ok(sub.v[i]))
				strv_push(hosts, sub.v[i]);
		strv_free(&sub);
		return 0;
	}
	close(dfd);
	json_array_foreach(json_object_get(man, "hosts"), i, h)
		strv_push(hosts, json_string_value(json_object_get(h, "name")));
	json_decref(man);
	return 0;
}

/*
 * The folder name inside dfd (or the path name when dfd is AT_FDCWD),
 * created 0755 when missing, opened never through a link.
 */
static int
make_dir_at(int dfd, const char *name, const char *shown, struct jc_err *err)
{
	if (mkdirat(dfd, name, 0755) != 0 && errno != EEXIST)
		return jc_fail(err, -errno, "%s: cannot create folder: %s", shown, strerror(errno));
	return open_subdir(dfd, name, shown, err);
}

int
bundle_save(const char *dir, const struct jc_raw *raws, size_t n, struct jc_err *err)
{
	json_t *root, *hosts;
	char *text, *nl;
	int rc, dfd;

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
	if ((dfd = make_dir_at(AT_FDCWD, dir, dir, err)) < 0)
		return dfd;
	root = json_object();
	hosts = json_array();
	json_object_set_new(root, "version", json_integer(1));
	json_object_set_new(root, "hosts", hosts);
	for (size_t i = 0; i < n; i++) {
		json_t *h = json_object(), *outs = json_object();
		char *hdir = xasprintf("%s/%s", dir, raws[i].host);
		int hfd;

		json_object_set_new(h, "name", json_string(raws[i].host));
		json_object_set_new(h, "outputs", outs);
		json_array_append_new(hosts, h);
		rc = hfd = make_dir_at(dfd, raws[i].host, hdir, err);
		for (size_t j = 0; hfd >= 0 && rc >= 0 && j < raws[i].n; j++) {
			const struct jc_raw_out *o = &raws[i].outs[j];
			json_t *e = json_object();
			char *path = xasprintf("%s/%s", hdir, o->name);

			rc = jc_write_atomic_at(hfd, o->name, path, o->data, o->len, 0644, err);
			free(path);
			json_object_set_new(e, "status", json_integer(o->status));
			json_object_set_new(outs, o->name, e);
		}
		if (hfd >= 0)
			close(hfd);
		free(hdir);
		if (rc < 0) {
			json_decref(root);
			close(dfd);
			return rc;
		}
	}
	text = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	if (text == NULL) {
		close(dfd);
		return jc_fail(err, -ENOMEM, "manifest.json: cannot encode");
	}
	nl = xasprintf("%s\n", text);
	free(text);
	{
		char *path = xasprintf("%s/manifest.json", dir);

		rc = jc_write_atomic_at(dfd, "manifest.json", path, nl, strlen(nl), 0644, err);
		free(path);
	}
	free(nl);
	close(dfd);
	return rc < 0 ? rc : 0;
}
