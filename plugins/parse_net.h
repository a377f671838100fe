/* SPDX-License-Identifier: MIT */
/*
 * Parsers for macOS network and system commands: networksetup
 * -listallhardwareports, ifconfig (macOS layout), ipconfig getifaddr,
 * sw_vers and rdma_ctl status. Interface names taken from this output
 * reach shell commands later, so every one must pass jc_iface_name_ok;
 * others are skipped with a note. Pure; never print.
 */
#ifndef JC_PARSE_NET_H
#define JC_PARSE_NET_H

#include "util.h"

/*
 * networksetup -listallhardwareports: one jc_hwport per "Hardware Port:"
 * block with a Device, in order. Returns 0 (possibly 0 ports), or negative
 * with err filled when no line of the text looks like networksetup output.
 * *ports is a new array (free with parse_hwports_free).
 */
int parse_networksetup(const char *data, size_t len, struct jc_hwport **ports, size_t *n,
    struct jc_strv *notes, struct jc_err *err);

/*
 * ifconfig [-a | IF] (macOS layout; several outputs may be appended): one
 * jc_iface per "NAME: flags=" header, with up (UP flag), carrier (status:
 * active/inactive, unknown when absent), mtu, ether, IPv4 addresses with
 * their prefix (from the hex or dotted netmask), bridge members. An
 * interface seen again is merged. Returns 0, or negative with err filled
 * when the text has no interface header at all. *ifaces is a new array
 * (free with parse_ifaces_free) or the existing one grown when *n > 0.
 */
int parse_ifconfig(const char *data, size_t len, struct jc_iface **ifaces, size_t *n,
    struct jc_strv *notes, struct jc_err *err);

/*
 * netstat -rn -f inet (macOS): the routes of the "Internet:" table, one
 * jc_route each. Destinations are read as netstat prints them: "default",
 * a network with its trailing zero octets left out and "/len" unless the
 * mask is the address's class mask ("10.8/16", "192.168.220" is /24,
 * "127" is /8), a host route (flag H) in full; the interface is the word
 * under "Netif" in the header. Lines that do not fit are skipped with a
 * note. Returns 0 (an empty table is "Routing tables" alone), or negative
 * with err filled when the text has neither that title nor the header.
 * *routes is a new array (free with jc_routes_free).
 */
int parse_netstat_routes(const char *data, size_t len, struct jc_route **routes, size_t *n,
    struct jc_strv *notes, struct jc_err *err);

/* Prefix length of a netmask "0xffffff00" / "255.255.255.0"; -1 if not a mask. */
int parse_netmask(const char *s);

/* Dotted text of a prefix length (0..32), a new string. */
char *parse_prefix_mask(int prefix);

/* First line of the text if it is a dotted IPv4 address, a new string; else NULL. */
char *parse_ipv4_line(const char *data);

/* First line of the text, trimmed, if it is a plain word (jc_plain_word); else NULL. */
char *parse_word_line(const char *data);

/* sw_vers: ProductVersion and BuildVersion (new strings, NULL when absent). */
void parse_sw_vers(const char *data, char **version, char **build);

/*
 * sysctl NAME... (without -n): the value on the "NAME: VALUE" line (or
 * "NAME = VALUE"), a new string if it is a plain word; else NULL.
 */
char *parse_sysctl(const char *data, const char *name);

/* rdma_ctl status: "enabled" -> JC_YES, "disabled" -> JC_NO, else JC_UNKNOWN. */
int parse_rdma_ctl(const char *data);

void parse_hwports_free(struct jc_hwport *ports, size_t n);
void parse_ifaces_free(struct jc_iface *ifaces, size_t n);

#endif
