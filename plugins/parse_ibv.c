/* SPDX-License-Identifier: MIT */
/*
 * ibv_devices / ibv_devinfo parsers. Both read the text as a stream of
 * blank-separated words rather than fixed columns: real output uses TABs,
 * published copies use spaces, some drop the indentation and one runs
 * several fields together on a line.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse_ibv.h"

const char *
parse_ibv_state_name(enum jc_port_state st)
{
	if (st <= JC_PORT_UNKNOWN || st > JC_PORT_ACTIVE)
		return NULL;
	return jc_port_state_name(st);
}

/* The port state words of ibv_devinfo and sysfs, less "PORT_". */
static const struct {
	const char *name;
	enum jc_port_state st;
} ibv_states[] = {
	{ "DOWN", JC_PORT_DOWN },
	{ "INIT", JC_PORT_INIT },
	{ "ARMED", JC_PORT_ARMED },
	{ "ACTIVE", JC_PORT_ACTIVE },
	{ "ACTIVE_DEFER", JC_PORT_ACTIVE },
	{ "NOP", JC_PORT_DOWN },
};

enum jc_port_state
parse_ibv_state(const char *s)
{
	size_t n;

	if (s == NULL)
		return JC_PORT_UNKNOWN;
	while (isspace((unsigned char)*s))
		s++;
	/* sysfs form "4: ACTIVE" */
	if (isdigit((unsigned char)*s)) {
		while (isdigit((unsigned char)*s))
			s++;
		if (*s == ':')
			s++;
		while (isspace((unsigned char)*s))
			s++;
	}
	if (strncmp(s, "PORT_", 5) == 0)
		s += 5;
	n = 0;
	while (isalpha((unsigned char)s[n]) || s[n] == '_')
		n++;
	for (size_t i = 0; i < JC_ARRAY_LEN(ibv_states); i++)
		if (strlen(ibv_states[i].name) == n && strncmp(s, ibv_states[i].name, n) == 0)
			return ibv_states[i].st;
	return JC_PORT_UNKNOWN;
}

char *
parse_ibv_netdev(const char *name)
{
	if (name == NULL)
		return NULL;
	if (strncmp(name, "rdma_", 5) == 0 && name[5] != '\0')
		return xstrdup(name + 5);
	return xstrdup(name);
}

void
parse_rdma_free(struct jc_rdma_dev *devs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		jc_rdma_dev_clear(&devs[i]);
	free(devs);
}

static struct jc_rdma_dev *
add_dev(struct jc_rdma_dev **devs, size_t *n, const char *name)
{
	struct jc_rdma_dev *d;

	*devs = xreallocarray(*devs, *n + 1, sizeof(**devs));
	d = &(*devs)[(*n)++];
	memset(d, 0, sizeof(*d));
	d->name = xstrdup(name);
	d->netdev = parse_ibv_netdev(name);
	return d;
}

/* Split text into words (blank-separated), each a new string. */
static void
split_words(const char *s, size_t len, struct jc_strv *out)
{
	size_t i = 0;

	while (i < len) {
		size_t j;

		while (i < len && (isspace((unsigned char)s[i]) || s[i] == '\0'))
			i++;
		j = i;
		while (j < len && !isspace((unsigned char)s[j]) && s[j] != '\0')
			j++;
		if (j > i)
			strv_push_owned(out, xstrndup(s + i, j - i));
		i = j;
	}
}

static bool
all_char(const char *s, char c)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (*s != c)
			return false;
	return true;
}

static bool
hex_word(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s) && *s != ':')
			return false;
	return true;
}

int
parse_ibv_devices(const char *data, size_t len, struct jc_rdma_dev **devs, size_t *n,
    struct jc_strv *notes, struct jc_err *err)
{
	size_t pos = 0, good = 0, bad = 0;
	bool header = false;

	*devs = NULL;
	*n = 0;
	while (pos < len) {
		const char *line = data + pos;
		size_t ll = 0;
		struct jc_strv w = { 0 };

		while (pos + ll < len && line[ll] != '\n')
			ll++;
		pos += ll + 1;
		split_words(line, ll, &w);
		if (w.n == 0 || (w.n == 1 && all_char(w.v[0], '.'))) {
			strv_free(&w);
			continue;
		}
		if (strcmp(w.v[0], "device") == 0 || all_char(w.v[0], '-')) {
			header = true;
			good++;
		} else if (w.n <= 2 && (w.n == 1 || hex_word(w.v[1]))) {
			if (!jc_iface_name_ok(w.v[0])) {
				if (notes)
					strv_push_owned(notes, xasprintf("unsafe device name skipped"));
				bad++;
			} else if (w.n == 1 && !header) {
				bad++;
			} else {
				struct jc_rdma_dev *d = add_dev(devs, n, w.v[0]);

				if (w.n == 2)
					d->guid = xstrdup(w.v[1]);
				good++;
			}
		} else {
			bad++;
		}
		strv_free(&w);
	}
	if (good == 0 && bad > 0) {
		parse_rdma_free(*devs, *n);
		*devs = NULL;
		*n = 0;
		return jc_fail(err, -EINVAL, "not ibv_devices output");
	}
	if (bad > 0 && notes)
		strv_push_owned(notes, xasprintf("%zu line(s) not understood", bad));
	return 0;
}

int
parse_ibv_devinfo(const char *data, size_t len, struct jc_rdma_dev **devs, size_t *n,
    struct jc_strv *notes, struct jc_err *err)
{
	struct jc_strv w = { 0 };
	struct jc_rdma_dev *cur = NULL;
	bool none = false, skip = false;
	int port = 0;

	*devs = NULL;
	*n = 0;
	split_words(data, len, &w);
	for (size_t i = 0; i < w.n; i++) {
		const char *k = w.v[i], *v = i + 1 < w.n ? w.v[i + 1] : NULL;

		if (strcmp(k, "No") == 0 && v != NULL && strcmp(v, "IB") == 0 &&
		    i + 2 < w.n && strcmp(w.v[i + 2], "devices") == 0) {
			none = true;
			continue;
		}
		if (v == NULL)
			break;
		if (strcmp(k, "hca_id:") == 0) {
			i++;
			port = 0;
			skip = false;
			if (!jc_iface_name_ok(v)) {
				if (notes)
					strv_push_owned(notes, xasprintf("unsafe device name skipped"));
				cur = NULL;
				skip = true;
				continue;
			}
			cur = NULL;
			for (size_t j = 0; j < *n; j++)
				if (strcmp((*devs)[j].name, v) == 0)
					cur = &(*devs)[j];
			if (cur == NULL)
				cur = add_dev(devs, n, v);
		} else if (cur == NULL || skip) {
			continue;
		} else if (strcmp(k, "node_guid:") == 0 && hex_word(v)) {
			i++;
			if (cur->guid == NULL)
				cur->guid = xstrdup(v);
		} else if (strcmp(k, "port:") == 0) {
			i++;
			port++;
		} else if (strcmp(k, "state:") == 0) {
			i++;
			if (port <= 1 && cur->state == JC_PORT_UNKNOWN)
				cur->state = parse_ibv_state(v);
		}
	}
	strv_free(&w);
	if (*n == 0 && !none) {
		bool blank = true;

		for (size_t i = 0; i < len; i++)
			if (!isspace((unsigned char)data[i]))
				blank = false;
		if (!blank)
			return jc_fail(err, -EINVAL, "not ibv_devinfo output (no hca_id)");
	}
	return 0;
}
