/* SPDX-License-Identifier: MIT */
/*
 * The doctor's checks, one function each, and the report they fill. Every
 * check reads the inventory (struct jc_host), the cable graph and the
 * optional hostfile and expected cabling, and adds findings; a check with
 * no finding is ok. What each check looks for, and why, is in the comment
 * above its function and in the man page.
 */
#include "config.h"

#include <stdarg.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "hostfile_check.h"
#include "hostfile_read.h"
#include "doctor.h"
#include "doctor_subnet.h"
#include "doctor_drift.h"
#include "doctor_install.h"
#include "doctor_managers.h"
#include "platform.h"

const char *
doctor_status_name(enum doctor_status s)
{
	switch (s) {
	case DOCTOR_OK:
		return "ok";
	case DOCTOR_UNKNOWN:
		return "unknown";
	case DOCTOR_WARNING:
		return "warning";
	case DOCTOR_ERROR:
		return "error";
	}
	return "?";
}

/* the check whose findings are being added (set by doctor_run) */


struct doctor_finding *
doctor_add(struct doctor_report *r, enum doctor_status status, long host, const size_t *hs,
    size_t nh, const char *remedy, const char *fmt, ...)
{
	struct doctor_finding *f;
	va_list ap;

	r->v = xreallocarray(r->v, r->n + 1, sizeof(*r->v));
	f = &r->v[r->n++];
	memset(f, 0, sizeof(*f));
	f->check = r->cur ? r->cur->name : "?";
	f->status = status;
	f->host = host;
	if (nh > 0) {
		f->hosts = xcalloc(nh, sizeof(*f->hosts));
		memcpy(f->hosts, hs, nh * sizeof(*hs));
		f->nhosts = nh;
	} else if (host >= 0) {
		f->hosts = xcalloc(1, sizeof(*f->hosts));
		f->hosts[0] = (size_t)host;
		f->nhosts = 1;
	}
	va_start(ap, fmt);
	f->msg = xvasprintf(fmt, ap);
	va_end(ap);
	f->remedy = xstrdup(remedy);
	return f;
}

void
doctor_add_port(struct doctor_finding *f, const char *label)
{
	f->ports = xreallocarray(f->ports, f->nports + 1, sizeof(*f->ports));
	f->ports[f->nports++] = xstrdup(label);
}

/* --- helpers --- */

static const char *
hname(const struct doctor_input *in, size_t i)
{
	return in->hosts[i].name;
}

bool
doctor_probed(const struct jc_host *h)
{
	return h->reachable && h->error == NULL;
}

static char *
end_label(const struct doctor_input *in, const struct graph_end *e)
{
	char *p = graph_port_label(&in->hosts[e->host], e->port);
	char *s = xasprintf("%s %s", hname(in, e->host), p);

	free(p);
	return s;
}

static struct doctor_finding *
add_cable(struct doctor_report *r, const struct doctor_input *in, enum doctor_status st,
    const struct graph_cable *c, long host, const char *remedy, const char *what)
{
	size_t hs[2] = { c->end[0].host, c->end[1].host };
	char *a = end_label(in, &c->end[0]), *b = end_label(in, &c->end[1]);
	struct doctor_finding *f;

	f = doctor_add(r, st, host >= 0 ? host : (long)c->end[0].host, hs, 2, remedy,
	    "cable %s -- %s: %s", a, b, what);
	doctor_add_port(f, a);
	doctor_add_port(f, b);
	free(a);
	free(b);
	return f;
}

static bool
need_graph(const struct doctor_input *in, struct doctor_report *r)
{
	if (in->g != NULL)
		return true;
	doctor_add(r, DOCTOR_UNKNOWN, -1, NULL, 0, NULL, "no cable graph: %s",
	    in->graph_error ? in->graph_error : "no host was probed");
	return false;
}

static const struct jc_rdma_dev *
find_rdma(const struct jc_host *h, const char *name)
{
	for (size_t i = 0; i < h->nrdma; i++)
		if (strcmp(h->rdma[i].name, name) == 0)
			return &h->rdma[i];
	return NULL;
}

/* The interface of an RDMA device name: its netdev, else the name less "rdma_". */
static const char *
rdma_netdev(const struct jc_host *h, const char *dev)
{
	const struct jc_rdma_dev *d = find_rdma(h, dev);

	if (d != NULL && d->netdev != NULL)
		return d->netdev;
	if (strncmp(dev, "rdma_", 5) == 0)
		return dev + 5;
	return dev;
}

/* The probed host a hostfile row stands for, or -1. */
static long
hf_host(const struct doctor_input *in, size_t row)
{
	const char *ssh = in->hf->hosts[row].ssh;

	if (ssh == NULL)
		return -1;
	for (size_t i = 0; i < in->n; i++)
		if ((in->hosts[i].target && strcmp(in->hosts[i].target, ssh) == 0) ||
		    strcmp(in->hosts[i].name, ssh) == 0)
			return (long)i;
	return -1;
}

static bool
bridge_member(const struct jc_host *h, const char *iface)
{
	for (size_t i = 0; i < h->nifaces; i++) {
		const struct jc_iface *f = &h->ifaces[i];

		if (!f->is_bridge || f->up != JC_YES)
			continue;
		for (size_t k = 0; k < f->nmembers; k++)
			if (strcmp(f->members[k], iface) == 0)
				return true;
	}
	return false;
}

/* --- the checks --- */

/* reachable: every host was reached over SSH and its outputs understood. */
static void
chk_reachable(const struct doctor_input *in, struct doctor_report *r)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct jc_host *h = &in->hosts[i];

		if (doctor_probed(h))
			continue;
		if (!h->reachable)
			doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0,
			    "check passwordless ssh to the host (key, known_hosts, "
			    "--accept-new); --ignore-unreachable leaves it out",
			    "cannot be reached: %s", h->error ? h->error : "unknown error");
		else
			doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0,
			    "run `jaccl-config probe --save DIR` and look at the raw outputs",
			    "its probe outputs cannot be used: %s", h->error);
	}
}

/* duplicate-hosts: two entries that are one machine (same Thunderbolt domain
 * UUID, or the same hostname reached twice). */
static void
chk_duplicates(const struct doctor_input *in, struct doctor_report *r)
{
	bool found = false;

	for (size_t i = 0; i < in->n; i++) {
		const struct jc_host *a = &in->hosts[i];

		if (!doctor_probed(a))
			continue;
		for (size_t j = i + 1; j < in->n; j++) {
			const struct jc_host *b = &in->hosts[j];
			size_t hs[2] = { i, j };
			const char *why = NULL;
			bool same_name = false;

			if (!doctor_probed(b))
				continue;
			for (size_t p = 0; p < a->nports && why == NULL; p++)
				for (size_t q = 0; q < b->nports && why == NULL; q++)
					if (a->ports[p].id && b->ports[q].id &&
					    strcmp(a->ports[p].id, b->ports[q].id) == 0)
						why = "the same Thunderbolt domain UUID";
			if (why == NULL && a->hostname && b->hostname &&
			    strcasecmp(a->hostname, b->hostname) == 0) {
				why = "the same hostname";
				same_name = true;
			}
			if (why == NULL)
				continue;
			found = true;
			doctor_add(r, DOCTOR_ERROR, (long)j, hs, 2,
			    "list each machine once (one name per Mac)",
			    "%s and %s are the same machine (%s%s%s)", hname(in, i), hname(in, j),
			    why, same_name ? " " : "", same_name ? a->hostname : "");
		}
	}
	if (!found && in->g == NULL && in->graph_error != NULL)
		doctor_add(r, DOCTOR_ERROR, -1, NULL, 0, "list each machine once",
		    "%s", in->graph_error);
}

static bool
rdma_wanted(const struct doctor_input *in, const struct graph_cable *c)
{
	return in->hosts[c->end[0].host].rdma_enabled == JC_YES &&
	    in->hosts[c->end[1].host].rdma_enabled == JC_YES;
}

/* link-class: a cable negotiated below 80 Gb/s (Thunderbolt 4) or through a
 * dock or hub cannot carry RDMA. An error where both Macs have RDMA enabled
 * (they mean to use it), else a warning. */
static void
chk_link_class(const struct doctor_input *in, struct doctor_report *r)
{
	if (!need_graph(in, r))
		return;
	for (size_t k = 0; k < in->g->ncables; k++) {
		const struct graph_cable *c = &in->g->cables[k];
		enum doctor_status st = rdma_wanted(in, c) ? DOCTOR_ERROR : DOCTOR_WARNING;
		char *what;

		if (c->via_dock)
			what = xasprintf("goes through a dock or hub: no RDMA on this cable");
		else if (c->link == GRAPH_LINK_TB4 || c->link == GRAPH_LINK_OTHER)
			what = xasprintf("link at %d Gb/s (%s): no RDMA on this cable", c->gbps,
			    c->link == GRAPH_LINK_TB4 ? "Thunderbolt 4 class" : "below Thunderbolt 4");
		else
			continue;
		add_cable(r, in, st, c, -1,
		    "cable the two Macs directly with a Thunderbolt 5 cable (both must be "
		    "Thunderbolt 5 Macs); the ring backend still works over this one", what);
		free(what);
	}
}

/* rdma-enabled: rdma_ctl status says enabled and ibv_devices lists devices. */
static void
chk_rdma_enabled(const struct doctor_input *in, struct doctor_report *r)
{
	static const char recovery[] = "start the Mac in Recovery, open Utilities > Terminal, "
	    "run `rdma_ctl enable`, reboot (it cannot be enabled remotely, even with sudo)";

	for (size_t i = 0; i < in->n; i++) {
		const struct jc_host *h = &in->hosts[i];

		if (!doctor_probed(h) || !(platform_caps(h) & JC_PLAT_RDMA_CTL))
			continue;
		if (h->rdma_enabled == JC_NO)
			doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, recovery,
			    "RDMA is disabled (rdma_ctl status: disabled%s)",
			    h->rdma_listed == JC_YES && h->nrdma == 0 ? ", no rdma_* device" : "");
		else if (h->rdma_listed == JC_YES && h->nrdma == 0)
			doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0,
			    h->rdma_enabled == JC_YES ?
			    "a Thunderbolt 4 Mac cannot do RDMA; on a Thunderbolt 5 Mac, reboot" :
			    recovery,
			    "ibv_devices lists no rdma_* device%s", h->rdma_enabled == JC_YES ?
			    " although rdma_ctl status says enabled" : "");
		else if (h->rdma_enabled == JC_UNKNOWN && h->rdma_listed == JC_UNKNOWN)
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
			    "neither rdma_ctl status nor ibv_devices could be read");
	}
}

/* port-state: both ends of an RDMA-capable cable have their device and it is
 * PORT_ACTIVE. A port down because the peer has RDMA disabled (the peer does
 * not advertise the RDMA service in system_profiler) is told apart from a
 * bad cable. */
static void
chk_port_state(const struct doctor_input *in, struct doctor_report *r)
{
	if (!need_graph(in, r))
		return;
	for (size_t k = 0; k < in->g->ncables; k++) {
		const struct graph_cable *c = &in->g->cables[k];

		if (c->via_dock || c->link == GRAPH_LINK_TB4 || c->link == GRAPH_LINK_OTHER)
			continue;	/* link-class says why */
		for (int s = 0; s < 2; s++) {
			const struct graph_end *e = &c->end[s], *o = &c->end[1 - s];
			const struct jc_host *h = &in->hosts[e->host], *ph = &in->hosts[o->host];
			const struct jc_port *p = &h->ports[e->port];
			char *what;

			if (!(platform_caps(h) & JC_PLAT_RDMA_CTL) || h->rdma_enabled == JC_NO ||
			    (h->rdma_listed == JC_YES && h->nrdma == 0))
				continue;	/* rdma-enabled says it */
			if (e->rdma_present == JC_NO) {
				what = xasprintf("%s has no device %s for it", hname(in, e->host),
				    e->rdma);
				add_cable(r, in, DOCTOR_ERROR, c, (long)e->host,
				    "reboot; if the device stays missing, this port cannot do RDMA",
				    what);
				free(what);
				continue;
			}
			if (e->rdma_state == JC_PORT_UNKNOWN || e->rdma_state == JC_PORT_ACTIVE)
				continue;
			if (p->peer_rdma_service == JC_NO || ph->rdma_enabled == JC_NO) {
				what = xasprintf("%s on %s is %s because %s has RDMA disabled "
				    "(%s)", e->rdma, hname(in, e->host),
				    e->rdma_state == JC_PORT_DOWN ? "PORT_DOWN" : "not PORT_ACTIVE",
				    hname(in, o->host), p->peer_rdma_service == JC_NO ?
				    "it does not advertise RDMA over this cable" :
				    "rdma_ctl status: disabled");
				add_cable(r, in, DOCTOR_ERROR, c, (long)e->host,
				    "enable RDMA on the peer (see rdma-enabled); the cable is fine",
				    what);
			} else {
				what = xasprintf("%s on %s is %s although both Macs have RDMA "
				    "enabled", e->rdma, hname(in, e->host),
				    e->rdma_state == JC_PORT_DOWN ? "PORT_DOWN" : "not PORT_ACTIVE");
				add_cable(r, in, DOCTOR_ERROR, c, (long)e->host,
				    "reseat or replace the cable; if it stays down, reboot both Macs",
				    what);
			}
			free(what);
		}
	}
}

/* union-find over hosts for bridge loops */
static size_t
uf_find(size_t *up, size_t x)
{
	while (up[x] != x)
		x = up[x] = up[up[x]];
	return x;
}

/* bridge: the Thunderbolt Bridge is down, has no members, and bridged cables
 * do not close a loop across hosts. */
static void
chk_bridge(const struct doctor_input *in, struct doctor_report *r)
{
	static const char fix[] = "sudo ifconfig bridge0 down (jaccl-config configure does "
	    "it); to keep it off, disable the Thunderbolt Bridge service in Network settings";
	size_t *up, *loop;
	bool any_loop = false;

	for (size_t i = 0; i < in->n; i++) {
		const struct jc_host *h = &in->hosts[i];

		if (!doctor_probed(h))
			continue;
		if (h->nifaces == 0) {
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
			    "interfaces unknown (ifconfig not captured)");
			continue;
		}
		for (size_t k = 0; k < h->nifaces; k++) {
			const struct jc_iface *f = &h->ifaces[k];
			struct jc_buf b = { 0 };

			if (!f->is_bridge || f->up != JC_YES)
				continue;
			if (f->nmembers == 0) {
				doctor_add(r, DOCTOR_WARNING, (long)i, NULL, 0, fix,
				    "%s (Thunderbolt Bridge) is up, with no member", f->name);
				continue;
			}
			for (size_t m = 0; m < f->nmembers; m++)
				buf_printf(&b, "%s%s", m ? ", " : "", f->members[m]);
			doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, fix,
			    "%s (Thunderbolt Bridge) is up with members %s: JACCL fails with "
			    "\"RTR errno 22\" while Thunderbolt ports are bridged", f->name, b.data);
			buf_free(&b);
		}
	}
	if (in->g == NULL)
		return;
	up = xcalloc(in->n + 1, sizeof(*up));
	loop = xcalloc(in->n + 1, sizeof(*loop));
	for (size_t i = 0; i < in->n; i++)
		up[i] = i;
	for (size_t k = 0; k < in->g->ncables; k++) {
		const struct graph_cable *c = &in->g->cables[k];
		size_t a = c->end[0].host, b = c->end[1].host;

		if (!bridge_member(&in->hosts[a], c->end[0].iface) ||
		    !bridge_member(&in->hosts[b], c->end[1].iface))
			continue;
		a = uf_find(up, a);
		b = uf_find(up, b);
		if (a == b) {
			loop[a] = 1;
			any_loop = true;
		} else {
			up[a] = b;
			loop[b] |= loop[a];
		}
	}
	if (any_loop) {
		for (size_t root = 0; root < in->n; root++) {
			size_t *hs, nh = 0;
			struct jc_buf b = { 0 };

			if (uf_find(up, root) != root || !loop[root])
				continue;
			hs = xcalloc(in->n, sizeof(*hs));
			for (size_t i = 0; i < in->n; i++)
				if (uf_find(up, i) == root) {
					buf_printf(&b, "%s%s", nh ? ", " : "", hname(in, i));
					hs[nh++] = i;
				}
			doctor_add(r, DOCTOR_ERROR, -1, hs, nh, fix,
			    "Thunderbolt Bridge loop: the bridged cables of %s form a cycle "
			    "(broadcast storms; macOS turns a link off)", b.data);
			buf_free(&b);
			free(hs);
		}
	}
	free(up);
	free(loop);
}

/* One interface that JACCL would use must have an IPv4 address. */
static void
need_ipv4(const struct doctor_input *in, struct doctor_report *r, size_t i, const char *iface,
    const char *peer, bool *unknown_said)
{
	const struct jc_host *h = &in->hosts[i];
	const struct jc_iface *f;
	char *fix;

	if (h->nifaces == 0) {
		if (!unknown_said[i])
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
			    "interfaces unknown (ifconfig not captured)");
		unknown_said[i] = true;
		return;
	}
	if ((f = jc_host_iface(h, iface)) == NULL || f->ninet > 0)
		return;		/* a missing one is hostfile-ifaces' finding */
	fix = xasprintf("run `jaccl-config configure` (one /30 per cable), or sudo ifconfig "
	    "%s inet ADDR netmask 255.255.255.252", iface);
	doctor_add_port(doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, fix,
	    "%s (to %s) has no IPv4 address: no IPv4-mapped GID, JACCL fails with "
	    "\"Changing queue pair to RTR failed with errno 22\"", iface, peer), iface);
	free(fix);
}

/* ipv4: every Thunderbolt interface the hostfile uses (without --hostfile:
 * every end of a cable RDMA can use) has an IPv4 address. */
static void
chk_ipv4(const struct doctor_input *in, struct doctor_report *r)
{
	bool *said = xcalloc(in->n + 1, sizeof(*said));

	if (in->hf != NULL) {
		for (size_t row = 0; row < in->hf->nhosts; row++) {
			const struct jc_hf_host *hh = &in->hf->hosts[row];
			long i = hf_host(in, row);

			if (i < 0 || !doctor_probed(&in->hosts[i]))
				continue;
			for (size_t j = 0; j < hh->nrdma; j++) {
				const char *peer = j < in->hf->nhosts && in->hf->hosts[j].ssh ?
				    in->hf->hosts[j].ssh : "?";

				for (size_t k = 0; k < hh->rdma[j].n; k++)
					if (jc_iface_name_ok(hh->rdma[j].names[k]))
						need_ipv4(in, r, (size_t)i, rdma_netdev(&in->hosts[i],
						    hh->rdma[j].names[k]), peer, said);
			}
		}
	} else if (need_graph(in, r)) {
		for (size_t k = 0; k < in->g->ncables; k++) {
			const struct graph_cable *c = &in->g->cables[k];

			if (c->rdma == JC_NO)
				continue;
			for (int s = 0; s < 2; s++)
				need_ipv4(in, r, c->end[s].host, c->end[s].iface,
				    hname(in, c->end[1 - s].host), said);
		}
	}
	free(said);
}

/* os-version: every Mac runs the same macOS version and build. */
static void
chk_os_version(const struct doctor_input *in, struct doctor_report *r)
{
	const struct jc_host *ref = NULL;
	size_t *hs = xcalloc(in->n + 1, sizeof(*hs)), nh = 0;
	bool differ = false;
	struct jc_buf b = { 0 };

	for (size_t i = 0; i < in->n; i++) {
		const struct jc_host *h = &in->hosts[i];

		if (!doctor_probed(h) || !(platform_caps(h) & JC_PLAT_SAME_OS))
			continue;
		if (h->os_version == NULL) {
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
			    "macOS version unknown (sw_vers not captured)");
			continue;
		}
		buf_printf(&b, "%s%s %s (%s)", nh ? ", " : "", h->name, h->os_version,
		    h->os_build ? h->os_build : "build unknown");
		hs[nh++] = i;
		if (ref == NULL)
			ref = h;
		else if (strcmp(ref->os_version, h->os_version) != 0 ||
		    (ref->os_build && h->os_build && strcmp(ref->os_build, h->os_build) != 0))
			differ = true;
	}
	if (differ)
		doctor_add(r, DOCTOR_ERROR, -1, hs, nh,
		    "update every Mac to the same macOS version and build (betas included)",
		    "macOS differs between hosts: %s; RDMA ports may not find each other",
		    b.data);
	buf_free(&b);
	free(hs);
}

/* qp-budget: JACCL's limits for the chosen backend: at most CHECK_QP_MAX queue
 * pairs per RDMA device, a mesh of at most GRAPH_MESH_MAX ranks, a ring of at
 * most GRAPH_RING_WIDTH_MAX cables per direction. */
static void
chk_qp_budget(const struct doctor_input *in, struct doctor_report *r)
{
	struct graph_choice ch = { 0 };
	struct jc_err err = { 0 };

	if (in->hf != NULL) {
		struct check_report *cr = check_hostfile(in->hf, NULL, in->backend,
		    CHECK_DEFAULT_PORT);

		for (size_t k = 0; k < cr->nproblems; k++) {
			const struct check_item *it = &cr->problems[k];

			if (strcmp(it->code, "qp-budget") != 0 &&
			    strcmp(it->code, "mesh-too-large") != 0 &&
			    strcmp(it->code, "ring-width-range") != 0)
				continue;
			doctor_add(r, DOCTOR_ERROR, -1, NULL, 0,
			    strcmp(it->code, "mesh-too-large") == 0 ?
			    "use the jaccl-ring backend beyond 8 ranks" :
			    "list fewer devices per peer (at most 4 cables per ring direction, "
			    "10 queue pairs per device)", "%s", it->msg);
		}
		check_report_free(cr);
		return;
	}
	if (!need_graph(in, r))
		return;
	if (in->g->n < 2)
		return;
	if (graph_choose(in->g, in->backend, &ch, &err) != 0) {
		if (in->backend != NULL && strcmp(in->backend, "jaccl") == 0 &&
		    in->g->n > GRAPH_MESH_MAX)
			doctor_add(r, DOCTOR_ERROR, -1, NULL, 0,
			    "use the jaccl-ring backend beyond 8 ranks", "%s", err.msg);
		/* other failures (no ring, no mesh) are the cabling's, not a budget */
		graph_choice_clear(&ch);
		return;
	}
	if (ch.backend == GRAPH_JACCL && in->g->n > GRAPH_MESH_MAX)
		doctor_add(r, DOCTOR_ERROR, -1, NULL, 0, "use jaccl-ring",
		    "a JACCL mesh of %zu ranks: at most %d", in->g->n, GRAPH_MESH_MAX);
	for (size_t k = 0; k < ch.warnings.n; k++)
		if (strstr(ch.warnings.v[k], "JACCL's mesh supports") != NULL ||
		    strstr(ch.warnings.v[k], "JACCL's ring uses at most") != NULL)
			doctor_add(r, DOCTOR_WARNING, -1, NULL, 0, NULL, "%s", ch.warnings.v[k]);
	/* queue pairs per device: one per peer connection using it */
	if (ch.backend != GRAPH_RING) {
		size_t n = in->g->n;

		for (size_t i = 0; i < n; i++) {
			const struct jc_host *h = &in->hosts[i];

			for (size_t d = 0; d < h->nrdma; d++) {
				size_t qps = 0;

				for (size_t j = 0; j < n; j++) {
					bool neigh = ch.backend == GRAPH_JACCL ? j != i : false;
					unsigned w = ch.backend == GRAPH_JACCL ? 1 : ch.width;

					if (ch.backend == GRAPH_JACCL_RING)
						for (size_t q = 0; q < n; q++)
							if (ch.order[q] == i)
								neigh = j != i && (ch.order[(q + 1) % n] == j ||
								    ch.order[(q + n - 1) % n] == j);
					if (!neigh)
						continue;
					for (unsigned c = 0; c < w; c++) {
						int side;
						long cab = graph_pair_cable(in->g, i, j, c, true, &side);

						if (cab >= 0 && strcmp(in->g->cables[cab].end[side].rdma,
						    h->rdma[d].name) == 0)
							qps++;
					}
				}
				if (qps > CHECK_QP_MAX)
					doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0,
					    "spread the peers over more devices",
					    "%s would open %zu queue pairs on %s: Apple's driver "
					    "allows %d", h->name, qps, h->rdma[d].name, CHECK_QP_MAX);
			}
		}
	}
	graph_choice_clear(&ch);
}

/* coordinator: every host can open a TCP connection to rank 0's coordinator
 * address and port (measured by the caller over SSH). */
static void
chk_coordinator(const struct doctor_input *in, struct doctor_report *r)
{
	if (in->coord == NULL) {
		doctor_add(r, DOCTOR_UNKNOWN, -1, NULL, 0, NULL, "%s",
		    in->coord_skip ? in->coord_skip : "not tested");
		return;
	}
	for (size_t i = 0; i < in->n; i++) {
		const struct doctor_coord *c = &in->coord[i];

		if (!doctor_probed(&in->hosts[i]))
			continue;
		if (c->status == DOCTOR_ERROR)
			doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0,
			    "look for a firewall, a VPN route or a per-application network "
			    "block on this host (mlx issue 3755); `nc -z ADDR PORT` tells a "
			    "binary-specific block apart",
			    "cannot connect to the coordinator %s: %s%s%s", in->coordinator,
			    c->err_name ? c->err_name : "failed", c->detail ? ": " : "",
			    c->detail ? c->detail : "");
		else if (c->status == DOCTOR_UNKNOWN)
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
			    "coordinator probe did not run: %s", c->detail ? c->detail : "?");
		else if (c->listening && i != 0)
			doctor_add(r, DOCTOR_WARNING, (long)i, NULL, 0,
			    "stop the stale job on rank 0, or use another --starting-port",
			    "something already listens on the coordinator %s", in->coordinator);
	}
}

/* hostfile-ifaces: every device of the hostfile still exists and still
 * reaches the peer it is listed for (re-cabling renames rdma_enX). */
static void
chk_hostfile_ifaces(const struct doctor_input *in, struct doctor_report *r)
{
	if (in->hf == NULL) {
		doctor_add(r, DOCTOR_UNKNOWN, -1, NULL, 0, NULL, "needs --hostfile");
		return;
	}
	for (size_t row = 0; row < in->hf->nhosts; row++) {
		const struct jc_hf_host *hh = &in->hf->hosts[row];
		long i = hf_host(in, row);

		if (i < 0 || !doctor_probed(&in->hosts[i]))
			continue;
		for (size_t j = 0; j < hh->nrdma; j++) {
			long pj = j < in->hf->nhosts ? hf_host(in, j) : -1;

			for (size_t k = 0; k < hh->rdma[j].n; k++) {
				const char *dev = hh->rdma[j].names[k];
				const struct jc_host *h = &in->hosts[i];
				const char *nd;
				bool reaches = false;
				struct jc_buf now = { 0 };

				if (!jc_iface_name_ok(dev))
					continue;
				nd = rdma_netdev(h, dev);
				if ((h->rdma_listed == JC_YES && h->nrdma > 0 &&
				    find_rdma(h, dev) == NULL) ||
				    (h->nifaces > 0 && jc_host_iface(h, nd) == NULL)) {
					doctor_add_port(doctor_add(r, DOCTOR_ERROR, i, NULL, 0,
					    "re-run `jaccl-config configure` to write a new hostfile",
					    "%s (listed for %s) no longer exists", dev,
					    pj >= 0 ? hname(in, (size_t)pj) : "?"), dev);
					continue;
				}
				if (in->g == NULL || pj < 0 || pj == i)
					continue;
				for (unsigned c = 0; c < graph_count(in->g, (size_t)i, (size_t)pj,
				    false); c++) {
					int side;
					long cab = graph_pair_cable(in->g, (size_t)i, (size_t)pj, c,
					    false, &side);

					if (cab < 0)
						continue;
					if (strcmp(in->g->cables[cab].end[side].iface, nd) == 0)
						reaches = true;
					buf_printf(&now, "%s%s", now.len ? ", " : "",
					    in->g->cables[cab].end[side].rdma);
				}
				if (!reaches)
					doctor_add_port(doctor_add(r, DOCTOR_ERROR, i, NULL, 0,
					    "re-run `jaccl-config configure` to write a new hostfile",
					    "%s no longer reaches %s: %s%s", dev, hname(in, (size_t)pj),
					    now.len ? "the cable to it is now on " : "no cable to it",
					    now.len ? now.data : ""), dev);
				buf_free(&now);
			}
		}
	}
}

static bool
is_mac_studio(const char *model)
{
	static const char *const studios[] = { "Mac13,1", "Mac13,2", "Mac14,13", "Mac14,14",
		"Mac15,14", "Mac16,9" };

	for (size_t i = 0; model && i < JC_ARRAY_LEN(studios); i++)
		if (strcmp(model, studios[i]) == 0)
			return true;
	return false;
}

/* studio-port: a Mac Studio uses the port beside Ethernet (en2) for RDMA;
 * reports conflict on whether that port carries RDMA, so only a warning. */
static void
chk_studio_port(const struct doctor_input *in, struct doctor_report *r)
{
	if (in->g == NULL)
		return;
	for (size_t k = 0; k < in->g->ncables; k++) {
		const struct graph_cable *c = &in->g->cables[k];

		if (c->rdma == JC_NO)
			continue;
		for (int s = 0; s < 2; s++) {
			const struct jc_host *h = &in->hosts[c->end[s].host];

			if (!is_mac_studio(h->model) || strcmp(c->end[s].iface, "en2") != 0)
				continue;
			add_cable(r, in, DOCTOR_WARNING, c, (long)c->end[s].host,
			    "if this link stays PORT_DOWN or fails under load, move the cable "
			    "to another port",
			    "uses en2, the Mac Studio port beside Ethernet, for RDMA (reports "
			    "conflict on whether it can carry RDMA)");
		}
	}
}

/* expected-cabling: the cabling matches the file of --expect. */
static void
chk_expected(const struct doctor_input *in, struct doctor_report *r)
{
	struct cabling *got;
	struct cabling_diff d = { 0 };

	if (in->expect == NULL) {
		doctor_add(r, DOCTOR_UNKNOWN, -1, NULL, 0, NULL, "needs --expect FILE");
		return;
	}
	if (!need_graph(in, r))
		return;
	got = cabling_from_graph(in->g);
	cabling_diff(in->expect, got, &d);
	for (size_t k = 0; k < d.n; k++) {
		const struct cabling_delta *x = &d.v[k];
		const struct cabling_cable *c = x->want >= 0 ? &in->expect->cables[x->want] :
		    x->got >= 0 ? &got->cables[x->got] : NULL;
		size_t hs[2], nh = 0;
		long host = -1;
		struct doctor_finding *f;

		for (int s = 0; c && s < 2; s++)
			for (size_t i = 0; i < in->n; i++)
				if (strcmp(in->hosts[i].name, c->end[s].host) == 0)
					hs[nh++] = i;
		if (nh > 0)
			host = (long)hs[0];
		f = doctor_add(r, x->kind == CABLING_NEW || x->kind == CABLING_HOST_GONE ?
		    DOCTOR_WARNING : DOCTOR_ERROR, host, hs, nh,
		    x->kind == CABLING_NEW ? "save the cabling again if this is intended" :
		    x->kind == CABLING_HOST_GONE ? "probe every host of the file" :
		    "cable it as the file says, or save the cabling again if the change is "
		    "intended", "%s", x->msg);
		for (int s = 0; c && s < 2; s++) {
			char *l = cabling_end_label(&c->end[s]);

			doctor_add_port(f, l);
			free(l);
		}
	}
	cabling_diff_free(&d);
	cabling_free(got);
}

const struct doctor_check doctor_checks[] = {
	{ "reachable", DOCTOR_ERROR, "every host was reached over SSH and its probe understood",
	  chk_reachable },
	{ "duplicate-hosts", DOCTOR_ERROR, "no machine is listed twice", chk_duplicates },
	{ "rdma-enabled", DOCTOR_ERROR, "RDMA is enabled on every Mac and lists devices",
	  chk_rdma_enabled },
	{ "link-class", DOCTOR_ERROR, "every cable is a direct link at 80 Gb/s (RDMA-capable)",
	  chk_link_class },
	{ "port-state", DOCTOR_ERROR, "both ends of every RDMA cable are PORT_ACTIVE",
	  chk_port_state },
	{ "bridge", DOCTOR_ERROR, "the Thunderbolt Bridge is off and bridges form no loop",
	  chk_bridge },
	{ "ipv4", DOCTOR_ERROR, "every Thunderbolt interface JACCL uses has an IPv4 address",
	  chk_ipv4 },
	{ "os-version", DOCTOR_ERROR, "every Mac runs the same macOS version and build",
	  chk_os_version },
	{ "qp-budget", DOCTOR_ERROR, "queue pairs, mesh size and ring width within JACCL's limits",
	  chk_qp_budget },
	{ "coordinator", DOCTOR_ERROR, "every host reaches rank 0's coordinator address and port",
	  chk_coordinator },
	{ "hostfile-ifaces", DOCTOR_ERROR, "the hostfile's devices exist and reach their peers",
	  chk_hostfile_ifaces },
	{ "studio-port", DOCTOR_WARNING, "no Mac Studio uses the port beside Ethernet for RDMA",
	  chk_studio_port },
	{ "subnet-overlap", DOCTOR_ERROR,
	  "no address or route of a host overlaps a cable's subnet (a VPN's, a LAN's)",
	  doctor_chk_subnet },
	{ "expected-cabling", DOCTOR_ERROR, "the cabling matches the file of --expect",
	  chk_expected },
	/* drift and sameness: doctor_drift.c */
	{ "drift", DOCTOR_ERROR, "addresses, cables and bridge are as the last setup left them",
	  doctor_chk_drift },
	{ "bridge-route", DOCTOR_ERROR,
	  "bridge0 holds no address, no default route via bridge0 or a cable",
	  doctor_chk_bridge_route },
	{ "software", DOCTOR_ERROR, "every host runs the same MLX and Python",
	  doctor_chk_software },
	{ "login-env", DOCTOR_WARNING, "every host sets the same MLX_* and JACCL_* variables",
	  doctor_chk_login_env },
	{ "sleep", DOCTOR_WARNING, "no Mac goes to sleep when idle", doctor_chk_sleep },
	{ "firewall", DOCTOR_ERROR, "no Mac's application firewall blocks incoming connections",
	  doctor_chk_firewall },
	{ "install", DOCTOR_WARNING, "every host has this jaccl-config where verify looks for it",
	  doctor_chk_install },
	{ "sudo", DOCTOR_WARNING, "every host's sudo runs the setup's commands without a password",
	  doctor_chk_sudo },
	{ "other-managers", DOCTOR_ERROR,
	  "no other tool manages a Mac's network (exo's daemon, a location of its own, oMLX)",
	  doctor_chk_managers },
};
const size_t doctor_nchecks = JC_ARRAY_LEN(doctor_checks);

struct doctor_report *
doctor_run(const struct doctor_input *in)
{
	struct doctor_report *r = xcalloc(1, sizeof(*r));

	r->results = xcalloc(doctor_nchecks, sizeof(*r->results));
	r->nresults = doctor_nchecks;
	for (size_t c = 0; c < doctor_nchecks; c++) {
		size_t first = r->n;
		struct doctor_result *res = &r->results[c];

		r->cur = &doctor_checks[c];
		doctor_checks[c].run(in, r);
		res->check = &doctor_checks[c];
		res->status = DOCTOR_OK;
		for (size_t k = first; k < r->n; k++)
			if (r->v[k].status > res->status)
				res->status = r->v[k].status;
		r->count[res->status]++;
	}
	/* reasons point into the findings: set once the array stops moving */
	for (size_t c = 0, k = 0; c < doctor_nchecks; c++) {
		for (; k < r->n && strcmp(r->v[k].check, doctor_checks[c].name) == 0; k++)
			if (r->results[c].status == DOCTOR_UNKNOWN && r->results[c].reason == NULL)
				r->results[c].reason = r->v[k].msg;
	}
	r->cur = NULL;
	return r;
}

bool
doctor_passed(const struct doctor_report *r)
{
	return r->count[DOCTOR_ERROR] == 0;
}

json_t *
doctor_report_json(const struct doctor_report *r, const struct jc_host *hosts, size_t n)
{
	json_t *doc = json_object(), *hl = json_array(), *checks = json_array(), *sum;

	for (size_t i = 0; i < n; i++)
		json_array_append_new(hl, json_string(hosts[i].name));
	for (size_t c = 0; c < r->nresults; c++) {
		const struct doctor_result *res = &r->results[c];
		json_t *o = json_object(), *fl = json_array();

		for (size_t k = 0; k < r->n; k++) {
			const struct doctor_finding *f = &r->v[k];
			json_t *fo, *fh, *fp;

			if (strcmp(f->check, res->check->name) != 0)
				continue;
			fh = json_array();
			fp = json_array();
			for (size_t i = 0; i < f->nhosts; i++)
				json_array_append_new(fh, json_string(hosts[f->hosts[i]].name));
			for (size_t i = 0; i < f->nports; i++)
				json_array_append_new(fp, json_string(f->ports[i]));
			fo = json_object();
			json_object_set_new(fo, "status", json_string(doctor_status_name(f->status)));
			json_object_set_new(fo, "host", f->host >= 0 ?
			    json_string(hosts[f->host].name) : json_null());
			json_object_set_new(fo, "hosts", fh);
			json_object_set_new(fo, "ports", fp);
			json_object_set_new(fo, "message", json_string(f->msg));
			json_object_set_new(fo, "remedy", f->remedy ? json_string(f->remedy) :
			    json_null());
			json_array_append_new(fl, fo);
		}
		json_object_set_new(o, "name", json_string(res->check->name));
		json_object_set_new(o, "severity",
		    json_string(doctor_status_name(res->check->severity)));
		json_object_set_new(o, "description", json_string(res->check->what));
		json_object_set_new(o, "status", json_string(doctor_status_name(res->status)));
		json_object_set_new(o, "reason", res->reason ? json_string(res->reason) :
		    json_null());
		json_object_set_new(o, "findings", fl);
		json_array_append_new(checks, o);
	}
	sum = json_object();
	json_object_set_new(sum, "ok", json_integer((json_int_t)r->count[DOCTOR_OK]));
	json_object_set_new(sum, "warning", json_integer((json_int_t)r->count[DOCTOR_WARNING]));
	json_object_set_new(sum, "error", json_integer((json_int_t)r->count[DOCTOR_ERROR]));
	json_object_set_new(sum, "unknown", json_integer((json_int_t)r->count[DOCTOR_UNKNOWN]));
	json_object_set_new(doc, "version", json_integer(1));
	json_object_set_new(doc, "hosts", hl);
	json_object_set_new(doc, "checks", checks);
	json_object_set_new(doc, "summary", sum);
	json_object_set_new(doc, "passed", json_boolean(doctor_passed(r)));
	return doc;
}

void
doctor_report_free(struct doctor_report *r)
{
	if (r == NULL)
		return;
	for (size_t k = 0; k < r->n; k++) {
		free(r->v[k].hosts);
		strv_free_array(r->v[k].ports, r->v[k].nports);
		free(r->v[k].msg);
		free(r->v[k].remedy);
	}
	free(r->v);
	free(r->results);
	free(r);
}

/* ---- the coordinator probe ---- */

#define COORD_MARK "JC-CONNECT-OK"

static const struct {
	const char *name;
	const char *text;	/* as strerror words appear in bash / nc messages */
} coord_errs[] = {
	{ "ECONNREFUSED", "refused" },
	{ "ETIMEDOUT", "timed out" },
	{ "EHOSTUNREACH", "No route to host" },
	{ "ENETUNREACH", "Network is unreachable" },
	{ "EHOSTDOWN", "Host is down" },
	{ "EADDRNOTAVAIL", "assign requested address" },
	{ "EPERM", "not permitted" },
	{ "EACCES", "Permission denied" },
};

struct coord_run {
	struct jc_transport *tp;
	const struct jc_host *hosts;
	const char *cmd;
	double timeout;
	struct doctor_coord *out;
};

/* The remote output's last line, trimmed (what bash or nc said). */
static char *
last_line(const char *s)
{
	const char *e = s + strlen(s), *b;
	char *line, *p;

	while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' '))
		e--;
	b = e;
	while (b > s && b[-1] != '\n')
		b--;
	line = xstrndup(b, (size_t)(e - b));
	p = hostfile_printable(line, 200);
	free(line);
	return p;
}

/* What a finished connection attempt printed. */
static void
coord_judge(struct doctor_coord *out, const struct tr_result *res)
{
	char *all;

	if (strstr(res->out, COORD_MARK) != NULL) {
		out->status = DOCTOR_OK;
		out->listening = true;
		return;
	}
	all = xasprintf("%s%s", res->out, res->err);
	out->status = DOCTOR_ERROR;
	out->detail = last_line(all);
	for (size_t k = 0; k < JC_ARRAY_LEN(coord_errs); k++)
		if (strstr(all, coord_errs[k].text) != NULL) {
			out->err_name = coord_errs[k].name;
			break;
		}
	if (out->err_name != NULL && strcmp(out->err_name, "ECONNREFUSED") == 0)
		out->status = DOCTOR_OK;	/* answered: reachable */
	else if (out->err_name == NULL && res->status == 127)
		out->status = DOCTOR_UNKNOWN;
	free(all);
}

static void
coord_host(size_t i, void *arg)
{
	struct coord_run *cr = arg;
	const struct jc_host *h = &cr->hosts[i];
	struct doctor_coord *out = &cr->out[i];
	struct jc_conn *s = NULL;
	struct tr_result res = { 0 };
	struct jc_err err = { 0 };
	int r;

	out->status = DOCTOR_UNKNOWN;
	if (!h->reachable || h->error != NULL)
		return;
	if (tp_connect(cr->tp, h->name, h->user, h->port, &s, &err) != 0) {
		out->detail = xstrdup(err.msg);
		return;
	}
	r = tp_run(s, cr->cmd, NULL, 0, cr->timeout, 64 * 1024, &res, &err);
	if (r == TR_ETIMEOUT) {
		out->status = DOCTOR_ERROR;
		out->err_name = "ETIMEDOUT";
		out->detail = xasprintf("no answer within %.0f s", cr->timeout);
	} else if (r != 0) {
		out->detail = xstrdup(err.msg);
	} else {
		coord_judge(out, &res);
	}
	tr_result_clear(&res);
	tp_close(s);
}

struct doctor_coord *
doctor_coord_probe(struct jc_transport *tp, const struct jc_host *hosts, size_t n,
    const char *addr, long port, double timeout)
{
	struct coord_run cr = { .tp = tp, .hosts = hosts, .timeout = timeout };
	int bound;

	cr.out = xcalloc(n ? n : 1, sizeof(*cr.out));
	/* addr and port were validated (IPv4 literal / DNS name, number) */
	/*
	 * The host bounds its own attempt: a SYN that gets no answer is retried
	 * by the kernel for minutes, and a connect still waiting when our
	 * command times out would outlive the session. A watchdog (stdio on
	 * /dev/null, so the session does not wait for it) ends bash's connect
	 * after the bound, and is ended with its sleep once the connect is over.
	 */
	bound = timeout >= 2 ? (int)timeout : 1;
	cr.cmd = xasprintf("exec 2>&1; if [ -x /bin/bash ]; then "
	    "/bin/bash -c 'exec 3<>\"/dev/tcp/$1/$2\"' connect %s %ld & p=$!; "
	    "/bin/sh -c 'trap \"kill \\$s 2>/dev/null; exit 0\" TERM; sleep \"$1\" & s=$!; "
	    "wait $s; kill \"$2\" 2>/dev/null' jc-watchdog %d $p </dev/null >/dev/null 2>&1 & "
	    "w=$!; if wait $p; then r=0; else r=$?; fi; kill $w 2>/dev/null; wait $w; "
	    "if [ $r = 0 ]; then echo " COORD_MARK "; "
	    "elif [ $r -gt 128 ]; then echo \"connect: timed out after %d s\"; fi; "
	    "else nc -z -v -w %d %s %ld && echo " COORD_MARK "; fi", addr, port,
	    bound, bound, bound, addr, port);
	/* the session outlasts the host's bound, so the host's answer arrives */
	cr.timeout = timeout + 5;
	jc_parallel_for(n, coord_host, &cr);
	free((char *)cr.cmd);
	return cr.out;
}

void
doctor_coord_free(struct doctor_coord *c, size_t n)
{
	for (size_t i = 0; c != NULL && i < n; i++)
		free(c[i].detail);
	free(c);
}
