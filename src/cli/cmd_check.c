/* SPDX-License-Identifier: MIT */
/*
 * The check command: read a hostfile, run the rules of hostfile_check.c and print
 * every problem and warning (or, with --json, one JSON report on standard
 * output). Exits 0 when the hostfile is valid, 1 when it is not.
 */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "hostfile_check.h"
#include "cmd.h"

static void
print_human(const char *path, const struct check_report *r)
{
	char *p = hostfile_printable(path, 0);
	size_t plen = strlen(p);

	for (size_t i = 0; i < r->nproblems; i++) {
		const char *m = r->problems[i].msg;

		/* syntax errors already read "PATH:LINE:COLUMN: ..." */
		if (strncmp(m, p, plen) == 0 && m[plen] == ':')
			jc_error(NULL, "%s", m);
		else
			jc_error(p, "%s", m);
	}
	for (size_t i = 0; i < r->nwarnings; i++)
		jc_warn(p, "%s", r->warnings[i].msg);

	printf("%s: %s", p, r->valid ? "valid" : "invalid");
	if (r->nproblems || r->nwarnings)
		printf(" (%zu %s, %zu %s)", r->nproblems,
		    r->nproblems == 1 ? "problem" : "problems", r->nwarnings,
		    r->nwarnings == 1 ? "warning" : "warnings");
	putchar('\n');
	printf("  backend:     %s", r->backend ? r->backend : "unknown");
	if (r->backend && r->backend_source)
		printf(" (%s)", strcmp(r->backend_source, "option") == 0 ? "from --backend" :
		    strcmp(r->backend_source, "hostfile") == 0 ? "from the hostfile" :
		    "chosen from the rdma matrix");
	putchar('\n');
	printf("  coordinator: %s\n", r->coordinator ? r->coordinator : "none");
	printf("  hosts:       %zu (%lu Mac-to-Mac %s needed for a full mesh, %zu listed)\n",
	    r->nhosts, r->mesh_links, r->mesh_links == 1 ? "link" : "links", r->cabled_pairs);
	free(p);
}

int
cmd_check(struct jc_opts *o)
{
	struct hostfile_diags d = { 0 };
	struct jc_hostfile *hf = NULL;
	struct check_report *r;
	int status;

	if (o->argc < 1)
		return cli_usage_error(o->cmd, "the following arguments are required: HOSTFILE");
	if (o->argc > 1)
		return cli_usage_error(o->cmd, "unrecognized arguments: %s", o->argv[1]);

	hostfile_load_alone(o->argv[0], &hf, &d);	/* no other thread here */
	r = check_hostfile(hf, &d, o->backend, o->starting_port);
	if (o->json) {
		json_t *j = check_report_json(r);

		out_json(j);
		o->json_printed = true;
		json_decref(j);
	} else {
		print_human(o->argv[0], r);
	}
	status = r->valid ? JC_EXIT_OK : JC_EXIT_FAIL;
	check_report_free(r);
	jc_hostfile_free(hf);
	hostfile_diags_free(&d);
	return status;
}
