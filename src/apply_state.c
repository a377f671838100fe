/* SPDX-License-Identifier: MIT */
/*
 * The state folder: a host's saved state (hosts/I-NAME.json) written from
 * its captured facts and read back with every name validated,
 * last-setup.json (the setup's status, and the SHA-256 digests of each
 * host's file), each file written whole or not at all, and what a setup
 * keeps of the previous one (the entries of the hosts it leaves alone,
 * the earlier outputs of a --persist host).
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "apply_int.h"
#include "hostfile_read.h"
#include "hosts.h"
#include "setup_record.h"

char *
apply_state_dir(const struct apply_opts *o)
{
	const char *home = getenv("HOME");

	if (o->state_dir != NULL)
		return xstrdup(o->state_dir);
	if (home == NULL || *home == '\0')
		home = "/";
	return xasprintf("%s/.cache/jaccl-config", home);
}

/*
 * A JSON file of the state folder: a regular file read without blocking
 * (jc_read_file), at most 16 MiB. NULL with je->text set when it cannot be
 * read or parsed.
 */
json_t *
ap_load_json(const char *path, json_error_t *je)
{
	struct jc_err e = { 0 };
	char *buf = NULL;
	size_t len = 0;
	json_t *j;

	if (jc_read_file(path, 16u << 20, &buf, &len, &e) != 0) {
		if (je != NULL)
			snprintf(je->text, sizeof(je->text), "%.*s", (int)sizeof(je->text) - 1, e.msg);
		return NULL;
	}
	j = json_loadb(buf, len, 0, je);
	free(buf);
	return j;
}

/* The state folder and its hosts/ folder are ours alone (jc_private_dir). */
int
ap_state_dir_ok(const char *dir, struct jc_err *err)
{
	char *hd = xasprintf("%s/hosts", dir);
	int rc = jc_private_dir(dir, false, err);

	if (rc == 0 && access(hd, F_OK) == 0)
		rc = jc_private_dir(hd, false, err);
	free(hd);
	return rc;
}

/* Write j to path, whole or not at all (jc_write_atomic), mode 0600. */
static int
write_json_atomic(const char *path, json_t *j, struct jc_err *err)
{
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	char *line;
	int rc;

	if (text == NULL)
		return jc_fail(err, -ENOMEM, "cannot serialise the state for %s", path);
	line = xasprintf("%s\n", text);
	rc = jc_write_atomic(path, line, strlen(line), 0600, err);
	free(line);
	free(text);
	return rc;
}

static json_t *
jstr(const char *s)
{
	json_t *j;

	if (s == NULL)
		return json_null();
	if ((j = json_string(s)) != NULL)
		return j;
	{
		char *p = hostfile_printable(s, 0);

		j = json_string(p);
		free(p);
		return j ? j : json_null();
	}
}

static json_t *
strv_json(const struct jc_strv *sv)
{
	json_t *a = json_array();

	for (size_t i = 0; i < sv->n; i++)
		json_array_append_new(a, jstr(sv->v[i]));
	return a;
}

static json_t *
tri_json(int v)
{
	return v == JC_UNKNOWN ? json_null() : json_boolean(v == JC_YES);
}

static void
now_text(char out[32])
{
	time_t t = time(NULL);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static const char *
kind_name(enum plan_fact_kind k)
{
	return k == PLAN_FACT_ADDRS ? "addrs" : k == PLAN_FACT_BRIDGE ? "bridge" :
	    k == PLAN_FACT_SERVICES ? "services" : k == PLAN_FACT_FILE ? "file" : "route";
}

static json_t *
host_json(const struct ap_host *h)
{
	json_t *j = json_object(), *addrs = json_array(), *facts = json_array();
	char when[32];

	now_text(when);
	json_object_set_new(j, "version", json_integer(STATE_VERSION));
	json_object_set_new(j, "host", jstr(h->name));
	json_object_set_new(j, "target", jstr(h->target));
	json_object_set_new(j, "os", json_string(h->plat->name));
	json_object_set_new(j, "saved", json_string(when));
	for (size_t i = 0; i < h->ifaces.n; i++)
		json_array_append_new(addrs, json_pack("{s:s, s:s, s:s}", "iface", h->ifaces.v[i],
		    "ip", h->ips.v[i], "peer_ip", h->peers.v[i]));
	json_object_set_new(j, "addresses", addrs);
	for (size_t i = 0; i < h->nfacts; i++) {
		const struct ap_fact *f = &h->facts[i];
		json_t *o = json_object();
		char *q1, *q2;

		h->plat->queries(f->kind, f->iface, f->peer, &q1, &q2);
		json_object_set_new(o, "kind", json_string(kind_name(f->kind)));
		json_object_set_new(o, "iface", jstr(f->iface));
		json_object_set_new(o, "peer", jstr(f->peer));
		json_object_set_new(o, "query", jstr(q1));
		json_object_set_new(o, "status", json_integer(f->status));
		json_object_set_new(o, "output", jstr(f->out));
		if (q2 != NULL) {
			json_object_set_new(o, "link_query", jstr(q2));
			json_object_set_new(o, "link_status", json_integer(f->lstatus));
			json_object_set_new(o, "link_output", jstr(f->lout));
		}
		/* what the outputs say (informative: restore parses the outputs again) */
		json_object_set_new(o, "exists", json_boolean(f->st.exists));
		json_object_set_new(o, "up", tri_json(f->st.up));
		if (f->kind == PLAN_FACT_ADDRS)
			json_object_set_new(o, "inet", strv_json(&f->st.addrs));
		if (f->kind == PLAN_FACT_BRIDGE)
			json_object_set_new(o, "members", strv_json(&f->st.members));
		if (f->kind == PLAN_FACT_ROUTE)
			json_object_set_new(o, "route", jstr(f->st.route));
		if (f->kind == PLAN_FACT_SERVICES) {
			json_t *sv = json_array();

			for (size_t k = 0; k < f->st.nsvcs; k++)
				json_array_append_new(sv, json_pack("{s:o, s:o, s:o, s:b}", "name",
				    jstr(f->st.svcs[k].name), "port", jstr(f->st.svcs[k].port),
				    "device", jstr(f->st.svcs[k].device), "enabled",
				    f->st.svcs[k].enabled));
			json_object_set_new(o, "services", sv);
		}
		json_array_append_new(facts, o);
		free(q1);
		free(q2);
	}
	json_object_set_new(j, "facts", facts);
	return j;
}

const char *
ap_jget_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/*
 * A file fact (--persist on Linux) names a manager whose file of iface the
 * host's system can remove: systemd-networkd, ifupdown.
 */
static bool
file_fact_ok(const struct jc_platform_ops *plat, const char *iface, const char *manager)
{
	struct jc_strv v = { 0 };
	int r;

	if (manager == NULL)
		return false;
	r = plat->command(JC_ACT_FILE_REMOVE,
	    &(struct jc_act_arg){ .iface = iface, .manager = manager }, &v);
	strv_free(&v);
	return r == 0;
}

/* Load a host's saved state; every name is validated. */
int
ap_host_from_json(json_t *j, const char *path, struct ap_host *h, struct jc_err *err)
{
	json_t *addrs = json_object_get(j, "addresses"), *facts = json_object_get(j, "facts");
	const char *name = ap_jget_str(j, "host"), *target = ap_jget_str(j, "target");
	const char *os = ap_jget_str(j, "os");
	struct jc_host tmp = { 0 };
	struct jc_err e2 = { 0 };
	size_t i;
	json_t *v;

	memset(h, 0, sizeof(*h));
	if (!json_is_object(j) || name == NULL || target == NULL || os == NULL ||
	    !json_is_array(addrs) || !json_is_array(facts))
		return jc_fail(err, -EINVAL, "%s: not a saved host state", path);
	if (hosts_parse_target(target, &tmp, &e2) != 0) {
		jc_host_clear(&tmp);
		return jc_fail(err, -EINVAL, "%s: %s", path, e2.msg);
	}
	/* the name is what restore connects to: it passes --hosts' check, alone */
	{
		struct jc_host hn = { 0 };
		bool good = hosts_parse_target(name, &hn, &e2) == 0 && strcmp(hn.name, name) == 0;

		jc_host_clear(&hn);
		if (!good) {
			char *safe = jc_printable(name, 64);
			int rc = jc_fail(err, -EINVAL, "%s: invalid host '%s'", path, safe);

			free(safe);
			jc_host_clear(&tmp);
			return rc;
		}
	}
	h->name = xstrdup(name);
	h->target = tmp.target;
	h->user = tmp.user;
	h->port = tmp.port;
	tmp.target = tmp.user = NULL;
	jc_host_clear(&tmp);
	h->plat = platform_by_name_or_default(os);
	json_array_foreach(addrs, i, v) {
		const char *ifn = ap_jget_str(v, "iface"), *ip = ap_jget_str(v, "ip");
		const char *peer = ap_jget_str(v, "peer_ip");

		if (ifn == NULL || !jc_iface_name_ok(ifn) || strcmp(ifn, "bridge0") == 0 ||
		    ip == NULL || !jc_ipv4_ok(ip) || peer == NULL || !jc_ipv4_ok(peer))
			return jc_fail(err, -EINVAL, "%s: bad address entry %zu", path, i);
		strv_push(&h->ifaces, ifn);
		strv_push(&h->ips, ip);
		strv_push(&h->peers, peer);
	}
	h->facts = xcalloc(json_array_size(facts) + 1, sizeof(*h->facts));
	json_array_foreach(facts, i, v) {
		struct ap_fact *f = &h->facts[h->nfacts];
		const char *kind = ap_jget_str(v, "kind"), *ifn = ap_jget_str(v, "iface");
		const char *peer = ap_jget_str(v, "peer"), *out = ap_jget_str(v, "output");

		if (kind == NULL || ifn == NULL || out == NULL)
			return jc_fail(err, -EINVAL, "%s: bad fact %zu", path, i);
		f->kind = strcmp(kind, "addrs") == 0 ? PLAN_FACT_ADDRS :
		    strcmp(kind, "bridge") == 0 ? PLAN_FACT_BRIDGE :
		    strcmp(kind, "services") == 0 ? PLAN_FACT_SERVICES :
		    strcmp(kind, "file") == 0 ? PLAN_FACT_FILE : PLAN_FACT_ROUTE;
		if (strcmp(kind, kind_name(f->kind)) != 0 ||
		    (f->kind == PLAN_FACT_BRIDGE ? strcmp(ifn, "bridge0") != 0 ||
		    !(h->plat->caps & JC_PLAT_BRIDGE) :
		    f->kind == PLAN_FACT_SERVICES ? strcmp(ifn, PLAN_SERVICES) != 0 ||
		    h->plat->persist == NULL :
		    !ap_planned_iface(h, ifn)) ||
		    (f->kind == PLAN_FACT_ROUTE && (peer == NULL || !jc_ipv4_ok(peer))) ||
		    (f->kind == PLAN_FACT_FILE && !file_fact_ok(h->plat, ifn, peer)))
			return jc_fail(err, -EINVAL, "%s: bad fact %zu", path, i);
		f->iface = xstrdup(ifn);
		f->peer = f->kind == PLAN_FACT_ROUTE || f->kind == PLAN_FACT_FILE ? xstrdup(peer) :
		    NULL;
		f->status = (int)json_integer_value(json_object_get(v, "status"));
		f->out = xstrdup(out);
		if (ap_jget_str(v, "link_output") != NULL) {
			f->lout = xstrdup(ap_jget_str(v, "link_output"));
			f->lstatus = (int)json_integer_value(json_object_get(v, "link_status"));
		}
		h->nfacts++;
		ap_fact_parse(f, h->plat);
	}
	return 0;
}

/* SHA-256 of j's compact text with sorted keys, into hex. */
static void
json_digest(const json_t *j, char hex[65])
{
	char *text = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);

	jc_sha256_hex(text ? text : "", text ? strlen(text) : 0, hex);
	free(text);
}

/*
 * The digests last-setup.json keeps of a host's state file: one of the
 * host's entry without its facts, one per fact ({"state": H, "facts": [H]}).
 */
static json_t *
state_digests(json_t *hj)
{
	json_t *top = json_copy(hj), *facts = json_array(), *f;
	char hex[65];
	size_t i;

	json_object_del(top, "facts");
	json_digest(top, hex);
	json_decref(top);
	json_array_foreach(json_object_get(hj, "facts"), i, f) {
		char fh[65];

		json_digest(f, fh);
		json_array_append_new(facts, json_string(fh));
	}
	return json_pack("{s:s, s:o}", "state", hex, "facts", facts);
}

/* The state file hj is the one whose digests were recorded (dg). */
bool
ap_digests_match(json_t *hj, json_t *dg)
{
	json_t *now = state_digests(hj);
	bool same = json_is_object(dg) && json_equal(now, dg);

	json_decref(now);
	return same;
}

/* File name of host i's state: "hosts/I-NAME.json" with NAME made safe. */
static char *
host_file(size_t i, const char *name)
{
	struct jc_buf b = { 0 };

	buf_printf(&b, "hosts/%zu-", i);
	for (const char *p = name; *p; p++) {
		char c = *p;

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '.' || c == '-' || c == '_'))
			c = '_';
		buf_append(&b, &c, 1);
	}
	buf_puts(&b, ".json");
	return buf_steal(&b);
}

int
ap_save_last(const char *dir, json_t *meta, struct jc_err *err)
{
	char *path = xasprintf("%s/%s", dir, LAST_SETUP);
	int rc = write_json_atomic(path, meta, err);

	free(path);
	return rc;
}

/*
 * Hosts that are already set up run nothing and save nothing; when the
 * previous setup saved their state (and it was not undone), keep those
 * entries, so that restore still undoes them.
 */
static void
carry_over(const char *dir, const struct plan *p, const struct apply_result *res, json_t *hosts)
{
	char *path = xasprintf("%s/%s", dir, LAST_SETUP);
	json_t *old = ap_load_json(path, NULL), *v;
	const char *st = ap_jget_str(old, "status");
	size_t k;

	free(path);
	if (st == NULL || strcmp(st, "restored") == 0 || strcmp(st, "rolled-back") == 0) {
		json_decref(old);
		return;
	}
	json_array_foreach(json_object_get(old, "hosts"), k, v) {
		const char *name = ap_jget_str(v, "host");

		if (name == NULL || json_is_true(json_object_get(v, "restored")))
			continue;
		for (size_t i = 0; i < p->n; i++)
			if (res->hosts[i].status == APPLY_HOST_UNCHANGED &&
			    strcmp(res->hosts[i].name, name) == 0)
				json_array_append(hosts, v);
	}
	json_decref(old);
}

/* The same fact (kind, iface, peer) in a saved facts array, or NULL. */
static json_t *
json_fact_like(json_t *facts, json_t *f)
{
	const char *peer = ap_jget_str(f, "peer");
	size_t i;
	json_t *v;

	json_array_foreach(facts, i, v) {
		const char *vp = ap_jget_str(v, "peer");

		if (ap_jget_str(v, "kind") != NULL && ap_jget_str(f, "kind") != NULL &&
		    strcmp(ap_jget_str(v, "kind"), ap_jget_str(f, "kind")) == 0 &&
		    ap_jget_str(v, "iface") != NULL && ap_jget_str(f, "iface") != NULL &&
		    strcmp(ap_jget_str(v, "iface"), ap_jget_str(f, "iface")) == 0 &&
		    (vp == NULL) == (peer == NULL) && (vp == NULL || strcmp(vp, peer) == 0))
			return v;
	}
	return NULL;
}

/*
 * A --persist host (one with a services fact) runs again on every run, so
 * what it captures on a later run is the state after the earlier one.
 * When the last setup saved this host and neither it nor the host was undone
 * since, each fact of hj that the earlier file also has keeps the earlier
 * output: restore still goes back to before the first setup (removing the
 * services it created). Only the file changes; a rollback of this run still
 * uses what this run captured.
 */
static void
keep_earlier_facts(const char *dir, const char *name, json_t *hj)
{
	char *path = xasprintf("%s/%s", dir, LAST_SETUP);
	json_t *old = ap_load_json(path, NULL), *v, *oh = NULL, *f;
	const char *st = ap_jget_str(old, "status");
	bool persist = false;
	size_t k;

	free(path);
	json_array_foreach(json_object_get(hj, "facts"), k, f)
		persist = persist || (ap_jget_str(f, "kind") && strcmp(ap_jget_str(f, "kind"), "services") == 0);
	if (!persist || st == NULL || strcmp(st, "restored") == 0 || strcmp(st, "rolled-back") == 0) {
		json_decref(old);
		return;
	}
	json_array_foreach(json_object_get(old, "hosts"), k, v) {
		const char *file = ap_jget_str(v, "file");

		if (ap_jget_str(v, "host") == NULL || strcmp(ap_jget_str(v, "host"), name) != 0 ||
		    json_is_true(json_object_get(v, "restored")) || file == NULL ||
		    !setup_record_file_ok(file))
			continue;
		path = xasprintf("%s/%s", dir, file);
		oh = ap_load_json(path, NULL);
		free(path);
		/* only what the earlier setup recorded is carried on */
		if (oh != NULL && !ap_digests_match(oh, json_object_get(v, "sha256"))) {
			json_decref(oh);
			oh = NULL;
		}
		break;
	}
	if (oh != NULL && ap_jget_str(oh, "host") != NULL && strcmp(ap_jget_str(oh, "host"), name) == 0)
		json_array_foreach(json_object_get(hj, "facts"), k, f) {
			json_t *was = json_fact_like(json_object_get(oh, "facts"), f);

			if (was != NULL)
				json_array_set(json_object_get(hj, "facts"), k, was);
		}
	json_decref(oh);
	json_decref(old);
}

/* Save every active host's state and last-setup.json ("in-progress"). */
int
ap_save_states(struct ap_apply *ap, struct jc_err *err)
{
	json_t *hosts = json_array();
	char when[32], *hd = xasprintf("%s/hosts", ap->dir);
	int rc;

	if ((rc = jc_private_dir(ap->dir, true, err)) == 0)
		rc = jc_private_dir(hd, true, err);
	free(hd);
	now_text(when);
	ap->meta = json_object();
	json_object_set_new(ap->meta, "version", json_integer(STATE_VERSION));
	json_object_set_new(ap->meta, "program", json_string(JC_PROG " " PACKAGE_VERSION));
	json_object_set_new(ap->meta, "started", json_string(when));
	json_object_set_new(ap->meta, "status", json_string("in-progress"));
	for (size_t i = 0; i < ap->p->n && rc == 0; i++) {
		struct ap_slot *sl = &ap->sl[i];
		char *file, *path;
		json_t *hj;

		if (!sl->want)
			continue;
		file = host_file(i, sl->h.name);
		path = xasprintf("%s/%s", ap->dir, file);
		hj = host_json(&sl->h);
		keep_earlier_facts(ap->dir, sl->h.name, hj);
		rc = write_json_atomic(path, hj, err);
		json_array_append_new(hosts, json_pack("{s:s, s:s, s:b, s:o}", "host", sl->h.name,
		    "file", file, "restored", 0, "sha256", state_digests(hj)));
		json_decref(hj);
		free(file);
		free(path);
	}
	if (rc == 0)
		carry_over(ap->dir, ap->p, ap->res, hosts);
	json_object_set_new(ap->meta, "hosts", hosts);
	if (rc == 0)
		rc = ap_save_last(ap->dir, ap->meta, err);
	if (rc != 0) {
		char *why = xstrdup(err->msg);

		rc = jc_fail(err, rc, "%s; nothing was changed on any host", why);
		free(why);
	}
	return rc;
}
