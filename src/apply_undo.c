/* SPDX-License-Identifier: MIT */
/*
 * Putting a host back to its saved facts, for the rollback of a failed
 * setup and for restore: the commands that take its current facts back
 * to the saved ones (only differences, only names that passed
 * validation), and running them on the host: query, undo, query again.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "apply_int.h"
#include "parse_state.h"

static bool
strv_has(const struct jc_strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return true;
	return false;
}

/* A restore command (text), and whether its failure is harmless. */
struct ap_cmd {
	char *text;
	bool may_fail;
};

struct ap_cmds {
	struct ap_cmd *v;
	size_t n;
	char *refused;		/* why a command was refused (nothing runs then), or NULL */
};

static void
cmds_add(struct ap_cmds *c, bool may_fail, char *text)
{
	c->v = xreallocarray(c->v, c->n + 1, sizeof(*c->v));
	c->v[c->n].text = text;
	c->v[c->n].may_fail = may_fail;
	c->n++;
}

static void
cmds_free(struct ap_cmds *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].text);
	free(c->v);
	free(c->refused);
	memset(c, 0, sizeof(*c));
}

static const struct ap_fact *
find_fact(const struct ap_fact *v, size_t n, const struct ap_fact *like)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].kind == like->kind && strcmp(v[i].iface, like->iface) == 0 &&
		    (v[i].peer == NULL) == (like->peer == NULL) &&
		    (v[i].peer == NULL || strcmp(v[i].peer, like->peer) == 0))
			return &v[i];
	return NULL;
}

/* Append the command of act on h's system; counts as one difference. */
static void
act(struct ap_cmds *out, const struct ap_host *h, enum jc_act a, const struct jc_act_arg *arg)
{
	struct jc_strv argv = { 0 };

	if (h->plat->command(a, arg, &argv) == 0) {
		/* the same check as setup's commands: the saved state names the words */
		for (size_t k = 0; k < argv.n; k++)
			if (!ap_word_ok(argv.v[k])) {
				if (out->refused == NULL) {
					char *w = jc_printable(argv.v[k], 64);

					out->refused = xasprintf("a word that is not plain: %s", w);
					free(w);
				}
				strv_free(&argv);
				return;
			}
		cmds_add(out, false, ap_argv_line(argv.v, argv.n));
	} else if (a == JC_ACT_FILE_WRITE && out->refused == NULL) {
		out->refused = xasprintf("the saved content of %s's file is not one a setup "
		    "of ours writes", arg->iface ? arg->iface : "?");
	}
	strv_free(&argv);
}

static bool
same_route(const char *a, const char *b)
{
	return (a == NULL && b == NULL) || (a != NULL && b != NULL && strcmp(a, b) == 0);
}

static size_t
restore_routes(const struct ap_host *h, const struct ap_fact *cur, size_t ncur,
    struct ap_cmds *out)
{
	size_t diffs = 0;

	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);
		char *via = NULL, *dev = NULL;

		if (s->kind != PLAN_FACT_ROUTE || c == NULL || same_route(s->st.route, c->st.route))
			continue;
		diffs++;
		if (c->st.route != NULL)
			act(out, h, JC_ACT_ROUTE_DEL, &(struct jc_act_arg){ .peer = s->peer });
		if (s->st.route != NULL && parse_route_split(s->st.route, &via, &dev) == 0)
			act(out, h, JC_ACT_ROUTE_SET,
			    &(struct jc_act_arg){ .peer = s->peer, .via = via, .iface = dev });
		free(via);
		free(dev);
	}
	return diffs;
}

static size_t
restore_addrs(const struct ap_host *h, const struct ap_fact *cur, size_t ncur,
    struct ap_cmds *out)
{
	size_t diffs = 0;

	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);

		if (s->kind != PLAN_FACT_ADDRS || c == NULL || !s->st.exists || !c->st.exists)
			continue;
		for (size_t k = 0; k < c->st.addrs.n; k++) {
			if (strv_has(&s->st.addrs, c->st.addrs.v[k]))
				continue;
			diffs++;
			act(out, h, JC_ACT_ADDR_DEL,
			    &(struct jc_act_arg){ .iface = s->iface, .addr = c->st.addrs.v[k] });
		}
		for (size_t k = 0; k < s->st.addrs.n; k++) {
			if (strv_has(&c->st.addrs, s->st.addrs.v[k]))
				continue;
			diffs++;
			act(out, h, JC_ACT_ADDR_ADD,
			    &(struct jc_act_arg){ .iface = s->iface, .addr = s->st.addrs.v[k] });
		}
		if ((h->plat->caps & JC_PLAT_LINK_ADMIN) && s->st.up != JC_UNKNOWN &&
		    c->st.up != JC_UNKNOWN && s->st.up != c->st.up) {
			diffs++;
			act(out, h, s->st.up == JC_YES ? JC_ACT_LINK_UP : JC_ACT_LINK_DOWN,
			    &(struct jc_act_arg){ .iface = s->iface });
		}
	}
	return diffs;
}

static size_t
restore_bridge(const struct ap_host *h, const struct ap_fact *cur, size_t ncur,
    struct ap_cmds *out)
{
	size_t diffs = 0;

	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);

		if (s->kind != PLAN_FACT_BRIDGE || c == NULL || !s->st.exists || !c->st.exists)
			continue;
		for (size_t k = 0; k < s->st.members.n; k++) {
			const char *m = s->st.members.v[k];

			if (ap_planned_iface(h, m) && !strv_has(&c->st.members, m)) {
				diffs++;
				act(out, h, JC_ACT_BRIDGE_ADDM, &(struct jc_act_arg){ .iface = m });
			}
		}
		for (size_t k = 0; k < c->st.members.n; k++) {
			const char *m = c->st.members.v[k];

			if (ap_planned_iface(h, m) && !strv_has(&s->st.members, m)) {
				diffs++;
				act(out, h, JC_ACT_BRIDGE_DELM, &(struct jc_act_arg){ .iface = m });
			}
		}
		if (s->st.up != JC_UNKNOWN && c->st.up != JC_UNKNOWN && s->st.up != c->st.up) {
			diffs++;
			act(out, h, s->st.up == JC_YES ? JC_ACT_BRIDGE_UP : JC_ACT_BRIDGE_DOWN,
			    &(struct jc_act_arg){ 0 });
		}
	}
	return diffs;
}

/*
 * The network services (--persist): ours (JC_SVC_PREFIX) that were not
 * there are removed; a service that was there and whose enabled state
 * changed (only the bridge's is ever changed) gets it back. Every other
 * service is left alone.
 */
static size_t
restore_services(const struct ap_host *h, const struct ap_fact *cur, size_t ncur,
    struct ap_cmds *out)
{
	size_t diffs = 0;

	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);

		if (s->kind != PLAN_FACT_SERVICES || c == NULL || !s->st.exists || !c->st.exists)
			continue;
		for (size_t k = 0; k < c->st.nsvcs; k++) {
			const struct jc_netsvc *now = &c->st.svcs[k];
			const struct jc_netsvc *was = netsvc_find(s->st.svcs, s->st.nsvcs, now->name);

			if (was == NULL && platform_svc_ours(now->name)) {
				diffs++;
				act(out, h, JC_ACT_SVC_REMOVE,
				    &(struct jc_act_arg){ .service = now->name });
			} else if (was != NULL && was->enabled != now->enabled &&
			    (platform_svc_ours(now->name) ||
			    (now->device != NULL && strcmp(now->device, "bridge0") == 0))) {
				diffs++;
				act(out, h, was->enabled ? JC_ACT_SVC_ENABLE : JC_ACT_SVC_DISABLE,
				    &(struct jc_act_arg){ .service = now->name });
			}
		}
	}
	return diffs;
}

/*
 * Our files of the persistent configuration (Linux file managers): one
 * that was not there is removed, one that was there and differs now (or
 * is gone) gets its saved content back. Nothing else is touched.
 */
static size_t
restore_files(const struct ap_host *h, const struct ap_fact *cur, size_t ncur,
    struct ap_cmds *out)
{
	size_t diffs = 0;

	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *s = &h->facts[i], *c = find_fact(cur, ncur, s);
		struct jc_act_arg a = { .iface = s->iface, .manager = s->peer };

		if (s->kind != PLAN_FACT_FILE || c == NULL)
			continue;
		if (!s->st.exists && c->st.exists) {
			diffs++;
			act(out, h, JC_ACT_FILE_REMOVE, &a);
		} else if (s->st.exists && s->st.content != NULL &&
		    (c->st.content == NULL || strcmp(s->st.content, c->st.content) != 0)) {
			diffs++;
			a.content = s->st.content;
			act(out, h, JC_ACT_FILE_WRITE, &a);
		}
	}
	return diffs;
}

/*
 * The commands that take the host from its current facts (cur) back to the
 * saved ones (h->facts): routes, then addresses, then bridge0, then the
 * network services. Only planned
 * interfaces, bridge0 and addresses that passed validation are ever named.
 * Returns the number of differences.
 */
static size_t
restore_cmds(const struct ap_host *h, const struct ap_fact *cur, size_t ncur, struct ap_cmds *out)
{
	size_t diffs = restore_routes(h, cur, ncur, out);

	diffs += restore_addrs(h, cur, ncur, out);
	diffs += restore_bridge(h, cur, ncur, out);
	diffs += restore_files(h, cur, ncur, out);
	return diffs + restore_services(h, cur, ncur, out);
}

/* A copy of h's fact list (kind, iface, peer only). */
static struct ap_fact *
facts_like(const struct ap_host *h)
{
	struct ap_fact *v = xcalloc(h->nfacts ? h->nfacts : 1, sizeof(*v));

	for (size_t i = 0; i < h->nfacts; i++) {
		v[i].kind = h->facts[i].kind;
		v[i].iface = xstrdup(h->facts[i].iface);
		v[i].peer = xstrdup(h->facts[i].peer);
	}
	return v;
}

/*
 * Put h back to its saved facts over s: query, undo the difference, query
 * again. *ran counts the commands run. Returns 0 when the host is back,
 * else negative with err filled.
 */
int
ap_restore_host(struct ap_run *run, struct jc_conn *s, const struct ap_host *h, size_t *ran,
    struct jc_err *err)
{
	double timeout = ap_cmd_timeout(run->o);
	struct ap_fact *cur = facts_like(h);
	struct ap_cmds cmds = { 0 };
	struct jc_buf failed = { 0 };
	int rc;

	*ran = 0;
	if ((rc = ap_capture(s, h, cur, h->nfacts, timeout, err)) != 0)
		goto out;
	restore_cmds(h, cur, h->nfacts, &cmds);
	if (cmds.refused != NULL) {
		rc = jc_fail(err, -EINVAL, "refusing to put it back: %s; nothing was run",
		    cmds.refused);
		goto out;
	}
	for (size_t i = 0; i < cmds.n; i++) {
		struct tr_result r = { 0 };

		ap_emit(run, APPLY_EV_UNDO, h->name, cmds.v[i].text, 0, NULL);
		if ((rc = tp_run(s, cmds.v[i].text, NULL, 0, timeout, 0, &r, err)) != 0)
			goto out;
		(*ran)++;
		if (r.status != 0 && !cmds.v[i].may_fail) {
			ap_emit(run, APPLY_EV_FAILED, h->name, cmds.v[i].text, r.status, r.err);
			buf_printf(&failed, "%s%s (exit %d)", failed.len ? "; " : "", cmds.v[i].text,
			    r.status);
		}
		tr_result_clear(&r);
	}
	/* check */
	cmds_free(&cmds);
	if ((rc = ap_capture(s, h, cur, h->nfacts, timeout, err)) != 0)
		goto out;
	if (restore_cmds(h, cur, h->nfacts, &cmds) != 0) {
		rc = jc_fail(err, -EIO, "still differs from its saved state (next: %s)%s%s",
		    cmds.v[0].text, failed.len ? "; failed: " : "", failed.len ? failed.data : "");
		goto out;
	}
	rc = 0;
out:
	cmds_free(&cmds);
	buf_free(&failed);
	ap_facts_free(cur, h->nfacts);
	return rc;
}

int
apply_state_diff(const char *saved, size_t slen, const char *cur, size_t clen,
    struct jc_strv *cmds, struct jc_err *err)
{
	struct ap_host hs = { 0 }, hc = { 0 };
	struct ap_fact *now = NULL;
	struct ap_cmds c = { 0 };
	json_error_t je;
	json_t *js = json_loadb(saved, slen, 0, &je), *jc;
	int rc;

	if (js == NULL)
		return jc_fail(err, -EINVAL, "saved state: %s", je.text);
	jc = json_loadb(cur, clen, 0, &je);
	if (jc == NULL) {
		json_decref(js);
		return jc_fail(err, -EINVAL, "current state: %s", je.text);
	}
	if ((rc = ap_host_from_json(js, "saved state", &hs, err)) != 0 ||
	    (rc = ap_host_from_json(jc, "current state", &hc, err)) != 0)
		goto out;
	/* the current facts, in the saved host's order, from cur's outputs */
	now = facts_like(&hs);
	for (size_t i = 0; i < hs.nfacts; i++) {
		const struct ap_fact *f = find_fact(hc.facts, hc.nfacts, &now[i]);

		if (f == NULL)
			continue;
		now[i].status = f->status;
		now[i].out = xstrdup(f->out);
		now[i].lstatus = f->lstatus;
		now[i].lout = xstrdup(f->lout);
		ap_fact_parse(&now[i], hs.plat);
	}
	rc = (int)restore_cmds(&hs, now, hs.nfacts, &c);
	if (c.refused != NULL) {
		rc = jc_fail(err, -EINVAL, "refusing to put it back: %s", c.refused);
		goto out;
	}
	for (size_t i = 0; i < c.n; i++)
		strv_push(cmds, c.v[i].text);
out:
	cmds_free(&c);
	ap_facts_free(now, hs.nfacts);
	ap_host_clear(&hs);
	ap_host_clear(&hc);
	json_decref(js);
	json_decref(jc);
	return rc;
}
