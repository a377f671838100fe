/* SPDX-License-Identifier: MIT */
/* Allocation, buffers, string vectors, validation and file helpers. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

#include "util.h"

void (*jc_oom_hook)(void);

static void
oom(void)
{
	if (jc_oom_hook != NULL)
		jc_oom_hook();
	abort();
}

void *
xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);

	if (p == NULL)
		oom();
	return p;
}

void *
xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (p == NULL)
		oom();
	return p;
}

void *
xreallocarray(void *p, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		oom();
	return xrealloc(p, n * size);
}

char *
xstrdup(const char *s)
{
	char *p;

	if (s == NULL)
		return NULL;
	if ((p = strdup(s)) == NULL)
		oom();
	return p;
}

char *
xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);

	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

char *
xvasprintf(const char *fmt, va_list ap)
{
	char *p;

	if (vasprintf(&p, fmt, ap) < 0)
		oom();
	return p;
}

char *
xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *p;

	va_start(ap, fmt);
	p = xvasprintf(fmt, ap);
	va_end(ap);
	return p;
}

int
jc_fail(struct jc_err *err, int code, const char *fmt, ...)
{
	va_list ap;

	if (err != NULL) {
		err->code = code;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return code;
}

void
buf_append(struct jc_buf *b, const void *p, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 64;

		while (cap < b->len + n + 1)
			cap *= 2;
		b->data = xrealloc(b->data, cap);
		b->cap = cap;
	}
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
}

void
buf_puts(struct jc_buf *b, const char *s)
{
	buf_append(b, s, strlen(s));
}

void
buf_printf(struct jc_buf *b, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	buf_puts(b, s);
	free(s);
}

char *
buf_steal(struct jc_buf *b)
{
	char *s = b->data ? b->data : xstrdup("");

	b->data = NULL;
	b->len = b->cap = 0;
	return s;
}

void
buf_free(struct jc_buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->cap = 0;
}

void
strv_push_owned(struct jc_strv *sv, char *s)
{
	sv->v = xreallocarray(sv->v, sv->n + 2, sizeof(*sv->v));
	sv->v[sv->n++] = s;
	sv->v[sv->n] = NULL;
}

void
strv_push(struct jc_strv *sv, const char *s)
{
	strv_push_owned(sv, xstrdup(s));
}

void
strv_free_array(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void
strv_free(struct jc_strv *sv)
{
	strv_free_array(sv->v, sv->n);
	sv->v = NULL;
	sv->n = 0;
}

/*
 * s is one word of at most max characters, letters, digits and those of
 * extra, and does not start with '-' (no option to a remote command).
 */
static bool
word_of(const char *s, size_t max, const char *extra)
{
	size_t n = 0;

	if (s == NULL || *s == '\0' || *s == '-')
		return false;
	for (; *s; s++, n++) {
		unsigned char c = (unsigned char)*s;

		if (n >= max || !(isalnum(c) || strchr(extra, c) != NULL))
			return false;
	}
	return true;
}

bool
jc_plain_word(const char *s)
{
	return word_of(s, 255, "._-+:@%/,=");
}

bool
jc_file_text_ok(const char *s)
{
	size_t n = 0;

	if (s == NULL || *s == '\0' || *s == '-')
		return false;
	for (; *s; s++, n++)
		if (n >= 1024 || !(isalnum((unsigned char)*s) || strchr(" \n#._-/=:[]", *s) != NULL))
			return false;
	return true;
}

bool
jc_service_name_ok(const char *s)
{
	size_t n;

	if (s == NULL || *s == ' ' || !word_of(s, 63, "._-() "))
		return false;
	n = strlen(s);
	return s[n - 1] != ' ';
}

void
jc_shell_word(struct jc_buf *b, const char *w)
{
	bool plain = *w != '\0';

	for (const char *p = w; *p && plain; p++)
		plain = isalnum((unsigned char)*p) || strchr("._-+:@%/,=", *p) != NULL;
	if (plain)
		buf_puts(b, w);
	else
		jc_sh_quote(b, w);
}

void
jc_sh_quote(struct jc_buf *b, const char *s)
{
	buf_puts(b, "'");
	for (; *s; s++) {
		if (*s == '\'')
			buf_puts(b, "'\\''");
		else
			buf_append(b, s, 1);
	}
	buf_puts(b, "'");
}

char *
jc_self_path(void)
{
	char *real = NULL;
#ifdef __APPLE__
	uint32_t n = 0;
	char *buf;

	(void)_NSGetExecutablePath(NULL, &n);
	buf = xcalloc(1, (size_t)n + 1);
	if (_NSGetExecutablePath(buf, &n) == 0)
		real = realpath(buf, NULL);
	free(buf);
#else
	real = realpath("/proc/self/exe", NULL);
#endif
	if (real != NULL && real[0] != '/') {
		free(real);
		real = NULL;
	}
	return real;
}

void
jc_token(char *out, size_t len, const char *prefix)
{
	static const char hex[] = "0123456789abcdef";
	unsigned char rnd[64];
	size_t n = len / 2 < sizeof(rnd) ? len / 2 : sizeof(rnd);
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	ssize_t got = fd >= 0 ? read(fd, rnd, n) : -1;

	if (fd >= 0)
		close(fd);
	if (got != (ssize_t)n) {
		struct timespec ts;
		unsigned long x;

		clock_gettime(CLOCK_REALTIME, &ts);
		x = (unsigned long)ts.tv_nsec ^ ((unsigned long)ts.tv_sec << 20) ^
		    ((unsigned long)getpid() << 7);
		for (size_t i = 0; i < n; i++) {
			x = x * 6364136223846793005UL + 1442695040888963407UL;
			rnd[i] = (unsigned char)(x >> 33);
		}
	}
	out[0] = prefix[0];
	out[1] = prefix[1];
	for (size_t i = 1; i < n; i++) {
		out[2 * i] = hex[rnd[i] >> 4];
		out[2 * i + 1] = hex[rnd[i] & 15];
	}
	out[2 * n] = '\0';
}

bool
jc_iface_name_ok(const char *s)
{
	return word_of(s, 31, "_.-");
}

bool
jc_cable_iface_ok(const struct jc_host *h, const char *name)
{
	if (name == NULL)
		return false;
	if (h->mgmt_iface != NULL && strcmp(h->mgmt_iface, name) == 0)
		return false;
	if (strncmp(name, "lo", 2) == 0 && strspn(name + 2, "0123456789") == strlen(name + 2))
		return false;
	for (size_t i = 0; h->mgmt_ip != NULL && i < h->nifaces; i++)
		if (h->ifaces[i].name != NULL && strcmp(h->ifaces[i].name, name) == 0)
			for (size_t j = 0; j < h->ifaces[i].ninet; j++)
				if (strcmp(h->ifaces[i].inet[j], h->mgmt_ip) == 0)
					return false;
	return true;
}

bool
jc_ipv4_ok(const char *s)
{
	int parts = 0;

	if (s == NULL)
		return false;
	while (parts < 4) {
		int v = 0, digits = 0;

		const char *start = s;

		while (isdigit((unsigned char)*s) && digits < 4) {
			v = v * 10 + (*s++ - '0');
			digits++;
		}
		/* "010" is 8 to inet_aton and ping: only "0" may start with a zero */
		if (digits == 0 || digits > 3 || v > 255 || (digits > 1 && *start == '0'))
			return false;
		parts++;
		if (parts < 4 && *s++ != '.')
			return false;
	}
	return *s == '\0';
}

/*
 * Read the open fd (closed here) of shown into a new buffer of at most max
 * bytes: a regular file, or a pipe when pipes (a FIFO, a shell's <(...)).
 */
static int
read_opened(int fd, const char *shown, bool pipes, size_t max, char **out, size_t *len,
    struct jc_err *err)
{
	struct jc_buf b = { 0 };
	struct stat st;
	char chunk[65536];
	ssize_t r;
	int fl;

	if (fstat(fd, &st) != 0) {
		int e = errno;

		close(fd);
		return jc_fail(err, -e, "%s: %s", shown, strerror(e));
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return jc_fail(err, -EISDIR, "%s: is a directory", shown);
	}
	if (!S_ISREG(st.st_mode) && !(pipes && S_ISFIFO(st.st_mode))) {
		close(fd);
		return jc_fail(err, -EINVAL, "%s: not a regular file", shown);
	}
	if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > (uintmax_t)max) {
		close(fd);
		return jc_fail(err, -EFBIG, "%s: larger than %zu bytes", shown, max);
	}
	if ((fl = fcntl(fd, F_GETFL)) >= 0)
		(void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	while ((r = read(fd, chunk, sizeof(chunk))) != 0) {
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;

			close(fd);
			buf_free(&b);
			return jc_fail(err, -e, "%s: %s", shown, strerror(e));
		}
		if (b.len + (size_t)r > max) {
			close(fd);
			buf_free(&b);
			return jc_fail(err, -EFBIG, "%s: larger than %zu bytes", shown, max);
		}
		buf_append(&b, chunk, (size_t)r);
	}
	close(fd);
	if (len)
		*len = b.len;
	*out = buf_steal(&b);
	return 0;
}

int
jc_read_file(const char *path, size_t max, char **out, size_t *len, struct jc_err *err)
{
	int fd;

	*out = NULL;
	if (len)
		*len = 0;
	/*
	 * O_NONBLOCK: opening a FIFO must not wait for a writer (without one,
	 * it reads as empty); reading then blocks as usual.
	 */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)) < 0)
		return jc_fail(err, -errno, "%s: %s", path, strerror(errno));
	return read_opened(fd, path, true, max, out, len, err);
}

int
jc_read_file_at(int dfd, const char *name, const char *shown, size_t max, char **out,
    size_t *len, struct jc_err *err)
{
	int fd;

	*out = NULL;
	if (len)
		*len = 0;
	fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
	if (fd < 0 && errno == ELOOP)
		return jc_fail(err, -ELOOP, "%s: is a symbolic link; not followed", shown);
	if (fd < 0)
		return jc_fail(err, -errno, "%s: %s", shown, strerror(errno));
	return read_opened(fd, shown, false, max, out, len, err);
}

/* Length of the UTF-8 sequence at s (2 to 4 bytes, shortest form), or 0. */
static size_t
utf8_seq(const unsigned char *s)
{
	size_t n;

	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xf0 && s[1] < 0x90) ||
	    (s[0] == 0xf4 && s[1] > 0x8f) || (s[0] == 0xed && s[1] > 0x9f))
		return 0;
	return n;
}

void
jc_buf_printable(struct jc_buf *b, const char *s, size_t max, bool keep_lines)
{
	const unsigned char *p = (const unsigned char *)(s != NULL ? s : "?");
	size_t chars = 0;

	buf_puts(b, "");
	while (*p) {
		size_t n = *p < 0x80 ? 1 : utf8_seq(p);

		if (max && chars++ >= max) {
			buf_puts(b, "...");
			break;
		}
		if (n == 1 && (*p >= 0x20 && *p != 0x7f))
			buf_append(b, p, 1);
		else if (n == 1 && keep_lines && (*p == '\n' || *p == '\t'))
			buf_append(b, p, 1);
		else if (n == 2 && p[0] == 0xc2 && p[1] < 0xa0)	/* C1 controls */
			buf_printf(b, "\\u%04x", p[1]);
		else if (n == 3 && p[0] == 0xe2 && ((p[1] == 0x80 && ((p[2] >= 0x8e &&
		    p[2] <= 0x8f) || (p[2] >= 0xaa && p[2] <= 0xae))) ||
		    (p[1] == 0x81 && p[2] >= 0xa6 && p[2] <= 0xa9)))
			/* marks and overrides of the text's direction: U+200E..F, 202A..E, 2066..9 */
			buf_printf(b, "\\u%04x", 0x2000 | ((p[1] & 0x3f) << 6) | (p[2] & 0x3f));
		else if (n > 1)
			buf_append(b, p, n);
		else
			buf_printf(b, "\\x%02x", *p), n = 1;
		p += n;
	}
}

char *
jc_printable(const char *s, size_t max)
{
	struct jc_buf b = { 0 };

	jc_buf_printable(&b, s, max, false);
	return buf_steal(&b);
}

void
jc_note_quoted(struct jc_strv *notes, const char *fmt, const char *arg)
{
	const char *pct;
	char *safe, *msg;

	if (notes == NULL)
		return;
	/* at most 40 printable bytes of remote text, no quote marks */
	safe = arg ? xstrndup(arg, strnlen(arg, 40)) : xstrdup("");
	for (char *c = safe; *c; c++)
		if (!isprint((unsigned char)*c) || *c == '"')
			*c = '?';
	pct = strstr(fmt, "%s");
	msg = pct == NULL ? xstrdup(fmt) :
	    xasprintf("%.*s%s%s", (int)(pct - fmt), fmt, safe, pct + 2);
	free(safe);
	strv_push_owned(notes, msg);
}

double
jc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

bool
jc_parse_int(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (s == NULL || *s == '\0')
		return false;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return false;
	*out = v;
	return true;
}

const char *
jc_port_state_name(enum jc_port_state st)
{
	static const char *const names[] = {
		[JC_PORT_UNKNOWN] = "unknown",
		[JC_PORT_DOWN] = "PORT_DOWN",
		[JC_PORT_INIT] = "PORT_INIT",
		[JC_PORT_ARMED] = "PORT_ARMED",
		[JC_PORT_ACTIVE] = "PORT_ACTIVE",
	};

	if (st < JC_PORT_UNKNOWN || st > JC_PORT_ACTIVE)
		return names[JC_PORT_UNKNOWN];
	return names[st];
}

void
jc_hwport_clear(struct jc_hwport *p)
{
	free(p->port);
	free(p->device);
	free(p->mac);
}

void
jc_rdma_dev_clear(struct jc_rdma_dev *d)
{
	free(d->name);
	free(d->netdev);
	free(d->guid);
}

void
jc_port_clear(struct jc_port *p)
{
	free(p->receptacle);
	free(p->iface);
	free(p->id);
	free(p->link);
	free(p->peer_id);
	free(p->peer_model);
	free(p->peer_name);
	free(p->self_name);
	strv_free_array(p->devices, p->ndevices);
}

void
jc_iface_clear(struct jc_iface *i)
{
	free(i->name);
	free(i->mac);
	strv_free_array(i->inet, i->ninet);
	free(i->prefix);
	strv_free_array(i->members, i->nmembers);
	memset(i, 0, sizeof(*i));
}

void
jc_routes_free(struct jc_route *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].dest);
		free(r[i].iface);
		free(r[i].via);
	}
	free(r);
}

void
jc_mgrs_free(struct jc_mgr *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].name);
	free(m);
}

const struct jc_iface *
jc_host_iface(const struct jc_host *h, const char *name)
{
	for (size_t i = 0; i < h->nifaces; i++)
		if (h->ifaces[i].name != NULL && strcmp(h->ifaces[i].name, name) == 0)
			return &h->ifaces[i];
	return NULL;
}

void
jc_host_clear(struct jc_host *h)
{
	if (h == NULL)
		return;
	free(h->name);
	free(h->target);
	free(h->user);
	free(h->error);
	free(h->hostname);
	free(h->model);
	free(h->os_version);
	free(h->os_build);
	for (size_t i = 0; i < h->nports; i++)
		jc_port_clear(&h->ports[i]);
	free(h->ports);
	for (size_t i = 0; i < h->nhwports; i++)
		jc_hwport_clear(&h->hwports[i]);
	free(h->hwports);
	for (size_t i = 0; i < h->nifaces; i++)
		jc_iface_clear(&h->ifaces[i]);
	free(h->ifaces);
	for (size_t i = 0; i < h->nrdma; i++)
		jc_rdma_dev_clear(&h->rdma[i]);
	free(h->rdma);
	jc_routes_free(h->routes, h->nroutes);
	free(h->mgmt_ip);
	free(h->mgmt_iface);
	free(h->sudo_list);
	jc_mgrs_free(h->mgrs, h->nmgrs);
	free(h->location);
	strv_free_array(h->notes, h->nnotes);
	memset(h, 0, sizeof(*h));
}

struct jc_arena {
	struct jc_arena *next;
	size_t used, size;
	max_align_t data[];
};

#define ARENA_BLOCK ((size_t)256 << 10)

void *
jc_arena_alloc(struct jc_arena **a, size_t n)
{
	struct jc_arena *b = *a;
	size_t al = sizeof(max_align_t);
	void *p;

	if (n > SIZE_MAX - al - sizeof(*b))
		oom();
	n = n ? (n + al - 1) / al * al : al;
	if (b == NULL || b->size - b->used < n) {
		size_t size = n > ARENA_BLOCK / 4 ? n : ARENA_BLOCK;

		/* calloc: large blocks come zeroed from the kernel */
		b = xcalloc(1, sizeof(*b) + size);
		b->size = size;
		if (n > ARENA_BLOCK / 4 && *a != NULL) {
			/* a large piece of its own: keep filling the current block */
			b->next = (*a)->next;
			(*a)->next = b;
		} else {
			b->next = *a;
			*a = b;
		}
	}
	p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

void *
jc_arena_calloc(struct jc_arena **a, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size)
		oom();
	return jc_arena_alloc(a, n * size);
}

char *
jc_arena_strndup(struct jc_arena **a, const char *s, size_t n)
{
	char *p = jc_arena_alloc(a, n + 1);

	memcpy(p, s, n);
	return p;
}

void
jc_arena_free(struct jc_arena *a)
{
	while (a != NULL) {
		struct jc_arena *next = a->next;

		free(a);
		a = next;
	}
}

void
jc_hostfile_free(struct jc_hostfile *hf)
{
	if (hf == NULL)
		return;
	if (hf->arena != NULL) {
		jc_arena_free(hf->arena);
		free(hf);
		return;
	}
	free(hf->backend);
	strv_free_array(hf->envs, hf->nenvs);
	for (size_t i = 0; i < hf->nhosts; i++) {
		struct jc_hf_host *h = &hf->hosts[i];

		free(h->ssh);
		strv_free_array(h->ips, h->nips);
		for (size_t j = 0; j < h->nrdma; j++)
			strv_free_array(h->rdma[j].names, h->rdma[j].n);
		free(h->rdma);
	}
	free(hf->hosts);
	free(hf);
}

/*
 * The process's umask, read once before main() (reading it means setting it,
 * which is not safe once threads run).
 */
static mode_t process_umask = 022;

static void __attribute__((constructor))
read_umask(void)
{
	process_umask = umask(022);
	umask(process_umask);
}

/* the temporary's name: "." NAME ".tmp." and a token of this length ("tt" and hex digits) */
#define ATOMIC_TOKEN 16
#define ATOMIC_TMP ".tmp."

bool
jc_write_atomic_temp(const char *entry, size_t *name_len)
{
	size_t n = strlen(entry), tmp = strlen(ATOMIC_TMP), tail = tmp + ATOMIC_TOKEN;
	const char *t;

	if (n <= 1 + tail || entry[0] != '.')
		return false;
	t = entry + n - tail;
	if (memcmp(t, ATOMIC_TMP "tt", tmp + 2) != 0 ||
	    strspn(t + tmp + 2, "0123456789abcdef") != ATOMIC_TOKEN - 2)
		return false;
	*name_len = n - 1 - tail;
	return true;
}

int
jc_write_atomic_at(int dfd, const char *name, const char *shown, const void *data,
    size_t len, unsigned mode, struct jc_err *err)
{
	const char *p = data;
	char tmp[NAME_MAX + 1], tok[ATOMIC_TOKEN + 1];
	struct stat st;
	int fd = -1, e = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (S_ISLNK(st.st_mode))
			return jc_fail(err, -ELOOP, "cannot write %s: it is a symbolic link; "
			    "not written through", shown);
		if (!S_ISREG(st.st_mode))
			return jc_fail(err, -EINVAL, "cannot write %s: not a regular file", shown);
	} else if (errno != ENOENT) {
		e = errno;
		return jc_fail(err, -e, "cannot write %s: %s", shown, strerror(e));
	}
	/* a fresh name of our own: never an existing file or link */
	for (int tries = 0; fd < 0 && tries < 16; tries++) {
		jc_token(tok, ATOMIC_TOKEN, "tt");
		if ((size_t)snprintf(tmp, sizeof(tmp), ".%s" ATOMIC_TMP "%s", name, tok) >= sizeof(tmp))
			return jc_fail(err, -ENAMETOOLONG, "cannot write %s: %s", shown,
			    strerror(ENAMETOOLONG));
		fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		e = errno;
		return jc_fail(err, -e, "cannot write %s: %s", shown, strerror(e));
	}
	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			e = w < 0 ? errno : EIO;
			break;
		}
		p += w;
		len -= (size_t)w;
	}
	if (e == 0 && fchmod(fd, (mode_t)mode & 07777 & ~process_umask) != 0)
		e = errno;
	if (e == 0 && fsync(fd) != 0)
		e = errno;
	if (close(fd) != 0 && e == 0)
		e = errno;
	if (e == 0 && renameat(dfd, tmp, dfd, name) != 0)
		e = errno;
	if (e != 0) {
		unlinkat(dfd, tmp, 0);
		return jc_fail(err, -e, "cannot write %s: %s", shown, strerror(e));
	}
	(void)fsync(dfd);
	return 0;
}

int
jc_write_atomic(const char *path, const void *data, size_t len, unsigned mode,
    struct jc_err *err)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int dfd, rc, e;

	if (slash != NULL && slash[1] == '\0')
		return jc_fail(err, -EISDIR, "cannot write %s: %s", path, strerror(EISDIR));
	dir = slash == NULL ? xstrdup(".") : slash == path ? xstrdup("/") :
	    xstrndup(path, (size_t)(slash - path));
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	e = errno;
	free(dir);
	if (dfd < 0)
		return jc_fail(err, -e, "cannot write %s: %s", path, strerror(e));
	rc = jc_write_atomic_at(dfd, slash == NULL ? path : slash + 1, path, data, len, mode,
	    err);
	close(dfd);
	return rc;
}

int
jc_private_dir(const char *path, bool create, struct jc_err *err)
{
	struct stat st;
	uid_t me = geteuid();

	if (create) {
		char *p = xstrdup(path);

		for (char *s = p + 1; ; s++) {
			if (*s == '/' || *s == '\0') {
				char c = *s;

				*s = '\0';
				if (mkdir(p, 0700) != 0 && errno != EEXIST) {
					int e = errno;

					free(p);
					return jc_fail(err, -e, "cannot create %s: %s", path,
					    strerror(e));
				}
				*s = c;
				if (c == '\0')
					break;
			}
		}
		free(p);
	}
	if (lstat(path, &st) != 0)
		return jc_fail(err, -errno, "%s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode) && st.st_uid != me)
		return jc_fail(err, -EPERM, "%s: a link another user owns; not used", path);
	if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
		return jc_fail(err, -errno, "%s: %s", path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return jc_fail(err, -ENOTDIR, "%s: not a folder", path);
	if (st.st_uid != me)
		return jc_fail(err, -EPERM, "%s: owned by another user (uid %ld); not used",
		    path, (long)st.st_uid);
	if ((st.st_mode & 022) != 0)
		return jc_fail(err, -EPERM, "%s: writable by other users (mode %03o); not used",
		    path, (unsigned)(st.st_mode & 0777));
	return 0;
}

/* ---- SHA-256 (FIPS 180-4) ---- */

static const uint32_t sha_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2,
};

#define ROR32(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void
sha_block(uint32_t st[8], const unsigned char *p)
{
	uint32_t w[64], a, b, c, d, e, f, g, h;

	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		    (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ROR32(w[i - 15], 7) ^ ROR32(w[i - 15], 18) ^ (w[i - 15] >> 3);
		uint32_t s1 = ROR32(w[i - 2], 17) ^ ROR32(w[i - 2], 19) ^ (w[i - 2] >> 10);

		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = h + (ROR32(e, 6) ^ ROR32(e, 11) ^ ROR32(e, 25)) +
		    ((e & f) ^ (~e & g)) + sha_k[i] + w[i];
		uint32_t t2 = (ROR32(a, 2) ^ ROR32(a, 13) ^ ROR32(a, 22)) +
		    ((a & b) ^ (a & c) ^ (b & c));

		h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
	}
	st[0] += a, st[1] += b, st[2] += c, st[3] += d;
	st[4] += e, st[5] += f, st[6] += g, st[7] += h;
}

void
jc_sha256_init(struct jc_sha256 *s)
{
	static const uint32_t iv[8] = { 0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	    0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19 };

	memcpy(s->h, iv, sizeof(iv));
	s->nblk = 0;
	s->total = 0;
}

void
jc_sha256_update(struct jc_sha256 *s, const void *data, size_t n)
{
	const unsigned char *p = data;

	s->total += n;
	while (n > 0) {
		size_t k = 64 - s->nblk < n ? 64 - s->nblk : n;

		memcpy(s->blk + s->nblk, p, k);
		s->nblk += k;
		p += k;
		n -= k;
		if (s->nblk == 64) {
			sha_block(s->h, s->blk);
			s->nblk = 0;
		}
	}
}

void
jc_sha256_final(struct jc_sha256 *s, char out[65])
{
	uint64_t bits = s->total * 8;
	unsigned char pad = 0x80, z = 0, len[8];

	jc_sha256_update(s, &pad, 1);
	while (s->nblk != 56)
		jc_sha256_update(s, &z, 1);
	for (int i = 0; i < 8; i++)
		len[i] = (unsigned char)(bits >> (56 - 8 * i));
	jc_sha256_update(s, len, 8);
	for (int i = 0; i < 8; i++)
		snprintf(out + 8 * i, 9, "%08x", s->h[i]);
}

void
jc_sha256_hex(const void *data, size_t len, char out[65])
{
	struct jc_sha256 s;

	jc_sha256_init(&s);
	jc_sha256_update(&s, data, len);
	jc_sha256_final(&s, out);
}

struct pf_job {
	void (*fn)(size_t, void *);
	void *arg;
	size_t i;
};

static void *
pf_main(void *p)
{
	struct pf_job *j = p;

	j->fn(j->i, j->arg);
	return NULL;
}

void
jc_parallel_for(size_t n, void (*fn)(size_t i, void *arg), void *arg)
{
	pthread_t *th = xcalloc(n ? n : 1, sizeof(*th));
	struct pf_job *jobs = xcalloc(n ? n : 1, sizeof(*jobs));
	bool *started = xcalloc(n ? n : 1, sizeof(*started));

	for (size_t i = 0; i < n; i++) {
		jobs[i] = (struct pf_job){ fn, arg, i };
		started[i] = pthread_create(&th[i], NULL, pf_main, &jobs[i]) == 0;
		if (!started[i])
			fn(i, arg);
	}
	for (size_t i = 0; i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	free(th);
	free(jobs);
	free(started);
}

bool
jc_ipv4_prefix_ok(const char *s, bool need_len)
{
	char ip[16];
	size_t l = strcspn(s, "/");
	long len;

	if (l >= sizeof(ip) || (need_len && s[l] != '/'))
		return false;
	memcpy(ip, s, l);
	ip[l] = '\0';
	return jc_ipv4_ok(ip) && (s[l] == '\0' || jc_parse_int(s + l + 1, 0, 32, &len));
}
