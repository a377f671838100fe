/* SPDX-License-Identifier: MIT */
/*
 * The launcher's remote script, run by the local /bin/sh: values with
 * quotes, spaces, newlines, $ and backslashes arrive unchanged, file
 * variables hold their content, argv is passed word for word, the pidfile
 * names the process, and the cleanup script removes the folder. Bad keys
 * and bad folders are refused.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
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
	plan(20);
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
	return done_testing();
}
