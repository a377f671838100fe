/* SPDX-License-Identifier: MIT */
/*
 * Parsers of the read-only queries that capture a host's state before a
 * setup (and again at restore): macOS `route -n get PEER`, Linux
 * `ip route show PEER/32`, `ip -4 -o addr show dev IF` and
 * `ip -o link show dev IF`. Pure: text in, values out. Only what passes
 * validation is returned (interface names as jc_iface_name_ok, addresses
 * as jc_ipv4_ok), since restore puts these values into commands.
 */
#ifndef JC_PARSE_STATE_H
#define JC_PARSE_STATE_H

#include "jc.h"
#include "util.h"

/* One network service as `networksetup -listnetworkserviceorder` lists it. */
struct jc_netsvc {
	char *name;		/* jc_service_name_ok */
	char *port;		/* its hardware port (jc_service_name_ok), or NULL */
	char *device;		/* jc_iface_name_ok, or NULL */
	bool enabled;		/* listed as "(N)", not "(*)" */
};

/* What a fact's query says (see struct plan_fact for the kinds). */
struct jc_fact_state {
	bool exists;		/* the interface / route is there */
	int up;			/* enum jc_tri */
	struct jc_strv addrs;	/* "a.b.c.d/len" */
	struct jc_strv members;	/* bridge members */
	char *route;		/* "dev IF" or "via G dev IF"; NULL: no such route */
	struct jc_netsvc *svcs;	/* SERVICES: in service order */
	size_t nsvcs;
	char *content;		/* FILE: what the file holds (exists), or NULL */
};

void fact_state_clear(struct jc_fact_state *s);

/*
 * macOS `route -n get PEER` (exit status 0): the static host route to peer
 * ("destination: PEER", flags with HOST and STATIC) as "dev IF" or
 * "via G dev IF" (new string), or NULL when the output shows none (the
 * route that merely covers peer, a default route, garbage).
 */
char *parse_route_get(const char *out, const char *peer);

/*
 * Linux `ip route show PEER/32` (exit status 0): the route whose
 * destination is peer, as above, or NULL.
 */
char *parse_ip_route_show(const char *out, const char *peer);

/*
 * Linux `ip -4 -o addr show dev IF`: append every "inet A/L" of the
 * output to addrs (well-formed ones only).
 */
void parse_ip_addr_inet(const char *out, struct jc_strv *addrs);

/*
 * Linux `ip -o link show dev IF`: JC_YES when the flags between '<' and
 * '>' hold UP, else JC_NO (also when there are no flags).
 */
int parse_ip_link_up(const char *out);

/*
 * macOS `networksetup -listnetworkserviceorder`: every service, in order,
 * into *svcs / *n (appended). A service is a line "(N) NAME" or "(*) NAME"
 * (disabled), optionally followed by "(Hardware Port: PORT, Device: DEV)".
 * Services whose name fails jc_service_name_ok are left out (restore never
 * names them); a port or device that fails its check is left NULL.
 * Returns the number of services left out.
 */
size_t parse_netsvc_order(const char *out, struct jc_netsvc **svcs, size_t *n);

/*
 * Linux `nmcli -t -f NAME,DEVICE connection show`: one connection a line,
 * NAME:DEVICE with ':' and '\\' escaped by '\\'. Every connection, into
 * *svcs / *n (appended) as a service (port NULL, enabled true); names
 * that fail jc_service_name_ok are left out, a device that fails
 * jc_iface_name_ok (or none) is left NULL. Returns the number left out.
 */
size_t parse_nmcli_connections(const char *out, struct jc_netsvc **svcs, size_t *n);

void netsvc_free(struct jc_netsvc *svcs, size_t n);

/* The service called name in svcs[0..n), or NULL. */
const struct jc_netsvc *netsvc_find(const struct jc_netsvc *svcs, size_t n, const char *name);

/* "dev IF" / "via G dev IF" from its parts, validated; NULL when unfit. */
char *parse_route_text(const char *via, const char *dev);

/*
 * Split a route text made by parse_route_text() into *via (NULL without a
 * gateway) and *dev (new strings). Returns 0, or -EINVAL for other text.
 */
int parse_route_split(const char *route, char **via, char **dev);

#endif
