/*
 * store/sessions.c - the SQL of the sessions table: create, look up by token
 * hash, slide the idle timeout, delete, purge.
 *
 * It stores and compares only SHA-256 hashes of tokens; it must never be
 * handed, store or log a token itself, and it never reads the clock: `now`
 * comes from the caller.
 */
#include <string.h>

#include "store/internal.h"
#include "store/sessions.h"

static const char sql_insert[] =
    "INSERT INTO sessions (token_hash, email, created, last_seen,"
    " idle_s, absolute_at, expires_at)"
    " VALUES (?1, ?2, ?3, ?3, ?4, ?5, min(?3 + ?4, ?5))";
/* Everything past the newest DB_SESSIONS_PER_EMAIL_MAX of one address. */
static const char sql_trim[] =
    "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE email = ?1"
    " ORDER BY created DESC, id DESC LIMIT -1 OFFSET ?2)";
static const char sql_lookup[] =
    "SELECT id, email, created, last_seen, idle_s, absolute_at,"
    " expires_at FROM sessions WHERE token_hash = ?1";
static const char sql_touch[] =
    "UPDATE sessions SET last_seen = ?2, expires_at = min(?2 + idle_s, absolute_at)"
    " WHERE id = ?1 AND expires_at > ?2";
static const char sql_delete[] =
    "DELETE FROM sessions WHERE token_hash = ?1";
static const char sql_purge[] =
    "DELETE FROM sessions WHERE id IN (SELECT id FROM sessions"
    " WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2)";

static const char sql_count[] = "SELECT count(*) FROM sessions WHERE expires_at > ?1";
/* Live sessions for an administrator (?2 NULL: every address). */
static const char sql_list[] =
    "SELECT id, email, created, last_seen, idle_s, absolute_at, expires_at"
    " FROM sessions WHERE expires_at > ?1 AND (?2 IS NULL OR email = ?2)"
    " ORDER BY email, created, id";
static const char sql_revoke[] =
    "DELETE FROM sessions WHERE id = ?1";

static int
session_email_ok(const char *email)
{
	size_t len;

	if (email == NULL)
		return VEP_ERR_ARG;
	len = strlen(email);
	if (len == 0)
		return VEP_ERR_ARG;
	return len > DB_SESSION_EMAIL_MAX ? VEP_ERR_TOOBIG : VEP_OK;
}

int
db_session_create(struct db *db, const char *email, int64_t now,
    int64_t idle_s, int64_t absolute_s,
    const uint8_t token_hash[DB_SESSION_HASH_BYTES], int64_t *id_out)
{
	sqlite3_stmt *st;
	int64_t id = 0;
	int ret;

	if (id_out != NULL)
		*id_out = 0;
	if (db == NULL || token_hash == NULL || now < 0 ||
	    idle_s <= 0 || idle_s > DB_SESSION_LIFETIME_MAX_S ||
	    absolute_s <= 0 || absolute_s > DB_SESSION_LIFETIME_MAX_S)
		return VEP_ERR_ARG;
	if ((ret = session_email_ok(email)) != 0)
		return ret;
	if ((ret = db_tx_begin(db)) != 0)
		return ret;
	if ((ret = db_stmt(db, DB_STMT_SESSION_INSERT, sql_insert, &st)) != 0)
		goto out;
	sqlite3_bind_blob(st, 1, token_hash, DB_SESSION_HASH_BYTES, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, email, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, now);
	sqlite3_bind_int64(st, 4, idle_s);
	sqlite3_bind_int64(st, 5, now + absolute_s);
	if ((ret = db_step_done(st)) != 0)
		goto out;
	id = sqlite3_last_insert_rowid(db->conn);
	if ((ret = db_stmt(db, DB_STMT_SESSION_TRIM, sql_trim, &st)) != 0)
		goto out;
	sqlite3_bind_text(st, 1, email, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 2, DB_SESSIONS_PER_EMAIL_MAX);
	if ((ret = db_step_done(st)) != 0)
		goto out;
	if ((ret = db_tx_commit(db)) != 0)
		return ret;
	if (id_out != NULL)
		*id_out = id;
	return VEP_OK;
out:
	db_tx_rollback(db);
	return ret;
}

int
db_session_lookup(struct db *db, const uint8_t token_hash[DB_SESSION_HASH_BYTES],
    int64_t now, struct db_session *out)
{
	sqlite3_stmt *st = NULL;
	const unsigned char *email;
	int rc, ret;

	if (out == NULL)
		return VEP_ERR_ARG;
	memset(out, 0, sizeof(*out));
	if (db == NULL || token_hash == NULL)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_SESSION_LOOKUP, sql_lookup, &st)) != 0)
		return ret;
	sqlite3_bind_blob(st, 1, token_hash, DB_SESSION_HASH_BYTES, SQLITE_STATIC);
	rc = sqlite3_step(st);
	if (rc == SQLITE_DONE) {
		ret = DB_ERR_NOTFOUND;
		goto out;
	}
	if (rc != SQLITE_ROW) {
		ret = db_err(rc);
		goto out;
	}
	email = sqlite3_column_text(st, 1);
	if (email == NULL || strlen((const char *)email) > DB_SESSION_EMAIL_MAX) {
		ret = DB_ERR_CORRUPT;
		goto out;
	}
	if (sqlite3_column_int64(st, 6) <= now) {
		ret = DB_ERR_EXPIRED;
		goto out;
	}
	out->id = sqlite3_column_int64(st, 0);
	memcpy(out->email, email, strlen((const char *)email) + 1);
	out->created = sqlite3_column_int64(st, 2);
	out->last_seen = sqlite3_column_int64(st, 3);
	out->idle_s = sqlite3_column_int64(st, 4);
	out->absolute_at = sqlite3_column_int64(st, 5);
	out->expires_at = sqlite3_column_int64(st, 6);
	ret = VEP_OK;
out:
	db_stmt_done(st);
	return ret;
}

int
db_session_touch(struct db *db, struct db_session *s, int64_t now)
{
	sqlite3_stmt *st;
	int64_t exp;
	int ret;

	if (db == NULL || s == NULL || s->id <= 0)
		return VEP_ERR_ARG;
	if (now - s->last_seen < DB_SESSION_TOUCH_MIN_S)
		return VEP_OK;
	if ((ret = db_stmt(db, DB_STMT_SESSION_TOUCH, sql_touch, &st)) != 0)
		return ret;
	sqlite3_bind_int64(st, 1, s->id);
	sqlite3_bind_int64(st, 2, now);
	if ((ret = db_step_done(st)) != 0)
		return ret;
	if (sqlite3_changes(db->conn) == 0)
		return DB_ERR_NOTFOUND;
	exp = now + s->idle_s;
	s->last_seen = now;
	s->expires_at = exp < s->absolute_at ? exp : s->absolute_at;
	return VEP_OK;
}

int
db_session_delete(struct db *db, const uint8_t token_hash[DB_SESSION_HASH_BYTES])
{
	sqlite3_stmt *st;
	int ret;

	if (db == NULL || token_hash == NULL)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_SESSION_DELETE, sql_delete, &st)) != 0)
		return ret;
	sqlite3_bind_blob(st, 1, token_hash, DB_SESSION_HASH_BYTES, SQLITE_STATIC);
	if ((ret = db_step_done(st)) != 0)
		return ret;
	return sqlite3_changes(db->conn) == 0 ? DB_ERR_NOTFOUND : VEP_OK;
}

int
db_session_purge(struct db *db, int64_t now, int64_t max_rows, int64_t *count)
{
	sqlite3_stmt *st;
	int ret;

	if (count != NULL)
		*count = 0;
	if (db == NULL || max_rows <= 0)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_SESSION_PURGE, sql_purge, &st)) != 0)
		return ret;
	sqlite3_bind_int64(st, 1, now);
	sqlite3_bind_int64(st, 2, max_rows);
	if ((ret = db_step_done(st)) != 0)
		return ret;
	if (count != NULL)
		*count = sqlite3_changes(db->conn);
	return VEP_OK;
}

int
db_session_count(struct db *db, int64_t now, int64_t *count)
{
	sqlite3_stmt *st;
	int rc, ret;

	if (count == NULL)
		return VEP_ERR_ARG;
	*count = 0;
	if (db == NULL)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_SESSION_COUNT, sql_count, &st)) != 0)
		return ret;
	sqlite3_bind_int64(st, 1, now);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*count = sqlite3_column_int64(st, 0);
		ret = VEP_OK;
	} else {
		ret = db_err(rc);
	}
	db_stmt_done(st);
	return ret;
}

int
db_session_list(struct db *db, const char *email, int64_t now, db_session_cb cb, void *arg)
{
	struct db_session s;
	sqlite3_stmt *st = NULL;
	const unsigned char *e;
	int rc, ret;

	if (db == NULL || cb == NULL)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_SESSION_LIST, sql_list, &st)) != 0)
		return ret;
	sqlite3_bind_int64(st, 1, now);
	if (email != NULL)
		sqlite3_bind_text(st, 2, email, -1, SQLITE_STATIC);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		memset(&s, 0, sizeof(s));
		e = sqlite3_column_text(st, 1);
		if (e == NULL || strlen((const char *)e) > DB_SESSION_EMAIL_MAX) {
			ret = DB_ERR_CORRUPT;
			goto out;
		}
		s.id = sqlite3_column_int64(st, 0);
		memcpy(s.email, e, strlen((const char *)e) + 1);
		s.created = sqlite3_column_int64(st, 2);
		s.last_seen = sqlite3_column_int64(st, 3);
		s.idle_s = sqlite3_column_int64(st, 4);
		s.absolute_at = sqlite3_column_int64(st, 5);
		s.expires_at = sqlite3_column_int64(st, 6);
		if ((ret = cb(&s, arg)) != 0)
			goto out;
	}
	ret = rc == SQLITE_DONE ? VEP_OK : db_err(rc);
out:
	db_stmt_done(st);
	return ret;
}

int
db_session_revoke(struct db *db, int64_t id)
{
	sqlite3_stmt *st;
	int ret;

	if (db == NULL || id <= 0)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_SESSION_REVOKE, sql_revoke, &st)) != 0)
		return ret;
	sqlite3_bind_int64(st, 1, id);
	if ((ret = db_step_done(st)) != 0)
		return ret;
	return sqlite3_changes(db->conn) == 0 ? DB_ERR_NOTFOUND : VEP_OK;
}
