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

/* min() is spelled as CASE: SQLite's min(a, b) is PostgreSQL's least(). */
static const struct db_sql sql_insert = {
	"INSERT INTO sessions (token_hash, email, created, last_seen,"
	" idle_s, absolute_at, expires_at)"
	" VALUES (?1, ?2, ?3, ?3, ?4, ?5, CASE WHEN ?3 + ?4 < ?5 THEN ?3 + ?4 ELSE ?5 END)"
	" RETURNING id", NULL
};
/* Everything past the newest DB_SESSIONS_PER_EMAIL_MAX of one address. */
static const struct db_sql sql_trim = {
	"DELETE FROM sessions WHERE email = ?1 AND id NOT IN (SELECT id FROM sessions"
	" WHERE email = ?1 ORDER BY created DESC, id DESC LIMIT ?2)", NULL
};
static const struct db_sql sql_lookup = {
	"SELECT id, email, created, last_seen, idle_s, absolute_at,"
	" expires_at FROM sessions WHERE token_hash = ?1", NULL
};
static const struct db_sql sql_touch = {
	"UPDATE sessions SET last_seen = ?2, expires_at = CASE WHEN ?2 + idle_s < absolute_at"
	" THEN ?2 + idle_s ELSE absolute_at END WHERE id = ?1 AND expires_at > ?2", NULL
};
static const struct db_sql sql_delete = {
	"DELETE FROM sessions WHERE token_hash = ?1", NULL
};
static const struct db_sql sql_purge = {
	"DELETE FROM sessions WHERE id IN (SELECT id FROM sessions"
	" WHERE expires_at <= ?1 ORDER BY expires_at LIMIT ?2)", NULL
};
static const struct db_sql sql_count = {
	"SELECT count(*) FROM sessions WHERE expires_at > ?1", NULL
};
/* Live sessions for an administrator (?2 NULL: every address). */
static const struct db_sql sql_list = {
	"SELECT id, email, created, last_seen, idle_s, absolute_at, expires_at"
	" FROM sessions WHERE expires_at > ?1 AND (CAST(?2 AS TEXT) IS NULL OR email = ?2)"
	" ORDER BY email, created, id", NULL
};
static const struct db_sql sql_revoke = {
	"DELETE FROM sessions WHERE id = ?1", NULL
};

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
	struct db_st *st;
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
	if ((ret = db_stmt(db, DB_STMT_SESSION_INSERT, &sql_insert, &st)) != 0)
		goto out;
	db_st_blob(st, 1, token_hash, DB_SESSION_HASH_BYTES);
	db_st_text(st, 2, email);
	db_st_int(st, 3, now);
	db_st_int(st, 4, idle_s);
	db_st_int(st, 5, now + absolute_s);
	if ((ret = db_st_step(st)) == DB_ROW)
		id = db_st_col_int(st, 0);
	db_stmt_done(st);
	if (ret != DB_ROW) {
		if (ret == 0)
			ret = DB_ERR_INTERNAL;
		goto out;
	}
	if ((ret = db_stmt(db, DB_STMT_SESSION_TRIM, &sql_trim, &st)) != 0)
		goto out;
	db_st_text(st, 1, email);
	db_st_int(st, 2, DB_SESSIONS_PER_EMAIL_MAX);
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
	struct db_st *st = NULL;
	const char *email;
	int rc, ret;

	if (out == NULL)
		return VEP_ERR_ARG;
	memset(out, 0, sizeof(*out));
	if (db == NULL || token_hash == NULL)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_SESSION_LOOKUP, &sql_lookup, &st)) != 0)
		return ret;
	db_st_blob(st, 1, token_hash, DB_SESSION_HASH_BYTES);
	rc = db_st_step(st);
	if (rc != DB_ROW) {
		ret = rc == 0 ? DB_ERR_NOTFOUND : rc;
		goto out;
	}
	email = db_st_col_text(st, 1);
	if (email == NULL || strlen(email) > DB_SESSION_EMAIL_MAX) {
		ret = DB_ERR_CORRUPT;
		goto out;
	}
	if (db_st_col_int(st, 6) <= now) {
		ret = DB_ERR_EXPIRED;
		goto out;
	}
	out->id = db_st_col_int(st, 0);
	memcpy(out->email, email, strlen(email) + 1);
	out->created = db_st_col_int(st, 2);
	out->last_seen = db_st_col_int(st, 3);
	out->idle_s = db_st_col_int(st, 4);
	out->absolute_at = db_st_col_int(st, 5);
	out->expires_at = db_st_col_int(st, 6);
	ret = VEP_OK;
out:
	db_stmt_done(st);
	return ret;
}

int
db_session_touch(struct db *db, struct db_session *s, int64_t now)
{
	struct db_st *st;
	int64_t exp;
	int ret;

	if (db == NULL || s == NULL || s->id <= 0)
		return VEP_ERR_ARG;
	if (now - s->last_seen < DB_SESSION_TOUCH_MIN_S)
		return VEP_OK;
	if ((ret = db_stmt(db, DB_STMT_SESSION_TOUCH, &sql_touch, &st)) != 0)
		return ret;
	db_st_int(st, 1, s->id);
	db_st_int(st, 2, now);
	if ((ret = db_step_done(st)) != 0)
		return ret;
	if (db_st_changes(st) == 0)
		return DB_ERR_NOTFOUND;
	exp = now + s->idle_s;
	s->last_seen = now;
	s->expires_at = exp < s->absolute_at ? exp : s->absolute_at;
	return VEP_OK;
}

int
db_session_delete(struct db *db, const uint8_t token_hash[DB_SESSION_HASH_BYTES])
{
	struct db_st *st;
	int ret;

	if (db == NULL || token_hash == NULL)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_SESSION_DELETE, &sql_delete, &st)) != 0)
		return ret;
	db_st_blob(st, 1, token_hash, DB_SESSION_HASH_BYTES);
	if ((ret = db_step_done(st)) != 0)
		return ret;
	return db_st_changes(st) == 0 ? DB_ERR_NOTFOUND : VEP_OK;
}

int
db_session_purge(struct db *db, int64_t now, int64_t max_rows, int64_t *count)
{
	struct db_st *st;
	int ret;

	if (count != NULL)
		*count = 0;
	if (db == NULL || max_rows <= 0)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_SESSION_PURGE, &sql_purge, &st)) != 0)
		return ret;
	db_st_int(st, 1, now);
	db_st_int(st, 2, max_rows);
	if ((ret = db_step_done(st)) != 0)
		return ret;
	if (count != NULL)
		*count = db_st_changes(st);
	return VEP_OK;
}

int
db_session_count(struct db *db, int64_t now, int64_t *count)
{
	struct db_st *st;
	int rc, ret;

	if (count == NULL)
		return VEP_ERR_ARG;
	*count = 0;
	if (db == NULL)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_SESSION_COUNT, &sql_count, &st)) != 0)
		return ret;
	db_st_int(st, 1, now);
	rc = db_st_step(st);
	if (rc == DB_ROW) {
		*count = db_st_col_int(st, 0);
		ret = VEP_OK;
	} else {
		ret = rc == 0 ? DB_ERR_INTERNAL : rc;
	}
	db_stmt_done(st);
	return ret;
}

int
db_session_list(struct db *db, const char *email, int64_t now, db_session_cb cb, void *arg)
{
	struct db_session s;
	struct db_st *st = NULL;
	const char *e;
	int rc, ret;

	if (db == NULL || cb == NULL)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_SESSION_LIST, &sql_list, &st)) != 0)
		return ret;
	db_st_int(st, 1, now);
	db_st_text(st, 2, email);
	while ((rc = db_st_step(st)) == DB_ROW) {
		memset(&s, 0, sizeof(s));
		e = db_st_col_text(st, 1);
		if (e == NULL || strlen(e) > DB_SESSION_EMAIL_MAX) {
			ret = DB_ERR_CORRUPT;
			goto out;
		}
		s.id = db_st_col_int(st, 0);
		memcpy(s.email, e, strlen(e) + 1);
		s.created = db_st_col_int(st, 2);
		s.last_seen = db_st_col_int(st, 3);
		s.idle_s = db_st_col_int(st, 4);
		s.absolute_at = db_st_col_int(st, 5);
		s.expires_at = db_st_col_int(st, 6);
		if ((ret = cb(&s, arg)) != 0)
			goto out;
	}
	ret = rc;
out:
	db_stmt_done(st);
	return ret;
}

int
db_session_revoke(struct db *db, int64_t id)
{
	struct db_st *st;
	int ret;

	if (db == NULL || id <= 0)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_SESSION_REVOKE, &sql_revoke, &st)) != 0)
		return ret;
	db_st_int(st, 1, id);
	if ((ret = db_step_done(st)) != 0)
		return ret;
	return db_st_changes(st) == 0 ? DB_ERR_NOTFOUND : VEP_OK;
}
