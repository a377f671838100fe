/* SPDX-License-Identifier: MIT */
/*
 * Unit tests of the table of known MLX bugs: the order of MLX versions as
 * pip sorts them, the table built into the binary is data/mlx-bugs.json of
 * the tree and every entry reads, the ranges of the entries as the issues
 * give them (MLX #4443: 0.32.1 and 0.32.2, not 0.32.0), and bad tables
 * refused with the entry and member named.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "mlx_bugs.h"
#include "util.h"

static void
test_order(void)
{
	static const struct {
		const char *a, *b;
		int want;
	} v[] = {
		{ "0.32.1", "0.32.1", 0 },
		{ "0.32.1", "0.32.2", -1 },
		{ "0.32.10", "0.32.9", 1 },
		{ "0.32", "0.32.0", 0 },
		{ "1.0.0", "0.99.99", 1 },
		{ "0.32.2.dev20260822", "0.32.2", -1 },
		{ "0.32.2.dev20260822+846d176", "0.32.1", 1 },
		{ "0.32.2rc1", "0.32.2", -1 },
		{ "0.32.2rc1", "0.32.2.dev3", 1 },
		{ "0.32.2a1", "0.32.2b1", -1 },
		{ "0.32.2.post1", "0.32.2", 1 },
		{ "0.32.2+local", "0.32.2", 0 },
	};
	bool okv;

	for (size_t k = 0; k < JC_ARRAY_LEN(v); k++) {
		int c = mlx_version_cmp(v[k].a, v[k].b, &okv);

		ok(okv && (c > 0) - (c < 0) == v[k].want, "%s %s %s", v[k].a,
		    v[k].want < 0 ? "<" : v[k].want > 0 ? ">" : "==", v[k].b);
	}
	mlx_version_cmp("0.32.x", "0.32.1", &okv);
	ok(!okv, "0.32.x is not a version");
	mlx_version_cmp("", "0.32.1", &okv);
	ok(!okv, "nor is the empty string");
	mlx_version_cmp("0.32.1+", "0.32.1", &okv);
	ok(!okv, "nor a version with an empty local part");
}

static const struct mlx_bug *
find(const struct mlx_bugs *t, const char *issue)
{
	for (size_t k = 0; t != NULL && k < t->n; k++)
		if (strcmp(t->v[k].issue, issue) == 0)
			return &t->v[k];
	return NULL;
}

static void
test_table(const char *srcdir)
{
	char *path = xasprintf("%s/data/mlx-bugs.json", srcdir), *text = NULL;
	size_t len = 0;
	struct jc_err err = { 0 };
	const struct mlx_bugs *t = mlx_bugs_builtin(&err);
	const struct mlx_bug *b;
	struct mlx_bugs file;

	ok(t != NULL && t->n > 0, "the built-in table reads: %s", t ? "yes" : err.msg);
	is_int(jc_read_file(path, 1 << 20, &text, &len, &err), 0, "data/mlx-bugs.json reads");
	ok(text != NULL && strcmp(text, mlx_bugs_text) == 0,
	    "the built-in table is data/mlx-bugs.json of this tree, byte for byte");
	is_int(text ? mlx_bugs_parse(text, len, path, &file, &err) : -1, 0, "and parses");
	mlx_bugs_free(&file);
	b = find(t, "ml-explore/mlx#4443");
	ok(b != NULL && strcmp(b->backend, "jaccl-ring") == 0,
	    "MLX #4443 is in the table, on the jaccl-ring backend");
	if (b != NULL) {
		ok(!mlx_bug_affects(b, "0.32.0"), "#4443: 0.32.0 (before the ring refactor) is not affected");
		ok(!mlx_bug_affects(b, "0.31.2"), "#4443: 0.31.2 is not");
		ok(mlx_bug_affects(b, "0.32.1"), "#4443: 0.32.1 is");
		ok(mlx_bug_affects(b, "0.32.2"), "#4443: 0.32.2 is");
		ok(mlx_bug_affects(b, "0.32.2.dev20260822+846d176"),
		    "#4443: a build between the two (as MLX's JACCL at 846d176) is");
		ok(!mlx_bug_affects(b, "0.32.4"), "#4443: %s, the release to install, is not",
		    b->fixed_in);
		ok(!mlx_bug_affects(b, "0.33.0"), "#4443: 0.33.0 is not");
		ok(!mlx_bug_affects(b, "garbage"), "#4443: an unreadable version never matches");
	}
	free(text);
	free(path);
}

static void
test_bad(void)
{
	static const struct {
		const char *doc, *want;
	} bad[] = {
		{ "[]", "not a table of MLX bugs" },
		{ "{\"version\": 2, \"bugs\": []}", "not a table of MLX bugs" },
		{ "{\"version\": 1, \"bugs\": [", "t.json:1:" },
		{ "{\"version\": 1, \"bugs\": [1]}", "t.json: bugs[0] is not an object" },
		{ "{\"version\": 1, \"bugs\": [{\"issue\": \"x#1\", \"backend\": \"ring\", "
		  "\"first\": \"0.1\", \"last\": \"0.2\", \"fixed_in\": \"0.3\"}]}",
		  "t.json: bugs[0].symptom: missing" },
		{ "{\"version\": 1, \"bugs\": [{\"issue\": \"x#1\", \"backend\": \"ring\", "
		  "\"first\": \"0.1\", \"last\": \"0.2\", \"fixed_in\": 3, \"symptom\": \"s\"}]}",
		  "t.json: bugs[0].fixed_in: not a non-empty line of text" },
		{ "{\"version\": 1, \"bugs\": [{\"issue\": \"x#1\", \"backend\": \"ring\", "
		  "\"first\": \"0.2\", \"last\": \"0.1\", \"fixed_in\": \"0.3\", \"symptom\": \"s\"}]}",
		  "bugs[0] (x#1): the versions must be read as first <= last < fixed_in" },
		{ "{\"version\": 1, \"bugs\": [{\"issue\": \"x#1\", \"backend\": \"ring\", "
		  "\"first\": \"0.1\", \"last\": \"0.2\", \"fixed_in\": \"0.2\", \"symptom\": \"s\"}]}",
		  "first <= last < fixed_in" },
		{ "{\"version\": 1, \"bugs\": [{\"issue\": \"x#1\", \"backend\": \"ring\", "
		  "\"first\": \"0.1\", \"last\": \"0.2\", \"fixed_in\": \"0.3\", \"symptom\": \"s\", "
		  "\"fixd_in\": \"0.3\"}]}", "bugs[0]: unknown member \"fixd_in\"" },
		{ "{\"version\": 1, \"bugs\": [{\"issue\": \"x#1\", \"backend\": \"ring\", "
		  "\"first\": \"0.1\", \"last\": \"0.2\", \"fixed_in\": \"0.3\", \"symptom\": "
		  "\"two\\nlines\"}]}", "bugs[0].symptom: not a non-empty line of text" },
	};

	for (size_t k = 0; k < JC_ARRAY_LEN(bad); k++) {
		struct mlx_bugs t;
		struct jc_err err = { 0 };
		int rc = mlx_bugs_parse(bad[k].doc, strlen(bad[k].doc), "t.json", &t, &err);

		ok(rc < 0 && strstr(err.msg, bad[k].want) != NULL && t.n == 0 && t.v == NULL,
		    "refused, nothing kept: %s", err.msg);
	}
}

int
main(void)
{
	const char *srcdir = getenv("top_srcdir");

	test_order();
	test_table(srcdir ? srcdir : ".");
	test_bad();
	return done_testing();
}
