/* SPDX-License-Identifier: MIT */
/*
 * The probe's framing: probe_split() on framed outputs (anything inside a
 * frame, chatter outside, broken frames), and the probe script run by the
 * local /bin/sh with a token on its standard input, split back.
 */
#include "config.h"

#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../tap.h"
#include "parse_mgr.h"
#include "probe.h"

#define TOK "jc0123456789abcdef0123456789abcd"

extern char **environ;

static void
test_split(void)
{
	struct jc_raw raw = { 0 };
	struct jc_err err = { 0 };
	static const char out[] =
	    "Last login: chatter from a login shell\n"
	    TOK " B uname.txt\nDarwin\n\n" TOK " E uname.txt 0\n"
	    TOK " B a.txt\nno newline at the end\n" TOK " E a.txt 3\n"
	    TOK " B empty.txt\n\n" TOK " E empty.txt 0\n"
	    TOK " B tricky.txt\n" TOK " E other.txt 1\nx " TOK " B y\n\0bin\n\n" TOK " E tricky.txt 255\n";
	size_t ends[8];
	const struct jc_raw_out *o;
	int n;

	n = probe_split(TOK, out, sizeof(out) - 1, &raw, ends, 8, &err);
	is_int(n, 4, "four frames");
	o = raw_get(&raw, "uname.txt");
	ok(o && o->len == 7 && memcmp(o->data, "Darwin\n", 7) == 0 && o->status == 0,
	    "uname.txt: its output exactly, status 0");
	o = raw_get(&raw, "a.txt");
	ok(o && o->len == 21 && memcmp(o->data, "no newline at the end", 21) == 0 && o->status == 3,
	    "an output without a final newline keeps it absent; status 3");
	o = raw_get(&raw, "empty.txt");
	ok(o && o->len == 0 && o->status == 0, "an empty output");
	o = raw_get(&raw, "tricky.txt");
	ok(o && o->status == 255 && o->len == 2 * strlen(TOK) + 27 &&
	    memchr(o->data, '\0', o->len) != NULL,
	    "markers of other names, a NUL byte: all inside the output");
	ok(ends[0] < ends[1] && ends[3] == sizeof(out) - 1, "end offsets in order, the last at the end");
	raw_clear(&raw);

	n = probe_split(TOK, TOK " B a.txt\nhalf", 4 + strlen(TOK) + 10, &raw, NULL, 0, &err);
	ok(n < 0 && strstr(err.msg, "a.txt was cut short") != NULL, "a frame without its end: %s", err.msg);
	raw_clear(&raw);
	n = probe_split(TOK, TOK " B ../x\n\n" TOK " E ../x 0\n", 2 * strlen(TOK) + 18, &raw, NULL, 0, &err);
	ok(n < 0, "a frame name with a slash is refused");
	raw_clear(&raw);
	n = probe_split(TOK, TOK " B a\n\n" TOK " E a 300\n", 2 * strlen(TOK) + 15, &raw, NULL, 0, &err);
	ok(n < 0, "an exit status over 255 is refused");
	raw_clear(&raw);
	n = probe_split(TOK, "nothing framed at all\n", 22, &raw, NULL, 0, &err);
	is_int(n, 0, "no frame: zero outputs");
	raw_clear(&raw);
}

/* Run the probe script locally with sh, input (the token's line ...) on its stdin. */
static int
run_script_in(const char *script, const char *input, struct jc_buf *out)
{
	int in[2], o[2], st;
	posix_spawn_file_actions_t fa;
	char *argv[] = { "/bin/sh", "-c", (char *)script, NULL };
	pid_t pid;
	char buf[65536];
	ssize_t r;

	if (pipe(in) != 0 || pipe(o) != 0)
		return -1;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	posix_spawn_file_actions_adddup2(&fa, o[1], 1);
	posix_spawn_file_actions_addclose(&fa, in[1]);
	posix_spawn_file_actions_addclose(&fa, o[0]);
	if (posix_spawn(&pid, "/bin/sh", &fa, NULL, argv, environ) != 0)
		return -1;
	posix_spawn_file_actions_destroy(&fa);
	close(in[0]);
	close(o[1]);
	if (write(in[1], input, strlen(input)) < 0)
		return -1;
	close(in[1]);
	while ((r = read(o[0], buf, sizeof(buf))) > 0)
		buf_append(out, buf, (size_t)r);
	close(o[0]);
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The same with only the token on its stdin. */
static int
run_script(const char *script, struct jc_buf *out)
{
	return run_script_in(script, TOK "\n", out);
}

static void
test_script(void)
{
	char *script = probe_script(30);
	struct jc_buf out = { 0 }, want = { 0 };
	struct jc_raw raw = { 0 };
	struct jc_err err = { 0 };
	const struct jc_platform_ops *p = NULL;
	const struct jc_raw_out *u;
	size_t missing = 0;
	FILE *fp;
	char line[256];
	int n;

	ok(strstr(script, TOK) == NULL && strstr(script, "read -r T") != NULL,
	    "the script reads its token from stdin");
	is_int(run_script(script, &out), 0, "the script runs to its end with /bin/sh");
	n = probe_split(TOK, out.data ? out.data : "", out.len, &raw, NULL, 0, &err);
	ok(n > 0, "its output splits into %d frames", n);
	fp = popen("uname -s", "r");
	while (fp && fgets(line, sizeof(line), fp))
		buf_puts(&want, line);
	if (fp)
		pclose(fp);
	u = raw_get(&raw, "uname.txt");
	is_str(u ? u->data : NULL, want.data, "uname.txt is what uname -s prints");
	if (u != NULL)
		for (const struct jc_platform_ops *const *q = (const struct jc_platform_ops *const[]){
		    &jc_platform_macos, &jc_platform_linux, NULL }; *q; q++)
			if (strncmp(u->data, (*q)->uname, strlen((*q)->uname)) == 0)
				p = *q;
	if (p == NULL) {
		ok(1, "# SKIP this system is neither macOS nor Linux");
	} else {
		for (const struct jc_probe_cmd *c = p->cmds; c->name; c++)
			if (raw_get(&raw, c->name) == NULL) {
				diag("missing: %s", c->name);
				missing++;
			}
		is_int((long long)missing, 0, "every command of this system's backend has its frame");
	}
	raw_clear(&raw);
	buf_free(&out);
	buf_free(&want);
	free(script);
}

/*
 * The script of a plain --dot (no sudo check, only what the cables need),
 * run here: its frames are exactly this system's cabling_cmds.
 */
static void
test_script_cabling(void)
{
	char *script = probe_script_opts(30, false, PROBE_NO_SUDO | PROBE_CABLING_ONLY);
	struct jc_buf out = { 0 };
	struct jc_raw raw = { 0 };
	struct jc_err err = { 0 };
	const struct jc_raw_out *u;
	const struct jc_platform_ops *p = NULL;
	size_t want = 0, missing = 0;

	is_int(run_script(script, &out), 0, "the cables' script runs to its end with /bin/sh");
	probe_split(TOK, out.data ? out.data : "", out.len, &raw, NULL, 0, &err);
	u = raw_get(&raw, "uname.txt");
	for (const struct jc_platform_ops *const *q = (const struct jc_platform_ops *const[]){
	    &jc_platform_macos, &jc_platform_linux, NULL }; u != NULL && *q; q++)
		if (strncmp(u->data, (*q)->uname, strlen((*q)->uname)) == 0)
			p = *q;
	if (p == NULL || p->cabling_cmds == NULL) {
		ok(1, "# SKIP this system's backend has no list of what the cables need");
	} else {
		for (size_t i = 0; p->cabling_cmds[i] != NULL; i++, want++)
			if (raw_get(&raw, p->cabling_cmds[i]) == NULL) {
				diag("missing: %s", p->cabling_cmds[i]);
				missing++;
			}
		ok(missing == 0 && raw.n == want,
		    "its frames are the %zu outputs the cables need, no other (%zu frames)", want,
		    raw.n);
	}
	raw_clear(&raw);
	buf_free(&out);
	free(script);
}

/*
 * watch's later looks (PROBE_CHANGING_ONLY, uname's answer given): no
 * uname, no sudo, nothing of what stays as it was (model, version, port
 * map, routes, RDMA's switch); run here, its frames are uname's two given
 * on its standard input and exactly this system's watch_cmds.
 */
static void
test_script_changing(void)
{
	char *script = probe_script_opts(30, false,
	    PROBE_NO_SUDO | PROBE_UNAME_GIVEN | PROBE_CHANGING_ONLY);
	static const char *const never[] = {
		"uname -", "sudo", "sysctl", "sw_vers", "networksetup", "netstat", "rdma_ctl",
		"os-release", "netmgr", NULL,
	};
	struct jc_buf out = { 0 }, in = { 0 };
	struct jc_raw raw = { 0 };
	struct jc_err err = { 0 };
	const struct jc_raw_out *u, *hn;
	const struct jc_platform_ops *p = NULL;
	size_t want = 2, missing = 0;
	FILE *fp;
	char line[256] = "";

	for (size_t i = 0; never[i] != NULL; i++)
		ok(strstr(script, never[i]) == NULL, "no %s in the script", never[i]);
	fp = popen("uname -s", "r");
	if (fp == NULL || fgets(line, sizeof(line), fp) == NULL)
		line[0] = '\0';
	if (fp)
		pclose(fp);
	line[strcspn(line, "\n")] = '\0';
	buf_printf(&in, "%s\n0\n%s given-name\n", TOK, line);
	is_int(run_script_in(script, in.data, &out), 0, "it runs to its end with /bin/sh");
	probe_split(TOK, out.data ? out.data : "", out.len, &raw, NULL, 0, &err);
	u = raw_get(&raw, "uname.txt");
	for (const struct jc_platform_ops *const *q = (const struct jc_platform_ops *const[]){
	    &jc_platform_macos, &jc_platform_linux, NULL }; u != NULL && *q; q++)
		if (strncmp(u->data, (*q)->uname, strlen((*q)->uname)) == 0)
			p = *q;
	hn = raw_get(&raw, "hostname.txt");
	ok(u != NULL && hn != NULL && strcmp(hn->data, "given-name\n") == 0,
	    "uname.txt and hostname.txt are the answer given on its standard input");
	if (p == NULL || p->watch_cmds == NULL) {
		ok(1, "# SKIP this system's backend has no list of what changes");
	} else {
		for (size_t i = 0; p->watch_cmds[i] != NULL; i++, want++)
			if (raw_get(&raw, p->watch_cmds[i]) == NULL) {
				diag("missing: %s", p->watch_cmds[i]);
				missing++;
			}
		ok(missing == 0 && raw.n == want,
		    "its frames are uname's and the %zu outputs that change, no other (%zu frames)",
		    want - 2, raw.n);
	}
	raw_clear(&raw);
	buf_free(&out);
	buf_free(&in);
	free(script);
}

/*
 * The other managers' command (MGR_SH, a Mac's) is in the doctor's script
 * and in one that does not leave it out, in no script that does (a plain
 * setup, watch).
 */
static void
test_script_managers(void)
{
	char *plain = probe_script_opts(30, false, PROBE_NO_MANAGERS);
	char *asked = probe_script_opts(30, false, 0);
	char *doc = probe_script_opts(30, true, 0);
	const char *cmd = "networksetup -getcurrentlocation";

	ok(strstr(plain, cmd) == NULL && strstr(plain, MGR_FILE) == NULL,
	    "PROBE_NO_MANAGERS: no question of the other managers");
	ok(strstr(asked, cmd) != NULL && strstr(doc, cmd) != NULL &&
	    strstr(doc, "jc_start_sub " MGR_FILE " ") != NULL,
	    "asked otherwise, framed as " MGR_FILE " in a subshell of its own");
	free(plain);
	free(asked);
	free(doc);
}

int
main(void)
{
	(void)plan;
	(void)skip_all;
	test_split();
	test_script();
	test_script_cabling();
	test_script_changing();
	test_script_managers();
	return done_testing();
}
