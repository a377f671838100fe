/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: the ssh side channel relay's frame parser. The input
 * is what two ranks write (split at the first byte's value); the relay
 * must pass text through, answer frames and never crash or hang.
 */
#include "config.h"

#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "rt_relay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void
sink(void *arg, size_t rank, const char *p, size_t len)
{
	(void)arg;
	(void)rank;
	(void)p;
	(void)len;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int a[2], b[2], from[2], to[2];
	size_t cut;
	struct jc_err err;

	if (size == 0 || size > 16384)
		return 0;
	cut = data[0] % size;
	if (pipe(a) < 0)
		return 0;
	if (pipe(b) < 0) {
		close(a[0]);
		close(a[1]);
		return 0;
	}
#ifdef F_SETPIPE_SZ
	fcntl(a[1], F_SETPIPE_SZ, 65536);
	fcntl(b[1], F_SETPIPE_SZ, 65536);
#endif
	if (write(a[1], data + 1, cut) < 0 ||
	    write(b[1], data + 1 + cut, size - 1 - cut) < 0)
		(void)0;
	close(a[1]);
	close(b[1]);
	from[0] = a[0];
	from[1] = b[0];
	to[0] = to[1] = open("/dev/null", O_WRONLY);
	(void)rt_relay_run(2, from, to, sink, NULL, 0.05, &err);
	close(to[0]);
	close(a[0]);
	close(b[0]);
	return 0;
}
