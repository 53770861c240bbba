/*
 * store/internal.h - what the db_* modules share and nobody else may see: the
 * SQLite handle, the per-connection cache of prepared statements, write
 * transactions and the SQLite -> DB_ERR_* conversion.
 *
 * Only the store's files (store/) and its unit tests include this file (and with it
 * sqlite3.h). Each table module owns its SQL text; this file owns only the
 * slot numbers under which those statements are cached.
 */
#ifndef AUTHORITY_STORE_INTERNAL_H
#define AUTHORITY_STORE_INTERNAL_H

#include <sqlite3.h>

#include "core/errors.h"
#include "err.h"

struct db;

/* One cache slot per statement text, grouped by the module that owns it. */
enum db_stmt_slot {
	DB_STMT_SESSION_INSERT,
	DB_STMT_SESSION_TRIM,
	DB_STMT_SESSION_LOOKUP,
	DB_STMT_SESSION_TOUCH,
	DB_STMT_SESSION_DELETE,
	DB_STMT_SESSION_PURGE,
	DB_STMT_SESSION_COUNT,
	DB_STMT_SESSION_LIST,
	DB_STMT_SESSION_REVOKE,
	DB_STMT_THROTTLE_GET,
	DB_STMT_THROTTLE_COUNT,
	DB_STMT_THROTTLE_UNCOUNT,
	DB_STMT_THROTTLE_UNCOUNT_LAST,
	DB_STMT_THROTTLE_FORGET,
	DB_STMT_THROTTLE_KNOW,
	DB_STMT_THROTTLE_PRUNE,
	DB_STMT_THROTTLE_LIST,
	DB_STMT_THROTTLE_CLEAR,
	DB_STMT_AUDIT_INSERT,
	DB_STMT_AUDIT_QUERY,
	DB_STMT_AUDIT_PRUNE,
	DB_STMT_AUDIT_SIGNER_EXPIRY,
	DB_STMT__COUNT
};

struct db {
	sqlite3 *conn;
	sqlite3_stmt *stmts[DB_STMT__COUNT];
	int readonly;
};

/* Returns in *out the cached statement for slot, preparing sql on first use
 * (the same slot must always be given the same text). The statement is reset
 * with its bindings cleared; the caller resets it again when done (use
 * db_stmt_done) so it holds no read lock between calls. */
int db_stmt(struct db *db, enum db_stmt_slot slot, const char *sql, sqlite3_stmt **out);

/* Resets a statement obtained from db_stmt. NULL-safe. */
void db_stmt_done(sqlite3_stmt *st);

/* Steps a statement that returns no rows, then resets it. Returns 0 or an
 * error (SQLITE_ROW counts as DB_ERR_INTERNAL). */
int db_step_done(sqlite3_stmt *st);

/* Starts a write transaction (BEGIN IMMEDIATE: the write lock is taken now,
 * with the busy timeout, so no later statement can meet SQLITE_BUSY). */
int db_tx_begin(struct db *db);

/* Commits; on failure the transaction is rolled back and nothing of it is
 * left. Returns 0 or a DB_ERR_* / VEP_ERR_* code. */
int db_tx_commit(struct db *db);

/* Rolls back if a transaction is open (SQLite may have already done so after
 * SQLITE_FULL or SQLITE_NOMEM). */
void db_tx_rollback(struct db *db);

/* Converts an SQLite result code (primary or extended) to 0 or an error. */
int db_err(int sqlite_rc);

#endif
