/* SPDX-License-Identifier: MIT */
/*
 * The replay transport: a saved probe bundle stands for the hosts. It
 * reaches no host (connect fails: there is nothing to run a command on);
 * saved_raw gives each host's outputs as the probe saved them.
 */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "bundle.h"
#include "transport.h"
#include "util.h"

static int
replay_connect(struct jc_transport *t, const char *host, const char *user, int port,
    struct jc_conn **out, struct jc_err *err)
{
	(void)user;
	(void)port;
	*out = NULL;
	return jc_fail(err, TR_ECONNECT, "%s: replaying the bundle %s: no host to connect to",
	    host, (const char *)t->priv);
}

static int
replay_saved_raw(struct jc_transport *t, const char *host, struct jc_raw *raw, struct jc_err *err)
{
	return bundle_load_host(t->priv, host, raw, err);
}

static void
replay_free(struct jc_transport *t)
{
	free(t->priv);
	free(t);
}

static const struct jc_transport_ops replay_ops = {
	.name = "replay",
	.connect = replay_connect,
	.saved_raw = replay_saved_raw,
	.free = replay_free,
};

struct jc_transport *
transport_replay_new(const char *dir)
{
	struct jc_transport *t = xcalloc(1, sizeof(*t));

	t->ops = &replay_ops;
	t->priv = xstrdup(dir);
	return t;
}
