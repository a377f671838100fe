/* SPDX-License-Identifier: MIT */
/*
 * softverbs interfaces: which network interfaces are "cables" (one verbs
 * device each), whether each one is up with carrier, its MAC and its IPv4
 * address, and the GID table built from them the way Apple's driver does
 * (GID[0] link-local from the MAC, GID[1] IPv4-mapped only while the
 * interface has an IPv4 address). Linux only: reads getifaddrs().
 */
#include "config.h"
#include <errno.h>
#include <ifaddrs.h>
#include <linux/ethtool.h>
#include <linux/if_packet.h>
#include <linux/sockios.h>
#include <stdio.h>
#include <sys/ioctl.h>
#include <stdlib.h>
#include <string.h>

#include "sv.h"

#ifndef IFF_LOWER_UP
#define IFF_LOWER_UP	0x10000		/* carrier, from <linux/if.h> */
#endif

static int
name_in_list(const char *name, const char *list)
{
	size_t n = strlen(name);
	const char *p = list;

	while (p != NULL && *p != '\0') {
		const char *e = strchr(p, ',');
		size_t len = e != NULL ? (size_t)(e - p) : strlen(p);

		if (len == n && strncmp(p, name, n) == 0)
			return 1;
		p = e != NULL ? e + 1 : NULL;
	}
	return 0;
}

static int
is_cable(const char *name)
{
	const char *only = getenv("SOFTVERBS_IFACES");
	const char *mgmt = getenv("SOFTVERBS_MGMT_IFACE");

	if (only != NULL && *only != '\0')
		return name_in_list(name, only);
	if (strcmp(name, "lo") == 0)
		return 0;
	if (mgmt == NULL)
		mgmt = "en0,eth0";
	return !name_in_list(name, mgmt);
}

static int
cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **
sv_link_names(void)
{
	struct ifaddrs *ifa, *i;
	char **names;
	size_t n = 0, cap = 0;

	if (getifaddrs(&ifa) != 0)
		return NULL;
	for (i = ifa; i != NULL; i = i->ifa_next)
		cap++;
	if ((names = calloc(cap + 1, sizeof(*names))) == NULL) {
		freeifaddrs(ifa);
		return NULL;
	}
	for (i = ifa; i != NULL; i = i->ifa_next) {
		size_t k;
		int dup = 0;

		if (i->ifa_name == NULL || strlen(i->ifa_name) >= IF_NAMESIZE ||
		    !is_cable(i->ifa_name))
			continue;
		for (k = 0; k < n; k++)
			if (strcmp(names[k], i->ifa_name) == 0)
				dup = 1;
		if (dup)
			continue;
		if ((names[n] = strdup(i->ifa_name)) == NULL) {
			freeifaddrs(ifa);
			sv_names_free(names);
			errno = ENOMEM;
			return NULL;
		}
		n++;
	}
	freeifaddrs(ifa);
	qsort(names, n, sizeof(*names), cmp_names);
	return names;
}

void
sv_names_free(char **names)
{
	size_t i;

	if (names == NULL)
		return;
	for (i = 0; names[i] != NULL; i++)
		free(names[i]);
	free(names);
}

int
sv_link_get(const char *ifname, struct sv_link *l)
{
	struct ifaddrs *ifa, *i;

	memset(l, 0, sizeof(*l));
	if (getifaddrs(&ifa) != 0)
		return -1;
	for (i = ifa; i != NULL; i = i->ifa_next) {
		if (i->ifa_name == NULL || strcmp(i->ifa_name, ifname) != 0)
			continue;
		l->exists = 1;
		/* IFF_LOWER_UP follows the carrier at once; IFF_RUNNING
		 * lags behind it by up to a second */
		l->up = (i->ifa_flags & IFF_UP) &&
		    (i->ifa_flags & IFF_LOWER_UP);
		if (i->ifa_addr == NULL)
			continue;
		if (i->ifa_addr->sa_family == AF_PACKET) {
			const struct sockaddr_ll *ll =
			    (const struct sockaddr_ll *)(const void *)i->ifa_addr;

			if (ll->sll_halen == 6)
				memcpy(l->mac, ll->sll_addr, 6);
		} else if (i->ifa_addr->sa_family == AF_INET && !l->has_ipv4) {
			const struct sockaddr_in *sin =
			    (const struct sockaddr_in *)(const void *)i->ifa_addr;

			l->has_ipv4 = 1;
			l->ipv4 = sin->sin_addr;
		}
	}
	freeifaddrs(ifa);
	return 0;
}

void
sv_gid(const struct sv_link *l, int idx, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (!l->exists)
		return;
	if (idx == 0) {
		/* fe80::/64 with the modified EUI-64 interface identifier */
		gid->raw[0] = 0xfe;
		gid->raw[1] = 0x80;
		gid->raw[8] = l->mac[0] ^ 0x02;
		gid->raw[9] = l->mac[1];
		gid->raw[10] = l->mac[2];
		gid->raw[11] = 0xff;
		gid->raw[12] = 0xfe;
		gid->raw[13] = l->mac[3];
		gid->raw[14] = l->mac[4];
		gid->raw[15] = l->mac[5];
	} else if (idx == 1 && l->has_ipv4) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
		memcpy(&gid->raw[12], &l->ipv4, 4);
	}
}

int
sv_link_carrier(int fd, const char *ifname)
{
	struct ethtool_value ev = { .cmd = ETHTOOL_GLINK };
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) != 0 || !(ifr.ifr_flags & IFF_UP))
		return 0;
	if (!(ifr.ifr_flags & IFF_RUNNING))
		return 0;
	ifr.ifr_data = (char *)&ev;
	/* interfaces without ethtool (lo) only have IFF_RUNNING */
	if (ioctl(fd, SIOCETHTOOL, &ifr) != 0)
		return 1;
	return ev.data != 0;
}
