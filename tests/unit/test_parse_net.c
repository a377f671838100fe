/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the macOS network parsers: networksetup hardware ports
 * (non-monotonic maps, missing fields, unsafe names), ifconfig (bridges,
 * TABs or spaces, elisions, netmasks, merging), ipconfig, sw_vers and
 * rdma_ctl answers.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "parse_net.h"
#include "../tap.h"

/* A string literal and its length. */
#define S(x) x, sizeof(x) - 1

static void
test_networksetup(void)
{
	static const char text[] =
	    "\n"
	    "Hardware Port: Ethernet\nDevice: en0\nEthernet Address: 2:0:0:0:0:AB\n\n"
	    "Hardware Port: Thunderbolt Bridge\nDevice: bridge0\nEthernet Address: N/A\n\n"
	    "Hardware Port: Thunderbolt 2\r\nDevice:   en6  \n\n"
	    "Hardware Port: Thunderbolt 1\nDevice: en1\nEthernet Address: 36:00:00:00:00:01\n\n"
	    "Hardware Port: Evil\nDevice: en1;reboot\n\n"
	    "Hardware Port: Orphan\n\n"
	    "VLAN Configurations\n===================\n";
	struct jc_hwport *p;
	size_t n;
	struct jc_err e;
	struct jc_strv notes = { 0 };

	ok(parse_networksetup(text, strlen(text), &p, &n, &notes, &e) == 0, "networksetup parses");
	is_int((long long)n, 4, "4 ports (unsafe and device-less skipped)");
	if (n == 4) {
		is_str(p[0].mac, "02:00:00:00:00:ab", "MAC normalised");
		ok(p[1].mac == NULL, "N/A MAC is NULL");
		is_str(p[2].port, "Thunderbolt 2", "CR stripped from port name");
		is_str(p[2].device, "en6", "blanks around device stripped");
		is_str(p[3].device, "en1", "non-monotonic order kept");
	}
	ok(notes.n == 1, "a note for the unsafe device");
	strv_free(&notes);
	parse_hwports_free(p, n);
	ok(parse_networksetup("", 0, &p, &n, NULL, &e) == 0 && n == 0, "empty: 0 ports");
	ok(parse_networksetup(S("garbage\nmore garbage\n"), &p, &n, NULL, &e) < 0,
	    "garbage: error");
}

static const char ifc[] =
	"lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> mtu 16384\n"
	"\tinet 127.0.0.1 netmask 0xff000000\n"
	"en0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
	"\tether 02:aa:bb:cc:dd:ee \n"
	"\tinet6 fe80::1%en0 prefixlen 64 scopeid 0x4 \n"
	"\tinet 192.168.1.20 netmask 0xffffff00 broadcast 192.168.1.255\n"
	"\tinet 10.0.0.5 netmask 255.255.0.0\n"
	"\tstatus: active\n"
	"en2: flags=8963<UP,BROADCAST,SMART,RUNNING,PROMISC,SIMPLEX,MULTICAST> mtu 9000\n"
	"\tstatus: inactive\n"
	"bridge0: flags=8822<BROADCAST,SMART,SIMPLEX,MULTICAST> mtu 1500\n"
	"\tConfiguration:\n"
	"\t\tid 0:0:0:0:0:0 priority 0 hellotime 0 fwddelay 0\n"
	"\tmember: en2 flags=3<LEARNING,DISCOVER>\n"
	"\t        ifmaxaddr 0 port 11 priority 0 path cost 0\n"
	"\tmember: $(x) flags=3<LEARNING,DISCOVER>\n"
	"\tmember: en3 flags=3<LEARNING,DISCOVER>\n"
	"\tstatus: inactive\n"
	"utun0: flags=8051<UP,POINTOPOINT,RUNNING,MULTICAST> mtu 1380\n"
	"\tinet 10.9.9.9 --> 10.9.9.10 netmask 0xffffffff\n"
	"bad`name: flags=8863<UP> mtu 1500\n"
	"\tinet 1.2.3.4 netmask 0xffffff00\n";

static void
test_ifconfig(void)
{
	struct jc_iface *f = NULL;
	size_t n = 0;
	struct jc_err e;
	struct jc_strv notes = { 0 };

	ok(parse_ifconfig(ifc, strlen(ifc), &f, &n, &notes, &e) == 0, "ifconfig parses");
	is_int((long long)n, 5, "5 interfaces (unsafe name skipped)");
	if (n == 5) {
		is_int(f[0].up, JC_YES, "lo0 up");
		is_int(f[0].carrier, JC_UNKNOWN, "lo0 no status: unknown");
		is_int(f[0].prefix[0], 8, "lo0 /8");
		is_str(f[1].mac, "02:aa:bb:cc:dd:ee", "en0 ether");
		is_int((long long)f[1].ninet, 2, "en0 two IPv4");
		is_int(f[1].prefix[0], 24, "hex netmask /24");
		is_int(f[1].prefix[1], 16, "dotted netmask /16");
		is_int(f[1].carrier, JC_YES, "en0 active");
		is_int(f[2].mtu, 9000, "en2 mtu 9000");
		is_int(f[2].carrier, JC_NO, "en2 inactive");
		is_int(f[3].up, JC_NO, "bridge0 down (flags without UP)");
		ok(f[3].is_bridge, "bridge0 is a bridge");
		is_int((long long)f[3].nmembers, 2, "two safe members");
		is_int(f[4].prefix[0], 32, "point-to-point /32");
	}
	ok(notes.n == 2, "notes for the unsafe member and interface (%zu)", notes.n);
	strv_free(&notes);
	/* A later output for the same interface replaces it. */
	ok(parse_ifconfig(S("en2: flags=8863<UP> mtu 1500\n    inet 169.254.1.1 netmask 0xffff0000\n"),
	    &f, &n, NULL, &e) == 0 && n == 5 && f[2].mtu == 1500 && f[2].ninet == 1 &&
	    f[2].prefix[0] == 16, "merged: en2 replaced, no duplicate");
	parse_ifaces_free(f, n);
	f = NULL;
	n = 0;
	ok(parse_ifconfig(S("not ifconfig\n"), &f, &n, NULL, &e) < 0, "garbage: error");
	ok(parse_ifconfig(S("...\n"), &f, &n, NULL, &e) == 0 && n == 0, "elision only: empty");
}

static void
test_small(void)
{
	char *a, *b;

	is_int(parse_netmask("0xffffff00"), 24, "0xffffff00");
	is_int(parse_netmask("0xFFFFFFFC"), 30, "upper-case hex /30");
	is_int(parse_netmask("255.255.255.252"), 30, "dotted /30");
	is_int(parse_netmask("0x00000000"), 0, "/0");
	is_int(parse_netmask("0xff00ff00"), -1, "non-contiguous");
	is_int(parse_netmask("255.255.255"), -1, "short dotted");
	is_int(parse_netmask("0x"), -1, "empty hex");
	is_int(parse_netmask("0x1ffffffff"), -1, "too long");
	a = parse_prefix_mask(30);
	is_str(a, "255.255.255.252", "prefix 30 mask");
	free(a);
	a = parse_prefix_mask(0);
	is_str(a, "0.0.0.0", "prefix 0 mask");
	free(a);
	ok(parse_prefix_mask(33) == NULL, "prefix 33 refused");
	a = parse_ipv4_line("10.0.0.1\n");
	is_str(a, "10.0.0.1", "ipconfig address");
	free(a);
	ok(parse_ipv4_line("") == NULL && parse_ipv4_line("garbage\n") == NULL &&
	    parse_ipv4_line("10.0.0.256\n") == NULL, "ipconfig without address");
	a = parse_word_line("\n  Mac15,14 \n");
	is_str(a, "Mac15,14", "word line");
	free(a);
	ok(parse_word_line("two words\n") == NULL, "not a plain word");
	parse_sw_vers("ProductName:\t\tmacOS\nProductVersion:\t\t26.2\nBuildVersion:\t\t25C56\n",
	    &a, &b);
	is_str(a, "26.2", "sw_vers version");
	is_str(b, "25C56", "sw_vers build");
	free(a);
	free(b);
	parse_sw_vers("nothing\n", &a, &b);
	ok(a == NULL && b == NULL, "sw_vers garbage: unknown");
	/* sysctl hw.model kern.osproductversion kern.osversion, as on macOS 26 */
	{
		static const char sc[] = "hw.model: Mac16,11\nkern.osproductversion: 26.2\n"
		    "kern.osversion: 25C56\n";

		a = parse_sysctl(sc, "hw.model");
		is_str(a, "Mac16,11", "sysctl hw.model");
		free(a);
		a = parse_sysctl(sc, "kern.osproductversion");
		is_str(a, "26.2", "sysctl kern.osproductversion");
		free(a);
		a = parse_sysctl(sc, "kern.osversion");
		is_str(a, "25C56", "sysctl kern.osversion");
		free(a);
		a = parse_sysctl("kern.osversionx: 1\nkern.osversion = 25C56\n", "kern.osversion");
		is_str(a, "25C56", "sysctl: the exact name, '=' form");
		free(a);
		ok(parse_sysctl("hw.model: two words\n", "hw.model") == NULL &&
		    parse_sysctl("sysctl: unknown oid 'hw.model'\n", "hw.model") == NULL &&
		    parse_sysctl("", "hw.model") == NULL, "sysctl: no plain value, unknown");
	}
	is_int(parse_rdma_ctl("enabled\n"), JC_YES, "rdma_ctl enabled");
	is_int(parse_rdma_ctl("  Disabled "), JC_NO, "rdma_ctl Disabled with blanks");
	is_int(parse_rdma_ctl("partially enabled"), JC_UNKNOWN, "rdma_ctl other: unknown");
	is_int(parse_rdma_ctl(""), JC_UNKNOWN, "rdma_ctl empty: unknown");
}

/* One route as "dest/len iface via" (via "-" when none, iface "-" too). */
static char *
route_text(const struct jc_route *r)
{
	return xasprintf("%s/%d %s %s", r->dest, r->len, r->iface ? r->iface : "-",
	    r->via ? r->via : "-");
}

static bool
routes_are(const struct jc_route *r, size_t n, const char *const *want, size_t nw)
{
	bool same = n == nw;

	for (size_t i = 0; i < n; i++) {
		char *t = route_text(&r[i]);

		if (i >= nw || strcmp(t, want[i]) != 0) {
			diag("route %zu: got %s, want %s", i, t, i < nw ? want[i] : "(none)");
			same = false;
		}
		free(t);
	}
	return same;
}

/*
 * netstat -rn -f inet laid out as macOS's netstat prints it (route.c of
 * network_cmds: destination and gateway %-18s, flags %-10.10s, Netif
 * %14.14s, expire %6s), a Mac with a VPN on utun3 that routes 0/1, 128.0/1
 * and 192.168.0.0/16, and a home network on en0.
 */
static const char netstat_vpn[] =
    "Routing tables\n"
    "\n"
    "Internet:\n"
    "Destination        Gateway            Flags               Netif Expire\n"
    "default            192.168.1.1        UGScg                 en0       \n"
    "default            link#18            UCSIg               utun3       \n"
    "0/1                utun3              USc                 utun3       \n"
    "10.8/16            utun3              USc                 utun3       \n"
    "10.8.0.1           10.8.0.2           UH                  utun3       \n"
    "127                127.0.0.1          UCS                   lo0       \n"
    "127.0.0.1          127.0.0.1          UH                    lo0       \n"
    "128.0/1            utun3              USc                 utun3       \n"
    "169.254            link#6             UCS                   en0      !\n"
    "192.168.0/16       utun3              USc                 utun3       \n"
    "192.168.1          link#6             UCS                   en0      !\n"
    "192.168.1.1/32     link#6             UCS                   en0      !\n"
    "192.168.1.1        3c:22:fb:10:aa:1   UHLWIir               en0   1193\n"
    "192.168.1.23/32    link#6             UCS                   en0      !\n"
    "224.0.0/4          link#6             UmCS                  en0      !\n"
    "255.255.255.255/32 link#6             UCS                   en0      !\n";

/* The layout before macOS 11.3, with Refs and Use, then the IPv6 table. */
static const char netstat_old[] =
    "Routing tables\n"
    "\n"
    "Internet:\n"
    "Destination        Gateway            Flags        Refs      Use   Netif Expire\n"
    "default            10.20.30.1         UGSc            7        3     en0\n"
    "10.20.30/24        link#4             UCS             2        0     en0\n"
    "10.20.30.41        3c:22:fb:10:aa:2   UHLWI           0       11     en0    611\n"
    "172.16.5/24        link#9             UC              1        0  vmnet1\n"
    "192.168.57         link#10            UC              1        0  vmnet8\n"
    "\n"
    "Internet6:\n"
    "Destination                             Gateway                         Flags         Netif Expire\n"
    "default                                 fe80::1%en0                     UGcg            en0\n";

static void
test_netstat(void)
{
	static const char *const vpn[] = {
		"0.0.0.0/0 en0 192.168.1.1", "0.0.0.0/0 utun3 -", "0.0.0.0/1 utun3 -",
		"10.8.0.0/16 utun3 -", "10.8.0.1/32 utun3 10.8.0.2", "127.0.0.0/8 lo0 127.0.0.1",
		"127.0.0.1/32 lo0 127.0.0.1", "128.0.0.0/1 utun3 -", "169.254.0.0/16 en0 -",
		"192.168.0.0/16 utun3 -", "192.168.1.0/24 en0 -", "192.168.1.1/32 en0 -",
		"192.168.1.1/32 en0 -", "192.168.1.23/32 en0 -", "224.0.0.0/4 en0 -",
		"255.255.255.255/32 en0 -",
	};
	static const char *const old[] = {
		"0.0.0.0/0 en0 10.20.30.1", "10.20.30.0/24 en0 -", "10.20.30.41/32 en0 -",
		"172.16.5.0/24 vmnet1 -", "192.168.57.0/24 vmnet8 -",
	};
	struct jc_route *r;
	size_t n;
	struct jc_strv notes = { 0 };
	struct jc_err err = { 0 };

	ok(parse_netstat_routes(S(netstat_vpn), &r, &n, &notes, &err) == 0 &&
	    routes_are(r, n, vpn, JC_ARRAY_LEN(vpn)) && notes.n == 0,
	    "netstat: every route of the VPN Mac, abbreviated networks read by their class");
	jc_routes_free(r, n);
	ok(parse_netstat_routes(S(netstat_old), &r, &n, &notes, &err) == 0 &&
	    routes_are(r, n, old, JC_ARRAY_LEN(old)) && notes.n == 0,
	    "netstat: the older layout (Refs, Use) by its header; the IPv6 table left out");
	jc_routes_free(r, n);
	ok(parse_netstat_routes(S("Routing tables\n"), &r, &n, &notes, &err) == 0 && n == 0,
	    "netstat: no IPv4 route at all is an empty table");
	ok(parse_netstat_routes(S("en0: flags=8863<UP> mtu 1500\n"), &r, &n, &notes, &err) < 0 &&
	    r == NULL && n == 0 && strstr(err.msg, "not netstat") != NULL, "netstat: garbage refused");
	ok(parse_netstat_routes(S(""), &r, &n, &notes, &err) < 0, "netstat: empty output refused");
	ok(parse_netstat_routes(S("Routing tables\n\nInternet:\n"
	    "Destination        Gateway            Flags               Netif Expire\n"
	    "10.1.2.3.4         link#4             UCS                   en0\n"
	    "10.2/16            link#4             UCS            en0;reboot\n"
	    "10.3&0xff00ff00    link#4             UCS                   en0\n"
	    "10.4/40            link#4             UCS                   en0\n"
	    "10.5/8\n"
	    "10.6/16            link#4             UCS                   en0\n"), &r, &n, &notes,
	    &err) == 0 && n == 1 && strcmp(r[0].dest, "10.6.0.0") == 0 && r[0].len == 16 &&
	    notes.n == 5, "netstat: lines that do not fit skipped with a note each");
	jc_routes_free(r, n);
	strv_free(&notes);
}

int
main(void)
{
	(void)plan;
	(void)skip_all;
	test_networksetup();
	test_ifconfig();
	test_small();
	test_netstat();
	return done_testing();
}
