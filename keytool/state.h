/*
 * state.h - what the keytool commands that work on the authority's store
 * share (audit, sessions, throttle, backup, restore, and retire's look at
 * the audit trail): naming the store (a state directory's SQLite file or a
 * PostgreSQL server) and opening it through store/db.h with an
 * administrator's error messages, making stored strings safe for a
 * terminal, times, JSON Lines output, and parsing the times and numbers
 * those commands take.
 *
 * Owns no state. It never migrates or creates a database: the running
 * server owns the schema, and a keytool of another version must not
 * change a store under it. It never prints a PostgreSQL connection
 * string: one may carry a password.
 */
#ifndef VEP_KT_STATE_H
#define VEP_KT_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

struct db;

/* Exit codes, as kt.h's (this file's users do not link kt.h's io.c). */
#define KT_STATE_EXIT_OK 0
#define KT_STATE_EXIT_NONE 1    /* nothing matched (revoke an unknown id) */
#define KT_STATE_EXIT_USAGE 2   /* usage, I/O or database error */

/* How long a writing command waits for the server's write lock (ms): the
 * server holds it for one transaction at a time, well under a second. */
#define KT_STATE_BUSY_TIMEOUT_MS 10000
/* The instance name audit rows written by vep-keytool carry. */
#define KT_STATE_INSTANCE "vep-keytool"
/* Room for one formatted time, with gcc's worst case for each int field. */
#define KT_STATE_TIME_BUF 96
/* Latest absolute time accepted (seconds: 9999-12-31T23:59:59Z). */
#define KT_STATE_TIME_MAX_S 253402300799LL

/* The store a command works on, as its options name it: --state DIR (the
 * SQLite file DIR/DB_FILE_NAME) or --database CONNINFO (the PostgreSQL
 * store a libpq keyword/value string or postgresql:// URI names). Exactly
 * one is set once kt_store_check passed. conninfo may carry a password:
 * messages call it "the PostgreSQL store", never print it. */
struct kt_store {
	const char *state_dir;
	const char *conninfo;
};

/* The getopt_long values of the two options, for every command's table. */
#define KT_STORE_OPT_STATE 's'
#define KT_STORE_OPT_DATABASE 'D'

enum kt_state_mode {
	KT_STATE_READ,    /* read-only: never writes the file */
	KT_STATE_WRITE,   /* read-write, exact schema version, no migration */
};

/* Whether store names exactly one store: --state or --database, not
 * both, not neither, not empty. Returns 0, or prints why not ("vep-keytool
 * CMD: give exactly one of --state DIR and --database CONNINFO") and
 * returns KT_STATE_EXIT_USAGE. */
int kt_store_check(const char *cmd, const struct kt_store *store);

/* Opens the store for command cmd ("sessions"). Prints the reason on
 * failure ("vep-keytool CMD: cannot open DIR/authority.db: ..." or "...
 * cannot open the PostgreSQL store: ..."), and returns 0 or the error.
 * *out is set only on success. */
int kt_state_open(const char *cmd, const struct kt_store *store, enum kt_state_mode mode,
    struct db **out);

/* Prints "vep-keytool CMD: <srv_strerror(err)>" and returns
 * KT_STATE_EXIT_USAGE. */
int kt_state_fail(const char *cmd, int err);

/* Copies s into buf (buflen bytes with the NUL, truncating) with control
 * characters and DEL as '?', so a stored name cannot drive the terminal.
 * Returns buf, or "-" for NULL. */
const char *kt_state_printable(const char *s, char *buf, size_t buflen);

/* Formats ms since the epoch as ISO-8601 UTC with milliseconds. */
void kt_state_time_ms(int64_t ms, char out[KT_STATE_TIME_BUF]);

/* Prints o as one compact line of JSON (JSON Lines). Steals o (NULL is
 * VEP_ERR_NOMEM). Returns 0, VEP_ERR_NOMEM or VEP_ERR_IO. */
int kt_state_print_json(json_t *o);

/* Parses TIME relative to now_s into *out_s (seconds since the epoch):
 * ISO-8601 UTC "YYYY-MM-DD", "YYYY-MM-DDTHH:MM[:SS][Z]"; epoch seconds
 * (digits only); or an age "N" followed by s, m, h, d or w ("1h", "7d"),
 * meaning now_s minus that. Returns 0 or VEP_ERR_INVALID. */
int kt_state_parse_time(const char *s, int64_t now_s, int64_t *out_s);

/* Parses a decimal count of 1..max. Returns 0 or VEP_ERR_INVALID. */
int kt_state_parse_count(const char *s, int64_t max, int64_t *out);

#endif
