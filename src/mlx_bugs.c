/* SPDX-License-Identifier: MIT */
/*
 * The table of known MLX bugs (mlx_bugs.h): its reader and the version
 * order it is matched with.
 */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mlx_bugs.h"
#include "util.h"

#define VER_PARTS 8

/* A version cut into its release numbers and its phase. */
struct mlx_ver {
	long rel[VER_PARTS];
	size_t nrel;
	int phase;		/* 0 dev, 1 a, 2 b, 3 rc, 4 the release, 5 post */
	long pnum;
};

static bool
ver_num(const char **p, long *out)
{
	char *end;

	if (!isdigit((unsigned char)**p))
		return false;
	errno = 0;
	*out = strtol(*p, &end, 10);
	if (errno != 0 || *out < 0)
		return false;
	*p = end;
	return true;
}

static bool
ver_parse(const char *s, struct mlx_ver *v)
{
	static const struct { const char *w; int phase; } ph[] = {
		{ ".dev", 0 }, { "dev", 0 }, { ".post", 5 }, { "post", 5 },
		{ "rc", 3 }, { "a", 1 }, { "b", 2 },
	};
	const char *p = s;

	memset(v, 0, sizeof(*v));
	v->phase = 4;
	do {
		if (v->nrel == VER_PARTS || !ver_num(&p, &v->rel[v->nrel++]))
			return false;
	} while (*p == '.' && isdigit((unsigned char)p[1]) && p++);
	for (size_t k = 0; *p != '\0' && *p != '+' && k < JC_ARRAY_LEN(ph); k++) {
		size_t l = strlen(ph[k].w);

		if (strncmp(p, ph[k].w, l) != 0)
			continue;
		p += l;
		v->phase = ph[k].phase;
		if (*p != '\0' && *p != '+' && !ver_num(&p, &v->pnum))
			return false;
		break;
	}
	return *p == '\0' || (*p == '+' && p[1] != '\0');
}

int
mlx_version_cmp(const char *a, const char *b, bool *ok)
{
	struct mlx_ver x, y;

	if (!ver_parse(a, &x) || !ver_parse(b, &y)) {
		if (ok != NULL)
			*ok = false;
		return strcmp(a, b);
	}
	if (ok != NULL)
		*ok = true;
	for (size_t k = 0; k < x.nrel || k < y.nrel; k++) {
		long l = k < x.nrel ? x.rel[k] : 0, r = k < y.nrel ? y.rel[k] : 0;

		if (l != r)
			return l < r ? -1 : 1;
	}
	if (x.phase != y.phase)
		return x.phase < y.phase ? -1 : 1;
	return x.pnum < y.pnum ? -1 : x.pnum > y.pnum;
}

bool
mlx_bug_affects(const struct mlx_bug *bug, const char *version)
{
	bool ok1, ok2;
	int lo = mlx_version_cmp(version, bug->first, &ok1);
	int hi = mlx_version_cmp(version, bug->last, &ok2);

	return ok1 && ok2 && lo >= 0 && hi <= 0;
}

void
mlx_bugs_free(struct mlx_bugs *b)
{
	for (size_t k = 0; k < b->n; k++) {
		free(b->v[k].issue);
		free(b->v[k].backend);
		free(b->v[k].first);
		free(b->v[k].last);
		free(b->v[k].fixed_in);
		free(b->v[k].symptom);
	}
	free(b->v);
	b->v = NULL;
	b->n = 0;
}

/* Printable text on one line (a message shows it as it is). */
static bool
one_line(const char *s)
{
	for (; *s != '\0'; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

static int
bug_read(json_t *o, size_t k, const char *name, struct mlx_bug *bug, struct jc_err *err)
{
	static const char *const keys[] = { "issue", "backend", "first", "last", "fixed_in",
		"symptom" };
	char **dst[] = { &bug->issue, &bug->backend, &bug->first, &bug->last, &bug->fixed_in,
		&bug->symptom };
	const char *key;
	json_t *val;
	bool ok;

	if (!json_is_object(o))
		return jc_fail(err, -EINVAL, "%s: bugs[%zu] is not an object", name, k);
	json_object_foreach(o, key, val) {
		size_t x = 0;

		while (x < JC_ARRAY_LEN(keys) && strcmp(keys[x], key) != 0)
			x++;
		if (x == JC_ARRAY_LEN(keys))
			return jc_fail(err, -EINVAL, "%s: bugs[%zu]: unknown member \"%s\"", name,
			    k, key);
	}
	for (size_t x = 0; x < JC_ARRAY_LEN(keys); x++) {
		const char *s = json_string_value(json_object_get(o, keys[x]));

		if (s == NULL || *s == '\0' || !one_line(s))
			return jc_fail(err, -EINVAL, "%s: bugs[%zu].%s: %s", name, k, keys[x],
			    json_object_get(o, keys[x]) ? "not a non-empty line of text" :
			    "missing");
		*dst[x] = xstrdup(s);
	}
	if (mlx_version_cmp(bug->first, bug->last, &ok) > 0 || !ok ||
	    mlx_version_cmp(bug->last, bug->fixed_in, &ok) >= 0 || !ok)
		return jc_fail(err, -EINVAL, "%s: bugs[%zu] (%s): the versions must be read as "
		    "first <= last < fixed_in (\"%s\", \"%s\", \"%s\")", name, k, bug->issue,
		    bug->first, bug->last, bug->fixed_in);
	return 0;
}

int
mlx_bugs_parse(const char *text, size_t len, const char *name, struct mlx_bugs *out,
    struct jc_err *err)
{
	json_error_t je;
	json_t *root = json_loadb(text, len, 0, &je), *bugs;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (root == NULL)
		return jc_fail(err, -EINVAL, "%s:%d:%d: %s", name, je.line, je.column, je.text);
	if (!json_is_object(root) || json_integer_value(json_object_get(root, "version")) != 1 ||
	    !json_is_array(bugs = json_object_get(root, "bugs"))) {
		json_decref(root);
		return jc_fail(err, -EINVAL, "%s: not a table of MLX bugs (an object with "
		    "\"version\": 1 and a \"bugs\" array)", name);
	}
	out->v = xcalloc(json_array_size(bugs) + 1, sizeof(*out->v));
	for (size_t k = 0; k < json_array_size(bugs) && rc == 0; k++) {
		rc = bug_read(json_array_get(bugs, k), k, name, &out->v[k], err);
		out->n = k + 1;
	}
	json_decref(root);
	if (rc != 0)
		mlx_bugs_free(out);
	return rc;
}

static struct mlx_bugs builtin;
static struct jc_err builtin_why;
static bool builtin_ok;
static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void
builtin_read(void)
{
	builtin_ok = mlx_bugs_parse(mlx_bugs_text, strlen(mlx_bugs_text), "mlx-bugs.json",
	    &builtin, &builtin_why) == 0;
}

const struct mlx_bugs *
mlx_bugs_builtin(struct jc_err *err)
{
	pthread_once(&builtin_once, builtin_read);
	if (!builtin_ok) {
		if (err != NULL)
			*err = builtin_why;
		return NULL;
	}
	return &builtin;
}
