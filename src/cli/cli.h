/* SPDX-License-Identifier: MIT */
/*
 * The command line: one table of options, one table of commands, the
 * parser that fills struct jc_opts and --help generated from both tables.
 * The printing helpers of the command layer are in output.h.
 */
#ifndef JC_CLI_H
#define JC_CLI_H

#include <stdio.h>

#include "exitcode.h"
#include "output.h"
#include "util.h"

enum jc_optid {
	OPT_HOSTS,
	OPT_HOSTFILE,
	OPT_OVER,
	OPT_BACKEND,
	OPT_AUTO_SETUP,
	OPT_NO_AUTO_SETUP,
	OPT_OUTPUT_HOSTFILE,
	OPT_OUTPUT,
	OPT_DOT,
	OPT_ENV,
	OPT_VERBOSE,
	OPT_IGNORE_UNREACHABLE,
	OPT_JSON,
	OPT_FROM,
	OPT_SAVE,
	OPT_SSH_CONFIG,
	OPT_ACCEPT_NEW,
	OPT_CONNECT_TIMEOUT,
	OPT_COMMAND_TIMEOUT,
	OPT_VERIFY,
	OPT_SAVE_CABLING,
	OPT_EXPECT,
	OPT_FABRIC,
	OPT_SIDE_CHANNEL,
	OPT_MIN_BW,
	OPT_STARTING_PORT,
	OPT_CONNECTIONS_PER_IP,
	OPT_TIMEOUT,
	OPT_STATE_DIR,
	OPT_SUBNET,
	OPT_PERSIST,
	OPT_INTERVAL,
	OPT_COUNT,
	OPT_UNTIL_EVENT,
	OPT_MAX_RECONNECTS,
	OPT_MLX,
	OPT_REMOTE_BIN,
	OPT_PYTHON,
	OPT_DRY_RUN,
	OPT_CHECKSUM,
	OPT_VERIFY_SHA256,
	OPT_HELP,
	OPT_VERSION,
	OPT__END = -1,
};

/* What an option does with its argument, and so how it is parsed. */
enum jc_optkind {
	OPTK_FLAG,	/* bool at dest becomes true */
	OPTK_COUNT,	/* int at dest counts the uses */
	OPTK_SET,	/* int at dest becomes ival */
	OPTK_STR,	/* const char * at dest points at the argument */
	OPTK_CHOICE,	/* as OPTK_STR, the argument one of values */
	OPTK_ENV,	/* KEY=VALUE appended to the struct jc_strv at dest */
	OPTK_SECONDS,	/* double at dest, in (0, 86400] */
	OPTK_INT,	/* long at dest, in [ival, imax]; bad names the error */
	OPTK_HELP,	/* print --help and stop */
	OPTK_VERSION,	/* print the version and stop */
	OPTK__N,
};

struct jc_optdef {
	enum jc_optid id;
	const char *name;	/* long name without "--" */
	int shortopt;		/* 0 if none */
	int has_arg;		/* no_argument / required_argument */
	const char *argname;	/* "HOSTS" */
	const char *help;
	enum jc_optkind kind;
	size_t dest;		/* offsetof(struct jc_opts, ...) */
	const char *const *values;	/* OPTK_CHOICE: NULL-terminated */
	long ival, imax;	/* OPTK_SET: the value; OPTK_INT: the range */
	const char *bad;	/* OPTK_INT: "invalid port" */
};

struct jc_cmd;

/* Parsed command line. Strings point into argv unless noted. */
struct jc_opts {
	const struct jc_cmd *cmd;
	const char *hosts;		/* --hosts, default "127.0.0.1" */
	bool hosts_given;		/* --hosts was given */
	const char *hostfile;
	const char *over;		/* "thunderbolt" (default) or "ethernet" */
	const char *backend;		/* NULL: automatic */
	int auto_setup;			/* enum jc_tri; JC_UNKNOWN when not given */
	const char *output_hostfile;
	bool dot;
	struct jc_strv envs;		/* --env, in order (owned copies) */
	int verbose;
	bool ignore_unreachable;
	bool json;
	const char *from;		/* replay a probe bundle */
	const char *save;		/* save a probe bundle */
	const char *ssh_config;
	bool accept_new;
	double connect_timeout;		/* seconds, default 5 */
	double command_timeout;		/* seconds, default 60 */
	bool verify;
	const char *save_cabling;
	const char *expect;
	const char *fabric;		/* NULL: verbs when available, else tcp */
	const char *side_channel;	/* NULL: tcp */
	const char *min_bw;
	long starting_port;		/* default 32323 */
	long connections_per_ip;	/* default 1 */
	double timeout;			/* verify: bound on any wait, default 30 */
	bool mlx;			/* verify: MLX's collectives too */
	const char *remote_bin;		/* verify, launch: jaccl-config on the hosts */
	const char *python;		/* --python: the Python the jobs run */
	bool dry_run;			/* sync: print the route only */
	bool checksum;			/* sync: compare files by hash */
	bool verify_sha256;		/* sync: blobs against their names */
	const char *state_dir;
	const char *subnet;		/* --subnet CIDR: where the cables' /30s go */
	bool persist;			/* --persist: setups that survive a reboot */
	double interval;		/* watch: seconds between looks, default 2 */
	long count;			/* watch: stop after N snapshots, 0: never */
	const char *until_event;	/* watch: stop after an event of these kinds */
	long max_reconnects;		/* watch: default 10 */
	int argc;			/* positional arguments */
	char **argv;
	bool json_printed;		/* the command printed its --json document */
};

enum {
	JC_CMD_MUTATES = 1 << 0,	/* changes hosts' network state */
	JC_CMD_NEEDS_HOSTS = 1 << 1,	/* talks to hosts over SSH */
	JC_CMD_POSIX = 1 << 2,		/* options stop at the first argument */
	JC_CMD_HIDDEN_ARGS = 1 << 3,
	JC_CMD_HIDDEN = 1 << 4,		/* not in --help (build helpers) */
};

struct jc_cmd {
	const char *name;
	int (*run)(struct jc_opts *);
	const char *args;		/* positional arguments for usage */
	const char *summary;
	const enum jc_optid *opts;	/* terminated by OPT__END */
	unsigned int flags;
};

extern const struct jc_optdef jc_optdefs[];
extern const size_t jc_noptdefs;
extern const struct jc_cmd jc_cmds[];
extern const size_t jc_ncmds;

const struct jc_cmd *cli_find_cmd(const char *name);
const struct jc_optdef *cli_optdef(enum jc_optid id);

/*
 * What an option's argument is, read from its argument name in the table
 * (the name --help shows): "a|b|c" lists the values (an upper-case word
 * among them, as in "tcp|ssh|file|PATH", also allows a file), FILE and
 * PATH a file, DIR a directory, HOSTS a host list. For the completions.
 */
enum cli_argkind {
	CLI_ARG_NONE,		/* takes no argument */
	CLI_ARG_WORD,		/* free text */
	CLI_ARG_CHOICE,		/* one of *values */
	CLI_ARG_FILE,
	CLI_ARG_DIR,
	CLI_ARG_HOSTS,		/* comma separated ssh host names */
};
enum cli_argkind cli_opt_arg(const struct jc_optdef *d, struct jc_strv *values,
    bool *also_file);

/*
 * Parse argv for cmd into o. argv[0] is the program or command name.
 * Returns 0, or JC_EXIT_USAGE after printing usage and the error, or -1
 * when --help/--version was handled (the caller exits 0).
 */
int cli_parse(const struct jc_cmd *cmd, int argc, char **argv, struct jc_opts *o);
void cli_opts_free(struct jc_opts *o);

/*
 * --help: of the command only, or with only NULL the overview (the
 * commands, the options of configure that mlx.distributed_config has too,
 * the exit statuses), which `jaccl-config --help` prints.
 */
void cli_help(FILE *fp, const struct jc_cmd *only);

/* Set by main when no command was named (configure, the default, runs). */
extern bool cli_command_implicit;
void cli_usage(FILE *fp, const struct jc_cmd *cmd);

/* usage line, then "jaccl-config: error: ..."; returns JC_EXIT_USAGE */
int cli_usage_error(const struct jc_cmd *cmd, const char *fmt, ...) JC_PRINTF(2, 3);

#endif
