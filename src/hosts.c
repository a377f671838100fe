/* SPDX-License-Identifier: MIT */
/* Host lists and ssh targets. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hosts.h"

bool
hosts_is_ip_literal(const char *s)
{
	unsigned char buf[16];

	return inet_pton(AF_INET, s, buf) == 1 || inet_pton(AF_INET6, s, buf) == 1;
}

int
hosts_parse_target(const char *s, struct jc_host *h, struct jc_err *err)
{
	const char *at, *host, *colon;
	char *name;
	long port = 0;

	if (!jc_plain_word(s) || strchr(s, '/') || strchr(s, ',') || strchr(s, '='))
		return jc_fail(err, -EINVAL,
		    "invalid host '%s': only letters, digits and . - _ : @ are allowed", s);
	at = strrchr(s, '@');
	host = at ? at + 1 : s;
	/* "user@-oOption": never a host name an ssh command line could take as an option */
	if (at == s || *host == '\0' || *host == '-')
		return jc_fail(err, -EINVAL, "invalid host '%s'", s);
	colon = strrchr(host, ':');
	/* host:port, but a bare IPv6 literal keeps its colons */
	if (colon != NULL && strchr(host, ':') == colon) {
		if (!jc_parse_int(colon + 1, 1, 65535, &port))
			return jc_fail(err, -EINVAL, "invalid port in host '%s'", s);
		name = xstrndup(host, (size_t)(colon - host));
	} else {
		name = xstrdup(host);
	}
	if (*name == '\0') {
		free(name);
		return jc_fail(err, -EINVAL, "invalid host '%s'", s);
	}
	h->target = xstrdup(s);
	h->name = name;
	h->user = at ? xstrndup(s, (size_t)(at - s)) : NULL;
	h->port = (int)port;
	return 0;
}

int
hosts_from_list(const char *list, struct jc_host **out, size_t *n, struct jc_err *err)
{
	struct jc_host *hosts = NULL;
	size_t count = 0;
	const char *p = list;
	int r;

	*out = NULL;
	*n = 0;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char *item = xstrndup(p, len);

		if (len == 0) {
			free(item);
			hosts_free(hosts, count);
			return jc_fail(err, -EINVAL, "Hostname cannot be empty");
		}
		hosts = xreallocarray(hosts, count + 1, sizeof(*hosts));
		memset(&hosts[count], 0, sizeof(*hosts));
		r = hosts_parse_target(item, &hosts[count], err);
		free(item);
		if (r != 0) {
			hosts_free(hosts, count);
			return r;
		}
		count++;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	*out = hosts;
	*n = count;
	return 0;
}

void
hosts_free(struct jc_host *hosts, size_t n)
{
	for (size_t i = 0; i < n; i++)
		jc_host_clear(&hosts[i]);
	free(hosts);
}
