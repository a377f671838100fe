/* SPDX-License-Identifier: MIT */
/* The other-managers check: see doctor_managers.h. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "doctor_managers.h"
#include "parse_mgr.h"

/* Why h's managers are unknown: the probe's note, else the missing file. */
static const char *
unknown_why(const struct jc_host *h)
{
	static const char note[] = "the other network managers unknown";

	for (size_t k = 0; k < h->nnotes; k++)
		if (strncmp(h->notes[k], note, strlen(note)) == 0)
			return h->notes[k];
	return MGR_FILE " not captured (a probe made before the check)";
}

static void
one(struct doctor_report *r, size_t i, const struct jc_host *h, const struct jc_mgr *m)
{
	char *what = mgr_describe(m), *fix = mgr_remedy(m, h->automatic);
	const char *harm = mgr_harm(m);

	if (mgr_active(m))
		doctor_add(r, DOCTOR_ERROR, (long)i, NULL, 0, fix, "%s: %s", what, harm);
	else if (m->kind == JC_MGR_DAEMON)
		doctor_add(r, DOCTOR_WARNING, (long)i, NULL, 0, fix, "%s: launchd loads it at the "
		    "next boot, and then %s", what, harm);
	else
		doctor_add(r, DOCTOR_WARNING, (long)i, NULL, 0, fix, "%s: %s (if another tool "
		    "made it, go back to Automatic)", what, harm);
	free(what);
	free(fix);
}

void
doctor_chk_managers(const struct doctor_input *in, struct doctor_report *r)
{
	for (size_t i = 0; i < in->n; i++) {
		const struct jc_host *h = &in->hosts[i];

		if (!doctor_probed(h) || h->os != JC_OS_MACOS)
			continue;
		if (h->mgrs_known != JC_YES) {
			doctor_add(r, DOCTOR_UNKNOWN, (long)i, NULL, 0, NULL,
			    "other network managers unknown: %s", unknown_why(h));
			continue;
		}
		for (size_t k = 0; k < h->nmgrs; k++)
			one(r, i, h, &h->mgrs[k]);
	}
}
