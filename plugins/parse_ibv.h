/* SPDX-License-Identifier: MIT */
/*
 * Parsers for `ibv_devices` and `ibv_devinfo` output (rdma-core layout, as
 * on macOS and Linux): device names, node GUIDs and port states. Tolerant of
 * TABs or spaces, missing indentation, Apple's "..." elisions and fields run
 * together on one line. Pure; never print.
 */
#ifndef JC_PARSE_IBV_H
#define JC_PARSE_IBV_H

#include "util.h"

/*
 * ibv_devices: one jc_rdma_dev per device line, in the listed order (name,
 * guid; netdev = name without a leading "rdma_"; state unknown). A listing
 * with only its header gives 0 devices. Device names failing
 * jc_iface_name_ok are skipped with a note. Returns 0, or negative with err
 * filled when the text is not an ibv_devices listing at all. *devs is a new
 * array (free with parse_rdma_free).
 */
int parse_ibv_devices(const char *data, size_t len, struct jc_rdma_dev **devs, size_t *n,
    struct jc_strv *notes, struct jc_err *err);

/*
 * ibv_devinfo (any of its variants: -d DEV, -v): one jc_rdma_dev per
 * "hca_id:" in order, with the state of its first port and node_guid.
 * "No IB devices found" gives 0 devices. Same ownership and errors as above.
 */
int parse_ibv_devinfo(const char *data, size_t len, struct jc_rdma_dev **devs, size_t *n,
    struct jc_strv *notes, struct jc_err *err);

/* "PORT_ACTIVE (4)", "PORT_ACTIVE", "4: ACTIVE", "ACTIVE" -> enum jc_port_state. */
enum jc_port_state parse_ibv_state(const char *s);

/* Text of a state: "PORT_ACTIVE"...; NULL for JC_PORT_UNKNOWN. */
const char *parse_ibv_state_name(enum jc_port_state st);

/* Netdev of an RDMA device by the macOS convention: rdma_en2 -> en2 (new string). */
char *parse_ibv_netdev(const char *name);

void parse_rdma_free(struct jc_rdma_dev *devs, size_t n);

#endif
