/*
 * state.h - what the keytool commands that work on the authority's state
 * directory share (audit, sessions, throttle, backup, restore): opening
 * its database through store/db.h with an administrator's error messages,
 * making stored strings safe for a terminal, times, JSON Lines output, and
 * parsing the times and numbers those commands take.
 *
 * Owns no state. It never migrates or creates a database: the running
 * server owns the schema, and a keytool of another version must not
 * change a file under it.
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
/* Room for one formatted time, with gcc's worst case for each int field. */
#define KT_STATE_TIME_BUF 96
/* Latest absolute time accepted (seconds: 9999-12-31T23:59:59Z). */
#define KT_STATE_TIME_MAX_S 253402300799LL

enum kt_state_mode {
	KT_STATE_READ,    /* read-only: never writes the file */
	KT_STATE_WRITE,   /* read-write, exact schema version, no migration */
};

/* Opens DIR's database for command cmd ("sessions"). Prints the reason on
 * failure ("vep-keytool CMD: cannot open DIR/authority.db: ..."), and
 * returns 0 or the error. *out is set only on success. */
int kt_state_open(const char *cmd, const char *state_dir, enum kt_state_mode mode,
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
