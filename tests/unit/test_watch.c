/* SPDX-License-Identifier: MIT */
/*
 * Cable snapshots and their differences: each case builds two inventories
 * the way discovery fills them (a cable pulled, moved to another port,
 * down to 40 Gb/s, an address lost, an RDMA port down) and checks the one
 * event that the change must give, and that nothing else is reported.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "../graph/inv.h"
#include "graph.h"
#include "watch.h"

struct look {
	struct jc_host *h;
	size_t n;
	struct graph *g;
	struct watch_snapshot s;
};

static void
look_take(struct look *l)
{
	struct jc_err err = { 0 };

	if (graph_build(l->h, l->n, &l->g, &err) != 0) {
		fprintf(stderr, "graph_build: %s\n", err.msg);
		exit(1);
	}
	watch_snapshot_build(l->g, &l->s);
}

static void
look_free(struct look *l)
{
	watch_snapshot_free(&l->s);
	graph_free(l->g);
	inv_free(l->h, l->n);
}

/* A 3-host ring at 80 Gb/s with the cable addresses mlx would give. */
static struct look
ring3(void)
{
	struct look l = { .n = 3 };

	l.h = inv_new(3, NULL);
	inv_cable(&l.h[0], "en2", &l.h[1], "en2", 80);
	inv_cable(&l.h[1], "en3", &l.h[2], "en2", 80);
	inv_cable(&l.h[2], "en3", &l.h[0], "en3", 80);
	inv_iface(&l.h[0], "en2", "192.168.0.1", 30)->carrier = JC_YES;
	inv_iface(&l.h[1], "en2", "192.168.0.2", 30)->carrier = JC_YES;
	return l;
}

/* Diff two looks; the events' texts joined by '|'. */
static char *
diff_text(struct look *a, struct look *b, size_t *nev)
{
	struct watch_event *ev;
	struct jc_buf out = { 0 };

	watch_diff(&a->s, &b->s, &ev, nev);
	for (size_t i = 0; i < *nev; i++) {
		char *t = watch_event_text(&ev[i]);

		buf_printf(&out, "%s%s", i ? "|" : "", t);
		free(t);
	}
	free(ev);
	return out.len ? buf_steal(&out) : xstrdup("");
}

static void
check_case(const char *name, void (*change)(struct look *), const char *want)
{
	struct look a = ring3(), b = ring3();
	size_t n;
	char *got;

	look_take(&a);
	change(&b);
	look_take(&b);
	got = diff_text(&a, &b, &n);
	is_str(got, want, name);
	free(got);
	look_free(&a);
	look_free(&b);
}

static void
nothing(struct look *l)
{
	(void)l;
}

static void
pull_23(struct look *l)
{
	struct jc_port *a = inv_port(&l->h[1], "en3", NULL), *b = inv_port(&l->h[2], "en2", NULL);

	free(a->peer_id);
	free(b->peer_id);
	a->peer_id = b->peer_id = NULL;
}

static void
move_to_en4(struct look *l)
{
	pull_23(l);
	inv_cable(&l->h[1], "en4", &l->h[2], "en2", 80);
}

static void
slow_12(struct look *l)
{
	inv_port(&l->h[0], "en2", NULL)->link_gbps = 40;
	inv_port(&l->h[1], "en2", NULL)->link_gbps = 40;
}

static void
lose_address(struct look *l)
{
	struct jc_iface *f = &l->h[1].ifaces[l->h[1].nifaces - 1];

	strv_free_array(f->inet, f->ninet);
	free(f->prefix);
	f->inet = NULL;
	f->prefix = NULL;
	f->ninet = 0;
}

static void
rdma_down(struct look *l)
{
	inv_rdma(&l->h[2], "en3", JC_PORT_DOWN);
}

static void
diff_cases(void)
{
	check_case("same cabling: no event", nothing, "");
	check_case("a cable pulled", pull_23, "unplugged: mac2 en3 <-> mac3 en2");
	check_case("a cable moved to another port",
	    move_to_en4, "moved: mac2 en3 <-> mac3 en2 is now mac2 en4 <-> mac3 en2");
	check_case("a cable down to 40 Gb/s", slow_12, "speed: mac1 en2 <-> mac2 en2 80 -> 40 Gb/s");
	check_case("an address lost",
	    lose_address, "address lost: mac2 en2 had 192.168.0.2 (cable mac1 en2 <-> mac2 en2)");
	check_case("an RDMA port down",
	    rdma_down, "rdma: mac3 en3 PORT_ACTIVE -> PORT_DOWN (cable mac1 en3 <-> mac3 en3)");
}

static void
plug_and_json(void)
{
	struct look a = ring3(), b = ring3();
	struct watch_event *ev;
	size_t n;
	json_t *j;

	pull_23(&a);
	look_take(&a);
	look_take(&b);
	watch_diff(&a.s, &b.s, &ev, &n);
	is_int((int)n, 1, "a cable plugged in: one event");
	j = n ? watch_event_json(&ev[0]) : json_object();
	is_str(json_string_value(json_object_get(j, "event")), "plugged", "json: event name");
	ok(json_is_null(json_object_get(j, "before")), "json: nothing before a plug");
	is_int((int)json_integer_value(json_object_get(json_object_get(j, "after"), "gbps")), 80,
	    "json: the new cable's rate");
	is_str(json_string_value(json_object_get(j, "text")), "plugged: mac2 en3 <-> mac3 en2 (80 Gb/s)",
	    "json: the same text as the terminal line");
	json_decref(j);
	free(ev);
	look_free(&a);
	look_free(&b);
}

/* One end of the 2-3 cable already moved to mac2 en4, the other end not seen yet. */
static void
half_move(struct look *l)
{
	struct jc_port *a = inv_port(&l->h[1], "en3", NULL);

	free(a->peer_id);
	a->peer_id = NULL;
	inv_cable(&l->h[1], "en4", &l->h[2], "en2", 80);
	/* mac3 en2 still names mac2 en3, which no longer names it */
	free(inv_port(&l->h[2], "en2", NULL)->peer_id);
	inv_port(&l->h[2], "en2", NULL)->peer_id = xstrdup(inv_port(&l->h[1], "en3", NULL)->id);
}

static char *
key_of(void (*change)(struct look *))
{
	struct look l = ring3();
	char *k;

	change(&l);
	look_take(&l);
	k = watch_unsettled_key(l.g);
	look_free(&l);
	return k;
}

static void
settle_cases(void)
{
	char *k;

	k = key_of(nothing);
	ok(k == NULL, "every cable seen from both ends: settled");
	free(k);
	k = key_of(pull_23);
	ok(k == NULL, "a cable pulled, seen from both ends: settled");
	free(k);
	k = key_of(move_to_en4);
	ok(k == NULL, "a move seen from both ends: settled");
	free(k);
	k = key_of(half_move);
	ok(k != NULL && strstr(k, "mac3:en2>") != NULL,
	    "a move seen from one end only: not settled, naming mac3 en2 (%s)", k ? k : "NULL");
	free(k);
}

static void
snapshot_out(void)
{
	struct look l = ring3();
	json_t *a;
	char *t;

	inv_port(&l.h[0], "en3", NULL)->link_gbps = 0;
	inv_port(&l.h[2], "en3", NULL)->link_gbps = 0;
	look_take(&l);
	a = watch_snapshot_json(&l.s);
	is_int((int)json_array_size(a), 3, "snapshot JSON: one object per cable");
	json_decref(a);
	t = watch_snapshot_text(&l.s);
	ok(strstr(t, "mac1 en2 <-> mac2 en2") != NULL && strstr(t, " 80 Gb/s") != NULL,
	    "snapshot text: a line per cable with its rate");
	ok(strstr(t, "? Gb/s") != NULL, "snapshot text: an unknown rate is '?', not 0");
	ok(strstr(t, "en2:up PORT_ACTIVE 192.168.0.1") != NULL,
	    "snapshot text: carrier, RDMA and address of an end");
	if (strstr(t, "en2:up PORT_ACTIVE 192.168.0.1") == NULL)
		diag("%s", t);
	free(t);
	look_free(&l);
}

int
main(void)
{
	diff_cases();
	plug_and_json();
	settle_cases();
	snapshot_out();
	return done_testing();
}
