/* SPDX-License-Identifier: MIT */
/*
 * What the last setup recorded, read back for the doctor's drift check:
 * the state directory's last-setup.json (its status and hosts) and, for
 * each host, the planned addresses of its file under hosts/ (interface,
 * address, the peer's address on the same cable). apply_state.c writes
 * these files; this module only reads them, validating every name as
 * restore does. The parsers are pure (a buffer in); setup_record_load()
 * reads the files.
 *
 * A host set up with --persist has a "services" fact (the network services
 * before the setup): persisted is set, and the drift check then also
 * compares the host's network services of ours with the planned addresses.
 */
#ifndef JC_SETUP_RECORD_H
#define JC_SETUP_RECORD_H

#include "jc.h"
#include "util.h"

/* Files larger than this are refused. */
#define SETUP_RECORD_MAX_SIZE ((size_t)4 << 20)

struct setup_rec_host {
	char *name;		/* the host as the setup named it */
	char *os;		/* "macos", "linux" */
	bool restored;		/* restore has put it back: nothing to compare */
	struct jc_strv ifaces;	/* planned address k: interface, */
	struct jc_strv ips;	/* its address (dotted), */
	struct jc_strv peers;	/* the address of the other end of the cable */
	bool persisted;		/* set up with --persist (a "services" fact) */
};

struct setup_record {
	char *status;		/* "applied", "in-progress", "rolled-back", "restored", ... */
	char *started;		/* when the setup began (UTC text), or NULL */
	struct setup_rec_host *hosts;
	size_t n;
};

/*
 * Parse last-setup.json (len bytes of buf, reported as name) into rec
 * (zeroed): status, started, and one host per entry with its name and
 * restored flag; files receives each entry's file name (relative to the
 * state directory, "hosts/N-NAME.json", validated). Returns 0, or
 * negative with err filled.
 */
int setup_record_parse_last(const char *buf, size_t len, const char *name,
    struct setup_record *rec, struct jc_strv *files, struct jc_err *err);

/*
 * Parse one host file into h (its name and restored flag kept): os and
 * the planned addresses. The file's "host" must be h->name when that is
 * set. Returns 0, or negative with err filled.
 */
int setup_record_parse_host(const char *buf, size_t len, const char *name,
    struct setup_rec_host *h, struct jc_err *err);

/*
 * Whether f names a host's file of the state directory as apply names them
 * ("hosts/N-NAME.json": one plain word below hosts/, not hidden), so that
 * a record read back cannot point outside hosts/. A name with ".." inside
 * is fine: "hosts/0-mini1..json" is the file of the host "mini1.".
 */
bool setup_record_file_ok(const char *f);

/*
 * Read the record of the state directory dir. Returns 0 with *out set, or
 * 0 with *out NULL when dir holds no setup (no last-setup.json), or
 * negative with err filled (unreadable or invalid files).
 */
int setup_record_load(const char *dir, struct setup_record **out, struct jc_err *err);

void setup_record_free(struct setup_record *rec);

#endif
