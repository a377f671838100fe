/* SPDX-License-Identifier: MIT */
/*
 * The scripted transport for tests: rules first, then a model of each
 * host's network state driven by the real commands. See transport-script.h.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "parse_net.h"
#include "transport-script.h"
#include "util.h"

struct ts_if {
	char *name;
	bool up;
	struct jc_strv addrs;	/* "A/L" */
	struct jc_strv members;
	bool bridge;
};

struct ts_rt {
	char *peer, *via, *dev;
};

struct ts_host {
	char *name;
	int unreachable;	/* connect error code, 0: reachable */
	bool linux_model;
	bool model;
	struct ts_if *ifs;
	size_t nifs;
	struct ts_rt *rts;
	size_t nrts;
	size_t nsudo;
	size_t nscripts;	/* setup scripts run through sudo */
	size_t fault_k;
	enum ts_fault fault;
	struct jc_buf log;
};

struct ts {
	pthread_mutex_t mu;
	struct ts_rule *rules;
	size_t nrules;
	struct ts_host **hosts;
	size_t nhosts;
};

struct ts_conn {
	struct ts_host *h;
	bool dead;
};

/* What a command produced. */
struct ts_ans {
	int rc;			/* 0 or a TR_E* code */
	int status;
	struct jc_buf out, err;
	size_t cut;		/* disconnect: stdout bytes delivered */
};

static struct ts_host *
host_get(struct ts *ts, const char *name)
{
	struct ts_host *h;

	for (size_t i = 0; i < ts->nhosts; i++)
		if (strcmp(ts->hosts[i]->name, name) == 0)
			return ts->hosts[i];
	h = xcalloc(1, sizeof(*h));
	h->name = xstrdup(name);
	ts->hosts = xreallocarray(ts->hosts, ts->nhosts + 1, sizeof(*ts->hosts));
	ts->hosts[ts->nhosts++] = h;
	return h;
}

static struct ts_if *
if_get(struct ts_host *h, const char *name, bool create)
{
	for (size_t i = 0; i < h->nifs; i++)
		if (strcmp(h->ifs[i].name, name) == 0)
			return &h->ifs[i];
	if (!create)
		return NULL;
	h->ifs = xreallocarray(h->ifs, h->nifs + 1, sizeof(*h->ifs));
	memset(&h->ifs[h->nifs], 0, sizeof(*h->ifs));
	h->ifs[h->nifs].name = xstrdup(name);
	h->ifs[h->nifs].bridge = strncmp(name, "bridge", 6) == 0;
	return &h->ifs[h->nifs++];
}

static long
strv_find(const struct jc_strv *sv, const char *s, bool addr_only)
{
	for (size_t i = 0; i < sv->n; i++) {
		size_t l = addr_only ? strcspn(sv->v[i], "/") : strlen(sv->v[i]);

		if (strlen(s) == l && strncmp(sv->v[i], s, l) == 0)
			return (long)i;
	}
	return -1;
}

static void
strv_remove(struct jc_strv *sv, size_t i)
{
	free(sv->v[i]);
	memmove(&sv->v[i], &sv->v[i + 1], (sv->n - i - 1) * sizeof(*sv->v));
	sv->n--;
}

static long
rt_find(const struct ts_host *h, const char *peer)
{
	for (size_t i = 0; i < h->nrts; i++)
		if (strcmp(h->rts[i].peer, peer) == 0)
			return (long)i;
	return -1;
}

static void
rt_del(struct ts_host *h, size_t i)
{
	free(h->rts[i].peer);
	free(h->rts[i].via);
	free(h->rts[i].dev);
	memmove(&h->rts[i], &h->rts[i + 1], (h->nrts - i - 1) * sizeof(*h->rts));
	h->nrts--;
}

static void
rt_set(struct ts_host *h, const char *peer, const char *via, const char *dev)
{
	long i = rt_find(h, peer);

	if (i >= 0)
		rt_del(h, (size_t)i);
	h->rts = xreallocarray(h->rts, h->nrts + 1, sizeof(*h->rts));
	h->rts[h->nrts].peer = xstrdup(peer);
	h->rts[h->nrts].via = xstrdup(via);
	h->rts[h->nrts].dev = xstrdup(dev);
	h->nrts++;
}

static unsigned long
ip_num(const char *s)
{
	unsigned long v = 0;
	char *end;

	for (int i = 0; i < 4; i++) {
		v = (v << 8) | (strtoul(s, &end, 10) & 255);
		s = *end == '.' ? end + 1 : end;
	}
	return v;
}

/* The prefix length of "A/L" (32 without one). */
static int
prefix_of(const char *a)
{
	const char *p = strchr(a, '/');

	return p != NULL ? (int)strtol(p + 1, NULL, 10) : 32;
}

/* The interface with an address whose subnet holds ip, or NULL. */
static const struct ts_if *
if_for(const struct ts_host *h, const char *ip)
{
	for (size_t i = 0; i < h->nifs; i++)
		for (size_t k = 0; k < h->ifs[i].addrs.n; k++) {
			const char *a = h->ifs[i].addrs.v[k];
			int pfx = prefix_of(a);
			unsigned long m = pfx == 0 ? 0 : (0xfffffffful << (32 - pfx)) & 0xfffffffful;

			if ((ip_num(a) & m) == (ip_num(ip) & m))
				return &h->ifs[i];
		}
	return NULL;
}

/* ---- macOS ---- */

static void
mac_ifconfig_show(const struct ts_if *f, struct ts_ans *a)
{
	buf_printf(&a->out, "%s: flags=%s mtu 1500\n\tether 36:1a:2b:3c:4d:01 \n", f->name,
	    f->up ? "8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST>" :
	    "8822<BROADCAST,SMART,SIMPLEX,MULTICAST>");
	for (size_t k = 0; k < f->addrs.n; k++) {
		const char *s = f->addrs.v[k];
		int pfx = prefix_of(s);
		unsigned long m = pfx == 0 ? 0 : (0xfffffffful << (32 - pfx)) & 0xfffffffful;
		unsigned long bc = (ip_num(s) & m) | (~m & 0xfffffffful);

		buf_printf(&a->out, "\tinet %.*s netmask 0x%08lx broadcast %lu.%lu.%lu.%lu\n",
		    (int)strcspn(s, "/"), s, m, bc >> 24, (bc >> 16) & 255, (bc >> 8) & 255, bc & 255);
	}
	if (f->bridge) {
		buf_puts(&a->out, "\tConfiguration:\n");
		for (size_t k = 0; k < f->members.n; k++)
			buf_printf(&a->out, "\tmember: %s flags=3<LEARNING,DISCOVER>\n", f->members.v[k]);
	}
	buf_printf(&a->out, "\tstatus: %s\n", f->up ? "active" : "inactive");
}

static void
fail(struct ts_ans *a, int status, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	buf_puts(&a->err, s);
	free(s);
	a->status = status;
}

/*
 * A sequence of "up", "down", "addm M", "deletem M", run in order as
 * ifconfig does, up to the first that fails.
 */
static void
mac_ifconfig_ops(struct ts_if *f, char **w, size_t n, struct ts_ans *a)
{
	long i;

	for (size_t k = 0; k < n; k++) {
		if (strcmp(w[k], "up") == 0 || strcmp(w[k], "down") == 0) {
			f->up = strcmp(w[k], "up") == 0;
		} else if (strcmp(w[k], "addm") == 0 && k + 1 < n) {
			if (strv_find(&f->members, w[++k], false) < 0)
				strv_push(&f->members, w[k]);
		} else if (strcmp(w[k], "deletem") == 0 && k + 1 < n) {
			if ((i = strv_find(&f->members, w[++k], false)) < 0) {
				fail(a, 1, "ifconfig: BRDGDEL %s: No such process\n", w[k]);
				return;
			}
			strv_remove(&f->members, (size_t)i);
		} else {
			fail(a, 1, "ifconfig: unsupported by the model\n");
			return;
		}
	}
}

/* ifconfig IF [inet A (netmask M [alias] | -alias) | (up | down | addm M | deletem M)...] */
static void
mac_ifconfig(struct ts_host *h, char **w, size_t n, struct ts_ans *a)
{
	struct ts_if *f = n > 1 ? if_get(h, w[1], false) : NULL;
	long i;

	if (f == NULL) {
		fail(a, 1, "ifconfig: interface %s does not exist\n", n > 1 ? w[1] : "");
		return;
	}
	if (n == 2) {
		mac_ifconfig_show(f, a);
	} else if (strcmp(w[2], "inet") != 0) {
		mac_ifconfig_ops(f, w + 2, n - 2, a);
	} else if (n == 5 && strcmp(w[2], "inet") == 0 && strcmp(w[4], "-alias") == 0) {
		if ((i = strv_find(&f->addrs, w[3], true)) < 0)
			fail(a, 1, "ifconfig: ioctl (SIOCDIFADDR): Can't assign requested address\n");
		else
			strv_remove(&f->addrs, (size_t)i);
	} else if ((n == 6 || n == 7) && strcmp(w[2], "inet") == 0 && strcmp(w[4], "netmask") == 0) {
		bool alias = n == 7 && strcmp(w[6], "alias") == 0;
		int pfx = parse_netmask(w[5]);

		/* without alias the new address replaces the first one */
		if (!alias && f->addrs.n > 0)
			strv_remove(&f->addrs, 0);
		if ((i = strv_find(&f->addrs, w[3], true)) >= 0)
			strv_remove(&f->addrs, (size_t)i);
		strv_push_owned(&f->addrs, xasprintf("%s/%d", w[3], pfx));
		f->up = true;
	} else {
		fail(a, 1, "ifconfig: unsupported by the model\n");
	}
}

static void
mac_route_get(struct ts_host *h, const char *peer, struct ts_ans *a)
{
	long i = rt_find(h, peer);
	const struct ts_if *f = if_for(h, peer);

	if (i < 0 && f == NULL) {
		fail(a, 1, "route: writing to routing socket: not in table\n");
		return;
	}
	buf_printf(&a->out, "   route to: %s\ndestination: %s\n", peer, peer);
	if (i >= 0 && h->rts[i].via != NULL)
		buf_printf(&a->out, "    gateway: %s\n", h->rts[i].via);
	buf_printf(&a->out, "  interface: %s\n      flags: %s\n", i >= 0 ? h->rts[i].dev : f->name,
	    i >= 0 ? "<UP,HOST,DONE,STATIC>" : "<UP,DONE>");
	buf_puts(&a->out, " recvpipe  sendpipe  ssthresh  rtt,msec    rttvar  hopcount      mtu     expire\n"
	    "       0         0         0         0         0         0      1500         0 \n");
}

/* route -n (get P | delete -host P | add -host P (-interface IF | G)) */
static void
mac_route(struct ts_host *h, char **w, size_t n, struct ts_ans *a)
{
	long i;

	if (n == 4 && strcmp(w[2], "get") == 0) {
		mac_route_get(h, w[3], a);
	} else if (n == 5 && strcmp(w[2], "delete") == 0) {
		if ((i = rt_find(h, w[4])) < 0) {
			fail(a, 1, "route: writing to routing socket: not in table\n");
			return;
		}
		rt_del(h, (size_t)i);
		buf_printf(&a->out, "delete host %s\n", w[4]);
	} else if ((n == 6 || n == 7) && strcmp(w[2], "add") == 0) {
		const struct ts_if *f = n == 6 ? if_for(h, w[5]) : if_get(h, w[6], false);

		if (rt_find(h, w[4]) >= 0) {
			fail(a, 1, "route: writing to routing socket: File exists\n");
			return;
		}
		if (f == NULL) {
			fail(a, 1, "route: writing to routing socket: Network is unreachable\n");
			return;
		}
		rt_set(h, w[4], n == 6 ? w[5] : NULL, f->name);
		buf_printf(&a->out, "add host %s: gateway %s\n", w[4], n == 6 ? w[5] : w[6]);
	} else {
		fail(a, 64, "route: unsupported by the model\n");
	}
}

/* ---- Linux ---- */

static void
lx_addr_show(const struct ts_host *h, const struct ts_if *f, struct ts_ans *a)
{
	size_t idx = (size_t)(f - h->ifs) + 2;

	for (size_t k = 0; k < f->addrs.n; k++)
		buf_printf(&a->out, "%zu: %s    inet %s scope global %s\\       valid_lft forever "
		    "preferred_lft forever\n", idx, f->name, f->addrs.v[k], f->name);
}

static void
lx_link_show(const struct ts_host *h, const struct ts_if *f, struct ts_ans *a)
{
	buf_printf(&a->out, "%zu: %s: <BROADCAST,MULTICAST%s> mtu 1500 qdisc %s state %s mode "
	    "DEFAULT group default qlen 1000\\    link/ether 4a:c8:ff:be:57:75 brd "
	    "ff:ff:ff:ff:ff:ff\n", (size_t)(f - h->ifs) + 2, f->name, f->up ? ",UP,LOWER_UP" : "",
	    f->up ? "noqueue" : "noop", f->up ? "UP" : "DOWN");
}

/* ip addr (replace|add|del) A/L dev IF, ip -4 -o addr show dev IF */
static void
lx_addr(struct ts_host *h, char **w, size_t n, struct ts_ans *a)
{
	struct ts_if *f = if_get(h, w[n - 1], false);
	const char *op = w[2];
	long i;

	if (f == NULL || strcmp(w[n - 2], "dev") != 0) {
		fail(a, 1, "Device \"%s\" does not exist.\n", w[n - 1]);
		return;
	}
	if (strcmp(op, "show") == 0) {
		lx_addr_show(h, f, a);
		return;
	}
	i = strv_find(&f->addrs, w[3], false);
	if (strcmp(op, "del") == 0) {
		if (i < 0)
			fail(a, 2, "RTNETLINK answers: Cannot assign requested address\n");
		else
			strv_remove(&f->addrs, (size_t)i);
		return;
	}
	if (strcmp(op, "add") == 0 && i >= 0) {
		fail(a, 2, "RTNETLINK answers: File exists\n");
		return;
	}
	if ((i = strv_find(&f->addrs, w[3], true)) >= 0)
		strv_remove(&f->addrs, (size_t)i);
	strv_push(&f->addrs, w[3]);
}

/* ip route (show P/32 | replace P/32 [via G] dev IF | del P/32 [dev IF]) */
static void
lx_route(struct ts_host *h, char **w, size_t n, struct ts_ans *a)
{
	char *peer = xstrndup(w[3], strcspn(w[3], "/"));
	long i = rt_find(h, peer);

	if (strcmp(w[2], "show") == 0) {
		if (i >= 0 && h->rts[i].via != NULL)
			buf_printf(&a->out, "%s via %s dev %s \n", peer, h->rts[i].via, h->rts[i].dev);
		else if (i >= 0)
			buf_printf(&a->out, "%s dev %s scope link \n", peer, h->rts[i].dev);
	} else if (strcmp(w[2], "del") == 0) {
		if (i < 0)
			fail(a, 2, "RTNETLINK answers: No such process\n");
		else
			rt_del(h, (size_t)i);
	} else if (strcmp(w[2], "replace") == 0 && n >= 6 && if_get(h, w[n - 1], false) != NULL) {
		rt_set(h, peer, n == 8 ? w[5] : NULL, w[n - 1]);
	} else {
		fail(a, 2, "Cannot find device \"%s\"\n", w[n - 1]);
	}
	free(peer);
}

static void
lx_ip(struct ts_host *h, char **w, size_t n, struct ts_ans *a)
{
	struct ts_if *f;

	if (n >= 7 && strcmp(w[1], "-4") == 0 && strcmp(w[3], "addr") == 0) {
		char *v[] = { w[0], w[3], w[4], w[5], w[6] };

		lx_addr(h, v, 5, a);
	} else if (n == 6 && strcmp(w[1], "-o") == 0 && strcmp(w[2], "link") == 0) {
		if ((f = if_get(h, w[5], false)) == NULL)
			fail(a, 1, "Device \"%s\" does not exist.\n", w[5]);
		else
			lx_link_show(h, f, a);
	} else if (n == 5 && strcmp(w[1], "link") == 0 && strcmp(w[2], "set") == 0) {
		if ((f = if_get(h, w[3], false)) == NULL)
			fail(a, 1, "Cannot find device \"%s\"\n", w[3]);
		else
			f->up = strcmp(w[4], "up") == 0;
	} else if (n >= 4 && strcmp(w[1], "addr") == 0) {
		lx_addr(h, w, n, a);
	} else if (n >= 4 && strcmp(w[1], "route") == 0) {
		lx_route(h, w, n, a);
	} else {
		fail(a, 1, "Object \"%s\" is unknown\n", n > 1 ? w[1] : "");
	}
}

/* ---- dispatch ---- */

static void
model_run(struct ts_host *h, char **w, size_t n, struct ts_ans *a)
{
	if (n == 0) {
		fail(a, 127, "sh: empty command\n");
	} else if (!h->linux_model && strcmp(w[0], "ifconfig") == 0) {
		mac_ifconfig(h, w, n, a);
	} else if (!h->linux_model && strcmp(w[0], "route") == 0 && n >= 3) {
		mac_route(h, w, n, a);
	} else if (h->linux_model && strcmp(w[0], "ip") == 0) {
		lx_ip(h, w, n, a);
	} else {
		fail(a, 127, "sh: %s: command not found\n", w[0]);
	}
}

static bool
rule_matches(const struct ts_rule *r, const char *host, const char *cmd)
{
	size_t l;

	if (r->host != NULL && strcmp(r->host, host) != 0)
		return false;
	if (r->command == NULL)
		return true;
	l = strlen(r->command);
	if (l > 0 && r->command[l - 1] == '*')
		return strncmp(cmd, r->command, l - 1) == 0;
	return strcmp(cmd, r->command) == 0;
}

static void
rule_answer(const struct ts_rule *r, const char *in, size_t inlen, double timeout,
    struct ts_ans *a, struct jc_err *err)
{
	const char *o = r->out ? r->out : "", *p;
	size_t tl = inlen > 0 ? strcspn(in, "\n") : 0;

	if (r->hang || (timeout > 0 && r->delay >= timeout)) {
		a->rc = jc_fail(err, TR_ETIMEOUT, "the command did not end within %.0f s", timeout);
		return;
	}
	while ((p = strstr(o, "@TOKEN@")) != NULL) {
		buf_append(&a->out, o, (size_t)(p - o));
		buf_append(&a->out, in, tl);
		o = p + 7;
	}
	buf_puts(&a->out, o);
	buf_puts(&a->err, r->err ? r->err : "");
	a->status = r->status;
	if (r->disconnect) {
		a->cut = r->cut < a->out.len ? r->cut : a->out.len;
		a->rc = jc_fail(err, TR_ECHANNEL, "the session was lost");
	}
}

/* The injected fault of this sudo command, if any (counts it). */
static bool
take_fault(struct ts_host *h, double timeout, struct ts_ans *a, struct ts_conn *c,
    struct jc_err *err)
{
	if (++h->nsudo != h->fault_k)
		return false;
	if (h->fault == TS_FAIL) {
		fail(a, 1, "injected failure\n");
	} else if (h->fault == TS_DISCONNECT) {
		c->dead = true;
		a->rc = jc_fail(err, TR_ECHANNEL, "the session was lost");
	} else {
		a->rc = jc_fail(err, TR_ETIMEOUT, "the command did not end within %.0f s", timeout);
	}
	return true;
}

static void
answer(struct ts *ts, struct ts_conn *c, const char *cmd, const char *in, size_t inlen,
    double timeout, struct ts_ans *a, struct jc_err *err)
{
	struct ts_host *h = c->h;
	char *copy = xstrdup(cmd), *w[32];
	size_t n = 0, skip = 0;

	buf_puts(&a->out, "");
	buf_puts(&a->err, "");
	buf_printf(&h->log, "%s\n", cmd);
	if (c->dead) {
		a->rc = jc_fail(err, TR_ECHANNEL, "the session was lost");
		goto out;
	}
	for (size_t i = 0; i < ts->nrules; i++)
		if (rule_matches(&ts->rules[i], h->name, cmd)) {
			rule_answer(&ts->rules[i], in, inlen, timeout, a, err);
			if (ts->rules[i].disconnect)
				c->dead = true;
			goto out;
		}
	for (char *p = copy; *p != '\0' && n < JC_ARRAY_LEN(w); ) {
		size_t l = strcspn(p, " ");

		if (l > 0)
			w[n++] = p;
		p += l;
		if (*p == ' ')
			*p++ = '\0';
	}
	if (n >= 2 && strcmp(w[0], "sudo") == 0 && strcmp(w[1], "-n") == 0) {
		skip = 2;
		if (take_fault(h, timeout, a, c, err))
			goto out;
	}
	if (!h->model)
		fail(a, 127, "sh: %s: no rule and no model\n", n > skip ? w[skip] : "");
	else
		model_run(h, w + skip, n - skip, a);
out:
	free(copy);
}

/* ---- the ops ---- */

static int
ts_connect(struct jc_transport *t, const char *host, const char *user, int port,
    struct jc_conn **out, struct jc_err *err)
{
	struct ts *ts = t->priv;
	struct ts_host *h;
	struct ts_conn *c;
	int code;

	(void)user;
	(void)port;
	pthread_mutex_lock(&ts->mu);
	h = host_get(ts, host);
	code = h->unreachable;
	pthread_mutex_unlock(&ts->mu);
	if (code != 0)
		return jc_fail(err, code, "%s: cannot connect (scripted)", host);
	c = xcalloc(1, sizeof(*c));
	c->h = h;
	*out = xcalloc(1, sizeof(**out));
	(*out)->t = t;
	(*out)->host = h->name;
	(*out)->priv = c;
	return 0;
}

static int
ts_run(struct jc_conn *c, const char *command, const char *in, size_t inlen, double timeout,
    size_t cap, struct tr_result *r, struct jc_err *err)
{
	struct ts *ts = c->t->priv;
	struct ts_ans a = { 0 };

	(void)cap;
	memset(r, 0, sizeof(*r));
	pthread_mutex_lock(&ts->mu);
	answer(ts, c->priv, command, in, inlen, timeout, &a, err);
	pthread_mutex_unlock(&ts->mu);
	if (a.rc != 0) {
		buf_free(&a.out);
		buf_free(&a.err);
		return a.rc;
	}
	r->status = a.status;
	r->outlen = a.out.len;
	r->out = buf_steal(&a.out);
	r->errlen = a.err.len;
	r->err = buf_steal(&a.err);
	return 0;
}

static int
ts_stream(struct jc_conn *c, const char *command, const char *in, size_t inlen,
    const struct tr_stream_cbs *cbs, void *arg, double timeout, int *status,
    struct jc_err *err)
{
	struct ts *ts = c->t->priv;
	struct ts_ans a = { 0 };
	size_t end, off = 0;
	int rc;

	pthread_mutex_lock(&ts->mu);
	answer(ts, c->priv, command, in, inlen, timeout, &a, err);
	pthread_mutex_unlock(&ts->mu);
	end = a.rc == TR_ECHANNEL ? a.cut : a.rc != 0 ? 0 : a.out.len;
	rc = a.rc;
	while (off < end) {
		size_t k = end - off < 4096 ? end - off : 4096;

		if (cbs->on_data(arg, 1, a.out.data + off, k) != 0) {
			rc = jc_fail(err, TR_ESTOPPED, "stopped");
			break;
		}
		off += k;
	}
	if (rc == 0 && a.err.len > 0 && cbs->on_data(arg, 2, a.err.data, a.err.len) != 0)
		rc = jc_fail(err, TR_ESTOPPED, "stopped");
	if (rc == 0 && status != NULL)
		*status = a.status;
	buf_free(&a.out);
	buf_free(&a.err);
	return rc;
}


/* ---- setup scripts (apply's dialog): interpreted line by line ---- */

/* One sh word made of '...' and \c parts at *p; NULL when there is none. */
static char *
sh_word(const char **p)
{
	struct jc_buf b = { 0 };
	const char *s = *p;

	while (*s == ' ')
		s++;
	while (*s == '\'' || (*s == '\\' && s[1] != '\0')) {
		if (*s == '\\') {
			buf_append(&b, s + 1, 1);
			s += 2;
			continue;
		}
		const char *e = strchr(s + 1, '\'');

		if (e == NULL) {
			buf_free(&b);
			return NULL;
		}
		buf_append(&b, s + 1, (size_t)(e - s - 1));
		buf_puts(&b, "");
		s = e + 1;
	}
	*p = s;
	return b.data != NULL ? buf_steal(&b) : NULL;
}

/* The text of "PREFIX'...'" (one quoted word and nothing else), or NULL. */
static char *
quoted_after(const char *s, const char *prefix)
{
	const char *p = s + strlen(prefix);
	char *w;

	if (strncmp(s, prefix, strlen(prefix)) != 0 || (w = sh_word(&p)) == NULL)
		return NULL;
	if (*p != '\0') {
		free(w);
		return NULL;
	}
	return w;
}

/* A setup script: its queries, and its commands as "sudo -n WORDS" with may_fail. */
struct ts_script {
	struct jc_strv queries;
	struct jc_strv cmds;
	bool *may_fail;
};

static void
script_free(struct ts_script *sc)
{
	strv_free(&sc->queries);
	strv_free(&sc->cmds);
	free(sc->may_fail);
}

/* Parse "c K M 'w'..." lines of the privileged part. */
static int
script_inner(const char *inner, struct ts_script *sc)
{
	for (const char *line = inner; *line; ) {
		size_t l = strcspn(line, "\n");
		char *text = xstrndup(line, l);
		unsigned long k, m;
		int used = 0;

		if (sscanf(text, "c %lu %lu%n", &k, &m, &used) == 2 && used > 0) {
			const char *p = text + used;
			struct jc_buf b = { 0 };
			char *w;

			if (k != sc->cmds.n + 1) {
				free(text);
				return -1;
			}
			buf_puts(&b, "sudo -n");
			while ((w = sh_word(&p)) != NULL) {
				buf_printf(&b, " %s", w);
				free(w);
			}
			strv_push_owned(&sc->cmds, buf_steal(&b));
			sc->may_fail = xreallocarray(sc->may_fail, sc->cmds.n, sizeof(bool));
			sc->may_fail[sc->cmds.n - 1] = m == 1;
		}
		free(text);
		line += l + (line[l] == '\n');
	}
	return 0;
}

static int
script_parse(const char *command, struct ts_script *sc)
{
	static const char ex[] = "\nexec sudo -n /bin/sh -c ";
	char *outer = quoted_after(command, "exec /bin/sh -c "), *inner = NULL;
	const char *p = outer != NULL ? strstr(outer, ex) : NULL;
	int rc = p != NULL ? 0 : -1;

	memset(sc, 0, sizeof(*sc));
	/* the queries: "b K; { QUERY; } </dev/null 2>&1; q K $?" lines before the exec */
	for (const char *line = outer; rc == 0 && line < p; ) {
		size_t l = strcspn(line, "\n");
		char *text = xstrndup(line, l);
		unsigned long k;
		int used = 0;

		if (sscanf(text, "b %lu; { %n", &k, &used) == 1 && used > 0) {
			char *end = strstr(text + used, "; } </dev/null 2>&1; q ");

			if (end == NULL || k != sc->queries.n + 1)
				rc = -1;
			else
				strv_push_owned(&sc->queries, xstrndup(text + used,
				    (size_t)(end - text - used)));
		}
		free(text);
		line += l + (line[l] == '\n');
	}
	if (rc == 0) {
		p += strlen(ex);
		if ((inner = sh_word(&p)) == NULL || (*p != '\0' && *p != '\n'))
			rc = -1;
		else
			rc = script_inner(inner, sc);
	}
	free(inner);
	free(outer);
	return rc;
}

/* The dialog's talk: what the script wrote and what it reads. */
struct ts_talk {
	const struct tp_dialog_cbs *cbs;
	void *arg;
	struct jc_buf in;	/* its standard input so far */
	size_t ipos;
};

/* Write to the script's stdout; what the callback replies is its input. */
static int
talk(struct ts_talk *k, const char *data, size_t len, struct jc_err *err)
{
	struct jc_buf reply = { 0 };
	int r = k->cbs->on_data(k->arg, 1, data, len, &reply);

	if (reply.len > 0)
		buf_append(&k->in, reply.data, reply.len);
	buf_free(&reply);
	return r != 0 ? jc_fail(err, TR_ESTOPPED, "stopped") : 0;
}

/* `read -r LINE`: false at the end of the input written so far. */
static bool
read_line(struct ts_talk *k, char **line)
{
	const char *s = k->in.data + k->ipos, *nl;

	if (k->in.len <= k->ipos || (nl = memchr(s, '\n', k->in.len - k->ipos)) == NULL)
		return false;
	*line = xstrndup(s, (size_t)(nl - s));
	k->ipos += (size_t)(nl - s) + 1;
	return true;
}

/* Run one command of the script through the rules and the model. */
static void
script_cmd(struct ts *ts, struct ts_conn *c, const char *cmd, double timeout, struct ts_ans *a,
    struct jc_err *err)
{
	pthread_mutex_lock(&ts->mu);
	answer(ts, c, cmd, NULL, 0, timeout, a, err);
	pthread_mutex_unlock(&ts->mu);
}

static int
script_run(struct ts *ts, struct ts_conn *c, const struct ts_script *sc, struct ts_talk *k,
    double timeout, int *status, struct jc_err *err)
{
	char *tok = NULL, *line = NULL;
	struct jc_buf o = { 0 };
	int rc = 0;

	*status = 0;
	if (!read_line(k, &tok)) {
		*status = 97;
		return 0;
	}
	for (size_t i = 0; i < sc->queries.n && rc == 0; i++) {
		struct ts_ans a = { 0 };

		script_cmd(ts, c, sc->queries.v[i], timeout, &a, err);
		if ((rc = a.rc) == 0) {
			buf_printf(&o, "%s B %zu\n%s%s\n%s Q %zu %d\n", tok, i + 1, a.out.data,
			    a.err.data, tok, i + 1, a.status);
			rc = talk(k, o.data, o.len, err);
			o.len = 0;
		}
		buf_free(&a.out);
		buf_free(&a.err);
	}
	if (rc == 0) {
		buf_printf(&o, "%s R\n", tok);
		rc = talk(k, o.data, o.len, err);
		o.len = 0;
	}
	if (rc == 0 && !read_line(k, &line))
		*status = 98;
	else if (rc == 0 && strcmp(line, "go") == 0) {
		/* exec sudo -n /bin/sh -c '...': the privileged part reads the token again */
		free(tok);
		tok = NULL;
		pthread_mutex_lock(&ts->mu);
		c->h->nscripts++;
		pthread_mutex_unlock(&ts->mu);
		if (!read_line(k, &tok))
			*status = 97;
		for (size_t i = 0; tok != NULL && i < sc->cmds.n && rc == 0 && *status == 0; i++) {
			struct ts_ans a = { 0 };
			size_t el;

			buf_printf(&o, "%s S %zu\n", tok, i + 1);
			rc = talk(k, o.data, o.len, err);
			o.len = 0;
			free(line);
			line = NULL;
			if (rc != 0)
				break;
			if (!read_line(k, &line)) {
				*status = 98;
				break;
			}
			if (strcmp(line, "go") != 0)
				break;
			script_cmd(ts, c, sc->cmds.v[i], timeout, &a, err);
			if ((rc = a.rc) == 0) {
				/* e=$(...) drops the trailing newlines */
				for (el = a.err.len; el > 0 && a.err.data[el - 1] == '\n'; el--)
					;
				buf_printf(&o, "%s E %zu %d\n%.*s\n%s F\n", tok, i + 1, a.status,
				    (int)el, a.err.data, tok);
				rc = talk(k, o.data, o.len, err);
				o.len = 0;
				if (rc == 0 && a.status != 0 && !sc->may_fail[i])
					*status = a.status;
			}
			buf_free(&a.out);
			buf_free(&a.err);
		}
	}
	free(tok);
	free(line);
	buf_free(&o);
	return rc;
}

static int
ts_dialog(struct jc_conn *c, const char *command, const char *in, size_t inlen,
    const struct tp_dialog_cbs *cbs, void *arg, double timeout, int *status,
    struct jc_err *err)
{
	struct ts *ts = c->t->priv;
	struct ts_conn *tc = c->priv;
	struct ts_talk k = { cbs, arg, { 0 }, 0 };
	struct ts_script sc;
	bool dead;
	int rc;

	pthread_mutex_lock(&ts->mu);
	buf_printf(&tc->h->log, "%s\n", command);
	dead = tc->dead;
	pthread_mutex_unlock(&ts->mu);
	if (dead)
		return jc_fail(err, TR_ECHANNEL, "the session was lost");
	for (size_t i = 0; i < ts->nrules; i++)
		if (rule_matches(&ts->rules[i], tc->h->name, command)) {
			/* a rule for the script: its output, stderr and status, nothing read */
			const struct ts_rule *r = &ts->rules[i];

			*status = r->status;
			if ((r->out && *r->out && cbs->on_data(arg, 1, r->out, strlen(r->out), &k.in)) ||
			    (r->err && *r->err && cbs->on_data(arg, 2, r->err, strlen(r->err), &k.in)))
				rc = jc_fail(err, TR_ESTOPPED, "stopped");
			else
				rc = 0;
			buf_free(&k.in);
			return rc;
		}
	if (script_parse(command, &sc) != 0) {
		script_free(&sc);
		*status = 2;
		return cbs->on_data(arg, 2, "sh: not a setup script\n", 23, &k.in) != 0 ?
		    jc_fail(err, TR_ESTOPPED, "stopped") : 0;
	}
	buf_append(&k.in, in, inlen);
	rc = script_run(ts, tc, &sc, &k, timeout, status, err);
	script_free(&sc);
	buf_free(&k.in);
	return rc;
}

static void
ts_close(struct jc_conn *c)
{
	free(c->priv);
	free(c);
}

static void
host_free(struct ts_host *h)
{
	for (size_t i = 0; i < h->nifs; i++) {
		free(h->ifs[i].name);
		strv_free(&h->ifs[i].addrs);
		strv_free(&h->ifs[i].members);
	}
	free(h->ifs);
	while (h->nrts > 0)
		rt_del(h, h->nrts - 1);
	free(h->rts);
	buf_free(&h->log);
	free(h->name);
	free(h);
}

static void
ts_free(struct jc_transport *t)
{
	struct ts *ts = t->priv;

	for (size_t i = 0; i < ts->nrules; i++) {
		free((char *)ts->rules[i].host);
		free((char *)ts->rules[i].command);
		free((char *)ts->rules[i].out);
		free((char *)ts->rules[i].err);
	}
	free(ts->rules);
	for (size_t i = 0; i < ts->nhosts; i++)
		host_free(ts->hosts[i]);
	free(ts->hosts);
	pthread_mutex_destroy(&ts->mu);
	free(ts);
	free(t);
}

static const struct jc_transport_ops ts_ops = {
	.name = "script",
	.connect = ts_connect,
	.run = ts_run,
	.stream = ts_stream,
	.dialog = ts_dialog,
	.close = ts_close,
	.free = ts_free,
};

/* The same without the dialog: apply then runs one exec per command. */
static const struct ts_ops_nodialog {
	struct jc_transport_ops ops;
} ts_ops_plain = { {
	.name = "script",
	.connect = ts_connect,
	.run = ts_run,
	.stream = ts_stream,
	.close = ts_close,
	.free = ts_free,
} };

void
ts_per_command(struct jc_transport *t)
{
	t->ops = &ts_ops_plain.ops;
}

struct jc_transport *
ts_new(void)
{
	struct jc_transport *t = xcalloc(1, sizeof(*t));
	struct ts *ts = xcalloc(1, sizeof(*ts));

	pthread_mutex_init(&ts->mu, NULL);
	t->ops = &ts_ops;
	t->priv = ts;
	return t;
}

/* ---- set-up and inspection ---- */

void
ts_rule(struct jc_transport *t, const struct ts_rule *r)
{
	struct ts *ts = t->priv;
	struct ts_rule *c;

	ts->rules = xreallocarray(ts->rules, ts->nrules + 1, sizeof(*ts->rules));
	c = &ts->rules[ts->nrules++];
	*c = *r;
	c->host = xstrdup(r->host);
	c->command = xstrdup(r->command);
	c->out = xstrdup(r->out);
	c->err = xstrdup(r->err);
}

void
ts_unreachable(struct jc_transport *t, const char *host, int code)
{
	host_get(t->priv, host)->unreachable = code;
}

void
ts_model(struct jc_transport *t, const char *host, const char *os)
{
	struct ts_host *h = host_get(t->priv, host);

	h->model = true;
	h->linux_model = strcmp(os, "linux") == 0;
}

void
ts_iface(struct jc_transport *t, const char *host, const char *iface, bool up, ...)
{
	struct ts_if *f = if_get(host_get(t->priv, host), iface, true);
	const char *a;
	va_list ap;

	f->up = up;
	va_start(ap, up);
	while ((a = va_arg(ap, const char *)) != NULL)
		strv_push(&f->addrs, a);
	va_end(ap);
}

void
ts_member(struct jc_transport *t, const char *host, const char *bridge, const char *member)
{
	strv_push(&if_get(host_get(t->priv, host), bridge, true)->members, member);
}

void
ts_route(struct jc_transport *t, const char *host, const char *peer, const char *via,
    const char *dev)
{
	rt_set(host_get(t->priv, host), peer, via, dev);
}

void
ts_fault_at(struct jc_transport *t, const char *host, size_t k, enum ts_fault f)
{
	struct ts_host *h = host_get(t->priv, host);

	h->fault_k = k;
	h->fault = f;
}

size_t
ts_sudo_count(struct jc_transport *t, const char *host)
{
	return host_get(t->priv, host)->nsudo;
}

size_t
ts_script_count(struct jc_transport *t, const char *host)
{
	return host_get(t->priv, host)->nscripts;
}

char *
ts_log(struct jc_transport *t, const char *host)
{
	struct ts_host *h = host_get(t->priv, host);

	return xstrdup(h->log.data ? h->log.data : "");
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
sort_strv(struct jc_strv *sv)
{
	if (sv->n > 1)
		qsort(sv->v, sv->n, sizeof(*sv->v), cmp_str);
}

char *
ts_state(struct jc_transport *t, const char *host)
{
	struct ts_host *h = host_get(t->priv, host);
	struct jc_strv lines = { 0 };
	struct jc_buf b = { 0 };

	for (size_t i = 0; i < h->nifs; i++) {
		const struct ts_if *f = &h->ifs[i];
		struct jc_strv a = { 0 }, m = { 0 };

		for (size_t k = 0; k < f->addrs.n; k++)
			strv_push(&a, f->addrs.v[k]);
		for (size_t k = 0; k < f->members.n; k++)
			strv_push(&m, f->members.v[k]);
		sort_strv(&a);
		sort_strv(&m);
		buf_printf(&b, "if %s %s", f->name, f->up ? "up" : "down");
		for (size_t k = 0; k < a.n; k++)
			buf_printf(&b, " %s", a.v[k]);
		for (size_t k = 0; k < m.n; k++)
			buf_printf(&b, " member:%s", m.v[k]);
		strv_push_owned(&lines, buf_steal(&b));
		strv_free(&a);
		strv_free(&m);
	}
	for (size_t i = 0; i < h->nrts; i++)
		strv_push_owned(&lines, xasprintf("route %s%s%s dev %s", h->rts[i].peer,
		    h->rts[i].via ? " via " : "", h->rts[i].via ? h->rts[i].via : "", h->rts[i].dev));
	sort_strv(&lines);
	buf_puts(&b, "");
	for (size_t i = 0; i < lines.n; i++)
		buf_printf(&b, "%s\n", lines.v[i]);
	strv_free(&lines);
	return buf_steal(&b);
}
