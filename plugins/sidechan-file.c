/* SPDX-License-Identifier: MIT */
/*
 * The file side channel: ranks that share a filesystem (NFS, SMB, a synced
 * folder) exchange their blocks through a directory. In round k each rank
 * writes its block to a temporary name and renames it to "ag-K-RANK" (so
 * readers never see a partial block), then polls until every rank's file
 * of round k is there. A rank removes its file of round k-1 once it has
 * seen all files of round k: by then every rank has read it. Use a fresh
 * directory for each job. This file uses only libc so that it can also be
 * built into a plugin.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sidechan.h"

/*
 * Built as a plugin (the tests do), the table is exported under the plugin
 * symbol, and with a chosen ABI version to test the loader's check.
 */
#ifndef RT_SC_FILE_SYMBOL
#define RT_SC_FILE_SYMBOL rt_sc_file_ops
#endif
#ifndef RT_SC_FILE_ABI
#define RT_SC_FILE_ABI JC_SIDECHAN_ABI_VERSION
#endif

extern const struct jc_sidechan_ops RT_SC_FILE_SYMBOL;

struct file_ctx {
	int rank, size;
	double timeout;
	unsigned long round;
	char *dir;
};

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
file_close(void *p)
{
	struct file_ctx *c = p;

	free(c ? c->dir : NULL);
	free(c);
}

static int
file_open(void **ctx, int rank, int size, const char *params, double timeout,
    char *eb, size_t el)
{
	struct file_ctx *c;
	struct stat st;

	*ctx = NULL;
	if (params == NULL || *params == '\0') {
		snprintf(eb, el, "the file side channel needs a directory (file=DIR)");
		return -EINVAL;
	}
	if (stat(params, &st) < 0 || !S_ISDIR(st.st_mode)) {
		snprintf(eb, el, "%s: not a directory", params);
		return -ENOTDIR;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL || (c->dir = strdup(params)) == NULL) {
		free(c);
		snprintf(eb, el, "out of memory");
		return -ENOMEM;
	}
	c->rank = rank;
	c->size = size;
	c->timeout = timeout;
	*ctx = c;
	return 0;
}

static int
write_block(struct file_ctx *c, const void *src, size_t n, char *eb, size_t el)
{
	char tmp[4096], path[4096];
	const char *p = src;
	ssize_t w;
	int fd;

	snprintf(tmp, sizeof(tmp), "%s/.tmp-%lu-%d-%ld", c->dir, c->round, c->rank,
	    (long)getpid());
	snprintf(path, sizeof(path), "%s/ag-%lu-%d", c->dir, c->round, c->rank);
	/* a name of ours only: never through a link or into a planted file */
	unlink(tmp);
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600)) < 0) {
		snprintf(eb, el, "%s: %s", tmp, strerror(errno));
		return -errno;
	}
	while (n > 0) {
		w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			int e = errno;

			close(fd);
			unlink(tmp);
			snprintf(eb, el, "%s: %s", tmp, strerror(e));
			return -e;
		}
		p += w;
		n -= (size_t)w;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0) {
		int e = errno;

		unlink(tmp);
		snprintf(eb, el, "%s: %s", path, strerror(e));
		return -e;
	}
	return 0;
}

/* 1: read rank r's block; 0: not there yet; <0: error */
static int
read_block(struct file_ctx *c, int r, size_t n, char *dst, char *eb, size_t el)
{
	char path[4096];
	size_t got = 0;
	ssize_t k;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/ag-%lu-%d", c->dir, c->round, r);
	if ((fd = open(path, O_RDONLY)) < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0 || (size_t)st.st_size != n) {
		close(fd);
		snprintf(eb, el, "%s: %lld bytes where %zu were expected (a stale "
		    "file? use a fresh directory)", path, (long long)st.st_size, n);
		return -EPROTO;
	}
	while (got < n) {
		k = read(fd, dst + got, n - got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			close(fd);
			snprintf(eb, el, "%s: short read", path);
			return -EIO;
		}
		got += (size_t)k;
	}
	close(fd);
	return 1;
}

static int
file_all_gather(void *p, const void *src, size_t n, void *dst, char *eb, size_t el)
{
	struct file_ctx *c = p;
	double deadline = now() + c->timeout;
	unsigned char *have = calloc((size_t)c->size, 1);
	useconds_t nap = 1000;
	int left = c->size, r;
	char path[4096];

	if (have == NULL)
		return -ENOMEM;
	if ((r = write_block(c, src, n, eb, el)) < 0)
		goto out;
	while (left > 0) {
		for (int i = 0; i < c->size; i++) {
			if (have[i])
				continue;
			r = read_block(c, i, n, (char *)dst + (size_t)i * n, eb, el);
			if (r < 0)
				goto out;
			if (r == 1) {
				have[i] = 1;
				left--;
			}
		}
		if (left == 0)
			break;
		if (now() > deadline) {
			int first = 0;

			while (have[first])
				first++;
			snprintf(eb, el, "rank %d did not write its block of round %lu "
			    "in %s within %g s", first, c->round, c->dir, c->timeout);
			r = -ETIMEDOUT;
			goto out;
		}
		usleep(nap);
		if (nap < 20000)
			nap *= 2;
	}
	if (c->round > 0) {
		snprintf(path, sizeof(path), "%s/ag-%lu-%d", c->dir, c->round - 1, c->rank);
		unlink(path);
	}
	c->round++;
	r = 0;
out:
	free(have);
	return r;
}

static int
file_barrier(void *p, char *eb, size_t el)
{
	struct file_ctx *c = p;
	int32_t zero = 0, *all = calloc((size_t)c->size, sizeof(*all));
	int r;

	if (all == NULL)
		return -ENOMEM;
	r = file_all_gather(p, &zero, sizeof(zero), all, eb, el);
	free(all);
	return r;
}

const struct jc_sidechan_ops RT_SC_FILE_SYMBOL = {
	.abi_version = RT_SC_FILE_ABI,
	.name = "file",
	.open = file_open,
	.all_gather = file_all_gather,
	.barrier = file_barrier,
	.close = file_close,
};
