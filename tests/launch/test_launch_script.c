/* SPDX-License-Identifier: MIT */
/*
 * The launcher's remote script, run by the local /bin/sh: values with
 * quotes, spaces, newlines, $ and backslashes arrive unchanged, file
 * variables hold their content, argv is passed word for word, the pidfile
 * names the process, and the cleanup script removes the folder. Bad keys
 * and bad folders are refused. The program found on the host (launch_opts.bin):
 * the first executable of the candidates, by path or on PATH, run when its
 * --version is the one asked for; another version or none is said on the
 * LAUNCH_BIN_MARK line and runs nothing (programs made here by the test).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../tap.h"
#include "launch.h"

#define TAG "u1t"

static char *
run(const char *script)
{
	struct jc_buf b = { 0 };
	char chunk[4096];
	size_t n;
	FILE *fp = popen(script, "r");

	if (fp == NULL)
		return xstrdup("");
	while ((n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		buf_append(&b, chunk, n);
	pclose(fp);
	buf_puts(&b, "");
	return buf_steal(&b);
}

/* A program at dir/name that prints version for --version, else "ran:ARGS". */
static char *
fake_prog(const char *dir, const char *name, const char *version)
{
	char *p = xasprintf("%s/%s", dir, name);
	FILE *fp = fopen(p, "w");

	if (fp != NULL) {
		fprintf(fp, "#!/bin/sh\n[ \"$1\" = --version ] && { echo '%s'; echo more; exit 0; }\n"
		    "echo \"ran:$*\"\n", version);
		fclose(fp);
		chmod(p, 0755);
	}
	return p;
}

/* The script of argv with the program found among bin; *st its exit status. */
static char *
run_bin(char *const *bin, size_t nbin, const char *path, int *st)
{
	char *argv[] = { (char *)"jaccl-config", (char *)"a b", (char *)"c" };
	struct launch_env none = { NULL, 0 };
	struct jc_err err = { 0 };
	char *sc = launch_script_bin(&none, argv, 3, NULL, NULL, bin, nbin, "jaccl-config 9.9.9",
	    &err), *cmd, *out;
	struct jc_buf b = { 0 }, q = { 0 };
	char chunk[4096];
	size_t n;
	FILE *fp;

	launch_quote(&q, sc ? sc : "exit 99");
	cmd = xasprintf("PATH=%s:$PATH; export PATH; TMPDIR=/tmp /bin/sh -c %s", path, q.data);
	fp = popen(cmd, "r");
	while (fp != NULL && (n = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		buf_append(&b, chunk, n);
	*st = fp != NULL ? pclose(fp) : -1;
	*st = *st >= 0 && WIFEXITED(*st) ? WEXITSTATUS(*st) : -1;
	buf_puts(&b, "");
	out = buf_steal(&b);
	/* the folder the script made, named on the mark line */
	{
		char *m = strstr(out, "\036JCL "), *e, *rm;

		if (m != NULL && (e = strchr(m, '\n')) != NULL) {
			rm = xasprintf("rm -rf '%.*s'", (int)(e - m - 5), m + 5);
			if (strstr(rm, "/jaccl-launch.") != NULL)
				free(run(rm));
			free(rm);
		}
	}
	buf_free(&q);
	free(cmd);
	free(sc);
	return out;
}

static void
bin_cases(void)
{
	char tmpl[] = "/tmp/jc-bin-XXXXXX";
	char *dir = mkdtemp(tmpl), *good, *other, *out, *want;
	struct jc_err err = { 0 };
	int st;

	if (dir == NULL) {
		for (int i = 0; i < 12; i++)
			ok(1, "# SKIP no temporary folder");
		return;
	}
	good = fake_prog(dir, "jc-good", "jaccl-config 9.9.9");
	other = fake_prog(dir, "jc-other", "jaccl-config 0.0.1");
	{
		char *bin[] = { (char *)"/nonexistent/jaccl-config", dir, good };

		out = run_bin(bin, 3, "/nonexistent", &st);
		want = xasprintf("\036JCB ok %s\036jaccl-config 9.9.9\n", good);
		ok(strncmp(out, want, strlen(want)) == 0, "bin: a missing path and a folder are "
		    "passed over, the first executable file is taken");
		ok(st == 0 && strstr(out, "\nran:a b c\n") != NULL, "bin: it runs with the "
		    "arguments, word for word");
		free(want);
		free(out);
	}
	{
		char *bin[] = { (char *)"no-such-program-jc", (char *)"jc-good", other };

		out = run_bin(bin, 3, dir, &st);
		want = xasprintf("\036JCB ok %s\036jaccl-config 9.9.9\n", good);
		ok(strncmp(out, want, strlen(want)) == 0 && st == 0, "bin: a bare name is looked "
		    "up on the host's PATH before the next candidate");
		free(want);
		free(out);
	}
	{
		char *bin[] = { other, good };

		out = run_bin(bin, 2, "/nonexistent", &st);
		want = xasprintf("\036JCB other %s\036jaccl-config 0.0.1\n", other);
		ok(strncmp(out, want, strlen(want)) == 0, "bin: another version is named with "
		    "its first line of --version, no later candidate tried");
		ok(st == 127 && strstr(out, "ran:") == NULL && strstr(out, "\036JCL ") != NULL,
		    "bin: ... it exits 127 after the mark line, running nothing");
		free(want);
		free(out);
	}
	{
		char *bin[] = { (char *)"no-such-program-jc", (char *)"/nonexistent/jaccl-config" };

		out = run_bin(bin, 2, dir, &st);
		ok(strncmp(out, "\036JCB none \036\n", 12) == 0 && st == 127 &&
		    strstr(out, "ran:") == NULL, "bin: none found: said, exit 127");
		free(out);
	}
	ok(launch_bin_ok("/opt/homebrew/bin/jaccl-config", &err) && launch_bin_ok("jaccl-config",
	    &err) && launch_bin_ok("/Users/a b/it's/jaccl-config", &err),
	    "bin: absolute paths (any bytes but control ones) and plain names are accepted");
	ok(!launch_bin_ok("bin/jaccl-config", &err) && strstr(err.msg, "neither") != NULL,
	    "bin: a relative path is refused");
	ok(!launch_bin_ok("jaccl config", &err) && !launch_bin_ok("$(reboot)", &err) &&
	    !launch_bin_ok("", &err), "bin: a name with a blank or shell syntax, or empty, is refused");
	ok(!launch_bin_ok("/opt/x\n/y", &err) && !launch_bin_ok("/opt/../etc/x", &err),
	    "bin: a newline or a /../ is refused");
	{
		char *bin[] = { (char *)"a;b" };
		char *argv[] = { (char *)"x" };
		struct launch_env none = { NULL, 0 };

		ok(launch_script_bin(&none, argv, 1, NULL, NULL, bin, 1, "v", &err) == NULL,
		    "bin: the script refuses a bad candidate");
	}
	{
		struct jc_strv c = { 0 };

		launch_bin_candidates(NULL, &c);
		ok(c.n >= 3 && strcmp(c.v[0], "jaccl-config") == 0 &&
		    strcmp(c.v[1], "/opt/homebrew/bin/jaccl-config") == 0 &&
		    strcmp(c.v[2], "/usr/local/bin/jaccl-config") == 0 &&
		    (c.n == 3 || c.v[3][0] == '/'), "bin: the default places: PATH, Homebrew's, "
		    "/usr/local's, then an absolute path of this program");
		strv_free(&c);
		launch_bin_candidates("/x/jaccl-config", &c);
		ok(c.n == 1 && strcmp(c.v[0], "/x/jaccl-config") == 0, "bin: a given one alone");
		strv_free(&c);
	}
	unlink(good);
	unlink(other);
	rmdir(dir);
	free(good);
	free(other);
}

int
main(void)
{
	static const char *tricky = "it's a \"test\" $HOME `id` \\ \n second line";
	struct launch_var vars[] = {
		{ "A_VAR", (char *)"plain", false },
		{ "B", (char *)"it's a \"test\" $HOME `id` \\ \n second line", false },
		{ "MLX_IBV_DEVICES", (char *)"[[null, \"rdma_en2\"], [\"rdma_en2\", null]]", true },
		{ "MLX_RANK", (char *)"3", false },
	};
	struct launch_env e = { vars, 4 };
	char *argv[] = { (char *)"/bin/sh", (char *)"-c",
	    (char *)"printf '%s|' \"$A_VAR\" \"$B\" \"$MLX_RANK\" \"$1\" \"$2\"; cat \"$MLX_IBV_DEVICES\"; "
	    "cat \"$(dirname \"$MLX_IBV_DEVICES\")/pid\"; echo $$",
	    (char *)"zero", (char *)"arg one", (char *)"'two'" };
	struct jc_err err = { 0 };
	struct jc_buf want = { 0 };
	char *s, *out, *nl, *dir, *cl, *rest;
	struct stat sb;

	if (stat("/bin/sh", &sb) != 0)
		skip_all("no /bin/sh");
	plan(35);
	s = launch_script(&e, argv, 6, "/", "t0ken", &err);
	ok(s != NULL, "script built");
	out = run(s);
	ok(strncmp(out, LAUNCH_MARK, strlen(LAUNCH_MARK)) == 0, "first line is the mark");
	nl = strchr(out, '\n');
	dir = nl ? xstrndup(out + strlen(LAUNCH_MARK), (size_t)(nl - out) - strlen(LAUNCH_MARK)) :
	    xstrdup("");
	rest = nl ? nl + 1 : out;
	buf_printf(&want, "plain|%s|3|arg one|'two'|[[null, \"rdma_en2\"], [\"rdma_en2\", null]]\n",
	    tricky);
	ok(strncmp(rest, want.data, want.len) == 0, "values, argv and the file arrive unchanged");
	if (strncmp(rest, want.data, want.len) != 0)
		diag("got: %s", rest);
	/* the pidfile holds the pid of the exec'd command */
	{
		const char *p = rest + want.len;
		char *nl2 = strchr(p, '\n');

		ok(nl2 != NULL && strncmp(p, nl2 + 1, (size_t)(nl2 - p)) == 0 &&
		    nl2[1 + (nl2 - p)] == '\n', "the pidfile names the command's own process");
	}
	ok(stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode), "the folder exists after the run");
	cl = launch_cleanup_script(dir, NULL);
	ok(cl != NULL, "cleanup script for %s", dir);
	free(out);
	out = run(cl ? cl : "false");
	is_str(out, "0\n", "cleanup: nothing left to kill");
	ok(stat(dir, &sb) != 0, "cleanup removes the folder");
	free(out);
	free(cl);
	free(s);

	vars[0].key = (char *)"BAD-KEY";
	s = launch_script(&e, argv, 6, NULL, NULL, &err);
	ok(s == NULL && strstr(err.msg, "BAD-KEY") != NULL, "a bad key is refused");
	is_int(err.code, -EINVAL, "... with -EINVAL");
	free(s);
	cl = launch_cleanup_script("/tmp/x; rm -rf /", NULL);
	ok(cl == NULL, "a folder with shell syntax is refused");
	free(cl);
	cl = launch_cleanup_script("/etc", NULL);
	ok(cl == NULL, "a folder the script did not make is refused");
	free(cl);
	free(dir);
	buf_free(&want);

	/* a rank stopped before its mark arrived is found by its tag */
	{
		char *sleeper[] = { (char *)"sleep", (char *)"30" };
		struct launch_env none = { NULL, 0 };
		char *sc = launch_script(&none, sleeper, 2, NULL, TAG, &err);
		char *kill = launch_cleanup_script(NULL, TAG), *bg;
		struct jc_buf cmd = { 0 };

		/* a shell of its own, as sshd gives it, so that $$ is the command */
		buf_puts(&cmd, "sh -c ");
		launch_quote(&cmd, sc ? sc : "false");
		buf_puts(&cmd, " >/dev/null 2>&1 &");
		bg = buf_steal(&cmd);
		free(run(bg));
		out = run(kill ? kill : "false");
		is_str(out, "1\n", "cleanup by tag: the running command was killed");
		free(out);
		out = run(kill ? kill : "false");
		is_str(out, "0\n", "cleanup by tag: nothing left afterwards");
		free(out);
		free(bg);
		free(sc);
		free(kill);
		ok(launch_cleanup_script(NULL, "bad tag") == NULL, "cleanup: a bad tag is refused");
	}

	/*
	 * python3 is the host's (here: the first on PATH, a fake that tells
	 * its arguments), run with the command's arguments word for word
	 */
	{
		char *py[] = { (char *)"python3", (char *)"-c", (char *)"it's" };
		struct launch_env none = { NULL, 0 };
		char tmpl[] = "/tmp/jc-launch-py.XXXXXX", *bin = mkdtemp(tmpl), *fake, *cmd;
		FILE *fp;

		fake = xasprintf("%s/python3", bin ? bin : "/nonexistent");
		fp = bin ? fopen(fake, "w") : NULL;
		if (fp != NULL) {
			fputs("#!/bin/sh\nprintf 'fake:%s|' \"$@\"\n", fp);
			fclose(fp);
			chmod(fake, 0755);
		}
		s = launch_script(&none, py, 3, NULL, NULL, &err);
		ok(s != NULL && strstr(s, "/opt/homebrew/bin/python3") != NULL,
		    "python3: Homebrew's is the one after PATH's");
		cmd = xasprintf("PATH=%s:$PATH; export PATH; %s", bin ? bin : "", s ? s : "false");
		out = run(cmd);
		nl = strchr(out, '\n');
		is_str(nl ? nl + 1 : out, "fake:-c|fake:it's|", "python3: PATH's, with the arguments");
		free(out);
		free(cmd);
		free(s);
		unlink(fake);
		if (bin)
			rmdir(bin);
		free(fake);
	}

	/*
	 * A folder of the tag's name another user made, naming a process of
	 * ours: left alone, the process too (issue 21, lead of case 8).
	 */
	if (geteuid() == 0) {
		char *cl2 = launch_cleanup_script(NULL, TAG), *pidtext = run("sleep 30 "
		    ">/dev/null 2>&1 & echo $!"), *mk;
		long pid = strtol(pidtext, NULL, 10);

		mk = xasprintf("d=/tmp/jaccl-launch.%s.theirs; mkdir -p $d && echo %ld >$d/pid && "
		    "chown -R 65534:65534 $d", TAG, pid);
		free(run(mk));
		out = run(cl2 ? cl2 : "false");
		is_str(out, "0\n", "cleanup by tag: another user's folder names nothing to kill");
		ok(pid > 0 && kill(pid, 0) == 0, "... and the process it named still runs");
		if (pid > 0)
			kill(pid, SIGKILL);
		free(out);
		free(run("rm -rf /tmp/jaccl-launch." TAG ".theirs"));
		free(mk);
		free(pidtext);
		free(cl2);
	} else {
		ok(1, "# SKIP another user's folder needs root to make");
		ok(1, "# SKIP another user's folder needs root to make");
	}

	/* the mark line, with output around it and cut in pieces */
	{
		static const char text[] = "banner\n\036JCL /tmp/jaccl-launch.Q\nrest";
		size_t st, en;
		char *d = NULL;

		ok(!launch_find_mark(text, 20, &st, &en, &d) && d == NULL,
		    "mark: half a line is not enough");
		ok(launch_find_mark(text, sizeof(text) - 1, &st, &en, &d) && st == 7 &&
		    en == sizeof(text) - 5 && d != NULL && strcmp(d, "/tmp/jaccl-launch.Q") == 0,
		    "mark: found after a banner, the folder read");
		free(d);
		ok(!launch_find_mark("no mark\n", 8, &st, &en, &d), "mark: none in plain output");
	}
	bin_cases();
	return done_testing();
}
