/* SPDX-License-Identifier: MIT */
/*
 * Applying a plan over SSH with rollback: capture every host's facts (in
 * parallel), save them, run the setup commands (in parallel, stopping
 * everyone at the first failure), and put back every host that ran
 * something by comparing its state now with the saved one. See apply.h.
 * This file is the order of those steps (apply_run), and the capture and
 * the setup of a transport without a dialog: one exec per query and per
 * command. The parts it calls are listed in apply_int.h.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "apply_int.h"

/* Phase 1 of a host: connect and capture its facts. */
static void
phase_capture(size_t i, void *arg)
{
	struct ap_apply *ap = arg;
	struct ap_slot *sl = &ap->sl[i];
	const struct jc_host *jh = sl->jh;

	if (!sl->want)
		return;
	if (sl->s == NULL)
		sl->rc = tp_connect(ap->run.tp, jh->name, jh->user, jh->port, &sl->s, &sl->err);
	if (sl->rc == 0)
		sl->rc = ap_capture(sl->s, &sl->h, sl->h.facts, sl->h.nfacts, ap_cmd_timeout(ap->run.o),
		    &sl->err);
}

/* Run one setup command of a host; 0, or negative with fail_text set. */
static int
setup_cmd(struct ap_run *run, struct ap_slot *sl, const struct plan_cmd *pc)
{
	struct tr_result r = { 0 };
	char *line;

	for (size_t k = 0; k < pc->argc; k++)
		if (!ap_word_ok(pc->argv[k]))
			return sl->rc = jc_fail(&sl->err, -EINVAL,
			    "refusing to run a word that is not plain: %s", pc->argv[k]);
	line = ap_argv_line(pc->argv, pc->argc);
	ap_emit(run, APPLY_EV_RUN, sl->h.name, line, 0, NULL);
	sl->rc = tp_run(sl->s, line, NULL, 0, ap_cmd_timeout(run->o), 0, &r, &sl->err);
	sl->res->ran++;
	if (sl->rc != 0) {
		sl->fail_text = xasprintf("%s: %s", line, sl->err.msg);
	} else if (r.status != 0) {
		ap_trim(r.err);
		ap_emit(run, pc->may_fail ? APPLY_EV_IGNORED : APPLY_EV_FAILED, sl->h.name, line,
		    r.status, r.err);
		if (!pc->may_fail) {
			sl->fail_text = xasprintf("%s failed (exit %d)%s%s", line, r.status,
			    *r.err ? ": " : "", r.err);
			sl->rc = -EIO;
		}
	}
	tr_result_clear(&r);
	free(line);
	return sl->rc;
}

/* Phase 2 of a host: its setup commands, until one fails or someone's does. */
static void
phase_setup(size_t i, void *arg)
{
	struct ap_apply *ap = arg;
	struct ap_slot *sl = &ap->sl[i];
	struct ap_run *run = &ap->run;

	if (!sl->want)
		return;
	for (size_t c = 0; c < sl->ph->cmds.n && !ap_aborted(run); c++) {
		if (setup_cmd(run, sl, &sl->ph->cmds.v[c]) == 0)
			continue;
		pthread_mutex_lock(&run->lock);
		run->abort = true;
		pthread_mutex_unlock(&run->lock);
		if (sl->fail_text == NULL)
			sl->fail_text = xstrdup(sl->err.msg);
		return;
	}
}

/* Phase 3 of a host: put it back to its saved facts. */
static void
phase_rollback(size_t i, void *arg)
{
	struct ap_apply *ap = arg;
	struct ap_slot *sl = &ap->sl[i];
	size_t ran = 0;

	if (sl->want)
		sl->rc = ap_restore_host(&ap->run, sl->s, &sl->h, &ran, &sl->err);
}

static void
run_phase(struct ap_apply *ap, void (*fn)(size_t, void *))
{
	for (size_t i = 0; i < ap->p->n; i++) {
		ap->sl[i].rc = 0;
		memset(&ap->sl[i].err, 0, sizeof(ap->sl[i].err));
	}
	jc_parallel_for(ap->p->n, fn, ap);
}

static void
host_from_plan(struct ap_host *h, const struct plan_host *ph, const struct jc_host *jh)
{
	h->name = xstrdup(jh->name);
	h->target = xstrdup(jh->target ? jh->target : jh->name);
	h->user = xstrdup(jh->user);
	h->port = jh->port;
	h->plat = ph->plat;
	for (size_t a = 0; a < ph->naddrs; a++) {
		strv_push(&h->ifaces, ph->addrs[a].iface);
		strv_push(&h->ips, ph->addrs[a].ip);
		strv_push(&h->peers, ph->addrs[a].peer_ip);
	}
	h->facts = xcalloc(ph->nfacts ? ph->nfacts : 1, sizeof(*h->facts));
	for (size_t f = 0; f < ph->nfacts; f++) {
		h->facts[f].kind = ph->facts[f].kind;
		h->facts[f].iface = xstrdup(ph->facts[f].iface);
		h->facts[f].peer = xstrdup(ph->facts[f].peer);
	}
	h->nfacts = ph->nfacts;
}

/* Fill the slots; returns how many hosts have commands to run. */
static size_t
slots_init(struct ap_apply *ap, const struct graph *g)
{
	const struct plan *p = ap->p;
	size_t nactive = 0;

	ap->res->n = p->n;
	ap->res->hosts = xcalloc(p->n ? p->n : 1, sizeof(*ap->res->hosts));
	for (size_t i = 0; i < p->n; i++) {
		struct ap_slot *sl = &ap->sl[i];

		sl->run = &ap->run;
		sl->ph = &p->hosts[i];
		sl->jh = &g->hosts[p->hosts[i].host];
		sl->res = &ap->res->hosts[i];
		sl->res->name = sl->jh->name;
		if (p->hosts[i].applied || p->hosts[i].cmds.n == 0) {
			sl->res->status = APPLY_HOST_UNCHANGED;
			continue;
		}
		host_from_plan(&sl->h, sl->ph, sl->jh);
		sl->active = sl->want = true;
		nactive++;
	}
	return nactive;
}

/* After the setup: each host's outcome; the index of the first failed, or -1. */
static long
setup_outcome(struct ap_apply *ap)
{
	long failed = -1;

	for (size_t i = 0; i < ap->p->n; i++) {
		struct ap_slot *sl = &ap->sl[i];

		if (!sl->want)
			continue;
		if (sl->fail_text != NULL) {
			sl->res->status = APPLY_HOST_FAILED;
			sl->res->error = xstrdup(sl->fail_text);
			if (failed < 0)
				failed = (long)i;
		} else if (sl->res->ran == sl->ph->cmds.n) {
			sl->res->status = APPLY_HOST_DONE;
		}
	}
	return failed;
}

/* Put back every host that ran something; the error names the failure. */
static int
rollback(struct ap_apply *ap, long failed, struct jc_err *err)
{
	struct jc_buf b = { 0 };
	bool all = true;
	int rc;

	for (size_t i = 0; i < ap->p->n; i++)
		ap->sl[i].want = ap->sl[i].active && ap->res->hosts[i].ran > 0;
	run_phase(ap, phase_rollback);
	for (size_t i = 0; i < ap->p->n; i++) {
		struct ap_slot *sl = &ap->sl[i];

		if (!sl->want)
			continue;
		if (sl->rc == 0) {
			sl->res->undone = true;
			if (sl->res->status != APPLY_HOST_FAILED)
				sl->res->status = APPLY_HOST_ROLLED_BACK;
			continue;
		}
		all = false;
		sl->res->status = APPLY_HOST_ROLLBACK_FAILED;
		free(sl->res->error);
		sl->res->error = xstrdup(sl->err.msg);
		buf_printf(&b, "; %s could not be put back: %s", sl->h.name, sl->err.msg);
	}
	json_object_set_new(ap->meta, "status", json_string(all ? "rolled-back" : "rollback-failed"));
	ap_save_last(ap->dir, ap->meta, NULL);
	rc = jc_fail(err, -EIO, "%s: %s; %s%s", ap->sl[failed].h.name, ap->sl[failed].fail_text,
	    all ? "every host was put back as it was" : "rollback incomplete", b.data ? b.data : "");
	buf_free(&b);
	return rc;
}

/* Every active host takes the open session of its name, if it was given one. */
static void
take_conns(struct ap_apply *ap)
{
	const struct apply_opts *o = ap->run.o;

	for (size_t i = 0; i < ap->p->n; i++)
		for (size_t k = 0; ap->sl[i].want && k < o->nconns; k++)
			if (o->conns[k] != NULL && strcmp(o->conns[k]->host, ap->sl[i].jh->name) == 0) {
				ap->sl[i].s = o->conns[k];
				o->conns[k] = NULL;
				break;
			}
}

int
apply_run(const struct plan *p, const struct graph *g, const struct apply_opts *o,
    struct apply_result *res, struct jc_err *err)
{
	struct ap_apply ap = { .run = { .o = o }, .p = p, .res = res };
	struct jc_transport *own;
	long failed;
	int rc = 0;

	memset(res, 0, sizeof(*res));
	pthread_mutex_init(&ap.run.lock, NULL);
	ap.run.tp = ap_transport_of(o, &own);
	ap.sl = xcalloc(p->n ? p->n : 1, sizeof(*ap.sl));
	ap.dir = apply_state_dir(o);
	if (slots_init(&ap, g) == 0)
		goto out;
	take_conns(&ap);
	if (ap.run.tp->ops->dialog != NULL) {
		/* 1 and 2 in one script per host: capture, save, then the commands */
		ap_run_scripts(&ap);
		if ((rc = ap.decide_rc) != 0) {
			jc_fail(err, rc, "%s", ap.decide_err.msg);
			goto out;
		}
	} else {
		/* 1. every host's prior state, saved before anything changes */
		run_phase(&ap, phase_capture);
		if ((rc = ap_capture_errors(&ap, err)) != 0 || (rc = ap_save_states(&ap, err)) != 0)
			goto out;
		/* 2. the setup, everyone at once, stopping at the first failure */
		run_phase(&ap, phase_setup);
	}
	if ((failed = setup_outcome(&ap)) < 0) {
		res->changed = true;
		json_object_set_new(ap.meta, "status", json_string("applied"));
		rc = ap_save_last(ap.dir, ap.meta, err);
		goto out;
	}
	/* 3. put back every host that ran something */
	rc = rollback(&ap, failed, err);
out:
	for (size_t i = 0; i < p->n; i++) {
		tp_close(ap.sl[i].s);
		ap_host_clear(&ap.sl[i].h);
		free(ap.sl[i].fail_text);
	}
	json_decref(ap.meta);
	pthread_mutex_destroy(&ap.run.lock);
	transport_free(own);
	free(ap.sl);
	free(ap.dir);
	return rc;
}

void
apply_result_clear(struct apply_result *res)
{
	for (size_t i = 0; i < res->n; i++)
		free(res->hosts[i].error);
	free(res->hosts);
	memset(res, 0, sizeof(*res));
}
