/*
 * store/db.h - the authority's SQLite database: opening it, bringing its schema up
 * to date, and the error vocabulary shared by the db_* table modules
 * (store/sessions.h, store/throttle.h, store/audit.h).
 *
 * One file, DB_FILE_NAME in the state directory, created with mode 0600 (it
 * holds e-mail addresses and client addresses). Every connection runs in WAL
 * mode with synchronous=FULL, so a function that returned 0 after a write has
 * made it durable: the audit row of a certificate is on disk before the reply.
 * Writers wait for a busy database at most the connection's busy timeout and
 * then fail with DB_ERR_BUSY, which the caller maps to 503 like DB_ERR_FULL.
 *
 * This header never exposes SQLite: sqlite3.h is included only by the db_*
 * source files. Handlers call the table modules, never SQL.
 *
 * A struct db is one connection; it is not shared between threads.
 */
#ifndef AUTHORITY_STORE_DB_H
#define AUTHORITY_STORE_DB_H

#include <stddef.h>
#include <stdint.h>

#include "core/errors.h"
#include "err.h"

/* The database file inside the state directory. */
#define DB_FILE_NAME "authority.db"

/* How long a writer waits for another connection's lock (milliseconds). Kept
 * short: the event loop is blocked while it waits. */
#define DB_BUSY_TIMEOUT_MS_DEFAULT 1000
/* Largest accepted busy timeout (milliseconds). */
#define DB_BUSY_TIMEOUT_MS_MAX 30000

/* Errors: DB_ERR_* (core/errors.h), named by srv_strerror. */

struct db;

struct db_options {
	int readonly;         /* open read-only: no migration, exact version required */
	/* Read-write without creating or migrating: the file must exist at
	 * exactly this binary's version (an administrator's tool changing a
	 * live server's rows; DB_ERR_SCHEMA otherwise). */
	int existing;
	int busy_timeout_ms;  /* 0 = DB_BUSY_TIMEOUT_MS_DEFAULT */
	/* Non-empty: the store is on this PostgreSQL server (a libpq
	 * connection string or postgresql:// URI) instead of the state
	 * directory's file; db_open then ignores state_dir. */
	const char *pg_conninfo;
	/* The name this connection writes into audit rows (copied; at most
	 * DB_INSTANCE_MAX bytes of [A-Za-z0-9._-]), or NULL: none. */
	const char *instance;
};

/* Longest instance name (bytes). */
#define DB_INSTANCE_MAX 64

/* Opens (creating if needed, mode 0600) DIR/DB_FILE_NAME and migrates it:
 * see db_open_path. opt may be NULL for defaults. */
int db_open(const char *state_dir, const struct db_options *opt, struct db **out);

/* Opens the database file at path. Read-write: creates the file with mode
 * 0600 if missing, switches it to WAL, sets synchronous=FULL, foreign_keys=ON
 * and the busy timeout, then applies every migration past PRAGMA user_version
 * in order, each in its own transaction that also bumps user_version.
 * Read-only, or read-write with opt->existing: the file must exist and be
 * exactly at the version this binary knows (DB_ERR_SCHEMA otherwise).
 * All refuse a file whose user_version is newer than the binary's last
 * migration (DB_ERR_NEWER) and leave it untouched. *out is cleared on
 * entry and set only on success.
 * Errors: VEP_ERR_ARG, VEP_ERR_NOMEM, VEP_ERR_IO, DB_ERR_NEWER,
 * DB_ERR_SCHEMA, DB_ERR_CORRUPT, DB_ERR_BUSY, DB_ERR_FULL. */
int db_open_path(const char *path, const struct db_options *opt, struct db **out);

/* Finalizes the cached statements and closes the connection. NULL-safe. */
void db_close(struct db *db);

/* The schema version this binary migrates to (the number of migrations). */
int db_schema_version_known(void);

/* Reads the file's PRAGMA user_version into *out. */
int db_schema_version(struct db *db, int *out);

/* Reads the connection's journal mode ("wal") into out (NUL-terminated). */
int db_journal_mode(struct db *db, char *out, size_t outlen);

/* Caps the database file at max_bytes (rounded down to whole pages, at least
 * its current size): writes beyond it fail with DB_ERR_FULL as a full disk
 * would. The cap is per connection. 0 = no cap beyond SQLite's own. */
int db_set_size_limit(struct db *db, int64_t max_bytes);

/* What --check asks of DIR/DB_FILE_NAME before a start, without changing
 * it (read-only: no migration, no journal change): 0 when there is no file
 * yet (the start creates it) or when it is a database this program can
 * migrate or use whose integrity check passes. Errors: DB_ERR_NEWER (made
 * by a newer version: the start would refuse it), DB_ERR_CORRUPT (not a
 * database, or damaged), DB_ERR_BUSY, VEP_ERR_IO (unreadable),
 * VEP_ERR_NOMEM, VEP_ERR_ARG. */
int db_check_file(const char *state_dir);

/* What --check asks of the PostgreSQL store named by conninfo, without
 * changing it: 0 when it answers and is empty or at a version this program
 * can migrate or use. Errors: DB_ERR_DOWN (unreachable, or the connection
 * refused: wrong user, password or database), DB_ERR_NEWER, VEP_ERR_ARG,
 * VEP_ERR_NOMEM. */
int db_check_pg(const char *conninfo);

/* 1 when db is a SQLite file (its commits wait for this machine's disk
 * only), 0 for PostgreSQL (a round trip to a server that may be slow). */
int db_is_local(const struct db *db);

/* Runs PRAGMA integrity_check: 0 when it reports "ok", DB_ERR_CORRUPT when
 * it reports damage. */
int db_check_integrity(struct db *db);


#endif
