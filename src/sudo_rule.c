/* SPDX-License-Identifier: MIT */
/*
 * The sudoers rule of a setup and the check of a plan against a host's
 * sudo. See sudo_rule.h.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "parse_linux.h"
#include "parse_sudo.h"
#include "sudo_rule.h"

/* Stand-ins (TEST-NET-1) that become wildcards in the rule. */
#define SR_ADDR "192.0.2.1"
#define SR_PEER "192.0.2.2"
#define SR_VIA "192.0.2.3"
#define SR_IPV4 "[0-9]*.[0-9]*.[0-9]*.[0-9]*"
#define SR_MASK30 "255.255.255.252"

static bool
strv_has(const struct jc_strv *sv, const char *s)
{
	for (size_t i = 0; i < sv->n; i++)
		if (strcmp(sv->v[i], s) == 0)
			return true;
	return false;
}

void
sudo_rule_defaults(struct sudo_rule_sys *s)
{
	bool mac = s->plat == &jc_platform_macos;

	if (s->ifaces.n == 0) {
		if (mac) {
			strv_push(&s->ifaces, "en[1-9]");
			strv_push(&s->ifaces, "en[1-9][0-9]");
		} else {
			strv_push(&s->ifaces, "*");
		}
	}
	if (mac && s->ports.n == 0) {
		strv_push(&s->ports, "Thunderbolt [1-9]");
		strv_push(&s->ports, "Thunderbolt [1-9][0-9]");
	}
	if (mac && s->bridge_svcs.n == 0)
		strv_push(&s->bridge_svcs, "Thunderbolt Bridge");
}

void
sudo_rule_sys_clear(struct sudo_rule_sys *s)
{
	strv_free(&s->ifaces);
	strv_free(&s->ports);
	strv_free(&s->bridge_svcs);
	memset(s, 0, sizeof(*s));
}

/* w with every stand-in address replaced by the IPv4 glob. */
static void
put_word(struct jc_buf *b, const char *w, bool any_mask)
{
	static const char *const stand[] = { SR_ADDR, SR_PEER, SR_VIA };

	if (any_mask && strcmp(w, SR_MASK30) == 0) {
		buf_puts(b, SR_IPV4);
		return;
	}
	while (*w) {
		bool hit = false;

		for (size_t i = 0; i < JC_ARRAY_LEN(stand) && !hit; i++) {
			size_t l = strlen(stand[i]);

			if (strncmp(w, stand[i], l) == 0) {
				buf_puts(b, SR_IPV4);
				w += l;
				hit = true;
				if (any_mask && strcmp(w, "/30") == 0) {
					buf_puts(b, "/[0-9]*");
					w += 3;
				}
			}
		}
		if (hit)
			continue;
		/* sudoers' special characters in a command's arguments */
		if (strchr(",:=\\#\"", *w) != NULL)
			buf_puts(b, "\\");
		buf_append(b, w, 1);
		w++;
	}
}

/* The rule's line for act with a on plat, appended to lines once. */
static void
rule_act(struct jc_strv *lines, const struct jc_platform_ops *plat, enum jc_act act,
    const struct jc_act_arg *a, bool any_mask)
{
	struct jc_strv argv = { 0 };
	struct jc_buf b = { 0 };
	const char *path;

	if (plat->command(act, a, &argv) != 0 || argv.n < 2 || strcmp(argv.v[0], "sudo") != 0) {
		strv_free(&argv);
		return;
	}
	path = plat->priv_path ? plat->priv_path(argv.v[1]) : NULL;
	buf_puts(&b, path ? path : argv.v[1]);
	for (size_t k = 2; k < argv.n; k++) {
		buf_puts(&b, " ");
		put_word(&b, argv.v[k], any_mask);
	}
	if (!strv_has(lines, b.data))
		strv_push(lines, b.data);
	buf_free(&b);
	strv_free(&argv);
}

/* Every command of a setup, its rollback and restore on one system. */
static void
rule_lines(const struct sudo_rule_sys *s, bool persist, struct jc_strv *lines, bool *files)
{
	const struct jc_platform_ops *p = s->plat;
	*files = false;
	rule_act(lines, p, JC_ACT_BRIDGE_DOWN, &(struct jc_act_arg){ 0 }, false);
	rule_act(lines, p, JC_ACT_BRIDGE_UP, &(struct jc_act_arg){ 0 }, false);
	for (size_t i = 0; i < s->ifaces.n; i++) {
		const char *f = s->ifaces.v[i];

		rule_act(lines, p, JC_ACT_BRIDGE_DELM, &(struct jc_act_arg){ .iface = f }, false);
		rule_act(lines, p, JC_ACT_BRIDGE_ADDM, &(struct jc_act_arg){ .iface = f }, false);
	}
	for (size_t i = 0; i < s->ifaces.n; i++) {
		const char *f = s->ifaces.v[i];
		struct jc_act_arg a = { .iface = f, .addr = SR_ADDR "/30" };

		rule_act(lines, p, JC_ACT_ADDR_SET, &a, false);
		rule_act(lines, p, JC_ACT_ADDR_ADD, &a, true);
		rule_act(lines, p, JC_ACT_ADDR_DEL, &a, true);
		rule_act(lines, p, JC_ACT_LINK_UP, &a, false);
		rule_act(lines, p, JC_ACT_LINK_DOWN, &a, false);
	}
	rule_act(lines, p, JC_ACT_ROUTE_DEL, &(struct jc_act_arg){ .peer = SR_PEER }, false);
	for (size_t i = 0; i < s->ifaces.n; i++) {
		const char *f = s->ifaces.v[i];

		rule_act(lines, p, JC_ACT_ROUTE_DEL,
		    &(struct jc_act_arg){ .peer = SR_PEER, .iface = f }, false);
		rule_act(lines, p, JC_ACT_ROUTE_SET,
		    &(struct jc_act_arg){ .peer = SR_PEER, .iface = f }, false);
		rule_act(lines, p, JC_ACT_ROUTE_SET,
		    &(struct jc_act_arg){ .peer = SR_PEER, .via = SR_VIA, .iface = f }, false);
	}
	if (!persist || p->persist == NULL)
		return;
	/* macOS: one service per port; Linux (NetworkManager): per interface */
	for (size_t i = 0; i < s->ports.n; i++) {
		char *svc = xasprintf("%s%s", JC_SVC_PREFIX, s->ports.v[i]);
		struct jc_act_arg a = { .service = svc, .port = s->ports.v[i], .addr = SR_ADDR "/30" };

		rule_act(lines, p, JC_ACT_SVC_CREATE, &a, false);
		rule_act(lines, p, JC_ACT_SVC_MANUAL, &a, false);
		rule_act(lines, p, JC_ACT_SVC_REMOVE, &a, false);
		rule_act(lines, p, JC_ACT_SVC_ENABLE, &a, false);
		rule_act(lines, p, JC_ACT_SVC_DISABLE, &a, false);
		free(svc);
	}
	for (size_t i = 0; i < s->bridge_svcs.n; i++) {
		struct jc_act_arg a = { .service = s->bridge_svcs.v[i] };

		rule_act(lines, p, JC_ACT_SVC_ENABLE, &a, false);
		rule_act(lines, p, JC_ACT_SVC_DISABLE, &a, false);
	}
	if (p == &jc_platform_macos)
		return;
	if (s->netmgr == JC_NETMGR_NM || s->netmgr == JC_NETMGR_UNKNOWN)
		for (size_t i = 0; i < s->ifaces.n; i++) {
			char *svc = xasprintf("%s%s", JC_SVC_PREFIX, s->ifaces.v[i]);
			struct jc_act_arg a = { .service = svc, .iface = s->ifaces.v[i],
			    .addr = SR_ADDR "/30" };

			rule_act(lines, p, JC_ACT_SVC_CREATE, &a, false);
			rule_act(lines, p, JC_ACT_SVC_REMOVE, &a, false);
			free(svc);
		}
	if (s->netmgr == JC_NETMGR_NETWORKD || s->netmgr == JC_NETMGR_IFUPDOWN ||
	    s->netmgr == JC_NETMGR_UNKNOWN) {
		*files = true;
		rule_act(lines, p, JC_ACT_NET_RELOAD,
		    &(struct jc_act_arg){ .manager = jc_netmgr_name(JC_NETMGR_NETWORKD) }, false);
	}
}

char *
sudo_rule_text(const struct sudo_rule_sys *sys, size_t n, bool persist, const char *group)
{
	struct jc_buf b = { 0 };

	buf_printf(&b,
	    "# sudoers rule of jaccl-config: the commands of a setup (--auto-setup%s),\n"
	    "# its rollback and restore, each without a password, and nothing else.\n"
	    "# Check it, then install it on every host:\n"
	    "#   sudo visudo -cf jaccl-config.sudoers &&\n"
	    "#   sudo install -m 0440 jaccl-config.sudoers /etc/sudoers.d/jaccl-config\n"
	    "# sudoers' '*' also matches spaces: an address is as tight as a glob can\n"
	    "# make it; interfaces and verbs are fixed words.\n",
	    persist ? " --persist" : "");
	for (size_t i = 0; i < n; i++) {
		struct jc_strv lines = { 0 };
		bool mac = sys[i].plat == &jc_platform_macos, files;
		char *alias = xasprintf("JACCL_CONFIG_%s", mac ? "MACOS" : "LINUX");

		rule_lines(&sys[i], persist, &lines, &files);
		buf_printf(&b, "\n# %s\nCmnd_Alias %s = \\\n", sys[i].plat->display, alias);
		for (size_t k = 0; k < lines.n; k++)
			buf_printf(&b, "\t%s%s\n", lines.v[k], k + 1 < lines.n ? ", \\" : "");
		if (files)
			buf_puts(&b, "# Not included: --persist with systemd-networkd or ifupdown writes\n"
			    "# its files through `sudo sh -c`, which is root for anything: such a\n"
			    "# host needs NOPASSWD: ALL.\n");
		buf_printf(&b, "%s ALL = (root) NOPASSWD: %s\n",
		    group != NULL ? group : mac ? "%admin" : "%sudo", alias);
		free(alias);
		strv_free(&lines);
	}
	return buf_steal(&b);
}

/* The verdict of h's sudo on one command (argv "sudo" PROGRAM ARGS). */
static void
check_cmd(const struct jc_host *h, const struct jc_platform_ops *p, char *const *argv, size_t argc,
    struct jc_strv *missing, size_t *n)
{
	struct jc_buf b = { 0 };
	const char *path;

	if (argc < 2 || strcmp(argv[0], "sudo") != 0)
		return;
	path = p->priv_path ? p->priv_path(argv[1]) : NULL;
	if (path == NULL)
		path = argv[1];
	if (sudo_list_allows(h->sudo_list, path, argv + 2, argc - 2) == SUDO_NOPASSWD)
		return;
	buf_puts(&b, path);
	for (size_t k = 2; k < argc; k++)
		buf_printf(&b, " %s", argv[k]);
	if (!strv_has(missing, b.data)) {
		strv_push(missing, b.data);
		(*n)++;
	}
	buf_free(&b);
}

static void
check_act(const struct jc_host *h, const struct jc_platform_ops *p, enum jc_act act,
    const struct jc_act_arg *a, struct jc_strv *missing, size_t *n)
{
	struct jc_strv argv = { 0 };

	if (p->command(act, a, &argv) == 0)
		check_cmd(h, p, argv.v, argv.n, missing, n);
	strv_free(&argv);
}

size_t
sudo_plan_missing(const struct plan_host *ph, const struct jc_host *h, struct jc_strv *missing)
{
	const struct jc_platform_ops *p = ph->plat;
	const struct jc_iface *br = jc_host_iface(h, "bridge0");
	size_t n = 0;

	if (h->sudo_mode == JC_SUDO_ALL)
		return 0;
	for (size_t i = 0; i < ph->cmds.n; i++)
		check_cmd(h, p, ph->cmds.v[i].argv, ph->cmds.v[i].argc, missing, &n);
	/* what a rollback runs: the addresses and routes gone, bridge0 back */
	for (size_t i = 0; i < ph->naddrs; i++) {
		char net[24];

		snprintf(net, sizeof(net), "%s/30", ph->addrs[i].ip);
		check_act(h, p, JC_ACT_ADDR_DEL,
		    &(struct jc_act_arg){ .iface = ph->addrs[i].iface, .addr = net }, missing, &n);
		check_act(h, p, JC_ACT_ROUTE_DEL,
		    &(struct jc_act_arg){ .peer = ph->addrs[i].peer_ip }, missing, &n);
	}
	if (br != NULL && (p->caps & JC_PLAT_BRIDGE)) {
		if (br->up == JC_YES)
			check_act(h, p, JC_ACT_BRIDGE_UP, &(struct jc_act_arg){ 0 }, missing, &n);
		for (size_t m = 0; m < br->nmembers; m++)
			if (plan_is_cable_iface(ph, br->members[m]))
				check_act(h, p, JC_ACT_BRIDGE_ADDM,
				    &(struct jc_act_arg){ .iface = br->members[m] }, missing, &n);
	}
	return n;
}
