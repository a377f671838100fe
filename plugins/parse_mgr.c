/* SPDX-License-Identifier: MIT */
/* The other tools that manage a Mac's network (parse_mgr.h). */
#include "config.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse_mgr.h"

/* s contains w, whatever the case. */
static bool
has_word(const char *s, const char *w)
{
	size_t n = strlen(w);

	for (; *s != '\0'; s++)
		if (strncasecmp(s, w, n) == 0)
			return true;
	return false;
}

const char *
mgr_tool_of(enum jc_mgr_kind kind, const char *name)
{
	if (name == NULL)
		return NULL;
	switch (kind) {
	case JC_MGR_DAEMON:
		if (strncmp(name, "io.exo.", 7) == 0)
			return "exo";
		if (has_word(name, "omlx"))
			return "oMLX";
		if (has_word(name, "odyssai"))
			return "OdyssAI-X";
		return NULL;
	case JC_MGR_LOCATION:
		if (strcmp(name, "exo") == 0)
			return "exo";
		if (strcasecmp(name, "odyssai") == 0)
			return "OdyssAI-X";
		if (has_word(name, "omlx"))
			return "oMLX";
		return NULL;
	case JC_MGR_SERVICE:
		return has_word(name, "omlx") ? "oMLX" : NULL;
	}
	return NULL;
}

/* A LaunchDaemon's label as MGR_SH passes it: letters, digits, "._-". */
static bool
label_ok(const char *s)
{
	if (*s == '\0' || *s == '.' || *s == '-' || strlen(s) > 200)
		return false;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' && *s != '-')
			return false;
	return true;
}

static struct jc_mgr *
add(struct jc_mgr **v, size_t *n, enum jc_mgr_kind kind, const char *name)
{
	struct jc_mgr *m;

	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	m = &(*v)[(*n)++];
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->name = name != NULL ? xstrdup(name) : NULL;
	m->tool = mgr_tool_of(kind, name);
	m->loaded = JC_UNKNOWN;
	return m;
}

/* "N" of a pid line: a number above 0, else 0. */
static long
pid_of(const char *s)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)*s))
		return 0;
	v = strtol(s, &end, 10);
	return *end == '\0' && v > 0 && v < 100000000 ? v : 0;
}

size_t
parse_managers(const char *s, size_t len, struct jc_mgr **v, size_t *n, char **location,
    bool *automatic)
{
	struct jc_mgr *d = NULL;	/* the daemon whose lines follow */
	bool have_loc = false, loc_shown = false;
	size_t bad = 0, at;

	*v = NULL;
	*n = 0;
	*location = NULL;
	*automatic = false;
	for (const char *p = s, *e = s + len; p < e;) {
		const char *nl = memchr(p, '\n', (size_t)(e - p));
		size_t ll = nl != NULL ? (size_t)(nl - p) : (size_t)(e - p);
		char *line = xstrndup(p, ll);
		const char *arg;

		p += ll + (nl != NULL);
		if (ll > 0 && line[ll - 1] == '\r')
			line[--ll] = '\0';
		if (ll == 0 || memchr(line, '\0', ll) != NULL) {
			bad += ll != 0;
			free(line);
			continue;
		}
		if (strncmp(line, "location ", 9) == 0 && !have_loc) {
			arg = line + 9;
			have_loc = true;
			d = NULL;
			if (jc_service_name_ok(arg)) {
				*location = xstrdup(arg);
				loc_shown = true;
				if (strcmp(arg, "Automatic") == 0)
					*automatic = true;
			}
		} else if (strncmp(line, "has ", 4) == 0) {
			d = NULL;
			if (strcmp(line + 4, "Automatic") == 0)
				*automatic = true;
		} else if (strncmp(line, "daemon ", 7) == 0) {
			arg = line + 7;
			/* as MGR_SH: only the labels of a tool known to undo a setup */
			d = label_ok(arg) && mgr_tool_of(JC_MGR_DAEMON, arg) != NULL ?
			    add(v, n, JC_MGR_DAEMON, arg) : NULL;
			bad += d == NULL;
		} else if (strncmp(line, "launchd ", 8) == 0 && d != NULL) {
			if (strcmp(line + 8, "yes") == 0)
				d->loaded = JC_YES;
			else if (strcmp(line + 8, "no") == 0)
				d->loaded = JC_NO;
			else
				bad++;
		} else if (strncmp(line, "pid = ", 6) == 0 && d != NULL) {
			if (d->pid == 0)
				d->pid = pid_of(line + 6);
		} else if (strncmp(line, "state = ", 8) == 0 && d != NULL) {
			/* the pid line says it runs; the state adds nothing we use */
		} else if (strncmp(line, "service ", 8) == 0) {
			arg = line + 8;
			d = NULL;
			if (jc_service_name_ok(arg) && mgr_tool_of(JC_MGR_SERVICE, arg) != NULL)
				add(v, n, JC_MGR_SERVICE, arg);
			else
				bad++;
		} else {
			bad++;
		}
		free(line);
	}
	/* the active location first among the findings, when it is not Automatic */
	if (have_loc && !(loc_shown && strcmp(*location, "Automatic") == 0)) {
		add(v, n, JC_MGR_LOCATION, loc_shown ? *location : NULL);
		at = *n - 1;
		if (at > 0) {
			struct jc_mgr m = (*v)[at];

			memmove(&(*v)[1], &(*v)[0], at * sizeof(**v));
			(*v)[0] = m;
		}
	}
	return bad;
}

bool
mgr_active(const struct jc_mgr *m)
{
	switch (m->kind) {
	case JC_MGR_DAEMON:
		return m->loaded == JC_YES;
	case JC_MGR_LOCATION:
		return m->tool != NULL;
	case JC_MGR_SERVICE:
		return true;
	}
	return false;
}

const struct jc_mgr *
mgr_first_active(const struct jc_host *h)
{
	if (h->mgrs_known != JC_YES)
		return NULL;
	for (size_t i = 0; i < h->nmgrs; i++)
		if (mgr_active(&h->mgrs[i]))
			return &h->mgrs[i];
	return NULL;
}

char *
mgr_describe(const struct jc_mgr *m)
{
	const char *tool = m->tool != NULL ? m->tool : "another tool";

	switch (m->kind) {
	case JC_MGR_DAEMON:
		if (m->loaded == JC_YES && m->pid > 0)
			return xasprintf("%s's LaunchDaemon %s (loaded, running as pid %ld)", tool,
			    m->name, m->pid);
		return xasprintf("%s's LaunchDaemon %s (%s)", tool, m->name,
		    m->loaded == JC_YES ? "loaded" : m->loaded == JC_NO ?
		    "its plist is in " MGR_DAEMON_DIR ", not loaded until the next boot" :
		    "its plist is in " MGR_DAEMON_DIR);
	case JC_MGR_LOCATION:
		if (m->name == NULL)
			return xstrdup("the active network location, not Automatic (a name that "
			    "cannot be shown)");
		if (m->tool != NULL)
			return xasprintf("%s's network location \"%s\", the active one", tool, m->name);
		return xasprintf("the active network location \"%s\", not Automatic", m->name);
	case JC_MGR_SERVICE:
		return xasprintf("%s's network service \"%s\"", tool, m->name);
	}
	return xstrdup("?");
}

const char *
mgr_harm(const struct jc_mgr *m)
{
	if (m->tool == NULL)
		return m->kind == JC_MGR_LOCATION ? "a persistent setup is written to the active "
		    "location and is gone when another one is chosen" : NULL;
	if (strcmp(m->tool, "exo") == 0)
		return "exo's daemon runs every 1791 s, destroys bridge0, edits the network "
		    "preferences and switches to its own location (exo #2279), undoing the setup";
	if (strcmp(m->tool, "OdyssAI-X") == 0)
		return "OdyssAI-X's root daemon runs every 1786 s and keeps its own network "
		    "location, undoing the setup";
	return "oMLX's cluster network subsystem configures the Thunderbolt ports its own way, "
	    "undoing the setup";
}

char *
mgr_remedy(const struct jc_mgr *m, bool automatic)
{
	struct jc_buf b = { 0 };

	switch (m->kind) {
	case JC_MGR_DAEMON:
		if (m->loaded != JC_NO)
			buf_printf(&b, "sudo launchctl bootout system/%s && ", m->name);
		buf_printf(&b, "sudo rm " MGR_DAEMON_DIR "/%s.plist", m->name);
		break;
	case JC_MGR_LOCATION:
		if (!automatic)
			buf_puts(&b, "sudo networksetup -createlocation Automatic populate && ");
		buf_puts(&b, "sudo networksetup -switchtolocation Automatic");
		if (m->name != NULL && m->tool != NULL) {
			buf_puts(&b, " && sudo networksetup -deletelocation ");
			jc_shell_word(&b, m->name);
		}
		break;
	case JC_MGR_SERVICE:
		buf_puts(&b, "sudo networksetup -removenetworkservice ");
		jc_shell_word(&b, m->name);
		break;
	}
	return buf_steal(&b);
}
