/* SPDX-License-Identifier: MIT */
/*
 * Inventory JSON: turns struct jc_host into a jansson tree with every field
 * present (unknown facts as null), and loads a host from a probe bundle.
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "bundle.h"
#include "inventory.h"
#include "parse_linux.h"
#include "parse_ibv.h"
#include "platform.h"
#include "util.h"

static json_t *
str_or_null(const char *s)
{
	json_t *v = s != NULL ? json_string(s) : NULL;

	return v != NULL ? v : json_null();
}

static json_t *
tri(int v)
{
	if (v == JC_YES)
		return json_true();
	if (v == JC_NO)
		return json_false();
	return json_null();
}

static json_t *
strs(char **v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, str_or_null(v[i]));
	return a;
}

static json_t *
port_json(const struct jc_port *p)
{
	json_t *o = json_object();

	json_object_set_new(o, "bus", p->bus >= 0 ? json_integer(p->bus) : json_null());
	json_object_set_new(o, "receptacle", str_or_null(p->receptacle));
	json_object_set_new(o, "iface", str_or_null(p->iface));
	json_object_set_new(o, "id", str_or_null(p->id));
	json_object_set_new(o, "link", str_or_null(p->link));
	json_object_set_new(o, "link_gbps", p->link_gbps > 0 ? json_integer(p->link_gbps) :
	    json_null());
	json_object_set_new(o, "peer_id", str_or_null(p->peer_id));
	json_object_set_new(o, "peer_via_dock", json_boolean(p->peer_via_dock));
	json_object_set_new(o, "peer_model", str_or_null(p->peer_model));
	json_object_set_new(o, "peer_name", str_or_null(p->peer_name));
	json_object_set_new(o, "peer_no_id", json_boolean(p->peer_no_id));
	json_object_set_new(o, "peer_inferred", json_boolean(p->peer_inferred));
	json_object_set_new(o, "peer_rdma_service", tri(p->peer_rdma_service));
	json_object_set_new(o, "devices", strs(p->devices, p->ndevices));
	return o;
}

static json_t *
iface_json(const struct jc_iface *f)
{
	json_t *o = json_object(), *inet = json_array();

	json_object_set_new(o, "name", str_or_null(f->name));
	json_object_set_new(o, "mac", str_or_null(f->mac));
	json_object_set_new(o, "mtu", f->mtu > 0 ? json_integer(f->mtu) : json_null());
	json_object_set_new(o, "up", tri(f->up));
	json_object_set_new(o, "carrier", tri(f->carrier));
	for (size_t i = 0; i < f->ninet; i++) {
		json_t *a = json_object();

		json_object_set_new(a, "addr", str_or_null(f->inet[i]));
		json_object_set_new(a, "prefix", json_integer(f->prefix[i]));
		json_array_append_new(inet, a);
	}
	json_object_set_new(o, "inet", inet);
	json_object_set_new(o, "is_bridge", json_boolean(f->is_bridge));
	json_object_set_new(o, "members", f->is_bridge || f->nmembers > 0 ?
	    strs(f->members, f->nmembers) : json_null());
	return o;
}

/* [{"dest": "A/L", "iface", "via"}], or null when the table was not captured. */
static json_t *
routes_json(const struct jc_host *h)
{
	json_t *a;

	if (!h->routes_known)
		return json_null();
	a = json_array();
	for (size_t i = 0; i < h->nroutes; i++) {
		const struct jc_route *r = &h->routes[i];
		char *d = xasprintf("%s/%d", r->dest, r->len);

		json_array_append_new(a, json_pack("{s:s, s:o, s:o}", "dest", d,
		    "iface", str_or_null(r->iface), "via", str_or_null(r->via)));
		free(d);
	}
	return a;
}

json_t *
inventory_host_to_json(const struct jc_host *h)
{
	const struct jc_platform_ops *plat = platform_of(h);
	json_t *o = json_object(), *a;

	json_object_set_new(o, "name", str_or_null(h->name));
	json_object_set_new(o, "target", str_or_null(h->target));
	json_object_set_new(o, "user", str_or_null(h->user));
	json_object_set_new(o, "port", h->port > 0 ? json_integer(h->port) : json_null());
	json_object_set_new(o, "reachable", json_boolean(h->reachable));
	json_object_set_new(o, "error", str_or_null(h->error));
	json_object_set_new(o, "os", str_or_null(plat != NULL ? plat->name : NULL));
	json_object_set_new(o, "hostname", str_or_null(h->hostname));
	json_object_set_new(o, "model", str_or_null(h->model));
	json_object_set_new(o, "os_version", str_or_null(h->os_version));
	json_object_set_new(o, "os_build", str_or_null(h->os_build));
	if (h->ports_known || h->nports > 0) {
		a = json_array();
		for (size_t i = 0; i < h->nports; i++)
			json_array_append_new(a, port_json(&h->ports[i]));
		json_object_set_new(o, "ports", a);
	} else {
		json_object_set_new(o, "ports", json_null());
	}
	if (h->nhwports > 0) {
		a = json_array();
		for (size_t i = 0; i < h->nhwports; i++) {
			json_t *p = json_object();

			json_object_set_new(p, "port", str_or_null(h->hwports[i].port));
			json_object_set_new(p, "device", str_or_null(h->hwports[i].device));
			json_object_set_new(p, "mac", str_or_null(h->hwports[i].mac));
			json_array_append_new(a, p);
		}
		json_object_set_new(o, "hardware_ports", a);
	} else {
		json_object_set_new(o, "hardware_ports", json_null());
	}
	if (h->nifaces > 0) {
		a = json_array();
		for (size_t i = 0; i < h->nifaces; i++)
			json_array_append_new(a, iface_json(&h->ifaces[i]));
		json_object_set_new(o, "ifaces", a);
	} else {
		json_object_set_new(o, "ifaces", json_null());
	}
	if (h->rdma_listed != JC_UNKNOWN || h->nrdma > 0) {
		a = json_array();
		for (size_t i = 0; i < h->nrdma; i++) {
			json_t *d = json_object();

			json_object_set_new(d, "name", str_or_null(h->rdma[i].name));
			json_object_set_new(d, "netdev", str_or_null(h->rdma[i].netdev));
			json_object_set_new(d, "guid", str_or_null(h->rdma[i].guid));
			json_object_set_new(d, "state",
			    str_or_null(parse_ibv_state_name(h->rdma[i].state)));
			json_array_append_new(a, d);
		}
		json_object_set_new(o, "rdma_devices", a);
	} else {
		json_object_set_new(o, "rdma_devices", json_null());
	}
	json_object_set_new(o, "rdma_listed", tri(h->rdma_listed));
	json_object_set_new(o, "rdma_enabled", tri(h->rdma_enabled));
	json_object_set_new(o, "sudo", tri(h->sudo));
	json_object_set_new(o, "mgmt_ip", str_or_null(h->mgmt_ip));
	json_object_set_new(o, "mgmt_iface", str_or_null(h->mgmt_iface));
	if (h->os == JC_OS_LINUX)
		json_object_set_new(o, "network_manager", str_or_null(jc_netmgr_name(h->netmgr)));
	json_object_set_new(o, "routes", routes_json(h));
	json_object_set_new(o, "notes", strs(h->notes, h->nnotes));
	return o;
}

json_t *
inventory_to_json(const struct jc_host *hosts, size_t n)
{
	json_t *o = json_object(), *a = json_array();

	json_object_set_new(o, "version", json_integer(1));
	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, inventory_host_to_json(&hosts[i]));
	json_object_set_new(o, "hosts", a);
	return o;
}

int
inventory_from_bundle(const char *dir, const char *host, struct jc_host *h,
    struct jc_err *err)
{
	struct jc_raw raw = { 0 };
	const struct jc_platform_ops *ops;
	int rc;

	if (h->name == NULL)
		h->name = xstrdup(host);
	h->rdma_listed = JC_UNKNOWN;
	h->rdma_enabled = JC_UNKNOWN;
	h->sudo = JC_UNKNOWN;
	rc = bundle_load_host(dir, host, &raw, err);
	if (rc < 0)
		return rc;
	ops = platform_for_raw(&raw);
	if (ops == NULL) {
		raw_clear(&raw);
		return jc_fail(err, -EINVAL, "%s/%s: cannot tell the platform "
		    "(no uname.txt and no known output files)", dir, host);
	}
	h->reachable = true;
	rc = ops->parse(h, &raw, err);
	raw_clear(&raw);
	return rc;
}
