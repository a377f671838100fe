/* SPDX-License-Identifier: MIT */
/*
 * The command layer's output: JSON documents and the write-error check of
 * standard output, the echo of remote commands, and the messages on
 * standard error. See output.h.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exitcode.h"
#include "output.h"

int jc_verbosity;

/* The first write error seen on standard output (errno value), or 0. */
static int out_errno;

static int
out_failed(void)
{
	int e = errno ? errno : EIO;

	if (out_errno == 0)
		out_errno = e;
	return -e;
}

int
out_json(const json_t *doc)
{
	errno = 0;
	if (json_dumpf(doc, stdout, OUT_JSON_FLAGS) != 0 || putchar('\n') == EOF)
		return out_failed();
	return 0;
}

int
out_flush(void)
{
	errno = 0;
	if (fflush(stdout) != 0)
		return out_failed();
	return 0;
}

int
out_status(int rc)
{
	out_flush();
	if (out_errno == 0 && ferror(stdout))
		out_errno = EIO;
	if (out_errno == 0)
		return rc;
	jc_error(NULL, "cannot write to standard output: %s", strerror(out_errno));
	return rc == JC_EXIT_OK ? JC_EXIT_FAIL : rc;
}

void
out_stderr(const char *text)
{
	fputs(text, stderr);
	fflush(stderr);
}

void
out_cmd_echo(const char *host, const char *cmd, const char *note)
{
	char *line = xasprintf("[#] %s: %s%s%s\n", host, cmd, note ? "   " : "",
	    note ? note : "");

	out_stderr(line);
	free(line);
}

static void
vmsg(const char *kind, const char *host, const char *fmt, va_list ap)
{
	struct jc_buf b = { 0 };
	char *s = xvasprintf(fmt, ap);

	if (kind != NULL && strcmp(kind, "error: ") == 0)
		out_remember_error(host, s);
	buf_printf(&b, "%s: ", JC_PROG);
	if (host) {
		jc_buf_printable(&b, host, 0, false);
		buf_puts(&b, ": ");
	}
	if (kind)
		buf_puts(&b, kind);
	/* whatever a host sent that reached the text: no escape reaches the terminal */
	jc_buf_printable(&b, s, 0, true);
	buf_puts(&b, "\n");
	fputs(b.data, stderr);	/* one write per message: hosts run in parallel */
	buf_free(&b);
	free(s);
}

/* A message function: kind after the prefix, printed only when shown is true. */
#define MESSAGE_FN(name, kind, shown)					\
	void								\
	name(const char *host, const char *fmt, ...)			\
	{								\
		va_list ap;						\
									\
		if (!(shown))						\
			return;						\
		va_start(ap, fmt);					\
		vmsg(kind, host, fmt, ap);				\
		va_end(ap);						\
	}

MESSAGE_FN(jc_error, "error: ", true)
MESSAGE_FN(jc_warn, "warning: ", true)
MESSAGE_FN(jc_note, NULL, true)
MESSAGE_FN(jc_info, NULL, jc_verbosity > 0)

void
out_error_lines(const char *msg)
{
	const char *nl = strchr(msg, '\n');

	if (nl == NULL) {
		jc_error(NULL, "%s", msg);
		return;
	}
	jc_error(NULL, "%.*s", (int)(nl - msg), msg);
	fprintf(stderr, "%s\n", nl + 1);
}

void
out_warn_each(const struct jc_strv *w, const char *prefix)
{
	for (size_t i = 0; i < w->n; i++)
		jc_warn(NULL, "%s%s", prefix, w->v[i]);
}

static pthread_mutex_t last_lock = PTHREAD_MUTEX_INITIALIZER;
static char *last_error;

void
out_remember_error(const char *host, const char *msg)
{
	pthread_mutex_lock(&last_lock);
	free(last_error);
	last_error = host ? xasprintf("%s: %s", host, msg) : xstrdup(msg);
	pthread_mutex_unlock(&last_lock);
}

void
out_json_error(int status)
{
	json_t *doc;

	pthread_mutex_lock(&last_lock);
	doc = json_pack("{s:{s:s, s:i, s:s?}}", "error", "code", cli_exit_code(status),
	    "status", status, "message", last_error);
	pthread_mutex_unlock(&last_lock);
	out_json(doc);
	json_decref(doc);
}
