/* SPDX-License-Identifier: MIT */
/*
 * Linux backend: the commands a probe runs on a Linux host and how their
 * outputs become a struct jc_host. Interfaces come from `ip -j addr` and
 * `ip -j -d link`, the IPv4 routes of every table from `ip -j -4 route`,
 * RDMA devices from sysfs, and cable ends either from Thunderbolt domain
 * ids in sysfs or, where there are none, from the MAC address of each
 * candidate interface and of the one neighbour learnt on
 * it after an all-nodes ping.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "parse_ibv.h"
#include "parse_linux.h"
#include "parse_net.h"
#include "parse_state.h"
#include "parse_sudo.h"
#include "plan.h"
#include "parse_sw.h"
#include "platform.h"
#include "util.h"

/* The doctor's commands (parse_sw.h): as on macOS, less pmset and the firewall. */
static const struct jc_probe_cmd linux_doctor_cmds[] = {
	{ SW_ENV, "env | grep -E '^(MLX|JACCL)_'; true" },
	{ SW_PYTHON, SW_PYTHON_SH("false") },
	{ SW_ROUTE_LINUX, "ip route show default" },
	{ SW_INSTALL, SW_INSTALL_SH },
	{ NULL, NULL },
};

static const struct jc_probe_cmd linux_cmds[] = {
	{ "uname.txt", "uname -s" },
	{ "hostname.txt", "uname -n" },	/* from the probe's one uname -sn */
	{ "os-release.txt", "cat /etc/os-release" },
	{ "ip-j-addr.txt", "ip -j addr show" },
	{ "ip-j-link.txt", "ip -j -d link show" },
	/* every table: a VPN (wg-quick) may route through a table of its own */
	{ "ip-j-4-route.txt", "ip -j -4 route show table all" },
	{ "thunderbolt.txt",
	  "for d in /sys/bus/thunderbolt/devices/*; do "
	  "[ -d \"$d\" ] || continue; "
	  "echo \"name=${d##*/}\"; "
	  "t=$(sed -n 's/^DEVTYPE=//p' \"$d/uevent\" 2>/dev/null); echo \"type=$t\"; "
	  "for k in unique_id device_name vendor_name device vendor generation; do "
	  "[ -r \"$d/$k\" ] && echo \"$k=$(cat \"$d/$k\" 2>/dev/null)\"; done; "
	  "for n in \"$d\"/net/*; do [ -e \"$n\" ] && echo \"net=${n##*/}\"; done; "
	  "echo; done; true" },
	{ "infiniband.txt",
	  "for p in /sys/class/infiniband/*/ports/*; do "
	  "[ -d \"$p\" ] || continue; "
	  "d=${p%/ports/*}; "
	  "echo \"device=${d##*/}\"; echo \"port=${p##*/}\"; "
	  "[ -r \"$p/state\" ] && echo \"state=$(cat \"$p/state\")\"; "
	  "[ -r \"$d/node_guid\" ] && echo \"node_guid=$(cat \"$d/node_guid\")\"; "
	  "for n in \"$d\"/device/net/*; do [ -e \"$n\" ] && echo \"netdev=${n##*/}\"; done; "
	  "[ -r \"$p/gid_attrs/ndevs/0\" ] && echo \"ndev=$(cat \"$p/gid_attrs/ndevs/0\" 2>/dev/null)\"; "
	  "echo; done; true" },
	{ "neigh.txt",
	  "set -- ${SSH_CONNECTION:-}; sa=${3:-}; "
	  "for d in /sys/class/net/*; do "
	  "i=${d##*/}; [ \"$i\" = lo ] && continue; [ -d \"$d/bridge\" ] && continue; "
	  "f=$(cat \"$d/flags\" 2>/dev/null) || continue; [ $((f & 1)) -eq 1 ] || continue; "
	  "if [ -n \"$sa\" ] && ip -o -4 addr show dev \"$i\" | grep -qF \" $sa/\"; then continue; fi; "
	  "ping -6 -c 2 -i 0.2 -W 1 -I \"$i\" ff02::1 >/dev/null 2>&1; "
	  "done; ip -j -6 neigh show" },
	{ "mgmt.txt",
	  "set -- ${SSH_CONNECTION:-}; a=${3:-}; echo \"addr=$a\"; "
	  "[ -n \"$a\" ] && ip -o addr show | while read -r n i fam ad rest; do "
	  "[ \"${ad%/*}\" = \"$a\" ] && echo \"iface=$i\"; done; true" },
	{ PLATFORM_SUDO_FILE, SUDO_PROBE_CMD },
	/*
	 * What configures the network at boot, where --persist writes: a
	 * unit enabled in /etc/systemd/system (systemctl enable's links, which
	 * need no running systemd to read), and ifupdown's file and command.
	 */
	{ "netmgr.txt",
	  "for u in NetworkManager systemd-networkd networking; do "
	  "for d in /etc/systemd/system/*.wants; do "
	  "[ -e \"$d/$u.service\" ] && { echo \"enabled=$u\"; break; }; done; done; "
	  "[ -f /etc/network/interfaces ] && echo interfaces=yes; "
	  "command -v ifup >/dev/null 2>&1 && echo ifup=yes; true" },
	{ NULL, NULL },
};

/*
 * What the cables need: the Thunderbolt devices and their interfaces, the
 * interfaces' links and addresses, the neighbours seen on each, and the
 * management interface (never a cable).
 */
static const char *const linux_cabling_cmds[] = {
	"uname.txt", "hostname.txt", "ip-j-addr.txt", "ip-j-link.txt", "thunderbolt.txt",
	"neigh.txt", "mgmt.txt", NULL,
};

/*
 * What changes while a Linux host runs, for watch's later looks: the
 * interfaces' links and addresses, the Thunderbolt devices, the RDMA port
 * states and the neighbours on each cable.
 */
static const char *const linux_watch_cmds[] = {
	"ip-j-addr.txt", "ip-j-link.txt", "thunderbolt.txt", "infiniband.txt", "neigh.txt",
	NULL,
};

static bool
not_run(const struct jc_raw_out *o)
{
	return o == NULL || o->status == 126 || o->status == 127;
}

static int
linux_parse(struct jc_host *h, const struct jc_raw *raw, struct jc_err *err)
{
	const struct jc_raw_out *o, *link, *addr;
	struct jc_strv notes = { 0 };
	struct jc_err e2;
	struct parse_neigh *nb = NULL;
	size_t nnb = 0;

	h->os = JC_OS_LINUX;
	h->rdma_listed = JC_UNKNOWN;
	h->rdma_enabled = JC_UNKNOWN;
	h->sudo = JC_UNKNOWN;
	for (size_t i = 0; i < raw->n; i++)
		if (raw->outs[i].len > PLATFORM_MAX_OUTPUT)
			return jc_fail(err, -EFBIG, "%s: output larger than %u bytes",
			    raw->outs[i].name, PLATFORM_MAX_OUTPUT);
	if (!not_run(o = raw_get(raw, "hostname.txt")))
		h->hostname = parse_word_line(o->data);
	if (!not_run(o = raw_get(raw, "os-release.txt"))) {
		char *id = NULL;

		parse_os_release(o->data, &h->os_version, &id);
		free(id);
	}
	if (!not_run(o = raw_get(raw, "mgmt.txt")))
		parse_linux_mgmt(o->data, &h->mgmt_ip, &h->mgmt_iface);
	if (!not_run(o = raw_get(raw, "netmgr.txt")))
		h->netmgr = parse_linux_netmgr(o->data);
	else
		platform_note(h, "network manager not captured; --persist cannot choose one");

	addr = raw_get(raw, "ip-j-addr.txt");
	link = raw_get(raw, "ip-j-link.txt");
	if (!not_run(addr)) {
		if (parse_ip_addr(addr->data, addr->len, &h->ifaces, &h->nifaces, &notes, &e2) < 0) {
			strv_free(&notes);
			return jc_fail(err, -EINVAL, "%s: %s", addr->name, e2.msg);
		}
		platform_notes_from(h, addr->name, &notes);
	} else {
		platform_note(h, "ip -j addr not captured; interfaces unknown");
	}
	if (!not_run(link)) {
		if (parse_ip_link(link->data, link->len, h->ifaces, h->nifaces, &notes, &e2) < 0) {
			strv_free(&notes);
			return jc_fail(err, -EINVAL, "%s: %s", link->name, e2.msg);
		}
		platform_notes_from(h, link->name, &notes);
	}
	if (!not_run(o = raw_get(raw, "ip-j-4-route.txt"))) {
		if (parse_ip_route_json(o->data, o->len, &h->routes, &h->nroutes, &notes, &e2) < 0) {
			strv_free(&notes);
			return jc_fail(err, -EINVAL, "%s: %s", o->name, e2.msg);
		}
		platform_notes_from(h, o->name, &notes);
		h->routes_known = true;
	} else {
		platform_note(h, "ip -4 route not captured; routes unknown");
	}
	if (h->mgmt_iface == NULL && h->mgmt_ip != NULL)
		for (size_t i = 0; i < h->nifaces && h->mgmt_iface == NULL; i++)
			for (size_t j = 0; j < h->ifaces[i].ninet; j++)
				if (strcmp(h->ifaces[i].inet[j], h->mgmt_ip) == 0) {
					h->mgmt_iface = xstrdup(h->ifaces[i].name);
					break;
				}

	if (!not_run(o = raw_get(raw, "infiniband.txt"))) {
		parse_linux_infiniband(o->data, &h->rdma, &h->nrdma, &notes);
		platform_notes_from(h, o->name, &notes);
		h->rdma_listed = h->nrdma > 0 ? JC_YES : JC_NO;
		h->rdma_enabled = h->rdma_listed;
	} else {
		platform_note(h, "infiniband sysfs not captured; RDMA devices unknown");
	}

	if (!not_run(o = raw_get(raw, "thunderbolt.txt"))) {
		parse_linux_thunderbolt(o->data, &h->ports, &h->nports, &notes);
		platform_notes_from(h, o->name, &notes);
		/* the management interface and loopbacks are never a cable end */
		for (size_t i = 0; i < h->nports; i++)
			if (h->ports[i].iface != NULL && !jc_cable_iface_ok(h, h->ports[i].iface)) {
				platform_note(h, "Thunderbolt net %s is the management interface; "
				    "not used as a cable", h->ports[i].iface);
				free(h->ports[i].iface);
				h->ports[i].iface = NULL;
			}
	}
	if (!not_run(o = raw_get(raw, "neigh.txt")) && o->len > 0) {
		if (parse_ip_neigh(o->data, o->len, &nb, &nnb, &notes, &e2) < 0) {
			strv_free(&notes);
			return jc_fail(err, -EINVAL, "%s: %s", o->name, e2.msg);
		}
		platform_notes_from(h, o->name, &notes);
	} else {
		platform_note(h, "neighbour discovery not captured; cable peers unknown");
	}
	parse_linux_mac_ports(h, nb, nnb, &notes);
	h->ports_known = h->nports > 0 || h->nifaces > 0;
	platform_notes_from(h, "neigh.txt", &notes);
	parse_neigh_free(nb, nnb);

	platform_sudo(h, raw);
	return 0;
}

/* ---- setup, state and restore ---- */

static int
linux_route_cmd(enum jc_act act, const struct jc_act_arg *a, struct jc_strv *argv)
{
	char net[24];

	snprintf(net, sizeof(net), "%s/32", a->peer);
	if (act == JC_ACT_ROUTE_DEL) {
		platform_argv(argv, "sudo", "ip", "route", "del", net, NULL);
		if (a->iface != NULL)
			platform_argv(argv, "dev", a->iface, NULL);
		return 0;
	}
	platform_argv(argv, "sudo", "ip", "route", "replace", net, NULL);
	if (a->via != NULL)
		platform_argv(argv, "via", a->via, NULL);
	platform_argv(argv, "dev", a->iface, NULL);
	return 0;
}

/*
 * The file of ours for iface under the manager mgr (enum jc_netmgr):
 * systemd-networkd /etc/systemd/network/10-jaccl-config-IF.network,
 * ifupdown /etc/network/interfaces.d/jaccl-config-IF; NULL for another
 * manager or an iface failing jc_iface_name_ok. New string.
 */
static char *
linux_file_path(int mgr, const char *iface)
{
	if (iface == NULL || !jc_iface_name_ok(iface))
		return NULL;
	if (mgr == JC_NETMGR_NETWORKD)
		return xasprintf("/etc/systemd/network/10-jaccl-config-%s.network", iface);
	if (mgr == JC_NETMGR_IFUPDOWN)
		return xasprintf("/etc/network/interfaces.d/jaccl-config-%s", iface);
	return NULL;
}

/*
 * systemd-networkd: the address, IPv6 link-local kept (the cable
 * discovery's neighbours), no IPv4 link-local. ifupdown: the address,
 * brought up at boot. Only the interface and the address vary.
 */
static char *
linux_file_text(int mgr, const char *iface, const char *addr)
{
	if (iface == NULL || !jc_iface_name_ok(iface) || addr == NULL ||
	    !jc_ipv4_prefix_ok(addr, true))
		return NULL;
	if (mgr == JC_NETMGR_NETWORKD)
		return xasprintf("# written by jaccl-config --persist\n"
		    "[Match]\nName=%s\n\n[Network]\nAddress=%s\nLinkLocalAddressing=ipv6\n",
		    iface, addr);
	if (mgr == JC_NETMGR_IFUPDOWN)
		return xasprintf("# written by jaccl-config --persist\n"
		    "auto %s\niface %s inet static\n    address %s\n", iface, iface, addr);
	return NULL;
}

static bool file_text_ours(int mgr, const char *iface, const char *text);

static int
linux_command(enum jc_act act, const struct jc_act_arg *a, struct jc_strv *argv)
{
	switch (act) {
	case JC_ACT_ADDR_SET:
		platform_argv(argv, "sudo", "ip", "addr", "replace", a->addr, "dev", a->iface,
		    NULL);
		return 0;
	case JC_ACT_ADDR_ADD:
		platform_argv(argv, "sudo", "ip", "addr", "add", a->addr, "dev", a->iface, NULL);
		return 0;
	case JC_ACT_ADDR_DEL:
		platform_argv(argv, "sudo", "ip", "addr", "del", a->addr, "dev", a->iface, NULL);
		return 0;
	case JC_ACT_LINK_UP:
	case JC_ACT_LINK_DOWN:
		platform_argv(argv, "sudo", "ip", "link", "set", a->iface,
		    act == JC_ACT_LINK_UP ? "up" : "down", NULL);
		return 0;
	case JC_ACT_ROUTE_SET:
	case JC_ACT_ROUTE_DEL:
		return linux_route_cmd(act, a, argv);
	case JC_ACT_BRIDGE_UP:
	case JC_ACT_BRIDGE_DOWN:
	case JC_ACT_BRIDGE_ADDM:
	case JC_ACT_SVC_CREATE:
		platform_argv(argv, "sudo", "nmcli", "connection", "add", "type", "ethernet",
		    "ifname", a->iface, "con-name", a->service, "ipv4.method", "manual",
		    "ipv4.addresses", a->addr, "ipv6.method", "ignore", NULL);
		return 0;
	case JC_ACT_SVC_REMOVE:
		platform_argv(argv, "sudo", "nmcli", "connection", "delete", a->service, NULL);
		return 0;
	case JC_ACT_FILE_WRITE:
	case JC_ACT_FILE_REMOVE: {
		char *path = linux_file_path(jc_netmgr_by_name(a->manager), a->iface);

		if (path == NULL || (act == JC_ACT_FILE_WRITE &&
		    !file_text_ours(jc_netmgr_by_name(a->manager), a->iface, a->content))) {
			free(path);
			break;
		}
		if (act == JC_ACT_FILE_WRITE)
			platform_argv(argv, "sudo", "sh", "-c", JC_WRITE_SCRIPT, "sh", a->content, path,
			    NULL);
		else
			platform_argv(argv, "sudo", "rm", "-f", path, NULL);
		free(path);
		return 0;
	}
	case JC_ACT_NET_RELOAD:
		if (jc_netmgr_by_name(a->manager) != JC_NETMGR_NETWORKD)
			break;
		platform_argv(argv, "sudo", "networkctl", "reload", NULL);
		return 0;
	case JC_ACT_BRIDGE_DELM:
	case JC_ACT_SVC_MANUAL:
	case JC_ACT_SVC_ENABLE:
	case JC_ACT_SVC_DISABLE:
		break;
	}
	return -ENOTSUP;
}


/*
 * True when text is a file of ours for iface (what linux_file_text
 * writes, or an earlier run's shorter form): comments, blank lines and only
 * the lines naming iface and its address. Anything else (an ifupdown "up"
 * hook run as root at boot, another interface, DHCP) is not ours, and is
 * never written back by restore.
 */
static bool
file_text_ours(int mgr, const char *iface, const char *text)
{
	bool named = false;

	if (text == NULL || iface == NULL || !jc_iface_name_ok(iface) ||
	    (mgr != JC_NETMGR_NETWORKD && mgr != JC_NETMGR_IFUPDOWN))
		return false;
	for (const char *p = text; *p; ) {
		size_t l = strcspn(p, "\n");
		char *line = xstrndup(p, l), *v = line + strspn(line, " \t");
		char *word = NULL;
		bool good = *v == '\0' || *v == '#';

		if (!good && mgr == JC_NETMGR_NETWORKD) {
			good = strcmp(v, "[Match]") == 0 || strcmp(v, "[Network]") == 0 ||
			    strcmp(v, "LinkLocalAddressing=ipv6") == 0 ||
			    (strncmp(v, "Address=", 8) == 0 && jc_ipv4_prefix_ok(v + 8, true));
			if (!good && strncmp(v, "Name=", 5) == 0 && strcmp(v + 5, iface) == 0)
				good = named = true;
		} else if (!good) {
			word = xasprintf("iface %s inet static", iface);
			good = strcmp(v, word) == 0 ||
			    (strncmp(v, "address ", 8) == 0 && jc_ipv4_prefix_ok(v + 8, true));
			free(word);
			word = xasprintf("auto %s", iface);
			if (!good && strcmp(v, word) == 0)
				good = named = true;
			free(word);
		}
		free(line);
		if (!good)
			return false;
		p += l + (p[l] == '\n');
	}
	return named;
}

/* Per cable: the address (replaced), the link up, the host route (replaced). */
static void
linux_setup(struct plan_host *ph, const struct jc_host *h)
{
	(void)h;
	for (size_t a = 0; a < ph->naddrs; a++) {
		const struct plan_addr *ad = &ph->addrs[a];

		plan_addr_set(ph, ad);
		plan_act(ph, &ph->cmds, false, JC_ACT_LINK_UP,
		    &(struct jc_act_arg){ .iface = ad->iface });
		plan_route_set(ph, ad);
	}
}

/*
 * NetworkManager (nmcli): per cable interface a connection of ours
 * ("jaccl-config IF") with the planned address, IPv6 left alone; one of
 * that name left by an earlier run is deleted first (that may fail: none).
 * It is stored and connects at boot; the address is already set (ip,
 * above), so it is not brought up now.
 */
static void
linux_persist_nm(struct plan_host *ph, const struct plan_addr *ad)
{
	char net[24], *svc = xasprintf("%s%s", JC_SVC_PREFIX, ad->iface);

	snprintf(net, sizeof(net), "%s/30", ad->ip);
	plan_act(ph, &ph->cmds, true, JC_ACT_SVC_REMOVE, &(struct jc_act_arg){ .service = svc });
	plan_act(ph, &ph->cmds, false, JC_ACT_SVC_CREATE,
	    &(struct jc_act_arg){ .service = svc, .iface = ad->iface, .addr = net });
	free(svc);
}

/*
 * The manager that configures h at boot (its probe's netmgr.txt) gets the
 * addresses: NetworkManager a connection per cable interface (above);
 * systemd-networkd and ifupdown a file of ours per cable interface
 * (linux_file_path), then networkd reads its files again (that
 * may fail: the address is already set, the file is for the boot). A host
 * with none of them, or whose manager was not captured, is an error.
 */
static int
linux_persist(struct plan_host *ph, const struct jc_host *h, struct jc_err *err)
{
	const char *mgr = jc_netmgr_name(h->netmgr);

	if (h->netmgr == JC_NETMGR_UNKNOWN)
		return jc_fail(err, -ENOTSUP, "--persist: its network manager is unknown "
		    "(not in the probe's outputs); nothing was changed");
	if (h->netmgr == JC_NETMGR_NONE)
		return jc_fail(err, -ENOTSUP, "--persist: no network manager found (none of "
		    "NetworkManager, systemd-networkd, ifupdown is enabled at boot); "
		    "nothing was changed");
	ph->netmgr = h->netmgr;
	for (size_t a = 0; a < ph->naddrs; a++) {
		const struct plan_addr *ad = &ph->addrs[a];
		char net[24], *text;
		bool seen = false;

		for (size_t b = 0; b < a; b++)
			seen = seen || strcmp(ph->addrs[b].iface, ad->iface) == 0;
		if (seen)
			continue;
		if (h->netmgr == JC_NETMGR_NM) {
			linux_persist_nm(ph, ad);
			continue;
		}
		snprintf(net, sizeof(net), "%s/30", ad->ip);
		text = linux_file_text(h->netmgr, ad->iface, net);
		plan_act(ph, &ph->cmds, false, JC_ACT_FILE_WRITE, &(struct jc_act_arg){
		    .iface = ad->iface, .manager = mgr, .content = text });
		free(text);
	}
	plan_act(ph, &ph->cmds, true, JC_ACT_NET_RELOAD, &(struct jc_act_arg){ .manager = mgr });
	return 0;
}

/* The path or the content of our file for one of ph's cable interfaces. */
static bool
linux_persist_word(const struct plan_host *ph, const char *w)
{
	bool ok = false;

	if (!ph->persist)
		return false;
	for (size_t a = 0; a < ph->naddrs && !ok; a++) {
		char net[24], *path = linux_file_path(ph->netmgr, ph->addrs[a].iface);
		char *text;

		snprintf(net, sizeof(net), "%s/30", ph->addrs[a].ip);
		text = linux_file_text(ph->netmgr, ph->addrs[a].iface, net);
		ok = (path != NULL && strcmp(w, path) == 0) || (text != NULL && strcmp(w, text) == 0);
		free(path);
		free(text);
	}
	return ok;
}

static void
linux_queries(int kind, const char *iface, const char *peer, char **q1, char **q2)
{
	*q2 = NULL;
	if (kind == PLAN_FACT_FILE) {
		/* peer: the manager; the file's content, then whether it exists */
		char *path = linux_file_path(jc_netmgr_by_name(peer), iface);

		*q1 = xasprintf("cat %s", path ? path : "/nonexistent");
		*q2 = xasprintf("test -e %s", path ? path : "/nonexistent");
		free(path);
	} else if (kind == PLAN_FACT_SERVICES) {
		*q1 = xstrdup("nmcli -t -f NAME,DEVICE connection show");
	} else if (kind == PLAN_FACT_ROUTE) {
		*q1 = xasprintf("ip route show %s/32", peer);
	} else {
		*q1 = xasprintf("ip -4 -o addr show dev %s", iface);
		*q2 = xasprintf("ip -o link show dev %s", iface);
	}
}

static void
linux_fact_parse(const struct jc_fact_out *fo, struct jc_fact_state *st)
{
	fact_state_clear(st);
	if (fo->kind == PLAN_FACT_ROUTE) {
		if (fo->status == 0)
			st->route = parse_ip_route_show(fo->out, fo->peer);
		st->exists = st->route != NULL;
		return;
	}
	if (fo->kind == PLAN_FACT_FILE) {
		st->exists = fo->lout != NULL && fo->lstatus == 0;
		if (st->exists && fo->status == 0)
			st->content = xstrdup(fo->out);
		return;
	}
	if (fo->status != 0)
		return;
	st->exists = true;
	if (fo->kind == PLAN_FACT_SERVICES) {
		parse_nmcli_connections(fo->out, &st->svcs, &st->nsvcs);
		return;
	}
	parse_ip_addr_inet(fo->out, &st->addrs);
	if (fo->lout != NULL && fo->lstatus == 0)
		st->up = parse_ip_link_up(fo->lout);
}

/*
 * The probe's answers as the facts' queries: `ip -j addr show` holds each
 * interface's IPv4 addresses and link flags (what `ip -4 -o addr show dev
 * IF` and `ip -o link show dev IF` print, in their layout), `ip -j -4 route
 * show table all` the main table's route to a peer (`ip route show
 * PEER/32`). An interface not listed, or an answer not understood: asked.
 */
static bool
linux_prior(const struct jc_raw *raw, int kind, const char *iface, const char *peer,
    int *status, char **out, int *lstatus, char **lout)
{
	const struct jc_raw_out *o;
	json_t *root, *e;
	size_t i;
	bool found = false;

	if (kind != PLAN_FACT_ADDRS && kind != PLAN_FACT_ROUTE)
		return false;
	o = raw_get(raw, kind == PLAN_FACT_ADDRS ? "ip-j-addr.txt" : "ip-j-4-route.txt");
	if (not_run(o) || o->status != 0 ||
	    (root = json_loadb(o->data, o->len, 0, NULL)) == NULL)
		return false;
	if (!json_is_array(root)) {
		json_decref(root);
		return false;
	}
	json_array_foreach(root, i, e) {
		struct jc_buf b = { 0 }, l = { 0 };
		json_t *a, *f;
		size_t k;

		if (kind == PLAN_FACT_ROUTE) {
			const char *dst = json_string_value(json_object_get(e, "dst"));
			const char *tab = json_string_value(json_object_get(e, "table"));
			const char *typ = json_string_value(json_object_get(e, "type"));
			const char *gw = json_string_value(json_object_get(e, "gateway"));
			const char *dev = json_string_value(json_object_get(e, "dev"));
			size_t pl = strlen(peer);

			if (dst == NULL || (tab != NULL && strcmp(tab, "main") != 0) ||
			    (typ != NULL && strcmp(typ, "unicast") != 0) || strncmp(dst, peer, pl) != 0 ||
			    (dst[pl] != '\0' && strcmp(dst + pl, "/32") != 0))
				continue;
			buf_printf(&b, "%s", peer);
			if (gw != NULL && jc_ipv4_ok(gw))
				buf_printf(&b, " via %s", gw);
			if (dev != NULL && jc_iface_name_ok(dev))
				buf_printf(&b, " dev %s", dev);
			buf_puts(&b, "\n");
			*out = buf_steal(&b);
			*status = 0;
			found = true;
			break;
		}
		if (!json_is_string(json_object_get(e, "ifname")) ||
		    strcmp(json_string_value(json_object_get(e, "ifname")), iface) != 0)
			continue;
		buf_puts(&b, "");
		json_array_foreach(json_object_get(e, "addr_info"), k, a) {
			const char *fam = json_string_value(json_object_get(a, "family"));
			const char *loc = json_string_value(json_object_get(a, "local"));
			json_t *pfx = json_object_get(a, "prefixlen");

			if (fam != NULL && strcmp(fam, "inet") == 0 && loc != NULL && jc_ipv4_ok(loc) &&
			    json_is_integer(pfx))
				buf_printf(&b, "0: %s    inet %s/%lld\n", iface, loc,
				    (long long)json_integer_value(pfx));
		}
		buf_printf(&l, "0: %s: <", iface);
		json_array_foreach(json_object_get(e, "flags"), k, f)
			if (json_is_string(f))
				buf_printf(&l, "%s%s", k ? "," : "", json_string_value(f));
		buf_puts(&l, ">\n");
		*out = buf_steal(&b);
		*status = 0;
		*lout = buf_steal(&l);
		*lstatus = 0;
		found = true;
		break;
	}
	json_decref(root);
	if (!found && kind == PLAN_FACT_ROUTE) {
		*out = xstrdup("");	/* what ip route show prints for no route */
		*status = 0;
		found = true;
	}
	return found;
}

/*
 * The programs a setup runs under sudo, where Debian, Ubuntu and Fedora
 * keep them (/sbin and /bin lead there with a merged /usr).
 */
static const char *
linux_priv_path(const char *name)
{
	static const char *const paths[][2] = {
		{ "ip", "/usr/sbin/ip" },
		{ "nmcli", "/usr/bin/nmcli" },
		{ "networkctl", "/usr/bin/networkctl" },
		{ "sh", "/bin/sh" },
		{ "rm", "/bin/rm" },
	};

	for (size_t i = 0; i < JC_ARRAY_LEN(paths); i++)
		if (strcmp(name, paths[i][0]) == 0)
			return paths[i][1];
	return NULL;
}

const struct jc_platform_ops jc_platform_linux = {
	.name = "linux",
	.display = "Linux",
	.uname = "Linux",
	.caps = JC_PLAT_LINK_ADMIN,
	.cmds = linux_cmds,
	.doctor_cmds = linux_doctor_cmds,
	.cabling_cmds = linux_cabling_cmds,
	.watch_cmds = linux_watch_cmds,
	.parse = linux_parse,
	.setup = linux_setup,
	.persist = linux_persist,
	.persist_word = linux_persist_word,
	.command = linux_command,
	.queries = linux_queries,
	.fact_parse = linux_fact_parse,
	.priv_path = linux_priv_path,
	.prior = linux_prior,
};
