/* SPDX-License-Identifier: MIT */
/*
 * The network plan: per-cable /30 addresses in mlx's numbering and, per
 * host, the setup commands, the facts to save first, the commands that
 * restore them and whether the host is already set up. Commands are argv
 * vectors; nothing here runs them. See plan.h for the exact commands.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

static const char BRIDGE[] = "bridge0";
static const char NETMASK30[] = "255.255.255.252";

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

/* Append a command; the words are copied. The list ends with NULL. */
static struct plan_cmd *
cmd_add(struct plan_cmdlist *l, int may_fail, ...)
{
	struct plan_cmd *c;
	const char *w;
	va_list ap;

	l->v = xreallocarray(l->v, l->n + 1, sizeof(*l->v));
	c = &l->v[l->n++];
	memset(c, 0, sizeof(*c));
	c->may_fail = may_fail != 0;
	va_start(ap, may_fail);
	while ((w = va_arg(ap, const char *)) != NULL) {
		c->argv = xreallocarray(c->argv, c->argc + 2, sizeof(char *));
		c->argv[c->argc++] = xstrdup(w);
	}
	va_end(ap);
	c->argv = xreallocarray(c->argv, c->argc + 1, sizeof(char *));
	c->argv[c->argc] = NULL;
	return c;
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

static void
query_set(struct plan_cmd *q, ...)
{
	struct plan_cmdlist l = { 0 };
	const char *w;
	va_list ap;

	/* Reuse cmd_add's layout through a one-element list. */
	l.v = xcalloc(1, sizeof(*l.v));
	l.n = 1;
	va_start(ap, q);
	while ((w = va_arg(ap, const char *)) != NULL) {
		l.v[0].argv = xreallocarray(l.v[0].argv, l.v[0].argc + 2, sizeof(char *));
		l.v[0].argv[l.v[0].argc++] = xstrdup(w);
	}
	va_end(ap);
	l.v[0].argv[l.v[0].argc] = NULL;
	*q = l.v[0];
	free(l.v);
}

static const struct jc_iface *
iface_find(const struct jc_host *h, const char *name)
{
	for (size_t i = 0; i < h->nifaces; i++)
		if (h->ifaces[i].name != NULL && strcmp(h->ifaces[i].name, name) == 0)
			return &h->ifaces[i];
	return NULL;
}

static bool
is_cable_iface(const struct plan_host *ph, const char *name)
{
	for (size_t a = 0; a < ph->naddrs; a++)
		if (strcmp(ph->addrs[a].iface, name) == 0)
			return true;
	return false;
}

/* Dotted netmask of a prefix length. */
static void
mask_text(int prefix, char out[16])
{
	uint32_t m = prefix <= 0 ? 0 : prefix >= 32 ? 0xffffffffU : ~((1U << (32 - prefix)) - 1);

	snprintf(out, 16, "%u.%u.%u.%u", m >> 24, (m >> 16) & 255, (m >> 8) & 255, m & 255);
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

/* The setup commands of one host (mlx's order, our idempotent forms). */
static void
host_cmds(struct plan_host *ph, const struct jc_host *h)
{
	const struct jc_iface *br = iface_find(h, BRIDGE);
	char net[24];

	if (ph->os != JC_OS_LINUX) {
		/* bridge0 missing from a captured interface list: may fail. */
		cmd_add(&ph->cmds, br == NULL, "sudo", "ifconfig", BRIDGE, "down", NULL);
		for (size_t m = 0; br != NULL && m < br->nmembers; m++)
			if (is_cable_iface(ph, br->members[m]))
				cmd_add(&ph->cmds, false, "sudo", "ifconfig", BRIDGE, "deletem",
				    br->members[m], NULL);
	}
	for (size_t a = 0; a < ph->naddrs; a++) {
		const struct plan_addr *ad = &ph->addrs[a];

		if (ph->os == JC_OS_LINUX) {
			snprintf(net, sizeof(net), "%s/30", ad->ip);
			cmd_add(&ph->cmds, false, "sudo", "ip", "addr", "replace", net, "dev",
			    ad->iface, NULL);
			cmd_add(&ph->cmds, false, "sudo", "ip", "link", "set", ad->iface, "up", NULL);
			snprintf(net, sizeof(net), "%s/32", ad->peer_ip);
			cmd_add(&ph->cmds, false, "sudo", "ip", "route", "replace", net, "dev",
			    ad->iface, NULL);
		} else {
			cmd_add(&ph->cmds, false, "sudo", "ifconfig", ad->iface, "inet", ad->ip,
			    "netmask", NETMASK30, NULL);
			cmd_add(&ph->cmds, true, "sudo", "route", "-n", "delete", "-host",
			    ad->peer_ip, NULL);
			cmd_add(&ph->cmds, false, "sudo", "route", "-n", "add", "-host", ad->peer_ip,
			    "-interface", ad->iface, NULL);
		}
	}
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

/* Facts to save, and the restore commands built from what is known. */
static void
host_facts(struct plan_host *ph, const struct jc_host *h)
{
	bool linux_host = ph->os == JC_OS_LINUX;
	const struct jc_iface *br = iface_find(h, BRIDGE);
	char net[24], mask[16];

	for (size_t a = 0; a < ph->naddrs; a++) {
		const struct plan_addr *ad = &ph->addrs[a];
		const struct jc_iface *ifc;
		struct plan_fact *f;

		if (seen_iface_before(ph, a))
			continue;
		ifc = iface_find(h, ad->iface);
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
		if (linux_host)
			query_set(&f->query, "ip", "-4", "-o", "addr", "show", "dev", ad->iface, NULL);
		else
			query_set(&f->query, "ifconfig", ad->iface, NULL);
	}
	if (!linux_host) {
		struct plan_fact *f = fact_add(ph, PLAN_FACT_BRIDGE, BRIDGE, NULL);

		f->known = br != NULL;
		if (br != NULL) {
			f->up = br->up;
			for (size_t m = 0; m < br->nmembers; m++)
				strv_push(&f->values, br->members[m]);
		}
		query_set(&f->query, "ifconfig", BRIDGE, NULL);
	}
	for (size_t a = 0; a < ph->naddrs; a++) {
		const struct plan_addr *ad = &ph->addrs[a];
		struct plan_fact *f = fact_add(ph, PLAN_FACT_ROUTE, ad->iface, ad->peer_ip);

		if (linux_host) {
			snprintf(net, sizeof(net), "%s/32", ad->peer_ip);
			query_set(&f->query, "ip", "route", "show", net, NULL);
		} else {
			query_set(&f->query, "route", "-n", "get", ad->peer_ip, NULL);
		}
	}

	/* Restore: our routes, our addresses, the prior addresses, the bridge. */
	for (size_t a = 0; a < ph->naddrs; a++) {
		const struct plan_addr *ad = &ph->addrs[a];

		if (linux_host) {
			snprintf(net, sizeof(net), "%s/32", ad->peer_ip);
			cmd_add(&ph->restore, true, "sudo", "ip", "route", "del", net, "dev",
			    ad->iface, NULL);
		} else {
			cmd_add(&ph->restore, true, "sudo", "route", "-n", "delete", "-host",
			    ad->peer_ip, NULL);
		}
	}
	for (size_t fi = 0; fi < ph->nfacts; fi++) {
		const struct plan_fact *f = &ph->facts[fi];
		const char *mine;
		bool kept = false;

		if (f->kind != PLAN_FACT_ADDRS)
			continue;
		mine = planned_ip(ph, f->iface);
		for (size_t k = 0; k < f->values.n; k++) {
			size_t l = strcspn(f->values.v[k], "/");

			if (strlen(mine) == l && strncmp(mine, f->values.v[k], l) == 0)
				kept = true;
		}
		if (!kept) {
			if (linux_host) {
				snprintf(net, sizeof(net), "%s/30", mine);
				cmd_add(&ph->restore, true, "sudo", "ip", "addr", "del", net, "dev",
				    f->iface, NULL);
			} else {
				cmd_add(&ph->restore, true, "sudo", "ifconfig", f->iface, "inet", mine,
				    "-alias", NULL);
			}
		}
		for (size_t k = 0; k < f->values.n; k++) {
			char ip[16];
			size_t l = strcspn(f->values.v[k], "/");
			long pfx = 32;

			if (l >= sizeof(ip))
				continue;
			memcpy(ip, f->values.v[k], l);
			ip[l] = '\0';
			if (strcmp(ip, mine) == 0)
				continue;
			if (f->values.v[k][l] == '/')
				jc_parse_int(f->values.v[k] + l + 1, 0, 32, &pfx);
			if (linux_host) {
				cmd_add(&ph->restore, false, "sudo", "ip", "addr", "add", f->values.v[k],
				    "dev", f->iface, NULL);
			} else {
				mask_text((int)pfx, mask);
				cmd_add(&ph->restore, false, "sudo", "ifconfig", f->iface, "inet", ip,
				    "netmask", mask, "alias", NULL);
			}
		}
		if (linux_host && f->known && f->up == JC_NO)
			cmd_add(&ph->restore, false, "sudo", "ip", "link", "set", f->iface, "down", NULL);
	}
	if (!linux_host && br != NULL) {
		for (size_t m = 0; m < br->nmembers; m++)
			if (is_cable_iface(ph, br->members[m]))
				cmd_add(&ph->restore, false, "sudo", "ifconfig", BRIDGE, "addm",
				    br->members[m], NULL);
		if (br->up == JC_YES)
			cmd_add(&ph->restore, false, "sudo", "ifconfig", BRIDGE, "up", NULL);
	}
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
		const struct jc_iface *ifc = iface_find(h, ad->iface);

		if (ifc == NULL || ifc->ninet != 1 || strcmp(ifc->inet[0], ad->ip) != 0)
			return false;
		if (ifc->prefix != NULL && ifc->prefix[0] != 30)
			return false;
		if (ph->os == JC_OS_LINUX && ifc->up != JC_YES)
			return false;
	}
	if (ph->os == JC_OS_LINUX)
		return true;
	br = iface_find(h, BRIDGE);
	if (br == NULL)
		return true;
	if (br->up != JC_NO)
		return false;
	for (size_t m = 0; m < br->nmembers; m++)
		if (is_cable_iface(ph, br->members[m]))
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

	for (size_t i = 0; kw[i] != NULL; i++)
		if (strcmp(w, kw[i]) == 0)
			return true;
	return false;
}

static bool
ip_word(const char *w)
{
	char ip[16];
	size_t l = strcspn(w, "/");
	long pfx;

	if (l >= sizeof(ip))
		return false;
	memcpy(ip, w, l);
	ip[l] = '\0';
	if (!jc_ipv4_ok(ip))
		return false;
	return w[l] == '\0' || jc_parse_int(w + l + 1, 0, 32, &pfx);
}

static int
check_list(const struct plan_cmdlist *l, const struct plan_host *ph, const struct jc_host *h,
    struct jc_err *err)
{
	for (size_t c = 0; c < l->n; c++) {
		for (size_t k = 0; k < l->v[c].argc; k++) {
			const char *w = l->v[c].argv[k];

			if (keyword(w) || ip_word(w))
				continue;
			if ((strcmp(w, BRIDGE) == 0 && ph->os != JC_OS_LINUX) ||
			    is_cable_iface(ph, w))
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

int
plan_build(const struct graph *g, struct plan **out, struct jc_err *err)
{
	struct plan *p;
	int r = 0;

	*out = NULL;
	if (g->ncables >= PLAN_MAX_CABLES)
		return jc_fail(err, -ERANGE, "Ran out of available local IPs (%zu cables, at most %d)",
		    g->ncables, PLAN_MAX_CABLES - 1);
	p = xcalloc(1, sizeof(*p));
	p->n = g->n;
	p->hosts = xcalloc(g->n ? g->n : 1, sizeof(*p->hosts));
	p->ncables = g->ncables;
	p->cable_ip = xcalloc(g->ncables ? g->ncables : 1, sizeof(*p->cable_ip));
	for (size_t k = 0; k < g->ncables; k++) {
		const struct graph_cable *c = &g->cables[k];

		for (int s = 0; s < 2; s++) {
			const char *ifn = c->end[s].iface;

			plan_cable_ip(k, s, p->cable_ip[k][s]);
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
		const struct jc_iface *br = iface_find(h, BRIDGE);

		ph->host = i;
		ph->os = h->os == JC_OS_LINUX ? JC_OS_LINUX : JC_OS_MACOS;
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
			if (is_cable_iface(ph, br->members[m]) && !jc_iface_name_ok(br->members[m])) {
				r = jc_fail(err, -EINVAL, "%s: bridge member '%s' is not usable in a command",
				    h->name, br->members[m]);
				goto out;
			}
		}
		host_cmds(ph, h);
		host_facts(ph, h);
		ph->applied = host_applied(ph, h);
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
	free(p);
}

char *
plan_cmd_text(const struct plan_cmd *c)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	for (size_t k = 0; k < c->argc; k++)
		buf_printf(&b, "%s%s", k ? " " : "", c->argv[k]);
	return buf_steal(&b);
}

void
plan_print_host(FILE *fp, const struct plan *p, const struct graph *g, size_t i)
{
	const struct plan_host *ph = &p->hosts[i];
	const char *name = graph_host_label(&g->hosts[ph->host]);
	size_t len = strlen("Setup for ") + strlen(name);

	fprintf(fp, "Setup for %s\n", name);
	for (size_t k = 0; k < len; k++)
		fputc('=', fp);
	fputc('\n', fp);
	for (size_t c = 0; c < ph->cmds.n; c++) {
		char *t = plan_cmd_text(&ph->cmds.v[c]);

		fprintf(fp, "%s\n", t);
		free(t);
	}
	fputc('\n', fp);
}

void
plan_print_manual(FILE *fp, const struct plan *p, const struct graph *g)
{
	for (size_t i = 0; i < p->n; i++)
		plan_print_host(fp, p, g, i);
}
