/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the expected-cabling file (write, read, strict errors) and
 * of its diff (moved, removed, downgraded, new, host gone), on the cabling
 * of the doctor's bundles; and of a doctor check on a hand-made inventory
 * (a bridge loop made by two cables between the same two hosts).
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tap.h"
#include "expected_cabling.h"
#include "doctor.h"
#include "inventory.h"
#include "probe.h"

static const char *srcdir;

/* Load every host of a bundle. */
static struct jc_host *
load(const char *bundle, size_t *n)
{
	char *dir = xasprintf("%s/%s", srcdir, bundle);
	struct jc_host *h = NULL;
	struct jc_err err = { 0 };

	if (probe_bundle_hosts(dir, &h, n, &err) != 0) {
		diag("%s", err.msg);
		exit(1);
	}
	for (size_t i = 0; i < *n; i++) {
		char *name = xstrdup(h[i].name);

		jc_host_clear(&h[i]);
		memset(&h[i], 0, sizeof(h[i]));
		if (inventory_from_bundle(dir, name, &h[i], &err) != 0) {
			diag("%s", err.msg);
			exit(1);
		}
		h[i].reachable = true;
		free(name);
	}
	free(dir);
	return h;
}

static struct cabling *
cabling_of(const char *bundle)
{
	size_t n;
	struct jc_host *h = load(bundle, &n);
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	struct cabling *c;

	if (graph_build(h, n, &g, &err) != 0) {
		diag("%s", err.msg);
		exit(1);
	}
	c = cabling_from_graph(g);
	graph_free(g);
	for (size_t i = 0; i < n; i++)
		jc_host_clear(&h[i]);
	free(h);
	return c;
}

static int
count(const struct cabling_diff *d, enum cabling_change k)
{
	int c = 0;

	for (size_t i = 0; i < d->n; i++)
		c += d->v[i].kind == k;
	return c;
}

static const char *
first_msg(const struct cabling_diff *d, enum cabling_change k)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->v[i].kind == k)
			return d->v[i].msg;
	return NULL;
}

static void
test_file(void)
{
	struct cabling *c = cabling_of("tests/doctor/bundles/configured"), *back = NULL;
	char *golden = xasprintf("%s/tests/doctor/expect/studio-mesh4-v2.json", srcdir);
	char tmpl[] = "/tmp/jc-cabling-XXXXXX";
	char *a = NULL, *b = NULL;
	size_t alen = 0, blen = 0;
	struct jc_err err = { 0 };
	struct cabling_diff d = { 0 };
	int fd = mkstemp(tmpl);

	close(fd);
	is_int(cabling_write(tmpl, c, &err), 0, "write the cabling of the configured mesh");
	jc_read_file(tmpl, 1 << 20, &a, &alen, NULL);
	jc_read_file(golden, 1 << 20, &b, &blen, NULL);
	ok(a && b && alen == blen && memcmp(a, b, alen) == 0,
	    "the file is exactly tests/doctor/expect/studio-mesh4-v2.json");
	is_int(cabling_load(tmpl, &back, &err), 0, "read it back");
	is_int(back ? (long long)back->ncables : -1, 6, "six cables");
	cabling_diff(c, back, &d);
	is_int((long long)d.n, 0, "written and read back: no difference");
	cabling_diff_free(&d);
	is_int(cabling_write("/nonexistent-dir/x.json", c, &err), -2, "unwritable path fails");
	ok(strstr(err.msg, "/nonexistent-dir/x.json") != NULL, "and names it: %s", err.msg);
	unlink(tmpl);
	free(a);
	free(b);
	free(golden);
	cabling_free(back);
	cabling_free(c);
}

static void
test_parse_errors(void)
{
	static const struct {
		const char *doc, *want;
	} bad[] = {
		{ "[]", "not a JSON object" },
		{ "{\"version\": 3, \"hosts\": [], \"cables\": []}", "\"version\" must be 1 or 2" },
		{ "{\"version\": 1, \"hosts\": [], \"cables\": [], \"x\": 1}", "unknown key \"x\"" },
		{ "{\"version\": 1, \"hosts\": [\"a b\"], \"cables\": []}", "hosts[0]: not a host name" },
		{ "{\"version\": 1, \"hosts\": [\"a\", \"a\"], \"cables\": []}", "listed twice" },
		{ "{\"version\": 1, \"hosts\": [\"a\", \"b\"], \"cables\": [{\"a\": \"a\", \"b\": \"b\", "
		  "\"a_iface\": \"en2; rm\", \"b_port\": \"1\"}]}", "cables[0].a_iface: not an interface name" },
		{ "{\"version\": 1, \"hosts\": [\"a\", \"b\"], \"cables\": [{\"a\": \"a\", \"b\": \"b\", "
		  "\"a_port\": \"1\"}]}", "neither b_port nor b_iface" },
		{ "{\"version\": 1, \"hosts\": [\"a\", \"b\"], \"cables\": [{\"a\": \"a\", \"b\": \"a\", "
		  "\"a_port\": \"1\", \"b_port\": \"2\"}]}", "both ends on a" },
		{ "{\"version\": 1, \"hosts\": [\"a\", \"b\"], \"cables\": [{\"a\": \"a\", \"b\": \"b\", "
		  "\"a_port\": \"1\", \"b_port\": \"2\", \"gbps\": \"80\"}]}", "gbps: not a speed" },
		{ "{\"version\": 1, \"hosts\": [\"a\", \"b\"], \"cables\": [{\"a\": \"a\", \"b\": \"b\", "
		  "\"a_port\": \"1\", \"b_port\": \"2\"}, {\"a\": \"b\", \"b\": \"a\", \"a_port\": \"2\", "
		  "\"b_port\": \"3\"}]}", "use the same port of b" },
		{ "{\"version\": 1, \"hosts\": [\"a\", \"b\"], \"cables\": [{\"a\": \"a\", \"b\": \"b\", "
		  "\"a_port\": \"1\", \"b_port\": \"2\", \"colour\": 1}]}", "cables[0]: unknown key \"colour\"" },
		{ "{\"version\": 1, ", "t.json:1:" },
	};

	for (size_t i = 0; i < JC_ARRAY_LEN(bad); i++) {
		struct cabling *c = (struct cabling *)1;
		struct jc_err err = { 0 };
		int r = cabling_parse(bad[i].doc, strlen(bad[i].doc), "t.json", &c, &err);

		ok(r < 0 && c == NULL && strstr(err.msg, bad[i].want) != NULL,
		    "bad file %zu refused: %s", i, err.msg);
	}
}

/* The nested form (configure's) reads as the flat one; ssh targets become names. */
static void
test_nested(void)
{
	static const char doc[] = "{\"version\": 1, \"hosts\": [{\"name\": \"root@a:22\", "
	    "\"model\": \"Mac16,11\", \"ports\": []}, \"b\"], \"cables\": [{\"a\": "
	    "{\"host\": \"root@a:22\", \"receptacle\": \"1\", \"iface\": \"en2\"}, "
	    "\"b\": {\"host\": \"b\", \"receptacle\": null, \"iface\": \"en3\"}, "
	    "\"gbps\": 80, \"via_dock\": false, \"rdma\": null}]}";
	struct cabling *c = NULL;
	struct jc_err err = { 0 };

	is_int(cabling_parse(doc, strlen(doc), "n.json", &c, &err), 0, "nested form read");
	if (c == NULL) {
		diag("%s", err.msg);
		return;
	}
	is_str(c->hosts[0], "a", "ssh target a host name");
	is_str(c->cables[0].end[0].host, "a", "cable end's host a name");
	is_str(c->cables[0].end[0].port, "1", "receptacle");
	ok(c->cables[0].end[1].port == NULL, "null receptacle");
	is_str(c->cables[0].end[1].iface, "en3", "interface");
	cabling_free(c);
}

static void
test_diff(void)
{
	struct cabling *want = NULL, *got;
	char *path = xasprintf("%s/tests/doctor/expect/studio-mesh4.json", srcdir);
	struct jc_err err = { 0 };
	struct cabling_diff d = { 0 };

	if (cabling_load(path, &want, &err) != 0) {
		diag("%s", err.msg);
		exit(1);
	}
	free(path);

	got = cabling_of("tests/doctor/bundles/moved");
	cabling_diff(want, got, &d);
	is_int((long long)d.n, 1, "moved: one difference");
	is_int(count(&d, CABLING_MOVED), 1, "moved: it is a move");
	is_str(first_msg(&d, CABLING_MOVED),
	    "m3-ultra-3 Thunderbolt 3 (en5) -- m3-ultra-4 Thunderbolt 3 (en5) has moved: "
	    "now m3-ultra-3 Thunderbolt 1 (en2) -- m3-ultra-4 Thunderbolt 1 (en2)",
	    "moved: message");
	cabling_diff_free(&d);
	/* and the other way round: the same move */
	cabling_diff(got, want, &d);
	is_int(count(&d, CABLING_MOVED), 1, "moved back: a move too");
	cabling_diff_free(&d);
	cabling_free(got);

	got = cabling_of("data/examples/missing-cable");
	cabling_diff(want, got, &d);
	is_int((long long)d.n, 1, "removed: one difference");
	is_str(first_msg(&d, CABLING_MISSING),
	    "m3-ultra-3 Thunderbolt 3 (en5) -- m3-ultra-4 Thunderbolt 3 (en5) is missing",
	    "removed: message");
	cabling_diff_free(&d);
	cabling_diff(got, want, &d);
	is_int(count(&d, CABLING_NEW), 1, "seen from the other side: a new cable");
	cabling_diff_free(&d);
	cabling_free(got);

	got = cabling_of("data/examples/mesh4-tb4-link");
	cabling_diff(want, got, &d);
	is_int((long long)d.n, 1, "downgraded: one difference");
	is_str(first_msg(&d, CABLING_DOWNGRADED),
	    "m3-ultra-2 Thunderbolt 2 (en3) -- m3-ultra-3 Thunderbolt 2 (en3) is downgraded to "
	    "40 Gb/s (expected 80 Gb/s)", "downgraded: message");
	cabling_diff_free(&d);
	/* faster than expected is no downgrade */
	cabling_diff(got, want, &d);
	is_int((long long)d.n, 0, "upgraded 40 -> 80 Gb/s: no difference");
	cabling_diff_free(&d);
	/* through a dock is a downgrade */
	got->cables[0].via_dock = true;
	cabling_diff(want, got, &d);
	is_int(count(&d, CABLING_DOWNGRADED), 2, "now through a dock: downgraded too");
	cabling_diff_free(&d);
	cabling_free(got);

	/* a host of the file that was not probed: named once, its cables skipped */
	got = cabling_of("tests/doctor/bundles/configured");
	free(got->hosts[3]);
	got->hosts[3] = xstrdup("elsewhere");
	got->ncables = 3;	/* keep the m3-ultra-1..3 cables only */
	for (size_t k = 0, w = 0; k < 6; k++) {
		struct cabling_cable *c = &got->cables[k];

		if (strcmp(c->end[0].host, "m3-ultra-4") == 0 ||
		    strcmp(c->end[1].host, "m3-ultra-4") == 0) {
			for (int s = 0; s < 2; s++) {
				free(c->end[s].host);
				free(c->end[s].port);
				free(c->end[s].iface);
			}
			continue;
		}
		got->cables[w++] = *c;
	}
	cabling_diff(want, got, &d);
	is_int((long long)d.n, 1, "host gone: one difference");
	is_int(count(&d, CABLING_HOST_GONE), 1, "host gone: named once");
	cabling_diff_free(&d);
	cabling_free(got);
	cabling_free(want);
}

/* Two hosts whose bridges hold both cables between them: a loop. */
static void
test_bridge_loop(void)
{
	size_t n;
	struct jc_host *h = load("tests/doctor/bundles/bridge-loop", &n);
	struct jc_host two[2];
	struct graph *g = NULL;
	struct jc_err err = { 0 };
	struct doctor_input in = { 0 };
	struct doctor_report *r;
	bool loop = false;

	two[0] = h[0];
	two[1] = h[1];
	graph_build(two, 2, &g, &err);
	in.hosts = two;
	in.n = 2;
	in.g = g;
	r = doctor_run(&in);
	for (size_t k = 0; k < r->n; k++)
		if (strstr(r->v[k].msg, "Thunderbolt Bridge loop") != NULL)
			loop = true;
	ok(!loop, "two hosts, one bridged cable: no loop");
	is_int(r->count[DOCTOR_ERROR] > 0, 1, "but the bridges are still errors");
	ok(!doctor_passed(r), "and the report does not pass");
	doctor_report_free(r);
	graph_free(g);
	for (size_t i = 0; i < n; i++)
		jc_host_clear(&h[i]);
	free(h);
}

int
main(void)
{
	srcdir = getenv("top_srcdir");
	if (srcdir == NULL)
		srcdir = ".";
	test_file();
	test_parse_errors();
	test_nested();
	test_diff();
	test_bridge_loop();
	return done_testing();
}
