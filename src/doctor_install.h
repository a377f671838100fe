/* SPDX-License-Identifier: MIT */
/*
 * The doctor's install check: where each host's jaccl-config is (the
 * places verify and launch look in) and whether it is this version, which
 * verify-rank's protocol needs. Reads struct jc_sw (parse_sw.h).
 */
#ifndef JC_DOCTOR_INSTALL_H
#define JC_DOCTOR_INSTALL_H

#include "doctor.h"

void doctor_chk_install(const struct doctor_input *in, struct doctor_report *r);

#endif
