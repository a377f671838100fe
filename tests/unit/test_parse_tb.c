/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the system_profiler SPThunderboltDataType parsers: the
 * -json, -xml and text forms give the same ports on every capture that has
 * more than one form; odd layouts, missing and unknown keys, docks nested
 * three deep, garbage and hostile XML.
 */
#include "config.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"
#include "parse_tb.h"
#include "../tap.h"

static bool
same_str(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

/* Describe the first difference between two port lists, or NULL. */
static char *
ports_diff(const struct jc_port *a, size_t na, const struct jc_port *b, size_t nb)
{
	if (na != nb)
		return xasprintf("%zu ports vs %zu", na, nb);
	for (size_t i = 0; i < na; i++) {
		const struct jc_port *x = &a[i], *y = &b[i];

		if (x->bus != y->bus || !same_str(x->receptacle, y->receptacle) ||
		    !same_str(x->id, y->id) || !same_str(x->link, y->link) ||
		    x->link_gbps != y->link_gbps || !same_str(x->peer_id, y->peer_id) ||
		    x->peer_via_dock != y->peer_via_dock || !same_str(x->peer_model, y->peer_model) ||
		    x->peer_rdma_service != y->peer_rdma_service || x->ndevices != y->ndevices)
			return xasprintf("port %zu differs (%s / %s)", i,
			    x->id ? x->id : "-", y->id ? y->id : "-");
		for (size_t j = 0; j < x->ndevices; j++)
			if (!same_str(x->devices[j], y->devices[j]))
				return xasprintf("port %zu device %zu differs", i, j);
	}
	return NULL;
}

typedef int (*tb_fn)(const char *, size_t, struct jc_port **, size_t *,
    struct jc_strv *, struct jc_err *);

static int
parse_file(const char *path, tb_fn fn, struct jc_port **p, size_t *n)
{
	char *data;
	size_t len;
	struct jc_err err;
	int rc;

	if (jc_read_file(path, PARSE_TB_MAX, &data, &len, &err) < 0)
		return -1;
	rc = fn(data, len, p, n, NULL, &err);
	if (rc < 0)
		diag("%s: %s", path, err.msg);
	free(data);
	return rc;
}

static bool
exists(const char *path)
{
	FILE *f = fopen(path, "r");

	if (f != NULL)
		fclose(f);
	return f != NULL;
}

/* Every host folder of every set under root: compare the forms it has. */
static void
forms_agree(const char *root)
{
	DIR *d = opendir(root), *hd;
	struct dirent *s, *h;
	int checked = 0;

	if (d == NULL) {
		ok(0, "open %s", root);
		return;
	}
	while ((s = readdir(d)) != NULL) {
		char *set;

		if (s->d_name[0] == '.')
			continue;
		set = xasprintf("%s/%s", root, s->d_name);
		hd = opendir(set);
		while (hd != NULL && (h = readdir(hd)) != NULL) {
			static const char *const ext[] = { "json", "xml", "txt" };
			static const tb_fn fns[] = { parse_tb_json, parse_tb_xml, parse_tb_text };
			struct jc_port *p[3] = { NULL };
			size_t n[3] = { 0 };
			int have = 0, first = -1;

			if (h->d_name[0] == '.')
				continue;
			for (int i = 0; i < 3; i++) {
				char *f = xasprintf("%s/%s/system_profiler-SPThunderboltDataType.%s",
				    set, h->d_name, ext[i]);

				if (exists(f)) {
					int rc = parse_file(f, fns[i], &p[i], &n[i]);

					ok(rc == 0, "%s/%s: %s form parses", s->d_name, h->d_name, ext[i]);
					if (rc == 0) {
						have++;
						if (first < 0)
							first = i;
					}
				}
				free(f);
			}
			for (int i = first + 1; have > 1 && i < 3; i++) {
				char *why;

				if (p[i] == NULL && n[i] == 0)
					continue;
				why = ports_diff(p[first], n[first], p[i], n[i]);
				ok(why == NULL, "%s/%s: %s and %s forms give the same ports",
				    s->d_name, h->d_name, ext[first], ext[i]);
				if (why)
					diag("%s", why);
				free(why);
				checked++;
			}
			for (int i = 0; i < 3; i++)
				parse_tb_free(p[i], n[i]);
		}
		if (hd)
			closedir(hd);
		free(set);
	}
	closedir(d);
	ok(checked > 0, "%s: at least one capture compared across forms (%d)", root, checked);
}

static int
parse_str(tb_fn fn, const char *s, struct jc_port **p, size_t *n, struct jc_err *err)
{
	return fn(s, strlen(s), p, n, NULL, err);
}

static const char deep_json[] =
	"{\"SPThunderboltDataType\":[{\"_name\":\"thunderboltusb4_bus_3\","
	"\"domain_uuid_key\":\"OWN\",\"receptacle_1_tag\":{\"receptacle_id_key\":\"4\","
	"\"current_speed_key\":\"80 Gb/s\",\"future_key\":{\"x\":[1,2]}},"
	"\"some_new_key\":true,"
	"\"_items\":[{\"_name\":\"Dock A\",\"mode_key\":\"usb_four\",\"_items\":["
	"  {\"_name\":\"Hub B\",\"_items\":[{\"_name\":\"Drive C\"},"
	"    {\"_name\":\"Hub D\",\"_items\":[{\"_name\":\"Mac Studio\",\"device_name_key\":\"Mac15,14\","
	"      \"domain_uuid_key\":\"PEER\",\"services_title\":[{\"_name\":\"service_ip\","
	"      \"protocol_id_key\":1}]}]}]}]}]},"
	"{\"_name\":\"thunderboltusb4_bus_0\",\"receptacle_1_tag\":{\"receptacle_id_key\":\"10\","
	"\"current_speed_key\":\"Up to 40 Gb/s\"}},"
	"{\"_name\":\"weird\"},"
	"{\"_name\":\"thunderboltusb4_bus_1\",\"domain_uuid_key\":\"B1\","
	"\"receptacle_1_tag\":{\"receptacle_id_key\":\"2\"}},"
	"42]}";

static void
test_json_shapes(void)
{
	struct jc_port *p;
	size_t n;
	struct jc_err err;
	struct jc_strv notes = { 0 };

	ok(parse_tb_json(deep_json, strlen(deep_json), &p, &n, &notes, &err) == 0,
	    "deep json parses");
	is_int((long long)n, 4, "non-dict bus entry skipped, 4 ports");
	ok(notes.n == 1, "one note for the non-dict bus");
	if (n == 4) {
		is_str(p[0].receptacle, "2", "sorted by numeric receptacle: 2 first");
		is_str(p[1].receptacle, "4", "then 4");
		is_str(p[2].receptacle, "10", "then 10 (numeric, not string order)");
		ok(p[3].receptacle == NULL, "bus without receptacle last");
		is_str(p[1].peer_id, "PEER", "peer found three levels down");
		ok(p[1].peer_via_dock, "peer behind docks");
		is_str(p[1].peer_model, "Mac15,14", "peer model");
		is_int(p[1].peer_rdma_service, JC_NO, "services without 64087: no RDMA service");
		is_int((long long)p[1].ndevices, 4, "four non-Mac devices");
		if (p[1].ndevices == 4) {
			is_str(p[1].devices[0], "Dock A", "devices depth first: Dock A");
			is_str(p[1].devices[1], "Hub B", "Hub B");
			is_str(p[1].devices[2], "Drive C", "Drive C");
			is_str(p[1].devices[3], "Hub D", "Hub D");
		}
		is_str(p[1].link, "80 Gb/s", "negotiated link");
		is_int(p[1].link_gbps, 80, "link_gbps");
		ok(p[2].link == NULL && p[2].link_gbps == 0, "\"Up to\" is not a link");
		is_int(p[1].bus, 3, "bus number from _name");
		ok(p[3].bus == -1, "bus number unknown for odd _name");
		ok(p[0].link == NULL && p[0].id != NULL, "bus without speed: link unknown");
	}
	parse_tb_free(p, n);
	strv_free(&notes);

	ok(parse_str(parse_tb_json, "{\"SPThunderboltDataType\":[]}", &p, &n, &err) == 0 &&
	    n == 0, "empty bus list: 0 ports");
	ok(parse_str(parse_tb_json, "{\"SPThunderboltDataType\":[{\"_name\":\"x\","
	    "\"_name\":\"y\"}]}", &p, &n, &err) == 0 && n == 1, "duplicate keys tolerated");
	parse_tb_free(p, n);
	ok(parse_str(parse_tb_json, "{\"SPThunderboltDataType\" : [ {\"_items\":[{\"_name\":"
	    "\"MacBook Pro\",\"services_title\":[{\"protocol_id_key\":\"64087\"}]}]} ]}",
	    &p, &n, &err) == 0 && n == 1, "trimmed capture parses");
	if (n == 1) {
		ok(p[0].peer_id == NULL && same_str(p[0].peer_model, NULL),
		    "Mac without UUID: no peer id");
		is_int(p[0].peer_rdma_service, JC_YES, "protocol id as a string still counts");
		is_int((long long)p[0].ndevices, 0, "the Mac is not a device");
	}
	parse_tb_free(p, n);

	ok(parse_str(parse_tb_json, "not json at all", &p, &n, &err) < 0 && p == NULL,
	    "garbage: error");
	ok(strstr(err.msg, "not valid JSON") != NULL, "garbage: clear message (%s)", err.msg);
	ok(parse_str(parse_tb_json, "{\"SPUSBDataType\":[]}", &p, &n, &err) < 0,
	    "other data type: error");
	ok(parse_str(parse_tb_json, "{\"SPThunderboltDataType\":{}}", &p, &n, &err) < 0,
	    "buses not a list: error");
	ok(parse_str(parse_tb_json, "", &p, &n, &err) < 0, "empty text: error");
	ok(parse_str(parse_tb_json, "[{\"_name\":\"thunderboltusb4_bus_0\"}]", &p, &n, &err) == 0 &&
	    n == 1, "bare list of buses accepted");
	parse_tb_free(p, n);
}

static void
test_link_rate(void)
{
	int g = 0;

	ok(parse_tb_link_rate("80 Gb/s", &g) && g == 80, "80 Gb/s");
	ok(parse_tb_link_rate("40 Gb/s", &g) && g == 40, "40 Gb/s");
	ok(parse_tb_link_rate("20 Gb/s x2", &g) && g == 20, "20 Gb/s x2");
	ok(!parse_tb_link_rate("Up to 120 Gb/s", &g), "Up to 120 Gb/s is capability");
	ok(!parse_tb_link_rate("Up to 40 Gb/s x1", &g), "Up to 40 Gb/s x1 is capability");
	ok(!parse_tb_link_rate("", &g) && !parse_tb_link_rate(NULL, &g), "empty/NULL");
	ok(!parse_tb_link_rate("0 Gb/s", &g), "zero is not a link");
	ok(!parse_tb_link_rate("80 MB/s", &g), "other unit");
	ok(!parse_tb_link_rate("99999999 Gb/s", &g), "absurd number");
}

static const char text_odd[] =
	"Thunderbolt/USB4:\n"
	"\n"
	"\tThunderbolt/USB4 Bus 1:\n"
	"\n"
	"\t  Vendor Name: Apple Inc.\n"
	"\t  Domain UUID: AAAA\n"
	"\t  Unknown Future Field: 7\n"
	"\t  Port:\n"
	"\t      Status: Device connected   \n"
	"\t      Speed: 40 Gb/s\n"
	"\t      Receptacle: 5\r\n"
	"\n"
	"\t    Some Dock:\n"
	"\t      Vendor Name: Someone\n"
	"\t      Mode: USB4\n"
	"\t      Port (Upstream):\n"
	"\t          Speed: 40 Gb/s\n"
	"\t      Inner Hub:\n"
	"\t        Vendor Name: X\n"
	"\t        Route String: 301\n"
	"\t        Mac mini:\n"
	"\t          Device Name: Mac16,11\n"
	"\t          Domain UUID: BBBB\n"
	"\t          Services:\n"
	"\t            Service: Unknown:\n"
	"\t              Protocol ID: 64087\n"
	"\n"
	"    Thunderbolt/USB4 Bus 0:\n"
	"      Vendor Name: Apple Inc.\n"
	"      Port:\n"
	"          Status: No device connected\n"
	"          Speed: Up to 120 Gb/s\n";

static void
test_text(void)
{
	struct jc_port *p;
	size_t n;
	struct jc_err err;

	ok(parse_str(parse_tb_text, text_odd, &p, &n, &err) == 0, "text with tabs/CR parses");
	is_int((long long)n, 2, "two buses");
	if (n == 2) {
		is_str(p[0].receptacle, "5", "receptacle");
		is_str(p[0].id, "AAAA", "domain");
		is_str(p[0].link, "40 Gb/s", "link");
		is_str(p[0].peer_id, "BBBB", "peer nested two deep");
		ok(p[0].peer_via_dock, "via dock");
		is_int(p[0].peer_rdma_service, JC_YES, "Protocol ID 64087");
		is_int((long long)p[0].ndevices, 2, "two devices");
		ok(p[1].receptacle == NULL && p[1].id == NULL && p[1].link == NULL,
		    "bus without receptacle or domain tolerated");
		is_int(p[0].bus, 1, "bus 1");
	}
	parse_tb_free(p, n);
	ok(parse_str(parse_tb_text, "Hardware:\n\n    Hardware Overview:\n      Model: x\n",
	    &p, &n, &err) < 0, "text without a Thunderbolt section: error");
	ok(parse_str(parse_tb_text, "Thunderbolt/USB4:\n\n", &p, &n, &err) == 0 && n == 0,
	    "Thunderbolt section with no bus: 0 ports");
}

static const char plist_head[] =
	"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	"<!DOCTYPE plist PUBLIC \"-//Apple//DTD PLIST 1.0//EN\" "
	"\"http://www.apple.com/DTDs/PropertyList-1.0.dtd\">\n";

static void
test_xml(void)
{
	struct jc_port *p;
	size_t n;
	struct jc_err err;
	char *doc;

	doc = xasprintf("%s<plist version=\"1.0\"><array><dict>"
	    "<key>_dataType</key><string>SPThunderboltDataType</string>"
	    "<key>_items</key><array><dict><key>_name</key><string>thunderboltusb4_bus_2</string>"
	    "<key>domain_uuid_key</key><string>X1</string>"
	    "<key>receptacle_1_tag</key><dict><key>receptacle_id_key</key><integer>3</integer>"
	    "<key>current_speed_key</key><string>80 Gb/s</string></dict>"
	    "<key>weird</key><date>2026-01-01T00:00:00Z</date>"
	    "<key>_items</key><array><dict><key>_name</key><string>Mac</string>"
	    "<key>domain_uuid_key</key><string>Y1</string><key>services_title</key><array><dict>"
	    "<key>protocol_id_key</key><integer>64087</integer></dict></array></dict></array>"
	    "</dict></array></dict></array></plist>\n", plist_head);
	ok(parse_str(parse_tb_xml, doc, &p, &n, &err) == 0 && n == 1, "xml plist parses");
	if (n == 1) {
		is_str(p[0].receptacle, "3", "integer receptacle as text");
		is_str(p[0].peer_id, "Y1", "peer");
		is_int(p[0].peer_rdma_service, JC_YES, "rdma service");
	}
	parse_tb_free(p, n);
	free(doc);

	doc = xasprintf("<?xml version=\"1.0\"?>\n<!DOCTYPE plist [\n"
	    "<!ENTITY a \"aaaaaaaaaa\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">\n"
	    "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]>\n"
	    "<plist><array><dict><key>_dataType</key><string>&c;</string></dict></array></plist>\n");
	ok(parse_str(parse_tb_xml, doc, &p, &n, &err) < 0, "entity declarations refused");
	ok(strstr(err.msg, "entit") != NULL, "message says why (%s)", err.msg);
	free(doc);

	doc = xasprintf("<?xml version=\"1.0\"?>\n<!DOCTYPE plist [\n"
	    "<!ENTITY x SYSTEM \"file:///etc/passwd\">]>\n"
	    "<plist><array><dict><key>_dataType</key><string>&x;</string></dict></array></plist>\n");
	ok(parse_str(parse_tb_xml, doc, &p, &n, &err) < 0, "external entity refused");
	free(doc);

	ok(parse_str(parse_tb_xml, "<plist><array><dict><key>a</key></dict></array></plist>",
	    &p, &n, &err) < 0, "key without value: error");
	ok(parse_str(parse_tb_xml, "<plist><array><dict><string>a</string></dict></array></plist>",
	    &p, &n, &err) < 0, "dict without key: error");
	ok(parse_str(parse_tb_xml, "<html><body>no</body></html>", &p, &n, &err) < 0,
	    "not a plist: error");
	ok(parse_str(parse_tb_xml, "<plist><array>", &p, &n, &err) < 0 &&
	    strstr(err.msg, "XML") != NULL, "truncated XML: error (%s)", err.msg);
	ok(parse_str(parse_tb_xml, "{\"SPThunderboltDataType\":[]}", &p, &n, &err) < 0,
	    "JSON given to the XML parser: error");
	ok(parse_str(parse_tb_xml, "<plist><array><dict><key>_dataType</key>"
	    "<string>SPHardwareDataType</string></dict></array></plist>", &p, &n, &err) < 0,
	    "plist of another data type: error");
}

/*
 * The osaurus pair's capture of host HOST with its peer Mac's domain UUID
 * and services trimmed away (as a trimmed or older system_profiler output
 * gives it), parsed into h (named name). When tag is not 0, every UUID of
 * the file gets its first digit replaced by tag, so that a copy of a host
 * has ids of its own.
 */
static bool
trimmed_host(const char *top, const char *host, const char *name, char tag, struct jc_host *h)
{
	char *path = xasprintf("%s/tests/captures/osaurus-m5max-mbp-pair/%s/"
	    "system_profiler-SPThunderboltDataType.json", top, host);
	json_t *doc = json_load_file(path, 0, NULL), *bus, *item, *v;
	struct jc_strv notes = { 0 };
	struct jc_err err = { 0 };
	size_t i, k;
	bool ok_ = doc != NULL;

	json_array_foreach(json_object_get(doc, "SPThunderboltDataType"), i, bus) {
		if (tag && (v = json_object_get(bus, "domain_uuid_key")) != NULL) {
			char *u = xstrdup(json_string_value(v));

			u[0] = tag;
			json_object_set_new(bus, "domain_uuid_key", json_string(u));
			free(u);
		}
		json_array_foreach(json_object_get(bus, "_items"), k, item) {
			if (json_object_get(item, "services_title") != NULL) {
				json_object_del(item, "services_title");
				json_object_del(item, "domain_uuid_key");
			}
		}
	}
	memset(h, 0, sizeof(*h));
	h->name = xstrdup(name);
	ok_ = ok_ && parse_tb_doc(doc, &h->ports, &h->nports, &notes, &err) == 0;
	h->notes = notes.v;
	h->nnotes = notes.n;
	json_decref(doc);
	free(path);
	return ok_;
}

static void
test_no_uuid(const char *top)
{
	struct jc_host h[3];
	const struct jc_port *p;
	bool noted = false;

	ok(trimmed_host(top, "local", "local", 0, &h[0]) && h[0].nports == 3,
	    "trimmed capture parses: 3 ports");
	p = &h[0].ports[1];	/* sorted by receptacle: Thunderbolt 2 */
	ok(p->peer_no_id && p->peer_id == NULL && p->link_gbps == 80 && p->ndevices == 0,
	    "the port keeps its peer Mac, without an id, at 80 Gb/s");
	is_str(p->peer_name, "MacBook Pro", "the peer's name");
	is_str(p->peer_model, "Mac17,6", "the peer's model");
	is_str(p->self_name, "MacBook Pro", "the host's own name on its bus");
	ok(!h[0].ports[2].peer_no_id && h[0].ports[2].ndevices == 1,
	    "the dock on Thunderbolt 3 is a device, not a Mac");
	for (size_t i = 0; i < h[0].nnotes; i++)
		noted = noted || (strstr(h[0].notes[i], "Thunderbolt 2: the Mac cabled here "
		    "(MacBook Pro, Mac17,6) reports no domain UUID") != NULL);
	ok(noted, "a note names the port and what is known of the peer");

	/* the peer's side intact: it names local's port, local describes it */
	ok(trimmed_host(top, "peer", "peer", 0, &h[1]), "peer parses");
	free(h[1].ports[1].peer_id);
	h[1].ports[1].peer_id = xstrdup(h[0].ports[1].id);
	h[1].ports[1].peer_no_id = false;
	is_int((long long)parse_tb_infer_peers(h, 2), 1, "one side without a UUID: paired");
	ok(h[0].ports[1].peer_inferred && strcmp(h[0].ports[1].peer_id, h[1].ports[1].id) == 0 &&
	    !h[1].ports[1].peer_inferred, "local's end is the inferred one");
	jc_host_clear(&h[1]);
	jc_host_clear(&h[0]);

	/* both sides trimmed: paired by description (name on the bus), same rate */
	trimmed_host(top, "local", "local", 0, &h[0]);
	trimmed_host(top, "peer", "peer", 0, &h[1]);
	is_int((long long)parse_tb_infer_peers(h, 2), 1, "no UUID on either side: paired");
	ok(h[0].ports[1].peer_inferred && h[1].ports[1].peer_inferred &&
	    strcmp(h[0].ports[1].peer_id, h[1].ports[1].id) == 0 &&
	    strcmp(h[1].ports[1].peer_id, h[0].ports[1].id) == 0, "both ends point at each other");
	jc_host_clear(&h[1]);

	/* a different rate at the far end: not the same cable */
	trimmed_host(top, "peer", "peer", 0, &h[1]);
	h[1].ports[1].link_gbps = 40;
	free(h[0].ports[1].peer_id);
	h[0].ports[1].peer_id = NULL;
	h[0].ports[1].peer_inferred = false;
	is_int((long long)parse_tb_infer_peers(h, 2), 0, "another link rate: not paired");
	jc_host_clear(&h[1]);

	/* two hosts that fit: never guess */
	trimmed_host(top, "peer", "peer", 0, &h[1]);
	trimmed_host(top, "peer", "peer2", '9', &h[2]);
	is_int((long long)parse_tb_infer_peers(h, 3), 0, "two candidates: not paired");
	ok(h[0].ports[1].peer_id == NULL && !h[0].ports[1].peer_inferred &&
	    h[1].ports[1].peer_id == NULL && h[2].ports[1].peer_id == NULL,
	    "no port was given a peer");
	/* the model, when known, decides */
	h[1].model = xstrdup("Mac17,6");
	h[2].model = xstrdup("Mac16,9");
	h[0].model = xstrdup("Mac17,6");
	is_int((long long)parse_tb_infer_peers(h, 3), 1, "models known: the one that fits");
	ok(h[0].ports[1].peer_id && strcmp(h[0].ports[1].peer_id, h[1].ports[1].id) == 0,
	    "paired with the host of the model the port reports");
	for (int i = 0; i < 3; i++)
		jc_host_clear(&h[i]);
}

/* Port of a Mac that reports no domain UUID, cabled to another such Mac. */
static void
bare_port(struct jc_port *p, const char *iface, const char *rec, int gbps, bool dock)
{
	memset(p, 0, sizeof(*p));
	p->bus = -1;
	p->receptacle = xstrdup(rec);
	p->iface = xstrdup(iface);
	p->link_gbps = gbps;
	p->link = xasprintf("%d Gb/s", gbps);
	p->peer_no_id = true;
	p->peer_via_dock = dock;
	p->peer_model = xstrdup("Mac16,10");
	p->peer_name = xstrdup("Mac mini");
	p->self_name = xstrdup("Mac mini");
	p->peer_rdma_service = JC_UNKNOWN;
}

static void
bare_pair(struct jc_host *h, int a2, int b2)
{
	memset(h, 0, 2 * sizeof(*h));
	for (int i = 0; i < 2; i++) {
		h[i].name = xstrdup(i ? "minib" : "minia");
		h[i].model = xstrdup("Mac16,10");
		h[i].reachable = true;
		h[i].ports = xcalloc(2, sizeof(*h[i].ports));
		h[i].nports = 2;
	}
	bare_port(&h[0].ports[0], "en1", "1", 80, false);
	bare_port(&h[0].ports[1], "en2", "2", a2, true);	/* the dock, seen from minia */
	bare_port(&h[1].ports[0], "en1", "1", 80, false);
	bare_port(&h[1].ports[1], "en2", "2", b2, false);
}

/*
 * Two cables between two Macs that report no domain UUIDs at all (neither
 * their own buses' nor the peer's), at 80 and 40 Gb/s, the second through a
 * dock that only one side sees: each rate has one port on each side, so
 * each pair is the only fit and both cables are paired, marked inferred.
 * Two cables at one rate stay unpaired (never a guess).
 */
static void
test_no_uuid_by_rate(void)
{
	struct jc_host h[2];
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	bool noted = false;

	bare_pair(h, 40, 40);
	is_int((long long)parse_tb_infer_peers(h, 2), 2, "no UUID anywhere, 80 and 40 Gb/s: both cables paired");
	ok(h[0].ports[0].peer_id && h[1].ports[0].id && strcmp(h[0].ports[0].peer_id, h[1].ports[0].id) == 0 &&
	    h[1].ports[1].peer_id && h[0].ports[1].id && strcmp(h[1].ports[1].peer_id, h[0].ports[1].id) == 0 &&
	    h[0].ports[0].peer_inferred && h[1].ports[1].peer_inferred,
	    "each port points at the one of its rate on the other Mac, marked inferred");
	for (size_t k = 0; k < h[0].nnotes; k++)
		noted = noted || strcmp(h[0].notes[k], "Thunderbolt 2: paired with minib Thunderbolt 2 "
		    "by inference (the only port that fits, at 40 Gb/s)") == 0;
	ok(noted, "a note says the 40 Gb/s cable was inferred");
	is_int(graph_build(h, 2, &g, &err), 0, "the graph builds");
	ok(g && g->ncables == 2 && g->cables[0].inferred && g->cables[1].inferred &&
	    g->cables[0].gbps + g->cables[1].gbps == 120 &&
	    g->cables[0].via_dock != g->cables[1].via_dock,
	    "two cables, both inferred, one through the dock");
	graph_free(g);
	for (int i = 0; i < 2; i++)
		jc_host_clear(&h[i]);

	bare_pair(h, 80, 80);
	is_int((long long)parse_tb_infer_peers(h, 2), 0, "two cables at one rate: none paired");
	ok(h[0].ports[0].peer_id == NULL && h[1].ports[1].peer_id == NULL, "no port was given a peer");
	for (int i = 0; i < 2; i++)
		jc_host_clear(&h[i]);
}

int
main(void)
{
	const char *top = getenv("top_srcdir");
	char *root;

	(void)plan;
	(void)skip_all;
	test_link_rate();
	test_json_shapes();
	test_text();
	test_xml();
	test_no_uuid(top ? top : ".");
	test_no_uuid_by_rate();
	root = xasprintf("%s/tests/captures", top ? top : ".");
	forms_agree(root);
	free(root);
	root = xasprintf("%s/tests/captures-sim", top ? top : ".");
	forms_agree(root);
	free(root);
	return done_testing();
}
