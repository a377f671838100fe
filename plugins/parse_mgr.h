/* SPDX-License-Identifier: MIT */
/*
 * The other tools that manage a Mac's network (struct jc_mgr): the probe's
 * MGR_SH answer read into what was found, and what each finding means.
 * exo's LaunchDaemon outlives the app and switches to its own network
 * location every 1791 s (exo #2279); OdyssAI-X has a root LaunchDaemon and
 * a location of its own; oMLX has a cluster network subsystem. Any of them
 * undoes a setup, and a persistent one most of all. Pure: text in, values
 * out.
 */
#ifndef JC_PARSE_MGR_H
#define JC_PARSE_MGR_H

#include <stdbool.h>
#include <stddef.h>

#include "jc.h"
#include "util.h"

/* Bundle file name of the answer. */
#define MGR_FILE "other-managers.txt"

/* Where a LaunchDaemon's plist is. */
#define MGR_DAEMON_DIR "/Library/LaunchDaemons"

/*
 * The probe's command (macOS): "location NAME" (the active location, when
 * networksetup says), "has NAME" for each location when it is not
 * Automatic, then per LaunchDaemon of a known tool "daemon LABEL",
 * "launchd yes|no" (launchctl print knows it) and its "state = ..." and
 * "pid = ..." lines, then "service NAME" per network service of a known
 * tool. Labels that are not plain are passed over.
 */
#define MGR_SH \
	"jc_l=$(networksetup -getcurrentlocation 2>/dev/null) && " \
	"printf 'location %s\\n' \"$jc_l\"; " \
	"case $jc_l in Automatic) ;; *) networksetup -listlocations 2>/dev/null | " \
	"while IFS= read -r jc_x; do printf 'has %s\\n' \"$jc_x\"; done ;; esac; " \
	"for jc_f in " MGR_DAEMON_DIR "/*.plist; do [ -f \"$jc_f\" ] || continue; " \
	"jc_n=${jc_f##*/}; jc_n=${jc_n%.plist}; " \
	"case $jc_n in *[!A-Za-z0-9._-]*) continue ;; " \
	"io.exo.*|*[oO][mM][lL][xX]*|*[oO][dD][yY][sS][sS][aA][iI]*) ;; *) continue ;; esac; " \
	"printf 'daemon %s\\n' \"$jc_n\"; " \
	"if jc_o=$(launchctl print \"system/$jc_n\" 2>/dev/null); then echo 'launchd yes'; " \
	"else echo 'launchd no'; fi; " \
	"printf '%s\\n' \"$jc_o\" | while IFS= read -r jc_x; do case $jc_x in " \
	"\"\tstate = \"*|\"\tpid = \"*) printf '%s\\n' \"${jc_x#?}\" ;; esac; done; done; " \
	"networksetup -listallnetworkservices 2>/dev/null | while IFS= read -r jc_x; do " \
	"case $jc_x in *[oO][mM][lL][xX]*) printf 'service %s\\n' \"${jc_x#\\*}\" ;; esac; " \
	"done; exit 0"

/*
 * Read MGR_SH's answer (len bytes): the findings into *v / *n (new
 * array), the active location into *location (new string, or NULL when
 * the answer has none), and whether a location called Automatic exists
 * (*automatic: true when it is the active one or listed). A location or
 * service name that is not jc_service_name_ok, and a label that is not a
 * plain word or not of a known tool (MGR_SH lists no other), are left out;
 * an active location other than Automatic whose name cannot be shown is
 * kept as a finding without a name. Returns the number of lines not
 * understood.
 */
size_t parse_managers(const char *s, size_t len, struct jc_mgr **v, size_t *n, char **location,
    bool *automatic);

/* The tool a daemon label, a location or a service name is of, or NULL. */
const char *mgr_tool_of(enum jc_mgr_kind kind, const char *name);

/*
 * The finding can undo a setup now: its daemon is loaded, its location
 * (a known tool's) is the active one, its service is there. A plist of a
 * daemon that is not loaded (it is at the next boot) and a location of
 * nobody known are not.
 */
bool mgr_active(const struct jc_mgr *m);

/*
 * The first finding of h that is active (mgr_active), or NULL: what
 * --persist refuses to work beside.
 */
const struct jc_mgr *mgr_first_active(const struct jc_host *h);

/* What the finding is, as a phrase: "exo's LaunchDaemon io.exo.networksetup (loaded, pid 412)". */
char *mgr_describe(const struct jc_mgr *m);

/* What it does to a setup, as a phrase (for a message), or NULL. */
const char *mgr_harm(const struct jc_mgr *m);

/*
 * The commands that remove it (sudo ... on the host; names quoted for a
 * shell), as a new string. automatic: a location called Automatic exists.
 */
char *mgr_remedy(const struct jc_mgr *m, bool automatic);

#endif
