/* SPDX-License-Identifier: MIT */
/*
 * The doctor's checks of drift (the live cluster against what the last
 * setup recorded) and of sameness (the software and settings every host of
 * a job must share), in the same form as those of doctor.c: each reads
 * struct doctor_input and adds findings, a check with none is ok, and a
 * fact that could not be learnt is "unknown", never a pass. Each finding
 * names the one command that fixes it where there is one.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "doctor_drift.h"
#include "doctor_known.h"
#include "platform.h"

/* The probed host named name, or -1. */
static long
host_named(const struct doctor_input *in, const char *name)
{
	for (size_t i = 0; i < in->n; i++)
		if (strcmp(in->hosts[i].name, name) == 0)
			return (long)i;
	return -1;
}

/* The command that sets the cluster up again as planned. New string. */
static char *
setup_cmd(const struct doctor_input *in)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, JC_PROG " --hosts ");
	for (size_t i = 0; i < in->n; i++)
		buf_printf(&b, "%s%s", i ? "," : "", in->hosts[i].name);
	buf_puts(&b, " --auto-setup");
	for (size_t i = 0; in->record != NULL && i < in->record->n; i++)
		if (in->record->hosts[i].persisted && !in->record->hosts[i].restored) {
			buf_puts(&b, " --persist");
			break;
		}
	if (in->state_dir != NULL)
		buf_printf(&b, " --state-dir %s", in->state_dir);
	return buf_steal(&b);
}

static bool
has_inet(const struct jc_iface *f, const char *ip)
{
	for (size_t k = 0; k < f->ninet; k++)
		if (strcmp(f->inet[k], ip) == 0)
			return true;
	return false;
}

/* The live cable at host i's interface iface, or -1. */
static long
cable_at(const struct graph *g, size_t i, const char *iface, int *side)
{
	for (size_t k = 0; k < g->ncables; k++)
		for (int s = 0; s < 2; s++)
			if (g->cables[k].end[s].host == i &&
			    strcmp(g->cables[k].end[s].iface, iface) == 0) {
				*side = s;
				return (long)k;
			}
	return -1;
}

/* Recorded address ip: its host (index in the record) and address k, or -1. */
static long
rec_owner(const struct setup_record *rec, const char *ip, size_t *k)
{
	for (size_t r = 0; r < rec->n; r++)
		for (size_t a = 0; a < rec->hosts[r].ips.n; a++)
			if (strcmp(rec->hosts[r].ips.v[a], ip) == 0) {
				*k = a;
				return (long)r;
			}
	return -1;
}

/*
 * The recorded cable of address k of record host r (host i): still there,
 * moved to other ports, or gone. Reported once, from the end whose host
 * comes first.
 */
static void
drift_cable(const struct doctor_input *in, struct doctor_report *r, size_t ri, size_t k,
    size_t i, const char *fix)
{
	const struct setup_rec_host *rh = &in->record->hosts[ri];
	const char *iface = rh->ifaces.v[k];
	size_t pk = 0, hs[2];
	long pr = rec_owner(in->record, rh->peers.v[k], &pk), j, cab;
	const char *piface;
	struct jc_buf now = { 0 };
	int side;

	if (pr < 0 || in->g == NULL)
		return;
	j = host_named(in, in->record->hosts[pr].name);
	if (j < 0 || (size_t)j <= i || !doctor_probed(&in->hosts[j]))
		return;
	piface = in->record->hosts[pr].ifaces.v[pk];
	cab = cable_at(in->g, i, iface, &side);
	if (cab >= 0 && in->g->cables[cab].end[1 - side].host == (size_t)j &&
	    strcmp(in->g->cables[cab].end[1 - side].iface, piface) == 0)
		return;		/* as recorded */
	hs[0] = i;
	hs[1] = (size_t)j;
	for (unsigned c = 0; c < graph_count(in->g, i, (size_t)j, false); c++) {
		int s2;
		long pc = graph_pair_cable(in->g, i, (size_t)j, c, false, &s2);

		if (pc >= 0)
			buf_printf(&now, "%s%s %s -- %s %s", now.len ? ", " : "", rh->name,
			    in->g->cables[pc].end[s2].iface, in->hosts[j].name,
			    in->g->cables[pc].end[1 - s2].iface);
	}
	if (now.len > 0)
		doctor_add(r, DOCTOR_ERROR, (long)i, hs, 2, fix,
		    "cable %s %s -- %s %s of the last setup has moved: now %s; its addresses "
		    "are on the old ports", rh->name, iface, in->hosts[j].name, piface, now.data);
	else
		doctor_add(r, DOCTOR_ERROR, (long)i, hs, 2, fix,
		    "cable %s %s -- %s %s of the last setup is gone (no cable between the two "
		    "now); plug it back, or set the cabling up as it is", rh->name, iface,
		    in->hosts[j].name, piface);
	buf_free(&now);
}

/* The planned addresses of one recorded host against its interfaces now. */
static void
drift_host(const struct doctor_input *in, struct doctor_report *r, size_t ri, size_t i,
    const char *fix)
{
	const struct setup_rec_host *rh = &in->record->hosts[ri];
	const struct jc_host *h = &in->hosts[i];

	if (h->nifaces == 0) {
		doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
		    "interfaces unknown (ifconfig not captured)");
		return;
	}
	for (size_t k = 0; k < rh->ifaces.n; k++) {
		const struct jc_iface *f = jc_host_iface(h, rh->ifaces.v[k]);
		struct jc_buf has = { 0 };
		struct doctor_finding *fd;

		if (f == NULL) {
			fd = doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, fix,
			    "%s (planned address %s, to %s) no longer exists", rh->ifaces.v[k],
			    rh->ips.v[k], rh->peers.v[k]);
			doctor_add_port(fd, rh->ifaces.v[k]);
			continue;
		}
		if (!has_inet(f, rh->ips.v[k])) {
			for (size_t a = 0; a < f->ninet; a++)
				buf_printf(&has, "%s%s/%d", a ? ", " : "", f->inet[a], f->prefix[a]);
			fd = doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, fix,
			    "planned address %s on %s (to %s) is missing (%s has %s): addresses "
			    "set without persistence are lost at a reboot", rh->ips.v[k],
			    rh->ifaces.v[k], rh->peers.v[k], rh->ifaces.v[k],
			    has.len ? has.data : "no IPv4 address");
			doctor_add_port(fd, rh->ifaces.v[k]);
			buf_free(&has);
		}
		drift_cable(in, r, ri, k, i, fix);
	}
}

/* The Thunderbolt Bridge the setup took down, back up with members. */
static void
drift_bridge(const struct doctor_input *in, struct doctor_report *r, size_t i)
{
	const struct jc_host *h = &in->hosts[i];

	if (!(platform_caps(h) & JC_PLAT_BRIDGE))
		return;
	for (size_t k = 0; k < h->nifaces; k++) {
		const struct jc_iface *f = &h->ifaces[k];
		struct jc_buf fix = { 0 }, m = { 0 };

		if (!f->is_bridge || f->up != JC_YES || f->nmembers == 0)
			continue;
		buf_printf(&fix, "sudo ifconfig %s", f->name);
		for (size_t x = 0; x < f->nmembers; x++) {
			buf_printf(&fix, " deletem %s", f->members[x]);
			buf_printf(&m, "%s%s", x ? ", " : "", f->members[x]);
		}
		doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, fix.data,
		    "%s (Thunderbolt Bridge) is back up with members %s since the last setup "
		    "took it down (macOS brings it back at a reboot or a network change)",
		    f->name, m.data);
		buf_free(&fix);
		buf_free(&m);
	}
}

static const char *why_of(const struct jc_sw *sw, const char *file, const char *dflt);

/* A service's name quoted for sh: our names are words, spaces and '-'. */
static char *
svc_quoted(const char *name)
{
	return xasprintf("'%s'", name);
}

/*
 * A host set up with --persist: each planned address must be in an enabled
 * network service of ours on that interface, set by hand to exactly the
 * planned address and /30 (what a reboot brings back), and the Thunderbolt
 * Bridge's service must stay disabled.
 */
static void
drift_services(const struct doctor_input *in, struct doctor_report *r, size_t ri, size_t i,
    const char *fix)
{
	const struct setup_rec_host *rh = &in->record->hosts[ri];
	const struct jc_sw *sw = in->sw ? &in->sw[i] : NULL;
	const struct jc_netsvc *br;

	if (!(platform_caps(&in->hosts[i]) & JC_PLAT_BRIDGE))
		return;		/* the Linux connections are not read back yet */
	if (sw == NULL || !sw->gathered || sw->svc_known != JC_YES) {
		doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
		    "persisted network services unknown (%s)", sw && sw->gathered ?
		    why_of(sw, SW_NETSVC, "networksetup not captured") :
		    "the doctor's own outputs were not gathered");
		return;
	}
	for (size_t k = 0; k < rh->ifaces.n; k++) {
		const struct jc_netsvc *sv = NULL;
		const struct jc_svcinfo *inf;
		struct doctor_finding *fd;
		char *q, *fx;

		for (size_t s = 0; s < sw->nsvcs && sv == NULL; s++)
			if (platform_svc_ours(sw->svcs[s].name) && sw->svcs[s].device != NULL &&
			    strcmp(sw->svcs[s].device, rh->ifaces.v[k]) == 0)
				sv = &sw->svcs[s];
		if (sv == NULL) {
			fd = doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, fix,
			    "no network service of ours holds %s's planned address %s (--persist "
			    "made one): the next reboot loses it", rh->ifaces.v[k], rh->ips.v[k]);
			doctor_add_port(fd, rh->ifaces.v[k]);
			continue;
		}
		q = svc_quoted(sv->name);
		if (!sv->enabled) {
			fx = xasprintf("sudo networksetup -setnetworkserviceenabled %s on", q);
			fd = doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, fx,
			    "network service %s (%s, planned %s) is disabled: the next reboot "
			    "loses the address", q, rh->ifaces.v[k], rh->ips.v[k]);
			doctor_add_port(fd, rh->ifaces.v[k]);
			free(fx);
		}
		inf = svcinfo_find(sw->info, sw->ninfo, sv->name);
		if (inf == NULL || !inf->manual || inf->ip == NULL ||
		    strcmp(inf->ip, rh->ips.v[k]) != 0 || inf->mask == NULL ||
		    strcmp(inf->mask, "255.255.255.252") != 0) {
			fx = xasprintf("sudo networksetup -setmanual %s %s 255.255.255.252", q,
			    rh->ips.v[k]);
			fd = doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, fx,
			    "network service %s (%s) was changed since the setup: it holds %s%s%s "
			    "where the setup wrote %s/30, and a reboot brings that back",
			    q, rh->ifaces.v[k], inf == NULL ? "nothing known" : inf->manual ?
			    (inf->ip ? inf->ip : "no address") : "DHCP",
			    inf != NULL && inf->manual && inf->mask ? " mask " : "",
			    inf != NULL && inf->manual && inf->mask ? inf->mask : "", rh->ips.v[k]);
			doctor_add_port(fd, rh->ifaces.v[k]);
			free(fx);
		}
		free(q);
	}
	br = netsvc_find(sw->svcs, sw->nsvcs, "Thunderbolt Bridge");
	if (br != NULL && br->enabled)
		doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0,
		    "sudo networksetup -setnetworkserviceenabled 'Thunderbolt Bridge' off",
		    "the Thunderbolt Bridge service is enabled again since the --persist setup "
		    "disabled it: at the next reboot bridge0 takes the cable ports");
}

void
doctor_chk_drift(const struct doctor_input *in, struct doctor_report *r)
{
	const struct setup_record *rec = in->record;
	char *fix;

	if (rec == NULL) {
		doctor_add(r, DOCTOR_UNKNOWN, -1, NULL, 0, NULL, "%s",
		    in->record_skip ? in->record_skip : "no setup recorded");
		return;
	}
	if (strcmp(rec->status, "restored") == 0 || strcmp(rec->status, "rolled-back") == 0)
		return;		/* nothing of the setup is meant to stay */
	fix = setup_cmd(in);
	if (strcmp(rec->status, "applied") != 0)
		doctor_add(r, DOCTOR_WARNING, -1, NULL, 0, fix,
		    "the last setup did not finish (its record says \"%s\")", rec->status);
	for (size_t ri = 0; ri < rec->n; ri++) {
		long i = host_named(in, rec->hosts[ri].name);

		if (rec->hosts[ri].restored || i < 0 || !doctor_probed(&in->hosts[i]))
			continue;
		drift_host(in, r, ri, (size_t)i, fix);
		drift_bridge(in, r, (size_t)i);
		if (rec->hosts[ri].persisted)
			drift_services(in, r, ri, (size_t)i, fix);
	}
	free(fix);
}

/* Whether iface is one of h's Thunderbolt ports (a cable interface). */
static bool
cable_iface(const struct jc_host *h, const char *iface)
{
	for (size_t p = 0; p < h->nports; p++)
		if (h->ports[p].iface != NULL && strcmp(h->ports[p].iface, iface) == 0)
			return true;
	return false;
}

void
doctor_chk_bridge_route(const struct doctor_input *in, struct doctor_report *r)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct jc_host *h = &in->hosts[i];
		const struct jc_sw *sw = in->sw ? &in->sw[i] : NULL;
		const struct jc_iface *f;
		char *fix;

		if (!doctor_probed(h))
			continue;
		for (size_t k = 0; k < h->nifaces; k++) {
			struct jc_buf a = { 0 };

			f = &h->ifaces[k];
			if (!f->is_bridge || f->ninet == 0 || !(platform_caps(h) & JC_PLAT_BRIDGE))
				continue;
			for (size_t x = 0; x < f->ninet; x++)
				buf_printf(&a, "%s%s/%d", x ? ", " : "", f->inet[x], f->prefix[x]);
			fix = xasprintf("sudo ipconfig set %s NONE", f->name);
			doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, fix,
			    "%s (Thunderbolt Bridge) holds %s (DHCP or a self-assigned address on "
			    "the bridge): peers answer there instead of on their cables", f->name,
			    a.data);
			free(fix);
			buf_free(&a);
		}
		if (sw == NULL || !sw->gathered || sw->route_known != JC_YES) {
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
			    "default route unknown (%s)", sw == NULL || !sw->gathered ?
			    "the doctor's outputs were not gathered" : "its output was not understood");
			continue;
		}
		if (sw->default_if == NULL)
			continue;
		f = jc_host_iface(h, sw->default_if);
		if (!(f != NULL && f->is_bridge) && !cable_iface(h, sw->default_if))
			continue;
		fix = platform_caps(h) & JC_PLAT_BRIDGE ? xstrdup("sudo route delete default") :
		    xasprintf("sudo ip route del default dev %s", sw->default_if);
		doctor_add_port(doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, fix,
		    "the default route goes through %s (%s): traffic for other networks, the "
		    "coordinator's included, leaves over a cable", sw->default_if,
		    f != NULL && f->is_bridge ? "the Thunderbolt Bridge" : "a Thunderbolt cable"),
		    sw->default_if);
		free(fix);
	}
}

/* --- sameness --- */

/* The doctor's outputs of host i, or NULL with an unknown finding added. */
static const struct jc_sw *
sw_of(const struct doctor_input *in, struct doctor_report *r, size_t i, const char *what)
{
	const struct jc_sw *sw = in->sw ? &in->sw[i] : NULL;

	if (sw != NULL && sw->gathered)
		return sw;
	doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL, "%s unknown: the doctor's own "
	    "outputs were not gathered (a bundle of `probe --save`; `doctor --save` keeps "
	    "them)", what);
	return NULL;
}

/* The reason the doctor's output of file was not understood, or a default. */
static const char *
why_of(const struct jc_sw *sw, const char *file, const char *dflt)
{
	for (size_t k = 0; k < sw->why.n; k++)
		if (strncmp(sw->why.v[k], file, strlen(file)) == 0)
			return sw->why.v[k];
	return dflt;
}

/*
 * The most common of n values (NULL ones left out), the first of the most
 * common on a tie; NULL when every one is NULL.
 */
static const char *
most_common(const char *const *v, size_t n)
{
	const char *best = NULL;
	size_t bestc = 0;

	for (size_t a = 0; a < n; a++) {
		size_t c = 0;

		if (v[a] == NULL)
			continue;
		for (size_t b = 0; b < n; b++)
			if (v[b] != NULL && strcmp(v[a], v[b]) == 0)
				c++;
		if (c > bestc) {
			best = v[a];
			bestc = c;
		}
	}
	return best;
}

/* How host sw's jobs call their Python: the path that ran, else "python3". */
static const char *
py_name(const struct jc_sw *sw)
{
	return sw->python_path != NULL ? sw->python_path : "python3";
}

/*
 * Host i has no Python the jobs could run: say what was tried (the
 * candidates and macOS's stub) when the doctor's script said it, else the
 * fact is unknown.
 */
static void
no_python(struct doctor_report *r, size_t i, const struct jc_sw *sw)
{
	struct jc_buf b = { 0 };
	bool stub = false;

	if (sw->python_tried.n == 0) {
		doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL, "Python unknown: %s",
		    why_of(sw, SW_PYTHON, "python3 gave no version"));
		return;
	}
	for (size_t k = 0; k < sw->python_tried.n; k++) {
		const char *t = sw->python_tried.v[k], *c = strrchr(t, ':');
		int n = (int)(c - t);

		if (strcmp(c, ":stub") == 0) {
			stub = true;
			buf_printf(&b, "%s%.*s is macOS's stub (without the Command Line Tools it "
			    "only asks to install them)", b.len ? "; " : "", n, t);
		} else {
			buf_printf(&b, "%s%.*s is not there", b.len ? "; " : "", n, t);
		}
	}
	if (sw->python_path != NULL)
		buf_printf(&b, "%s%s did not run (%s)", b.len ? "; " : "", sw->python_path,
		    why_of(sw, SW_PYTHON, "no version"));
	doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, stub ?
	    "brew install python, then /opt/homebrew/bin/python3 -m pip install mlx (or "
	    "xcode-select --install for Apple's Python 3.9); --python PATH names another" :
	    "install Python and mlx on this host, or name the jobs' Python with --python PATH",
	    "no Python for the jobs: %s", b.data);
	buf_free(&b);
}

/*
 * Python and mlx as the jobs see them (the Python of --python, else the
 * host's python3 unless macOS's stub, else Homebrew's): a host without a
 * Python is an error; one whose Python has no mlx is an error when other
 * hosts have it, else a warning (nothing to compare); versions of mlx are
 * compared only between the hosts where it was found.
 */
void
doctor_chk_software(const struct doctor_input *in, struct doctor_report *r)
{
	const char **py = xcalloc(in->n + 1, sizeof(*py)), **mx = xcalloc(in->n + 1, sizeof(*mx));
	const struct jc_sw **sws = xcalloc(in->n + 1, sizeof(*sws));
	size_t *hs = xcalloc(in->n + 1, sizeof(*hs)), *ms = xcalloc(in->n + 1, sizeof(*ms));
	size_t nh = 0, nm = 0;
	struct jc_buf bp = { 0 }, bm = { 0 };
	bool py_differ = false, mx_differ = false;
	const char *want;

	for (size_t i = 0; i < in->n; i++) {
		const struct jc_sw *sw;

		if (!doctor_probed(&in->hosts[i]) || (sw = sw_of(in, r, i, "Python and MLX")) == NULL)
			continue;
		if (sw->python == NULL) {
			no_python(r, i, sw);
			continue;
		}
		if (sw->mlx == JC_UNKNOWN) {
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
			    "MLX version unknown (%s, Python %s, cannot read package metadata)",
			    py_name(sw), sw->python);
			continue;
		}
		sws[i] = sw;
		hs[nh++] = i;
		py[i] = sw->python;
		py_differ |= nh > 1 && strcmp(py[hs[0]], py[i]) != 0;
		buf_printf(&bp, "%s%s %s", bp.len ? ", " : "", in->hosts[i].name, py[i]);
		if (sw->mlx != JC_YES)
			continue;
		mx[i] = sw->mlx_version;
		ms[nm++] = i;
		mx_differ |= nm > 1 && strcmp(mx[ms[0]], mx[i]) != 0;
		buf_printf(&bm, "%s%s %s", bm.len ? ", " : "", in->hosts[i].name, mx[i]);
	}
	want = most_common(mx, in->n);
	for (size_t k = 0; k < nh; k++) {
		const struct jc_sw *sw = sws[hs[k]];
		char *fix;

		if (sw->mlx == JC_YES)
			continue;
		if (in->hosts[hs[k]].os == JC_OS_MACOS && strcmp(py_name(sw), "/usr/bin/python3") == 0)
			/* Apple's: it sees neither Homebrew's packages nor a venv's */
			fix = xasprintf("install mlx%s%s in the Python the jobs should run "
			    "(/opt/homebrew/bin/python3 -m pip install mlx%s%s after brew install "
			    "python) and name it with --python /opt/homebrew/bin/python3",
			    want ? "==" : "", want ? want : "", want ? "==" : "", want ? want : "");
		else
			fix = xasprintf("%s -m pip install mlx%s%s, or name a Python that has it "
			    "with --python PATH", py_name(sw), want ? "==" : "", want ? want : "");
		if (want != NULL)
			doctor_add(r, DOCTOR_ERROR, (long)hs[k], NULL, 0, fix,
			    "no mlx in this Python (%s, Python %s), where the other hosts' jobs "
			    "import mlx %s", py_name(sw), sw->python, want);
		else
			doctor_add(r, DOCTOR_WARNING, (long)hs[k], NULL, 0, fix,
			    "no mlx in this Python (%s, Python %s): an MLX job fails here with "
			    "\"No module named 'mlx'\"", py_name(sw), sw->python);
		free(fix);
	}
	if (mx_differ) {
		char *fix = xasprintf("python3 -m pip install mlx==%s (on the hosts with another "
		    "version)", want);

		doctor_add(r, DOCTOR_ERROR, -1, ms, nm, fix, "MLX differs between hosts: %s",
		    bm.data);
		free(fix);
	}
	if (py_differ)
		doctor_add(r, DOCTOR_WARNING, -1, hs, nh,
		    "install the same Python on every host (mlx.launch runs the same script "
		    "everywhere)", "Python differs between hosts: %s", bp.data);
	doctor_mlx_known_bugs(in, r);
	buf_free(&bp);
	buf_free(&bm);
	free(py);
	free(mx);
	free(sws);
	free(hs);
	free(ms);
}

/* The value of NAME in an env list ("NAME=VALUE"), or NULL. */
static const char *
env_get(const struct jc_strv *env, const char *name, size_t nl)
{
	for (size_t k = 0; k < env->n; k++)
		if (strncmp(env->v[k], name, nl) == 0 && env->v[k][nl] == '=')
			return env->v[k] + nl + 1;
	return NULL;
}

void
doctor_chk_login_env(const struct doctor_input *in, struct doctor_report *r)
{
	const struct jc_sw **sws = xcalloc(in->n + 1, sizeof(*sws));
	struct jc_strv names = { 0 };
	size_t *hs = xcalloc(in->n + 1, sizeof(*hs)), nh = 0;

	for (size_t i = 0; i < in->n; i++) {
		const struct jc_sw *sw;

		if (!doctor_probed(&in->hosts[i]) || (sw = sw_of(in, r, i, "environment")) == NULL)
			continue;
		if (!sw->env_known) {
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
			    "environment unknown (env did not run)");
			continue;
		}
		sws[i] = sw;
		hs[nh++] = i;
		for (size_t k = 0; k < sw->env.n; k++) {
			size_t nl = strcspn(sw->env.v[k], "=");
			bool seen = false;

			for (size_t x = 0; x < names.n && !seen; x++)
				seen = strlen(names.v[x]) == nl &&
				    strncmp(names.v[x], sw->env.v[k], nl) == 0;
			if (!seen)
				strv_push_owned(&names, xstrndup(sw->env.v[k], nl));
		}
	}
	for (size_t x = 0; x < names.n; x++) {
		const char *name = names.v[x], *first = NULL;
		size_t nl = strlen(name);
		struct jc_buf b = { 0 };
		bool differ = false;
		char *fix;

		for (size_t k = 0; k < nh; k++) {
			const char *v = env_get(&sws[hs[k]]->env, name, nl);

			if (k == 0)
				first = v;
			else if ((v == NULL) != (first == NULL) || (v && strcmp(v, first) != 0))
				differ = true;
			buf_printf(&b, "%s%s %s%s%s", k ? ", " : "", in->hosts[hs[k]].name,
			    v ? "\"" : "", v ? v : "(unset)", v ? "\"" : "");
		}
		if (differ) {
			fix = xasprintf("set %s to one value in every host's shell startup file "
			    "(~/.zshenv on macOS), or remove it everywhere", name);
			doctor_add(r, DOCTOR_WARNING, -1, hs, nh, fix,
			    "%s differs between hosts (commands started over SSH see it): %s",
			    name, b.data);
			free(fix);
		}
		buf_free(&b);
	}
	strv_free(&names);
	free(sws);
	free(hs);
}

void
doctor_chk_sleep(const struct doctor_input *in, struct doctor_report *r)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct jc_sw *sw;

		if (!doctor_probed(&in->hosts[i]) || !(platform_caps(&in->hosts[i]) & JC_PLAT_POWER_FW) ||
		    (sw = sw_of(in, r, i, "sleep setting")) == NULL)
			continue;
		if (sw->sleep < 0)
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL, "sleep setting unknown: %s",
			    why_of(sw, SW_PMSET, "pmset -g not captured"));
		else if (sw->sleep > 0)
			doctor_add(r, DOCTOR_WARNING, (long)i, NULL, 0, "sudo pmset -a sleep 0",
			    "the system sleeps after %ld minute%s idle (pmset sleep %ld): a sleeping "
			    "host drops out of a job", sw->sleep, sw->sleep == 1 ? "" : "s", sw->sleep);
	}
}

/* The firewall of sw lets path (or a program of the same name, "jaccl-config") accept. */
static bool
fw_allows(const struct jc_sw *sw, const char *path, const char *name)
{
	for (size_t k = 0; k < sw->fw_allowed.n; k++) {
		const char *a = sw->fw_allowed.v[k], *base = strrchr(a, '/');

		if ((path != NULL && strcmp(a, path) == 0) ||
		    (name != NULL && strcmp(base ? base + 1 : a, name) == 0))
			return true;
	}
	return false;
}

#define FW_TOOL "/usr/libexec/ApplicationFirewall/socketfilterfw"

/* Append to fix the two commands that let path accept connections. */
static void
fw_allow_cmds(struct jc_buf *fix, const char *path)
{
	buf_printf(fix, "%ssudo " FW_TOOL " --add %s && sudo " FW_TOOL " --unblockapp %s",
	    fix->len ? "; " : "", path, path);
}

/*
 * The firewall is on (State = 1): a program it has not allowed waits for a
 * click on the Mac's screen before it may accept a connection. verify's
 * ranks (jaccl-config, at its path on this host) and the jobs' Python
 * must be allowed; a host where both are is fine.
 */
static void
firewall_on(struct doctor_report *r, size_t i, const struct jc_sw *sw)
{
	struct jc_buf fix = { 0 }, what = { 0 };
	const char *jc = sw->jc_path != NULL ? sw->jc_path : "/opt/homebrew/bin/jaccl-config";
	bool listed = sw->fw_listed;

	/* the program at its path when it is known, else one of its name */
	if (!fw_allows(sw, sw->jc_path, sw->jc_path ? NULL : "jaccl-config")) {
		fw_allow_cmds(&fix, jc);
		buf_printf(&what, "jaccl-config%s%s%s (verify's ranks)", sw->jc_path ? " at " : "",
		    sw->jc_path ? sw->jc_path : "", sw->jc_path || !listed ? "" :
		    ", not found on this host");
	}
	if (sw->python_path != NULL && !fw_allows(sw, sw->python_path, NULL)) {
		fw_allow_cmds(&fix, sw->python_path);
		buf_printf(&what, "%s%s (the jobs' Python)", what.len ? ", " : "", sw->python_path);
	} else if (sw->python_path == NULL && !listed) {
		/* a bundle of an older doctor: neither is known */
		buf_printf(&fix, "; sudo " FW_TOOL " --add \"$(command -v python3)\"");
		buf_puts(&what, ", python3 (the jobs' Python)");
	}
	if (what.len > 0)
		doctor_add(r, DOCTOR_WARNING, (long)i, NULL, 0, fix.data,
		    "the application firewall is on (State = 1): incoming connections to a "
		    "program it has not allowed (%s) wait for a click on this Mac", what.data);
	buf_free(&fix);
	buf_free(&what);
}

void
doctor_chk_firewall(const struct doctor_input *in, struct doctor_report *r)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct jc_sw *sw;

		if (!doctor_probed(&in->hosts[i]) || !(platform_caps(&in->hosts[i]) & JC_PLAT_POWER_FW) ||
		    (sw = sw_of(in, r, i, "application firewall")) == NULL)
			continue;
		if (sw->fw_state < 0)
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
			    "application firewall unknown: %s",
			    why_of(sw, SW_FIREWALL, "socketfilterfw not captured"));
		else if (sw->fw_state == 2)
			doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0,
			    "sudo /usr/libexec/ApplicationFirewall/socketfilterfw --setblockall off",
			    "the application firewall blocks all incoming connections (State = 2): "
			    "the other ranks cannot reach the coordinator or ring ports here");
		else if (sw->fw_state == 1)
			firewall_on(r, i, sw);
	}
}
