/* SPDX-License-Identifier: MIT */
/*
 * One handle over every side channel: picks a built-in channel by name or
 * loads a plugin with dlopen, checks its ABI version, and turns the
 * channels' error buffers into struct jc_err.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rt_sc.h"
#include "util.h"

static bool
is_plugin(const char *name)
{
	size_t n = strlen(name);

	return strchr(name, '/') != NULL ||
	    (n > 3 && strcmp(name + n - 3, ".so") == 0) ||
	    (n > 6 && strcmp(name + n - 6, ".dylib") == 0);
}

bool
rt_sc_needs_coordinator(const char *spec)
{
	return spec == NULL || strcmp(spec, "tcp") == 0;
}

static int
load_plugin(struct rt_sc *sc, const char *path, struct jc_err *err)
{
	const struct jc_sidechan_ops *ops;
	const char *e;

	sc->dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (sc->dl == NULL) {
		e = dlerror();
		return jc_fail(err, -ENOENT, "side channel plugin %s: %s", path,
		    e ? e : "cannot be loaded");
	}
	ops = dlsym(sc->dl, JC_SIDECHAN_SYMBOL);
	if (ops == NULL)
		return jc_fail(err, -ENOENT, "side channel plugin %s does not "
		    "export the symbol %s", path, JC_SIDECHAN_SYMBOL);
	if (ops->abi_version != JC_SIDECHAN_ABI_VERSION)
		return jc_fail(err, -EPROTO, "side channel plugin %s has ABI version "
		    "%u but this jaccl-config needs version %d: rebuild it against "
		    "this sidechan.h", path, (unsigned)ops->abi_version,
		    JC_SIDECHAN_ABI_VERSION);
	if (ops->open == NULL || ops->all_gather == NULL || ops->barrier == NULL ||
	    ops->close == NULL)
		return jc_fail(err, -EPROTO, "side channel plugin %s leaves an "
		    "operation unset", path);
	sc->ops = ops;
	return 0;
}

int
rt_sc_open(struct rt_sc **out, const char *spec, const char *coordinator,
    int rank, int size, double timeout, struct jc_err *err)
{
	struct rt_sc *sc = xcalloc(1, sizeof(*sc));
	const char *eq, *params;
	char *name, eb[1024] = "";
	int r;

	*out = NULL;
	if (spec == NULL || *spec == '\0')
		spec = "tcp";
	eq = strchr(spec, '=');
	name = eq ? xstrndup(spec, (size_t)(eq - spec)) : xstrdup(spec);
	params = eq ? eq + 1 : "";
	sc->rank = rank;
	sc->size = size;
	sc->name = name;
	if (strcmp(name, "tcp") == 0) {
		sc->ops = &rt_sc_tcp_ops;
		if (eq == NULL)
			params = coordinator;
		if (params == NULL || *params == '\0') {
			r = jc_fail(err, -EINVAL, "no coordinator: set JACCL_COORDINATOR "
			    "or MLX_JACCL_COORDINATOR to the ip:port rank 0 listens "
			    "on, or pick another side channel (--side-channel ssh, "
			    "file=DIR or a plugin .so)");
			goto fail;
		}
	} else if (strcmp(name, "file") == 0) {
		sc->ops = &rt_sc_file_ops;
	} else if (strcmp(name, "ssh") == 0) {
		sc->ops = &rt_sc_ssh_ops;
	} else if (is_plugin(name)) {
		if ((r = load_plugin(sc, name, err)) < 0)
			goto fail;
	} else {
		r = jc_fail(err, -EINVAL, "unknown side channel \"%s\": use tcp, "
		    "file=DIR, ssh or the path of a plugin (.so)", name);
		goto fail;
	}
	r = sc->ops->open(&sc->ctx, rank, size, params, timeout, eb, sizeof(eb));
	if (r < 0) {
		sc->ctx = NULL;
		jc_fail(err, r, "side channel %s: %s", sc->ops->name ? sc->ops->name :
		    name, eb[0] ? eb : strerror(-r));
		goto fail;
	}
	*out = sc;
	return 0;
fail:
	rt_sc_close(sc);
	return r < 0 ? r : -EINVAL;
}

int
rt_sc_all_gather(struct rt_sc *sc, const void *src, size_t n, void *dst,
    struct jc_err *err)
{
	char eb[1024] = "";
	int r = sc->ops->all_gather(sc->ctx, src, n, dst, eb, sizeof(eb));

	if (r < 0)
		return jc_fail(err, r, "side channel %s: %s", sc->ops->name,
		    eb[0] ? eb : strerror(-r));
	return 0;
}

int
rt_sc_barrier(struct rt_sc *sc, struct jc_err *err)
{
	char eb[1024] = "";
	int r = sc->ops->barrier(sc->ctx, eb, sizeof(eb));

	if (r < 0)
		return jc_fail(err, r, "side channel %s: %s", sc->ops->name,
		    eb[0] ? eb : strerror(-r));
	return 0;
}

void
rt_sc_close(struct rt_sc *sc)
{
	if (sc == NULL)
		return;
	if (sc->ops != NULL && sc->ctx != NULL)
		sc->ops->close(sc->ctx);
	if (sc->dl != NULL)
		dlclose(sc->dl);
	free(sc->name);
	free(sc);
}
