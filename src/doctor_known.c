/* SPDX-License-Identifier: MIT */
/* The known MLX bugs of the hosts' versions (doctor_known.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "doctor_known.h"
#include "mlx_bugs.h"

/* The backend the job runs: --backend, else the hostfile's, else NULL. */
static const char *
job_backend(const struct doctor_input *in)
{
	if (in->backend != NULL && *in->backend != '\0')
		return in->backend;
	if (in->hf != NULL && in->hf->backend != NULL && *in->hf->backend != '\0')
		return in->hf->backend;
	return NULL;
}

static void
one_bug(const struct doctor_input *in, struct doctor_report *r, const struct mlx_bug *bug,
    const char *backend)
{
	size_t *hs = xcalloc(in->n + 1, sizeof(*hs)), nh = 0;
	struct jc_buf who = { 0 }, names = { 0 };

	for (size_t i = 0; in->sw != NULL && i < in->n; i++) {
		const struct jc_sw *sw = &in->sw[i];

		if (!doctor_probed(&in->hosts[i]) || !sw->gathered || sw->mlx != JC_YES ||
		    sw->mlx_version == NULL || !mlx_bug_affects(bug, sw->mlx_version))
			continue;
		hs[nh++] = i;
		buf_printf(&who, "%s%s %s", who.len ? ", " : "", in->hosts[i].name,
		    sw->mlx_version);
		buf_printf(&names, "%s%s", names.len ? ", " : "", in->hosts[i].name);
	}
	if (nh > 0 && (backend == NULL || strcmp(backend, bug->backend) == 0)) {
		char *fix = xasprintf("python3 -m pip install mlx==%s (on %s)", bug->fixed_in,
		    names.data);

		if (backend != NULL)
			doctor_add(r, DOCTOR_ERROR, -1, hs, nh, fix, "MLX %s to %s has %s with the "
			    "%s backend, which this cluster uses: %s (here: %s; fixed in %s)",
			    bug->first, bug->last, bug->issue, bug->backend, bug->symptom,
			    who.data, bug->fixed_in);
		else
			doctor_add(r, DOCTOR_WARNING, -1, hs, nh, fix, "MLX %s to %s has %s with the "
			    "%s backend (give --hostfile to know the backend): %s (here: %s; fixed "
			    "in %s)", bug->first, bug->last, bug->issue, bug->backend,
			    bug->symptom, who.data, bug->fixed_in);
		free(fix);
	}
	buf_free(&who);
	buf_free(&names);
	free(hs);
}

void
doctor_mlx_known_bugs(const struct doctor_input *in, struct doctor_report *r)
{
	struct jc_err err = { 0 };
	const struct mlx_bugs *t = mlx_bugs_builtin(&err);

	if (t == NULL) {
		doctor_add(r, DOCTOR_UNKNOWN, -1, NULL, 0, NULL, "known MLX bugs unknown: %s",
		    err.msg);
		return;
	}
	for (size_t k = 0; k < t->n; k++)
		one_bug(in, r, &t->v[k], job_backend(in));
}
