/* SPDX-License-Identifier: MIT */
/*
 * What a host's sudo allows without a password, from the probe's answer
 * to `sudo -n true 2>&1 || sudo -n -ll 2>&1`: nothing when sudo runs
 * anything, else sudo's long listing of the login user's rules (or why it
 * could not list them). Pure: text in, verdicts out.
 *
 * The listing is read as sudo reads its rules: every "Sudoers entry" that
 * may run commands as root, its commands in order, the last one that
 * matches deciding (a negated one refuses). A command matches as sudoers(5)
 * says: ALL matches anything; a path with wildcards is fnmatch'ed with
 * FNM_PATHNAME, else compared as it is (a folder ending in '/' holds its
 * commands); no arguments in the rule allow any, "" allows none, ^...$ is
 * an extended regular expression, anything else is fnmatch'ed against the
 * arguments joined by single spaces. An entry with "!authenticate" in its
 * options (NOPASSWD) needs no password. Paths are compared as written: a
 * rule naming another path of the same program (a symbolic link) is not
 * taken for it.
 */
#ifndef JC_PARSE_SUDO_H
#define JC_PARSE_SUDO_H

#include <stddef.h>

#include "jc.h"

enum sudo_verdict {
	SUDO_REFUSED = 0,	/* no rule allows it */
	SUDO_PASSWORD,		/* allowed, with a password */
	SUDO_NOPASSWD,		/* allowed without one */
};

/*
 * What the listing allows for the command path (absolute) with its
 * arguments args[0..nargs).
 */
enum sudo_verdict sudo_list_allows(const char *listing, const char *path, char *const *args,
    size_t nargs);

/*
 * The mode of a host from the probe's output (text, exit status):
 * JC_SUDO_ALL when `sudo -n true` passed or the listing allows /bin/sh
 * (any arguments) without a password or lists root's own rules (root
 * needs none), JC_SUDO_SCOPED when some entry for root needs no password,
 * JC_SUDO_NONE otherwise (a failed check, a password asked); JC_SUDO_UNKNOWN
 * when text is NULL.
 */
enum jc_sudo_mode sudo_probe_mode(const char *text, int status);

/* "all", "scoped", "none", "unknown". */
const char *sudo_mode_name(int mode);

/* The probe's command (for every system). */
#define SUDO_PROBE_CMD "sudo -n true 2>&1 || sudo -n -ll 2>&1"

#endif
