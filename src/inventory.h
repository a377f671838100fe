/* SPDX-License-Identifier: MIT */
/*
 * The inventory as JSON: what discovery learnt about each host, every
 * field present and unknowns as null, for `probe --json` and the tests.
 * Also the one-call path from a saved bundle to a struct jc_host.
 */
#ifndef JC_INVENTORY_H
#define JC_INVENTORY_H

#include <jansson.h>

#include "jc.h"

/*
 * One host as a JSON object (new reference; never NULL). Keys: name,
 * target, user, port, reachable, error, os ("macos"/"linux"/null),
 * hostname, model, os_version, os_build, ports (null when not discovered;
 * each: bus, receptacle, iface, id, link, link_gbps, peer_id,
 * peer_via_dock, peer_model, peer_rdma_service, devices), hardware_ports
 * (port, device, mac), ifaces (name, mac, mtu, up, carrier, inet [{addr,
 * prefix}], is_bridge, members: of a bridge or bond, else null),
 * rdma_devices (null when not listed; name,
 * netdev, guid, state "PORT_ACTIVE"/.../null), rdma_listed, rdma_enabled,
 * sudo (true/false/null), mgmt_ip, mgmt_iface, routes (null when not
 * captured; each: dest "A/L", iface, via), notes.
 */
json_t *inventory_host_to_json(const struct jc_host *h);

/* {"version": 1, "hosts": [host...]} (new reference). */
json_t *inventory_to_json(const struct jc_host *hosts, size_t n);

/*
 * Load DIR/HOST from a probe bundle, choose its platform backend and parse
 * it into h (which must be zeroed; h->name is set to HOST). Returns 0, or
 * negative with err filled (bundle unreadable, platform unknown, garbage
 * output); h then holds what was parsed so far and must still be cleared
 * with jc_host_clear().
 */
int inventory_from_bundle(const char *dir, const char *host, struct jc_host *h,
    struct jc_err *err);

#endif
