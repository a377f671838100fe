/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the Linux parsers and backend: outputs captured from
 * network namespaces joined by veth pairs (tests/captures-linux/
 * veth-triangle) and a realistic sysfs sample with Thunderbolt domains,
 * docks, RDMA devices, bonds and bridges (tests/captures-linux/tb-sysfs).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "inventory.h"
#include "parse_linux.h"
#include "parse_net.h"
#include "platform.h"
#include "../tap.h"

#define S(x) x, sizeof(x) - 1

static char *dir;

static const struct jc_port *
port_of(const struct jc_host *h, const char *iface)
{
	for (size_t i = 0; i < h->nports; i++)
		if (h->ports[i].iface != NULL && strcmp(h->ports[i].iface, iface) == 0)
			return &h->ports[i];
	return NULL;
}

static const struct jc_port *
port_by_id(const struct jc_host *hs, size_t n, const char *id, size_t *host)
{
	for (size_t k = 0; k < n; k++)
		for (size_t i = 0; i < hs[k].nports; i++)
			if (id != NULL && strcmp(hs[k].ports[i].id, id) == 0) {
				*host = k;
				return &hs[k].ports[i];
			}
	return NULL;
}

static void
test_triangle(void)
{
	static const char *const names[] = { "h0", "h1", "h2" };
	static const struct { int a; const char *ai; int b; const char *bi; } want[] = {
		{ 0, "eth1", 1, "eth1" }, { 1, "eth2", 2, "eth1" }, { 0, "eth2", 2, "eth2" },
	};
	struct jc_host h[3];
	struct jc_err err;
	char *set = xasprintf("%s/veth-triangle", dir);

	memset(h, 0, sizeof(h));
	for (int i = 0; i < 3; i++) {
		int rc = inventory_from_bundle(set, names[i], &h[i], &err);

		ok(rc == 0, "%s replays", names[i]);
		if (rc < 0)
			diag("%s", err.msg);
		is_int(h[i].os, JC_OS_LINUX, "linux backend chosen by uname.txt");
		is_str(h[i].mgmt_iface, "m0", "management interface");
		ok(port_of(&h[i], "m0") == NULL && port_of(&h[i], "lo") == NULL,
		    "management and loopback are not cable candidates");
	}
	for (size_t c = 0; c < JC_ARRAY_LEN(want); c++) {
		const struct jc_port *a = port_of(&h[want[c].a], want[c].ai);
		const struct jc_port *b;
		size_t owner = 99;

		ok(a != NULL && a->peer_id != NULL, "%s %s has a peer", names[want[c].a], want[c].ai);
		b = a ? port_by_id(h, 3, a->peer_id, &owner) : NULL;
		ok(b != NULL && owner == (size_t)want[c].b && strcmp(b->iface, want[c].bi) == 0,
		    "%s %s is cabled to %s %s", names[want[c].a], want[c].ai,
		    names[want[c].b], want[c].bi);
		ok(b != NULL && b->peer_id != NULL && strcmp(b->peer_id, a->id) == 0,
		    "and the other end sees it back");
	}
	ok(port_of(&h[2], "eth9") != NULL && port_of(&h[2], "eth9")->peer_id == NULL,
	    "unplugged interface: a port without peer");
	ok(port_of(&h[2], "br5") == NULL && port_of(&h[2], "dum0") == NULL,
	    "bridge and its member are not candidates");
	for (int i = 0; i < 3; i++)
		jc_host_clear(&h[i]);
	free(set);
}

static void
test_sysfs(void)
{
	struct jc_host h;
	struct jc_err err;
	char *set = xasprintf("%s/tb-sysfs", dir);
	const struct jc_port *p;
	bool note_eth3 = false;

	memset(&h, 0, sizeof(h));
	ok(inventory_from_bundle(set, "host", &h, &err) == 0, "tb-sysfs replays");
	is_str(h.os_version, "12", "os-release VERSION_ID unquoted");
	is_str(h.mgmt_ip, "192.168.1.50", "mgmt ip");
	ok(h.nports >= 3, "ports found");
	if (h.nports >= 3) {
		is_str(h.ports[0].id, "D1E5B2C4-6A1E-4D3B-9F2A-0C1B2A3D4E5F",
		    "host router unique_id in upper case");
		is_str(h.ports[0].peer_id, "E5D79703-88AE-47EE-95C8-BE1253E4D99D", "XDomain peer");
		is_str(h.ports[0].iface, "thunderbolt0", "net of the XDomain service");
		is_str(h.ports[0].peer_model, "Mac Studio", "peer name");
		ok(!h.ports[0].peer_via_dock, "direct peer");
		ok(h.ports[1].peer_via_dock, "peer three hops away: via dock");
		ok(h.ports[1].ndevices == 1 && strcmp(h.ports[1].devices[0], "TS4") == 0,
		    "dock listed as a device");
		ok(h.ports[2].peer_id == NULL && h.ports[2].iface == NULL, "idle domain");
	}
	ok(port_of(&h, "thunderbolt0") == &h.ports[0], "no mac: port for a Thunderbolt net");
	p = port_of(&h, "eth1");
	ok(p != NULL && strcmp(p->id, "mac:aa:bb:cc:00:00:02") == 0, "eth1 id from its MAC");
	ok(p != NULL && p->peer_id != NULL && strcmp(p->peer_id, "mac:de:ad:be:ef:00:01") == 0,
	    "one neighbour (twice, mixed case): peer");
	p = port_of(&h, "eth3");
	ok(p != NULL && p->peer_id == NULL, "two neighbours: no peer");
	for (size_t i = 0; i < h.nnotes; i++)
		if (strstr(h.notes[i], "eth3") != NULL)
			note_eth3 = true;
	ok(note_eth3, "and a note says so");
	ok(port_of(&h, "eth2") != NULL && port_of(&h, "eth2")->peer_id == NULL,
	    "FAILED neighbour ignored");
	ok(port_of(&h, "eth4") == NULL, "down interface is not a candidate");
	ok(port_of(&h, "eth5") == NULL, "bond slave is not a candidate");
	ok(port_of(&h, "eth6") == NULL && port_of(&h, "br0") == NULL,
	    "bridge and member are not candidates");
	ok(port_of(&h, "wg0") == NULL, "interface without MAC is not a candidate");
	ok(port_of(&h, "eth0") == NULL, "management interface is not a candidate");
	is_int((long long)h.nrdma, 2, "two RDMA devices (unsafe one skipped)");
	if (h.nrdma == 2) {
		is_str(h.rdma[0].netdev, "eth1", "rxe netdev from the GID ndev");
		is_int(h.rdma[0].state, JC_PORT_ACTIVE, "rxe ACTIVE");
		is_int(h.rdma[1].state, JC_PORT_DOWN, "first port's state");
	}
	is_int(h.rdma_listed, JC_YES, "rdma listed");
	jc_host_clear(&h);
	free(set);
}

static void
test_small(void)
{
	struct jc_iface *f;
	struct parse_neigh *nb;
	size_t n;
	struct jc_err e;
	char *a, *b;

	ok(parse_ip_addr(S("[]"), &f, &n, NULL, &e) == 0 && n == 0, "empty list");
	ok(parse_ip_addr(S(""), &f, &n, NULL, &e) == 0 && n == 0, "blank output: empty");
	ok(parse_ip_addr(S("{\"ifname\":\"x\"}"), &f, &n, NULL, &e) < 0, "object: error");
	ok(parse_ip_addr(S("Object \"addr\" is unknown"), &f, &n, NULL, &e) < 0,
	    "ip error text: error");
	ok(parse_ip_addr(S("[1, \"x\", {\"ifname\": 7}, {\"ifname\": \"ok0\", \"mtu\": -5, "
	    "\"addr_info\": [{\"family\": \"inet\", \"local\": \"1.2.3\"}, "
	    "{\"family\": \"inet\", \"local\": \"1.2.3.4\", \"prefixlen\": 99}]}]"),
	    &f, &n, NULL, &e) == 0 && n == 1, "odd entries skipped");
	if (n == 1) {
		is_int(f[0].mtu, 0, "negative mtu unknown");
		ok(f[0].ninet == 1 && f[0].prefix[0] == 32, "bad prefix: /32, bad address skipped");
	}
	parse_ifaces_free(f, n);
	ok(parse_ip_neigh(S("[{\"dev\":\"e1\",\"lladdr\":\"00:11:22:33:44:55\","
	    "\"state\":\"REACHABLE\"},{\"dev\":\"e1\",\"lladdr\":\"zz\",\"state\":[\"STALE\"]}]"),
	    &nb, &n, NULL, &e) == 0 && n == 2, "neighbours parse");
	if (n == 2) {
		ok(nb[0].usable, "state as a string accepted");
		ok(!nb[1].usable, "bad lladdr unusable");
	}
	parse_neigh_free(nb, n);
	ok(parse_ip_neigh(S("[{]"), &nb, &n, NULL, &e) < 0, "garbage neighbours: error");
	parse_os_release("ID='arch'\nVERSION=\"rolling \x01\"\n", &a, &b);
	is_str(a, "rolling ?", "VERSION used when no VERSION_ID, control chars masked");
	is_str(b, "arch", "ID single-quoted");
	free(a);
	free(b);
	parse_linux_mgmt("addr=10.0.0.1;x\niface=../x\n", &a, &b);
	ok(a == NULL && b == NULL, "bad mgmt values refused");
	parse_linux_mgmt("addr=\n", &a, &b);
	ok(a == NULL && b == NULL, "no SSH_CONNECTION: unknown");
}

/* netmgr.txt as the probe's line prints it, written by hand per system. */
static void
test_netmgr(void)
{
	ok(parse_linux_netmgr(NULL) == JC_NETMGR_UNKNOWN, "netmgr: not captured: unknown");
	ok(parse_linux_netmgr("") == JC_NETMGR_NONE, "netmgr: nothing found: none");
	ok(parse_linux_netmgr("enabled=systemd-networkd\n") == JC_NETMGR_NETWORKD,
	    "netmgr: networkd enabled (Ubuntu server, netplan)");
	ok(parse_linux_netmgr("enabled=NetworkManager\nenabled=systemd-networkd\n"
	    "interfaces=yes\nifup=yes\n") == JC_NETMGR_NM, "netmgr: NetworkManager first");
	ok(parse_linux_netmgr("enabled=networking\ninterfaces=yes\nifup=yes\n") ==
	    JC_NETMGR_IFUPDOWN, "netmgr: Debian's ifupdown");
	ok(parse_linux_netmgr("interfaces=yes\n") == JC_NETMGR_NONE,
	    "netmgr: an interfaces file without ifup: none");
	ok(parse_linux_netmgr("interfaces=yes\r\nifup=yes") == JC_NETMGR_IFUPDOWN,
	    "netmgr: the file and ifup, CR and no final newline");
	ok(parse_linux_netmgr("enabled=NetworkManager-wait-online\nenabled\n=x\n") ==
	    JC_NETMGR_NONE, "netmgr: other units and garbage ignored");
	is_str(jc_netmgr_name(JC_NETMGR_NETWORKD), "systemd-networkd", "netmgr: its name");
	ok(jc_netmgr_name(JC_NETMGR_UNKNOWN) == NULL && jc_netmgr_name(99) == NULL,
	    "netmgr: unknown has no name");
	ok(jc_netmgr_by_name("ifupdown") == JC_NETMGR_IFUPDOWN &&
	    jc_netmgr_by_name("x") == JC_NETMGR_UNKNOWN && jc_netmgr_by_name(NULL) == 0,
	    "netmgr: by name");
}

static char *
route_text(const struct jc_route *r)
{
	return xasprintf("%s/%d %s %s", r->dest, r->len, r->iface ? r->iface : "-",
	    r->via ? r->via : "-");
}

/*
 * ip -j -4 route show table all captured in a simulated host's namespace
 * (iproute2 6.1) with a VPN-like tun (its own table 51820 for the default
 * route, 10.8.0.0/16 and 192.168.0.0/16), a multipath route, a blackhole,
 * the management /24 and a cable set up: the kept routes, in order, as
 * read off the capture by hand; the local table's local and broadcast
 * entries left out. The triangle's bundle predates the route capture.
 */
static void
test_routes(void)
{
	static const char *const want[] = {
		"0.0.0.0/0 utun3 -", "10.8.0.0/16 utun3 -", "10.8.0.1/32 utun3 -",
		"10.77.0.0/16 en0 10.203.1.1", "10.99.0.0/16 - -", "10.203.1.0/24 en0 -",
		"10.254.0.0/30 en2 -", "10.254.0.2/32 en2 -", "192.168.0.0/16 utun3 -",
	};
	char *path = xasprintf("%s/vpn-routes/ip-j-4-route.txt", dir), *data = NULL, *t;
	struct jc_strv notes = { 0 };
	struct jc_route *r = NULL;
	struct jc_err err = { 0 };
	struct jc_host h;
	size_t len = 0, n = 0;
	bool same;

	ok(jc_read_file(path, 1 << 20, &data, &len, &err) == 0, "route capture read");
	ok(parse_ip_route_json(data, len, &r, &n, &notes, &err) == 0, "ip -j route parsed");
	same = n == JC_ARRAY_LEN(want) && notes.n == 0;
	for (size_t i = 0; i < n && i < JC_ARRAY_LEN(want); i++) {
		t = route_text(&r[i]);
		if (strcmp(t, want[i]) != 0) {
			diag("route %zu: got %s, want %s", i, t, want[i]);
			same = false;
		}
		free(t);
	}
	ok(same, "every table's routes, multipath by its first hop, local and broadcast left out");
	jc_routes_free(r, n);
	ok(parse_ip_route_json(S("{\"dst\": \"default\"}"), &r, &n, &notes, &err) < 0 && r == NULL,
	    "ip -j route: not a list refused");
	ok(parse_ip_route_json(S("[{\"dst\": \"10.1.0.0/33\", \"dev\": \"eth1\"},"
	    "{\"dst\": \"10.2.0.0/16\", \"dev\": \"eth1;reboot\"}, {\"dev\": \"eth1\"},"
	    "{\"dst\": \"10.3.0.0/16\", \"dev\": \"eth1\", \"gateway\": \"x\"}, 7]"),
	    &r, &n, &notes, &err) == 0 && n == 1 && r[0].via == NULL && notes.n == 3,
	    "ip -j route: bad entries skipped with a note, a bad gateway dropped");
	jc_routes_free(r, n);
	strv_free(&notes);
	free(data);
	free(path);

	memset(&h, 0, sizeof(h));
	t = xasprintf("%s/veth-triangle", dir);
	ok(inventory_from_bundle(t, "h0", &h, &err) == 0 && !h.routes_known && h.nroutes == 0,
	    "a bundle without the route capture still loads, routes unknown");
	same = false;
	for (size_t i = 0; i < h.nnotes; i++)
		same = same || strstr(h.notes[i], "routes unknown") != NULL;
	ok(same, "... and a note says so");
	ok(h.netmgr == JC_NETMGR_UNKNOWN, "a bundle without netmgr.txt loads, its manager unknown");
	same = false;
	for (size_t i = 0; i < h.nnotes; i++)
		same = same || strstr(h.notes[i], "network manager not captured") != NULL;
	ok(same, "... and a note says so");
	jc_host_clear(&h);
	free(t);
}

/* One up interface with a MAC, addresses given as "A/L,A/L". */
static void
add_iface(struct jc_host *h, const char *name, const char *mac, const char *addrs)
{
	struct jc_iface *f;

	h->ifaces = xreallocarray(h->ifaces, h->nifaces + 1, sizeof(*h->ifaces));
	f = &h->ifaces[h->nifaces++];
	memset(f, 0, sizeof(*f));
	f->name = xstrdup(name);
	f->mac = xstrdup(mac);
	f->up = JC_YES;
	f->carrier = JC_YES;
	for (const char *a = addrs; a != NULL && *a; ) {
		size_t l = strcspn(a, ",");
		char *one = xstrndup(a, l), *slash = strchr(one, '/');

		*slash = '\0';
		f->inet = xreallocarray(f->inet, f->ninet + 1, sizeof(*f->inet));
		f->prefix = xreallocarray(f->prefix, f->ninet + 1, sizeof(*f->prefix));
		f->inet[f->ninet] = xstrdup(one);
		f->prefix[f->ninet++] = atoi(slash + 1);
		free(one);
		a += l + (a[l] == ',');
	}
}

/*
 * A cable by MAC needs an interface that is not already a network: a host
 * claiming the MAC this host sees on its LAN interface gets no cable
 * there (issue 21, case 4).
 */
static void
test_cable_ends(void)
{
	static const char *const ifs[] = { "lan0", "gw0", "ll0", "old0", "lo", "m0" };
	struct parse_neigh nb[6];
	struct jc_strv notes = { 0 };
	struct jc_host h;
	char mac[6][18], peer[6][18];
	bool lan_note = false, gw_note = false;

	memset(&h, 0, sizeof(h));
	h.mgmt_ip = xstrdup("10.9.0.5");
	h.mgmt_iface = xstrdup("m0");
	for (int i = 0; i < 6; i++) {
		snprintf(mac[i], sizeof(mac[i]), "aa:00:00:00:00:%02x", i);
		snprintf(peer[i], sizeof(peer[i]), "bb:00:00:00:00:%02x", i);
		nb[i] = (struct parse_neigh){ .dev = (char *)ifs[i], .lladdr = peer[i],
		    .dst = (char *)"fe80::1", .usable = true };
	}
	add_iface(&h, "lan0", mac[0], "10.1.2.3/24");		/* a LAN */
	add_iface(&h, "gw0", mac[1], NULL);			/* a gateway behind it */
	add_iface(&h, "ll0", mac[2], "169.254.7.7/16");	/* link-local only: a cable */
	add_iface(&h, "old0", mac[3], "192.168.0.1/30");	/* an earlier setup's /30 */
	add_iface(&h, "lo", "00:00:00:00:00:00", "127.0.0.1/8");
	add_iface(&h, "m0", mac[5], "10.9.0.5/24");		/* the SSH session's */
	h.routes = xcalloc(1, sizeof(*h.routes));
	h.routes[0] = (struct jc_route){ .dest = xstrdup("10.20.0.0"), .len = 16,
	    .iface = xstrdup("gw0"), .via = xstrdup("10.0.0.1") };
	h.nroutes = 1;
	parse_linux_mac_ports(&h, nb, 6, &notes);
	ok(port_of(&h, "lan0") != NULL && port_of(&h, "lan0")->peer_id == NULL,
	    "an interface holding a /24: no cable, whoever claims the neighbour's MAC");
	ok(port_of(&h, "gw0") != NULL && port_of(&h, "gw0")->peer_id == NULL,
	    "an interface a gateway route leaves by: no cable");
	ok(port_of(&h, "ll0") != NULL && port_of(&h, "ll0")->peer_id != NULL,
	    "a link-local address only: still a cable");
	ok(port_of(&h, "old0") != NULL && port_of(&h, "old0")->peer_id != NULL,
	    "a cable's /30 (an earlier setup): still a cable");
	ok(port_of(&h, "lo") == NULL && port_of(&h, "m0") == NULL,
	    "loopback and the management interface: never ports");
	for (size_t i = 0; i < notes.n; i++) {
		lan_note = lan_note || strstr(notes.v[i], "lan0: holds 10.1.2.3/24") != NULL;
		gw_note = gw_note || strstr(notes.v[i], "gw0: a route through a gateway") != NULL;
	}
	ok(lan_note && gw_note, "and notes say why");
	strv_free(&notes);
	jc_host_clear(&h);
}

int
main(void)
{
	const char *top = getenv("top_srcdir");

	(void)plan;
	(void)skip_all;
	dir = xasprintf("%s/tests/captures-linux", top ? top : ".");
	test_triangle();
	test_sysfs();
	test_small();
	test_routes();
	test_netmgr();
	test_cable_ends();
	free(dir);
	return done_testing();
}
