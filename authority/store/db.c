/*
 * store/db.c - the database connection: open the file in the state directory,
 * set the connection up (WAL, synchronous=FULL, foreign keys, busy timeout,
 * SQLite's defensive mode), apply the embedded migrations, run write
 * transactions, and convert SQLite's result codes; or hand all of that to
 * the PostgreSQL engine (store/pg.c) when the options name a server.
 *
 * This file owns no table: the SQL of sessions, throttling and the audit trail
 * lives in store/sessions.c, store/throttle.c and store/audit.c. It must never log a
 * bound value (tokens' hashes, addresses) and never leave a transaction open
 * when a function returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/db.h"
#include "store/internal.h"
#include "store/pg.h"
#include "migrations.h"

/* SQLite's default ceiling for max_page_count, used to lift a size limit. */
#define DB_MAX_PAGE_COUNT_UNLIMITED 4294967294LL

/* Extended codes are matched first, then the primary code (rc & 0xff). */
static const struct {
	int rc;
	int err;
} db_err_table[] = {
	{ SQLITE_OK, VEP_OK },
	{ SQLITE_ROW, VEP_OK },
	{ SQLITE_DONE, VEP_OK },
	{ SQLITE_CONSTRAINT_UNIQUE, VEP_ERR_EXISTS },
	{ SQLITE_CONSTRAINT_PRIMARYKEY, VEP_ERR_EXISTS },
	{ SQLITE_CONSTRAINT, VEP_ERR_INVALID },
	{ SQLITE_BUSY, DB_ERR_BUSY },
	{ SQLITE_LOCKED, DB_ERR_BUSY },
	{ SQLITE_FULL, DB_ERR_FULL },
	{ SQLITE_NOMEM, VEP_ERR_NOMEM },
	{ SQLITE_TOOBIG, VEP_ERR_TOOBIG },
	{ SQLITE_CORRUPT, DB_ERR_CORRUPT },
	{ SQLITE_NOTADB, DB_ERR_CORRUPT },
	{ SQLITE_IOERR, VEP_ERR_IO },
	{ SQLITE_CANTOPEN, VEP_ERR_IO },
	{ SQLITE_READONLY, VEP_ERR_IO },
	{ SQLITE_PERM, VEP_ERR_IO },
	{ SQLITE_AUTH, VEP_ERR_IO },
};


int
db_err(int sqlite_rc)
{
	size_t i;

	for (i = 0; i < sizeof(db_err_table) / sizeof(db_err_table[0]); i++)
		if (db_err_table[i].rc == sqlite_rc)
			return db_err_table[i].err;
	for (i = 0; i < sizeof(db_err_table) / sizeof(db_err_table[0]); i++)
		if (db_err_table[i].rc == (sqlite_rc & 0xff))
			return db_err_table[i].err;
	return DB_ERR_INTERNAL;
}

int
db_schema_version_known(void)
{
	return (int)db_migrations_count;
}

/* Runs a statement that yields one integer (a PRAGMA) without caching it. */
static int
db_query_int(sqlite3 *conn, const char *sql, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	*out = 0;
	rc = sqlite3_prepare_v2(conn, sql, -1, &st, NULL);
	if (rc != SQLITE_OK) {
		ret = db_err(rc);
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		ret = rc == SQLITE_DONE ? DB_ERR_INTERNAL : db_err(rc);
		goto out;
	}
	*out = sqlite3_column_int64(st, 0);
	ret = VEP_OK;
out:
	sqlite3_finalize(st);
	return ret;
}

static int
db_exec(sqlite3 *conn, const char *sql)
{
	return db_err(sqlite3_exec(conn, sql, NULL, NULL, NULL));
}

int
db_schema_version(struct db *db, int *out)
{
	int64_t v;
	int ret;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = 0;
	if (db == NULL)
		return VEP_ERR_ARG;
	if (db->engine == DB_ENGINE_PG)
		return pg_schema_version(db->pg, out);
	if ((ret = db_query_int(db->conn, "PRAGMA user_version", &v)) != 0)
		return ret;
	*out = (int)v;
	return VEP_OK;
}

int
db_journal_mode(struct db *db, char *out, size_t outlen)
{
	sqlite3_stmt *st = NULL;
	const unsigned char *mode;
	int rc, ret;

	if (out == NULL || outlen == 0)
		return VEP_ERR_ARG;
	out[0] = '\0';
	if (db == NULL)
		return VEP_ERR_ARG;
	if (db->engine == DB_ENGINE_PG) {
		/* PostgreSQL's own write-ahead log: nothing to choose. */
		if (outlen < sizeof("postgresql"))
			return VEP_ERR_TOOBIG;
		memcpy(out, "postgresql", sizeof("postgresql"));
		return VEP_OK;
	}
	rc = sqlite3_prepare_v2(db->conn, "PRAGMA journal_mode", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		ret = rc == SQLITE_DONE ? DB_ERR_INTERNAL : db_err(rc);
		goto out;
	}
	mode = sqlite3_column_text(st, 0);
	if (mode == NULL || strlen((const char *)mode) >= outlen) {
		ret = VEP_ERR_TOOBIG;
		goto out;
	}
	memcpy(out, mode, strlen((const char *)mode) + 1);
	ret = VEP_OK;
out:
	sqlite3_finalize(st);
	return ret;
}

int
db_tx_begin(struct db *db)
{
	if (db->engine == DB_ENGINE_PG)
		return pg_tx_begin(db->pg);
	return db_exec(db->conn, "BEGIN IMMEDIATE");
}

int
db_batch_begin(struct db *db)
{
	if (db->engine == DB_ENGINE_PG)
		return pg_pipeline_begin(db->pg);
	return db_tx_begin(db);
}

int
db_batch_end(struct db *db)
{
	if (db->engine == DB_ENGINE_PG)
		return pg_pipeline_end(db->pg, 1);
	return db_tx_commit(db);
}

void
db_batch_abort(struct db *db)
{
	if (db->engine == DB_ENGINE_PG)
		(void)pg_pipeline_end(db->pg, 0);
	else
		db_tx_rollback(db);
}

int
db_tx_lock(struct db *db, enum db_tx_lock lock)
{
	if (db->engine == DB_ENGINE_PG)
		return pg_tx_lock(db->pg, PG_LOCK_BASE + (long long)lock);
	return VEP_OK;
}

void
db_tx_rollback(struct db *db)
{
	if (db->engine == DB_ENGINE_PG) {
		pg_tx_rollback(db->pg);
		return;
	}
	/* After SQLITE_FULL, SQLITE_NOMEM or an I/O error SQLite may already
	 * have rolled back; a second ROLLBACK would only report an error. */
	if (!sqlite3_get_autocommit(db->conn))
		(void)sqlite3_exec(db->conn, "ROLLBACK", NULL, NULL, NULL);
}

int
db_tx_commit(struct db *db)
{
	int ret;

	if (db->engine == DB_ENGINE_PG)
		return pg_tx_commit(db->pg);
	if ((ret = db_exec(db->conn, "COMMIT")) != 0)
		db_tx_rollback(db);
	return ret;
}

/* Applies migration m unless another process got there first: the version
 * is re-read under the write lock, so two starting processes cannot both
 * apply it. */
static int
db_apply_migration(struct db *db, const struct db_migration *m)
{
	char sql[64];
	int64_t v;
	int ret;

	if ((ret = db_tx_begin(db)) != 0)
		return ret;
	if ((ret = db_query_int(db->conn, "PRAGMA user_version", &v)) != 0)
		goto out;
	if (v >= m->version)
		goto out;
	if (v != m->version - 1) {
		ret = DB_ERR_SCHEMA;
		goto out;
	}
	if ((ret = db_exec(db->conn, m->sql)) != 0)
		goto out;
	(void)snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", m->version);
	if ((ret = db_exec(db->conn, sql)) != 0)
		goto out;
	return db_tx_commit(db);
out:
	db_tx_rollback(db);
	return ret;
}

static int
db_configure(struct db *db, int busy_timeout_ms)
{
	char mode[16];
	int ret;

	if (sqlite3_busy_timeout(db->conn, busy_timeout_ms) != SQLITE_OK)
		return DB_ERR_INTERNAL;
	/* Defensive: no writable_schema, no shadow-table tampering; untrusted
	 * schema; no double-quoted string literals mistaken for identifiers. */
	(void)sqlite3_db_config(db->conn, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	(void)sqlite3_db_config(db->conn, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	(void)sqlite3_db_config(db->conn, SQLITE_DBCONFIG_DQS_DML, 0, NULL);
	(void)sqlite3_db_config(db->conn, SQLITE_DBCONFIG_DQS_DDL, 0, NULL);
	if ((ret = db_exec(db->conn, "PRAGMA foreign_keys = ON")) != 0)
		return ret;
	/* FULL: in WAL mode every commit fsyncs the log, so an audit row is on
	 * disk before the certificate it records leaves the process. */
	if ((ret = db_exec(db->conn, "PRAGMA synchronous = FULL")) != 0)
		return ret;
	if (!db->readonly &&
	    (ret = db_exec(db->conn, "PRAGMA journal_mode = WAL")) != 0)
		return ret;
	if ((ret = db_journal_mode(db, mode, sizeof(mode))) != 0)
		return ret;
	/* A reader takes the file as it is (a backup copy has a rollback
	 * journal); a writer must have WAL, which the group commit relies on. */
	if (strcmp(mode, "wal") != 0 && !db->readonly)
		return DB_ERR_INTERNAL;
	return VEP_OK;
}

/* A copy of opt->instance into *out (NULL when none); VEP_ERR_ARG for a
 * name the schema's readers could not print safely. */
static int
db_instance_copy(const struct db_options *opt, char **out)
{
	const char *name = opt != NULL ? opt->instance : NULL;
	size_t n;

	*out = NULL;
	if (name == NULL)
		return VEP_OK;
	n = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-");
	if (n == 0 || name[n] != '\0' || n > DB_INSTANCE_MAX)
		return VEP_ERR_ARG;
	return (*out = strdup(name)) != NULL ? VEP_OK : VEP_ERR_NOMEM;
}

int
db_open_path(const char *path, const struct db_options *opt, struct db **out)
{
	struct db *db = NULL;
	int64_t version;
	int busy, flags, fd, ret, existing;
	size_t i;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (path == NULL)
		return VEP_ERR_ARG;
	busy = opt != NULL && opt->busy_timeout_ms != 0 ?
	    opt->busy_timeout_ms : DB_BUSY_TIMEOUT_MS_DEFAULT;
	if (busy < 0 || busy > DB_BUSY_TIMEOUT_MS_MAX)
		return VEP_ERR_ARG;
	if ((db = calloc(1, sizeof(*db))) == NULL)
		return VEP_ERR_NOMEM;
	db->engine = DB_ENGINE_SQLITE;
	db->readonly = opt != NULL && opt->readonly;
	existing = db->readonly || (opt != NULL && opt->existing);
	if ((ret = db_instance_copy(opt, &db->instance)) != 0)
		goto out;

	if (!existing) {
		/* Create the file ourselves so it is 0600 from the first byte;
		 * SQLite gives the -wal and -shm files the same mode. Only when
		 * it does not exist (O_EXCL): closing a descriptor of a file
		 * drops every POSIX lock this process holds on it, including
		 * those of SQLite connections other threads have open. */
		fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0)
			(void)close(fd);
		else if (errno != EEXIST) {
			ret = VEP_ERR_IO;
			goto out;
		}
	}
	flags = (db->readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
	    SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOMUTEX;
	if (sqlite3_open_v2(path, &db->conn, flags, NULL) != SQLITE_OK) {
		ret = db->conn == NULL ? VEP_ERR_NOMEM :
		    db_err(sqlite3_extended_errcode(db->conn));
		if (ret == VEP_OK)
			ret = VEP_ERR_IO;
		goto out;
	}
	if (sqlite3_busy_timeout(db->conn, busy) != SQLITE_OK) {
		ret = DB_ERR_INTERNAL;
		goto out;
	}
	/* Look at the version before changing anything (even the journal mode)
	 * so a newer file is left exactly as we found it. */
	if ((ret = db_query_int(db->conn, "PRAGMA user_version", &version)) != 0)
		goto out;
	if (version > (int64_t)db_migrations_count || version < 0) {
		ret = DB_ERR_NEWER;
		goto out;
	}
	if (existing && version != (int64_t)db_migrations_count) {
		ret = DB_ERR_SCHEMA;
		goto out;
	}
	if ((ret = db_configure(db, busy)) != 0)
		goto out;
	for (i = 0; !existing && i < db_migrations_count; i++)
		if ((ret = db_apply_migration(db, &db_migrations[i])) != 0)
			goto out;
	*out = db;
	db = NULL;
	ret = VEP_OK;
out:
	db_close(db);
	return ret;
}

/* The PostgreSQL store named by opt->pg_conninfo. */
static int
db_open_pg(const struct db_options *opt, struct db **out)
{
	int busy = opt->busy_timeout_ms != 0 ? opt->busy_timeout_ms : DB_BUSY_TIMEOUT_MS_DEFAULT;
	struct db *db;
	int ret;

	if (busy < 0 || busy > DB_BUSY_TIMEOUT_MS_MAX)
		return VEP_ERR_ARG;
	if ((db = calloc(1, sizeof(*db))) == NULL)
		return VEP_ERR_NOMEM;
	db->engine = DB_ENGINE_PG;
	db->readonly = opt->readonly;
	if ((ret = db_instance_copy(opt, &db->instance)) != 0 ||
	    (ret = pg_open(opt->pg_conninfo, opt->readonly ? PG_OPEN_READONLY :
	    opt->existing ? PG_OPEN_EXISTING : PG_OPEN_MIGRATE, busy, &db->pg)) != 0) {
		db_close(db);
		return ret;
	}
	*out = db;
	return VEP_OK;
}

int
db_open(const char *state_dir, const struct db_options *opt, struct db **out)
{
	char *path = NULL;
	int ret;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (opt != NULL && opt->pg_conninfo != NULL && opt->pg_conninfo[0] != '\0')
		return db_open_pg(opt, out);
	if (state_dir == NULL || *state_dir == '\0')
		return VEP_ERR_ARG;
	if (asprintf(&path, "%s/%s", state_dir, DB_FILE_NAME) < 0)
		return VEP_ERR_NOMEM;
	ret = db_open_path(path, opt, out);
	free(path);
	return ret;
}

void
db_close(struct db *db)
{
	if (db == NULL)
		return;
	db_stmts_free(db);
	pg_close(db->pg);
	free(db->instance);
	/* close_v2 is never "busy": all statements are finalized above. */
	sqlite3_close_v2(db->conn);
	free(db);
}

int
db_set_size_limit(struct db *db, int64_t max_bytes)
{
	char sql[64];
	int64_t page_size, pages, got;
	int ret;

	if (db == NULL || max_bytes < 0)
		return VEP_ERR_ARG;
	if (db->engine == DB_ENGINE_PG)
		return VEP_OK;  /* the server's administrator sizes its disk */
	if ((ret = db_query_int(db->conn, "PRAGMA page_size", &page_size)) != 0)
		return ret;
	if (page_size <= 0)
		return DB_ERR_INTERNAL;
	pages = max_bytes == 0 ? DB_MAX_PAGE_COUNT_UNLIMITED : max_bytes / page_size;
	if (pages > DB_MAX_PAGE_COUNT_UNLIMITED)
		pages = DB_MAX_PAGE_COUNT_UNLIMITED;
	/* max_page_count = 0 only queries; 1 means "as small as it is now". */
	if (pages < 1)
		pages = 1;
	(void)snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %lld", (long long)pages);
	/* SQLite never sets the cap below the current size; it returns the cap. */
	return db_query_int(db->conn, sql, &got);
}

int
db_check_integrity(struct db *db)
{
	sqlite3_stmt *st = NULL;
	const unsigned char *res;
	int rc, ret;

	if (db == NULL)
		return VEP_ERR_ARG;
	if (db->engine == DB_ENGINE_PG)
		return VEP_OK;  /* PostgreSQL checks its own pages (amcheck is the admin's) */
	rc = sqlite3_prepare_v2(db->conn, "PRAGMA integrity_check", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		ret = rc == SQLITE_DONE ? DB_ERR_INTERNAL : db_err(rc);
		goto out;
	}
	res = sqlite3_column_text(st, 0);
	ret = res != NULL && strcmp((const char *)res, "ok") == 0 ?
	    VEP_OK : DB_ERR_CORRUPT;
out:
	sqlite3_finalize(st);
	return ret;
}

int
db_check_pg(const char *conninfo)
{
	return pg_check(conninfo, DB_BUSY_TIMEOUT_MS_DEFAULT);
}

int
db_check_file(const char *state_dir)
{
	sqlite3 *conn = NULL;
	sqlite3_stmt *st = NULL;
	const unsigned char *res;
	char *path = NULL;
	int64_t version;
	int rc, ret;

	if (state_dir == NULL || *state_dir == '\0')
		return VEP_ERR_ARG;
	if (asprintf(&path, "%s/%s", state_dir, DB_FILE_NAME) < 0)
		return VEP_ERR_NOMEM;
	/* None yet: the server creates it at start. */
	if (access(path, F_OK) != 0 && errno == ENOENT) {
		ret = VEP_OK;
		goto out;
	}
	/* Read-only: a check never migrates, nor changes the journal mode. */
	if (sqlite3_open_v2(path, &conn, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOFOLLOW |
	    SQLITE_OPEN_EXRESCODE, NULL) != SQLITE_OK) {
		ret = conn == NULL ? VEP_ERR_NOMEM : db_err(sqlite3_extended_errcode(conn));
		if (ret == VEP_OK)
			ret = VEP_ERR_IO;
		goto out;
	}
	(void)sqlite3_busy_timeout(conn, DB_BUSY_TIMEOUT_MS_DEFAULT);
	(void)sqlite3_db_config(conn, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	if ((ret = db_query_int(conn, "PRAGMA user_version", &version)) != 0)
		goto out;
	if (version > (int64_t)db_migrations_count || version < 0) {
		ret = DB_ERR_NEWER;
		goto out;
	}
	rc = sqlite3_prepare_v2(conn, "PRAGMA integrity_check(1)", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc != SQLITE_ROW) {
		ret = rc == SQLITE_DONE ? DB_ERR_INTERNAL : db_err(rc);
		goto out;
	}
	res = sqlite3_column_text(st, 0);
	ret = res != NULL && strcmp((const char *)res, "ok") == 0 ? VEP_OK : DB_ERR_CORRUPT;
out:
	sqlite3_finalize(st);
	sqlite3_close(conn);
	free(path);
	return ret;
}

int
db_is_local(const struct db *db)
{
	return db != NULL && db->engine == DB_ENGINE_SQLITE;
}
