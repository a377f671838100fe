/* SPDX-License-Identifier: MIT */
/*
 * The restore command: undo the last setup from the state each host had
 * before it (saved by configure --auto-setup in the state directory), on
 * every saved host at once, or only on the hosts named with --hosts or
 * --hostfile. Each host is compared with its saved state and only what
 * differs is changed back.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "apply.h"
#include "cmd.h"

static void
restore_event(void *arg, const struct apply_event *ev)
{
	(void)arg;
	if (ev->kind == APPLY_EV_UNDO)
		out_cmd_echo(ev->host, ev->command, NULL);
	else if (ev->kind == APPLY_EV_FAILED)
		jc_error(ev->host, "%s failed (exit %d)%s%s", ev->command, ev->status,
		    ev->stderr_text && *ev->stderr_text ? ": " : "",
		    ev->stderr_text ? ev->stderr_text : "");
	fflush(stderr);
}

/* The host names selected on the command line, or none (all saved hosts). */
static int
selected(struct jc_opts *o, struct jc_strv *names)
{
	struct cli_hosts h;
	int rc = cli_hosts_load(o, CLI_HOSTS_ONLY_GIVEN, &h);

	for (size_t i = 0; rc == 0 && i < h.n; i++)
		strv_push(names, h.v[i].name);
	cli_hosts_clear(&h);
	return rc;
}

int
cmd_restore(struct jc_opts *o)
{
	struct apply_opts ao = cli_apply_opts(o, restore_event);
	struct apply_restored *res = NULL;
	struct jc_strv names = { 0 };
	struct jc_err err = { 0 };
	const char *why = NULL;
	size_t n = 0;
	int rc;

	if (o->argc > 0)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[0]);
	if (o->from != NULL)
		return cli_usage_error(o->cmd, "restore changes live hosts; --from cannot be used");
	if ((rc = selected(o, &names)) != 0)
		return rc;
	if (cli_tr_init() != 0) {
		strv_free(&names);
		return JC_EXIT_FAIL;
	}
	rc = apply_restore(&ao, (const char *const *)names.v, names.n, &res, &n, &why, &err);
	tr_global_cleanup();
	strv_free(&names);
	if (rc != 0) {
		jc_error(NULL, "%s", err.msg);
		return JC_EXIT_FAIL;
	}
	if (why != NULL) {
		char *dir = apply_state_dir(&ao);

		printf("nothing to restore: %s (state directory %s)\n", why, dir);
		free(dir);
		return JC_EXIT_OK;
	}
	for (size_t i = 0; i < n; i++) {
		if (res[i].error != NULL) {
			jc_error(res[i].name, "not restored: %s", res[i].error);
			rc = JC_EXIT_FAIL;
		} else if (res[i].ran == 0) {
			printf("%s: already as saved, nothing to change\n", res[i].name);
		} else {
			printf("%s: restored (%zu command%s)\n", res[i].name, res[i].ran,
			    res[i].ran == 1 ? "" : "s");
		}
	}
	apply_restored_free(res, n);
	return rc;
}
