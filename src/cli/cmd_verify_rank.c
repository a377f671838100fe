/* SPDX-License-Identifier: MIT */
/*
 * The verify-rank command: one rank of a verification, configured exactly
 * as a JACCL job is (the environment mlx.launch sets). It builds the group
 * over the chosen fabric and side channel, runs the measurements, and rank
 * 0 prints the report (human or --json); every rank exits non-zero when a
 * link is down or slow or a result is wrong. JACCL_VERIFY_TRACE=FILE (a
 * test hook) appends each rank's events to FILE: "rank R: started", "up"
 * (group connected), "link K A-B start/stream/done/failed", "all links
 * start", "allreduce start", "finished".
 */
#include "config.h"

#include <fcntl.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "rt_config.h"
#include "rt_group.h"
#include "rt_sc.h"
#include "verify_rank.h"

static void
log_attempt(const char *msg)
{
	jc_info(NULL, "%s", msg);
}

int
cmd_verify_rank(struct jc_opts *o)
{
	struct rt_config c = { 0 };
	struct rt_verify_opts vo;
	struct jc_err err = { 0 };
	struct rt_sc *sc = NULL;
	struct rt_group *g = NULL;
	const struct rt_fabric_ops *fab;
	json_t *rep = NULL;
	enum rt_kind kind;
	char who[32] = "rank ?";
	double timeout = o->timeout > 0 ? o->timeout : 30;
	int wires, rc = JC_EXIT_FAIL;

	/* rank 0's report is the only document: no error document on stdout */
	o->json_printed = true;
	rt_verify_defaults(&vo);
	if (o->min_bw != NULL && rt_parse_rate(o->min_bw, &vo.min_bw) < 0)
		return cli_usage_error(o->cmd, "argument --min-bw: invalid rate: '%s' "
		    "(examples: 50Gb/s, 6GB/s, 6.25GB/s)", o->min_bw);
	vo.side_channel = o->side_channel ? o->side_channel : "tcp";
	if (getenv("JACCL_VERIFY_TRACE") != NULL && *getenv("JACCL_VERIFY_TRACE") != '\0')
		vo.trace_fd = open(getenv("JACCL_VERIFY_TRACE"),
		    O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	rt_sc_tcp_log = log_attempt;
	if (rt_config_from_env(&c, &err) < 0)
		goto fail;
	snprintf(who, sizeof(who), "rank %d", c.rank);
	rt_verify_event(&vo, c.rank, "started");
	if (rt_config_select(&c, rt_sc_needs_coordinator(o->side_channel), &kind,
	    &wires, &err) < 0)
		goto fail;
	jc_info(who, "%d ranks, %s group with %d wire(s)", c.size,
	    kind == RT_MESH ? "mesh" : "ring", wires);
	/*
	 * The side channel outlives any fabric wait, so a failure can be
	 * reported: a peer may stream on a cable for link_seconds (a sender on
	 * a dead cable sees its sends complete, as on UC) before it fails.
	 */
	if (rt_sc_open(&sc, o->side_channel, c.coordinator, c.rank, c.size,
	    2 * timeout + 5 + vo.link_seconds, &err) < 0)
		goto fail;
	jc_info(who, "side channel %s open", vo.side_channel);
	if (o->fabric != NULL) {
		vo.fabric = o->fabric;
	} else {
		/* verbs when every rank has the library and its devices, else tcp */
		struct rt_group *probe;
		unsigned char mine, *all = xcalloc((size_t)c.size, 1);
		bool every = true;

		rt_group_new(&probe, &c, kind, wires, timeout);
		mine = rt_fabric_verbs_available(probe);
		rt_group_close(probe);
		if (rt_sc_all_gather(sc, &mine, 1, all, &err) < 0) {
			free(all);
			goto fail;
		}
		for (int r = 0; r < c.size; r++)
			every &= all[r] != 0;
		free(all);
		vo.fabric = every ? "verbs" : "tcp";
		jc_info(who, "fabric %s (verbs %s here)", vo.fabric,
		    mine ? "available" : "not available");
	}
	fab = rt_fabric_find(vo.fabric);
	if (rt_group_open(&g, &c, kind, wires, fab, sc, timeout, &err) < 0)
		goto fail;
	jc_info(who, "group connected");
	rt_verify_event(&vo, c.rank, "up");
	if (rt_verify_run(g, &c, &vo, &rep, &err) < 0)
		goto fail;
	rc = json_is_true(json_object_get(rep, "ok")) ? JC_EXIT_OK : JC_EXIT_FAIL;	/* verify reads 1 */
	if (c.rank == 0) {
		if (o->json) {
			json_object_set_new(rep, "code", json_string(cli_exit_code(rc)));
			out_json(rep);
		} else {
			rt_verify_print(stdout, rep);
		}
		out_flush();
	} else if (jc_verbosity > 0) {
		rt_verify_print(stderr, rep);
	}
	rt_verify_event(&vo, c.rank, "finished");
	goto out;
fail:
	jc_error(who, "%s", err.msg);
out:
	json_decref(rep);
	rt_group_close(g);
	rt_sc_close(sc);
	rt_config_clear(&c);
	if (vo.trace_fd >= 0)
		close(vo.trace_fd);
	return rc;
}
