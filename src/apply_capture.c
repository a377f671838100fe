/* SPDX-License-Identifier: MIT */
/*
 * A host's facts: the records of a host and of its facts, reading the
 * facts with their queries (one exec each) or from the outputs a setup
 * script sent, and the checks that their state could be put back.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "apply_int.h"

static void
fact_clear(struct ap_fact *f)
{
	free(f->iface);
	free(f->peer);
	free(f->out);
	free(f->lout);
	fact_state_clear(&f->st);
	memset(f, 0, sizeof(*f));
}

void
ap_facts_free(struct ap_fact *f, size_t n)
{
	if (f == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		fact_clear(&f[i]);
	free(f);
}

void
ap_host_clear(struct ap_host *h)
{
	free(h->name);
	free(h->target);
	free(h->user);
	strv_free(&h->ifaces);
	strv_free(&h->ips);
	strv_free(&h->peers);
	ap_facts_free(h->facts, h->nfacts);
	memset(h, 0, sizeof(*h));
}

bool
ap_planned_iface(const struct ap_host *h, const char *name)
{
	for (size_t i = 0; i < h->ifaces.n; i++)
		if (strcmp(h->ifaces.v[i], name) == 0)
			return true;
	return false;
}

/* Fill the parsed state of f from its outputs (the system's parser). */
void
ap_fact_parse(struct ap_fact *f, const struct jc_platform_ops *plat)
{
	struct jc_fact_out fo = {
		.kind = f->kind, .iface = f->iface, .peer = f->peer, .status = f->status,
		.out = f->out, .lstatus = f->lstatus, .lout = f->lout,
	};

	fact_state_clear(&f->st);
	if (f->out != NULL)
		plat->fact_parse(&fo, &f->st);
}

/* Run a query; the output is stdout followed by stderr. */
static int
run_query(struct jc_conn *s, const char *q, double timeout, int *status, char **out,
    struct jc_err *err)
{
	struct tr_result r = { 0 };
	int rc = tp_run(s, q, NULL, 0, timeout, 1u << 20, &r, err);

	if (rc != 0)
		return rc;
	*status = r.status;
	*out = xasprintf("%s%s", r.out, r.err);
	tr_result_clear(&r);
	return 0;
}

/*
 * Whether the queries of f could read its state: an interface's addresses
 * must be readable, and so must the list of network services (--persist:
 * a host without the system's network manager stops the setup before any
 * change). 0, or negative with err filled.
 */
static int
fact_read(const struct ap_host *h, const struct ap_fact *f, struct jc_err *err)
{
	size_t l = f->out ? strlen(f->out) : 0;
	char *q1, *q2;
	int rc;

	if (f->kind == PLAN_FACT_FILE) {
		/* test -e: 0 there, 1 not; there, it must be readable (saved) */
		if (f->lout != NULL && (f->lstatus == 1 || (f->lstatus == 0 && f->status == 0)))
			return 0;
		while (l > 0 && (f->out[l - 1] == '\n' || f->out[l - 1] == ' '))
			l--;
		h->plat->queries(f->kind, f->iface, f->peer, &q1, &q2);
		rc = jc_fail(err, -ENOENT, "--persist: cannot read a file of ours (%s: exit %d): "
		    "%.*s", q1, f->status, (int)l, f->out ? f->out : "");
		free(q1);
		free(q2);
		return rc;
	}
	if (f->status == 0 || (f->kind != PLAN_FACT_ADDRS && f->kind != PLAN_FACT_SERVICES))
		return 0;
	while (l > 0 && (f->out[l - 1] == '\n' || f->out[l - 1] == ' '))
		l--;
	if (f->kind == PLAN_FACT_ADDRS)
		return jc_fail(err, -ENOENT, "cannot read the state of %s: %.*s", f->iface, (int)l,
		    f->out ? f->out : "");
	h->plat->queries(f->kind, f->iface, f->peer, &q1, &q2);
	rc = jc_fail(err, -ENOENT, "--persist: cannot list the network services (%s: exit %d): "
	    "%.*s", q1, f->status, (int)l, f->out ? f->out : "");
	free(q1);
	free(q2);
	return rc;
}

/*
 * After ap_fact_parse: an interface's addresses answered (exit 0) in a form
 * not understood are not a state that could be put back. 0, or negative.
 */
static int
fact_understood(const struct ap_fact *f, struct jc_err *err)
{
	if (f->kind == PLAN_FACT_ADDRS && f->status == 0 && f->out != NULL && !f->st.exists)
		return jc_fail(err, -EPROTO, "cannot read the state of %s: its answer is not "
		    "understood", f->iface);
	return 0;
}

/* Capture every fact of h (whose facts have kind/iface/peer set). */
int
ap_capture(struct jc_conn *s, const struct ap_host *h, struct ap_fact *facts, size_t n,
    double timeout, struct jc_err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct ap_fact *f = &facts[i];
		char *q1, *q2;
		int rc;

		free(f->out);
		free(f->lout);
		f->out = f->lout = NULL;
		h->plat->queries(f->kind, f->iface, f->peer, &q1, &q2);
		rc = run_query(s, q1, timeout, &f->status, &f->out, err);
		if (rc == 0 && q2 != NULL)
			rc = run_query(s, q2, timeout, &f->lstatus, &f->lout, err);
		free(q1);
		free(q2);
		if (rc != 0)
			return rc;
		if ((rc = fact_read(h, f, err)) != 0)
			return rc;
		ap_fact_parse(f, h->plat);
		if ((rc = fact_understood(f, err)) != 0)
			return rc;
	}
	return 0;
}

/* Every query is in: check and parse the facts (sl->rc, sl->err). */
int
ap_captured(struct ap_slot *sl)
{
	for (size_t i = 0; i < sl->h.nfacts; i++) {
		struct ap_fact *f = &sl->h.facts[i];

		int rc = fact_read(&sl->h, f, &sl->err);

		if (rc != 0)
			return rc;
		ap_fact_parse(f, sl->h.plat);
		if ((rc = fact_understood(f, &sl->err)) != 0)
			return rc;
	}
	return 0;
}

/* After the capture: any host unreachable or unreadable stops everything. */
int
ap_capture_errors(struct ap_apply *ap, struct jc_err *err)
{
	int rc = 0;

	for (size_t i = 0; i < ap->p->n; i++) {
		struct ap_slot *sl = &ap->sl[i];

		if (!sl->want || sl->rc == 0)
			continue;
		sl->res->status = APPLY_HOST_ERROR;
		sl->res->error = xstrdup(sl->err.msg);
		if (rc == 0)
			rc = jc_fail(err, sl->rc, "%s: %s; nothing was changed on any host",
			    sl->h.name, sl->err.msg);
	}
	return rc;
}
