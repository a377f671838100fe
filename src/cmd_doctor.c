/* SPDX-License-Identifier: MIT */
/*
 * The doctor command: probe every host (over SSH, or from a saved bundle),
 * build the cable graph, test from every host over SSH that rank 0's
 * coordinator address and port can be reached, run the checks of doctor.c
 * and print the findings grouped by host (or, with --json, one JSON report).
 * Exits 0 when no check is an error, 1 otherwise.
 *
 * The coordinator probe: nothing listens on the coordinator port while no
 * job runs, so "connection refused" counts as reachable (the host answered,
 * the path works and the port is free); an accepted connection is reachable
 * too, with a warning that something already holds the port. Unreachable
 * means a timeout, "no route to host", "network is unreachable" or a
 * permission error. The connection is made by /bin/bash's /dev/tcp on each
 * host (nc -z where bash is missing), bounded by the command timeout.
 */
#include "config.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cabling.h"
#include "cmd.h"
#include "doctor.h"
#include "hostfile.h"
#include "hosts.h"
#include "probe.h"

#define COORD_MARK "JC-CONNECT-OK"

static int
load_hosts(struct jc_opts *o, struct jc_hostfile *hf, struct jc_host **hosts, size_t *n)
{
	struct jc_err err = { 0 };

	if (hf != NULL) {
		*hosts = xcalloc(hf->nhosts ? hf->nhosts : 1, sizeof(**hosts));
		for (size_t i = 0; i < hf->nhosts; i++) {
			if (hosts_parse_target(hf->hosts[i].ssh, &(*hosts)[i], &err) != 0) {
				jc_error(NULL, "%s: %s", o->hostfile, err.msg);
				hosts_free(*hosts, i);
				*hosts = NULL;
				return JC_EXIT_FAIL;
			}
		}
		*n = hf->nhosts;
		return 0;
	}
	if (o->from != NULL && !o->hosts_given) {
		if (probe_bundle_hosts(o->from, hosts, n, &err) != 0) {
			jc_error(NULL, "%s", err.msg);
			return JC_EXIT_FAIL;
		}
		return 0;
	}
	if (hosts_from_list(o->hosts, hosts, n, &err) != 0)
		return cli_usage_error(o->cmd, "%s", err.msg);
	return 0;
}

/* --- coordinator probe --- */

struct coord_job {
	const struct jc_host *h;
	const struct tr_opts *tr;
	const char *cmd;
	double timeout;
	struct doctor_coord *out;
};

static const struct {
	int e;
	const char *name;
	const char *text;	/* as strerror words appear in bash / nc messages */
} coord_errs[] = {
	{ ECONNREFUSED, "ECONNREFUSED", "refused" },
	{ ETIMEDOUT, "ETIMEDOUT", "timed out" },
	{ EHOSTUNREACH, "EHOSTUNREACH", "No route to host" },
	{ ENETUNREACH, "ENETUNREACH", "Network is unreachable" },
	{ EHOSTDOWN, "EHOSTDOWN", "Host is down" },
	{ EADDRNOTAVAIL, "EADDRNOTAVAIL", "assign requested address" },
	{ EPERM, "EPERM", "not permitted" },
	{ EACCES, "EACCES", "Permission denied" },
};

/* The remote output's last line, trimmed (what bash or nc said). */
static char *
last_line(const char *s)
{
	const char *e = s + strlen(s), *b;

	while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' '))
		e--;
	char *line, *p;

	b = e;
	while (b > s && b[-1] != '\n')
		b--;
	line = xstrndup(b, (size_t)(e - b));
	p = hostfile_printable(line, 200);
	free(line);
	return p;
}

static void *
coord_thread(void *arg)
{
	struct coord_job *j = arg;
	struct tr_session *s = NULL;
	struct tr_result res = { 0 };
	struct jc_err err = { 0 };
	int r;

	if (tr_connect(j->h->name, j->h->user, j->h->port, j->tr, &s, &err) != 0) {
		j->out->status = DOCTOR_UNKNOWN;
		j->out->detail = xstrdup(err.msg);
		return NULL;
	}
	r = tr_run(s, j->cmd, NULL, 0, j->timeout, 64 * 1024, &res, &err);
	if (r == TR_ETIMEOUT) {
		j->out->status = DOCTOR_ERROR;
		j->out->err_name = "ETIMEDOUT";
		j->out->detail = xasprintf("no answer within %.0f s", j->timeout);
	} else if (r != 0) {
		j->out->status = DOCTOR_UNKNOWN;
		j->out->detail = xstrdup(err.msg);
	} else if (strstr(res.out, COORD_MARK) != NULL) {
		j->out->status = DOCTOR_OK;
		j->out->listening = true;
	} else {
		char *all = xasprintf("%s%s", res.out, res.err);
		char *line = last_line(all);

		j->out->status = DOCTOR_ERROR;
		j->out->detail = line;
		for (size_t k = 0; k < JC_ARRAY_LEN(coord_errs); k++)
			if (strstr(all, coord_errs[k].text) != NULL) {
				j->out->err_name = coord_errs[k].name;
				break;
			}
		if (j->out->err_name != NULL && strcmp(j->out->err_name, "ECONNREFUSED") == 0) {
			j->out->status = DOCTOR_OK;	/* answered: reachable */
		} else if (j->out->err_name == NULL && res.status == 127) {
			j->out->status = DOCTOR_UNKNOWN;
		}
		free(all);
	}
	tr_result_clear(&res);
	tr_close(s);
	return NULL;
}

/*
 * Test addr:port from every probed host. Returns n results (free each
 * detail), statuses UNKNOWN for hosts that were not probed.
 */
static struct doctor_coord *
coord_probe(struct jc_opts *o, const struct jc_host *hosts, size_t n, const char *addr,
    long port)
{
	struct doctor_coord *res = xcalloc(n ? n : 1, sizeof(*res));
	struct coord_job *jobs = xcalloc(n ? n : 1, sizeof(*jobs));
	pthread_t *th = xcalloc(n ? n : 1, sizeof(*th));
	bool *started = xcalloc(n ? n : 1, sizeof(*started));
	struct tr_opts tr = { 0 };
	char *cmd;
	double timeout = o->command_timeout > 0 && o->command_timeout < 10 ?
	    o->command_timeout : 10;

	tr.ssh_config = o->ssh_config;
	tr.accept_new = o->accept_new;
	tr.connect_timeout = o->connect_timeout;
	/* addr and port were validated (IPv4 literal / DNS name, number) */
	cmd = xasprintf("exec 2>&1; if [ -x /bin/bash ]; then "
	    "/bin/bash -c 'exec 3<>\"/dev/tcp/$1/$2\"' connect %s %ld && echo " COORD_MARK "; "
	    "else nc -z -v -w %d %s %ld && echo " COORD_MARK "; fi", addr, port,
	    (int)timeout, addr, port);
	for (size_t i = 0; i < n; i++) {
		res[i].status = DOCTOR_UNKNOWN;
		if (!hosts[i].reachable || hosts[i].error != NULL)
			continue;
		jobs[i].h = &hosts[i];
		jobs[i].tr = &tr;
		jobs[i].cmd = cmd;
		jobs[i].timeout = timeout;
		jobs[i].out = &res[i];
		started[i] = pthread_create(&th[i], NULL, coord_thread, &jobs[i]) == 0;
		if (!started[i])
			coord_thread(&jobs[i]);
	}
	for (size_t i = 0; i < n; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	for (size_t i = 0; i < n; i++)
		jc_info(hosts[i].name, "coordinator %s:%ld: %s%s%s", addr, port,
		    doctor_status_name(res[i].status), res[i].detail ? ": " : "",
		    res[i].detail ? res[i].detail : "");
	free(cmd);
	free(jobs);
	free(th);
	free(started);
	return res;
}

/* --- output --- */

static void
print_finding(const struct doctor_finding *f)
{
	printf("  %-7s %s: %s\n", doctor_status_name(f->status), f->check, f->msg);
	if (f->remedy != NULL && f->status != DOCTOR_UNKNOWN)
		printf("          fix: %s\n", f->remedy);
}

static void
print_human(const struct doctor_report *r, const struct jc_host *hosts, size_t n)
{
	static const enum doctor_status order[] = { DOCTOR_ERROR, DOCTOR_WARNING,
		DOCTOR_UNKNOWN };
	bool any = false;

	for (long h = 0; h <= (long)n; h++) {
		long host = h == (long)n ? -1 : h;
		bool head = false;

		for (size_t s = 0; s < JC_ARRAY_LEN(order); s++)
			for (size_t k = 0; k < r->n; k++) {
				const struct doctor_finding *f = &r->v[k];

				if (f->host != host || f->status != order[s])
					continue;
				if (!head)
					printf("%s%s:\n", any ? "\n" : "",
					    host >= 0 ? hosts[host].name : "cluster");
				head = any = true;
				print_finding(f);
			}
	}
	if (any)
		putchar('\n');
	printf("%zu checks: %zu ok, %zu %s, %zu %s, %zu unknown\n", r->nresults,
	    r->count[DOCTOR_OK], r->count[DOCTOR_WARNING],
	    r->count[DOCTOR_WARNING] == 1 ? "warning" : "warnings", r->count[DOCTOR_ERROR],
	    r->count[DOCTOR_ERROR] == 1 ? "error" : "errors", r->count[DOCTOR_UNKNOWN]);
	for (size_t s = 0; s < 4; s++) {
		bool first = true;

		for (size_t c = 0; c < r->nresults; c++) {
			if (r->results[c].status != (enum doctor_status)s)
				continue;
			printf("%s%s", first ? "  " : ", ", r->results[c].check->name);
			first = false;
		}
		if (!first)
			printf(": %s\n", doctor_status_name((enum doctor_status)s));
	}
}

int
cmd_doctor(struct jc_opts *o)
{
	struct jc_hostfile *hf = NULL;
	struct cabling *expect = NULL;
	struct jc_host *hosts = NULL;
	struct jc_raw *raws = NULL;
	struct probe_opts po = { 0 };
	struct jc_err err = { 0 };
	struct graph *g = NULL;
	struct doctor_input in = { 0 };
	struct doctor_report *rep = NULL;
	struct doctor_coord *coord = NULL;
	char *gerr = NULL, *coordinator = NULL;
	const char *addr = NULL;
	size_t n = 0, nraws = 0;
	int rc = JC_EXIT_FAIL, r;

	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if (o->ssh_config != NULL && o->from == NULL && access(o->ssh_config, R_OK) != 0) {
		jc_error(NULL, "cannot read ssh configuration %s: %s", o->ssh_config,
		    strerror(errno));
		return JC_EXIT_FAIL;
	}
	if (o->expect != NULL && cabling_load(o->expect, &expect, &err) != 0) {
		jc_error(NULL, "%s", err.msg);
		return JC_EXIT_FAIL;
	}
	if (o->hostfile != NULL && hostfile_read_mlx(o->hostfile, &hf, &err) != 0) {
		jc_error(NULL, "%s", err.msg);
		goto out;
	}
	if ((r = load_hosts(o, hf, &hosts, &n)) != 0) {
		rc = r;
		goto out;
	}
	if (n == 0) {
		jc_error(NULL, "no host to examine");
		goto out;
	}
	po.tr.ssh_config = o->ssh_config;
	po.tr.accept_new = o->accept_new;
	po.tr.connect_timeout = o->connect_timeout;
	po.command_timeout = o->command_timeout;
	po.from = o->from;
	if (o->from == NULL && tr_global_init() != 0) {
		jc_error(NULL, "cannot initialise libssh");
		goto out;
	}
	raws = xcalloc(n, sizeof(*raws));
	nraws = n;
	probe_hosts(hosts, n, &po, raws);

	if (o->ignore_unreachable) {
		size_t k = 0;

		for (size_t i = 0; i < n; i++) {
			if (!hosts[i].reachable) {
				jc_warn(hosts[i].name, "unreachable, left out: %s", hosts[i].error);
				jc_host_clear(&hosts[i]);
				continue;
			}
			hosts[k++] = hosts[i];
		}
		n = k;
	}
	if (graph_build(hosts, n, &g, &err) != 0)
		gerr = xstrdup(err.msg);

	/* rank 0's coordinator: the hostfile's first address, else its management IP */
	if (hf != NULL && hf->nhosts > 0 && hf->hosts[0].nips > 0)
		addr = hf->hosts[0].ips[0];
	else if (n > 0)
		addr = hosts[0].mgmt_ip;
	if (addr != NULL && hostfile_ip_ok(addr) && jc_plain_word(addr))
		coordinator = xasprintf("%s:%ld", addr, o->starting_port);
	if (o->from != NULL)
		in.coord_skip = "replaying a bundle: nothing to connect from";
	else if (coordinator == NULL)
		in.coord_skip = "rank 0 has no usable address";
	else if (n < 1 || !hosts[0].reachable)
		in.coord_skip = "rank 0 was not probed";
	else
		coord = coord_probe(o, hosts, n, addr, o->starting_port);
	if (o->from == NULL)
		tr_global_cleanup();

	in.hosts = hosts;
	in.n = n;
	in.g = g;
	in.graph_error = gerr;
	in.hf = hf;
	in.backend = o->backend;
	in.expect = expect;
	in.expect_name = o->expect;
	in.coordinator = coordinator;
	in.coord = coord;
	rep = doctor_run(&in);
	rc = doctor_passed(rep) ? JC_EXIT_OK : JC_EXIT_DOCTOR;
	if (o->json) {
		json_t *doc = doctor_report_json(rep, hosts, n);

		json_object_set_new(doc, "code", json_string(cli_exit_code(rc)));
		o->json_printed = true;
		if (coordinator != NULL)
			json_object_set_new(doc, "coordinator", json_string(coordinator));
		else
			json_object_set_new(doc, "coordinator", json_null());
		json_dumpf(doc, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(doc);
	} else {
		print_human(rep, hosts, n);
	}
	if (fflush(stdout) != 0) {
		jc_error(NULL, "cannot write to standard output");
		rc = JC_EXIT_FAIL;
	}
out:
	doctor_report_free(rep);
	for (size_t i = 0; coord && i < n; i++)
		free(coord[i].detail);
	free(coord);
	free(coordinator);
	free(gerr);
	graph_free(g);
	for (size_t i = 0; i < nraws; i++)
		raw_clear(&raws[i]);
	free(raws);
	hosts_free(hosts, n);
	jc_hostfile_free(hf);
	cabling_free(expect);
	return rc;
}
