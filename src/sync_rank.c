/* SPDX-License-Identifier: MIT */
/*
 * One host's part of a sync (see sync_rank.h). Threads: one reader per
 * incoming connection (check, forward) and its storer (write into the
 * part), one writer per outgoing connection (a bounded queue of frames),
 * the source's reader of files, and one that waits for SIGTERM to save
 * what each part holds before the rank ends.
 *
 * The source's chunks are not copied: they are hashed where the file is
 * mapped and, on Linux, sent from the file by sendfile(2).
 */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/sendfile.h>
#endif
#ifndef MSG_MORE
#define MSG_MORE 0
#endif

#include "rt_io.h"
#include "sync_core.h"
#include "sync_rank.h"
#include "util.h"
#include "xxh.h"

#define QUEUE_MAX 16		/* frames waiting per outgoing connection */
#define MAP_EVERY 32		/* chunks between two saves of a part's map */
#define AHEAD 64		/* chunks a file's hash holds until the ones before come */

/* A source file mapped for reading, shared by the chunks that point into it. */
struct srcmap {
	int ref;
	int fd;
	unsigned char *base;
	size_t len;
};

struct payload {
	int ref;
	size_t len;
	unsigned char *data;	/* buf, or the chunk in src's mapping */
	struct srcmap *src;	/* NULL: the bytes are in buf */
	uint64_t off;		/* in src's file */
	unsigned char buf[];
};

struct item {
	unsigned char hdr[SYNC_HDR];
	struct payload *pl;	/* NULL: header only */
};

struct conn {
	int fd;
	int peer;		/* rank at the other end */
	bool dead;
	char *why;		/* when dead */
	struct item q[QUEUE_MAX];
	size_t qhead, qn;
	bool closing;		/* every part it carries is over: close after the queue */
	bool *carries;		/* per part */
	size_t pending;		/* parts it carries that are not over */
	pthread_cond_t cv;
	pthread_t th;
};

/*
 * A file's XXH3-128 taken from its chunks as they are stored, in order:
 * a chunk that comes early waits (a reference to its buffer) until the
 * ones before it are in; one too far ahead, or one an earlier run left, is
 * read back from the part when its turn comes. Then the whole file need
 * not be read again before its rename.
 */
struct fstream {
	pthread_mutex_t mu;
	XXH3_state_t *st;
	uint32_t next;		/* the chunk the hash takes next */
	struct {
		uint32_t chunk;
		struct payload *pl;
	} ahead[AHEAD];
};

struct fstate {
	bool need;		/* this host writes the file */
	unsigned char *have;	/* per chunk */
	uint32_t nchunks, nhave;
	bool hash_known, finishing, done, failed;
	struct sync_hash hash;
	int fd;			/* the part, -1 when not open */
	uint32_t since_map;
	char *why;		/* failed */
	struct fstream *hs;	/* made with the part, NULL after */
};

struct rk {
	const struct sync_rank_io *io;
	pthread_mutex_t mu;	/* everything below, and the events */
	pthread_cond_t cv;
	int rank;
	bool source;
	char *root;
	bool checksum, verify_sha256;
	double timeout;
	struct sync_tree tree;
	struct fstate *fs;
	int lfd;
	size_t nparts;
	/* children[p]: connections used for part p, per child: wires of it */
	struct conn *out;
	size_t nout;
	int **kids;		/* kids[p][k]: index in out of child k's first wire, -1 end */
	int **kidw;		/* kidw[p][k]: number of wires */
	size_t nin;
	int *parent;		/* per part: the upstream rank, -1 none */
	int *in_wires;		/* per part: connections from it */
	int *part_dones;	/* per part: DONE frames received */
	bool *part_over;
	uint64_t bytes_in, bytes_written, bytes_sent;
	uint64_t bad_chunks;
	json_t *upstream_lost;	/* [{rank, why}] */
	double last_progress;
	bool ended;
};

static void
emit(struct rk *R, json_t *ev)
{
	R->io->event(R->io->arg, ev);
	json_decref(ev);
}

/* ---- paths under the root ---- */

static char *
full_path(const struct rk *R, const char *rel)
{
	return xasprintf("%s/%s", R->root, rel);
}

static char *
side_path(const struct rk *R, const char *rel, const char *suffix)
{
	const char *slash = strrchr(rel, '/');

	if (slash == NULL)
		return xasprintf("%s/.%s%s", R->root, rel, suffix);
	return xasprintf("%s/%.*s/.%s%s", R->root, (int)(slash - rel), rel, slash + 1, suffix);
}

/*
 * Every folder on the way from the root to rel's folder is a real folder
 * (no link that would take a write elsewhere); the missing ones made.
 */
static int
safe_parent(const struct rk *R, const char *rel, bool make, struct jc_err *err)
{
	char *p = xstrdup(rel), *s;
	int rc = 0;

	for (s = strchr(p, '/'); s != NULL && rc == 0; s = strchr(s + 1, '/')) {
		struct stat st;
		char *f;

		*s = '\0';
		f = full_path(R, p);
		if (lstat(f, &st) == 0) {
			if (!S_ISDIR(st.st_mode))
				rc = jc_fail(err, -ENOTDIR, "%s: not a folder (a link or a file "
				    "where the tree has a folder): refused", f);
		} else if (errno == ENOENT && make) {
			if (mkdir(f, 0755) < 0 && errno != EEXIST)
				rc = jc_fail(err, -errno, "%s: %s", f, strerror(errno));
		} else if (errno != ENOENT) {
			rc = jc_fail(err, -errno, "%s: %s", f, strerror(errno));
		}
		free(f);
		*s = '/';
	}
	free(p);
	return rc;
}

/* ---- maps: the chunks a part holds ---- */

static char *
bits_hex(const unsigned char *b, uint32_t n)
{
	char *s = xmalloc(n / 4 + 2);
	uint32_t k = 0;

	for (uint32_t i = 0; i < n; i += 4) {
		unsigned v = 0;

		for (uint32_t j = 0; j < 4; j++)
			if (i + j < n && b[i + j])
				v |= 8u >> j;
		s[k++] = "0123456789abcdef"[v];
	}
	s[k] = '\0';
	return s;
}

static bool
hex_bits(const char *s, unsigned char *b, uint32_t n)
{
	if (strlen(s) != (n + 3) / 4)
		return false;
	for (uint32_t i = 0; i < n; i++) {
		char c = s[i / 4];
		unsigned v = (unsigned)(c >= 'a' ? c - 'a' + 10 : c - '0');

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
			return false;
		b[i] = (v & (8u >> (i % 4))) != 0;
	}
	return true;
}

/* Save f's map after its data is on disk; caller holds no lock on the data. */
static void
save_map(struct rk *R, size_t i)
{
	const struct sync_entry *e = &R->tree.v[i];
	struct fstate *f = &R->fs[i];
	char *path, *hex, *txt;

	if (f->fd < 0 || f->done)
		return;
	fdatasync(f->fd);
	path = side_path(R, e->path, SYNC_MAP_SUFFIX);
	hex = bits_hex(f->have, f->nchunks);
	txt = xasprintf("JCSYNC1 %llu %lld %u\n%s\n", (unsigned long long)e->size,
	    (long long)e->mtime_ns, f->nchunks, hex);
	jc_write_atomic(path, txt, strlen(txt), 0600, NULL);
	free(txt);
	free(hex);
	free(path);
}

/*
 * The temporary files of a manifest or map whose writer was killed before
 * its rename (jc_write_atomic_temp), in folder dir: removed.
 */
static void
sweep_temps(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	size_t m = strlen(SYNC_MAP_SUFFIX), k;

	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		const char *n = de->d_name;

		if (!jc_write_atomic_temp(n, &k))
			continue;
		/* what it was written for: ".jcsync-manifest", or ".NAME.jcsync-map" */
		if ((k == strlen(SYNC_MANIFEST) && memcmp(n + 1, SYNC_MANIFEST, k) == 0) ||
		    (k > m + 1 && n[1] == '.' && memcmp(n + 1 + k - m, SYNC_MAP_SUFFIX, m) == 0))
			(void)unlinkat(dirfd(d), n, 0);
	}
	closedir(d);
}

/* What an earlier run left of file i: its chunks, or none (stale parts removed). */
static void
load_map(struct rk *R, size_t i)
{
	const struct sync_entry *e = &R->tree.v[i];
	struct fstate *f = &R->fs[i];
	char *mp = side_path(R, e->path, SYNC_MAP_SUFFIX), *pp = side_path(R, e->path,
	    SYNC_PART_SUFFIX), *txt = NULL, hex[1 << 16];
	unsigned long long size;
	long long mtime;
	unsigned nch;
	size_t len;
	struct stat st;
	bool good = false, part = lstat(pp, &st) == 0;

	if (part && S_ISREG(st.st_mode) && jc_read_file(mp, 1 << 17, &txt, &len, NULL) == 0 &&
	    sscanf(txt, "JCSYNC1 %llu %lld %u\n%65535s", &size, &mtime, &nch, hex) == 4 &&
	    size == e->size && mtime == e->mtime_ns && nch == f->nchunks &&
	    hex_bits(hex, f->have, f->nchunks))
		good = true;
	if (part) {
		/* an interrupted file: a map its rank was killed writing goes (no link on the way) */
		struct jc_err pe = { 0 };
		char *dir = xstrndup(pp, (size_t)(strrchr(pp, '/') - pp));

		if (safe_parent(R, e->path, false, &pe) == 0)
			sweep_temps(dir);
		free(dir);
	}
	if (!good) {
		/* a part of another version of the file: its bytes, even past this one's end, go */
		memset(f->have, 0, f->nchunks);
		unlink(mp);
		unlink(pp);
	}
	f->nhave = 0;
	for (uint32_t c = 0; c < f->nchunks; c++)
		f->nhave += f->have[c];
	free(txt);
	free(mp);
	free(pp);
}

static uint64_t
chunk_len(const struct sync_entry *e, uint32_t c)
{
	uint64_t off = (uint64_t)c * SYNC_CHUNK;

	return e->size - off < SYNC_CHUNK ? e->size - off : SYNC_CHUNK;
}

/* ---- the destination's side of the hello ---- */

static uint64_t
free_bytes(const char *root, bool *writable)
{
	char *p = xstrdup(root);
	struct statvfs sv;
	uint64_t fr = 0;

	*writable = false;
	for (;;) {
		struct stat st;

		if (stat(p, &st) == 0) {
			if (statvfs(p, &sv) == 0)
				fr = (uint64_t)sv.f_bavail * sv.f_frsize;
			*writable = S_ISDIR(st.st_mode) && access(p, W_OK | X_OK) == 0;
			break;
		}
		char *s = strrchr(p, '/');

		if (s == NULL || s == p) {
			if (statvfs(s == p ? "/" : ".", &sv) == 0)
				fr = (uint64_t)sv.f_bavail * sv.f_frsize;
			*writable = access(s == p ? "/" : ".", W_OK | X_OK) == 0;
			break;
		}
		*s = '\0';
	}
	free(p);
	return fr;
}

static json_t *
addrs_json(void)
{
	struct ifaddrs *ifa, *i;
	json_t *o = json_object();

	if (getifaddrs(&ifa) < 0)
		return o;
	for (i = ifa; i != NULL; i = i->ifa_next) {
		char a[INET_ADDRSTRLEN];

		if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET)
			continue;
		inet_ntop(AF_INET, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, a, sizeof(a));
		if (json_object_get(o, i->ifa_name) == NULL)
			json_object_set_new(o, i->ifa_name, json_string(a));
	}
	freeifaddrs(ifa);
	return o;
}

static int
open_listener(int *port, struct jc_err *err)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return jc_fail(err, -errno, "socket: %s", strerror(errno));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(fd, 64) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
		int rc = jc_fail(err, -errno, "listen: %s", strerror(errno));

		close(fd);
		return rc;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

/* Hash the files of d that could match the tree (same size) for --checksum. */
static void
hash_candidates(const struct rk *R, struct sync_tree *d)
{
	for (size_t i = 0; i < d->n; i++) {
		struct sync_entry *e = &d->v[i];
		const struct sync_entry *s = sync_tree_find(&R->tree, e->path);
		char *p;
		int fd;

		if (e->type != SYNC_FILE || s == NULL || s->type != SYNC_FILE || s->size != e->size)
			continue;
		p = full_path(R, e->path);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && sync_hash_fd(fd, &e->hash) == 0)
			e->hashed = true;
		if (fd >= 0)
			close(fd);
		free(p);
	}
}

static json_t *
dest_hello(struct rk *R)
{
	struct sync_tree d = { 0 };
	struct jc_err e2 = { 0 };
	json_t *need = json_object(), *h;
	uint64_t bytes = 0, fr;
	bool writable, exists;
	struct stat st;

	exists = stat(R->root, &st) == 0 && S_ISDIR(st.st_mode);
	if (exists)
		sweep_temps(R->root);
	if (exists && sync_tree_scan(R->root, false, &d, &e2) < 0)
		memset(&d, 0, sizeof(d));
	if (R->checksum)
		hash_candidates(R, &d);
	R->fs = xcalloc(R->tree.n ? R->tree.n : 1, sizeof(*R->fs));
	for (size_t i = 0; i < R->tree.n; i++) {
		const struct sync_entry *s = &R->tree.v[i];
		struct fstate *f = &R->fs[i];
		char key[24];

		f->fd = -1;
		if (s->type != SYNC_FILE || sync_entry_same(s, sync_tree_find(&d, s->path),
		    R->checksum))
			continue;
		f->need = true;
		f->nchunks = sync_nchunks(s->size);
		f->have = xcalloc(f->nchunks ? f->nchunks : 1, 1);
		if (f->nchunks > 0)
			load_map(R, i);
		snprintf(key, sizeof(key), "%zu", i);
		if (f->nhave == 0) {
			json_object_set_new(need, key, json_string("all"));
			bytes += s->size;
		} else {
			unsigned char *miss = xcalloc(f->nchunks, 1);
			char *hx;

			for (uint32_t c = 0; c < f->nchunks; c++) {
				miss[c] = !f->have[c];
				if (miss[c])
					bytes += chunk_len(s, c);
			}
			hx = bits_hex(miss, f->nchunks);
			json_object_set_new(need, key, json_string(hx));
			free(hx);
			free(miss);
		}
	}
	fr = free_bytes(R->root, &writable);
	h = json_pack("{s:s,s:o,s:I,s:I,s:b,s:b}", "ev", "hello", "need", need,
	    "bytes_needed", (json_int_t)bytes, "free", (json_int_t)fr, "writable", writable,
	    "exists", exists);
	sync_tree_free(&d);
	return h;
}

/* ---- outgoing connections ---- */

/*
 * Chunk buffers are kept for reuse: a fresh 1 MiB from malloc is a fresh
 * mapping, and its page faults cost more than the copy itself.
 */
#define POOL_MAX 64

static struct payload *pool[POOL_MAX];
static size_t npool;
static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;

static struct payload *
pl_new(size_t len)
{
	struct payload *p = NULL;

	pthread_mutex_lock(&pool_mu);
	if (npool > 0)
		p = pool[--npool];
	pthread_mutex_unlock(&pool_mu);
	if (p == NULL)
		p = xmalloc(sizeof(*p) + SYNC_CHUNK);
	p->ref = 1;
	p->len = len;
	p->data = p->buf;
	p->src = NULL;
	return p;
}

static void
srcmap_unref(struct srcmap *m)
{
	if (m == NULL || __atomic_sub_fetch(&m->ref, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	munmap(m->base, m->len);
	close(m->fd);
	free(m);
}

/* The chunk at off of the mapped file m: no copy. */
static struct payload *
pl_mapped(struct srcmap *m, uint64_t off, size_t len)
{
	struct payload *p = xmalloc(sizeof(*p));

	__atomic_add_fetch(&m->ref, 1, __ATOMIC_ACQ_REL);
	p->ref = 1;
	p->len = len;
	p->data = m->base + off;
	p->src = m;
	p->off = off;
	return p;
}

static void
pl_ref(struct payload *p)
{
	__atomic_add_fetch(&p->ref, 1, __ATOMIC_ACQ_REL);
}

static void
pl_unref(struct payload *p)
{
	if (p == NULL || __atomic_sub_fetch(&p->ref, 1, __ATOMIC_ACQ_REL) != 0)
		return;
	if (p->src != NULL) {
		srcmap_unref(p->src);
		free(p);
		return;
	}
	pthread_mutex_lock(&pool_mu);
	if (npool < POOL_MAX) {
		pool[npool++] = p;
		p = NULL;
	}
	pthread_mutex_unlock(&pool_mu);
	free(p);
}

static void
pool_drain(void)
{
	pthread_mutex_lock(&pool_mu);
	while (npool > 0)
		free(pool[--npool]);
	pthread_mutex_unlock(&pool_mu);
}

static void
conn_kill(struct rk *R, struct conn *c, const char *why)
{
	/* R->mu held */
	if (!c->dead) {
		c->dead = true;
		c->why = xstrdup(why);
		emit(R, json_pack("{s:s,s:i,s:s}", "ev", "child-lost", "rank", c->peer, "why", why));
	}
	while (c->qn > 0) {
		pl_unref(c->q[c->qhead].pl);
		c->qhead = (c->qhead + 1) % QUEUE_MAX;
		c->qn--;
	}
	pthread_cond_broadcast(&c->cv);
}

struct wctx {
	struct rk *R;
	struct conn *c;
};

/*
 * A mapped chunk, sent from its file by the kernel without a copy
 * through this process (elsewhere than Linux: written from the mapping).
 * A file that shrank since its chunk was hashed ends early: zeros keep
 * the frame whole, and the chunk fails its check where it arrives.
 */
static int
send_mapped(int fd, const struct payload *pl, double deadline)
{
	static const unsigned char zeros[4096];
	size_t left = pl->len;
#ifdef __linux__
	off_t off = (off_t)pl->off;

	while (left > 0) {
		ssize_t n;
		int r;

		if ((r = rt_io_wait(fd, POLLOUT, deadline)) <= 0)
			return r == 0 ? -ETIMEDOUT : r;
		n = sendfile(fd, pl->src->fd, &off, left);
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n < 0)
			return errno == ECONNRESET || errno == EPIPE ? -EPIPE : -errno;
		if (n == 0)
			break;
		left -= (size_t)n;
	}
#else
	struct stat st;

	/* a write from past the end of a shrunk file would fault */
	if (fstat(pl->src->fd, &st) == 0 && (uint64_t)st.st_size >= pl->off + pl->len) {
		int r = rt_io_write_all(fd, pl->data, left, deadline);

		if (r < 0)
			return r;
		left = 0;
	}
#endif
	while (left > 0) {
		size_t n = left < sizeof(zeros) ? left : sizeof(zeros);
		int r = rt_io_write_all(fd, zeros, n, deadline);

		if (r < 0)
			return r;
		left -= n;
	}
	return 0;
}

/*
 * A frame: its header, then its payload, if any. The header goes with
 * the payload's first bytes (no segment of 40 bytes alone on the cable).
 */
static int
send_frame(int fd, const unsigned char *hdr, const struct payload *pl, double deadline)
{
	struct iovec v[2] = { { (void *)hdr, SYNC_HDR }, { NULL, 0 } };
	ssize_t w;
	int r;

	if (pl == NULL || pl->src == NULL) {
		if (pl != NULL)
			v[1] = (struct iovec){ pl->data, pl->len };
		return rt_io_writev_all(fd, v, pl != NULL ? 2 : 1, deadline);
	}
	/* a mapped chunk follows its header from the file: the kernel holds the header */
	w = send(fd, hdr, SYNC_HDR, MSG_MORE);
	if (w < 0)
		w = 0;		/* the rest, and its error, by rt_io_write_all */
	if (w < SYNC_HDR && (r = rt_io_write_all(fd, hdr + w, SYNC_HDR - (size_t)w, deadline)) < 0)
		return r;
	return send_mapped(fd, pl, deadline);
}

static void *
writer_main(void *arg)
{
	struct wctx *w = arg;
	struct rk *R = w->R;
	struct conn *c = w->c;
	unsigned char hdr[SYNC_HDR];
	struct sync_frame hf = { .type = SYNC_F_HELLO, .file = (uint32_t)R->rank };

	free(w);
	sync_frame_encode(&hf, hdr);
	if (rt_io_write_all(c->fd, hdr, SYNC_HDR, jc_now() + R->timeout) < 0) {
		pthread_mutex_lock(&R->mu);
		conn_kill(R, c, "the connection broke");
		pthread_mutex_unlock(&R->mu);
	}
	for (;;) {
		struct item it;
		int rc;

		pthread_mutex_lock(&R->mu);
		while (c->qn == 0 && !c->closing && !c->dead) {
			/*
			 * Nothing to send for a third of the timeout: a keepalive, so
			 * a host waiting on a slow or lost upstream does not look lost
			 * to the hosts after it; only a dead cable goes quiet.
			 */
			struct timespec ts;
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_sec += (time_t)(R->timeout / 3);
			ts.tv_nsec += (long)((R->timeout / 3 - (double)(time_t)(R->timeout / 3)) * 1e9);
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			if (pthread_cond_timedwait(&c->cv, &R->mu, &ts) == ETIMEDOUT && c->qn == 0 &&
			    !c->closing && !c->dead) {
				pthread_mutex_unlock(&R->mu);
				if (rt_io_write_all(c->fd, hdr, SYNC_HDR, jc_now() + R->timeout) < 0) {
					pthread_mutex_lock(&R->mu);
					conn_kill(R, c, "nothing moved within the timeout");
				} else {
					pthread_mutex_lock(&R->mu);
				}
			}
		}
		if (c->dead || (c->qn == 0 && c->closing)) {
			bool dead = c->dead;

			pthread_mutex_unlock(&R->mu);
			if (!dead) {
				char b;

				/* wait for the other end to close: everything arrived */
				shutdown(c->fd, SHUT_WR);
				rt_io_wait(c->fd, POLLIN, jc_now() + R->timeout);
				(void)!read(c->fd, &b, 1);
			}
			return NULL;
		}
		it = c->q[c->qhead];
		c->qhead = (c->qhead + 1) % QUEUE_MAX;
		c->qn--;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&R->mu);
		rc = send_frame(c->fd, it.hdr, it.pl, jc_now() + R->timeout);
		if (rc == 0 && it.pl != NULL) {
			pthread_mutex_lock(&R->mu);
			R->bytes_sent += it.pl->len;
			pthread_mutex_unlock(&R->mu);
		}
		pl_unref(it.pl);
		if (rc < 0) {
			pthread_mutex_lock(&R->mu);
			conn_kill(R, c, rc == -ETIMEDOUT ? "nothing moved within the timeout" :
			    "the connection broke");
			pthread_mutex_unlock(&R->mu);
		}
	}
}

/* Queue a frame on connection c (blocks while its queue is full); R->mu held. */
static void
push_locked(struct rk *R, struct conn *c, const unsigned char *hdr, struct payload *pl)
{
	while (c->qn == QUEUE_MAX && !c->dead)
		pthread_cond_wait(&c->cv, &R->mu);
	if (!c->dead) {
		struct item *it = &c->q[(c->qhead + c->qn) % QUEUE_MAX];

		memcpy(it->hdr, hdr, SYNC_HDR);
		if (pl != NULL)
			pl_ref(pl);
		it->pl = pl;
		c->qn++;
		pthread_cond_broadcast(&c->cv);
	}
}

static void
push(struct rk *R, struct conn *c, const unsigned char *hdr, struct payload *pl)
{
	pthread_mutex_lock(&R->mu);
	push_locked(R, c, hdr, pl);
	pthread_mutex_unlock(&R->mu);
}

/*
 * Part p is over here (R->mu held): say so on every connection that
 * carries it; a connection with all its parts over closes.
 */
static void
part_over(struct rk *R, size_t p)
{
	unsigned char hdr[SYNC_HDR];
	struct sync_frame f = { .type = SYNC_F_DONE, .part = (uint16_t)p };

	if (p >= R->nparts || R->part_over[p])
		return;
	R->part_over[p] = true;
	sync_frame_encode(&f, hdr);
	for (int k = 0; R->kids[p][k] >= 0; k++)
		for (int w = 0; w < R->kidw[p][k]; w++) {
			struct conn *c = &R->out[R->kids[p][k] + w];

			push_locked(R, c, hdr, NULL);
			if (c->pending > 0 && --c->pending == 0) {
				c->closing = true;
				pthread_cond_broadcast(&c->cv);
			}
		}
	pthread_cond_broadcast(&R->cv);
}

/* Send a frame to every child of part p (one wire of each, by chunk). */
static void
forward(struct rk *R, const struct sync_frame *f, struct payload *pl)
{
	unsigned char hdr[SYNC_HDR];
	size_t p = f->part;

	if (p >= R->nparts)
		return;
	sync_frame_encode(f, hdr);
	for (int k = 0; R->kids[p][k] >= 0; k++) {
		int w = R->kidw[p][k];

		push(R, &R->out[R->kids[p][k] + (int)(f->chunk % (uint32_t)w)], hdr, pl);
	}
}

/* ---- receiving ---- */

static void
file_fail(struct rk *R, size_t i, const char *why)
{
	/* R->mu held */
	struct fstate *f = &R->fs[i];

	f->failed = true;
	free(f->why);
	f->why = xstrdup(why);
	emit(R, json_pack("{s:s,s:s,s:b,s:s}", "ev", "file", "path", R->tree.v[i].path,
	    "ok", 0, "why", why));
}

static bool
sha_name_ok(const char *path, const char *hex)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return strcmp(b, hex) == 0;
}

/* ---- a file's hash, taken as its chunks are stored ---- */

static struct fstream *
fstream_new(void)
{
	struct fstream *h = xcalloc(1, sizeof(*h));

	pthread_mutex_init(&h->mu, NULL);
	h->st = XXH3_createState();
	XXH3_128bits_reset(h->st);
	return h;
}

static void
fstream_free(struct fstream *h)
{
	if (h == NULL)
		return;
	for (size_t k = 0; k < AHEAD; k++)
		pl_unref(h->ahead[k].pl);
	XXH3_freeState(h->st);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

/*
 * Take in order every chunk that can be taken (h->mu held): the one
 * waiting in its slot, else one already in the part (its data written
 * before its bit was set). Returns -1 when a read of the part fails.
 */
static int
fstream_advance(struct rk *R, size_t i, struct fstream *h, int fd)
{
	const struct sync_entry *e = &R->tree.v[i];
	struct fstate *f = &R->fs[i];

	while (h->next < f->nchunks) {
		size_t slot = h->next % AHEAD;
		struct payload *pl = h->ahead[slot].pl;
		bool have;

		if (pl != NULL && h->ahead[slot].chunk == h->next) {
			h->ahead[slot].pl = NULL;
		} else {
			pthread_mutex_lock(&R->mu);
			have = f->have[h->next];
			pthread_mutex_unlock(&R->mu);
			if (!have)
				return 0;
			pl = pl_new(chunk_len(e, h->next));
			if (pread(fd, pl->data, pl->len, (off_t)h->next * SYNC_CHUNK) !=
			    (ssize_t)pl->len) {
				pl_unref(pl);
				return -1;
			}
		}
		XXH3_128bits_update(h->st, pl->data, pl->len);
		pl_unref(pl);
		h->next++;
	}
	return 0;
}

/* Chunk c of file i is in its part: give it to the file's hash. */
static void
fstream_feed(struct rk *R, size_t i, int fd, uint32_t c, struct payload *pl)
{
	struct fstream *h = R->fs[i].hs;
	size_t slot = c % AHEAD;

	if (h == NULL)
		return;
	pthread_mutex_lock(&h->mu);
	if (c >= h->next && c - h->next < AHEAD && h->ahead[slot].pl == NULL) {
		pl_ref(pl);
		h->ahead[slot].chunk = c;
		h->ahead[slot].pl = pl;
	}
	/* a failed read leaves the chunks to the whole file's read at the end */
	if (h->next != UINT32_MAX && fstream_advance(R, i, h, fd) < 0)
		h->next = UINT32_MAX;
	pthread_mutex_unlock(&h->mu);
}

/*
 * The file's hash from its stream, once every chunk is in (the last read
 * back from the part if they waited there); false when it has none.
 */
static bool
fstream_digest(struct rk *R, size_t i, int fd, struct sync_hash *out)
{
	struct fstream *h = R->fs[i].hs;
	bool ok = false;

	if (h == NULL)
		return false;
	pthread_mutex_lock(&h->mu);
	if (h->next != UINT32_MAX && fstream_advance(R, i, h, fd) == 0 &&
	    h->next == R->fs[i].nchunks) {
		XXH128_hash_t d = XXH3_128bits_digest(h->st);

		*out = (struct sync_hash){ d.high64, d.low64 };
		ok = true;
	}
	pthread_mutex_unlock(&h->mu);
	return ok;
}

/* The whole file is there: check it, give it its mode, mtime and final name. */
static void
finish_file(struct rk *R, size_t i)
{
	const struct sync_entry *e = &R->tree.v[i];
	struct fstate *f = &R->fs[i];
	struct sync_hash h = { 0 };
	char *part = side_path(R, e->path, SYNC_PART_SUFFIX), *map = side_path(R, e->path,
	    SYNC_MAP_SUFFIX), *fin = full_path(R, e->path), why[1100] = "";
	struct timespec ts[2];
	int fd = f->fd;

	if (fd < 0) {
		/* a file of 0 bytes */
		struct jc_err pe = { 0 };

		if (safe_parent(R, e->path, false, &pe) < 0)
			snprintf(why, sizeof(why), "%s", pe.msg);
		else if ((fd = open(part, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		    0600)) < 0)
			snprintf(why, sizeof(why), "%s: %s", part, strerror(errno));
	}
	/* the part holds this file's bytes and no more */
	if (!*why && (ftruncate(fd, (off_t)e->size) < 0 || fdatasync(fd) < 0 ||
	    (!fstream_digest(R, i, fd, &h) && sync_hash_fd(fd, &h) < 0)))
		snprintf(why, sizeof(why), "%s: %s", part, strerror(errno));
	if (!*why && !sync_hash_eq(h, f->hash))
		snprintf(why, sizeof(why), "the file's XXH3-128 is not the source's: "
		    "sent again on the next run");
	if (!*why && R->verify_sha256) {
		const char *b = strrchr(e->path, '/');
		char sha[65];

		b = b ? b + 1 : e->path;
		if (strlen(b) == 64 && strspn(b, "0123456789abcdef") == 64 &&
		    (sync_sha256_fd(fd, sha) < 0 || !sha_name_ok(e->path, sha)))
			snprintf(why, sizeof(why), "its SHA-256 is %s, not its name", sha);
	}
	if (!*why) {
		ts[0].tv_sec = e->mtime_ns / 1000000000;
		ts[0].tv_nsec = e->mtime_ns % 1000000000;
		ts[1] = ts[0];
		if (fchmod(fd, e->mode & 07777) < 0 || futimens(fd, ts) < 0 || fsync(fd) < 0 ||
		    rename(part, fin) < 0)
			snprintf(why, sizeof(why), "%s: %s", fin, strerror(errno));
	}
	if (fd >= 0)
		close(fd);
	f->fd = -1;
	fstream_free(f->hs);
	f->hs = NULL;
	unlink(map);
	pthread_mutex_lock(&R->mu);
	if (*why) {
		unlink(part);
		memset(f->have, 0, f->nchunks);
		f->nhave = 0;
		file_fail(R, i, why);
	} else {
		f->done = true;
		emit(R, json_pack("{s:s,s:s,s:b}", "ev", "file", "path", e->path, "ok", 1));
	}
	pthread_mutex_unlock(&R->mu);
	free(part);
	free(map);
	free(fin);
}

/* R->mu held: whether file i just became whole (then it is ours to finish). */
static bool
take_finish(struct rk *R, size_t i)
{
	struct fstate *f = &R->fs[i];

	if (!f->need || f->done || f->failed || f->finishing || !f->hash_known ||
	    f->nhave < f->nchunks)
		return false;
	f->finishing = true;
	return true;
}

static int
store_chunk(struct rk *R, const struct sync_frame *fr, struct payload *pl)
{
	const struct sync_entry *e = &R->tree.v[fr->file];
	struct fstate *f = &R->fs[fr->file];
	bool save = false, fin;
	int fd;

	pthread_mutex_lock(&R->mu);
	if (!f->need || f->done || f->failed || f->have[fr->chunk]) {
		pthread_mutex_unlock(&R->mu);
		return 0;
	}
	if (f->fd < 0) {
		char *part = side_path(R, e->path, SYNC_PART_SUFFIX);
		struct jc_err pe = { 0 };

		/* no link on the way takes the write out of the destination */
		if (safe_parent(R, e->path, false, &pe) < 0) {
			file_fail(R, fr->file, pe.msg);
		} else {
			f->fd = open(part, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
			if (f->fd < 0)
				file_fail(R, fr->file, strerror(errno));
			else
				f->hs = fstream_new();
		}
		free(part);
	}
	fd = f->fd;
	pthread_mutex_unlock(&R->mu);
	if (fd < 0)
		return 0;
	if (pwrite(fd, pl->data, pl->len, (off_t)fr->chunk * SYNC_CHUNK) != (ssize_t)pl->len) {
		pthread_mutex_lock(&R->mu);
		file_fail(R, fr->file, strerror(errno ? errno : EIO));
		pthread_mutex_unlock(&R->mu);
		return 0;
	}
	/* before its bit is set: the hash has every chunk when the file is whole */
	fstream_feed(R, fr->file, fd, fr->chunk, pl);
	pthread_mutex_lock(&R->mu);
	if (!f->have[fr->chunk]) {
		f->have[fr->chunk] = 1;
		f->nhave++;
		R->bytes_written += pl->len;
		if (++f->since_map >= MAP_EVERY) {
			f->since_map = 0;
			save = true;
		}
	}
	fin = take_finish(R, fr->file);
	if (save && !fin)
		save_map(R, fr->file);
	pthread_mutex_unlock(&R->mu);
	if (fin)
		finish_file(R, fr->file);
	return 0;
}

static void
upstream_lost(struct rk *R, const char *why)
{
	pthread_mutex_lock(&R->mu);
	json_array_append_new(R->upstream_lost, json_string(why));
	emit(R, json_pack("{s:s,s:s}", "ev", "upstream-lost", "why", why));
	pthread_mutex_unlock(&R->mu);
}

struct rctx {
	struct rk *R;
	int fd;
};

/*
 * The chunks a reader took in, stored by a thread of their own: the
 * write into the part (the costliest step on a host) runs beside the next
 * read from the cable instead of after it.
 */
#define STORE_MAX 8

struct storer {
	struct rk *R;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct {
		struct sync_frame f;
		struct payload *pl;
	} q[STORE_MAX];
	size_t head, n;
	bool end;
	pthread_t th;
};

static void *
storer_main(void *arg)
{
	struct storer *s = arg;

	for (;;) {
		struct sync_frame f;
		struct payload *pl;

		pthread_mutex_lock(&s->mu);
		while (s->n == 0 && !s->end)
			pthread_cond_wait(&s->cv, &s->mu);
		if (s->n == 0) {
			pthread_mutex_unlock(&s->mu);
			return NULL;
		}
		f = s->q[s->head].f;
		pl = s->q[s->head].pl;
		s->head = (s->head + 1) % STORE_MAX;
		s->n--;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		store_chunk(s->R, &f, pl);
		pl_unref(pl);
	}
}

/* Hand chunk f (the caller's reference to pl) to the storer; blocks while it is full. */
static void
storer_push(struct storer *s, const struct sync_frame *f, struct payload *pl)
{
	pthread_mutex_lock(&s->mu);
	while (s->n == STORE_MAX)
		pthread_cond_wait(&s->cv, &s->mu);
	s->q[(s->head + s->n) % STORE_MAX].f = *f;
	s->q[(s->head + s->n) % STORE_MAX].pl = pl;
	s->n++;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

/* Every chunk handed over is stored: the storer ends. */
static void
storer_end(struct storer *s)
{
	pthread_mutex_lock(&s->mu);
	s->end = true;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
	pthread_join(s->th, NULL);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
}

static void *
reader_main(void *arg)
{
	struct rctx *x = arg;
	struct rk *R = x->R;
	int fd = x->fd, from = -1;
	bool any_done = false;
	char peer[64] = "?";
	struct sockaddr_in a;
	socklen_t al = sizeof(a);
	struct storer st = { .R = R };

	free(x);
	pthread_mutex_init(&st.mu, NULL);
	pthread_cond_init(&st.cv, NULL);
	pthread_create(&st.th, NULL, storer_main, &st);
	if (getpeername(fd, (struct sockaddr *)&a, &al) == 0)
		inet_ntop(AF_INET, &a.sin_addr, peer, sizeof(peer));
	for (;;) {
		unsigned char hdr[SYNC_HDR];
		struct sync_frame f;
		struct payload *pl = NULL;
		int rc = rt_io_read_all(fd, hdr, SYNC_HDR, jc_now() + R->timeout);

		if (rc == 0 && sync_frame_decode(hdr, &f) < 0)
			rc = -EPROTO;
		if (rc == 0 && f.type != SYNC_F_DONE && f.type != SYNC_F_HELLO && (f.file >= R->tree.n ||
		    R->tree.v[f.file].type != SYNC_FILE ||
		    (f.type == SYNC_F_CHUNK && (f.chunk >= sync_nchunks(R->tree.v[f.file].size) ||
		    f.len != chunk_len(&R->tree.v[f.file], f.chunk)))))
			rc = -EPROTO;
		if (rc == 0 && f.type == SYNC_F_CHUNK) {
			pl = pl_new(f.len);
			rc = rt_io_read_all(fd, pl->data, f.len, jc_now() + R->timeout);
		}
		if (rc == -EPIPE && any_done)
			break;		/* closed after its parts were over */
		if (rc < 0) {
			char *why = xasprintf("from %s: %s", peer, rc == -ETIMEDOUT ?
			    "nothing arrived within the timeout" : rc == -EPROTO ?
			    "a frame that is not sync's" : "the connection broke");

			upstream_lost(R, why);
			free(why);
			pl_unref(pl);
			/* what it carried will not come: the hosts after this one stop waiting */
			pthread_mutex_lock(&R->mu);
			for (size_t p = 0; p < R->nparts; p++)
				if (from < 0 || R->parent[p] == from)
					part_over(R, p);
			pthread_mutex_unlock(&R->mu);
			break;
		}
		if (f.type == SYNC_F_HELLO) {
			from = (int)f.file;
			continue;
		}
		if (f.type == SYNC_F_DONE) {
			any_done = true;
			pthread_mutex_lock(&R->mu);
			if (f.part < R->nparts && ++R->part_dones[f.part] >= R->in_wires[f.part])
				part_over(R, f.part);
			pthread_mutex_unlock(&R->mu);
			continue;
		}
		if (f.type == SYNC_F_FEND) {
			bool fin;

			pthread_mutex_lock(&R->mu);
			R->fs[f.file].hash = f.hash;
			R->fs[f.file].hash_known = true;
			fin = take_finish(R, f.file);
			pthread_mutex_unlock(&R->mu);
			forward(R, &f, NULL);
			if (fin)
				finish_file(R, f.file);
			continue;
		}
		pthread_mutex_lock(&R->mu);
		R->bytes_in += f.len;
		pthread_mutex_unlock(&R->mu);
		if (!sync_hash_eq(sync_hash_buf(pl->data, pl->len), f.hash)) {
			/* dropped: this host and the ones after it get it on the next run */
			pthread_mutex_lock(&R->mu);
			R->bad_chunks++;
			emit(R, json_pack("{s:s,s:s,s:i}", "ev", "bad-chunk", "path",
			    R->tree.v[f.file].path, "chunk", (int)f.chunk));
			pthread_mutex_unlock(&R->mu);
			pl_unref(pl);
			continue;
		}
		forward(R, &f, pl);
		storer_push(&st, &f, pl);
	}
	storer_end(&st);
	close(fd);
	return NULL;
}

/* ---- the source ---- */

static long
env_long(const char *name)
{
	const char *v = getenv(name);
	long n;

	return v != NULL && jc_parse_int(v, 0, 1L << 40, &n) ? n : -1;
}

static void
hold(const char *spec)
{
	const char *colon = strchr(spec, ':');
	char *ack;
	FILE *fp;
	char line[64];

	if (colon == NULL)
		return;
	if ((fp = fopen(colon + 1, "w")) != NULL) {
		fputs("held\n", fp);
		fclose(fp);
	}
	ack = xasprintf("%s.ack", colon + 1);
	if ((fp = fopen(ack, "r")) != NULL) {
		(void)!fgets(line, sizeof(line), fp);
		fclose(fp);
	}
	free(ack);
}

/*
 * A source file shrunk while it is mapped: reading past its new end
 * raises SIGBUS. The thread that hashes the chunks catches it and reports
 * the file as changed, as a short read would.
 */
static __thread sigjmp_buf *bus_jmp;

static void
on_sigbus(int sig)
{
	if (bus_jmp != NULL)
		siglongjmp(*bus_jmp, 1);
	/* not ours: the fault again, fatal this time */
	signal(sig, SIG_DFL);
}

/* The chunk's hash (and st updated, when not NULL); -1 when its mapping faulted. */
static int
hash_chunk(const unsigned char *p, size_t n, XXH3_state_t *st, struct sync_hash *out)
{
	sigjmp_buf jb;

	if (sigsetjmp(jb, 1) != 0) {
		bus_jmp = NULL;
		return -1;
	}
	bus_jmp = &jb;
	if (st != NULL)
		XXH3_128bits_update(st, p, n);
	*out = sync_hash_buf(p, n);
	bus_jmp = NULL;
	return 0;
}

/* File fd of size bytes mapped for reading (it owns fd), or NULL. */
static struct srcmap *
srcmap_open(int fd, uint64_t size)
{
	struct srcmap *m;
	void *b;

	if (size == 0 || size > SIZE_MAX)
		return NULL;
	b = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	if (b == MAP_FAILED)
		return NULL;
	m = xmalloc(sizeof(*m));
	m->ref = 1;
	m->fd = fd;
	m->base = b;
	m->len = (size_t)size;
	return m;
}

/* The part for the source's next chunk (sync_pick_part), by its first hops' queues. */
static uint16_t
pick_part(struct rk *R, uint64_t seq)
{
	size_t q[SYNC_MAX_HOSTS];

	pthread_mutex_lock(&R->mu);
	for (size_t p = 0; p < R->nparts; p++) {
		q[p] = 0;
		for (int j = 0; R->kids[p][j] >= 0; j++)
			for (int w = 0; w < R->kidw[p][j]; w++) {
				const struct conn *c = &R->out[R->kids[p][j] + w];

				if (c->dead)
					q[p] = SIZE_MAX;
				else if (c->qn > q[p])
					q[p] = c->qn;
			}
	}
	pthread_mutex_unlock(&R->mu);
	return (uint16_t)sync_pick_part(q, R->nparts, seq);
}

/* Done with a source file: its map lets go of it when its last chunk is sent. */
static void
src_close(struct srcmap *m, int fd)
{
	if (m != NULL)
		srcmap_unref(m);
	else
		close(fd);
}

static int
send_all(struct rk *R, json_t *send, struct jc_err *err)
{
	long corrupt = env_long("JACCL_SYNC_CORRUPT"), stop = env_long("JACCL_SYNC_STOP_AFTER");
	const char *hs = getenv("JACCL_SYNC_HOLD");
	long held = -1;
	uint64_t seq = 0;
	json_t *v;

	(void)err;
	if (hs != NULL) {
		char *n = xstrndup(hs, strcspn(hs, ":"));

		if (!jc_parse_int(n, 0, 1L << 40, &held))
			held = -1;
		free(n);
	}
	for (size_t i = 0; i < R->tree.n; i++) {
		const struct sync_entry *e = &R->tree.v[i];
		uint32_t nch = sync_nchunks(e->size);
		unsigned char *want;
		char k[24], *path;
		const char *spec;
		struct sync_hash fh;
		struct sync_frame fe = { .type = SYNC_F_FEND };
		XXH3_state_t *st = NULL;
		struct srcmap *m = NULL;
		int fd;
		bool all, short_read = false;

		snprintf(k, sizeof(k), "%zu", i);
		v = json_object_get(send, k);
		if (v == NULL || e->type != SYNC_FILE)
			continue;
		spec = json_string_value(v);
		all = spec != NULL && strcmp(spec, "all") == 0;
		want = xcalloc(nch ? nch : 1, 1);
		if (all)
			memset(want, 1, nch);
		else if (spec == NULL || !hex_bits(spec, want, nch))
			memset(want, 1, nch);
		path = full_path(R, e->path);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		/*
		 * The file's hash: the scan's (--checksum), or taken from the
		 * chunks as they are read when all of them go, else (a resumed
		 * file) from a read of the whole file first.
		 */
		if (fd >= 0 && e->hashed) {
			fh = e->hash;
		} else if (fd >= 0 && all) {
			st = XXH3_createState();
			XXH3_128bits_reset(st);
		}
		if (fd < 0 || (!e->hashed && !all && sync_hash_fd(fd, &fh) < 0)) {
			emit(R, json_pack("{s:s,s:s,s:s}", "ev", "source-error", "path", e->path,
			    "why", strerror(errno)));
			if (fd >= 0)
				close(fd);
			free(path);
			free(want);
			continue;
		}
		/* from here the map, when there is one, owns fd */
		m = srcmap_open(fd, e->size);
		for (uint32_t c = 0; c < nch; c++) {
			struct sync_frame f = { .type = SYNC_F_CHUNK, .file = (uint32_t)i,
			    .chunk = c };
			struct payload *pl;
			bool got = true;

			if (!want[c])
				continue;
			if (stop >= 0 && (long)seq >= stop) {
				src_close(m, fd);
				free(path);
				free(want);
				if (st != NULL)
					XXH3_freeState(st);
				return 1;
			}
			if (held >= 0 && (long)seq == held)
				hold(hs);
			f.len = (uint32_t)chunk_len(e, c);
			/* the damaged-chunk hook's chunk: a copy of its own, read into a buffer */
			if (m != NULL && (long)seq != corrupt) {
				pl = pl_mapped(m, (uint64_t)c * SYNC_CHUNK, f.len);
			} else {
				pl = pl_new(f.len);
				got = pread(fd, pl->data, f.len, (off_t)c * SYNC_CHUNK) == (ssize_t)f.len;
			}
			/* the file changed under us: no FEND, the hosts stay incomplete */
			if (!got || hash_chunk(pl->data, pl->len, st, &f.hash) < 0) {
				pl_unref(pl);
				short_read = true;
				break;
			}
			if ((long)seq == corrupt && pl->len > 0)
				pl->data[pl->len / 2] ^= 0x5a;
			f.part = pick_part(R, seq);
			forward(R, &f, pl);
			pl_unref(pl);
			seq++;
		}
		if (st != NULL) {
			XXH128_hash_t d = XXH3_128bits_digest(st);

			fh = (struct sync_hash){ d.high64, d.low64 };
			XXH3_freeState(st);
			st = NULL;
		}
		if (short_read) {
			emit(R, json_pack("{s:s,s:s,s:s}", "ev", "source-error", "path", e->path,
			    "why", "shorter than when it was scanned"));
			src_close(m, fd);
			free(path);
			free(want);
			continue;
		}
		fe.file = (uint32_t)i;
		fe.chunk = nch;
		fe.hash = fh;
		/* every part's hosts need the file's hash: send it on each */
		for (size_t p = 0; p < R->nparts; p++) {
			fe.part = (uint16_t)p;
			forward(R, &fe, NULL);
		}
		src_close(m, fd);
		free(path);
		free(want);
	}
	return 0;
}

/* ---- SIGTERM: save the maps, end ---- */

static struct rk *sig_rank;

static void *
signal_main(void *arg)
{
	sigset_t *set = arg;
	int sig = 0;

	sigwait(set, &sig);
	if (sig_rank != NULL) {
		pthread_mutex_lock(&sig_rank->mu);
		for (size_t i = 0; sig_rank->fs != NULL && i < sig_rank->tree.n; i++)
			save_map(sig_rank, i);
		pthread_mutex_unlock(&sig_rank->mu);
	}
	_exit(128 + sig);
	return NULL;
}

/* ---- the run ---- */

static json_t *
read_json_line(struct rk *R, struct jc_err *err)
{
	char *line = R->io->read_line(R->io->arg);
	json_error_t je;
	json_t *v;

	if (line == NULL) {
		jc_fail(err, -EPIPE, "the controller went away");
		return NULL;
	}
	v = json_loads(line, 0, &je);
	free(line);
	if (!json_is_object(v)) {
		json_decref(v);
		jc_fail(err, -EINVAL, "a line from the controller that is not a JSON object");
		return NULL;
	}
	return v;
}

static int
connect_out(struct rk *R, json_t *outs, struct jc_err *err)
{
	size_t i;
	json_t *o;

	R->nout = json_array_size(outs);
	R->out = xcalloc(R->nout ? R->nout : 1, sizeof(*R->out));
	json_array_foreach(outs, i, o) {
		struct conn *c = &R->out[i];
		const char *addr = json_string_value(json_object_get(o, "addr"));
		const char *bind = json_string_value(json_object_get(o, "bind"));
		struct sockaddr_storage ss, ls;
		socklen_t sl, ll = 0;
		int fd, one = 1;

		c->fd = -1;
		c->peer = (int)json_integer_value(json_object_get(o, "rank"));
		pthread_cond_init(&c->cv, NULL);
		if (addr == NULL || rt_io_parse_addr(addr, &ss, &sl) < 0)
			return jc_fail(err, -EINVAL, "plan: a bad address for rank %d", c->peer);
		if (bind != NULL) {
			char *b = xasprintf("%s:0", bind);

			if (rt_io_parse_addr(b, &ls, &ll) < 0)
				ll = 0;
			free(b);
		}
		fd = rt_io_connect((struct sockaddr *)&ss, sl, ll ? (struct sockaddr *)&ls : NULL,
		    ll, jc_now() + R->timeout);
		if (fd < 0) {
			char *why = xasprintf("cannot connect to %s: %s", addr, strerror(-fd));

			pthread_mutex_lock(&R->mu);
			conn_kill(R, c, why);
			pthread_mutex_unlock(&R->mu);
			free(why);
			continue;
		}
		rt_io_nonblock(fd, 1);
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->fd = fd;
	}
	return 0;
}

static int
mkdir_p(const char *path)
{
	char *p = xstrdup(path);
	int rc = 0;

	for (char *s = p + 1; rc == 0; s++) {
		if (*s != '/' && *s != '\0')
			continue;
		{
			char c = *s;

			*s = '\0';
			if (mkdir(p, 0755) < 0 && errno != EEXIST)
				rc = -1;
			*s = c;
			if (c == '\0')
				break;
		}
	}
	free(p);
	return rc;
}

static void
make_dirs_links(struct rk *R, json_t *errs)
{
	struct jc_err e = { 0 };
	struct stat st;

	if (mkdir_p(R->root) < 0)
		json_array_append_new(errs, json_sprintf("%s: %s", R->root, strerror(errno)));
	for (size_t i = 0; i < R->tree.n; i++) {
		const struct sync_entry *s = &R->tree.v[i];
		char *p;

		if (s->type != SYNC_DIR)
			continue;
		p = full_path(R, s->path);
		if (safe_parent(R, s->path, true, &e) < 0)
			json_array_append_new(errs, json_string(e.msg));
		else if (mkdir(p, 0755) < 0 && errno != EEXIST)
			json_array_append_new(errs, json_sprintf("%s: %s", p, strerror(errno)));
		else if (lstat(p, &st) < 0 || !S_ISDIR(st.st_mode))
			json_array_append_new(errs, json_sprintf("%s: not a folder (a link or a "
			    "file where the tree has a folder): refused", p));
		free(p);
	}
}

static void
finish_tree(struct rk *R, json_t *errs)
{
	struct jc_err e = { 0 };

	for (size_t i = 0; i < R->tree.n; i++) {
		const struct sync_entry *s = &R->tree.v[i];
		char *p, *tmp;

		if (s->type != SYNC_LINK)
			continue;
		p = full_path(R, s->path);
		if (safe_parent(R, s->path, true, &e) < 0) {
			json_array_append_new(errs, json_string(e.msg));
		} else {
			char buf[4096];
			ssize_t k = readlink(p, buf, sizeof(buf) - 1);

			if (k < 0 || (buf[k] = '\0', strcmp(buf, s->target) != 0)) {
				tmp = side_path(R, s->path, SYNC_PART_SUFFIX);
				unlink(tmp);
				if (symlink(s->target, tmp) < 0 || rename(tmp, p) < 0)
					json_array_append_new(errs, json_sprintf("%s: %s", p,
					    strerror(errno)));
				free(tmp);
			}
		}
		free(p);
	}
	/* folders last, deepest first, so their files do not change their mtime */
	for (size_t i = R->tree.n; i-- > 0; ) {
		const struct sync_entry *s = &R->tree.v[i];
		struct timespec ts[2];
		char *p;

		if (s->type != SYNC_DIR)
			continue;
		p = full_path(R, s->path);
		ts[0].tv_sec = s->mtime_ns / 1000000000;
		ts[0].tv_nsec = s->mtime_ns % 1000000000;
		ts[1] = ts[0];
		chmod(p, s->mode & 07777);
		utimensat(AT_FDCWD, p, ts, AT_SYMLINK_NOFOLLOW);
		free(p);
	}
}

static void
write_manifest(struct rk *R)
{
	struct sync_tree m = { 0 };
	char *p, *txt;
	json_t *a;

	for (size_t i = 0; i < R->tree.n; i++) {
		struct sync_entry e = R->tree.v[i];

		if (e.type == SYNC_FILE) {
			if (R->fs[i].need && !R->fs[i].done)
				continue;
			if (R->fs[i].hash_known) {
				e.hash = R->fs[i].hash;
				e.hashed = true;
			}
		}
		sync_tree_add(&m, &e);
	}
	a = sync_tree_json(&m);
	txt = json_dumps(a, JSON_COMPACT);
	p = xasprintf("%s/" SYNC_MANIFEST, R->root);
	if (txt != NULL)
		jc_write_atomic(p, txt, strlen(txt), 0644, NULL);
	free(p);
	free(txt);
	json_decref(a);
	sync_tree_free(&m);
}

static void
progress(struct rk *R, bool force)
{
	double now = jc_now();

	pthread_mutex_lock(&R->mu);
	if (force || now - R->last_progress >= 0.5) {
		R->last_progress = now;
		emit(R, json_pack("{s:s,s:I,s:I,s:I}", "ev", "progress", "written",
		    (json_int_t)R->bytes_written, "received", (json_int_t)R->bytes_in,
		    "sent", (json_int_t)R->bytes_sent));
	}
	pthread_mutex_unlock(&R->mu);
}

struct actx {
	struct rk *R;
	pthread_t *th;
	size_t n;
};

static void *
acceptor_main(void *arg)
{
	struct actx *a = arg;
	struct rk *R = a->R;

	for (size_t i = 0; i < R->nin; i++) {
		int fd = rt_io_accept(R->lfd, jc_now() + R->timeout);
		struct rctx *x;

		if (fd < 0) {
			char *why = xasprintf("%zu of %zu upstream connections never came",
			    R->nin - i, R->nin);

			upstream_lost(R, why);
			free(why);
			break;
		}
		rt_io_nonblock(fd, 1);
		x = xmalloc(sizeof(*x));
		x->R = R;
		x->fd = fd;
		pthread_create(&a->th[a->n++], NULL, reader_main, x);
	}
	for (size_t i = 0; i < a->n; i++)
		pthread_join(a->th[i], NULL);
	pthread_mutex_lock(&R->mu);
	for (size_t p = 0; p < R->nparts; p++)
		part_over(R, p);
	pthread_mutex_unlock(&R->mu);
	return NULL;
}

static void *
ticker_main(void *arg)
{
	struct rk *R = arg;

	for (;;) {
		struct timespec ts;
		bool end;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 500000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&R->mu);
		if (!R->ended)
			pthread_cond_timedwait(&R->cv, &R->mu, &ts);
		end = R->ended;
		pthread_mutex_unlock(&R->mu);
		if (end)
			return NULL;
		progress(R, false);
	}
}

static int
parse_route(struct rk *R, json_t *plan, struct jc_err *err)
{
	json_t *kids = json_object_get(plan, "children");

	R->nparts = (size_t)json_integer_value(json_object_get(plan, "parts"));
	if (R->nparts == 0 || R->nparts > SYNC_MAX_HOSTS || json_array_size(kids) != R->nparts)
		return jc_fail(err, -EINVAL, "plan: bad parts");
	R->kids = xcalloc(R->nparts, sizeof(int *));
	R->kidw = xcalloc(R->nparts, sizeof(int *));
	for (size_t p = 0; p < R->nparts; p++) {
		json_t *a = json_array_get(kids, p), *o;
		size_t k;

		R->kids[p] = xcalloc(json_array_size(a) + 1, sizeof(int));
		R->kidw[p] = xcalloc(json_array_size(a) + 1, sizeof(int));
		json_array_foreach(a, k, o) {
			json_int_t first = json_integer_value(json_object_get(o, "out"));
			json_int_t w = json_integer_value(json_object_get(o, "wires"));

			if (first < 0 || w < 1 || (size_t)(first + w) > R->nout)
				return jc_fail(err, -EINVAL, "plan: bad children");
			R->kids[p][k] = (int)first;
			R->kidw[p][k] = (int)w;
		}
		R->kids[p][json_array_size(a)] = -1;
	}
	R->parent = xcalloc(R->nparts, sizeof(int));
	R->in_wires = xcalloc(R->nparts, sizeof(int));
	R->part_dones = xcalloc(R->nparts, sizeof(int));
	R->part_over = xcalloc(R->nparts, sizeof(bool));
	for (size_t p = 0; p < R->nparts; p++) {
		json_t *pa = json_array_get(json_object_get(plan, "parents"), p);
		json_t *iw = json_array_get(json_object_get(plan, "in_wires"), p);

		R->parent[p] = pa ? (int)json_integer_value(pa) : -1;
		R->in_wires[p] = iw ? (int)json_integer_value(iw) : 0;
	}
	for (size_t i = 0; i < R->nout; i++)
		R->out[i].carries = xcalloc(R->nparts, sizeof(bool));
	for (size_t p = 0; p < R->nparts; p++)
		for (int k = 0; R->kids[p][k] >= 0; k++)
			for (int w = 0; w < R->kidw[p][k]; w++) {
				struct conn *c = &R->out[R->kids[p][k] + w];

				if (!c->carries[p]) {
					c->carries[p] = true;
					c->pending++;
				}
			}
	return 0;
}

int
sync_rank_run(const struct sync_rank_io *io, struct jc_err *err)
{
	struct rk R;
	json_t *setup = NULL, *plan = NULL, *hello, *errs = json_array(), *v;
	sigset_t set;
	pthread_t sig_th, acc_th, tick_th;
	struct actx ac = { 0 };
	int port = 0, rc = -1;
	const char *role, *root;

	memset(&R, 0, sizeof(R));
	R.io = io;
	R.lfd = -1;
	R.upstream_lost = json_array();
	pthread_mutex_init(&R.mu, NULL);
	pthread_cond_init(&R.cv, NULL);
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGINT);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	{
		struct sigaction sa = { .sa_handler = on_sigbus };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGBUS, &sa, NULL);
	}
	sig_rank = &R;
	pthread_create(&sig_th, NULL, signal_main, &set);
	pthread_detach(sig_th);

	emit(&R, json_pack("{s:s}", "ev", "ready"));
	if ((setup = read_json_line(&R, err)) == NULL)
		goto out;
	role = json_string_value(json_object_get(setup, "role"));
	root = json_string_value(json_object_get(setup, "root"));
	if (role == NULL || root == NULL || *root == '\0') {
		jc_fail(err, -EINVAL, "setup: no role or folder");
		goto out;
	}
	R.rank = (int)json_integer_value(json_object_get(setup, "rank"));
	R.source = strcmp(role, "source") == 0;
	R.root = xstrdup(root);
	while (strlen(R.root) > 1 && R.root[strlen(R.root) - 1] == '/')
		R.root[strlen(R.root) - 1] = '\0';
	R.checksum = json_is_true(json_object_get(setup, "checksum"));
	R.verify_sha256 = json_is_true(json_object_get(setup, "verify_sha256"));
	R.timeout = json_real_value(json_object_get(setup, "timeout"));
	if (R.timeout <= 0)
		R.timeout = 30;
	if ((R.lfd = open_listener(&port, err)) < 0)
		goto out;
	if (R.source) {
		struct jc_err se = { 0 };

		if (sync_tree_scan(R.root, R.checksum, &R.tree, &se) < 0) {
			emit(&R, json_pack("{s:s,s:s}", "ev", "refused", "why", se.msg));
			rc = 0;
			goto out;
		}
		hello = json_pack("{s:s,s:o}", "ev", "hello", "tree", sync_tree_json(&R.tree));
		R.fs = xcalloc(R.tree.n ? R.tree.n : 1, sizeof(*R.fs));
		for (size_t i = 0; i < R.tree.n; i++)
			R.fs[i].fd = -1;
	} else {
		if (sync_tree_from_json(json_object_get(setup, "tree"), &R.tree, err) < 0)
			goto out;
		hello = dest_hello(&R);
	}
	json_object_set_new(hello, "addrs", addrs_json());
	json_object_set_new(hello, "port", json_integer(port));
	emit(&R, hello);

	if ((plan = read_json_line(&R, err)) == NULL)
		goto out;
	if (json_is_true(json_object_get(plan, "abort"))) {
		rc = 0;
		goto out;
	}
	R.nin = (size_t)json_integer_value(json_object_get(plan, "nin"));
	if (connect_out(&R, json_object_get(plan, "out"), err) < 0 ||
	    parse_route(&R, plan, err) < 0)
		goto out;
	for (size_t i = 0; i < R.nout; i++) {
		struct wctx *w = xmalloc(sizeof(*w));

		w->R = &R;
		w->c = &R.out[i];
		if (R.out[i].fd >= 0)
			pthread_create(&R.out[i].th, NULL, writer_main, w);
		else
			free(w);
	}
	if (!R.source)
		make_dirs_links(&R, errs);
	/* every connection is made: the controller starts the source when all are */
	emit(&R, json_pack("{s:s}", "ev", "connected"));
	pthread_create(&tick_th, NULL, ticker_main, &R);
	if (R.source) {
		json_t *go = read_json_line(&R, err);

		if (go != NULL && !json_is_true(json_object_get(go, "abort")))
			send_all(&R, json_object_get(plan, "send"), err);
		json_decref(go);
	} else {
		ac.R = &R;
		ac.th = xcalloc(R.nin + 1, sizeof(pthread_t));
		pthread_create(&acc_th, NULL, acceptor_main, &ac);
		pthread_join(acc_th, NULL);
		free(ac.th);
	}
	/* everything is sent or forwarded: every part is over here */
	pthread_mutex_lock(&R.mu);
	for (size_t p = 0; p < R.nparts; p++)
		part_over(&R, p);
	for (size_t i = 0; i < R.nout; i++) {
		R.out[i].closing = true;
		pthread_cond_broadcast(&R.out[i].cv);
	}
	pthread_mutex_unlock(&R.mu);
	for (size_t i = 0; i < R.nout; i++)
		if (R.out[i].fd >= 0)
			pthread_join(R.out[i].th, NULL);
	pthread_mutex_lock(&R.mu);
	R.ended = true;
	pthread_cond_broadcast(&R.cv);
	pthread_mutex_unlock(&R.mu);
	pthread_join(tick_th, NULL);
	progress(&R, true);

	{
		json_t *missing = json_array(), *failed = json_array(), *lost = json_array();
		size_t done = 0, need = 0;
		bool complete;

		if (!R.source) {
			finish_tree(&R, errs);
			for (size_t i = 0; i < R.tree.n; i++) {
				struct fstate *f = &R.fs[i];

				if (!f->need)
					continue;
				need++;
				if (f->done) {
					done++;
				} else {
					if (f->failed)
						json_array_append_new(failed, json_pack("{s:s,s:s}",
						    "path", R.tree.v[i].path, "why", f->why));
					json_array_append_new(missing, json_string(R.tree.v[i].path));
					/* under the lock: SIGTERM's save waits for it, and
					 * never ends the process halfway through a write */
					pthread_mutex_lock(&R.mu);
					save_map(&R, i);
					pthread_mutex_unlock(&R.mu);
					if (f->fd >= 0)
						close(f->fd);
					f->fd = -1;
				}
			}
			/* under the lock: SIGTERM waits for it (no temporary file left) */
			pthread_mutex_lock(&R.mu);
			write_manifest(&R);
			pthread_mutex_unlock(&R.mu);
		}
		for (size_t i = 0; i < R.nout; i++)
			if (R.out[i].dead)
				json_array_append_new(lost, json_pack("{s:i,s:s}", "rank",
				    R.out[i].peer, "why", R.out[i].why));
		complete = json_array_size(missing) == 0 && json_array_size(errs) == 0;
		v = json_pack("{s:s,s:b,s:I,s:I,s:I,s:I,s:I,s:I,s:o,s:o,s:O,s:o,s:o}", "ev", "end",
		    "complete", complete, "files_needed", (json_int_t)need,
		    "files_done", (json_int_t)done, "written", (json_int_t)R.bytes_written,
		    "received", (json_int_t)R.bytes_in, "sent", (json_int_t)R.bytes_sent,
		    "bad_chunks", (json_int_t)R.bad_chunks, "missing", missing,
		    "failed", failed, "upstream_lost", R.upstream_lost, "children_lost", lost,
		    "errors", errs);
		errs = NULL;
		emit(&R, v);
	}
	rc = 0;
out:
	sig_rank = NULL;
	json_decref(setup);
	json_decref(plan);
	json_decref(errs);
	json_decref(R.upstream_lost);
	if (R.lfd >= 0)
		close(R.lfd);
	for (size_t i = 0; i < R.nout; i++) {
		if (R.out[i].fd >= 0)
			close(R.out[i].fd);
		free(R.out[i].why);
		free(R.out[i].carries);
		pthread_cond_destroy(&R.out[i].cv);
	}
	free(R.out);
	for (size_t p = 0; R.kids != NULL && p < R.nparts; p++) {
		free(R.kids[p]);
		free(R.kidw[p]);
	}
	free(R.kids);
	free(R.kidw);
	free(R.parent);
	free(R.in_wires);
	free(R.part_dones);
	free(R.part_over);
	for (size_t i = 0; R.fs != NULL && i < R.tree.n; i++) {
		free(R.fs[i].have);
		free(R.fs[i].why);
		fstream_free(R.fs[i].hs);
		if (R.fs[i].fd >= 0)
			close(R.fs[i].fd);
	}
	free(R.fs);
	sync_tree_free(&R.tree);
	free(R.root);
	pool_drain();
	return rc;
}
