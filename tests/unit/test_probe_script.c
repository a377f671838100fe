/* SPDX-License-Identifier: MIT */
/*
 * Discovery's and doctor's network paths on the scripted transport, without
 * hosts: a probe whose script output is made from a saved bundle must give
 * the same inventory as replaying that bundle; unreachable hosts, a hang,
 * a session lost mid-output, garbage, a frame cut short and output over
 * the cap each end as that host's error, never the others'. The doctor's
 * coordinator probe is judged from what bash / nc print on a host.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "../lib/transport-script.h"
#include "bundle.h"
#include "doctor.h"
#include "hosts.h"
#include "inventory.h"
#include "probe.h"

#define SCRIPT "exec /bin/sh -c *"

static char *
bundle_dir(const char *name)
{
	const char *top = getenv("top_srcdir");

	return xasprintf("%s/tests/doctor/bundles/%s", top ? top : "..", name);
}

/* What the probe script prints for host, from its bundle (framed with @TOKEN@). */
static char *
frames(const char *dir, const char *host)
{
	struct jc_raw raw = { 0 };
	struct jc_err err = { 0 };
	struct jc_buf b = { 0 };

	if (bundle_load_host(dir, host, &raw, &err) != 0) {
		diag("%s", err.msg);
		abort();
	}
	buf_puts(&b, "login chatter\n");
	for (size_t i = 0; i < raw.n; i++) {
		buf_printf(&b, "@TOKEN@ B %s\n", raw.outs[i].name);
		buf_append(&b, raw.outs[i].data, raw.outs[i].len);
		buf_printf(&b, "\n@TOKEN@ E %s %d\n", raw.outs[i].name,
		    raw.outs[i].status < 0 ? 0 : raw.outs[i].status);
	}
	raw_clear(&raw);
	return buf_steal(&b);
}

static char *
inv_text(const struct jc_host *h)
{
	json_t *j = inventory_host_to_json(h);
	char *s = json_dumps(j, JSON_SORT_KEYS);

	json_decref(j);
	return s;
}

struct states {
	enum probe_state st[8];
};

static void
on_progress(void *arg, size_t i, enum probe_state st)
{
	struct states *s = arg;

	if (i < 8)
		s->st[i] = st;
}

static size_t
probe_with(struct jc_transport *t, struct jc_host *hosts, size_t n, size_t cap, struct states *s)
{
	struct probe_opts o = { 0 };

	o.transport = t;
	o.command_timeout = 5;
	o.cap = cap;
	o.progress = on_progress;
	o.arg = s;
	return probe_hosts(hosts, n, &o, NULL);
}

static void
test_same_as_replay(void)
{
	char *dir = bundle_dir("configured");
	struct jc_transport *replay = transport_replay_new(dir), *t = ts_new();
	struct jc_host *a = NULL, *b = NULL;
	struct jc_err err = { 0 };
	struct states sa = { 0 }, sb = { 0 };
	size_t n = 0, m = 0, same = 0;

	if (probe_bundle_hosts(dir, &a, &n, &err) != 0 || probe_bundle_hosts(dir, &b, &m, &err) != 0)
		diag("%s", err.msg);
	for (size_t i = 0; i < m; i++) {
		char *out = frames(dir, b[i].name);

		ts_rule(t, &(struct ts_rule){ .host = b[i].name, .command = SCRIPT, .out = out });
		free(out);
	}
	ok(probe_with(replay, a, n, 0, &sa) == 0 && probe_with(t, b, m, 0, &sb) == 0 && n > 1,
	    "bundle replayed, and probed through the script's output (%zu hosts)", n);
	for (size_t i = 0; i < n && i < m; i++) {
		char *x = inv_text(&a[i]), *y = inv_text(&b[i]);

		same += strcmp(x, y) == 0 && sb.st[i] == PROBE_DONE;
		free(x);
		free(y);
	}
	ok(same == n, "every host's inventory is the same as replayed (%zu of %zu)", same, n);
	hosts_free(a, n);
	hosts_free(b, m);
	transport_free(replay);
	transport_free(t);
	free(dir);
}

/* Host 1 of two has the fault; host 0 answers from the bundle. */
static void
fault_case(const char *name, const struct ts_rule *bad, int unreachable, size_t cap,
    enum probe_state want_st, const char *want_err)
{
	char *dir = bundle_dir("configured");
	struct jc_transport *t = ts_new();
	struct jc_host *h = NULL;
	struct jc_err err = { 0 };
	struct states s = { 0 };
	size_t n = 0, nall = 0;
	char *out;

	probe_bundle_hosts(dir, &h, &nall, &err);
	n = 2;
	if (unreachable)
		ts_unreachable(t, h[1].name, unreachable);
	else
		ts_rule(t, &(struct ts_rule){ .host = h[1].name, .command = SCRIPT, .out = bad->out,
		    .err = bad->err, .status = bad->status, .hang = bad->hang, .delay = bad->delay,
		    .disconnect = bad->disconnect, .cut = bad->cut });
	out = frames(dir, h[0].name);
	ts_rule(t, &(struct ts_rule){ .host = h[0].name, .command = SCRIPT, .out = out });
	free(out);
	ok(probe_with(t, h, n, cap, &s) == 1 && h[0].error == NULL && s.st[0] == PROBE_DONE,
	    "%s: the other host is probed", name);
	ok(h[1].error != NULL && strstr(h[1].error, want_err) != NULL && s.st[1] == want_st &&
	    h[1].reachable == (want_st != PROBE_UNREACHABLE),
	    "%s: '%s'", name, h[1].error ? h[1].error : "(no error)");
	hosts_free(h, nall);
	transport_free(t);
	free(dir);
}

static void
test_probe_faults(void)
{
	char *big = xcalloc(2u << 20, 1);

	memset(big, 'x', (2u << 20) - 1);
	fault_case("unreachable", NULL, TR_ECONNECT, 0, PROBE_UNREACHABLE, "cannot connect");
	fault_case("authentication refused", NULL, TR_EAUTH, 0, PROBE_UNREACHABLE, "cannot connect");
	fault_case("hang", &(struct ts_rule){ .hang = true }, 0, 0, PROBE_FAILED, "did not end");
	fault_case("slower than its bound", &(struct ts_rule){ .delay = 1e6 }, 0, 0, PROBE_FAILED,
	    "did not end");
	fault_case("session lost mid-output", &(struct ts_rule){ .out = "@TOKEN@ B uname.txt\nDarwin\n"
	    "\n@TOKEN@ E uname.txt 0\n@TOKEN@ B ifconfig.txt\nen0: flags", .disconnect = true,
	    .cut = 40 }, 0, 0, PROBE_FAILED, "the session was lost");
	fault_case("garbage", &(struct ts_rule){ .out = "\x01\x02 not a frame\n", .err = "",
	    .status = 0 }, 0, 0, PROBE_FAILED, "the probe script failed: exit status 0");
	fault_case("no shell", &(struct ts_rule){ .err = "sh: 1: exec: /bin/sh: not found\n",
	    .status = 127 }, 0, 0, PROBE_FAILED, "the probe script failed: sh: 1: exec: /bin/sh: not found");
	fault_case("frame cut short", &(struct ts_rule){ .out = "@TOKEN@ B uname.txt\nDarwin\n" },
	    0, 0, PROBE_FAILED, "the output of uname.txt was cut short");
	fault_case("unknown system", &(struct ts_rule){ .out = "@TOKEN@ B uname.txt\nPlan9\n"
	    "\n@TOKEN@ E uname.txt 0\n" }, 0, 0, PROBE_FAILED, "unsupported system: uname -s says 'Plan9'");
	fault_case("a frame repeated", &(struct ts_rule){ .out = "@TOKEN@ B uname.txt\nDarwin\n"
	    "\n@TOKEN@ E uname.txt 0\n@TOKEN@ B uname.txt\nLinux\n\n@TOKEN@ E uname.txt 0\n" },
	    0, 0, PROBE_FAILED, "the probe output has two frames for uname.txt");
	fault_case("over the cap", &(struct ts_rule){ .out = big }, 0, 1u << 20, PROBE_FAILED,
	    "the probe printed more than 1 MiB: refused");
	free(big);
}

#define CMD "exec 2>&1; if [ -x /bin/bash ]; then /bin/bash -c *"

static void
test_coordinator(void)
{
	static const char *const names[] = { "m0", "m1", "m2", "m3", "m4", "m5", "m6" };
	struct jc_transport *t = ts_new();
	struct jc_host h[7];
	struct doctor_coord *c;
	struct doctor_input in = { 0 };
	struct doctor_report *rep;
	char *log;
	bool err_found = false;

	memset(h, 0, sizeof(h));
	for (size_t i = 0; i < 7; i++) {
		h[i].name = (char *)names[i];
		h[i].reachable = i != 6;
	}
	ts_rule(t, &(struct ts_rule){ .host = "m0", .command = CMD, .out = "JC-CONNECT-OK\n" });
	ts_rule(t, &(struct ts_rule){ .host = "m1", .command = CMD, .status = 1,
	    .out = "/bin/bash: connect: Connection refused\n"
	    "/bin/bash: line 1: /dev/tcp/10.0.0.1/5000: Connection refused\n" });
	ts_rule(t, &(struct ts_rule){ .host = "m2", .command = CMD, .status = 1,
	    .out = "/bin/bash: connect: No route to host\n"
	    "/bin/bash: line 1: /dev/tcp/10.0.0.1/5000: No route to host\n" });
	ts_rule(t, &(struct ts_rule){ .host = "m3", .command = CMD, .hang = true });
	ts_rule(t, &(struct ts_rule){ .host = "m4", .command = CMD, .status = 127,
	    .out = "sh: 1: nc: not found\n" });
	ts_unreachable(t, "m5", TR_ECHANNEL);
	c = doctor_coord_probe(t, h, 7, "10.0.0.1", 5000, 10);
	ok(c[0].status == DOCTOR_OK && c[0].listening, "something listens: reachable");
	ok(c[1].status == DOCTOR_OK && !c[1].listening && c[1].err_name &&
	    strcmp(c[1].err_name, "ECONNREFUSED") == 0, "refused: reachable (the host answered)");
	is_str(c[1].detail, "/bin/bash: line 1: /dev/tcp/10.0.0.1/5000: Connection refused",
	    "the last line is the detail");
	ok(c[2].status == DOCTOR_ERROR && c[2].err_name && strcmp(c[2].err_name, "EHOSTUNREACH") == 0,
	    "no route to host: unreachable");
	ok(c[3].status == DOCTOR_ERROR && c[3].err_name && strcmp(c[3].err_name, "ETIMEDOUT") == 0 &&
	    c[3].detail && strcmp(c[3].detail, "no answer within 15 s") == 0,
	    "hang: timed out (the host's bound, 10 s, and the session's margin)");
	ok(c[4].status == DOCTOR_UNKNOWN, "neither bash nor nc: not tested");
	ok(c[5].status == DOCTOR_UNKNOWN && c[5].detail && strstr(c[5].detail, "cannot connect"),
	    "session refused: not tested");
	log = ts_log(t, "m6");
	ok(c[6].status == DOCTOR_UNKNOWN && c[6].detail == NULL && *log == '\0',
	    "a host that was not probed is not contacted");
	free(log);
	log = ts_log(t, "m2");
	ok(strstr(log, "connect 10.0.0.1 5000 & p=$!") != NULL &&
	    strstr(log, "nc -z -v -w 10 10.0.0.1 5000") != NULL, "the command names the address and port");
	ok(strstr(log, "jc-watchdog 10 $p </dev/null >/dev/null 2>&1 &") != NULL,
	    "the host bounds the connect by the timeout, the watchdog's output on /dev/null");
	free(log);
	in.hosts = h;
	in.n = 7;
	in.coordinator = "10.0.0.1:5000";
	in.coord = c;
	rep = doctor_run(&in);
	for (size_t k = 0; k < rep->n; k++)
		if (strcmp(rep->v[k].check, "coordinator") == 0 && rep->v[k].status == DOCTOR_ERROR &&
		    rep->v[k].host == 2)
			err_found = true;
	ok(err_found && !doctor_passed(rep), "doctor reports m2's coordinator as an error");
	doctor_report_free(rep);
	doctor_coord_free(c, 7);
	transport_free(t);

	/* the host's watchdog ended the connect: its own answer, within the session */
	t = ts_new();
	ts_rule(t, &(struct ts_rule){ .host = "m0", .command = CMD,
	    .out = "connect: timed out after 3 s\n" });
	c = doctor_coord_probe(t, h, 1, "10.0.0.1", 5000, 3);
	ok(c[0].status == DOCTOR_ERROR && c[0].err_name && strcmp(c[0].err_name, "ETIMEDOUT") == 0 &&
	    c[0].detail && strcmp(c[0].detail, "connect: timed out after 3 s") == 0,
	    "the host's bound: timed out, in the host's words");
	doctor_coord_free(c, 1);
	transport_free(t);
}

/*
 * Each host's script gets a frame token of its own (issue 21, lead of case
 * 8): what one host prints (its name, seen by another as a cable peer's)
 * cannot forge frames in another's output. Each script prints its token
 * back as its uname.txt (a token is 32 characters: src/probe.c TOKEN_LEN).
 */
static void
test_token_per_host(void)
{
	static const char *const names[] = { "t0", "t1", "t2" };
	struct jc_transport *t = ts_new();
	struct jc_host h[3];
	struct jc_raw raws[3] = { { 0 } };
	struct probe_opts o = { 0 };
	const struct jc_raw_out *u[3];
	bool distinct, framed = true;

	memset(h, 0, sizeof(h));
	for (size_t i = 0; i < 3; i++) {
		h[i].name = xstrdup(names[i]);
		ts_rule(t, &(struct ts_rule){ .host = names[i], .command = SCRIPT,
		    .out = "@TOKEN@ B uname.txt\n@TOKEN@\n@TOKEN@ E uname.txt 0\n" });
	}
	o.transport = t;
	o.command_timeout = 5;
	probe_hosts(h, 3, &o, raws);
	for (size_t i = 0; i < 3; i++) {
		u[i] = raw_get(&raws[i], "uname.txt");
		framed = framed && u[i] != NULL && u[i]->len == 32 &&
		    strncmp(u[i]->data, "jc", 2) == 0;
	}
	distinct = framed && memcmp(u[0]->data, u[1]->data, 32) != 0 &&
	    memcmp(u[0]->data, u[2]->data, 32) != 0 &&
	    memcmp(u[1]->data, u[2]->data, 32) != 0;
	ok(framed, "each host's frames split with the token its script read");
	ok(distinct, "three hosts, three frame tokens");
	for (size_t i = 0; i < 3; i++) {
		raw_clear(&raws[i]);
		jc_host_clear(&h[i]);
	}
	transport_free(t);
}

int
main(void)
{
	(void)plan;
	(void)skip_all;
	(void)is_int;
	test_same_as_replay();
	test_probe_faults();
	test_coordinator();
	test_token_per_host();
	return done_testing();
}
