/* SPDX-License-Identifier: MIT */
/*
 * The doctor's other-managers check: on each Mac, the other tools that
 * manage its network and undo a setup (parse_mgr.h: exo's and OdyssAI-X's
 * LaunchDaemons, their network locations, oMLX's network services), each
 * with the commands that remove it. One that acts now is an error (it is
 * also what makes --persist refuse); a daemon's plist not loaded (it is at
 * the next boot) and an active location of no known tool are warnings.
 */
#ifndef JC_DOCTOR_MANAGERS_H
#define JC_DOCTOR_MANAGERS_H

#include "doctor.h"

void doctor_chk_managers(const struct doctor_input *in, struct doctor_report *r);

#endif
