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
 */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bundle.h"
#include "parse_ibv.h"
#include "parse_linux.h"
#include "parse_net.h"
#include "parse_tb.h"

#if defined(FUZZ_TB_JSON) + defined(FUZZ_TB_XML) + defined(FUZZ_TB_TEXT) + \
    defined(FUZZ_NETWORKSETUP) + defined(FUZZ_IFCONFIG) + defined(FUZZ_IBV) + \
    defined(FUZZ_IP_JSON) + defined(FUZZ_MANIFEST) != 1
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
