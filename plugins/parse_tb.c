/* SPDX-License-Identifier: MIT */
/*
 * system_profiler SPThunderboltDataType parsers. The -json output is read
 * with jansson, the -xml plist is converted to the same jansson tree with
 * libxml2, and the plain text form is rebuilt into that tree from its
 * indentation, so all three share one walker (parse_tb_doc) and give the
 * same ports by construction.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <libxml/parser.h>
#include <libxml/tree.h>

#include "parse_tb.h"

/* Deepest nesting of docks/hubs or plist values that is followed. */
#define TB_MAX_DEPTH 64

void
parse_tb_port_clear(struct jc_port *p)
{
	jc_port_clear(p);
	memset(p, 0, sizeof(*p));
}

void
parse_tb_free(struct jc_port *ports, size_t n)
{
	for (size_t i = 0; i < n; i++)
		parse_tb_port_clear(&ports[i]);
	free(ports);
}

bool
parse_tb_link_rate(const char *s, int *gbps)
{
	long v = 0;
	int digits = 0;

	if (s == NULL)
		return false;
	while (*s == ' ')
		s++;
	while (isdigit((unsigned char)*s) && digits < 6) {
		v = v * 10 + (*s++ - '0');
		digits++;
	}
	if (digits == 0 || digits >= 6 || v == 0)
		return false;
	if (*s == '.')		/* "2.5 Gb/s" */
		for (s++; isdigit((unsigned char)*s); s++)
			;
	while (*s == ' ')
		s++;
	if (strncmp(s, "Gb/s", 4) != 0)
		return false;
	if (gbps != NULL)
		*gbps = (int)v;
	return true;
}

/* A string value (or an integer, written in decimal) as a new string. */
static char *
str_of(const json_t *v)
{
	if (json_is_string(v))
		return xstrdup(json_string_value(v));
	if (json_is_integer(v))
		return xasprintf("%lld", (long long)json_integer_value(v));
	return NULL;
}

/* A model identifier: letters, then digits, a comma and digits ("Mac16,9"). */
static bool
model_id(const char *s)
{
	size_t a = 0, d = 0, e = 0;

	if (s == NULL)
		return false;
	while ((s[a] >= 'A' && s[a] <= 'Z') || (s[a] >= 'a' && s[a] <= 'z'))
		a++;
	while (s[a + d] >= '0' && s[a + d] <= '9')
		d++;
	if (a == 0 || d == 0 || s[a + d] != ',')
		return false;
	s += a + d + 1;
	while (s[e] >= '0' && s[e] <= '9')
		e++;
	return e > 0 && s[e] == '\0';
}

/*
 * A Mac on the other end of a cable: it reports its domain UUID or its
 * XDomain services; when both were trimmed away, an Apple item whose
 * device name is a model identifier is one too (a dock or a display
 * reports a product name there).
 */
static bool
is_mac_item(const json_t *item)
{
	const char *vendor = json_string_value(json_object_get(item, "vendor_name_key"));

	return json_object_get(item, "domain_uuid_key") != NULL ||
	    json_is_array(json_object_get(item, "services_title")) ||
	    (vendor != NULL && strcmp(vendor, "Apple Inc.") == 0 &&
	    model_id(json_string_value(json_object_get(item, "device_name_key"))));
}

static int
rdma_service(const json_t *item)
{
	const json_t *svcs = json_object_get(item, "services_title"), *s;
	size_t i;

	if (!json_is_array(svcs))
		return JC_UNKNOWN;
	json_array_foreach(svcs, i, s) {
		const json_t *id = json_object_get(s, "protocol_id_key");
		long v;

		if (json_is_integer(id) && json_integer_value(id) == PARSE_TB_RDMA_PROTOCOL)
			return JC_YES;
		if (json_is_string(id) && jc_parse_int(json_string_value(id), 0, LONG_MAX, &v) &&
		    v == PARSE_TB_RDMA_PROTOCOL)
			return JC_YES;
	}
	return JC_NO;
}

struct walk {
	struct jc_port *p;
	struct jc_strv devices;
	bool found;
	bool deep;
};

/* Depth-first through _items: the first Mac is the peer, the rest devices. */
static void
walk_items(struct walk *w, const json_t *items, int depth)
{
	const json_t *item;
	size_t i;

	if (!json_is_array(items))
		return;
	if (depth >= TB_MAX_DEPTH) {
		w->deep = true;
		return;
	}
	json_array_foreach(items, i, item) {
		if (!json_is_object(item))
			continue;
		if (is_mac_item(item)) {
			if (!w->found) {
				w->found = true;
				w->p->peer_id = str_of(json_object_get(item, "domain_uuid_key"));
				w->p->peer_via_dock = depth > 0;
				w->p->peer_model = str_of(json_object_get(item, "device_name_key"));
				w->p->peer_name = str_of(json_object_get(item, "_name"));
				w->p->peer_no_id = w->p->peer_id == NULL;
				w->p->peer_rdma_service = rdma_service(item);
			}
			continue;
		}
		{
			char *name = str_of(json_object_get(item, "_name"));

			if (name == NULL)
				name = str_of(json_object_get(item, "device_name_key"));
			if (name != NULL)
				strv_push_owned(&w->devices, name);
		}
		walk_items(w, json_object_get(item, "_items"), depth + 1);
	}
}

static void
bus_to_port(const json_t *bus, struct jc_port *p, struct jc_strv *notes)
{
	const json_t *tag = json_object_get(bus, "receptacle_1_tag");
	const char *name = json_string_value(json_object_get(bus, "_name"));
	struct walk w = { .p = p };
	long v;

	memset(p, 0, sizeof(*p));
	p->bus = -1;
	p->peer_rdma_service = JC_UNKNOWN;
	if (name != NULL && strncmp(name, "thunderboltusb4_bus_", 20) == 0 &&
	    jc_parse_int(name + 20, 0, 1000, &v))
		p->bus = (int)v;
	else if (name != NULL && strncmp(name, "thunderbolt_bus_", 16) == 0 &&
	    jc_parse_int(name + 16, 0, 1000, &v))
		p->bus = (int)v;
	p->id = str_of(json_object_get(bus, "domain_uuid_key"));
	p->self_name = str_of(json_object_get(bus, "device_name_key"));
	if (json_is_object(tag)) {
		p->receptacle = str_of(json_object_get(tag, "receptacle_id_key"));
		p->link = str_of(json_object_get(tag, "current_speed_key"));
		if (p->link != NULL && !parse_tb_link_rate(p->link, &p->link_gbps)) {
			free(p->link);
			p->link = NULL;
		}
	}
	walk_items(&w, json_object_get(bus, "_items"), 0);
	if (w.deep && notes != NULL)
		strv_push_owned(notes, xasprintf("bus %s: devices nested deeper than %d "
		    "levels ignored", name ? name : "?", TB_MAX_DEPTH));
	p->devices = w.devices.v;
	p->ndevices = w.devices.n;
	if (p->peer_no_id && notes != NULL) {
		/* every name here comes from the host or the device at the other end */
		char *r = jc_printable(p->receptacle ? p->receptacle : name, 64);
		char *port = xasprintf("%s %s", p->receptacle ? "Thunderbolt" : "bus", r);
		char *pn = jc_printable(p->peer_name, 64);
		char *pm = p->peer_model ? jc_printable(p->peer_model, 64) : NULL;

		strv_push_owned(notes, xasprintf("%s: the Mac cabled here (%s%s%s) reports no "
		    "domain UUID; the cable is paired only when one port of one probed host "
		    "fits it", port, pn, pm ? ", " : "", pm ? pm : ""));
		free(port);
		free(r);
		free(pn);
		free(pm);
	}
}

static void
host_note(struct jc_host *h, char *note)
{
	h->notes = xreallocarray(h->notes, h->nnotes + 1, sizeof(*h->notes));
	h->notes[h->nnotes++] = note;
}

/* Port p's peer, as p describes it, could be host h. */
static bool
describes(const struct jc_port *p, const struct jc_host *h)
{
	if (p->peer_model != NULL && h->model != NULL)
		return strcmp(p->peer_model, h->model) == 0;
	for (size_t k = 0; p->peer_name != NULL && k < h->nports; k++)
		if (h->ports[k].self_name != NULL && strcmp(h->ports[k].self_name, p->peer_name) == 0)
			return true;
	return false;
}

/* Port p of host i sees port q of host j: by its UUID, or by description. */
static bool
sees(const struct jc_port *p, const struct jc_port *q, const struct jc_host *hj)
{
	if (p->peer_id != NULL)
		return q->id != NULL && strcasecmp(p->peer_id, q->id) == 0;
	return p->peer_no_id && describes(p, hj);
}

static bool
fits(const struct jc_host *hosts, size_t i, size_t p, size_t j, size_t q)
{
	const struct jc_port *a = &hosts[i].ports[p], *b = &hosts[j].ports[q];

	return i != j && (a->peer_no_id || b->peer_no_id) && a->id != NULL && b->id != NULL &&
	    a->link_gbps > 0 && a->link_gbps == b->link_gbps &&
	    sees(a, b, &hosts[j]) && sees(b, a, &hosts[i]);
}

/* How many ports of other hosts fit port p of host i; the last one in *fj, *fq. */
static size_t
count_fits(const struct jc_host *hosts, size_t n, size_t i, size_t p, size_t *fj, size_t *fq)
{
	size_t c = 0;

	for (size_t j = 0; j < n; j++)
		for (size_t q = 0; q < hosts[j].nports; q++)
			if (fits(hosts, i, p, j, q)) {
				c++;
				*fj = j;
				*fq = q;
			}
	return c;
}

/*
 * A port whose own bus reports no domain UUID, cabled to a Mac that reports
 * none either, gets an id of its own from its host's name and its
 * receptacle (or bus), so that its peer can point at it once paired.
 */
static void
name_ports(struct jc_host *hosts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t p = 0; p < hosts[i].nports; p++) {
			struct jc_port *a = &hosts[i].ports[p];

			if (a->id != NULL || !a->peer_no_id || hosts[i].name == NULL)
				continue;
			if (a->receptacle != NULL)
				a->id = xasprintf("no-uuid:%s:receptacle-%s", hosts[i].name,
				    a->receptacle);
			else
				a->id = xasprintf("no-uuid:%s:bus-%d", hosts[i].name, a->bus);
		}
}

size_t
parse_tb_infer_peers(struct jc_host *hosts, size_t n)
{
	size_t paired = 0;

	name_ports(hosts, n);
	for (size_t i = 0; i < n; i++) {
		for (size_t p = 0; p < hosts[i].nports; p++) {
			struct jc_port *a = &hosts[i].ports[p], *b;
			size_t j = 0, q = 0, bi = 0, bp = 0;
			char *la, *lb;

			if (!a->peer_no_id || a->peer_id != NULL)
				continue;
			if (count_fits(hosts, n, i, p, &j, &q) != 1 ||
			    count_fits(hosts, n, j, q, &bi, &bp) != 1 || bi != i || bp != p)
				continue;	/* none, or two candidates: never guess */
			b = &hosts[j].ports[q];
			a->peer_id = xstrdup(b->id);
			a->peer_inferred = true;
			if (b->peer_id == NULL) {
				b->peer_id = xstrdup(a->id);
				b->peer_inferred = true;
			}
			la = a->receptacle ? xasprintf("Thunderbolt %s", a->receptacle) : xstrdup("a port");
			lb = b->receptacle ? xasprintf("Thunderbolt %s", b->receptacle) : xstrdup("a port");
			host_note(&hosts[i], xasprintf("%s: paired with %s %s by inference (the only "
			    "port that fits, at %d Gb/s)", la, hosts[j].name, lb, a->link_gbps));
			if (b->peer_inferred)
				host_note(&hosts[j], xasprintf("%s: paired with %s %s by inference (the "
				    "only port that fits, at %d Gb/s)", lb, hosts[i].name, la,
				    b->link_gbps));
			free(la);
			free(lb);
			paired++;
		}
	}
	return paired;
}

/* Numeric receptacle, or LONG_MAX when none (those keep source order, last). */
static long
rec_key(const struct jc_port *p)
{
	long v;

	if (p->receptacle != NULL && jc_parse_int(p->receptacle, 0, INT_MAX, &v))
		return v;
	return LONG_MAX;
}

static void
sort_ports(struct jc_port *ports, size_t n)
{
	/* Insertion sort: stable, and n is a handful. */
	for (size_t i = 1; i < n; i++) {
		struct jc_port t = ports[i];
		long k = rec_key(&t);
		size_t j = i;

		while (j > 0 && rec_key(&ports[j - 1]) > k) {
			ports[j] = ports[j - 1];
			j--;
		}
		ports[j] = t;
	}
}

/* The array of buses inside a decoded document, or NULL. */
static const json_t *
find_buses(const json_t *doc)
{
	const json_t *v, *e;
	size_t i;

	if (json_is_object(doc)) {
		v = json_object_get(doc, "SPThunderboltDataType");
		return json_is_array(v) ? v : NULL;
	}
	if (!json_is_array(doc))
		return NULL;
	/* plist: array of data type dicts */
	json_array_foreach(doc, i, e) {
		const char *dt = json_string_value(json_object_get(e, "_dataType"));

		if (dt != NULL && strcmp(dt, "SPThunderboltDataType") == 0) {
			v = json_object_get(e, "_items");
			return json_is_array(v) ? v : NULL;
		}
	}
	json_array_foreach(doc, i, e)
		if (json_object_get(e, "_dataType") != NULL)
			return NULL;
	/* a bare array of buses */
	return doc;
}

int
parse_tb_doc(const json_t *doc, struct jc_port **ports, size_t *n,
    struct jc_strv *notes, struct jc_err *err)
{
	const json_t *buses = find_buses(doc), *bus;
	size_t i;

	*ports = NULL;
	*n = 0;
	if (buses == NULL)
		return jc_fail(err, -EINVAL, "no SPThunderboltDataType data in the output");
	json_array_foreach(buses, i, bus) {
		if (!json_is_object(bus)) {
			if (notes != NULL)
				strv_push_owned(notes, xasprintf("bus entry %zu is not a "
				    "dictionary; ignored", i + 1));
			continue;
		}
		*ports = xreallocarray(*ports, *n + 1, sizeof(**ports));
		bus_to_port(bus, &(*ports)[(*n)++], notes);
	}
	sort_ports(*ports, *n);
	return 0;
}

int
parse_tb_json(const char *data, size_t len, struct jc_port **ports, size_t *n,
    struct jc_strv *notes, struct jc_err *err)
{
	json_error_t je;
	json_t *doc;
	int rc;

	*ports = NULL;
	*n = 0;
	if (len > PARSE_TB_MAX)
		return jc_fail(err, -EFBIG, "output larger than %u bytes", PARSE_TB_MAX);
	/* Apple output: no JSON_STRICT-like flags, duplicates tolerated. */
	doc = json_loadb(data, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (doc == NULL)
		return jc_fail(err, -EINVAL, "not valid JSON (line %d, column %d: %s)",
		    je.line, je.column, je.text);
	rc = parse_tb_doc(doc, ports, n, notes, err);
	json_decref(doc);
	return rc;
}

/* --- XML property lists ------------------------------------------------ */

static bool
is_elem(const xmlNode *n, const char *name)
{
	return n != NULL && n->type == XML_ELEMENT_NODE &&
	    strcmp((const char *)n->name, name) == 0;
}

static const xmlNode *
next_elem(const xmlNode *n)
{
	while (n != NULL && n->type != XML_ELEMENT_NODE)
		n = n->next;
	return n;
}

static char *
node_text(const xmlNode *n)
{
	xmlChar *c = xmlNodeGetContent(n);
	char *s = xstrdup(c ? (const char *)c : "");

	xmlFree(c);
	return s;
}

static json_t *
plist_value(const xmlNode *n, int depth, struct jc_err *err)
{
	json_t *v;

	if (depth > TB_MAX_DEPTH * 2) {
		jc_fail(err, -EINVAL, "plist nested too deeply");
		return NULL;
	}
	if (is_elem(n, "dict")) {
		v = json_object();
		for (const xmlNode *k = next_elem(n->children); k != NULL;) {
			const xmlNode *val;
			json_t *x;
			char *key;

			if (!is_elem(k, "key")) {
				json_decref(v);
				jc_fail(err, -EINVAL, "plist dict: <%s> where <key> expected",
				    (const char *)k->name);
				return NULL;
			}
			val = next_elem(k->next);
			if (val == NULL) {
				json_decref(v);
				jc_fail(err, -EINVAL, "plist dict: key without a value");
				return NULL;
			}
			x = plist_value(val, depth + 1, err);
			if (x == NULL) {
				json_decref(v);
				return NULL;
			}
			key = node_text(k);
			json_object_set_new(v, key, x);
			free(key);
			k = next_elem(val->next);
		}
		return v;
	}
	if (is_elem(n, "array")) {
		v = json_array();
		for (const xmlNode *c = next_elem(n->children); c != NULL; c = next_elem(c->next)) {
			json_t *x = plist_value(c, depth + 1, err);

			if (x == NULL) {
				json_decref(v);
				return NULL;
			}
			json_array_append_new(v, x);
		}
		return v;
	}
	if (is_elem(n, "true"))
		return json_true();
	if (is_elem(n, "false"))
		return json_false();
	if (is_elem(n, "integer")) {
		char *s = node_text(n), *end;
		long long x;

		errno = 0;
		x = strtoll(s, &end, 10);
		if (errno == 0 && end != s && *end == '\0')
			v = json_integer(x);
		else
			v = json_string(s);
		free(s);
		return v != NULL ? v : json_null();
	}
	if (is_elem(n, "real")) {
		char *s = node_text(n), *end;
		double x = strtod(s, &end);

		v = (end != s && *end == '\0') ? json_real(x) : NULL;
		free(s);
		return v != NULL ? v : json_null();
	}
	if (is_elem(n, "string") || is_elem(n, "date") || is_elem(n, "data")) {
		char *s = node_text(n);

		v = json_stringn(s, strlen(s));
		free(s);
		return v != NULL ? v : json_null();
	}
	return json_null();
}

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

static void
xml_init(void)
{
	xmlInitParser();
}

json_t *
parse_plist_xml(const char *data, size_t len, struct jc_err *err)
{
	xmlDoc *doc;
	const xmlNode *root, *top;
	json_t *v;

	/* libxml2 wants its global state set up once, before threads race. */
	pthread_once(&xml_once, xml_init);

	if (len > PARSE_TB_MAX || len > INT_MAX) {
		jc_fail(err, -EFBIG, "output larger than %u bytes", PARSE_TB_MAX);
		return NULL;
	}
	/* No network, no DTD loading, no entity substitution, no stderr. */
	doc = xmlReadMemory(data, (int)len, "system_profiler.xml", NULL,
	    XML_PARSE_NONET | XML_PARSE_NOBLANKS | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	if (doc == NULL) {
		const xmlError *e = xmlGetLastError();
		char *msg = xstrdup(e && e->message ? e->message : "parse error");
		size_t n = strlen(msg);

		while (n > 0 && (msg[n - 1] == '\n' || msg[n - 1] == ' '))
			msg[--n] = '\0';
		jc_fail(err, -EINVAL, "not a valid XML property list (line %d: %s)",
		    e ? e->line : 0, msg);
		free(msg);
		return NULL;
	}
	if (doc->intSubset != NULL && (doc->intSubset->entities != NULL ||
	    doc->intSubset->pentities != NULL)) {
		xmlFreeDoc(doc);
		jc_fail(err, -EINVAL, "XML with entity declarations refused");
		return NULL;
	}
	root = xmlDocGetRootElement(doc);
	if (!is_elem(root, "plist")) {
		xmlFreeDoc(doc);
		jc_fail(err, -EINVAL, "not a property list (no <plist> root)");
		return NULL;
	}
	top = next_elem(root->children);
	if (top == NULL) {
		xmlFreeDoc(doc);
		jc_fail(err, -EINVAL, "empty property list");
		return NULL;
	}
	v = plist_value(top, 0, err);
	xmlFreeDoc(doc);
	return v;
}

int
parse_tb_xml(const char *data, size_t len, struct jc_port **ports, size_t *n,
    struct jc_strv *notes, struct jc_err *err)
{
	json_t *doc;
	int rc;

	*ports = NULL;
	*n = 0;
	doc = parse_plist_xml(data, len, err);
	if (doc == NULL)
		return err ? err->code : -EINVAL;
	rc = parse_tb_doc(doc, ports, n, notes, err);
	json_decref(doc);
	return rc;
}

/* --- text form ---------------------------------------------------------- */

/* One line of the text form: "Key: value" or a header "Key:". */
struct tnode {
	int indent;
	char *key;
	char *value;		/* NULL for a header */
	struct tnode **kids;
	size_t nkids;
};

static void
tnode_free(struct tnode *t)
{
	if (t == NULL)
		return;
	for (size_t i = 0; i < t->nkids; i++)
		tnode_free(t->kids[i]);
	free(t->kids);
	free(t->key);
	free(t->value);
	free(t);
}

static void
tnode_add(struct tnode *parent, struct tnode *kid)
{
	parent->kids = xreallocarray(parent->kids, parent->nkids + 1, sizeof(*parent->kids));
	parent->kids[parent->nkids++] = kid;
}

/* Indentation tree of the text (root has indent -1). */
static struct tnode *
text_tree(const char *data, size_t len)
{
	struct tnode *root = xcalloc(1, sizeof(*root)), **stack;
	size_t depth = 1, pos = 0;

	stack = xcalloc(TB_MAX_DEPTH * 4, sizeof(*stack));
	root->indent = -1;
	stack[0] = root;
	while (pos < len) {
		const char *line = data + pos;
		size_t ll = 0, i = 0, tl;
		int indent = 0;
		struct tnode *t;
		char *text, *colon;

		while (pos + ll < len && line[ll] != '\n')
			ll++;
		pos += ll + 1;
		while (ll > 0 && (line[ll - 1] == '\r' || line[ll - 1] == ' ' ||
		    line[ll - 1] == '\t'))
			ll--;
		for (; i < ll && (line[i] == ' ' || line[i] == '\t'); i++)
			indent = line[i] == '\t' ? (indent / 8 + 1) * 8 : indent + 1;
		if (i == ll || indent > 4096)
			continue;
		text = xstrndup(line + i, ll - i);
		t = xcalloc(1, sizeof(*t));
		t->indent = indent;
		tl = strlen(text);	/* may be shorter than the line: NUL bytes */
		if (tl > 0 && text[tl - 1] == ':') {
			text[tl - 1] = '\0';
			t->key = text;
		} else if ((colon = strstr(text, ": ")) != NULL) {
			*colon = '\0';
			t->key = xstrdup(text);
			t->value = xstrdup(colon + 2);
			free(text);
		} else {
			t->key = text;
			t->value = xstrdup("");
		}
		while (depth > 1 && stack[depth - 1]->indent >= indent)
			depth--;
		tnode_add(stack[depth - 1], t);
		if (depth < TB_MAX_DEPTH * 4)
			stack[depth++] = t;
	}
	free(stack);
	return root;
}

static const struct tnode *
tchild(const struct tnode *t, const char *key)
{
	for (size_t i = 0; i < t->nkids; i++)
		if (strcmp(t->kids[i]->key, key) == 0)
			return t->kids[i];
	return NULL;
}

static const char *
tvalue(const struct tnode *t, const char *key)
{
	const struct tnode *c = tchild(t, key);

	return c != NULL ? c->value : NULL;
}

static bool
is_device_node(const struct tnode *t)
{
	static const char *const keys[] = {
		"Vendor Name", "Device Name", "Domain UUID", "UID", "Mode",
		"Vendor ID", "Device ID", "Route String",
	};

	if (t->value != NULL || strcmp(t->key, "Port") == 0 ||
	    strncmp(t->key, "Port (", 6) == 0 || strcmp(t->key, "Services") == 0)
		return false;
	for (size_t i = 0; i < JC_ARRAY_LEN(keys); i++)
		if (tvalue(t, keys[i]) != NULL)
			return true;
	return false;
}

static json_t *
text_services(const struct tnode *svcs)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < svcs->nkids; i++) {
		const struct tnode *s = svcs->kids[i];
		const char *id = tvalue(s, "Protocol ID"), *key = tvalue(s, "Service Key");
		json_t *o = json_object();
		long v;

		json_object_set_new(o, "_name", json_string(strcmp(s->key, "Internet Protocol") == 0 ?
		    "service_ip" : "unknown_xd_service"));
		if (id != NULL && jc_parse_int(id, 0, LONG_MAX, &v))
			json_object_set_new(o, "protocol_id_key", json_integer(v));
		if (key != NULL && strcmp(key, "rdma") == 0)
			json_object_set_new(o, "protocol_id_key",
			    json_integer(PARSE_TB_RDMA_PROTOCOL));
		json_array_append_new(arr, o);
	}
	return arr;
}

static void text_items(const struct tnode *t, json_t *items, int depth);

static json_t *
text_device(const struct tnode *t, int depth)
{
	json_t *o = json_object(), *items = json_array();
	const struct tnode *svcs = tchild(t, "Services");
	const char *v;

	json_object_set_new(o, "_name", json_string(t->key));
	if ((v = tvalue(t, "Device Name")) != NULL)
		json_object_set_new(o, "device_name_key", json_string(v));
	if ((v = tvalue(t, "Domain UUID")) != NULL)
		json_object_set_new(o, "domain_uuid_key", json_string(v));
	if (svcs != NULL)
		json_object_set_new(o, "services_title", text_services(svcs));
	text_items(t, items, depth + 1);
	json_object_set_new(o, "_items", items);
	return o;
}

/* Device blocks under t (not inside another device block), in order. */
static void
text_items(const struct tnode *t, json_t *items, int depth)
{
	if (depth > TB_MAX_DEPTH)
		return;
	for (size_t i = 0; i < t->nkids; i++) {
		const struct tnode *k = t->kids[i];

		if (is_device_node(k))
			json_array_append_new(items, text_device(k, depth));
		else if (strcmp(k->key, "Services") != 0)
			text_items(k, items, depth + 1);
	}
}

static bool
is_bus_node(const struct tnode *t)
{
	return t->value == NULL && strncmp(t->key, "Thunderbolt", 11) == 0 &&
	    strstr(t->key, "Bus") != NULL;
}

static void
text_buses(const struct tnode *t, json_t *buses, bool *root_seen)
{
	for (size_t i = 0; i < t->nkids; i++) {
		const struct tnode *k = t->kids[i];

		if (k->value == NULL && (strcmp(k->key, "Thunderbolt/USB4") == 0 ||
		    strcmp(k->key, "Thunderbolt") == 0))
			*root_seen = true;
		if (is_bus_node(k)) {
			json_t *bus = json_object(), *items = json_array(), *tag = json_object();
			const struct tnode *port = tchild(k, "Port");
			const char *num = strrchr(k->key, ' '), *v;
			long n;

			*root_seen = true;
			if (num != NULL && jc_parse_int(num + 1, 0, 1000, &n)) {
				char *name = xasprintf("thunderboltusb4_bus_%ld", n);

				json_object_set_new(bus, "_name", json_string(name));
				free(name);
			}
			if ((v = tvalue(k, "Device Name")) != NULL)
				json_object_set_new(bus, "device_name_key", json_string(v));
			if ((v = tvalue(k, "Domain UUID")) != NULL)
				json_object_set_new(bus, "domain_uuid_key", json_string(v));
			if (port != NULL) {
				if ((v = tvalue(port, "Receptacle")) != NULL)
					json_object_set_new(tag, "receptacle_id_key", json_string(v));
				if ((v = tvalue(port, "Speed")) != NULL)
					json_object_set_new(tag, "current_speed_key", json_string(v));
				json_object_set_new(bus, "receptacle_1_tag", tag);
			} else {
				json_decref(tag);
			}
			text_items(k, items, 0);
			json_object_set_new(bus, "_items", items);
			json_array_append_new(buses, bus);
		} else if (k->value == NULL) {
			text_buses(k, buses, root_seen);
		}
	}
}

int
parse_tb_text(const char *data, size_t len, struct jc_port **ports, size_t *n,
    struct jc_strv *notes, struct jc_err *err)
{
	struct tnode *root;
	json_t *doc, *buses;
	bool root_seen = false;
	int rc;

	*ports = NULL;
	*n = 0;
	if (len > PARSE_TB_MAX)
		return jc_fail(err, -EFBIG, "output larger than %u bytes", PARSE_TB_MAX);
	root = text_tree(data, len);
	buses = json_array();
	text_buses(root, buses, &root_seen);
	tnode_free(root);
	if (!root_seen) {
		json_decref(buses);
		return jc_fail(err, -EINVAL, "not system_profiler SPThunderboltDataType text "
		    "(no \"Thunderbolt\" section)");
	}
	doc = json_object();
	json_object_set_new(doc, "SPThunderboltDataType", buses);
	rc = parse_tb_doc(doc, ports, n, notes, err);
	json_decref(doc);
	return rc;
}
