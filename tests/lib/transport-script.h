/* SPDX-License-Identifier: MIT */
/*
 * A scripted stand-in for the transport, for tests only (never installed).
 * Each command is answered from a table of rules (output, stderr, status,
 * delay, hang, disconnect) or, when no rule matches and the host has a
 * model, by a small model of the host's network state (interfaces with
 * IPv4 addresses and an up flag, bridge0 members, host routes) that the
 * setup and restore commands of macOS (ifconfig, route) and Linux (ip)
 * change and their queries print, in the formats of the real tools. Faults
 * are injected by count ("the k-th sudo command on host h fails", whether
 * it runs alone or inside a setup script, see ts_script_count). Nothing
 * waits: a delay at or beyond the command's timeout, or a hang, is the
 * timeout error at once.
 */
#ifndef JC_TRANSPORT_SCRIPT_H
#define JC_TRANSPORT_SCRIPT_H

#include <stdbool.h>

#include "transport.h"

struct ts_rule {
	const char *host;	/* NULL: every host */
	const char *command;	/* exact; "prefix*" matches a prefix; NULL: any */
	const char *out;	/* stdout; "@TOKEN@" becomes the first line of stdin */
	const char *err;	/* stderr */
	int status;
	double delay;		/* seconds the command takes (simulated) */
	bool hang;		/* never ends */
	bool disconnect;	/* the session is lost before the command ends */
	size_t cut;		/* disconnect: bytes of stdout delivered first */
};

enum ts_fault {
	TS_FAIL,		/* exit status 1, "injected failure" on stderr; not run */
	TS_DISCONNECT,		/* the session is lost (and stays lost); not run */
	TS_HANG,		/* the command never ends (timeout); not run */
};

struct jc_transport *ts_new(void);

/* Drop the dialog op: apply then runs each command as its own exec. */
void ts_per_command(struct jc_transport *t);

/* Rules are tried in the order added, before the host model. Copied. */
void ts_rule(struct jc_transport *t, const struct ts_rule *r);

/* Connecting to host fails with code (TR_ECONNECT, TR_EAUTH, ...). */
void ts_unreachable(struct jc_transport *t, const char *host, int code);

/* Give host a model of the system named os ("macos" or "linux"). */
void ts_model(struct jc_transport *t, const char *host, const char *os);

/* Model edits: an interface with addresses "A/L" (NULL-terminated), a bridge member, a route. */
void ts_iface(struct jc_transport *t, const char *host, const char *iface, bool up, ...);
void ts_member(struct jc_transport *t, const char *host, const char *bridge, const char *member);
void ts_route(struct jc_transport *t, const char *host, const char *peer, const char *via,
    const char *dev);

/* The k-th (1-based) command run through sudo on host gets fault f. */
void ts_fault_at(struct jc_transport *t, const char *host, size_t k, enum ts_fault f);

/* Commands run through sudo on host so far. */
size_t ts_sudo_count(struct jc_transport *t, const char *host);

/*
 * Setup scripts (apply's dialog op) run on host through sudo. The script is
 * interpreted, not run: its queries and then, after "go", its commands one
 * by one, each answered as the command alone would be (rules, model) and
 * counted as a sudo command (ts_fault_at, ts_sudo_count) and logged as
 * "sudo -n COMMAND".
 */
size_t ts_script_count(struct jc_transport *t, const char *host);

/* Every command run on host, one per line (new string). */
char *ts_log(struct jc_transport *t, const char *host);

/* The model of host as canonical text (sorted; new string). */
char *ts_state(struct jc_transport *t, const char *host);

#endif
