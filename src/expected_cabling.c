/* SPDX-License-Identifier: MIT */
/*
 * The expected-cabling file: built from the cable graph, written as a small
 * JSON document, read back strictly, and compared with the live cabling
 * (missing, moved, downgraded and new cables). See cabling.h for the format.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "expected_cabling.h"
#include "hostfile_read.h"

struct cabling *
cabling_from_graph(const struct graph *g)
{
	struct cabling *c = xcalloc(1, sizeof(*c));

	c->nhosts = g->n;
	c->hosts = xcalloc(g->n ? g->n : 1, sizeof(*c->hosts));
	for (size_t i = 0; i < g->n; i++)
		c->hosts[i] = xstrdup(g->hosts[i].name);
	c->ncables = g->ncables;
	c->cables = xcalloc(g->ncables ? g->ncables : 1, sizeof(*c->cables));
	for (size_t k = 0; k < g->ncables; k++) {
		const struct graph_cable *gc = &g->cables[k];
		struct cabling_cable *cc = &c->cables[k];

		for (int s = 0; s < 2; s++) {
			const struct jc_host *h = &g->hosts[gc->end[s].host];
			const struct jc_port *p = &h->ports[gc->end[s].port];

			cc->end[s].host = xstrdup(h->name);
			cc->end[s].port = xstrdup(p->receptacle);
			cc->end[s].iface = xstrdup(p->iface);
		}
		cc->gbps = gc->gbps;
		cc->via_dock = gc->via_dock;
	}
	return c;
}

static json_t *
str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *
cabling_to_json(const struct cabling *c)
{
	json_t *doc = json_object(), *hosts = json_array(), *cables = json_array();

	for (size_t i = 0; i < c->nhosts; i++)
		json_array_append_new(hosts, json_string(c->hosts[i]));
	for (size_t k = 0; k < c->ncables; k++) {
		const struct cabling_cable *cc = &c->cables[k];
		json_t *o = json_object();

		json_object_set_new(o, "a", json_string(cc->end[0].host));
		json_object_set_new(o, "a_port", str_or_null(cc->end[0].port));
		json_object_set_new(o, "a_iface", str_or_null(cc->end[0].iface));
		json_object_set_new(o, "b", json_string(cc->end[1].host));
		json_object_set_new(o, "b_port", str_or_null(cc->end[1].port));
		json_object_set_new(o, "b_iface", str_or_null(cc->end[1].iface));
		json_object_set_new(o, "gbps", json_integer(cc->gbps));
		json_object_set_new(o, "via_dock", json_boolean(cc->via_dock));
		json_array_append_new(cables, o);
	}
	json_object_set_new(doc, "version", json_integer(CABLING_VERSION));
	json_object_set_new(doc, "hosts", hosts);
	json_object_set_new(doc, "cables", cables);
	return doc;
}

int
cabling_write(const char *path, const struct cabling *c, struct jc_err *err)
{
	json_t *doc = cabling_to_json(c);
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	char *file = xasprintf("%s\n", text);
	int r = jc_write_atomic(path, file, strlen(file), 0666, err);

	free(file);
	free(text);
	json_decref(doc);
	return r;
}

int
cabling_save(const char *path, const struct graph *g, struct jc_err *err)
{
	struct cabling *c = cabling_from_graph(g);
	int r = cabling_write(path, c, err);

	cabling_free(c);
	return r;
}

void
cabling_free(struct cabling *c)
{
	if (c == NULL)
		return;
	strv_free_array(c->hosts, c->nhosts);
	for (size_t k = 0; k < c->ncables; k++)
		for (int s = 0; s < 2; s++) {
			free(c->cables[k].end[s].host);
			free(c->cables[k].end[s].port);
			free(c->cables[k].end[s].iface);
		}
	free(c->cables);
	free(c);
}

/* --- reader --- */

static bool
port_ok(const char *s)
{
	long v;

	return jc_parse_int(s, 1, 99, &v);
}

/* key of obj as an optional string (null or absent: NULL); 0 or -1 */
static int
opt_str(json_t *obj, const char *key, bool (*valid)(const char *), const char *what,
    char **out, const char *name, size_t k, struct jc_err *err)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (v == NULL || json_is_null(v))
		return 0;
	if (!json_is_string(v))
		return jc_fail(err, -EINVAL, "%s: cables[%zu].%s: not a string", name, k, key);
	if (!valid(json_string_value(v)) || strlen(json_string_value(v)) !=
	    json_string_length(v))
		return jc_fail(err, -EINVAL, "%s: cables[%zu].%s: not %s", name, k, key, what);
	*out = xstrdup(json_string_value(v));
	return 0;
}

/*
 * The host name of an ssh target as written ("user@mac1:22" -> "mac1"), in
 * a static buffer (host names are at most 255 bytes: jc_plain_word).
 */
static const char *
host_name(const char *t)
{
	static char buf[256];
	const char *at = strrchr(t, '@'), *colon;
	size_t n;

	if (at != NULL)
		t = at + 1;
	n = strlen(t);
	colon = strrchr(t, ':');
	if (colon != NULL && colon[1] != '\0' && strspn(colon + 1, "0123456789") ==
	    strlen(colon + 1) && strchr(t, ':') == colon)
		n = (size_t)(colon - t);
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, t, n);
	buf[n] = '\0';
	return buf;
}

static char *
host_name_dup(const char *t)
{
	return xstrdup(host_name(t));
}

static long
host_index(const struct cabling *c, const char *h)
{
	for (size_t i = 0; i < c->nhosts; i++)
		if (strcmp(c->hosts[i], h) == 0)
			return (long)i;
	return -1;
}

static int
parse_cable(json_t *o, size_t k, const char *name, struct cabling *c,
    struct cabling_cable *cc, struct jc_err *err)
{
	static const char *const keys[] = { "a", "a_port", "a_iface", "b", "b_port",
		"b_iface", "gbps", "via_dock", "rdma" };
	const char *key;
	json_t *v;

	if (!json_is_object(o))
		return jc_fail(err, -EINVAL, "%s: cables[%zu]: not an object", name, k);
	json_object_foreach(o, key, v) {
		bool known = false;

		for (size_t i = 0; i < JC_ARRAY_LEN(keys); i++)
			known |= strcmp(key, keys[i]) == 0;
		if (!known) {
			char *pk = hostfile_printable(key, 40);

			jc_fail(err, -EINVAL, "%s: cables[%zu]: unknown key \"%s\"", name, k, pk);
			free(pk);
			return -EINVAL;
		}
	}
	for (int s = 0; s < 2; s++) {
		char kh[2] = { (char)('a' + s), 0 }, kp[8], ki[9];
		json_t *src = o;
		const char *pk = kp, *ik = ki;

		snprintf(kp, sizeof(kp), "%c_port", 'a' + s);
		snprintf(ki, sizeof(ki), "%c_iface", 'a' + s);
		v = json_object_get(o, kh);
		if (json_is_object(v)) {
			/* the nested form: "a": {"host", "receptacle", "iface"} */
			json_object_foreach(v, key, src) {
				if (strcmp(key, "host") != 0 && strcmp(key, "receptacle") != 0 &&
				    strcmp(key, "iface") != 0)
					return jc_fail(err, -EINVAL, "%s: cables[%zu].%s: unknown key",
					    name, k, kh);
			}
			src = v;
			pk = "receptacle";
			ik = "iface";
			v = json_object_get(src, "host");
		}
		if (!json_is_string(v))
			return jc_fail(err, -EINVAL, "%s: cables[%zu].%s: missing or not a string",
			    name, k, kh);
		if (host_index(c, host_name(json_string_value(v))) < 0 ||
		    strlen(json_string_value(v)) != json_string_length(v))
			return jc_fail(err, -EINVAL, "%s: cables[%zu].%s: not a host of \"hosts\"",
			    name, k, kh);
		cc->end[s].host = host_name_dup(json_string_value(v));
		if (opt_str(src, pk, port_ok, "a receptacle number", &cc->end[s].port, name, k,
		    err) != 0 ||
		    opt_str(src, ik, jc_iface_name_ok, "an interface name", &cc->end[s].iface,
		    name, k, err) != 0)
			return -EINVAL;
		if (cc->end[s].port == NULL && cc->end[s].iface == NULL)
			return jc_fail(err, -EINVAL, "%s: cables[%zu]: neither %s nor %s is given",
			    name, k, pk, ik);
	}
	v = json_object_get(o, "rdma");	/* written by configure; not compared */
	if (v != NULL && !json_is_null(v) && !json_is_boolean(v))
		return jc_fail(err, -EINVAL, "%s: cables[%zu].rdma: not true, false or null",
		    name, k);
	if (strcmp(cc->end[0].host, cc->end[1].host) == 0)
		return jc_fail(err, -EINVAL, "%s: cables[%zu]: both ends on %s", name, k,
		    cc->end[0].host);
	v = json_object_get(o, "gbps");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 ||
		    json_integer_value(v) > 10000)
			return jc_fail(err, -EINVAL, "%s: cables[%zu].gbps: not a speed in Gb/s",
			    name, k);
		cc->gbps = (int)json_integer_value(v);
	}
	v = json_object_get(o, "via_dock");
	if (v != NULL && !json_is_null(v)) {
		if (!json_is_boolean(v))
			return jc_fail(err, -EINVAL, "%s: cables[%zu].via_dock: not true or false",
			    name, k);
		cc->via_dock = json_is_true(v);
	}
	return 0;
}

static bool
same_end(const struct cabling_end *x, const struct cabling_end *y)
{
	if (strcmp(x->host, y->host) != 0)
		return false;
	if (x->port != NULL && y->port != NULL)
		return strcmp(x->port, y->port) == 0;
	if (x->iface != NULL && y->iface != NULL)
		return strcmp(x->iface, y->iface) == 0;
	return false;
}

int
cabling_parse(const char *buf, size_t len, const char *name, struct cabling **out,
    struct jc_err *err)
{
	json_error_t je;
	json_t *doc, *v, *hosts, *cables;
	struct cabling *c;
	const char *key;
	int r = -EINVAL;

	*out = NULL;
	doc = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (doc == NULL)
		return jc_fail(err, -EINVAL, "%s:%d:%d: %s", name, je.line, je.column, je.text);
	c = xcalloc(1, sizeof(*c));
	if (!json_is_object(doc)) {
		jc_fail(err, -EINVAL, "%s: not a JSON object", name);
		goto out;
	}
	json_object_foreach(doc, key, v) {
		if (strcmp(key, "version") != 0 && strcmp(key, "hosts") != 0 &&
		    strcmp(key, "cables") != 0) {
			char *pk = hostfile_printable(key, 40);

			jc_fail(err, -EINVAL, "%s: unknown key \"%s\"", name, pk);
			free(pk);
			goto out;
		}
	}
	v = json_object_get(doc, "version");
	if (!json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > CABLING_VERSION) {
		jc_fail(err, -EINVAL, "%s: \"version\" must be 1 or %d (not a cabling file?)",
		    name, CABLING_VERSION);
		goto out;
	}
	hosts = json_object_get(doc, "hosts");
	cables = json_object_get(doc, "cables");
	if (!json_is_array(hosts) || !json_is_array(cables)) {
		jc_fail(err, -EINVAL, "%s: \"hosts\" and \"cables\" must be lists", name);
		goto out;
	}
	c->hosts = xcalloc(json_array_size(hosts) + 1, sizeof(*c->hosts));
	for (size_t i = 0; i < json_array_size(hosts); i++) {
		json_t *h = json_array_get(hosts, i);

		if (json_is_object(h))	/* {"name", "model", "ports"}: the name is enough */
			h = json_object_get(h, "name");
		if (!json_is_string(h) || !jc_plain_word(json_string_value(h)) ||
		    !jc_plain_word(host_name(json_string_value(h))) ||
		    strlen(json_string_value(h)) != json_string_length(h)) {
			jc_fail(err, -EINVAL, "%s: hosts[%zu]: not a host name", name, i);
			goto out;
		}
		if (host_index(c, host_name(json_string_value(h))) >= 0) {
			jc_fail(err, -EINVAL, "%s: hosts[%zu]: %s is listed twice", name, i,
			    json_string_value(h));
			goto out;
		}
		c->hosts[c->nhosts++] = host_name_dup(json_string_value(h));
	}
	c->cables = xcalloc(json_array_size(cables) + 1, sizeof(*c->cables));
	for (size_t k = 0; k < json_array_size(cables); k++) {
		struct cabling_cable *cc = &c->cables[c->ncables++];

		if (parse_cable(json_array_get(cables, k), k, name, c, cc, err) != 0)
			goto out;
		for (size_t q = 0; q + 1 < c->ncables; q++)
			for (int s = 0; s < 2; s++)
				for (int t = 0; t < 2; t++)
					if (same_end(&c->cables[q].end[t], &cc->end[s])) {
						jc_fail(err, -EINVAL, "%s: cables[%zu] and "
						    "cables[%zu] use the same port of %s",
						    name, q, k, cc->end[s].host);
						goto out;
					}
	}
	r = 0;
	*out = c;
	c = NULL;
out:
	cabling_free(c);
	json_decref(doc);
	return r;
}

int
cabling_load(const char *path, struct cabling **out, struct jc_err *err)
{
	char *buf = NULL;
	size_t len = 0;
	int r;

	*out = NULL;
	if ((r = jc_read_file(path, CABLING_MAX_SIZE, &buf, &len, err)) != 0)
		return r;
	r = cabling_parse(buf, len, path, out, err);
	free(buf);
	return r;
}

/* --- diff --- */

const char *
cabling_change_name(enum cabling_change k)
{
	switch (k) {
	case CABLING_MISSING:
		return "missing";
	case CABLING_MOVED:
		return "moved";
	case CABLING_DOWNGRADED:
		return "downgraded";
	case CABLING_NEW:
		return "new";
	case CABLING_HOST_GONE:
		return "host-gone";
	}
	return "?";
}

char *
cabling_end_label(const struct cabling_end *e)
{
	if (e->port != NULL && e->iface != NULL)
		return xasprintf("%s Thunderbolt %s (%s)", e->host, e->port, e->iface);
	if (e->port != NULL)
		return xasprintf("%s Thunderbolt %s", e->host, e->port);
	return xasprintf("%s %s", e->host, e->iface);
}

static char *
cable_label(const struct cabling_cable *c)
{
	char *a = cabling_end_label(&c->end[0]), *b = cabling_end_label(&c->end[1]);
	char *s = xasprintf("%s -- %s", a, b);

	free(a);
	free(b);
	return s;
}

/* s: the side of y that matches x's end 0, or -1 when the cables differ */
static int
same_cable(const struct cabling_cable *x, const struct cabling_cable *y)
{
	for (int s = 0; s < 2; s++)
		if (same_end(&x->end[0], &y->end[s]) && same_end(&x->end[1], &y->end[1 - s]))
			return s;
	return -1;
}

static bool
same_pair(const struct cabling_cable *x, const struct cabling_cable *y)
{
	const char *a = x->end[0].host, *b = x->end[1].host;

	return (strcmp(a, y->end[0].host) == 0 && strcmp(b, y->end[1].host) == 0) ||
	    (strcmp(a, y->end[1].host) == 0 && strcmp(b, y->end[0].host) == 0);
}

static bool
keeps_an_end(const struct cabling_cable *x, const struct cabling_cable *y)
{
	for (int s = 0; s < 2; s++)
		for (int t = 0; t < 2; t++)
			if (same_end(&x->end[s], &y->end[t]))
				return true;
	return false;
}

static void
add(struct cabling_diff *d, enum cabling_change kind, long want, long got, const char *host,
    char *msg)
{
	struct cabling_delta *x;

	d->v = xreallocarray(d->v, d->n + 1, sizeof(*d->v));
	x = &d->v[d->n++];
	x->kind = kind;
	x->want = want;
	x->got = got;
	x->host = xstrdup(host);
	x->msg = msg;
}

static char *
speed_text(int gbps)
{
	return gbps > 0 ? xasprintf("%d Gb/s", gbps) : xstrdup("unknown speed");
}

void
cabling_diff(const struct cabling *want, const struct cabling *got, struct cabling_diff *d)
{
	bool *wdone = xcalloc(want->ncables + 1, sizeof(*wdone));
	bool *gdone = xcalloc(got->ncables + 1, sizeof(*gdone));
	bool *wskip = xcalloc(want->ncables + 1, sizeof(*wskip));

	d->v = NULL;
	d->n = 0;
	/* hosts of want that were not probed: their cables cannot be checked */
	for (size_t i = 0; i < want->nhosts; i++) {
		if (host_index(got, want->hosts[i]) >= 0)
			continue;
		add(d, CABLING_HOST_GONE, -1, -1, want->hosts[i],
		    xasprintf("%s is expected but was not probed; its cables were not checked",
		    want->hosts[i]));
		for (size_t k = 0; k < want->ncables; k++)
			for (int s = 0; s < 2; s++)
				if (strcmp(want->cables[k].end[s].host, want->hosts[i]) == 0)
					wskip[k] = true;
	}
	/* identical cables; a slower or docked one is downgraded */
	for (size_t k = 0; k < want->ncables; k++) {
		const struct cabling_cable *w = &want->cables[k];

		if (wskip[k])
			continue;
		for (size_t q = 0; q < got->ncables; q++) {
			const struct cabling_cable *g = &got->cables[q];
			char *l, *ws, *gs;

			if (gdone[q] || same_cable(w, g) < 0)
				continue;
			wdone[k] = gdone[q] = true;
			if (g->gbps > 0 && w->gbps > g->gbps) {
				l = cable_label(w);
				ws = speed_text(w->gbps);
				gs = speed_text(g->gbps);
				add(d, CABLING_DOWNGRADED, (long)k, (long)q, NULL,
				    xasprintf("%s is downgraded to %s (expected %s)", l, gs, ws));
				free(l);
				free(ws);
				free(gs);
			} else if (g->via_dock && !w->via_dock) {
				l = cable_label(w);
				add(d, CABLING_DOWNGRADED, (long)k, (long)q, NULL,
				    xasprintf("%s is downgraded: now through a dock or hub (expected direct)", l));
				free(l);
			}
			break;
		}
	}
	/* moved: the same pair cabled elsewhere; prefer keeping one end */
	for (int pass = 0; pass < 2; pass++)
		for (size_t k = 0; k < want->ncables; k++) {
			const struct cabling_cable *w = &want->cables[k];

			if (wdone[k] || wskip[k])
				continue;
			for (size_t q = 0; q < got->ncables; q++) {
				const struct cabling_cable *g = &got->cables[q];
				char *wl, *gl;

				if (gdone[q] || !same_pair(w, g) ||
				    (pass == 0 && !keeps_an_end(w, g)))
					continue;
				wdone[k] = gdone[q] = true;
				wl = cable_label(w);
				gl = cable_label(g);
				add(d, CABLING_MOVED, (long)k, (long)q, NULL,
				    xasprintf("%s has moved: now %s", wl, gl));
				free(wl);
				free(gl);
				break;
			}
		}
	for (size_t k = 0; k < want->ncables; k++) {
		char *l;

		if (wdone[k] || wskip[k])
			continue;
		l = cable_label(&want->cables[k]);
		add(d, CABLING_MISSING, (long)k, -1, NULL, xasprintf("%s is missing", l));
		free(l);
	}
	for (size_t q = 0; q < got->ncables; q++) {
		char *l;

		if (gdone[q])
			continue;
		l = cable_label(&got->cables[q]);
		add(d, CABLING_NEW, -1, (long)q, NULL, xasprintf("%s is new (not in the expected "
		    "cabling)", l));
		free(l);
	}
	free(wdone);
	free(gdone);
	free(wskip);
}

void
cabling_diff_free(struct cabling_diff *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->v[i].host);
		free(d->v[i].msg);
	}
	free(d->v);
	d->v = NULL;
	d->n = 0;
}
