/* SPDX-License-Identifier: MIT */
/*
 * Hostfile writer: struct jc_hostfile for each backend as mlx builds it,
 * its jansson tree, and a serialiser matching Python's json.dump(indent=4).
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "hostfile_write.h"
#include "hosts.h"

static const char *
first_inet(const struct jc_iface *ifc)
{
	return ifc != NULL && ifc->ninet > 0 ? ifc->inet[0] : NULL;
}

/* A Thunderbolt port, a bridge, loopback or a cable interface of host i. */
static bool
not_mgmt(const struct jc_host *h, const struct graph *g, size_t i, const struct jc_iface *ifc)
{
	if (ifc->is_bridge || strncmp(ifc->name, "lo", 2) == 0 ||
	    strncmp(ifc->name, "bridge", 6) == 0)
		return true;
	for (size_t k = 0; k < h->nhwports; k++)
		if (h->hwports[k].device != NULL && h->hwports[k].port != NULL &&
		    strcmp(h->hwports[k].device, ifc->name) == 0 &&
		    strncmp(h->hwports[k].port, "Thunderbolt", 11) == 0)
			return true;
	for (size_t p = 0; p < h->nports; p++)
		if (h->ports[p].iface != NULL && strcmp(h->ports[p].iface, ifc->name) == 0)
			return true;
	for (size_t k = 0; g != NULL && k < g->ncables; k++)
		for (int s = 0; s < 2; s++)
			if (g->cables[k].end[s].host == i &&
			    strcmp(g->cables[k].end[s].iface, ifc->name) == 0)
				return true;
	return false;
}

const char *
hostfile_write_mgmt_ip(const struct jc_host *h, const struct graph *g, size_t i)
{
	const char *ip;

	if (h->mgmt_ip != NULL)
		return h->mgmt_ip;
	if ((ip = first_inet(jc_host_iface(h, "en0"))) != NULL)
		return ip;
	if ((ip = first_inet(jc_host_iface(h, "en1"))) != NULL)
		return ip;
	for (size_t k = 0; k < h->nifaces; k++) {
		const struct jc_iface *ifc = &h->ifaces[k];

		if (ifc->name == NULL || ifc->ninet == 0 || not_mgmt(h, g, i, ifc))
			continue;
		for (size_t a = 0; a < ifc->ninet; a++)
			if (strncmp(ifc->inet[a], "127.", 4) != 0 &&
			    strncmp(ifc->inet[a], "169.254.", 8) != 0)
				return ifc->inet[a];
	}
	return NULL;
}

static struct jc_hostfile *
hf_new(const char *backend, size_t n, const struct hostfile_write_in *in)
{
	struct jc_hostfile *hf = xcalloc(1, sizeof(*hf));

	hf->backend = xstrdup(backend);
	if (in != NULL && in->nenvs > 0) {
		hf->envs = xcalloc(in->nenvs, sizeof(char *));
		for (size_t k = 0; k < in->nenvs; k++)
			hf->envs[k] = xstrdup(in->envs[k]);
		hf->nenvs = in->nenvs;
	}
	hf->hosts = xcalloc(n ? n : 1, sizeof(*hf->hosts));
	hf->nhosts = n;
	return hf;
}

static void
ips_push(struct jc_hf_host *hh, const char *ip)
{
	hh->ips = xreallocarray(hh->ips, hh->nips + 1, sizeof(char *));
	hh->ips[hh->nips++] = xstrdup(ip);
}

/* ssh name, existing ips, then the management address (mlx's add_ips). */
static void
host_mgmt(struct jc_hf_host *hh, const struct jc_host *h, const struct graph *g, size_t i,
    const struct hostfile_write_in *in, bool add_mgmt, struct jc_strv *warnings)
{
	const char *label = graph_host_label(h);
	const char *ip;
	bool from_input = false;

	hh->ssh = xstrdup(label);
	if (in != NULL && in->input != NULL) {
		for (size_t k = 0; k < in->input->nhosts; k++) {
			const struct jc_hf_host *ih = &in->input->hosts[k];

			if (ih->ssh != NULL && strcmp(ih->ssh, label) == 0) {
				for (size_t a = 0; a < ih->nips; a++)
					ips_push(hh, ih->ips[a]);
				from_input = true;
				break;
			}
		}
	}
	if (!from_input && hosts_is_ip_literal(label))
		ips_push(hh, label);
	if (!add_mgmt)
		return;
	ip = hostfile_write_mgmt_ip(h, g, i);
	if (ip != NULL)
		ips_push(hh, ip);
	else if (warnings != NULL)
		strv_push_owned(warnings, xasprintf("Could not extract ip for %s", label));
}

/* Device names of host i's end of the first width cables to j. */
static void
cell_fill(struct jc_hf_cell *cell, const struct graph *g, size_t i, size_t j, unsigned width,
    bool rdma)
{
	if (cell->n > 0)
		return;	/* N=2 ring: left and right are the same cell */
	for (unsigned k = 0; k < width; k++) {
		int s;
		long c = graph_pair_cable(g, i, j, k, rdma, &s);

		if (c < 0)
			break;
		cell->names = xreallocarray(cell->names, cell->n + 1, sizeof(char *));
		cell->names[cell->n++] = xstrdup(g->cables[c].end[s].rdma);
	}
	cell->is_list = width > 1;
}

int
hostfile_write_build(const struct graph *g, const struct graph_choice *c,
    const struct plan *p, const struct hostfile_write_in *in, struct jc_hostfile **out,
    struct jc_strv *warnings, struct jc_err *err)
{
	size_t n = g->n;
	struct jc_hostfile *hf;

	*out = NULL;
	if (c->order == NULL && n > 0)
		return jc_fail(err, -EINVAL, "no backend was chosen");
	if (c->backend == GRAPH_RING && p == NULL)
		return jc_fail(err, -EINVAL, "the ring backend needs the address plan");
	hf = hf_new(graph_backend_name(c->backend), n, in);
	for (size_t r = 0; r < n; r++) {
		size_t i = c->order[r];
		struct jc_hf_host *hh = &hf->hosts[r];
		const struct jc_host *h = &g->hosts[i];

		if (c->backend == GRAPH_RING) {
			size_t left = c->order[(r + n - 1) % n];

			hh->ssh = xstrdup(graph_host_label(h));
			for (unsigned k = 0; k < c->width; k++) {
				int s;
				long cb = graph_pair_cable(g, i, left, k, false, &s);

				if (cb >= 0)
					ips_push(hh, p->cable_ip[cb][s]);
			}
			continue;
		}
		host_mgmt(hh, h, g, i, in, true, warnings);
		hh->rdma = xcalloc(n, sizeof(*hh->rdma));
		hh->nrdma = n;
		if (c->backend == GRAPH_JACCL) {
			for (size_t j = 0; j < n; j++)
				if (j != i)
					cell_fill(&hh->rdma[j], g, i, j, 1, true);
		} else if (n >= 2) {
			size_t lp = (r + n - 1) % n, rp = (r + 1) % n;

			cell_fill(&hh->rdma[lp], g, i, c->order[lp], c->width, c->rdma);
			cell_fill(&hh->rdma[rp], g, i, c->order[rp], c->width, c->rdma);
		}
	}
	*out = hf;
	return 0;
}

int
hostfile_write_ethernet(const struct jc_host *hosts, size_t n, const struct graph *g,
    const struct hostfile_write_in *in, struct jc_hostfile **out, struct jc_strv *warnings,
    struct jc_err *err)
{
	struct jc_hostfile *hf = hf_new("", n, in);

	(void)err;
	for (size_t i = 0; i < n; i++)
		host_mgmt(&hf->hosts[i], &hosts[i], g, i, in, true, warnings);
	*out = hf;
	return 0;
}

static json_t *
jstr(const char *s, struct jc_err *err, int *r)
{
	json_t *j = json_string(s != NULL ? s : "");

	if (j == NULL && *r == 0)
		*r = jc_fail(err, -EINVAL, "'%s' is not valid UTF-8 text", s);
	return j;
}

json_t *
hostfile_write_to_json(const struct jc_hostfile *hf, struct jc_err *err)
{
	json_t *root = json_object(), *envs = json_array(), *hosts = json_array();
	int r = 0;

	json_object_set_new(root, "backend", jstr(hf->backend, err, &r));
	for (size_t k = 0; k < hf->nenvs; k++)
		json_array_append_new(envs, jstr(hf->envs[k], err, &r));
	json_object_set_new(root, "envs", envs);
	for (size_t i = 0; i < hf->nhosts; i++) {
		const struct jc_hf_host *hh = &hf->hosts[i];
		json_t *ho = json_object(), *ips = json_array(), *rd = json_array();

		json_object_set_new(ho, "ssh", jstr(hh->ssh, err, &r));
		for (size_t a = 0; a < hh->nips; a++)
			json_array_append_new(ips, jstr(hh->ips[a], err, &r));
		json_object_set_new(ho, "ips", ips);
		for (size_t j = 0; j < hh->nrdma; j++) {
			const struct jc_hf_cell *cell = &hh->rdma[j];

			if (cell->is_list) {
				json_t *l = json_array();

				for (size_t k = 0; k < cell->n; k++)
					json_array_append_new(l, jstr(cell->names[k], err, &r));
				json_array_append_new(rd, l);
			} else if (cell->n > 0) {
				json_array_append_new(rd, jstr(cell->names[0], err, &r));
			} else {
				json_array_append_new(rd, json_null());
			}
		}
		json_object_set_new(ho, "rdma", rd);
		json_array_append_new(hosts, ho);
	}
	json_object_set_new(root, "hosts", hosts);
	if (r != 0) {
		json_decref(root);
		return NULL;
	}
	return root;
}

/* Python's ensure_ascii string encoding. */
static void
dump_string(struct jc_buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;

	buf_puts(b, "\"");
	while (i < len) {
		unsigned long cp = u[i];
		size_t extra = 0;

		if (cp >= 0xf0)
			extra = 3, cp &= 0x07;
		else if (cp >= 0xe0)
			extra = 2, cp &= 0x0f;
		else if (cp >= 0xc0)
			extra = 1, cp &= 0x1f;
		i++;
		for (size_t k = 0; k < extra && i < len; k++, i++)
			cp = (cp << 6) | (u[i] & 0x3f);
		switch (cp) {
		case '"':
			buf_puts(b, "\\\"");
			continue;
		case '\\':
			buf_puts(b, "\\\\");
			continue;
		case '\b':
			buf_puts(b, "\\b");
			continue;
		case '\f':
			buf_puts(b, "\\f");
			continue;
		case '\n':
			buf_puts(b, "\\n");
			continue;
		case '\r':
			buf_puts(b, "\\r");
			continue;
		case '\t':
			buf_puts(b, "\\t");
			continue;
		default:
			break;
		}
		if (cp >= 0x20 && cp <= 0x7e) {
			buf_printf(b, "%c", (int)cp);
			continue;
		}
		if (cp >= 0x10000) {
			unsigned long v = cp - 0x10000;
			unsigned long hi = 0xd800 | (v >> 10), lo = 0xdc00 | (v & 0x3ff);

			buf_printf(b, "\\u%c%c%c%c\\u%c%c%c%c", hex[hi >> 12], hex[(hi >> 8) & 15],
			    hex[(hi >> 4) & 15], hex[hi & 15], hex[lo >> 12], hex[(lo >> 8) & 15],
			    hex[(lo >> 4) & 15], hex[lo & 15]);
		} else {
			buf_printf(b, "\\u%c%c%c%c", hex[cp >> 12], hex[(cp >> 8) & 15],
			    hex[(cp >> 4) & 15], hex[cp & 15]);
		}
	}
	buf_puts(b, "\"");
}

static void
indent(struct jc_buf *b, int depth)
{
	buf_puts(b, "\n");
	for (int k = 0; k < depth * 4; k++)
		buf_puts(b, " ");
}

static void
dump_value(struct jc_buf *b, const json_t *j, int depth)
{
	switch (json_typeof(j)) {
	case JSON_OBJECT: {
		const char *key;
		json_t *v;
		bool first = true;

		if (json_object_size(j) == 0) {
			buf_puts(b, "{}");
			break;
		}
		buf_puts(b, "{");
		json_object_foreach((json_t *)j, key, v) {
			if (!first)
				buf_puts(b, ",");
			first = false;
			indent(b, depth + 1);
			dump_string(b, key, strlen(key));
			buf_puts(b, ": ");
			dump_value(b, v, depth + 1);
		}
		indent(b, depth);
		buf_puts(b, "}");
		break;
	}
	case JSON_ARRAY:
		if (json_array_size(j) == 0) {
			buf_puts(b, "[]");
			break;
		}
		buf_puts(b, "[");
		for (size_t k = 0; k < json_array_size(j); k++) {
			if (k > 0)
				buf_puts(b, ",");
			indent(b, depth + 1);
			dump_value(b, json_array_get(j, k), depth + 1);
		}
		indent(b, depth);
		buf_puts(b, "]");
		break;
	case JSON_STRING:
		dump_string(b, json_string_value(j), json_string_length(j));
		break;
	case JSON_INTEGER:
		buf_printf(b, "%" JSON_INTEGER_FORMAT, json_integer_value(j));
		break;
	case JSON_REAL: {
		char *t = json_dumps(j, JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));

		buf_puts(b, t != NULL ? t : "NaN");
		free(t);
		break;
	}
	case JSON_TRUE:
		buf_puts(b, "true");
		break;
	case JSON_FALSE:
		buf_puts(b, "false");
		break;
	case JSON_NULL:
	default:
		buf_puts(b, "null");
		break;
	}
}

char *
hostfile_write_dump_text(const json_t *j)
{
	struct jc_buf b = { 0 };

	dump_value(&b, j, 0);
	return buf_steal(&b);
}

int
hostfile_write_dump_json(FILE *fp, const json_t *j)
{
	char *t = hostfile_write_dump_text(j);
	int r = fputs(t, fp) == EOF || ferror(fp) ? -EIO : 0;

	free(t);
	return r;
}

char *
hostfile_write_text(const struct jc_hostfile *hf, struct jc_err *err)
{
	json_t *j = hostfile_write_to_json(hf, err);
	char *t;

	if (j == NULL)
		return NULL;
	t = hostfile_write_dump_text(j);
	json_decref(j);
	return t;
}

int
hostfile_write_file(FILE *fp, const struct jc_hostfile *hf, struct jc_err *err)
{
	char *t = hostfile_write_text(hf, err);
	int r;

	if (t == NULL)
		return err != NULL ? err->code : -EINVAL;
	r = fputs(t, fp) == EOF || ferror(fp);
	free(t);
	if (r != 0)
		return jc_fail(err, -EIO, "cannot write the hostfile");
	return 0;
}

int
hostfile_write_stdout(FILE *fp, const struct jc_hostfile *hf, struct jc_err *err)
{
	int r;

	fputs("Hostfile\n========\n", fp);
	if ((r = hostfile_write_file(fp, hf, err)) != 0)
		return r;
	fputc('\n', fp);
	return ferror(fp) ? jc_fail(err, -EIO, "cannot write the hostfile") : 0;
}
