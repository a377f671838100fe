/* SPDX-License-Identifier: MIT */
/*
 * The rank side of the ssh side channel (see rt_relay.h for the frames):
 * blocks go out as frames on the rank's standard output (or the fd given
 * as "ssh=IN,OUT") and the gathered result comes back on its input.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rt_io.h"
#include "rt_relay.h"
#include "rt_sc.h"
#include "util.h"

struct ssh_ctx {
	int rank, size;
	int in, out;
	double timeout;
};

static int
ssh_open(void **ctx, int rank, int size, const char *params, double timeout,
    char *eb, size_t el)
{
	struct ssh_ctx *c;
	long in = 0, out = 1;

	*ctx = NULL;
	if (params != NULL && *params != '\0') {
		const char *comma = strchr(params, ',');
		char *a;
		bool good;

		a = comma ? xstrndup(params, (size_t)(comma - params)) : NULL;
		good = a != NULL && jc_parse_int(a, 0, 1 << 20, &in) &&
		    jc_parse_int(comma + 1, 0, 1 << 20, &out);
		free(a);
		if (!good) {
			snprintf(eb, el, "ssh side channel: \"%s\" is not INFD,OUTFD", params);
			return -EINVAL;
		}
	}
	c = xcalloc(1, sizeof(*c));
	c->rank = rank;
	c->size = size;
	c->in = (int)in;
	c->out = (int)out;
	c->timeout = timeout;
	*ctx = c;
	return 0;
}

static int
read_header(struct ssh_ctx *c, char *kind, size_t *len, double deadline,
    char *eb, size_t el)
{
	char line[64];
	size_t n = 0, ml = strlen(RT_RELAY_MARK);
	unsigned long long v;
	char *end;
	int r;

	for (;;) {
		if (n + 1 >= sizeof(line)) {
			snprintf(eb, el, "ssh side channel: malformed frame from the relay");
			return -EPROTO;
		}
		if ((r = rt_io_read_all(c->in, line + n, 1, deadline)) < 0) {
			snprintf(eb, el, "ssh side channel: %s", r == -ETIMEDOUT ?
			    "no answer from the relay within the timeout" :
			    "the relay closed the channel");
			return r;
		}
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
	if (n < ml + 3 || memcmp(line, RT_RELAY_MARK, ml) != 0 || line[ml + 1] != ' ') {
		snprintf(eb, el, "ssh side channel: malformed frame from the relay");
		return -EPROTO;
	}
	*kind = line[ml];
	errno = 0;
	v = strtoull(line + ml + 2, &end, 10);
	if (errno != 0 || *end != '\0' || v > (1ULL << 32)) {
		snprintf(eb, el, "ssh side channel: malformed frame from the relay");
		return -EPROTO;
	}
	*len = (size_t)v;
	return 0;
}

static int
ssh_all_gather(void *p, const void *src, size_t n, void *dst, char *eb, size_t el)
{
	struct ssh_ctx *c = p;
	double deadline = jc_now() + c->timeout;
	char hdr[64], kind;
	size_t len;
	int r, hl;

	/* frames share the rank's standard output: the command layer flushes its text first */
	hl = snprintf(hdr, sizeof(hdr), RT_RELAY_MARK "AG %zu\n", n);
	if ((r = rt_io_write_all(c->out, hdr, (size_t)hl, deadline)) < 0 ||
	    (r = rt_io_write_all(c->out, src, n, deadline)) < 0) {
		snprintf(eb, el, "ssh side channel: cannot write to the relay (%s)",
		    strerror(-r));
		return r;
	}
	if ((r = read_header(c, &kind, &len, deadline, eb, el)) < 0)
		return r;
	if (kind == 'E') {
		char *msg = xcalloc(1, len + 1);

		if (len < 4096 && rt_io_read_all(c->in, msg, len, deadline) == 0)
			snprintf(eb, el, "ssh side channel: %s", msg);
		else
			snprintf(eb, el, "ssh side channel: the relay failed");
		free(msg);
		return -EPIPE;
	}
	if (kind != 'R' || len != n * (size_t)c->size) {
		snprintf(eb, el, "ssh side channel: unexpected frame from the relay");
		return -EPROTO;
	}
	if ((r = rt_io_read_all(c->in, dst, len, deadline)) < 0) {
		snprintf(eb, el, "ssh side channel: %s", r == -ETIMEDOUT ?
		    "no answer from the relay within the timeout" :
		    "the relay closed the channel");
		return r;
	}
	return 0;
}

static int
ssh_barrier(void *p, char *eb, size_t el)
{
	struct ssh_ctx *c = p;
	int32_t zero = 0, *all = xcalloc((size_t)c->size, sizeof(*all));
	int r = ssh_all_gather(p, &zero, sizeof(zero), all, eb, el);

	free(all);
	return r;
}

static void
ssh_close(void *p)
{
	free(p);
}

const struct jc_sidechan_ops rt_sc_ssh_ops = {
	.abi_version = JC_SIDECHAN_ABI_VERSION,
	.name = "ssh",
	.open = ssh_open,
	.all_gather = ssh_all_gather,
	.barrier = ssh_barrier,
	.close = ssh_close,
};
