/* SPDX-License-Identifier: MIT */
/*
 * The host list: --hosts a,b,c (as mlx.distributed_config splits it) and
 * ssh targets of the form [user@]host[:port], each validated as a plain
 * word before it can reach any command.
 */
#ifndef JC_HOSTS_H
#define JC_HOSTS_H

#include "util.h"

/*
 * Split a comma separated list into hosts (name, target, user, port set,
 * everything else zero). Returns 0, or a negative value with err filled
 * using mlx's wording for an empty item ("Hostname cannot be empty").
 * On success *out holds *n hosts to be released with hosts_free().
 */
int hosts_from_list(const char *list, struct jc_host **out, size_t *n, struct jc_err *err);

/*
 * Parse one ssh target into h->target, h->name, h->user, h->port.
 * Returns 0, or a negative value when it is not a plain word.
 */
int hosts_parse_target(const char *s, struct jc_host *h, struct jc_err *err);

/* True if s is an IPv4 or IPv6 literal (as Python's ipaddress accepts). */
bool hosts_is_ip_literal(const char *s);

void hosts_free(struct jc_host *hosts, size_t n);

#endif
