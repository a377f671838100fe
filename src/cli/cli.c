/* SPDX-License-Identifier: MIT */
/*
 * Option and command tables, the getopt_long parser built from them, the
 * generated --help, and the command layer's message helpers. The man page
 * test compares --help with man/jaccl-config.1, so both tables are the one
 * place where an option or a command is declared.
 */
#include "config.h"

#include <getopt.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cmd.h"

/* where an option stores its value */
#define D(field) offsetof(struct jc_opts, field)

static const char *const overs[] = { "thunderbolt", "ethernet", NULL };
static const char *const backends[] = { "ring", "jaccl", "jaccl-ring", NULL };
static const char *const fabrics[] = { "verbs", "tcp", NULL };

const struct jc_optdef jc_optdefs[] = {
	{ OPT_HOSTS, "hosts", 0, required_argument, "HOSTS",
	  "comma separated hosts, each [user@]host[:port] (default 127.0.0.1)",
	  .kind = OPTK_STR, .dest = D(hosts) },
	{ OPT_HOSTFILE, "hostfile", 0, required_argument, "FILE",
	  "JSON hostfile (mlx.launch format); overrides --hosts",
	  .kind = OPTK_STR, .dest = D(hostfile) },
	{ OPT_OVER, "over", 0, required_argument, "thunderbolt|ethernet",
	  "what connectivity to configure (default thunderbolt)",
	  .kind = OPTK_CHOICE, .dest = D(over), .values = overs },
	{ OPT_BACKEND, "backend", 0, required_argument, "ring|jaccl|jaccl-ring",
	  "backend of the hostfile (default: chosen from the cabling)",
	  .kind = OPTK_CHOICE, .dest = D(backend), .values = backends },
	{ OPT_AUTO_SETUP, "auto-setup", 0, no_argument, NULL,
	  "run the network commands on the hosts (needs passwordless sudo)",
	  .kind = OPTK_SET, .dest = D(auto_setup), .ival = JC_YES },
	{ OPT_NO_AUTO_SETUP, "no-auto-setup", 0, no_argument, NULL,
	  "only print the network commands (the default)",
	  .kind = OPTK_SET, .dest = D(auto_setup), .ival = JC_NO },
	{ OPT_OUTPUT_HOSTFILE, "output-hostfile", 0, required_argument, "FILE",
	  "write the hostfile there instead of standard output",
	  .kind = OPTK_STR, .dest = D(output_hostfile) },
	{ OPT_OUTPUT, "output", 0, required_argument, "FILE",
	  "same as --output-hostfile",
	  .kind = OPTK_STR, .dest = D(output_hostfile) },
	{ OPT_DOT, "dot", 0, no_argument, NULL,
	  "print the cabling as Graphviz DOT and exit (with -v: extra attributes)",
	  .kind = OPTK_FLAG, .dest = D(dot) },
	{ OPT_ENV, "env", 0, required_argument, "KEY=VALUE",
	  "environment variable for the jobs (repeatable)",
	  .kind = OPTK_ENV, .dest = D(envs) },
	{ OPT_VERBOSE, "verbose", 'v', no_argument, NULL,
	  "log every step and remote command on standard error",
	  .kind = OPTK_COUNT, .dest = D(verbose) },
	{ OPT_IGNORE_UNREACHABLE, "ignore-unreachable", 0, no_argument, NULL,
	  "drop hosts that cannot be reached instead of failing",
	  .kind = OPTK_FLAG, .dest = D(ignore_unreachable) },
	{ OPT_JSON, "json", 'j', no_argument, NULL,
	  "print one JSON document on standard output",
	  .kind = OPTK_FLAG, .dest = D(json) },
	{ OPT_FROM, "from", 0, required_argument, "DIR",
	  "replay a saved probe bundle instead of connecting to the hosts",
	  .kind = OPTK_STR, .dest = D(from) },
	{ OPT_SAVE, "save", 0, required_argument, "DIR",
	  "save every raw output of the probe as a bundle in DIR",
	  .kind = OPTK_STR, .dest = D(save) },
	{ OPT_SSH_CONFIG, "ssh-config", 'F', required_argument, "FILE",
	  "ssh client configuration file (default ~/.ssh/config)",
	  .kind = OPTK_STR, .dest = D(ssh_config) },
	{ OPT_ACCEPT_NEW, "accept-new", 0, no_argument, NULL,
	  "accept and record unknown host keys (never changed ones)",
	  .kind = OPTK_FLAG, .dest = D(accept_new) },
	{ OPT_CONNECT_TIMEOUT, "connect-timeout", 0, required_argument, "SECONDS",
	  "SSH connect timeout (default 5)",
	  .kind = OPTK_SECONDS, .dest = D(connect_timeout) },
	{ OPT_COMMAND_TIMEOUT, "command-timeout", 0, required_argument, "SECONDS",
	  "bound on each remote command (default 60)",
	  .kind = OPTK_SECONDS, .dest = D(command_timeout) },
	{ OPT_VERIFY, "verify", 0, no_argument, NULL,
	  "verify every link after setup and writing the hostfile",
	  .kind = OPTK_FLAG, .dest = D(verify) },
	{ OPT_SAVE_CABLING, "save-cabling", 0, required_argument, "FILE",
	  "write the cabling as found to FILE",
	  .kind = OPTK_STR, .dest = D(save_cabling) },
	{ OPT_EXPECT, "expect", 0, required_argument, "FILE",
	  "compare the cabling with a file written by --save-cabling",
	  .kind = OPTK_STR, .dest = D(expect) },
	{ OPT_FABRIC, "fabric", 0, required_argument, "verbs|tcp",
	  "data path of the verification (default verbs when available)",
	  .kind = OPTK_CHOICE, .dest = D(fabric), .values = fabrics },
	{ OPT_SIDE_CHANNEL, "side-channel", 0, required_argument, "tcp|ssh|file|PATH",
	  "bootstrap all-gather of the runtime (default tcp)",
	  .kind = OPTK_STR, .dest = D(side_channel) },
	{ OPT_MIN_BW, "min-bw", 0, required_argument, "RATE",
	  "fail links slower than RATE (e.g. 50Gb/s, 6GB/s)",
	  .kind = OPTK_STR, .dest = D(min_bw) },
	{ OPT_STARTING_PORT, "starting-port", 'p', required_argument, "PORT",
	  "coordinator port, first port of the ring backend (default 32323)",
	  .kind = OPTK_INT, .dest = D(starting_port), .ival = 1, .imax = 65535,
	  .bad = "invalid port" },
	{ OPT_CONNECTIONS_PER_IP, "connections-per-ip", 0, required_argument, "N",
	  "ring backend: connections per IP (default 1)",
	  .kind = OPTK_INT, .dest = D(connections_per_ip), .ival = 1, .imax = 64,
	  .bad = "Number should be positive" },
	{ OPT_TIMEOUT, "timeout", 0, required_argument, "SECONDS",
	  "bound on any wait of the verification (default 30)",
	  .kind = OPTK_SECONDS, .dest = D(timeout) },
	{ OPT_STATE_DIR, "state-dir", 0, required_argument, "DIR",
	  "where setup saves each host's prior state (default ~/.cache/jaccl-config)",
	  .kind = OPTK_STR, .dest = D(state_dir) },
	{ OPT_SUBNET, "subnet", 0, required_argument, "CIDR",
	  "number the cables' /30 subnets from CIDR (default: mlx's unless taken)",
	  .kind = OPTK_STR, .dest = D(subnet) },
	{ OPT_PERSIST, "persist", 0, no_argument, NULL,
	  "make the setup survive a reboot (the system's own network configuration)",
	  .kind = OPTK_FLAG, .dest = D(persist) },
	{ OPT_INTERVAL, "interval", 0, required_argument, "SECONDS",
	  "watch: seconds between two looks at every host (default 2)",
	  .kind = OPTK_SECONDS, .dest = D(interval) },
	{ OPT_COUNT, "count", 0, required_argument, "N",
	  "watch: stop after N snapshots of the cabling",
	  .kind = OPTK_INT, .dest = D(count), .ival = 1, .imax = 1000000000,
	  .bad = "Number should be positive" },
	{ OPT_UNTIL_EVENT, "until-event", 0, required_argument, "EVENT",
	  "watch: stop after the first event of a kind in EVENT (comma separated, or any)",
	  .kind = OPTK_STR, .dest = D(until_event) },
	{ OPT_MAX_RECONNECTS, "max-reconnects", 0, required_argument, "N",
	  "watch: reconnections in a row before a host is given up (default 10)",
	  .kind = OPTK_INT, .dest = D(max_reconnects), .ival = 1, .imax = 1000,
	  .bad = "Number should be positive" },
	{ OPT_MLX, "mlx", 0, no_argument, NULL,
	  "verify: also run MLX's all_sum and all_gather on every host",
	  .kind = OPTK_FLAG, .dest = D(mlx) },
	{ OPT_REMOTE_BIN, "remote-bin", 0, required_argument, "PATH",
	  "jaccl-config on the hosts (default: their PATH, /opt/homebrew/bin, /usr/local/bin, "
	  "this one's path)",
	  .kind = OPTK_STR, .dest = D(remote_bin) },
	{ OPT_PYTHON, "python", 0, required_argument, "PATH",
	  "the Python the jobs run on every host (default: python3 on the hosts' PATH, then /opt/homebrew/bin/python3)",
	  .kind = OPTK_STR, .dest = D(python) },
	{ OPT_DRY_RUN, "dry-run", 'n', no_argument, NULL,
	  "sync: print the route and the expected time, move nothing",
	  .kind = OPTK_FLAG, .dest = D(dry_run) },
	{ OPT_CHECKSUM, "checksum", 'c', no_argument, NULL,
	  "sync: compare files by their hash, not by size and mtime",
	  .kind = OPTK_FLAG, .dest = D(checksum) },
	{ OPT_VERIFY_SHA256, "verify-sha256", 0, no_argument, NULL,
	  "sync: check each file named by a SHA-256 (Hugging Face blobs) against its name",
	  .kind = OPTK_FLAG, .dest = D(verify_sha256) },
	{ OPT_HELP, "help", 'h', no_argument, NULL, "show this help and exit",
	  .kind = OPTK_HELP },
	{ OPT_VERSION, "version", 'V', no_argument, NULL, "show the version and exit",
	  .kind = OPTK_VERSION },
};

const size_t jc_noptdefs = JC_ARRAY_LEN(jc_optdefs);

#define HOST_OPTS OPT_HOSTS, OPT_HOSTFILE, OPT_IGNORE_UNREACHABLE, OPT_FROM, \
	OPT_SSH_CONFIG, OPT_ACCEPT_NEW, OPT_CONNECT_TIMEOUT, OPT_COMMAND_TIMEOUT, \
	OPT_VERBOSE

static const enum jc_optid configure_opts[] = {
	HOST_OPTS, OPT_OVER, OPT_BACKEND, OPT_AUTO_SETUP, OPT_NO_AUTO_SETUP,
	OPT_OUTPUT_HOSTFILE, OPT_OUTPUT, OPT_DOT, OPT_ENV, OPT_JSON, OPT_VERIFY,
	OPT_SAVE_CABLING, OPT_STATE_DIR, OPT_FABRIC, OPT_SIDE_CHANNEL, OPT_MIN_BW,
	OPT_STARTING_PORT, OPT_TIMEOUT, OPT_SUBNET, OPT_PERSIST, OPT_REMOTE_BIN, OPT__END
};
static const enum jc_optid check_opts[] = {
	OPT_BACKEND, OPT_JSON, OPT_STARTING_PORT, OPT_VERBOSE, OPT__END
};
static const enum jc_optid probe_opts[] = {
	HOST_OPTS, OPT_SAVE, OPT_JSON, OPT__END
};
static const enum jc_optid verify_opts[] = {
	OPT_HOSTFILE, OPT_SSH_CONFIG, OPT_ACCEPT_NEW, OPT_CONNECT_TIMEOUT,
	OPT_FABRIC, OPT_SIDE_CHANNEL, OPT_MIN_BW, OPT_STARTING_PORT, OPT_ENV,
	OPT_TIMEOUT, OPT_JSON, OPT_VERBOSE, OPT_MLX, OPT_REMOTE_BIN, OPT_PYTHON, OPT_STATE_DIR,
	OPT__END
};
static const enum jc_optid verify_rank_opts[] = {
	OPT_FABRIC, OPT_SIDE_CHANNEL, OPT_MIN_BW, OPT_TIMEOUT, OPT_JSON,
	OPT_VERBOSE, OPT__END
};
static const enum jc_optid launch_opts[] = {
	OPT_HOSTFILE, OPT_HOSTS, OPT_BACKEND, OPT_ENV, OPT_STARTING_PORT,
	OPT_CONNECTIONS_PER_IP, OPT_SSH_CONFIG, OPT_ACCEPT_NEW,
	OPT_CONNECT_TIMEOUT, OPT_VERBOSE, OPT_REMOTE_BIN, OPT_PYTHON, OPT__END
};
static const enum jc_optid restore_opts[] = {
	HOST_OPTS, OPT_STATE_DIR, OPT__END
};
static const enum jc_optid doctor_opts[] = {
	HOST_OPTS, OPT_EXPECT, OPT_STARTING_PORT, OPT_JSON, OPT_STATE_DIR, OPT_SAVE, OPT_PYTHON,
	OPT__END
};
static const enum jc_optid watch_opts[] = {
	OPT_HOSTS, OPT_HOSTFILE, OPT_IGNORE_UNREACHABLE, OPT_SSH_CONFIG, OPT_ACCEPT_NEW,
	OPT_CONNECT_TIMEOUT, OPT_COMMAND_TIMEOUT, OPT_VERBOSE, OPT_INTERVAL, OPT_JSON, OPT_COUNT, OPT_UNTIL_EVENT,
	OPT_MAX_RECONNECTS, OPT__END
};
static const enum jc_optid sudoers_opts[] = {
	HOST_OPTS, OPT_PERSIST, OPT__END
};
static const enum jc_optid sync_opts[] = {
	OPT_HOSTFILE, OPT_SSH_CONFIG, OPT_ACCEPT_NEW, OPT_CONNECT_TIMEOUT, OPT_OVER,
	OPT_DRY_RUN, OPT_CHECKSUM, OPT_VERIFY_SHA256, OPT_TIMEOUT, OPT_STATE_DIR, OPT_JSON,
	OPT_VERBOSE, OPT_REMOTE_BIN, OPT__END
};
static const enum jc_optid sync_rank_opts[] = { OPT_VERBOSE, OPT__END };
static const enum jc_optid completion_opts[] = { OPT__END };

const struct jc_cmd jc_cmds[] = {
	{ "configure", cmd_configure, "",
	  "discover the cabling, set up one network per cable, write the hostfile (the default command)",
	  configure_opts, JC_CMD_NEEDS_HOSTS | JC_CMD_MUTATES },
	{ "check", cmd_check, "HOSTFILE",
	  "validate a hostfile for mlx.launch and the JACCL runtime",
	  check_opts, 0 },
	{ "probe", cmd_probe, "",
	  "discover every host's Thunderbolt ports, RDMA devices and interfaces",
	  probe_opts, JC_CMD_NEEDS_HOSTS },
	{ "verify", cmd_verify, "",
	  "measure every link of a configured cluster with the built-in JACCL runtime",
	  verify_opts, JC_CMD_NEEDS_HOSTS },
	{ "verify-rank", cmd_verify_rank, "",
	  "one rank of the verification, configured by the mlx.launch environment",
	  verify_rank_opts, 0 },
	{ "launch", cmd_launch, "-- COMMAND [ARG ...]",
	  "start a command on every host with the environment mlx.launch gives it",
	  launch_opts, JC_CMD_NEEDS_HOSTS | JC_CMD_POSIX },
	{ "restore", cmd_restore, "",
	  "undo the last setup from each host's saved state",
	  restore_opts, JC_CMD_NEEDS_HOSTS | JC_CMD_MUTATES },
	{ "doctor", cmd_doctor, "",
	  "find every known cause of a broken Thunderbolt/RDMA cluster",
	  doctor_opts, JC_CMD_NEEDS_HOSTS },
	{ "watch", cmd_watch, "",
	  "show every cable's state live and report each change as it happens",
	  watch_opts, JC_CMD_NEEDS_HOSTS },
	{ "sudoers", cmd_sudoers, "",
	  "print the sudoers rule that allows exactly what setup, rollback and restore run",
	  sudoers_opts, 0 },
	{ "sync", cmd_sync, "SRC [DEST]",
	  "copy a folder from one host onto every other host over the cables",
	  sync_opts, JC_CMD_NEEDS_HOSTS },
	{ "sync-rank", cmd_sync_rank, "",
	  "one host's part of a sync, started by sync over SSH",
	  sync_rank_opts, 0 },
	{ "completion", cmd_completion, "bash|zsh|fish",
	  "print the shell completion script (used by the build)",
	  completion_opts, JC_CMD_HIDDEN },
};
const size_t jc_ncmds = JC_ARRAY_LEN(jc_cmds);

static const struct jc_optdef *
optdef(enum jc_optid id)
{
	for (size_t i = 0; i < JC_ARRAY_LEN(jc_optdefs); i++)
		if (jc_optdefs[i].id == id)
			return &jc_optdefs[i];
	return NULL;
}

const struct jc_optdef *
cli_optdef(enum jc_optid id)
{
	return optdef(id);
}

/* One value of an "a|b|c" argument name into values; an upper-case word means a file too. */
static void
arg_choice(const char *w, size_t n, struct jc_strv *values, bool *also_file)
{
	char *v = xstrndup(w, n);

	if (v[0] >= 'A' && v[0] <= 'Z')
		*also_file = true;
	else
		strv_push(values, v);
	free(v);
}

enum cli_argkind
cli_opt_arg(const struct jc_optdef *d, struct jc_strv *values, bool *also_file)
{
	const char *a = d->argname;

	*also_file = false;
	if (d->has_arg == no_argument || a == NULL)
		return CLI_ARG_NONE;
	if (strchr(a, '|') == NULL) {
		if (strcmp(a, "FILE") == 0 || strcmp(a, "PATH") == 0)
			return CLI_ARG_FILE;
		if (strcmp(a, "DIR") == 0)
			return CLI_ARG_DIR;
		if (strcmp(a, "HOSTS") == 0)
			return CLI_ARG_HOSTS;
		return CLI_ARG_WORD;
	}
	for (const char *p = a; *p; ) {
		size_t n = strcspn(p, "|");

		arg_choice(p, n, values, also_file);
		p += n;
		if (*p == '|')
			p++;
	}
	return CLI_ARG_CHOICE;
}

const struct jc_cmd *
cli_find_cmd(const char *name)
{
	for (size_t i = 0; i < jc_ncmds; i++)
		if (strcmp(jc_cmds[i].name, name) == 0)
			return &jc_cmds[i];
	return NULL;
}

static void
print_opt(FILE *fp, const struct jc_optdef *d)
{
	char lhs[80];

	if (d->shortopt)
		snprintf(lhs, sizeof(lhs), "-%c, --%s%s%s", d->shortopt, d->name,
		    d->argname ? " " : "", d->argname ? d->argname : "");
	else
		snprintf(lhs, sizeof(lhs), "    --%s%s%s", d->name,
		    d->argname ? " " : "", d->argname ? d->argname : "");
	if (strlen(lhs) > 34)
		fprintf(fp, "  %s\n  %-34s %s\n", lhs, "", d->help);
	else
		fprintf(fp, "  %-34s %s\n", lhs, d->help);
}

void
cli_usage(FILE *fp, const struct jc_cmd *cmd)
{
	if (cmd == NULL || strcmp(cmd->name, "configure") == 0)
		fprintf(fp, "usage: %s [options]\n       %s COMMAND [options] %s\n",
		    JC_PROG, JC_PROG, "[ARGS]");
	else
		fprintf(fp, "usage: %s %s [options]%s%s\n", JC_PROG, cmd->name,
		    *cmd->args ? " " : "", cmd->args);
}

/* The options of configure that mlx.distributed_config also has, in its order. */
static const enum jc_optid overview_opts[] = {
	OPT_VERBOSE, OPT_HOSTS, OPT_IGNORE_UNREACHABLE, OPT_HOSTFILE, OPT_OVER,
	OPT_OUTPUT_HOSTFILE, OPT_AUTO_SETUP, OPT_DOT, OPT_BACKEND, OPT_ENV, OPT__END,
};

bool cli_command_implicit;

void
cli_help(FILE *fp, const struct jc_cmd *only)
{
	cli_usage(fp, only);
	if (only == NULL) {
		fputs("\nDiscover, configure and verify a cluster of Macs (and Linux hosts) joined by\n"
		    "Thunderbolt cables for MLX distributed jobs (JACCL over RDMA, or the ring backend).\n"
		    "\nCommands:\n", fp);
		for (size_t i = 0; i < jc_ncmds; i++)
			if (!(jc_cmds[i].flags & JC_CMD_HIDDEN))
				fprintf(fp, "  %-12s %s\n", jc_cmds[i].name, jc_cmds[i].summary);
		fputs("\nOptions of configure that mlx.distributed_config has too:\n", fp);
		for (const enum jc_optid *id = overview_opts; *id != OPT__END; id++)
			print_opt(fp, optdef(*id));
	} else {
		fprintf(fp, "\n%s\n", only->summary);
		fprintf(fp, "\nOptions of %s%s%s:\n", only->name, *only->args ? " " : "",
		    only->args);
		for (const enum jc_optid *id = only->opts; *id != OPT__END; id++)
			print_opt(fp, optdef(*id));
	}
	fputs("\nCommon options:\n", fp);
	print_opt(fp, optdef(OPT_HELP));
	print_opt(fp, optdef(OPT_VERSION));
	if (only != NULL)
		return;
	fputs("\nExit status:\n", fp);
	for (size_t i = 0; i < jc_nexits; i++)
		fprintf(fp, "  %d  %-19s %s\n", jc_exits[i].status, jc_exits[i].code,
		    jc_exits[i].help);
	fprintf(fp, "\nA command's options: '%s COMMAND --help'; everything: man %s.\n",
	    JC_PROG, JC_PROG);
}

int
cli_usage_error(const struct jc_cmd *cmd, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = xvasprintf(fmt, ap);
	va_end(ap);
	out_remember_error(NULL, s);
	cli_usage(stderr, cmd);
	fprintf(stderr, "%s: error: %s\n", JC_PROG, s);
	free(s);
	return JC_EXIT_USAGE;
}

static bool
cmd_has(const struct jc_cmd *cmd, enum jc_optid id)
{
	if (id == OPT_HELP || id == OPT_VERSION)
		return true;
	for (const enum jc_optid *p = cmd->opts; *p != OPT__END; p++)
		if (*p == id)
			return true;
	return false;
}

static bool
parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	v = strtod(s, &end);
	if (end == s || *end != '\0' || !(v > 0) || v > 86400)
		return false;
	*out = v;
	return true;
}

static int
check_choice(const struct jc_cmd *cmd, const char *opt, const char *val,
    const char *const *choices)
{
	struct jc_buf b = { 0 };
	int r;

	for (const char *const *c = choices; *c; c++)
		if (strcmp(val, *c) == 0)
			return 0;
	for (const char *const *c = choices; *c; c++)
		buf_printf(&b, "%s'%s'", c == choices ? "" : ", ", *c);
	r = cli_usage_error(cmd, "argument --%s: invalid choice: '%s' (choose from %s)",
	    opt, val, b.data);
	buf_free(&b);
	return r;
}

static bool
env_ok(const char *kv)
{
	const char *eq = strchr(kv, '=');

	if (eq == NULL || eq == kv)
		return false;
	for (const char *p = kv; p < eq; p++)
		if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9')))
			return false;
	return true;
}

/* ---- one setter per kind of option: d's value from arg into dest ---- */

typedef int (*opt_setter)(const struct jc_cmd *cmd, const struct jc_optdef *d,
    const char *arg, void *dest);

static int
set_flag(const struct jc_cmd *cmd, const struct jc_optdef *d, const char *arg, void *dest)
{
	(void)cmd, (void)d, (void)arg;
	*(bool *)dest = true;
	return 0;
}

static int
set_count(const struct jc_cmd *cmd, const struct jc_optdef *d, const char *arg, void *dest)
{
	(void)cmd, (void)d, (void)arg;
	(*(int *)dest)++;
	return 0;
}

static int
set_value(const struct jc_cmd *cmd, const struct jc_optdef *d, const char *arg, void *dest)
{
	(void)cmd, (void)arg;
	*(int *)dest = (int)d->ival;
	return 0;
}

static int
set_str(const struct jc_cmd *cmd, const struct jc_optdef *d, const char *arg, void *dest)
{
	(void)cmd, (void)d;
	*(const char **)dest = arg;
	return 0;
}

static int
set_choice(const struct jc_cmd *cmd, const struct jc_optdef *d, const char *arg, void *dest)
{
	int r = check_choice(cmd, d->name, arg, d->values);

	if (r == 0)
		*(const char **)dest = arg;
	return r;
}

static int
set_env(const struct jc_cmd *cmd, const struct jc_optdef *d, const char *arg, void *dest)
{
	if (!env_ok(arg))
		return cli_usage_error(cmd,
		    "argument --%s: '%s' is not KEY=VALUE with KEY in [A-Za-z0-9_]", d->name, arg);
	strv_push(dest, arg);
	return 0;
}

static int
set_seconds(const struct jc_cmd *cmd, const struct jc_optdef *d, const char *arg, void *dest)
{
	if (!parse_seconds(arg, dest))
		return cli_usage_error(cmd, "argument --%s: invalid value: '%s'", d->name, arg);
	return 0;
}

static int
set_int(const struct jc_cmd *cmd, const struct jc_optdef *d, const char *arg, void *dest)
{
	if (!jc_parse_int(arg, d->ival, d->imax, dest))
		return cli_usage_error(cmd, "argument --%s: %s: '%s'", d->name, d->bad, arg);
	return 0;
}

static int
do_help(const struct jc_cmd *cmd, const struct jc_optdef *d, const char *arg, void *dest)
{
	(void)d, (void)arg, (void)dest;
	cli_help(stdout, cli_command_implicit ? NULL : cmd);
	return -1;
}

static int
do_version(const struct jc_cmd *cmd, const struct jc_optdef *d, const char *arg, void *dest)
{
	(void)cmd, (void)d, (void)arg, (void)dest;
	printf("%s %s\n", JC_PROG, PACKAGE_VERSION);
	return -1;
}

static const opt_setter setters[OPTK__N] = {
	[OPTK_FLAG] = set_flag, [OPTK_COUNT] = set_count, [OPTK_SET] = set_value,
	[OPTK_STR] = set_str, [OPTK_CHOICE] = set_choice, [OPTK_ENV] = set_env,
	[OPTK_SECONDS] = set_seconds, [OPTK_INT] = set_int, [OPTK_HELP] = do_help,
	[OPTK_VERSION] = do_version,
};

/* The getopt_long tables of cmd's options (shorts: "+" for POSIX commands, ":"). */
static void
getopt_tables(const struct jc_cmd *cmd, struct option *lopts, char *shorts)
{
	size_t nl = 0, ns = 0;

	if (cmd->flags & JC_CMD_POSIX)
		shorts[ns++] = '+';
	shorts[ns++] = ':';
	for (size_t i = 0; i < JC_ARRAY_LEN(jc_optdefs); i++) {
		const struct jc_optdef *d = &jc_optdefs[i];

		if (!cmd_has(cmd, d->id))
			continue;
		lopts[nl++] = (struct option){ d->name, d->has_arg, NULL, 1000 + d->id };
		if (d->shortopt) {
			shorts[ns++] = (char)d->shortopt;
			if (d->has_arg == required_argument)
				shorts[ns++] = ':';
		}
	}
	lopts[nl] = (struct option){ 0 };
	shorts[ns] = '\0';
}

/* The option getopt_long returned as c (1000 + id, or a short option). */
static const struct jc_optdef *
optdef_of(int c)
{
	if (c >= 1000)
		return optdef((enum jc_optid)(c - 1000));
	for (size_t i = 0; i < JC_ARRAY_LEN(jc_optdefs); i++)
		if (jc_optdefs[i].shortopt == c)
			return &jc_optdefs[i];
	return NULL;
}

static void
opts_defaults(struct jc_opts *o, const struct jc_cmd *cmd)
{
	memset(o, 0, sizeof(*o));
	o->cmd = cmd;
	o->over = "thunderbolt";
	o->auto_setup = JC_UNKNOWN;
	o->connect_timeout = 5;
	o->command_timeout = 60;
	o->timeout = 30;
	o->interval = 2;
	o->max_reconnects = 10;
	o->starting_port = 32323;
	o->connections_per_ip = 1;
}

int
cli_parse(const struct jc_cmd *cmd, int argc, char **argv, struct jc_opts *o)
{
	struct option lopts[JC_ARRAY_LEN(jc_optdefs) + 1];
	char shorts[2 * JC_ARRAY_LEN(jc_optdefs) + 3];
	int c, r;

	opts_defaults(o, cmd);
	getopt_tables(cmd, lopts, shorts);
	opterr = 0;
#ifdef __GLIBC__
	optind = 0;	/* full reset, so tests may parse several command lines */
#else
	optind = 1;
	optreset = 1;
#endif
	while ((c = getopt_long(argc, argv, shorts, lopts, NULL)) != -1) {
		const struct jc_optdef *d;

		if (c == '?') {
			if (optopt)
				return cli_usage_error(cmd, "unrecognized argument: -%c", optopt);
			return cli_usage_error(cmd, "unrecognized argument: %s", argv[optind - 1]);
		}
		if (c == ':')
			return cli_usage_error(cmd, "argument %s: expected one argument",
			    argv[optind - 1]);
		if ((d = optdef_of(c)) == NULL)
			return cli_usage_error(cmd, "unrecognized argument");
		if ((r = setters[d->kind](cmd, d, optarg, (char *)o + d->dest)) != 0)
			return r;
	}
	o->hosts_given = o->hosts != NULL;
	if (o->hosts == NULL)
		o->hosts = "127.0.0.1";
	o->argc = argc - optind;
	o->argv = argv + optind;
	jc_verbosity = o->verbose;
	return 0;
}

void
cli_opts_free(struct jc_opts *o)
{
	strv_free(&o->envs);
}
