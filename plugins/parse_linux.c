/* SPDX-License-Identifier: MIT */
/*
 * Linux probe output parsers: iproute2 JSON (addresses, links, neighbours),
 * os-release, and the key=value listings of the probe's sysfs loops. Cable
 * ends are "mac:" ids unless sysfs shows Thunderbolt domains.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "parse_ibv.h"
#include "parse_linux.h"
#include "parse_net.h"
#include "parse_tb.h"

static bool
blank(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (!isspace((unsigned char)s[i]))
			return false;
	return true;
}

static json_t *
load_array(const char *data, size_t len, const char *what, struct jc_err *err)
{
	json_error_t je;
	json_t *doc;

	if (blank(data, len))
		return json_array();
	doc = json_loadb(data, len, JSON_DECODE_ANY, &je);
	if (doc == NULL) {
		jc_fail(err, -EINVAL, "%s: not valid JSON (line %d: %s)", what, je.line, je.text);
		return NULL;
	}
	if (!json_is_array(doc)) {
		json_decref(doc);
		jc_fail(err, -EINVAL, "%s: JSON is not a list", what);
		return NULL;
	}
	return doc;
}

static bool
has_flag(const json_t *o, const char *flag)
{
	const json_t *flags = json_object_get(o, "flags"), *f;
	size_t i;

	json_array_foreach(flags, i, f)
		if (json_is_string(f) && strcmp(json_string_value(f), flag) == 0)
			return true;
	return false;
}

/* A MAC in lower case if s looks like one (hex pairs and colons). */
static char *
mac_lower(const char *s)
{
	size_t n;
	char *m;

	if (s == NULL)
		return NULL;
	n = strlen(s);
	if (n < 11 || n > 59)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!(isxdigit((unsigned char)s[i]) || (s[i] == ':' && i % 3 == 2)))
			return NULL;
	m = xstrdup(s);
	for (char *c = m; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return m;
}

int
parse_ip_addr(const char *data, size_t len, struct jc_iface **ifaces, size_t *n,
    struct jc_strv *notes, struct jc_err *err)
{
	json_t *doc = load_array(data, len, "ip -j addr", err), *e;
	struct jc_strv masters = { 0 }, slaves = { 0 };
	size_t i;

	*ifaces = NULL;
	*n = 0;
	if (doc == NULL)
		return err ? err->code : -EINVAL;
	json_array_foreach(doc, i, e) {
		const char *name = json_string_value(json_object_get(e, "ifname"));
		const char *lt = json_string_value(json_object_get(e, "link_type"));
		const char *master = json_string_value(json_object_get(e, "master"));
		const json_t *mtu = json_object_get(e, "mtu"), *ai = json_object_get(e, "addr_info");
		struct jc_iface *f;
		const json_t *a;
		size_t j;

		if (!json_is_object(e))
			continue;
		if (!jc_iface_name_ok(name)) {
			jc_note_quoted(notes, "interface with unsafe name \"%s\" skipped", name);
			continue;
		}
		*ifaces = xreallocarray(*ifaces, *n + 1, sizeof(**ifaces));
		f = &(*ifaces)[(*n)++];
		memset(f, 0, sizeof(*f));
		f->name = xstrdup(name);
		if (lt != NULL && strcmp(lt, "ether") == 0)
			f->mac = mac_lower(json_string_value(json_object_get(e, "address")));
		if (json_is_integer(mtu) && json_integer_value(mtu) > 0 &&
		    json_integer_value(mtu) < (1 << 20))
			f->mtu = (int)json_integer_value(mtu);
		f->up = has_flag(e, "UP") ? JC_YES : JC_NO;
		f->carrier = has_flag(e, "LOWER_UP") ? JC_YES : JC_NO;
		json_array_foreach(ai, j, a) {
			const char *fam = json_string_value(json_object_get(a, "family"));
			const char *loc = json_string_value(json_object_get(a, "local"));
			const json_t *pl = json_object_get(a, "prefixlen");

			if (fam == NULL || strcmp(fam, "inet") != 0 || !jc_ipv4_ok(loc))
				continue;
			f->inet = xreallocarray(f->inet, f->ninet + 1, sizeof(*f->inet));
			f->prefix = xreallocarray(f->prefix, f->ninet + 1, sizeof(*f->prefix));
			f->inet[f->ninet] = xstrdup(loc);
			f->prefix[f->ninet] = json_is_integer(pl) && json_integer_value(pl) >= 0 &&
			    json_integer_value(pl) <= 32 ? (int)json_integer_value(pl) : 32;
			f->ninet++;
		}
		if (master != NULL && jc_iface_name_ok(master)) {
			strv_push(&masters, master);
			strv_push(&slaves, name);
		}
	}
	for (i = 0; i < masters.n; i++)
		for (size_t j = 0; j < *n; j++) {
			struct jc_iface *m = &(*ifaces)[j];

			if (strcmp(m->name, masters.v[i]) != 0)
				continue;
			m->is_bridge = true;
			m->members = xreallocarray(m->members, m->nmembers + 1, sizeof(*m->members));
			m->members[m->nmembers++] = xstrdup(slaves.v[i]);
		}
	strv_free(&masters);
	strv_free(&slaves);
	json_decref(doc);
	return 0;
}

int
parse_ip_link(const char *data, size_t len, struct jc_iface *ifaces, size_t n,
    struct jc_strv *notes, struct jc_err *err)
{
	json_t *doc = load_array(data, len, "ip -j -d link", err), *e;
	size_t i;

	if (doc == NULL)
		return err ? err->code : -EINVAL;
	json_array_foreach(doc, i, e) {
		const char *name = json_string_value(json_object_get(e, "ifname"));
		const char *kind = json_string_value(json_object_get(
		    json_object_get(e, "linkinfo"), "info_kind"));

		if (name == NULL)
			continue;
		for (size_t j = 0; j < n; j++) {
			struct jc_iface *f = &ifaces[j];

			if (strcmp(f->name, name) != 0)
				continue;
			/* Bond or team masters keep their members but are no bridge. */
			f->is_bridge = kind != NULL && strcmp(kind, "bridge") == 0;
		}
	}
	json_decref(doc);
	return 0;
}

void
parse_neigh_free(struct parse_neigh *nb, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(nb[i].dev);
		free(nb[i].lladdr);
		free(nb[i].dst);
	}
	free(nb);
}

int
parse_ip_neigh(const char *data, size_t len, struct parse_neigh **nb, size_t *n,
    struct jc_strv *notes, struct jc_err *err)
{
	json_t *doc = load_array(data, len, "ip -j neigh", err), *e;
	size_t i;

	*nb = NULL;
	*n = 0;
	if (doc == NULL)
		return err ? err->code : -EINVAL;
	json_array_foreach(doc, i, e) {
		const char *dev = json_string_value(json_object_get(e, "dev"));
		const json_t *st = json_object_get(e, "state"), *s;
		struct parse_neigh *x;
		size_t j;

		if (!jc_iface_name_ok(dev))
			continue;
		*nb = xreallocarray(*nb, *n + 1, sizeof(**nb));
		x = &(*nb)[(*n)++];
		memset(x, 0, sizeof(*x));
		x->dev = xstrdup(dev);
		x->dst = xstrdup(json_string_value(json_object_get(e, "dst")));
		x->lladdr = mac_lower(json_string_value(json_object_get(e, "lladdr")));
		if (json_is_string(st))
			st = NULL;	/* older iproute2: not a list; treat as unknown */
		json_array_foreach(st, j, s) {
			const char *v = json_string_value(s);

			if (v != NULL && (strcmp(v, "REACHABLE") == 0 || strcmp(v, "STALE") == 0 ||
			    strcmp(v, "DELAY") == 0))
				x->usable = true;
		}
		if (json_is_string(json_object_get(e, "state"))) {
			const char *v = json_string_value(json_object_get(e, "state"));

			x->usable = strcmp(v, "REACHABLE") == 0 || strcmp(v, "STALE") == 0 ||
			    strcmp(v, "DELAY") == 0;
		}
		if (x->lladdr == NULL)
			x->usable = false;
	}
	json_decref(doc);
	return 0;
}

/* Next "key=value" line: returns false at the end; blank lines give key "". */
static bool
next_kv(const char **p, char **key, char **val)
{
	const char *s = *p, *e, *eq;

	if (*s == '\0')
		return false;
	e = strchr(s, '\n');
	if (e == NULL)
		e = s + strlen(s);
	*p = *e ? e + 1 : e;
	while (e > s && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	eq = memchr(s, '=', (size_t)(e - s));
	if (eq == NULL) {
		*key = xstrndup(s, (size_t)(e - s));
		*val = NULL;
		return true;
	}
	*key = xstrndup(s, (size_t)(eq - s));
	*val = xstrndup(eq + 1, (size_t)(e - eq - 1));
	return true;
}

/* Strip one level of shell quotes from an os-release value. */
static char *
unquote(const char *v)
{
	size_t n = strlen(v);

	if (n >= 2 && (v[0] == '"' || v[0] == '\'') && v[n - 1] == v[0])
		return xstrndup(v + 1, n - 2);
	return xstrdup(v);
}

void
parse_os_release(const char *data, char **version, char **id)
{
	const char *p = data ? data : "";
	char *k, *v, *ver = NULL, *ver2 = NULL;

	*version = NULL;
	*id = NULL;
	while (next_kv(&p, &k, &v)) {
		if (v != NULL) {
			char *u = unquote(v);

			if (strcmp(k, "VERSION_ID") == 0 && ver == NULL && jc_plain_word(u))
				ver = xstrdup(u);
			else if (strcmp(k, "VERSION") == 0 && ver2 == NULL)
				ver2 = xstrdup(u);
			else if (strcmp(k, "ID") == 0 && *id == NULL && jc_plain_word(u))
				*id = xstrdup(u);
			free(u);
		}
		free(k);
		free(v);
	}
	if (ver == NULL && ver2 != NULL) {
		for (char *c = ver2; *c; c++)
			if (!isprint((unsigned char)*c))
				*c = '?';
		ver = ver2;
		ver2 = NULL;
	}
	free(ver2);
	*version = ver;
}

enum jc_netmgr
parse_linux_netmgr(const char *data)
{
	const char *p = data;
	bool nm = false, nd = false, ifupdown = false, ifile = false, ifup = false;
	char *k, *v;

	if (data == NULL)
		return JC_NETMGR_UNKNOWN;
	while (next_kv(&p, &k, &v)) {
		if (v != NULL && strcmp(k, "enabled") == 0) {
			nm = nm || strcmp(v, "NetworkManager") == 0;
			nd = nd || strcmp(v, "systemd-networkd") == 0;
			ifupdown = ifupdown || strcmp(v, "networking") == 0;
		} else if (v != NULL && strcmp(v, "yes") == 0) {
			ifile = ifile || strcmp(k, "interfaces") == 0;
			ifup = ifup || strcmp(k, "ifup") == 0;
		}
		free(k);
		free(v);
	}
	if (nm)
		return JC_NETMGR_NM;
	if (nd)
		return JC_NETMGR_NETWORKD;
	if (ifupdown || (ifile && ifup))
		return JC_NETMGR_IFUPDOWN;
	return JC_NETMGR_NONE;
}

static const char *const netmgr_names[] = {
	[JC_NETMGR_NONE] = "none",
	[JC_NETMGR_NM] = "networkmanager",
	[JC_NETMGR_NETWORKD] = "systemd-networkd",
	[JC_NETMGR_IFUPDOWN] = "ifupdown",
};

const char *
jc_netmgr_name(int m)
{
	if (m <= JC_NETMGR_UNKNOWN || m > JC_NETMGR_IFUPDOWN)
		return NULL;
	return netmgr_names[m];
}

enum jc_netmgr
jc_netmgr_by_name(const char *name)
{
	for (int m = JC_NETMGR_NONE; name != NULL && m <= JC_NETMGR_IFUPDOWN; m++)
		if (strcmp(name, netmgr_names[m]) == 0)
			return (enum jc_netmgr)m;
	return JC_NETMGR_UNKNOWN;
}

void
parse_linux_mgmt(const char *data, char **ip, char **iface)
{
	const char *p = data ? data : "";
	char *k, *v;

	*ip = NULL;
	*iface = NULL;
	while (next_kv(&p, &k, &v)) {
		if (v != NULL && strcmp(k, "addr") == 0 && *ip == NULL && jc_ipv4_ok(v))
			*ip = xstrdup(v);
		else if (v != NULL && strcmp(k, "iface") == 0 && *iface == NULL &&
		    jc_iface_name_ok(v))
			*iface = xstrdup(v);
		free(k);
		free(v);
	}
}

/* One key=value block of a sysfs listing. */
struct kvblock {
	struct jc_strv keys;
	struct jc_strv vals;
};

static const char *
kv_get(const struct kvblock *b, const char *key)
{
	for (size_t i = 0; i < b->keys.n; i++)
		if (strcmp(b->keys.v[i], key) == 0)
			return b->vals.v[i];
	return NULL;
}

/* Split a listing into blocks at blank lines. */
static struct kvblock *
kv_blocks(const char *data, size_t *nb)
{
	const char *p = data ? data : "";
	struct kvblock *b = NULL;
	char *k, *v;
	bool open = false;

	*nb = 0;
	while (next_kv(&p, &k, &v)) {
		if (v == NULL) {
			if (*k == '\0')
				open = false;
			free(k);
			continue;
		}
		if (!open) {
			b = xreallocarray(b, *nb + 1, sizeof(*b));
			memset(&b[*nb], 0, sizeof(*b));
			(*nb)++;
			open = true;
		}
		strv_push_owned(&b[*nb - 1].keys, k);
		strv_push_owned(&b[*nb - 1].vals, v);
	}
	return b;
}

static void
kv_free(struct kvblock *b, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		strv_free(&b[i].keys);
		strv_free(&b[i].vals);
	}
	free(b);
}

void
parse_linux_infiniband(const char *data, struct jc_rdma_dev **devs, size_t *n,
    struct jc_strv *notes)
{
	size_t nb;
	struct kvblock *b = kv_blocks(data, &nb);

	for (size_t i = 0; i < nb; i++) {
		const char *dev = kv_get(&b[i], "device"), *nd = kv_get(&b[i], "netdev");
		struct jc_rdma_dev *d = NULL;

		if (dev == NULL)
			continue;
		if (!jc_iface_name_ok(dev)) {
			jc_note_quoted(notes, "RDMA device with unsafe name \"%s\" skipped", dev);
			continue;
		}
		for (size_t j = 0; j < *n; j++)
			if (strcmp((*devs)[j].name, dev) == 0)
				d = &(*devs)[j];
		if (d != NULL)
			continue;	/* a later port of a listed device */
		*devs = xreallocarray(*devs, *n + 1, sizeof(**devs));
		d = &(*devs)[(*n)++];
		memset(d, 0, sizeof(*d));
		d->name = xstrdup(dev);
		d->state = parse_ibv_state(kv_get(&b[i], "state"));
		if (nd == NULL)
			nd = kv_get(&b[i], "ndev");
		if (nd != NULL && jc_iface_name_ok(nd))
			d->netdev = xstrdup(nd);
		else if (nd != NULL)
			jc_note_quoted(notes, "netdev with unsafe name \"%s\" ignored", nd);
		if (kv_get(&b[i], "node_guid") != NULL && jc_plain_word(kv_get(&b[i], "node_guid")))
			d->guid = xstrdup(kv_get(&b[i], "node_guid"));
	}
	kv_free(b, nb);
}

/* A copy of s if it is short printable text (a display name), else NULL. */
static char *
printable(const char *s)
{
	if (s == NULL || *s == '\0' || strlen(s) > 128)
		return NULL;
	for (const char *c = s; *c; c++)
		if (!isprint((unsigned char)*c))
			return NULL;
	return xstrdup(s);
}

static char *
upper(const char *s)
{
	char *u = xstrdup(s);

	for (char *c = u; *c; c++)
		*c = (char)toupper((unsigned char)*c);
	return u;
}

/* "D-R[.S]" -> domain D, route R (hex), service S (-1 if none); false if not. */
static bool
tb_name(const char *name, long *dom, unsigned long *route, long *svc)
{
	char *end;

	if (!isdigit((unsigned char)*name))
		return false;
	*dom = strtol(name, &end, 10);
	if (*end != '-' || !isxdigit((unsigned char)end[1]))
		return false;
	*route = strtoul(end + 1, &end, 16);
	*svc = -1;
	if (*end == '.') {
		if (!isdigit((unsigned char)end[1]))
			return false;
		*svc = strtol(end + 1, &end, 10);
	}
	return *end == '\0';
}

void
parse_linux_thunderbolt(const char *data, struct jc_port **ports, size_t *n,
    struct jc_strv *notes)
{
	size_t nb;
	struct kvblock *b = kv_blocks(data, &nb);

	for (size_t i = 0; i < nb; i++) {
		const char *name = kv_get(&b[i], "name"), *uid = kv_get(&b[i], "unique_id");
		struct jc_strv devices = { 0 };
		struct jc_port *p;
		unsigned long route;
		long dom, svc;

		if (name == NULL || uid == NULL || !tb_name(name, &dom, &route, &svc) ||
		    route != 0 || svc != -1 || !jc_plain_word(uid))
			continue;
		*ports = xreallocarray(*ports, *n + 1, sizeof(**ports));
		p = &(*ports)[(*n)++];
		memset(p, 0, sizeof(*p));
		p->bus = (int)(dom >= 0 && dom < 1000 ? dom : -1);
		p->id = upper(uid);
		p->peer_rdma_service = JC_UNKNOWN;
		for (size_t j = 0; j < nb; j++) {
			const char *nm = kv_get(&b[j], "name"), *ty = kv_get(&b[j], "type");
			const char *pu = kv_get(&b[j], "unique_id"), *net = kv_get(&b[j], "net");
			unsigned long r;
			long d, s;

			if (nm == NULL || !tb_name(nm, &d, &r, &s) || d != dom || r == 0)
				continue;
			if (s >= 0) {
				if (net != NULL && p->iface == NULL) {
					if (jc_iface_name_ok(net))
						p->iface = xstrdup(net);
					else
						jc_note_quoted(notes, "Thunderbolt net with unsafe name \"%s\" "
						    "ignored", net);
				}
				continue;
			}
			if (ty != NULL && strcmp(ty, "thunderbolt_xdomain") == 0) {
				if (p->peer_id == NULL && pu != NULL && jc_plain_word(pu)) {
					const char *model = kv_get(&b[j], "device_name");

					p->peer_id = upper(pu);
					p->peer_via_dock = r > 0xff;
					p->peer_model = printable(model);
				}
				continue;
			}
			{
				char *dn = printable(kv_get(&b[j], "device_name"));

				strv_push_owned(&devices, dn != NULL ? dn : xstrdup(nm));
			}
		}
		if (p->iface == NULL && kv_get(&b[i], "net") != NULL &&
		    jc_iface_name_ok(kv_get(&b[i], "net")))
			p->iface = xstrdup(kv_get(&b[i], "net"));
		p->devices = devices.v;
		p->ndevices = devices.n;
	}
	kv_free(b, nb);
}

static bool
is_member(const struct jc_host *h, const char *name)
{
	for (size_t i = 0; i < h->nifaces; i++)
		for (size_t j = 0; j < h->ifaces[i].nmembers; j++)
			if (strcmp(h->ifaces[i].members[j], name) == 0)
				return true;
	return false;
}

static bool
mac_zero(const char *mac)
{
	return strspn(mac, "0:") == strlen(mac);
}

/*
 * A cable found only by MAC and neighbour facts (a point-to-point Ethernet
 * cable) is an interface that is not part of a network already: no route
 * through a gateway leaves by it and it holds no address of a network wider
 * than a cable's /30 (link-local ones aside). Otherwise a host that claims
 * the MAC of a router could be cabled to this host's LAN interface.
 */
static bool
cable_like(const struct jc_host *h, const struct jc_iface *f, struct jc_strv *notes)
{
	for (size_t r = 0; r < h->nroutes; r++)
		if (h->routes[r].iface != NULL && h->routes[r].via != NULL &&
		    strcmp(h->routes[r].iface, f->name) == 0) {
			jc_note_quoted(notes, "%s: a route through a gateway leaves by it; "
			    "not a cable", f->name);
			return false;
		}
	for (size_t j = 0; j < f->ninet; j++)
		if (f->prefix[j] < 30 && strncmp(f->inet[j], "169.254.", 8) != 0) {
			char *msg = xasprintf("%%s: holds %s/%d, a network wider than a cable; "
			    "not a cable", f->inet[j], f->prefix[j]);

			jc_note_quoted(notes, msg, f->name);
			free(msg);
			return false;
		}
	return true;
}

void
parse_linux_mac_ports(struct jc_host *h, const struct parse_neigh *nb, size_t nnb,
    struct jc_strv *notes)
{
	for (size_t i = 0; i < h->nifaces; i++) {
		const struct jc_iface *f = &h->ifaces[i];
		const char *peer = NULL;
		bool many = false, used = false, mgmt = false;
		struct jc_port *p;

		if (f->up != JC_YES || f->mac == NULL || f->is_bridge || is_member(h, f->name))
			continue;
		if (!jc_cable_iface_ok(h, f->name) || mac_zero(f->mac))
			continue;
		for (size_t j = 0; j < f->ninet; j++)
			if (h->mgmt_ip != NULL && strcmp(f->inet[j], h->mgmt_ip) == 0)
				mgmt = true;
		for (size_t j = 0; j < h->nports; j++)
			if (h->ports[j].iface != NULL && strcmp(h->ports[j].iface, f->name) == 0)
				used = true;
		if (mgmt || used)
			continue;
		for (size_t j = 0; j < nnb; j++) {
			if (!nb[j].usable || strcmp(nb[j].dev, f->name) != 0 ||
			    strcmp(nb[j].lladdr, f->mac) == 0)
				continue;
			if (peer == NULL)
				peer = nb[j].lladdr;
			else if (strcmp(peer, nb[j].lladdr) != 0)
				many = true;
		}
		h->ports = xreallocarray(h->ports, h->nports + 1, sizeof(*h->ports));
		p = &h->ports[h->nports++];
		memset(p, 0, sizeof(*p));
		p->bus = -1;
		p->iface = xstrdup(f->name);
		p->id = xasprintf("mac:%s", f->mac);
		p->peer_rdma_service = JC_UNKNOWN;
		if (many)
			jc_note_quoted(notes, "%s: several neighbours answer; not a direct cable", f->name);
		else if (peer != NULL && cable_like(h, f, notes))
			p->peer_id = xasprintf("mac:%s", peer);
	}
}

/* "default", "A" or "A/L" into dotted text and length. */
static bool
route_dst(const char *d, char out[16], int *len)
{
	size_t l;
	long pl = 32;

	if (d == NULL)
		return false;
	if (strcmp(d, "default") == 0) {
		strcpy(out, "0.0.0.0");
		*len = 0;
		return true;
	}
	l = strcspn(d, "/");
	if (l >= 16)
		return false;
	memcpy(out, d, l);
	out[l] = '\0';
	if (!jc_ipv4_ok(out) || (d[l] == '/' && !jc_parse_int(d + l + 1, 0, 32, &pl)))
		return false;
	*len = (int)pl;
	return true;
}

int
parse_ip_route_json(const char *data, size_t len, struct jc_route **routes, size_t *n,
    struct jc_strv *notes, struct jc_err *err)
{
	static const char *const kept[] = { "unicast", "blackhole", "unreachable", "prohibit",
		NULL };
	json_t *doc = load_array(data, len, "ip -j route", err), *e;
	size_t i;

	*routes = NULL;
	*n = 0;
	if (doc == NULL)
		return err ? err->code : -EINVAL;
	json_array_foreach(doc, i, e) {
		const char *type = json_string_value(json_object_get(e, "type"));
		const char *dst = json_string_value(json_object_get(e, "dst"));
		const char *dev = json_string_value(json_object_get(e, "dev"));
		const char *gw = json_string_value(json_object_get(e, "gateway"));
		const json_t *hop = json_array_get(json_object_get(e, "nexthops"), 0);
		struct jc_route *r;
		char a[16];
		int pl;
		bool keep = type == NULL;

		if (!json_is_object(e))
			continue;
		for (size_t k = 0; type != NULL && kept[k] != NULL; k++)
			keep = keep || strcmp(type, kept[k]) == 0;
		if (!keep)
			continue;
		if (dev == NULL && hop != NULL) {
			dev = json_string_value(json_object_get(hop, "dev"));
			gw = json_string_value(json_object_get(hop, "gateway"));
		}
		if (!route_dst(dst, a, &pl)) {
			jc_note_quoted(notes, "route to \"%s\" not understood", dst ? dst : "");
			continue;
		}
		if (dev != NULL && !jc_iface_name_ok(dev)) {
			jc_note_quoted(notes, "route with unsafe interface name \"%s\" skipped", dev);
			continue;
		}
		*routes = xreallocarray(*routes, *n + 1, sizeof(**routes));
		r = &(*routes)[(*n)++];
		r->dest = xstrdup(a);
		r->len = pl;
		r->iface = dev ? xstrdup(dev) : NULL;
		r->via = gw != NULL && jc_ipv4_ok(gw) ? xstrdup(gw) : NULL;
	}
	json_decref(doc);
	return 0;
}
