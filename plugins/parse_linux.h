/* SPDX-License-Identifier: MIT */
/*
 * Parsers for the Linux probe outputs: `ip -j addr`, `ip -j -d link`,
 * `ip -j -6 neigh`, /etc/os-release, and the key=value listings the probe
 * prints from sysfs (Thunderbolt devices, InfiniBand ports) and for the
 * management address. Pure text/JSON parsing with no Linux headers, so it
 * builds and is tested everywhere. Interface and device names must pass
 * jc_iface_name_ok; others are skipped with a note.
 */
#ifndef JC_PARSE_LINUX_H
#define JC_PARSE_LINUX_H

#include "util.h"

/* One entry of `ip -j -6 neigh show`. */
struct parse_neigh {
	char *dev;
	char *lladdr;		/* lower case, NULL when none */
	char *dst;
	bool usable;		/* REACHABLE, STALE or DELAY */
};

/*
 * ip -j addr show: one jc_iface per entry (name, MAC for ether links, mtu,
 * up from the UP flag, carrier from LOWER_UP, IPv4 addresses and prefixes,
 * bridge members from the "master" of other entries). Returns 0 or negative
 * with err filled when the text is not such JSON. *ifaces is a new array
 * (free with parse_ifaces_free).
 */
int parse_ip_addr(const char *data, size_t len, struct jc_iface **ifaces, size_t *n,
    struct jc_strv *notes, struct jc_err *err);

/*
 * ip -j -d link show: refine ifaces (from parse_ip_addr) with the link kind:
 * is_bridge only for linkinfo.info_kind "bridge"; other masters (bonds)
 * keep their members list with is_bridge false. Interfaces it lists that
 * ifaces lacks are not added. Returns 0 or negative with err filled on
 * garbage.
 */
int parse_ip_link(const char *data, size_t len, struct jc_iface *ifaces, size_t n,
    struct jc_strv *notes, struct jc_err *err);

/*
 * ip -j -6 neigh show (blank text is an empty list). *nb is a new array
 * (free with parse_neigh_free). Returns 0 or negative with err filled.
 */
int parse_ip_neigh(const char *data, size_t len, struct parse_neigh **nb, size_t *n,
    struct jc_strv *notes, struct jc_err *err);
void parse_neigh_free(struct parse_neigh *nb, size_t n);

/* /etc/os-release: VERSION_ID (else VERSION) and ID, new strings or NULL. */
void parse_os_release(const char *data, char **version, char **id);

/* The probe's mgmt.txt ("addr=A", "iface=I" lines): new strings or NULL. */
/*
 * The probe's netmgr.txt: lines "enabled=UNIT" (a unit enabled at boot:
 * NetworkManager, systemd-networkd, networking), "interfaces=yes"
 * (/etc/network/interfaces exists) and "ifup=yes" (ifup is installed);
 * anything else is ignored. NetworkManager wins, then systemd-networkd,
 * then ifupdown (networking enabled, or the interfaces file and ifup);
 * JC_NETMGR_NONE when nothing says. data NULL: JC_NETMGR_UNKNOWN.
 */
enum jc_netmgr parse_linux_netmgr(const char *data);

/* "networkmanager", "systemd-networkd", "ifupdown", "none", or NULL (unknown). */
const char *jc_netmgr_name(int m);

/* The manager called name (jc_netmgr_name), JC_NETMGR_UNKNOWN for another. */
enum jc_netmgr jc_netmgr_by_name(const char *name);

void parse_linux_mgmt(const char *data, char **ip, char **iface);

/*
 * The probe's infiniband.txt (blank-line separated blocks of device=,
 * port=, state=, node_guid=, netdev=, ndev=): one jc_rdma_dev per device
 * with its first port's state; netdev from device/net, else the GID ndev.
 * Appends to *devs.
 */
void parse_linux_infiniband(const char *data, struct jc_rdma_dev **devs, size_t *n,
    struct jc_strv *notes);

/*
 * The probe's thunderbolt.txt (blocks of name=, type=, unique_id=,
 * device_name=, vendor_name=, net=): one jc_port per host router "D-0"
 * (id = its unique_id in upper case), whose peer is the first XDomain
 * ("thunderbolt_xdomain") of domain D (peer_via_dock when it is more than
 * one hop away), devices the other routers of D, iface the net of one of
 * D's XDomain services. Appends to *ports.
 */
void parse_linux_thunderbolt(const char *data, struct jc_port **ports, size_t *n,
    struct jc_strv *notes);

/*
 * Add one "mac:" port per candidate cable interface of h (up, with a MAC,
 * not a bridge, not a member of a bridge or bond, not the management interface, not one
 * already used by a Thunderbolt port): id "mac:" + its MAC; peer_id "mac:"
 * + the MAC of the single usable neighbour learnt on it (several: NULL and a
 * note).
 */
void parse_linux_mac_ports(struct jc_host *h, const struct parse_neigh *nb, size_t nnb,
    struct jc_strv *notes);

/*
 * ip -j -4 route show table all: one jc_route per unicast, blackhole,
 * unreachable or prohibit entry of any table ("default" is 0.0.0.0/0, a
 * destination without "/len" is /32; a multipath route takes its first
 * hop's device). The local table's local and broadcast entries (the
 * host's own addresses) and the rest are left out. Returns 0, or negative
 * with err filled when the text is not such JSON. *routes is a new array
 * (free with jc_routes_free).
 */
int parse_ip_route_json(const char *data, size_t len, struct jc_route **routes, size_t *n,
    struct jc_strv *notes, struct jc_err *err);

#endif
