/* SPDX-License-Identifier: MIT */
/*
 * Raw probe outputs and the choice of a platform backend. A struct jc_raw
 * holds what each probe command printed, by bundle file name; the backend
 * that understands it is chosen from "uname.txt" when the probe captured
 * it, else from which files are present.
 */
#include "config.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "parse_sudo.h"
#include "platform.h"
#include "util.h"

const struct jc_raw_out *
raw_get(const struct jc_raw *raw, const char *name)
{
	if (raw == NULL || name == NULL)
		return NULL;
	for (size_t i = 0; i < raw->n; i++)
		if (strcmp(raw->outs[i].name, name) == 0)
			return &raw->outs[i];
	return NULL;
}

/* Room for one more output; the array grows by doubling (its size is a power of two). */
static struct jc_raw_out *
raw_append(struct jc_raw *raw, const char *name)
{
	struct jc_raw_out *o;

	if ((raw->n & (raw->n - 1)) == 0)	/* 0, 1, 2, 4, ...: full */
		raw->outs = xreallocarray(raw->outs, raw->n ? 2 * raw->n : 1, sizeof(*raw->outs));
	o = &raw->outs[raw->n++];
	o->name = xstrdup(name);
	return o;
}

static void
raw_set(struct jc_raw_out *o, const char *data, size_t len, int status)
{
	o->data = xmalloc(len + 1);
	if (len > 0)
		memcpy(o->data, data, len);
	o->data[len] = '\0';
	o->len = len;
	o->status = status;
}

void
raw_add_new(struct jc_raw *raw, const char *name, const char *data, size_t len, int status)
{
	raw_set(raw_append(raw, name), data, len, status);
}

void
raw_add(struct jc_raw *raw, const char *name, const char *data, size_t len, int status)
{
	struct jc_raw_out *o = NULL;

	for (size_t i = 0; i < raw->n; i++)
		if (strcmp(raw->outs[i].name, name) == 0) {
			o = &raw->outs[i];
			free(o->data);
			break;
		}
	if (o == NULL)
		o = raw_append(raw, name);
	raw_set(o, data, len, status);
}

void
raw_clear(struct jc_raw *raw)
{
	if (raw == NULL)
		return;
	for (size_t i = 0; i < raw->n; i++) {
		free(raw->outs[i].name);
		free(raw->outs[i].data);
	}
	free(raw->outs);
	free(raw->host);
	memset(raw, 0, sizeof(*raw));
}

static bool
has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

const struct jc_platform_ops *
platform_for_raw(const struct jc_raw *raw)
{
	static const struct jc_platform_ops *const all[] = {
		&jc_platform_macos, &jc_platform_linux,
	};
	const struct jc_raw_out *u = raw_get(raw, "uname.txt");

	if (u != NULL && u->data != NULL) {
		const char *s = u->data;
		size_t n;

		while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
			s++;
		n = strcspn(s, " \t\r\n");
		for (size_t i = 0; i < JC_ARRAY_LEN(all); i++)
			if (n == strlen(all[i]->uname) && strncmp(s, all[i]->uname, n) == 0)
				return all[i];
		if (n > 0)
			return NULL;	/* a system no backend knows */
	}
	if (raw == NULL)
		return NULL;
	for (size_t i = 0; i < raw->n; i++) {
		const char *name = raw->outs[i].name;

		if (has_prefix(name, "system_profiler-") || has_prefix(name, "networksetup-") ||
		    has_prefix(name, "sw_vers") || has_prefix(name, "rdma_ctl"))
			return &jc_platform_macos;
	}
	for (size_t i = 0; i < raw->n; i++) {
		const char *name = raw->outs[i].name;

		if (has_prefix(name, "ip-") || has_prefix(name, "os-release"))
			return &jc_platform_linux;
	}
	/* ibv_* and ifconfig output in the macOS layout come from Macs. */
	for (size_t i = 0; i < raw->n; i++) {
		const char *name = raw->outs[i].name;

		if (has_prefix(name, "ibv_") || has_prefix(name, "ifconfig"))
			return &jc_platform_macos;
	}
	return NULL;
}

const struct jc_platform_ops *
platform_by_name(const char *name)
{
	if (name == NULL)
		return NULL;
	if (strcmp(name, jc_platform_macos.name) == 0)
		return &jc_platform_macos;
	if (strcmp(name, jc_platform_linux.name) == 0)
		return &jc_platform_linux;
	return NULL;
}

static const struct jc_platform_ops *
platform_for_os(enum jc_os os)
{
	return os == JC_OS_MACOS ? &jc_platform_macos : os == JC_OS_LINUX ? &jc_platform_linux :
	    NULL;
}

const struct jc_platform_ops *
platform_of(const struct jc_host *h)
{
	return platform_for_os(h->os);
}

const struct jc_platform_ops *
platform_for_setup(const struct jc_host *h)
{
	const struct jc_platform_ops *p = platform_of(h);

	return p != NULL ? p : &jc_platform_macos;
}

const struct jc_platform_ops *
platform_by_name_or_default(const char *name)
{
	const struct jc_platform_ops *p = platform_by_name(name);

	return p != NULL ? p : &jc_platform_macos;
}

unsigned
platform_caps(const struct jc_host *h)
{
	const struct jc_platform_ops *p = platform_of(h);

	return p != NULL ? p->caps : 0;
}

const char *
platform_os_display(enum jc_os os)
{
	const struct jc_platform_ops *p = platform_for_os(os);

	return p != NULL ? p->display : "unknown OS";
}

void
platform_note(struct jc_host *h, const char *fmt, ...)
{
	va_list ap;

	h->notes = xreallocarray(h->notes, h->nnotes + 1, sizeof(*h->notes));
	va_start(ap, fmt);
	h->notes[h->nnotes++] = xvasprintf(fmt, ap);
	va_end(ap);
}

void
platform_sudo(struct jc_host *h, const struct jc_raw *raw)
{
	const struct jc_raw_out *o = raw_get(raw, PLATFORM_SUDO_FILE);

	h->sudo = JC_UNKNOWN;
	h->sudo_mode = JC_SUDO_UNKNOWN;
	free(h->sudo_list);
	h->sudo_list = NULL;
	if (o == NULL) {
		platform_note(h, "passwordless sudo unknown (%s not captured)", SUDO_PROBE_CMD);
		return;
	}
	h->sudo_mode = sudo_probe_mode(o->data, o->status);
	h->sudo = h->sudo_mode == JC_SUDO_ALL ? JC_YES : JC_NO;
	if (h->sudo_mode == JC_SUDO_SCOPED)
		h->sudo_list = xstrdup(o->data);
}

void
platform_notes_from(struct jc_host *h, const char *file, struct jc_strv *notes)
{
	for (size_t i = 0; i < notes->n; i++)
		platform_note(h, "%s: %s", file, notes->v[i]);
	strv_free(notes);
}

void
platform_argv(struct jc_strv *argv, ...)
{
	va_list ap;
	const char *w;

	va_start(ap, argv);
	while ((w = va_arg(ap, const char *)) != NULL)
		strv_push(argv, w);
	va_end(ap);
}

bool
platform_svc_ours(const char *name)
{
	size_t n = strlen(JC_SVC_PREFIX);

	return name != NULL && strncmp(name, JC_SVC_PREFIX, n) == 0 && jc_service_name_ok(name) &&
	    jc_service_name_ok(name + n);
}
