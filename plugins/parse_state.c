/* SPDX-License-Identifier: MIT */
/*
 * Parsers of the state queries (routes, addresses, link flags) that a
 * setup saves and restore compares. See parse_state.h.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "parse_state.h"

void
fact_state_clear(struct jc_fact_state *s)
{
	strv_free(&s->addrs);
	strv_free(&s->members);
	free(s->route);
	netsvc_free(s->svcs, s->nsvcs);
	free(s->content);
	memset(s, 0, sizeof(*s));
	s->up = JC_UNKNOWN;
}

/* Next whitespace-separated word of *p on its line (advanced), or NULL. */
static char *
next_word(const char **p)
{
	const char *s = *p, *e;

	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0' || *s == '\n')
		return NULL;
	for (e = s; *e && *e != ' ' && *e != '\t' && *e != '\n'; e++)
		;
	*p = e;
	return xstrndup(s, (size_t)(e - s));
}

char *
parse_route_text(const char *via, const char *dev)
{
	if (dev == NULL || !jc_iface_name_ok(dev) || (via != NULL && !jc_ipv4_ok(via)))
		return NULL;
	if (via != NULL)
		return xasprintf("via %s dev %s", via, dev);
	return xasprintf("dev %s", dev);
}

int
parse_route_split(const char *route, char **via, char **dev)
{
	const char *p = route;
	char *a = next_word(&p), *b = next_word(&p), *c = NULL, *d = NULL;

	*via = *dev = NULL;
	if (a != NULL && b != NULL && strcmp(a, "via") == 0) {
		c = next_word(&p);
		d = next_word(&p);
		if (c != NULL && d != NULL && strcmp(c, "dev") == 0) {
			*via = b;
			*dev = d;
			b = d = NULL;
		}
	} else if (a != NULL && b != NULL && strcmp(a, "dev") == 0) {
		*dev = b;
		b = NULL;
	}
	free(a);
	free(b);
	free(c);
	free(d);
	return *dev != NULL ? 0 : -EINVAL;
}

/* Value after "key:" on a line of route -n get, or NULL. */
static char *
route_field(const char *out, const char *key)
{
	size_t kl = strlen(key);

	for (const char *line = out; line != NULL && *line; ) {
		const char *nl = strchr(line, '\n'), *p = line;

		while (*p == ' ' || *p == '\t')
			p++;
		if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
			p += kl + 1;
			return next_word(&p);
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

char *
parse_route_get(const char *out, const char *peer)
{
	char *dest = route_field(out, "destination");
	char *flags = route_field(out, "flags");
	char *dev = route_field(out, "interface");
	char *gw = route_field(out, "gateway");
	char *r = NULL;

	/* a static host route to the peer, not the route that covers it */
	if (dest != NULL && strcmp(dest, peer) == 0 && flags != NULL &&
	    strstr(flags, "HOST") != NULL && strstr(flags, "STATIC") != NULL)
		r = parse_route_text(gw != NULL && jc_ipv4_ok(gw) ? gw : NULL, dev);
	free(dest);
	free(flags);
	free(dev);
	free(gw);
	return r;
}

char *
parse_ip_route_show(const char *out, const char *peer)
{
	const char *p = out;
	char *w, *dest = next_word(&p), *via = NULL, *dev = NULL, *r = NULL;

	if (dest != NULL && strcmp(dest, peer) == 0) {
		while ((w = next_word(&p)) != NULL) {
			if (strcmp(w, "via") == 0 && via == NULL)
				via = next_word(&p);
			else if (strcmp(w, "dev") == 0 && dev == NULL)
				dev = next_word(&p);
			free(w);
		}
		r = parse_route_text(via, dev);
	}
	free(dest);
	free(via);
	free(dev);
	return r;
}

void
parse_ip_addr_inet(const char *out, struct jc_strv *addrs)
{
	for (const char *line = out; line != NULL && *line; ) {
		const char *nl = strchr(line, '\n'), *p = line;
		char *w;

		while ((w = next_word(&p)) != NULL) {
			bool inet = strcmp(w, "inet") == 0;

			free(w);
			if (inet) {
				if ((w = next_word(&p)) != NULL && jc_ipv4_prefix_ok(w, true))
					strv_push_owned(addrs, w);
				else
					free(w);
				break;
			}
		}
		line = nl ? nl + 1 : NULL;
	}
}

int
parse_ip_link_up(const char *out)
{
	const char *lt = strchr(out, '<'), *gt = lt ? strchr(lt, '>') : NULL;
	int up = JC_NO;

	if (lt != NULL && gt != NULL) {
		char *flags = xstrndup(lt, (size_t)(gt - lt + 1));

		if (strstr(flags, ",UP,") || strstr(flags, "<UP,") || strstr(flags, ",UP>") ||
		    strstr(flags, "<UP>"))
			up = JC_YES;
		free(flags);
	}
	return up;
}

void
netsvc_free(struct jc_netsvc *svcs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(svcs[i].name);
		free(svcs[i].port);
		free(svcs[i].device);
	}
	free(svcs);
}

const struct jc_netsvc *
netsvc_find(const struct jc_netsvc *svcs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(svcs[i].name, name) == 0)
			return &svcs[i];
	return NULL;
}

/* The line at p without its end ("\n", "\r\n"); *next is set past it. */
static char *
line_of(const char *p, const char **next)
{
	const char *nl = strchr(p, '\n');
	size_t n = nl ? (size_t)(nl - p) : strlen(p);

	*next = nl ? nl + 1 : p + n;
	while (n > 0 && p[n - 1] == '\r')
		n--;
	return xstrndup(p, n);
}

/* "(Hardware Port: PORT, Device: DEV)": PORT and DEV, validated, into sv. */
static void
netsvc_port_line(const char *l, struct jc_netsvc *sv)
{
	static const char hp[] = "(Hardware Port: ";
	const char *dev, *end;
	char *port;

	if (strncmp(l, hp, sizeof(hp) - 1) != 0 || (dev = strstr(l, ", Device: ")) == NULL ||
	    (end = strrchr(l, ')')) == NULL || end < dev)
		return;
	port = xstrndup(l + sizeof(hp) - 1, (size_t)(dev - l - (sizeof(hp) - 1)));
	if (jc_service_name_ok(port))
		sv->port = port;
	else
		free(port);
	dev += strlen(", Device: ");
	port = xstrndup(dev, (size_t)(end - dev));
	if (jc_iface_name_ok(port))
		sv->device = port;
	else
		free(port);
}

size_t
parse_netsvc_order(const char *out, struct jc_netsvc **svcs, size_t *n)
{
	const char *p = out;
	size_t dropped = 0;
	struct jc_netsvc *last = NULL;

	while (*p) {
		char *l = line_of(p, &p);
		const char *q = l + 1;

		if (l[0] == '(' && last != NULL && strncmp(l, "(Hardware Port: ", 16) == 0) {
			netsvc_port_line(l, last);
			last = NULL;
			free(l);
			continue;
		}
		last = NULL;
		if (l[0] == '(' && (*q == '*' || (*q >= '0' && *q <= '9'))) {
			bool on = *q != '*';

			while (*q == '*' || (*q >= '0' && *q <= '9'))
				q++;
			if (q[0] == ')' && q[1] == ' ') {
				if (jc_service_name_ok(q + 2)) {
					*svcs = xreallocarray(*svcs, *n + 1, sizeof(**svcs));
					last = &(*svcs)[(*n)++];
					memset(last, 0, sizeof(*last));
					last->name = xstrdup(q + 2);
					last->enabled = on;
				} else {
					dropped++;
				}
			}
		}
		free(l);
	}
	return dropped;
}

/* Field k (0, 1) of a terse nmcli line, unescaped. New string. */
static char *
nmcli_field(const char *l, int k)
{
	struct jc_buf b = { 0 };
	int f = 0;

	buf_puts(&b, "");
	for (const char *p = l; *p; p++) {
		if (*p == '\\' && p[1] != '\0') {
			p++;
			if (f == k)
				buf_append(&b, p, 1);
			continue;
		}
		if (*p == ':') {
			f++;
			continue;
		}
		if (f == k)
			buf_append(&b, p, 1);
	}
	return buf_steal(&b);
}

size_t
parse_nmcli_connections(const char *out, struct jc_netsvc **svcs, size_t *n)
{
	const char *p = out;
	size_t dropped = 0;

	while (*p) {
		char *l = line_of(p, &p), *name, *dev;

		if (*l == '\0') {
			free(l);
			continue;
		}
		name = nmcli_field(l, 0);
		dev = nmcli_field(l, 1);
		if (jc_service_name_ok(name)) {
			struct jc_netsvc *sv;

			*svcs = xreallocarray(*svcs, *n + 1, sizeof(**svcs));
			sv = &(*svcs)[(*n)++];
			memset(sv, 0, sizeof(*sv));
			sv->name = name;
			sv->device = jc_iface_name_ok(dev) ? dev : NULL;
			sv->enabled = true;
			if (sv->device == NULL)
				free(dev);
		} else {
			dropped++;
			free(name);
			free(dev);
		}
		free(l);
	}
	return dropped;
}
