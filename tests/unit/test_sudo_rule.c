/* SPDX-License-Identifier: MIT */
/*
 * sudo's long listing read as sudo applies it (parse_sudo.c), against
 * listings in the layout of sudo 1.9's `sudo -ll` (the stock simulated
 * Macs' real sudo printed these for the rules below), and the rule of
 * `jaccl-config sudoers` (sudo_rule.c): every command a plan, its rollback
 * and its restore can run is allowed by it without a password, checked by
 * the reader above; a command outside it is not.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "parse_sudo.h"
#include "sudo_rule.h"

#define HEAD "Matching Defaults entries for admin on mini2:\n" \
	"    env_reset, env_keep+=BLOCKSIZE\n\n" \
	"User admin may run the following commands on mini2:\n\n"
#define MACOS_ADMIN "Sudoers entry:\n    RunAsUsers: ALL\n    Commands:\n\tALL\n\n"

/* macOS's %admin ALL = (ALL) ALL, then the owner's scoped rule */
static const char scoped[] = HEAD MACOS_ADMIN
	"Sudoers entry:\n    RunAsUsers: root\n    Options: !authenticate\n    Commands:\n"
	"\t/sbin/ifconfig\n\t/sbin/route\n\t/usr/sbin/networksetup\n";

static const char all[] = HEAD MACOS_ADMIN
	"Sudoers entry:\n    RunAsUsers: ALL\n    Options: !authenticate\n    Commands:\n\tALL\n";

/* arguments, a negation after an allow, another user, a password entry */
static const char tight[] = HEAD MACOS_ADMIN
	"Sudoers entry:\n    RunAsUsers: root\n    Options: !authenticate\n    Commands:\n"
	"\t/sbin/ifconfig bridge0 down\n"
	"\t/sbin/ifconfig en[1-9] inet * netmask 255.255.255.252\n"
	"\t/usr/sbin/networksetup -createnetworkservice jaccl-config Thunderbolt 1 Thunderbolt 1\n"
	"\t/sbin/route \"\"\n"
	"\t/usr/bin/\n"
	"\t/sbin/ping ^-c [0-9]+$\n"
	"\t!/sbin/ifconfig bridge0 down\n\n"
	"Sudoers entry:\n    RunAsUsers: nobody\n    Options: !authenticate\n    Commands:\n"
	"\t/bin/sh\n\n"
	"Sudoers entry:\n    RunAsUsers: root\n    Options: authenticate\n    Commands:\n"
	"\t/bin/ls\n";

static enum sudo_verdict
allows(const char *l, const char *line)
{
	char *copy = strdup(line), *w[16], *path, *save = NULL;
	size_t n = 0;
	enum sudo_verdict v;

	path = strtok_r(copy, " ", &save);
	while (n < 16 && (w[n] = strtok_r(NULL, " ", &save)) != NULL)
		n++;
	v = sudo_list_allows(l, path, w, n);
	free(copy);
	return v;
}

static void
reader(void)
{
	char *svc[] = { "-createnetworkservice", "jaccl-config Thunderbolt 1", "Thunderbolt 1" };

	is_int(sudo_probe_mode(scoped, 0), JC_SUDO_SCOPED, "the owner's rule: scoped");
	is_int(sudo_probe_mode(all, 0), JC_SUDO_ALL, "NOPASSWD: ALL: all");
	is_int(sudo_probe_mode(HEAD MACOS_ADMIN, 0), JC_SUDO_NONE, "macOS's sudoers alone: none");
	is_int(sudo_probe_mode("sudo: a password is required\nsudo: a password is required\n", 1),
	    JC_SUDO_NONE, "a password asked: none");
	is_int(sudo_probe_mode("usage: sudo -h | -K | -k | -V\n", 0), JC_SUDO_ALL,
	    "no listing but sudo -n true passed: all");
	is_int(sudo_probe_mode("User root may run the following commands on h:\n\n"
	    "Sudoers entry:\n    RunAsUsers: ALL\n    Commands:\n\tALL\n", 0), JC_SUDO_ALL,
	    "root needs no password: all");
	is_int(sudo_probe_mode(NULL, 0), JC_SUDO_UNKNOWN, "not captured: unknown");
	is_int(allows(scoped, "/sbin/ifconfig en2 inet 192.168.0.1 netmask 255.255.255.252"),
	    SUDO_NOPASSWD, "scoped: ifconfig with any arguments");
	is_int(allows(scoped, "/bin/sh -c :"), SUDO_PASSWORD, "scoped: a shell needs a password");
	is_int(allows(tight, "/sbin/ifconfig bridge0 down"), SUDO_REFUSED,
	    "the last match decides: negated after allowed");
	is_int(allows(tight, "/sbin/ifconfig en2 inet 10.0.0.1 netmask 255.255.255.252"),
	    SUDO_NOPASSWD, "a glob on the interface and the address");
	is_int(allows(tight, "/sbin/ifconfig en0 inet 10.0.0.1 netmask 255.255.255.252"),
	    SUDO_PASSWORD, "... not another interface (macOS's ALL, with a password)");
	is_int(allows(tight, "/sbin/ifconfig en2 inet 10.0.0.1 netmask 255.0.0.0"), SUDO_PASSWORD,
	    "... nor another mask");
	is_int(sudo_list_allows(tight, "/usr/sbin/networksetup", svc, 3), SUDO_NOPASSWD,
	    "words with spaces joined as sudo joins them");
	is_int(allows(tight, "/sbin/route"), SUDO_NOPASSWD, "\"\": no arguments");
	is_int(allows(tight, "/sbin/route -n get x"), SUDO_PASSWORD, "\"\": ... only");
	is_int(allows(tight, "/usr/bin/true"), SUDO_NOPASSWD, "a folder: its commands");
	is_int(allows(tight, "/usr/bin/x/y"), SUDO_PASSWORD, "... not those below it");
	is_int(allows(tight, "/sbin/ping -c 3"), SUDO_NOPASSWD, "a regular expression");
	is_int(allows(tight, "/sbin/ping -c 3 -f"), SUDO_PASSWORD, "... anchored");
	is_int(allows(tight, "/bin/sh -c :"), SUDO_PASSWORD, "an entry for another user counts not");
	is_int(allows(tight, "/bin/ls"), SUDO_PASSWORD, "authenticate: a password");
	is_int(allows(HEAD "Sudoers entry:\n    RunAsUsers: root\n    Options: !authenticate\n"
	    "    Commands:\n\t/sbin/route -n add -host [0-9]*.[0-9]*.[0-9]*.[0-9]*\n"
	    "        [0-9]*.[0-9]*.[0-9]*.[0-9]*\n\t/sbin/ifconfig bridge0 up\n",
	    "/sbin/route -n add -host 10.0.0.2 10.0.0.1"), SUDO_NOPASSWD,
	    "a command sudo wrapped at 80 columns");
	is_int(allows(HEAD, "/sbin/ifconfig"), SUDO_REFUSED, "no entry: refused");
	is_int(allows("sudo: a password is required\n", "/sbin/ifconfig"), SUDO_REFUSED,
	    "no listing: refused");
}

/* The rule printed, as sudo -ll would list it back. */
static char *
as_listed(const char *rule)
{
	struct jc_buf b = { 0 };
	const char *p = rule;
	bool in = false;

	buf_puts(&b, HEAD MACOS_ADMIN
	    "Sudoers entry:\n    RunAsUsers: root\n    Options: !authenticate\n    Commands:\n");
	while (*p) {
		size_t l = strcspn(p, "\n");
		char *line = xstrndup(p, l);

		if (strncmp(line, "Cmnd_Alias", 10) == 0) {
			in = true;
		} else if (in && line[0] == '\t') {
			size_t e = strlen(line);

			while (e > 0 && (line[e - 1] == '\\' || line[e - 1] == ' ' ||
			    line[e - 1] == ','))
				line[--e] = '\0';
			buf_printf(&b, "%s\n", line);
		} else {
			in = false;
		}
		free(line);
		p += l + (p[l] == '\n');
	}
	return buf_steal(&b);
}

static void
rule(void)
{
	struct sudo_rule_sys s = { .plat = &jc_platform_macos };
	char *text, *l;
	static const char *const want[] = {
		"/sbin/ifconfig bridge0 down",
		"/sbin/ifconfig bridge0 up",
		"/sbin/ifconfig bridge0 deletem en2",
		"/sbin/ifconfig bridge0 addm en12",
		"/sbin/ifconfig en2 inet 192.168.0.1 netmask 255.255.255.252",
		"/sbin/ifconfig en2 inet 10.1.2.3 netmask 255.255.0.0 alias",
		"/sbin/ifconfig en2 inet 192.168.0.1 -alias",
		"/sbin/route -n delete -host 192.168.0.2",
		"/sbin/route -n add -host 192.168.0.2 -interface en2",
		"/sbin/route -n add -host 192.168.0.2 10.0.0.1",
	};
	static const char *const not[] = {
		"/sbin/ifconfig en0 inet 192.168.0.1 netmask 255.255.255.252",
		"/sbin/ifconfig bridge0 deletem en0",
		"/sbin/ifconfig en2 down",
		"/sbin/route -n flush",
		"/usr/sbin/networksetup -setnetworkserviceenabled Ethernet off",
		"/bin/sh -c :",
	};
	char *svc[] = { "-createnetworkservice", "jaccl-config Thunderbolt 1", "Thunderbolt 1" };
	char *bridge[] = { "-setnetworkserviceenabled", "Thunderbolt Bridge", "off" };

	sudo_rule_defaults(&s);
	text = sudo_rule_text(&s, 1, false, NULL);
	l = as_listed(text);
	for (size_t i = 0; i < JC_ARRAY_LEN(want); i++)
		ok(allows(l, want[i]) == SUDO_NOPASSWD, "the rule allows %s", want[i]);
	for (size_t i = 0; i < JC_ARRAY_LEN(not); i++)
		ok(allows(l, not[i]) != SUDO_NOPASSWD, "the rule does not allow %s", not[i]);
	ok(sudo_list_allows(l, "/usr/sbin/networksetup", svc, 3) != SUDO_NOPASSWD,
	    "without --persist: no networksetup");
	ok(strstr(text, "%admin ALL = (root) NOPASSWD: JACCL_CONFIG_MACOS\n") != NULL,
	    "for the admin group, as root");
	free(l);
	free(text);
	text = sudo_rule_text(&s, 1, true, NULL);
	l = as_listed(text);
	is_int(sudo_list_allows(l, "/usr/sbin/networksetup", svc, 3), SUDO_NOPASSWD,
	    "--persist: our service created");
	is_int(sudo_list_allows(l, "/usr/sbin/networksetup", bridge, 3), SUDO_NOPASSWD,
	    "--persist: the bridge's service off");
	free(l);
	free(text);
	sudo_rule_sys_clear(&s);
}

static void
rule_linux(void)
{
	struct sudo_rule_sys s = { .plat = &jc_platform_linux, .netmgr = JC_NETMGR_NM };
	char *text, *l;
	static const char *const want[] = {
		"/usr/sbin/ip addr replace 192.168.0.1/30 dev tb0",
		"/usr/sbin/ip addr add 10.1.2.3/24 dev tb0",
		"/usr/sbin/ip addr del 192.168.0.1/30 dev tb0",
		"/usr/sbin/ip link set tb0 up",
		"/usr/sbin/ip link set tb0 down",
		"/usr/sbin/ip route replace 192.168.0.2/32 dev tb0",
		"/usr/sbin/ip route replace 192.168.0.2/32 via 10.0.0.1 dev tb0",
		"/usr/sbin/ip route del 192.168.0.2/32 dev tb0",
		"/usr/bin/nmcli connection delete jaccl-config tb0",
	};
	static const char *const not[] = {
		"/usr/sbin/ip link set eth0 down",
		"/usr/sbin/ip addr flush dev tb0",
		"/usr/bin/nmcli connection delete Wired",
		"/bin/sh -c :",
	};

	strv_push(&s.ifaces, "tb0");
	sudo_rule_defaults(&s);
	text = sudo_rule_text(&s, 1, true, NULL);
	l = as_listed(text);
	for (size_t i = 0; i < JC_ARRAY_LEN(want); i++)
		ok(allows(l, want[i]) == SUDO_NOPASSWD, "Linux: the rule allows %s", want[i]);
	for (size_t i = 0; i < JC_ARRAY_LEN(not); i++)
		ok(allows(l, not[i]) != SUDO_NOPASSWD, "Linux: the rule does not allow %s", not[i]);
	ok(strstr(text, "%sudo ALL = (root) NOPASSWD: JACCL_CONFIG_LINUX\n") != NULL &&
	    strstr(text, "Not included") == NULL, "Linux: for the sudo group; NetworkManager fits");
	free(l);
	free(text);
	s.netmgr = JC_NETMGR_NETWORKD;
	text = sudo_rule_text(&s, 1, true, NULL);
	l = as_listed(text);
	ok(strstr(text, "Not included: --persist with systemd-networkd or ifupdown") != NULL &&
	    strstr(text, "/bin/sh") == NULL && allows(l, "/usr/bin/networkctl reload") == SUDO_NOPASSWD,
	    "Linux, systemd-networkd: the files written through sh left out and said, the reload in");
	free(l);
	free(text);
	sudo_rule_sys_clear(&s);
}

int
main(void)
{
	reader();
	rule();
	rule_linux();
	return done_testing();
}
