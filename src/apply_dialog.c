/* SPDX-License-Identifier: MIT */
/*
 * The setup as one script per host, on a transport that has a dialog
 * (setup_script.h): each host's thread reads its script's frames; the
 * last host whose capture is in (arrive) checks every capture and saves
 * the state, then every script is told go (or stop); each command starts
 * on a go, so a failure anywhere stops the others before their next
 * command.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "apply_int.h"

/*
 * A host's capture is in (sl->rc says how it went): the last one to arrive
 * checks them all and saves the prior state; then everyone learns whether
 * to go on. Returns true to go on. With wait false, only counts (a host
 * whose thread did not start).
 */
static bool
arrive(struct ap_apply *ap, bool wait)
{
	bool go;

	pthread_mutex_lock(&ap->bar_mu);
	if (--ap->waiting == 0) {
		ap->decide_rc = ap_capture_errors(ap, &ap->decide_err);
		if (ap->decide_rc == 0)
			ap->decide_rc = ap_save_states(ap, &ap->decide_err);
		ap->decided = true;
		pthread_cond_broadcast(&ap->bar_cv);
	}
	while (wait && !ap->decided)
		pthread_cond_wait(&ap->bar_cv, &ap->bar_mu);
	go = ap->decided && ap->decide_rc == 0;
	pthread_mutex_unlock(&ap->bar_mu);
	return go;
}

/* Which fact (and which of its two queries) the script's query k reads. */
struct ap_qref {
	size_t fact;
	bool second;
};

/* One host's script as it runs. */
struct ap_dlg {
	struct ap_apply *ap;
	struct ap_slot *sl;
	struct ss_parser ps;
	struct ap_qref *qref;
	size_t nq, nqdone;
	bool arrived, go, stopped, timed_out;
	long cur;		/* index of the command running, or -1 */
	size_t next;		/* commands ended */
	char *line;		/* the echo of the command running */
	double timeout, deadline;
	int proto_rc;
	struct jc_err perr;
	struct jc_buf errtext;	/* the script's own standard error */
};

static void
set_abort(struct ap_run *run)
{
	pthread_mutex_lock(&run->lock);
	run->abort = true;
	pthread_mutex_unlock(&run->lock);
}

static int
dlg_proto(struct ap_dlg *d, const char *what)
{
	d->proto_rc = jc_fail(&d->perr, -EPROTO, "the setup script's output is out of order (%s)",
	    what);
	return 1;
}

static int
dlg_event(struct ap_dlg *d, struct ss_event *ev, struct jc_buf *reply)
{
	struct ap_slot *sl = d->sl;
	struct ap_run *run = sl->run;
	const struct plan_cmd *pc;

	switch (ev->kind) {
	case SS_QUERY: {
		struct ap_fact *f;

		if (d->arrived || ev->k != d->nqdone + 1 || ev->k > d->nq)
			return dlg_proto(d, "query");
		f = &sl->h.facts[d->qref[ev->k - 1].fact];
		if (d->qref[ev->k - 1].second) {
			free(f->lout);
			f->lstatus = ev->status;
			f->lout = ev->text;
		} else {
			free(f->out);
			f->status = ev->status;
			f->out = ev->text;
		}
		ev->text = NULL;
		d->nqdone++;
		return 0;
	}
	case SS_READY:
		if (d->arrived || d->nqdone != d->nq)
			return dlg_proto(d, "ready");
		sl->rc = ap_captured(sl);
		d->arrived = true;
		d->go = arrive(d->ap, true);
		if (d->go)
			buf_printf(reply, "go\n%s\n", d->ap->token);
		else
			buf_puts(reply, "stop\n");
		d->deadline = jc_now() + d->timeout;
		return 0;
	case SS_START:
		if (!d->go || d->cur >= 0 || ev->k != d->next + 1 || ev->k > sl->ph->cmds.n)
			return dlg_proto(d, "start");
		if (ap_aborted(run)) {
			buf_puts(reply, "stop\n");
			d->stopped = true;
			return 0;
		}
		pc = &sl->ph->cmds.v[ev->k - 1];
		free(d->line);
		d->line = ap_argv_line(pc->argv, pc->argc);
		ap_emit(run, APPLY_EV_RUN, sl->h.name, d->line, 0, NULL);
		sl->res->ran++;
		buf_puts(reply, "go\n");
		d->cur = (long)ev->k - 1;
		d->deadline = jc_now() + d->timeout;
		return 0;
	case SS_END:
		if (d->cur < 0 || ev->k != (size_t)d->cur + 1)
			return dlg_proto(d, "end");
		pc = &sl->ph->cmds.v[d->cur];
		d->cur = -1;
		d->next = ev->k;
		d->deadline = jc_now() + d->timeout;
		if (ev->status == 0)
			return 0;
		ap_trim(ev->text);
		ap_emit(run, pc->may_fail ? APPLY_EV_IGNORED : APPLY_EV_FAILED, sl->h.name, d->line,
		    ev->status, ev->text);
		if (!pc->may_fail) {
			sl->fail_text = xasprintf("%s failed (exit %d)%s%s", d->line, ev->status,
			    *ev->text ? ": " : "", ev->text);
			sl->rc = -EIO;
			set_abort(run);
		}
		return 0;
	}
	return 0;
}

static int
dlg_data(void *arg, int fd, const char *data, size_t len, struct jc_buf *reply)
{
	struct ap_dlg *d = arg;
	struct ss_event ev;
	int r;

	if (fd == 2) {
		if (d->errtext.len < 65536)
			buf_append(&d->errtext, data, len);
		return 0;
	}
	ss_feed(&d->ps, data, len);
	if (ss_pending(&d->ps) > TR_DEFAULT_CAP) {
		d->proto_rc = jc_fail(&d->perr, TR_ETOOBIG, "the setup script's output is larger "
		    "than %u MiB: refused", TR_DEFAULT_CAP >> 20);
		return 1;
	}
	while ((r = ss_next(&d->ps, &ev, &d->perr)) == 1) {
		int stop = dlg_event(d, &ev, reply);

		ss_event_clear(&ev);
		if (stop)
			return 1;
	}
	if (r < 0) {
		d->proto_rc = r;
		return 1;
	}
	return 0;
}

static int
dlg_tick(void *arg)
{
	struct ap_dlg *d = arg;

	if (d->deadline > 0 && jc_now() > d->deadline) {
		d->timed_out = true;
		return 1;
	}
	return 0;
}

/* The script of sl's host (queries and commands checked). 0, or negative. */
static int
dlg_script(struct ap_dlg *d, char **script)
{
	struct ap_slot *sl = d->sl;
	const struct apply_opts *o = sl->run->o;
	const struct jc_raw *raw = NULL;
	struct jc_strv q = { 0 };

	for (size_t i = 0; i < o->nraws && raw == NULL; i++)
		if (o->raws[i].host != NULL && o->raws[i].n > 0 &&
		    strcmp(o->raws[i].host, sl->h.name) == 0)
			raw = &o->raws[i];
	*script = NULL;
	for (size_t c = 0; c < sl->ph->cmds.n; c++)
		for (size_t k = 0; k < sl->ph->cmds.v[c].argc; k++)
			if (!ap_word_ok(sl->ph->cmds.v[c].argv[k]))
				return jc_fail(&sl->err, -EINVAL,
				    "refusing to run a word that is not plain: %s",
				    sl->ph->cmds.v[c].argv[k]);
	d->qref = xcalloc(2 * sl->h.nfacts + 1, sizeof(*d->qref));
	for (size_t i = 0; i < sl->h.nfacts; i++) {
		struct ap_fact *f = &sl->h.facts[i];
		char *q1, *q2;

		if (raw != NULL && sl->h.plat->prior != NULL &&
		    sl->h.plat->prior(raw, f->kind, f->iface, f->peer, &f->status, &f->out,
		    &f->lstatus, &f->lout))
			continue;	/* the probe said it already */
		sl->h.plat->queries(f->kind, f->iface, f->peer, &q1, &q2);
		d->qref[q.n] = (struct ap_qref){ i, false };
		strv_push_owned(&q, q1);
		if (q2 != NULL) {
			d->qref[q.n] = (struct ap_qref){ i, true };
			strv_push_owned(&q, q2);
		}
	}
	d->nq = q.n;
	/* a scoped sudo: each command under its own, by the path its rule names */
	*script = setup_script(q.v, q.n, sl->ph->cmds.v, sl->ph->cmds.n,
	    sl->jh->sudo_mode == JC_SUDO_SCOPED ? sl->h.plat->priv_path : NULL);
	strv_free(&q);
	return 0;
}

/* After the script: what became of the host when it did not say itself. */
static void
dlg_after(struct ap_dlg *d, int rc, int status, struct jc_err *err)
{
	struct ap_slot *sl = d->sl;
	struct ap_run *run = sl->run;

	if (rc == TR_ESTOPPED && d->timed_out)
		rc = jc_fail(err, TR_ETIMEOUT, "%s: remote command timed out after %g s",
		    sl->h.name, d->timeout);
	else if (d->proto_rc != 0)
		rc = d->proto_rc, *err = d->perr;
	if (!d->arrived) {
		if (rc != 0) {
			sl->rc = rc;
			sl->err = *err;
		} else {
			buf_puts(&d->errtext, "");
			ap_trim(d->errtext.data);
			sl->rc = jc_fail(&sl->err, -EPROTO, "the setup script ended before its "
			    "capture (exit %d)%s%s", status, *d->errtext.data ? ": " : "",
			    d->errtext.data);
		}
		arrive(d->ap, true);
		return;
	}
	if (!d->go || sl->fail_text != NULL)
		return;
	if (rc != 0) {
		sl->fail_text = d->cur >= 0 ? xasprintf("%s: %s", d->line, err->msg) :
		    xstrdup(err->msg);
		sl->rc = rc;
		sl->err = *err;
		set_abort(run);
	} else if (!d->stopped && d->next < sl->ph->cmds.n) {
		/* it ended by itself without a word about the command next (sudo refused) */
		const struct plan_cmd *pc = &sl->ph->cmds.v[d->cur >= 0 ? (size_t)d->cur : d->next];
		const char *e;

		if (d->cur < 0) {
			free(d->line);
			d->line = ap_argv_line(pc->argv, pc->argc);
			ap_emit(run, APPLY_EV_RUN, sl->h.name, d->line, 0, NULL);
			sl->res->ran++;
		}
		buf_puts(&d->errtext, "");
		ap_trim(d->errtext.data);
		e = d->errtext.data;
		ap_emit(run, APPLY_EV_FAILED, sl->h.name, d->line, status, e);
		sl->fail_text = xasprintf("%s failed (exit %d)%s%s", d->line, status, *e ? ": " : "",
		    e);
		sl->rc = -EIO;
		set_abort(run);
	}
}

/* A host's whole setup: connect, run its script to the end. */
static void
phase_script(size_t i, void *arg)
{
	static const struct tp_dialog_cbs cbs = { dlg_data, dlg_tick };
	struct ap_apply *ap = arg;
	struct ap_slot *sl = &ap->sl[i];
	struct ap_dlg d = { .ap = ap, .sl = sl, .cur = -1 };
	const struct jc_host *jh = sl->jh;
	struct jc_err err = { 0 };
	char *script = NULL, *in;
	int rc, status = -1;

	d.timeout = ap_cmd_timeout(ap->run.o);
	ss_parser_init(&d.ps, ap->token);
	sl->rc = dlg_script(&d, &script);
	if (sl->rc == 0 && sl->s == NULL)
		sl->rc = tp_connect(ap->run.tp, jh->name, jh->user, jh->port, &sl->s, &sl->err);
	if (sl->rc != 0) {
		arrive(ap, true);
		goto out;
	}
	in = xasprintf("%s\n", ap->token);
	d.deadline = jc_now() + d.timeout * (double)(d.nq + 1);
	rc = tp_dialog(sl->s, script, in, strlen(in), &cbs, &d, 0, &status, &err);
	free(in);
	dlg_after(&d, rc, status, &err);
out:
	free(script);
	free(d.qref);
	free(d.line);
	buf_free(&d.errtext);
	ss_parser_clear(&d.ps);
}

struct ap_job {
	struct ap_apply *ap;
	size_t i;
};

static void *
script_main(void *arg)
{
	struct ap_job *j = arg;

	phase_script(j->i, j->ap);
	return NULL;
}

/* Every active host's script at once, one thread each. */
void
ap_run_scripts(struct ap_apply *ap)
{
	size_t n = ap->p->n;
	pthread_t *th = xcalloc(n ? n : 1, sizeof(*th));
	struct ap_job *jobs = xcalloc(n ? n : 1, sizeof(*jobs));
	bool *started = xcalloc(n ? n : 1, sizeof(*started));

	jc_token(ap->token, SS_TOKEN_LEN, "jc");
	pthread_mutex_init(&ap->bar_mu, NULL);
	pthread_cond_init(&ap->bar_cv, NULL);
	for (size_t i = 0; i < n; i++) {
		ap->sl[i].rc = 0;
		memset(&ap->sl[i].err, 0, sizeof(ap->sl[i].err));
		if (ap->sl[i].want)
			ap->waiting++;
	}
	for (size_t i = 0; i < n; i++) {
		if (!ap->sl[i].want)
			continue;
		jobs[i] = (struct ap_job){ ap, i };
		started[i] = pthread_create(&th[i], NULL, script_main, &jobs[i]) == 0;
		if (!started[i]) {
			ap->sl[i].rc = jc_fail(&ap->sl[i].err, -EAGAIN, "cannot start a thread");
			arrive(ap, false);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	pthread_cond_destroy(&ap->bar_cv);
	pthread_mutex_destroy(&ap->bar_mu);
	free(th);
	free(jobs);
	free(started);
}
