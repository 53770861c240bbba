/*
 * store/internal.h - what the db_* modules share and nobody else may see: the
 * connection of either engine (SQLite, PostgreSQL), the per-connection cache
 * of prepared statements behind one statement interface (store/stmt.c), write
 * transactions and the SQLite -> DB_ERR_* conversion.
 *
 * Only the store's files (store/) and its unit tests include this file (and with it
 * sqlite3.h). Each table module owns its SQL text; this file owns only the
 * slot numbers under which those statements are cached.
 */
#ifndef AUTHORITY_STORE_INTERNAL_H
#define AUTHORITY_STORE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

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

/* A statement's text for each engine. pg NULL: the SQLite text serves
 * PostgreSQL too, its ?N placeholders read as $N. Write portable SQL where
 * it costs nothing (CASE rather than min(), CAST(?N AS TEXT) IS NULL). */
struct db_sql {
	const char *sqlite;
	const char *pg;
};

enum db_engine {
	DB_ENGINE_SQLITE,
	DB_ENGINE_PG,
};

struct pg;
struct db_st;

struct db {
	enum db_engine engine;
	sqlite3 *conn;                       /* DB_ENGINE_SQLITE */
	struct pg *pg;                       /* DB_ENGINE_PG (store/pg.h) */
	struct db_st *stmts[DB_STMT__COUNT]; /* prepared on first use */
	int readonly;
	char *instance;                      /* owned: written into audit rows, or NULL */
};

/* Most parameters one statement may have. */
#define DB_PG_PARAMS_MAX 12

/* What db_st_step returns for a row; 0 means no more rows. */
#define DB_ROW 1

/* Returns in *out the cached statement for slot, preparing sql on first use
 * (the same slot must always be given the same text), with no value bound.
 * Every parameter a statement names must then be bound (a NULL text binds
 * NULL). Bound strings and blobs are borrowed: they must live until the
 * statement is done (db_stmt_done, db_step_done or a db_st_step that
 * returned anything but DB_ROW). */
int db_stmt(struct db *db, enum db_stmt_slot slot, const struct db_sql *sql,
    struct db_st **out);

/* Binds parameter i (1-based) to an integer, a text (NULL: a NULL text), an
 * integer NULL, or a blob. */
void db_st_int(struct db_st *st, int i, int64_t v);
void db_st_text(struct db_st *st, int i, const char *s);
void db_st_null_int(struct db_st *st, int i);
void db_st_blob(struct db_st *st, int i, const void *p, size_t n);

/* Runs the statement (first call) or moves to its next row: DB_ROW, 0 when
 * there is none (the statement is then done), or an error. */
int db_st_step(struct db_st *st);

/* Column c (0-based) of the current row: an integer (0 for NULL), a text
 * (NULL for NULL; valid until the next step or done), whether it is NULL. */
int64_t db_st_col_int(struct db_st *st, int c);
const char *db_st_col_text(struct db_st *st, int c);
int db_st_col_null(struct db_st *st, int c);

/* Rows changed by the statement's last run (INSERT, UPDATE, DELETE). */
int64_t db_st_changes(struct db_st *st);

/* Resets a statement obtained from db_stmt so it holds no lock and no
 * result. NULL-safe. */
void db_stmt_done(struct db_st *st);

/* Runs a statement that returns no rows, then resets it. Returns 0 or an
 * error (a row counts as DB_ERR_INTERNAL). */
int db_step_done(struct db_st *st);

/* A batch of writes committed together, all or none, in one round trip
 * where the engine allows it (PostgreSQL: a pipeline, BEGIN to COMMIT sent
 * at once; SQLite: a write transaction, as db_tx_begin). Inside it only
 * db_st_queue runs statements. db_batch_end commits (0, or an error and
 * nothing of the batch is left); db_batch_abort drops it. */
int db_batch_begin(struct db *db);
int db_batch_end(struct db *db);
void db_batch_abort(struct db *db);

/* Inside a batch: runs (SQLite) or sends (PostgreSQL) the bound statement,
 * which returns no rows, and resets it. A PostgreSQL error shows at
 * db_batch_end. */
int db_st_queue(struct db_st *st);

/* Frees the cached statements of db (at close). */
void db_stmts_free(struct db *db);

/* Starts a write transaction. SQLite: BEGIN IMMEDIATE, the write lock is
 * taken now, with the busy timeout, so no later statement can meet
 * SQLITE_BUSY and the whole transaction is serialised with every other
 * writer. PostgreSQL: BEGIN (read committed). */
int db_tx_begin(struct db *db);

/* Inside a transaction: serialises it with every other transaction that
 * takes the same lock, on any instance (PostgreSQL: a transaction-scoped
 * advisory lock, waited for at most the busy timeout). SQLite's BEGIN
 * IMMEDIATE already holds the one write lock: nothing to do. For
 * read-check-write transactions (the throttle's limits). */
enum db_tx_lock {
	DB_LOCK_THROTTLE = 1,
};
int db_tx_lock(struct db *db, enum db_tx_lock lock);

/* Commits; on failure the transaction is rolled back and nothing of it is
 * left. Returns 0 or a DB_ERR_* / VEP_ERR_* code. */
int db_tx_commit(struct db *db);

/* Rolls back if a transaction is open (SQLite may have already done so after
 * SQLITE_FULL or SQLITE_NOMEM). */
void db_tx_rollback(struct db *db);

/* Converts an SQLite result code (primary or extended) to 0 or an error. */
int db_err(int sqlite_rc);

#endif
