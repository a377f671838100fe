/* SPDX-License-Identifier: MIT */
/*
 * The ssh side channel's wire format and its relay. When jaccl-config
 * starts the ranks itself, each rank's standard output and input already
 * travel through an SSH session held by the launcher, so the all-gather
 * rides on them: a rank writes a frame "\036JCSC1 AG <n>\n" followed by n
 * bytes to its output; once every rank has sent its frame of a round, the
 * relay answers each with "\036JCSC1 R <size*n>\n" and the blocks in rank
 * order (or "\036JCSC1 E <len>\n" and a message when the round failed).
 * Everything else a rank writes is ordinary output and is passed through.
 */
#ifndef JC_RT_RELAY_H
#define JC_RT_RELAY_H

#include <stddef.h>

#include "jc.h"

#define RT_RELAY_MARK "\036JCSC1 "

/*
 * Relay for n ranks: from[r] reads rank r's output, to[r] writes its input.
 * Output that is not a frame goes to out(arg, rank, data, len) in pieces
 * of whole lines (the last piece of a stream may lack its newline); out
 * may be NULL. Returns when every from[] fd reached end of file: 0, or a
 * negative value with err filled when a round could not complete (a rank
 * left or did not join a started round within timeout seconds, or sent a
 * malformed frame); the ranks still waiting then get an error frame.
 * Does not close the fds.
 */
int rt_relay_run(size_t n, const int *from, const int *to,
    void (*out)(void *arg, size_t rank, const char *data, size_t len),
    void *arg, double timeout, struct jc_err *err);

#endif
