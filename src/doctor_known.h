/* SPDX-License-Identifier: MIT */
/*
 * The doctor's part that reads the table of known MLX bugs (mlx_bugs.h):
 * run by the software check, after the versions were compared.
 */
#ifndef JC_DOCTOR_KNOWN_H
#define JC_DOCTOR_KNOWN_H

#include "doctor.h"

/*
 * For every bug of the built-in table that a host's MLX version has: an
 * error when the hostfile's backend (or --backend) is the bug's, naming
 * the hosts, their versions, the issue and the release to install; a
 * warning when the backend is not known (no hostfile); nothing when the
 * cluster uses another backend.
 */
void doctor_mlx_known_bugs(const struct doctor_input *in, struct doctor_report *r);

#endif
