/* SPDX-License-Identifier: MIT */
/*
 * Shared types of jaccl-config: what a probe learns about a host (the
 * inventory), the hostfile that mlx.launch reads, and the error record that
 * library code fills in instead of printing.
 *
 * The pipeline is probe -> parse -> graph -> plan -> apply -> hostfile ->
 * verify. Every stage after probe is a pure function of these structures.
 */
#ifndef JC_H
#define JC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JC_PROG "jaccl-config"

/*
 * Exit statuses of the command, one per class of failure, so that a script
 * can tell them apart. jc_exits[] (src/cli/exitcode.c) gives each its
 * --json code and its line in --help; the man page's EXIT STATUS lists the same.
 */
enum {
	JC_EXIT_OK = 0,
	JC_EXIT_FAIL = 1,	/* any other failure: invalid input, a probe */
	JC_EXIT_USAGE = 2,	/* bad command line, as argparse's exit 2 */
	JC_EXIT_UNREACHABLE = 3,	/* a host unreachable or refusing the key */
	JC_EXIT_CABLING = 4,	/* the cabling cannot serve the backend */
	JC_EXIT_SETUP_RESTORED = 5,	/* setup failed, every host put back */
	JC_EXIT_SETUP_BROKEN = 6,	/* setup failed, a host not put back */
	JC_EXIT_VERIFY = 7,	/* a link down or under the floor */
	JC_EXIT_DOCTOR = 8,	/* doctor found an error */
};

/* A yes/no fact that a probe may not have been able to establish. */
enum jc_tri {
	JC_UNKNOWN = -1,
	JC_NO = 0,
	JC_YES = 1,
};

/*
 * Error record. Library functions return 0 on success and a negative value
 * on failure, after filling *err (when err is not NULL) with a message that
 * names the host or file involved. Only the command layer prints it.
 */
struct jc_err {
	int code;		/* the negative value returned */
	char msg[1024];
};

enum jc_os {
	JC_OS_UNKNOWN = 0,
	JC_OS_MACOS,
	JC_OS_LINUX,
};

/*
 * What configures a Linux host's network at boot (its persistent setup
 * goes there): the probe's netmgr.txt, parse_linux_netmgr().
 */
/* What a host's sudo allows without a password (parse_sudo.h). */
enum jc_sudo_mode {
	JC_SUDO_UNKNOWN = 0,	/* not captured */
	JC_SUDO_NONE,		/* nothing (macOS's default: a password for everything) */
	JC_SUDO_SCOPED,		/* some commands only (sudo_list says which) */
	JC_SUDO_ALL,		/* everything (sudo -n /bin/sh works) */
};

enum jc_netmgr {
	JC_NETMGR_UNKNOWN = 0,	/* not captured (an older bundle, macOS) */
	JC_NETMGR_NONE,		/* none of those below */
	JC_NETMGR_NM,		/* NetworkManager */
	JC_NETMGR_NETWORKD,	/* systemd-networkd */
	JC_NETMGR_IFUPDOWN,	/* ifupdown (/etc/network/interfaces) */
};

enum jc_port_state {
	JC_PORT_UNKNOWN = 0,	/* not captured */
	JC_PORT_DOWN,
	JC_PORT_INIT,
	JC_PORT_ARMED,
	JC_PORT_ACTIVE,
};

/*
 * One Thunderbolt bus (one receptacle) of a Mac, or one candidate cable
 * interface of a Linux host. Cables are found by matching a port's peer_id
 * with the id of a port on another host: on macOS both are domain UUIDs from
 * system_profiler; on Linux they are Thunderbolt domain ids from sysfs or,
 * where none exist, "mac:" followed by the lower-case MAC address of the
 * interface and of the neighbour learnt on it.
 */
struct jc_port {
	int bus;		/* N of thunderboltusb4_bus_N, -1 if unknown */
	char *receptacle;	/* "1".."6", NULL if the bus has none */
	char *iface;		/* enX / eth1 ..., NULL if not mapped */
	char *id;		/* own domain UUID (as written) or "mac:..." */
	char *link;		/* negotiated rate "80 Gb/s", NULL if idle/unknown */
	int link_gbps;		/* 80, 40, 20 ...; 0 when unknown */
	char *peer_id;		/* the Mac (or host) on the other end, or NULL */
	bool peer_via_dock;	/* that Mac sits behind a dock or hub */
	char *peer_model;	/* peer's model identifier ("Mac15,14") */
	char *peer_name;	/* the peer's name as it reports it ("Mac mini") */
	bool peer_no_id;	/* a Mac is cabled here but reports no domain UUID */
	bool peer_inferred;	/* peer_id was inferred: parse_tb_infer_peers() */
	char *self_name;	/* this Mac's name as its Thunderbolt bus reports it */
	int peer_rdma_service;	/* enum jc_tri: peer advertises 64087 */
	char **devices;		/* names of non-Mac items on the bus */
	size_t ndevices;
};

/* One RDMA device as ibv_devices / ibv_devinfo / sysfs list it. */
struct jc_rdma_dev {
	char *name;		/* rdma_en2 */
	char *netdev;		/* en2 (by convention on macOS, sysfs on Linux) */
	char *guid;		/* node GUID text, or NULL */
	enum jc_port_state state;
};

/* A hardware port of networksetup -listallhardwareports. */
struct jc_hwport {
	char *port;		/* "Thunderbolt 1", "Ethernet", "Wi-Fi" */
	char *device;		/* en2, bridge0 */
	char *mac;		/* Ethernet Address, or NULL */
};

/* A network interface as ifconfig / ip -j addr show it. */
struct jc_iface {
	char *name;
	char *mac;		/* NULL if none */
	int mtu;		/* 0 if unknown */
	int up;			/* enum jc_tri: administratively up */
	int carrier;		/* enum jc_tri: status active / LOWER_UP */
	char **inet;		/* IPv4 addresses, dotted */
	int *prefix;		/* prefix length of each address */
	size_t ninet;
	char **members;		/* bridge members, NULL/0 if not a bridge */
	size_t nmembers;
	bool is_bridge;
};

/*
 * One IPv4 route of a host (netstat -rn -f inet on macOS, ip -j -4 route
 * show table all on Linux): what it sends where. Every table counts (a
 * VPN's policy table too); local and broadcast entries are not kept.
 */
struct jc_route {
	char *dest;		/* network, dotted ("0.0.0.0" for default) */
	int len;		/* prefix length 0..32 */
	char *iface;		/* the interface it leaves by, or NULL (blackhole) */
	char *via;		/* gateway, or NULL */
};

/*
 * Another tool that manages a Mac's network and can undo a setup
 * (parse_mgr.h): a LaunchDaemon of a known tool, a network location
 * other than Automatic, a network service a known tool made.
 */
enum jc_mgr_kind {
	JC_MGR_DAEMON,		/* /Library/LaunchDaemons/NAME.plist */
	JC_MGR_LOCATION,	/* the active network location NAME */
	JC_MGR_SERVICE,		/* the network service NAME */
};

struct jc_mgr {
	enum jc_mgr_kind kind;
	const char *tool;	/* "exo", "oMLX", "OdyssAI-X"; NULL: not known (a location) */
	char *name;		/* the daemon's label, the location's or service's name */
	int loaded;		/* DAEMON: enum jc_tri, launchd holds it (launchctl print) */
	long pid;		/* DAEMON: its process while it runs, else 0 */
};

/*
 * Everything discovery learns about one host. Strings are owned by the
 * structure and freed by jc_host_clear().
 */
struct jc_host {
	char *name;		/* as given: the ssh target without user/port */
	char *target;		/* as given on the command line ([user@]host[:port]) */
	char *user;		/* NULL: from ssh config or the local user */
	int port;		/* 0: from ssh config, else 22 */

	bool reachable;
	char *error;		/* why this host could not be probed, or NULL */

	enum jc_os os;
	char *hostname;		/* the host's own name */
	char *model;		/* Mac15,14 */
	char *os_version;	/* 26.2 */
	char *os_build;		/* 25C56 */

	struct jc_port *ports;	/* Thunderbolt buses, in receptacle order */
	size_t nports;
	bool ports_known;	/* ports were discovered (nports 0 = none found) */
	struct jc_hwport *hwports;
	size_t nhwports;
	struct jc_iface *ifaces;
	size_t nifaces;
	struct jc_rdma_dev *rdma;
	size_t nrdma;
	struct jc_route *routes;	/* IPv4 routing table */
	size_t nroutes;
	bool routes_known;	/* the routing table was captured */
	int rdma_listed;	/* enum jc_tri: JC_UNKNOWN when not captured */
	int rdma_enabled;	/* enum jc_tri: rdma_ctl status */
	int sudo;		/* enum jc_tri: passwordless sudo for everything */
	int sudo_mode;		/* enum jc_sudo_mode */
	char *sudo_list;	/* SCOPED: what `sudo -n -ll` listed, else NULL */
	int netmgr;		/* enum jc_netmgr (Linux) */
	int mgrs_known;		/* enum jc_tri: the other managers were asked (macOS) */
	struct jc_mgr *mgrs;	/* what was found of them */
	size_t nmgrs;
	char *location;		/* the active network location, or NULL when unknown */
	bool automatic;		/* a location called Automatic exists */
	char *mgmt_ip;		/* en0, else en1, else another non-cable IPv4 */
	char *mgmt_iface;

	char **notes;		/* what could not be parsed, "unknown" reasons */
	size_t nnotes;
};

/*
 * Hostfile as mlx.launch reads it. A cell of the rdma matrix is null
 * (n == 0 and !is_list), a string (n == 1 and !is_list) or a list.
 */
struct jc_hf_cell {
	char **names;
	size_t n;
	bool is_list;
};

struct jc_hf_host {
	char *ssh;
	char **ips;
	size_t nips;
	struct jc_hf_cell *rdma;
	size_t nrdma;
};

struct jc_hostfile {
	char *backend;		/* "" when absent */
	char **envs;
	size_t nenvs;
	struct jc_hf_host *hosts;
	size_t nhosts;
	bool legacy_list;	/* the file was a bare list of hosts */
	/* when set, holds every string and array above: freed at once */
	struct jc_arena *arena;
};

void jc_host_clear(struct jc_host *h);
/* h's interface called name (borrowed), or NULL. */
const struct jc_iface *jc_host_iface(const struct jc_host *h, const char *name);
void jc_hostfile_free(struct jc_hostfile *hf);

#endif
