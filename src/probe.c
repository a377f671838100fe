/* SPDX-License-Identifier: MIT */
/*
 * Discovery of many hosts at once: a pool of threads, each taking the next
 * host, connecting, running the one probe script and turning its framed
 * output into raw outputs and an inventory; or, with a bundle, reading the
 * raw outputs from disk instead. See probe.h for the framing.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bundle.h"
#include "hosts.h"
#include "parse_mgr.h"
#include "parse_tb.h"
#include "probe.h"

#define TOKEN_LEN 32

static const struct jc_platform_ops *const probe_platforms[] = {
	&jc_platform_macos, &jc_platform_linux,
};

const char *
probe_state_name(enum probe_state st)
{
	switch (st) {
	case PROBE_WAITING:
		return "waiting";
	case PROBE_CONNECTING:
		return "connecting";
	case PROBE_RUNNING:
		return "probing";
	case PROBE_DONE:
		return "done";
	case PROBE_FAILED:
		return "failed";
	case PROBE_UNREACHABLE:
		return "unreachable";
	}
	return "?";
}

/* the script */

/*
 * uname.txt and a command that is "uname -n" come from the one uname the
 * script runs first (uname -sn): no process of their own.
 */
static bool
from_uname(const struct jc_probe_cmd *c)
{
	return strcmp(c->name, "uname.txt") == 0 || strcmp(c->sh, "uname -n") == 0;
}

/*
 * Command k of platform p: its cmds, then (doctor) its doctor_cmds; NULL
 * past the last.
 */
static const struct jc_probe_cmd *
cmd_at(const struct jc_platform_ops *p, bool doctor, size_t k)
{
	size_t n = 0;

	while (p->cmds[n].name != NULL)
		n++;
	if (k < n)
		return &p->cmds[k];
	if (!doctor || p->doctor_cmds == NULL)
		return NULL;
	for (size_t i = 0; p->doctor_cmds[i].name != NULL; i++)
		if (n + i == k)
			return &p->doctor_cmds[i];
	return NULL;
}

/*
 * The passwordless sudo check (sudo -n true): left out of the script when
 * the caller will neither set up nor report it (configure --dot).
 */
static bool
sudo_check(const struct jc_probe_cmd *c)
{
	return strcmp(c->name, "sudo-n-true.txt") == 0;
}

/* The other network managers' command (left out but for those who need it). */
static bool
managers_cmd(const struct jc_probe_cmd *c)
{
	return strcmp(c->name, MGR_FILE) == 0;
}

/* The cable graph needs command c of platform p. */
static bool
for_cabling(const struct jc_platform_ops *p, const struct jc_probe_cmd *c)
{
	if (p->cabling_cmds == NULL)
		return true;
	for (size_t i = 0; p->cabling_cmds[i] != NULL; i++)
		if (strcmp(p->cabling_cmds[i], c->name) == 0)
			return true;
	return false;
}

/* Command c of platform p answers what can change while the host runs. */
static bool
for_watch(const struct jc_platform_ops *p, const struct jc_probe_cmd *c)
{
	if (p->watch_cmds == NULL)
		return true;
	for (size_t i = 0; p->watch_cmds[i] != NULL; i++)
		if (strcmp(p->watch_cmds[i], c->name) == 0)
			return true;
	return false;
}

/* Command c of p runs in a process of its own (no uname, nothing left out). */
static bool
own_process(const struct jc_platform_ops *p, const struct jc_probe_cmd *c, unsigned leave_out)
{
	return !from_uname(c) && !((leave_out & PROBE_NO_SUDO) && sudo_check(c)) &&
	    !((leave_out & PROBE_NO_MANAGERS) && managers_cmd(c)) &&
	    !((leave_out & PROBE_CABLING_ONLY) && !for_cabling(p, c)) &&
	    !((leave_out & PROBE_CHANGING_ONLY) && !for_watch(p, c));
}

/*
 * A command that is one plain simple command (no shell syntax but words):
 * its framing subshell runs it directly. Any other runs in a subshell of
 * its own, so that a timeout (SIGTERM to the framing subshell's children)
 * ends all of it, loops included.
 */
static bool
simple_cmd(const char *sh)
{
	for (const char *p = sh; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || *p == ' ' || *p == '-' || *p == '_' ||
		    *p == '.' || *p == '/'))
			return false;
	return true;
}

static void
script_platform(struct jc_buf *b, const struct jc_platform_ops *p, size_t pi, bool dr,
    unsigned leave_out)
{
	const struct jc_probe_cmd *c;

	for (size_t k = 0; (c = cmd_at(p, dr, k)) != NULL; k++) {
		if (!own_process(p, c, leave_out))
			continue;
		buf_printf(b, "jc_%zu_%zu() {\n%s\n}\n", pi, k, c->sh);
	}
}

static void
script_helpers(struct jc_buf *b)
{
	/*
	 * The commands of a host run at once, each into its own file of a
	 * private temporary folder, framed there by its own subshell with its
	 * exit status; when each ends it prints "T D NAME" (for the timing log);
	 * then one cat prints every file in order. Without a temporary folder
	 * they run one after the other, straight into the frames (jc_run).
	 *
	 * jc_kill PID: SIGTERM to PID and everything below it, all listed
	 * first (a command that forked must not keep an output open, nor go
	 * on once its children are gone). jc_kids PID: jc_kill on each child
	 * of PID (what a framing subshell runs; it survives to write the
	 * status). jc_watch KILL PIDS: a watchdog that runs KILL on each of
	 * PIDS after jc_to seconds; jc_unwatch stops it however early (SIGKILL:
	 * a TERM could come before a new subshell is ready to take it, and
	 * leave a watchdog behind that the script would wait for) and its
	 * sleep (whose pid it left in the temporary folder). jc_start NAME
	 * FUNCTION: start FUNCTION into $jc_d/NAME, framed (pid in $!), run by
	 * the framing subshell itself (one process less per command: a plain
	 * simple command); jc_start_sub: the same with FUNCTION in a subshell
	 * of its own (any other command).
	 */
	buf_puts(b,
	    "jc_d=$(mktemp -d \"${TMPDIR:-/tmp}/jc-probe.XXXXXX\" 2>/dev/null) || jc_d=\n"
	    "if [ -n \"$jc_d\" ]; then\n"
	    "\ttrap 'rm -rf \"$jc_d\"' EXIT\n"
	    "\ttrap 'rm -rf \"$jc_d\"; exit 143' HUP INT TERM\n"
	    "fi\n"
	    "exec 3>&1\n"
	    "jc_tree() {\n"
	    "\techo \"$1\"\n"
	    "\tfor jc_c in $(pgrep -P \"$1\" 2>/dev/null); do jc_tree \"$jc_c\"; done\n"
	    "}\n"
	    "jc_kill() {\n"
	    "\tkill -TERM $(jc_tree \"$1\") 2>/dev/null\n"
	    "}\n"
	    "jc_kids() {\n"
	    "\tfor jc_k in $(pgrep -P \"$1\" 2>/dev/null); do jc_kill \"$jc_k\"; done\n"
	    "}\n"
	    "jc_watch() {\n"
	    "\t( sleep \"$jc_to\" </dev/null >/dev/null 2>&1 &\n"
	    "\t  [ -z \"$jc_d\" ] || echo $! >\"$jc_d/.watch\"\n"
	    "\t  wait $! && { echo \"timed out after $jc_to s\" >&2;"
	    " for jc_q in $2; do $1 $jc_q; done; } ) </dev/null >/dev/null 3>&- &\n"
	    "\tjc_w=$!\n"
	    "}\n"
	    "jc_unwatch() {\n"
	    "\t[ -n \"$jc_d\" ] && read -r jc_x 2>/dev/null <\"$jc_d/.watch\" &&"
	    " kill $jc_x 2>/dev/null\n"
	    "\tkill -KILL $jc_w 2>/dev/null; wait $jc_w 2>/dev/null\n"
	    "}\n"
	    "jc_start() {\n"
	    "\t( printf '%s B %s\\n' \"$T\" \"$1\"; \"$2\" </dev/null 3>&-; jc_s=$?\n"
	    "\t  printf '\\n%s E %s %d\\n' \"$T\" \"$1\" \"$jc_s\"\n"
	    "\t  printf '%s D %s\\n' \"$T\" \"$1\" >&3 ) >\"$jc_d/$1\" &\n"
	    "}\n"
	    "jc_start_sub() {\n"
	    "\t( printf '%s B %s\\n' \"$T\" \"$1\"; ( \"$2\" ) </dev/null 3>&-; jc_s=$?\n"
	    "\t  printf '\\n%s E %s %d\\n' \"$T\" \"$1\" \"$jc_s\"\n"
	    "\t  printf '%s D %s\\n' \"$T\" \"$1\" >&3 ) >\"$jc_d/$1\" &\n"
	    "}\n"
	    "jc_run() {\n"
	    "\tprintf '%s B %s\\n' \"$T\" \"$1\"\n"
	    "\t\"$2\" </dev/null 3>&- &\n"
	    "\tjc_p=$!\n"
	    "\tjc_watch jc_kill $jc_p\n"
	    "\twait $jc_p; jc_s=$?\n"
	    "\tjc_unwatch\n"
	    "\tprintf '\\n%s E %s %d\\n' \"$T\" \"$1\" \"$jc_s\"\n"
	    "}\n");
}

/* " $jc_pK" for each command of p that runs in a process of its own */
static void
script_pids(struct jc_buf *b, const struct jc_platform_ops *p, bool dr, unsigned leave_out)
{
	const struct jc_probe_cmd *c;

	for (size_t k = 0; (c = cmd_at(p, dr, k)) != NULL; k++)
		if (own_process(p, c, leave_out))
			buf_printf(b, " $jc_p%zu", k);
}

/* The case arm of platform p (number pi): its commands at once, or in turn. */
static void
script_case(struct jc_buf *b, const struct jc_platform_ops *p, size_t pi, bool dr,
    unsigned leave_out)
{
	const struct jc_probe_cmd *c;
	size_t k;

	buf_printf(b, "%s)\n", p->uname);
	for (k = 0; (c = cmd_at(p, dr, k)) != NULL; k++)
		if (from_uname(c) && strcmp(c->name, "uname.txt") != 0)
			buf_printf(b, "\tprintf '%%s B %s\\n%%s\\n\\n%%s E %s %%d\\n'"
			    " \"$T\" \"$2\" \"$T\" \"$jc_s\"\n", c->name, c->name);
	buf_puts(b, "\tif [ -n \"$jc_d\" ]; then\n");
	for (k = 0; (c = cmd_at(p, dr, k)) != NULL; k++)
		if (own_process(p, c, leave_out))
			buf_printf(b, "\t\tjc_start%s %s jc_%zu_%zu; jc_p%zu=$!\n",
			    simple_cmd(c->sh) ? "" : "_sub", c->name, pi, k, k);
	buf_puts(b, "\t\tjc_watch jc_kids \"");
	script_pids(b, p, dr, leave_out);
	buf_puts(b, "\"\n");
	/* every D line before the first frame: wait for all, then print */
	buf_puts(b, "\t\twait");
	script_pids(b, p, dr, leave_out);
	buf_puts(b, "\n\t\tjc_unwatch\n\t\tcat");
	for (k = 0; (c = cmd_at(p, dr, k)) != NULL; k++)
		if (own_process(p, c, leave_out))
			buf_printf(b, " \"$jc_d/%s\"", c->name);
	buf_puts(b, "\n\telse\n");
	for (k = 0; (c = cmd_at(p, dr, k)) != NULL; k++)
		if (own_process(p, c, leave_out))
			buf_printf(b, "\t\tjc_run %s jc_%zu_%zu\n", c->name, pi, k);
	buf_puts(b, "\tfi\n\t;;\n");
}

char *
probe_script(double command_timeout)
{
	return probe_script_for(command_timeout, false);
}

char *
probe_script_for(double command_timeout, bool doctor)
{
	return probe_script_opts(command_timeout, doctor, 0);
}

char *
probe_script_opts(double command_timeout, bool doctor, unsigned leave_out)
{
	return probe_script_python(command_timeout, doctor, leave_out, NULL);
}

char *
probe_script_python(double command_timeout, bool doctor, unsigned leave_out, const char *python)
{
	struct jc_buf b = { 0 };
	long to = command_timeout > 0 ? (long)(command_timeout + 0.999) : 60;

	buf_puts(&b, "IFS= read -r T || exit 97\n");
	if (leave_out & PROBE_UNAME_GIVEN)
		buf_puts(&b, "IFS= read -r jc_s || exit 97\nIFS= read -r jc_u\n");
	buf_puts(&b, "PATH=$PATH:/usr/sbin:/sbin:/usr/bin:/bin; export PATH\n");
	if (python != NULL && jc_plain_word(python)) {
		buf_puts(&b, "jc_want=");
		jc_sh_quote(&b, python);
		buf_puts(&b, "\n");
	}
	buf_printf(&b, "jc_to=%ld\n", to);
	script_helpers(&b);
	for (size_t i = 0; i < JC_ARRAY_LEN(probe_platforms); i++)
		script_platform(&b, probe_platforms[i], i, doctor, leave_out);
	/* one uname for the system's name and the host name */
	if (!(leave_out & PROBE_UNAME_GIVEN))
		buf_puts(&b, "jc_u=$(uname -sn </dev/null 2>/dev/null); jc_s=$?\n");
	buf_puts(&b,
	    "set -f; set -- $jc_u; set +f\n"
	    "printf '%s B uname.txt\\n%s\\n\\n%s E uname.txt %d\\n' \"$T\" \"$1\" \"$T\" \"$jc_s\"\n"
	    "case $1 in\n");
	for (size_t i = 0; i < JC_ARRAY_LEN(probe_platforms); i++)
		script_case(&b, probe_platforms[i], i, doctor, leave_out);
	buf_puts(&b, "esac\nexit 0\n");
	return buf_steal(&b);
}

/* Quote s for a POSIX shell (a new string). */
static char *
sh_quote(const char *s)
{
	struct jc_buf b = { 0 };

	jc_sh_quote(&b, s);
	return buf_steal(&b);
}

static bool
frame_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 128 || s[0] == '.')
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '-' || c == '_'))
			return false;
	}
	return true;
}

/* Next "TOKEN B " at the start of out or of a line, from pos; NULL if none. */
static const char *
find_begin(const char *out, size_t len, size_t pos, const char *token)
{
	size_t tl = strlen(token);

	while (pos < len) {
		const char *p = memmem(out + pos, len - pos, token, tl);

		if (p == NULL)
			return NULL;
		if ((p == out || p[-1] == '\n') && (size_t)(out + len - p) >= tl + 3 &&
		    memcmp(p + tl, " B ", 3) == 0)
			return p;
		pos = (size_t)(p - out) + 1;
	}
	return NULL;
}

int
probe_split(const char *token, const char *out, size_t len, struct jc_raw *raw,
    size_t *ends, size_t nends, struct jc_err *err)
{
	size_t tl = strlen(token), pos = 0;
	int nframes = 0, rc;
	/* the names met so far (and those raw held before): one lookup per frame */
	json_t *seen = json_object(), *before = json_object();

	if (tl == 0) {
		rc = jc_fail(err, -EINVAL, "empty frame token");
		goto out;
	}
	for (size_t i = 0; i < raw->n; i++)
		json_object_set_new(before, raw->outs[i].name, json_true());
	for (;;) {
		const char *b = find_begin(out, len, pos, token), *name, *nl, *e, *st, *stend;
		size_t nlen, dstart;
		struct jc_buf needle = { 0 };
		char namebuf[129], num[16];
		long status;

		if (b == NULL)
			break;
		name = b + tl + 3;
		nl = memchr(name, '\n', (size_t)(out + len - name));
		if (nl == NULL) {
			rc = jc_fail(err, -EPROTO, "probe output cut short in a frame header");
			goto out;
		}
		nlen = (size_t)(nl - name);
		if (!frame_name_ok(name, nlen)) {
			rc = jc_fail(err, -EPROTO, "probe output has a frame with a bad name");
			goto out;
		}
		memcpy(namebuf, name, nlen);
		namebuf[nlen] = '\0';
		/* one command, one frame: a second one is not the script's */
		if (json_object_get(seen, namebuf) != NULL) {
			rc = jc_fail(err, -EPROTO, "the probe output has two frames for %s", namebuf);
			goto out;
		}
		json_object_set_new(seen, namebuf, json_true());
		dstart = (size_t)(nl + 1 - out);
		buf_printf(&needle, "\n%s E %s ", token, namebuf);
		e = memmem(out + dstart, len - dstart, needle.data, needle.len);
		if (e == NULL) {
			buf_free(&needle);
			rc = jc_fail(err, -EPROTO, "the output of %s was cut short", namebuf);
			goto out;
		}
		st = e + needle.len;
		buf_free(&needle);
		stend = memchr(st, '\n', (size_t)(out + len - st));
		if (stend == NULL || stend == st || (size_t)(stend - st) >= sizeof(num)) {
			rc = jc_fail(err, -EPROTO, "the output of %s has no exit status", namebuf);
			goto out;
		}
		memcpy(num, st, (size_t)(stend - st));
		num[stend - st] = '\0';
		if (!jc_parse_int(num, 0, 255, &status)) {
			rc = jc_fail(err, -EPROTO, "the output of %s has a bad exit status", namebuf);
			goto out;
		}
		if (json_object_get(before, namebuf) != NULL)
			raw_add(raw, namebuf, out + dstart, (size_t)(e - (out + dstart)), (int)status);
		else
			raw_add_new(raw, namebuf, out + dstart, (size_t)(e - (out + dstart)),
			    (int)status);
		pos = (size_t)(stend + 1 - out);
		if (ends != NULL && (size_t)nframes < nends)
			ends[nframes] = pos;
		nframes++;
	}
	rc = nframes;
out:
	json_decref(seen);
	json_decref(before);
	return rc;
}

int
probe_parse_raw(struct jc_host *h, const struct jc_raw *raw, struct jc_err *err)
{
	const struct jc_platform_ops *p = platform_for_raw(raw);

	if (p == NULL) {
		const struct jc_raw_out *u = raw_get(raw, "uname.txt");

		if (u != NULL && u->len > 0) {
			char *line = xstrndup(u->data, strcspn(u->data, "\r\n"));
			char *safe = jc_printable(line, 64);
			int rc = jc_fail(err, -ENOTSUP, "unsupported system: uname -s says '%s'",
			    safe);

			free(line);
			free(safe);
			return rc;
		}
		return jc_fail(err, -ENOTSUP, "cannot tell which system the outputs come from");
	}
	return p->parse(h, raw, err);
}

/* live probing */

struct timeline {
	size_t off;		/* stdout length after a chunk */
	double t;		/* when it arrived */
};

struct shared {
	const struct probe_opts *o;
	struct jc_transport *tp;
	const char *command;	/* exec /bin/sh -c '<script>' */
	struct jc_host *hosts;
	struct jc_raw *raws;
	size_t n;
	pthread_mutex_t mu;	/* next, nerr and the callbacks */
	size_t next;
	size_t nerr;
};

struct collector {
	struct jc_buf out, err;
	size_t cap;
	bool over;
	struct timeline *tl;
	size_t ntl;
};

static void
report(struct shared *sh, size_t i, enum probe_state st)
{
	if (sh->o->progress == NULL)
		return;
	pthread_mutex_lock(&sh->mu);
	sh->o->progress(sh->o->arg, i, st);
	pthread_mutex_unlock(&sh->mu);
}

static int
collect(void *arg, int fd, const char *data, size_t len)
{
	struct collector *c = arg;

	if (c->out.len + c->err.len + len > c->cap) {
		c->over = true;
		return 1;
	}
	if (fd == 2) {
		buf_append(&c->err, data, len);
		return 0;
	}
	buf_append(&c->out, data, len);
	c->tl = xreallocarray(c->tl, c->ntl + 1, sizeof(*c->tl));
	c->tl[c->ntl].off = c->out.len;
	c->tl[c->ntl].t = jc_now();
	c->ntl++;
	return 0;
}

/* When the byte before off arrived. */
static double
arrival(const struct collector *c, size_t off, double t0)
{
	for (size_t i = 0; i < c->ntl; i++)
		if (c->tl[i].off >= off)
			return c->tl[i].t;
	return c->ntl ? c->tl[c->ntl - 1].t : t0;
}

/*
 * When the "TOKEN D NAME" line of a command run in parallel arrived, or a
 * negative value when there is none (commands run one after the other).
 */
static double
done_time(const struct collector *c, const char *token, const char *name, double t0)
{
	struct jc_buf needle = { 0 };
	const char *p, *end = c->out.data + c->out.len;
	double t = -1;

	buf_printf(&needle, "%s D %s\n", token, name);
	for (p = c->out.data; p != NULL && p < end;) {
		p = memmem(p, (size_t)(end - p), needle.data, needle.len);
		if (p == NULL)
			break;
		if (p == c->out.data || p[-1] == '\n') {
			t = arrival(c, (size_t)(p - c->out.data) + needle.len, t0);
			break;
		}
		p++;
	}
	buf_free(&needle);
	return t;
}

static void
log_commands(struct shared *sh, size_t i, const struct collector *c, const struct jc_raw *raw,
    const char *token, const size_t *ends, size_t nframes, double t0)
{
	double prev = t0;

	if (sh->o->log == NULL)
		return;
	pthread_mutex_lock(&sh->mu);
	for (size_t k = 0; k < nframes && k < raw->n; k++) {
		const char *sh_text = raw->outs[k].name;
		double t = arrival(c, ends[k], t0), d = done_time(c, token, raw->outs[k].name, t0);

		/* name the command by its sh text when a backend knows it */
		for (size_t p = 0; p < JC_ARRAY_LEN(probe_platforms); p++) {
			const struct jc_probe_cmd *pc;

			for (size_t q = 0; (pc = cmd_at(probe_platforms[p], true, q)) != NULL; q++)
				if (strcmp(pc->name, raw->outs[k].name) == 0)
					sh_text = pc->sh;
		}
		if (strcmp(raw->outs[k].name, "uname.txt") == 0)
			sh_text = "uname -s";
		/* in parallel: from the start of the script; else from the last one */
		sh->o->log(sh->o->arg, i, sh_text, raw->outs[k].status, d >= 0 ? d - t0 : t - prev);
		prev = t;
	}
	pthread_mutex_unlock(&sh->mu);
}

static void
host_fail(struct jc_host *h, bool reachable, const char *msg)
{
	h->reachable = reachable;
	free(h->error);
	h->error = xstrdup(msg);
}

static char *
first_line(const char *s, size_t max)
{
	size_t n = strcspn(s, "\r\n");

	return xstrndup(s, n > max ? max : n);
}

/* The token the script reads first, with its newline: "jc" never a number or an option. */
static void
make_token(char *out)
{
	jc_token(out, TOKEN_LEN, "jc");
	out[TOKEN_LEN] = '\n';
	out[TOKEN_LEN + 1] = '\0';
}

static void
probe_one(struct shared *sh, size_t i)
{
	struct jc_host *h = &sh->hosts[i];
	struct jc_raw tmp = { 0 }, *raw = sh->raws ? &sh->raws[i] : &tmp;
	struct collector c = { .cap = sh->o->cap ? sh->o->cap : TR_DEFAULT_CAP };
	static const struct tr_stream_cbs cbs = { collect, NULL, NULL };
	struct jc_conn *s = NULL;
	struct jc_err err = { 0 };
	size_t ends[256];
	char token[TOKEN_LEN + 1], hosttoken[TOKEN_LEN + 2];
	double t0, bound;
	int r, status = -1, nframes;
	size_t nk = 0;

	free(raw->host);
	raw->host = xstrdup(h->name);
	report(sh, i, PROBE_CONNECTING);
	r = tp_connect(sh->tp, h->name, h->user, h->port, &s, &err);
	if (r != 0) {
		host_fail(h, false, err.msg);
		report(sh, i, PROBE_UNREACHABLE);
		goto out;
	}
	h->reachable = true;
	report(sh, i, PROBE_RUNNING);
	t0 = jc_now();
	/* each command is bounded remotely; this bounds the whole script */
	for (size_t p = 0; p < JC_ARRAY_LEN(probe_platforms); p++) {
		size_t k = 0;

		while (cmd_at(probe_platforms[p], sh->o->doctor, k) != NULL)
			k++;
		if (k > nk)
			nk = k;
	}
	bound = (double)(nk + 1) * (sh->o->command_timeout > 0 ? sh->o->command_timeout : 60) + 10;
	/* a token of this host's own: nothing another host prints can forge its frames */
	make_token(hosttoken);
	r = tp_stream(s, sh->command, hosttoken, strlen(hosttoken), &cbs, &c, bound, &status,
	    &err);
	if (r == TR_ESTOPPED && c.over)
		r = jc_fail(&err, TR_ETOOBIG,
		    "the probe printed more than %zu MiB: refused", c.cap / (1024 * 1024));
	if (r == 0 && sh->o->keep != NULL)
		sh->o->keep[i] = s;
	else
		tp_close(s);
	if (r != 0) {
		host_fail(h, true, err.msg);
		report(sh, i, PROBE_FAILED);
		goto out;
	}
	if (c.out.data == NULL)
		buf_puts(&c.out, "");
	/* the token as written to stdin ends with a newline */
	memcpy(token, hosttoken, TOKEN_LEN);
	token[TOKEN_LEN] = '\0';
	nframes = probe_split(token, c.out.data, c.out.len, raw, ends, JC_ARRAY_LEN(ends), &err);
	if (nframes >= 0 && raw_get(raw, "uname.txt") == NULL) {
		char *why = c.err.len ? first_line(c.err.data, 200) : xasprintf("exit status %d", status);

		nframes = jc_fail(&err, -EPROTO, "the probe script failed: %s", why);
		free(why);
	}
	if (nframes < 0) {
		host_fail(h, true, err.msg);
		report(sh, i, PROBE_FAILED);
		goto out;
	}
	log_commands(sh, i, &c, raw, token, ends,
	    (size_t)nframes < JC_ARRAY_LEN(ends) ? (size_t)nframes : JC_ARRAY_LEN(ends), t0);
	if (probe_parse_raw(h, raw, &err) != 0) {
		host_fail(h, true, err.msg);
		report(sh, i, PROBE_FAILED);
		goto out;
	}
	report(sh, i, PROBE_DONE);
out:
	if (h->error != NULL) {
		pthread_mutex_lock(&sh->mu);
		sh->nerr++;
		pthread_mutex_unlock(&sh->mu);
	}
	raw_clear(&tmp);
	buf_free(&c.out);
	buf_free(&c.err);
	free(c.tl);
}

static void *
worker(void *arg)
{
	struct shared *sh = arg;

	for (;;) {
		size_t i;

		pthread_mutex_lock(&sh->mu);
		i = sh->next++;
		pthread_mutex_unlock(&sh->mu);
		if (i >= sh->n)
			return NULL;
		probe_one(sh, i);
	}
}

static size_t
replay(struct jc_transport *tp, struct jc_host *hosts, size_t n, const struct probe_opts *o,
    struct jc_raw *raws)
{
	size_t nerr = 0;

	for (size_t i = 0; i < n; i++) {
		struct jc_raw tmp = { 0 }, *raw = raws ? &raws[i] : &tmp;
		struct jc_err err = { 0 };

		if (o->progress)
			o->progress(o->arg, i, PROBE_RUNNING);
		raw_clear(raw);
		if (tp->ops->saved_raw(tp, hosts[i].name, raw, &err) != 0) {
			/* only a host the bundle has no outputs of was not reached */
			bool gone = err.code == -ENOENT;

			raw->host = xstrdup(hosts[i].name);
			host_fail(&hosts[i], !gone, err.msg);
			nerr++;
			if (o->progress)
				o->progress(o->arg, i, gone ? PROBE_UNREACHABLE : PROBE_FAILED);
		} else {
			hosts[i].reachable = true;
			if (probe_parse_raw(&hosts[i], raw, &err) != 0) {
				host_fail(&hosts[i], true, err.msg);
				nerr++;
			}
			if (o->progress)
				o->progress(o->arg, i, hosts[i].error ? PROBE_FAILED : PROBE_DONE);
		}
		raw_clear(&tmp);
	}
	return nerr;
}

size_t
probe_hosts(struct jc_host *hosts, size_t n, const struct probe_opts *o, struct jc_raw *raws)
{
	struct shared sh = { .o = o, .hosts = hosts, .raws = raws, .n = n };
	pthread_t tids[PROBE_MAX_THREADS];
	size_t nt = n < PROBE_MAX_THREADS ? n : PROBE_MAX_THREADS, started = 0;
	struct jc_transport *own = NULL;
	char *script, *quoted;

	sh.tp = o->transport;
	if (sh.tp == NULL)
		sh.tp = own = transport_default(&o->tr, o->from);
	if (sh.tp->ops->saved_raw != NULL) {
		size_t nerr = replay(sh.tp, hosts, n, o, raws);

		transport_free(own);
		parse_tb_infer_peers(hosts, n);
		return nerr;
	}
	for (size_t i = 0; i < n; i++)
		if (o->progress)
			o->progress(o->arg, i, PROBE_WAITING);
	script = probe_script_python(o->command_timeout, o->doctor,
	    (o->no_sudo_check ? PROBE_NO_SUDO : 0) | (o->cabling_only ? PROBE_CABLING_ONLY : 0) |
	    (o->doctor || o->managers ? 0 : PROBE_NO_MANAGERS), o->python);
	quoted = sh_quote(script);
	sh.command = xasprintf("exec /bin/sh -c %s", quoted);
	free(quoted);
	free(script);
	pthread_mutex_init(&sh.mu, NULL);
	for (size_t i = 0; i < nt; i++) {
		if (pthread_create(&tids[started], NULL, worker, &sh) != 0)
			break;
		started++;
	}
	if (started == 0)
		worker(&sh);	/* no thread at all: probe here, one by one */
	for (size_t i = 0; i < started; i++)
		pthread_join(tids[i], NULL);
	pthread_mutex_destroy(&sh.mu);
	free((char *)sh.command);
	transport_free(own);
	parse_tb_infer_peers(hosts, n);	/* cables whose peer gave no UUID */
	return sh.nerr;
}

int
probe_bundle_hosts(const char *dir, struct jc_host **out, size_t *n, struct jc_err *err)
{
	struct jc_strv names = { 0 };
	struct jc_host *hosts;
	int r;

	*out = NULL;
	*n = 0;
	if ((r = bundle_hosts(dir, &names, err)) != 0) {
		strv_free(&names);
		return r;
	}
	if (names.n == 0) {
		strv_free(&names);
		return jc_fail(err, -ENOENT, "%s: the bundle holds no host", dir);
	}
	hosts = xcalloc(names.n, sizeof(*hosts));
	for (size_t i = 0; i < names.n; i++) {
		hosts[i].name = xstrdup(names.v[i]);
		hosts[i].target = xstrdup(names.v[i]);
	}
	*out = hosts;
	*n = names.n;
	strv_free(&names);
	return 0;
}
