/* SPDX-License-Identifier: MIT */
/*
 * Small helpers every module uses: allocation that never returns NULL,
 * growable strings and string vectors, the error record, name validation
 * and bounded file reading.
 */
#ifndef JC_UTIL_H
#define JC_UTIL_H

#include <stdarg.h>
#include <stdio.h>

#include "jc.h"

#define JC_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define JC_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/*
 * Allocators: never return NULL. On exhaustion they call jc_oom_hook when
 * set (the program sets one that says so on standard error), then abort.
 */
extern void (*jc_oom_hook)(void);
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
void *xreallocarray(void *p, size_t n, size_t size);
char *xstrdup(const char *s);		/* NULL stays NULL */
char *xstrndup(const char *s, size_t n);
char *xasprintf(const char *fmt, ...) JC_PRINTF(1, 2);
char *xvasprintf(const char *fmt, va_list ap) JC_PRINTF(1, 0);

/*
 * Fill *err (when not NULL) and return code, which must be negative.
 * Typical use: return jc_fail(err, -EINVAL, "%s: bad value", name);
 */
int jc_fail(struct jc_err *err, int code, const char *fmt, ...) JC_PRINTF(3, 4);

/* Growable byte buffer, always NUL-terminated. */
struct jc_buf {
	char *data;
	size_t len;
	size_t cap;
};
void buf_append(struct jc_buf *b, const void *p, size_t n);
void buf_puts(struct jc_buf *b, const char *s);
void buf_printf(struct jc_buf *b, const char *fmt, ...) JC_PRINTF(2, 3);
char *buf_steal(struct jc_buf *b);	/* returns the string, resets b */
void buf_free(struct jc_buf *b);

/*
 * Arena: many small allocations released at once. jc_arena_alloc() returns
 * zeroed memory aligned for any type (never NULL); *a starts as NULL.
 */
struct jc_arena;
void *jc_arena_alloc(struct jc_arena **a, size_t n);
void *jc_arena_calloc(struct jc_arena **a, size_t n, size_t size);
char *jc_arena_strndup(struct jc_arena **a, const char *s, size_t n);
void jc_arena_free(struct jc_arena *a);

/* Vector of owned strings. */
struct jc_strv {
	char **v;
	size_t n;
};
void strv_push(struct jc_strv *sv, const char *s);	/* copies s */
void strv_push_owned(struct jc_strv *sv, char *s);	/* takes s */
void strv_free(struct jc_strv *sv);
void strv_free_array(char **v, size_t n);

/*
 * True when s is a plain word that is safe to place in a shell command
 * unquoted: letters, digits and "._-+:@%/,=" only, not empty, at most
 * 255 bytes, not starting with '-'.
 */
bool jc_plain_word(const char *s);

/*
 * True for a network service or hardware port name a command may carry:
 * 1 to 63 characters, letters, digits, spaces and "._-()", not starting
 * with '-' or a space, not ending with a space. Such a name holds spaces,
 * so a command line quotes it (jc_shell_word).
 */
bool jc_service_name_ok(const char *s);

/*
 * Append w to b as one word of a shell command line: as it is when it is
 * made of letters, digits and "._-+:@%/,=" only, else between single
 * quotes (a single quote inside written '\'').
 */
void jc_shell_word(struct jc_buf *b, const char *w);

/* Append s to b between single quotes, for a POSIX shell: 'like'\''this'. */
void jc_sh_quote(struct jc_buf *b, const char *s);

/*
 * The absolute path of the running program (_NSGetExecutablePath on
 * macOS, /proc/self/exe on Linux), links resolved; a new string, or NULL
 * when the system does not say.
 */
char *jc_self_path(void);

/*
 * Shell text that finds the Python the jobs run: the first of CANDS (shell
 * words: "python3 /opt/homebrew/bin/python3", the doctor's and launch's
 * default) that is there and is not macOS's /usr/bin/python3 stub, the
 * shim of a Mac without the Command Line Tools, which only asks to install
 * them. On a Mac (DARWIN, a shell test) the shim is real when the Command
 * Line Tools or xcode-select's developer folder hold a python3, asked
 * without running it (the stub may open an install dialog on the Mac's
 * screen); where there is no xcode-select to ask, it is run once and its
 * message recognised. Sets jc_py to the path found (empty when none) and
 * jc_why to one "WORD:missing" or "PATH:stub" per candidate passed over.
 * The same in sh, bash and zsh.
 */
#define JC_PYTHON_FIND_SH(CANDS, DARWIN) \
	"jc_py= jc_why=; for jc_c in " CANDS "; do " \
	"jc_w=$(command -v \"$jc_c\" 2>/dev/null) || { jc_why=\"$jc_why ${jc_c}:missing\"; continue; }; " \
	"if [ \"$jc_w\" = /usr/bin/python3 ] && " DARWIN " && " \
	"[ ! -x /Library/Developer/CommandLineTools/usr/bin/python3 ] && " \
	"if [ -x /usr/bin/xcode-select ]; then " \
	"! { jc_x=$(/usr/bin/xcode-select -p 2>/dev/null) && [ -x \"$jc_x/usr/bin/python3\" ]; }; " \
	"else \"$jc_w\" -c '' </dev/null 2>&1 | grep -q xcode-select; fi; " \
	"then jc_why=\"$jc_why ${jc_w}:stub\"; continue; fi; jc_py=$jc_w; break; done; "

/* The Python candidates when none is named (--python). */
#define JC_PYTHON_DEFAULT "python3 /opt/homebrew/bin/python3"

/*
 * A fresh token of len characters (len even, at least 4) into out[0..len],
 * NUL-terminated: the two characters of prefix (so that it is never a
 * number or an option), then hex digits from /dev/urandom, else from the
 * clock and the pid.
 */
void jc_token(char *out, size_t len, const char *prefix);

/* True for an interface or RDMA device name: [A-Za-z0-9_.-]{1,31}, no leading '-'. */
bool jc_iface_name_ok(const char *s);

/*
 * False for an interface that is never a cable end: the one the host's
 * management address (the SSH session) is on, and loopbacks (lo, lo0...).
 */
bool jc_cable_iface_ok(const struct jc_host *h, const char *name);

/* True for a dotted IPv4 address (four decimal octets, none with a leading zero). */
bool jc_ipv4_ok(const char *s);

/*
 * True for the text of a configuration file of ours (--persist on Linux):
 * lines of letters, digits, spaces and "#._-/=:[]", at most 1024 bytes.
 * No quote, '$', '`' or backslash: a shell sees nothing in it even unquoted.
 */
bool jc_file_text_ok(const char *s);

/* True for "A.B.C.D/LEN" (LEN 0..32), or a bare address too unless need_len. */
bool jc_ipv4_prefix_ok(const char *s, bool need_len);

/*
 * Read a whole file into a new NUL-terminated buffer of at most max bytes:
 * a regular file, or a pipe or FIFO (the open never waits for a writer: a
 * FIFO without one reads as empty). A device or a socket is refused.
 * Returns 0, or -errno / -EFBIG (too large) / -EISDIR / -EINVAL (not a
 * regular file) with err filled.
 */
int jc_read_file(const char *path, size_t max, char **out, size_t *len, struct jc_err *err);

/*
 * The same for name inside the folder open as dfd, regular files only
 * (a FIFO is refused without blocking), never through a symbolic link
 * (-ELOOP); shown names the file in messages.
 */
int jc_read_file_at(int dfd, const char *name, const char *shown, size_t max, char **out,
    size_t *len, struct jc_err *err);

/*
 * Replace path with len bytes of data, whole or not at all: a temporary
 * file of a fresh name beside it (created exclusively, never through a
 * link, mode 0600), written, given mode (less the umask), fsynced and
 * renamed over path. A path that is a symbolic link (-ELOOP) or not a
 * regular file (-EINVAL) is refused. Returns 0, or -errno with err filled;
 * no temporary is left.
 */
int jc_write_atomic(const char *path, const void *data, size_t len, unsigned mode,
    struct jc_err *err);

/* The same for name inside the folder open as dfd; shown names it in messages. */
int jc_write_atomic_at(int dfd, const char *name, const char *shown, const void *data,
    size_t len, unsigned mode, struct jc_err *err);

/*
 * Whether entry (a name in a folder) is the temporary file of a
 * jc_write_atomic of NAME whose writer died before its rename: "." NAME
 * ".tmp.tt" and 14 hex digits. *name_len: NAME's length, at entry + 1.
 */
bool jc_write_atomic_temp(const char *entry, size_t *name_len);

/*
 * Check that path is a folder only we may change: owned by the effective
 * user and not writable by group or others (a link to one counts when we
 * own the link). With create, missing folders on the way are made, 0700.
 * Returns 0, or -errno / -EPERM / -ENOTDIR with err filled.
 */
int jc_private_dir(const char *path, bool create, struct jc_err *err);

/*
 * Run fn(i, arg) for every i in [0, n), each on its own thread (all at
 * once: the jobs are network round trips, not CPU work), and return when
 * all are done. A thread that cannot be started runs its job inline.
 */
void jc_parallel_for(size_t n, void (*fn)(size_t i, void *arg), void *arg);

/* Free what a port owns (the port itself is not freed). */
void jc_port_clear(struct jc_port *p);

/* Free what an interface owns and zero it (the interface itself is not freed). */
void jc_iface_clear(struct jc_iface *i);

/* Free n routes and the array. */
void jc_routes_free(struct jc_route *r, size_t n);

/* Free n other managers and the array. */
void jc_mgrs_free(struct jc_mgr *m, size_t n);

/* Free what a hardware port entry owns (the entry itself is not freed). */
void jc_hwport_clear(struct jc_hwport *p);

/* Free what an RDMA device entry owns (the entry itself is not freed). */
void jc_rdma_dev_clear(struct jc_rdma_dev *d);

/* "PORT_ACTIVE", "PORT_DOWN", ...; "unknown" for JC_PORT_UNKNOWN. Static string. */
const char *jc_port_state_name(enum jc_port_state st);

/*
 * Text from a host or a device made safe for a terminal, a log or DOT:
 * control characters (C0, DEL, C1) and bytes that are not UTF-8 written as
 * \xNN (\u00NN for C1; \u202E and the like for the marks and overrides of
 * the text's direction), at most max characters (0: no limit; "..." after a
 * cut). NULL reads as "?". jc_printable returns a new string;
 * jc_buf_printable appends to b, keeping newlines and tabs when keep_lines.
 */
char *jc_printable(const char *s, size_t max);
void jc_buf_printable(struct jc_buf *b, const char *s, size_t max, bool keep_lines);

/*
 * Add to notes (ignored when NULL) the message fmt, whose one "%s" is
 * replaced by arg (remote text: cut to 40 bytes, unprintable bytes and
 * quote marks replaced by '?'; NULL counts as empty).
 */
void jc_note_quoted(struct jc_strv *notes, const char *fmt, const char *arg);

/* SHA-256 of len bytes of data as 64 lower-case hex digits and a NUL. */
void jc_sha256_hex(const void *data, size_t len, char out[65]);

/* The same, fed in pieces: init, update as often as needed, final. */
struct jc_sha256 {
	uint32_t h[8];
	unsigned char blk[64];
	size_t nblk;
	uint64_t total;
};
void jc_sha256_init(struct jc_sha256 *s);
void jc_sha256_update(struct jc_sha256 *s, const void *data, size_t n);
void jc_sha256_final(struct jc_sha256 *s, char out[65]);

/* Monotonic clock in seconds. */
double jc_now(void);

/* Parse a decimal integer in [min, max]; returns false on any garbage. */
bool jc_parse_int(const char *s, long min, long max, long *out);

#endif
