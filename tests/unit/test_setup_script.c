/* SPDX-License-Identifier: MIT */
/*
 * The setup script's frame reader on hand-written output (what the script
 * prints, as sh would print it), whole and a byte at a time, and the script
 * text: every word of a command single-quoted, sudo dropped inside the one
 * privileged part.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "setup_script.h"

#define TOK "jc0123456789abcdef0123456789abcd"

/* Every frame of out, fed in chunks of step bytes, as "KIND K STATUS [TEXT]" lines. */
static char *
frames(const char *out, size_t step, int *rc)
{
	struct ss_parser p;
	struct ss_event ev;
	struct jc_err err = { 0 };
	struct jc_buf b = { 0 };
	size_t n = strlen(out);

	buf_puts(&b, "");
	*rc = 0;
	ss_parser_init(&p, TOK);
	for (size_t off = 0; off < n && *rc >= 0; off += step) {
		ss_feed(&p, out + off, n - off < step ? n - off : step);
		while ((*rc = ss_next(&p, &ev, &err)) == 1) {
			static const char kinds[] = "QRSE";

			buf_printf(&b, "%c %zu %d", kinds[ev.kind], ev.k, ev.status);
			if (ev.text != NULL)
				buf_printf(&b, " [%s]", ev.text);
			buf_puts(&b, "\n");
			ss_event_clear(&ev);
		}
	}
	ss_parser_clear(&p);
	return buf_steal(&b);
}

static void
reader(void)
{
	/* printf '%s B 1\n'; ifconfig en2; printf '\n%s Q 1 %s\n' ... as the script writes them */
	static const char run[] =
	    "Last login: somewhere\n"
	    TOK " B 1\nen2: flags=8863<UP>\n\tinet 10.0.0.1\n\n" TOK " Q 1 0\n"
	    TOK " B 2\n\n" TOK " Q 2 1\n"
	    "not a frame " TOK " R\n"
	    TOK " R\n"
	    TOK " S 1\n" TOK " E 1 0\n\n" TOK " F\n"
	    TOK " S 2\n" TOK " E 2 1\nsudo: simulated failure\n" TOK " F\n";
	static const char want[] =
	    "Q 1 0 [en2: flags=8863<UP>\n\tinet 10.0.0.1\n]\n"
	    "Q 2 1 []\n"
	    "R 0 0\n"
	    "S 1 0\n"
	    "E 1 0 []\n"
	    "S 2 0\n"
	    "E 2 1 [sudo: simulated failure]\n";
	/* a forged end inside an output: without the token it is output */
	static const char forged[] =
	    TOK " B 1\njcffffffffffffffffffffffffffffff Q 1 0\n\n" TOK " Q 1 0\n";
	static const char *const bad[] = {
		TOK " X 1\n", TOK " S 0\n", TOK " S x\n", TOK " E 1 256\n\n" TOK " F\n",
		TOK " B 1\n\n" TOK " Q 2 0\n", TOK " R extra\n", TOK " S 1 2\n",
	};
	char *got;
	int rc;

	for (size_t step = 1; step <= sizeof(run); step += sizeof(run) - 1) {
		got = frames(run, step, &rc);
		ok(rc == 0 && strcmp(got, want) == 0, "every frame, in chunks of %zu bytes", step);
		if (strcmp(got, want) != 0)
			diag("got:\n%s", got);
		free(got);
	}
	got = frames(forged, 1, &rc);
	ok(rc == 0 && strcmp(got, "Q 1 0 [jcffffffffffffffffffffffffffffff Q 1 0\n]\n") == 0,
	    "a line that looks like an end but has another token is output");
	free(got);
	got = frames(TOK " B 1\nhalf an output", 1, &rc);
	ok(rc == 0 && *got == '\0', "an output without its end is not a frame yet");
	free(got);
	for (size_t i = 0; i < JC_ARRAY_LEN(bad); i++) {
		got = frames(bad[i], 3, &rc);
		ok(rc < 0, "malformed frame %zu refused", i);
		free(got);
	}
}

static void
script_text(void)
{
	char *argv1[] = { "sudo", "ifconfig", "bridge0", "down", NULL };
	char *argv2[] = { "sudo", "route", "-n", "delete", "-host", "192.168.0.2", NULL };
	struct plan_cmd c[] = { { argv1, 4, false }, { argv2, 6, true } };
	char *q[] = { "ifconfig en2", "route -n get 192.168.0.2" };
	char *s = setup_script(q, 2, c, 2, NULL), *w = ss_quote("it's");

	ok(strncmp(s, "exec /bin/sh -c '", 17) == 0, "the script runs as exec /bin/sh -c '...'");
	/* inside two levels of quoting a quote is '\'' then '\''\'\'''\'' */
	ok(strstr(s, "exec sudo -n /bin/sh -c '\\''") != NULL &&
	    strstr(s, "c 1 0 '\\''\\'\\'''\\''ifconfig'\\''\\'\\'''\\'' ") != NULL &&
	    strstr(s, "c 2 1 ") != NULL, "one sudo, commands quoted word by word, sudo dropped");
	ok(strstr(s, "sudo'") == NULL && strstr(s, "'sudo") == NULL, "no sudo word in a command");
	ok(strstr(s, "b 1; { ifconfig en2; } </dev/null 2>&1; q 1 $?") != NULL &&
	    strstr(s, "b 2; { route -n get 192.168.0.2; }") != NULL, "the queries first");
	ok(strcmp(w, "'it'\\''s'") == 0, "a quote in a word");
	free(w);
	free(s);
}

static const char *
paths(const char *name)
{
	return strcmp(name, "ifconfig") == 0 ? "/sbin/ifconfig" : NULL;
}

/* A scoped sudo: the commands part as the login user, each under its own sudo. */
static void
script_scoped(void)
{
	char *argv1[] = { "sudo", "ifconfig", "bridge0", "down", NULL };
	char *argv2[] = { "sudo", "route", "-n", "delete", "-host", "192.168.0.2", NULL };
	struct plan_cmd c[] = { { argv1, 4, false }, { argv2, 6, true } };
	char *q[] = { "ifconfig en2" };
	char *s = setup_script(q, 1, c, 2, paths);

	ok(strncmp(s, "exec /bin/sh -c '", 17) == 0 && strstr(s, "exec sudo -n /bin/sh") == NULL &&
	    strstr(s, "exec /bin/sh -c '\\''") != NULL,
	    "scoped: the commands part runs as the login user, no sudo of a shell");
	ok(strstr(s, "c 1 0 sudo -n '\\''\\'\\'''\\''/sbin/ifconfig'\\''\\'\\'''\\'' ") != NULL,
	    "scoped: each command under its own sudo -n, by its program's path");
	ok(strstr(s, "c 2 1 sudo -n '\\''\\'\\'''\\''route'\\''\\'\\'''\\'' ") != NULL,
	    "scoped: a program without a path keeps its name");
	ok(strstr(s, "b 1; { ifconfig en2; }") != NULL, "scoped: the queries as before");
	free(s);
}

int
main(void)
{
	reader();
	script_text();
	script_scoped();
	return done_testing();
}
