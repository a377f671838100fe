/* SPDX-License-Identifier: MIT */
/*
 * The network plan: one /30 per cable numbered exactly as mlx's
 * IPConfigurator (cable k of the graph's order gets 192.168.(k/64).(4(k%64)+1)
 * on its first end and .(4(k%64)+2) on the other) unless those subnets
 * overlap an address or route of a host (then the first free range of
 * subnet.c's list, or the range of --subnet, in the same /30 steps; see
 * subnet.h), and for each host the
 * commands that set it up, as data (argv vectors, never run here):
 *
 *   macOS:  sudo ifconfig bridge0 down deletem IF...   (each cable interface
 *                                                   in the bridge; one command
 *                                                   per action where sudo is
 *                                                   scoped to the commands)
 *           sudo ifconfig IF inet A netmask 255.255.255.252
 *           sudo route -n delete -host PEER        (may fail: no such route;
 *                                                   left out when the probe
 *                                                   lists no route to PEER)
 *           sudo route -n add -host PEER -interface IF
 *   Linux:  sudo ip addr replace A/30 dev IF
 *           sudo ip link set IF up
 *           sudo ip route replace PEER/32 dev IF
 *
 * per cable in mlx's order (peers by host index, then the shared cable
 * order). Only the cable interfaces and bridge0 are ever named, which
 * plan_build() checks before returning. Also per host: the facts to save
 * before applying, the commands that restore them, and whether the host is
 * already in the planned state (so that a second run changes nothing).
 */
#ifndef JC_PLAN_H
#define JC_PLAN_H

#include "graph.h"
#include "platform.h"
#include "subnet.h"

/* mlx raises "Ran out of available local IPs" when numbering this many cables. */
#define PLAN_MAX_CABLES (256 * 64)

struct plan_cmd {
	char **argv;		/* NULL-terminated, owned */
	size_t argc;
	bool may_fail;		/* a failure is expected and harmless: go on */
};

struct plan_cmdlist {
	struct plan_cmd *v;
	size_t n;
};

/* One address of a host: its end of one cable. */
struct plan_addr {
	size_t cable;		/* index in graph->cables */
	size_t peer;		/* host index of the other end */
	const char *iface;	/* borrowed from the inventory */
	char ip[16];
	char peer_ip[16];
};

enum plan_fact_kind {
	PLAN_FACT_ADDRS,	/* IPv4 addresses of a touched interface */
	PLAN_FACT_BRIDGE,	/* bridge0: up or down, members */
	PLAN_FACT_ROUTE,	/* the route to a peer address */
	PLAN_FACT_SERVICES,	/* --persist: the network services (iface "services") */
	PLAN_FACT_FILE,		/* --persist (Linux file managers): our file of iface; peer:
				 * the manager's jc_netmgr_name() */
};

/* The iface field of a PLAN_FACT_SERVICES fact. */
#define PLAN_SERVICES "services"

/* Something to save before applying, so that restore can undo the change. */
struct plan_fact {
	enum plan_fact_kind kind;
	char *iface;		/* interface, "bridge0", or the route's planned interface */
	char *peer;		/* ROUTE: the peer address; else NULL */
	bool known;		/* the inventory already holds the value */
	struct jc_strv values;	/* ADDRS: "a.b.c.d/len"; BRIDGE: member names */
	int up;			/* BRIDGE (and ADDRS on Linux): enum jc_tri */
	struct plan_cmd query;	/* read-only command capturing the fact at apply time */
};

struct plan_host {
	size_t host;		/* index in graph->hosts */
	const struct jc_platform_ops *plat;	/* its system's (macOS when unknown, as mlx) */
	struct plan_addr *addrs;	/* in mlx's command order */
	size_t naddrs;
	struct plan_cmdlist cmds;	/* set up */
	struct plan_fact *facts;
	size_t nfacts;
	struct plan_cmdlist restore;	/* undo cmds, from the saved facts */
	bool applied;		/* inventory already matches: nothing to run */
	bool persist;		/* cmds end with the persistent configuration */
	int netmgr;		/* Linux --persist: the manager written to (enum jc_netmgr) */
};

struct plan {
	size_t n;
	struct plan_host *hosts;	/* in host (not rank) order */
	size_t ncables;
	char (*cable_ip)[2][16];	/* per cable: address of end[0], end[1] */
	struct subnet_choice subnet;	/* where the cables' subnets are */
	/* subnet.reason set: the host whose address or route mlx's numbering
	 * overlaps (borrowed from the graph), for the note the command prints */
	const char *note_host;
};

struct plan_opts {
	const char *subnet;	/* --subnet CIDR, or NULL: mlx's numbering unless it collides */
	bool persist;		/* --persist: plan_build_persist() below */
};

/*
 * Build the plan for every cable of g (all of them, whatever the backend
 * uses, as mlx does). Returns 0 with *out set (free with plan_free), or a
 * negative value with err filled: "Ran out of available local IPs" beyond
 * PLAN_MAX_CABLES - 1 cables, or a name unfit for a command (an interface
 * failing jc_iface_name_ok), or a command naming something other than a
 * cable interface or bridge0 (an internal error). *out is NULL on failure.
 */
int plan_build(const struct graph *g, struct plan **out, struct jc_err *err);

/*
 * plan_build() with options: o->subnet puts the cables in that range (an
 * error when it is not a prefix, too small for the cables, or overlaps an
 * address or route of a host); without it the numbering is mlx's unless
 * it overlaps one (subnet_taken() of the graph's hosts), then the first
 * free range of subnet_ranges[] with subnet.reason saying why.
 */
int plan_build_opts(const struct graph *g, const struct plan_opts *o, struct plan **out,
    struct jc_err *err);

/*
 * plan_build(), and with persist each host's commands end with its
 * system's persistent configuration (jc_platform_ops.persist) and its facts
 * include the PLAN_FACT_SERVICES it changes. A host whose system has no
 * persist op, or whose inventory lacks what it needs, is an error. Such a
 * host is never "applied": its persistent configuration is not in the
 * inventory, and its commands may run again (creating a service that
 * exists fails harmlessly).
 */
int plan_build_persist(const struct graph *g, bool persist, struct plan **out,
    struct jc_err *err);

void plan_free(struct plan *p);

/*
 * Address of end (0 or 1) of cable k in mlx's numbering, written to out.
 * Returns 0, or -ERANGE when k >= PLAN_MAX_CABLES.
 */
int plan_cable_ip(size_t k, int end, char out[16]);

/*
 * Check that every argument of every command of p (setup and restore) is a
 * fixed keyword, an IPv4 address (optionally /len), bridge0 or a cable
 * interface of that host. Returns 0, or a negative value with err naming
 * the offending word.
 */
int plan_check(const struct plan *p, const struct graph *g, struct jc_err *err);

/*
 * For the platform backends: append to l (a list of ph) the command of act
 * (nothing when ph's system has no such change).
 */
void plan_act(const struct plan_host *ph, struct plan_cmdlist *l, bool may_fail, enum jc_act act,
    const struct jc_act_arg *a);

/*
 * For the backends: append to l's last command the words of act's command
 * after its first skip words, which must be the last command's too (one
 * process doing both: "sudo ifconfig bridge0 down" then "deletem IF");
 * otherwise, or when l is empty, a new command as plan_act's.
 */
void plan_act_more(const struct plan_host *ph, struct plan_cmdlist *l, enum jc_act act,
    const struct jc_act_arg *a, size_t skip);

/* For the backends' setup: ad's address as a /30 on its interface (replaced). */
void plan_addr_set(struct plan_host *ph, const struct plan_addr *ad);

/* For the backends' setup: the host route to ad's peer through its interface. */
void plan_route_set(struct plan_host *ph, const struct plan_addr *ad);

/* True when name is one of ph's cable interfaces. */
bool plan_is_cable_iface(const struct plan_host *ph, const char *name);

/* The command as one line, words separated by spaces. New string. */
char *plan_cmd_text(const struct plan_cmd *c);

/*
 * mlx's manual layout for host index i: "Setup for HOST", a line of '=' as
 * long, the commands one per line, then a blank line. New string.
 */
char *plan_host_text(const struct plan *p, const struct graph *g, size_t i);

/* plan_host_text() of every host, in host order. New string. */
char *plan_manual_text(const struct plan *p, const struct graph *g);

#endif
