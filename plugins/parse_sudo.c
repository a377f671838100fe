/* SPDX-License-Identifier: MIT */
/*
 * sudo's long listing (`sudo -ll`) read as sudo applies it. See
 * parse_sudo.h.
 */
#include "config.h"

#include <fnmatch.h>
#include <regex.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "parse_sudo.h"
#include "util.h"

#define LISTING_MARK "may run the following commands"

static bool
has_word(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; *p;) {
		size_t l;

		while (*p == ' ' || *p == ',' || *p == '\t')
			p++;
		l = strcspn(p, ", \t\n");
		if (l == wl && strncmp(p, word, wl) == 0)
			return true;
		p += l;
	}
	return false;
}

/* "   RunAsUsers: root" -> "root"; NULL when line is not "key: ..." */
static const char *
field(const char *line, const char *key)
{
	size_t kl = strlen(key);

	while (*line == ' ' || *line == '\t')
		line++;
	if (strncmp(line, key, kl) != 0 || line[kl] != ':')
		return NULL;
	line += kl + 1;
	while (*line == ' ')
		line++;
	return line;
}

static bool
has_glob(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* One command of a rule (without its '!') against path and its arguments. */
static bool
cmd_matches(const char *rule, const char *path, const char *args)
{
	size_t pl = strcspn(rule, " ");
	char *rpath, *rargs;
	bool m;

	if (strcmp(rule, "ALL") == 0)
		return true;
	rpath = xstrndup(rule, pl);
	rargs = rule[pl] ? xstrdup(rule + pl + 1) : NULL;
	if (has_glob(rpath))
		m = fnmatch(rpath, path, FNM_PATHNAME) == 0;
	else if (pl > 0 && rpath[pl - 1] == '/')
		m = strncmp(rpath, path, pl) == 0 && strchr(path + pl, '/') == NULL;
	else
		m = strcmp(rpath, path) == 0;
	if (m && rargs != NULL) {
		size_t al = strlen(rargs);

		if (strcmp(rargs, "\"\"") == 0) {
			m = *args == '\0';
		} else if (al >= 2 && rargs[0] == '^' && rargs[al - 1] == '$') {
			regex_t re;

			m = regcomp(&re, rargs, REG_EXTENDED | REG_NOSUB) == 0;
			if (m) {
				m = regexec(&re, args, 0, NULL, 0) == 0;
				regfree(&re);
			}
		} else {
			m = fnmatch(rargs, args, 0) == 0;
		}
	}
	free(rpath);
	free(rargs);
	return m;
}

/*
 * The listing with sudo's wrapping undone: without a terminal sudo still
 * breaks lines at 80 columns, at a space, and indents what follows by 8
 * spaces (fields have 4). New string.
 */
static char *
unwrap(const char *text)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	for (const char *p = text; *p; p++) {
		size_t sp = 0;

		if (*p == '\n')
			while (p[1 + sp] == ' ')
				sp++;
		if (sp >= 5) {
			buf_puts(&b, " ");
			p += sp;
			continue;
		}
		buf_append(&b, p, 1);
	}
	return buf_steal(&b);
}

enum sudo_verdict
sudo_list_allows(const char *listing, const char *path, char *const *args, size_t nargs)
{
	enum sudo_verdict v = SUDO_REFUSED;
	struct jc_buf a = { 0 };
	bool root = true, nopasswd = false, in_cmds = false;
	char *text;
	const char *p;

	if (listing == NULL || strstr(listing, LISTING_MARK) == NULL)
		return SUDO_REFUSED;
	text = unwrap(listing);
	p = strstr(text, LISTING_MARK);
	buf_puts(&a, "");
	for (size_t i = 0; i < nargs; i++)
		buf_printf(&a, "%s%s", i ? " " : "", args[i]);
	while ((p = strchr(p, '\n')) != NULL) {
		const char *line = ++p, *f;
		size_t ll = strcspn(line, "\n");
		char *l = xstrndup(line, ll);

		while (ll > 0 && (l[ll - 1] == ' ' || l[ll - 1] == '\r'))
			l[--ll] = '\0';
		if (strcmp(l, "Sudoers entry:") == 0) {
			/* a new entry: run as root unless it says otherwise */
			root = true;
			nopasswd = in_cmds = false;
		} else if ((f = field(l, "RunAsUsers")) != NULL) {
			root = has_word(f, "root") || has_word(f, "ALL");
		} else if ((f = field(l, "Options")) != NULL) {
			nopasswd = has_word(f, "!authenticate");
		} else if (field(l, "Commands") != NULL) {
			in_cmds = true;
		} else if (in_cmds && l[0] == '\t') {
			const char *c = l + 1;
			bool neg = *c == '!';

			while (*c == '!' || *c == ' ')
				c++;
			if (root && cmd_matches(c, path, a.data))
				v = neg ? SUDO_REFUSED : nopasswd ? SUDO_NOPASSWD : SUDO_PASSWORD;
		} else if (ll == 0) {
			in_cmds = false;
		}
		free(l);
	}
	buf_free(&a);
	free(text);
	return v;
}

/* The user the listing is about ("User NAME may run ..."), or NULL. New string. */
static char *
listing_user(const char *text)
{
	const char *m = strstr(text, LISTING_MARK), *u;

	if (m == NULL)
		return NULL;
	for (u = m; u > text && u[-1] != '\n'; u--)
		;
	if (strncmp(u, "User ", 5) != 0)
		return NULL;
	u += 5;
	return xstrndup(u, strcspn(u, " \n"));
}

/* Some entry that may run a command as root without a password. */
static bool
any_nopasswd(const char *text)
{
	bool root = true;

	for (const char *p = strstr(text, LISTING_MARK); p && (p = strchr(p, '\n')); ) {
		const char *line = ++p, *f;
		char *l = xstrndup(line, strcspn(line, "\n"));
		bool hit = false;

		if (strncmp(l, "Sudoers entry:", 14) == 0)
			root = true;
		else if ((f = field(l, "RunAsUsers")) != NULL)
			root = has_word(f, "root") || has_word(f, "ALL");
		else if ((f = field(l, "Options")) != NULL)
			hit = root && has_word(f, "!authenticate");
		free(l);
		if (hit)
			return true;
	}
	return false;
}

enum jc_sudo_mode
sudo_probe_mode(const char *text, int status)
{
	static char *const sh_args[] = { "-c", ":" };
	char *user;
	bool root;

	if (text == NULL)
		return JC_SUDO_UNKNOWN;
	if (status != 0)
		return JC_SUDO_NONE;
	if ((user = listing_user(text)) == NULL)
		return JC_SUDO_ALL;	/* sudo -n true passed */
	root = strcmp(user, "root") == 0;
	free(user);
	if (root || sudo_list_allows(text, "/bin/sh", sh_args, 2) == SUDO_NOPASSWD)
		return JC_SUDO_ALL;
	return any_nopasswd(text) ? JC_SUDO_SCOPED : JC_SUDO_NONE;
}

const char *
sudo_mode_name(int mode)
{
	switch (mode) {
	case JC_SUDO_NONE:
		return "none";
	case JC_SUDO_SCOPED:
		return "scoped";
	case JC_SUDO_ALL:
		return "all";
	default:
		return "unknown";
	}
}
