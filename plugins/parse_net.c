/* SPDX-License-Identifier: MIT */
/*
 * macOS network and system command parsers: networksetup hardware ports,
 * ifconfig interfaces (flags, mtu, ether, IPv4, bridge members, status),
 * and the one-line answers of ipconfig, sw_vers, rdma_ctl and hostname.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse_net.h"

/* Next line of data[0..len) from *pos: start and length without '\n'/'\r'. */
static bool
next_line(const char *data, size_t len, size_t *pos, const char **line, size_t *ll)
{
	size_t n = 0;

	if (*pos >= len)
		return false;
	*line = data + *pos;
	while (*pos + n < len && (*line)[n] != '\n')
		n++;
	*pos += n + 1;
	while (n > 0 && ((*line)[n - 1] == '\r' || (*line)[n - 1] == ' ' || (*line)[n - 1] == '\t'))
		n--;
	*ll = n;
	return true;
}

/* Line without leading blanks, as a new string. */
static char *
trimmed(const char *line, size_t ll)
{
	while (ll > 0 && (*line == ' ' || *line == '\t')) {
		line++;
		ll--;
	}
	return xstrndup(line, ll);
}

static bool
starts(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

void
parse_hwports_free(struct jc_hwport *ports, size_t n)
{
	for (size_t i = 0; i < n; i++)
		jc_hwport_clear(&ports[i]);
	free(ports);
}

static bool
mac_ok(const char *s)
{
	int groups = 0;

	while (*s) {
		int digits = 0;

		while (isxdigit((unsigned char)*s) && digits < 3) {
			s++;
			digits++;
		}
		if (digits == 0 || digits > 2)
			return false;
		groups++;
		if (*s == ':')
			s++;
		else if (*s != '\0')
			return false;
	}
	return groups >= 6 && groups <= 8;
}

/* A MAC address in lower case with two digits per group, or NULL. */
static char *
norm_mac(const char *s)
{
	struct jc_buf b = { 0 };

	if (!mac_ok(s))
		return NULL;
	while (*s) {
		const char *e = strchr(s, ':');
		size_t n = e ? (size_t)(e - s) : strlen(s);

		if (b.len > 0)
			buf_puts(&b, ":");
		if (n == 1)
			buf_puts(&b, "0");
		for (size_t i = 0; i < n; i++) {
			char c = (char)tolower((unsigned char)s[i]);

			buf_append(&b, &c, 1);
		}
		s += n;
		if (*s == ':')
			s++;
	}
	return buf_steal(&b);
}

int
parse_networksetup(const char *data, size_t len, struct jc_hwport **ports, size_t *n,
    struct jc_strv *notes, struct jc_err *err)
{
	size_t pos = 0, ll;
	const char *line;
	struct jc_hwport *cur = NULL;
	char *pending = NULL;
	bool seen = false, other = false;

	*ports = NULL;
	*n = 0;
	while (next_line(data, len, &pos, &line, &ll)) {
		char *t = trimmed(line, ll);

		if (starts(t, "Hardware Port:")) {
			free(pending);
			pending = trimmed(t + 14, strlen(t + 14));
			cur = NULL;
			seen = true;
		} else if (starts(t, "Device:") && pending != NULL) {
			char *dev = trimmed(t + 7, strlen(t + 7));

			if (!jc_iface_name_ok(dev)) {
				jc_note_quoted(notes, "hardware port with unsafe device \"%s\" skipped", dev);
				free(dev);
				free(pending);
				pending = NULL;
			} else {
				*ports = xreallocarray(*ports, *n + 1, sizeof(**ports));
				cur = &(*ports)[(*n)++];
				cur->port = pending;
				cur->device = dev;
				cur->mac = NULL;
				pending = NULL;
			}
		} else if (starts(t, "Ethernet Address:") && cur != NULL) {
			char *m = trimmed(t + 17, strlen(t + 17));

			free(cur->mac);
			cur->mac = norm_mac(m);
			free(m);
		} else if (starts(t, "VLAN Configurations") || starts(t, "=====")) {
			seen = true;
			cur = NULL;
		} else if (*t != '\0') {
			other = true;
		}
		free(t);
	}
	free(pending);
	if (!seen && other)
		return jc_fail(err, -EINVAL, "not networksetup -listallhardwareports output");
	return 0;
}

int
parse_netmask(const char *s)
{
	unsigned long m = 0;
	int bits = 0;

	if (s == NULL)
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		size_t n = 0;

		for (const char *c = s + 2; *c; c++, n++) {
			if (!isxdigit((unsigned char)*c) || n >= 8)
				return -1;
			m = m * 16 + (unsigned long)(isdigit((unsigned char)*c) ? *c - '0' :
			    tolower((unsigned char)*c) - 'a' + 10);
		}
		if (n == 0)
			return -1;
	} else {
		long o;
		const char *c = s;

		for (int i = 0; i < 4; i++) {
			char part[4];
			size_t k = 0;

			while (isdigit((unsigned char)*c) && k < 3)
				part[k++] = *c++;
			part[k] = '\0';
			if (k == 0 || !jc_parse_int(part, 0, 255, &o))
				return -1;
			m = (m << 8) | (unsigned long)o;
			if (i < 3 && *c++ != '.')
				return -1;
		}
		if (*c != '\0')
			return -1;
	}
	while (bits < 32 && (m & (1ul << (31 - bits))))
		bits++;
	if (bits < 32 && (m & ((1ul << (32 - bits)) - 1)) != 0)
		return -1;
	return bits;
}

char *
parse_prefix_mask(int prefix)
{
	unsigned long m;

	if (prefix < 0 || prefix > 32)
		return NULL;
	m = prefix == 0 ? 0 : (0xfffffffful << (32 - prefix)) & 0xfffffffful;
	return xasprintf("%lu.%lu.%lu.%lu", m >> 24, (m >> 16) & 255, (m >> 8) & 255, m & 255);
}

void
parse_ifaces_free(struct jc_iface *ifaces, size_t n)
{
	for (size_t i = 0; i < n; i++)
		jc_iface_clear(&ifaces[i]);
	free(ifaces);
}

/* "NAME: flags=..." -> length of NAME, else 0. */
static size_t
ifconfig_header(const char *line, size_t ll)
{
	size_t n = 0;

	if (ll == 0 || line[0] == ' ' || line[0] == '\t')
		return 0;
	while (n < ll && line[n] != ':' && line[n] != ' ' && line[n] != '\t')
		n++;
	if (n == 0 || n >= ll || line[n] != ':')
		return 0;
	if (ll - n < 8 || strncmp(line + n, ": flags=", 8) != 0)
		return 0;
	return n;
}

/* Words of a line (blank-separated), as new strings. */
static void
words(const char *s, struct jc_strv *out)
{
	while (*s) {
		size_t n;

		while (*s == ' ' || *s == '\t')
			s++;
		n = strcspn(s, " \t");
		if (n > 0)
			strv_push_owned(out, xstrndup(s, n));
		s += n;
	}
}

static void
parse_header(struct jc_iface *ifc, const char *rest)
{
	const char *lt = strchr(rest, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	struct jc_strv w = { 0 };
	long v;

	ifc->up = JC_NO;
	if (lt != NULL && gt != NULL) {
		char *flags = xstrndup(lt + 1, (size_t)(gt - lt - 1));
		char *save = flags;

		for (char *f = flags; f != NULL && *f;) {
			char *comma = strchr(f, ',');

			if (comma)
				*comma = '\0';
			if (strcmp(f, "UP") == 0)
				ifc->up = JC_YES;
			f = comma ? comma + 1 : NULL;
		}
		free(save);
	} else {
		unsigned long fl = strtoul(rest, NULL, 16);

		ifc->up = (fl & 1) ? JC_YES : JC_NO;
	}
	words(gt ? gt + 1 : rest, &w);
	for (size_t i = 0; i + 1 < w.n; i++)
		if (strcmp(w.v[i], "mtu") == 0 && jc_parse_int(w.v[i + 1], 0, 1 << 20, &v))
			ifc->mtu = (int)v;
	strv_free(&w);
}

static void
add_inet(struct jc_iface *ifc, const char *addr, int prefix)
{
	for (size_t i = 0; i < ifc->ninet; i++)
		if (strcmp(ifc->inet[i], addr) == 0)
			return;
	ifc->inet = xreallocarray(ifc->inet, ifc->ninet + 1, sizeof(*ifc->inet));
	ifc->prefix = xreallocarray(ifc->prefix, ifc->ninet + 1, sizeof(*ifc->prefix));
	ifc->inet[ifc->ninet] = xstrdup(addr);
	ifc->prefix[ifc->ninet] = prefix;
	ifc->ninet++;
}

static void
parse_body_line(struct jc_iface *ifc, const char *t, struct jc_strv *notes)
{
	struct jc_strv w = { 0 };

	words(t, &w);
	if (w.n == 0)
		goto out;
	if (strcmp(w.v[0], "ether") == 0 && w.n >= 2) {
		free(ifc->mac);
		ifc->mac = norm_mac(w.v[1]);
	} else if (strcmp(w.v[0], "inet") == 0 && w.n >= 2) {
		char *addr = xstrdup(w.v[1]), *slash = strchr(addr, '/');
		int prefix = -1;
		long pl;

		if (slash != NULL) {
			*slash = '\0';
			if (jc_parse_int(slash + 1, 0, 32, &pl))
				prefix = (int)pl;
		}
		for (size_t i = 2; i + 1 < w.n; i++)
			if (strcmp(w.v[i], "netmask") == 0)
				prefix = parse_netmask(w.v[i + 1]);
		if (jc_ipv4_ok(addr))
			add_inet(ifc, addr, prefix < 0 ? 32 : prefix);
		else
			jc_note_quoted(notes, "bad IPv4 address \"%s\" ignored", addr);
		free(addr);
	} else if (strcmp(w.v[0], "member:") == 0 && w.n >= 2) {
		ifc->is_bridge = true;
		if (!jc_iface_name_ok(w.v[1])) {
			jc_note_quoted(notes, "bridge member with unsafe name \"%s\" skipped", w.v[1]);
		} else {
			for (size_t i = 0; i < ifc->nmembers; i++)
				if (strcmp(ifc->members[i], w.v[1]) == 0)
					goto out;
			ifc->members = xreallocarray(ifc->members, ifc->nmembers + 1,
			    sizeof(*ifc->members));
			ifc->members[ifc->nmembers++] = xstrdup(w.v[1]);
		}
	} else if (strcmp(w.v[0], "Configuration:") == 0) {
		ifc->is_bridge = true;
	} else if (strcmp(w.v[0], "status:") == 0 && w.n >= 2) {
		if (strcmp(w.v[1], "active") == 0)
			ifc->carrier = JC_YES;
		else if (strcmp(w.v[1], "inactive") == 0)
			ifc->carrier = JC_NO;
	}
out:
	strv_free(&w);
}

int
parse_ifconfig(const char *data, size_t len, struct jc_iface **ifaces, size_t *n,
    struct jc_strv *notes, struct jc_err *err)
{
	size_t pos = 0, ll, headers = 0;
	const char *line;
	struct jc_iface *cur = NULL;
	bool skipping = false, other = false;

	if (*n == 0)
		*ifaces = NULL;
	while (next_line(data, len, &pos, &line, &ll)) {
		size_t nl = ifconfig_header(line, ll);
		char *t;

		if (nl > 0) {
			char *name = xstrndup(line, nl);
			size_t idx = *n;

			headers++;
			cur = NULL;
			skipping = false;
			if (!jc_iface_name_ok(name)) {
				jc_note_quoted(notes, "interface with unsafe name \"%s\" skipped", name);
				free(name);
				skipping = true;
				continue;
			}
			for (size_t i = 0; i < *n; i++)
				if (strcmp((*ifaces)[i].name, name) == 0)
					idx = i;
			if (idx == *n) {
				*ifaces = xreallocarray(*ifaces, *n + 1, sizeof(**ifaces));
				(*n)++;
			} else {
				jc_iface_clear(&(*ifaces)[idx]);
			}
			cur = &(*ifaces)[idx];
			memset(cur, 0, sizeof(*cur));
			cur->name = name;
			cur->carrier = JC_UNKNOWN;
			t = xstrndup(line + nl + 8, ll - nl - 8);
			parse_header(cur, t);
			free(t);
			if (starts(name, "bridge"))
				cur->is_bridge = true;
			continue;
		}
		if (skipping)
			continue;
		t = trimmed(line, ll);
		if (cur != NULL)
			parse_body_line(cur, t, notes);
		else if (*t != '\0' && strcmp(t, "...") != 0)
			other = true;
		free(t);
	}
	if (headers == 0 && other)
		return jc_fail(err, -EINVAL, "not ifconfig output (no \"NAME: flags=\" line)");
	return 0;
}

char *
parse_ipv4_line(const char *data)
{
	size_t pos = 0, ll;
	const char *line;
	char *t;

	if (data == NULL || !next_line(data, strlen(data), &pos, &line, &ll))
		return NULL;
	t = trimmed(line, ll);
	if (jc_ipv4_ok(t))
		return t;
	free(t);
	return NULL;
}

char *
parse_word_line(const char *data)
{
	size_t pos = 0, ll, len;
	const char *line;

	if (data == NULL)
		return NULL;
	len = strlen(data);
	while (next_line(data, len, &pos, &line, &ll)) {
		char *t = trimmed(line, ll);

		if (*t == '\0') {
			free(t);
			continue;
		}
		if (jc_plain_word(t))
			return t;
		free(t);
		return NULL;
	}
	return NULL;
}

void
parse_sw_vers(const char *data, char **version, char **build)
{
	size_t pos = 0, ll, len;
	const char *line;

	*version = NULL;
	*build = NULL;
	if (data == NULL)
		return;
	len = strlen(data);
	while (next_line(data, len, &pos, &line, &ll)) {
		char *t = trimmed(line, ll), *v = NULL, **dst = NULL;

		if (starts(t, "ProductVersion:"))
			dst = version;
		else if (starts(t, "BuildVersion:"))
			dst = build;
		if (dst != NULL && *dst == NULL) {
			v = strchr(t, ':') + 1;
			while (*v == ' ' || *v == '\t')
				v++;
			if (jc_plain_word(v))
				*dst = xstrdup(v);
		}
		free(t);
	}
}

char *
parse_sysctl(const char *data, const char *name)
{
	size_t pos = 0, ll, len, nl = strlen(name);
	const char *line;
	char *res = NULL;

	if (data == NULL || nl == 0)
		return NULL;
	len = strlen(data);
	while (res == NULL && next_line(data, len, &pos, &line, &ll)) {
		char *t = trimmed(line, ll), *v;

		v = t + nl;
		if (strncmp(t, name, nl) == 0) {
			while (*v == ' ' || *v == '\t')
				v++;
			if (*v == ':' || *v == '=') {
				v++;
				while (*v == ' ' || *v == '\t')
					v++;
				if (jc_plain_word(v))
					res = xstrdup(v);
			}
		}
		free(t);
	}
	return res;
}

int
parse_rdma_ctl(const char *data)
{
	char *t;
	int r = JC_UNKNOWN;
	size_t n;

	if (data == NULL)
		return JC_UNKNOWN;
	while (isspace((unsigned char)*data))
		data++;
	t = xstrdup(data);
	n = strlen(t);
	while (n > 0 && isspace((unsigned char)t[n - 1]))
		t[--n] = '\0';
	for (char *c = t; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (strcmp(t, "enabled") == 0)
		r = JC_YES;
	else if (strcmp(t, "disabled") == 0)
		r = JC_NO;
	free(t);
	return r;
}

/* ---- netstat -rn -f inet ---- */

/* The class mask length netstat leaves out of a destination: A /8, B /16, else /24. */
static int
class_len(unsigned first)
{
	return first < 128 ? 8 : first < 192 ? 16 : 24;
}

/*
 * A destination as netstat prints it into dotted text and length.
 * host: the route has flag H (the destination is a full address).
 */
static bool
netstat_dest(const char *w, bool host, char out[16], int *len)
{
	unsigned oct[4] = { 0 };
	int n = 0;
	long l;
	const char *p = w;
	size_t wl = strcspn(w, "%");	/* a scoped destination: "A%IF" */

	if (wl == 7 && strncmp(w, "default", 7) == 0) {
		strcpy(out, "0.0.0.0");
		*len = 0;
		return true;
	}
	while (n < 4 && p < w + wl && isdigit((unsigned char)*p)) {
		unsigned v = 0;
		int d = 0;

		while (p < w + wl && isdigit((unsigned char)*p) && d < 4) {
			v = v * 10 + (unsigned)(*p++ - '0');
			d++;
		}
		if (d > 3 || v > 255)
			return false;
		oct[n++] = v;
		if (p < w + wl && *p == '.')
			p++;
		else
			break;
	}
	if (n == 0 || (p < w + wl && p[-1] == '.'))
		return false;
	if (p < w + wl && *p == '/') {
		char num[4] = { 0 };
		size_t k = (size_t)(w + wl - p - 1);

		if (k == 0 || k > 2)
			return false;
		memcpy(num, p + 1, k);
		if (!jc_parse_int(num, 0, 32, &l))
			return false;
		*len = (int)l;
	} else if (p == w + wl) {
		if (host && n != 4)
			return false;
		*len = host ? 32 : class_len(oct[0]);
	} else {
		return false;	/* "&0x..." (a mask that is not a prefix) or garbage */
	}
	snprintf(out, 16, "%u.%u.%u.%u", oct[0], oct[1], oct[2], oct[3]);
	return true;
}

int
parse_netstat_routes(const char *data, size_t len, struct jc_route **routes, size_t *n,
    struct jc_strv *notes, struct jc_err *err)
{
	size_t pos = 0, ll;
	const char *line;
	long netif = -1;	/* word index of Netif; -1: before the header */
	bool title = false, inet = true;

	*routes = NULL;
	*n = 0;
	while (next_line(data, len, &pos, &line, &ll)) {
		char *t = trimmed(line, ll);
		struct jc_strv w = { 0 };

		words(t, &w);
		if (w.n == 0) {
			/* blank */
		} else if (strcmp(t, "Routing tables") == 0) {
			title = true;
		} else if (w.n == 1 && t[strlen(t) - 1] == ':') {
			/* a family's table: only "Internet:" is IPv4 */
			inet = strcmp(t, "Internet:") == 0;
			netif = -1;
		} else if (strcmp(w.v[0], "Destination") == 0) {
			netif = -1;
			for (size_t k = 0; k < w.n; k++)
				if (strcmp(w.v[k], "Netif") == 0)
					netif = (long)k;
			if (netif < 3) {
				jc_note_quoted(notes, "routing table header without Netif: \"%s\"", t);
				netif = -2;
			}
		} else if (inet && netif >= 3) {
			char dest[16];
			int dl;
			struct jc_route *r;

			if ((size_t)netif >= w.n ||
			    !netstat_dest(w.v[0], strchr(w.v[2], 'H') != NULL, dest, &dl)) {
				jc_note_quoted(notes, "route line not understood: \"%s\"", t);
			} else if (!jc_iface_name_ok(w.v[netif])) {
				jc_note_quoted(notes, "route with unsafe interface name \"%s\" skipped",
				    w.v[netif]);
			} else {
				*routes = xreallocarray(*routes, *n + 1, sizeof(**routes));
				r = &(*routes)[(*n)++];
				r->dest = xstrdup(dest);
				r->len = dl;
				r->iface = xstrdup(w.v[netif]);
				r->via = jc_ipv4_ok(w.v[1]) ? xstrdup(w.v[1]) : NULL;
			}
		} else if (inet && netif == -1 && !title) {
			strv_free(&w);
			free(t);
			jc_routes_free(*routes, *n);
			*routes = NULL;
			*n = 0;
			return jc_fail(err, -EINVAL, "not netstat -rn output (no \"Routing tables\" "
			    "or Destination header)");
		}
		strv_free(&w);
		free(t);
	}
	if (!title && netif == -1 && *n == 0)
		return jc_fail(err, -EINVAL, "not netstat -rn output (no \"Routing tables\" "
		    "or Destination header)");
	return 0;
}
