/* SPDX-License-Identifier: MIT */
/*
 * The network plan: per-cable /30 addresses in mlx's numbering and, per
 * host, the setup commands, the facts to save first, the commands that
 * restore them and whether the host is already set up. Commands are argv
 * vectors; nothing here runs them. See plan.h for the exact commands.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse_linux.h"
#include "parse_mgr.h"
#include "plan.h"

static const char BRIDGE[] = "bridge0";

int
plan_cable_ip(size_t k, int end, char out[16])
{
	if (k >= PLAN_MAX_CABLES) {
		out[0] = '\0';
		return -ERANGE;
	}
	snprintf(out, 16, "192.168.%zu.%zu", k / 64, 4 * (k % 64) + (end ? 2 : 1));
	return 0;
}

static void
cmd_clear(struct plan_cmd *c)
{
	if (c->argv != NULL)
		strv_free_array(c->argv, c->argc);
	memset(c, 0, sizeof(*c));
}

static void
cmdlist_clear(struct plan_cmdlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		cmd_clear(&l->v[i]);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

/* A command of plain words, split at spaces. */
static void
cmd_from_text(struct plan_cmd *c, const char *text)
{
	const char *p = text;

	memset(c, 0, sizeof(*c));
	while (*p != '\0') {
		size_t n = strcspn(p, " ");

		if (n > 0) {
			c->argv = xreallocarray(c->argv, c->argc + 2, sizeof(char *));
			c->argv[c->argc++] = xstrndup(p, n);
		}
		p += n;
		while (*p == ' ')
			p++;
	}
	c->argv = xreallocarray(c->argv, c->argc + 1, sizeof(char *));
	c->argv[c->argc] = NULL;
}

/* l gets argv's words (taken over) as a new command. */
static void
cmd_push(struct plan_cmdlist *l, bool may_fail, struct jc_strv *argv)
{
	struct plan_cmd *c;

	l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	c = &l->v[l->n++];
	memset(c, 0, sizeof(*c));
	c->may_fail = may_fail;
	c->argv = xreallocarray(argv->v, argv->n + 1, sizeof(char *));
	c->argc = argv->n;
	c->argv[c->argc] = NULL;
}

void
plan_act(const struct plan_host *ph, struct plan_cmdlist *l, bool may_fail, enum jc_act act,
    const struct jc_act_arg *a)
{
	struct jc_strv argv = { 0 };

	if (ph->plat->command(act, a, &argv) != 0) {
		strv_free(&argv);
		return;
	}
	cmd_push(l, may_fail, &argv);
}

void
plan_act_more(const struct plan_host *ph, struct plan_cmdlist *l, enum jc_act act,
    const struct jc_act_arg *a, size_t skip)
{
	struct jc_strv argv = { 0 };
	struct plan_cmd *c = l->n > 0 ? &l->v[l->n - 1] : NULL;
	bool same = c != NULL && c->argc > skip;

	if (ph->plat->command(act, a, &argv) != 0) {
		strv_free(&argv);
		return;
	}
	for (size_t i = 0; same && i < skip; i++)
		same = i < argv.n && strcmp(argv.v[i], c->argv[i]) == 0;
	if (!same || argv.n <= skip) {
		cmd_push(l, false, &argv);
		return;
	}
	c->argv = xreallocarray(c->argv, c->argc + argv.n - skip + 1, sizeof(char *));
	for (size_t i = 0; i < argv.n; i++) {
		if (i < skip)
			free(argv.v[i]);
		else
			c->argv[c->argc++] = argv.v[i];
	}
	c->argv[c->argc] = NULL;
	free(argv.v);
}

void
plan_addr_set(struct plan_host *ph, const struct plan_addr *ad)
{
	char net[24];

	snprintf(net, sizeof(net), "%s/30", ad->ip);
	plan_act(ph, &ph->cmds, false, JC_ACT_ADDR_SET,
	    &(struct jc_act_arg){ .iface = ad->iface, .addr = net });
}

void
plan_route_set(struct plan_host *ph, const struct plan_addr *ad)
{
	plan_act(ph, &ph->cmds, false, JC_ACT_ROUTE_SET,
	    &(struct jc_act_arg){ .peer = ad->peer_ip, .iface = ad->iface });
}

static void
fact_query(const struct plan_host *ph, struct plan_fact *f)
{
	char *q1, *q2;

	ph->plat->queries(f->kind, f->iface, f->peer, &q1, &q2);
	cmd_from_text(&f->query, q1);
	free(q1);
	free(q2);
}

bool
plan_is_cable_iface(const struct plan_host *ph, const char *name)
{
	for (size_t a = 0; a < ph->naddrs; a++)
		if (strcmp(ph->addrs[a].iface, name) == 0)
			return true;
	return false;
}

static struct plan_fact *
fact_add(struct plan_host *ph, enum plan_fact_kind kind, const char *iface, const char *peer)
{
	struct plan_fact *f;

	ph->facts = xreallocarray(ph->facts, ph->nfacts + 1, sizeof(*ph->facts));
	f = &ph->facts[ph->nfacts++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->iface = xstrdup(iface);
	f->peer = xstrdup(peer);
	f->up = JC_UNKNOWN;
	return f;
}

static bool
seen_iface_before(const struct plan_host *ph, size_t a)
{
	for (size_t b = 0; b < a; b++)
		if (strcmp(ph->addrs[b].iface, ph->addrs[a].iface) == 0)
			return true;
	return false;
}

/* The planned address of iface, or NULL. */
static const char *
planned_ip(const struct plan_host *ph, const char *iface)
{
	for (size_t a = 0; a < ph->naddrs; a++)
		if (strcmp(ph->addrs[a].iface, iface) == 0)
			return ph->addrs[a].ip;
	return NULL;
}

/* Facts to save: the addresses of each cable interface, bridge0, the routes. */
static void
host_facts(struct plan_host *ph, const struct jc_host *h)
{
	const struct jc_iface *br = jc_host_iface(h, BRIDGE);

	for (size_t a = 0; a < ph->naddrs; a++) {
		const struct plan_addr *ad = &ph->addrs[a];
		const struct jc_iface *ifc;
		struct plan_fact *f;

		if (seen_iface_before(ph, a))
			continue;
		ifc = jc_host_iface(h, ad->iface);
		f = fact_add(ph, PLAN_FACT_ADDRS, ad->iface, NULL);
		f->known = ifc != NULL;
		if (ifc != NULL) {
			/* Only well-formed addresses can be put back by a command. */
			for (size_t k = 0; k < ifc->ninet; k++) {
				int pfx = ifc->prefix != NULL ? ifc->prefix[k] : 32;

				if (ifc->inet[k] != NULL && jc_ipv4_ok(ifc->inet[k]) && pfx >= 0 &&
				    pfx <= 32)
					strv_push_owned(&f->values, xasprintf("%s/%d", ifc->inet[k], pfx));
			}
			f->up = ifc->up;
		}
		fact_query(ph, f);
	}
	if (ph->plat->caps & JC_PLAT_BRIDGE) {
		struct plan_fact *f = fact_add(ph, PLAN_FACT_BRIDGE, BRIDGE, NULL);

		f->known = br != NULL;
		if (br != NULL) {
			f->up = br->up;
			for (size_t m = 0; m < br->nmembers; m++)
				strv_push(&f->values, br->members[m]);
		}
		fact_query(ph, f);
	}
	for (size_t a = 0; a < ph->naddrs; a++) {
		const struct plan_addr *ad = &ph->addrs[a];

		fact_query(ph, fact_add(ph, PLAN_FACT_ROUTE, ad->iface, ad->peer_ip));
	}
	if (!ph->persist)
		return;
	if (ph->netmgr != JC_NETMGR_NETWORKD && ph->netmgr != JC_NETMGR_IFUPDOWN) {
		fact_query(ph, fact_add(ph, PLAN_FACT_SERVICES, PLAN_SERVICES, NULL));
		return;
	}
	/* a file of ours per cable interface: whether it was there, and what it held */
	for (size_t a = 0; a < ph->naddrs; a++)
		if (!seen_iface_before(ph, a))
			fact_query(ph, fact_add(ph, PLAN_FACT_FILE, ph->addrs[a].iface,
			    jc_netmgr_name(ph->netmgr)));
}

/* Restore an interface's addresses: ours away, the prior ones back. */
static void
restore_addrs(struct plan_host *ph, const struct plan_fact *f)
{
	const char *mine = planned_ip(ph, f->iface);
	char net[24];
	bool kept = false;

	for (size_t k = 0; k < f->values.n; k++) {
		size_t l = strcspn(f->values.v[k], "/");

		if (strlen(mine) == l && strncmp(mine, f->values.v[k], l) == 0)
			kept = true;
	}
	if (!kept) {
		snprintf(net, sizeof(net), "%s/30", mine);
		plan_act(ph, &ph->restore, true, JC_ACT_ADDR_DEL,
		    &(struct jc_act_arg){ .iface = f->iface, .addr = net });
	}
	for (size_t k = 0; k < f->values.n; k++) {
		size_t l = strcspn(f->values.v[k], "/");

		if (l >= 16 || (strlen(mine) == l && strncmp(mine, f->values.v[k], l) == 0))
			continue;
		plan_act(ph, &ph->restore, false, JC_ACT_ADDR_ADD,
		    &(struct jc_act_arg){ .iface = f->iface, .addr = f->values.v[k] });
	}
	if ((ph->plat->caps & JC_PLAT_LINK_ADMIN) && f->known && f->up == JC_NO)
		plan_act(ph, &ph->restore, false, JC_ACT_LINK_DOWN,
		    &(struct jc_act_arg){ .iface = f->iface });
}

/* The restore commands built from what is known: routes, addresses, bridge. */
static void
host_restore(struct plan_host *ph, const struct jc_host *h)
{
	const struct jc_iface *br = jc_host_iface(h, BRIDGE);

	for (size_t a = 0; a < ph->naddrs; a++)
		plan_act(ph, &ph->restore, true, JC_ACT_ROUTE_DEL, &(struct jc_act_arg){
		    .peer = ph->addrs[a].peer_ip, .iface = ph->addrs[a].iface });
	for (size_t fi = 0; fi < ph->nfacts; fi++)
		if (ph->facts[fi].kind == PLAN_FACT_ADDRS)
			restore_addrs(ph, &ph->facts[fi]);
	if (!(ph->plat->caps & JC_PLAT_BRIDGE) || br == NULL)
		return;
	for (size_t m = 0; m < br->nmembers; m++)
		if (plan_is_cable_iface(ph, br->members[m]))
			plan_act(ph, &ph->restore, false, JC_ACT_BRIDGE_ADDM,
			    &(struct jc_act_arg){ .iface = br->members[m] });
	if (br->up == JC_YES)
		plan_act(ph, &ph->restore, false, JC_ACT_BRIDGE_UP, &(struct jc_act_arg){ 0 });
}

/* Already set up: each cable interface has exactly its planned address. */
static bool
host_applied(const struct plan_host *ph, const struct jc_host *h)
{
	const struct jc_iface *br;

	if (h->nifaces == 0 || ph->naddrs == 0)
		return false;
	for (size_t a = 0; a < ph->naddrs; a++) {
		const struct plan_addr *ad = &ph->addrs[a];
		const struct jc_iface *ifc = jc_host_iface(h, ad->iface);

		if (ifc == NULL || ifc->ninet != 1 || strcmp(ifc->inet[0], ad->ip) != 0)
			return false;
		if (ifc->prefix != NULL && ifc->prefix[0] != 30)
			return false;
		if ((ph->plat->caps & JC_PLAT_LINK_ADMIN) && ifc->up != JC_YES)
			return false;
	}
	if (!(ph->plat->caps & JC_PLAT_BRIDGE))
		return true;
	br = jc_host_iface(h, BRIDGE);
	if (br == NULL)
		return true;
	if (br->up != JC_NO)
		return false;
	for (size_t m = 0; m < br->nmembers; m++)
		if (plan_is_cable_iface(ph, br->members[m]))
			return false;
	return true;
}

static bool
keyword(const char *w)
{
	static const char *const kw[] = {
		"sudo", "ifconfig", "route", "-n", "delete", "add", "-host", "-interface",
		"inet", "netmask", "down", "up", "deletem", "addm", "alias", "-alias", "ip",
		"-4", "-o", "addr", "replace", "dev", "link", "set", "del", "show", "get", NULL,
	};
	static const char *const svc_kw[] = {
		"networksetup", "-listnetworkserviceorder", "-createnetworkservice", "-setmanual",
		"-removenetworkservice", "-setnetworkserviceenabled", "on", "off", "nmcli",
		"connection", "type", "ethernet", "ifname", "con-name", "ipv4.method", "manual",
		"ipv4.addresses", "ipv6.method", "ignore", "-t", "-f", "NAME,DEVICE", NULL,
	};
	/* Linux file managers (the paths and contents: the platform's persist_word) */
	static const char *const file_kw[] = {
		"sh", "-c", JC_WRITE_SCRIPT, "rm", "cat", "test", "-e", "networkctl", "reload",
		NULL,
	};

	for (size_t i = 0; file_kw[i] != NULL; i++)
		if (strcmp(w, file_kw[i]) == 0)
			return true;

	for (size_t i = 0; svc_kw[i] != NULL; i++)
		if (strcmp(w, svc_kw[i]) == 0)
			return true;

	for (size_t i = 0; kw[i] != NULL; i++)
		if (strcmp(w, kw[i]) == 0)
			return true;
	return false;
}

/*
 * A name of the persistent configuration: the hardware port of a cable
 * interface of ph (or of bridge0), or our service on such a port.
 */
static bool
persist_name_ok(const struct plan_host *ph, const struct jc_host *h, const char *w)
{
	if (!ph->persist || !jc_service_name_ok(w))
		return false;
	if (platform_svc_ours(w)) {
		w += strlen(JC_SVC_PREFIX);
		if (plan_is_cable_iface(ph, w))
			return true;	/* Linux: "jaccl-config IF" */
	}
	for (size_t i = 0; i < h->nhwports; i++)
		if (h->hwports[i].port != NULL && strcmp(h->hwports[i].port, w) == 0 &&
		    h->hwports[i].device != NULL &&
		    (plan_is_cable_iface(ph, h->hwports[i].device) ||
		    ((ph->plat->caps & JC_PLAT_BRIDGE) && strcmp(h->hwports[i].device, BRIDGE) == 0)))
			return true;
	return false;
}

static int
check_list(const struct plan_cmdlist *l, const struct plan_host *ph, const struct jc_host *h,
    struct jc_err *err)
{
	for (size_t c = 0; c < l->n; c++) {
		for (size_t k = 0; k < l->v[c].argc; k++) {
			const char *w = l->v[c].argv[k];

			if (keyword(w) || jc_ipv4_prefix_ok(w, false))
				continue;
			if ((strcmp(w, BRIDGE) == 0 && (ph->plat->caps & JC_PLAT_BRIDGE)) ||
			    plan_is_cable_iface(ph, w) || persist_name_ok(ph, h, w) ||
			    (ph->plat->persist_word != NULL && ph->plat->persist_word(ph, w)))
				continue;
			return jc_fail(err, -EINVAL,
			    "%s: planned command names '%s', which is not a cable interface",
			    h->name, w);
		}
	}
	return 0;
}

int
plan_check(const struct plan *p, const struct graph *g, struct jc_err *err)
{
	int r;

	for (size_t i = 0; i < p->n; i++) {
		const struct plan_host *ph = &p->hosts[i];
		const struct jc_host *h = &g->hosts[ph->host];

		if ((r = check_list(&ph->cmds, ph, h, err)) != 0 ||
		    (r = check_list(&ph->restore, ph, h, err)) != 0)
			return r;
		for (size_t f = 0; f < ph->nfacts; f++) {
			struct plan_cmdlist one = { .v = &ph->facts[f].query, .n = 1 };

			if ((r = check_list(&one, ph, h, err)) != 0)
				return r;
		}
	}
	return 0;
}

/* The subnets of the cables: mlx's unless they collide, or --subnet. */
static int
plan_subnet(struct plan *p, const struct graph *g, const char *user, struct jc_err *err)
{
	struct subnet_prefix *taken = NULL;
	size_t nt = subnet_taken(g->hosts, g->n, &taken);
	struct subnet_choice mlx = { .ncables = g->ncables };
	int r = subnet_choose(g->ncables, taken, nt, user, &p->subnet, err);

	/* the note is the host of the first prefix that mlx's numbering (the list's first) meets */
	if (subnet_parse_cidr(subnet_ranges[0], &mlx.base, &mlx.len, NULL) < 0)
		mlx.ncables = 0;

	for (size_t i = 0; r == 0 && p->subnet.reason != NULL && i < nt; i++)
		if (subnet_overlap(&mlx, &taken[i]) >= 0) {
			for (size_t h = 0; h < g->n; h++)
				if (g->hosts[h].name == taken[i].host)
					p->note_host = graph_host_label(&g->hosts[h]);
			break;
		}
	subnet_taken_free(taken, nt);
	return r;
}

int
plan_build(const struct graph *g, struct plan **out, struct jc_err *err)
{
	return plan_build_opts(g, &(struct plan_opts){ 0 }, out, err);
}

int
plan_build_persist(const struct graph *g, bool persist, struct plan **out, struct jc_err *err)
{
	return plan_build_opts(g, &(struct plan_opts){ .persist = persist }, out, err);
}

/*
 * The persistent configuration of ph: its system's persist op, after
 * setup; refused while another tool that manages the network is active
 * on the host (mgr_first_active: it would undo what is written).
 */
static int
host_persist(struct plan_host *ph, const struct jc_host *h, struct jc_err *err)
{
	struct jc_err e2 = { 0 };
	const struct jc_mgr *m;

	if (ph->plat->persist == NULL)
		return jc_fail(err, -ENOTSUP, "%s: --persist is not supported on %s yet", h->name,
		    ph->plat->display);
	if ((m = mgr_first_active(h)) != NULL) {
		char *what = mgr_describe(m), *fix = mgr_remedy(m, h->automatic);
		int rc = jc_fail(err, -EBUSY, "%s: --persist refused while %s is there: %s; "
		    "remove it first: %s", h->name, what, mgr_harm(m), fix);

		free(what);
		free(fix);
		return rc;
	}
	if (ph->plat->persist(ph, h, &e2) != 0)
		return jc_fail(err, -EINVAL, "%s: %s", h->name, e2.msg);
	return 0;
}

int
plan_build_opts(const struct graph *g, const struct plan_opts *o, struct plan **out,
    struct jc_err *err)
{
	struct plan *p;
	int r = 0;

	*out = NULL;
	if (g->ncables >= PLAN_MAX_CABLES)
		return jc_fail(err, -ERANGE, "Ran out of available local IPs (%zu cables, at most %d)",
		    g->ncables, PLAN_MAX_CABLES - 1);
	p = xcalloc(1, sizeof(*p));
	if ((r = plan_subnet(p, g, o->subnet, err)) != 0)
		goto out;
	p->n = g->n;
	p->hosts = xcalloc(g->n ? g->n : 1, sizeof(*p->hosts));
	p->ncables = g->ncables;
	p->cable_ip = xcalloc(g->ncables ? g->ncables : 1, sizeof(*p->cable_ip));
	for (size_t k = 0; k < g->ncables; k++) {
		const struct graph_cable *c = &g->cables[k];

		for (int s = 0; s < 2; s++) {
			const char *ifn = c->end[s].iface;

			subnet_cable_addr(&p->subnet, k, s, p->cable_ip[k][s]);
			if (!jc_iface_name_ok(ifn)) {
				r = jc_fail(err, -EINVAL, "%s: interface name '%s' is not usable in a command",
				    g->hosts[c->end[s].host].name, ifn);
				goto out;
			}
		}
	}
	for (size_t i = 0; i < g->n; i++) {
		struct plan_host *ph = &p->hosts[i];
		const struct jc_host *h = &g->hosts[i];
		const struct jc_iface *br = jc_host_iface(h, BRIDGE);

		ph->host = i;
		ph->plat = platform_for_setup(h);
		for (size_t j = 0; j < g->n; j++)
			ph->naddrs += j != i ? graph_count(g, i, j, false) : 0;
		ph->addrs = xcalloc(ph->naddrs ? ph->naddrs : 1, sizeof(*ph->addrs));
		ph->naddrs = 0;
		/* mlx's order: peers by index, then the cables shared with each. */
		for (size_t j = 0; j < g->n; j++) {
			unsigned cnt = graph_count(g, i, j, false);

			if (j == i)
				continue;
			for (unsigned k = 0; k < cnt; k++) {
				int s;
				long c = graph_pair_cable(g, i, j, k, false, &s);
				struct plan_addr *ad;

				ad = &ph->addrs[ph->naddrs++];
				ad->cable = (size_t)c;
				ad->peer = j;
				ad->iface = g->cables[c].end[s].iface;
				memcpy(ad->ip, p->cable_ip[c][s], 16);
				memcpy(ad->peer_ip, p->cable_ip[c][!s], 16);
			}
		}
		for (size_t m = 0; br != NULL && m < br->nmembers; m++) {
			if (plan_is_cable_iface(ph, br->members[m]) && !jc_iface_name_ok(br->members[m])) {
				r = jc_fail(err, -EINVAL, "%s: bridge member '%s' is not usable in a command",
				    h->name, br->members[m]);
				goto out;
			}
		}
		ph->plat->setup(ph, h);
		ph->persist = o->persist && ph->naddrs > 0;
		if (ph->persist && (r = host_persist(ph, h, err)) != 0)
			goto out;
		host_facts(ph, h);
		host_restore(ph, h);
		ph->applied = !ph->persist && host_applied(ph, h);
	}
	r = plan_check(p, g, err);
out:
	if (r != 0) {
		plan_free(p);
		return r;
	}
	*out = p;
	return 0;
}

void
plan_free(struct plan *p)
{
	if (p == NULL)
		return;
	for (size_t i = 0; i < p->n; i++) {
		struct plan_host *ph = &p->hosts[i];

		free(ph->addrs);
		cmdlist_clear(&ph->cmds);
		cmdlist_clear(&ph->restore);
		for (size_t f = 0; f < ph->nfacts; f++) {
			free(ph->facts[f].iface);
			free(ph->facts[f].peer);
			strv_free(&ph->facts[f].values);
			cmd_clear(&ph->facts[f].query);
		}
		free(ph->facts);
	}
	free(p->hosts);
	free(p->cable_ip);
	subnet_choice_clear(&p->subnet);
	free(p);
}

char *
plan_cmd_text(const struct plan_cmd *c)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	for (size_t k = 0; k < c->argc; k++) {
		if (k > 0)
			buf_puts(&b, " ");
		jc_shell_word(&b, c->argv[k]);
	}
	return buf_steal(&b);
}

char *
plan_host_text(const struct plan *p, const struct graph *g, size_t i)
{
	const struct plan_host *ph = &p->hosts[i];
	const char *name = graph_host_label(&g->hosts[ph->host]);
	size_t len = strlen("Setup for ") + strlen(name);
	struct jc_buf b = { 0 };

	buf_printf(&b, "Setup for %s\n", name);
	for (size_t k = 0; k < len; k++)
		buf_append(&b, "=", 1);
	buf_puts(&b, "\n");
	for (size_t c = 0; c < ph->cmds.n; c++) {
		char *t = plan_cmd_text(&ph->cmds.v[c]);

		buf_printf(&b, "%s\n", t);
		free(t);
	}
	buf_puts(&b, "\n");
	return buf_steal(&b);
}

char *
plan_manual_text(const struct plan *p, const struct graph *g)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	for (size_t i = 0; i < p->n; i++) {
		char *t = plan_host_text(p, g, i);

		buf_puts(&b, t);
		free(t);
	}
	return buf_steal(&b);
}
