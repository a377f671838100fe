/* SPDX-License-Identifier: MIT */
/*
 * softverbs: a userspace verbs provider for the test suite that behaves like
 * Apple's Thunderbolt RDMA driver (UC queue pairs only, GID table with an
 * IPv4-mapped entry, small queue and object limits). Each device stands for
 * one network interface, and messages really travel over that interface as
 * UDP datagrams, so taking the interface down stops the traffic. This header
 * is internal to the library: the objects behind the public verbs structs.
 * Linux only; never installed.
 *
 * What JACCL relies on, and why softverbs holds sends back. JACCL posts its
 * receives and its sends together, with no handshake between ranks (mesh
 * and ring: post_recv of this step, then post_send of this step), keeps two
 * frames in flight per peer, and reuses a send buffer as soon as its send
 * completes; it never checks a completion's status and has no timeout. So
 * a send may reach a rank that has not yet posted the receive for it (it
 * is still reducing the previous frame, or has not entered the collective
 * yet), and nothing in JACCL repairs that. On InfiniBand UC that message
 * would be dropped and JACCL would hang; on Macs it works, every run. The
 * device must therefore be lossless end to end: a SEND waits at the sender
 * until the receiver has a receive posted for it. Independent signs that
 * Apple's Thunderbolt RDMA does exactly this: people porting other
 * programs to it describe its "UC" as lossless in practice and relying on
 * the hardware's credit-based flow control where Linux RC uses RNR NAKs
 * and retries; a Linux driver that talks to Macs had to make its sends
 * wait for the peer's advertised receive credits (not complete them
 * locally) before Linux -> Mac traffic stopped losing messages; and when a
 * peer dies mid-collective, survivors spin forever rather than fail, which
 * is what a sender waiting for credits that never come looks like.
 *
 * So softverbs keeps the UC surface (UC QPs only, no error completion, no
 * RNR error) and adds receive credits underneath: each QP counts the
 * receives ever posted and tells its peer the total (a header-only
 * datagram, cumulative so a lost or late one does no harm) whenever it
 * posts receives and when it goes to RTR; a send is queued at the sender
 * and put on the wire only while the peer's total exceeds the messages
 * already sent, and completes when it is sent. A sender that is blocked
 * asks for the total (at most every millisecond), which covers a credit
 * that was lost or arrived before this QP was RTR. A message the receiver
 * drops with its receive still posted (longer than the buffer, datagrams
 * missing, or spanning another number of 4 KiB frames than the receive)
 * gives its credit back. Every limit stays: the queues report 64 sends and
 * 128 receives, as Apple's do, but take 63 of each at once (queued sends
 * count), 10 QPs, 100 MRs, MTU 1024.
 * A cable that is down takes sends and loses them without spending
 * credits (nothing reached the far end). Datagrams lost on a working cable
 * are a broken cable (Apple's link does not lose data): the receiver sees
 * the gap in message numbers, prints it on stderr with the device name
 * even without SOFTVERBS_DEBUG, and the message is lost, as on UC.
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
#define SV_IN_FLIGHT	63	/* sends, and receives, a QP takes at once (Apple) */
#define SV_FRAME	4096	/* bytes of a Thunderbolt frame */

/* Frames a message of n bytes spans (an empty one still takes one). */
#define sv_frames(n)	((n) == 0 ? (uint64_t)1 : ((uint64_t)(n) + SV_FRAME - 1) / SV_FRAME)
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
	int	wait_us;	/* >0: or wait that long for a datagram */
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
	struct sv_context	*next_ctx;	/* every open context */
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

/* A send waiting for a receive at the far end (copied at post time). */
struct sv_swr {
	uint64_t	wr_id;
	int		nsge;
	int		signaled;
	int		has_imm;
	uint32_t	imm;
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
	struct sv_swr		*sq;		/* ring of max_send_wr: posted, */
	int			sq_head;	/* not yet sent (no credit) */
	int			sq_pend;
	/* receive credits (see softverbs.c): counts since RTR, mod 2^32 */
	uint32_t		peer_limit;	/* messages the peer can take */
	uint32_t		sent;		/* messages put on the wire */
	int64_t			last_ask;	/* last credit request, ns */
	uint32_t		rq_posted;	/* receives ever posted */
	uint32_t		rq_returned;	/* credits of dropped messages */
	uint32_t		in_next;	/* msn expected next */
	int			credit_due;	/* 1: tell the peer our limit */
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
	unsigned long		lost;		/* messages lost on the wire */
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
