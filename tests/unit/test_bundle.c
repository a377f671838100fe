/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of probe bundles: save and load round trip with exit
 * statuses, host order from the manifest or sorted folders, names that
 * would escape the bundle, bad manifests, oversized files; and of the
 * platform glue: backend choice, missing outputs, garbage and size caps.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bundle.h"
#include "inventory.h"
#include "parse_state.h"
#include "plan.h"
#include "probe.h"
#include "transport.h"
#include "../tap.h"

#define S(x) x, sizeof(x) - 1

static char *tmp;

static void
put(const char *rel, const char *text)
{
	char *p = xasprintf("%s/%s", tmp, rel);
	FILE *f = fopen(p, "w");

	if (f != NULL) {
		fputs(text, f);
		fclose(f);
	}
	free(p);
}

static void
mkd(const char *rel)
{
	char *p = xasprintf("%s/%s", tmp, rel);

	mkdir(p, 0755);
	free(p);
}

static void
test_roundtrip(void)
{
	struct jc_raw raws[2] = { { 0 }, { 0 } }, back = { 0 };
	struct jc_strv hosts = { 0 };
	struct jc_err err;
	char *dir = xasprintf("%s/b1", tmp);
	const struct jc_raw_out *o;

	raws[0].host = xstrdup("zeta");
	raw_add(&raws[0], "uname.txt", S("Darwin\n"), 0);
	raw_add(&raws[0], "sudo-n-true.txt", S("sudo: a password is required\n"), 1);
	raw_add(&raws[0], "empty.txt", "", 0, 0);
	raw_add(&raws[0], "uname.txt", S("Darwin\n"), 0);	/* replaces, no duplicate */
	raws[1].host = xstrdup("alpha");
	raw_add(&raws[1], "bin.txt", S("a\0b"), 3);
	is_int((long long)raws[0].n, 3, "raw_add replaces an output of the same name");
	ok(bundle_save(dir, raws, 2, &err) == 0, "bundle saved");
	ok(bundle_hosts(dir, &hosts, &err) == 0 && hosts.n == 2, "two hosts listed");
	if (hosts.n == 2)
		ok(strcmp(hosts.v[0], "zeta") == 0 && strcmp(hosts.v[1], "alpha") == 0,
		    "manifest order kept (not sorted)");
	strv_free(&hosts);
	ok(bundle_load_host(dir, "zeta", &back, &err) == 0, "host loaded");
	is_str(back.host, "zeta", "raw host name");
	o = raw_get(&back, "sudo-n-true.txt");
	ok(o != NULL && o->status == 1, "status from the manifest");
	o = raw_get(&back, "empty.txt");
	ok(o != NULL && o->len == 0 && o->data[0] == '\0', "empty output kept");
	ok(raw_get(&back, "missing.txt") == NULL, "missing output: NULL");
	raw_clear(&back);
	ok(bundle_load_host(dir, "alpha", &back, &err) == 0 &&
	    (o = raw_get(&back, "bin.txt")) != NULL && o->len == 3 && memcmp(o->data, "a\0b", 3) == 0,
	    "binary output round trip");
	raw_clear(&back);
	ok(bundle_load_host(dir, "nobody", &back, &err) < 0, "unknown host: error");
	ok(bundle_load_host(dir, "../b1", &back, &err) < 0, "host with a path: refused");
	raw_clear(&raws[0]);
	raw_clear(&raws[1]);
	free(dir);
}

static void
test_names(void)
{
	struct jc_raw r = { 0 };
	struct jc_err err;
	char *dir = xasprintf("%s/b2", tmp), *p;
	struct stat st;

	ok(bundle_name_ok("ibv_devices.txt") && bundle_name_ok("mac-1.local"), "plain names ok");
	ok(!bundle_name_ok("..") && !bundle_name_ok(".") && !bundle_name_ok(".hidden") &&
	    !bundle_name_ok("a/b") && !bundle_name_ok("") && !bundle_name_ok(NULL) &&
	    !bundle_name_ok("-x") && !bundle_name_ok("a b") && !bundle_name_ok("$(x)"),
	    "escaping or odd names refused");
	r.host = xstrdup("..");
	raw_add(&r, "x.txt", S("x"), 0);
	ok(bundle_save(dir, &r, 1, &err) < 0, "host \"..\" refused");
	free(r.host);
	r.host = xstrdup("h");
	raw_add(&r, "../../escape.txt", S("x"), 0);
	ok(bundle_save(dir, &r, 1, &err) < 0, "file with a path refused");
	p = xasprintf("%s/escape.txt", tmp);
	ok(stat(p, &st) < 0, "nothing written outside");
	ok(stat(dir, &st) < 0, "nothing written at all");
	free(p);
	raw_clear(&r);
	free(dir);
}

static void
test_manifest(void)
{
	struct jc_err err;
	json_t *m;
	struct jc_strv hosts = { 0 };
	struct jc_raw r = { 0 };
	char *d;

	m = bundle_manifest_parse(S("{\"version\":1,\"hosts\":[{\"name\":\"a\",\"outputs\":"
	    "{\"x.txt\":{\"status\":3},\"y.txt\":{}}}]}"), &err);
	ok(m != NULL, "manifest parses");
	is_int(bundle_manifest_status(m, "a", "x.txt"), 3, "status 3");
	is_int(bundle_manifest_status(m, "a", "y.txt"), -1, "no status: -1");
	is_int(bundle_manifest_status(m, "b", "x.txt"), -1, "unknown host: -1");
	json_decref(m);
	ok(bundle_manifest_parse(S("{\"version\":2,\"hosts\":[]}"), &err) == NULL &&
	    strstr(err.msg, "version") != NULL, "version 2 refused");
	ok(bundle_manifest_parse(S("[]"), &err) == NULL, "not an object");
	ok(bundle_manifest_parse(S("{\"hosts\":[{\"name\":\"../x\"}]}"), &err) == NULL,
	    "host name with a path refused");
	ok(bundle_manifest_parse(S("{\"hosts\":[{\"name\":\"a\"},{\"name\":\"a\"}]}"), &err) ==
	    NULL, "host listed twice refused");
	ok(bundle_manifest_parse(S("{\"hosts\":[{\"name\":\"a\",\"outputs\":{\"../x\":{}}}]}"),
	    &err) == NULL, "output name with a path refused");
	ok(bundle_manifest_parse(S("{\"hosts\":[{\"name\":\"a\",\"outputs\":{\"x\":"
	    "{\"status\":\"0\"}}}]}"), &err) == NULL, "status not a number refused");
	ok(bundle_manifest_parse(S("{\"hosts\":"), &err) == NULL &&
	    strstr(err.msg, "manifest.json") != NULL, "truncated JSON: message names the file");

	/* A folder of captures without a manifest: sorted subfolders, status -1. */
	mkd("b3");
	mkd("b3/mac2");
	mkd("b3/mac1");
	mkd("b3/.hidden");
	put("b3/SOURCE.md", "x");
	put("b3/mac1/ibv_devices.txt", "device node GUID\n------ ----\nrdma_en2 0011\n");
	put("b3/mac1/.DS_Store", "junk");
	mkd("b3/mac1/subdir");
	d = xasprintf("%s/b3", tmp);
	ok(bundle_hosts(d, &hosts, &err) == 0 && hosts.n == 2 &&
	    strcmp(hosts.v[0], "mac1") == 0 && strcmp(hosts.v[1], "mac2") == 0,
	    "no manifest: sorted subfolders, hidden ones and files skipped");
	strv_free(&hosts);
	ok(bundle_load_host(d, "mac1", &r, &err) == 0 && r.n == 1 && r.outs[0].status == -1,
	    "only regular visible files loaded, status unknown");
	raw_clear(&r);
	ok(bundle_load_host(d, "mac2", &r, &err) == 0 && r.n == 0, "empty host folder: no outputs");
	raw_clear(&r);
	put("b3/manifest.json", "{\"hosts\": 5}");
	ok(bundle_hosts(d, &hosts, &err) < 0 && strstr(err.msg, "manifest.json") != NULL,
	    "bad manifest: error naming it (%s)", err.msg);
	ok(bundle_load_host(d, "mac1", &r, &err) < 0, "bad manifest: host not loaded");
	ok(r.n == 0 && r.outs == NULL, "and nothing half-loaded");
	free(d);
	d = xasprintf("%s/none", tmp);
	ok(bundle_hosts(d, &hosts, &err) < 0 && err.code == -ENOENT, "missing bundle: -ENOENT");
	free(d);
}

static void
test_big(void)
{
	struct jc_raw r = { 0 };
	struct jc_err err;
	char *d = xasprintf("%s/b4", tmp), *p;
	FILE *f;

	mkd("b4");
	mkd("b4/h");
	p = xasprintf("%s/h/ifconfig.txt", d);
	f = fopen(p, "w");
	if (f != NULL) {
		char line[1024];

		memset(line, ' ', sizeof(line));
		line[sizeof(line) - 1] = '\n';
		for (size_t i = 0; i <= BUNDLE_MAX_FILE / sizeof(line); i++)
			fwrite(line, 1, sizeof(line), f);
		fclose(f);
	}
	ok(bundle_load_host(d, "h", &r, &err) < 0 && err.code == -EFBIG,
	    "output over the size cap: -EFBIG (%s)", err.msg);
	ok(r.n == 0, "nothing loaded");
	/* replayed, the host was reached: its output is the problem, not ssh */
	{
		struct jc_transport *t = transport_replay_new(d);
		struct probe_opts o = { .transport = t };
		struct jc_host h = { .name = xstrdup("h") };

		probe_hosts(&h, 1, &o, NULL);
		ok(h.reachable && h.error != NULL && strstr(h.error, "larger than") != NULL,
		    "replayed, an oversized output fails the host as reached (%s)",
		    h.error ? h.error : "");
		jc_host_clear(&h);
		transport_free(t);
	}
	unlink(p);
	free(p);
	free(d);
}

/* Platform glue on outputs built in memory. */
static void
test_platform(void)
{
	struct jc_raw r = { 0 };
	struct jc_host h;
	struct jc_err err;
	char *big;

	ok(platform_for_raw(&r) == NULL, "no outputs: no platform");
	raw_add(&r, "uname.txt", S("  Linux\n"), 0);
	ok(platform_for_raw(&r) == &jc_platform_linux, "uname Linux");
	raw_add(&r, "uname.txt", S("Darwin\n"), 0);
	raw_add(&r, "ip-j-addr.txt", S("[]"), 0);
	ok(platform_for_raw(&r) == &jc_platform_macos, "uname wins over file names");
	raw_add(&r, "uname.txt", S("FreeBSD\n"), 0);
	ok(platform_for_raw(&r) == NULL, "unknown uname: no backend, whatever the files");
	raw_add(&r, "uname.txt", S("\n"), 0);
	ok(platform_for_raw(&r) == &jc_platform_linux, "empty uname: by files (ip-)");
	raw_clear(&r);
	raw_add(&r, "networksetup-listallhardwareports.txt", S(""), 0);
	ok(platform_for_raw(&r) == &jc_platform_macos, "networksetup: macOS");
	raw_clear(&r);
	raw_add(&r, "ibv_devices.txt", S(""), 0);
	ok(platform_for_raw(&r) == &jc_platform_macos, "ibv only: macOS");
	raw_clear(&r);
	ok(platform_by_name("linux") == &jc_platform_linux && platform_by_name("x") == NULL,
	    "platform_by_name");
	for (const struct jc_platform_ops *const *o = (const struct jc_platform_ops *const[]){
	    &jc_platform_macos, &jc_platform_linux, NULL }; *o != NULL; o++) {
		size_t n = 0;
		bool names = true;

		for (const struct jc_probe_cmd *c = (*o)->cmds; c->name != NULL; c++, n++)
			names = names && bundle_name_ok(c->name) && c->sh != NULL;
		ok(n > 5 && names, "%s: %zu probe commands, all safe bundle names", (*o)->name, n);
	}

	/* Nothing captured at all: all unknown, notes, no failure. */
	memset(&h, 0, sizeof(h));
	ok(jc_platform_macos.parse(&h, &r, &err) == 0, "macOS with no outputs parses");
	ok(h.nports == 0 && !h.ports_known && h.rdma_listed == JC_UNKNOWN &&
	    h.rdma_enabled == JC_UNKNOWN && h.sudo == JC_UNKNOWN && h.mgmt_ip == NULL,
	    "everything unknown");
	ok(h.nnotes >= 4, "with notes (%zu)", h.nnotes);
	jc_host_clear(&h);
	ok(jc_platform_linux.parse(&h, &r, &err) == 0 && h.nnotes >= 3,
	    "Linux with no outputs parses, with notes");
	jc_host_clear(&h);

	/* Garbage system_profiler: error naming the file. */
	raw_add(&r, "system_profiler-SPThunderboltDataType.json", S("<html>oops</html>"), 0);
	ok(jc_platform_macos.parse(&h, &r, &err) < 0 &&
	    strstr(err.msg, "system_profiler-SPThunderboltDataType.json") != NULL,
	    "garbage system_profiler: error naming the file (%s)", err.msg);
	jc_host_clear(&h);
	/* Command missing on the host: unknown, not garbage. */
	raw_add(&r, "system_profiler-SPThunderboltDataType.json", S("sh: system_profiler: not found\n"),
	    127);
	ok(jc_platform_macos.parse(&h, &r, &err) == 0 && !h.ports_known,
	    "system_profiler not found (127): ports unknown, no error");
	jc_host_clear(&h);
	raw_clear(&r);

	raw_add(&r, "ip-j-addr.txt", S("Error: garbage"), 0);
	ok(jc_platform_linux.parse(&h, &r, &err) < 0 && strstr(err.msg, "ip-j-addr.txt") != NULL,
	    "garbage ip -j addr: error naming the file");
	jc_host_clear(&h);
	raw_clear(&r);

	big = xcalloc(PLATFORM_MAX_OUTPUT + 2, 1);
	memset(big, ' ', PLATFORM_MAX_OUTPUT + 1);
	raw_add(&r, "ifconfig.txt", big, PLATFORM_MAX_OUTPUT + 1, 0);
	free(big);
	ok(jc_platform_macos.parse(&h, &r, &err) == -EFBIG, "output over the cap: -EFBIG");
	jc_host_clear(&h);
	raw_clear(&r);

	/* Unsafe names from networksetup never reach ports. */
	raw_add(&r, "system_profiler-SPThunderboltDataType.json",
	    S("{\"SPThunderboltDataType\":[{\"receptacle_1_tag\":{\"receptacle_id_key\":\"1\"}}]}"), 0);
	raw_add(&r, "networksetup-listallhardwareports.txt",
	    S("Hardware Port: Thunderbolt 1\nDevice: en2; rm -rf /\n"), 0);
	ok(jc_platform_macos.parse(&h, &r, &err) == 0 && h.nports == 1 && h.ports[0].iface == NULL &&
	    h.nhwports == 0, "unsafe device name: skipped, port unmapped");
	jc_host_clear(&h);
	raw_clear(&r);

	raw_add(&r, "sudo-n-true.txt", S(""), 0);
	raw_add(&r, "ipconfig-getifaddr-en0.txt", S(""), 1);
	raw_add(&r, "ipconfig-getifaddr-en1.txt", S("192.168.2.7\n"), 0);
	raw_add(&r, "rdma_ctl-status.txt", S("disabled\n"), 0);
	raw_add(&r, "ibv_devices.txt", S("    device          \t   node GUID\n"), 0);
	raw_add(&r, "ibv_devinfo.txt", S(""), 255);
	ok(jc_platform_macos.parse(&h, &r, &err) == 0, "small Mac outputs parse");
	is_int(h.sudo, JC_YES, "sudo -n true exit 0: yes");
	is_str(h.mgmt_ip, "192.168.2.7", "mgmt from en1 when en0 has none");
	is_str(h.mgmt_iface, "en1", "mgmt iface en1");
	is_int(h.rdma_enabled, JC_NO, "rdma_ctl disabled");
	is_int(h.rdma_listed, JC_NO, "header-only ibv_devices: not listed");
	jc_host_clear(&h);
	raw_clear(&r);

	/* No address on en0/en1: another interface, never a Thunderbolt one. */
	raw_add(&r, "ipconfig-getifaddr-en0.txt", S(""), 1);
	raw_add(&r, "networksetup-listallhardwareports.txt",
	    S("Hardware Port: Thunderbolt 1\nDevice: en2\n"), 0);
	raw_add(&r, "ifconfig.txt", S("lo0: flags=8049<UP,LOOPBACK> mtu 16384\n"
	    "\tinet 127.0.0.1 netmask 0xff000000\n"
	    "en2: flags=8863<UP> mtu 1500\n\tinet 10.0.0.1 netmask 0xfffffffc\n"
	    "en7: flags=8863<UP> mtu 1500\n\tinet 169.254.3.3 netmask 0xffff0000\n"
	    "\tinet 192.168.5.5 netmask 0xffffff00\n"), 0);
	ok(jc_platform_macos.parse(&h, &r, &err) == 0, "fallback outputs parse");
	is_str(h.mgmt_ip, "192.168.5.5", "management address from another interface");
	is_str(h.mgmt_iface, "en7", "its interface");
	jc_host_clear(&h);
	raw_clear(&r);
}

/*
 * The routing table in a bundle: saved and replayed (macOS netstat, a VPN
 * route on utun3 among them), in the inventory's JSON; a bundle of an
 * earlier probe without it (data/examples) loads with the routes unknown
 * and a note; an answer not understood and a missing netstat (exit 127)
 * leave them unknown, with a note, never an error.
 */
static void
test_routes(void)
{
	int rc;
	struct jc_raw raw = { 0 };
	struct jc_host h;
	struct jc_err err = { 0 };
	char *dir = xasprintf("%s/routes", tmp), *ex;
	const char *top = getenv("top_srcdir");
	json_t *j;
	bool noted = false;

	raw.host = xstrdup("mac1");
	raw_add(&raw, "uname.txt", S("Darwin\n"), 0);
	raw_add(&raw, "netstat-rn-f-inet.txt", S("Routing tables\n\nInternet:\n"
	    "Destination        Gateway            Flags               Netif Expire\n"
	    "default            10.1.0.1           UGScg                 en0       \n"
	    "10.1/16            link#6             UCS                   en0      !\n"
	    "192.168.0/16       utun3              USc                 utun3       \n"), 0);
	ok(bundle_save(dir, &raw, 1, &err) == 0, "routes: bundle saved");
	memset(&h, 0, sizeof(h));
	ok(inventory_from_bundle(dir, "mac1", &h, &err) == 0 && h.routes_known && h.nroutes == 3,
	    "routes: replayed from the bundle");
	ok(h.nroutes == 3 && strcmp(h.routes[2].dest, "192.168.0.0") == 0 && h.routes[2].len == 16 &&
	    strcmp(h.routes[2].iface, "utun3") == 0, "routes: the VPN's 192.168.0.0/16 via utun3");
	j = inventory_host_to_json(&h);
	ok(json_array_size(json_object_get(j, "routes")) == 3 &&
	    strcmp(json_string_value(json_object_get(json_array_get(json_object_get(j, "routes"), 2),
	    "dest")), "192.168.0.0/16") == 0, "routes: in the inventory JSON");
	json_decref(j);
	jc_host_clear(&h);

	raw_add(&raw, "netstat-rn-f-inet.txt", S("<html>oops</html>\n"), 0);
	rc = jc_platform_macos.parse(&h, &raw, &err);
	noted = false;
	for (size_t i = 0; i < h.nnotes; i++)
		noted = noted || (strstr(h.notes[i], "netstat -rn -f inet: not netstat -rn output") &&
		    strstr(h.notes[i], "routes unknown"));
	ok(rc == 0 && !h.routes_known && h.nroutes == 0 && noted,
	    "routes: an answer not understood: unknown, a note naming the command, no error");
	jc_host_clear(&h);
	raw_add(&raw, "netstat-rn-f-inet.txt", S("sh: netstat: not found\n"), 127);
	ok(jc_platform_macos.parse(&h, &raw, &err) == 0 && !h.routes_known,
	    "routes: netstat not found (127): unknown, no error");
	jc_host_clear(&h);
	raw_clear(&raw);

	ex = xasprintf("%s/data/examples/studio-mesh4", top ? top : ".");
	ok(inventory_from_bundle(ex, "m3-ultra-1", &h, &err) == 0 && !h.routes_known &&
	    h.nroutes == 0, "an earlier probe's bundle loads, routes unknown");
	for (size_t i = 0; i < h.nnotes; i++)
		noted = noted || strcmp(h.notes[i], "netstat -rn -f inet not captured; routes unknown") == 0;
	ok(noted, "... and a note says so");
	j = inventory_host_to_json(&h);
	ok(json_is_null(json_object_get(j, "routes")), "... null in the inventory JSON");
	json_decref(j);
	jc_host_clear(&h);
	free(ex);
	free(dir);
}

/* A fact's state as the system's parser reads the outputs prior gave. */
static void
prior_state(const struct jc_platform_ops *p, const struct jc_raw *raw, int kind,
    const char *iface, const char *peer, bool *told, struct jc_fact_state *st)
{
	int status = -1, lstatus = -1;
	char *out = NULL, *lout = NULL;

	memset(st, 0, sizeof(*st));
	*told = p->prior(raw, kind, iface, peer, &status, &out, &lstatus, &lout);
	if (*told)
		p->fact_parse(&(struct jc_fact_out){ .kind = kind, .iface = iface, .peer = peer,
		    .status = status, .out = out, .lstatus = lstatus, .lout = lout }, st);
	free(out);
	free(lout);
}

/*
 * A setup's prior state from the probe's own outputs (jc_platform_ops.prior):
 * each fact as its own query's answer would say it, and nothing from an
 * output that is missing or not understood (then the fact is asked).
 */
static void
test_prior(void)
{
	struct jc_raw mac = { 0 }, lx = { 0 }, bad = { 0 };
	struct jc_fact_state st;
	bool told;

	raw_add(&mac, "ifconfig.txt", S("lo0: flags=8049<UP,LOOPBACK,RUNNING,MULTICAST> mtu 16384\n"
	    "\tinet 127.0.0.1 netmask 0xff000000\n"
	    "en2: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
	    "\tinet 192.168.0.1 netmask 0xfffffffc broadcast 192.168.0.3\n"
	    "bridge0: flags=8863<UP,BROADCAST,SMART,RUNNING,SIMPLEX,MULTICAST> mtu 1500\n"
	    "\tmember: en2 flags=3<LEARNING,DISCOVER>\n\tmember: en3 flags=3<LEARNING,DISCOVER>\n"), 0);
	raw_add(&mac, "netstat-rn-f-inet.txt", S("Routing tables\n\nInternet:\n"
	    "Destination        Gateway            Flags               Netif Expire\n"
	    "192.168.0.2        link#8             UHS                   en2       \n"
	    "192.168.0.6        10.0.0.1           UGHS                  en0       \n"
	    "192.168.0.10       5a:1:2:3:4:5       UHLWIi                en4     1200\n"), 0);
	prior_state(&jc_platform_macos, &mac, PLAN_FACT_ADDRS, "en2", NULL, &told, &st);
	ok(told && st.exists && st.addrs.n == 1 && strcmp(st.addrs.v[0], "192.168.0.1/30") == 0,
	    "macOS prior: en2's address from ifconfig -a");
	fact_state_clear(&st);
	prior_state(&jc_platform_macos, &mac, PLAN_FACT_BRIDGE, "bridge0", NULL, &told, &st);
	ok(told && st.exists && st.up == JC_YES && st.members.n == 2,
	    "macOS prior: bridge0 up with its two members");
	fact_state_clear(&st);
	prior_state(&jc_platform_macos, &mac, PLAN_FACT_ADDRS, "en5", NULL, &told, &st);
	ok(!told, "macOS prior: an interface ifconfig -a does not list is asked");
	prior_state(&jc_platform_macos, &mac, PLAN_FACT_ROUTE, "en2", "192.168.0.2", &told, &st);
	ok(told && st.route != NULL && strstr(st.route, "en2") != NULL,
	    "macOS prior: a static host route through the interface");
	fact_state_clear(&st);
	prior_state(&jc_platform_macos, &mac, PLAN_FACT_ROUTE, "en3", "192.168.0.6", &told, &st);
	ok(told && st.route != NULL && strstr(st.route, "10.0.0.1") != NULL,
	    "macOS prior: a static host route through a gateway");
	fact_state_clear(&st);
	prior_state(&jc_platform_macos, &mac, PLAN_FACT_ROUTE, "en4", "192.168.0.10", &told, &st);
	ok(told && st.route == NULL && !st.exists, "macOS prior: an ARP entry is no static route");
	prior_state(&jc_platform_macos, &mac, PLAN_FACT_ROUTE, "en4", "192.168.0.14", &told, &st);
	ok(told && st.route == NULL, "macOS prior: no line, no route");
	prior_state(&jc_platform_macos, &mac, PLAN_FACT_SERVICES, PLAN_SERVICES, NULL, &told, &st);
	ok(!told, "macOS prior: the network services are asked");
	raw_add(&bad, "ifconfig.txt", S("<html>\n"), 0);
	raw_add(&bad, "netstat-rn-f-inet.txt", S("<html>\n"), 0);
	prior_state(&jc_platform_macos, &bad, PLAN_FACT_ADDRS, "en2", NULL, &told, &st);
	ok(!told, "macOS prior: ifconfig -a not understood: asked");
	prior_state(&jc_platform_macos, &bad, PLAN_FACT_ROUTE, "en2", "192.168.0.2", &told, &st);
	ok(!told, "macOS prior: netstat not understood: asked");

	raw_add(&lx, "ip-j-addr.txt", S("[{\"ifindex\":3,\"ifname\":\"eth1\","
	    "\"flags\":[\"BROADCAST\",\"MULTICAST\",\"UP\",\"LOWER_UP\"],\"addr_info\":["
	    "{\"family\":\"inet\",\"local\":\"10.1.0.1\",\"prefixlen\":24},"
	    "{\"family\":\"inet6\",\"local\":\"fe80::1\",\"prefixlen\":64}]},"
	    "{\"ifindex\":4,\"ifname\":\"eth2\",\"flags\":[\"BROADCAST\"],\"addr_info\":[]}]"), 0);
	raw_add(&lx, "ip-j-4-route.txt", S("[{\"dst\":\"192.168.0.2\",\"dev\":\"eth1\",\"flags\":[]},"
	    "{\"type\":\"local\",\"dst\":\"192.168.0.6\",\"dev\":\"eth2\",\"table\":\"local\"},"
	    "{\"dst\":\"192.168.0.10/32\",\"gateway\":\"10.1.0.9\",\"dev\":\"eth1\"}]"), 0);
	prior_state(&jc_platform_linux, &lx, PLAN_FACT_ADDRS, "eth1", NULL, &told, &st);
	ok(told && st.exists && st.up == JC_YES && st.addrs.n == 1 &&
	    strcmp(st.addrs.v[0], "10.1.0.1/24") == 0, "Linux prior: eth1's address and link up");
	fact_state_clear(&st);
	prior_state(&jc_platform_linux, &lx, PLAN_FACT_ADDRS, "eth2", NULL, &told, &st);
	ok(told && st.exists && st.up == JC_NO && st.addrs.n == 0,
	    "Linux prior: eth2 down, no address");
	fact_state_clear(&st);
	prior_state(&jc_platform_linux, &lx, PLAN_FACT_ROUTE, "eth1", "192.168.0.2", &told, &st);
	ok(told && st.route != NULL && strstr(st.route, "eth1") != NULL,
	    "Linux prior: the main table's route to the peer");
	fact_state_clear(&st);
	prior_state(&jc_platform_linux, &lx, PLAN_FACT_ROUTE, "eth1", "192.168.0.10", &told, &st);
	ok(told && st.route != NULL && strstr(st.route, "10.1.0.9") != NULL,
	    "Linux prior: a /32 through a gateway");
	fact_state_clear(&st);
	prior_state(&jc_platform_linux, &lx, PLAN_FACT_ROUTE, "eth2", "192.168.0.6", &told, &st);
	ok(told && st.route == NULL, "Linux prior: another table's entry is no route");
	prior_state(&jc_platform_linux, &lx, PLAN_FACT_ADDRS, "eth9", NULL, &told, &st);
	ok(!told, "Linux prior: an interface not listed is asked");
	raw_clear(&mac);
	raw_clear(&lx);
	raw_clear(&bad);
}

/* Bundles are read and written without following links (issue 21, cases 2 and 5). */
static void
test_links(void)
{
	struct jc_raw r = { 0 }, w = { 0 };
	struct jc_strv hosts = { 0 };
	struct jc_err err = { 0 };
	char *d = xasprintf("%s/b5", tmp), *p, *q, *got = NULL;
	struct stat st;
	int rc;

	mkd("secret");
	put("secret/shadow", "root:$6$secret\n");
	mkd("b5");
	mkd("b5/mac1");
	put("b5/mac1/uname.txt", "Darwin\n");
	/* a host folder that is a link to a folder of secrets */
	p = xasprintf("%s/secret", tmp);
	q = xasprintf("%s/b5/mac2", tmp);
	symlink(p, q);
	rc = bundle_load_host(d, "mac2", &r, &err);
	ok(rc == -ELOOP && r.n == 0 && strstr(err.msg, "symbolic link") != NULL,
	    "read: a host folder that is a link is not followed (%s)", err.msg);
	raw_clear(&r);
	ok(bundle_hosts(d, &hosts, &err) == -ELOOP, "read: listing hosts refuses the linked folder");
	strv_free(&hosts);
	unlink(q);
	free(q);
	/* an output that is a link to a secret file */
	q = xasprintf("%s/b5/mac1/shadow", tmp);
	free(p);
	p = xasprintf("%s/secret/shadow", tmp);
	symlink(p, q);
	rc = bundle_load_host(d, "mac1", &r, &err);
	ok(rc == -ELOOP && r.n == 0, "read: an output that is a link is not followed (%s)", err.msg);
	raw_clear(&r);
	unlink(q);
	free(q);
	/* a FIFO as manifest.json: refused at once (alarm: hang guard only) */
	q = xasprintf("%s/b5/manifest.json", tmp);
	mkfifo(q, 0600);
	alarm(20);
	rc = bundle_hosts(d, &hosts, &err);
	alarm(0);
	ok(rc == -EINVAL && strstr(err.msg, "not a regular file") != NULL,
	    "read: a FIFO manifest is refused without blocking (%s)", err.msg);
	strv_free(&hosts);
	unlink(q);
	/* a manifest that is a link */
	symlink(p, q);
	ok(bundle_hosts(d, &hosts, &err) == -ELOOP, "read: a manifest that is a link is refused");
	strv_free(&hosts);
	unlink(q);
	free(q);
	/* a FIFO among the outputs is skipped, never opened */
	q = xasprintf("%s/b5/mac1/fifo.txt", tmp);
	mkfifo(q, 0600);
	alarm(20);
	rc = bundle_load_host(d, "mac1", &r, &err);
	alarm(0);
	ok(rc == 0 && r.n == 1 && strcmp(r.outs[0].name, "uname.txt") == 0,
	    "read: a FIFO output is skipped without blocking");
	raw_clear(&r);
	unlink(q);
	free(q);

	/* --save into a bundle whose host folder is a link: nothing written through it */
	mkd("b6");
	mkd("victim");
	put("victim/authorized_keys", "ssh-ed25519 AAAA mine\n");
	free(p);
	p = xasprintf("%s/victim", tmp);
	q = xasprintf("%s/b6/mac1", tmp);
	symlink(p, q);
	w.host = xstrdup("mac1");
	raw_add(&w, "authorized_keys", S("ssh-ed25519 BBBB attacker\n"), 0);
	free(d);
	d = xasprintf("%s/b6", tmp);
	rc = bundle_save(d, &w, 1, &err);
	free(p);
	p = xasprintf("%s/victim/authorized_keys", tmp);
	jc_read_file(p, 1000, &got, NULL, &(struct jc_err){ 0 });
	ok(rc == -ELOOP && got != NULL && strcmp(got, "ssh-ed25519 AAAA mine\n") == 0,
	    "save: a host folder that is a link is refused, its target untouched (%s)", err.msg);
	free(got);
	got = NULL;
	unlink(q);
	/* an output file of the target that is a link: refused */
	mkd("b6/mac1");
	free(q);
	q = xasprintf("%s/b6/mac1/authorized_keys", tmp);
	symlink(p, q);
	rc = bundle_save(d, &w, 1, &err);
	jc_read_file(p, 1000, &got, NULL, &(struct jc_err){ 0 });
	ok(rc == -ELOOP && got != NULL && strcmp(got, "ssh-ed25519 AAAA mine\n") == 0 &&
	    lstat(q, &st) == 0 && S_ISLNK(st.st_mode),
	    "save: an output that is a link is refused, its target untouched");
	free(got);
	unlink(q);
	raw_clear(&w);
	free(p);
	free(q);
	free(d);
}

/* Manifest errors name the host from memory still held (issue 21, case 5). */
static void
test_manifest_errors(void)
{
	struct jc_err err = { 0 };

	ok(bundle_manifest_parse(S("{\"hosts\":[{\"name\":\"hostname-long-enough-1\"},"
	    "{\"name\":\"hostname-long-enough-1\"}]}"), &err) == NULL &&
	    strcmp(err.msg, "manifest.json: host hostname-long-enough-1 listed twice") == 0,
	    "duplicate host: the message names it (%s)", err.msg);
	ok(bundle_manifest_parse(S("{\"hosts\":[{\"name\":\"hostname-long-enough-2\","
	    "\"outputs\":{\"x\":{\"status\":\"bad\"}}}]}"), &err) == NULL &&
	    strcmp(err.msg, "manifest.json: host hostname-long-enough-2: bad output entry") == 0,
	    "bad output entry: the message names the host (%s)", err.msg);
}

int
main(void)
{
	char tmpl[] = "/tmp/jc-bundle-XXXXXX";
	char *cmd;
	pid_t pid;

	(void)plan;
	(void)skip_all;
	tmp = mkdtemp(tmpl);
	if (tmp == NULL)
		skip_all("cannot create a temporary folder");
	test_roundtrip();
	test_names();
	test_manifest();
	test_big();
	test_links();
	test_manifest_errors();
	test_platform();
	test_routes();
	test_prior();
	/* Remove the scratch folder (only what this test made). */
	cmd = xasprintf("%s", tmp);
	pid = fork();
	if (pid == 0) {
		execlp("rm", "rm", "-rf", cmd, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
	free(cmd);
	return done_testing();
}
