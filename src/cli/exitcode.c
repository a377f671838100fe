/* SPDX-License-Identifier: MIT */
/* The table of exit statuses; see exitcode.h. */
#include "config.h"

#include "exitcode.h"
#include "jc.h"
#include "util.h"

const struct jc_exit jc_exits[] = {
	{ JC_EXIT_OK, "ok", "success" },
	{ JC_EXIT_FAIL, "failed", "any other failure (an invalid hostfile or bundle, a failed probe)" },
	{ JC_EXIT_USAGE, "usage", "usage error: a bad option, value or host list" },
	{ JC_EXIT_UNREACHABLE, "unreachable", "a host could not be reached or refused the key" },
	{ JC_EXIT_CABLING, "cabling", "the cabling cannot serve the backend asked for" },
	{ JC_EXIT_SETUP_RESTORED, "setup-restored", "setup failed; every host was put back as it was" },
	{ JC_EXIT_SETUP_BROKEN, "setup-not-restored", "setup failed and a host could not be put back" },
	{ JC_EXIT_VERIFY, "verify-failed", "verification failed: a link down or under the floor" },
	{ JC_EXIT_DOCTOR, "doctor-error", "doctor found an error" },
};
const size_t jc_nexits = JC_ARRAY_LEN(jc_exits);

const char *
cli_exit_code(int status)
{
	for (size_t i = 0; i < jc_nexits; i++)
		if (jc_exits[i].status == status)
			return jc_exits[i].code;
	return "failed";
}
