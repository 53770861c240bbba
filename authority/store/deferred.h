/*
 * store/deferred.h - the small database writes a loop hands to its writer
 * thread and does not wait for: sliding a session's idle timer, ending a session,
 * an audit row that answers nothing, housekeeping. Each copies what it
 * needs, so the caller's memory may go at once.
 *
 * Owns those jobs. Must never be used for a write an answer depends on
 * (certificates: issuance/issuance.h; sign-in and sign-out: auth/signin.c).
 */
#ifndef AUTHORITY_STORE_DEFERRED_H
#define AUTHORITY_STORE_DEFERRED_H

#include <stdint.h>

#include "store/sessions.h"

struct db_audit_row;
struct log;
struct writer;

/* db_session_touch of a copy of s; *s gets the new expiry at once. A
 * failure is logged by nobody: the session merely ends a little early. */
void deferred_session_touch(struct writer *w, struct log *log, struct db_session *s,
    int64_t now);

/* db_session_delete of the session with this token hash. */
void deferred_session_delete(struct writer *w, struct log *log,
    const uint8_t hash[DB_SESSION_HASH_BYTES]);

/* db_audit_add of a copy of row (failures are logged). */
void deferred_audit(struct writer *w, struct log *log, const struct db_audit_row *row);

/* One bounded step of deleting dead sessions and ended throttle windows. */
void deferred_housekeeping(struct writer *w, struct log *log, int64_t now, int64_t rows);

#endif
