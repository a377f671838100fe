/* SPDX-License-Identifier: MIT */
/*
 * The other network managers (parse_mgr.h): the probe's command MGR_SH run
 * by this machine's /bin/sh (and bash in POSIX mode, a Mac's /bin/sh, when
 * there is one) against small stand-ins of networksetup and launchctl and
 * a folder of plists, its answer read back, and hostile answers. The
 * launchctl stand-in prints the layout of `launchctl print system/LABEL`
 * (top-level "key = value" lines after one tab, nested blocks indented
 * further); the label of exo's daemon is exo #2279's. Expected values are
 * written by hand.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../tap.h"
#include "parse_mgr.h"

static char dir[] = "/tmp/jc-mgr.XXXXXX";

static void
put(const char *name, const char *text, mode_t mode)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f == NULL)
		exit(99);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
}

/* MGR_SH with its plist folder moved to dir/daemons, run by sh; its output. */
static char *
run_script(const char *sh)
{
	const char *from = MGR_DAEMON_DIR;
	struct jc_buf script = { 0 }, cmd = { 0 };
	const char *s = MGR_SH, *at;
	char buf[4096];
	size_t n, len = 0;
	char *out = xcalloc(1, 1);
	FILE *p;

	while ((at = strstr(s, from)) != NULL) {
		buf_printf(&script, "%.*s%s/daemons", (int)(at - s), s, dir);
		s = at + strlen(from);
	}
	buf_puts(&script, s);
	buf_printf(&cmd, "PATH=%s/bin:/usr/bin:/bin %s -c ", dir, sh);
	jc_sh_quote(&cmd, script.data);
	p = popen(cmd.data, "r");
	while (p != NULL && (n = fread(buf, 1, sizeof(buf), p)) > 0) {
		out = xrealloc(out, len + n + 1);
		memcpy(out + len, buf, n);
		out[len += n] = '\0';
	}
	if (p != NULL)
		pclose(p);
	buf_free(&script);
	buf_free(&cmd);
	return out;
}

static const char WANT[] =
    "location exo\n"
    "has Automatic\n"
    "has exo\n"
    "daemon ai.odyssai.keepalive\n"
    "launchd no\n"
    "daemon io.exo.networksetup\n"
    "launchd yes\n"
    "state = running\n"
    "pid = 412\n"
    "service oMLX Link\n";

static void
script_tests(void)
{
	char path[512];
	const char *shells[] = { "/bin/sh", "bash --posix" };

	if (mkdtemp(dir) == NULL)
		exit(99);
	snprintf(path, sizeof(path), "%s/bin", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/daemons", dir);
	mkdir(path, 0755);
	put("bin/networksetup", "#!/bin/sh\ncase $1 in\n"
	    "-getcurrentlocation) echo exo ;;\n"
	    "-listlocations) printf 'Automatic\\nexo\\n' ;;\n"
	    "-listallnetworkservices) printf 'An asterisk (*) denotes that a network service "
	    "is disabled.\\nEthernet\\n*oMLX Link\\nWi-Fi\\n' ;;\n"
	    "*) exit 4 ;;\nesac\n", 0755);
	put("bin/launchctl", "#!/bin/sh\n"
	    "[ \"$1 $2\" = 'print system/io.exo.networksetup' ] || {\n"
	    "  echo \"Could not find service \\\"${2#system/}\\\" in domain for system\" >&2; "
	    "exit 113; }\n"
	    "printf 'system/io.exo.networksetup = {\\n\\tactive count = 1\\n"
	    "\\tpath = /Library/LaunchDaemons/io.exo.networksetup.plist\\n\\tstate = running\\n\\n"
	    "\\tendpoints = {\\n\\t\\tstate = idle\\n\\t\\tpid = 7\\n\\t}\\n\\tpid = 412\\n}\\n'\n",
	    0755);
	put("daemons/io.exo.networksetup.plist", "<plist/>\n", 0644);
	put("daemons/ai.odyssai.keepalive.plist", "<plist/>\n", 0644);
	put("daemons/com.apple.other.plist", "<plist/>\n", 0644);
	put("daemons/bad$(touch x)omlx.plist", "<plist/>\n", 0644);
	for (size_t k = 0; k < 2; k++) {
		char *out, name[128];

		if (k == 1 && system("bash --posix -c true 2>/dev/null") != 0) {
			ok(1, "# SKIP no bash here");
			continue;
		}
		out = run_script(shells[k]);
		snprintf(name, sizeof(name), "%s: the command's answer", shells[k]);
		is_str(out, WANT, name);
		free(out);
	}
}

static void
parse_tests(void)
{
	struct jc_mgr *v;
	size_t n, bad;
	char *loc, *s;
	bool automatic;
	struct jc_host h = { 0 };

	bad = parse_managers(WANT, strlen(WANT), &v, &n, &loc, &automatic);
	is_int((long long)bad, 0, "every line understood");
	is_int((long long)n, 4, "four findings");
	is_str(loc, "exo", "the active location");
	ok(automatic, "Automatic exists");
	ok(n == 4 && v[0].kind == JC_MGR_LOCATION && v[1].kind == JC_MGR_DAEMON &&
	    v[2].kind == JC_MGR_DAEMON && v[3].kind == JC_MGR_SERVICE,
	    "the location first, then the daemons and the service in order");
	if (n == 4) {
		is_str(v[0].tool, "exo", "the location is exo's");
		ok(mgr_active(&v[0]), "exo's location, active: it acts now");
		s = mgr_describe(&v[0]);
		is_str(s, "exo's network location \"exo\", the active one", "the location described");
		free(s);
		s = mgr_remedy(&v[0], automatic);
		is_str(s, "sudo networksetup -switchtolocation Automatic && "
		    "sudo networksetup -deletelocation exo", "back to Automatic, exo's deleted");
		free(s);
		is_str(v[1].tool, "OdyssAI-X", "ai.odyssai.keepalive is OdyssAI-X's");
		ok(v[1].loaded == JC_NO && !mgr_active(&v[1]), "not loaded: not active");
		s = mgr_describe(&v[1]);
		is_str(s, "OdyssAI-X's LaunchDaemon ai.odyssai.keepalive (its plist is in "
		    "/Library/LaunchDaemons, not loaded until the next boot)", "a plist only");
		free(s);
		s = mgr_remedy(&v[1], automatic);
		is_str(s, "sudo rm /Library/LaunchDaemons/ai.odyssai.keepalive.plist",
		    "its plist removed, nothing to boot out");
		free(s);
		ok(v[2].loaded == JC_YES && v[2].pid == 412 && mgr_active(&v[2]),
		    "exo's daemon: loaded, pid 412 (the top-level pid, not the nested one)");
		s = mgr_describe(&v[2]);
		is_str(s, "exo's LaunchDaemon io.exo.networksetup (loaded, running as pid 412)",
		    "the daemon described");
		free(s);
		s = mgr_remedy(&v[2], automatic);
		is_str(s, "sudo launchctl bootout system/io.exo.networksetup && "
		    "sudo rm /Library/LaunchDaemons/io.exo.networksetup.plist", "booted out, removed");
		free(s);
		s = mgr_remedy(&v[3], automatic);
		is_str(s, "sudo networksetup -removenetworkservice 'oMLX Link'",
		    "oMLX's service removed, its name quoted");
		free(s);
	}
	h.mgrs = v;
	h.nmgrs = n;
	h.mgrs_known = JC_UNKNOWN;
	ok(mgr_first_active(&h) == NULL, "not asked: nothing to refuse beside");
	h.mgrs_known = JC_YES;
	ok(n == 4 && mgr_first_active(&h) == &v[0], "asked: the first active one");
	jc_mgrs_free(v, n);
	free(loc);

	/* a location of the user's own, no Automatic left */
	bad = parse_managers("location Home\nhas Home\nhas Work\n", 32, &v, &n, &loc, &automatic);
	ok(bad == 0 && n == 1 && v[0].tool == NULL && !mgr_active(&v[0]) && !automatic,
	    "a location of nobody known: a finding, not active, no Automatic");
	if (n == 1) {
		s = mgr_remedy(&v[0], automatic);
		is_str(s, "sudo networksetup -createlocation Automatic populate && "
		    "sudo networksetup -switchtolocation Automatic", "Automatic made again, not deleted");
		free(s);
	}
	jc_mgrs_free(v, n);
	free(loc);

	/* Automatic active: nothing */
	bad = parse_managers("location Automatic\n", 19, &v, &n, &loc, &automatic);
	ok(bad == 0 && n == 0 && automatic && loc != NULL, "Automatic: no finding");
	jc_mgrs_free(v, n);
	free(loc);

	/* hostile names */
	{
		static const char hostile[] =
		    "location a'b;rm -rf /\n"
		    "service oMLX'x\n"
		    "service Ethernet\n"
		    "daemon ../../etc/omlx\n"
		    "launchd yes\n"
		    "daemon io.exo.x\n"
		    "pid = 99999999999\n"
		    "pid = -4\n"
		    "location exo\n"
		    "has\0Automatic\n";

		bad = parse_managers(hostile, sizeof(hostile) - 1, &v, &n, &loc, &automatic);
		is_int((long long)bad, 6, "hostile: the bad lines counted (2 services, a "
		    "label, its launchd line, a second location, a NUL)");
		ok(n == 2 && v[0].kind == JC_MGR_LOCATION && v[0].name == NULL &&
		    v[1].kind == JC_MGR_DAEMON && v[1].pid == 0 && loc == NULL && !automatic,
		    "hostile: the location kept without its name, the pids refused");
		if (n == 2) {
			s = mgr_remedy(&v[0], automatic);
			ok(strstr(s, "rm -rf") == NULL && strstr(s, "deletelocation") == NULL,
			    "hostile: the remedy names no unshown name");
			free(s);
			s = mgr_describe(&v[0]);
			is_str(s, "the active network location, not Automatic (a name that cannot "
			    "be shown)", "hostile: described without it");
			free(s);
		}
		jc_mgrs_free(v, n);
		free(loc);
	}
	/* a label of no known tool, which MGR_SH never prints (a fuzzer's find) */
	{
		static const char other[] =
		    "location exo\n"
		    "has Automatic\n"
		    "daemon aio.networksetup\n"
		    "launchd yes\n"
		    "pid = 412\n"
		    "service oMLX Link\n";
		bool harmless = false;

		bad = parse_managers(other, sizeof(other) - 1, &v, &n, &loc, &automatic);
		is_int((long long)bad, 3, "another label: it and its lines not understood");
		ok(n == 2 && v[0].kind == JC_MGR_LOCATION && v[1].kind == JC_MGR_SERVICE &&
		    automatic, "another label: left out, exo's location and oMLX's service kept");
		for (size_t i = 0; i < n; i++)
			harmless |= mgr_active(&v[i]) && mgr_harm(&v[i]) == NULL;
		ok(!harmless, "another label: every active finding says what it undoes");
		jc_mgrs_free(v, n);
		free(loc);
	}
	is_str(mgr_tool_of(JC_MGR_DAEMON, "com.omlx.cluster"), "oMLX", "an oMLX label");
	ok(mgr_tool_of(JC_MGR_LOCATION, "Exo") == NULL, "location names are exact: Exo is not exo's");
}

int
main(void)
{
	char cmd[600];

	plan(33);
	script_tests();
	parse_tests();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		diag("could not remove %s", dir);
	return tap_failed != 0;
}
