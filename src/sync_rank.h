/* SPDX-License-Identifier: MIT */
/*
 * One host's part of a sync (the sync-rank command): it says what it holds
 * (hello: its addresses, the listening port, the tree under its
 * destination, the parts already received, the free space and whether it
 * may write there; the source also its tree), receives its plan, then
 * receives the chunks from its upstream hosts over the cables, checks
 * each one (XXH3-128), writes what it lacks under a temporary name,
 * forwards every chunk to its children of the route, and gives each file
 * its final name once the whole file's hash is right. The source reads
 * and sends. The conversation with the controller is one JSON object per
 * line each way, through callbacks; nothing here prints.
 */
#ifndef JC_SYNC_RANK_H
#define JC_SYNC_RANK_H

#include <jansson.h>

#include "jc.h"

struct sync_rank_io {
	/* one line from the controller (a new string, NULL at the end) */
	char *(*read_line)(void *arg);
	/* an event for the controller (borrowed) */
	void (*event)(void *arg, json_t *ev);
	void *arg;
};

/*
 * Run one rank: the setup line, hello, the plan, the transfer, the end
 * event. Returns 0 when the rank ran (its end event says whether it is
 * complete), or a negative value with err filled when it could not.
 * Test hooks from the environment: JACCL_SYNC_CORRUPT=N flips a byte of
 * the N-th chunk the source sends (once), JACCL_SYNC_STOP_AFTER=N makes
 * the source stop after N chunks, JACCL_SYNC_HOLD=N:FIFO makes the source
 * write "held" to FIFO after N chunks and wait for a line on FIFO.ack.
 */
int sync_rank_run(const struct sync_rank_io *io, struct jc_err *err);

#endif
