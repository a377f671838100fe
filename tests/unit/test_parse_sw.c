/* SPDX-License-Identifier: MIT */
/*
 * The parsers of the doctor's own outputs (parse_sw.h) and of the record
 * of the last setup (setup_record.h). Sources of the sample outputs:
 *   pmset -g          a MacBook on macOS 12, real-world-systems.com/docs/pmset.1.html
 *                     (with "sleep 1 (sleep prevented by sharingd)")
 *   socketfilterfw    "(State = 0)" and "(State = 1)": rgcr/m-cli issue 160;
 *                     "(State = 1)" also kolide.com/features/checks/mac-firewall;
 *                     "blocking all ... (State = 2)": dan-snelson/Mac-Health-Check
 *                     PR 8; older "enabled. (State = 2)": rgcr/m-cli issue 160
 *   route -n get      real-world-systems.com/docs/route.1.html (destination default)
 *   ip route show     iproute2 6.1 on this project's build machine
 * Expected values are read off those texts by hand.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../tap.h"
#include "parse_sw.h"
#include "probe.h"
#include "setup_record.h"

static const char PMSET_LAPTOP[] =
    "System-wide power settings:\n"
    "Currently in use:\n"
    " lidwake              1\n"
    " standby              1\n"
    " ttyskeepawake        1\n"
    " hibernatemode        3\n"
    " powernap             1\n"
    " hibernatefile        /var/vm/sleepimage\n"
    " displaysleep         28\n"
    " sleep                1 (sleep prevented by sharingd)\n"
    " acwake               0\n"
    " disksleep            0\n";
static const char PMSET_NEVER[] =
    "Currently in use:\n standby              0\n sleep                0\n displaysleep         10\n";
/* "Sleep On Power Button" and "displaysleep" are not "sleep" */
static const char PMSET_NO_SLEEP[] =
    "Currently in use:\n Sleep On Power Button 1\n displaysleep         10\n disksleep 10\n";

static const char ROUTE_DEFAULT[] =
    "   route to: default\n"
    "destination: default\n"
    "       mask: default\n"
    "    gateway: 192.168.1.1\n"
    "  interface: en1\n"
    "      flags: <UP,GATEWAY,DONE,STATIC,PRCLONING>\n"
    " recvpipe  sendpipe  ssthresh  rtt,msec    rttvar  hopcount      mtu     expire\n"
    "       0         0         0         0         0         0      1500         0 \n";

static void
test_pmset(void)
{
	ok(parse_pmset_sleep(PMSET_LAPTOP, strlen(PMSET_LAPTOP)) == 1,
	    "pmset: sleep 1 with the reason that prevents it");
	ok(parse_pmset_sleep(PMSET_NEVER, strlen(PMSET_NEVER)) == 0, "pmset: sleep 0");
	ok(parse_pmset_sleep(PMSET_NO_SLEEP, strlen(PMSET_NO_SLEEP)) == -1,
	    "pmset: no sleep line: unknown (not displaysleep, not Sleep On Power Button)");
	ok(parse_pmset_sleep(" sleep   x\n", 11) == -1, "pmset: a sleep that is no number");
	ok(parse_pmset_sleep(" sleep 99999999999\n", 19) == -1, "pmset: an absurd number");
}

static void
test_firewall(void)
{
	static const struct {
		const char *text;
		int state;
	} t[] = {
		{ "Firewall is disabled. (State = 0)\n", 0 },
		{ "Firewall is enabled. (State = 1)\n", 1 },
		{ "Firewall is blocking all non-essential incoming connections. (State = 2)\n", 2 },
		{ "Firewall is enabled. (State = 2)\n", 2 },
		{ "Firewall is enabled.\n", -1 },
		{ "(State = 3)\n", -1 },
		{ "", -1 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		ok(parse_fw_state(t[i].text, strlen(t[i].text)) == t[i].state,
		    "socketfilterfw: \"%.*s\" is %d", (int)strcspn(t[i].text, "\n"), t[i].text,
		    t[i].state);
}

static void
test_env_python(void)
{
	static const char env[] = "MLX_B=2\nPATH=/bin\nJACCL_X=a\x01" "b\nMLX_=x\nMLX_A=1\n"
	    "NOT_MLX_C=3\nMLX_BAD-NAME=1\n";
	struct jc_strv v = { 0 };
	char *py, *mx;

	parse_env_mlx(env, strlen(env), &v);
	ok(v.n == 3 && strcmp(v.v[0], "JACCL_X=a?b") == 0 && strcmp(v.v[1], "MLX_A=1") == 0 &&
	    strcmp(v.v[2], "MLX_B=2") == 0,
	    "env: MLX_ and JACCL_ variables, sorted, control bytes replaced (%zu)", v.n);
	strv_free(&v);
	ok(parse_python_mlx("python 3.12.4\nmlx 0.29.1\n", 25, &py, &mx) == JC_YES &&
	    strcmp(py, "3.12.4") == 0 && strcmp(mx, "0.29.1") == 0, "python: both versions");
	free(py);
	free(mx);
	ok(parse_python_mlx("python 3.11.2\nmlx -\n", 20, &py, &mx) == JC_NO &&
	    strcmp(py, "3.11.2") == 0 && mx == NULL, "python: mlx not installed");
	free(py);
	ok(parse_python_mlx("python 3.7.1\nmlx ?\n", 19, &py, &mx) == JC_UNKNOWN && mx == NULL,
	    "python: mlx unknown");
	free(py);
	ok(parse_python_mlx("xcode-select: note: no developer tools\n", 39, &py, &mx) ==
	    JC_UNKNOWN && py == NULL, "python: did not run");
	ok(parse_python_mlx("python ;rm -rf\nmlx 1.0; x\n", 26, &py, &mx) == JC_UNKNOWN &&
	    py == NULL && mx == NULL, "python: versions that are not version words refused");
}

/* The doctor's Python candidates and the firewall's listing (SW_PYTHON_SH, SW_FIREWALL_SH). */
static void
test_tried_apps(void)
{
	static const char tried[] = "tried /usr/bin/python3:stub\ntried x;y:missing\n"
	    "tried /opt/homebrew/bin/python3:ok\npython 3.13.1\nmlx -\n";
	static const char fw[] = "Firewall is enabled. (State = 1)\n"
	    "jaccl-config at /opt/homebrew/bin/jaccl-config\nTotal number of apps = 3\n"
	    "1 : /opt/homebrew/bin/python3\n             (Allow incoming connections)\n"
	    "2 : /usr/local/bin/x\n             (Block incoming connections)\n"
	    "3 : /a b\n             (Allow incoming connections)\n";
	struct jc_strv v = { 0 };
	char *path;

	parse_python_tried(tried, strlen(tried), &v, &path);
	ok(v.n == 1 && strcmp(v.v[0], "/usr/bin/python3:stub") == 0 && path != NULL &&
	    strcmp(path, "/opt/homebrew/bin/python3") == 0,
	    "tried: the stub passed over, Homebrew's ran, a word with shell syntax left out");
	strv_free(&v);
	free(path);
	ok(parse_fw_apps(fw, strlen(fw), &path, &v) && path != NULL &&
	    strcmp(path, "/opt/homebrew/bin/jaccl-config") == 0 && v.n == 1 &&
	    strcmp(v.v[0], "/opt/homebrew/bin/python3") == 0,
	    "firewall: jaccl-config's path, the allowed program only (not the blocked one, "
	    "not a path with a space)");
	strv_free(&v);
	free(path);
	ok(!parse_fw_apps("Firewall is enabled. (State = 1)\n", 33, &path, &v) && path == NULL &&
	    v.n == 0, "firewall: an older doctor's output, no listing");
}

static void
test_route(void)
{
	char *ifc;

	ok(parse_route_default_macos(ROUTE_DEFAULT, 0, &ifc) == JC_YES && ifc &&
	    strcmp(ifc, "en1") == 0, "route -n get default: interface en1");
	free(ifc);
	ok(parse_route_default_macos("route: writing to routing socket: not in table\n", 1,
	    &ifc) == JC_YES && ifc == NULL, "route -n get default: no default route");
	ok(parse_route_default_macos("route: bad\n", 1, &ifc) == JC_UNKNOWN && ifc == NULL,
	    "route -n get default: another failure is unknown");
	ok(parse_route_default_macos("  interface: en1\n", 0, &ifc) == JC_UNKNOWN && ifc == NULL,
	    "route -n get default: not the default route's answer");
	ok(parse_route_default_linux("default via 192.0.2.1 dev eth0 \n", 0, &ifc) == JC_YES &&
	    ifc && strcmp(ifc, "eth0") == 0, "ip route show default: eth0");
	free(ifc);
	ok(parse_route_default_linux("", 0, &ifc) == JC_YES && ifc == NULL,
	    "ip route show default: none");
	ok(parse_route_default_linux("default via 1.2.3.4 dev ../x\n", 0, &ifc) == JC_YES &&
	    ifc == NULL, "ip route show default: a bad interface name is not taken");
}

static void
test_record(void)
{
	static const char last[] = "{\"version\": 1, \"status\": \"applied\", \"started\": "
	    "\"2026-12-01T18:00:00Z\", \"hosts\": [{\"host\": \"mini1\", \"file\": "
	    "\"hosts/0-mini1.json\", \"restored\": false}]}";
	static const char host[] = "{\"version\": 1, \"host\": \"mini1\", \"target\": \"mini1\", "
	    "\"os\": \"macos\", \"addresses\": [{\"iface\": \"en2\", \"ip\": \"192.168.0.1\", "
	    "\"peer_ip\": \"192.168.0.2\"}], \"facts\": []}";
	static const char *const bad_last[] = {
		"[]", "{\"status\": \"applied\"}",
		"{\"status\": \"applied\", \"hosts\": [{\"host\": \"a\", \"file\": \"hosts/../x.json\"}]}",
		"{\"status\": \"applied\", \"hosts\": [{\"host\": \"a\", \"file\": \"/etc/passwd\"}]}",
		"{\"status\": \"applied\", \"hosts\": [{\"host\": \"a b\", \"file\": \"hosts/0-a.json\"}]}",
	};
	static const char *const bad_host[] = {
		"{\"host\": \"mini1\", \"os\": \"macos\", \"addresses\": [{\"iface\": \"en2;x\", "
		"\"ip\": \"192.168.0.1\", \"peer_ip\": \"192.168.0.2\"}]}",
		"{\"host\": \"mini1\", \"os\": \"macos\", \"addresses\": [{\"iface\": \"en2\", "
		"\"ip\": \"192.168.0.300\", \"peer_ip\": \"192.168.0.2\"}]}",
		"{\"host\": \"mini2\", \"os\": \"macos\", \"addresses\": []}",
	};
	struct setup_record rec = { 0 };
	struct jc_strv files = { 0 };
	struct jc_err err;

	ok(setup_record_parse_last(last, strlen(last), "l", &rec, &files, &err) == 0 &&
	    rec.n == 1 && strcmp(rec.status, "applied") == 0 &&
	    strcmp(files.v[0], "hosts/0-mini1.json") == 0, "last-setup.json read");
	ok(setup_record_parse_host(host, strlen(host), "h", &rec.hosts[0], &err) == 0 &&
	    rec.hosts[0].ifaces.n == 1 && strcmp(rec.hosts[0].ips.v[0], "192.168.0.1") == 0 &&
	    strcmp(rec.hosts[0].peers.v[0], "192.168.0.2") == 0, "host file read");
	for (size_t i = 0; i < sizeof(bad_host) / sizeof(bad_host[0]); i++) {
		struct setup_rec_host h = { .name = rec.hosts[0].name };

		ok(setup_record_parse_host(bad_host[i], strlen(bad_host[i]), "h", &h, &err) < 0,
		    "bad host file %zu refused: %s", i, err.msg);
		strv_free(&h.ifaces);
		strv_free(&h.ips);
		strv_free(&h.peers);
		free(h.os);
	}
	strv_free(&files);
	for (size_t i = 0; i < rec.n; i++) {
		free(rec.hosts[i].name);
		free(rec.hosts[i].os);
		strv_free(&rec.hosts[i].ifaces);
		strv_free(&rec.hosts[i].ips);
		strv_free(&rec.hosts[i].peers);
	}
	free(rec.hosts);
	free(rec.status);
	free(rec.started);
	for (size_t i = 0; i < sizeof(bad_last) / sizeof(bad_last[0]); i++) {
		struct setup_record r2 = { 0 };

		ok(setup_record_parse_last(bad_last[i], strlen(bad_last[i]), "l", &r2, &files,
		    &err) < 0, "bad last-setup.json %zu refused: %s", i, err.msg);
		strv_free(&files);
		for (size_t k = 0; k < r2.n; k++)
			free(r2.hosts[k].name);
		free(r2.hosts);
		free(r2.status);
		free(r2.started);
	}
}

/* The doctor's commands go into the doctor's script only. */
static void
test_script(void)
{
	char *plain = probe_script(30), *same = probe_script_for(30, false);
	char *doc = probe_script_for(30, true);
	static const char *const cmds[] = { "pmset -g", "socketfilterfw --getglobalstate",
		"route -n get default", "ip route show default", "grep -E '^(MLX|JACCL)_'",
		"importlib.metadata" };

	ok(strcmp(plain, same) == 0, "probe_script is the script without the doctor's commands");
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		ok(strstr(plain, cmds[i]) == NULL && strstr(doc, cmds[i]) != NULL,
		    "%s: in the doctor's script only", cmds[i]);
	ok(strstr(doc, "jc_start " SW_PMSET " ") != NULL && strstr(plain, SW_PMSET) == NULL,
	    "the doctor's script frames " SW_PMSET);
	free(plain);
	free(same);
	free(doc);
}

/* The doctor's networksetup output: the order, then "### NAME" and -getinfo. */
static void
test_netsvc_info(void)
{
	static const char out[] =
	    "An asterisk (*) denotes that a network service is disabled.\n"
	    "(1) Ethernet\n(Hardware Port: Ethernet, Device: en0)\n\n"
	    "(*) Thunderbolt Bridge\n(Hardware Port: Thunderbolt Bridge, Device: bridge0)\n\n"
	    "(3) jaccl-config Thunderbolt 1\n(Hardware Port: Thunderbolt 1, Device: en2)\n\n"
	    "(*) jaccl-config Thunderbolt 2\n(Hardware Port: Thunderbolt 2, Device: en3)\n\n"
	    "### jaccl-config Thunderbolt 1\n"
	    "Manual Configuration\nIP address: 192.168.0.1\nSubnet mask: 255.255.255.252\n"
	    "Router: (null)\nIPv6: Automatic\nIPv6 IP address: none\n"
	    "### jaccl-config Thunderbolt 2\n"
	    "DHCP Configuration\nClient ID: \n"
	    "### jaccl-config bad;name\nManual Configuration\nIP address: 1.2.3.4\n";
	struct jc_netsvc *sv = NULL;
	struct jc_svcinfo *in = NULL;
	size_t nsv = 0, nin = 0, left;
	const struct jc_svcinfo *a, *b;

	left = parse_netsvc_info(out, sizeof(out) - 1, &sv, &nsv, &in, &nin);
	ok(nsv == 4 && strcmp(sv[2].name, "jaccl-config Thunderbolt 1") == 0 &&
	    strcmp(sv[2].device, "en2") == 0 && sv[2].enabled && !sv[3].enabled,
	    "netsvc info: the service order, enabled or not");
	a = svcinfo_find(in, nin, "jaccl-config Thunderbolt 1");
	b = svcinfo_find(in, nin, "jaccl-config Thunderbolt 2");
	ok(nin == 2 && a != NULL && a->manual && strcmp(a->ip, "192.168.0.1") == 0 &&
	    strcmp(a->mask, "255.255.255.252") == 0, "netsvc info: a manual service's address");
	ok(b != NULL && !b->manual && b->ip == NULL, "netsvc info: a DHCP service has none");
	ok(left == 1, "netsvc info: a name unfit for a command is left out");
	netsvc_free(sv, nsv);
	svcinfo_free(in, nin);
	sv = NULL, in = NULL, nsv = 0, nin = 0;
	left = parse_netsvc_info("garbage\n", 8, &sv, &nsv, &in, &nin);
	ok(nsv == 0 && nin == 0, "netsvc info: garbage lists nothing");
	netsvc_free(sv, nsv);
	svcinfo_free(in, nin);
}

/* SW_INSTALL_SH run by /bin/sh with PATH=path; its output. */
static char *
run_install(const char *path)
{
	struct jc_buf q = { 0 }, b = { 0 };
	char chunk[1024], *cmd;
	size_t n;
	FILE *fp;

	jc_sh_quote(&q, SW_INSTALL_SH);
	cmd = xasprintf("PATH=%s /bin/sh -c %s", path, q.data);
	fp = popen(cmd, "r");
	while (fp != NULL && (n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		buf_append(&b, chunk, n);
	if (fp != NULL)
		pclose(fp);
	free(cmd);
	buf_free(&q);
	buf_puts(&b, "");
	return buf_steal(&b);
}

static void
test_install(void)
{
	char tmpl[] = "/tmp/jc-install-XXXXXX", *dir = mkdtemp(tmpl), *p, *v, *out, *bin;
	FILE *fp;

	ok(parse_install("/opt/homebrew/bin/jaccl-config\njaccl-config 0.1.0\n", 50, &p, &v) ==
	    JC_YES && strcmp(p, "/opt/homebrew/bin/jaccl-config") == 0 &&
	    strcmp(v, "jaccl-config 0.1.0") == 0, "install: path and version");
	free(p);
	free(v);
	ok(parse_install("/x/jaccl-config\n\n", 17, &p, &v) == JC_YES && strcmp(v, "") == 0,
	    "install: a program that printed no version");
	free(p);
	free(v);
	ok(parse_install("-\n", 2, &p, &v) == JC_NO && p == NULL && v == NULL, "install: none");
	ok(parse_install("zsh: command not found\n", 23, &p, &v) == JC_UNKNOWN && p == NULL,
	    "install: anything else is unknown");
	ok(parse_install("/x/j\033[2J\nv\001\n", 12, &p, &v) == JC_YES &&
	    strcmp(p, "/x/j?[2J") == 0 && strcmp(v, "v?") == 0, "install: kept printable");
	free(p);
	free(v);
	if (dir == NULL) {
		ok(1, "# SKIP no temporary folder");
		ok(1, "# SKIP no temporary folder");
		return;
	}
	out = run_install("/nonexistent");
	ok(strcmp(out, "-\n") == 0 || strncmp(out, "/opt/homebrew/bin/", 18) == 0 ||
	    strncmp(out, "/usr/local/bin/", 15) == 0, "install script: none on PATH");
	free(out);
	bin = xasprintf("%s/jaccl-config", dir);
	fp = fopen(bin, "w");
	if (fp != NULL) {
		fputs("#!/bin/sh\necho \"jaccl-config 7.7 ($1)\"\necho second line\n", fp);
		fclose(fp);
	}
	chmod(bin, 0755);
	p = xasprintf("/nonexistent:%s:/usr/bin:/bin", dir);
	out = run_install(p);
	v = xasprintf("%s\njaccl-config 7.7 (--version)\n", bin);
	is_str(out, v, "install script, run by /bin/sh: the one on PATH, first line of its --version");
	free(v);
	free(out);
	free(p);
	unlink(bin);
	rmdir(dir);
	free(bin);
}

int
main(void)
{
	test_script();
	test_install();
	(void)plan;
	(void)skip_all;
	test_pmset();
	test_firewall();
	test_env_python();
	test_tried_apps();
	test_route();
	test_record();
	test_netsvc_info();
	return done_testing();
}
