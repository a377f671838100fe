/* SPDX-License-Identifier: MIT */
/*
 * Probe bundles: the raw outputs of a probe saved as files, one folder per
 * host (DIR/HOST/FILE, named as the probe commands' outputs), with an
 * optional DIR/manifest.json that keeps the host order and every command's
 * exit status. A bundle replays exactly like a live probe; a folder of real
 * captures without a manifest is a bundle too.
 */
#ifndef JC_BUNDLE_H
#define JC_BUNDLE_H

#include <jansson.h>

#include "platform.h"
#include "util.h"

/* Largest output file a bundle may hold (bytes). */
#define BUNDLE_MAX_FILE (8u * 1024 * 1024)
/* Largest manifest.json. */
#define BUNDLE_MAX_MANIFEST (4u * 1024 * 1024)

/*
 * Load every regular file of DIR/HOST/ into raw (which must be empty or
 * zeroed; raw->host is set to HOST). Statuses come from DIR/manifest.json
 * when it lists them, else -1. Returns 0, or a negative value with err filled
 * (HOST not a safe name, folder missing, file too large, bad manifest). On
 * failure raw is left empty. The caller frees raw with raw_clear().
 */
int bundle_load_host(const char *dir, const char *host, struct jc_raw *raw, struct jc_err *err);

/*
 * The hosts of a bundle: the manifest's order when DIR/manifest.json
 * exists, else the sorted names of DIR's subfolders (hidden ones skipped).
 * Appends to hosts. Returns 0 or negative with err filled.
 */
int bundle_hosts(const char *dir, struct jc_strv *hosts, struct jc_err *err);

/*
 * Save n hosts' outputs as DIR/<host>/<file> and write DIR/manifest.json
 * ({"version": 1, "hosts": [{"name": H, "outputs": {F: {"status": N}}}]}).
 * DIR and the host folders are created when missing. Host and file names
 * must be safe names (bundle_name_ok) so nothing escapes DIR. Returns 0 or
 * negative with err filled.
 */
int bundle_save(const char *dir, const struct jc_raw *raws, size_t n, struct jc_err *err);

/*
 * True for a host or file name that may become one path component of a
 * bundle: jc_plain_word without '/', not "." or "..", not starting with '.'.
 */
bool bundle_name_ok(const char *s);

/*
 * Parse and check a manifest held in memory. Returns a new reference
 * (json_decref it) or NULL with err filled when it is not valid JSON or not
 * shaped as documented above.
 */
json_t *bundle_manifest_parse(const char *data, size_t len, struct jc_err *err);

/* Exit status the manifest records for HOST's FILE, or -1. */
int bundle_manifest_status(const json_t *manifest, const char *host, const char *file);

#endif
