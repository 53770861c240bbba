/*
 * db_throttle.c - the SQL of the throttle table: fixed-window failure
 * counters per account name and per client address.
 *
 * It never reads the clock and never decides what a throttled client is
 * told; it answers "allowed or wait N seconds" and keeps the counts.
 */
#include <stddef.h>
#include <string.h>

#include "db_internal.h"
#include "db_throttle.h"

static const char sql_get[] =
    "SELECT failures, window_end FROM throttle WHERE kind = ?1 AND name = ?2";
/* A failure after the window ended opens a new one (SET sees the old row). */
static const char sql_fail[] =
    "INSERT INTO throttle (kind, name, window_end, failures)"
    " VALUES (?1, ?2, ?3 + ?4, 1)"
    " ON CONFLICT (kind, name) DO UPDATE SET"
    " failures = CASE WHEN window_end <= ?3 THEN 1 ELSE failures + 1 END,"
    " window_end = CASE WHEN window_end <= ?3 THEN ?3 + ?4 ELSE window_end END";
static const char sql_reset[] =
    "DELETE FROM throttle WHERE kind = ?1 AND name = ?2";
static const char sql_prune[] =
    "DELETE FROM throttle WHERE id IN (SELECT id FROM throttle"
    " WHERE window_end <= ?1 ORDER BY window_end LIMIT ?2)";

/* The two things counted; the numbers are the schema's `kind` values. */
enum throttle_kind { THROTTLE_ACCOUNT = 1, THROTTLE_ADDR = 2 };

static const struct {
	enum throttle_kind kind;
	size_t max_off;     /* offsetof the limit in struct db_throttle_limits */
	size_t window_off;
} throttle_kinds[] = {
	{ THROTTLE_ACCOUNT, offsetof(struct db_throttle_limits, account_max),
	    offsetof(struct db_throttle_limits, account_window_s) },
	{ THROTTLE_ADDR, offsetof(struct db_throttle_limits, addr_max),
	    offsetof(struct db_throttle_limits, addr_window_s) },
};
#define THROTTLE_KINDS (sizeof(throttle_kinds) / sizeof(throttle_kinds[0]))

static int64_t
limit_at(const struct db_throttle_limits *l, size_t off)
{
	int64_t v;

	memcpy(&v, (const char *)l + off, sizeof(v));
	return v;
}

void
db_throttle_limits_default(struct db_throttle_limits *l)
{
	if (l == NULL)
		return;
	l->account_max = DB_THROTTLE_ACCOUNT_MAX_DEFAULT;
	l->account_window_s = DB_THROTTLE_ACCOUNT_WINDOW_S_DEFAULT;
	l->addr_max = DB_THROTTLE_ADDR_MAX_DEFAULT;
	l->addr_window_s = DB_THROTTLE_ADDR_WINDOW_S_DEFAULT;
}

/* Validates the arguments shared by check and record_failure, resolving a
 * NULL limits to the defaults in *lim; names[] gets account and addr in the
 * order of throttle_kinds[]. */
static int
throttle_args(struct db *db, const char *account, const char *addr,
    const struct db_throttle_limits *limits, struct db_throttle_limits *lim,
    const char *names[THROTTLE_KINDS])
{
	size_t i;

	if (db == NULL || (account == NULL && addr == NULL))
		return VEP_ERR_ARG;
	if (limits != NULL)
		*lim = *limits;
	else
		db_throttle_limits_default(lim);
	names[0] = account;
	names[1] = addr;
	for (i = 0; i < THROTTLE_KINDS; i++) {
		int64_t max = limit_at(lim, throttle_kinds[i].max_off);
		int64_t win = limit_at(lim, throttle_kinds[i].window_off);

		if (max < 1 || win < 1 || win > DB_THROTTLE_WINDOW_MAX_S)
			return VEP_ERR_ARG;
		if (names[i] != NULL && strlen(names[i]) > DB_THROTTLE_NAME_MAX)
			return VEP_ERR_TOOBIG;
	}
	return VEP_OK;
}

int
db_throttle_check(struct db *db, const char *account, const char *addr,
    int64_t now, const struct db_throttle_limits *limits, int64_t *retry_after_s)
{
	struct db_throttle_limits lim;
	const char *names[THROTTLE_KINDS];
	sqlite3_stmt *st = NULL;
	int64_t wait = 0;
	size_t i;
	int rc, ret;

	if (retry_after_s == NULL)
		return VEP_ERR_ARG;
	*retry_after_s = 0;
	if ((ret = throttle_args(db, account, addr, limits, &lim, names)) != 0)
		return ret;
	for (i = 0; i < THROTTLE_KINDS; i++) {
		if (names[i] == NULL)
			continue;
		if ((ret = db_stmt(db, DB_STMT_THROTTLE_GET, sql_get, &st)) != 0)
			goto out;
		sqlite3_bind_int(st, 1, (int)throttle_kinds[i].kind);
		sqlite3_bind_text(st, 2, names[i], -1, SQLITE_STATIC);
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			int64_t failures = sqlite3_column_int64(st, 0);
			int64_t end = sqlite3_column_int64(st, 1);

			if (end > now && failures >= limit_at(&lim, throttle_kinds[i].max_off) &&
			    end - now > wait)
				wait = end - now;
		} else if (rc != SQLITE_DONE) {
			ret = db_err(rc);
			goto out;
		}
		db_stmt_done(st);
		st = NULL;
	}
	*retry_after_s = wait;
	ret = wait > 0 ? DB_ERR_THROTTLED : VEP_OK;
out:
	db_stmt_done(st);
	return ret;
}

int
db_throttle_prune(struct db *db, int64_t now, int64_t max_rows, int64_t *count)
{
	sqlite3_stmt *st;
	int ret;

	if (count != NULL)
		*count = 0;
	if (db == NULL || max_rows <= 0)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_THROTTLE_PRUNE, sql_prune, &st)) != 0)
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
db_throttle_record_failure(struct db *db, const char *account, const char *addr,
    int64_t now, const struct db_throttle_limits *limits)
{
	struct db_throttle_limits lim;
	const char *names[THROTTLE_KINDS];
	sqlite3_stmt *st;
	size_t i;
	int ret;

	if ((ret = throttle_args(db, account, addr, limits, &lim, names)) != 0)
		return ret;
	if ((ret = db_tx_begin(db)) != 0)
		return ret;
	for (i = 0; i < THROTTLE_KINDS; i++) {
		if (names[i] == NULL)
			continue;
		if ((ret = db_stmt(db, DB_STMT_THROTTLE_FAIL, sql_fail, &st)) != 0)
			goto out;
		sqlite3_bind_int(st, 1, (int)throttle_kinds[i].kind);
		sqlite3_bind_text(st, 2, names[i], -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 3, now);
		sqlite3_bind_int64(st, 4, limit_at(&lim, throttle_kinds[i].window_off));
		if ((ret = db_step_done(st)) != 0)
			goto out;
	}
	if ((ret = db_throttle_prune(db, now, DB_THROTTLE_PRUNE_PER_WRITE, NULL)) != 0)
		goto out;
	return db_tx_commit(db);
out:
	db_tx_rollback(db);
	return ret;
}

int
db_throttle_record_success(struct db *db, const char *account)
{
	sqlite3_stmt *st;
	int ret;

	if (db == NULL || account == NULL)
		return VEP_ERR_ARG;
	if (strlen(account) > DB_THROTTLE_NAME_MAX)
		return VEP_ERR_TOOBIG;
	if ((ret = db_stmt(db, DB_STMT_THROTTLE_RESET, sql_reset, &st)) != 0)
		return ret;
	sqlite3_bind_int(st, 1, THROTTLE_ACCOUNT);
	sqlite3_bind_text(st, 2, account, -1, SQLITE_STATIC);
	return db_step_done(st);
}
