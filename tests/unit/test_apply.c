/* SPDX-License-Identifier: MIT */
/*
 * Tests of the restore logic of apply (apply_undo.c) without hosts: saved
 * host states (the files of the state directory) against current ones, the
 * commands that put a Mac and a Linux host back, and saved files that must
 * be refused (names unfit for a command, facts about other interfaces).
 */
#include "config.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "apply.h"

/* A saved Mac state: en2 planned 192.168.0.1 (peer .2), bridge0, a route. */
static char *
mac_state(const char *en2_out, const char *bridge_out, const char *route_out, int route_status)
{
	json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:[{s:s, s:s, s:s}], s:[{s:s, s:s, s:n, s:i, s:s},"
	    " {s:s, s:s, s:n, s:i, s:s}, {s:s, s:s, s:s, s:i, s:s}]}",
	    "version", 1, "host", "mac1", "target", "mac1", "os", "macos",
	    "addresses", "iface", "en2", "ip", "192.168.0.1", "peer_ip", "192.168.0.2",
	    "facts",
	    "kind", "addrs", "iface", "en2", "peer", "status", 0, "output", en2_out,
	    "kind", "bridge", "iface", "bridge0", "peer", "status", 0, "output", bridge_out,
	    "kind", "route", "iface", "en2", "peer", "192.168.0.2", "status", route_status,
	    "output", route_out);
	char *s = json_dumps(j, 0);

	json_decref(j);
	return s;
}

static const char EN2_BARE[] =
    "en2: flags=8963<UP,BROADCAST,SMART,RUNNING,PROMISC,SIMPLEX,MULTICAST> mtu 1500\n"
    "\toptions=460<TSO4,TSO6,CHANNEL_IO>\n\tether 36:1a:2b:3c:4d:01 \n"
    "\tmedia: autoselect <full-duplex>\n\tstatus: active\n";
static const char EN2_OLD[] =
    "en2: flags=8963<UP,BROADCAST,SMART,RUNNING,PROMISC,SIMPLEX,MULTICAST> mtu 1500\n"
    "\tether 36:1a:2b:3c:4d:01 \n"
    "\tinet 10.9.9.9 netmask 0xffffff00 broadcast 10.9.9.255\n"
    "\tstatus: active\n";
static const char EN2_SET[] =
    "en2: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
    "\tether 36:1a:2b:3c:4d:01 \n"
    "\tinet 192.168.0.1 netmask 0xfffffffc broadcast 192.168.0.3\n"
    "\tstatus: active\n";
static const char BR_UP[] =
    "bridge0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
    "\tConfiguration:\n"
    "\tmember: en2 flags=3<LEARNING,DISCOVER>\n"
    "\tmember: en3 flags=3<LEARNING,DISCOVER>\n"
    "\tstatus: active\n";
static const char BR_DOWN[] =
    "bridge0: flags=8822<BROADCAST,SMART,SIMPLEX,MULTICAST> mtu 1500\n"
    "\tConfiguration:\n"
    "\tmember: en3 flags=3<LEARNING,DISCOVER>\n"
    "\tstatus: inactive\n";
static const char ROUTE_NONE[] = "route: writing to routing socket: not in table\n";
static const char ROUTE_HOST[] =
    "   route to: 192.168.0.2\ndestination: 192.168.0.2\n  interface: en2\n"
    "      flags: <UP,HOST,DONE,STATIC>\n";
static const char ROUTE_COVER[] =
    "   route to: 192.168.0.2\ndestination: 192.168.0.2\n  interface: en2\n"
    "      flags: <UP,DONE>\n";

static void
diff(const char *saved, const char *cur, const char *want, const char *name)
{
	struct jc_strv c = { 0 };
	struct jc_err err = { 0 };
	struct jc_buf b = { 0 };
	int r = apply_state_diff(saved, strlen(saved), cur, strlen(cur), &c, &err);

	if (r < 0)
		diag("%s", err.msg);
	buf_puts(&b, "");
	for (size_t i = 0; i < c.n; i++)
		buf_printf(&b, "%s\n", c.v[i]);
	is_str(b.data, want, name);
	buf_free(&b);
	strv_free(&c);
}

static void
linux_case(void)
{
	json_t *saved = json_pack("{s:i, s:s, s:s, s:s, s:[{s:s, s:s, s:s}], s:[{s:s, s:s, s:n, s:i,"
	    " s:s, s:i, s:s}, {s:s, s:s, s:s, s:i, s:s}]}",
	    "version", 1, "host", "lx", "target", "root@lx:2222", "os", "linux",
	    "addresses", "iface", "eth1", "ip", "192.168.0.5", "peer_ip", "192.168.0.6",
	    "facts",
	    "kind", "addrs", "iface", "eth1", "peer", "status", 0, "output", "",
	    "link_status", 0, "link_output", "3: eth1: <BROADCAST,MULTICAST> mtu 1500 state DOWN\n",
	    "kind", "route", "iface", "eth1", "peer", "192.168.0.6", "status", 0, "output", "");
	json_t *cur = json_deep_copy(saved);
	json_t *f = json_array_get(json_object_get(cur, "facts"), 0);
	char *s, *c;

	json_object_set_new(f, "output", json_string(
	    "3: eth1    inet 192.168.0.5/30 brd 192.168.0.7 scope global eth1\\       valid_lft forever\n"));
	json_object_set_new(f, "link_output", json_string(
	    "3: eth1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP\n"));
	json_object_set_new(json_array_get(json_object_get(cur, "facts"), 1), "output",
	    json_string("192.168.0.6 dev eth1 scope link \n"));
	s = json_dumps(saved, 0);
	c = json_dumps(cur, 0);
	diff(s, c, "sudo -n ip route del 192.168.0.6/32\n"
	    "sudo -n ip addr del 192.168.0.5/30 dev eth1\n"
	    "sudo -n ip link set eth1 down\n", "Linux: route, address and link state put back");
	diff(s, s, "", "Linux: nothing differs, nothing to run");
	diff(c, s, "sudo -n ip route replace 192.168.0.6/32 dev eth1\n"
	    "sudo -n ip addr add 192.168.0.5/30 dev eth1\n"
	    "sudo -n ip link set eth1 up\n", "Linux: and the other way round");
	free(s);
	free(c);
	json_decref(saved);
	json_decref(cur);
}

/* `networksetup -listnetworkserviceorder` before a persistent setup, and after. */
static const char SVC_BEFORE[] =
    "An asterisk (*) denotes that a network service is disabled.\n"
    "(1) Ethernet\n(Hardware Port: Ethernet, Device: en0)\n\n"
    "(2) Thunderbolt Bridge\n(Hardware Port: Thunderbolt Bridge, Device: bridge0)\n\n"
    "(*) Wi-Fi\n(Hardware Port: Wi-Fi, Device: en1)\n\n"
    "(3) My Thunderbolt 2\n(Hardware Port: Thunderbolt 2, Device: en3)\n\n";
static const char SVC_AFTER[] =
    "An asterisk (*) denotes that a network service is disabled.\n"
    "(1) Ethernet\n(Hardware Port: Ethernet, Device: en0)\n\n"
    "(*) Thunderbolt Bridge\n(Hardware Port: Thunderbolt Bridge, Device: bridge0)\n\n"
    "(2) Wi-Fi\n(Hardware Port: Wi-Fi, Device: en1)\n\n"
    "(*) My Thunderbolt 2\n(Hardware Port: Thunderbolt 2, Device: en3)\n\n"
    "(3) jaccl-config Thunderbolt 1\n(Hardware Port: Thunderbolt 1, Device: en2)\n\n"
    "(4) jaccl-config Thunderbolt 1; reboot\n(Hardware Port: Thunderbolt 1, Device: en2)\n\n";

/* mac_state() with a services fact whose output is svc_out. */
static char *
mac_state_svc(const char *svc_out)
{
	char *base = mac_state(EN2_BARE, BR_UP, ROUTE_NONE, 1), *s;
	json_t *j = json_loads(base, 0, NULL);

	json_array_append_new(json_object_get(j, "facts"), json_pack("{s:s, s:s, s:n, s:i, s:s}",
	    "kind", "services", "iface", "services", "peer", "status", 0, "output", svc_out));
	s = json_dumps(j, 0);
	json_decref(j);
	free(base);
	return s;
}

/*
 * Restore after --persist: our service goes, the bridge's service comes
 * back on; Wi-Fi (enabled since) and a service of the user's on a cable
 * port (disabled since) are not ours and not the bridge's: left alone; a
 * name unfit for a command is never named.
 */
/*
 * A Linux host with systemd-networkd: its saved files of ours (eth1's not
 * there, eth2's an earlier run's, with another address) against the files
 * after a --persist setup (both written). A saved content that is not a
 * file of ours (an ifupdown "up" hook, a quote) is never written back.
 */
static char *
files_state(const char *mgr, const char *iface2, int st1, const char *out1, int st2,
    const char *out2)
{
	json_t *j = json_pack("{s:i, s:s, s:s, s:s, s:[{s:s, s:s, s:s}, {s:s, s:s, s:s}],"
	    " s:[{s:s, s:s, s:s, s:i, s:s, s:i, s:s}, {s:s, s:s, s:s, s:i, s:s, s:i, s:s}]}",
	    "version", 1, "host", "lx", "target", "lx", "os", "linux",
	    "addresses", "iface", "eth1", "ip", "192.168.0.1", "peer_ip", "192.168.0.2",
	    "iface", "eth2", "ip", "192.168.0.5", "peer_ip", "192.168.0.6",
	    "facts",
	    "kind", "file", "iface", "eth1", "peer", mgr, "status", st1 ? 1 : 0, "output", out1,
	    "link_status", st1, "link_output", "",
	    "kind", "file", "iface", iface2, "peer", mgr, "status", st2 ? 1 : 0, "output", out2,
	    "link_status", st2, "link_output", "");
	char *s = json_dumps(j, 0);

	json_decref(j);
	return s;
}

#define EARLIER_Q "# written by jaccl-config --persist\n[Match]\nName=eth2\n\n[Network]\n" \
	"Address=192.168.9.5/30\nLinkLocalAddressing=ipv6\n"

static void
files_case(void)
{
	static const char nofile[] = "cat: /etc/systemd/network/10-jaccl-config-eth1.network: "
	    "No such file or directory\n";
	static const char earlier[] = "# written by jaccl-config --persist\n[Match]\nName=eth2\n\n"
	    "[Network]\nAddress=192.168.9.5/30\nLinkLocalAddressing=ipv6\n";
	static const char hook[] = "# written by jaccl-config --persist\nauto eth2\n"
	    "iface eth2 inet static\n    address 192.168.9.5/30\n    up /bin/sh /tmp/x\n";
	char *before = files_state("systemd-networkd", "eth2", 1, nofile, 0, earlier);
	char *after = files_state("systemd-networkd", "eth2", 0, "[Match]\nName=eth1\n", 0,
	    "[Match]\nName=eth2\n");
	char *gone = files_state("systemd-networkd", "eth2", 1, nofile, 1, nofile);
	char *bad;
	struct jc_strv c = { 0 };
	struct jc_err err = { 0 };

	diff(before, after, "sudo -n rm -f /etc/systemd/network/10-jaccl-config-eth1.network\n"
	    "sudo -n sh -c 'printf %s \"$1\" > \"$2\"' sh '" EARLIER_Q "' "
	    "/etc/systemd/network/10-jaccl-config-eth2.network\n",
	    "networkd: the file added removed, the one replaced written back (quoted)");
	diff(before, before, "", "networkd: nothing differs, nothing to run");
	diff(before, gone, "sudo -n sh -c 'printf %s \"$1\" > \"$2\"' sh '" EARLIER_Q "' "
	    "/etc/systemd/network/10-jaccl-config-eth2.network\n",
	    "networkd: a file that was there and is gone comes back");
	/* a tampered state: an ifupdown "up" hook (run as root at boot), a quote */
	bad = files_state("ifupdown", "eth2", 1, nofile, 0, hook);
	ok(apply_state_diff(bad, strlen(bad), gone, strlen(gone), &c, &err) < 0 && c.n == 0 &&
	    strstr(err.msg, "not one a setup of ours writes") != NULL,
	    "a saved file with an up hook is refused, nothing to run (%s)", err.msg);
	free(bad);
	bad = files_state("systemd-networkd", "eth2", 1, nofile, 0, "Name=it's\n");
	ok(apply_state_diff(bad, strlen(bad), gone, strlen(gone), &c, &err) < 0 && c.n == 0,
	    "a saved file that is not ours (a quote in it) is refused");
	free(bad);
	free(after);
	after = files_state("ifupdown", "eth2", 0, "auto eth1\n", 1, nofile);
	free(gone);
	gone = files_state("ifupdown", "eth2", 1, nofile, 1, nofile);
	diff(gone, after, "sudo -n rm -f /etc/network/interfaces.d/jaccl-config-eth1\n",
	    "ifupdown: its file removed");
	bad = files_state("networkmanager", "eth2", 1, nofile, 1, nofile);
	ok(apply_state_diff(bad, strlen(bad), bad, strlen(bad), &c, &err) < 0,
	    "a file fact of another manager is refused");
	free(bad);
	bad = files_state("systemd-networkd", "eth0", 1, nofile, 1, nofile);
	ok(apply_state_diff(bad, strlen(bad), bad, strlen(bad), &c, &err) < 0,
	    "a file fact of an interface not planned is refused");
	strv_free(&c);
	free(bad);
	free(before);
	free(after);
	free(gone);
}

static void
services_case(void)
{
	char *before = mac_state_svc(SVC_BEFORE), *after = mac_state_svc(SVC_AFTER);

	diff(before, after, "sudo -n networksetup -setnetworkserviceenabled 'Thunderbolt Bridge' on\n"
	    "sudo -n networksetup -removenetworkservice 'jaccl-config Thunderbolt 1'\n",
	    "Mac --persist: our service removed, the bridge's service on again, nothing else");
	diff(before, before, "", "Mac --persist: nothing differs, nothing to run");
	diff(after, before, "sudo -n networksetup -setnetworkserviceenabled 'Thunderbolt Bridge' off\n",
	    "Mac --persist: a service of ours that is gone is not made again");
	free(before);
	free(after);
}

static void
refused(const char *text, const char *name)
{
	struct jc_strv c = { 0 };
	struct jc_err err = { 0 };
	int r = apply_state_diff(text, strlen(text), text, strlen(text), &c, &err);

	ok(r < 0, "refused: %s", name);
	is_int((long long)c.n, 0, "... and no command");
	if (r >= 0)
		diag("accepted, %zu commands", c.n);
	strv_free(&c);
}

int
main(void)
{
	char *before = mac_state(EN2_BARE, BR_UP, ROUTE_NONE, 1);
	char *after = mac_state(EN2_SET, BR_DOWN, ROUTE_HOST, 0);
	char *old = mac_state(EN2_OLD, BR_UP, ROUTE_COVER, 0);
	char *s;

	(void)plan;
	(void)skip_all;
	diff(before, after, "sudo -n route -n delete -host 192.168.0.2\n"
	    "sudo -n ifconfig en2 inet 192.168.0.1 -alias\n"
	    "sudo -n ifconfig bridge0 addm en2\n"
	    "sudo -n ifconfig bridge0 up\n", "Mac: setup undone (route, address, member, bridge up)");
	diff(before, before, "", "Mac: nothing differs, nothing to run");
	diff(old, after, "sudo -n route -n delete -host 192.168.0.2\n"
	    "sudo -n ifconfig en2 inet 192.168.0.1 -alias\n"
	    "sudo -n ifconfig en2 inet 10.9.9.9 netmask 255.255.255.0 alias\n"
	    "sudo -n ifconfig bridge0 addm en2\n"
	    "sudo -n ifconfig bridge0 up\n",
	    "Mac: a prior address comes back; a route that only covers the peer is not a host route");
	diff(after, before, "sudo -n route -n add -host 192.168.0.2 -interface en2\n"
	    "sudo -n ifconfig en2 inet 192.168.0.1 netmask 255.255.255.252 alias\n"
	    "sudo -n ifconfig bridge0 deletem en2\n"
	    "sudo -n ifconfig bridge0 down\n", "Mac: the other way round");
	linux_case();
	services_case();
	files_case();

	refused("{", "not JSON");
	refused("{\"version\": 1}", "no host");
	s = mac_state(EN2_BARE, BR_UP, ROUTE_NONE, 1);
	{
		/* an address entry naming something that is not an interface */
		char *p = strstr(s, "\"en2\"");

		memcpy(p, "\";x\"", 4);
		refused(s, "an interface name unfit for a command");
	}
	free(s);
	{
		json_t *j = json_loads(before, 0, NULL);

		json_object_set_new(json_array_get(json_object_get(j, "facts"), 0), "iface",
		    json_string("en9"));
		s = json_dumps(j, 0);
		refused(s, "a fact about an interface that is not planned");
		free(s);
		json_object_set_new(j, "target", json_string("-oProxyCommand=x"));
		s = json_dumps(j, 0);
		refused(s, "a target that is not a plain word");
		free(s);
		json_decref(j);
	}
	{
		char *sv = mac_state_svc(SVC_BEFORE);
		json_t *j = json_loads(sv, 0, NULL);

		json_object_set_new(json_array_get(json_object_get(j, "facts"), 3), "iface",
		    json_string("en2"));
		s = json_dumps(j, 0);
		refused(s, "a services fact that names an interface");
		free(s);
		json_decref(j);
		free(sv);
	}
	free(before);
	free(after);
	free(old);
	return done_testing();
}
