/* SPDX-License-Identifier: MIT */
/* The hostfile reader and the rules of hostfile_check.c, on hostfiles written here. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../tap.h"
#include "hostfile_check.h"
#include "hostfile_read.h"

static const char docs[] =
    "[\n"
    " {\"ssh\": \"m3-ultra-1\", \"ips\": [\"123.123.123.1\"],"
    "  \"rdma\": [null, \"rdma_en5\", \"rdma_en4\", \"rdma_en3\"]},\n"
    " {\"ssh\": \"m3-ultra-2\", \"ips\": [], \"rdma\": [\"rdma_en5\", null, \"rdma_en3\", \"rdma_en4\"]},\n"
    " {\"ssh\": \"m3-ultra-3\", \"ips\": [], \"rdma\": [\"rdma_en4\", \"rdma_en3\", null, \"rdma_en5\"]},\n"
    " {\"ssh\": \"m3-ultra-4\", \"ips\": [], \"rdma\": [\"rdma_en3\", \"rdma_en4\", \"rdma_en5\", null]}\n"
    "]\n";

/* Parse text and check it; the report outlives the parsed file. */
static struct check_report *
run(const char *text, const char *backend, long port)
{
	struct hostfile_diags d = { 0 };
	struct jc_hostfile *hf = NULL;
	struct check_report *r;

	hostfile_parse(text, strlen(text), "t.json", &hf, &d);
	r = check_hostfile(hf, &d, backend, port);
	jc_hostfile_free(hf);
	hostfile_diags_free(&d);
	return r;
}

static const struct check_item *
find(const struct check_item *v, size_t n, const char *code)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].code, code) == 0)
			return &v[i];
	return NULL;
}

static size_t
count(const struct check_item *v, size_t n, const char *code)
{
	size_t c = 0;

	for (size_t i = 0; i < n; i++)
		c += strcmp(v[i].code, code) == 0;
	return c;
}

/* A hostfile of n hosts "hK" where every host lists dev for every peer. */
static char *
same_device_mesh(size_t n, const char *backend, const char *dev)
{
	struct jc_buf b = { 0 };

	buf_printf(&b, "{\"backend\": \"%s\", \"hosts\": [", backend);
	for (size_t i = 0; i < n; i++) {
		buf_printf(&b, "%s{\"ssh\": \"h%zu\", \"ips\": [\"10.0.0.%zu\"], \"rdma\": [",
		    i ? "," : "", i, i + 1);
		for (size_t j = 0; j < n; j++)
			buf_printf(&b, "%s%s%s%s", j ? "," : "", j == i ? "" : "\"",
			    j == i ? "null" : dev, j == i ? "" : "\"");
		buf_puts(&b, "]}");
	}
	buf_puts(&b, "]}");
	return buf_steal(&b);
}

static void
test_reader(void)
{
	struct hostfile_diags d = { 0 };
	struct jc_hostfile *hf = NULL;
	const char *obj =
	    "{\"backend\": \"jaccl-ring\", \"envs\": [\"A=1\", \"B_2=x y\"], \"hosts\": [\n"
	    "  {\"ssh\": \"a\", \"ips\": [\"10.0.0.1\", \"fd00::1\"], \"rdma\": [null, [\"rdma_en2\", \"rdma_en3\"]]},\n"
	    "  {\"ssh\": \"b\", \"rdma\": [\"rdma_en2\", null]}]}\n";
	const char *bad =
	    "{\"hosts\": [\n"
	    "  {\"ssh\": 1, \"ips\": \"10.0.0.1\", \"rdma\": [null, 5]},\n"
	    "  {\"ips\": [7], \"rdma\": [[\"x\", null], null], \"rank\": 1},\n"
	    "  \"c\"], \"envs\": [\"1X\"]}\n";

	is_int(hostfile_parse(obj, strlen(obj), "o.json", &hf, &d), 0, "object form parses");
	ok(hf && !hf->legacy_list, "object form is not the legacy list");
	is_str(hf->backend, "jaccl-ring", "backend read");
	ok(hf->nenvs == 2 && strcmp(hf->envs[1], "B_2=x y") == 0, "envs read");
	ok(hf->nhosts == 2 && hf->hosts[0].nips == 2 && hf->hosts[1].nips == 0,
	    "ips read, absent ips is an empty list");
	ok(hf->hosts[0].nrdma == 2 && hf->hosts[0].rdma[0].n == 0 && !hf->hosts[0].rdma[0].is_list,
	    "a null cell");
	ok(hf->hosts[0].rdma[1].n == 2 && hf->hosts[0].rdma[1].is_list &&
	    strcmp(hf->hosts[0].rdma[1].names[1], "rdma_en3") == 0, "a list cell");
	ok(hf->hosts[1].rdma[0].n == 1 && !hf->hosts[1].rdma[0].is_list, "a string cell");
	is_int((long long)d.n, 0, "no diagnostic");
	jc_hostfile_free(hf);
	hostfile_diags_free(&d);

	is_int(hostfile_parse(docs, strlen(docs), "l.json", &hf, &d), 0, "list form parses");
	ok(hf && hf->legacy_list && *hf->backend == '\0' && hf->nhosts == 4,
	    "list form: legacy, no backend, 4 hosts");
	jc_hostfile_free(hf);
	hostfile_diags_free(&d);

	/* every problem is collected, each with its path */
	is_int(hostfile_parse(bad, strlen(bad), "b.json", &hf, &d), -EINVAL, "bad types fail");
	ok(hf != NULL && hf->nhosts == 3, "the partial structure is kept");
	{
		static const char *const want[][2] = {
			{ "bad-type", "hosts[0].ssh: expected a string" },
			{ "bad-type", "hosts[0].ips: expected a list of strings" },
			{ "bad-type", "hosts[0].rdma[1]: expected null, a string or a list of strings" },
			{ "bad-type", "hosts[1].ips[0]: expected a string" },
			{ "bad-type", "hosts[1].rdma[0][1]: expected a string (a device name)" },
			{ "unknown-key", "hosts[1]: unknown key 'rank' is ignored" },
			{ "missing-ssh", "hosts[1]: no \"ssh\" name: every host needs one" },
			{ "bad-type", "hosts[2]: expected an object with \"ssh\", \"ips\" and \"rdma\"" },
			{ "bad-env", "envs[0]: '1X' is not KEY=VALUE with a KEY of letters, digits and _" },
		};

		is_int((long long)d.n, (long long)JC_ARRAY_LEN(want), "all problems collected");
		for (size_t i = 0; i < d.n && i < JC_ARRAY_LEN(want); i++) {
			is_str(d.v[i].code, want[i][0], want[i][1]);
			is_str(d.v[i].msg, want[i][1], "  its message");
		}
		is_int((long long)d.nerrors, 8, "one of them is a warning");
		ok(d.v[3].host == 1 && d.v[3].part == HF_PART_IPS, "diagnostic names host and part");
	}
	jc_hostfile_free(hf);
	hostfile_diags_free(&d);

	/* the loader's variables in envs: a warning (issue 21, lead of case 8) */
	{
		static const char envs[] = "{\"backend\": \"ring\", \"envs\": [\"LD_PRELOAD=/tmp/x.so\", "
		    "\"DYLD_INSERT_LIBRARIES=/tmp/y.dylib\", \"MLX_X=1\"], \"hosts\": "
		    "[{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\"]}, {\"ssh\": \"b\", \"ips\": [\"10.0.0.2\"]}]}";
		size_t nl = 0;
		bool named = false;

		hostfile_parse(envs, strlen(envs), "e.json", &hf, &d);
		for (size_t i = 0; i < d.n; i++)
			if (strcmp(d.v[i].code, "loader-env") == 0) {
				nl++;
				named = named || strstr(d.v[i].msg, "envs[0]: LD_PRELOAD makes") != NULL;
			}
		ok(nl == 2 && named && d.nerrors == 0,
		    "LD_PRELOAD and DYLD_INSERT_LIBRARIES in envs: two loader-env warnings, no error");
		jc_hostfile_free(hf);
		hostfile_diags_free(&d);
	}

	/* syntax errors carry line and column */
	hostfile_parse("[\n  {\"ssh\": \"a\",\n   \"ips\": [1 2]}]", 31, "c.json", &hf, &d);
	ok(hf == NULL && d.n == 1, "a syntax error gives no structure");
	ok(d.n == 1 && strncmp(d.v[0].msg, "c.json:3:", 9) == 0, "syntax error at line 3: %s",
	    d.n ? d.v[0].msg : "");
	is_str(d.n ? d.v[0].code : NULL, "json-syntax", "syntax error code");
	hostfile_diags_free(&d);
	hostfile_parse("[{\"ssh\": \"a\"}", 13, "c.json", &hf, &d);
	is_str(d.n ? d.v[0].code : NULL, "truncated", "truncated file");
	hostfile_diags_free(&d);
	hostfile_parse("[{\"ssh\": \"a\", \"ssh\": \"b\"}]", 26, "c.json", &hf, &d);
	is_str(d.n ? d.v[0].code : NULL, "duplicate-key", "duplicate key");
	hostfile_diags_free(&d);
	hostfile_parse("[\"\xc3\x28\"]", 6, "c.json", &hf, &d);
	is_str(d.n ? d.v[0].code : NULL, "bad-utf8", "invalid UTF-8");
	hostfile_diags_free(&d);
	hostfile_parse(" \n\t", 3, "c.json", &hf, &d);
	is_str(d.n ? d.v[0].code : NULL, "empty-file", "blank file");
	hostfile_diags_free(&d);
	{
		size_t n = 5000;
		char *deep = xmalloc(2 * n);

		memset(deep, '[', n);
		memset(deep + n, ']', n);
		hostfile_parse(deep, 2 * n, "c.json", &hf, &d);
		is_str(d.n ? d.v[0].code : NULL, "too-deep", "deep nesting is refused");
		hostfile_diags_free(&d);
		free(deep);
	}
	hostfile_parse("[{\"ssh\": \"a\"}] x", 16, "c.json", &hf, &d);
	is_str(d.n ? d.v[0].code : NULL, "json-syntax", "trailing garbage");
	hostfile_diags_free(&d);
}

static void
test_names(void)
{
	char *p;

	ok(hostfile_ssh_ok("mac1") && hostfile_ssh_ok("admin@mac-1.local") &&
	    hostfile_ssh_ok("10.0.0.1"), "ssh names");
	ok(!hostfile_ssh_ok("") && !hostfile_ssh_ok("a b") && !hostfile_ssh_ok("a;b") &&
	    !hostfile_ssh_ok("$(x)") && !hostfile_ssh_ok("-oProxyCommand=x") &&
	    !hostfile_ssh_ok("`x`") && !hostfile_ssh_ok("a'b") && !hostfile_ssh_ok(NULL),
	    "hostile ssh names");
	ok(hostfile_ip_ok("192.168.0.1") && hostfile_ip_ok("fd00::1") &&
	    hostfile_ip_ok("mac1.local"), "IPv4, IPv6 and host names in ips");
	ok(!hostfile_ip_ok("10.0.0.1 ") && !hostfile_ip_ok("a;b") && !hostfile_ip_ok("-x") &&
	    !hostfile_ip_ok("a..b") && !hostfile_ip_ok(""), "bad ips");
	/* inet_pton(AF_INET) refuses these, and no top-level domain is a number */
	ok(!hostfile_ip_ok("10.0.0.256") && !hostfile_ip_ok("300.1.1.1") &&
	    !hostfile_ip_ok("1.2.3.4.5") && !hostfile_ip_ok("10.0.0.256.") &&
	    !hostfile_ip_ok("10.0.0") && !hostfile_ip_ok("4294967297"),
	    "dotted numbers that are no IPv4 address are no host names either");
	ok(hostfile_ip_ok("10.0.0.255") && hostfile_ip_ok("mac1.") && hostfile_ip_ok("10.0.0.a1") &&
	    hostfile_ip_ok("host-1.example.com.") && hostfile_ip_ok("1mac"),
	    "names with digits and a trailing dot are still names");
	ok(hostfile_env_ok("A=1") && hostfile_env_ok("MLX_X=a b;c") && hostfile_env_ok("K="),
	    "env entries");
	ok(!hostfile_env_ok("=1") && !hostfile_env_ok("A") && !hostfile_env_ok("A B=1") &&
	    !hostfile_env_ok("A-B=1"), "bad env entries");
	p = hostfile_printable("a\nb\x1b", 0);
	is_str(p, "a\\x0ab\\x1b", "control characters are escaped");
	free(p);
	p = hostfile_printable("abcdef", 3);
	is_str(p, "abc...", "printable copies are cut");
	free(p);
	p = hostfile_printable("m\xc3\xa4" "c", 0);
	is_str(p, "m\xc3\xa4" "c", "valid UTF-8 is kept");
	free(p);
	p = hostfile_printable("m\xff", 0);
	is_str(p, "m\\xff", "invalid UTF-8 is escaped");
	free(p);
}

static void
test_rules(void)
{
	struct check_report *r;
	const struct check_item *it;
	char *text;

	r = run(docs, NULL, CHECK_DEFAULT_PORT);
	ok(r->valid, "MLX docs hostfile is valid");
	is_str(r->backend, "jaccl", "a mesh is jaccl");
	is_str(r->backend_source, "cabling", "chosen from the matrix");
	is_str(r->coordinator, "123.123.123.1:32323", "coordinator is rank 0's first IP");
	ok(r->mesh_links == 6 && r->cabled_pairs == 6, "6 links of a full mesh, 6 listed");
	ok(r->nwarnings == 1 && strcmp(r->warnings[0].code, "no-backend") == 0,
	    "warned that mlx.launch needs --backend");
	check_report_free(r);

	r = run(docs, NULL, 4000);
	is_str(r->coordinator, "123.123.123.1:4000", "coordinator port");
	check_report_free(r);

	r = run(docs, "ring", CHECK_DEFAULT_PORT);
	ok(!r->valid, "as a ring the docs hostfile is invalid");
	is_str(r->backend_source, "option", "backend from the option");
	it = find(r->problems, r->nproblems, "ring-needs-ips");
	is_str(it ? it->msg : NULL, "the ring backend connects to the IPs of every host; "
	    "no IP is listed for m3-ultra-2, m3-ultra-3 and m3-ultra-4", "ring needs IPs");
	ok(it && it->nranks == 3 && it->ranks[0] == 1 && it->ranks[2] == 3, "hosts of the problem");
	ok(find(r->warnings, r->nwarnings, "rdma-unused") != NULL, "rdma unused by ring");
	check_report_free(r);

	/* the seed's broken file: one link removed */
	text = xstrdup(docs);
	memcpy(strstr(text, "null, \"rdma_en5\"") + 6, "null      ", 10);
	r = run(text, "jaccl", CHECK_DEFAULT_PORT);
	is_int((long long)r->nproblems, 1, "one problem");
	is_str(r->nproblems ? r->problems[0].msg : NULL,
	    "no RDMA device is listed for m3-ultra-1 to m3-ultra-2 "
	    "(jaccl needs a cable between every pair of hosts)", "mlx's wording");
	ok(r->nproblems && r->problems[0].nranks == 2, "both hosts named");
	check_report_free(r);
	r = run(text, "jaccl-ring", CHECK_DEFAULT_PORT);
	ok(find(r->problems, r->nproblems, "missing-link") != NULL,
	    "jaccl-ring also needs rank 0 to rank 1");
	check_report_free(r);
	free(text);

	/* every link missing: mlx's "and K more" */
	r = run("{\"backend\": \"jaccl\", \"hosts\": [{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\"],"
	    " \"rdma\": [null, null, null]}, {\"ssh\": \"b\", \"rdma\": [null, null, null]},"
	    " {\"ssh\": \"c\", \"rdma\": [null, null, null]}]}", NULL, CHECK_DEFAULT_PORT);
	is_str(r->nproblems ? r->problems[0].msg : NULL,
	    "no RDMA device is listed for a to b, a to c, b to a and 3 more "
	    "(jaccl needs a cable between every pair of hosts)", "missing links summed up");
	is_str(r->backend, "jaccl", "backend from the file");
	check_report_free(r);

	/* a 5-host ring in rank order is jaccl-ring */
	r = run("[{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\"], \"rdma\": [null, \"e1\", null, null, \"e2\"]},"
	    "{\"ssh\": \"b\", \"rdma\": [\"e2\", null, \"e1\", null, null]},"
	    "{\"ssh\": \"c\", \"rdma\": [null, \"e2\", null, \"e1\", null]},"
	    "{\"ssh\": \"d\", \"rdma\": [null, null, \"e2\", null, \"e1\"]},"
	    "{\"ssh\": \"e\", \"rdma\": [\"e1\", null, null, \"e2\", null]}]", NULL, CHECK_DEFAULT_PORT);
	ok(r->valid, "5-host ring is valid");
	is_str(r->backend, "jaccl-ring", "a ring is jaccl-ring");
	is_int((long long)r->cabled_pairs, 5, "5 pairs listed");
	is_int((long long)r->mesh_links, 10, "10 links of a full mesh");
	check_report_free(r);

	/* no RDMA device at all: ring */
	r = run("[{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\"]}, {\"ssh\": \"b\", \"ips\": [\"10.0.0.2\"]}]",
	    NULL, CHECK_DEFAULT_PORT);
	ok(r->valid && strcmp(r->backend, "ring") == 0 && r->nwarnings == 0,
	    "no rdma: the ring backend, no warning");
	check_report_free(r);

	/* ring widths */
	r = run("{\"backend\": \"jaccl-ring\", \"hosts\": ["
	    "{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\"], \"rdma\": [null, [\"e1\", \"e2\"], [\"e3\"]]},"
	    "{\"ssh\": \"b\", \"rdma\": [[\"e1\", \"e2\"], null, [\"e3\", \"e4\"]]},"
	    "{\"ssh\": \"c\", \"rdma\": [[\"e3\"], [\"e1\"], null]}]}", NULL, CHECK_DEFAULT_PORT);
	it = find(r->problems, r->nproblems, "ring-width-mismatch");
	ok(it != NULL, "ring widths differ");
	ok(find(r->problems, r->nproblems, "asymmetric-cable-count") != NULL,
	    "b lists 2 cables to c, c lists 1 to b");
	check_report_free(r);

	/* 11 peers on one device: Apple's queue-pair limit; 20 items kept per code */
	text = same_device_mesh(12, "jaccl", "rdma_en2");
	r = run(text, NULL, CHECK_DEFAULT_PORT);
	it = find(r->problems, r->nproblems, "qp-budget");
	is_str(it ? it->msg : NULL,
	    "h0 would open 11 queue pairs on rdma_en2: Apple's driver allows 10 per device",
	    "queue pairs counted per device");
	ok(find(r->problems, r->nproblems, "mesh-too-large") != NULL, "mesh of 12 is too large");
	it = find(r->problems, r->nproblems, "device-two-peers");
	ok(it && it->nranks == 12, "one device for 11 peers: the host and its peers named");
	check_report_free(r);
	free(text);
	text = same_device_mesh(30, "jaccl", "rdma_en2");
	r = run(text, NULL, CHECK_DEFAULT_PORT);
	is_int((long long)count(r->problems, r->nproblems, "qp-budget"), CHECK_SAME_CODE_MAX + 1,
	    "20 problems of a kind and one sum");
	it = &r->problems[r->nproblems - 1];
	is_str(it->msg, "and 10 more problems of this kind", "the sum");
	is_int((long long)it->nranks, 10, "the sum names the other hosts");
	check_report_free(r);
	free(text);
	text = same_device_mesh(12, "jaccl-ring", "rdma_en2");
	r = run(text, NULL, CHECK_DEFAULT_PORT);
	ok(find(r->problems, r->nproblems, "qp-budget") == NULL &&
	    find(r->problems, r->nproblems, "device-two-peers") != NULL,
	    "a ring opens 2 queue pairs per host here, but the wiring is wrong");
	check_report_free(r);
	free(text);

	/* N=2 jaccl-ring opens left and right on the same cell */
	r = run("{\"backend\": \"jaccl-ring\", \"hosts\": [{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\"],"
	    " \"rdma\": [null, [\"e1\", \"e2\", \"e3\", \"e4\"]]}, {\"ssh\": \"b\","
	    " \"rdma\": [[\"e1\", \"e2\", \"e3\", \"e4\"], null]}]}", NULL, CHECK_DEFAULT_PORT);
	ok(r->valid, "2-host ring with 4 cables is valid");
	check_report_free(r);

	/* unreadable file: no structure, the option's backend kept */
	{
		struct hostfile_diags d = { 0 };
		struct jc_hostfile *hf = NULL;

		hostfile_load("/nonexistent/hostfile.json", &hf, &d);
		r = check_hostfile(hf, &d, "jaccl", CHECK_DEFAULT_PORT);
		ok(!r->valid && r->nproblems == 1 && strcmp(r->problems[0].code, "missing-file") == 0,
		    "missing file");
		ok(r->coordinator == NULL && r->format == NULL && r->nhosts == 0, "nothing known");
		is_str(r->backend, "jaccl", "backend of the option");
		check_report_free(r);
		hostfile_diags_free(&d);
	}

	/* hostile names are not echoed in messages */
	r = run("{\"backend\": \"jaccl\", \"hosts\": [{\"ssh\": \"a;reboot\", \"ips\": [\"10.0.0.1\"],"
	    " \"rdma\": [null, null]}, {\"ssh\": \"b\", \"rdma\": [\"e`x`\", null]}]}",
	    NULL, CHECK_DEFAULT_PORT);
	is_str(r->names[0], "hosts[0]", "a bad ssh name is shown by position");
	it = find(r->problems, r->nproblems, "missing-link");
	is_str(it ? it->msg : NULL, "no RDMA device is listed for hosts[0] to b "
	    "(jaccl needs a cable between every pair of hosts)", "named by position");
	ok(count(r->problems, r->nproblems, "bad-name") == 2, "both bad names reported");
	check_report_free(r);

	/* JSON report */
	{
		json_t *j;

		r = run(docs, NULL, CHECK_DEFAULT_PORT);
		j = check_report_json(r);
		ok(json_is_true(json_object_get(j, "valid")), "json: valid");
		is_str(json_string_value(json_object_get(j, "coordinator")), "123.123.123.1:32323",
		    "json: coordinator");
		ok(json_array_size(json_object_get(j, "problems")) == 0 &&
		    json_array_size(json_object_get(j, "warnings")) == 1, "json: lists");
		is_int(json_integer_value(json_object_get(j, "mesh_links")), 6, "json: mesh_links");
		json_decref(j);
		check_report_free(r);
	}
}

/* code's item in the problems (warning false) or warnings of r, or NULL */
static const struct check_item *
item(const struct check_report *r, bool warning, const char *code)
{
	return warning ? find(r->warnings, r->nwarnings, code) :
	    find(r->problems, r->nproblems, code);
}

/*
 * What each backend reads (mlx.launch's launch.py): launch_ring() takes
 * "ssh" and every IP of "ips", never "rdma"; launch_jaccl() takes
 * hosts[0].ips[0] and the rdma matrix. MLX's ring backend (ring.cpp) opens
 * AF_INET sockets and needs as many connections to the left (its own IPs)
 * as to the right (the next rank's).
 */
static void
test_backend_reads(void)
{
	static const char garbage_rdma[] =
	    "{\"backend\": \"ring\", \"hosts\": ["
	    "{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\"], \"rdma\": \"rdma_en2\"},"
	    "{\"ssh\": \"b\", \"ips\": [\"10.0.0.2\"], \"rdma\": [\"x y\", \";id\", 5, {}, [[1]], true]},"
	    "{\"ssh\": \"c\", \"ips\": [\"10.0.0.3\"], \"rdma\": 7}]}";
	static const char other_ips[] =
	    "{\"hosts\": ["
	    "{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\", \"10.0.0.999\"], \"rdma\": [null, \"rdma_en2\"]},"
	    "{\"ssh\": \"b\", \"ips\": [\"$(id)\", 3], \"rdma\": [\"rdma_en2\", null]}]}";
	static const char ring_v6[] =
	    "{\"hosts\": [{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\"]},"
	    "{\"ssh\": \"b\", \"ips\": [\"fd00::2\"]}, {\"ssh\": \"c\", \"ips\": [\"fd00::3\"]}]}";
	static const char ring_count[] =
	    "{\"hosts\": [{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\"]},"
	    "{\"ssh\": \"b\", \"ips\": [\"10.0.0.2\", \"10.0.1.2\"]}, {\"ssh\": \"c\", \"ips\": [\"10.0.0.3\"]},"
	    "{\"ssh\": \"d\", \"ips\": [\"10.0.0.4\"]}]}";
	struct check_report *r;
	const struct check_item *it;

	r = run(garbage_rdma, NULL, 32323);
	ok(r->valid && r->nproblems == 0 && strcmp(r->backend, "ring") == 0,
	    "ring: malformed rdma is no problem (%zu)", r->nproblems);
	ok(count(r->warnings, r->nwarnings, "bad-type") == 6 &&
	    count(r->warnings, r->nwarnings, "bad-name") == 2,
	    "ring: each malformed rdma value is a warning");
	it = item(r, true, "bad-name");
	ok(it && strstr(it->msg, "(the ring backend does not read rdma)") && it->nranks == 1 &&
	    it->ranks[0] == 1, "ring: the warning says why and names the host");
	check_report_free(r);
	r = run(garbage_rdma, "jaccl", 32323);
	ok(!r->valid && count(r->problems, r->nproblems, "bad-type") == 6 &&
	    count(r->problems, r->nproblems, "bad-name") == 2, "jaccl: the same are problems");
	check_report_free(r);

	r = run(other_ips, "jaccl", 32323);
	ok(r->valid && count(r->warnings, r->nwarnings, "bad-ip") == 2 &&
	    count(r->warnings, r->nwarnings, "bad-type") == 1,
	    "jaccl: garbage in ips other than rank 0's first is a warning");
	is_str(r->coordinator, "10.0.0.1:32323", "jaccl: the coordinator is rank 0's first IP");
	check_report_free(r);
	r = run(other_ips, "jaccl-ring", 32323);
	ok(r->valid, "jaccl-ring: the same");
	check_report_free(r);
	r = run(other_ips, "ring", 32323);
	ok(!r->valid && count(r->problems, r->nproblems, "bad-ip") == 2 &&
	    count(r->problems, r->nproblems, "bad-type") == 1, "ring: the same are problems");
	check_report_free(r);
	r = run("{\"hosts\": [{\"ssh\": \"a\", \"ips\": [\"10.0.0.256\"], \"rdma\": [null, \"e\"]},"
	    "{\"ssh\": \"b\", \"ips\": [\"10.0.0.2\"], \"rdma\": [\"e\", null]}]}", "jaccl", 32323);
	ok(!r->valid && item(r, false, "bad-ip") && r->coordinator == NULL,
	    "jaccl: rank 0's first IP with an octet over 255 is a problem");
	check_report_free(r);

	r = run(ring_v6, "ring", 32323);
	ok(!r->valid && count(r->problems, r->nproblems, "ring-not-ipv4") == 2,
	    "ring: every IPv6 address is a problem, not only rank 0's");
	check_report_free(r);
	r = run("{\"hosts\": [{\"ssh\": \"a\", \"ips\": [\"fd00::1\"]},"
	    "{\"ssh\": \"b\", \"ips\": [\"10.0.0.2\"]}]}", "ring", 32323);
	it = item(r, false, "ring-not-ipv4");
	ok(it && it->nranks == 1 && it->ranks[0] == 0, "ring: rank 0's IPv6 address");
	check_report_free(r);
	r = run(ring_v6, "jaccl", 32323);
	ok(item(r, false, "ring-not-ipv4") == NULL, "jaccl: other ranks' IPv6 does not matter");
	check_report_free(r);

	r = run(ring_count, "ring", 32323);
	it = item(r, false, "ring-ip-count");
	ok(!r->valid && it && it->nranks == 1 && it->ranks[0] == 1 &&
	    strstr(it->msg, "most list 1, but b lists 2") != NULL,
	    "ring: a host with more IPs than the others");
	check_report_free(r);
	r = run("{\"hosts\": [{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\", \"10.0.1.1\"]}]}", "ring",
	    32323);
	ok(r->valid, "ring: one host has no neighbour, any number of IPs");
	check_report_free(r);
	r = run("{\"hosts\": [{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\", \"10.0.1.1\"]},"
	    "{\"ssh\": \"b\", \"ips\": [\"10.0.0.2\", \"10.0.1.2\"]}]}", "ring", 32323);
	ok(r->valid, "ring: two IPs on every host");
	check_report_free(r);
	r = run("{\"hosts\": [{\"ssh\": \"a\", \"ips\": [\"mac-a.local\"]},"
	    "{\"ssh\": \"b\", \"ips\": [\"10.0.0.2\"]}]}", "ring", 32323);
	ok(r->valid && item(r, true, "ring-hostname"), "ring: a host name is a warning");
	check_report_free(r);
}

/* Ranks under one ssh name: every one of them, names in the order of first rank. */
static void
test_duplicates(void)
{
	struct check_report *r;
	struct jc_buf b = { 0 };

	r = run("[{\"ssh\": \"b\"}, {\"ssh\": \"a\"}, {\"ssh\": \"b\"}, {\"ssh\": \"c\"},"
	    "{\"ssh\": \"a\"}, {\"ssh\": \"b\"}, {\"ssh\": \"\"}, {\"ssh\": \"\"}]", "ring", 1);
	for (size_t i = 0; i < r->nwarnings; i++) {
		if (strcmp(r->warnings[i].code, "duplicate-host") != 0)
			continue;
		buf_printf(&b, "%s:", r->names[r->warnings[i].ranks[0]]);
		for (size_t k = 0; k < r->warnings[i].nranks; k++)
			buf_printf(&b, " %zu", r->warnings[i].ranks[k]);
		buf_puts(&b, ";");
	}
	is_str(b.data, "b: 0 2 5;a: 1 4;", "duplicate hosts: all ranks of each name, empty names aside");
	ok(r->nwarnings > 0 && strstr(r->warnings[0].msg, "b is listed 3 times (ranks 0 and 2 ...)"),
	    "duplicate hosts: the message names the first two ranks");
	buf_free(&b);
	check_report_free(r);
	/* under jaccl and jaccl-ring: an error (a rank pair on one Mac has no cable) */
	r = run("{\"backend\": \"jaccl\", \"hosts\": [{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\"], "
	    "\"rdma\": [null, \"rdma_en2\"]}, {\"ssh\": \"a\", \"ips\": [\"10.0.0.2\"], "
	    "\"rdma\": [\"rdma_en3\", null]}]}", NULL, 1);
	ok(!r->valid && item(r, false, "duplicate-host") && !item(r, true, "duplicate-host") &&
	    strstr(r->problems[0].msg, "a is listed 2 times (ranks 0 and 1): under jaccl two ranks "
	    "on one Mac would need a Thunderbolt cable from that Mac to itself") != NULL,
	    "duplicate hosts under jaccl: an error that says why");
	check_report_free(r);
	r = run("[{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\"]}, {\"ssh\": \"a\", \"ips\": [\"10.0.0.2\"]}]",
	    "jaccl-ring", 1);
	ok(!r->valid && item(r, false, "duplicate-host"), "duplicate hosts under --backend jaccl-ring: an error");
	check_report_free(r);
}

static bool
streq(const char *a, const char *b)
{
	return (a == NULL) == (b == NULL) && (a == NULL || strcmp(a, b) == 0);
}

/* Both readers give the same hostfile and the same diagnostics. */
static bool
same_reading(const char *text)
{
	struct hostfile_diags d1 = { 0 }, d2 = { 0 };
	struct jc_hostfile *a = NULL, *b = NULL;
	bool same;

	same = hostfile_parse(text, strlen(text), "t.json", &a, &d1) ==
	    hostfile_parse_alone(text, strlen(text), "t.json", &b, &d2);
	same = same && d1.n == d2.n && d1.nerrors == d2.nerrors && (a == NULL) == (b == NULL);
	for (size_t i = 0; same && i < d1.n; i++)
		same = strcmp(d1.v[i].msg, d2.v[i].msg) == 0 && d1.v[i].index == d2.v[i].index;
	if (same && a != NULL) {
		same = streq(a->backend, b->backend) && a->nhosts == b->nhosts &&
		    a->nenvs == b->nenvs && a->legacy_list == b->legacy_list;
		for (size_t i = 0; same && i < a->nenvs; i++)
			same = streq(a->envs[i], b->envs[i]);
		for (size_t i = 0; same && i < a->nhosts; i++) {
			const struct jc_hf_host *x = &a->hosts[i], *y = &b->hosts[i];

			same = streq(x->ssh, y->ssh) && x->nips == y->nips && x->nrdma == y->nrdma;
			for (size_t k = 0; same && k < x->nips; k++)
				same = streq(x->ips[k], y->ips[k]);
			for (size_t k = 0; same && k < x->nrdma; k++) {
				same = x->rdma[k].n == y->rdma[k].n &&
				    x->rdma[k].is_list == y->rdma[k].is_list;
				for (size_t e = 0; same && e < x->rdma[k].n; e++)
					same = streq(x->rdma[k].names[e], y->rdma[k].names[e]);
			}
		}
	}
	jc_hostfile_free(a);
	jc_hostfile_free(b);
	hostfile_diags_free(&d1);
	hostfile_diags_free(&d2);
	return same;
}

/* hostfile_parse_alone(): jansson's values in an arena during the call. */
static void
test_alone(void)
{
	static const char *const texts[] = {
		docs,
		"{\"backend\": \"jaccl\", \"envs\": [\"A=1\", 2], \"hosts\": ["
		"{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\"], \"rdma\": [null, [\"e2\", \"e3\"]]},"
		"{\"ssh\": \"b c\", \"ips\": [\"x;y\", 1], \"rdma\": [\"e2\", null], \"k\": 1}]}",
		"{\"hosts\": [{\"ssh\": \"a\"}, {\"ssh\": \"a\"}], \"hosts\": []}",
		"{\"hosts\": [{\"ssh\": \"a\", \"ips\": [\"10.0.0.1\",",
		"[1, \"x\", {\"ssh\": \"\u00e9\"}]",
		"  ",
	};
	json_malloc_t m0, m1;
	json_free_t f0, f1;
	struct hostfile_diags d = { 0 };
	struct jc_hostfile *hf = NULL;
	json_t *before = json_pack("{s:[i,s]}", "k", 1, "made before");
	char *big;
	bool all = true;

	json_get_alloc_funcs(&m0, &f0);
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (!same_reading(texts[i])) {
			all = false;
			diag("read differently: %s", texts[i]);
		}
	ok(all, "both readers read the same files and find the same problems");
	big = same_device_mesh(60, "jaccl", "rdma_en2");
	ok(same_reading(big), "both readers read a large matrix alike (several arena blocks)");
	free(big);
	json_get_alloc_funcs(&m1, &f1);
	ok(m0 == m1 && f0 == f1, "jansson's allocator is restored after a parse");
	hostfile_parse_alone("{\"hosts\": [}", 13, "t.json", &hf, &d);
	json_get_alloc_funcs(&m1, &f1);
	ok(hf == NULL && d.nerrors == 1 && m0 == m1 && f0 == f1,
	    "and after a syntax error");
	hostfile_diags_free(&d);
	is_str(json_string_value(json_array_get(json_object_get(before, "k"), 1)), "made before",
	    "values made before the parse are intact");
	json_decref(before);	/* freed with jansson's own free: would crash if swapped */
}

static void
test_mlx(void)
{
	struct jc_hostfile *hf = NULL;
	struct jc_err err = { 0 };
	char path[] = "/tmp/jc-test-check-XXXXXX";
	int fd;

	ok(hostfile_read_mlx("/nonexistent/h.json", &hf, &err) == -ENOENT && hf == NULL,
	    "--hostfile: missing file");
	is_str(err.msg, "Hostfile /nonexistent/h.json doesn't exist", "mlx's message");
	if ((fd = mkstemp(path)) < 0) {
		ok(0, "mkstemp");
		return;
	}
	if (write(fd, "{\"hosts\": [{\"ips\": []}]}", 24) != 24)
		ok(0, "write");
	close(fd);
	ok(hostfile_read_mlx(path, &hf, &err) == -EINVAL && hf == NULL, "--hostfile: no ssh");
	ok(strncmp(err.msg, "Failed to parse hostfile ", 25) == 0 &&
	    strstr(err.msg, "(hosts[0]: no \"ssh\" name: every host needs one)") != NULL,
	    "mlx's message with the reason: %s", err.msg);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, "{\"envs\": [\"bad\"], \"hosts\": [{\"ssh\": \"a\"}]}", 42) != 42)
		ok(0, "rewrite");
	close(fd);
	ok(hostfile_read_mlx(path, &hf, &err) == 0 && hf && hf->nhosts == 1 &&
	    strcmp(hf->hosts[0].ssh, "a") == 0, "--hostfile: envs do not matter");
	jc_hostfile_free(hf);
	unlink(path);
}

/* ssh names in UTF-8: letters beyond ASCII pass, spaces, controls and bidi marks do not */
static void
test_utf8_names(void)
{
	static const struct {
		const char *s;
		bool want;
	} v[] = {
		{ "m\xc3\xa4" "c1", true },			/* mäc1 */
		{ "j\xc3\xbcrgen@studio-2:2222", true },
		{ "\xe6\x9d\xb1\xe4\xba\xac-mini", true },	/* Tokyo */
		{ "mac\xf0\x9f\x8d\x8e", true },		/* U+1F34E */
		{ "mac\xc2\xa0" "2", false },			/* no-break space */
		{ "mac\xe2\x80\xae" "2", false },		/* right-to-left override */
		{ "mac\xe2\x80\x8b" "2", false },		/* zero-width space */
		{ "mac\xc2\x85", false },			/* C1 control */
		{ "mac\xed\xa0\x80", false },		/* a surrogate */
		{ "mac\xc0\xaf", false },			/* overlong '/' */
		{ "mac\xe4\xba", false },			/* truncated */
		{ "m\xc3\xa4" "c 1", false },
		{ "m\xc3\xa4" "c;1", false },
		{ "-m\xc3\xa4" "c", false },
	};
	char *p;

	for (size_t k = 0; k < JC_ARRAY_LEN(v); k++) {
		p = hostfile_printable(v[k].s, 0);
		ok(hostfile_ssh_ok(v[k].s) == v[k].want, "ssh name '%s': %s", p,
		    v[k].want ? "accepted" : "refused");
		free(p);
	}
	p = hostfile_printable("mac\xe2\x80\xae" "2 m\xc3\xa4" "c \xc2\x85", 0);
	is_str(p, "mac\\u202e2 m\xc3\xa4" "c \\u0085", "a message shows a bidi mark or a control as its number, letters as they are");
	free(p);
}

int
main(void)
{
	(void)plan;
	(void)skip_all;
	test_reader();
	test_names();
	test_rules();
	test_backend_reads();
	test_duplicates();
	test_utf8_names();
	test_alone();
	test_mlx();
	return done_testing();
}
