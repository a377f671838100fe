/* SPDX-License-Identifier: MIT */
/*
 * The doctor's sudo check: each host's sudo mode (parse_sudo.h) and, for a
 * host whose rule allows some commands only, the commands of its setup
 * (and of what undoes it) the rule leaves out.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "doctor_drift.h"
#include "parse_sudo.h"
#include "plan.h"
#include "sudo_rule.h"

#define SUDO_FIX "jaccl-config sudoers --hosts HOSTS > jaccl-config.sudoers; then on the " \
	"host: sudo visudo -cf jaccl-config.sudoers && sudo install -m 0440 " \
	"jaccl-config.sudoers /etc/sudoers.d/jaccl-config"

static const struct plan_host *
plan_of(const struct plan *p, size_t host)
{
	for (size_t k = 0; p != NULL && k < p->n; k++)
		if (p->hosts[k].host == host)
			return &p->hosts[k];
	return NULL;
}

void
doctor_chk_sudo(const struct doctor_input *in, struct doctor_report *r)
{
	struct plan *p = NULL;
	struct jc_err err = { 0 };

	if (in->g != NULL && plan_build(in->g, &p, &err) != 0)
		p = NULL;
	for (size_t i = 0; i < in->n; i++) {
		const struct jc_host *h = &in->hosts[i];
		const struct plan_host *ph = plan_of(p, i);
		struct jc_strv miss = { 0 };
		struct jc_buf b = { 0 };

		if (!doctor_probed(h))
			continue;
		switch (h->sudo_mode) {
		case JC_SUDO_ALL:
			doctor_add(r, DOCTOR_OK, (long)i, NULL, 0, NULL,
			    "sudo: all (every command without a password)");
			break;
		case JC_SUDO_NONE:
			doctor_add(r, DOCTOR_WARNING, (long)i, NULL, 0, SUDO_FIX,
			    "sudo: none (a password for every command): --auto-setup prints "
			    "the setup instead of running it");
			break;
		case JC_SUDO_SCOPED:
			if (ph == NULL) {
				doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
				    "sudo: scoped; what a setup needs is unknown (no plan: %s)",
				    in->g == NULL ? "no cable graph" : "no cable on this host");
				break;
			}
			if (sudo_plan_missing(ph, h, &miss) == 0) {
				doctor_add(r, DOCTOR_OK, (long)i, NULL, 0, NULL,
				    "sudo: scoped (the rule allows every command of the setup and "
				    "of its undo without a password)");
				break;
			}
			for (size_t k = 0; k < miss.n; k++)
				buf_printf(&b, "%s%s", k ? ", " : "", miss.v[k]);
			doctor_add(r, DOCTOR_WARNING, (long)i, NULL, 0, SUDO_FIX,
			    "sudo: scoped, but the rule does not allow without a password: %s",
			    b.data);
			break;
		default:
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
			    "sudo: unknown (%s not captured)", SUDO_PROBE_CMD);
			break;
		}
		strv_free(&miss);
		buf_free(&b);
	}
	plan_free(p);
}
