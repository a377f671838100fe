/* SPDX-License-Identifier: MIT */
/*
 * The parsers of the state queries apply saves before a setup. The Linux
 * outputs were captured from iproute2 6.1 (`ip -4 -o addr show dev v0`,
 * `ip -o link show dev v0`, `ip route show P/32`) on veth pairs in a
 * network namespace (and a tun device for a link whose last flag is UP);
 * the macOS ones are in the layout of `route -n get`
 * as the simulated cluster's fake macOS commands print it, plus the
 * default-route answer of a real Mac (destination "default").
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "parse_state.h"

/* iproute2 6.1, veth v0 with two addresses, one down peer, a carrier-less up end. */
static const char IP_ADDR_TWO[] =
    "3: v0    inet 192.168.0.1/30 scope global v0\\       valid_lft forever preferred_lft forever\n"
    "3: v0    inet 10.9.9.9/24 scope global v0\\       valid_lft forever preferred_lft forever\n";
static const char IP_LINK_UP[] =
    "3: v0@v1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP mode DEFAULT "
    "group default qlen 1000\\    link/ether 4a:c8:ff:be:57:75 brd ff:ff:ff:ff:ff:ff\n";
static const char IP_LINK_DOWN[] =
    "2: v1@v0: <BROADCAST,MULTICAST> mtu 1500 qdisc noop state DOWN mode DEFAULT group default "
    "qlen 1000\\    link/ether 4a:f0:ca:ae:73:84 brd ff:ff:ff:ff:ff:ff\n";
static const char IP_LINK_NOCARRIER[] =
    "3: v0@v1: <NO-CARRIER,BROADCAST,MULTICAST,UP,M-DOWN> mtu 1500 qdisc noqueue state "
    "LOWERLAYERDOWN mode DEFAULT group default qlen 1000\\    link/ether 6e:26:e6:40:14:65 brd "
    "ff:ff:ff:ff:ff:ff\n";
/* A tun device set up, no carrier: UP comes last. */
static const char IP_LINK_TUN[] =
    "2: t0: <NO-CARRIER,POINTOPOINT,MULTICAST,NOARP,UP> mtu 1500 qdisc pfifo_fast state DOWN mode "
    "DEFAULT group default qlen 500\\    link/none \n";
static const char IP_ROUTE_DEV[] = "192.168.0.2 dev v0 scope link \n";
static const char IP_ROUTE_VIA[] = "192.168.0.6 via 192.168.0.2 dev v0 \n";

static const char ROUTE_GET_STATIC[] =
    "   route to: 192.168.0.2\ndestination: 192.168.0.2\n  interface: en2\n"
    "      flags: <UP,HOST,DONE,STATIC>\n"
    " recvpipe  sendpipe  ssthresh  rtt,msec    rttvar  hopcount      mtu     expire\n"
    "       0         0         0         0         0         0      1500         0 \n";
static const char ROUTE_GET_GATEWAY[] =
    "   route to: 192.168.0.2\ndestination: 192.168.0.2\n    gateway: 10.0.0.1\n"
    "  interface: en0\n      flags: <UP,GATEWAY,HOST,DONE,STATIC>\n";
static const char ROUTE_GET_LINK_GW[] =
    "   route to: 192.168.0.2\ndestination: 192.168.0.2\n    gateway: link#5\n"
    "  interface: en2\n      flags: <UP,HOST,DONE,STATIC>\n";
static const char ROUTE_GET_COVER[] =
    "   route to: 192.168.0.2\ndestination: 192.168.0.2\n  interface: en2\n"
    "      flags: <UP,DONE>\n";
static const char ROUTE_GET_DEFAULT[] =
    "   route to: 192.168.0.2\ndestination: default\n       mask: default\n"
    "    gateway: 192.168.1.1\n  interface: en0\n      flags: <UP,GATEWAY,DONE,STATIC,PRCLONING>\n";
/* The host route macOS clones for a peer on the link (ARP): not a static one. */
static const char ROUTE_GET_CLONED[] =
    "   route to: 192.168.0.2\ndestination: 192.168.0.2\n  interface: en2\n"
    "      flags: <UP,HOST,DONE,LLINFO,WASCLONED,IFSCOPE,IFREF>\n";
static const char ROUTE_GET_BADIF[] =
    "   route to: 192.168.0.2\ndestination: 192.168.0.2\n  interface: en2;reboot\n"
    "      flags: <UP,HOST,DONE,STATIC>\n";

static void
route(char *got, const char *want, const char *name)
{
	if (want == NULL) {
		ok(got == NULL, "%s: no route%s%s", name, got ? ", got " : "", got ? got : "");
	} else {
		is_str(got ? got : "(none)", want, name);
	}
	free(got);
}

static void
test_route_get(void)
{
	char *via, *dev;

	route(parse_route_get(ROUTE_GET_STATIC, "192.168.0.2"), "dev en2", "static host route");
	route(parse_route_get(ROUTE_GET_GATEWAY, "192.168.0.2"), "via 10.0.0.1 dev en0",
	    "host route through a gateway");
	route(parse_route_get(ROUTE_GET_LINK_GW, "192.168.0.2"), "dev en2",
	    "a link gateway is not an address: the interface alone");
	route(parse_route_get(ROUTE_GET_COVER, "192.168.0.2"), NULL, "the covering route");
	route(parse_route_get(ROUTE_GET_DEFAULT, "192.168.0.2"), NULL, "the default route");
	route(parse_route_get(ROUTE_GET_CLONED, "192.168.0.2"), NULL, "a cloned (ARP) host route");
	route(parse_route_get(ROUTE_GET_STATIC, "192.168.0.6"), NULL, "another peer");
	route(parse_route_get(ROUTE_GET_BADIF, "192.168.0.2"), NULL, "an interface unfit for a command");
	route(parse_route_get("route: writing to routing socket: not in table\n", "192.168.0.2"),
	    NULL, "not in table");
	route(parse_route_get("", "192.168.0.2"), NULL, "empty output");
	ok(parse_route_split("via 10.0.0.1 dev en0", &via, &dev) == 0 && strcmp(via, "10.0.0.1") == 0 &&
	    strcmp(dev, "en0") == 0, "route text splits back");
	free(via);
	free(dev);
	ok(parse_route_split("dev en2", &via, &dev) == 0 && via == NULL && strcmp(dev, "en2") == 0,
	    "route text without gateway");
	free(dev);
	ok(parse_route_split("via 10.0.0.1", &via, &dev) < 0 && via == NULL && dev == NULL,
	    "half a route text refused");
}

static void
test_ip(void)
{
	struct jc_strv a = { 0 };

	route(parse_ip_route_show(IP_ROUTE_DEV, "192.168.0.2"), "dev v0", "ip route: on link");
	route(parse_ip_route_show(IP_ROUTE_VIA, "192.168.0.6"), "via 192.168.0.2 dev v0",
	    "ip route: through a gateway");
	route(parse_ip_route_show(IP_ROUTE_DEV, "192.168.0.6"), NULL, "ip route: another peer");
	route(parse_ip_route_show("", "192.168.0.2"), NULL, "ip route: none (empty output)");
	route(parse_ip_route_show("192.168.0.2 dev\n", "192.168.0.2"), NULL, "ip route: cut short");
	parse_ip_addr_inet(IP_ADDR_TWO, &a);
	ok(a.n == 2 && strcmp(a.v[0], "192.168.0.1/30") == 0 && strcmp(a.v[1], "10.9.9.9/24") == 0,
	    "ip addr: both addresses with their prefix");
	strv_free(&a);
	parse_ip_addr_inet("3: v0    inet 300.1.1.1/30 scope global v0\n"
	    "3: v0    inet 10.0.0.1 scope global v0\n3: v0    inet\n", &a);
	ok(a.n == 0, "ip addr: malformed addresses are left out");
	strv_free(&a);
	is_int(parse_ip_link_up(IP_LINK_UP), JC_YES, "ip link: up");
	is_int(parse_ip_link_up(IP_LINK_DOWN), JC_NO, "ip link: down");
	is_int(parse_ip_link_up(IP_LINK_NOCARRIER), JC_YES, "ip link: up without carrier");
	is_int(parse_ip_link_up(IP_LINK_TUN), JC_YES, "ip link: UP as the last flag");
	is_int(parse_ip_link_up("garbage"), JC_NO, "ip link: no flags");
}

static void
test_netsvc(void)
{
	static const char out[] =
	    "An asterisk (*) denotes that a network service is disabled.\r\n"
	    "(1) Ethernet\r\n(Hardware Port: Ethernet, Device: en0)\r\n\r\n"
	    "(*) Thunderbolt Bridge\n(Hardware Port: Thunderbolt Bridge, Device: bridge0)\n\n"
	    "(2) Bob's \"USB\"\n(Hardware Port: USB 10/100/1000 LAN, Device: en7)\n\n"
	    "(3) jaccl-config Thunderbolt 1\n(Hardware Port: Thunderbolt 1, Device: en2)\n\n"
	    "(4) iPhone USB\n(Hardware Port: iPhone USB, Device: en`x`)\n\n"
	    "(12) Bluetooth PAN\n\n"
	    "(Hardware Port: Stray, Device: en9)\n"
	    "(5)NoSpace\n";
	struct jc_netsvc *v = NULL;
	size_t n = 0, dropped = parse_netsvc_order(out, &v, &n);

	ok(n == 5 && dropped == 1, "services: five kept, the one with quotes left out (%zu, %zu)",
	    n, dropped);
	ok(n == 5 && strcmp(v[0].name, "Ethernet") == 0 && v[0].enabled &&
	    strcmp(v[0].port, "Ethernet") == 0 && strcmp(v[0].device, "en0") == 0,
	    "services: CRLF line ends");
	ok(n == 5 && strcmp(v[1].name, "Thunderbolt Bridge") == 0 && !v[1].enabled &&
	    strcmp(v[1].device, "bridge0") == 0, "services: (*) is disabled");
	ok(n == 5 && strcmp(v[2].name, "jaccl-config Thunderbolt 1") == 0 &&
	    strcmp(v[2].port, "Thunderbolt 1") == 0 && strcmp(v[2].device, "en2") == 0,
	    "services: ours, with its port and device");
	ok(n == 5 && strcmp(v[3].name, "iPhone USB") == 0 && v[3].device == NULL,
	    "services: a device unfit for a command is left NULL");
	ok(n == 5 && strcmp(v[4].name, "Bluetooth PAN") == 0 && v[4].port == NULL &&
	    v[4].device == NULL, "services: no port line after a blank one");
	ok(netsvc_find(v, n, "Wi-Fi") == NULL && netsvc_find(v, n, "Ethernet") == &v[0], "find");
	netsvc_free(v, n);
	v = NULL;
	n = 0;
	ok(parse_netsvc_order("", &v, &n) == 0 && n == 0 && v == NULL, "services: empty output");

	/* nmcli -t -f NAME,DEVICE connection show */
	ok(parse_nmcli_connections("Wired connection 1:eth0\n"
	    "jaccl-config eth1:eth1\r\n"
	    "a\\:b:\n"
	    "it's:eth2\n"
	    "\n"
	    "spare (2):\n"
	    "lo:l\\o\n", &v, &n) == 2 && n == 4,
	    "nmcli: four kept; a name with ':' (escaped) or a quote left out");
	ok(n == 4 && strcmp(v[0].name, "Wired connection 1") == 0 && strcmp(v[0].device, "eth0") == 0 &&
	    v[0].enabled && v[0].port == NULL, "nmcli: name and device");
	ok(n == 4 && strcmp(v[1].name, "jaccl-config eth1") == 0 && strcmp(v[1].device, "eth1") == 0,
	    "nmcli: CRLF");
	ok(n == 4 && strcmp(v[2].name, "spare (2)") == 0 && v[2].device == NULL,
	    "nmcli: a connection on no device");
	ok(n == 4 && strcmp(v[3].name, "lo") == 0 && v[3].device != NULL &&
	    strcmp(v[3].device, "lo") == 0, "nmcli: an escaped character is itself");
	netsvc_free(v, n);
}

int
main(void)
{
	(void)plan;
	(void)skip_all;
	test_route_get();
	test_ip();
	test_netsvc();
	return done_testing();
}
