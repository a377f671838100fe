/* SPDX-License-Identifier: MIT */
/*
 * The transport ops: dispatch, and the choice between a live transport and
 * a replayed bundle. See transport.h.
 */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport.h"

char *
tr_sh_command(const char *script)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "exec /bin/sh -c 'exec /bin/sh -c \"$(printf \"");
	/* a leading blank: neither printf nor /bin/sh takes the script for options */
	if (*script == '-')
		buf_puts(&b, " ");
	for (const unsigned char *p = (const unsigned char *)script; *p; p++) {
		if (*p == '%')
			buf_puts(&b, "%%");
		else if (*p == '\n')
			buf_puts(&b, "\\n");
		else if (*p < 0x20 || *p > 0x7e || strchr("'\\\"$`!", *p) != NULL)
			buf_printf(&b, "\\%03o", *p);
		else
			buf_append(&b, (const char *)p, 1);
	}
	buf_puts(&b, "\")\"'");
	return buf_steal(&b);
}

struct jc_transport *
transport_default(const struct tr_opts *o, const char *from)
{
	return from != NULL ? transport_replay_new(from) : transport_ssh_new(o);
}

void
transport_free(struct jc_transport *t)
{
	if (t != NULL)
		t->ops->free(t);
}

int
tp_connect(struct jc_transport *t, const char *host, const char *user, int port,
    struct jc_conn **out, struct jc_err *err)
{
	*out = NULL;
	return t->ops->connect(t, host, user, port, out, err);
}

int
tp_run(struct jc_conn *c, const char *command, const char *in, size_t inlen, double timeout,
    size_t cap, struct tr_result *r, struct jc_err *err)
{
	return c->t->ops->run(c, command, in, inlen, timeout, cap, r, err);
}

int
tp_stream(struct jc_conn *c, const char *command, const char *in, size_t inlen,
    const struct tr_stream_cbs *cbs, void *arg, double timeout, int *status,
    struct jc_err *err)
{
	return c->t->ops->stream(c, command, in, inlen, cbs, arg, timeout, status, err);
}

int
tp_dialog(struct jc_conn *c, const char *command, const char *in, size_t inlen,
    const struct tp_dialog_cbs *cbs, void *arg, double timeout, int *status,
    struct jc_err *err)
{
	if (c->t->ops->dialog == NULL)
		return jc_fail(err, -ENOTSUP, "%s: the %s transport cannot run a setup script",
		    c->host, c->t->ops->name);
	return c->t->ops->dialog(c, command, in, inlen, cbs, arg, timeout, status, err);
}

void
tp_close(struct jc_conn *c)
{
	if (c != NULL)
		c->t->ops->close(c);
}

/* addr is an address of the local network: private or link-local. */
static bool
lan_address(const char *addr)
{
	unsigned char a[16];

	if (inet_pton(AF_INET, addr, a) == 1)
		return a[0] == 10 || (a[0] == 172 && (a[1] & 0xf0) == 16) ||
		    (a[0] == 192 && a[1] == 168) || (a[0] == 169 && a[1] == 254);
	if (inet_pton(AF_INET6, addr, a) == 1)
		return (a[0] == 0xfe && (a[1] & 0xc0) == 0x80) || (a[0] & 0xfe) == 0xfc;
	return false;
}

const char *
tr_lan_hint(const char *addr, const char *sysname, const char *release,
    const char *term_program, char *buf, size_t len)
{
	static const struct {
		const char *term, *app;
	} apps[] = {
		{ "iTerm.app", "iTerm" },
		{ "ghostty", "Ghostty" },
		{ "vscode", "Visual Studio Code" },
		{ "WezTerm", "WezTerm" },
		{ "WarpTerminal", "Warp" },
	};
	const char *app = NULL;
	char *end;
	long major;

	if (addr == NULL || sysname == NULL || release == NULL || strcmp(sysname, "Darwin") != 0)
		return NULL;
	major = strtol(release, &end, 10);
	if (end == release || major < 24 || !lan_address(addr))
		return NULL;
	if (term_program != NULL && strcmp(term_program, "Apple_Terminal") == 0)
		return NULL;
	for (size_t i = 0; term_program != NULL && i < sizeof(apps) / sizeof(apps[0]); i++)
		if (strcmp(term_program, apps[i].term) == 0)
			app = apps[i].app;
	if (app != NULL)
		snprintf(buf, len, "macOS lets an app reach the local network only once it is "
		    "allowed: turn %s on in System Settings > Privacy & Security > Local Network "
		    "(or run this from Terminal, which needs no permission)", app);
	else
		snprintf(buf, len, "macOS lets an app reach the local network only once it is "
		    "allowed: turn the app this runs in (iTerm, Ghostty, Visual Studio Code ...) on "
		    "in System Settings > Privacy & Security > Local Network (Terminal needs no "
		    "permission)");
	return buf;
}
