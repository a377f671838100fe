/* SPDX-License-Identifier: MIT */
/*
 * The launcher: one SSH session and one thread per rank, the remote
 * script of mlx.launch (in POSIX sh rather than bash, with a folder per
 * rank instead of loose temporary files), supervision with mlx.launch's
 * rule (one rank fails, the others are stopped) and cleanup by pidfile,
 * which mlx.launch only does on its own termination.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "hostfile_read.h"
#include "hosts.h"
#include "launch.h"

#define LAUNCH_LINE_MAX 65536	/* a longer line is delivered in pieces */
#define LAUNCH_CLEANUP_TIMEOUT 15

struct rank {
	struct launch *l;
	size_t r;
	struct jc_host target;	/* parsed ssh target */
	char *script;
	struct tr_session *s;
	struct tr_stream *st;	/* under l->mu */
	struct jc_buf pre;	/* stdout before the mark line */
	bool marked;		/* the mark line was seen (or given up on) */
	char *dir;		/* remote folder */
	struct jc_buf part[2];	/* partial lines of fd 1 and 2 */
	struct launch_result res;
	bool done;		/* under l->mu */
	bool joinable;
	char tag[40];		/* names its remote folder */
	char *bin_state;	/* the LAUNCH_BIN_MARK line: "ok", "other", "none", or NULL */
	char *bin_version;
	pthread_t th;
	struct jc_err err;
};

struct launch {
	const struct jc_hostfile *hf;
	const struct launch_opts *o;
	const char *backend;
	struct launch_env *envs;
	size_t n;
	struct rank *ranks;
	pthread_mutex_t mu;	/* stream pointers, done flags, stop state */
	pthread_mutex_t outmu;	/* serialises the output callbacks */
	enum launch_stop stop;
	long first_failed;
	bool stopping;
};

void
launch_quote(struct jc_buf *b, const char *s)
{
	jc_sh_quote(b, s);
}

static bool
key_ok(const char *k)
{
	if (*k == '\0')
		return false;
	for (; *k; k++)
		if (!((*k >= 'a' && *k <= 'z') || (*k >= 'A' && *k <= 'Z') ||
		    (*k >= '0' && *k <= '9') || *k == '_'))
			return false;
	return true;
}

static bool
tag_ok(const char *t)
{
	if (*t == '\0' || strlen(t) > 64)
		return false;
	for (; *t; t++)
		if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') ||
		    (*t >= '0' && *t <= '9')))
			return false;
	return true;
}

bool
launch_bin_ok(const char *bin, struct jc_err *err)
{
	bool ok = *bin != '\0' && strstr(bin, "/./") == NULL && strstr(bin, "/../") == NULL;

	for (const unsigned char *p = (const unsigned char *)bin; ok && *p; p++) {
		if (*p < 0x20 || *p == 0x7f)
			ok = false;
		else if (bin[0] != '/' && !isalnum(*p) && strchr("._+-", *p) == NULL)
			ok = false;
	}
	if (!ok) {
		char *p = hostfile_printable(bin, 200);

		jc_fail(err, -EINVAL, "'%s' is neither an absolute path nor a program name", p);
		free(p);
	}
	return ok;
}

void
launch_bin_candidates(const char *given, struct jc_strv *out)
{
	char *self;

	if (given != NULL) {
		strv_push(out, given);
		return;
	}
	strv_push(out, JC_PROG);
	strv_push(out, "/opt/homebrew/bin/" JC_PROG);
	strv_push(out, "/usr/local/bin/" JC_PROG);
	self = jc_self_path();
	if (self != NULL && strcmp(self, "/opt/homebrew/bin/" JC_PROG) != 0 &&
	    strcmp(self, "/usr/local/bin/" JC_PROG) != 0)
		strv_push(out, self);
	free(self);
}

/*
 * Find the program (see launch_opts.bin): jc_b its path, jc_v the first
 * line of its --version, jc_r ok, other or none.
 */
static void
script_find_bin(struct jc_buf *b, char *const *bin, size_t nbin, const char *version)
{
	buf_puts(b, "jc_r=none; jc_b=; jc_v=; for jc_c in");
	for (size_t i = 0; i < nbin; i++) {
		buf_puts(b, " ");
		launch_quote(b, bin[i]);
	}
	buf_puts(b, "; do case $jc_c in */*) ;; *) "
	    "jc_c=$(command -v \"$jc_c\" 2>/dev/null) || continue ;; esac; "
	    "if [ -f \"$jc_c\" ] && [ -x \"$jc_c\" ]; then jc_b=$jc_c; break; fi; done; "
	    "if [ -n \"$jc_b\" ]; then "
	    "jc_v=$(\"$jc_b\" --version </dev/null 2>/dev/null | "
	    "{ IFS= read -r jc_l; printf %s \"$jc_l\"; }); if [ \"$jc_v\" = ");
	launch_quote(b, version);
	buf_puts(b, " ]; then jc_r=ok; else jc_r=other; fi; fi; "
	    "printf '\\036JCB %s %s\\036%s\\n' \"$jc_r\" \"$jc_b\" \"$jc_v\"; ");
}

char *
launch_script(const struct launch_env *e, char *const *argv, size_t argc,
    const char *cwd, const char *tag, struct jc_err *err)
{
	return launch_script_bin(e, argv, argc, cwd, tag, NULL, 0, NULL, err);
}

char *
launch_script_bin(const struct launch_env *e, char *const *argv, size_t argc,
    const char *cwd, const char *tag, char *const *bin, size_t nbin, const char *version,
    struct jc_err *err)
{
	struct jc_buf b = { 0 };
	size_t first = 0;

	if (argc == 0) {
		jc_fail(err, -EINVAL, "No script is provided");
		return NULL;
	}
	if (tag != NULL && !tag_ok(tag)) {
		jc_fail(err, -EINVAL, "invalid folder tag '%s'", tag);
		return NULL;
	}
	for (size_t i = 0; i < e->n; i++) {
		if (!key_ok(e->vars[i].key)) {
			jc_fail(err, -EINVAL, "'%s' is an invalid environment variable name",
			    e->vars[i].key);
			return NULL;
		}
	}
	for (size_t i = 0; i < nbin; i++)
		if (!launch_bin_ok(bin[i], err))
			return NULL;
	/* the folder holds the pidfile and the file variables */
	buf_printf(&b, "d=$(mktemp -d \"${TMPDIR:-/tmp}/jaccl-launch.%s%sXXXXXX\") || exit 126; "
	    "echo $$ >\"$d/pid.new\" && mv \"$d/pid.new\" \"$d/pid\"; ", tag ? tag : "",
	    tag ? "." : "");
	if (nbin > 0)
		script_find_bin(&b, bin, nbin, version != NULL ? version : "");
	buf_puts(&b, "printf '\\036JCL %s\\n' \"$d\"; ");
	if (nbin > 0)
		buf_puts(&b, "[ \"$jc_r\" = ok ] || exit 127; ");
	if (cwd != NULL) {
		buf_puts(&b, "if [ -d ");
		launch_quote(&b, cwd);
		buf_puts(&b, " ]; then cd ");
		launch_quote(&b, cwd);
		buf_puts(&b, "; fi; ");
	}
	for (size_t i = 0; i < e->n; i++) {
		const struct launch_var *v = &e->vars[i];

		if (v->is_file) {
			buf_puts(&b, "printf '%s\\n' ");
			launch_quote(&b, v->value);
			buf_printf(&b, " >\"$d/%s\"; export %s=\"$d/%s\"; ", v->key, v->key,
			    v->key);
		} else {
			buf_printf(&b, "export %s=", v->key);
			launch_quote(&b, v->value);
			buf_puts(&b, "; ");
		}
	}
	/* python3: the host's, unless macOS's stub, else Homebrew's (JC_PYTHON_FIND_SH) */
	if (strcmp(argv[0], "python3") == 0) {
		buf_puts(&b, JC_PYTHON_FIND_SH(JC_PYTHON_DEFAULT, "[ \"$(uname -s)\" = Darwin ]")
		    "exec \"${jc_py:-python3}\"");
		first = 1;
	} else {
		buf_puts(&b, "exec");
	}
	for (size_t i = first; i < argc; i++) {
		buf_puts(&b, " ");
		if (i == 0 && nbin > 0)
			buf_puts(&b, "\"$jc_b\"");
		else
			launch_quote(&b, argv[i]);
	}
	return buf_steal(&b);
}

char *
launch_cleanup_script(const char *dir, const char *tag)
{
	struct jc_buf b = { 0 };
	const char *base;

	if (dir != NULL) {
		/* only a folder the script made: .../jaccl-launch.XXXXXX */
		if (!jc_plain_word(dir) || dir[0] != '/' || strstr(dir, "..") != NULL)
			return NULL;
		base = strrchr(dir, '/') + 1;
		if (strncmp(base, "jaccl-launch.", 13) != 0)
			return NULL;
		buf_puts(&b, "r=0; for d in ");
		launch_quote(&b, dir);
	} else {
		if (tag == NULL || !tag_ok(tag))
			return NULL;
		/*
		 * The script may not have made its folder and pidfile yet (it
		 * writes the pidfile whole, by rename): give it up to 3 s.
		 */
		buf_printf(&b, "i=0; while [ $i -lt 30 ]; do "
		    "set -- \"${TMPDIR:-/tmp}\"/jaccl-launch.%s.*; [ -s \"$1/pid\" ] && break; "
		    "sleep 0.1; i=$((i+1)); done; r=0; for d in \"${TMPDIR:-/tmp}\"/jaccl-launch.%s.*",
		    tag, tag);
	}
	/* only a folder and a pidfile of ours: another user's name no process of ours */
	buf_puts(&b, "; do [ -d \"$d\" ] && [ ! -h \"$d\" ] && [ -O \"$d\" ] || continue; "
	    "pid=; [ -f \"$d/pid\" ] && [ ! -h \"$d/pid\" ] && [ -O \"$d/pid\" ] && "
	    "pid=$(cat \"$d/pid\" 2>/dev/null); "
	    "case $pid in ''|*[!0-9]*) pid= ;; esac; "
	    "if [ -n \"$pid\" ] && kill -0 \"$pid\" 2>/dev/null; then r=1; "
	    "kill -TERM -\"$pid\" 2>/dev/null || kill -TERM \"$pid\" 2>/dev/null; i=0; "
	    "while kill -0 \"$pid\" 2>/dev/null && [ $i -lt 20 ]; do sleep 0.1; i=$((i+1)); done; "
	    "kill -KILL -\"$pid\" 2>/dev/null; kill -KILL \"$pid\" 2>/dev/null; fi; "
	    "rm -rf \"$d\"; done; echo $r");
	return buf_steal(&b);
}

int
launch_hostfile_from_list(const char *list, struct jc_hostfile **out, struct jc_err *err)
{
	struct jc_host *hosts;
	struct jc_hostfile *hf;
	size_t n;
	int r;

	*out = NULL;
	if ((r = hosts_from_list(list, &hosts, &n, err)) != 0)
		return r;
	hf = xcalloc(1, sizeof(*hf));
	hf->backend = xstrdup("");
	hf->hosts = xcalloc(n, sizeof(*hf->hosts));
	hf->nhosts = n;
	for (size_t i = 0; i < n; i++) {
		hf->hosts[i].ssh = xstrdup(hosts[i].target);
		if (hosts_is_ip_literal(hosts[i].target)) {
			hf->hosts[i].ips = xcalloc(1, sizeof(char *));
			hf->hosts[i].ips[0] = xstrdup(hosts[i].target);
			hf->hosts[i].nips = 1;
		}
	}
	hosts_free(hosts, n);
	*out = hf;
	return 0;
}

int
launch_prepare(const struct jc_hostfile *hf, const struct launch_opts *o,
    struct launch **out, struct jc_strv *warnings, struct jc_err *err)
{
	struct launch *l;
	char token[17];
	int r;

	*out = NULL;
	if (o->argc == 0)
		return jc_fail(err, -EINVAL, "No script is provided");
	for (size_t i = 0; i < hf->nhosts; i++) {
		struct jc_host h = { 0 };

		if (hf->hosts[i].ssh == NULL)
			return jc_fail(err, -EINVAL, "host %zu has no ssh name", i);
		r = hosts_parse_target(hf->hosts[i].ssh, &h, err);
		jc_host_clear(&h);
		if (r != 0)
			return r;
	}
	l = xcalloc(1, sizeof(*l));
	l->hf = hf;
	l->o = o;
	l->first_failed = -1;
	pthread_mutex_init(&l->mu, NULL);
	pthread_mutex_init(&l->outmu, NULL);
	if ((r = launch_env_compute(hf, &o->env, &l->envs, &l->backend, warnings, err)) < 0) {
		launch_free(l);
		return r;
	}
	l->n = hf->nhosts;
	l->ranks = xcalloc(l->n, sizeof(*l->ranks));
	jc_token(token, sizeof(token) - 1, "jl");
	for (size_t i = 0; i < l->n; i++) {
		struct rank *k = &l->ranks[i];

		k->l = l;
		k->r = i;
		k->res.status = -1;
		hosts_parse_target(hf->hosts[i].ssh, &k->target, NULL);
		snprintf(k->tag, sizeof(k->tag), "%sr%zu", token, i);
		k->script = launch_script_bin(&l->envs[i], o->argv, o->argc, o->cwd, k->tag,
		    o->bin, o->nbin, o->bin_version, err);
		if (k->script == NULL) {
			launch_free(l);
			return -EINVAL;
		}
	}
	*out = l;
	return 0;
}

const char *
launch_backend(const struct launch *l)
{
	return l->backend;
}

size_t
launch_nranks(const struct launch *l)
{
	return l->n;
}

const char *
launch_host(const struct launch *l, size_t r)
{
	return l->hf->hosts[r].ssh;
}

const struct launch_env *
launch_env(const struct launch *l, size_t r)
{
	return &l->envs[r];
}

const struct launch_result *
launch_result(const struct launch *l, size_t r)
{
	return &l->ranks[r].res;
}

enum launch_stop
launch_stop_reason(const struct launch *l, long *first_failed)
{
	if (first_failed)
		*first_failed = l->first_failed;
	return l->stop;
}

/* Stop every running rank (with l->mu held). */
static void
stop_all_locked(struct launch *l, enum launch_stop why)
{
	if (!l->stopping) {
		l->stopping = true;
		l->stop = why;
	}
	for (size_t i = 0; i < l->n; i++)
		if (l->ranks[i].st != NULL)
			tr_stream_stop(l->ranks[i].st);
}

void
launch_write(struct launch *l, size_t r, const void *data, size_t len)
{
	pthread_mutex_lock(&l->mu);
	if (r < l->n && l->ranks[r].st != NULL)
		tr_stream_write(l->ranks[r].st, data, len);
	pthread_mutex_unlock(&l->mu);
}

char *
launch_result_text(const struct launch_result *res)
{
	switch (res->state) {
	case LAUNCH_PENDING:
		return xstrdup("was not started");
	case LAUNCH_UNREACHABLE:
		return xasprintf("could not be reached: %s", res->error ? res->error : "?");
	case LAUNCH_NOSTART:
		return xasprintf("could not start: %s", res->error ? res->error : "?");
	case LAUNCH_RUNNING:
		return xstrdup("is running");
	case LAUNCH_EXITED:
		return res->status == 0 ? xstrdup("completed") :
		    xasprintf("exited with code %d", res->status);
	case LAUNCH_KILLED:
		/* OpenSSH names RFC 4254's signals only: SIGBUS, SIGTRAP, SIGSYS... come unnamed */
		if (res->signal != NULL && strchr(res->signal, '@') != NULL)
			return xasprintf("was killed by a signal sshd does not name (%s: "
			    "one outside SSH's list, such as SIGBUS or SIGTRAP)", res->signal);
		return xasprintf("was killed by SIG%s", res->signal ? res->signal : "?");
	case LAUNCH_STOPPED:
		return xstrdup("was stopped");
	case LAUNCH_LOST:
		return xasprintf("lost its connection: %s", res->error ? res->error : "?");
	case LAUNCH_NOBIN:
		return xasprintf("could not start: %s", res->error ? res->error : "?");
	}
	return xstrdup("?");
}

/* output */

static void
emit(struct rank *k, int fd, const char *data, size_t len)
{
	const struct launch_opts *o = k->l->o;

	if (len == 0)
		return;
	pthread_mutex_lock(&k->l->outmu);
	if (fd == 1 && o->raw != NULL)
		o->raw(o->arg, k->r, data, len);
	else if (o->line != NULL)
		o->line(o->arg, k->r, fd, data, len);
	pthread_mutex_unlock(&k->l->outmu);
}

/* Deliver whole lines of fd (1 or 2) from data; keep the rest. */
static void
lines(struct rank *k, int fd, const char *data, size_t len)
{
	struct jc_buf *p = &k->part[fd - 1];

	if (fd == 1 && k->l->o->raw != NULL) {
		emit(k, 1, data, len);
		return;
	}
	buf_append(p, data, len);
	for (;;) {
		char *nl = p->len ? memchr(p->data, '\n', p->len) : NULL;
		size_t n;

		if (nl == NULL) {
			if (p->len < LAUNCH_LINE_MAX)
				break;
			n = p->len;
		} else {
			n = (size_t)(nl - p->data) + 1;
		}
		emit(k, fd, p->data, n);
		memmove(p->data, p->data + n, p->len - n);
		p->len -= n;
	}
}

static void
flush_lines(struct rank *k)
{
	if (!k->marked) {
		k->marked = true;
		lines(k, 1, k->pre.data ? k->pre.data : "", k->pre.len);
		buf_free(&k->pre);
	}
	for (int fd = 1; fd <= 2; fd++) {
		emit(k, fd, k->part[fd - 1].data, k->part[fd - 1].len);
		k->part[fd - 1].len = 0;
	}
}

bool
launch_find_mark(const char *buf, size_t len, size_t *start, size_t *end, char **dir)
{
	size_t ml = strlen(LAUNCH_MARK);
	const char *m = len ? memmem(buf, len, LAUNCH_MARK, ml) : NULL;
	const char *nl;

	*dir = NULL;
	if (m == NULL)
		return false;
	nl = memchr(m, '\n', len - (size_t)(m - buf));
	if (nl == NULL)
		return false;
	*start = (size_t)(m - buf);
	*end = (size_t)(nl + 1 - buf);
	*dir = xstrndup(m + ml, (size_t)(nl - m) - ml);
	return true;
}

/*
 * The LAUNCH_BIN_MARK line among the first len bytes of pre (before the
 * mark line): kept in k, taken out of the output. Returns the length left.
 */
static size_t
take_bin_line(struct rank *k, size_t len)
{
	size_t ml = strlen(LAUNCH_BIN_MARK);
	char *m = len ? memmem(k->pre.data, len, LAUNCH_BIN_MARK, ml) : NULL;
	char *nl, *sp, *sep;

	if (m == NULL || (nl = memchr(m, '\n', len - (size_t)(m - k->pre.data))) == NULL)
		return len;
	*nl = '\0';
	sp = strchr(m + ml, ' ');
	sep = sp != NULL ? strchr(sp + 1, '\036') : NULL;
	if (sp != NULL && sep != NULL) {
		free(k->bin_state);
		free(k->res.bin);
		free(k->bin_version);
		k->bin_state = xstrndup(m + ml, (size_t)(sp - m) - ml);
		k->res.bin = sp + 1 < sep ? xstrndup(sp + 1, (size_t)(sep - sp - 1)) : NULL;
		k->bin_version = xstrdup(sep + 1);
	}
	memmove(m, nl + 1, k->pre.len - (size_t)(nl + 1 - k->pre.data));
	k->pre.len -= (size_t)(nl + 1 - m);
	return len - (size_t)(nl + 1 - m);
}

/* Why rank k could not run its program (launch_opts.bin), in words. */
static char *
bin_error(const struct rank *k)
{
	const struct launch_opts *o = k->l->o;
	struct jc_buf b = { 0 };
	char *p = hostfile_printable(k->res.bin ? k->res.bin : "", 300);
	char *v = hostfile_printable(k->bin_version ? k->bin_version : "", 200);

	if (strcmp(k->bin_state, "other") == 0) {
		if (*v != '\0')
			buf_printf(&b, "%s is %s, not %s as here", p, v, o->bin_version);
		else
			buf_printf(&b, "%s printed no version, not %s as here", p,
			    o->bin_version);
		buf_puts(&b, ": install the same version on every host, "
		    "or pass --remote-bin PATH");
	} else {
		buf_puts(&b, "no " JC_PROG " found (tried");
		for (size_t i = 0; i < o->nbin; i++) {
			char *c = hostfile_printable(o->bin[i], 300);

			buf_printf(&b, "%s %s%s", i ? "," : "", c,
			    strchr(c, '/') ? "" : " on PATH");
			free(c);
		}
		buf_puts(&b, "): install it on the host (brew install " JC_PROG "), "
		    "or pass --remote-bin PATH");
	}
	free(p);
	free(v);
	return buf_steal(&b);
}

static int
on_data(void *arg, int fd, const char *data, size_t len)
{
	struct rank *k = arg;
	size_t start, end;

	if (fd != 1 || k->marked) {
		lines(k, fd, data, len);
		return 0;
	}
	/* look for the mark line; what comes before it is ordinary output */
	buf_append(&k->pre, data, len);
	if (!launch_find_mark(k->pre.data, k->pre.len, &start, &end, &k->dir)) {
		if (k->pre.len > LAUNCH_LINE_MAX) {
			k->marked = true;
			lines(k, 1, k->pre.data, k->pre.len);
			buf_free(&k->pre);
		}
		return 0;
	}
	k->marked = true;
	if (k->l->o->nbin > 0) {
		size_t left = take_bin_line(k, start);

		end -= start - left;
		start = left;
	}
	if (start > 0)
		lines(k, 1, k->pre.data, start);
	if (end < k->pre.len)
		lines(k, 1, k->pre.data + end, k->pre.len - end);
	buf_free(&k->pre);
	return 0;
}

/* threads */

static void *
connect_thread(void *arg)
{
	struct rank *k = arg;
	int r;

	r = tr_connect(k->target.name, k->target.user, k->target.port, &k->l->o->tr, &k->s,
	    &k->err);
	if (r != 0) {
		k->res.state = LAUNCH_UNREACHABLE;
		k->res.error = xstrdup(k->err.msg);
	}
	return NULL;
}

static void
cleanup_rank(struct rank *k)
{
	struct tr_result res = { 0 };
	struct jc_err err = { 0 };
	char *cmd;

	if (k->s == NULL)
		return;
	cmd = launch_cleanup_script(k->dir, k->tag);
	if (cmd == NULL)
		cmd = launch_cleanup_script(NULL, k->tag);
	if (cmd == NULL)
		return;
	if (tr_run(k->s, cmd, NULL, 0, LAUNCH_CLEANUP_TIMEOUT, 4096, &res, &err) == 0 &&
	    res.status == 0) {
		k->res.cleaned = true;
		k->res.killed_left = res.out != NULL && res.out[0] == '1';
	}
	tr_result_clear(&res);
	free(cmd);
}

static void *
rank_thread(void *arg)
{
	struct rank *k = arg;
	struct launch *l = k->l;
	struct tr_stream_cbs cbs = { on_data, NULL, NULL };
	struct tr_stream *st = NULL;
	double t0 = jc_now();
	char *sig = NULL;
	int status = -1, r;
	bool failed;

	r = tr_stream_start(k->s, k->script, &cbs, k, &st, &k->err);
	pthread_mutex_lock(&l->mu);
	if (r == 0) {
		k->st = st;
		k->res.state = LAUNCH_RUNNING;
		if (!l->o->keep_stdin)
			tr_stream_close_stdin(st);
		if (l->stopping)
			tr_stream_stop(st);
	}
	pthread_mutex_unlock(&l->mu);
	if (r != 0) {
		k->res.state = LAUNCH_NOSTART;
		k->res.error = xstrdup(k->err.msg);
	} else {
		r = tr_stream_wait(st, 0, &status, &sig, &k->err);
		flush_lines(k);
		pthread_mutex_lock(&l->mu);
		k->st = NULL;
		pthread_mutex_unlock(&l->mu);
		tr_stream_free(st);
		if (r == 0 && sig != NULL) {
			k->res.state = LAUNCH_KILLED;
			k->res.signal = sig;
		} else if (r == 0 && k->bin_state != NULL && strcmp(k->bin_state, "ok") != 0) {
			k->res.state = LAUNCH_NOBIN;
			k->res.status = status;
			k->res.error = bin_error(k);
		} else if (r == 0) {
			k->res.state = LAUNCH_EXITED;
			k->res.status = status;
		} else if (r == TR_ESTOPPED) {
			k->res.state = LAUNCH_STOPPED;
		} else {
			k->res.state = LAUNCH_LOST;
			k->res.error = xstrdup(k->err.msg);
		}
	}
	k->res.seconds = jc_now() - t0;
	failed = !(k->res.state == LAUNCH_EXITED && k->res.status == 0) &&
	    k->res.state != LAUNCH_STOPPED;
	if (l->o->rank0_reports && k->r != 0 && k->res.state == LAUNCH_EXITED &&
	    k->res.status == 1)
		failed = false;
	pthread_mutex_lock(&l->mu);
	if (failed && !l->stopping) {
		l->first_failed = (long)k->r;
		stop_all_locked(l, LAUNCH_STOP_FAILED);
	}
	pthread_mutex_unlock(&l->mu);
	if (l->o->ended != NULL) {
		pthread_mutex_lock(&l->outmu);
		l->o->ended(l->o->arg, k->r, &k->res);
		pthread_mutex_unlock(&l->outmu);
	}
	cleanup_rank(k);
	pthread_mutex_lock(&l->mu);
	k->done = true;
	pthread_mutex_unlock(&l->mu);
	return NULL;
}

static void
nap(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void
connect_job(size_t i, void *arg)
{
	struct launch *l = arg;

	connect_thread(&l->ranks[i]);
}

/* Every session first, all at once: an unreachable host starts nothing. */
static int
connect_all(struct launch *l, struct jc_err *err)
{
	size_t unreachable = 0;
	long first = -1;

	jc_parallel_for(l->n, connect_job, l);
	for (size_t i = 0; i < l->n; i++) {
		if (l->ranks[i].res.state != LAUNCH_UNREACHABLE)
			continue;
		if (unreachable++ == 0) {
			first = (long)i;
			jc_fail(err, -1, "%s", l->ranks[i].err.msg);
		}
	}
	if (unreachable > 0) {
		l->first_failed = first;
		l->stop = LAUNCH_STOP_FAILED;
		return -1;
	}
	if (l->o->interrupted != NULL && *l->o->interrupted) {
		l->stop = LAUNCH_STOP_INTERRUPT;
		return jc_fail(err, -1, "interrupted");
	}
	return 0;
}

static void
start_ranks(struct launch *l)
{
	for (size_t i = 0; i < l->n; i++) {
		if (pthread_create(&l->ranks[i].th, NULL, rank_thread, &l->ranks[i]) != 0) {
			l->ranks[i].res.state = LAUNCH_NOSTART;
			l->ranks[i].res.error = xstrdup("cannot create a thread");
			l->ranks[i].done = true;
			pthread_mutex_lock(&l->mu);
			if (!l->stopping)
				l->first_failed = (long)i;
			stop_all_locked(l, LAUNCH_STOP_FAILED);
			pthread_mutex_unlock(&l->mu);
			continue;
		}
		l->ranks[i].joinable = true;
	}
}

/* Poll every 50 ms for the end of every rank, an interrupt, the bound. */
static void
supervise(struct launch *l, double deadline)
{
	const struct launch_opts *o = l->o;

	for (;;) {
		bool all = true;

		pthread_mutex_lock(&l->mu);
		for (size_t i = 0; i < l->n; i++)
			if (!l->ranks[i].done)
				all = false;
		if (!all && !l->stopping) {
			if (o->interrupted != NULL && *o->interrupted)
				stop_all_locked(l, LAUNCH_STOP_INTERRUPT);
			else if (deadline > 0 && jc_now() > deadline)
				stop_all_locked(l, LAUNCH_STOP_TIMEOUT);
		}
		pthread_mutex_unlock(&l->mu);
		if (all)
			break;
		nap(50);
	}
	for (size_t i = 0; i < l->n; i++)
		if (l->ranks[i].joinable)
			pthread_join(l->ranks[i].th, NULL);
}

/* Why the run failed: an interrupt, the bound, or the first rank that failed. */
static void
failure(struct launch *l, struct jc_err *err)
{
	char *why;

	switch (l->stop) {
	case LAUNCH_STOP_INTERRUPT:
		jc_fail(err, -1, "interrupted: every rank was stopped");
		break;
	case LAUNCH_STOP_TIMEOUT:
		jc_fail(err, -1, "the ranks outlived the bound of %g s and were stopped",
		    l->o->timeout);
		break;
	default:
		if (l->first_failed >= 0) {
			long w = launch_worst_rank(l);
			char *worse = NULL;

			why = launch_result_text(&l->ranks[l->first_failed].res);
			if (w >= 0 && w != l->first_failed) {
				char *t = launch_result_text(&l->ranks[w].res);

				worse = xasprintf("; the worst end: rank %ld (%s) %s", w,
				    launch_host(l, (size_t)w), t);
				free(t);
			}
			jc_fail(err, -1, "rank %ld (%s) %s%s", l->first_failed,
			    launch_host(l, (size_t)l->first_failed), why, worse ? worse : "");
			free(why);
			free(worse);
		} else {
			jc_fail(err, -1, "a rank failed");
		}
	}
}

static int
badness(const struct launch_result *res)
{
	switch (res->state) {
	case LAUNCH_KILLED:
		return 5;
	case LAUNCH_LOST:
		return 4;
	case LAUNCH_EXITED:
		return res->status != 0 ? 2 : 0;
	case LAUNCH_STOPPED:
	case LAUNCH_RUNNING:
	case LAUNCH_PENDING:
		return 1;
	default:	/* not reached, not started */
		return 3;
	}
}

long
launch_worst_rank(const struct launch *l)
{
	long worst = -1;
	int wb = 0;

	for (size_t i = 0; i < l->n; i++) {
		int b = badness(&l->ranks[i].res);

		if (b > wb) {
			wb = b;
			worst = (long)i;
		}
	}
	return worst;
}

int
launch_run(struct launch *l, struct jc_err *err)
{
	const struct launch_opts *o = l->o;
	double deadline = o->timeout > 0 ? jc_now() + o->timeout : 0;
	int rc = 0;

	if (connect_all(l, err) != 0)
		return -1;
	start_ranks(l);
	supervise(l, deadline);
	for (size_t i = 0; i < l->n; i++) {
		const struct launch_result *res = &l->ranks[i].res;

		if (!(res->state == LAUNCH_EXITED && res->status == 0))
			rc = -1;
	}
	if (rc != 0)
		failure(l, err);
	return rc;
}

void
launch_free(struct launch *l)
{
	if (l == NULL)
		return;
	for (size_t i = 0; i < l->n; i++) {
		struct rank *k = &l->ranks[i];

		tr_close(k->s);
		jc_host_clear(&k->target);
		free(k->script);
		free(k->dir);
		buf_free(&k->pre);
		buf_free(&k->part[0]);
		buf_free(&k->part[1]);
		free(k->res.signal);
		free(k->res.error);
		free(k->res.bin);
		free(k->bin_state);
		free(k->bin_version);
	}
	free(l->ranks);
	launch_env_free(l->envs, l->hf->nhosts);
	pthread_mutex_destroy(&l->mu);
	pthread_mutex_destroy(&l->outmu);
	free(l);
}
