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

int
main(void)
{
	(void)plan;
	(void)skip_all;
	test_networksetup();
	test_ifconfig();
	test_small();
	return done_testing();
}
