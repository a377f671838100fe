/* SPDX-License-Identifier: MIT */
/*
 * Applying a plan over SSH with rollback, and restoring the saved state:
 * capture every host's facts (in parallel), save them, run the setup
 * commands (in parallel, stopping everyone at the first failure), and undo
 * by comparing the state now with the saved one. See apply.h.
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
#include "parse_net.h"

#define STATE_VERSION 1
#define LAST_SETUP "last-setup.json"

/* One fact as captured on a host, and what it says. */
struct ap_fact {
	enum plan_fact_kind kind;
	char *iface;		/* interface, bridge0, or the route's planned interface */
	char *peer;		/* ROUTE: peer address */
	int status;		/* exit status of the query */
	char *out;		/* its output (stdout then stderr) */
	int lstatus;		/* Linux ADDRS: of `ip -o link show dev IF` */
	char *lout;
	/* parsed */
	bool exists;
	int up;			/* enum jc_tri */
	struct jc_strv addrs;	/* "a.b.c.d/len" */
	struct jc_strv members;
	char *route;		/* "dev IF" or "via G dev IF"; NULL: no such route */
};

/* What is known of one host: where it is, what the plan gives it, its facts. */
struct ap_host {
	char *name, *target, *user;
	int port;
	enum jc_os os;
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
	strv_free(&f->addrs);
	strv_free(&f->members);
	free(f->route);
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
	return k == PLAN_FACT_ADDRS ? "addrs" : k == PLAN_FACT_BRIDGE ? "bridge" : "route";
}

static bool
planned_iface(const struct ap_host *h, const char *name)
{
	for (size_t i = 0; i < h->ifaces.n; i++)
		if (strcmp(h->ifaces.v[i], name) == 0)
			return true;
	return false;
}

/* The read-only queries of a fact (the plan's). q2 is NULL but for Linux ADDRS. */
static void
fact_queries(const struct ap_fact *f, enum jc_os os, char **q1, char **q2)
{
	*q2 = NULL;
	if (os == JC_OS_LINUX) {
		if (f->kind == PLAN_FACT_ADDRS) {
			*q1 = xasprintf("ip -4 -o addr show dev %s", f->iface);
			*q2 = xasprintf("ip -o link show dev %s", f->iface);
		} else {
			*q1 = xasprintf("ip route show %s/32", f->peer);
		}
	} else if (f->kind == PLAN_FACT_ROUTE) {
		*q1 = xasprintf("route -n get %s", f->peer);
	} else {
		*q1 = xasprintf("ifconfig %s", f->iface);
	}
}

/* Next whitespace-separated word of *p (advanced), or NULL. */
static char *
next_word(const char **p)
{
	const char *s = *p, *e;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0' || *s == '\n')
		return NULL;
	for (e = s; *e && *e != ' ' && *e != '\t' && *e != '\n'; e++)
		;
	*p = e;
	return xstrndup(s, (size_t)(e - s));
}

static bool
addr_word_ok(const char *w)
{
	char ip[16];
	size_t l = strcspn(w, "/");
	long pfx;

	if (l >= sizeof(ip) || w[l] != '/')
		return false;
	memcpy(ip, w, l);
	ip[l] = '\0';
	return jc_ipv4_ok(ip) && jc_parse_int(w + l + 1, 0, 32, &pfx);
}

/* Linux: "N: IF    inet A/L brd ..." lines. */
static void
parse_linux_addrs(struct ap_fact *f)
{
	for (const char *line = f->out; line != NULL && *line; ) {
		const char *nl = strchr(line, '\n'), *p = line;
		char *w;

		while ((w = next_word(&p)) != NULL) {
			bool inet = strcmp(w, "inet") == 0;

			free(w);
			if (inet) {
				if ((w = next_word(&p)) != NULL && addr_word_ok(w))
					strv_push_owned(&f->addrs, w);
				else
					free(w);
				break;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
	/* "N: IF: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu ..." */
	if (f->lout != NULL && f->lstatus == 0) {
		const char *lt = strchr(f->lout, '<'), *gt = lt ? strchr(lt, '>') : NULL;

		f->up = JC_NO;
		if (lt != NULL && gt != NULL) {
			char *flags = xstrndup(lt, (size_t)(gt - lt + 1));

			if (strstr(flags, ",UP,") || strstr(flags, "<UP,") || strstr(flags, ",UP>") ||
			    strstr(flags, "<UP>"))
				f->up = JC_YES;
			free(flags);
		}
	}
}

/* Value after "key:" on a line of route -n get, or NULL. */
static char *
route_field(const char *out, const char *key)
{
	size_t kl = strlen(key);

	for (const char *line = out; line != NULL && *line; ) {
		const char *nl = strchr(line, '\n'), *p = line;

		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
			p += kl + 1;
			return next_word(&p);
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

static void
set_route(struct ap_fact *f, const char *via, const char *dev)
{
	if (dev == NULL || !jc_iface_name_ok(dev) || (via != NULL && !jc_ipv4_ok(via)))
		return;
	if (via != NULL)
		f->route = xasprintf("via %s dev %s", via, dev);
	else
		f->route = xasprintf("dev %s", dev);
}

/* Fill the parsed fields of f from its outputs. */
static void
fact_parse(struct ap_fact *f, enum jc_os os)
{
	strv_free(&f->addrs);
	strv_free(&f->members);
	free(f->route);
	f->route = NULL;
	f->exists = false;
	f->up = JC_UNKNOWN;
	if (f->out == NULL)
		return;
	if (f->kind == PLAN_FACT_ROUTE) {
		if (os == JC_OS_LINUX) {
			const char *p = f->out;
			char *w, *dest = next_word(&p), *via = NULL, *dev = NULL;

			if (f->status == 0 && dest != NULL && (strcmp(dest, f->peer) == 0)) {
				while ((w = next_word(&p)) != NULL) {
					if (strcmp(w, "via") == 0 && via == NULL)
						via = next_word(&p);
					else if (strcmp(w, "dev") == 0 && dev == NULL)
						dev = next_word(&p);
					free(w);
				}
				set_route(f, via, dev);
			}
			free(dest);
			free(via);
			free(dev);
		} else if (f->status == 0) {
			char *dest = route_field(f->out, "destination");
			char *flags = route_field(f->out, "flags");
			char *dev = route_field(f->out, "interface");
			char *gw = route_field(f->out, "gateway");

			/* a static host route to the peer, not the route that covers it */
			if (dest != NULL && strcmp(dest, f->peer) == 0 && flags != NULL &&
			    strstr(flags, "HOST") != NULL && strstr(flags, "STATIC") != NULL)
				set_route(f, gw != NULL && jc_ipv4_ok(gw) ? gw : NULL, dev);
			free(dest);
			free(flags);
			free(dev);
			free(gw);
		}
		f->exists = f->route != NULL;
		return;
	}
	if (f->status != 0)
		return;
	f->exists = true;
	if (os == JC_OS_LINUX) {
		parse_linux_addrs(f);
		return;
	}
	{
		struct jc_iface *ifs = NULL;
		size_t n = 0;
		struct jc_strv notes = { 0 };

		if (parse_ifconfig(f->out, strlen(f->out), &ifs, &n, &notes, NULL) == 0) {
			for (size_t i = 0; i < n; i++) {
				if (ifs[i].name == NULL || strcmp(ifs[i].name, f->iface) != 0)
					continue;
				f->up = ifs[i].up;
				for (size_t k = 0; k < ifs[i].ninet; k++)
					strv_push_owned(&f->addrs, xasprintf("%s/%d", ifs[i].inet[k],
					    ifs[i].prefix != NULL ? ifs[i].prefix[k] : 32));
				for (size_t k = 0; k < ifs[i].nmembers; k++)
					if (jc_iface_name_ok(ifs[i].members[k]))
						strv_push(&f->members, ifs[i].members[k]);
			}
		} else {
			f->exists = false;
		}
		parse_ifaces_free(ifs, n);
		strv_free(&notes);
	}
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
};

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

/*
 * The commands that take the host from its current facts (cur) back to the
 * saved ones (h->facts). Only planned interfaces, bridge0 and addresses
 * that passed validation are ever named. Returns the number of differences.
 */
static size_t
restore_cmds(const struct ap_host *h, const struct ap_fact *cur, size_t ncur, struct ap_cmds *out)
{
	bool lx = h->os == JC_OS_LINUX;
	size_t diffs = 0;

	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);

		if (s->kind != PLAN_FACT_ROUTE || c == NULL)
			continue;
		if ((s->route == NULL && c->route == NULL) ||
		    (s->route != NULL && c->route != NULL && strcmp(s->route, c->route) == 0))
			continue;
		diffs++;
		if (c->route != NULL)
			cmds_add(out, false, lx ? xasprintf("sudo -n ip route del %s/32", s->peer) :
			    xasprintf("sudo -n route -n delete -host %s", s->peer));
		if (s->route != NULL) {
			const char *p = s->route;
			char *a = next_word(&p), *b = next_word(&p), *dev = NULL, *via = NULL;

			if (strcmp(a, "via") == 0) {
				via = b;
				b = NULL;
				free(next_word(&p));
				dev = next_word(&p);
			} else {
				dev = b;
				b = NULL;
			}
			if (lx)
				cmds_add(out, false, xasprintf("sudo -n ip route replace %s/32%s%s dev %s",
				    s->peer, via ? " via " : "", via ? via : "", dev));
			else if (via != NULL)
				cmds_add(out, false, xasprintf("sudo -n route -n add -host %s %s",
				    s->peer, via));
			else
				cmds_add(out, false, xasprintf("sudo -n route -n add -host %s -interface %s",
				    s->peer, dev));
			free(a);
			free(b);
			free(dev);
			free(via);
		}
	}
	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);

		if (s->kind != PLAN_FACT_ADDRS || c == NULL || !s->exists || !c->exists)
			continue;
		for (size_t k = 0; k < c->addrs.n; k++) {
			const char *a = c->addrs.v[k];
			size_t l = strcspn(a, "/");

			if (strv_has(&s->addrs, a))
				continue;
			diffs++;
			if (lx)
				cmds_add(out, false, xasprintf("sudo -n ip addr del %s dev %s", a, s->iface));
			else
				cmds_add(out, false, xasprintf("sudo -n ifconfig %s inet %.*s -alias",
				    s->iface, (int)l, a));
		}
		for (size_t k = 0; k < s->addrs.n; k++) {
			const char *a = s->addrs.v[k];
			size_t l = strcspn(a, "/");
			long pfx = 32;

			if (strv_has(&c->addrs, a))
				continue;
			diffs++;
			if (lx) {
				cmds_add(out, false, xasprintf("sudo -n ip addr add %s dev %s", a, s->iface));
			} else {
				char *mask;

				jc_parse_int(a + l + 1, 0, 32, &pfx);
				mask = parse_prefix_mask((int)pfx);
				cmds_add(out, false, xasprintf("sudo -n ifconfig %s inet %.*s netmask %s alias",
				    s->iface, (int)l, a, mask));
				free(mask);
			}
		}
		if (lx && s->up != JC_UNKNOWN && c->up != JC_UNKNOWN && s->up != c->up) {
			diffs++;
			cmds_add(out, false, xasprintf("sudo -n ip link set %s %s", s->iface,
			    s->up == JC_YES ? "up" : "down"));
		}
	}
	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);

		if (s->kind != PLAN_FACT_BRIDGE || c == NULL || !s->exists || !c->exists)
			continue;
		for (size_t k = 0; k < s->members.n; k++)
			if (planned_iface(h, s->members.v[k]) && !strv_has(&c->members, s->members.v[k])) {
				diffs++;
				cmds_add(out, false, xasprintf("sudo -n ifconfig bridge0 addm %s",
				    s->members.v[k]));
			}
		for (size_t k = 0; k < c->members.n; k++)
			if (planned_iface(h, c->members.v[k]) && !strv_has(&s->members, c->members.v[k])) {
				diffs++;
				cmds_add(out, false, xasprintf("sudo -n ifconfig bridge0 deletem %s",
				    c->members.v[k]));
			}
		if (s->up != JC_UNKNOWN && c->up != JC_UNKNOWN && s->up != c->up) {
			diffs++;
			cmds_add(out, false, xasprintf("sudo -n ifconfig bridge0 %s",
			    s->up == JC_YES ? "up" : "down"));
		}
	}
	return diffs;
}

/* Shared by the threads of one run. */
struct ap_run {
	const struct apply_opts *o;
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
run_query(struct tr_session *s, const char *q, double timeout, int *status, char **out,
    struct jc_err *err)
{
	struct tr_result r = { 0 };
	int rc = tr_run(s, q, NULL, 0, timeout, 1u << 20, &r, err);

	if (rc != 0)
		return rc;
	*status = r.status;
	*out = xasprintf("%s%s", r.out, r.err);
	tr_result_clear(&r);
	return 0;
}

/* Capture every fact of h (whose facts have kind/iface/peer set). */
static int
capture(struct tr_session *s, const struct ap_host *h, struct ap_fact *facts, size_t n,
    double timeout, struct jc_err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct ap_fact *f = &facts[i];
		char *q1, *q2;
		int rc;

		free(f->out);
		free(f->lout);
		f->out = f->lout = NULL;
		fact_queries(f, h->os, &q1, &q2);
		rc = run_query(s, q1, timeout, &f->status, &f->out, err);
		if (rc == 0 && q2 != NULL)
			rc = run_query(s, q2, timeout, &f->lstatus, &f->lout, err);
		free(q1);
		free(q2);
		if (rc != 0)
			return rc;
		if (f->kind == PLAN_FACT_ADDRS && f->status != 0)
			return jc_fail(err, -ENOENT, "cannot read the state of %s: %s", f->iface,
			    f->out);
		fact_parse(f, h->os);
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
restore_host(struct ap_run *run, struct tr_session *s, const struct ap_host *h, size_t *ran,
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
	for (size_t i = 0; i < cmds.n; i++) {
		struct tr_result r = { 0 };

		emit(run, APPLY_EV_UNDO, h->name, cmds.v[i].text, 0, NULL);
		if ((rc = tr_run(s, cmds.v[i].text, NULL, 0, timeout, 0, &r, err)) != 0)
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

static int
mkdir_p(const char *path, struct jc_err *err)
{
	char *p = xstrdup(path);
	int rc = 0;

	for (char *s = p + 1; ; s++) {
		if (*s == '/' || *s == '\0') {
			char c = *s;

			*s = '\0';
			if (mkdir(p, 0700) != 0 && errno != EEXIST) {
				rc = jc_fail(err, -errno, "cannot create %s: %s", p, strerror(errno));
				break;
			}
			*s = c;
			if (c == '\0')
				break;
		}
	}
	free(p);
	return rc;
}

/* Write j to path atomically (a temporary file, fsync, rename). */
static int
write_json_atomic(const char *path, json_t *j, struct jc_err *err)
{
	char *tmp = xasprintf("%s.tmp.%ld", path, (long)getpid());
	int fd, rc = 0;
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	size_t len = text ? strlen(text) : 0, off = 0;

	if (text == NULL) {
		free(tmp);
		return jc_fail(err, -ENOMEM, "cannot serialise the state for %s", path);
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0) {
		rc = jc_fail(err, -errno, "cannot write %s: %s", tmp, strerror(errno));
		goto out;
	}
	while (off < len) {
		ssize_t w = write(fd, text + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = jc_fail(err, -EIO, "cannot write %s: %s", tmp, strerror(errno));
			break;
		}
		off += (size_t)w;
	}
	if (rc == 0 && (write(fd, "\n", 1) != 1 || fsync(fd) != 0))
		rc = jc_fail(err, -EIO, "cannot write %s: %s", tmp, strerror(errno));
	if (close(fd) != 0 && rc == 0)
		rc = jc_fail(err, -EIO, "cannot write %s: %s", tmp, strerror(errno));
	if (rc == 0 && rename(tmp, path) != 0)
		rc = jc_fail(err, -errno, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
	if (rc != 0)
		unlink(tmp);
out:
	free(text);
	free(tmp);
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
	json_object_set_new(j, "os", json_string(h->os == JC_OS_LINUX ? "linux" : "macos"));
	json_object_set_new(j, "saved", json_string(when));
	for (size_t i = 0; i < h->ifaces.n; i++)
		json_array_append_new(addrs, json_pack("{s:s, s:s, s:s}", "iface", h->ifaces.v[i],
		    "ip", h->ips.v[i], "peer_ip", h->peers.v[i]));
	json_object_set_new(j, "addresses", addrs);
	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *f = &h->facts[i];
		json_t *o = json_object();
		char *q1, *q2;

		fact_queries(f, h->os, &q1, &q2);
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
		json_object_set_new(o, "exists", json_boolean(f->exists));
		json_object_set_new(o, "up", tri_json(f->up));
		if (f->kind == PLAN_FACT_ADDRS)
			json_object_set_new(o, "inet", strv_json(&f->addrs));
		if (f->kind == PLAN_FACT_BRIDGE)
			json_object_set_new(o, "members", strv_json(&f->members));
		if (f->kind == PLAN_FACT_ROUTE)
			json_object_set_new(o, "route", jstr(f->route));
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
	h->name = xstrdup(name);
	h->target = tmp.target;
	h->user = tmp.user;
	h->port = tmp.port;
	tmp.target = tmp.user = NULL;
	jc_host_clear(&tmp);
	h->os = strcmp(os, "linux") == 0 ? JC_OS_LINUX : JC_OS_MACOS;
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
		    strcmp(kind, "bridge") == 0 ? PLAN_FACT_BRIDGE : PLAN_FACT_ROUTE;
		if (strcmp(kind, kind_name(f->kind)) != 0 ||
		    (f->kind == PLAN_FACT_BRIDGE ? strcmp(ifn, "bridge0") != 0 || h->os == JC_OS_LINUX :
		    !planned_iface(h, ifn)) ||
		    (f->kind == PLAN_FACT_ROUTE && (peer == NULL || !jc_ipv4_ok(peer))))
			return jc_fail(err, -EINVAL, "%s: bad fact %zu", path, i);
		f->iface = xstrdup(ifn);
		f->peer = f->kind == PLAN_FACT_ROUTE ? xstrdup(peer) : NULL;
		f->status = (int)json_integer_value(json_object_get(v, "status"));
		f->out = xstrdup(out);
		if (jget_str(v, "link_output") != NULL) {
			f->lout = xstrdup(jget_str(v, "link_output"));
			f->lstatus = (int)json_integer_value(json_object_get(v, "link_status"));
		}
		h->nfacts++;
		fact_parse(f, h->os);
	}
	return 0;
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
	json_t *old = json_load_file(path, 0, NULL), *v;
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

/* ---- apply ---- */

struct ap_slot {
	struct ap_run *run;
	const struct plan_host *ph;
	const struct jc_host *jh;
	struct ap_host h;
	struct tr_session *s;
	struct apply_host_result *res;
	bool active;		/* has commands to run */
	int phase;		/* 0 capture, 1 setup, 2 rollback */
	struct jc_err err;
	int rc;
	char *fail_text;	/* the failed command and its stderr */
};

static char *
cmd_line(const struct plan_cmd *c)
{
	struct jc_buf b = { 0 };

	for (size_t k = 0; k < c->argc; k++) {
		buf_printf(&b, "%s%s", k ? " " : "", c->argv[k]);
		if (k == 0 && strcmp(c->argv[0], "sudo") == 0)
			buf_puts(&b, " -n");
	}
	return buf_steal(&b);
}

static void
trim(char *s)
{
	size_t l = strlen(s);

	while (l > 0 && (s[l - 1] == '\n' || s[l - 1] == '\r' || s[l - 1] == ' '))
		s[--l] = '\0';
}

/* A word safe in a command line: a plain word, or an option such as "-n". */
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
	return jc_plain_word(w);
}

static void *
slot_main(void *arg)
{
	struct ap_slot *sl = arg;
	struct ap_run *run = sl->run;
	double timeout = cmd_timeout(run->o);

	if (sl->phase == 0) {
		const struct jc_host *jh = sl->jh;

		sl->rc = tr_connect(jh->name, jh->user, jh->port, &run->o->tr, &sl->s, &sl->err);
		if (sl->rc == 0)
			sl->rc = capture(sl->s, &sl->h, sl->h.facts, sl->h.nfacts, timeout, &sl->err);
		return NULL;
	}
	if (sl->phase == 1) {
		for (size_t c = 0; c < sl->ph->cmds.n; c++) {
			const struct plan_cmd *pc = &sl->ph->cmds.v[c];
			struct tr_result r = { 0 };
			char *line;
			bool stop;

			pthread_mutex_lock(&run->lock);
			stop = run->abort;
			pthread_mutex_unlock(&run->lock);
			if (stop)
				break;
			for (size_t k = 0; k < pc->argc; k++)
				if (!word_ok(pc->argv[k])) {
					sl->rc = jc_fail(&sl->err, -EINVAL, "refusing to run a word that is not plain: %s",
					    pc->argv[k]);
					goto failed;
				}
			line = cmd_line(pc);
			emit(run, APPLY_EV_RUN, sl->h.name, line, 0, NULL);
			sl->rc = tr_run(sl->s, line, NULL, 0, timeout, 0, &r, &sl->err);
			sl->res->ran++;
			if (sl->rc != 0) {
				sl->fail_text = xasprintf("%s: %s", line, sl->err.msg);
				free(line);
				goto failed;
			}
			if (r.status != 0) {
				trim(r.err);
				emit(run, pc->may_fail ? APPLY_EV_IGNORED : APPLY_EV_FAILED, sl->h.name,
				    line, r.status, r.err);
				if (!pc->may_fail) {
					sl->fail_text = xasprintf("%s failed (exit %d)%s%s", line, r.status,
					    *r.err ? ": " : "", r.err);
					sl->rc = -EIO;
					tr_result_clear(&r);
					free(line);
					goto failed;
				}
			}
			tr_result_clear(&r);
			free(line);
		}
		return NULL;
failed:
		pthread_mutex_lock(&run->lock);
		run->abort = true;
		pthread_mutex_unlock(&run->lock);
		if (sl->fail_text == NULL)
			sl->fail_text = xstrdup(sl->err.msg);
		return NULL;
	}
	{
		size_t ran = 0;

		sl->rc = restore_host(run, sl->s, &sl->h, &ran, &sl->err);
	}
	return NULL;
}

/* Run phase on every slot with want set, one thread each. */
static void
run_phase(struct ap_slot *sl, size_t n, int phase, const bool *want)
{
	pthread_t *th = xcalloc(n ? n : 1, sizeof(*th));
	bool *started = xcalloc(n ? n : 1, sizeof(*started));

	for (size_t i = 0; i < n; i++) {
		if (!want[i])
			continue;
		sl[i].phase = phase;
		sl[i].rc = 0;
		memset(&sl[i].err, 0, sizeof(sl[i].err));
		if (pthread_create(&th[i], NULL, slot_main, &sl[i]) == 0)
			started[i] = true;
		else
			slot_main(&sl[i]);
	}
	for (size_t i = 0; i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	free(th);
	free(started);
}

static void
host_from_plan(struct ap_host *h, const struct plan_host *ph, const struct jc_host *jh)
{
	h->name = xstrdup(jh->name);
	h->target = xstrdup(jh->target ? jh->target : jh->name);
	h->user = xstrdup(jh->user);
	h->port = jh->port;
	h->os = ph->os;
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

int
apply_run(const struct plan *p, const struct graph *g, const struct apply_opts *o,
    struct apply_result *res, struct jc_err *err)
{
	struct ap_run run = { .o = o };
	struct ap_slot *sl = xcalloc(p->n ? p->n : 1, sizeof(*sl));
	bool *want = xcalloc(p->n ? p->n : 1, sizeof(*want));
	char *dir = apply_state_dir(o);
	json_t *meta = NULL;
	size_t nactive = 0;
	long failed = -1;
	int rc = 0;

	pthread_mutex_init(&run.lock, NULL);
	memset(res, 0, sizeof(*res));
	res->n = p->n;
	res->hosts = xcalloc(p->n ? p->n : 1, sizeof(*res->hosts));
	for (size_t i = 0; i < p->n; i++) {
		sl[i].run = &run;
		sl[i].ph = &p->hosts[i];
		sl[i].jh = &g->hosts[p->hosts[i].host];
		sl[i].res = &res->hosts[i];
		res->hosts[i].name = sl[i].jh->name;
		if (p->hosts[i].applied || p->hosts[i].cmds.n == 0) {
			res->hosts[i].status = APPLY_HOST_UNCHANGED;
			continue;
		}
		host_from_plan(&sl[i].h, sl[i].ph, sl[i].jh);
		sl[i].active = want[i] = true;
		nactive++;
	}
	if (nactive == 0)
		goto out;

	/* 1. every host's prior state, saved before anything changes */
	run_phase(sl, p->n, 0, want);
	for (size_t i = 0; i < p->n; i++) {
		if (!want[i] || sl[i].rc == 0)
			continue;
		res->hosts[i].status = APPLY_HOST_ERROR;
		res->hosts[i].error = xstrdup(sl[i].err.msg);
		if (rc == 0)
			rc = jc_fail(err, sl[i].rc, "%s: %s; nothing was changed on any host",
			    sl[i].h.name, sl[i].err.msg);
	}
	if (rc != 0)
		goto out;
	if ((rc = mkdir_p(dir, err)) != 0)
		goto out;
	{
		char *hd = xasprintf("%s/hosts", dir);

		rc = mkdir_p(hd, err);
		free(hd);
		if (rc != 0)
			goto out;
	}
	{
		json_t *hosts = json_array();
		char when[32];

		now_text(when);
		meta = json_object();
		json_object_set_new(meta, "version", json_integer(STATE_VERSION));
		json_object_set_new(meta, "program", json_string(JC_PROG " " PACKAGE_VERSION));
		json_object_set_new(meta, "started", json_string(when));
		json_object_set_new(meta, "status", json_string("in-progress"));
		for (size_t i = 0; i < p->n && rc == 0; i++) {
			char *file, *path;
			json_t *hj;

			if (!want[i])
				continue;
			file = host_file(i, sl[i].h.name);
			path = xasprintf("%s/%s", dir, file);
			hj = host_json(&sl[i].h);
			rc = write_json_atomic(path, hj, err);
			json_decref(hj);
			json_array_append_new(hosts, json_pack("{s:s, s:s, s:b}", "host", sl[i].h.name,
			    "file", file, "restored", 0));
			free(file);
			free(path);
		}
		if (rc == 0)
			carry_over(dir, p, res, hosts);
		json_object_set_new(meta, "hosts", hosts);
		if (rc == 0)
			rc = save_last(dir, meta, err);
		if (rc != 0) {
			char *why = xstrdup(err->msg);

			rc = jc_fail(err, rc, "%s; nothing was changed on any host", why);
			free(why);
			goto out;
		}
	}

	/* 2. the setup, everyone at once, stopping at the first failure */
	run_phase(sl, p->n, 1, want);
	for (size_t i = 0; i < p->n; i++) {
		if (!want[i])
			continue;
		if (sl[i].fail_text != NULL) {
			res->hosts[i].status = APPLY_HOST_FAILED;
			res->hosts[i].error = xstrdup(sl[i].fail_text);
			if (failed < 0)
				failed = (long)i;
		} else if (res->hosts[i].ran == sl[i].ph->cmds.n) {
			res->hosts[i].status = APPLY_HOST_DONE;
		}
	}
	if (failed < 0) {
		res->changed = true;
		json_object_set_new(meta, "status", json_string("applied"));
		rc = save_last(dir, meta, err);
		goto out;
	}

	/* 3. put back every host that ran something */
	for (size_t i = 0; i < p->n; i++)
		want[i] = sl[i].active && res->hosts[i].ran > 0;
	run_phase(sl, p->n, 2, want);
	{
		bool all = true;
		struct jc_buf b = { 0 };

		for (size_t i = 0; i < p->n; i++) {
			if (!want[i])
				continue;
			if (sl[i].rc == 0) {
				res->hosts[i].undone = true;
				if (res->hosts[i].status != APPLY_HOST_FAILED)
					res->hosts[i].status = APPLY_HOST_ROLLED_BACK;
			} else {
				all = false;
				res->hosts[i].status = APPLY_HOST_ROLLBACK_FAILED;
				free(res->hosts[i].error);
				res->hosts[i].error = xstrdup(sl[i].err.msg);
				buf_printf(&b, "; %s could not be put back: %s", sl[i].h.name,
				    sl[i].err.msg);
			}
		}
		json_object_set_new(meta, "status", json_string(all ? "rolled-back" : "rollback-failed"));
		save_last(dir, meta, NULL);
		rc = jc_fail(err, -EIO, "%s: %s; %s%s", sl[failed].h.name, sl[failed].fail_text,
		    all ? "every host was put back as it was" : "rollback incomplete",
		    b.data ? b.data : "");
		buf_free(&b);
	}
out:
	for (size_t i = 0; i < p->n; i++) {
		tr_close(sl[i].s);
		ap_host_clear(&sl[i].h);
		free(sl[i].fail_text);
	}
	json_decref(meta);
	pthread_mutex_destroy(&run.lock);
	free(sl);
	free(want);
	free(dir);
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
	struct ap_run *run;
	struct ap_host h;
	size_t ran;
	int rc;
	struct jc_err err;
};

static void *
rs_main(void *arg)
{
	struct rs_slot *sl = arg;
	struct tr_session *s = NULL;

	sl->rc = tr_connect(sl->h.name, sl->h.user, sl->h.port, &sl->run->o->tr, &s, &sl->err);
	if (sl->rc == 0)
		sl->rc = restore_host(sl->run, s, &sl->h, &sl->ran, &sl->err);
	tr_close(s);
	return NULL;
}

int
apply_restore(const struct apply_opts *o, const char *const *only, size_t nonly,
    struct apply_restored **out, size_t *n, const char **why, struct jc_err *err)
{
	char *dir = apply_state_dir(o), *path = xasprintf("%s/%s", dir, LAST_SETUP);
	struct ap_run run = { .o = o };
	struct rs_slot *sl = NULL;
	pthread_t *th = NULL;
	bool *started = NULL;
	json_t *meta, *hosts, *v;
	json_error_t je;
	const char *status;
	size_t ns = 0, i;
	int rc = 0;

	*out = NULL;
	*n = 0;
	*why = NULL;
	pthread_mutex_init(&run.lock, NULL);
	if (access(path, F_OK) != 0) {
		*why = "no setup was saved";
		goto done;
	}
	meta = json_load_file(path, 0, &je);
	hosts = json_object_get(meta, "hosts");
	status = jget_str(meta, "status");
	if (meta == NULL || !json_is_array(hosts) || status == NULL) {
		rc = jc_fail(err, -EINVAL, "%s: not a saved setup%s%s", path, meta ? "" : ": ",
		    meta ? "" : je.text);
		json_decref(meta);
		goto done;
	}
	if (strcmp(status, "rolled-back") == 0 || strcmp(status, "restored") == 0) {
		*why = strcmp(status, "restored") == 0 ? "the last setup was already restored" :
		    "the last setup failed and was rolled back";
		json_decref(meta);
		goto done;
	}
	for (size_t k = 0; k < nonly; k++) {
		bool found = false;

		json_array_foreach(hosts, i, v)
			if (jget_str(v, "host") && strcmp(jget_str(v, "host"), only[k]) == 0)
				found = true;
		if (!found) {
			rc = jc_fail(err, -ENOENT, "%s: no saved state in %s", only[k], dir);
			json_decref(meta);
			goto done;
		}
	}
	sl = xcalloc(json_array_size(hosts) + 1, sizeof(*sl));
	json_array_foreach(hosts, i, v) {
		const char *name = jget_str(v, "host"), *file = jget_str(v, "file");
		char *hp;
		json_t *hj;
		bool want = nonly == 0;

		for (size_t k = 0; k < nonly; k++)
			if (name && strcmp(name, only[k]) == 0)
				want = true;
		if (!want || json_is_true(json_object_get(v, "restored")))
			continue;
		if (name == NULL || file == NULL || strncmp(file, "hosts/", 6) != 0 ||
		    strstr(file, "..") != NULL || strchr(file + 6, '/') != NULL) {
			rc = jc_fail(err, -EINVAL, "%s: bad host entry %zu", path, i);
			break;
		}
		hp = xasprintf("%s/%s", dir, file);
		hj = json_load_file(hp, 0, &je);
		if (hj == NULL)
			rc = jc_fail(err, -EINVAL, "%s: %s", hp, je.text);
		else
			rc = host_from_json(hj, hp, &sl[ns].h, err);
		json_decref(hj);
		free(hp);
		sl[ns].run = &run;
		ns++;
		if (rc != 0)
			break;
	}
	if (rc == 0 && ns == 0)
		*why = "every host of the last setup was already restored";
	if (rc == 0 && ns > 0) {
		th = xcalloc(ns, sizeof(*th));
		started = xcalloc(ns, sizeof(*started));
		for (size_t k = 0; k < ns; k++)
			started[k] = pthread_create(&th[k], NULL, rs_main, &sl[k]) == 0;
		for (size_t k = 0; k < ns; k++) {
			if (started[k])
				pthread_join(th[k], NULL);
			else
				rs_main(&sl[k]);
		}
		*out = xcalloc(ns, sizeof(**out));
		*n = ns;
		for (size_t k = 0; k < ns; k++) {
			(*out)[k].name = xstrdup(sl[k].h.name);
			(*out)[k].ran = sl[k].ran;
			(*out)[k].error = sl[k].rc == 0 ? NULL : xstrdup(sl[k].err.msg);
		}
		/* mark what is back; the setup is restored when every host is */
		{
			bool all = true;

			json_array_foreach(hosts, i, v) {
				for (size_t k = 0; k < ns; k++)
					if (sl[k].rc == 0 && jget_str(v, "host") != NULL &&
					    strcmp(jget_str(v, "host"), sl[k].h.name) == 0)
						json_object_set_new(v, "restored", json_true());
				if (!json_is_true(json_object_get(v, "restored")))
					all = false;
			}
			if (all)
				json_object_set_new(meta, "status", json_string("restored"));
			save_last(dir, meta, NULL);
		}
	}
	json_decref(meta);
	for (size_t k = 0; k < ns; k++)
		ap_host_clear(&sl[k].h);
done:
	free(sl);
	free(th);
	free(started);
	free(path);
	free(dir);
	pthread_mutex_destroy(&run.lock);
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
		fact_parse(&now[i], hs.os);
	}
	rc = (int)restore_cmds(&hs, now, hs.nfacts, &c);
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
