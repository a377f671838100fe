/* SPDX-License-Identifier: MIT */
/*
 * apply's rollback and restore on the scripted transport, without root or
 * hosts: for 3 Macs, 3 Linux hosts and a mixed pair, every setup command k
 * of every host h is made to fail (exit status 1), hang (timeout) and lose
 * its session, and the test asserts on the transport's model of every
 * host (addresses, link flags, bridge members, routes) that each host is
 * back in its state from before the setup (or, for a lost session, that
 * the host is reported as not put back and a later restore puts it back).
 * A failure of a command that may fail must change nothing: the setup
 * then completes. Everything runs twice: with the setup as one script per
 * host run through one sudo (the transport interprets the script, counting
 * each of its commands as a sudo command), and with one exec per command
 * (a transport without the dialog op).
 */
#include "config.h"

#include <dirent.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "../tap.h"
#include "../graph/inv.h"
#include "../lib/transport-script.h"
#include "apply.h"

enum { MAX_HOSTS = 3 };

/* The second pass: a transport without the dialog op. */
static bool per_command;

struct scen {
	const char *name;
	size_t n;
	bool linux_host[MAX_HOSTS];
	const char *const *hosts;	/* their names (NULL: mac1, mac2, ...) */
};

struct world {
	const struct scen *sc;
	struct jc_host *h;
	struct graph *g;
	struct plan *p;
	struct jc_transport *t;
	char *dir;
	char *initial[MAX_HOSTS];
};

static void
rm_tree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;

	while (d != NULL && (e = readdir(d)) != NULL) {
		char *sub;
		struct stat st;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		sub = xasprintf("%s/%s", path, e->d_name);
		if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
			rm_tree(sub);
		else
			unlink(sub);
		free(sub);
	}
	if (d != NULL)
		closedir(d);
	rmdir(path);
}

static char *
tmp_dir(void)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	char *tmpl = xasprintf("%s/jc-apply-XXXXXX", base);

	if (mkdtemp(tmpl) == NULL)
		abort();
	return tmpl;
}

/* An interface in both the inventory and the model. */
static void
iface(struct world *w, size_t i, const char *name, bool up, const char *ip, int prefix)
{
	struct jc_iface *f = inv_iface(&w->h[i], name, ip, prefix);
	char *a = ip ? xasprintf("%s/%d", ip, prefix) : NULL;

	f->up = up ? JC_YES : JC_NO;
	ts_iface(w->t, w->h[i].name, name, up, a, NULL);
	free(a);
}

/* A second address on an interface of both the inventory and the model. */
static void
second_addr(struct world *w, size_t i, const char *name, const char *ip, int prefix)
{
	struct jc_iface *f = (struct jc_iface *)jc_host_iface(&w->h[i], name);
	char *a = xasprintf("%s/%d", ip, prefix);

	f->inet = xreallocarray(f->inet, f->ninet + 1, sizeof(*f->inet));
	f->prefix = xreallocarray(f->prefix, f->ninet + 1, sizeof(*f->prefix));
	f->inet[f->ninet] = xstrdup(ip);
	f->prefix[f->ninet++] = prefix;
	ts_iface(w->t, w->h[i].name, name, f->up == JC_YES, a, NULL);
	free(a);
}

/*
 * The hosts before the setup. Macs: bridge0 up holding every cable
 * interface and en9, a link-local address and 10.9.9.9/24 on the first
 * cable interface of host 0. Linux: the first cable interface down, host 0's second one with
 * 10.9.9.9/24, and a host route to a planned peer through a gateway on
 * host 1 (a route the setup replaces and restore must put back).
 */
static void
world_init(struct world *w, const struct scen *sc)
{
	struct jc_err err = { 0 };

	memset(w, 0, sizeof(*w));
	w->sc = sc;
	w->t = ts_new();
	if (per_command)
		ts_per_command(w->t);
	w->h = inv_new(sc->n, sc->hosts);
	inv_mesh(w->h, sc->n, 80);
	for (size_t i = 0; i < sc->n; i++) {
		struct jc_host *h = &w->h[i];
		bool first = true;

		ts_model(w->t, h->name, sc->linux_host[i] ? "linux" : "macos");
		if (sc->linux_host[i])
			h->os = JC_OS_LINUX;
		for (size_t k = 0; k < h->nports; k++) {
			const char *ifn = h->ports[k].iface;
			bool second = !first;

			if (sc->linux_host[i])
				iface(w, i, ifn, !first, i == 0 && second ? "10.9.9.9" : NULL, 24);
			else
				iface(w, i, ifn, true, i == 0 && first ? "169.254.3.4" : NULL, 16);
			if (!sc->linux_host[i] && i == 0 && first)
				second_addr(w, i, ifn, "10.9.9.9", 24);
			first = false;
		}
		if (!sc->linux_host[i]) {
			struct jc_iface *br = inv_iface(h, "bridge0", NULL, 0);

			br->up = JC_YES;
			br->members = xcalloc(h->nports + 1, sizeof(char *));
			ts_iface(w->t, h->name, "bridge0", true, NULL);
			for (size_t k = 0; k <= h->nports; k++) {
				const char *m = k < h->nports ? h->ports[k].iface : "en9";

				br->members[br->nmembers++] = xstrdup(m);
				ts_member(w->t, h->name, "bridge0", m);
			}
		} else if (i == 1) {
			iface(w, i, "eth0", true, "10.0.0.5", 24);
			ts_route(w->t, h->name, "192.168.0.1", "10.0.0.1", "eth0");
		}
	}
	if (graph_build(w->h, sc->n, &w->g, &err) != 0 || plan_build(w->g, &w->p, &err) != 0)
	{
		diag("%s: %s", sc->name, err.msg);
		abort();
	}
	for (size_t i = 0; i < sc->n; i++)
		w->initial[i] = ts_state(w->t, w->h[i].name);
	w->dir = tmp_dir();
}

static void
world_free(struct world *w)
{
	for (size_t i = 0; i < w->sc->n; i++)
		free(w->initial[i]);
	plan_free(w->p);
	graph_free(w->g);
	inv_free(w->h, w->sc->n);
	transport_free(w->t);
	rm_tree(w->dir);
	free(w->dir);
}

/* Every host's model equals want[i] (or its initial state when want is NULL). */
static bool
states_are(struct world *w, char *const *want, size_t skip, char **why)
{
	for (size_t i = 0; i < w->sc->n; i++) {
		char *now = ts_state(w->t, w->h[i].name);
		const char *exp = want ? want[i] : w->initial[i];
		bool same = strcmp(now, exp) == 0;

		if (!same && i != skip && *why == NULL)
			*why = xasprintf("%s is\n%swant\n%s", w->h[i].name, now, exp);
		free(now);
		if (!same && i != skip)
			return false;
	}
	return true;
}

struct echo {
	struct jc_buf b[MAX_HOSTS];
	const struct world *w;
};

/* The "[#] host: command" echo: what the command layer would print. */
static void
on_event(void *arg, const struct apply_event *ev)
{
	struct echo *e = arg;

	for (size_t i = 0; i < e->w->sc->n; i++)
		if ((ev->kind == APPLY_EV_RUN || ev->kind == APPLY_EV_UNDO) &&
		    strcmp(ev->host, e->w->h[i].name) == 0)
			buf_printf(&e->b[i], "%s\n", ev->command);
}

static int
run_apply(struct world *w, struct apply_result *res, struct echo *echo, struct jc_err *err)
{
	struct apply_opts o = { 0 };

	o.transport = w->t;
	o.state_dir = w->dir;
	o.command_timeout = 5;
	o.event = on_event;
	o.arg = echo;
	echo->w = w;
	return apply_run(w->p, w->g, &o, res, err);
}

static int
run_restore(struct world *w, struct apply_restored **r, size_t *n, const char **why,
    struct jc_err *err)
{
	struct apply_opts o = { 0 };

	o.transport = w->t;
	o.state_dir = w->dir;
	o.command_timeout = 5;
	return apply_restore(&o, NULL, 0, r, n, why, err);
}

/* The sudo commands the transport saw on host i, in order. */
static char *
sudo_log(struct world *w, size_t i)
{
	char *log = ts_log(w->t, w->h[i].name), *line = log;
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	while (*line) {
		size_t l = strcspn(line, "\n");

		if (strncmp(line, "sudo ", 5) == 0)
			buf_printf(&b, "%.*s\n", (int)l, line);
		line += l + (line[l] == '\n');
	}
	free(log);
	return buf_steal(&b);
}

/* A clean setup: the planned state everywhere; returns it (and the counts). */
static void
baseline(const struct scen *sc, char **planned, size_t *ncmds)
{
	struct world w;
	struct apply_result res;
	struct echo echo = { 0 };
	struct jc_err err = { 0 };
	char *why = NULL;
	bool echo_ok = true, one_sudo = true;
	int rc;

	world_init(&w, sc);
	rc = run_apply(&w, &res, &echo, &err);
	ok(rc == 0, "%s: setup succeeds (%s)", sc->name, rc ? err.msg : "ok");
	for (size_t i = 0; i < sc->n; i++) {
		char *log = sudo_log(&w, i);

		if (ts_script_count(w.t, w.h[i].name) != (per_command ? 0 : 1))
			one_sudo = false;

		planned[i] = ts_state(w.t, w.h[i].name);
		ncmds[i] = ts_sudo_count(w.t, w.h[i].name);
		echo_ok = echo_ok && strcmp(log, echo.b[i].data ? echo.b[i].data : "") == 0;
		free(log);
		buf_free(&echo.b[i]);
	}
	ok(echo_ok, "%s: the echoed commands are exactly those the hosts ran", sc->name);
	ok(one_sudo, "%s: %s", sc->name, per_command ? "no setup script (one exec per command)" :
	    "one setup script through sudo per host");
	ok(!states_are(&w, NULL, (size_t)-1, &why), "%s: the setup changed every host", sc->name);
	free(why);
	why = NULL;
	ok(states_are(&w, planned, (size_t)-1, &why) && ncmds[0] == w.p->hosts[0].cmds.n,
	    "%s: %zu commands on %s", sc->name, ncmds[0], w.h[0].name);
	apply_result_clear(&res);
	world_free(&w);
}

static const char *
fault_name(enum ts_fault f)
{
	return f == TS_FAIL ? "fails" : f == TS_HANG ? "hangs" : "loses its session";
}

/* Restore after an incomplete rollback puts every host back. */
static bool
restore_all(struct world *w, char **why)
{
	struct apply_restored *r = NULL;
	struct jc_err err = { 0 };
	const char *nothing = NULL;
	size_t n = 0;
	bool good;

	good = run_restore(w, &r, &n, &nothing, &err) == 0 && n > 0;
	for (size_t i = 0; good && i < n; i++)
		good = r[i].error == NULL;
	if (!good && *why == NULL)
		*why = xasprintf("restore: %s", err.msg);
	apply_restored_free(r, n);
	return good && states_are(w, NULL, (size_t)-1, why);
}

/* One case: fault f at sudo command k of host h. */
static bool
one_case(const struct scen *sc, size_t h, size_t k, enum ts_fault f, char *const *planned,
    char **why)
{
	struct world w;
	struct apply_result res;
	struct echo echo = { 0 };
	struct jc_err err = { 0 };
	bool good, may_fail;
	int rc;

	world_init(&w, sc);
	may_fail = w.p->hosts[h].cmds.v[k - 1].may_fail;
	ts_fault_at(w.t, w.h[h].name, k, f);
	rc = run_apply(&w, &res, &echo, &err);
	for (size_t i = 0; i < sc->n; i++)
		buf_free(&echo.b[i]);
	if (f == TS_FAIL && may_fail) {
		good = rc == 0 && states_are(&w, planned, (size_t)-1, why);
	} else if (f == TS_DISCONNECT) {
		/* h cannot be put back over a lost session; restore does it later */
		good = rc < 0 && res.hosts[h].status == APPLY_HOST_ROLLBACK_FAILED &&
		    strstr(err.msg, "rollback incomplete") != NULL &&
		    states_are(&w, NULL, h, why) && restore_all(&w, why);
	} else {
		good = rc < 0 && res.hosts[h].status == APPLY_HOST_FAILED && res.hosts[h].undone &&
		    strstr(err.msg, "every host was put back as it was") != NULL &&
		    states_are(&w, NULL, (size_t)-1, why);
	}
	if (!good && *why == NULL)
		*why = xasprintf("rc %d: %s", rc, err.msg);
	apply_result_clear(&res);
	world_free(&w);
	return good;
}

static void
test_rollback(const struct scen *sc)
{
	static const enum ts_fault faults[] = { TS_FAIL, TS_HANG, TS_DISCONNECT };
	char *planned[MAX_HOSTS] = { 0 };
	size_t ncmds[MAX_HOSTS] = { 0 }, cases = 0, bad = 0;

	baseline(sc, planned, ncmds);
	for (size_t h = 0; h < sc->n; h++)
		for (size_t k = 1; k <= ncmds[h]; k++)
			for (size_t fi = 0; fi < JC_ARRAY_LEN(faults); fi++) {
				char *why = NULL;

				cases++;
				if (!one_case(sc, h, k, faults[fi], planned, &why)) {
					bad++;
					diag("%s: command %zu of host %zu %s: %s", sc->name, k, h + 1,
					    fault_name(faults[fi]), why ? why : "");
				}
				free(why);
			}
	ok(bad == 0 && cases > 0, "%s: %zu cases (every command of every host fails, hangs, "
	    "loses its session): every host back as it was", sc->name, cases);
	for (size_t i = 0; i < sc->n; i++)
		free(planned[i]);
}

/* A setup, then restore: back as before; a second restore has nothing to do. */
static void
test_restore(const struct scen *sc)
{
	struct world w;
	struct apply_result res;
	struct echo echo = { 0 };
	struct apply_restored *r = NULL;
	struct jc_err err = { 0 };
	const char *nothing = NULL;
	char *why = NULL;
	size_t n = 0, ran = 0;
	int rc;

	world_init(&w, sc);
	ok(run_apply(&w, &res, &echo, &err) == 0, "%s: setup before restore", sc->name);
	apply_result_clear(&res);
	for (size_t i = 0; i < sc->n; i++)
		buf_free(&echo.b[i]);
	rc = run_restore(&w, &r, &n, &nothing, &err);
	if (!ok(rc == 0 && n == sc->n, "%s: restore of %zu hosts", sc->name, n))
		diag("%s", rc != 0 ? err.msg : nothing ? nothing : "");
	for (size_t i = 0; i < n; i++)
		ran += r[i].error == NULL ? r[i].ran : 0;
	apply_restored_free(r, n);
	ok(ran > 0 && states_are(&w, NULL, (size_t)-1, &why), "%s: every host as before (%zu "
	    "commands)%s%s", sc->name, ran, why ? ": " : "", why ? why : "");
	free(why);
	r = NULL;
	ok(run_restore(&w, &r, &n, &nothing, &err) == 0 && n == 0 && nothing != NULL &&
	    strcmp(nothing, "the last setup was already restored") == 0,
	    "%s: a second restore has nothing to do", sc->name);
	apply_restored_free(r, n);
	world_free(&w);
}

/* An unreachable host: nothing changes anywhere. */
static void
test_unreachable(const struct scen *sc)
{
	struct world w;
	struct apply_result res;
	struct echo echo = { 0 };
	struct jc_err err = { 0 };
	char *why = NULL;

	world_init(&w, sc);
	ts_unreachable(w.t, w.h[sc->n - 1].name, TR_ECONNECT);
	ok(run_apply(&w, &res, &echo, &err) < 0 && strstr(err.msg, "nothing was changed") &&
	    res.hosts[sc->n - 1].status == APPLY_HOST_ERROR &&
	    ts_sudo_count(w.t, w.h[0].name) == 0 && states_are(&w, NULL, (size_t)-1, &why),
	    "%s: one host unreachable: no command runs anywhere", sc->name);
	free(why);
	apply_result_clear(&res);
	for (size_t i = 0; i < sc->n; i++)
		buf_free(&echo.b[i]);
	world_free(&w);
}

/* One host's script cannot even start: nobody changes anything. */
static void
test_script_refused(const struct scen *sc)
{
	struct world w;
	struct apply_result res;
	struct echo echo = { 0 };
	struct jc_err err = { 0 };
	char *why = NULL;
	bool none = true;
	int rc;

	world_init(&w, sc);
	ts_rule(w.t, &(struct ts_rule){ .host = w.h[sc->n - 1].name, .command = "exec /bin/sh -c *",
	    .err = "sh: cannot execute\n", .status = 126 });
	rc = run_apply(&w, &res, &echo, &err);
	for (size_t i = 0; i < sc->n; i++)
		none = none && ts_sudo_count(w.t, w.h[i].name) == 0;
	ok(rc < 0 && strstr(err.msg, "nothing was changed") &&
	    strstr(err.msg, "ended before its capture (exit 126): sh: cannot execute") &&
	    res.hosts[sc->n - 1].status == APPLY_HOST_ERROR && none &&
	    ts_script_count(w.t, w.h[0].name) == 0 && states_are(&w, NULL, (size_t)-1, &why),
	    "%s: one host's script refused: no host goes past its capture (%s)", sc->name, err.msg);
	free(why);
	apply_result_clear(&res);
	for (size_t i = 0; i < sc->n; i++)
		buf_free(&echo.b[i]);
	world_free(&w);
}

/* ---- a state that is not what the setup recorded (issue 21, case 3) ---- */

static json_t *
load(const char *dir, const char *rel)
{
	char *p = xasprintf("%s/%s", dir, rel);
	json_t *j = json_load_file(p, 0, NULL);

	free(p);
	return j;
}

static void
save(const char *dir, const char *rel, json_t *j)
{
	char *p = xasprintf("%s/%s", dir, rel);

	json_dump_file(j, p, JSON_INDENT(2));
	free(p);
}

/* The digests a setup records of a state file, recomputed (as a forger would). */
static json_t *
forged_digests(json_t *hj)
{
	json_t *top = json_copy(hj), *facts = json_array(), *f;
	char hex[65], *text;
	size_t i;

	json_object_del(top, "facts");
	text = json_dumps(top, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	jc_sha256_hex(text, strlen(text), hex);
	free(text);
	json_decref(top);
	json_array_foreach(json_object_get(hj, "facts"), i, f) {
		char fh[65];

		text = json_dumps(f, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		jc_sha256_hex(text, strlen(text), fh);
		free(text);
		json_array_append_new(facts, json_string(fh));
	}
	return json_pack("{s:s, s:o}", "state", hex, "facts", facts);
}

/* Restore refused, and not one command run on any host. */
static bool
refused(struct world *w, const char *want, char **msg)
{
	struct apply_restored *r = NULL;
	struct jc_err err = { 0 };
	const char *nothing = NULL;
	size_t n = 0, before = 0, after = 0;
	int rc;

	for (size_t i = 0; i < w->sc->n; i++)
		before += ts_sudo_count(w->t, w->h[i].name);
	rc = run_restore(w, &r, &n, &nothing, &err);
	for (size_t i = 0; i < w->sc->n; i++)
		after += ts_sudo_count(w->t, w->h[i].name);
	apply_restored_free(r, n);
	*msg = xstrdup(err.msg);
	return rc < 0 && before == after && strstr(err.msg, want) != NULL;
}

static void
test_tamper(const struct scen *sc)
{
	struct world w;
	struct apply_result res;
	struct echo echo = { 0 };
	struct jc_err err = { 0 };
	json_t *last, *orig_last, *hj, *orig_hj;
	const char *file;
	char *msg = NULL, *why = NULL;
	bool good;

	world_init(&w, sc);
	ok(run_apply(&w, &res, &echo, &err) == 0, "%s: setup before the tampering", sc->name);
	apply_result_clear(&res);
	for (size_t i = 0; i < sc->n; i++)
		buf_free(&echo.b[i]);
	orig_last = load(w.dir, "last-setup.json");
	file = json_string_value(json_object_get(json_array_get(json_object_get(orig_last,
	    "hosts"), 0), "file"));
	orig_hj = load(w.dir, file);
	ok(orig_hj != NULL && json_is_object(json_object_get(json_array_get(json_object_get(
	    orig_last, "hosts"), 0), "sha256")), "%s: the setup recorded digests", sc->name);

	/* 1. a saved output changed */
	hj = json_deep_copy(orig_hj);
	json_object_set_new(json_array_get(json_object_get(hj, "facts"), 0), "output",
	    json_string("en2: flags=8863<UP> mtu 1500\n\tinet 10.66.0.1 netmask 0xffffff00\n"));
	save(w.dir, file, hj);
	json_decref(hj);
	good = refused(&w, "not what the setup recorded", &msg);
	ok(good,
	    "%s: a changed saved output: restore refused, nothing run (%s)", sc->name, msg);
	free(msg);
	save(w.dir, file, orig_hj);

	/* 2. two hosts, one state file */
	last = json_deep_copy(orig_last);
	json_object_set(json_array_get(json_object_get(last, "hosts"), 1), "file",
	    json_object_get(json_array_get(json_object_get(last, "hosts"), 0), "file"));
	save(w.dir, "last-setup.json", last);
	json_decref(last);
	good = refused(&w, "shares its host or its state file", &msg);
	ok(good,
	    "%s: two hosts naming one state file: refused, nothing run (%s)", sc->name, msg);
	free(msg);

	/* 3. a host name --hosts refuses, with digests forged to match */
	last = json_deep_copy(orig_last);
	hj = json_deep_copy(orig_hj);
	json_object_set_new(hj, "host", json_string("-oProxyCommand=x"));
	save(w.dir, file, hj);
	json_object_set_new(json_array_get(json_object_get(last, "hosts"), 0), "host",
	    json_string("-oProxyCommand=x"));
	json_object_set_new(json_array_get(json_object_get(last, "hosts"), 0), "sha256",
	    forged_digests(hj));
	save(w.dir, "last-setup.json", last);
	json_decref(last);
	json_decref(hj);
	good = refused(&w, "invalid host", &msg);
	ok(good,
	    "%s: a state host name --hosts refuses: restore refused (%s)", sc->name, msg);
	free(msg);
	save(w.dir, file, orig_hj);
	save(w.dir, "last-setup.json", orig_last);

	/* 4. a state folder others may write */
	chmod(w.dir, 0777);
	good = refused(&w, "writable by other users", &msg);
	ok(good,
	    "%s: a world-writable state folder: restore refused (%s)", sc->name, msg);
	free(msg);
	chmod(w.dir, 0700);

	/* put back as recorded: restore works (the refusals were the tampering's) */
	{
		struct apply_restored *r = NULL;
		const char *nothing = NULL;
		size_t n = 0;

		ok(run_restore(&w, &r, &n, &nothing, &err) == 0 && n == sc->n &&
		    states_are(&w, NULL, (size_t)-1, &why),
		    "%s: the state as recorded restores every host", sc->name);
		apply_restored_free(r, n);
	}
	free(why);
	json_decref(orig_hj);
	json_decref(orig_last);
	world_free(&w);
}

int
main(void)
{
	static const char *const dotted[] = { "mac1.", "mac2.", "mac3." };
	static const struct scen scens[] = {
		{ "3 Macs", 3, { false, false, false }, NULL },
		{ "3 Linux hosts", 3, { true, true, true }, NULL },
		{ "a Mac and a Linux host", 2, { false, true }, NULL },
		{ "3 Macs, one exec per command", 3, { false, false, false }, NULL },
		{ "3 Linux hosts, one exec per command", 3, { true, true, true }, NULL },
		{ "a Mac and a Linux host, one exec per command", 2, { false, true }, NULL },
		/* absolute names: their state files are hosts/N-macK..json */
		{ "3 Macs named with a final dot", 3, { false, false, false }, dotted },
	};

	for (size_t s = 0; s < JC_ARRAY_LEN(scens); s++) {
		per_command = s >= 3 && s <= 5;
		test_rollback(&scens[s]);
		test_restore(&scens[s]);
		test_unreachable(&scens[s]);
		if (!per_command)
			test_script_refused(&scens[s]);
	}
	test_tamper(&scens[0]);
	test_tamper(&scens[1]);
	return done_testing();
}
