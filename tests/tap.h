/* SPDX-License-Identifier: MIT */
/*
 * A tiny TAP producer for the C unit tests (read by automake's TAP driver).
 * Header-only: each test program includes it once.
 */
#ifndef JC_TAP_H
#define JC_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tap_n, tap_failed, tap_planned;

/* Not every test uses every helper. */
#define TAP_UNUSED __attribute__((unused))

static TAP_UNUSED void
plan(int n)
{
	tap_planned = n;
	printf("1..%d\n", n);
}

static TAP_UNUSED void
skip_all(const char *reason)
{
	printf("1..0 # SKIP %s\n", reason);
	exit(0);
}

static TAP_UNUSED int __attribute__((format(printf, 2, 3)))
ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	if (!cond)
		tap_failed++;
	fflush(stdout);
	return cond;
}

static TAP_UNUSED void __attribute__((format(printf, 1, 2)))
diag(const char *fmt, ...)
{
	va_list ap;

	fputs("# ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static TAP_UNUSED int
is_str(const char *got, const char *want, const char *name)
{
	int c = (got == NULL && want == NULL) ||
	    (got != NULL && want != NULL && strcmp(got, want) == 0);

	ok(c, "%s", name);
	if (!c)
		diag("got '%s', want '%s'", got ? got : "(null)", want ? want : "(null)");
	return c;
}

static TAP_UNUSED int
is_int(long long got, long long want, const char *name)
{
	int c = got == want;

	ok(c, "%s", name);
	if (!c)
		diag("got %lld, want %lld", got, want);
	return c;
}

static TAP_UNUSED int
done_testing(void)
{
	if (!tap_planned)
		printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
