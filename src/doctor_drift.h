/* SPDX-License-Identifier: MIT */
/*
 * The doctor's drift and sameness checks (doctor_drift.c), entries of the
 * table of doctor.c:
 *   drift         the planned addresses, cables and bridge against the
 *                 last setup's record (struct doctor_input.record)
 *   bridge-route  bridge0 holds no address; the default route goes through
 *                 neither bridge0 nor a Thunderbolt port
 *   software      the same MLX (and Python) on every host
 *   login-env     the same MLX_* / JACCL_* variables on every host
 *   sleep         no Mac sleeps when idle (pmset sleep 0)
 *   firewall      no Mac's application firewall blocks incoming connections
 */
#ifndef JC_DOCTOR_DRIFT_H
#define JC_DOCTOR_DRIFT_H

#include "doctor.h"

void doctor_chk_drift(const struct doctor_input *in, struct doctor_report *r);
void doctor_chk_bridge_route(const struct doctor_input *in, struct doctor_report *r);
void doctor_chk_software(const struct doctor_input *in, struct doctor_report *r);
void doctor_chk_login_env(const struct doctor_input *in, struct doctor_report *r);
void doctor_chk_sleep(const struct doctor_input *in, struct doctor_report *r);
void doctor_chk_firewall(const struct doctor_input *in, struct doctor_report *r);

/* doctor_sudo.c: each host's sudo mode and what its rule leaves out. */
void doctor_chk_sudo(const struct doctor_input *in, struct doctor_report *r);

#endif
