/* SPDX-License-Identifier: MIT */
/*
 * What every part of a setup shares to run commands on the hosts: the
 * check of a command's words and its line (with `sudo -n`), the events,
 * the abort flag and the timeout of a run, and its transport.
 */
#include "config.h"

#include <pthread.h>
#include <string.h>

#include "apply_int.h"

/* argv as one command line, with -n after sudo (never a prompt). New string. */
char *
ap_argv_line(char *const *argv, size_t argc)
{
	struct jc_buf b = { 0 };

	buf_puts(&b, "");
	for (size_t k = 0; k < argc; k++) {
		if (k > 0)
			buf_puts(&b, " ");
		jc_shell_word(&b, argv[k]);
		if (k == 0 && strcmp(argv[0], "sudo") == 0)
			buf_puts(&b, " -n");
	}
	return buf_steal(&b);
}

void
ap_emit(struct ap_run *run, enum apply_ev_kind kind, const char *host, const char *cmd, int status,
    const char *errtext)
{
	struct apply_event ev = { kind, host, cmd, status, errtext };

	if (run->o->event == NULL)
		return;
	pthread_mutex_lock(&run->lock);
	run->o->event(run->o->arg, &ev);
	pthread_mutex_unlock(&run->lock);
}

double
ap_cmd_timeout(const struct apply_opts *o)
{
	return o->command_timeout > 0 ? o->command_timeout : 60;
}

void
ap_trim(char *s)
{
	size_t l = strlen(s);

	while (l > 0 && (s[l - 1] == '\n' || s[l - 1] == '\r' || s[l - 1] == ' '))
		s[--l] = '\0';
}

/*
 * A word safe in a command line: a plain word, an option such as "-n", or
 * a network service or port name (ap_argv_line quotes it).
 */
bool
ap_word_ok(const char *w)
{
	if (w[0] == '-') {
		for (const char *p = w + 1; *p; p++)
			if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
			    (*p >= '0' && *p <= '9')))
				return false;
		return w[1] != '\0';
	}
	return jc_plain_word(w) || jc_service_name_ok(w) || jc_file_text_ok(w) ||
	    strcmp(w, JC_WRITE_SCRIPT) == 0;
}

bool
ap_aborted(struct ap_run *run)
{
	bool stop;

	pthread_mutex_lock(&run->lock);
	stop = run->abort;
	pthread_mutex_unlock(&run->lock);
	return stop;
}

struct jc_transport *
ap_transport_of(const struct apply_opts *o, struct jc_transport **own)
{
	*own = NULL;
	if (o->transport != NULL)
		return o->transport;
	return *own = transport_ssh_new(&o->tr);
}
