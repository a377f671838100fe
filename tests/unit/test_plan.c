/* SPDX-License-Identifier: MIT */
/* The address plan and the commands of each host, restore and re-run. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "../graph/appendix.h"
#include "../graph/golden.h"
#include "plan.h"

struct pg {
	const struct plan *p;
	const struct graph *g;
};

static void
print_manual(FILE *fp, const void *arg)
{
	const struct pg *x = arg;
	char *t = plan_manual_text(x->p, x->g);

	fputs(t, fp);
	free(t);
}

static char *
cmds_text(const struct plan_cmdlist *l)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	for (size_t k = 0; k < l->n; k++) {
		char *t = plan_cmd_text(&l->v[k]);

		buf_printf(&b, "%s%s\n", t, l->v[k].may_fail ? "  # may fail" : "");
		free(t);
	}
	return buf_steal(&b);
}

static bool
has_line(const char *text, const char *line)
{
	size_t l = strlen(line);

	for (const char *p = text; (p = strstr(p, line)) != NULL; p++)
		if ((p == text || p[-1] == '\n') && (p[l] == '\n' || p[l] == '\0' || p[l] == ' '))
			return true;
	return false;
}

static void
test_appendix(void)
{
	struct jc_host *h = appendix_a();
	struct graph *g = NULL;
	struct plan *p = NULL;
	struct jc_err err = { 0 };
	struct pg x;
	char *t;
	static const char *const want[3][2][3] = {
		{ { "en2", "192.168.0.1", "192.168.0.2" }, { "en3", "192.168.0.5", "192.168.0.6" } },
		{ { "en2", "192.168.0.2", "192.168.0.1" }, { "en3", "192.168.0.9", "192.168.0.10" } },
		{ { "en2", "192.168.0.6", "192.168.0.5" }, { "en3", "192.168.0.10", "192.168.0.9" } },
	};

	graph_build(h, 3, &g, &err);
	ok(plan_build(g, &p, &err) == 0, "appendix A: plan built");
	for (size_t i = 0; i < 3; i++) {
		bool same = p->hosts[i].naddrs == 2;

		for (size_t a = 0; same && a < 2; a++)
			same = strcmp(p->hosts[i].addrs[a].iface, want[i][a][0]) == 0 &&
			    strcmp(p->hosts[i].addrs[a].ip, want[i][a][1]) == 0 &&
			    strcmp(p->hosts[i].addrs[a].peer_ip, want[i][a][2]) == 0;
		ok(same, "host %s: addresses and peers as mlx's worked example", h[i].name);
	}
	t = cmds_text(&p->hosts[0].cmds);
	is_str(t, "sudo ifconfig bridge0 down  # may fail\n"
	    "sudo ifconfig en2 inet 192.168.0.1 netmask 255.255.255.252\n"
	    "sudo route -n delete -host 192.168.0.2  # may fail\n"
	    "sudo route -n add -host 192.168.0.2 -interface en2\n"
	    "sudo ifconfig en3 inet 192.168.0.5 netmask 255.255.255.252\n"
	    "sudo route -n delete -host 192.168.0.6  # may fail\n"
	    "sudo route -n add -host 192.168.0.6 -interface en3\n", "commands of A");
	free(t);
	x.p = p;
	x.g = g;
	t = capture(print_manual, &x);
	golden_is(t, "appendix-a.setup");
	ok(strncmp(t, "Setup for A\n===========\nsudo ifconfig bridge0 down\n", 49) == 0,
	    "mlx's layout: title, '=' line as long");
	free(t);
	ok(!p->hosts[0].applied, "no inventory of interfaces: not applied");
	ok(p->hosts[0].nfacts == 5 && p->hosts[0].facts[0].kind == PLAN_FACT_ADDRS &&
	    p->hosts[0].facts[2].kind == PLAN_FACT_BRIDGE &&
	    p->hosts[0].facts[3].kind == PLAN_FACT_ROUTE &&
	    strcmp(p->hosts[0].facts[3].peer, "192.168.0.2") == 0,
	    "facts: two interfaces, the bridge, two routes");
	ok(!p->hosts[0].facts[0].known, "interface state not in the inventory: to be captured");
	t = plan_cmd_text(&p->hosts[0].facts[3].query);
	is_str(t, "route -n get 192.168.0.2", "route query");
	free(t);
	ok(plan_check(p, g, &err) == 0, "only cable interfaces and bridge0 named");
	/* Tamper: a command naming another interface is caught. */
	free(p->hosts[1].cmds.v[1].argv[2]);
	p->hosts[1].cmds.v[1].argv[2] = xstrdup("en0");
	ok(plan_check(p, g, &err) < 0, "a command on en0 is refused");
	is_str(err.msg, "B: planned command names 'en0', which is not a cable interface",
	    "the check names the word");
	plan_free(p);
	graph_free(g);
	inv_free(h, 3);
}

static void
test_bridge_restore_applied(void)
{
	struct jc_host *h = appendix_a();
	struct graph *g = NULL;
	struct plan *p = NULL;
	struct jc_err err = { 0 };
	struct jc_iface *br;
	char *t;

	br = inv_iface(&h[0], "bridge0", NULL, 0);
	br->is_bridge = true;
	br->members = xcalloc(3, sizeof(char *));
	br->members[0] = xstrdup("en2");
	br->members[1] = xstrdup("en3");
	br->members[2] = xstrdup("en7");
	br->nmembers = 3;
	inv_iface(&h[0], "en2", "169.254.3.4", 16);
	inv_iface(&h[0], "en3", "1.2.3.4;reboot", 24);	/* garbage from a host */
	graph_build(h, 3, &g, &err);
	ok(plan_build(g, &p, &err) == 0, "plan with a bridge");
	t = cmds_text(&p->hosts[0].cmds);
	ok(strstr(t, "bridge0 down  # may fail") == NULL, "bridge0 down (bridge known)");
	ok(has_line(t, "sudo ifconfig bridge0 down deletem en2 deletem en3") &&
	    strstr(t, "sudo ifconfig bridge0 deletem") == NULL,
	    "cable members removed, in the same ifconfig as the down");
	ok(!strstr(t, "en7"), "other members left alone");
	free(t);
	{
		/* a command joins the last one only when both start with the same words */
		struct plan_host *ph = &p->hosts[0];
		size_t n = ph->cmds.n;

		plan_act_more(ph, &ph->cmds, JC_ACT_BRIDGE_DELM,
		    &(struct jc_act_arg){ .iface = "en2" }, 3);
		t = cmds_text(&ph->cmds);
		ok(ph->cmds.n == n + 1 && has_line(t, "sudo ifconfig bridge0 deletem en2"),
		    "after a route, bridge0's command is one of its own");
		free(t);
	}
	t = cmds_text(&p->hosts[0].restore);
	ok(!strstr(t, "reboot"), "a malformed prior address is not put in a command");
	ok(has_line(t, "sudo route -n delete -host 192.168.0.2"), "restore: route removed");
	ok(has_line(t, "sudo ifconfig en2 inet 192.168.0.1 -alias"), "restore: our address removed");
	ok(has_line(t, "sudo ifconfig en2 inet 169.254.3.4 netmask 255.255.0.0 alias"),
	    "restore: prior address back");
	ok(has_line(t, "sudo ifconfig bridge0 addm en2") && has_line(t, "sudo ifconfig bridge0 addm en3") &&
	    !strstr(t, "addm en7"), "restore: members back");
	ok(has_line(t, "sudo ifconfig bridge0 up"), "restore: bridge up again");
	free(t);
	ok(p->hosts[0].facts[0].known && p->hosts[0].facts[0].values.n == 1 &&
	    strcmp(p->hosts[0].facts[0].values.v[0], "169.254.3.4/16") == 0, "fact: prior address");
	ok(p->hosts[0].facts[2].known && p->hosts[0].facts[2].up == JC_YES &&
	    p->hosts[0].facts[2].values.n == 3, "fact: bridge up with three members");
	ok(!p->hosts[0].applied, "not applied yet");
	plan_free(p);

	/* sudo scoped to the commands: each action the command its rule names */
	h[0].sudo_mode = JC_SUDO_SCOPED;
	ok(plan_build(g, &p, &err) == 0, "plan for a host whose sudo is scoped");
	t = cmds_text(&p->hosts[0].cmds);
	ok(has_line(t, "sudo ifconfig bridge0 down") && !strstr(t, "down deletem") &&
	    has_line(t, "sudo ifconfig bridge0 deletem en2") &&
	    has_line(t, "sudo ifconfig bridge0 deletem en3"), "scoped sudo: one command per member");
	free(t);
	plan_free(p);
	h[0].sudo_mode = JC_SUDO_UNKNOWN;

	/* Now as the plan leaves it: a second run changes nothing. */
	br = &h[0].ifaces[0];
	strv_free_array(br->members, br->nmembers);
	br->members = xcalloc(1, sizeof(char *));
	br->members[0] = xstrdup("en7");
	br->nmembers = 1;
	br->up = JC_NO;
	free(h[0].ifaces[1].inet[0]);
	h[0].ifaces[1].inet[0] = xstrdup("192.168.0.1");
	h[0].ifaces[1].prefix[0] = 30;
	free(h[0].ifaces[2].inet[0]);
	h[0].ifaces[2].inet[0] = xstrdup("192.168.0.5");
	h[0].ifaces[2].prefix[0] = 30;
	ok(plan_build(g, &p, &err) == 0 && p->hosts[0].applied, "already applied: nothing to do");
	t = cmds_text(&p->hosts[0].restore);
	ok(!strstr(t, "-alias"), "restore keeps an address that was already there");
	free(t);
	plan_free(p);
	h[0].ifaces[2].prefix[0] = 24;
	ok(plan_build(g, &p, &err) == 0 && !p->hosts[0].applied, "wrong prefix: not applied");
	plan_free(p);
	h[0].ifaces[2].prefix[0] = 30;
	br->up = JC_YES;
	ok(plan_build(g, &p, &err) == 0 && !p->hosts[0].applied, "bridge up: not applied");
	plan_free(p);
	graph_free(g);
	inv_free(h, 3);
}

static void
test_linux(void)
{
	struct jc_host *h = inv_new(2, NULL);
	struct graph *g = NULL;
	struct plan *p = NULL;
	struct jc_err err = { 0 };
	char *t;

	h[0].os = h[1].os = JC_OS_LINUX;
	inv_cable(&h[0], "eth1", &h[1], "eth2", 0);
	graph_build(h, 2, &g, &err);
	ok(plan_build(g, &p, &err) == 0, "Linux plan");
	t = cmds_text(&p->hosts[1].cmds);
	is_str(t, "sudo ip addr replace 192.168.0.2/30 dev eth2\n"
	    "sudo ip link set eth2 up\n"
	    "sudo ip route replace 192.168.0.1/32 dev eth2\n", "ip commands, no bridge");
	free(t);
	t = cmds_text(&p->hosts[1].restore);
	is_str(t, "sudo ip route del 192.168.0.1/32 dev eth2  # may fail\n"
	    "sudo ip addr del 192.168.0.2/30 dev eth2  # may fail\n", "Linux restore");
	free(t);
	plan_free(p);
	inv_iface(&h[1], "eth2", "192.168.0.2", 30);
	ok(plan_build(g, &p, &err) == 0 && p->hosts[1].applied && !p->hosts[0].applied,
	    "Linux: applied detection per host");
	plan_free(p);
	graph_free(g);

	free(h[1].ports[0].iface);
	h[1].ports[0].iface = xstrdup("eth2;reboot");
	graph_build(h, 2, &g, &err);
	ok(plan_build(g, &p, &err) < 0 && p == NULL, "unsafe interface name refused");
	is_str(err.msg, "mac2: interface name 'eth2;reboot' is not usable in a command", "message");
	graph_free(g);
	inv_free(h, 2);
}

static void
test_wrap(void)
{
	struct jc_host *h = inv_new(2, NULL);
	struct graph *g = NULL;
	struct plan *p = NULL;
	struct jc_err err = { 0 };
	char ip[16];

	for (int k = 0; k < 70; k++) {
		char *a = xasprintf("en%03d", k);

		inv_cable(&h[0], a, &h[1], a, 80);
		free(a);
	}
	graph_build(h, 2, &g, &err);
	ok(plan_build(g, &p, &err) == 0, "70 cables planned");
	is_str(p->cable_ip[63][0], "192.168.0.253", "cable 63: last of 192.168.0");
	is_str(p->cable_ip[63][1], "192.168.0.254", "cable 63: its peer");
	is_str(p->cable_ip[64][0], "192.168.1.1", "cable 64 wraps to 192.168.1.1");
	is_str(p->cable_ip[69][1], "192.168.1.22", "cable 69");
	plan_free(p);
	graph_free(g);
	inv_free(h, 2);

	ok(plan_cable_ip(16383, 1, ip) == 0, "last cable");
	is_str(ip, "192.168.255.254", "its address");
	ok(plan_cable_ip(16384, 0, ip) == -ERANGE, "no address beyond");

	/* 16384 cables between two hosts: mlx runs out of addresses. */
	h = inv_new(2, NULL);
	for (int s = 0; s < 2; s++) {
		h[s].ports = xcalloc(16384, sizeof(*h[s].ports));
		h[s].nports = 16384;
		for (size_t k = 0; k < 16384; k++) {
			h[s].ports[k].iface = xasprintf("en%zu", k);
			h[s].ports[k].id = xasprintf("%d-%zu", s, k);
			h[s].ports[k].peer_id = xasprintf("%d-%zu", !s, k);
		}
	}
	ok(graph_build(h, 2, &g, &err) == 0 && g->ncables == 16384, "16384 cables");
	ok(plan_build(g, &p, &err) < 0 && p == NULL, "plan fails");
	ok(strncmp(err.msg, "Ran out of available local IPs", 30) == 0, "mlx's message");
	graph_free(g);
	inv_free(h, 2);
}

static void
add_route(struct jc_host *h, const char *dest, int len, const char *iface, const char *via)
{
	struct jc_route *r;

	h->routes = xreallocarray(h->routes, h->nroutes + 1, sizeof(*h->routes));
	r = &h->routes[h->nroutes++];
	r->dest = xstrdup(dest);
	r->len = len;
	r->iface = iface ? xstrdup(iface) : NULL;
	r->via = via ? xstrdup(via) : NULL;
	h->routes_known = true;
}

/* Each host's addresses as "iface ip peer_ip;" in plan order, all hosts. */
static char *
addrs_text(const struct plan *p)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	for (size_t i = 0; i < p->n; i++)
		for (size_t a = 0; a < p->hosts[i].naddrs; a++)
			buf_printf(&b, "%s %s %s;", p->hosts[i].addrs[a].iface, p->hosts[i].addrs[a].ip,
			    p->hosts[i].addrs[a].peer_ip);
	return buf_steal(&b);
}

/*
 * Appendix A (cables A.en2-B.en2, A.en3-C.en2, B.en3-C.en3) with what a
 * host may have that mlx's 192.168.0.0-192.168.0.11 would overlap. The
 * expected addresses are written out by hand: cable k at base + 4k + 1
 * and + 2.
 */
static void
test_subnets(void)
{
	static const char mlx[] = "en2 192.168.0.1 192.168.0.2;en3 192.168.0.5 192.168.0.6;"
	    "en2 192.168.0.2 192.168.0.1;en3 192.168.0.9 192.168.0.10;"
	    "en2 192.168.0.6 192.168.0.5;en3 192.168.0.10 192.168.0.9;";
	static const char moved[] = "en2 10.254.0.1 10.254.0.2;en3 10.254.0.5 10.254.0.6;"
	    "en2 10.254.0.2 10.254.0.1;en3 10.254.0.9 10.254.0.10;"
	    "en2 10.254.0.6 10.254.0.5;en3 10.254.0.10 10.254.0.9;";
	struct jc_host *h = appendix_a();
	struct graph *g = NULL;
	struct plan *p = NULL;
	struct jc_err err = { 0 };
	char *t;

	/* nothing that collides: mlx's numbering, a LAN beyond the cables, the cables' own */
	inv_iface(&h[0], "en0", "192.168.1.20", 24);
	add_route(&h[0], "192.168.1.0", 24, "en0", NULL);
	add_route(&h[0], "0.0.0.0", 1, "utun3", NULL);
	add_route(&h[0], "128.0.0.0", 1, "utun3", NULL);
	inv_iface(&h[1], "en2", "192.168.0.2", 30);
	add_route(&h[1], "192.168.0.0", 30, "en2", NULL);
	add_route(&h[1], "192.168.0.2", 32, "lo0", "127.0.0.1");
	add_route(&h[1], "192.168.0.1", 32, "en2", NULL);
	graph_build(h, 3, &g, &err);
	ok(plan_build(g, &p, &err) == 0, "subnets: plan built");
	t = addrs_text(p);
	is_str(t, mlx, "a LAN on 192.168.1.0/24, a VPN's /1 pair and the cables' own "
	    "addresses and routes leave mlx's numbering");
	free(t);
	ok(p->subnet.reason == NULL && p->note_host == NULL, "... and no note");
	plan_free(p);

	/* a VPN's 192.168.0.0/16 on B: the first free range of the list */
	add_route(&h[1], "192.168.0.0", 16, "utun3", NULL);
	ok(plan_build(g, &p, &err) == 0, "VPN route: plan built");
	t = addrs_text(p);
	is_str(t, moved, "a route of B through utun3 over 192.168.0.0/16: every cable on 10.254.0.0/16");
	free(t);
	is_str(p->cable_ip[2][1], "10.254.0.10", "cable 2's second end");
	ok(p->subnet.reason != NULL && strstr(p->subnet.reason, "192.168.0.0/16") &&
	    strstr(p->subnet.reason, "route via utun3") && strstr(p->subnet.reason, "10.254.0.0/16"),
	    "the reason names the route and the range");
	is_str(p->note_host, "B", "the note is B's");
	t = cmds_text(&p->hosts[0].cmds);
	ok(has_line(t, "sudo ifconfig en2 inet 10.254.0.1 netmask 255.255.255.252") &&
	    has_line(t, "sudo route -n add -host 10.254.0.2 -interface en2"),
	    "the commands use the new numbering");
	free(t);
	plan_free(p);

	/* --subnet */
	ok(plan_build_opts(g, &(struct plan_opts){ .subnet = "172.31.4.0/24" }, &p, &err) == 0,
	    "--subnet 172.31.4.0/24: plan built");
	is_str(p->cable_ip[0][0], "172.31.4.1", "--subnet: cable 0");
	is_str(p->cable_ip[2][1], "172.31.4.10", "--subnet: cable 2's second end");
	ok(p->subnet.user && p->subnet.reason == NULL, "--subnet: chosen, no note");
	plan_free(p);
	ok(plan_build_opts(g, &(struct plan_opts){ .subnet = "192.168.0.0/24" }, &p, &err) ==
	    -EADDRINUSE && p == NULL && strstr(err.msg, "B: route via utun3") != NULL,
	    "--subnet over the VPN's route: refused, naming the host and route");
	graph_free(g);
	inv_free(h, 3);

	/* an address (not a route) in mlx's block on a host's other interface */
	h = appendix_a();
	inv_iface(&h[2], "en0", "192.168.0.77", 24);
	graph_build(h, 3, &g, &err);
	ok(plan_build(g, &p, &err) == 0 && strcmp(p->cable_ip[0][0], "10.254.0.1") == 0 &&
	    strstr(p->subnet.reason, "address 192.168.0.77/24 on en0") != NULL &&
	    strcmp(p->note_host, "C") == 0, "an address 192.168.0.77/24 on C's en0 moves the cables");
	plan_free(p);
	graph_free(g);
	inv_free(h, 3);
}

/* A hardware port of h, as networksetup -listallhardwareports lists it. */
static void
hwport(struct jc_host *h, const char *port, const char *dev)
{
	h->hwports = xreallocarray(h->hwports, h->nhwports + 1, sizeof(*h->hwports));
	h->hwports[h->nhwports].port = xstrdup(port);
	h->hwports[h->nhwports].device = xstrdup(dev);
	h->hwports[h->nhwports].mac = NULL;
	h->nhwports++;
}

/* The command's argv is exactly want (NULL-terminated), and may_fail as given. */
static bool
argv_is(const struct plan_cmd *c, bool may_fail, const char *const *want)
{
	size_t n = 0;

	while (want[n] != NULL)
		n++;
	if (c->argc != n || c->argv[n] != NULL || c->may_fail != may_fail)
		return false;
	for (size_t k = 0; k < n; k++)
		if (strcmp(c->argv[k], want[k]) != 0)
			return false;
	return true;
}

static void
test_persist(void)
{
	struct jc_host *h = inv_new(2, NULL);
	struct graph *g = NULL;
	struct plan *p = NULL;
	struct jc_err err = { 0 };
	const struct plan_host *ph;
	const struct plan_cmdlist *l;
	struct plan_cmd *extra;
	char *t;
	static const char *const create[] = { "sudo", "networksetup", "-createnetworkservice",
		"jaccl-config Thunderbolt 2", "Thunderbolt 2", NULL };
	static const char *const manual[] = { "sudo", "networksetup", "-setmanual",
		"jaccl-config Thunderbolt 2", "192.168.0.2", "255.255.255.252", NULL };
	static const char *const bridge_off[] = { "sudo", "networksetup",
		"-setnetworkserviceenabled", "Thunderbolt Bridge", "off", NULL };

	inv_cable(&h[0], "en2", &h[1], "en3", 80);
	for (int i = 0; i < 2; i++) {
		hwport(&h[i], "Ethernet", "en0");
		hwport(&h[i], "Thunderbolt Bridge", "bridge0");
		hwport(&h[i], "Thunderbolt 1", "en2");
		hwport(&h[i], "Thunderbolt 2", "en3");
		hwport(&h[i], "Wi-Fi", "en1");
	}
	graph_build(h, 2, &g, &err);
	ok(plan_build(g, &p, &err) == 0 && p->hosts[1].cmds.n == 4 && !p->hosts[1].persist,
	    "without --persist: the four commands of mlx, no networksetup");
	plan_free(p);

	ok(plan_build_persist(g, true, &p, &err) == 0, "persist plan built");
	ph = &p->hosts[1];
	l = &ph->cmds;
	ok(l->n == 7, "mlx's four commands, then three of networksetup (%zu)", l->n);
	ok(l->n == 7 && argv_is(&l->v[4], true, create),
	    "our service on the port of en3 (may fail: it may be there)");
	ok(l->n == 7 && argv_is(&l->v[5], false, manual),
	    "its manual address and mask, no router");
	ok(l->n == 7 && argv_is(&l->v[6], true, bridge_off), "the bridge's service off");
	t = cmds_text(l);
	ok(has_line(t, "sudo networksetup -createnetworkservice 'jaccl-config Thunderbolt 2' "
	    "'Thunderbolt 2'") && has_line(t, "sudo networksetup -setmanual "
	    "'jaccl-config Thunderbolt 2' 192.168.0.2 255.255.255.252"),
	    "printed with the names quoted for the shell");
	ok(strstr(t, "Wi-Fi") == NULL && strstr(t, "Ethernet") == NULL && strstr(t, "en0") == NULL,
	    "no other service or interface named");
	free(t);
	ok(ph->nfacts > 0 && ph->facts[ph->nfacts - 1].kind == PLAN_FACT_SERVICES &&
	    strcmp(ph->facts[ph->nfacts - 1].iface, PLAN_SERVICES) == 0, "a services fact");
	t = ph->nfacts > 0 ? plan_cmd_text(&ph->facts[ph->nfacts - 1].query) : xstrdup("");
	is_str(t, "networksetup -listnetworkserviceorder", "its query");
	free(t);

	/* a command naming another service is refused by the check */
	extra = &p->hosts[0].cmds.v[p->hosts[0].cmds.n - 2];
	free(extra->argv[3]);
	extra->argv[3] = xstrdup("Wi-Fi");
	ok(plan_check(p, g, &err) < 0, "a command naming Wi-Fi is refused");
	is_str(err.msg, "mac1: planned command names 'Wi-Fi', which is not a cable interface",
	    "the check names it");
	plan_free(p);

	inv_iface(&h[1], "en3", "192.168.0.2", 30);
	ok(plan_build(g, &p, &err) == 0 && p->hosts[1].applied, "addresses set: applied");
	plan_free(p);
	ok(plan_build_persist(g, true, &p, &err) == 0 && !p->hosts[1].applied,
	    "with --persist never applied (the services are not in the inventory)");
	plan_free(p);
	graph_free(g);

	/* no hardware port for a cable interface: refused, with the reason */
	free(h[1].hwports[3].port);
	h[1].hwports[3].port = xstrdup("USB 10/100/1000 LAN");
	graph_build(h, 2, &g, &err);
	ok(plan_build_persist(g, true, &p, &err) < 0 && p == NULL, "no Thunderbolt port: refused");
	is_str(err.msg, "mac2: no Thunderbolt hardware port for en3 in networksetup "
	    "-listallhardwareports; cannot make it persistent", "the reason");
	graph_free(g);
	inv_free(h, 2);

	h = inv_new(2, NULL);
	h[0].os = h[1].os = JC_OS_LINUX;
	h[0].netmgr = h[1].netmgr = JC_NETMGR_NM;
	inv_cable(&h[0], "eth1", &h[1], "eth2", 0);
	graph_build(h, 2, &g, &err);
	ok(plan_build_persist(g, true, &p, &err) == 0, "Linux: persist plan built");
	{
		static const char *const del[] = { "sudo", "nmcli", "connection", "delete",
			"jaccl-config eth2", NULL };
		static const char *const add[] = { "sudo", "nmcli", "connection", "add", "type",
			"ethernet", "ifname", "eth2", "con-name", "jaccl-config eth2", "ipv4.method",
			"manual", "ipv4.addresses", "192.168.0.2/30", "ipv6.method", "ignore", NULL };

		l = &p->hosts[1].cmds;
		ok(l->n == 5 && argv_is(&l->v[3], true, del) && argv_is(&l->v[4], false, add),
		    "Linux: after ip's three, our NetworkManager connection: an old one deleted "
		    "(may fail), then added with the address (%zu)", l->n);
		ph = &p->hosts[1];
		t = plan_cmd_text(&ph->facts[ph->nfacts - 1].query);
		is_str(t, "nmcli -t -f NAME,DEVICE connection show", "Linux: the services query");
		free(t);
	}
	plan_free(p);
	graph_free(g);
	inv_free(h, 2);
}

/*
 * Linux hosts whose network is configured by systemd-networkd or ifupdown:
 * a file of ours per cable interface, written whole by sh -c with the
 * content and the path as arguments; the words compared with hand-written
 * ones, the files with their text as systemd.network(5) and
 * interfaces(5) read it.
 */
static void
test_persist_files(void)
{
	struct jc_host *h = inv_new(3, NULL);
	struct graph *g = NULL;
	struct plan *p = NULL;
	struct jc_err err = { 0 };
	const struct plan_host *ph;
	const struct plan_cmdlist *l;
	char *t;
	static const char *const nd_eth2[] = { "sudo", "sh", "-c",
		"printf %s \"$1\" > \"$2\"", "sh",
		"# written by jaccl-config --persist\n[Match]\nName=eth2\n\n[Network]\n"
		"Address=192.168.0.2/30\nLinkLocalAddressing=ipv6\n",
		"/etc/systemd/network/10-jaccl-config-eth2.network", NULL };
	static const char *const nd_eth3[] = { "sudo", "sh", "-c",
		"printf %s \"$1\" > \"$2\"", "sh",
		"# written by jaccl-config --persist\n[Match]\nName=eth3\n\n[Network]\n"
		"Address=192.168.0.5/30\nLinkLocalAddressing=ipv6\n",
		"/etc/systemd/network/10-jaccl-config-eth3.network", NULL };
	static const char *const reload[] = { "sudo", "networkctl", "reload", NULL };
	static const char *const ifu[] = { "sudo", "sh", "-c", "printf %s \"$1\" > \"$2\"", "sh",
		"# written by jaccl-config --persist\nauto eth1\niface eth1 inet static\n"
		"    address 192.168.0.1/30\n",
		"/etc/network/interfaces.d/jaccl-config-eth1", NULL };

	for (int i = 0; i < 3; i++)
		h[i].os = JC_OS_LINUX;
	h[0].netmgr = JC_NETMGR_IFUPDOWN;
	h[1].netmgr = JC_NETMGR_NETWORKD;
	h[2].netmgr = JC_NETMGR_NM;
	inv_cable(&h[0], "eth1", &h[1], "eth2", 0);
	inv_cable(&h[1], "eth3", &h[2], "eth4", 0);
	graph_build(h, 3, &g, &err);
	ok(plan_build(g, &p, &err) == 0 && p->hosts[1].cmds.n == 6,
	    "without --persist: ip's commands only");
	plan_free(p);
	ok(plan_build_persist(g, true, &p, &err) == 0, "files: persist plan built (%s)", err.msg);
	if (p == NULL) {
		graph_free(g);
		inv_free(h, 3);
		return;
	}
	ph = &p->hosts[1];
	l = &ph->cmds;
	ok(l->n == 9 && argv_is(&l->v[6], false, nd_eth2) && argv_is(&l->v[7], false, nd_eth3),
	    "systemd-networkd: after ip's six, one .network file per cable interface (%zu)", l->n);
	ok(l->n == 9 && argv_is(&l->v[8], true, reload), "... then networkctl reload (may fail)");
	ok(ph->nfacts == 6 && ph->facts[4].kind == PLAN_FACT_FILE &&
	    strcmp(ph->facts[4].iface, "eth2") == 0 &&
	    strcmp(ph->facts[4].peer, "systemd-networkd") == 0 &&
	    ph->facts[5].kind == PLAN_FACT_FILE && strcmp(ph->facts[5].iface, "eth3") == 0,
	    "a file fact per cable interface, naming the manager");
	t = ph->nfacts == 6 ? plan_cmd_text(&ph->facts[4].query) : xstrdup("");
	is_str(t, "cat /etc/systemd/network/10-jaccl-config-eth2.network", "its query: the content");
	free(t);
	t = cmds_text(l);
	ok(has_line(t, "sudo sh -c 'printf %s \"$1\" > \"$2\"' sh '# written by jaccl-config "
	    "--persist"), "printed with the script and the content quoted for the shell");
	free(t);
	l = &p->hosts[0].cmds;
	ok(l->n == 4 && argv_is(&l->v[3], false, ifu),
	    "ifupdown: one interfaces.d file, no reload (%zu)", l->n);
	ok(p->hosts[2].cmds.n == 5 && strcmp(p->hosts[2].cmds.v[4].argv[1], "nmcli") == 0,
	    "NetworkManager: its connection, as before");

	/* the check: a path or content other than the planned ones is refused */
	free(p->hosts[1].cmds.v[6].argv[6]);
	p->hosts[1].cmds.v[6].argv[6] = xstrdup("/etc/systemd/network/10-other.network");
	ok(plan_check(p, g, &err) < 0, "another path is refused");
	is_str(err.msg, "mac2: planned command names '/etc/systemd/network/10-other.network', "
	    "which is not a cable interface", "the check names it");
	free(p->hosts[1].cmds.v[6].argv[6]);
	p->hosts[1].cmds.v[6].argv[6] =
	    xstrdup("/etc/systemd/network/10-jaccl-config-eth2.network");
	ok(plan_check(p, g, &err) == 0, "the planned one passes");
	free(p->hosts[1].cmds.v[6].argv[5]);
	p->hosts[1].cmds.v[6].argv[5] = xstrdup("[Match]\nName=eth0\n");
	ok(plan_check(p, g, &err) < 0, "another content is refused");
	plan_free(p);
	graph_free(g);

	/* none, unknown: refused before anything, naming the host and why */
	h[1].netmgr = JC_NETMGR_NONE;
	graph_build(h, 3, &g, &err);
	ok(plan_build_persist(g, true, &p, &err) < 0 && p == NULL, "none: refused");
	is_str(err.msg, "mac2: --persist: no network manager found (none of NetworkManager, "
	    "systemd-networkd, ifupdown is enabled at boot); nothing was changed", "the reason");
	ok(plan_build(g, &p, &err) == 0, "none: without --persist, planned as before");
	plan_free(p);
	graph_free(g);
	h[1].netmgr = JC_NETMGR_UNKNOWN;
	graph_build(h, 3, &g, &err);
	ok(plan_build_persist(g, true, &p, &err) < 0 && strstr(err.msg, "mac2: --persist: its "
	    "network manager is unknown") == err.msg, "unknown: refused (%s)", err.msg);
	graph_free(g);
	inv_free(h, 3);
}

int
main(void)
{
	(void)plan;
	(void)skip_all;
	(void)is_int;
	test_appendix();
	test_bridge_restore_applied();
	test_linux();
	test_wrap();
	test_subnets();
	test_persist();
	test_persist_files();
	return done_testing();
}
