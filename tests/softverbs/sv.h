/* SPDX-License-Identifier: MIT */
/*
 * softverbs: a userspace verbs provider for the test suite that behaves like
 * Apple's Thunderbolt RDMA driver (UC queue pairs only, GID table with an
 * IPv4-mapped entry, small queue and object limits). Each device stands for
 * one network interface, and messages really travel over that interface as
 * UDP datagrams, so taking the interface down stops the traffic. This header
 * is internal to the library: the objects behind the public verbs structs.
 * Linux only; never installed.
 */
#ifndef SV_H
#define SV_H

#include <infiniband/verbs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>

#define SV_API		__attribute__((visibility("default")))

#define SV_MAX_SGE	4	/* scatter/gather entries per work request */
#define SV_GID_TBL_LEN	4
#define SV_BATCH	64	/* datagrams per sendmmsg/recvmmsg call */
#define SV_HDR_LEN	32

/* Limits, read once from the environment (see softverbs.c). */
struct sv_limits {
	int	max_qp;		/* per device; the next create_qp fails EBUSY */
	int	max_mr;		/* per device; the next reg_mr fails ENOMEM */
	int	max_send_wr;	/* outstanding sends per QP; next post ENOMEM */
	int	max_recv_wr;	/* posted receives per QP; next post ENOMEM */
	int	mtu;		/* bytes: 256, 512, 1024, 2048 or 4096 */
	int	allow_rc;	/* 1: RC QPs are accepted (and behave like UC) */
	int	pd_needs_link;	/* 1: alloc_pd fails while the port is down */
	int	rcvbuf;		/* socket receive buffer per QP, bytes */
	int	debug;		/* 1: log drops and errors on stderr */
	int	yield;		/* 1: sched_yield() when poll_cq finds nothing */
	int	dgram;		/* payload bytes per datagram; 0: path MTU */
};

/* What an interface looks like right now. */
struct sv_link {
	int		exists;
	int		up;		/* administratively up, with carrier */
	unsigned char	mac[6];
	int		has_ipv4;
	struct in_addr	ipv4;
};

struct sv_mr;

/* One device per interface; lives until the library is unloaded. */
struct sv_device {
	struct ibv_device	dev;		/* first: callers see this */
	char			ifname[IF_NAMESIZE];
	int			index;		/* 0-based, gives the LID */
	pthread_mutex_t		lock;		/* counts and the MR table */
	int			nqp;
	int			nmr;
	struct sv_mr		**mrs;		/* max_mr slots, by lkey */
	uint32_t		mr_gen;
};

struct sv_qp;
struct sv_cq;

struct sv_context {
	struct ibv_context	ctx;		/* first; ctx.mutex guards all */
	struct sv_device	*dev;
	struct sv_qp		*qps;		/* every QP of this context */
	struct sv_cq		*cqs;
	struct sv_pd		*pds;
};

struct sv_pd {
	struct ibv_pd		pd;
	struct sv_pd		*next;
	int			users;		/* MRs and QPs on this PD */
};

struct sv_mr {
	struct ibv_mr		mr;
	int			access;
	int			slot;
};

/* A completion, and the send-queue slots it releases when polled. */
struct sv_cqe {
	struct ibv_wc		wc;
	struct sv_qp		*qp;		/* NULL once the QP is gone */
	int			retire;
};

struct sv_cq {
	struct ibv_cq		cq;
	struct sv_cq		*next;
	struct sv_cqe		*ring;
	int			cap;
	int			head;
	int			count;
	int			overrun;
	int			users;		/* QPs using this CQ */
};

struct sv_sge {
	uintptr_t	addr;
	uint32_t	length;
	uint32_t	lkey;
};

struct sv_rwr {
	uint64_t	wr_id;
	int		nsge;
	uint64_t	total;
	struct sv_sge	sge[SV_MAX_SGE];
};

struct sv_qp {
	struct ibv_qp		qp;
	struct sv_qp		*next;
	int			fd;
	enum ibv_qp_state	state;
	int			access;
	int			mtu;		/* bytes per datagram payload */
	uint32_t		peer_qpn;
	struct sockaddr_in	peer;
	uint32_t		sq_psn;
	uint32_t		rq_psn;
	int			sq_sig_all;
	int			max_send_wr;
	int			max_recv_wr;
	int			max_sge;
	/* send side */
	int			sq_used;	/* posted, not yet retired */
	int			sq_unsignaled;	/* since the last signaled one */
	uint32_t		msn;		/* next message sequence number */
	int64_t			link_checked;	/* CLOCK_MONOTONIC ns */
	int			link_ok;
	/* receive queue: ring of max_recv_wr entries */
	struct sv_rwr		*rq;
	int			rq_head;
	int			rq_count;
	/* the message being reassembled */
	int			in_msg;		/* 1: fragments are arriving */
	int			in_drop;	/* 1: ignore the rest of in_msn */
	uint32_t		in_msn;
	uint32_t		in_len;
	uint32_t		in_off;
	/* staging area for recvmmsg */
	unsigned char		*stage;		/* SV_BATCH slots */
	size_t			stage_slot;	/* bytes per slot */
	/* counters for tests and debugging */
	unsigned long		drops;
};

extern struct sv_limits sv_lim;

/* Logs on stderr when SOFTVERBS_DEBUG=1. */
void sv_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * sv_link_carrier: whether the interface is up with carrier right now, by
 * ioctl on socket fd (cheap enough for every message sent). Returns 1 or 0.
 */
int sv_link_carrier(int fd, const char *ifname);

/*
 * sv_link_get: fills *l with the state of interface ifname (l->exists = 0
 * when it does not exist). Returns 0, or -1 with errno set if the interface
 * list could not be read.
 */
int sv_link_get(const char *ifname, struct sv_link *l);

/*
 * sv_link_names: the interfaces that are cables according to the
 * environment (SOFTVERBS_IFACES, or every interface except lo and the
 * management ones), in a stable order. Returns a NULL-terminated array the
 * caller frees with sv_names_free(), or NULL with errno set.
 */
char **sv_link_names(void);
void sv_names_free(char **names);

/*
 * sv_gid: GID table entry idx of a link: 0 = fe80::/64 EUI-64 from the MAC,
 * 1 = ::ffff:a.b.c.d while the link has an IPv4 address; other entries are
 * zero. Never fails.
 */
void sv_gid(const struct sv_link *l, int idx, union ibv_gid *gid);

#endif
