/* SPDX-License-Identifier: MIT */
/*
 * macOS backend: the commands a probe runs on a Mac and how their outputs
 * become a struct jc_host. Thunderbolt buses come from system_profiler
 * (-json, or -xml / text when a bundle holds those), interface names from
 * networksetup, addresses (and the management address) from ifconfig, RDMA
 * devices from ibv_devinfo (and ibv_devices when a bundle holds it), model
 * and macOS version from sysctl (or sysctl -n hw.model and sw_vers). A
 * missing output, or one not understood, leaves its facts unknown with a
 * note naming the command; only system_profiler's (the cabling itself)
 * fails the host.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse_ibv.h"
#include "parse_mgr.h"
#include "parse_net.h"
#include "parse_state.h"
#include "parse_sudo.h"
#include "parse_sw.h"
#include "parse_tb.h"
#include "plan.h"
#include "platform.h"
#include "util.h"

#define TB_JSON "system_profiler-SPThunderboltDataType.json"
#define TB_XML "system_profiler-SPThunderboltDataType.xml"
#define TB_TEXT "system_profiler-SPThunderboltDataType.txt"
#define HWPORTS "networksetup-listallhardwareports.txt"
#define SYSCTL "sysctl.txt"
#define IPCONFIG "ipconfig-getifaddr-%s.txt"
#define NETSTAT "netstat-rn-f-inet.txt"

/* The management interfaces, in the order mlx.distributed_config asks. */
static const char *const mgmt[] = { "en0", "en1" };

/*
 * The fewest commands that tell everything: the host name comes with uname
 * (-sn, one process for both), the model and the macOS version and build
 * from one sysctl, the management address from ifconfig -a (what ipconfig
 * getifaddr en0/en1 would say), the RDMA devices, GUIDs and port states
 * from ibv_devinfo (which lists what ibv_devices lists). Bundles of earlier
 * probes hold sysctl-hw.model.txt, sw_vers.txt, ibv_devices.txt and
 * ipconfig-getifaddr-enN.txt instead: they are read as before. The IPv4
 * routing table (netstat, VPN tunnels' routes included) tells which
 * per-cable subnets would collide; bundles made before it leave the
 * routes unknown. The other network managers (MGR_SH) are asked only by
 * the doctor and a persistent setup (PROBE_NO_MANAGERS).
 */
static const struct jc_probe_cmd macos_cmds[] = {
	{ "uname.txt", "uname -s" },
	{ "hostname.txt", "uname -n" },
	{ SYSCTL, "sysctl hw.model kern.osproductversion kern.osversion" },
	{ TB_JSON, "system_profiler SPThunderboltDataType -json" },
	{ HWPORTS, "networksetup -listallhardwareports" },
	{ "ifconfig.txt", "ifconfig -a" },
	{ NETSTAT, "netstat -rn -f inet" },
	{ "ibv_devinfo.txt", "ibv_devinfo" },
	{ "rdma_ctl-status.txt", "rdma_ctl status" },
	{ PLATFORM_SUDO_FILE, SUDO_PROBE_CMD },
	{ MGR_FILE, MGR_SH },
	{ NULL, NULL },
};

/*
 * What the cables need: the Thunderbolt ports and their peers, and the
 * interface of each port (mlx.distributed_config --dot reads the same two).
 */
static const char *const macos_cabling_cmds[] = {
	"uname.txt", "hostname.txt", TB_JSON, HWPORTS, NULL,
};

/*
 * What changes while a Mac runs, for watch's later looks: the cables and
 * their speeds, the interfaces' carriers and addresses, the RDMA port
 * states. Model, macOS version, port map, routes, RDMA's switch (it takes
 * a reboot) and sudo stay as the first look found them.
 */
static const char *const macos_watch_cmds[] = {
	TB_JSON, "ifconfig.txt", "ibv_devinfo.txt", NULL,
};

/*
 * The doctor's commands (parse_sw.h). socketfilterfw lives outside PATH
 * on a Mac, hence its folder added at the end. The environment is the one
 * any command started over SSH sees (mlx.launch's among them): only the
 * MLX_* and JACCL_* variables leave the host. The Python script finds
 * the Python the jobs run (never running macOS's stub, which could ask on
 * the Mac's screen to install the Command Line Tools) and prints its
 * version and the installed mlx distribution's ("-": none).
 */
static const struct jc_probe_cmd macos_doctor_cmds[] = {
	{ SW_PMSET, "pmset -g" },
	{ SW_FIREWALL, SW_FIREWALL_SH },
	{ SW_ENV, "env | grep -E '^(MLX|JACCL)_'; true" },
	{ SW_PYTHON, SW_PYTHON_SH("true") },
	{ SW_ROUTE_MACOS, "route -n get default 2>&1" },
	{ SW_NETSVC, SW_NETSVC_SH },
	{ SW_INSTALL, SW_INSTALL_SH },
	{ NULL, NULL },
};

static bool
blank(const struct jc_raw_out *o)
{
	for (size_t i = 0; i < o->len; i++)
		if (o->data[i] != ' ' && o->data[i] != '\t' && o->data[i] != '\n' &&
		    o->data[i] != '\r')
			return false;
	return true;
}

/* The command was not there or could not run: its output says nothing. */
static bool
not_run(const struct jc_raw_out *o)
{
	return o->status == 126 || o->status == 127;
}

static bool
has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

static bool
has_suffix(const char *s, const char *p)
{
	size_t a = strlen(s), b = strlen(p);

	return a >= b && strcmp(s + a - b, p) == 0;
}

static int
parse_thunderbolt(struct jc_host *h, const struct jc_raw *raw, struct jc_err *err)
{
	static const struct {
		const char *file;
		int (*fn)(const char *, size_t, struct jc_port **, size_t *,
		    struct jc_strv *, struct jc_err *);
	} forms[] = {
		{ TB_JSON, parse_tb_json },
		{ TB_XML, parse_tb_xml },
		{ TB_TEXT, parse_tb_text },
	};
	struct jc_strv notes = { 0 };
	struct jc_err e2;

	for (size_t i = 0; i < JC_ARRAY_LEN(forms); i++) {
		const struct jc_raw_out *o = raw_get(raw, forms[i].file);

		if (o == NULL)
			continue;
		if (not_run(o) || blank(o)) {
			platform_note(h, "%s: no output (exit %d); Thunderbolt ports unknown",
			    o->name, o->status);
			return 0;
		}
		if (forms[i].fn(o->data, o->len, &h->ports, &h->nports, &notes, &e2) < 0) {
			strv_free(&notes);
			return jc_fail(err, -EINVAL, "%s: %s", o->name, e2.msg);
		}
		platform_notes_from(h, o->name, &notes);
		h->ports_known = true;
		return 0;
	}
	platform_note(h, "system_profiler SPThunderboltDataType not captured; "
	    "Thunderbolt ports unknown");
	return 0;
}

static int
parse_hwports(struct jc_host *h, const struct jc_raw *raw, struct jc_err *err)
{
	const struct jc_raw_out *o = raw_get(raw, HWPORTS);
	struct jc_strv notes = { 0 };
	struct jc_err e2;

	if (o == NULL || not_run(o) || blank(o)) {
		platform_note(h, "networksetup -listallhardwareports not captured; "
		    "Thunderbolt interface names unknown");
		return 0;
	}
	if (parse_networksetup(o->data, o->len, &h->hwports, &h->nhwports, &notes, &e2) < 0) {
		strv_free(&notes);
		platform_note(h, "networksetup -listallhardwareports: %s; Thunderbolt interface "
		    "names unknown", e2.msg);
		return 0;
	}
	platform_notes_from(h, o->name, &notes);
	for (size_t i = 0; i < h->nports; i++) {
		struct jc_port *p = &h->ports[i];
		bool refused = false;
		char *want;

		if (p->receptacle == NULL)
			continue;
		want = xasprintf("Thunderbolt %s", p->receptacle);
		for (size_t j = 0; j < h->nhwports; j++) {
			const char *dev = h->hwports[j].device;

			if (strcmp(h->hwports[j].port, want) != 0)
				continue;
			/* the management interface and loopbacks are never a cable */
			if (!jc_cable_iface_ok(h, dev) || strcmp(dev, "en0") == 0) {
				char *safe = jc_printable(dev, 32);

				platform_note(h, "networksetup puts %s on the management interface "
				    "or a loopback (%s); not used as a cable", want, safe);
				free(safe);
				refused = true;
				break;
			}
			p->iface = xstrdup(dev);
			break;
		}
		if (p->iface == NULL && !refused) {
			char *safe = jc_printable(want, 80);

			platform_note(h, "no hardware port \"%s\" in networksetup", safe);
			free(safe);
		}
		free(want);
	}
	return 0;
}

/* ifconfig.txt first, then every ifconfig-IF.txt a capture may hold. */
static int
parse_ifaces(struct jc_host *h, const struct jc_raw *raw, struct jc_err *err)
{
	bool any = false;

	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < raw->n; i++) {
			const struct jc_raw_out *o = &raw->outs[i];
			struct jc_strv notes = { 0 };
			struct jc_err e2;

			if (pass == 0 ? strcmp(o->name, "ifconfig.txt") != 0 :
			    !(has_prefix(o->name, "ifconfig-") && has_suffix(o->name, ".txt")))
				continue;
			if (not_run(o) || blank(o))
				continue;
			if (parse_ifconfig(o->data, o->len, &h->ifaces, &h->nifaces,
			    &notes, &e2) < 0) {
				strv_free(&notes);
				platform_note(h, "%s: %s; its interface addresses unknown", o->name,
				    e2.msg);
				continue;
			}
			platform_notes_from(h, o->name, &notes);
			any = true;
		}
	if (!any)
		platform_note(h, "ifconfig not captured; interface addresses unknown");
	return 0;
}

static int
parse_routes(struct jc_host *h, const struct jc_raw *raw, struct jc_err *err)
{
	const struct jc_raw_out *o = raw_get(raw, NETSTAT);
	struct jc_strv notes = { 0 };
	struct jc_err e2;

	if (o == NULL || not_run(o) || blank(o)) {
		platform_note(h, "netstat -rn -f inet not captured; routes unknown");
		return 0;
	}
	if (parse_netstat_routes(o->data, o->len, &h->routes, &h->nroutes, &notes, &e2) < 0) {
		/* an answer not understood: the routes unknown, the rest still read */
		strv_free(&notes);
		jc_routes_free(h->routes, h->nroutes);
		h->routes = NULL;
		h->nroutes = 0;
		platform_note(h, "netstat -rn -f inet: %s; routes unknown", e2.msg);
		return 0;
	}
	platform_notes_from(h, o->name, &notes);
	h->routes_known = true;
	return 0;
}

/*
 * The other managers (parse_mgr.h), asked by the doctor and before a
 * persistent setup only: no answer leaves them unknown without a note.
 */
static void
parse_mgrs(struct jc_host *h, const struct jc_raw *raw)
{
	const struct jc_raw_out *o = raw_get(raw, MGR_FILE);
	size_t bad;

	h->mgrs_known = JC_UNKNOWN;
	if (o == NULL)
		return;
	if (not_run(o) || o->status != 0) {
		platform_note(h, "the other network managers unknown (exit %d)", o->status);
		return;
	}
	bad = parse_managers(o->data, o->len, &h->mgrs, &h->nmgrs, &h->location, &h->automatic);
	if (bad > 0)
		platform_note(h, "%s: %zu line%s not understood", MGR_FILE, bad, bad == 1 ? "" : "s");
	h->mgrs_known = JC_YES;
}

static struct jc_rdma_dev *
find_dev(struct jc_rdma_dev *devs, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(devs[i].name, name) == 0)
			return &devs[i];
	return NULL;
}

/*
 * A node GUID as ibv_devices prints it (16 hex digits) from ibv_devinfo's
 * node_guid (four groups of 4 joined by ':'); any other form is kept.
 */
static char *
guid_as_listed(const char *g)
{
	char out[17];
	size_t n = 0;

	if (g == NULL || strlen(g) != 19)
		return g ? xstrdup(g) : NULL;
	for (size_t i = 0; i < 19; i++) {
		if (i % 5 == 4) {
			if (g[i] != ':')
				return xstrdup(g);
			continue;
		}
		if (!((g[i] >= '0' && g[i] <= '9') || (g[i] >= 'a' && g[i] <= 'f') ||
		    (g[i] >= 'A' && g[i] <= 'F')))
			return xstrdup(g);
		out[n++] = g[i];
	}
	out[n] = '\0';
	return xstrdup(out);
}

static int
parse_rdma(struct jc_host *h, const struct jc_raw *raw, struct jc_err *err)
{
	const struct jc_raw_out *o = raw_get(raw, "ibv_devices.txt");
	struct jc_strv notes = { 0 };
	struct jc_err e2;
	bool listed = false, info = false;

	if (o != NULL && !not_run(o)) {
		if (parse_ibv_devices(o->data, o->len, &h->rdma, &h->nrdma, &notes, &e2) < 0) {
			strv_free(&notes);
			platform_note(h, "ibv_devices: %s; RDMA devices unknown", e2.msg);
		} else {
			platform_notes_from(h, o->name, &notes);
			listed = true;
			h->rdma_listed = h->nrdma > 0 ? JC_YES : JC_NO;
		}
	} else if (o != NULL) {
		platform_note(h, "ibv_devices could not run (exit %d)", o->status);
	}
	/* ibv_devinfo.txt first, then variants such as ibv_devinfo-d-DEV-v.txt. */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < raw->n; i++) {
			const struct jc_raw_out *d = &raw->outs[i];
			struct jc_rdma_dev *devs = NULL;
			size_t n = 0;

			if (pass == 0 ? strcmp(d->name, "ibv_devinfo.txt") != 0 :
			    !(has_prefix(d->name, "ibv_devinfo-") && has_suffix(d->name, ".txt")))
				continue;
			if (not_run(d))
				continue;
			if (parse_ibv_devinfo(d->data, d->len, &devs, &n, &notes, &e2) < 0) {
				strv_free(&notes);
				platform_note(h, "%s: %s; its RDMA devices unknown", d->name, e2.msg);
				continue;
			}
			platform_notes_from(h, d->name, &notes);
			info = true;
			for (size_t j = 0; j < n; j++) {
				struct jc_rdma_dev *x = find_dev(h->rdma, h->nrdma, devs[j].name);

				if (x == NULL && listed) {
					platform_note(h, "%s: %s is not listed by ibv_devices",
					    d->name, devs[j].name);
					continue;
				}
				if (x == NULL) {
					h->rdma = xreallocarray(h->rdma, h->nrdma + 1, sizeof(*h->rdma));
					x = &h->rdma[h->nrdma++];
					memset(x, 0, sizeof(*x));
					x->name = xstrdup(devs[j].name);
					x->netdev = xstrdup(devs[j].netdev);
				}
				if (x->state == JC_PORT_UNKNOWN)
					x->state = devs[j].state;
				if (x->guid == NULL)
					x->guid = guid_as_listed(devs[j].guid);
			}
			parse_rdma_free(devs, n);
		}
	if (!listed && info)
		h->rdma_listed = h->nrdma > 0 ? JC_YES : JC_NO;
	if (!listed && !info)
		platform_note(h, "ibv_devices not captured; RDMA devices unknown");
	else if (listed && !info && h->nrdma > 0)
		platform_note(h, "ibv_devinfo not captured; RDMA port states unknown");
	return 0;
}

static void
parse_misc(struct jc_host *h, const struct jc_raw *raw)
{
	const struct jc_raw_out *o;

	if ((o = raw_get(raw, "hostname.txt")) != NULL && !not_run(o))
		h->hostname = parse_word_line(o->data);
	if ((o = raw_get(raw, "sysctl-hw.model.txt")) != NULL && !not_run(o))
		h->model = parse_word_line(o->data);
	if ((o = raw_get(raw, "sw_vers.txt")) != NULL && !not_run(o))
		parse_sw_vers(o->data, &h->os_version, &h->os_build);
	if ((o = raw_get(raw, SYSCTL)) != NULL && !not_run(o)) {
		if (h->model == NULL)
			h->model = parse_sysctl(o->data, "hw.model");
		if (h->os_version == NULL)
			h->os_version = parse_sysctl(o->data, "kern.osproductversion");
		if (h->os_build == NULL)
			h->os_build = parse_sysctl(o->data, "kern.osversion");
	}
	h->rdma_enabled = JC_UNKNOWN;
	if ((o = raw_get(raw, "rdma_ctl-status.txt")) != NULL && !not_run(o)) {
		h->rdma_enabled = parse_rdma_ctl(o->data);
		if (h->rdma_enabled == JC_UNKNOWN)
			platform_note(h, "rdma_ctl status: unrecognised answer");
	} else {
		platform_note(h, "rdma_ctl status not captured; RDMA enablement unknown");
	}
	for (size_t i = 0; i < JC_ARRAY_LEN(mgmt) && h->mgmt_ip == NULL; i++) {
		char *file = xasprintf(IPCONFIG, mgmt[i]);

		if ((o = raw_get(raw, file)) != NULL && (h->mgmt_ip = parse_ipv4_line(o->data)))
			h->mgmt_iface = xstrdup(mgmt[i]);
		free(file);
	}
	platform_sudo(h, raw);
}

static bool
is_cable_iface(const struct jc_host *h, const char *name)
{
	for (size_t i = 0; i < h->nports; i++)
		if (h->ports[i].iface != NULL && strcmp(h->ports[i].iface, name) == 0)
			return true;
	for (size_t i = 0; i < h->nhwports; i++)
		if (strncmp(h->hwports[i].port, "Thunderbolt", 11) == 0 &&
		    strcmp(h->hwports[i].device, name) == 0)
			return true;
	return false;
}

/*
 * A probe that did not ask ipconfig (neither ipconfig-getifaddr file): the
 * first IPv4 address ifconfig -a shows on en0, else on en1, which is what
 * ipconfig getifaddr prints for them.
 */
static void
mgmt_from_ifconfig(struct jc_host *h, const struct jc_raw *raw)
{
	for (size_t i = 0; i < JC_ARRAY_LEN(mgmt); i++) {
		char *file = xasprintf(IPCONFIG, mgmt[i]);
		bool asked = raw_get(raw, file) != NULL;

		free(file);
		if (asked)
			return;
	}
	for (size_t i = 0; i < JC_ARRAY_LEN(mgmt) && h->mgmt_ip == NULL; i++)
		for (size_t j = 0; j < h->nifaces; j++)
			if (strcmp(h->ifaces[j].name, mgmt[i]) == 0 && h->ifaces[j].ninet > 0) {
				h->mgmt_ip = xstrdup(h->ifaces[j].inet[0]);
				h->mgmt_iface = xstrdup(mgmt[i]);
				break;
			}
}

/*
 * Neither en0 nor en1 has an address: take the first other IPv4 address
 * that is not loopback, link-local, or on a Thunderbolt interface or bridge.
 */
static void
mgmt_fallback(struct jc_host *h)
{
	if (h->mgmt_ip != NULL)
		return;
	for (size_t i = 0; i < h->nifaces; i++) {
		const struct jc_iface *f = &h->ifaces[i];

		if (f->is_bridge || f->up != JC_YES || strncmp(f->name, "lo", 2) == 0 ||
		    is_cable_iface(h, f->name))
			continue;
		for (size_t j = 0; j < f->ninet; j++) {
			if (strncmp(f->inet[j], "127.", 4) == 0 ||
			    strncmp(f->inet[j], "169.254.", 8) == 0)
				continue;
			h->mgmt_ip = xstrdup(f->inet[j]);
			h->mgmt_iface = xstrdup(f->name);
			platform_note(h, "no address on en0 or en1; management address %s from %s",
			    f->inet[j], f->name);
			return;
		}
	}
	platform_note(h, "no management address found (ipconfig getifaddr en0/en1 empty)");
}

static int
macos_parse(struct jc_host *h, const struct jc_raw *raw, struct jc_err *err)
{
	int rc;

	h->os = JC_OS_MACOS;
	h->rdma_listed = JC_UNKNOWN;
	for (size_t i = 0; i < raw->n; i++)
		if (raw->outs[i].len > PLATFORM_MAX_OUTPUT)
			return jc_fail(err, -EFBIG, "%s: output larger than %u bytes",
			    raw->outs[i].name, PLATFORM_MAX_OUTPUT);
	parse_misc(h, raw);
	if ((rc = parse_thunderbolt(h, raw, err)) < 0 ||
	    (rc = parse_hwports(h, raw, err)) < 0 ||
	    (rc = parse_ifaces(h, raw, err)) < 0 ||
	    (rc = parse_routes(h, raw, err)) < 0 ||
	    (rc = parse_rdma(h, raw, err)) < 0)
		return rc;
	parse_mgrs(h, raw);
	mgmt_from_ifconfig(h, raw);
	mgmt_fallback(h);
	return 0;
}

/* ---- setup, state and restore ---- */

/* "A/L" split into A and the dotted mask of L (32 without "/L"). */
static int
addr_mask(const char *addr, char ip[16], char **mask)
{
	size_t l = strcspn(addr, "/");
	long pfx = 32;

	if (l >= 16)
		return -EINVAL;
	memcpy(ip, addr, l);
	ip[l] = '\0';
	if (addr[l] == '/')
		jc_parse_int(addr + l + 1, 0, 32, &pfx);	/* else /32 */
	*mask = parse_prefix_mask((int)pfx);
	return 0;
}

static int
macos_addr_cmd(enum jc_act act, const struct jc_act_arg *a, struct jc_strv *argv)
{
	char ip[16], *mask = NULL;

	if (addr_mask(a->addr, ip, &mask) != 0)
		return -EINVAL;
	if (act == JC_ACT_ADDR_SET)
		platform_argv(argv, "sudo", "ifconfig", a->iface, "inet", ip, "netmask", mask,
		    NULL);
	else if (act == JC_ACT_ADDR_ADD)
		platform_argv(argv, "sudo", "ifconfig", a->iface, "inet", ip, "netmask", mask,
		    "alias", NULL);
	else
		platform_argv(argv, "sudo", "ifconfig", a->iface, "inet", ip, "-alias", NULL);
	free(mask);
	return 0;
}

/*
 * networksetup -setmanual SERVICE A MASK: no router argument (a cable's
 * /30 is a connected network; the default route stays where it is).
 */
static int
macos_svc_manual(const struct jc_act_arg *a, struct jc_strv *argv)
{
	char ip[16], *mask = NULL;

	if (addr_mask(a->addr, ip, &mask) != 0)
		return -EINVAL;
	platform_argv(argv, "sudo", "networksetup", "-setmanual", a->service, ip, mask, NULL);
	free(mask);
	return 0;
}

static int
macos_command(enum jc_act act, const struct jc_act_arg *a, struct jc_strv *argv)
{
	switch (act) {
	case JC_ACT_ADDR_SET:
	case JC_ACT_ADDR_ADD:
	case JC_ACT_ADDR_DEL:
		return macos_addr_cmd(act, a, argv);
	case JC_ACT_ROUTE_SET:
		if (a->via != NULL)
			platform_argv(argv, "sudo", "route", "-n", "add", "-host", a->peer, a->via,
			    NULL);
		else
			platform_argv(argv, "sudo", "route", "-n", "add", "-host", a->peer,
			    "-interface", a->iface, NULL);
		return 0;
	case JC_ACT_ROUTE_DEL:
		platform_argv(argv, "sudo", "route", "-n", "delete", "-host", a->peer, NULL);
		return 0;
	case JC_ACT_BRIDGE_UP:
	case JC_ACT_BRIDGE_DOWN:
		platform_argv(argv, "sudo", "ifconfig", "bridge0",
		    act == JC_ACT_BRIDGE_UP ? "up" : "down", NULL);
		return 0;
	case JC_ACT_BRIDGE_ADDM:
	case JC_ACT_BRIDGE_DELM:
		platform_argv(argv, "sudo", "ifconfig", "bridge0",
		    act == JC_ACT_BRIDGE_ADDM ? "addm" : "deletem", a->iface, NULL);
		return 0;
	case JC_ACT_SVC_CREATE:
		platform_argv(argv, "sudo", "networksetup", "-createnetworkservice", a->service,
		    a->port, NULL);
		return 0;
	case JC_ACT_SVC_MANUAL:
		return macos_svc_manual(a, argv);
	case JC_ACT_SVC_REMOVE:
		platform_argv(argv, "sudo", "networksetup", "-removenetworkservice", a->service,
		    NULL);
		return 0;
	case JC_ACT_SVC_ENABLE:
	case JC_ACT_SVC_DISABLE:
		platform_argv(argv, "sudo", "networksetup", "-setnetworkserviceenabled", a->service,
		    act == JC_ACT_SVC_ENABLE ? "on" : "off", NULL);
		return 0;
	case JC_ACT_LINK_UP:
	case JC_ACT_LINK_DOWN:
	case JC_ACT_FILE_WRITE:
	case JC_ACT_FILE_REMOVE:
	case JC_ACT_NET_RELOAD:
		break;
	}
	return -ENOTSUP;
}

/* The probe's routing table has an entry for exactly peer (any kind). */
static bool
host_route_listed(const struct jc_host *h, const char *peer)
{
	for (size_t i = 0; i < h->nroutes; i++)
		if (h->routes[i].len == 32 && h->routes[i].dest != NULL &&
		    strcmp(h->routes[i].dest, peer) == 0)
			return true;
	return false;
}

/*
 * bridge0 down and emptied of the cable interfaces (a failure expected
 * when the inventory has no bridge0), then per cable the address and the
 * host route to the peer (deleted first, add fails on an existing route:
 * unless the probe's routing table shows none to that peer). ifconfig
 * runs its operations in the order given and stops at the first that
 * fails, so bridge0's are one process ("ifconfig bridge0 down deletem en2
 * deletem en3"), except where sudo allows only the commands themselves:
 * there each is the one its rule names (sudo_rule.c).
 */
static void
macos_setup(struct plan_host *ph, const struct jc_host *h)
{
	const struct jc_iface *br = jc_host_iface(h, "bridge0");
	bool one = h->sudo_mode != JC_SUDO_SCOPED;

	plan_act(ph, &ph->cmds, br == NULL, JC_ACT_BRIDGE_DOWN, &(struct jc_act_arg){ 0 });
	for (size_t m = 0; br != NULL && m < br->nmembers; m++) {
		const struct jc_act_arg arg = { .iface = br->members[m] };

		if (!plan_is_cable_iface(ph, br->members[m]))
			continue;
		if (one) /* after "sudo ifconfig bridge0" */
			plan_act_more(ph, &ph->cmds, JC_ACT_BRIDGE_DELM, &arg, 3);
		else
			plan_act(ph, &ph->cmds, false, JC_ACT_BRIDGE_DELM, &arg);
	}
	for (size_t a = 0; a < ph->naddrs; a++) {
		const struct plan_addr *ad = &ph->addrs[a];

		plan_addr_set(ph, ad);
		if (!h->routes_known || host_route_listed(h, ad->peer_ip))
			plan_act(ph, &ph->cmds, true, JC_ACT_ROUTE_DEL,
			    &(struct jc_act_arg){ .peer = ad->peer_ip });
		plan_route_set(ph, ad);
	}
}

/* The hardware port of device dev ("Thunderbolt 2" for en3), or NULL. */
static const char *
hwport_of(const struct jc_host *h, const char *dev)
{
	for (size_t i = 0; i < h->nhwports; i++)
		if (h->hwports[i].device != NULL && strcmp(h->hwports[i].device, dev) == 0)
			return h->hwports[i].port;
	return NULL;
}

/*
 * Per cable interface, a service of ours on its Thunderbolt port
 * ("jaccl-config Thunderbolt N") with the planned address and mask, and
 * no router (the /30 is a connected network, no host route is needed).
 * Creating it may fail (a service of that name is already there: a
 * second run); setting it may not. Then the service of bridge0 (its
 * hardware port's name, "Thunderbolt Bridge" on every Mac) disabled, so
 * the bridge stays down at boot; that may fail too (no such service).
 * No other service is named.
 */
static int
macos_persist(struct plan_host *ph, const struct jc_host *h, struct jc_err *err)
{
	const char *bport = hwport_of(h, "bridge0");

	for (size_t a = 0; a < ph->naddrs; a++) {
		const struct plan_addr *ad = &ph->addrs[a];
		const char *port = hwport_of(h, ad->iface);
		char net[24], *svc;
		bool seen = false;

		for (size_t b = 0; b < a; b++)
			seen = seen || strcmp(ph->addrs[b].iface, ad->iface) == 0;
		if (seen)
			continue;
		if (port == NULL || strncmp(port, "Thunderbolt ", 12) != 0 ||
		    strcmp(port, "Thunderbolt Bridge") == 0 || !jc_service_name_ok(port))
			return jc_fail(err, -ENOENT, "no Thunderbolt hardware port for %s in "
			    "networksetup -listallhardwareports; cannot make it persistent", ad->iface);
		svc = xasprintf("%s%s", JC_SVC_PREFIX, port);
		snprintf(net, sizeof(net), "%s/30", ad->ip);
		plan_act(ph, &ph->cmds, true, JC_ACT_SVC_CREATE,
		    &(struct jc_act_arg){ .service = svc, .port = port });
		plan_act(ph, &ph->cmds, false, JC_ACT_SVC_MANUAL,
		    &(struct jc_act_arg){ .service = svc, .addr = net });
		free(svc);
	}
	if (bport != NULL && jc_service_name_ok(bport))
		plan_act(ph, &ph->cmds, true, JC_ACT_SVC_DISABLE,
		    &(struct jc_act_arg){ .service = bport });
	return 0;
}

static void
macos_queries(int kind, const char *iface, const char *peer, char **q1, char **q2)
{
	*q2 = NULL;
	if (kind == PLAN_FACT_SERVICES)
		*q1 = xstrdup("networksetup -listnetworkserviceorder");
	else if (kind == PLAN_FACT_ROUTE)
		*q1 = xasprintf("route -n get %s", peer);
	else
		*q1 = xasprintf("ifconfig %s", iface);
}

/* ifconfig IF (or -a): IF's flags, addresses and (bridge0) members. */
static void
macos_ifconfig_state(const struct jc_fact_out *fo, struct jc_fact_state *st)
{
	struct jc_iface *ifs = NULL;
	size_t n = 0;
	struct jc_strv notes = { 0 };

	if (parse_ifconfig(fo->out, strlen(fo->out), &ifs, &n, &notes, NULL) == 0) {
		/* ifconfig -a (the probe's) lists every interface: IF must be there */
		st->exists = false;
		for (size_t i = 0; i < n; i++) {
			if (ifs[i].name == NULL || strcmp(ifs[i].name, fo->iface) != 0)
				continue;
			st->exists = true;
			st->up = ifs[i].up;
			for (size_t k = 0; k < ifs[i].ninet; k++)
				strv_push_owned(&st->addrs, xasprintf("%s/%d", ifs[i].inet[k],
				    ifs[i].prefix != NULL ? ifs[i].prefix[k] : 32));
			for (size_t k = 0; k < ifs[i].nmembers; k++)
				if (jc_iface_name_ok(ifs[i].members[k]))
					strv_push(&st->members, ifs[i].members[k]);
		}
	} else {
		st->exists = false;
	}
	parse_ifaces_free(ifs, n);
	strv_free(&notes);
}

static void
macos_fact_parse(const struct jc_fact_out *fo, struct jc_fact_state *st)
{
	fact_state_clear(st);
	if (fo->kind == PLAN_FACT_ROUTE) {
		if (fo->status == 0)
			st->route = parse_route_get(fo->out, fo->peer);
		st->exists = st->route != NULL;
		return;
	}
	if (fo->status != 0)
		return;
	st->exists = true;
	if (fo->kind == PLAN_FACT_SERVICES) {
		parse_netsvc_order(fo->out, &st->svcs, &st->nsvcs);
		return;
	}
	macos_ifconfig_state(fo, st);
}

/*
 * The probe's answers as the facts' queries: `ifconfig -a` holds what
 * `ifconfig IF` prints for every interface (the parser picks IF), and a
 * static host route to the peer in `netstat -rn -f inet` ("PEER GATEWAY
 * UHS IF") is what `route -n get PEER` reports as one, in its layout; no
 * such line, no such route. The network services are not in the probe.
 */
/*
 * IF's block of an ifconfig -a listing: its "IF: flags=" line and the
 * indented lines after it, what `ifconfig IF` prints. NULL when IF is not
 * listed. New string.
 */
static char *
ifconfig_block(const char *data, size_t len, const char *iface)
{
	size_t il = strlen(iface), pos = 0, start = 0;
	bool in = false;

	while (pos < len) {
		const char *line = data + pos, *nl = memchr(line, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - line) : len - pos;
		bool head = ll > 0 && line[0] != ' ' && line[0] != '\t';

		if (in && head)
			break;
		if (!in && head && ll > il + 1 && strncmp(line, iface, il) == 0 && line[il] == ':') {
			in = true;
			start = pos;
		}
		pos += ll + (nl ? 1 : 0);
	}
	return in ? xstrndup(data + start, pos - start) : NULL;
}

static bool
netstat_ok(const struct jc_raw_out *o)
{
	struct jc_route *r = NULL;
	struct jc_strv notes = { 0 };
	size_t n = 0;
	int rc = parse_netstat_routes(o->data, o->len, &r, &n, &notes, NULL);

	jc_routes_free(r, n);
	strv_free(&notes);
	return rc == 0;
}

static bool
macos_prior(const struct jc_raw *raw, int kind, const char *iface, const char *peer,
    int *status, char **out, int *lstatus, char **lout)
{
	const struct jc_raw_out *o;
	long netif = -1;

	(void)lstatus;
	(void)lout;
	if (kind == PLAN_FACT_ADDRS || kind == PLAN_FACT_BRIDGE) {
		struct jc_iface *ifs = NULL;
		size_t n = 0;
		bool ok;

		if ((o = raw_get(raw, "ifconfig.txt")) == NULL || not_run(o) || o->status != 0 ||
		    blank(o))
			return false;
		/* not understood, or IF not listed: asked again (its own answer then) */
		ok = parse_ifconfig(o->data, o->len, &ifs, &n, NULL, NULL) == 0 &&
		    kind == PLAN_FACT_BRIDGE;
		for (size_t i = 0; !ok && i < n; i++)
			ok = ifs[i].name != NULL && strcmp(ifs[i].name, iface) == 0;
		parse_ifaces_free(ifs, n);
		if (!ok)
			return false;
		*out = ifconfig_block(o->data, o->len, iface);
		*status = *out != NULL ? 0 : 1;
		if (*out == NULL)
			*out = xasprintf("(ifconfig -a) no interface %s\n", iface);
		return true;
	}
	if (kind != PLAN_FACT_ROUTE || (o = raw_get(raw, NETSTAT)) == NULL || not_run(o) ||
	    o->status != 0 || !netstat_ok(o))
		return false;
	for (const char *line = o->data; line != NULL && *line; ) {
		const char *nl = memchr(line, '\n', o->len - (size_t)(line - o->data));
		char *l = xstrndup(line, nl ? (size_t)(nl - line) : strlen(line)), *w[8], *save;
		size_t nw = 0;

		line = nl ? nl + 1 : NULL;
		for (char *t = strtok_r(l, " \t", &save); t != NULL && nw < JC_ARRAY_LEN(w);
		    t = strtok_r(NULL, " \t", &save))
			w[nw++] = t;
		if (nw >= 2 && strcmp(w[0], "Destination") == 0) {
			for (size_t k = 0; k < nw; k++)
				if (strcmp(w[k], "Netif") == 0)
					netif = (long)k;
		} else if (netif > 2 && (size_t)netif < nw && strcmp(w[0], peer) == 0 &&
		    strchr(w[2], 'H') != NULL && strchr(w[2], 'S') != NULL &&
		    jc_iface_name_ok(w[netif])) {
			bool gw = jc_ipv4_ok(w[1]);

			*out = xasprintf("(netstat -rn -f inet)\ndestination: %s\n%s%s%s"
			    "  interface: %s\n      flags: <UP,HOST,DONE,STATIC>\n", peer,
			    gw ? "    gateway: " : "", gw ? w[1] : "", gw ? "\n" : "", w[netif]);
			*status = 0;
			free(l);
			return true;
		}
		free(l);
	}
	*out = xasprintf("(netstat -rn -f inet) no static host route to %s\n", peer);
	*status = 1;
	return true;
}

/* Where macOS keeps the programs a setup runs under sudo. */
static const char *
macos_priv_path(const char *name)
{
	static const char *const paths[][2] = {
		{ "ifconfig", "/sbin/ifconfig" },
		{ "route", "/sbin/route" },
		{ "networksetup", "/usr/sbin/networksetup" },
	};

	for (size_t i = 0; i < JC_ARRAY_LEN(paths); i++)
		if (strcmp(name, paths[i][0]) == 0)
			return paths[i][1];
	return NULL;
}

const struct jc_platform_ops jc_platform_macos = {
	.name = "macos",
	.display = "macOS",
	.uname = "Darwin",
	.caps = JC_PLAT_RDMA_CTL | JC_PLAT_SAME_OS | JC_PLAT_BRIDGE | JC_PLAT_POWER_FW,
	.cmds = macos_cmds,
	.doctor_cmds = macos_doctor_cmds,
	.cabling_cmds = macos_cabling_cmds,
	.watch_cmds = macos_watch_cmds,
	.parse = macos_parse,
	.setup = macos_setup,
	.persist = macos_persist,
	.command = macos_command,
	.queries = macos_queries,
	.fact_parse = macos_fact_parse,
	.priv_path = macos_priv_path,
	.prior = macos_prior,
};
