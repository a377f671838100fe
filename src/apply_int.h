/* SPDX-License-Identifier: MIT */
/*
 * What the parts of apply share (apply.h is the interface). The parts:
 * apply.c (the order of a setup's steps, and the exec path of a transport
 * without a dialog), apply_cmd.c (command lines, events, the abort flag,
 * the transport of a run), apply_capture.c (the host and fact records,
 * the capture and its checks), apply_state.c (the state folder),
 * apply_dialog.c (one script per host), apply_undo.c (putting a host back
 * to its saved facts) and apply_restore.c (restore). Not for other
 * modules.
 */
#ifndef JC_APPLY_INT_H
#define JC_APPLY_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#include "apply.h"
#include "parse_state.h"
#include "setup_script.h"

#define STATE_VERSION 1
#define LAST_SETUP "last-setup.json"

/* One fact as captured on a host, and what it says. */
struct ap_fact {
	enum plan_fact_kind kind;
	char *iface;		/* interface, bridge0, or the route's planned interface */
	char *peer;		/* ROUTE: peer address */
	int status;		/* exit status of the query */
	char *out;		/* its output (stdout then stderr) */
	int lstatus;		/* of the second query, when the system has one */
	char *lout;
	struct jc_fact_state st;	/* parsed */
};

/* What is known of one host: where it is, what the plan gives it, its facts. */
struct ap_host {
	char *name, *target, *user;
	int port;
	const struct jc_platform_ops *plat;
	struct jc_strv ifaces;	/* planned cable interfaces (bridge0 excluded) */
	struct jc_strv ips;	/* planned address of each, same index */
	struct jc_strv peers;	/* peer address of each */
	struct ap_fact *facts;
	size_t nfacts;
};

/* Shared by the threads of one run. */
struct ap_run {
	const struct apply_opts *o;
	struct jc_transport *tp;
	pthread_mutex_t lock;	/* events and abort */
	bool abort;
};

/* One host of a setup: its plan, its session, how it went. */
struct ap_slot {
	struct ap_run *run;
	const struct plan_host *ph;
	const struct jc_host *jh;
	struct ap_host h;
	struct jc_conn *s;
	struct apply_host_result *res;
	bool active;		/* has commands to run */
	bool want;		/* takes part in the phase running */
	struct jc_err err;
	int rc;
	char *fail_text;	/* the failed command and its stderr */
};

/* Shared by the phases of one apply_run(). */
struct ap_apply {
	struct ap_run run;
	const struct plan *p;
	struct ap_slot *sl;
	struct apply_result *res;
	char *dir;
	json_t *meta;
	/* the script path: every host's capture meets here before any change */
	pthread_mutex_t bar_mu;
	pthread_cond_t bar_cv;
	size_t waiting;		/* hosts whose capture is not in yet */
	bool decided;
	int decide_rc;		/* 0: go; else why every host stops */
	struct jc_err decide_err;
	char token[SS_TOKEN_LEN + 1];
};

/* apply_cmd.c: the command lines and the run */
char *ap_argv_line(char *const *argv, size_t argc);
void ap_emit(struct ap_run *run, enum apply_ev_kind kind, const char *host, const char *cmd,
    int status, const char *errtext);
double ap_cmd_timeout(const struct apply_opts *o);
void ap_trim(char *s);
bool ap_word_ok(const char *w);
bool ap_aborted(struct ap_run *run);
struct jc_transport *ap_transport_of(const struct apply_opts *o, struct jc_transport **own);

/* apply_capture.c: the records and the capture */
void ap_facts_free(struct ap_fact *f, size_t n);
void ap_host_clear(struct ap_host *h);
bool ap_planned_iface(const struct ap_host *h, const char *name);
void ap_fact_parse(struct ap_fact *f, const struct jc_platform_ops *plat);
int ap_capture(struct jc_conn *s, const struct ap_host *h, struct ap_fact *facts, size_t n,
    double timeout, struct jc_err *err);
int ap_captured(struct ap_slot *sl);
int ap_capture_errors(struct ap_apply *ap, struct jc_err *err);

/* apply_state.c: the state folder */
json_t *ap_load_json(const char *path, json_error_t *je);
int ap_state_dir_ok(const char *dir, struct jc_err *err);
const char *ap_jget_str(json_t *o, const char *key);
int ap_host_from_json(json_t *j, const char *path, struct ap_host *h, struct jc_err *err);
bool ap_digests_match(json_t *hj, json_t *dg);
int ap_save_last(const char *dir, json_t *meta, struct jc_err *err);
int ap_save_states(struct ap_apply *ap, struct jc_err *err);

/* apply_undo.c: putting a host back */
int ap_restore_host(struct ap_run *run, struct jc_conn *s, const struct ap_host *h, size_t *ran,
    struct jc_err *err);

/* apply_dialog.c: one script per host */
void ap_run_scripts(struct ap_apply *ap);

#endif
