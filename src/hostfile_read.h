/* SPDX-License-Identifier: MIT */
/*
 * The hostfile reader: turns the JSON that mlx.launch reads (a bare list of
 * hosts, or an object with "backend", "envs" and "hosts") into a struct
 * jc_hostfile. It collects every structural problem it meets (syntax with
 * line and column, wrong types with a JSON path, missing keys, names that
 * are not safe to hand to a shell) instead of stopping at the first, and
 * keeps whatever could be read so that the rules of hostfile_check.c can still run.
 */
#ifndef JC_HOSTFILE_H
#define JC_HOSTFILE_H

#include "util.h"

/* Hostfiles larger than this are refused (a real one is a few KiB). */
#define HOSTFILE_MAX_SIZE ((size_t)16 << 20)

/* The part of the document a diagnostic is about. */
enum hostfile_part {
	HF_PART_FILE,		/* reading the file, or its JSON syntax */
	HF_PART_TOP,		/* the top-level value or an unknown top-level key */
	HF_PART_BACKEND,
	HF_PART_ENVS,
	HF_PART_HOSTS,		/* the "hosts" member itself */
	HF_PART_HOST,		/* a host entry as a whole (not an object, unknown key) */
	HF_PART_SSH,
	HF_PART_IPS,
	HF_PART_RDMA,
};

/*
 * One problem (or warning) found while reading. code is a static, stable
 * short name ("json-syntax", "bad-type", "missing-ssh", "bad-name" ...);
 * msg is owned and does not repeat the file name, except for syntax errors,
 * which read "PATH:LINE:COLUMN: text" like a compiler's.
 */
struct hostfile_diag {
	const char *code;
	char *msg;
	bool warning;
	enum hostfile_part part;
	long host;		/* index in hosts, -1 when not about one host */
	long index;		/* index in the host's "ips", -1 when not about one */
};

struct hostfile_diags {
	struct hostfile_diag *v;
	size_t n;
	size_t nerrors;		/* entries that are not warnings */
};

/*
 * Parse len bytes of buf (need not be NUL-terminated), reported as name.
 * Every problem found is appended to diags (which the caller initialises to
 * zero and releases with hostfile_diags_free()). *out receives what could
 * be read: NULL when the JSON itself could not be parsed, otherwise a
 * structure (possibly with fewer hosts or fields than the file meant) to be
 * released with jc_hostfile_free(). Names that failed validation are kept
 * as read, so only use them after checking diags->nerrors == 0.
 * Returns 0 when no problem (warnings allowed) was found, else -EINVAL.
 */
int hostfile_parse(const char *buf, size_t len, const char *name,
    struct jc_hostfile **out, struct hostfile_diags *diags);

/*
 * Read the file at path (at most HOSTFILE_MAX_SIZE bytes) and parse it as
 * hostfile_parse() does. Failures to read are diagnostics too ("missing-file",
 * "not-a-file", "too-large", "unreadable"), with *out left NULL.
 * Returns 0 or -EINVAL as hostfile_parse().
 */
int hostfile_load(const char *path, struct jc_hostfile **out, struct hostfile_diags *diags);

/*
 * As hostfile_parse() and hostfile_load(), about twice as fast on large
 * files, for a caller that no other thread can interrupt with jansson
 * calls while they run: jansson's allocator is swapped for an arena during
 * the call (its values are dropped with the arena, not freed one by one).
 */
int hostfile_parse_alone(const char *buf, size_t len, const char *name,
    struct jc_hostfile **out, struct hostfile_diags *diags);
int hostfile_load_alone(const char *path, struct jc_hostfile **out,
    struct hostfile_diags *diags);

/*
 * The --hostfile reader of the configure command, with the messages of
 * mlx's Hostfile.from_file: "Hostfile PATH doesn't exist" when there is no
 * such file, "Failed to parse hostfile PATH (WHY)" for any other problem
 * (WHY is the first one). Problems with "envs" are not fatal here, since
 * only the hosts are used. Returns 0 with *out owned by the caller, or a
 * negative value with err filled and *out NULL.
 */
int hostfile_read_mlx(const char *path, struct jc_hostfile **out, struct jc_err *err);

/* Release the messages of diags and reset it to zero. */
void hostfile_diags_free(struct hostfile_diags *diags);

/*
 * Validation of the names a hostfile hands to shells: an ssh target
 * ([user@]host[:port], as --hosts accepts it), an address of "ips" (an IPv4
 * or IPv6 literal, or a DNS name whose last label is not a number, so that
 * 10.0.0.256 is a bad address rather than a name to look up), an "envs" entry (KEY=VALUE, KEY of
 * [A-Za-z0-9_]). Device names use jc_iface_name_ok(). NULL is never valid.
 */
bool hostfile_ssh_ok(const char *s);
bool hostfile_ip_ok(const char *s);
bool hostfile_env_ok(const char *s);

/*
 * A copy of s that is safe to print and to put in JSON: control bytes
 * and (when s is not valid UTF-8) bytes above 0x7f become
 * \xNN; with max > 0, cut after max bytes with "...". Caller frees.
 */
char *hostfile_printable(const char *s, size_t max);

#endif
