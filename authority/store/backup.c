/*
 * store/backup.c - online backup and restore of the database file with
 * SQLite's backup API (contract in store/backup.h).
 *
 * It must never modify the source of a backup, never touch a database a
 * server holds open (restore takes an exclusive lock first, without
 * waiting), and never leave a restored file half written.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/backup.h"
#include "store/internal.h"

/* Open flags shared by both ends: no symlinks, extended result codes. */
#define BACKUP_OPEN_FLAGS (SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_EXRESCODE | \
	SQLITE_OPEN_NOMUTEX)

static int
exec_sql(sqlite3 *conn, const char *sql)
{
	return db_err(sqlite3_exec(conn, sql, NULL, NULL, NULL));
}

/* One integer from a PRAGMA. */
static int
pragma_int(sqlite3 *conn, const char *sql, int64_t *out)
{
	sqlite3_stmt *st = NULL;
	int rc, ret;

	*out = 0;
	rc = sqlite3_prepare_v2(conn, sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
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

/* PRAGMA integrity_check says exactly "ok". */
static int
integrity_ok(sqlite3 *conn)
{
	sqlite3_stmt *st = NULL;
	const unsigned char *res;
	int rc, ret;

	rc = sqlite3_prepare_v2(conn, "PRAGMA integrity_check", -1, &st, NULL);
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
	return ret;
}

static int
open_conn(const char *path, int flags, sqlite3 **out)
{
	int ret;

	*out = NULL;
	if (sqlite3_open_v2(path, out, flags | BACKUP_OPEN_FLAGS, NULL) == SQLITE_OK)
		return VEP_OK;
	ret = *out == NULL ? VEP_ERR_NOMEM : db_err(sqlite3_extended_errcode(*out));
	sqlite3_close_v2(*out);
	*out = NULL;
	return ret == VEP_OK ? VEP_ERR_IO : ret;
}

/* Copies every page of src's main database into dst's, in one step: one
 * read transaction on src (a consistent snapshot) and one write
 * transaction on dst (all or nothing). */
static int
copy_all(sqlite3 *dst, sqlite3 *src)
{
	sqlite3_backup *b;
	int rc;

	if ((b = sqlite3_backup_init(dst, "main", src, "main")) == NULL)
		return db_err(sqlite3_extended_errcode(dst));
	rc = sqlite3_backup_step(b, -1);
	/* finish reports the step's error too; DONE is its success. */
	if (sqlite3_backup_finish(b) != SQLITE_OK && rc == SQLITE_DONE)
		rc = sqlite3_extended_errcode(dst);
	return rc == SQLITE_DONE ? VEP_OK : db_err(rc);
}

int
db_backup(struct db *src, const char *dest_path)
{
	sqlite3 *dst = NULL;
	struct stat st;
	int ret;

	/* A PostgreSQL store is backed up by pg_dump (README.md). */
	if (src == NULL || dest_path == NULL || src->engine != DB_ENGINE_SQLITE)
		return VEP_ERR_ARG;
	/* The caller made it empty and 0600; never write into anything else. */
	if (lstat(dest_path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size != 0)
		return VEP_ERR_IO;
	if ((ret = open_conn(dest_path, SQLITE_OPEN_READWRITE, &dst)) != 0)
		return ret;
	if ((ret = exec_sql(dst, "PRAGMA synchronous = FULL")) != 0 ||
	    (ret = copy_all(dst, src->conn)) != 0)
		goto out;
	/* A single file: the copy carries the source's WAL mark, which would
	 * make every reader of the backup create -wal and -shm beside it. */
	if ((ret = exec_sql(dst, "PRAGMA journal_mode = DELETE")) != 0)
		goto out;
	ret = integrity_ok(dst);
out:
	if (sqlite3_close(dst) != SQLITE_OK && ret == 0)
		ret = VEP_ERR_IO;
	return ret;
}

/* Opens the backup read-only and checks it (db_backup_check). */
static int
open_checked(const char *backup_path, sqlite3 **out, int *version)
{
	int64_t v;
	int ret;

	if ((ret = open_conn(backup_path, SQLITE_OPEN_READONLY, out)) != 0)
		return ret;
	(void)sqlite3_db_config(*out, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	(void)sqlite3_db_config(*out, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	if ((ret = pragma_int(*out, "PRAGMA user_version", &v)) != 0)
		goto out;
	if (v > db_schema_version_known()) {
		ret = DB_ERR_NEWER;
		goto out;
	}
	if (v < 1) {
		ret = DB_ERR_SCHEMA;
		goto out;
	}
	if ((ret = integrity_ok(*out)) != 0)
		goto out;
	if (version != NULL)
		*version = (int)v;
	return VEP_OK;
out:
	sqlite3_close_v2(*out);
	*out = NULL;
	return ret;
}

int
db_backup_check(const char *backup_path, int *version)
{
	sqlite3 *conn = NULL;
	int ret;

	if (version != NULL)
		*version = 0;
	if (backup_path == NULL)
		return VEP_ERR_ARG;
	ret = open_checked(backup_path, &conn, version);
	sqlite3_close_v2(conn);
	return ret;
}

int
db_restore(const char *db_path, const char *backup_path)
{
	sqlite3 *src = NULL, *dst = NULL;
	int fd, ret;

	if (db_path == NULL || backup_path == NULL)
		return VEP_ERR_ARG;
	if ((ret = open_checked(backup_path, &src, NULL)) != 0)
		return ret;
	/* 0600 from the first byte, as db_open_path makes it. */
	fd = open(db_path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0)
		(void)close(fd);
	else if (errno != EEXIST) {
		ret = VEP_ERR_IO;
		goto out;
	}
	if ((ret = open_conn(db_path, SQLITE_OPEN_READWRITE, &dst)) != 0)
		goto out;
	/* Exclusive locking mode keeps the lock from the first transaction to
	 * close, and in WAL mode keeps the WAL index in this process's memory:
	 * a server holding the file open (a shared lock, its -shm mapping)
	 * makes BEGIN EXCLUSIVE fail at once (busy timeout 0). */
	if ((ret = exec_sql(dst, "PRAGMA locking_mode = EXCLUSIVE")) != 0 ||
	    (ret = exec_sql(dst, "PRAGMA synchronous = FULL")) != 0 ||
	    (ret = exec_sql(dst, "BEGIN EXCLUSIVE")) != 0 ||
	    (ret = exec_sql(dst, "COMMIT")) != 0)
		goto out;
	if ((ret = copy_all(dst, src)) != 0)
		goto out;
	/* Back to the mode the server keeps the database in: the copy carries
	 * the backup's rollback-journal mark, and a reader that may not write
	 * (vep-keytool audit on the restored directory) could not change it. */
	if ((ret = exec_sql(dst, "PRAGMA journal_mode = WAL")) != 0)
		goto out;
	ret = integrity_ok(dst);
out:
	sqlite3_close_v2(src);
	if (dst != NULL && sqlite3_close(dst) != SQLITE_OK && ret == 0)
		ret = VEP_ERR_IO;
	return ret;
}
