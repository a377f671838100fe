/* SPDX-License-Identifier: MIT */
/*
 * verify's hint when the ranks could not reach rank 0's coordinator port
 * (verify_firewall_hint): it names rank 0's host and the jaccl-config
 * there for socketfilterfw --add and --unblockapp, and says nothing when
 * the failure is another. The failures are the words of the TCP side
 * channel (plugins/sidechan-tcp.c), in the report's places.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "../tap.h"
#include "cmd.h"

/* The hint of report; *host a copy of rank 0's host (the report is gone). */
static char *
hint_of(const char *report, const char *bin, const char **host)
{
	static char name[64];
	json_t *rep = json_loads(report, 0, NULL);
	const char *h0 = NULL;
	char *h = rep ? verify_firewall_hint(rep, bin, &h0) : NULL;

	snprintf(name, sizeof(name), "%s", h0 ? h0 : "");
	*host = name;
	json_decref(rep);
	return h;
}

int
main(void)
{
	static const char rank1[] = "{\"hosts\": [\"mac1\", \"mac2\"], \"failures\": "
	    "[\"rank 1 (mac2) exited with code 1\"], \"processes\": [{\"host\": \"mac1\", "
	    "\"stderr_tail\": []}, {\"host\": \"mac2\", \"stderr_tail\": [\"jaccl-config: "
	    "Couldn't connect (error: 110): the coordinator 10.0.0.1:32323 did not accept "
	    "within 30 s\"]}]}";
	static const char rank0[] = "{\"hosts\": [\"mac1\", \"mac2\"], \"failures\": "
	    "[\"side channel: 1 rank(s) did not connect to the coordinator within 30 s "
	    "(missing: rank 1)\"]}";
	static const char other[] = "{\"hosts\": [\"mac1\", \"mac2\"], \"failures\": "
	    "[\"rank 1 (mac2) exited with code 127\"], \"processes\": [{\"host\": \"mac2\", "
	    "\"stderr_tail\": [\"zsh:1: command not found: jaccl-config\"]}]}";
	const char *host = NULL;
	char *h;

	h = hint_of(rank1, "/opt/homebrew/bin/jaccl-config", &host);
	ok(h != NULL && strstr(h, "socketfilterfw --add /opt/homebrew/bin/jaccl-config && sudo "
	    "/usr/libexec/ApplicationFirewall/socketfilterfw --unblockapp "
	    "/opt/homebrew/bin/jaccl-config") != NULL,
	    "a rank's connection refused by silence: --add and --unblockapp of the path: %s",
	    h ? h : "(none)");
	is_str(host, "mac1", "... on rank 0's host");
	free(h);
	h = hint_of(rank1, NULL, &host);
	ok(h != NULL && strstr(h, "--add \"$(command -v jaccl-config)\"") != NULL,
	    "no known path: the host's own jaccl-config");
	free(h);
	h = hint_of(rank0, "/opt/homebrew/bin/jaccl-config", &host);
	ok(h == NULL, "rank 0's missing rank alone (it may never have started): no hint");
	free(h);
	h = hint_of(rank1, "jaccl-config; rm -rf /", &host);
	ok(h != NULL && strstr(h, "rm -rf") == NULL, "a path with shell syntax is not repeated");
	free(h);
	h = hint_of(other, "/opt/homebrew/bin/jaccl-config", &host);
	ok(h == NULL, "another failure (exit 127): no firewall hint");
	free(h);
	return done_testing();
}
