/* SPDX-License-Identifier: MIT */
/*
 * Bounded file-descriptor I/O for the runtime: every read, write, accept
 * and connect waits in poll() against an absolute deadline (jc_now()
 * seconds), so no peer can make a rank hang.
 */
#ifndef JC_RT_IO_H
#define JC_RT_IO_H

#include <stddef.h>
#include <sys/socket.h>
#include <sys/uio.h>

/*
 * Write or read exactly n bytes before deadline. Returns 0, -ETIMEDOUT,
 * -EPIPE when the peer closed (read: end of file; write: EPIPE/ECONNRESET)
 * or another negative errno value. Works on blocking and non-blocking fds.
 */
int rt_io_write_all(int fd, const void *p, size_t n, double deadline);
int rt_io_read_all(int fd, void *p, size_t n, double deadline);
/* rt_io_write_all of the n buffers of iov in one writev() where it can; iov is used up. */
int rt_io_writev_all(int fd, struct iovec *iov, int n, double deadline);

/* poll() one fd for events until deadline: 1 ready, 0 timeout, -errno. */
int rt_io_wait(int fd, short events, double deadline);

/* Set O_NONBLOCK (on != 0) or clear it; returns the previous flags or -errno. */
int rt_io_nonblock(int fd, int on);

/* Milliseconds until deadline for poll(), at least 0, at most 1000. */
int rt_io_ms(double deadline);

/*
 * Connect a new TCP socket to addr before deadline, optionally bound to
 * local (NULL: any). Returns the socket (non-blocking, close-on-exec) or
 * -errno (-ETIMEDOUT when the deadline passed).
 */
int rt_io_connect(const struct sockaddr *addr, socklen_t alen,
    const struct sockaddr *local, socklen_t llen, double deadline);

/* Accept one connection before deadline; returns the socket or -errno. */
int rt_io_accept(int lfd, double deadline);

/* Split "ip:port" at the first ':' and resolve it as IPv4. Returns 0 or -EINVAL. */
int rt_io_parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len);

#endif
