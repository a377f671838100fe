/* SPDX-License-Identifier: MIT */
/*
 * The doctor's own outputs (see parse_sw.h). Formats:
 *   pmset -g: "System-wide power settings:" / "Currently in use:" then one
 *     " key   value" line per setting; " sleep  N" may carry a trailing
 *     "(sleep prevented by ...)".
 *   socketfilterfw --getglobalstate: "Firewall is disabled. (State = 0)",
 *     "Firewall is enabled. (State = 1)", "Firewall is blocking all
 *     non-essential incoming connections. (State = 2)" (older releases say
 *     "enabled" with State = 2): the number decides.
 *   route -n get default: "  interface: en0" among "key: value" lines, or
 *     "route: writing to routing socket: not in table" and exit 1.
 *   ip route show default: "default via G dev IF ..." lines.
 */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "parse_state.h"
#include "parse_sw.h"

#define ENV_VALUE_MAX 200

/* The next line of s[0..len) from *pos (without its '\n'), or NULL at the end. */
static char *
next_line(const char *s, size_t len, size_t *pos)
{
	size_t b = *pos, e;

	if (b >= len)
		return NULL;
	for (e = b; e < len && s[e] != '\n'; e++)
		;
	*pos = e + 1;
	return xstrndup(s + b, e - b);
}

static const char *
skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

long
parse_pmset_sleep(const char *s, size_t len)
{
	size_t pos = 0;
	long v = -1;
	char *line;

	while (v < 0 && (line = next_line(s, len, &pos)) != NULL) {
		const char *p = skip_ws(line), *q;
		char num[16];
		size_t n;

		/* " sleep  N": the word "sleep" alone, then a number */
		if (strncmp(p, "sleep", 5) == 0 && (p[5] == ' ' || p[5] == '\t')) {
			q = skip_ws(p + 5);
			for (n = 0; isdigit((unsigned char)q[n]) && n < sizeof(num) - 1; n++)
				num[n] = q[n];
			num[n] = '\0';
			if (n > 0 && n < 10 && (q[n] == '\0' || q[n] == ' ' || q[n] == '\t' ||
			    q[n] == '\r'))
				v = strtol(num, NULL, 10);
		}
		free(line);
	}
	return v;
}

int
parse_fw_state(const char *s, size_t len)
{
	static const char key[] = "(State = ";
	size_t kl = sizeof(key) - 1;

	for (size_t i = 0; i + kl + 2 <= len; i++)
		if (memcmp(s + i, key, kl) == 0 && s[i + kl] >= '0' && s[i + kl] <= '2' &&
		    s[i + kl + 1] == ')')
			return s[i + kl] - '0';
	return -1;
}

bool
parse_fw_apps(const char *s, size_t len, char **jc_path, struct jc_strv *allowed)
{
	size_t pos = 0;
	char *line, *app = NULL;
	bool listed = false;

	*jc_path = NULL;
	while ((line = next_line(s, len, &pos)) != NULL) {
		const char *p = skip_ws(line), *c;

		line[strcspn(line, "\r")] = '\0';
		listed |= strncmp(p, "Total number of apps = ", 23) == 0;
		if (strncmp(p, "jaccl-config at ", 16) == 0 && *jc_path == NULL &&
		    jc_plain_word(p + 16)) {
			*jc_path = xstrdup(p + 16);
		} else if (isdigit((unsigned char)*p) && (c = strstr(p, " : ")) != NULL &&
		    strspn(p, "0123456789") == (size_t)(c - p)) {
			free(app);
			app = jc_plain_word(c + 3) ? xstrdup(c + 3) : NULL;
		} else if (app != NULL && strcmp(p, "(Allow incoming connections)") == 0) {
			strv_push_owned(allowed, app);
			app = NULL;
		} else {
			free(app);
			app = NULL;
		}
		free(line);
	}
	free(app);
	return listed;
}

static bool
env_name_ok(const char *name, size_t n)
{
	if (!((n > 4 && strncmp(name, "MLX_", 4) == 0) ||
	    (n > 6 && strncmp(name, "JACCL_", 6) == 0)) || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(isalnum((unsigned char)name[i]) || name[i] == '_'))
			return false;
	return true;
}

static int
cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void
parse_env_mlx(const char *s, size_t len, struct jc_strv *out)
{
	size_t pos = 0, first = out->n;
	char *line;

	while ((line = next_line(s, len, &pos)) != NULL) {
		char *eq = strchr(line, '=');
		size_t vl;

		if (eq != NULL && env_name_ok(line, (size_t)(eq - line))) {
			vl = strlen(eq + 1);
			if (vl > 0 && eq[vl] == '\r')
				eq[vl--] = '\0';
			if (vl > ENV_VALUE_MAX)
				eq[1 + ENV_VALUE_MAX] = '\0';
			for (char *p = eq + 1; *p; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f)
					*p = '?';
			strv_push(out, line);
		}
		free(line);
	}
	if (out->n > first)
		qsort(out->v + first, out->n - first, sizeof(*out->v), cmp_str);
}

/* A version word: digits, letters, '.', '+', '-', at most 32 bytes. */
static char *
version_word(const char *p)
{
	size_t n = 0;

	p = skip_ws(p);
	while (n < 33 && (isalnum((unsigned char)p[n]) || p[n] == '.' || p[n] == '+' ||
	    p[n] == '-'))
		n++;
	if (n == 0 || n > 32 || !isdigit((unsigned char)p[0]) || (p[n] != '\0' &&
	    p[n] != ' ' && p[n] != '\r'))
		return NULL;
	return xstrndup(p, n);
}

int
parse_python_mlx(const char *s, size_t len, char **python, char **mlx_version)
{
	size_t pos = 0;
	int mlx = JC_UNKNOWN;
	char *line;

	*python = *mlx_version = NULL;
	while ((line = next_line(s, len, &pos)) != NULL) {
		if (strncmp(line, "python ", 7) == 0 && *python == NULL) {
			*python = version_word(line + 7);
		} else if (strncmp(line, "mlx ", 4) == 0 && mlx == JC_UNKNOWN) {
			const char *p = skip_ws(line + 4);

			if (strcmp(p, "-") == 0 || strcmp(p, "-\r") == 0)
				mlx = JC_NO;
			else if ((*mlx_version = version_word(p)) != NULL)
				mlx = JC_YES;
		}
		free(line);
	}
	return mlx;
}

void
parse_python_tried(const char *s, size_t len, struct jc_strv *tried, char **path)
{
	size_t pos = 0;
	char *line;

	*path = NULL;
	while ((line = next_line(s, len, &pos)) != NULL) {
		char *c, *w = line + 6;

		line[strcspn(line, "\r")] = '\0';
		if (strncmp(line, "tried ", 6) == 0 && (c = strrchr(w, ':')) != NULL) {
			*c++ = '\0';
			if (jc_plain_word(w) && strcmp(c, "ok") == 0 && *path == NULL)
				*path = xstrdup(w);
			else if (jc_plain_word(w) && (strcmp(c, "missing") == 0 ||
			    strcmp(c, "stub") == 0))
				strv_push_owned(tried, xasprintf("%s:%s", w, c));
		}
		free(line);
	}
}

int
parse_route_default_macos(const char *s, int status, char **iface)
{
	size_t len = strlen(s), pos = 0;
	bool dest_default = false;
	char *line;

	*iface = NULL;
	if (status != 0)
		return strstr(s, "not in table") != NULL ? JC_YES : JC_UNKNOWN;
	while ((line = next_line(s, len, &pos)) != NULL) {
		const char *p = skip_ws(line);

		if (strncmp(p, "destination: default", 20) == 0)
			dest_default = true;
		if (strncmp(p, "interface:", 10) == 0 && *iface == NULL) {
			char *w = xstrdup(skip_ws(p + 10));

			w[strcspn(w, " \t\r")] = '\0';
			if (jc_iface_name_ok(w))
				*iface = w;
			else
				free(w);
		}
		free(line);
	}
	if (!dest_default || *iface == NULL) {
		free(*iface);
		*iface = NULL;
		return JC_UNKNOWN;
	}
	return JC_YES;
}

int
parse_route_default_linux(const char *s, int status, char **iface)
{
	size_t len = strlen(s), pos = 0;
	char *line;

	*iface = NULL;
	if (status != 0)
		return JC_UNKNOWN;
	while (*iface == NULL && (line = next_line(s, len, &pos)) != NULL) {
		char *dev = strstr(line, " dev ");

		if (strncmp(line, "default ", 8) == 0 && dev != NULL) {
			char *w = xstrdup(dev + 5);

			w[strcspn(w, " \t\r")] = '\0';
			if (jc_iface_name_ok(w))
				*iface = w;
			else
				free(w);
		}
		free(line);
	}
	return JC_YES;	/* no default line: no default route */
}

/* The output when it ran (exit status not 126/127), else NULL with a reason noted. */
static const struct jc_raw_out *
usable(const struct jc_raw *raw, const char *name, struct jc_sw *sw)
{
	const struct jc_raw_out *o = raw_get(raw, name);

	if (o == NULL)
		return NULL;
	if (o->status == 126 || o->status == 127) {
		strv_push_owned(&sw->why, xasprintf("%s: the command is missing (exit %d)", name,
		    o->status));
		return NULL;
	}
	return o;
}

void
sw_from_raw(const struct jc_raw *raw, struct jc_sw *sw)
{
	const struct jc_raw_out *o;

	memset(sw, 0, sizeof(*sw));
	sw->sleep = -1;
	sw->fw_state = -1;
	sw->mlx = JC_UNKNOWN;
	sw->route_known = JC_UNKNOWN;
	sw->svc_known = JC_UNKNOWN;
	sw->install = JC_UNKNOWN;
	sw->gathered = raw_get(raw, SW_ENV) != NULL || raw_get(raw, SW_PYTHON) != NULL;
	if ((o = usable(raw, SW_PMSET, sw)) != NULL &&
	    (sw->sleep = parse_pmset_sleep(o->data, o->len)) < 0)
		strv_push_owned(&sw->why, xasprintf("%s: no sleep setting (exit %d)", SW_PMSET,
		    o->status));
	if ((o = usable(raw, SW_FIREWALL, sw)) != NULL &&
	    (sw->fw_state = parse_fw_state(o->data, o->len)) < 0)
		strv_push_owned(&sw->why, xasprintf("%s: no \"(State = N)\" (exit %d)",
		    SW_FIREWALL, o->status));
	if (o != NULL)
		sw->fw_listed = parse_fw_apps(o->data, o->len, &sw->jc_path, &sw->fw_allowed);
	if ((o = usable(raw, SW_ENV, sw)) != NULL && o->status == 0) {
		sw->env_known = true;
		parse_env_mlx(o->data, o->len, &sw->env);
	}
	if ((o = usable(raw, SW_PYTHON, sw)) != NULL) {
		sw->mlx = parse_python_mlx(o->data, o->len, &sw->python, &sw->mlx_version);
		parse_python_tried(o->data, o->len, &sw->python_tried, &sw->python_path);
		if (sw->python == NULL)
			strv_push_owned(&sw->why, xasprintf("%s: python3 did not run (exit %d)",
			    SW_PYTHON, o->status));
	}
	if ((o = usable(raw, SW_ROUTE_MACOS, sw)) != NULL)
		sw->route_known = parse_route_default_macos(o->data, o->status, &sw->default_if);
	else if ((o = usable(raw, SW_ROUTE_LINUX, sw)) != NULL)
		sw->route_known = parse_route_default_linux(o->data, o->status, &sw->default_if);
	if ((o = usable(raw, SW_INSTALL, sw)) != NULL &&
	    (sw->install = parse_install(o->data, o->len, &sw->install_path,
	    &sw->install_version)) == JC_UNKNOWN)
		strv_push_owned(&sw->why, xasprintf("%s: neither a path nor \"-\" (exit %d)",
		    SW_INSTALL, o->status));
	if ((o = usable(raw, SW_NETSVC, sw)) != NULL) {
		parse_netsvc_info(o->data, o->len, &sw->svcs, &sw->nsvcs, &sw->info, &sw->ninfo);
		/* a listing names at least the services it has; none: not understood */
		if (sw->nsvcs > 0)
			sw->svc_known = JC_YES;
		else
			strv_push_owned(&sw->why, xasprintf("%s: no network service listed (exit %d)",
			    SW_NETSVC, o->status));
	}
}

/* The value after "key: " on the line at p (up to end), a new string, or NULL. */
static char *
field(const char *p, const char *end, const char *key)
{
	size_t kl = strlen(key);
	const char *v;

	if ((size_t)(end - p) < kl || memcmp(p, key, kl) != 0)
		return NULL;
	v = p + kl;
	while (v < end && *v == ' ')
		v++;
	while (end > v && (end[-1] == ' ' || end[-1] == '\r'))
		end--;
	return xstrndup(v, (size_t)(end - v));
}

size_t
parse_netsvc_info(const char *s, size_t len, struct jc_netsvc **svcs, size_t *nsvcs,
    struct jc_svcinfo **info, size_t *ninfo)
{
	const char *end = s + len, *p = s, *blk = NULL;
	struct jc_svcinfo *cur = NULL;
	size_t left = 0;
	char *order;

	/* the order ends where the first "### " line begins */
	for (const char *q = s; q < end; q = memchr(q, '\n', (size_t)(end - q)) ?
	    (const char *)memchr(q, '\n', (size_t)(end - q)) + 1 : end)
		if ((size_t)(end - q) >= 4 && memcmp(q, "### ", 4) == 0) {
			blk = q;
			break;
		}
	order = xstrndup(s, (size_t)((blk ? blk : end) - s));
	left += parse_netsvc_order(order, svcs, nsvcs);
	free(order);
	for (p = blk ? blk : end; p < end;) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end;
		char *v;

		if ((size_t)(le - p) >= 4 && memcmp(p, "### ", 4) == 0) {
			char *name = xstrndup(p + 4, (size_t)(le - p - 4));

			cur = NULL;
			if (!jc_service_name_ok(name) || svcinfo_find(*info, *ninfo, name) != NULL) {
				left++;
				free(name);
			} else {
				*info = xreallocarray(*info, *ninfo + 1, sizeof(**info));
				cur = &(*info)[(*ninfo)++];
				memset(cur, 0, sizeof(*cur));
				cur->name = name;
			}
		} else if (cur != NULL) {
			if ((size_t)(le - p) == 20 && memcmp(p, "Manual Configuration", 20) == 0)
				cur->manual = true;
			else if ((v = field(p, le, "IP address:")) != NULL) {
				if (cur->ip == NULL && jc_ipv4_ok(v))
					cur->ip = v;
				else
					free(v), left++;
			} else if ((v = field(p, le, "Subnet mask:")) != NULL) {
				if (cur->mask == NULL && jc_ipv4_ok(v))
					cur->mask = v;
				else
					free(v), left++;
			}
		}
		p = nl ? nl + 1 : end;
	}
	return left;
}

void
svcinfo_free(struct jc_svcinfo *info, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(info[i].name);
		free(info[i].ip);
		free(info[i].mask);
	}
	free(info);
}

const struct jc_svcinfo *
svcinfo_find(const struct jc_svcinfo *info, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(info[i].name, name) == 0)
			return &info[i];
	return NULL;
}

/* The bytes [s, e) as a new string, at most 300, unprintable ones as '?'. */
static char *
printable_line(const char *s, const char *e)
{
	size_t n = (size_t)(e - s) > 300 ? 300 : (size_t)(e - s);
	char *p = xstrndup(s, n);

	for (char *q = p; *q; q++)
		if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e)
			*q = '?';
	return p;
}

int
parse_install(const char *s, size_t len, char **path, char **version)
{
	const char *end = s + len, *nl = memchr(s, '\n', len), *v, *ve;

	*path = *version = NULL;
	if (nl == NULL)
		nl = end;
	if (nl - s == 1 && s[0] == '-')
		return JC_NO;
	if (nl == s || s[0] != '/')
		return JC_UNKNOWN;
	*path = printable_line(s, nl);
	v = nl < end ? nl + 1 : end;
	ve = memchr(v, '\n', (size_t)(end - v));
	*version = printable_line(v, ve != NULL ? ve : end);
	return JC_YES;
}

void
sw_clear(struct jc_sw *sw)
{
	free(sw->install_path);
	free(sw->install_version);
	free(sw->python);
	free(sw->python_path);
	free(sw->jc_path);
	strv_free(&sw->fw_allowed);
	strv_free(&sw->python_tried);
	free(sw->mlx_version);
	strv_free(&sw->env);
	free(sw->default_if);
	netsvc_free(sw->svcs, sw->nsvcs);
	svcinfo_free(sw->info, sw->ninfo);
	strv_free(&sw->why);
	memset(sw, 0, sizeof(*sw));
}
