/* SPDX-License-Identifier: MIT */
/*
 * verify --mlx without hosts: the program built into the binary is the
 * installed file byte for byte; the command lines (a named program, the
 * sh script with the Python candidates or the one named); the script run
 * by /bin/sh here runs the real Python program and prints its check line;
 * the program's lines parsed; the sizes taken from a runtime report.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../tap.h"
#include "util.h"
#include "verify_mlx.h"

static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	struct jc_buf b = { 0 };
	char chunk[4096];
	size_t n;

	if (f == NULL)
		return NULL;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_append(&b, chunk, n);
	fclose(f);
	buf_puts(&b, "");
	return buf_steal(&b);
}

/* Run argv (PATH set to path) and return its standard output. */
static char *
run(const struct jc_strv *argv, const char *path)
{
	int p[2];
	pid_t pid;
	struct jc_buf b = { 0 };
	char chunk[4096];
	ssize_t n;

	if (pipe(p) < 0)
		return NULL;
	if ((pid = fork()) == 0) {
		dup2(p[1], 1);
		close(p[0]);
		setenv("PATH", path, 1);
		execv(argv->v[0], argv->v);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], chunk, sizeof(chunk))) > 0)
		buf_append(&b, chunk, (size_t)n);
	close(p[0]);
	waitpid(pid, NULL, 0);
	buf_puts(&b, "");
	return buf_steal(&b);
}

static int
parse(const char *line, json_t **o)
{
	return verify_mlx_parse(line, strlen(line), o);
}

static const char *
sget(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

int
main(void)
{
	const char *src = getenv("top_srcdir");
	char *path = xasprintf("%s/data/mlx/verify-mlx.py", src ? src : ".");
	char *file = slurp(path);
	struct verify_mlx_opts m = { 0 };
	struct jc_strv argv = { 0 };
	static const char *const check[] = { "check" };
	json_t *o, *rep;
	char *out;

	ok(file != NULL && strcmp(file, verify_mlx_program) == 0,
	    "the built-in program is data/mlx/verify-mlx.py byte for byte");

	m.program = "/opt/jaccl/jaccl_verify_mlx";
	verify_mlx_argv(&m, check, 1, &argv);
	ok(argv.n == 2 && strcmp(argv.v[0], m.program) == 0 && strcmp(argv.v[1], "check") == 0,
	    "a named program: run as PROGRAM check");
	strv_free(&argv);

	m.program = NULL;
	verify_mlx_argv(&m, check, 1, &argv);
	ok(argv.n == 5 && strcmp(argv.v[0], "/bin/sh") == 0 && strcmp(argv.v[1], "-c") == 0 &&
	    strstr(argv.v[2], "for p in " VERIFY_MLX_PYTHONS "; do") != NULL &&
	    strstr(argv.v[2], "/usr/bin/xcode-select -p") != NULL &&
	    strcmp(argv.v[3], VERIFY_MLX_TAG) == 0 && strcmp(argv.v[4], "check") == 0,
	    "Python: /bin/sh -c SCRIPT with Homebrew's, /usr/local's, then PATH's python3");
	/* the script, run here with this machine's python3 (which has no mlx) */
	out = run(&argv, "/usr/bin:/bin");
	o = NULL;
	ok(out != NULL && verify_mlx_parse(out, strlen(out), &o) == 0 &&
	    strcmp(sget(o, "kind"), "check") == 0 && strcmp(sget(o, "mlx"), "none") == 0 &&
	    sget(o, "python")[0] == '/' && strstr(sget(o, "why"), "mlx") != NULL,
	    "the script runs the program in python3: its check line says mlx=none and why");
	if (o == NULL)
		diag("output: %s", out ? out : "(none)");
	json_decref(o);
	free(out);
	out = run(&argv, "/nonexistent");
	o = NULL;
	ok(out != NULL && verify_mlx_parse(out, strlen(out), &o) == 0 &&
	    strcmp(sget(o, "python"), "none") == 0 &&
	    strcmp(sget(o, "why"), "no Python found: none of: " VERIFY_MLX_PYTHONS) == 0,
	    "no python3 anywhere: the script says so in a check line");
	json_decref(o);
	free(out);
	strv_free(&argv);

	m.python = "/Users/me/venv/bin/python3";
	verify_mlx_argv(&m, check, 1, &argv);
	ok(strstr(argv.v[2], "for p in '/Users/me/venv/bin/python3'; do") != NULL &&
	    strstr(argv.v[2], "/usr/bin/xcode-select -p") == NULL,
	    "a named Python: the only candidate, taken as it is");
	strv_free(&argv);

	/* the lines */
	ok(parse("jaccl-verify-mlx op=all_gather bytes=8 wrong=2 first=3 got=0 "
	    "want=33554432\n", &o) == 0 && strcmp(sget(o, "op"), "all_gather") == 0 &&
	    strcmp(sget(o, "first"), "3") == 0 && strcmp(sget(o, "want"), "33554432") == 0,
	    "an operation's line: its words");
	json_decref(o);
	ok(parse("jaccl-verify-mlx check python=/usr/bin/python3 mlx=none "
	    "why=ModuleNotFoundError: No module named 'mlx'", &o) == 0 &&
	    strcmp(sget(o, "why"), "ModuleNotFoundError: No module named 'mlx'") == 0,
	    "a check line: why is the rest of the line");
	json_decref(o);
	ok(parse("jaccl-verify-mlxx done", &o) == -EINVAL && o == NULL &&
	    parse("[jaccl] Couldn't connect", &o) == -EINVAL,
	    "other lines are not the program's");

	/* sizes from the runtime: its last float all-reduce row and all-gather block */
	rep = json_pack("{s:{s:[{s:i,s:s,s:f},{s:i,s:s,s:f},{s:i,s:s,s:f}]},"
	    "s:{s:[{s:i,s:f},{s:i,s:f}]}}",
	    "allreduce", "rows", "size", 1024, "type", "float", "time_us", 10.0,
	    "size", 1048576, "type", "float", "time_us", 50000.0,
	    "size", 1048576, "type", "int32", "time_us", 1.0,
	    "allgather", "rows", "block", 8, "time_us", 1.0, "block", 262144, "time_us", 25000.0);
	verify_mlx_sizes(rep, &m);
	ok(m.sum_bytes == 1048576 && m.gather_bytes == 262144 && m.iters == 5,
	    "sizes from the runtime's largest rows, 0.25 s of calls at its pace (%zu %zu %ld)",
	    m.sum_bytes, m.gather_bytes, m.iters);
	json_decref(rep);
	rep = json_object();
	verify_mlx_sizes(rep, &m);
	ok(m.sum_bytes == 1u << 20 && m.gather_bytes == 256u << 10 && m.iters == 20,
	    "no runtime rows: 1 MiB, 256 KiB, 20 calls");
	json_decref(rep);
	free(file);
	free(path);
	return done_testing();
}
