/* SPDX-License-Identifier: MIT */
/*
 * Restore: read last-setup.json and the saved state of every host it
 * names (each file checked against the digests the setup recorded), put
 * every host back at once, and mark in last-setup.json the hosts that
 * are back.
 */
#include "config.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "apply_int.h"
#include "setup_record.h"

struct rs_slot {
	struct ap_host h;
	size_t ran;
	int rc;
	struct jc_err err;
};

struct ap_restore {
	struct ap_run run;
	struct rs_slot *sl;
	size_t ns;
};

static void
rs_host(size_t i, void *arg)
{
	struct ap_restore *rs = arg;
	struct rs_slot *sl = &rs->sl[i];
	struct jc_conn *s = NULL;

	sl->rc = tp_connect(rs->run.tp, sl->h.name, sl->h.user, sl->h.port, &s, &sl->err);
	if (sl->rc == 0)
		sl->rc = ap_restore_host(&rs->run, s, &sl->h, &sl->ran, &sl->err);
	tp_close(s);
}

/*
 * last-setup.json of dir: NULL with *why set when there is nothing to
 * restore, NULL with err filled (*rc) when it is not a saved setup.
 */
static json_t *
load_last(const char *path, const char **why, int *rc, struct jc_err *err)
{
	json_error_t je;
	json_t *meta;
	const char *status;

	if (access(path, F_OK) != 0) {
		*why = "no setup was saved";
		return NULL;
	}
	meta = ap_load_json(path, &je);
	status = ap_jget_str(meta, "status");
	if (meta == NULL || !json_is_array(json_object_get(meta, "hosts")) || status == NULL) {
		*rc = jc_fail(err, -EINVAL, "%s: not a saved setup%s%s", path, meta ? "" : ": ",
		    meta ? "" : je.text);
		json_decref(meta);
		return NULL;
	}
	if (strcmp(status, "rolled-back") == 0 || strcmp(status, "restored") == 0) {
		*why = strcmp(status, "restored") == 0 ? "the last setup was already restored" :
		    "the last setup failed and was rolled back";
		json_decref(meta);
		return NULL;
	}
	return meta;
}

static bool
named(const char *name, const char *const *only, size_t nonly)
{
	for (size_t k = 0; k < nonly; k++)
		if (name != NULL && strcmp(name, only[k]) == 0)
			return true;
	return false;
}

/* Every name of only must be a saved host. */
static int
check_only(json_t *hosts, const char *dir, const char *const *only, size_t nonly,
    struct jc_err *err)
{
	for (size_t k = 0; k < nonly; k++) {
		bool found = false;
		size_t i;
		json_t *v;

		json_array_foreach(hosts, i, v)
			if (ap_jget_str(v, "host") && strcmp(ap_jget_str(v, "host"), only[k]) == 0)
				found = true;
		if (!found)
			return jc_fail(err, -ENOENT, "%s: no saved state in %s", only[k], dir);
	}
	return 0;
}

/* Load the saved state of every host to restore into rs->sl. */
static int
load_saved_hosts(struct ap_restore *rs, json_t *hosts, const char *dir, const char *path,
    const char *const *only, size_t nonly, struct jc_err *err)
{
	json_error_t je;
	json_t *v, *files = json_object(), *names = json_object();
	size_t i;
	int rc = 0;

	rs->sl = xcalloc(json_array_size(hosts) + 1, sizeof(*rs->sl));
	/* one host, one state file: no two entries share either */
	json_array_foreach(hosts, i, v) {
		const char *name = ap_jget_str(v, "host"), *file = ap_jget_str(v, "file");

		if (name == NULL || file == NULL || !setup_record_file_ok(file)) {
			rc = jc_fail(err, -EINVAL, "%s: bad host entry %zu", path, i);
			goto out;
		}
		if (json_object_get(files, file) != NULL || json_object_get(names, name) != NULL) {
			rc = jc_fail(err, -EINVAL, "%s: host entry %zu shares its host or its state "
			    "file with another; nothing restored", path, i);
			goto out;
		}
		json_object_set_new(files, file, json_true());
		json_object_set_new(names, name, json_true());
	}
	json_array_foreach(hosts, i, v) {
		const char *name = ap_jget_str(v, "host"), *file = ap_jget_str(v, "file");
		char *hp;
		json_t *hj;

		if ((nonly > 0 && !named(name, only, nonly)) ||
		    json_is_true(json_object_get(v, "restored")))
			continue;
		hp = xasprintf("%s/%s", dir, file);
		hj = ap_load_json(hp, &je);
		if (hj == NULL)
			rc = jc_fail(err, -EINVAL, "%s: %s", hp, je.text);
		else if (ap_jget_str(hj, "host") == NULL || strcmp(ap_jget_str(hj, "host"), name) != 0)
			rc = jc_fail(err, -EINVAL, "%s: not the state of %s; nothing restored", hp,
			    name);
		else if (!ap_digests_match(hj, json_object_get(v, "sha256")))
			rc = jc_fail(err, -EINVAL, "%s: not what the setup recorded (its digests "
			    "in %s differ); nothing restored", hp, path);
		else
			rc = ap_host_from_json(hj, hp, &rs->sl[rs->ns].h, err);
		json_decref(hj);
		free(hp);
		rs->ns++;
		if (rc != 0)
			goto out;
	}
out:
	json_decref(files);
	json_decref(names);
	return rc;
}

/* Mark the hosts that are back; the setup is restored when every host is. */
static void
mark_restored(const struct ap_restore *rs, json_t *meta, const char *dir)
{
	bool all = true;
	size_t i;
	json_t *v;

	json_array_foreach(json_object_get(meta, "hosts"), i, v) {
		for (size_t k = 0; k < rs->ns; k++)
			if (rs->sl[k].rc == 0 && ap_jget_str(v, "host") != NULL &&
			    strcmp(ap_jget_str(v, "host"), rs->sl[k].h.name) == 0)
				json_object_set_new(v, "restored", json_true());
		if (!json_is_true(json_object_get(v, "restored")))
			all = false;
	}
	if (all)
		json_object_set_new(meta, "status", json_string("restored"));
	ap_save_last(dir, meta, NULL);
}

int
apply_restore(const struct apply_opts *o, const char *const *only, size_t nonly,
    struct apply_restored **out, size_t *n, const char **why, struct jc_err *err)
{
	char *dir = apply_state_dir(o), *path = xasprintf("%s/%s", dir, LAST_SETUP);
	struct ap_restore rs = { .run = { .o = o } };
	struct jc_transport *own = NULL;
	json_t *meta;
	int rc = 0;

	*out = NULL;
	*n = 0;
	*why = NULL;
	pthread_mutex_init(&rs.run.lock, NULL);
	if (access(path, F_OK) == 0 && (rc = ap_state_dir_ok(dir, err)) != 0)
		goto done;
	if ((meta = load_last(path, why, &rc, err)) == NULL)
		goto done;
	if ((rc = check_only(json_object_get(meta, "hosts"), dir, only, nonly, err)) == 0)
		rc = load_saved_hosts(&rs, json_object_get(meta, "hosts"), dir, path, only, nonly,
		    err);
	if (rc == 0 && rs.ns == 0)
		*why = "every host of the last setup was already restored";
	if (rc == 0 && rs.ns > 0) {
		rs.run.tp = ap_transport_of(o, &own);
		jc_parallel_for(rs.ns, rs_host, &rs);
		*out = xcalloc(rs.ns, sizeof(**out));
		*n = rs.ns;
		for (size_t k = 0; k < rs.ns; k++) {
			(*out)[k].name = xstrdup(rs.sl[k].h.name);
			(*out)[k].ran = rs.sl[k].ran;
			(*out)[k].error = rs.sl[k].rc == 0 ? NULL : xstrdup(rs.sl[k].err.msg);
		}
		mark_restored(&rs, meta, dir);
	}
	json_decref(meta);
	for (size_t k = 0; k < rs.ns; k++)
		ap_host_clear(&rs.sl[k].h);
done:
	transport_free(own);
	free(rs.sl);
	free(path);
	free(dir);
	pthread_mutex_destroy(&rs.run.lock);
	return rc;
}

void
apply_restored_free(struct apply_restored *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(r[i].name);
		free(r[i].error);
	}
	free(r);
}
