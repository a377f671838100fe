/* SPDX-License-Identifier: MIT */
/*
 * The launcher side of the ssh side channel: read every rank's output,
 * pass its ordinary lines through, collect the all-gather frames of a
 * round and answer each rank with the gathered blocks.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_io.h"
#include "rt_relay.h"
#include "util.h"

#define HDR_MAX 64
#define TEXT_MAX 65536

struct rank_state {
	struct jc_buf in;
	bool eof;
	bool in_payload;
	size_t need;		/* payload bytes of the current frame */
	char *block;		/* this round's block, when joined */
	size_t blen;
	bool joined;
};

struct relay {
	size_t n;
	const int *to;
	struct rank_state *rs;
	void (*out)(void *, size_t, const char *, size_t);
	void *arg;
	double timeout;
	double round_start;
	unsigned long round;
	char *failed;		/* message once a round failed */
};

static char *
memdup(const char *p, size_t n)
{
	char *d = xmalloc(n + 1);

	memcpy(d, p, n);
	return d;
}

static void
consume(struct jc_buf *b, size_t k)
{
	memmove(b->data, b->data + k, b->len - k);
	b->len -= k;
	b->data[b->len] = '\0';
}

static void
send_error(struct relay *R, size_t r)
{
	char hdr[HDR_MAX];
	double deadline = jc_now() + 1.0;
	int hl = snprintf(hdr, sizeof(hdr), RT_RELAY_MARK "E %zu\n", strlen(R->failed));

	if (rt_io_write_all(R->to[r], hdr, (size_t)hl, deadline) == 0)
		(void)rt_io_write_all(R->to[r], R->failed, strlen(R->failed), deadline);
}

static void
fail_round(struct relay *R, char *msg)
{
	if (R->failed == NULL)
		R->failed = msg;
	else
		free(msg);
	for (size_t r = 0; r < R->n; r++) {
		if (R->rs[r].joined && !R->rs[r].eof)
			send_error(R, r);
		free(R->rs[r].block);
		R->rs[r].block = NULL;
		R->rs[r].joined = false;
	}
}

static void
try_complete(struct relay *R)
{
	size_t n = 0;
	char *all, hdr[HDR_MAX];
	int hl;

	for (size_t r = 0; r < R->n; r++) {
		if (!R->rs[r].joined)
			return;
		if (r > 0 && R->rs[r].blen != n) {
			fail_round(R, xasprintf("round %lu: rank %zu sent %zu bytes "
			    "but rank 0 sent %zu", R->round, r, R->rs[r].blen, n));
			return;
		}
		n = R->rs[r].blen;
	}
	all = xmalloc(n * R->n + 1);
	for (size_t r = 0; r < R->n; r++)
		memcpy(all + r * n, R->rs[r].block, n);
	hl = snprintf(hdr, sizeof(hdr), RT_RELAY_MARK "R %zu\n", n * R->n);
	for (size_t r = 0; r < R->n; r++) {
		double deadline = jc_now() + R->timeout;

		if (rt_io_write_all(R->to[r], hdr, (size_t)hl, deadline) < 0 ||
		    rt_io_write_all(R->to[r], all, n * R->n, deadline) < 0) {
			free(all);
			fail_round(R, xasprintf("round %lu: cannot write to rank %zu",
			    R->round, r));
			return;
		}
	}
	free(all);
	for (size_t r = 0; r < R->n; r++) {
		free(R->rs[r].block);
		R->rs[r].block = NULL;
		R->rs[r].joined = false;
	}
	R->round++;
}

static void
join(struct relay *R, size_t r, char *block, size_t len)
{
	struct rank_state *s = &R->rs[r];

	if (R->failed) {
		s->joined = true;
		free(block);
		send_error(R, r);
		s->joined = false;
		return;
	}
	if (s->joined) {
		free(block);
		fail_round(R, xasprintf("rank %zu sent two blocks in round %lu", r, R->round));
		return;
	}
	bool first = true;

	for (size_t k = 0; k < R->n; k++)
		if (R->rs[k].joined)
			first = false;
	if (first)
		R->round_start = jc_now();
	s->block = block;
	s->blen = len;
	s->joined = true;
	try_complete(R);
}

static void
text(struct relay *R, size_t r, const char *p, size_t len)
{
	if (R->out && len > 0)
		R->out(R->arg, r, p, len);
}

/* Parse what rank r sent so far. */
static void
digest(struct relay *R, size_t r)
{
	struct rank_state *s = &R->rs[r];
	struct jc_buf *b = &s->in;
	size_t ml = strlen(RT_RELAY_MARK);

	for (;;) {
		if (s->in_payload) {
			if (b->len < s->need)
				return;
			join(R, r, memdup(b->data, s->need), s->need);
			consume(b, s->need);
			s->in_payload = false;
			continue;
		}
		if (b->len == 0)
			return;
		size_t cmp = b->len < ml ? b->len : ml;

		if (memcmp(b->data, RT_RELAY_MARK, cmp) == 0) {
			char *nl = memchr(b->data, '\n', b->len);
			unsigned long long v;
			char *end;

			if (nl == NULL) {
				if (b->len < HDR_MAX && !s->eof)
					return;
				fail_round(R, xasprintf("rank %zu sent a malformed "
				    "side channel frame", r));
				b->len = 0;
				return;
			}
			*nl = '\0';
			errno = 0;
			v = strtoull(b->data + ml + 3, &end, 10);
			if (strncmp(b->data + ml, "AG ", 3) != 0 || errno != 0 ||
			    *end != '\0' || v > (1ULL << 32)) {
				fail_round(R, xasprintf("rank %zu sent a malformed "
				    "side channel frame", r));
				consume(b, (size_t)(nl - b->data) + 1);
				continue;
			}
			s->need = (size_t)v;
			s->in_payload = true;
			consume(b, (size_t)(nl - b->data) + 1);
			continue;
		}
		char *nl = memchr(b->data, '\n', b->len);
		size_t k;

		if (nl != NULL)
			k = (size_t)(nl - b->data) + 1;
		else if (s->eof || b->len >= TEXT_MAX)
			k = b->len;
		else
			return;
		text(R, r, b->data, k);
		consume(b, k);
	}
}

int
rt_relay_run(size_t n, const int *from, const int *to,
    void (*out)(void *arg, size_t rank, const char *data, size_t len),
    void *arg, double timeout, struct jc_err *err)
{
	struct relay R = { .n = n, .to = to, .out = out, .arg = arg, .timeout = timeout };
	struct pollfd *pfd = xcalloc(n, sizeof(*pfd));
	double fail_deadline = 0;
	size_t open;
	int rc = 0;

	R.rs = xcalloc(n, sizeof(*R.rs));
	for (;;) {
		open = 0;
		for (size_t r = 0; r < n; r++) {
			pfd[r].fd = R.rs[r].eof ? -1 : from[r];
			pfd[r].events = POLLIN;
			pfd[r].revents = 0;
			open += !R.rs[r].eof;
		}
		if (open == 0)
			break;
		if (poll(pfd, n, 200) < 0 && errno != EINTR) {
			fail_round(&R, xasprintf("poll: %s", strerror(errno)));
			break;
		}
		for (size_t r = 0; r < n; r++) {
			char chunk[65536];
			ssize_t k;

			if (pfd[r].fd < 0 || !(pfd[r].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			k = read(from[r], chunk, sizeof(chunk));
			if (k < 0 && (errno == EINTR || errno == EAGAIN))
				continue;
			if (k <= 0) {
				R.rs[r].eof = true;
				digest(&R, r);
				R.rs[r].in.len = 0;	/* a cut frame is dropped */
				/* a rank that leaves while a round is open fails it */
				for (size_t q = 0; q < n; q++)
					if (R.rs[q].joined && !R.rs[r].joined) {
						fail_round(&R, xasprintf("rank %zu left during "
						    "side channel round %lu", r, R.round));
						break;
					}
				continue;
			}
			buf_append(&R.rs[r].in, chunk, (size_t)k);
			digest(&R, r);
		}
		/* a started round that some rank does not join in time fails */
		bool any = false;
		size_t missing = n;

		for (size_t r = 0; r < n; r++) {
			if (R.rs[r].joined)
				any = true;
			else if (missing == n)
				missing = r;
		}
		if (any && missing < n && jc_now() - R.round_start > timeout)
			fail_round(&R, xasprintf("rank %zu did not join side channel "
			    "round %lu within %g s", missing, R.round, timeout));
		if (R.failed != NULL) {
			if (fail_deadline == 0)
				fail_deadline = jc_now() + timeout;
			else if (jc_now() > fail_deadline)
				break;
		}
	}
	if (R.failed != NULL)
		rc = jc_fail(err, -EPIPE, "%s", R.failed);
	for (size_t r = 0; r < n; r++) {
		buf_free(&R.rs[r].in);
		free(R.rs[r].block);
	}
	free(R.failed);
	free(R.rs);
	free(pfd);
	return rc;
}
