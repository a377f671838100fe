/* SPDX-License-Identifier: MIT */
/*
 * Hostfile reader. jansson parses the text (duplicate keys and NUL
 * characters are refused, its depth limit guards against deep nesting);
 * this module walks the tree along the known shape only, records each
 * problem with the JSON path where it was found, and copies what is usable
 * into a struct jc_hostfile. Nothing here prints.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "hostfile_read.h"
#include "hosts.h"

/* room for "hosts[N]" */
#define PATH_LEN 96

struct reader {
	struct hostfile_diags *d;
	const char *name;
	struct jc_arena **arena;	/* where the hostfile's strings and arrays go */
};

/* A copy of the JSON string v in the hostfile's arena. */
static char *
str_copy(struct reader *r, json_t *v)
{
	return jc_arena_strndup(r->arena, json_string_value(v), json_string_length(v));
}

static void *
arr(struct reader *r, size_t n, size_t size)
{
	return jc_arena_calloc(r->arena, n, size);
}

/*
 * "PREFIX[I]" into buf (of PATH_LEN bytes), without printf: this runs once
 * per host of files with hundreds of thousands.
 */
static void
index_path(char *buf, const char *prefix, size_t i)
{
	char digits[24];
	size_t n = 0, len = strnlen(prefix, 16);

	do {
		digits[n++] = (char)('0' + i % 10);
		i /= 10;
	} while (i > 0);
	memcpy(buf, prefix, len);
	buf[len++] = '[';
	while (n > 0)
		buf[len++] = digits[--n];
	buf[len++] = ']';
	buf[len] = '\0';
}

static void JC_PRINTF(6, 7)
add_diag(struct reader *r, bool warning, const char *code, enum hostfile_part part,
    long host, const char *fmt, ...)
{
	struct hostfile_diags *d = r->d;
	struct hostfile_diag *g;
	va_list ap;

	d->v = xreallocarray(d->v, d->n + 1, sizeof(*d->v));
	g = &d->v[d->n++];
	g->code = code;
	g->warning = warning;
	g->part = part;
	g->host = host;
	g->index = -1;
	va_start(ap, fmt);
	g->msg = xvasprintf(fmt, ap);
	va_end(ap);
	if (!warning)
		d->nerrors++;
}

void
hostfile_diags_free(struct hostfile_diags *diags)
{
	if (diags == NULL)
		return;
	for (size_t i = 0; i < diags->n; i++)
		free(diags->v[i].msg);
	free(diags->v);
	memset(diags, 0, sizeof(*diags));
}

static bool
utf8_valid(const unsigned char *s)
{
	while (*s) {
		size_t n;
		unsigned int c = *s;

		if (c < 0x80) {
			s++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			n = 1;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3;
		} else {
			return false;
		}
		for (size_t i = 1; i <= n; i++)
			if ((s[i] & 0xc0) != 0x80)
				return false;
		s += n + 1;
	}
	return true;
}

static long utf8_next(const unsigned char **p);
static bool name_code_point(long cp);

char *
hostfile_printable(const char *s, size_t max)
{
	struct jc_buf b = { 0 };
	bool utf8;
	size_t n = 0;

	if (s == NULL)
		return xstrdup("(null)");
	utf8 = utf8_valid((const unsigned char *)s);
	for (; *s; s++, n++) {
		unsigned char c = (unsigned char)*s;
		const unsigned char *p = (const unsigned char *)s;
		long cp;

		if (max && n >= max) {
			buf_puts(&b, "...");
			break;
		}
		cp = c >= 0x80 && utf8 ? utf8_next(&p) : c;

		if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8) || cp < 0) {
			buf_printf(&b, "\\x%02x", c);
		} else if (c >= 0x80) {
			/* a control, space or bidi mark shown as its number */
			if (name_code_point(cp))
				buf_append(&b, s, (size_t)(p - (const unsigned char *)s));
			else
				buf_printf(&b, "\\u%04lx", cp);
			s = (const char *)p - 1;
		} else {
			buf_append(&b, &c, 1);
		}
	}
	return buf_steal(&b);
}

/* A user string for a message: printable, at most 64 characters. */
static char *
q(const char *s)
{
	return hostfile_printable(s, 64);
}

/*
 * A DNS name: labels of letters, digits, - and _, the last one not all
 * digits (no top-level domain is a number), so a dotted quad with an octet
 * over 255 or a fifth number is not taken for a name to resolve.
 */
static bool
dns_name_ok(const char *s)
{
	size_t label = 0, n = 0;
	bool numeric = true, last = true;	/* the label, and the one before a dot */

	if (*s == '\0' || *s == '-' || *s == '.')
		return false;
	for (; *s; s++, n++) {
		unsigned char c = (unsigned char)*s;

		if (n >= 253)
			return false;
		if (c == '.') {
			if (label == 0)
				return false;
			label = 0;
			last = numeric;
			numeric = true;
			continue;
		}
		if (c < '0' || c > '9')
			numeric = false;
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_'))
			return false;
		if (++label > 63)
			return false;
	}
	return label > 0 ? !numeric : !last;	/* "name." ends with a dot */
}

bool
hostfile_ip_ok(const char *s)
{
	return s != NULL && (hosts_is_ip_literal(s) || dns_name_ok(s));
}

/*
 * The code point of the UTF-8 sequence at *p (advanced past it), or -1 when
 * it is not one: truncated, overlong, a surrogate or beyond U+10FFFF.
 */
static long
utf8_next(const unsigned char **p)
{
	const unsigned char *s = *p;
	size_t len = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;
	long cp = len == 4 ? s[0] & 0x07 : len == 3 ? s[0] & 0x0f : s[0] & 0x1f;

	if (len == 0 || s[0] >= 0xf5)
		return -1;
	for (size_t k = 1; k < len; k++) {
		if ((s[k] & 0xc0) != 0x80)
			return -1;
		cp = cp << 6 | (s[k] & 0x3f);
	}
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return -1;
	*p = s + len;
	return cp;
}

/*
 * A character beyond ASCII that may be part of a host name: not a control
 * (U+0080..U+009F), a space, a format or bidi mark (U+2000..U+206F,
 * U+FEFF, U+FFF0..U+FFFF, U+E0000..), nor private use.
 */
static bool
name_code_point(long cp)
{
	return cp > 0xa0 && cp != 0x1680 && cp != 0x180e && !(cp >= 0x2000 && cp <= 0x206f) &&
	    cp != 0x3000 && cp != 0xfeff && !(cp >= 0xe000 && cp <= 0xf8ff) &&
	    !(cp >= 0xfff0 && cp <= 0xffff) && cp < 0xe0000;
}

/*
 * A plain word (jc_plain_word()) in which letters beyond ASCII may appear
 * as UTF-8 (an ssh config's Host alias "mäc1", a name in IDN): at most 255
 * bytes, nothing a shell reads specially, no invalid UTF-8.
 */
static bool
name_word_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (s == NULL || *s == '\0' || *s == '-' || strlen(s) > 255)
		return false;
	while (*p != '\0') {
		if (*p < 0x80) {
			if (!isalnum(*p) && strchr("._-+:@%", *p) == NULL)
				return false;
			p++;
		} else if (!name_code_point(utf8_next(&p))) {
			return false;
		}
	}
	return true;
}

/* The rules of hosts_parse_target(), without building a host, and UTF-8 letters. */
bool
hostfile_ssh_ok(const char *s)
{
	const char *at, *host, *colon;
	long port;

	if (!name_word_ok(s))
		return false;
	at = strrchr(s, '@');
	host = at ? at + 1 : s;
	if (at == s || *host == '\0' || *host == '-')
		return false;
	colon = strchr(host, ':');
	if (colon == NULL || strchr(colon + 1, ':') != NULL)
		return true;	/* a name, or an IPv6 literal */
	return colon != host && jc_parse_int(colon + 1, 1, 65535, &port);
}

bool
hostfile_env_ok(const char *s)
{
	const char *eq = strchr(s, '=');

	if (eq == NULL || eq == s)
		return false;
	for (const char *p = s; p < eq; p++) {
		unsigned char c = (unsigned char)*p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

static const char *
syntax_code(const json_error_t *je)
{
#if JANSSON_VERSION_HEX >= 0x020b00
	switch (json_error_code(je)) {
	case json_error_invalid_utf8:
		return "bad-utf8";
	case json_error_premature_end_of_input:
		return "truncated";
	case json_error_stack_overflow:
		return "too-deep";
	case json_error_duplicate_key:
		return "duplicate-key";
	case json_error_null_character:
	case json_error_null_byte_in_key:
		return "nul-character";
	default:
		break;
	}
#else
	(void)je;
#endif
	return "json-syntax";
}

static void
syntax_diag(struct reader *r, const json_error_t *je)
{
	const char *code = syntax_code(je);
	char *name = hostfile_printable(r->name, 0), *text;	/* a path: never shortened */

	if (strcmp(code, "nul-character") == 0)
		text = xstrdup("NUL characters (\\u0000) are not allowed in a hostfile");
	else
		text = hostfile_printable(je->text, 0);

	if (je->line > 0)
		add_diag(r, false, code, HF_PART_FILE, -1, "%s:%d:%d: %s",
		    name, je->line, je->column, text);
	else
		add_diag(r, false, code, HF_PART_FILE, -1, "%s: %s", name, text);
	free(name);
	free(text);
}

static void
unknown_key(struct reader *r, enum hostfile_part part, long host, const char *where,
    const char *key)
{
	char *k = q(key);

	add_diag(r, true, "unknown-key", part, host, "%s%sunknown key '%s' is ignored",
	    where, *where ? ": " : "", k);
	free(k);
}

/*
 * A device name of the rdma matrix, at PATH.rdma[k] (or PATH.rdma[k][sub]
 * when sub >= 0); validated, kept as read.
 */
static char *
read_device(struct reader *r, json_t *v, long host, const char *path, size_t k, long sub)
{
	const char *s = json_string_value(v);

	if (!jc_iface_name_ok(s)) {
		char *d = q(s);

		if (sub < 0)
			add_diag(r, false, "bad-name", HF_PART_RDMA, host,
			    "%s.rdma[%zu]: '%s' is not an RDMA device name (letters, digits, "
			    "_ . - only)", path, k, d);
		else
			add_diag(r, false, "bad-name", HF_PART_RDMA, host,
			    "%s.rdma[%zu][%ld]: '%s' is not an RDMA device name (letters, "
			    "digits, _ . - only)", path, k, sub, d);
		free(d);
	}
	return str_copy(r, v);
}

static void
read_cell(struct reader *r, json_t *v, struct jc_hf_cell *c, long host, const char *path,
    size_t k)
{
	size_t e, n;
	json_t *x;

	if (json_is_null(v))
		return;
	if (json_is_string(v)) {
		c->names = arr(r, 1, sizeof(*c->names));
		c->names[0] = read_device(r, v, host, path, k, -1);
		c->n = 1;
		return;
	}
	if (!json_is_array(v)) {
		add_diag(r, false, "bad-type", HF_PART_RDMA, host,
		    "%s.rdma[%zu]: expected null, a string or a list of strings", path, k);
		return;
	}
	c->is_list = true;
	n = json_array_size(v);
	c->names = arr(r, n, sizeof(*c->names));
	json_array_foreach(v, e, x) {
		if (json_is_string(x))
			c->names[c->n++] = read_device(r, x, host, path, k, (long)e);
		else
			add_diag(r, false, "bad-type", HF_PART_RDMA, host,
			    "%s.rdma[%zu][%zu]: expected a string (a device name)", path, k, e);
	}
}

static void
read_ips(struct reader *r, json_t *v, struct jc_hf_host *h, long host, const char *path)
{
	size_t k;
	json_t *e;

	if (!json_is_array(v)) {
		add_diag(r, false, "bad-type", HF_PART_IPS, host,
		    "%s.ips: expected a list of strings", path);
		return;
	}
	h->ips = arr(r, json_array_size(v) + 1, sizeof(*h->ips));
	json_array_foreach(v, k, e) {
		const char *s = json_string_value(e);

		if (s == NULL) {
			add_diag(r, false, "bad-type", HF_PART_IPS, host,
			    "%s.ips[%zu]: expected a string", path, k);
			r->d->v[r->d->n - 1].index = (long)k;
			continue;
		}
		if (!hostfile_ip_ok(s)) {
			char *d = q(s);

			if (s[strspn(s, "0123456789.")] == '\0')
				add_diag(r, false, "bad-ip", HF_PART_IPS, host,
				    "%s.ips[%zu]: '%s' is not an IPv4 address (four numbers from "
				    "0 to 255) nor a host name", path, k, d);
			else
				add_diag(r, false, "bad-ip", HF_PART_IPS, host,
				    "%s.ips[%zu]: '%s' is not an IP address or host name",
				    path, k, d);
			r->d->v[r->d->n - 1].index = (long)k;
			free(d);
		}
		h->ips[h->nips++] = str_copy(r, e);
	}
}

static void
read_rdma(struct reader *r, json_t *v, struct jc_hf_host *h, long host, const char *path)
{
	size_t k;
	json_t *e;

	if (!json_is_array(v)) {
		add_diag(r, false, "bad-type", HF_PART_RDMA, host,
		    "%s.rdma: expected a list with one entry per host", path);
		return;
	}
	h->nrdma = json_array_size(v);
	h->rdma = arr(r, h->nrdma, sizeof(*h->rdma));
	json_array_foreach(v, k, e)
		read_cell(r, e, &h->rdma[k], host, path, k);
}

static void
read_host(struct reader *r, json_t *v, struct jc_hf_host *h, long host, const char *path)
{
	const char *key;
	bool has_ssh = false;
	json_t *e;

	if (!json_is_object(v)) {
		add_diag(r, false, "bad-type", HF_PART_HOST, host,
		    "%s: expected an object with \"ssh\", \"ips\" and \"rdma\"", path);
		return;
	}
	json_object_foreach(v, key, e) {
		if (strcmp(key, "ssh") == 0) {
			const char *s = json_string_value(e);

			has_ssh = true;
			if (s == NULL) {
				add_diag(r, false, "bad-type", HF_PART_SSH, host,
				    "%s.ssh: expected a string", path);
			} else if (*s == '\0') {
				add_diag(r, false, "bad-name", HF_PART_SSH, host,
				    "%s.ssh: the ssh name is empty", path);
				h->ssh = str_copy(r, e);
			} else {
				if (!hostfile_ssh_ok(s)) {
					char *d = q(s);

					add_diag(r, false, "bad-name", HF_PART_SSH, host,
					    "%s.ssh: '%s' is not a plain host name "
					    "([user@]host[:port] of letters, digits and . - _, "
					    "in UTF-8)",
					    path, d);
					free(d);
				}
				h->ssh = str_copy(r, e);
			}
		} else if (strcmp(key, "ips") == 0) {
			read_ips(r, e, h, host, path);
		} else if (strcmp(key, "rdma") == 0) {
			read_rdma(r, e, h, host, path);
		} else {
			unknown_key(r, HF_PART_HOST, host, path, key);
		}
	}
	if (!has_ssh)
		add_diag(r, false, "missing-ssh", HF_PART_SSH, host,
		    "%s: no \"ssh\" name: every host needs one", path);
}

static void
read_hosts(struct reader *r, json_t *v, struct jc_hostfile *hf, const char *prefix)
{
	size_t i;
	json_t *e;

	if (!json_is_array(v)) {
		add_diag(r, false, "bad-type", HF_PART_HOSTS, -1,
		    "hosts: expected a list of hosts");
		return;
	}
	hf->hosts = arr(r, json_array_size(v), sizeof(*hf->hosts));
	hf->nhosts = json_array_size(v);
	json_array_foreach(v, i, e) {
		char p[PATH_LEN];

		index_path(p, prefix, i);
		read_host(r, e, &hf->hosts[i], (long)i, p);
	}
}

static void
read_envs(struct reader *r, json_t *v, struct jc_hostfile *hf)
{
	size_t k;
	json_t *e;

	if (!json_is_array(v)) {
		add_diag(r, false, "bad-type", HF_PART_ENVS, -1,
		    "envs: expected a list of KEY=VALUE strings");
		return;
	}
	hf->envs = arr(r, json_array_size(v) + 1, sizeof(*hf->envs));
	json_array_foreach(v, k, e) {
		const char *s = json_string_value(e);

		if (s == NULL) {
			add_diag(r, false, "bad-type", HF_PART_ENVS, -1,
			    "envs[%zu]: expected a KEY=VALUE string", k);
			continue;
		}
		if (!hostfile_env_ok(s)) {
			char *d = q(s);

			add_diag(r, false, "bad-env", HF_PART_ENVS, -1,
			    "envs[%zu]: '%s' is not KEY=VALUE with a KEY of letters, digits and _",
			    k, d);
			free(d);
		} else if (strncmp(s, "LD_", 3) == 0 || strncmp(s, "DYLD_", 5) == 0) {
			/* the dynamic loader's variables: code every rank loads */
			int kl = (int)(strchr(s, '=') - s);

			add_diag(r, true, "loader-env", HF_PART_ENVS, -1,
			    "envs[%zu]: %.*s makes every rank's program load what the hostfile "
			    "names; keep it only if you put it there", k, kl, s);
		}
		hf->envs[hf->nenvs++] = str_copy(r, e);
	}
}

static void
read_top(struct reader *r, json_t *root, struct jc_hostfile *hf)
{
	const char *key;
	json_t *e;

	json_object_foreach(root, key, e) {
		if (strcmp(key, "backend") == 0) {
			if (json_is_string(e)) {
				hf->backend = str_copy(r, e);
			} else if (!json_is_null(e)) {
				add_diag(r, false, "bad-type", HF_PART_BACKEND, -1,
				    "backend: expected a string");
			}
		} else if (strcmp(key, "envs") == 0) {
			read_envs(r, e, hf);
		} else if (strcmp(key, "hosts") == 0) {
			read_hosts(r, e, hf, "hosts");
		} else {
			unknown_key(r, HF_PART_TOP, -1, "", key);
		}
	}
	if (json_object_get(root, "hosts") == NULL)
		add_diag(r, false, "missing-hosts", HF_PART_HOSTS, -1,
		    "no \"hosts\" list in the hostfile object");
}

/*
 * jansson's allocator while a parse runs alone: every value of the tree
 * goes to one arena, and the tree is dropped with the arena instead of
 * being freed value by value (most of the time jansson spends on a large
 * file goes to malloc and free).
 */
static struct jc_arena *tree_arena;

static void *
tree_malloc(size_t n)
{
	return jc_arena_alloc(&tree_arena, n);
}

static void
tree_free(void *p)
{
	(void)p;	/* released with the arena */
}

static int
parse(const char *buf, size_t len, const char *name, bool alone,
    struct jc_hostfile **out, struct hostfile_diags *diags)
{
	struct reader r = { .d = diags, .name = name };
	struct jc_hostfile *hf;
	size_t before = diags->nerrors, i;
	json_malloc_t old_malloc = NULL;
	json_free_t old_free = NULL;
	json_error_t je;
	json_t *root;

	*out = NULL;
	for (i = 0; i < len; i++)
		if (buf[i] != ' ' && buf[i] != '\t' && buf[i] != '\r' && buf[i] != '\n')
			break;
	if (i == len) {
		add_diag(&r, false, "empty-file", HF_PART_FILE, -1, "the file is empty");
		return -EINVAL;
	}
	if (alone) {
		json_get_alloc_funcs(&old_malloc, &old_free);
		json_set_alloc_funcs(tree_malloc, tree_free);
	}
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (root == NULL) {
		syntax_diag(&r, &je);
		hf = NULL;
		goto out;
	}
	hf = xcalloc(1, sizeof(*hf));
	r.arena = &hf->arena;
	hf->backend = jc_arena_strndup(r.arena, "", 0);
	if (json_is_array(root)) {
		hf->legacy_list = true;
		read_hosts(&r, root, hf, "");
	} else if (json_is_object(root)) {
		read_top(&r, root, hf);
	} else {
		add_diag(&r, false, "bad-type", HF_PART_TOP, -1,
		    "expected a list of hosts or an object with \"hosts\"");
	}
	if (!alone)
		json_decref(root);
out:
	if (alone) {
		json_set_alloc_funcs(old_malloc, old_free);
		jc_arena_free(tree_arena);
		tree_arena = NULL;
	}
	*out = hf;
	return diags->nerrors > before ? -EINVAL : 0;
}

int
hostfile_parse(const char *buf, size_t len, const char *name,
    struct jc_hostfile **out, struct hostfile_diags *diags)
{
	return parse(buf, len, name, false, out, diags);
}

int
hostfile_parse_alone(const char *buf, size_t len, const char *name,
    struct jc_hostfile **out, struct hostfile_diags *diags)
{
	return parse(buf, len, name, true, out, diags);
}

static int
load(const char *path, bool alone, struct jc_hostfile **out, struct hostfile_diags *diags)
{
	struct reader r = { .d = diags, .name = path };
	struct jc_err err = { 0 };
	char *buf = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	rc = jc_read_file(path, HOSTFILE_MAX_SIZE, &buf, &len, &err);
	switch (rc) {
	case 0:
		break;
	case -ENOENT:
		add_diag(&r, false, "missing-file", HF_PART_FILE, -1, "the file does not exist");
		return -EINVAL;
	case -EISDIR:
		add_diag(&r, false, "not-a-file", HF_PART_FILE, -1,
		    "this is a directory, not a hostfile");
		return -EINVAL;
	case -EINVAL:
		add_diag(&r, false, "not-a-file", HF_PART_FILE, -1,
		    "this is a device or a socket, not a hostfile");
		return -EINVAL;
	case -EFBIG:
		add_diag(&r, false, "too-large", HF_PART_FILE, -1,
		    "the file is larger than %zu MiB; a hostfile is a few KiB",
		    HOSTFILE_MAX_SIZE >> 20);
		return -EINVAL;
	default:
		add_diag(&r, false, "unreadable", HF_PART_FILE, -1, "cannot read the file: %s",
		    strerror(-rc));
		return -EINVAL;
	}
	rc = parse(buf, len, path, alone, out, diags);
	free(buf);
	return rc;
}

int
hostfile_load(const char *path, struct jc_hostfile **out, struct hostfile_diags *diags)
{
	return load(path, false, out, diags);
}

int
hostfile_load_alone(const char *path, struct jc_hostfile **out, struct hostfile_diags *diags)
{
	return load(path, true, out, diags);
}

int
hostfile_read_mlx(const char *path, struct jc_hostfile **out, struct jc_err *err)
{
	struct hostfile_diags d = { 0 };
	struct jc_hostfile *hf = NULL;
	int rc = 0;

	*out = NULL;
	hostfile_load(path, &hf, &d);
	for (size_t i = 0; i < d.n; i++) {
		const struct hostfile_diag *g = &d.v[i];

		if (g->warning || g->part == HF_PART_ENVS)
			continue;
		if (strcmp(g->code, "missing-file") == 0)
			rc = jc_fail(err, -ENOENT, "Hostfile %s doesn't exist", path);
		else
			rc = jc_fail(err, -EINVAL, "Failed to parse hostfile %s (%s)", path, g->msg);
		break;
	}
	hostfile_diags_free(&d);
	if (rc != 0) {
		jc_hostfile_free(hf);
		return rc;
	}
	*out = hf;
	return 0;
}
