/* SPDX-License-Identifier: MIT */
/*
 * The transport ops: dispatch, and the choice between a live transport and
 * a replayed bundle. See transport.h.
 */
#include "config.h"

#include <errno.h>
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
