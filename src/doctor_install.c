/* SPDX-License-Identifier: MIT */
/*
 * The install check: see doctor_install.h. A host without jaccl-config,
 * or with another version, is a warning (verify and launch -- jaccl-config
 * stop there, MLX's own jobs do not need it); the fix is Homebrew's, or
 * --remote-bin naming one elsewhere.
 */
#include "config.h"

#include <string.h>

#include "doctor_install.h"

void
doctor_chk_install(const struct doctor_input *in, struct doctor_report *r)
{
	static const char want[] = JC_PROG " " PACKAGE_VERSION;

	for (size_t i = 0; i < in->n; i++) {
		const struct jc_sw *sw = in->sw ? &in->sw[i] : NULL;

		if (!doctor_probed(&in->hosts[i]))
			continue;
		if (sw == NULL || !sw->gathered || sw->install == JC_UNKNOWN) {
			const char *why = SW_INSTALL " not captured";

			for (size_t k = 0; sw != NULL && k < sw->why.n; k++)
				if (strncmp(sw->why.v[k], SW_INSTALL, strlen(SW_INSTALL)) == 0)
					why = sw->why.v[k];
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
			    JC_PROG " on the host unknown: %s", why);
		} else if (sw->install == JC_NO) {
			doctor_add(r, DOCTOR_WARNING, (long)i, NULL, 0, "brew install " JC_PROG
			    " on the host, or pass --remote-bin PATH to verify and launch",
			    "no " JC_PROG " on the PATH of SSH commands, in /opt/homebrew/bin or "
			    "in /usr/local/bin: verify cannot start its ranks here");
		} else if (strcmp(sw->install_version, want) != 0) {
			const char *v = sw->install_version;

			doctor_add(r, DOCTOR_WARNING, (long)i, NULL, 0, "brew upgrade " JC_PROG
			    " (the same version on every host), or pass --remote-bin PATH "
			    "naming one of this version",
			    "%s is %s, not %s as here: verify refuses to start it",
			    sw->install_path, *v ? v : "of no version it says", want);
		} else {
			doctor_add(r, DOCTOR_OK, (long)i, NULL, 0, NULL, "%s (%s)",
			    sw->install_path, sw->install_version);
		}
	}
}
