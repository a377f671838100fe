/* SPDX-License-Identifier: MIT */
/*
 * The setup of one host as one remote script, and the reader of its framed
 * output. See setup_script.h.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "setup_script.h"

char *
ss_quote(const char *s)
{
	struct jc_buf b = { 0 };

	jc_sh_quote(&b, s);
	return buf_steal(&b);
}

/*
 * The privileged part: one function call per command. Under one sudo, a
 * leading "sudo" is dropped; with paths (each command under its own sudo),
 * it runs as `sudo -n PATH ARGS`, PATH what paths gives for the command's
 * name (the name itself when it gives NULL).
 */
static char *
inner_script(const struct plan_cmd *c, size_t nc, const char *(*paths)(const char *))
{
	struct jc_buf b = { 0 };

	buf_puts(&b,
	    "read -r T || exit 97\n"
	    "c() {\n"
	    "\tk=$1 m=$2\n"
	    "\tshift 2\n"
	    "\tprintf '%s S %s\\n' \"$T\" \"$k\"\n"
	    "\tread -r a || exit 98\n"
	    "\t[ \"$a\" = go ] || exit 0\n"
	    "\te=$(\"$@\" 2>&1 >/dev/null </dev/null)\n"
	    "\ts=$?\n"
	    "\tprintf '%s E %s %s\\n%s\\n%s F\\n' \"$T\" \"$k\" \"$s\" \"$e\" \"$T\"\n"
	    "\t[ \"$s\" = 0 ] || [ \"$m\" = 1 ] || exit \"$s\"\n"
	    "}\n");
	for (size_t i = 0; i < nc; i++) {
		size_t first = c[i].argc > 1 && strcmp(c[i].argv[0], "sudo") == 0 ? 1 : 0;

		buf_printf(&b, "c %zu %d", i + 1, c[i].may_fail ? 1 : 0);
		if (first == 1 && paths != NULL)
			buf_puts(&b, " sudo -n");
		for (size_t k = first; k < c[i].argc; k++) {
			const char *w = c[i].argv[k], *p;
			char *q;

			if (k == first && first == 1 && paths != NULL && (p = paths(w)) != NULL)
				w = p;
			q = ss_quote(w);
			buf_printf(&b, " %s", q);
			free(q);
		}
		buf_puts(&b, "\n");
	}
	return buf_steal(&b);
}

char *
setup_script(char *const *q, size_t nq, const struct plan_cmd *c, size_t nc,
    const char *(*paths)(const char *))
{
	struct jc_buf b = { 0 };
	char *inner = inner_script(c, nc, paths), *qi = ss_quote(inner), *all;

	buf_puts(&b,
	    "read -r T || exit 97\n"
	    "b() { printf '%s B %s\\n' \"$T\" \"$1\"; }\n"
	    "q() { printf '\\n%s Q %s %s\\n' \"$T\" \"$1\" \"$2\"; }\n");
	for (size_t i = 0; i < nq; i++)
		buf_printf(&b, "b %zu; { %s; } </dev/null 2>&1; q %zu $?\n", i + 1, q[i], i + 1);
	buf_puts(&b,
	    "printf '%s R\\n' \"$T\"\n"
	    "read -r a || exit 98\n"
	    "[ \"$a\" = go ] || exit 0\n");
	buf_printf(&b, "exec %s/bin/sh -c %s\n", paths != NULL ? "" : "sudo -n ", qi);
	free(qi);
	free(inner);
	qi = ss_quote(b.data);
	all = xasprintf("exec /bin/sh -c %s", qi);
	free(qi);
	buf_free(&b);
	return all;
}

/* ---- reading the frames ---- */

void
ss_parser_init(struct ss_parser *p, const char *token)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->token, sizeof(p->token), "%s", token);
}

void
ss_parser_clear(struct ss_parser *p)
{
	buf_free(&p->buf);
	memset(p, 0, sizeof(*p));
}

void
ss_feed(struct ss_parser *p, const char *data, size_t len)
{
	/* drop what was consumed once it is most of the buffer */
	if (p->pos > 0 && p->pos >= p->buf.len / 2) {
		memmove(p->buf.data, p->buf.data + p->pos, p->buf.len - p->pos);
		p->buf.len -= p->pos;
		p->pos = 0;
	}
	buf_append(&p->buf, data, len);
}

size_t
ss_pending(const struct ss_parser *p)
{
	return p->buf.len - p->pos;
}

void
ss_event_clear(struct ss_event *ev)
{
	free(ev->text);
	memset(ev, 0, sizeof(*ev));
}

/*
 * Split the words of s[0..n) (single spaces) into numbers: exactly nw of
 * them, each 0..max. Returns true when they are.
 */
static bool
numbers(const char *s, size_t n, long *v, size_t nw, long max)
{
	size_t i = 0;

	for (size_t w = 0; w < nw; w++) {
		char tmp[16];
		size_t l = 0;

		if (i >= n || s[i] != ' ')
			return false;
		i++;
		while (i + l < n && s[i + l] != ' ')
			l++;
		if (l == 0 || l >= sizeof(tmp))
			return false;
		memcpy(tmp, s + i, l);
		tmp[l] = '\0';
		for (size_t k = 0; k < l; k++)
			if (tmp[k] < '0' || tmp[k] > '9')
				return false;
		if (!jc_parse_int(tmp, 0, max, &v[w]))
			return false;
		i += l;
	}
	return i == n;
}

#define SS_MAX_K 1000000L

/*
 * The end of a framed text that starts at from: the offset of "\nTOKEN
 * what" (what includes its trailing space or newline), or -1.
 */
static long
find_end(const struct ss_parser *p, size_t from, const char *what)
{
	struct jc_buf needle = { 0 };
	const char *hit;
	long r = -1;

	buf_printf(&needle, "\n%s %s", p->token, what);
	if (from <= p->buf.len) {
		hit = memmem(p->buf.data + from, p->buf.len - from, needle.data, needle.len);
		if (hit != NULL)
			r = hit - p->buf.data;
	}
	buf_free(&needle);
	return r;
}

static void
take_text(struct ss_event *ev, const char *s, size_t n)
{
	ev->text = xstrndup(s, n);
	ev->len = n;
}

int
ss_next(struct ss_parser *p, struct ss_event *ev, struct jc_err *err)
{
	size_t tl = strlen(p->token);

	memset(ev, 0, sizeof(*ev));
	for (;;) {
		const char *line = p->buf.data + p->pos, *nl, *rest;
		size_t avail = p->buf.len - p->pos, ll, rl, body;
		long v[2], end;

		if (avail == 0 || (nl = memchr(line, '\n', avail)) == NULL)
			return 0;
		ll = (size_t)(nl - line);
		body = p->pos + ll + 1;
		if (ll < tl + 2 || memcmp(line, p->token, tl) != 0 || line[tl] != ' ') {
			p->pos = body;	/* not a frame */
			continue;
		}
		rest = line + tl + 1;
		rl = ll - tl - 1;
		switch (rest[0]) {
		case 'R':
			if (rl != 1)
				break;
			p->pos = body;
			ev->kind = SS_READY;
			return 1;
		case 'S':
			if (!numbers(rest + 1, rl - 1, v, 1, SS_MAX_K) || v[0] == 0)
				break;
			p->pos = body;
			ev->kind = SS_START;
			ev->k = (size_t)v[0];
			return 1;
		case 'B': {
			const char *q, *qnl;
			long w[2];

			if (!numbers(rest + 1, rl - 1, v, 1, SS_MAX_K) || v[0] == 0)
				break;
			if ((end = find_end(p, body, "Q ")) < 0)
				return 0;
			q = p->buf.data + end + 1;
			qnl = memchr(q, '\n', p->buf.len - (size_t)end - 1);
			if (qnl == NULL)
				return 0;
			if (!numbers(q + tl + 2, (size_t)(qnl - q) - tl - 2, w, 2, 255) ||
			    w[0] != v[0])
				return jc_fail(err, -EPROTO, "setup script: bad end of output %ld",
				    v[0]);
			/* the output sits between the B line and the newline before Q */
			take_text(ev, p->buf.data + body, (size_t)end - body);
			ev->kind = SS_QUERY;
			ev->k = (size_t)v[0];
			ev->status = (int)w[1];
			p->pos = (size_t)(qnl - p->buf.data) + 1;
			return 1;
		}
		case 'E':
			if (!numbers(rest + 1, rl - 1, v, 2, SS_MAX_K) ||
			    v[0] == 0 || v[1] > 255)
				break;
			if ((end = find_end(p, body, "F\n")) < 0)
				return 0;
			take_text(ev, p->buf.data + body, (size_t)end - body);
			ev->kind = SS_END;
			ev->k = (size_t)v[0];
			ev->status = (int)v[1];
			p->pos = (size_t)end + 1 + tl + 3;
			return 1;
		default:
			break;
		}
		return jc_fail(err, -EPROTO, "setup script: bad frame \"%.*s\"", (int)(rl > 40 ? 40 : rl),
		    rest);
	}
}
