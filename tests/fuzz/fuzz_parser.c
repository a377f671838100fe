/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer harness for the parsers of remote command output, built once per
 * parser with -DFUZZ_<NAME> (see mk/parse.am): the input is copied into a
 * NUL-terminated buffer, as bundles and probes provide it, and given to the
 * one parser (or family of parsers) that NAME picks.
 *
 *   FUZZ_TB_JSON       system_profiler SPThunderboltDataType -json
 *   FUZZ_TB_XML        system_profiler SPThunderboltDataType -xml (plist)
 *   FUZZ_TB_TEXT       system_profiler SPThunderboltDataType, text form
 *   FUZZ_NETWORKSETUP  networksetup -listallhardwareports, sw_vers, one-line outputs
 *   FUZZ_IFCONFIG      ifconfig (macOS layout), fed twice to exercise merging
 *   FUZZ_IBV           ibv_devices, ibv_devinfo
 *   FUZZ_IP_JSON       ip -j addr/link/neigh and the Linux sysfs listings
 *   FUZZ_MANIFEST      a probe bundle's manifest.json
 *   FUZZ_ROUTE_GET     route -n get PEER (macOS), a state query of apply
 *   FUZZ_IP_ROUTE      ip route show PEER/32 (Linux), and saved route texts
 *   FUZZ_IP_ADDR       ip -4 -o addr show and ip -o link show (Linux)
 *   FUZZ_ROUTES        netstat -rn -f inet (macOS) and ip -j -4 route show table all
 *                      (Linux), then the prefixes the subnet choice takes from them
 *   FUZZ_NETSVC        networksetup -listnetworkserviceorder and nmcli -t connection
 *                      show (--persist's state)
 *   FUZZ_NETMGR        the Linux probe's netmgr.txt (which network manager boots)
 *   FUZZ_MANAGERS      the macOS probe's other-managers.txt (other tools' daemons,
 *                      locations and services)
 *   FUZZ_DOCTOR_SW     the doctor's outputs (pmset -g, socketfilterfw, env,
 *                      python, default route) and the last setup's record
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "parse_ibv.h"
#include "parse_linux.h"
#include "parse_mgr.h"
#include "parse_net.h"
#include "parse_state.h"
#include "parse_tb.h"
#include "subnet.h"
#include "parse_sw.h"
#include "setup_record.h"

#if defined(FUZZ_TB_JSON) + defined(FUZZ_TB_XML) + defined(FUZZ_TB_TEXT) + \
    defined(FUZZ_NETWORKSETUP) + defined(FUZZ_IFCONFIG) + defined(FUZZ_IBV) + \
    defined(FUZZ_IP_JSON) + defined(FUZZ_MANIFEST) + defined(FUZZ_ROUTE_GET) + \
    defined(FUZZ_IP_ROUTE) + defined(FUZZ_IP_ADDR) + defined(FUZZ_ROUTES) + defined(FUZZ_NETSVC) + defined(FUZZ_DOCTOR_SW) + \
    defined(FUZZ_NETMGR) + defined(FUZZ_MANAGERS) != 1
#error "build with exactly one -DFUZZ_<NAME>"
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#if defined(FUZZ_TB_JSON) || defined(FUZZ_TB_XML) || defined(FUZZ_TB_TEXT)
#if defined(FUZZ_TB_JSON)
#define parse_tb parse_tb_json
#elif defined(FUZZ_TB_XML)
#define parse_tb parse_tb_xml
#else
#define parse_tb parse_tb_text
#endif
static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	struct jc_port *p;
	size_t n;

	if (parse_tb(s, size, &p, &n, notes, err) == 0)
		parse_tb_free(p, n);
}
#elif defined(FUZZ_NETWORKSETUP)
static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	struct jc_hwport *p;
	size_t n;
	char *a, *b;

	if (parse_networksetup(s, size, &p, &n, notes, err) == 0)
		parse_hwports_free(p, n);
	parse_sw_vers(s, &a, &b);
	free(a);
	free(b);
	free(parse_ipv4_line(s));
	free(parse_word_line(s));
	free(parse_sysctl(s, "hw.model"));
	(void)parse_rdma_ctl(s);
	(void)parse_netmask(s);
}
#elif defined(FUZZ_IFCONFIG)
static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	struct jc_iface *f = NULL;
	size_t n = 0;

	if (parse_ifconfig(s, size, &f, &n, notes, err) == 0)
		(void)parse_ifconfig(s, size, &f, &n, notes, err);
	parse_ifaces_free(f, n);
}
#elif defined(FUZZ_IBV)
static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	struct jc_rdma_dev *d;
	size_t n;

	if (parse_ibv_devices(s, size, &d, &n, notes, err) == 0)
		parse_rdma_free(d, n);
	if (parse_ibv_devinfo(s, size, &d, &n, notes, err) == 0)
		parse_rdma_free(d, n);
	(void)parse_ibv_state(s);
}
#elif defined(FUZZ_IP_JSON)
static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	struct jc_host h;
	struct parse_neigh *nb = NULL;
	size_t nnb = 0;
	char *a, *b;

	memset(&h, 0, sizeof(h));
	if (parse_ip_addr(s, size, &h.ifaces, &h.nifaces, notes, err) == 0)
		(void)parse_ip_link(s, size, h.ifaces, h.nifaces, notes, err);
	if (parse_ip_neigh(s, size, &nb, &nnb, notes, err) < 0)
		nb = NULL;
	parse_linux_thunderbolt(s, &h.ports, &h.nports, notes);
	parse_linux_infiniband(s, &h.rdma, &h.nrdma, notes);
	parse_linux_mgmt(s, &h.mgmt_ip, &h.mgmt_iface);
	parse_linux_mac_ports(&h, nb, nnb, notes);
	parse_os_release(s, &a, &b);
	free(a);
	free(b);
	parse_neigh_free(nb, nnb);
	jc_host_clear(&h);
}
#elif defined(FUZZ_MANIFEST)
static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	json_t *m = bundle_manifest_parse(s, size, err);

	(void)notes;
	if (m != NULL) {
		(void)bundle_manifest_status(m, "a", "x.txt");
		json_decref(m);
	}
	(void)bundle_name_ok(s);
}
#elif defined(FUZZ_ROUTE_GET) || defined(FUZZ_IP_ROUTE)
/* What a route parser returns must split back into gateway and device. */
static void
route_splits(char *r)
{
	char *via, *dev;

	if (r != NULL && (parse_route_split(r, &via, &dev) != 0 || dev == NULL))
		abort();
	if (r != NULL) {
		free(via);
		free(dev);
	}
	free(r);
}

static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	(void)size;
	(void)notes;
	(void)err;
#if defined(FUZZ_ROUTE_GET)
	route_splits(parse_route_get(s, "192.168.0.2"));
#else
	char *via, *dev;

	route_splits(parse_ip_route_show(s, "192.168.0.2"));
	/* route texts from a saved state are split again at restore */
	if (parse_route_split(s, &via, &dev) == 0) {
		free(via);
		free(dev);
	}
#endif
}
#elif defined(FUZZ_IP_ADDR)
static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	struct jc_strv addrs = { 0 };
	int up;

	(void)size;
	(void)notes;
	(void)err;
	parse_ip_addr_inet(s, &addrs);
	for (size_t i = 0; i < addrs.n; i++)
		if (strchr(addrs.v[i], '/') == NULL)
			abort();	/* only "A/L" is returned */
	up = parse_ip_link_up(s);
	if (up != JC_YES && up != JC_NO)
		abort();
	strv_free(&addrs);
}
#elif defined(FUZZ_ROUTES)
/* Every route kept is a prefix and names a safe interface (or none). */
static void
routes_sane(struct jc_host *h)
{
	struct subnet_prefix *t;
	size_t nt;

	for (size_t i = 0; i < h->nroutes; i++) {
		const struct jc_route *r = &h->routes[i];

		if (!jc_ipv4_ok(r->dest) || r->len < 0 || r->len > 32 ||
		    (r->iface != NULL && !jc_iface_name_ok(r->iface)) ||
		    (r->via != NULL && !jc_ipv4_ok(r->via)))
			abort();
	}
	nt = subnet_taken(h, 1, &t);
	for (size_t i = 0; i < nt; i++)
		if (t[i].len < SUBNET_MIN_PREFIX || t[i].len > 32 || t[i].what == NULL)
			abort();
	subnet_taken_free(t, nt);
	jc_routes_free(h->routes, h->nroutes);
	h->routes = NULL;
	h->nroutes = 0;
}

static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	struct jc_host h;

	memset(&h, 0, sizeof(h));
	h.name = "fuzz";
	if (parse_netstat_routes(s, size, &h.routes, &h.nroutes, notes, err) == 0)
		routes_sane(&h);
	else if (h.routes != NULL || h.nroutes != 0)
		abort();	/* an error leaves nothing behind */
	if (parse_ip_route_json(s, size, &h.routes, &h.nroutes, notes, err) == 0)
		routes_sane(&h);
	else if (h.routes != NULL || h.nroutes != 0)
		abort();
}
#elif defined(FUZZ_NETSVC)
/* Every name, port and device returned must be fit for a command. */
static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	struct jc_netsvc *v = NULL;
	size_t n = 0;

	(void)size;
	(void)notes;
	(void)err;
	parse_netsvc_order(s, &v, &n);
	parse_nmcli_connections(s, &v, &n);
	for (size_t i = 0; i < n; i++) {
		if (!jc_service_name_ok(v[i].name) ||
		    (v[i].port != NULL && !jc_service_name_ok(v[i].port)) ||
		    (v[i].device != NULL && !jc_iface_name_ok(v[i].device)) ||
		    netsvc_find(v, n, v[i].name) == NULL)
			abort();
	}
	netsvc_free(v, n);
}
#elif defined(FUZZ_NETMGR)
/* Always one of the managers, and a known one has a name that maps back. */
static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	enum jc_netmgr m = parse_linux_netmgr(s);

	(void)size;
	(void)notes;
	(void)err;
	if (m < JC_NETMGR_NONE || m > JC_NETMGR_IFUPDOWN ||
	    jc_netmgr_by_name(jc_netmgr_name(m)) != m)
		abort();
}
#elif defined(FUZZ_MANAGERS)
/*
 * Every name kept is fit for a command (a label plain, a location's or a
 * service's a service name), and what the doctor prints of each builds.
 */
static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	struct jc_mgr *v;
	size_t n;
	char *loc;
	bool automatic;

	(void)notes;
	(void)err;
	parse_managers(s, size, &v, &n, &loc, &automatic);
	if (loc != NULL && !jc_service_name_ok(loc))
		abort();
	for (size_t i = 0; i < n; i++) {
		char *a = mgr_describe(&v[i]), *b = mgr_remedy(&v[i], automatic);

		if (v[i].kind == JC_MGR_DAEMON ? !jc_plain_word(v[i].name) :
		    v[i].name != NULL && !jc_service_name_ok(v[i].name))
			abort();
		if (mgr_active(&v[i]) && mgr_harm(&v[i]) == NULL)
			abort();
		free(a);
		free(b);
	}
	jc_mgrs_free(v, n);
	free(loc);
}
#elif defined(FUZZ_DOCTOR_SW)
static void
record_clear(struct setup_record *rec)
{
	for (size_t i = 0; i < rec->n; i++) {
		free(rec->hosts[i].name);
		free(rec->hosts[i].os);
		strv_free(&rec->hosts[i].ifaces);
		strv_free(&rec->hosts[i].ips);
		strv_free(&rec->hosts[i].peers);
	}
	free(rec->hosts);
	free(rec->status);
	free(rec->started);
}

static void
run(const char *s, size_t size, struct jc_strv *notes, struct jc_err *err)
{
	struct jc_raw raw = { 0 };
	struct jc_sw sw;
	struct setup_record rec = { 0 };
	struct setup_rec_host h = { 0 };
	struct jc_strv files = { 0 };
	long sl = parse_pmset_sleep(s, size);
	int fw = parse_fw_state(s, size);

	(void)notes;
	if (sl < -1 || fw < -1 || fw > 2)
		abort();
	/* every doctor output at once, with two exit statuses */
	raw_add(&raw, SW_PMSET, s, size, 0);
	raw_add(&raw, SW_FIREWALL, s, size, 0);
	raw_add(&raw, SW_ENV, s, size, 0);
	raw_add(&raw, SW_PYTHON, s, size, 1);
	raw_add(&raw, size % 2 ? SW_ROUTE_MACOS : SW_ROUTE_LINUX, s, size, (int)(size % 3));
	raw_add(&raw, SW_NETSVC, s, size, 0);
	sw_from_raw(&raw, &sw);
	for (size_t i = 0; i < sw.ninfo; i++)
		if (!jc_service_name_ok(sw.info[i].name) ||
		    (sw.info[i].ip != NULL && !jc_ipv4_ok(sw.info[i].ip)) ||
		    (sw.info[i].mask != NULL && !jc_ipv4_ok(sw.info[i].mask)))
			abort();
	for (size_t i = 0; i < sw.env.n; i++)
		if (strncmp(sw.env.v[i], "MLX_", 4) != 0 && strncmp(sw.env.v[i], "JACCL_", 6) != 0)
			abort();
	if (sw.default_if != NULL && !jc_iface_name_ok(sw.default_if))
		abort();
	sw_clear(&sw);
	raw_clear(&raw);
	if (setup_record_parse_last(s, size, "f", &rec, &files, err) == 0)
		for (size_t i = 0; i < files.n; i++)
			/* a file of the state directory's hosts/ folder, nothing above it */
			if (strncmp(files.v[i], "hosts/", 6) != 0 ||
			    strchr(files.v[i] + 6, '/') != NULL || files.v[i][6] == '.')
				abort();
	record_clear(&rec);
	strv_free(&files);
	(void)setup_record_parse_host(s, size, "f", &h, err);
	for (size_t i = 0; i < h.ifaces.n; i++)
		if (!jc_iface_name_ok(h.ifaces.v[i]) || !jc_ipv4_ok(h.ips.v[i]))
			abort();
	free(h.name);
	free(h.os);
	strv_free(&h.ifaces);
	strv_free(&h.ips);
	strv_free(&h.peers);
}
#endif

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	struct jc_strv notes = { 0 };
	struct jc_err err;

	if (s == NULL)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	run(s, size, &notes, &err);
	strv_free(&notes);
	free(s);
	return 0;
}
