/* SPDX-License-Identifier: MIT */
/*
 * Reading back what the last setup saved (see setup_record.h): the
 * format is apply_state.c's (last-setup.json: {"status", "started", "hosts":
 * [{"host", "file", "restored"}]}; a host file: {"host", "os",
 * "addresses": [{"iface", "ip", "peer_ip"}], "facts": [...]}). Only what
 * the drift check needs is kept; unknown keys are ignored (the files are
 * apply's, and may grow).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "setup_record.h"

static const char *
jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static json_t *
load(const char *buf, size_t len, const char *name, struct jc_err *err)
{
	json_error_t je;
	json_t *j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);

	if (j == NULL)
		jc_fail(err, -EINVAL, "%s: not JSON: %s (line %d)", name, je.text, je.line);
	else if (!json_is_object(j)) {
		json_decref(j);
		j = NULL;
		jc_fail(err, -EINVAL, "%s: not a JSON object", name);
	}
	return j;
}

bool
setup_record_file_ok(const char *f)
{
	const char *w = f + 6;
	size_t n;

	if (strncmp(f, "hosts/", 6) != 0 || !jc_plain_word(w) || strchr(w, '/') != NULL ||
	    w[0] == '.')
		return false;
	n = strlen(w);
	return n > 5 && strcmp(w + n - 5, ".json") == 0;
}

int
setup_record_parse_last(const char *buf, size_t len, const char *name,
    struct setup_record *rec, struct jc_strv *files, struct jc_err *err)
{
	json_t *j = load(buf, len, name, err), *hosts, *v;
	const char *st;
	size_t i;
	int rc = 0;

	if (j == NULL)
		return -EINVAL;
	hosts = json_object_get(j, "hosts");
	st = jstr(j, "status");
	if (st == NULL || !jc_plain_word(st) || !json_is_array(hosts)) {
		json_decref(j);
		return jc_fail(err, -EINVAL, "%s: not the record of a setup (status, hosts)", name);
	}
	rec->status = xstrdup(st);
	if (jstr(j, "started") != NULL && jc_plain_word(jstr(j, "started")))
		rec->started = xstrdup(jstr(j, "started"));
	rec->hosts = xcalloc(json_array_size(hosts) + 1, sizeof(*rec->hosts));
	json_array_foreach(hosts, i, v) {
		const char *h = jstr(v, "host"), *f = jstr(v, "file");

		if (h == NULL || f == NULL || !jc_plain_word(h) || !setup_record_file_ok(f)) {
			rc = jc_fail(err, -EINVAL, "%s: hosts[%zu]: bad host or file", name, i);
			break;
		}
		rec->hosts[rec->n].name = xstrdup(h);
		rec->hosts[rec->n].restored = json_is_true(json_object_get(v, "restored"));
		rec->n++;
		strv_push(files, f);
	}
	json_decref(j);
	return rc;
}

int
setup_record_parse_host(const char *buf, size_t len, const char *name,
    struct setup_rec_host *h, struct jc_err *err)
{
	json_t *j = load(buf, len, name, err), *addrs, *facts, *v;
	const char *host, *os;
	size_t i;
	int rc = 0;

	if (j == NULL)
		return -EINVAL;
	host = jstr(j, "host");
	os = jstr(j, "os");
	addrs = json_object_get(j, "addresses");
	if (host == NULL || os == NULL || !jc_plain_word(os) || !json_is_array(addrs) ||
	    (h->name != NULL && strcmp(h->name, host) != 0)) {
		json_decref(j);
		return jc_fail(err, -EINVAL, "%s: not the saved state of %s", name,
		    h->name ? h->name : "a host");
	}
	if (h->name == NULL) {
		if (!jc_plain_word(host)) {
			json_decref(j);
			return jc_fail(err, -EINVAL, "%s: bad host name", name);
		}
		h->name = xstrdup(host);
	}
	free(h->os);
	h->os = xstrdup(os);
	json_array_foreach(addrs, i, v) {
		const char *ifn = jstr(v, "iface"), *ip = jstr(v, "ip"), *peer = jstr(v, "peer_ip");

		if (ifn == NULL || !jc_iface_name_ok(ifn) || ip == NULL || !jc_ipv4_ok(ip) ||
		    peer == NULL || !jc_ipv4_ok(peer)) {
			rc = jc_fail(err, -EINVAL, "%s: addresses[%zu]: bad entry", name, i);
			break;
		}
		strv_push(&h->ifaces, ifn);
		strv_push(&h->ips, ip);
		strv_push(&h->peers, peer);
	}
	facts = json_object_get(j, "facts");
	json_array_foreach(facts, i, v) {
		const char *kind = jstr(v, "kind");

		if (kind != NULL && strcmp(kind, "services") == 0)
			h->persisted = true;
	}
	json_decref(j);
	return rc;
}

int
setup_record_load(const char *dir, struct setup_record **out, struct jc_err *err)
{
	struct setup_record *rec = xcalloc(1, sizeof(*rec));
	struct jc_strv files = { 0 };
	char *path = xasprintf("%s/last-setup.json", dir), *buf = NULL;
	size_t len = 0;
	int rc;

	*out = NULL;
	rc = jc_read_file(path, SETUP_RECORD_MAX_SIZE, &buf, &len, err);
	if (rc == -ENOENT) {
		rc = 0;
		goto out;
	}
	if (rc == 0)
		rc = setup_record_parse_last(buf, len, path, rec, &files, err);
	for (size_t i = 0; rc == 0 && i < rec->n; i++) {
		char *hp = xasprintf("%s/%s", dir, files.v[i]);

		free(buf);
		buf = NULL;
		if ((rc = jc_read_file(hp, SETUP_RECORD_MAX_SIZE, &buf, &len, err)) == 0)
			rc = setup_record_parse_host(buf, len, hp, &rec->hosts[i], err);
		free(hp);
	}
	if (rc == 0) {
		*out = rec;
		rec = NULL;
	}
out:
	setup_record_free(rec);
	strv_free(&files);
	free(buf);
	free(path);
	return rc;
}

void
setup_record_free(struct setup_record *rec)
{
	if (rec == NULL)
		return;
	for (size_t i = 0; i < rec->n; i++) {
		struct setup_rec_host *h = &rec->hosts[i];

		free(h->name);
		free(h->os);
		strv_free(&h->ifaces);
		strv_free(&h->ips);
		strv_free(&h->peers);
	}
	free(rec->hosts);
	free(rec->status);
	free(rec->started);
	free(rec);
}
