/* SPDX-License-Identifier: MIT */
/*
 * Least privilege: the sudoers rule that allows exactly what a setup, its
 * rollback and restore run (jaccl-config sudoers), and the check of a
 * planned host against the rule its sudo has (the gate of --auto-setup).
 *
 * Both come from the system's own command() (jc_platform_ops): each change
 * a setup, a rollback or a restore can make is asked for with stand-in
 * addresses, which become wildcards, and the program becomes its absolute
 * path (priv_path). sudoers' '*' also matches spaces, so an address
 * position is as tight as a glob can be; the interface and the verb are
 * always fixed words.
 */
#ifndef JC_SUDO_RULE_H
#define JC_SUDO_RULE_H

#include "plan.h"
#include "util.h"

/* The system of some hosts, and what the rule must name for them. */
struct sudo_rule_sys {
	const struct jc_platform_ops *plat;
	struct jc_strv ifaces;	/* cable interfaces (or patterns) */
	struct jc_strv ports;	/* macOS: their hardware ports ("Thunderbolt 1") */
	struct jc_strv bridge_svcs;	/* --persist: the bridge's service names */
	int netmgr;		/* Linux --persist: enum jc_netmgr */
};

/*
 * Fill s with the system's default names when its lists are empty: macOS
 * en1-en99 (en0 is the Mac's own Ethernet or Wi-Fi, never a cable) and
 * "Thunderbolt 1-99" as patterns, "Thunderbolt Bridge"; Linux, any
 * interface name.
 */
void sudo_rule_defaults(struct sudo_rule_sys *s);

void sudo_rule_sys_clear(struct sudo_rule_sys *s);

/*
 * The sudoers file for systems sys[0..n): a comment saying what it allows
 * and how to check and install it, one Cmnd_Alias per system, and the
 * rule for group (macOS "%admin", Linux "%sudo" when NULL). With persist,
 * the commands of --persist too. What no rule can name tightly (Linux
 * files written through sh) is left out with a comment saying so and what
 * it needs. New string.
 */
char *sudo_rule_text(const struct sudo_rule_sys *sys, size_t n, bool persist, const char *group);

/*
 * The commands of ph (host h) and those that undo them (rollback and
 * restore) that h's sudo does not allow without a password, appended to
 * missing as "PATH ARGS"; none when h's sudo allows everything. Returns
 * how many were appended.
 */
size_t sudo_plan_missing(const struct plan_host *ph, const struct jc_host *h,
    struct jc_strv *missing);

#endif
