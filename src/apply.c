/* SPDX-License-Identifier: MIT */
/*
 * Applying a plan over SSH with rollback, and restoring the saved state:
 * capture every host's facts (in parallel), save them, run the setup
 * commands (in parallel, stopping everyone at the first failure), and undo
 * by comparing the state now with the saved one. See apply.h.
 *
 * With a transport that has a dialog, capture and setup are one script per
 * host (run_scripts): each host's thread reads its frames; the last host
 * whose capture is in (arrive) checks every capture and saves the state,
 * then every script is told go (or stop); each command starts on a go, so
 * a failure anywhere stops the others before their next command.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "apply.h"
#include "hostfile_read.h"
#include "hosts.h"
#include "parse_state.h"
#include "setup_record.h"
#include "setup_script.h"

#define STATE_VERSION 1
#define LAST_SETUP "last-setup.json"

/* One fact as captured on a host, and what it says. */
struct ap_fact {
	enum plan_fact_kind kind;
	char *iface;		/* interface, bridge0, or the route's planned interface */
	char *peer;		/* ROUTE: peer address */
	int status;		/* exit status of the query */
	char *out;		/* its output (stdout then stderr) */
	int lstatus;		/* of the second query, when the system has one */
	char *lout;
	struct jc_fact_state st;	/* parsed */
};

/* What is known of one host: where it is, what the plan gives it, its facts. */
struct ap_host {
	char *name, *target, *user;
	int port;
	const struct jc_platform_ops *plat;
	struct jc_strv ifaces;	/* planned cable interfaces (bridge0 excluded) */
	struct jc_strv ips;	/* planned address of each, same index */
	struct jc_strv peers;	/* peer address of each */
	struct ap_fact *facts;
	size_t nfacts;
};

static void
fact_clear(struct ap_fact *f)
{
	free(f->iface);
	free(f->peer);
	free(f->out);
	free(f->lout);
	fact_state_clear(&f->st);
	memset(f, 0, sizeof(*f));
}

static void
facts_free(struct ap_fact *f, size_t n)
{
	if (f == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		fact_clear(&f[i]);
	free(f);
}

static void
ap_host_clear(struct ap_host *h)
{
	free(h->name);
	free(h->target);
	free(h->user);
	strv_free(&h->ifaces);
	strv_free(&h->ips);
	strv_free(&h->peers);
	facts_free(h->facts, h->nfacts);
	memset(h, 0, sizeof(*h));
}

static const char *
kind_name(enum plan_fact_kind k)
{
	return k == PLAN_FACT_ADDRS ? "addrs" : k == PLAN_FACT_BRIDGE ? "bridge" :
	    k == PLAN_FACT_SERVICES ? "services" : k == PLAN_FACT_FILE ? "file" : "route";
}

static bool
planned_iface(const struct ap_host *h, const char *name)
{
	for (size_t i = 0; i < h->ifaces.n; i++)
		if (strcmp(h->ifaces.v[i], name) == 0)
			return true;
	return false;
}

/* Fill the parsed state of f from its outputs (the system's parser). */
static void
fact_parse(struct ap_fact *f, const struct jc_platform_ops *plat)
{
	struct jc_fact_out fo = {
		.kind = f->kind, .iface = f->iface, .peer = f->peer, .status = f->status,
		.out = f->out, .lstatus = f->lstatus, .lout = f->lout,
	};

	fact_state_clear(&f->st);
	if (f->out != NULL)
		plat->fact_parse(&fo, &f->st);
}

static bool
strv_has(const struct jc_strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return true;
	return false;
}

/* A restore command (text), and whether its failure is harmless. */
struct ap_cmd {
	char *text;
	bool may_fail;
};

struct ap_cmds {
	struct ap_cmd *v;
	size_t n;
	char *refused;		/* why a command was refused (nothing runs then), or NULL */
};

static bool word_ok(const char *w);

static void
cmds_add(struct ap_cmds *c, bool may_fail, char *text)
{
	c->v = xreallocarray(c->v, c->n + 1, sizeof(*c->v));
	c->v[c->n].text = text;
	c->v[c->n].may_fail = may_fail;
	c->n++;
}

static void
cmds_free(struct ap_cmds *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].text);
	free(c->v);
	free(c->refused);
	memset(c, 0, sizeof(*c));
}

static const struct ap_fact *
find_fact(const struct ap_fact *v, size_t n, const struct ap_fact *like)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].kind == like->kind && strcmp(v[i].iface, like->iface) == 0 &&
		    (v[i].peer == NULL) == (like->peer == NULL) &&
		    (v[i].peer == NULL || strcmp(v[i].peer, like->peer) == 0))
			return &v[i];
	return NULL;
}

/* argv as one command line, with -n after sudo (never a prompt). New string. */
static char *
argv_line(char *const *argv, size_t argc)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	for (size_t k = 0; k < argc; k++) {
		if (k > 0)
			buf_puts(&b, " ");
		jc_shell_word(&b, argv[k]);
		if (k == 0 && strcmp(argv[0], "sudo") == 0)
			buf_puts(&b, " -n");
	}
	return buf_steal(&b);
}

/* Append the command of act on h's system; counts as one difference. */
static void
act(struct ap_cmds *out, const struct ap_host *h, enum jc_act a, const struct jc_act_arg *arg)
{
	struct jc_strv argv = { 0 };

	if (h->plat->command(a, arg, &argv) == 0) {
		/* the same check as setup's commands: the saved state names the words */
		for (size_t k = 0; k < argv.n; k++)
			if (!word_ok(argv.v[k])) {
				if (out->refused == NULL) {
					char *w = jc_printable(argv.v[k], 64);

					out->refused = xasprintf("a word that is not plain: %s", w);
					free(w);
				}
				strv_free(&argv);
				return;
			}
		cmds_add(out, false, argv_line(argv.v, argv.n));
	} else if (a == JC_ACT_FILE_WRITE && out->refused == NULL) {
		out->refused = xasprintf("the saved content of %s's file is not one a setup "
		    "of ours writes", arg->iface ? arg->iface : "?");
	}
	strv_free(&argv);
}

static bool
same_route(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static size_t
restore_routes(const struct ap_host *h, const struct ap_fact *cur, size_t ncur,
    struct ap_cmds *out)
{
	size_t diffs = 0;

	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);
		char *via = NULL, *dev = NULL;

		if (s->kind != PLAN_FACT_ROUTE || c == NULL || same_route(s->st.route, c->st.route))
			continue;
		diffs++;
		if (c->st.route != NULL)
			act(out, h, JC_ACT_ROUTE_DEL, &(struct jc_act_arg){ .peer = s->peer });
		if (s->st.route != NULL && parse_route_split(s->st.route, &via, &dev) == 0)
			act(out, h, JC_ACT_ROUTE_SET,
			    &(struct jc_act_arg){ .peer = s->peer, .via = via, .iface = dev });
		free(via);
		free(dev);
	}
	return diffs;
}

static size_t
restore_addrs(const struct ap_host *h, const struct ap_fact *cur, size_t ncur,
    struct ap_cmds *out)
{
	size_t diffs = 0;

	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);

		if (s->kind != PLAN_FACT_ADDRS || c == NULL || !s->st.exists || !c->st.exists)
			continue;
		for (size_t k = 0; k < c->st.addrs.n; k++) {
			if (strv_has(&s->st.addrs, c->st.addrs.v[k]))
				continue;
			diffs++;
			act(out, h, JC_ACT_ADDR_DEL,
			    &(struct jc_act_arg){ .iface = s->iface, .addr = c->st.addrs.v[k] });
		}
		for (size_t k = 0; k < s->st.addrs.n; k++) {
			if (strv_has(&c->st.addrs, s->st.addrs.v[k]))
				continue;
			diffs++;
			act(out, h, JC_ACT_ADDR_ADD,
			    &(struct jc_act_arg){ .iface = s->iface, .addr = s->st.addrs.v[k] });
		}
		if ((h->plat->caps & JC_PLAT_LINK_ADMIN) && s->st.up != JC_UNKNOWN &&
		    c->st.up != JC_UNKNOWN && s->st.up != c->st.up) {
			diffs++;
			act(out, h, s->st.up == JC_YES ? JC_ACT_LINK_UP : JC_ACT_LINK_DOWN,
			    &(struct jc_act_arg){ .iface = s->iface });
		}
	}
	return diffs;
}

static size_t
restore_bridge(const struct ap_host *h, const struct ap_fact *cur, size_t ncur,
    struct ap_cmds *out)
{
	size_t diffs = 0;

	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);

		if (s->kind != PLAN_FACT_BRIDGE || c == NULL || !s->st.exists || !c->st.exists)
			continue;
		for (size_t k = 0; k < s->st.members.n; k++) {
			const char *m = s->st.members.v[k];

			if (planned_iface(h, m) && !strv_has(&c->st.members, m)) {
				diffs++;
				act(out, h, JC_ACT_BRIDGE_ADDM, &(struct jc_act_arg){ .iface = m });
			}
		}
		for (size_t k = 0; k < c->st.members.n; k++) {
			const char *m = c->st.members.v[k];

			if (planned_iface(h, m) && !strv_has(&s->st.members, m)) {
				diffs++;
				act(out, h, JC_ACT_BRIDGE_DELM, &(struct jc_act_arg){ .iface = m });
			}
		}
		if (s->st.up != JC_UNKNOWN && c->st.up != JC_UNKNOWN && s->st.up != c->st.up) {
			diffs++;
			act(out, h, s->st.up == JC_YES ? JC_ACT_BRIDGE_UP : JC_ACT_BRIDGE_DOWN,
			    &(struct jc_act_arg){ 0 });
		}
	}
	return diffs;
}

/*
 * The network services (--persist): ours (JC_SVC_PREFIX) that were not
 * there are removed; a service that was there and whose enabled state
 * changed (only the bridge's is ever changed) gets it back. Every other
 * service is left alone.
 */
static size_t
restore_services(const struct ap_host *h, const struct ap_fact *cur, size_t ncur,
    struct ap_cmds *out)
{
	size_t diffs = 0;

	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);

		if (s->kind != PLAN_FACT_SERVICES || c == NULL || !s->st.exists || !c->st.exists)
			continue;
		for (size_t k = 0; k < c->st.nsvcs; k++) {
			const struct jc_netsvc *now = &c->st.svcs[k];
			const struct jc_netsvc *was = netsvc_find(s->st.svcs, s->st.nsvcs, now->name);

			if (was == NULL && platform_svc_ours(now->name)) {
				diffs++;
				act(out, h, JC_ACT_SVC_REMOVE,
				    &(struct jc_act_arg){ .service = now->name });
			} else if (was != NULL && was->enabled != now->enabled &&
			    (platform_svc_ours(now->name) ||
			    (now->device != NULL && strcmp(now->device, "bridge0") == 0))) {
				diffs++;
				act(out, h, was->enabled ? JC_ACT_SVC_ENABLE : JC_ACT_SVC_DISABLE,
				    &(struct jc_act_arg){ .service = now->name });
			}
		}
	}
	return diffs;
}

/*
 * Our files of the persistent configuration (Linux file managers): one
 * that was not there is removed, one that was there and differs now (or
 * is gone) gets its saved content back. Nothing else is touched.
 */
static size_t
restore_files(const struct ap_host *h, const struct ap_fact *cur, size_t ncur,
    struct ap_cmds *out)
{
	size_t diffs = 0;

	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);
		struct jc_act_arg a = { .iface = s->iface, .manager = s->peer };

		if (s->kind != PLAN_FACT_FILE || c == NULL)
			continue;
		if (!s->st.exists && c->st.exists) {
			diffs++;
			act(out, h, JC_ACT_FILE_REMOVE, &a);
		} else if (s->st.exists && s->st.content != NULL &&
		    (c->st.content == NULL || strcmp(s->st.content, c->st.content) != 0)) {
			diffs++;
			a.content = s->st.content;
			act(out, h, JC_ACT_FILE_WRITE, &a);
		}
	}
	return diffs;
}

/*
 * The commands that take the host from its current facts (cur) back to the
 * saved ones (h->facts): routes, then addresses, then bridge0, then the
 * network services. Only planned
 * interfaces, bridge0 and addresses that passed validation are ever named.
 * Returns the number of differences.
 */
static size_t
restore_cmds(const struct ap_host *h, const struct ap_fact *cur, size_t ncur, struct ap_cmds *out)
{
	size_t diffs = restore_routes(h, cur, ncur, out);

	diffs += restore_addrs(h, cur, ncur, out);
	diffs += restore_bridge(h, cur, ncur, out);
	diffs += restore_files(h, cur, ncur, out);
	return diffs + restore_services(h, cur, ncur, out);
}

/* Shared by the threads of one run. */
struct ap_run {
	const struct apply_opts *o;
	struct jc_transport *tp;
	pthread_mutex_t lock;	/* events and abort */
	bool abort;
};

static void
emit(struct ap_run *run, enum apply_ev_kind kind, const char *host, const char *cmd, int status,
    const char *errtext)
{
	struct apply_event ev = { kind, host, cmd, status, errtext };

	if (run->o->event == NULL)
		return;
	pthread_mutex_lock(&run->lock);
	run->o->event(run->o->arg, &ev);
	pthread_mutex_unlock(&run->lock);
}

static double
cmd_timeout(const struct apply_opts *o)
{
	return o->command_timeout > 0 ? o->command_timeout : 60;
}

/* Run a query; the output is stdout followed by stderr. */
static int
run_query(struct jc_conn *s, const char *q, double timeout, int *status, char **out,
    struct jc_err *err)
{
	struct tr_result r = { 0 };
	int rc = tp_run(s, q, NULL, 0, timeout, 1u << 20, &r, err);

	if (rc != 0)
		return rc;
	*status = r.status;
	*out = xasprintf("%s%s", r.out, r.err);
	tr_result_clear(&r);
	return 0;
}

/*
 * Whether the queries of f could read its state: an interface's addresses
 * must be readable, and so must the list of network services (--persist:
 * a host without the system's network manager stops the setup before any
 * change). 0, or negative with err filled.
 */
static int
fact_read(const struct ap_host *h, const struct ap_fact *f, struct jc_err *err)
{
	size_t l = f->out ? strlen(f->out) : 0;
	char *q1, *q2;
	int rc;

	if (f->kind == PLAN_FACT_FILE) {
		/* test -e: 0 there, 1 not; there, it must be readable (saved) */
		if (f->lout != NULL && (f->lstatus == 1 || (f->lstatus == 0 && f->status == 0)))
			return 0;
		while (l > 0 && (f->out[l - 1] == '\n' || f->out[l - 1] == ' '))
			l--;
		h->plat->queries(f->kind, f->iface, f->peer, &q1, &q2);
		rc = jc_fail(err, -ENOENT, "--persist: cannot read a file of ours (%s: exit %d): "
		    "%.*s", q1, f->status, (int)l, f->out ? f->out : "");
		free(q1);
		free(q2);
		return rc;
	}
	if (f->status == 0 || (f->kind != PLAN_FACT_ADDRS && f->kind != PLAN_FACT_SERVICES))
		return 0;
	while (l > 0 && (f->out[l - 1] == '\n' || f->out[l - 1] == ' '))
		l--;
	if (f->kind == PLAN_FACT_ADDRS)
		return jc_fail(err, -ENOENT, "cannot read the state of %s: %.*s", f->iface, (int)l,
		    f->out ? f->out : "");
	h->plat->queries(f->kind, f->iface, f->peer, &q1, &q2);
	rc = jc_fail(err, -ENOENT, "--persist: cannot list the network services (%s: exit %d): "
	    "%.*s", q1, f->status, (int)l, f->out ? f->out : "");
	free(q1);
	free(q2);
	return rc;
}

/*
 * After fact_parse: an interface's addresses answered (exit 0) in a form
 * not understood are not a state that could be put back. 0, or negative.
 */
static int
fact_understood(const struct ap_fact *f, struct jc_err *err)
{
	if (f->kind == PLAN_FACT_ADDRS && f->status == 0 && f->out != NULL && !f->st.exists)
		return jc_fail(err, -EPROTO, "cannot read the state of %s: its answer is not "
		    "understood", f->iface);
	return 0;
}

/* Capture every fact of h (whose facts have kind/iface/peer set). */
static int
capture(struct jc_conn *s, const struct ap_host *h, struct ap_fact *facts, size_t n,
    double timeout, struct jc_err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct ap_fact *f = &facts[i];
		char *q1, *q2;
		int rc;

		free(f->out);
		free(f->lout);
		f->out = f->lout = NULL;
		h->plat->queries(f->kind, f->iface, f->peer, &q1, &q2);
		rc = run_query(s, q1, timeout, &f->status, &f->out, err);
		if (rc == 0 && q2 != NULL)
			rc = run_query(s, q2, timeout, &f->lstatus, &f->lout, err);
		free(q1);
		free(q2);
		if (rc != 0)
			return rc;
		if ((rc = fact_read(h, f, err)) != 0)
			return rc;
		fact_parse(f, h->plat);
		if ((rc = fact_understood(f, err)) != 0)
			return rc;
	}
	return 0;
}

/* A copy of h's fact list (kind, iface, peer only). */
static struct ap_fact *
facts_like(const struct ap_host *h)
{
	struct ap_fact *v = xcalloc(h->nfacts ? h->nfacts : 1, sizeof(*v));

	for (size_t i = 0; i < h->nfacts; i++) {
		v[i].kind = h->facts[i].kind;
		v[i].iface = xstrdup(h->facts[i].iface);
		v[i].peer = xstrdup(h->facts[i].peer);
	}
	return v;
}

/*
 * Put h back to its saved facts over s: query, undo the difference, query
 * again. *ran counts the commands run. Returns 0 when the host is back,
 * else negative with err filled.
 */
static int
restore_host(struct ap_run *run, struct jc_conn *s, const struct ap_host *h, size_t *ran,
    struct jc_err *err)
{
	double timeout = cmd_timeout(run->o);
	struct ap_fact *cur = facts_like(h);
	struct ap_cmds cmds = { 0 };
	struct jc_buf failed = { 0 };
	int rc;

	*ran = 0;
	if ((rc = capture(s, h, cur, h->nfacts, timeout, err)) != 0)
		goto out;
	restore_cmds(h, cur, h->nfacts, &cmds);
	if (cmds.refused != NULL) {
		rc = jc_fail(err, -EINVAL, "refusing to put it back: %s; nothing was run",
		    cmds.refused);
		goto out;
	}
	for (size_t i = 0; i < cmds.n; i++) {
		struct tr_result r = { 0 };

		emit(run, APPLY_EV_UNDO, h->name, cmds.v[i].text, 0, NULL);
		if ((rc = tp_run(s, cmds.v[i].text, NULL, 0, timeout, 0, &r, err)) != 0)
			goto out;
		(*ran)++;
		if (r.status != 0 && !cmds.v[i].may_fail) {
			emit(run, APPLY_EV_FAILED, h->name, cmds.v[i].text, r.status, r.err);
			buf_printf(&failed, "%s%s (exit %d)", failed.len ? "; " : "", cmds.v[i].text,
			    r.status);
		}
		tr_result_clear(&r);
	}
	/* check */
	cmds_free(&cmds);
	if ((rc = capture(s, h, cur, h->nfacts, timeout, err)) != 0)
		goto out;
	if (restore_cmds(h, cur, h->nfacts, &cmds) != 0) {
		rc = jc_fail(err, -EIO, "still differs from its saved state (next: %s)%s%s",
		    cmds.v[0].text, failed.len ? "; failed: " : "", failed.len ? failed.data : "");
		goto out;
	}
	rc = 0;
out:
	cmds_free(&cmds);
	buf_free(&failed);
	facts_free(cur, h->nfacts);
	return rc;
}

/* ---- the state directory ---- */

char *
apply_state_dir(const struct apply_opts *o)
{
	const char *home = getenv("HOME");

	if (o->state_dir != NULL)
		return xstrdup(o->state_dir);
	if (home == NULL || *home == '\0')
		home = "/";
	return xasprintf("%s/.cache/jaccl-config", home);
}

/*
 * A JSON file of the state folder: a regular file read without blocking
 * (jc_read_file), at most 16 MiB. NULL with je->text set when it cannot be
 * read or parsed.
 */
static json_t *
load_json(const char *path, json_error_t *je)
{
	struct jc_err e = { 0 };
	char *buf = NULL;
	size_t len = 0;
	json_t *j;

	if (jc_read_file(path, 16u << 20, &buf, &len, &e) != 0) {
		if (je != NULL)
			snprintf(je->text, sizeof(je->text), "%.*s", (int)sizeof(je->text) - 1, e.msg);
		return NULL;
	}
	j = json_loadb(buf, len, 0, je);
	free(buf);
	return j;
}

/* The state folder and its hosts/ folder are ours alone (jc_private_dir). */
static int
state_dir_ok(const char *dir, struct jc_err *err)
{
	char *hd = xasprintf("%s/hosts", dir);
	int rc = jc_private_dir(dir, false, err);

	if (rc == 0 && access(hd, F_OK) == 0)
		rc = jc_private_dir(hd, false, err);
	free(hd);
	return rc;
}

/* Write j to path, whole or not at all (jc_write_atomic), mode 0600. */
static int
write_json_atomic(const char *path, json_t *j, struct jc_err *err)
{
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	char *line;
	int rc;

	if (text == NULL)
		return jc_fail(err, -ENOMEM, "cannot serialise the state for %s", path);
	line = xasprintf("%s\n", text);
	rc = jc_write_atomic(path, line, strlen(line), 0600, err);
	free(line);
	free(text);
	return rc;
}

static json_t *
jstr(const char *s)
{
	json_t *j;

	if (s == NULL)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	{
		char *p = hostfile_printable(s, 0);

		j = json_string(p);
		free(p);
		return j ? j : json_null();
	}
}

static json_t *
strv_json(const struct jc_strv *sv)
{
	json_t *a = json_array();

	for (size_t i = 0; i < sv->n; i++)
		json_array_append_new(a, jstr(sv->v[i]));
	return a;
}

static json_t *
tri_json(int v)
{
	return v == JC_UNKNOWN ? json_null() : json_boolean(v == JC_YES);
}

static void
now_text(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *
host_json(const struct ap_host *h)
{
	json_t *j = json_object(), *addrs = json_array(), *facts = json_array();
	char when[32];

	now_text(when);
	json_object_set_new(j, "version", json_integer(STATE_VERSION));
	json_object_set_new(j, "host", jstr(h->name));
	json_object_set_new(j, "target", jstr(h->target));
	json_object_set_new(j, "os", json_string(h->plat->name));
	json_object_set_new(j, "saved", json_string(when));
	for (size_t i = 0; i < h->ifaces.n; i++)
		json_array_append_new(addrs, json_pack("{s:s, s:s, s:s}", "iface", h->ifaces.v[i],
		    "ip", h->ips.v[i], "peer_ip", h->peers.v[i]));
	json_object_set_new(j, "addresses", addrs);
	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *f = &h->facts[i];
		json_t *o = json_object();
		char *q1, *q2;

		h->plat->queries(f->kind, f->iface, f->peer, &q1, &q2);
		json_object_set_new(o, "kind", json_string(kind_name(f->kind)));
		json_object_set_new(o, "iface", jstr(f->iface));
		json_object_set_new(o, "peer", jstr(f->peer));
		json_object_set_new(o, "query", jstr(q1));
		json_object_set_new(o, "status", json_integer(f->status));
		json_object_set_new(o, "output", jstr(f->out));
		if (q2 != NULL) {
			json_object_set_new(o, "link_query", jstr(q2));
			json_object_set_new(o, "link_status", json_integer(f->lstatus));
			json_object_set_new(o, "link_output", jstr(f->lout));
		}
		/* what the outputs say (informative: restore parses the outputs again) */
		json_object_set_new(o, "exists", json_boolean(f->st.exists));
		json_object_set_new(o, "up", tri_json(f->st.up));
		if (f->kind == PLAN_FACT_ADDRS)
			json_object_set_new(o, "inet", strv_json(&f->st.addrs));
		if (f->kind == PLAN_FACT_BRIDGE)
			json_object_set_new(o, "members", strv_json(&f->st.members));
		if (f->kind == PLAN_FACT_ROUTE)
			json_object_set_new(o, "route", jstr(f->st.route));
		if (f->kind == PLAN_FACT_SERVICES) {
			json_t *sv = json_array();

			for (size_t k = 0; k < f->st.nsvcs; k++)
				json_array_append_new(sv, json_pack("{s:o, s:o, s:o, s:b}", "name",
				    jstr(f->st.svcs[k].name), "port", jstr(f->st.svcs[k].port),
				    "device", jstr(f->st.svcs[k].device), "enabled",
				    f->st.svcs[k].enabled));
			json_object_set_new(o, "services", sv);
		}
		json_array_append_new(facts, o);
		free(q1);
		free(q2);
	}
	json_object_set_new(j, "facts", facts);
	return j;
}

static const char *
jget_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/*
 * A file fact (--persist on Linux) names a manager whose file of iface the
 * host's system can remove: systemd-networkd, ifupdown.
 */
static bool
file_fact_ok(const struct jc_platform_ops *plat, const char *iface, const char *manager)
{
	struct jc_strv v = { 0 };
	int r;

	if (manager == NULL)
		return false;
	r = plat->command(JC_ACT_FILE_REMOVE,
	    &(struct jc_act_arg){ .iface = iface, .manager = manager }, &v);
	strv_free(&v);
	return r == 0;
}

/* Load a host's saved state; every name is validated. */
static int
host_from_json(json_t *j, const char *path, struct ap_host *h, struct jc_err *err)
{
	json_t *addrs = json_object_get(j, "addresses"), *facts = json_object_get(j, "facts");
	const char *name = jget_str(j, "host"), *target = jget_str(j, "target");
	const char *os = jget_str(j, "os");
	struct jc_host tmp = { 0 };
	struct jc_err e2 = { 0 };
	size_t i;
	json_t *v;

	memset(h, 0, sizeof(*h));
	if (!json_is_object(j) || name == NULL || target == NULL || os == NULL ||
	    !json_is_array(addrs) || !json_is_array(facts))
		return jc_fail(err, -EINVAL, "%s: not a saved host state", path);
	if (hosts_parse_target(target, &tmp, &e2) != 0) {
		jc_host_clear(&tmp);
		return jc_fail(err, -EINVAL, "%s: %s", path, e2.msg);
	}
	/* the name is what restore connects to: it passes --hosts' check, alone */
	{
		struct jc_host hn = { 0 };
		bool good = hosts_parse_target(name, &hn, &e2) == 0 && strcmp(hn.name, name) == 0;

		jc_host_clear(&hn);
		if (!good) {
			char *safe = jc_printable(name, 64);
			int rc = jc_fail(err, -EINVAL, "%s: invalid host '%s'", path, safe);

			free(safe);
			jc_host_clear(&tmp);
			return rc;
		}
	}
	h->name = xstrdup(name);
	h->target = tmp.target;
	h->user = tmp.user;
	h->port = tmp.port;
	tmp.target = tmp.user = NULL;
	jc_host_clear(&tmp);
	h->plat = platform_by_name_or_default(os);
	json_array_foreach(addrs, i, v) {
		const char *ifn = jget_str(v, "iface"), *ip = jget_str(v, "ip");
		const char *peer = jget_str(v, "peer_ip");

		if (ifn == NULL || !jc_iface_name_ok(ifn) || strcmp(ifn, "bridge0") == 0 ||
		    ip == NULL || !jc_ipv4_ok(ip) || peer == NULL || !jc_ipv4_ok(peer))
			return jc_fail(err, -EINVAL, "%s: bad address entry %zu", path, i);
		strv_push(&h->ifaces, ifn);
		strv_push(&h->ips, ip);
		strv_push(&h->peers, peer);
	}
	h->facts = xcalloc(json_array_size(facts) + 1, sizeof(*h->facts));
	json_array_foreach(facts, i, v) {
		struct ap_fact *f = &h->facts[h->nfacts];
		const char *kind = jget_str(v, "kind"), *ifn = jget_str(v, "iface");
		const char *peer = jget_str(v, "peer"), *out = jget_str(v, "output");

		if (kind == NULL || ifn == NULL || out == NULL)
			return jc_fail(err, -EINVAL, "%s: bad fact %zu", path, i);
		f->kind = strcmp(kind, "addrs") == 0 ? PLAN_FACT_ADDRS :
		    strcmp(kind, "bridge") == 0 ? PLAN_FACT_BRIDGE :
		    strcmp(kind, "services") == 0 ? PLAN_FACT_SERVICES :
		    strcmp(kind, "file") == 0 ? PLAN_FACT_FILE : PLAN_FACT_ROUTE;
		if (strcmp(kind, kind_name(f->kind)) != 0 ||
		    (f->kind == PLAN_FACT_BRIDGE ? strcmp(ifn, "bridge0") != 0 ||
		    !(h->plat->caps & JC_PLAT_BRIDGE) :
		    f->kind == PLAN_FACT_SERVICES ? strcmp(ifn, PLAN_SERVICES) != 0 ||
		    h->plat->persist == NULL :
		    !planned_iface(h, ifn)) ||
		    (f->kind == PLAN_FACT_ROUTE && (peer == NULL || !jc_ipv4_ok(peer))) ||
		    (f->kind == PLAN_FACT_FILE && !file_fact_ok(h->plat, ifn, peer)))
			return jc_fail(err, -EINVAL, "%s: bad fact %zu", path, i);
		f->iface = xstrdup(ifn);
		f->peer = f->kind == PLAN_FACT_ROUTE || f->kind == PLAN_FACT_FILE ? xstrdup(peer) :
		    NULL;
		f->status = (int)json_integer_value(json_object_get(v, "status"));
		f->out = xstrdup(out);
		if (jget_str(v, "link_output") != NULL) {
			f->lout = xstrdup(jget_str(v, "link_output"));
			f->lstatus = (int)json_integer_value(json_object_get(v, "link_status"));
		}
		h->nfacts++;
		fact_parse(f, h->plat);
	}
	return 0;
}

/* SHA-256 of j's compact text with sorted keys, into hex. */
static void
json_digest(const json_t *j, char hex[65])
{
	char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	jc_sha256_hex(text ? text : "", text ? strlen(text) : 0, hex);
	free(text);
}

/*
 * The digests last-setup.json keeps of a host's state file: one of the
 * host's entry without its facts, one per fact ({"state": H, "facts": [H]}).
 */
static json_t *
state_digests(json_t *hj)
{
	json_t *top = json_copy(hj), *facts = json_array(), *f;
	char hex[65];
	size_t i;

	json_object_del(top, "facts");
	json_digest(top, hex);
	json_decref(top);
	json_array_foreach(json_object_get(hj, "facts"), i, f) {
		char fh[65];

		json_digest(f, fh);
		json_array_append_new(facts, json_string(fh));
	}
	return json_pack("{s:s, s:o}", "state", hex, "facts", facts);
}

/* The state file hj is the one whose digests were recorded (dg). */
static bool
digests_match(json_t *hj, json_t *dg)
{
	json_t *now = state_digests(hj);
	bool same = json_is_object(dg) && json_equal(now, dg);

	json_decref(now);
	return same;
}

/* File name of host i's state: "hosts/I-NAME.json" with NAME made safe. */
static char *
host_file(size_t i, const char *name)
{
	struct jc_buf b = { 0 };

	buf_printf(&b, "hosts/%zu-", i);
	for (const char *p = name; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '-' || c == '_'))
			c = '_';
		buf_append(&b, &c, 1);
	}
	buf_puts(&b, ".json");
	return buf_steal(&b);
}

static int
save_last(const char *dir, json_t *meta, struct jc_err *err)
{
	char *path = xasprintf("%s/%s", dir, LAST_SETUP);
	int rc = write_json_atomic(path, meta, err);

	free(path);
	return rc;
}

/*
 * Hosts that are already set up run nothing and save nothing; when the
 * previous setup saved their state (and it was not undone), keep those
 * entries, so that restore still undoes them.
 */
static void
carry_over(const char *dir, const struct plan *p, const struct apply_result *res, json_t *hosts)
{
	char *path = xasprintf("%s/%s", dir, LAST_SETUP);
	json_t *old = load_json(path, NULL), *v;
	const char *st = jget_str(old, "status");
	size_t k;

	free(path);
	if (st == NULL || strcmp(st, "restored") == 0 || strcmp(st, "rolled-back") == 0) {
		json_decref(old);
		return;
	}
	json_array_foreach(json_object_get(old, "hosts"), k, v) {
		const char *name = jget_str(v, "host");

		if (name == NULL || json_is_true(json_object_get(v, "restored")))
			continue;
		for (size_t i = 0; i < p->n; i++)
			if (res->hosts[i].status == APPLY_HOST_UNCHANGED &&
			    strcmp(res->hosts[i].name, name) == 0)
				json_array_append(hosts, v);
	}
	json_decref(old);
}

/* The same fact (kind, iface, peer) in a saved facts array, or NULL. */
static json_t *
json_fact_like(json_t *facts, json_t *f)
{
	const char *peer = jget_str(f, "peer");
	size_t i;
	json_t *v;

	json_array_foreach(facts, i, v) {
		const char *vp = jget_str(v, "peer");

		if (jget_str(v, "kind") != NULL && jget_str(f, "kind") != NULL &&
		    strcmp(jget_str(v, "kind"), jget_str(f, "kind")) == 0 &&
		    jget_str(v, "iface") != NULL && jget_str(f, "iface") != NULL &&
		    strcmp(jget_str(v, "iface"), jget_str(f, "iface")) == 0 &&
		    (vp == NULL) == (peer == NULL) && (vp == NULL || strcmp(vp, peer) == 0))
			return v;
	}
	return NULL;
}

/*
 * A --persist host (one with a services fact) runs again on every run, so
 * what it captures on a later run is the state after the earlier one.
 * When the last setup saved this host and neither it nor the host was undone
 * since, each fact of hj that the earlier file also has keeps the earlier
 * output: restore still goes back to before the first setup (removing the
 * services it created). Only the file changes; a rollback of this run still
 * uses what this run captured.
 */
static void
keep_earlier_facts(const char *dir, const char *name, json_t *hj)
{
	char *path = xasprintf("%s/%s", dir, LAST_SETUP);
	json_t *old = load_json(path, NULL), *v, *oh = NULL, *f;
	const char *st = jget_str(old, "status");
	bool persist = false;
	size_t k;

	free(path);
	json_array_foreach(json_object_get(hj, "facts"), k, f)
		persist = persist || (jget_str(f, "kind") && strcmp(jget_str(f, "kind"), "services") == 0);
	if (!persist || st == NULL || strcmp(st, "restored") == 0 || strcmp(st, "rolled-back") == 0) {
		json_decref(old);
		return;
	}
	json_array_foreach(json_object_get(old, "hosts"), k, v) {
		const char *file = jget_str(v, "file");

		if (jget_str(v, "host") == NULL || strcmp(jget_str(v, "host"), name) != 0 ||
		    json_is_true(json_object_get(v, "restored")) || file == NULL ||
		    !setup_record_file_ok(file))
			continue;
		path = xasprintf("%s/%s", dir, file);
		oh = load_json(path, NULL);
		free(path);
		/* only what the earlier setup recorded is carried on */
		if (oh != NULL && !digests_match(oh, json_object_get(v, "sha256"))) {
			json_decref(oh);
			oh = NULL;
		}
		break;
	}
	if (oh != NULL && jget_str(oh, "host") != NULL && strcmp(jget_str(oh, "host"), name) == 0)
		json_array_foreach(json_object_get(hj, "facts"), k, f) {
			json_t *was = json_fact_like(json_object_get(oh, "facts"), f);

			if (was != NULL)
				json_array_set(json_object_get(hj, "facts"), k, was);
		}
	json_decref(oh);
	json_decref(old);
}

/* ---- apply ---- */

struct ap_slot {
	struct ap_run *run;
	const struct plan_host *ph;
	const struct jc_host *jh;
	struct ap_host h;
	struct jc_conn *s;
	struct apply_host_result *res;
	bool active;		/* has commands to run */
	bool want;		/* takes part in the phase running */
	struct jc_err err;
	int rc;
	char *fail_text;	/* the failed command and its stderr */
};

/* Shared by the phases of one apply_run(). */
struct ap_apply {
	struct ap_run run;
	const struct plan *p;
	struct ap_slot *sl;
	struct apply_result *res;
	char *dir;
	json_t *meta;
	/* the script path: every host's capture meets here before any change */
	pthread_mutex_t bar_mu;
	pthread_cond_t bar_cv;
	size_t waiting;		/* hosts whose capture is not in yet */
	bool decided;
	int decide_rc;		/* 0: go; else why every host stops */
	struct jc_err decide_err;
	char token[SS_TOKEN_LEN + 1];
};

static void
trim(char *s)
{
	size_t l = strlen(s);

	while (l > 0 && (s[l - 1] == '\n' || s[l - 1] == '\r' || s[l - 1] == ' '))
		s[--l] = '\0';
}

/*
 * A word safe in a command line: a plain word, an option such as "-n", or
 * a network service or port name (argv_line quotes it).
 */
static bool
word_ok(const char *w)
{
	if (w[0] == '-') {
		for (const char *p = w + 1; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9')))
				return false;
		return w[1] != '\0';
	}
	return jc_plain_word(w) || jc_service_name_ok(w) || jc_file_text_ok(w) ||
	    strcmp(w, JC_WRITE_SCRIPT) == 0;
}

static bool
aborted(struct ap_run *run)
{
	bool stop;

	pthread_mutex_lock(&run->lock);
	stop = run->abort;
	pthread_mutex_unlock(&run->lock);
	return stop;
}

/* Phase 1 of a host: connect and capture its facts. */
static void
phase_capture(size_t i, void *arg)
{
	struct ap_apply *ap = arg;
	struct ap_slot *sl = &ap->sl[i];
	const struct jc_host *jh = sl->jh;

	if (!sl->want)
		return;
	if (sl->s == NULL)
		sl->rc = tp_connect(ap->run.tp, jh->name, jh->user, jh->port, &sl->s, &sl->err);
	if (sl->rc == 0)
		sl->rc = capture(sl->s, &sl->h, sl->h.facts, sl->h.nfacts, cmd_timeout(ap->run.o),
		    &sl->err);
}

/* Run one setup command of a host; 0, or negative with fail_text set. */
static int
setup_cmd(struct ap_run *run, struct ap_slot *sl, const struct plan_cmd *pc)
{
	struct tr_result r = { 0 };
	char *line;

	for (size_t k = 0; k < pc->argc; k++)
		if (!word_ok(pc->argv[k]))
			return sl->rc = jc_fail(&sl->err, -EINVAL,
			    "refusing to run a word that is not plain: %s", pc->argv[k]);
	line = argv_line(pc->argv, pc->argc);
	emit(run, APPLY_EV_RUN, sl->h.name, line, 0, NULL);
	sl->rc = tp_run(sl->s, line, NULL, 0, cmd_timeout(run->o), 0, &r, &sl->err);
	sl->res->ran++;
	if (sl->rc != 0) {
		sl->fail_text = xasprintf("%s: %s", line, sl->err.msg);
	} else if (r.status != 0) {
		trim(r.err);
		emit(run, pc->may_fail ? APPLY_EV_IGNORED : APPLY_EV_FAILED, sl->h.name, line,
		    r.status, r.err);
		if (!pc->may_fail) {
			sl->fail_text = xasprintf("%s failed (exit %d)%s%s", line, r.status,
			    *r.err ? ": " : "", r.err);
			sl->rc = -EIO;
		}
	}
	tr_result_clear(&r);
	free(line);
	return sl->rc;
}

/* Phase 2 of a host: its setup commands, until one fails or someone's does. */
static void
phase_setup(size_t i, void *arg)
{
	struct ap_apply *ap = arg;
	struct ap_slot *sl = &ap->sl[i];
	struct ap_run *run = &ap->run;

	if (!sl->want)
		return;
	for (size_t c = 0; c < sl->ph->cmds.n && !aborted(run); c++) {
		if (setup_cmd(run, sl, &sl->ph->cmds.v[c]) == 0)
			continue;
		pthread_mutex_lock(&run->lock);
		run->abort = true;
		pthread_mutex_unlock(&run->lock);
		if (sl->fail_text == NULL)
			sl->fail_text = xstrdup(sl->err.msg);
		return;
	}
}

/* Phase 3 of a host: put it back to its saved facts. */
static void
phase_rollback(size_t i, void *arg)
{
	struct ap_apply *ap = arg;
	struct ap_slot *sl = &ap->sl[i];
	size_t ran = 0;

	if (sl->want)
		sl->rc = restore_host(&ap->run, sl->s, &sl->h, &ran, &sl->err);
}

static void
run_phase(struct ap_apply *ap, void (*fn)(size_t, void *))
{
	for (size_t i = 0; i < ap->p->n; i++) {
		ap->sl[i].rc = 0;
		memset(&ap->sl[i].err, 0, sizeof(ap->sl[i].err));
	}
	jc_parallel_for(ap->p->n, fn, ap);
}

static void
host_from_plan(struct ap_host *h, const struct plan_host *ph, const struct jc_host *jh)
{
	h->name = xstrdup(jh->name);
	h->target = xstrdup(jh->target ? jh->target : jh->name);
	h->user = xstrdup(jh->user);
	h->port = jh->port;
	h->plat = ph->plat;
	for (size_t a = 0; a < ph->naddrs; a++) {
		strv_push(&h->ifaces, ph->addrs[a].iface);
		strv_push(&h->ips, ph->addrs[a].ip);
		strv_push(&h->peers, ph->addrs[a].peer_ip);
	}
	h->facts = xcalloc(ph->nfacts ? ph->nfacts : 1, sizeof(*h->facts));
	for (size_t f = 0; f < ph->nfacts; f++) {
		h->facts[f].kind = ph->facts[f].kind;
		h->facts[f].iface = xstrdup(ph->facts[f].iface);
		h->facts[f].peer = xstrdup(ph->facts[f].peer);
	}
	h->nfacts = ph->nfacts;
}

/* Fill the slots; returns how many hosts have commands to run. */
static size_t
slots_init(struct ap_apply *ap, const struct graph *g)
{
	const struct plan *p = ap->p;
	size_t nactive = 0;

	ap->res->n = p->n;
	ap->res->hosts = xcalloc(p->n ? p->n : 1, sizeof(*ap->res->hosts));
	for (size_t i = 0; i < p->n; i++) {
		struct ap_slot *sl = &ap->sl[i];

		sl->run = &ap->run;
		sl->ph = &p->hosts[i];
		sl->jh = &g->hosts[p->hosts[i].host];
		sl->res = &ap->res->hosts[i];
		sl->res->name = sl->jh->name;
		if (p->hosts[i].applied || p->hosts[i].cmds.n == 0) {
			sl->res->status = APPLY_HOST_UNCHANGED;
			continue;
		}
		host_from_plan(&sl->h, sl->ph, sl->jh);
		sl->active = sl->want = true;
		nactive++;
	}
	return nactive;
}

/* After the capture: any host unreachable or unreadable stops everything. */
static int
capture_errors(struct ap_apply *ap, struct jc_err *err)
{
	int rc = 0;

	for (size_t i = 0; i < ap->p->n; i++) {
		struct ap_slot *sl = &ap->sl[i];

		if (!sl->want || sl->rc == 0)
			continue;
		sl->res->status = APPLY_HOST_ERROR;
		sl->res->error = xstrdup(sl->err.msg);
		if (rc == 0)
			rc = jc_fail(err, sl->rc, "%s: %s; nothing was changed on any host",
			    sl->h.name, sl->err.msg);
	}
	return rc;
}

/* Save every active host's state and last-setup.json ("in-progress"). */
static int
save_states(struct ap_apply *ap, struct jc_err *err)
{
	json_t *hosts = json_array();
	char when[32], *hd = xasprintf("%s/hosts", ap->dir);
	int rc;

	if ((rc = jc_private_dir(ap->dir, true, err)) == 0)
		rc = jc_private_dir(hd, true, err);
	free(hd);
	now_text(when);
	ap->meta = json_object();
	json_object_set_new(ap->meta, "version", json_integer(STATE_VERSION));
	json_object_set_new(ap->meta, "program", json_string(JC_PROG " " PACKAGE_VERSION));
	json_object_set_new(ap->meta, "started", json_string(when));
	json_object_set_new(ap->meta, "status", json_string("in-progress"));
	for (size_t i = 0; i < ap->p->n && rc == 0; i++) {
		struct ap_slot *sl = &ap->sl[i];
		char *file, *path;
		json_t *hj;

		if (!sl->want)
			continue;
		file = host_file(i, sl->h.name);
		path = xasprintf("%s/%s", ap->dir, file);
		hj = host_json(&sl->h);
		keep_earlier_facts(ap->dir, sl->h.name, hj);
		rc = write_json_atomic(path, hj, err);
		json_array_append_new(hosts, json_pack("{s:s, s:s, s:b, s:o}", "host", sl->h.name,
		    "file", file, "restored", 0, "sha256", state_digests(hj)));
		json_decref(hj);
		free(file);
		free(path);
	}
	if (rc == 0)
		carry_over(ap->dir, ap->p, ap->res, hosts);
	json_object_set_new(ap->meta, "hosts", hosts);
	if (rc == 0)
		rc = save_last(ap->dir, ap->meta, err);
	if (rc != 0) {
		char *why = xstrdup(err->msg);

		rc = jc_fail(err, rc, "%s; nothing was changed on any host", why);
		free(why);
	}
	return rc;
}

/* After the setup: each host's outcome; the index of the first failed, or -1. */
static long
setup_outcome(struct ap_apply *ap)
{
	long failed = -1;

	for (size_t i = 0; i < ap->p->n; i++) {
		struct ap_slot *sl = &ap->sl[i];

		if (!sl->want)
			continue;
		if (sl->fail_text != NULL) {
			sl->res->status = APPLY_HOST_FAILED;
			sl->res->error = xstrdup(sl->fail_text);
			if (failed < 0)
				failed = (long)i;
		} else if (sl->res->ran == sl->ph->cmds.n) {
			sl->res->status = APPLY_HOST_DONE;
		}
	}
	return failed;
}

/* Put back every host that ran something; the error names the failure. */
static int
rollback(struct ap_apply *ap, long failed, struct jc_err *err)
{
	struct jc_buf b = { 0 };
	bool all = true;
	int rc;

	for (size_t i = 0; i < ap->p->n; i++)
		ap->sl[i].want = ap->sl[i].active && ap->res->hosts[i].ran > 0;
	run_phase(ap, phase_rollback);
	for (size_t i = 0; i < ap->p->n; i++) {
		struct ap_slot *sl = &ap->sl[i];

		if (!sl->want)
			continue;
		if (sl->rc == 0) {
			sl->res->undone = true;
			if (sl->res->status != APPLY_HOST_FAILED)
				sl->res->status = APPLY_HOST_ROLLED_BACK;
			continue;
		}
		all = false;
		sl->res->status = APPLY_HOST_ROLLBACK_FAILED;
		free(sl->res->error);
		sl->res->error = xstrdup(sl->err.msg);
		buf_printf(&b, "; %s could not be put back: %s", sl->h.name, sl->err.msg);
	}
	json_object_set_new(ap->meta, "status", json_string(all ? "rolled-back" : "rollback-failed"));
	save_last(ap->dir, ap->meta, NULL);
	rc = jc_fail(err, -EIO, "%s: %s; %s%s", ap->sl[failed].h.name, ap->sl[failed].fail_text,
	    all ? "every host was put back as it was" : "rollback incomplete", b.data ? b.data : "");
	buf_free(&b);
	return rc;
}


/* ---- the setup as one script per host (transports with a dialog) ---- */

/*
 * A host's capture is in (sl->rc says how it went): the last one to arrive
 * checks them all and saves the prior state; then everyone learns whether
 * to go on. Returns true to go on. With wait false, only counts (a host
 * whose thread did not start).
 */
static bool
arrive(struct ap_apply *ap, bool wait)
{
	bool go;

	pthread_mutex_lock(&ap->bar_mu);
	if (--ap->waiting == 0) {
		ap->decide_rc = capture_errors(ap, &ap->decide_err);
		if (ap->decide_rc == 0)
			ap->decide_rc = save_states(ap, &ap->decide_err);
		ap->decided = true;
		pthread_cond_broadcast(&ap->bar_cv);
	}
	while (wait && !ap->decided)
		pthread_cond_wait(&ap->bar_cv, &ap->bar_mu);
	go = ap->decided && ap->decide_rc == 0;
	pthread_mutex_unlock(&ap->bar_mu);
	return go;
}

/* Which fact (and which of its two queries) the script's query k reads. */
struct ap_qref {
	size_t fact;
	bool second;
};

/* One host's script as it runs. */
struct ap_dlg {
	struct ap_apply *ap;
	struct ap_slot *sl;
	struct ss_parser ps;
	struct ap_qref *qref;
	size_t nq, nqdone;
	bool arrived, go, stopped, timed_out;
	long cur;		/* index of the command running, or -1 */
	size_t next;		/* commands ended */
	char *line;		/* the echo of the command running */
	double timeout, deadline;
	int proto_rc;
	struct jc_err perr;
	struct jc_buf errtext;	/* the script's own standard error */
};

static void
set_abort(struct ap_run *run)
{
	pthread_mutex_lock(&run->lock);
	run->abort = true;
	pthread_mutex_unlock(&run->lock);
}

static int
dlg_proto(struct ap_dlg *d, const char *what)
{
	d->proto_rc = jc_fail(&d->perr, -EPROTO, "the setup script's output is out of order (%s)",
	    what);
	return 1;
}

/* Every query is in: check and parse the facts (sl->rc, sl->err). */
static int
captured(struct ap_slot *sl)
{
	for (size_t i = 0; i < sl->h.nfacts; i++) {
		struct ap_fact *f = &sl->h.facts[i];

		int rc = fact_read(&sl->h, f, &sl->err);

		if (rc != 0)
			return rc;
		fact_parse(f, sl->h.plat);
		if ((rc = fact_understood(f, &sl->err)) != 0)
			return rc;
	}
	return 0;
}

static int
dlg_event(struct ap_dlg *d, struct ss_event *ev, struct jc_buf *reply)
{
	struct ap_slot *sl = d->sl;
	struct ap_run *run = sl->run;
	const struct plan_cmd *pc;

	switch (ev->kind) {
	case SS_QUERY: {
		struct ap_fact *f;

		if (d->arrived || ev->k != d->nqdone + 1 || ev->k > d->nq)
			return dlg_proto(d, "query");
		f = &sl->h.facts[d->qref[ev->k - 1].fact];
		if (d->qref[ev->k - 1].second) {
			free(f->lout);
			f->lstatus = ev->status;
			f->lout = ev->text;
		} else {
			free(f->out);
			f->status = ev->status;
			f->out = ev->text;
		}
		ev->text = NULL;
		d->nqdone++;
		return 0;
	}
	case SS_READY:
		if (d->arrived || d->nqdone != d->nq)
			return dlg_proto(d, "ready");
		sl->rc = captured(sl);
		d->arrived = true;
		d->go = arrive(d->ap, true);
		if (d->go)
			buf_printf(reply, "go\n%s\n", d->ap->token);
		else
			buf_puts(reply, "stop\n");
		d->deadline = jc_now() + d->timeout;
		return 0;
	case SS_START:
		if (!d->go || d->cur >= 0 || ev->k != d->next + 1 || ev->k > sl->ph->cmds.n)
			return dlg_proto(d, "start");
		if (aborted(run)) {
			buf_puts(reply, "stop\n");
			d->stopped = true;
			return 0;
		}
		pc = &sl->ph->cmds.v[ev->k - 1];
		free(d->line);
		d->line = argv_line(pc->argv, pc->argc);
		emit(run, APPLY_EV_RUN, sl->h.name, d->line, 0, NULL);
		sl->res->ran++;
		buf_puts(reply, "go\n");
		d->cur = (long)ev->k - 1;
		d->deadline = jc_now() + d->timeout;
		return 0;
	case SS_END:
		if (d->cur < 0 || ev->k != (size_t)d->cur + 1)
			return dlg_proto(d, "end");
		pc = &sl->ph->cmds.v[d->cur];
		d->cur = -1;
		d->next = ev->k;
		d->deadline = jc_now() + d->timeout;
		if (ev->status == 0)
			return 0;
		trim(ev->text);
		emit(run, pc->may_fail ? APPLY_EV_IGNORED : APPLY_EV_FAILED, sl->h.name, d->line,
		    ev->status, ev->text);
		if (!pc->may_fail) {
			sl->fail_text = xasprintf("%s failed (exit %d)%s%s", d->line, ev->status,
			    *ev->text ? ": " : "", ev->text);
			sl->rc = -EIO;
			set_abort(run);
		}
		return 0;
	}
	return 0;
}

static int
dlg_data(void *arg, int fd, const char *data, size_t len, struct jc_buf *reply)
{
	struct ap_dlg *d = arg;
	struct ss_event ev;
	int r;

	if (fd == 2) {
		if (d->errtext.len < 65536)
			buf_append(&d->errtext, data, len);
		return 0;
	}
	ss_feed(&d->ps, data, len);
	if (ss_pending(&d->ps) > TR_DEFAULT_CAP) {
		d->proto_rc = jc_fail(&d->perr, TR_ETOOBIG, "the setup script's output is larger "
		    "than %u MiB: refused", TR_DEFAULT_CAP >> 20);
		return 1;
	}
	while ((r = ss_next(&d->ps, &ev, &d->perr)) == 1) {
		int stop = dlg_event(d, &ev, reply);

		ss_event_clear(&ev);
		if (stop)
			return 1;
	}
	if (r < 0) {
		d->proto_rc = r;
		return 1;
	}
	return 0;
}

static int
dlg_tick(void *arg)
{
	struct ap_dlg *d = arg;

	if (d->deadline > 0 && jc_now() > d->deadline) {
		d->timed_out = true;
		return 1;
	}
	return 0;
}

/* The script of sl's host (queries and commands checked). 0, or negative. */
static int
dlg_script(struct ap_dlg *d, char **script)
{
	struct ap_slot *sl = d->sl;
	const struct apply_opts *o = sl->run->o;
	const struct jc_raw *raw = NULL;
	struct jc_strv q = { 0 };

	for (size_t i = 0; i < o->nraws && raw == NULL; i++)
		if (o->raws[i].host != NULL && o->raws[i].n > 0 &&
		    strcmp(o->raws[i].host, sl->h.name) == 0)
			raw = &o->raws[i];
	*script = NULL;
	for (size_t c = 0; c < sl->ph->cmds.n; c++)
		for (size_t k = 0; k < sl->ph->cmds.v[c].argc; k++)
			if (!word_ok(sl->ph->cmds.v[c].argv[k]))
				return jc_fail(&sl->err, -EINVAL,
				    "refusing to run a word that is not plain: %s",
				    sl->ph->cmds.v[c].argv[k]);
	d->qref = xcalloc(2 * sl->h.nfacts + 1, sizeof(*d->qref));
	for (size_t i = 0; i < sl->h.nfacts; i++) {
		struct ap_fact *f = &sl->h.facts[i];
		char *q1, *q2;

		if (raw != NULL && sl->h.plat->prior != NULL &&
		    sl->h.plat->prior(raw, f->kind, f->iface, f->peer, &f->status, &f->out,
		    &f->lstatus, &f->lout))
			continue;	/* the probe said it already */
		sl->h.plat->queries(f->kind, f->iface, f->peer, &q1, &q2);
		d->qref[q.n] = (struct ap_qref){ i, false };
		strv_push_owned(&q, q1);
		if (q2 != NULL) {
			d->qref[q.n] = (struct ap_qref){ i, true };
			strv_push_owned(&q, q2);
		}
	}
	d->nq = q.n;
	/* a scoped sudo: each command under its own, by the path its rule names */
	*script = setup_script(q.v, q.n, sl->ph->cmds.v, sl->ph->cmds.n,
	    sl->jh->sudo_mode == JC_SUDO_SCOPED ? sl->h.plat->priv_path : NULL);
	strv_free(&q);
	return 0;
}

/* After the script: what became of the host when it did not say itself. */
static void
dlg_after(struct ap_dlg *d, int rc, int status, struct jc_err *err)
{
	struct ap_slot *sl = d->sl;
	struct ap_run *run = sl->run;

	if (rc == TR_ESTOPPED && d->timed_out)
		rc = jc_fail(err, TR_ETIMEOUT, "%s: remote command timed out after %g s",
		    sl->h.name, d->timeout);
	else if (d->proto_rc != 0)
		rc = d->proto_rc, *err = d->perr;
	if (!d->arrived) {
		if (rc != 0) {
			sl->rc = rc;
			sl->err = *err;
		} else {
			buf_puts(&d->errtext, "");
			trim(d->errtext.data);
			sl->rc = jc_fail(&sl->err, -EPROTO, "the setup script ended before its "
			    "capture (exit %d)%s%s", status, *d->errtext.data ? ": " : "",
			    d->errtext.data);
		}
		arrive(d->ap, true);
		return;
	}
	if (!d->go || sl->fail_text != NULL)
		return;
	if (rc != 0) {
		sl->fail_text = d->cur >= 0 ? xasprintf("%s: %s", d->line, err->msg) :
		    xstrdup(err->msg);
		sl->rc = rc;
		sl->err = *err;
		set_abort(run);
	} else if (!d->stopped && d->next < sl->ph->cmds.n) {
		/* it ended by itself without a word about the command next (sudo refused) */
		const struct plan_cmd *pc = &sl->ph->cmds.v[d->cur >= 0 ? (size_t)d->cur : d->next];
		const char *e;

		if (d->cur < 0) {
			free(d->line);
			d->line = argv_line(pc->argv, pc->argc);
			emit(run, APPLY_EV_RUN, sl->h.name, d->line, 0, NULL);
			sl->res->ran++;
		}
		buf_puts(&d->errtext, "");
		trim(d->errtext.data);
		e = d->errtext.data;
		emit(run, APPLY_EV_FAILED, sl->h.name, d->line, status, e);
		sl->fail_text = xasprintf("%s failed (exit %d)%s%s", d->line, status, *e ? ": " : "",
		    e);
		sl->rc = -EIO;
		set_abort(run);
	}
}

/* A host's whole setup: connect, run its script to the end. */
static void
phase_script(size_t i, void *arg)
{
	static const struct tp_dialog_cbs cbs = { dlg_data, dlg_tick };
	struct ap_apply *ap = arg;
	struct ap_slot *sl = &ap->sl[i];
	struct ap_dlg d = { .ap = ap, .sl = sl, .cur = -1 };
	const struct jc_host *jh = sl->jh;
	struct jc_err err = { 0 };
	char *script = NULL, *in;
	int rc, status = -1;

	d.timeout = cmd_timeout(ap->run.o);
	ss_parser_init(&d.ps, ap->token);
	sl->rc = dlg_script(&d, &script);
	if (sl->rc == 0 && sl->s == NULL)
		sl->rc = tp_connect(ap->run.tp, jh->name, jh->user, jh->port, &sl->s, &sl->err);
	if (sl->rc != 0) {
		arrive(ap, true);
		goto out;
	}
	in = xasprintf("%s\n", ap->token);
	d.deadline = jc_now() + d.timeout * (double)(d.nq + 1);
	rc = tp_dialog(sl->s, script, in, strlen(in), &cbs, &d, 0, &status, &err);
	free(in);
	dlg_after(&d, rc, status, &err);
out:
	free(script);
	free(d.qref);
	free(d.line);
	buf_free(&d.errtext);
	ss_parser_clear(&d.ps);
}

struct ap_job {
	struct ap_apply *ap;
	size_t i;
};

static void *
script_main(void *arg)
{
	struct ap_job *j = arg;

	phase_script(j->i, j->ap);
	return NULL;
}

/* Every active host's script at once, one thread each. */
static void
run_scripts(struct ap_apply *ap)
{
	size_t n = ap->p->n;
	pthread_t *th = xcalloc(n ? n : 1, sizeof(*th));
	struct ap_job *jobs = xcalloc(n ? n : 1, sizeof(*jobs));
	bool *started = xcalloc(n ? n : 1, sizeof(*started));

	jc_token(ap->token, SS_TOKEN_LEN, "jc");
	pthread_mutex_init(&ap->bar_mu, NULL);
	pthread_cond_init(&ap->bar_cv, NULL);
	for (size_t i = 0; i < n; i++) {
		ap->sl[i].rc = 0;
		memset(&ap->sl[i].err, 0, sizeof(ap->sl[i].err));
		if (ap->sl[i].want)
			ap->waiting++;
	}
	for (size_t i = 0; i < n; i++) {
		if (!ap->sl[i].want)
			continue;
		jobs[i] = (struct ap_job){ ap, i };
		started[i] = pthread_create(&th[i], NULL, script_main, &jobs[i]) == 0;
		if (!started[i]) {
			ap->sl[i].rc = jc_fail(&ap->sl[i].err, -EAGAIN, "cannot start a thread");
			arrive(ap, false);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	pthread_cond_destroy(&ap->bar_cv);
	pthread_mutex_destroy(&ap->bar_mu);
	free(th);
	free(jobs);
	free(started);
}

/* Every active host takes the open session of its name, if it was given one. */
static void
take_conns(struct ap_apply *ap)
{
	const struct apply_opts *o = ap->run.o;

	for (size_t i = 0; i < ap->p->n; i++)
		for (size_t k = 0; ap->sl[i].want && k < o->nconns; k++)
			if (o->conns[k] != NULL && strcmp(o->conns[k]->host, ap->sl[i].jh->name) == 0) {
				ap->sl[i].s = o->conns[k];
				o->conns[k] = NULL;
				break;
			}
}

static struct jc_transport *
transport_of(const struct apply_opts *o, struct jc_transport **own)
{
	*own = NULL;
	if (o->transport != NULL)
		return o->transport;
	return *own = transport_ssh_new(&o->tr);
}

int
apply_run(const struct plan *p, const struct graph *g, const struct apply_opts *o,
    struct apply_result *res, struct jc_err *err)
{
	struct ap_apply ap = { .run = { .o = o }, .p = p, .res = res };
	struct jc_transport *own;
	long failed;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	pthread_mutex_init(&ap.run.lock, NULL);
	ap.run.tp = transport_of(o, &own);
	ap.sl = xcalloc(p->n ? p->n : 1, sizeof(*ap.sl));
	ap.dir = apply_state_dir(o);
	if (slots_init(&ap, g) == 0)
		goto out;
	take_conns(&ap);
	if (ap.run.tp->ops->dialog != NULL) {
		/* 1 and 2 in one script per host: capture, save, then the commands */
		run_scripts(&ap);
		if ((rc = ap.decide_rc) != 0) {
			jc_fail(err, rc, "%s", ap.decide_err.msg);
			goto out;
		}
	} else {
		/* 1. every host's prior state, saved before anything changes */
		run_phase(&ap, phase_capture);
		if ((rc = capture_errors(&ap, err)) != 0 || (rc = save_states(&ap, err)) != 0)
			goto out;
		/* 2. the setup, everyone at once, stopping at the first failure */
		run_phase(&ap, phase_setup);
	}
	if ((failed = setup_outcome(&ap)) < 0) {
		res->changed = true;
		json_object_set_new(ap.meta, "status", json_string("applied"));
		rc = save_last(ap.dir, ap.meta, err);
		goto out;
	}
	/* 3. put back every host that ran something */
	rc = rollback(&ap, failed, err);
out:
	for (size_t i = 0; i < p->n; i++) {
		tp_close(ap.sl[i].s);
		ap_host_clear(&ap.sl[i].h);
		free(ap.sl[i].fail_text);
	}
	json_decref(ap.meta);
	pthread_mutex_destroy(&ap.run.lock);
	transport_free(own);
	free(ap.sl);
	free(ap.dir);
	return rc;
}

void
apply_result_clear(struct apply_result *res)
{
	for (size_t i = 0; i < res->n; i++)
		free(res->hosts[i].error);
	free(res->hosts);
	memset(res, 0, sizeof(*res));
}

/* ---- restore ---- */

struct rs_slot {
	struct ap_host h;
	size_t ran;
	int rc;
	struct jc_err err;
};

struct ap_restore {
	struct ap_run run;
	struct rs_slot *sl;
	size_t ns;
};

static void
rs_host(size_t i, void *arg)
{
	struct ap_restore *rs = arg;
	struct rs_slot *sl = &rs->sl[i];
	struct jc_conn *s = NULL;

	sl->rc = tp_connect(rs->run.tp, sl->h.name, sl->h.user, sl->h.port, &s, &sl->err);
	if (sl->rc == 0)
		sl->rc = restore_host(&rs->run, s, &sl->h, &sl->ran, &sl->err);
	tp_close(s);
}

/*
 * last-setup.json of dir: NULL with *why set when there is nothing to
 * restore, NULL with err filled (*rc) when it is not a saved setup.
 */
static json_t *
load_last(const char *path, const char **why, int *rc, struct jc_err *err)
{
	json_error_t je;
	json_t *meta;
	const char *status;

	if (access(path, F_OK) != 0) {
		*why = "no setup was saved";
		return NULL;
	}
	meta = load_json(path, &je);
	status = jget_str(meta, "status");
	if (meta == NULL || !json_is_array(json_object_get(meta, "hosts")) || status == NULL) {
		*rc = jc_fail(err, -EINVAL, "%s: not a saved setup%s%s", path, meta ? "" : ": ",
		    meta ? "" : je.text);
		json_decref(meta);
		return NULL;
	}
	if (strcmp(status, "rolled-back") == 0 || strcmp(status, "restored") == 0) {
		*why = strcmp(status, "restored") == 0 ? "the last setup was already restored" :
		    "the last setup failed and was rolled back";
		json_decref(meta);
		return NULL;
	}
	return meta;
}

static bool
named(const char *name, const char *const *only, size_t nonly)
{
	for (size_t k = 0; k < nonly; k++)
		if (name != NULL && strcmp(name, only[k]) == 0)
			return true;
	return false;
}

/* Every name of only must be a saved host. */
static int
check_only(json_t *hosts, const char *dir, const char *const *only, size_t nonly,
    struct jc_err *err)
{
	for (size_t k = 0; k < nonly; k++) {
		bool found = false;
		size_t i;
		json_t *v;

		json_array_foreach(hosts, i, v)
			if (jget_str(v, "host") && strcmp(jget_str(v, "host"), only[k]) == 0)
				found = true;
		if (!found)
			return jc_fail(err, -ENOENT, "%s: no saved state in %s", only[k], dir);
	}
	return 0;
}

/* Load the saved state of every host to restore into rs->sl. */
static int
load_saved_hosts(struct ap_restore *rs, json_t *hosts, const char *dir, const char *path,
    const char *const *only, size_t nonly, struct jc_err *err)
{
	json_error_t je;
	json_t *v, *files = json_object(), *names = json_object();
	size_t i;
	int rc = 0;

	rs->sl = xcalloc(json_array_size(hosts) + 1, sizeof(*rs->sl));
	/* one host, one state file: no two entries share either */
	json_array_foreach(hosts, i, v) {
		const char *name = jget_str(v, "host"), *file = jget_str(v, "file");

		if (name == NULL || file == NULL || !setup_record_file_ok(file)) {
			rc = jc_fail(err, -EINVAL, "%s: bad host entry %zu", path, i);
			goto out;
		}
		if (json_object_get(files, file) != NULL || json_object_get(names, name) != NULL) {
			rc = jc_fail(err, -EINVAL, "%s: host entry %zu shares its host or its state "
			    "file with another; nothing restored", path, i);
			goto out;
		}
		json_object_set_new(files, file, json_true());
		json_object_set_new(names, name, json_true());
	}
	json_array_foreach(hosts, i, v) {
		const char *name = jget_str(v, "host"), *file = jget_str(v, "file");
		char *hp;
		json_t *hj;

		if ((nonly > 0 && !named(name, only, nonly)) ||
		    json_is_true(json_object_get(v, "restored")))
			continue;
		hp = xasprintf("%s/%s", dir, file);
		hj = load_json(hp, &je);
		if (hj == NULL)
			rc = jc_fail(err, -EINVAL, "%s: %s", hp, je.text);
		else if (jget_str(hj, "host") == NULL || strcmp(jget_str(hj, "host"), name) != 0)
			rc = jc_fail(err, -EINVAL, "%s: not the state of %s; nothing restored", hp,
			    name);
		else if (!digests_match(hj, json_object_get(v, "sha256")))
			rc = jc_fail(err, -EINVAL, "%s: not what the setup recorded (its digests "
			    "in %s differ); nothing restored", hp, path);
		else
			rc = host_from_json(hj, hp, &rs->sl[rs->ns].h, err);
		json_decref(hj);
		free(hp);
		rs->ns++;
		if (rc != 0)
			goto out;
	}
out:
	json_decref(files);
	json_decref(names);
	return rc;
}

/* Mark the hosts that are back; the setup is restored when every host is. */
static void
mark_restored(const struct ap_restore *rs, json_t *meta, const char *dir)
{
	bool all = true;
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(meta, "hosts"), i, v) {
		for (size_t k = 0; k < rs->ns; k++)
			if (rs->sl[k].rc == 0 && jget_str(v, "host") != NULL &&
			    strcmp(jget_str(v, "host"), rs->sl[k].h.name) == 0)
				json_object_set_new(v, "restored", json_true());
		if (!json_is_true(json_object_get(v, "restored")))
			all = false;
	}
	if (all)
		json_object_set_new(meta, "status", json_string("restored"));
	save_last(dir, meta, NULL);
}

int
apply_restore(const struct apply_opts *o, const char *const *only, size_t nonly,
    struct apply_restored **out, size_t *n, const char **why, struct jc_err *err)
{
	char *dir = apply_state_dir(o), *path = xasprintf("%s/%s", dir, LAST_SETUP);
	struct ap_restore rs = { .run = { .o = o } };
	struct jc_transport *own = NULL;
	json_t *meta;
	int rc = 0;

	*out = NULL;
	*n = 0;
	*why = NULL;
	pthread_mutex_init(&rs.run.lock, NULL);
	if (access(path, F_OK) == 0 && (rc = state_dir_ok(dir, err)) != 0)
		goto done;
	if ((meta = load_last(path, why, &rc, err)) == NULL)
		goto done;
	if ((rc = check_only(json_object_get(meta, "hosts"), dir, only, nonly, err)) == 0)
		rc = load_saved_hosts(&rs, json_object_get(meta, "hosts"), dir, path, only, nonly,
		    err);
	if (rc == 0 && rs.ns == 0)
		*why = "every host of the last setup was already restored";
	if (rc == 0 && rs.ns > 0) {
		rs.run.tp = transport_of(o, &own);
		jc_parallel_for(rs.ns, rs_host, &rs);
		*out = xcalloc(rs.ns, sizeof(**out));
		*n = rs.ns;
		for (size_t k = 0; k < rs.ns; k++) {
			(*out)[k].name = xstrdup(rs.sl[k].h.name);
			(*out)[k].ran = rs.sl[k].ran;
			(*out)[k].error = rs.sl[k].rc == 0 ? NULL : xstrdup(rs.sl[k].err.msg);
		}
		mark_restored(&rs, meta, dir);
	}
	json_decref(meta);
	for (size_t k = 0; k < rs.ns; k++)
		ap_host_clear(&rs.sl[k].h);
done:
	transport_free(own);
	free(rs.sl);
	free(path);
	free(dir);
	pthread_mutex_destroy(&rs.run.lock);
	return rc;
}

void
apply_restored_free(struct apply_restored *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].name);
		free(r[i].error);
	}
	free(r);
}

int
apply_state_diff(const char *saved, size_t slen, const char *cur, size_t clen,
    struct jc_strv *cmds, struct jc_err *err)
{
	struct ap_host hs = { 0 }, hc = { 0 };
	struct ap_fact *now = NULL;
	struct ap_cmds c = { 0 };
	json_error_t je;
	json_t *js = json_loadb(saved, slen, 0, &je), *jc;
	int rc;

	if (js == NULL)
		return jc_fail(err, -EINVAL, "saved state: %s", je.text);
	jc = json_loadb(cur, clen, 0, &je);
	if (jc == NULL) {
		json_decref(js);
		return jc_fail(err, -EINVAL, "current state: %s", je.text);
	}
	if ((rc = host_from_json(js, "saved state", &hs, err)) != 0 ||
	    (rc = host_from_json(jc, "current state", &hc, err)) != 0)
		goto out;
	/* the current facts, in the saved host's order, from cur's outputs */
	now = facts_like(&hs);
	for (size_t i = 0; i < hs.nfacts; i++) {
		const struct ap_fact *f = find_fact(hc.facts, hc.nfacts, &now[i]);

		if (f == NULL)
			continue;
		now[i].status = f->status;
		now[i].out = xstrdup(f->out);
		now[i].lstatus = f->lstatus;
		now[i].lout = xstrdup(f->lout);
		fact_parse(&now[i], hs.plat);
	}
	rc = (int)restore_cmds(&hs, now, hs.nfacts, &c);
	if (c.refused != NULL) {
		rc = jc_fail(err, -EINVAL, "refusing to put it back: %s", c.refused);
		goto out;
	}
	for (size_t i = 0; i < c.n; i++)
		strv_push(cmds, c.v[i].text);
out:
	cmds_free(&c);
	facts_free(now, hs.nfacts);
	ap_host_clear(&hs);
	ap_host_clear(&hc);
	json_decref(js);
	json_decref(jc);
	return rc;
}
