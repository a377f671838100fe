/* SPDX-License-Identifier: MIT */
/*
 * tr_sh_command(): the line sent over SSH must reach /bin/sh as the script
 * it wraps whatever the login shell. Each script (quotes, backslashes, '$',
 * '`', '!', '%', newlines, a glob that matches nothing, non-ASCII bytes) is
 * run directly by /bin/sh -c, and its wrapped line by every shell of the
 * machine a Mac may have as login shell (zsh, fish, bash, dash, sh) as
 * sshd runs it (SHELL -c LINE): each must print what /bin/sh printed, the
 * shells being the judges, not our own output. A shell that is not
 * installed is skipped by name.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../tap.h"
#include "transport.h"
#include "util.h"

static const char *const shells[] = {
	"/usr/bin/zsh", "/usr/bin/fish", "/bin/bash", "/bin/dash", "/bin/sh",
};

static const char *const scripts[] = {
	"echo 'single quoted' \"double $((1+2))\" \\$HOME back\\\\slash",
	"printf '%s|\\n' 'it'\\''s' \"a \\\"b\\\" c\" '\\\\' '\\'",
	"x=`echo backticks`; echo \"$x\" \"$(echo dollar-paren)\"",
	"for d in /nonexistent-dir/jaccl-launch.tag.*; do echo \"$d\"; done; echo after",
	"echo '!bang' 100% '%s %d' \"!\"",
	"printf 'line1\\nline2\\n'\necho second\n\n  echo indented\t tab\n",
	"echo caf\xc3\xa9 \x01ctl",
	"-true 2>/dev/null; echo leading dash",
	"f() { echo \"$#:$1\"; }; f 'a b'; set -- x y; echo \"$@\"",
	"trap 'echo trapped' EXIT; exit 3",
	"",
};

/* Run argv with in on stdin; *out gets stdout, returns the exit status. */
static int
run(char *const argv[], const char *in, char **out)
{
	int po[2], pi[2], st = -1;
	struct jc_buf b = { 0 };
	char buf[4096];
	ssize_t n;
	pid_t pid;

	if (pipe(po) < 0 || pipe(pi) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		dup2(pi[0], 0);
		dup2(po[1], 1);
		close(pi[0]);
		close(pi[1]);
		close(po[0]);
		close(po[1]);
		execv(argv[0], argv);
		_exit(126);
	}
	close(pi[0]);
	close(po[1]);
	if (in != NULL)
		(void)!write(pi[1], in, strlen(in));
	close(pi[1]);
	while ((n = read(po[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			buf_append(&b, buf, (size_t)n);
	close(po[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	buf_puts(&b, "");
	*out = buf_steal(&b);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void
shell_case(const char *sh, const char *script, const char *want, int want_st, size_t k)
{
	char *line = tr_sh_command(script), *got = NULL;
	char *argv[] = { (char *)sh, "-c", line, NULL };
	int st = run(argv, NULL, &got);

	ok(st == want_st && strcmp(got, want) == 0, "%s -c LINE of script %zu: as /bin/sh "
	    "runs it (exit %d)", sh, k, st);
	if (st != want_st || strcmp(got, want) != 0)
		diag("got [%s] want [%s]", got, want);
	free(got);
	free(line);
}

int
main(void)
{
	bool have[JC_ARRAY_LEN(shells)];
	char *want, *got, *line;

	for (size_t i = 0; i < JC_ARRAY_LEN(shells); i++)
		have[i] = access(shells[i], X_OK) == 0;
	if (access("/bin/sh", X_OK) != 0)
		skip_all("no /bin/sh");
	plan((int)(JC_ARRAY_LEN(scripts) * JC_ARRAY_LEN(shells) + 6));
	for (size_t k = 0; k < JC_ARRAY_LEN(scripts); k++) {
		/* a leading blank: /bin/sh -c takes no "-..." script for options */
		char *direct = xasprintf(" %s", scripts[k]);
		char *argv[] = { "/bin/sh", "-c", direct, NULL };
		int st = run(argv, NULL, &want);

		for (size_t i = 0; i < JC_ARRAY_LEN(shells); i++) {
			if (!have[i]) {
				ok(1, "# SKIP %s is not installed", shells[i]);
				continue;
			}
			shell_case(shells[i], scripts[k], want, st, k);
		}
		free(want);
		free(direct);
	}

	/* the line itself: one word after "exec /bin/sh -c", nothing a shell reads */
	line = tr_sh_command(scripts[1]);
	ok(strncmp(line, "exec /bin/sh -c '", 17) == 0 && strchr(line + 17, '\'') ==
	    line + strlen(line) - 1, "one single-quoted word for /bin/sh -c");
	ok(strchr(line, '\n') == NULL && strstr(line, "\\\\") == NULL &&
	    strstr(line, "\\'") == NULL, "no newline, no \\\\ and no \\' in it");
	free(line);

	/* standard input reaches the script untouched */
	line = tr_sh_command("IFS= read -r a; IFS= read -r b; printf '[%s][%s]' \"$a\" \"$b\"");
	for (size_t i = 0; i < 2; i++) {
		const char *sh = i == 0 ? "/usr/bin/zsh" : "/usr/bin/fish";
		char *argv[] = { (char *)sh, "-c", line, NULL };

		if (access(sh, X_OK) != 0) {
			ok(1, "# SKIP %s is not installed", sh);
			continue;
		}
		run(argv, "first 'x'\n  second\\n\n", &got);
		ok(strcmp(got, "[first 'x'][  second\\n]") == 0, "%s: stdin read by the script", sh);
		free(got);
	}
	free(line);

	/* what the wrapping is for: each of these breaks the script as it is */
	{
		char *a1[] = { "/usr/bin/zsh", "-c", (char *)scripts[3], NULL };
		char *a2[] = { "/usr/bin/fish", "-c", NULL, NULL };
		struct jc_buf q = { 0 };
		int st;

		if (access(a1[0], X_OK) == 0) {
			st = run(a1, NULL, &got);
			ok(st != 0 && strstr(got, "after") == NULL, "zsh -c SCRIPT alone aborts "
			    "on the unmatched glob (exit %d)", st);
			free(got);
		} else {
			ok(1, "# SKIP zsh is not installed");
		}
		jc_sh_quote(&q, scripts[1]);
		line = xasprintf("exec /bin/sh -c %s", q.data);
		a2[2] = line;
		if (access(a2[0], X_OK) == 0) {
			char *argv[] = { "/bin/sh", "-c", (char *)scripts[1], NULL };

			run(argv, NULL, &want);
			run(a2, NULL, &got);
			ok(strcmp(got, want) != 0, "fish -c \"exec /bin/sh -c 'SCRIPT'\" with "
			    "'\\'' quoting does not run the same script");
			free(want);
			free(got);
		} else {
			ok(1, "# SKIP fish is not installed");
		}
		free(line);
		buf_free(&q);
	}
	return done_testing();
}
