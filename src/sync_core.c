/* SPDX-License-Identifier: MIT */
/*
 * sync's pure parts: hashes, path rules, the manifest of a tree, frames
 * and routes (see sync_core.h).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sync_core.h"
#include "util.h"
#include "xxh.h"

struct sync_hash
sync_hash_buf(const void *p, size_t len)
{
	XXH128_hash_t h = XXH3_128bits(p, len);

	return (struct sync_hash){ h.high64, h.low64 };
}

void
sync_hash_hex(struct sync_hash h, char *out)
{
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.hi,
	    (unsigned long long)h.lo);
}

bool
sync_hash_parse(const char *s, struct sync_hash *h)
{
	char a[17], b[17];
	char *e;

	if (s == NULL || strlen(s) != 32 || strspn(s, "0123456789abcdef") != 32)
		return false;
	memcpy(a, s, 16);
	a[16] = '\0';
	memcpy(b, s + 16, 16);
	b[16] = '\0';
	h->hi = strtoull(a, &e, 16);
	h->lo = strtoull(b, &e, 16);
	return true;
}

bool
sync_hash_eq(struct sync_hash a, struct sync_hash b)
{
	return a.hi == b.hi && a.lo == b.lo;
}

int
sync_hash_fd(int fd, struct sync_hash *out)
{
	XXH3_state_t *st = XXH3_createState();
	size_t cap = 1 << 20;
	char *buf = xmalloc(cap);
	off_t off = 0;
	int rc = 0;

	XXH3_128bits_reset(st);
	for (;;) {
		ssize_t k = pread(fd, buf, cap, off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			rc = -errno;
			break;
		}
		if (k == 0)
			break;
		XXH3_128bits_update(st, buf, (size_t)k);
		off += k;
	}
	if (rc == 0) {
		XXH128_hash_t h = XXH3_128bits_digest(st);

		*out = (struct sync_hash){ h.high64, h.low64 };
	}
	XXH3_freeState(st);
	free(buf);
	return rc;
}

/* ---- SHA-256 of a file (jc_sha256), for the names of Hugging Face's blobs ---- */

int
sync_sha256_fd(int fd, char out[65])
{
	struct jc_sha256 s;
	size_t cap = 1 << 20;
	unsigned char *buf = xmalloc(cap);
	off_t off = 0;

	jc_sha256_init(&s);
	for (;;) {
		ssize_t k = pread(fd, buf, cap, off);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int e = -errno;

			free(buf);
			return e;
		}
		if (k == 0)
			break;
		jc_sha256_update(&s, buf, (size_t)k);
		off += k;
	}
	free(buf);
	jc_sha256_final(&s, out);
	return 0;
}

/* ---- paths ---- */

static bool
temp_name(const char *comp, size_t n)
{
	size_t a = strlen(SYNC_PART_SUFFIX), b = strlen(SYNC_MAP_SUFFIX);

	return (n > a && memcmp(comp + n - a, SYNC_PART_SUFFIX, a) == 0) ||
	    (n > b && memcmp(comp + n - b, SYNC_MAP_SUFFIX, b) == 0) ||
	    (n == strlen(SYNC_MANIFEST) && memcmp(comp, SYNC_MANIFEST, n) == 0);
}

bool
sync_path_ok(const char *p)
{
	if (p == NULL || *p == '\0' || *p == '/')
		return false;
	for (const char *s = p; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	while (*p) {
		size_t n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (temp_name(p, n))
			return false;
		p += n;
		if (*p == '/') {
			p++;
			if (*p == '\0')
				return false;
		}
	}
	return true;
}

bool
sync_link_ok(const char *path, const char *target)
{
	int depth = 0;

	if (target == NULL || *target == '\0' || *target == '/')
		return false;
	for (const char *s = target; *s; s++)
		if ((unsigned char)*s < 0x20)
			return false;
	/* the link's own folder */
	for (const char *s = path; *s; s++)
		if (*s == '/')
			depth++;
	for (const char *p = target; *p; ) {
		size_t n = strcspn(p, "/");

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			if (--depth < 0)
				return false;
		} else if (n > 0 && !(n == 1 && p[0] == '.')) {
			depth++;
		}
		p += n;
		if (*p == '/')
			p++;
	}
	return true;
}

/* ---- trees ---- */

void
sync_tree_add(struct sync_tree *t, const struct sync_entry *e)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 16;
		t->v = xreallocarray(t->v, t->cap, sizeof(*t->v));
	}
	t->v[t->n] = *e;
	t->v[t->n].path = xstrdup(e->path);
	t->v[t->n].target = xstrdup(e->target);
	t->n++;
}

void
sync_tree_free(struct sync_tree *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].path);
		free(t->v[i].target);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static int
entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sync_entry *)a)->path, ((const struct sync_entry *)b)->path);
}

const struct sync_entry *
sync_tree_find(const struct sync_tree *t, const char *path)
{
	struct sync_entry key = { .path = (char *)path };

	if (t->n == 0)
		return NULL;
	return bsearch(&key, t->v, t->n, sizeof(*t->v), entry_cmp);
}

static int
scan_dir(const char *root, const char *rel, bool hash, struct sync_tree *t, struct jc_err *err)
{
	char *dir = *rel ? xasprintf("%s/%s", root, rel) : xstrdup(root);
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 0;

	if (d == NULL) {
		rc = jc_fail(err, -errno, "%s: %s", dir, strerror(errno));
		free(dir);
		return rc;
	}
	while (rc == 0 && (de = readdir(d)) != NULL) {
		struct sync_entry e = { 0 };
		struct stat st;
		char *full, *path;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    temp_name(de->d_name, strlen(de->d_name)))
			continue;
		path = *rel ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		full = xasprintf("%s/%s", root, path);
		if (lstat(full, &st) < 0) {
			rc = jc_fail(err, -errno, "%s: %s", full, strerror(errno));
		} else if (!sync_path_ok(path)) {
			rc = jc_fail(err, -EINVAL, "%s: a name sync cannot copy", full);
		} else {
			e.path = path;
			e.size = (uint64_t)st.st_size;
			e.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
			e.mode = st.st_mode & 07777;
			if (S_ISREG(st.st_mode)) {
				e.type = SYNC_FILE;
				if (hash) {
					int fd = open(full, O_RDONLY | O_CLOEXEC);

					if (fd < 0 || sync_hash_fd(fd, &e.hash) < 0)
						rc = jc_fail(err, -errno, "%s: %s", full, strerror(errno));
					e.hashed = rc == 0;
					if (fd >= 0)
						close(fd);
				}
				if (rc == 0)
					sync_tree_add(t, &e);
			} else if (S_ISDIR(st.st_mode)) {
				e.type = SYNC_DIR;
				e.size = 0;
				sync_tree_add(t, &e);
				rc = scan_dir(root, path, hash, t, err);
			} else if (S_ISLNK(st.st_mode)) {
				char buf[4096];
				ssize_t k = readlink(full, buf, sizeof(buf) - 1);

				if (k < 0) {
					rc = jc_fail(err, -errno, "%s: %s", full, strerror(errno));
				} else {
					buf[k] = '\0';
					if (!sync_link_ok(path, buf)) {
						rc = jc_fail(err, -EINVAL, "%s: a link to '%s', outside "
						    "the folder: refused", full, buf);
					} else {
						e.type = SYNC_LINK;
						e.target = buf;
						e.size = 0;
						sync_tree_add(t, &e);
					}
				}
			} else {
				rc = jc_fail(err, -EINVAL, "%s: not a file, folder or link: "
				    "refused", full);
			}
		}
		free(path);
		free(full);
	}
	closedir(d);
	free(dir);
	return rc;
}

int
sync_tree_scan(const char *root, bool hash, struct sync_tree *t, struct jc_err *err)
{
	struct stat st;
	int rc;

	memset(t, 0, sizeof(*t));
	if (stat(root, &st) < 0)
		return jc_fail(err, -errno, "%s: %s", root, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return jc_fail(err, -ENOTDIR, "%s: not a folder", root);
	rc = scan_dir(root, "", hash, t, err);
	if (rc < 0) {
		sync_tree_free(t);
		return rc;
	}
	if (t->n > 0)
		qsort(t->v, t->n, sizeof(*t->v), entry_cmp);
	return 0;
}

static const char *const type_names[] = { "file", "dir", "link" };

json_t *
sync_tree_json(const struct sync_tree *t)
{
	json_t *a = json_array();

	for (size_t i = 0; i < t->n; i++) {
		const struct sync_entry *e = &t->v[i];
		json_t *o = json_pack("{s:s,s:s,s:I,s:I,s:i}", "path", e->path,
		    "type", type_names[e->type], "size", (json_int_t)e->size,
		    "mtime_ns", (json_int_t)e->mtime_ns, "mode", (int)e->mode);

		if (e->target)
			json_object_set_new(o, "target", json_string(e->target));
		if (e->hashed) {
			char hx[33];

			sync_hash_hex(e->hash, hx);
			json_object_set_new(o, "xxh128", json_string(hx));
		}
		json_array_append_new(a, o);
	}
	return a;
}

int
sync_tree_from_json(json_t *a, struct sync_tree *t, struct jc_err *err)
{
	size_t i;
	json_t *o;

	memset(t, 0, sizeof(*t));
	if (!json_is_array(a))
		return jc_fail(err, -EINVAL, "a tree is not a list");
	json_array_foreach(a, i, o) {
		struct sync_entry e = { 0 };
		const char *path = NULL, *type = NULL, *target = NULL, *hx = NULL;
		json_int_t size = 0, mtime = 0;
		int mode = 0, k;

		if (json_unpack(o, "{s:s,s:s,s:I,s:I,s:i,s?s,s?s}", "path", &path, "type", &type,
		    "size", &size, "mtime_ns", &mtime, "mode", &mode, "target", &target,
		    "xxh128", &hx) < 0 || size < 0 || mode < 0 || mode > 07777)
			goto bad;
		for (k = 0; k < 3 && strcmp(type, type_names[k]) != 0; k++)
			;
		if (k == 3 || !sync_path_ok(path))
			goto bad;
		if (k == SYNC_LINK && !sync_link_ok(path, target))
			goto bad;
		if (i > 0 && strcmp(t->v[t->n - 1].path, path) >= 0)
			goto bad;
		e.path = (char *)path;
		e.type = (enum sync_type)k;
		e.size = (uint64_t)size;
		e.mtime_ns = mtime;
		e.mode = (unsigned)mode;
		e.target = k == SYNC_LINK ? (char *)target : NULL;
		if (hx != NULL) {
			if (!sync_hash_parse(hx, &e.hash))
				goto bad;
			e.hashed = true;
		}
		sync_tree_add(t, &e);
		continue;
bad:
		sync_tree_free(t);
		return jc_fail(err, -EINVAL, "entry %zu of the tree is not valid%s%s", i,
		    path ? ": " : "", path ? path : "");
	}
	return 0;
}

bool
sync_entry_same(const struct sync_entry *s, const struct sync_entry *d, bool checksum)
{
	if (d == NULL || s->type != d->type)
		return false;
	switch (s->type) {
	case SYNC_DIR:
		return true;
	case SYNC_LINK:
		return d->target != NULL && strcmp(s->target, d->target) == 0;
	case SYNC_FILE:
		if (s->size != d->size)
			return false;
		if (checksum)
			return s->hashed && d->hashed && sync_hash_eq(s->hash, d->hash);
		return s->mtime_ns == d->mtime_ns;
	}
	return false;
}

uint32_t
sync_nchunks(uint64_t size)
{
	return (uint32_t)((size + SYNC_CHUNK - 1) / SYNC_CHUNK);
}

/* ---- frames ---- */

static void
put32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static uint32_t
get32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24;
}

void
sync_frame_encode(const struct sync_frame *f, unsigned char out[SYNC_HDR])
{
	memset(out, 0, SYNC_HDR);
	put32(out, SYNC_FRAME_MAGIC);
	put32(out + 4, (uint32_t)f->type | (uint32_t)f->part << 16);
	put32(out + 8, f->file);
	put32(out + 12, f->chunk);
	put32(out + 16, f->len);
	put32(out + 24, (uint32_t)(f->hash.hi >> 32));
	put32(out + 28, (uint32_t)f->hash.hi);
	put32(out + 32, (uint32_t)(f->hash.lo >> 32));
	put32(out + 36, (uint32_t)f->hash.lo);
}

int
sync_frame_decode(const unsigned char in[SYNC_HDR], struct sync_frame *f)
{
	uint32_t tp = get32(in + 4);

	if (get32(in) != SYNC_FRAME_MAGIC)
		return -EINVAL;
	f->type = (uint16_t)(tp & 0xffff);
	f->part = (uint16_t)(tp >> 16);
	f->file = get32(in + 8);
	f->chunk = get32(in + 12);
	f->len = get32(in + 16);
	f->hash.hi = (uint64_t)get32(in + 24) << 32 | get32(in + 28);
	f->hash.lo = (uint64_t)get32(in + 32) << 32 | get32(in + 36);
	if (f->type < SYNC_F_CHUNK || f->type > SYNC_F_HELLO || f->len > SYNC_CHUNK ||
	    (f->type != SYNC_F_CHUNK && f->len != 0))
		return -EINVAL;
	return 0;
}

/* ---- routes ---- */

void
sync_graph_init(struct sync_graph *g, size_t n)
{
	g->n = n;
	g->wires = xcalloc(n * n, sizeof(int));
	g->dead_host = xcalloc(n, sizeof(bool));
	g->dead_wire = xcalloc(n * n, sizeof(int));
}

void
sync_graph_free(struct sync_graph *g)
{
	free(g->wires);
	free(g->dead_host);
	free(g->dead_wire);
	memset(g, 0, sizeof(*g));
}

int
sync_graph_wires(const struct sync_graph *g, size_t i, size_t j)
{
	int w;

	if (i == j || g->dead_host[i] || g->dead_host[j])
		return 0;
	w = g->wires[i * g->n + j] - g->dead_wire[i * g->n + j];
	return w > 0 ? w : 0;
}

static void
dfs(const struct sync_graph *g, size_t u, int *parent, bool *seen)
{
	size_t n = g->n;

	/* ring order: the next host first, then the one before, then further */
	for (size_t d = 1; d <= n / 2 + 1; d++) {
		size_t cand[2] = { (u + d) % n, (u + n - d % n) % n };

		for (int k = 0; k < 2; k++) {
			size_t v = cand[k];

			if (seen[v] || sync_graph_wires(g, u, v) == 0)
				continue;
			seen[v] = true;
			parent[v] = (int)u;
			dfs(g, v, parent, seen);
		}
	}
}

void
sync_route_plan(const struct sync_graph *g, int source, struct sync_route *r)
{
	size_t n = g->n, live = 0;
	bool full = true, lost = false;

	memset(r, 0, sizeof(*r));
	r->n = n;
	r->source = source;
	r->reached = xcalloc(n, sizeof(bool));
	for (size_t i = 0; i < n; i++) {
		if (g->dead_host[i]) {
			lost = true;
			continue;
		}
		live++;
		for (size_t j = 0; j < n; j++) {
			if (j == i || g->dead_host[j])
				continue;
			if (sync_graph_wires(g, i, j) == 0)
				full = false;
			if (g->dead_wire[i * n + j] > 0)
				lost = true;
		}
	}
	if (full && live >= 3) {
		size_t k = 0;

		r->kind = SYNC_ROUTE_SCATTER;
		r->nparts = live - 1;
		r->parent = xmalloc(r->nparts * n * sizeof(int));
		for (size_t i = 0; i < r->nparts * n; i++)
			r->parent[i] = -1;
		for (size_t h = 0; h < n; h++) {
			if (g->dead_host[h] || (int)h == source)
				continue;
			for (size_t j = 0; j < n; j++)
				if (!g->dead_host[j] && (int)j != source && j != h)
					r->parent[k * n + j] = (int)h;
			r->parent[k * n + h] = source;
			r->reached[h] = true;
			k++;
		}
		r->reached[source] = true;
		return;
	}
	r->kind = lost ? SYNC_ROUTE_TREE : SYNC_ROUTE_CHAIN;
	r->nparts = 1;
	r->parent = xmalloc(n * sizeof(int));
	for (size_t i = 0; i < n; i++)
		r->parent[i] = -1;
	r->reached[source] = true;
	dfs(g, (size_t)source, r->parent, r->reached);
	/* a chain that had to branch is a tree */
	if (r->kind == SYNC_ROUTE_CHAIN) {
		int *kids = xcalloc(n, sizeof(int));

		for (size_t i = 0; i < n; i++)
			if (r->parent[i] >= 0 && ++kids[r->parent[i]] > 1)
				r->kind = SYNC_ROUTE_TREE;
		free(kids);
	}
}

void
sync_route_free(struct sync_route *r)
{
	free(r->parent);
	free(r->reached);
	memset(r, 0, sizeof(*r));
}

int
sync_route_parent(const struct sync_route *r, size_t part, size_t host)
{
	return r->parent[part * r->n + host];
}

size_t
sync_route_children(const struct sync_route *r, size_t part, size_t host, int *out)
{
	size_t k = 0;

	for (size_t i = 0; i < r->n; i++)
		if (r->parent[part * r->n + i] == (int)host)
			out[k++] = (int)i;
	return k;
}

void
sync_route_load(const struct sync_route *r, double bytes, double *out)
{
	size_t n = r->n;

	memset(out, 0, n * n * sizeof(double));
	for (size_t p = 0; p < r->nparts; p++)
		for (size_t i = 0; i < n; i++) {
			int u = r->parent[p * n + i];

			if (u >= 0)
				out[(size_t)u * n + i] += bytes / (double)r->nparts;
		}
}

double
sync_route_seconds(const struct sync_route *r, double bytes, const double *gbps)
{
	size_t n = r->n;
	double *load = xcalloc(n * n, sizeof(double)), worst = 0;

	sync_route_load(r, bytes, load);
	for (size_t i = 0; i < n * n; i++) {
		double s;

		if (load[i] <= 0)
			continue;
		if (gbps == NULL || gbps[i] <= 0) {
			free(load);
			return -1;
		}
		s = load[i] * 8 / (gbps[i] * 1e9);
		if (s > worst)
			worst = s;
	}
	free(load);
	return worst;
}

size_t
sync_pick_part(const size_t *queued, size_t nparts, uint64_t seq)
{
	size_t best = (size_t)(seq % nparts);

	for (size_t k = 1; k < nparts; k++) {
		size_t p = (size_t)((seq + k) % nparts);

		if (queued[p] < queued[best])
			best = p;
	}
	return best;
}

char *
sync_fmt_bytes(double b)
{
	const char *u[] = { "B", "kB", "MB", "GB", "TB" };
	int k = 0;

	while (b >= 1000 && k < 4) {
		b /= 1000;
		k++;
	}
	return k == 0 ? xasprintf("%.0f %s", b, u[k]) : xasprintf("%.1f %s", b, u[k]);
}
