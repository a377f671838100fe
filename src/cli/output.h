/* SPDX-License-Identifier: MIT */
/*
 * The one output path of the command layer. Every command builds its
 * model (a jansson tree for --json, or its own text) and hands it here:
 * out_json() renders JSON the one way (two-space indent, keys in the order
 * they were set, a final newline), out_status() turns a failed write on
 * standard output (a closed pipe, a full disk) into a failing exit status
 * with a message, and the message helpers put one line at a time on
 * standard error, prefixed with the program and the host.
 *
 * Hostfiles are not rendered here: mlx.launch reads what Python's
 * json.dump(indent=4) writes, and hostfile_write.c keeps those bytes.
 */
#ifndef JC_OUTPUT_H
#define JC_OUTPUT_H

#include <jansson.h>

#include "util.h"

/* The flags of every JSON document the commands print. */
#define OUT_JSON_FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER)

/* Print doc on standard output, then a newline. 0, or -errno (remembered). */
int out_json(const json_t *doc);

/* Flush standard output (what was printed goes before what follows on stderr). */
int out_flush(void);

/*
 * Flush standard output. When any write to it failed, say so on standard
 * error ("cannot write to standard output: No space left on device") and
 * return JC_EXIT_FAIL if rc was JC_EXIT_OK; otherwise return rc. main()
 * calls it once after the command.
 */
int out_status(int rc);

/*
 * The echo of a remote command as it runs: "[#] HOST: COMMAND" and, when
 * note is not NULL, three spaces and the note ("(undo)"). One write on
 * standard error, flushed (hosts run in parallel).
 */
void out_cmd_echo(const char *host, const char *cmd, const char *note);

/*
 * Messages of the command layer, on stderr, each prefixed with the program
 * and, when host is not NULL, the host: "jaccl-config: mac2: ...".
 */
extern int jc_verbosity;
void jc_error(const char *host, const char *fmt, ...) JC_PRINTF(2, 3);
void jc_warn(const char *host, const char *fmt, ...) JC_PRINTF(2, 3);
void jc_info(const char *host, const char *fmt, ...) JC_PRINTF(2, 3);	/* only with --verbose */

/* "jaccl-config: HOST: ..." on stderr, always (host may be NULL). */
void jc_note(const char *host, const char *fmt, ...) JC_PRINTF(2, 3);

/* A message of several lines: the first through jc_error(), the rest as they are. */
void out_error_lines(const char *msg);

/* Each string of w through jc_warn(), after prefix ("" for none). */
void out_warn_each(const struct jc_strv *w, const char *prefix);

/* Text on standard error as it is, in one write. */
void out_stderr(const char *text);

/* Keep "HOST: msg" (or msg) as the last error, for out_json_error(). */
void out_remember_error(const char *host, const char *msg);

/*
 * With --json, a command that fails before printing its document prints
 * {"error": {"code": CODE, "status": N, "message": the last error}}.
 */
void out_json_error(int status);

#endif
