/*
 * store/pg.h - the store's PostgreSQL engine: one libpq connection, its
 * set-up (durable commits, lock and statement timeouts), the schema's
 * migrations under a cluster-wide lock, statements prepared once per
 * connection, and PostgreSQL's errors as DB_ERR_* codes.
 *
 * Only the store's own files include this (with libpq-fe.h); everything
 * else sees struct db (store/db.h). Calls block: they belong in a writer
 * thread or an administrator's tool, never on an event loop.
 *
 * A connection that broke is re-established by the next call made outside
 * a transaction; inside one the transaction is lost, and every call until
 * the rollback fails with DB_ERR_DOWN (nothing of it was committed).
 */
#ifndef AUTHORITY_STORE_PG_H
#define AUTHORITY_STORE_PG_H

#include <libpq-fe.h>

struct pg;

/* Advisory lock keys of the store: "vep\0" + a small number. */
#define PG_LOCK_BASE 0x76657000LL

/* Longest connection string accepted (bytes). */
#define PG_CONNINFO_MAX 1024

/* Connects with conninfo (a libpq keyword/value string or a postgresql://
 * URI), sets the session up (lock waits bounded by busy_ms) and then, like
 * db_open_path: mode PG_OPEN_MIGRATE applies the migrations past the stored
 * version, each in its own transaction under an advisory lock, so instances
 * starting together apply each once; PG_OPEN_EXISTING and PG_OPEN_READONLY
 * require exactly this binary's version (read-only also refuses writes).
 * Errors: VEP_ERR_ARG, VEP_ERR_NOMEM, DB_ERR_DOWN (no server, or refused),
 * DB_ERR_NEWER, DB_ERR_SCHEMA, DB_ERR_BUSY, DB_ERR_INTERNAL. */
enum pg_open_mode {
	PG_OPEN_MIGRATE,
	PG_OPEN_EXISTING,
	PG_OPEN_READONLY,
};
int pg_open(const char *conninfo, enum pg_open_mode mode, int busy_ms, struct pg **out);

/* Connects, reads the stored version and closes: 0 for an empty database
 * or one at this binary's version or older, DB_ERR_NEWER past it, or the
 * connection's error. Changes nothing. */
int pg_check(const char *conninfo, int busy_ms);

/* Closes the connection. NULL-safe. */
void pg_close(struct pg *pg);

/* A transaction: BEGIN; COMMIT (a failed one is rolled back, and ends the
 * transaction all the same); ROLLBACK when one is open and the connection
 * still holds it. */
int pg_tx_begin(struct pg *pg);
int pg_tx_commit(struct pg *pg);
void pg_tx_rollback(struct pg *pg);

/* Runs statement slot (text sql, $N placeholders) with n parameters in
 * text form (vals[i] NULL: NULL; lens/fmts as PQexecParams: fmts[i] 1 for
 * binary) of the given types. The first run prepares it under those types;
 * a run with other types is sent unprepared. On success *res holds the
 * result (PQclear it). */
int pg_run(struct pg *pg, int slot, const char *sql, int n, const Oid *types,
    const char *const *vals, const int *lens, const int *fmts, PGresult **res);

/* A pipeline: one transaction of statements that return no rows, sent
 * without waiting (pg_pipeline_send: as pg_run, the parameters copied at
 * once) and answered together by pg_pipeline_end, one round trip for the
 * whole batch. pg_pipeline_end(pg, 1) commits: 0 when every statement
 * and the commit succeeded, else the first error and nothing of the batch
 * is left. pg_pipeline_end(pg, 0) rolls it back. Blocking mode is safe
 * here: the answers to a batch (DB_AUDIT_BATCH_MAX rows) are a few
 * kilobytes, never enough to fill the socket while we send. */
int pg_pipeline_begin(struct pg *pg);
int pg_pipeline_send(struct pg *pg, int slot, const char *sql, int n, const Oid *types,
    const char *const *vals, const int *lens, const int *fmts);
int pg_pipeline_end(struct pg *pg, int commit);

/* The stored schema version into *out. */
int pg_schema_version(struct pg *pg, int *out);

/* Takes transaction-scoped advisory lock key (inside a transaction). */
int pg_tx_lock(struct pg *pg, long long key);

#endif
