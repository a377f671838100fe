/* SPDX-License-Identifier: MIT */
/*
 * The launcher: starts one rank of a command per host of a hostfile over
 * SSH with the environment mlx.launch gives it (src/launch_env.h), the way
 * mlx.launch's remote script does it (a temporary folder with a pidfile
 * and the file variables, the variables exported shell-quoted, then exec),
 * supervises the ranks (their output delivered line by line or raw, the
 * others stopped as soon as one fails, an overall bound, an interrupt
 * flag) and cleans every remote process and file up by its pidfile.
 * Library code: it reports through callbacks and results, never prints.
 */
#ifndef JC_LAUNCH_H
#define JC_LAUNCH_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "jc.h"
#include "launch_env.h"
#include "transport.h"
#include "util.h"

/* The line the remote script prints first: this mark, then its folder. */
#define LAUNCH_MARK "\036JCL "

/* What became of one rank. */
enum launch_state {
	LAUNCH_PENDING = 0,	/* not started (another host failed first) */
	LAUNCH_UNREACHABLE,	/* no SSH session (connect, host key, auth) */
	LAUNCH_NOSTART,		/* the session refused to start the command */
	LAUNCH_RUNNING,
	LAUNCH_EXITED,		/* exited by itself with status */
	LAUNCH_KILLED,		/* ended by a signal (signal set) */
	LAUNCH_STOPPED,		/* stopped by the launcher (another rank failed, interrupt, timeout) */
	LAUNCH_LOST,		/* the SSH connection broke */
	LAUNCH_NOBIN,		/* launch_opts.bin: none found, or another version */
};

struct launch_result {
	enum launch_state state;
	int status;		/* exit status when LAUNCH_EXITED, else -1 */
	char *signal;		/* "TERM" ... when LAUNCH_KILLED */
	char *error;		/* transport message when unreachable / lost / nostart */
	bool killed_left;	/* cleanup found the process still running and killed it */
	bool cleaned;		/* the cleanup command ran on the host */
	double seconds;		/* from start to end */
	char *bin;		/* launch_opts.bin: the program found on the host, or NULL */
};

/* Why the launcher stopped the ranks (launch_stop_reason()). */
enum launch_stop {
	LAUNCH_STOP_NONE = 0,
	LAUNCH_STOP_FAILED,	/* a rank failed */
	LAUNCH_STOP_INTERRUPT,	/* *interrupted became non-zero */
	LAUNCH_STOP_TIMEOUT,	/* the overall bound passed */
};

struct launch_opts {
	struct tr_opts tr;
	struct launch_env_opts env;	/* backend, --env, ports, verbose */
	char **argv;		/* the command (argv[0] .. argv[argc-1]) */
	size_t argc;
	/*
	 * When nbin > 0, argv[0] is replaced on each host by the first of
	 * bin[0..nbin) that is an executable file there (a name without '/'
	 * is looked up in the host's PATH), in the same script, and its
	 * `--version` must print bin_version as its first line: otherwise the
	 * rank ends as LAUNCH_NOBIN, its error naming what was found (path
	 * and version) or tried, and the others are stopped.
	 */
	char *const *bin;
	size_t nbin;
	const char *bin_version;
	const char *cwd;	/* cd there when it exists on the host (NULL: none) */
	double timeout;		/* bound on the whole run, seconds (<= 0: none) */
	volatile sig_atomic_t *interrupted;	/* polled every 50 ms (may be NULL) */
	bool keep_stdin;	/* else the ranks' standard input is closed at once */
	/*
	 * A rank other than 0 that exits with status 1 does not stop the
	 * others (verify: that is its verdict, and rank 0 still has the
	 * report to print); rank 0's end, any other failure, the bound and an
	 * interrupt still do.
	 */
	bool rank0_reports;
	/*
	 * Output of rank r, called from the rank's thread but never two at a
	 * time. line: one whole line of fd 1 or 2 (the last piece of a stream
	 * may lack its newline). raw, when set, receives fd 1 as it arrives
	 * instead of line. Either may be NULL (the output is dropped).
	 */
	void (*line)(void *arg, size_t rank, int fd, const char *data, size_t len);
	void (*raw)(void *arg, size_t rank, const char *data, size_t len);
	/* Rank r has ended (its result is final apart from cleanup); may be NULL. */
	void (*ended)(void *arg, size_t rank, const struct launch_result *res);
	void *arg;
};

struct launch;

/*
 * Single-quote s for a POSIX shell ('it'\''s') and append it to b.
 * Every value the launcher puts in a remote script goes through it.
 */
void launch_quote(struct jc_buf *b, const char *s);

/*
 * The remote script of one rank (a POSIX sh command line): make a
 * temporary folder (named after tag, letters and digits, when not NULL),
 * write the pidfile there and print LAUNCH_MARK and the folder, cd to cwd
 * if it exists (cwd may be NULL), export the variables of e in order (file
 * variables written into the folder), exec argv (an argv[0] of "python3"
 * is the host's Python as JC_PYTHON_FIND_SH finds it, or "python3" when it
 * finds none). Returns a new string, or
 * NULL with err filled when a key is not [A-Za-z0-9_]+, the tag is not
 * alphanumeric or argc is 0.
 */
char *launch_script(const struct launch_env *e, char *const *argv, size_t argc,
    const char *cwd, const char *tag, struct jc_err *err);

/*
 * launch_script() with argv[0] replaced by the program found on the host
 * (see launch_opts.bin): before the mark line the script prints the line
 * LAUNCH_BIN_MARK STATE PATH \036 VERSION, STATE "ok", "other" (found,
 * another version) or "none", and exits 127 unless "ok". Every value is
 * quoted; NULL with err filled as launch_script(), or when a name of bin
 * fails launch_bin_ok().
 */
#define LAUNCH_BIN_MARK "\036JCB "
char *launch_script_bin(const struct launch_env *e, char *const *argv, size_t argc,
    const char *cwd, const char *tag, char *const *bin, size_t nbin, const char *version,
    struct jc_err *err);

/*
 * Where verify and launch look for jaccl-config on a host: given alone
 * when not NULL (--remote-bin, JACCL_CONFIG_REMOTE), else JC_PROG on the
 * host's PATH, /opt/homebrew/bin, /usr/local/bin, then the running
 * program's own absolute path (jc_self_path()), appended to out.
 */
void launch_bin_candidates(const char *given, struct jc_strv *out);

/*
 * A program name for launch_opts.bin: an absolute path or a bare name
 * ([A-Za-z0-9._+-]), without control bytes, "/./" or "/../". Returns
 * false with err filled ("'...' is neither an absolute path nor a
 * program name") otherwise.
 */
bool launch_bin_ok(const char *bin, struct jc_err *err);

/*
 * The command that stops a rank's process (TERM to its process group,
 * KILL after 2 s) and removes its folder: dir (from the LAUNCH_MARK line;
 * must be a plain path the script made) or, when dir is NULL, every
 * folder made with tag (for a rank stopped before its mark line arrived).
 * Prints "1" when a process was still running, "0" otherwise. Returns a
 * new string, or NULL when neither is acceptable.
 */
char *launch_cleanup_script(const char *dir, const char *tag);

/*
 * Find the mark line in the first len bytes of a rank's standard output
 * (what the remote shell printed so far). Returns true when a whole line
 * LAUNCH_MARK DIR newline is there: *start is its offset, *end one past
 * its newline, and *dir a new string (the folder, not yet validated: see
 * launch_cleanup_script()). Returns false otherwise, *dir NULL.
 */
bool launch_find_mark(const char *buf, size_t len, size_t *start, size_t *end, char **dir);

/*
 * Prepare a launch of o->argv on every host of hf: compute the
 * environments (warnings as launch_env_compute()), check the ssh targets,
 * build the scripts. Returns 0 with *out set (release with launch_free()),
 * or -EINVAL with err filled (mlx.launch's messages for the hostfile).
 * o and hf are borrowed until launch_free().
 */
int launch_prepare(const struct jc_hostfile *hf, const struct launch_opts *o,
    struct launch **out, struct jc_strv *warnings, struct jc_err *err);

/* The backend chosen ("ring", "jaccl", "jaccl-ring"); borrowed. */
const char *launch_backend(const struct launch *l);

/* Number of ranks, and the ssh target of rank r (borrowed). */
size_t launch_nranks(const struct launch *l);
const char *launch_host(const struct launch *l, size_t r);

/* The environment rank r receives (borrowed). */
const struct launch_env *launch_env(const struct launch *l, size_t r);

/*
 * Connect to every host at once, then start every rank and supervise
 * them until all have ended: when one exits non-zero, is killed or loses
 * its connection, the others are stopped; *o->interrupted and o->timeout
 * stop them all too. Every started rank is then cleaned up on its host.
 * When a host cannot be reached no rank is started. Returns 0 when every
 * rank exited 0, else -1 (see the results and launch_stop_reason());
 * err names the first failure in words.
 */
int launch_run(struct launch *l, struct jc_err *err);

/* Result of rank r after launch_run() (borrowed). */
const struct launch_result *launch_result(const struct launch *l, size_t r);

/* Why the ranks were stopped, and which rank failed first (or -1). */
enum launch_stop launch_stop_reason(const struct launch *l, long *first_failed);

/*
 * Queue bytes for the standard input of rank r (while launch_run() runs;
 * from any thread). Dropped when the rank is not running.
 */
void launch_write(struct launch *l, size_t r, const void *data, size_t len);

/*
 * The rank whose end was the worst, or -1 when every rank exited 0: a
 * signal first, then a lost connection, a host not reached or a command
 * not started, then an exit with a non-zero status, then a rank stopped
 * by the launcher; the lowest rank among equals. mlx.launch can print
 * exit 0 while a rank died (MLX #4319): the job's status is this rank's.
 */
long launch_worst_rank(const struct launch *l);

/* Describe a result in words ("exited with code 3", "killed by SIGTERM"...); new string. */
char *launch_result_text(const struct launch_result *res);

void launch_free(struct launch *l);

/*
 * A hostfile for --hosts (mlx.launch's Hostfile.from_list): one host per
 * item, ips = [item] when it is an IP literal. Returns 0 with *out set,
 * or a negative value with err filled ("Hostname cannot be empty").
 */
int launch_hostfile_from_list(const char *list, struct jc_hostfile **out,
    struct jc_err *err);

#endif
