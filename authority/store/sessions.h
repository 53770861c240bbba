/*
 * store/sessions.h - signed-in sessions, stored by the SHA-256 of their token.
 *
 * The database never sees a session token: the handler side draws it
 * (RAND_bytes), sets the cookie, and hands this module only its SHA-256 hash.
 * A stolen database therefore yields no usable cookie. Nor does it hold
 * anything of the CSRF token, which auth/token.h derives from the session
 * token whenever it is needed.
 * Looking a session up by the hash of the presented token is safe against
 * timing probes: the attacker does not control the hash's bytes.
 *
 * Expiry has two clocks, both in seconds since the epoch: an idle timeout
 * that slides forward when the session is used (db_session_touch) and an
 * absolute lifetime fixed at creation. A session is dead once
 * expires_at = min(last_seen + idle_s, absolute_at) is not after now.
 *
 * Every `now` is supplied by the caller (seconds since the epoch), so tests
 * can move time.
 */
#ifndef AUTHORITY_STORE_SESSIONS_H
#define AUTHORITY_STORE_SESSIONS_H

#include <stdint.h>

#include "store/db.h"

/* SHA-256 output size (bytes): the only form in which tokens are stored. */
#define DB_SESSION_HASH_BYTES 32
/* Longest e-mail address a session may carry (bytes, RFC 5321 path limit). */
#define DB_SESSION_EMAIL_MAX 254
/* Sessions one address may hold; creating one more ends its oldest (count). */
#define DB_SESSIONS_PER_EMAIL_MAX 32
/* Longest idle timeout or absolute lifetime accepted (seconds: 30 days). */
#define DB_SESSION_LIFETIME_MAX_S (30 * 24 * 3600)
/* touch writes only when last_seen is at least this old (seconds), so a busy
 * page does not cost one fsync per request; idle expiry can therefore come
 * this much early. */
#define DB_SESSION_TOUCH_MIN_S 60

struct db_session {
	int64_t id;
	char email[DB_SESSION_EMAIL_MAX + 1];
	int64_t created;      /* s */
	int64_t last_seen;    /* s */
	int64_t idle_s;
	int64_t absolute_at;  /* s: the session ends then whatever its use */
	int64_t expires_at;   /* s: min(last_seen + idle_s, absolute_at) */
};

/* Creates a session for email at now, alive for idle_s of inactivity and at
 * most absolute_s in all (each 1..DB_SESSION_LIFETIME_MAX_S). If email then
 * holds more than DB_SESSIONS_PER_EMAIL_MAX sessions, its oldest are ended
 * in the same transaction. *id_out (may be NULL) gets the new row id.
 * Errors: VEP_ERR_ARG, VEP_ERR_TOOBIG (email), VEP_ERR_EXISTS (same token
 * hash already stored), DB_ERR_BUSY, DB_ERR_FULL, VEP_ERR_IO. */
int db_session_create(struct db *db, const char *email, int64_t now,
    int64_t idle_s, int64_t absolute_s,
    const uint8_t token_hash[DB_SESSION_HASH_BYTES], int64_t *id_out);

/* Finds the live session whose token hashes to token_hash. *out is cleared
 * on entry and filled on success. Read-only: it does not extend the idle
 * timeout (see db_session_touch).
 * Returns 0, DB_ERR_NOTFOUND, DB_ERR_EXPIRED (the session existed but is
 * dead at now; it is not deleted here, purge does that), DB_ERR_BUSY. */
int db_session_lookup(struct db *db, const uint8_t token_hash[DB_SESSION_HASH_BYTES],
    int64_t now, struct db_session *out);

/* Slides the idle timeout of a session just found by db_session_lookup:
 * last_seen = now and expires_at = min(now + idle_s, absolute_at), in the
 * database and in *s. Skips the write (returns 0) when s was touched less
 * than DB_SESSION_TOUCH_MIN_S ago. Returns 0, DB_ERR_NOTFOUND (the session
 * has ended meanwhile), DB_ERR_BUSY, DB_ERR_FULL. */
int db_session_touch(struct db *db, struct db_session *s, int64_t now);

/* Ends the session with this token hash (logout). DB_ERR_NOTFOUND if none. */
int db_session_delete(struct db *db, const uint8_t token_hash[DB_SESSION_HASH_BYTES]);

/* Deletes at most max_rows sessions dead at now (bounded, so a periodic
 * timer never holds the write lock long); *count (may be NULL) gets how
 * many went. Call again while *count == max_rows. */
int db_session_purge(struct db *db, int64_t now, int64_t max_rows, int64_t *count);

/* Counts the sessions alive at now into *count (one indexed range scan). */
int db_session_count(struct db *db, int64_t now, int64_t *count);
/* Called once per session; *s is borrowed until it returns. A non-zero
 * return stops the walk and becomes db_session_list's result. It must not
 * use the same struct db. */
typedef int (*db_session_cb)(const struct db_session *s, void *arg);

/* Calls cb for every session alive at now, of email only unless NULL,
 * ordered by address, then creation. For administrators: a session is shown
 * by its row id, never by anything that leads to its token. */
int db_session_list(struct db *db, const char *email, int64_t now, db_session_cb cb,
    void *arg);

/* Ends the session with row id id (an administrator's revocation): its
 * cookie finds nothing from the server's next lookup on. Returns 0,
 * DB_ERR_NOTFOUND (no such session), VEP_ERR_ARG, DB_ERR_BUSY, DB_ERR_FULL. */
int db_session_revoke(struct db *db, int64_t id);

#endif
