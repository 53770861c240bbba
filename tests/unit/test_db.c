/*
 * test_db.c - the connection module on real SQLite files: migrations from
 * scratch and idempotent re-open, refusal of a newer schema (leaving the
 * file untouched), WAL mode, file mode 0600, read-only opens, a damaged
 * file, the busy-timeout limit, the error table and the size limit.
 */
#include <sys/stat.h>
#include <sys/time.h>

#include "store/db.h"
#include "store/internal.h"
#include "db_testutil.h"
#include "harness.h"

static char *dir;

static char *
db_file(void)
{
	return tu_path(dir, DB_FILE_NAME);
}

static void
test_fresh(void)
{
	struct db *db = NULL;
	char mode[16], *path = db_file();
	struct stat sb;
	sqlite3 *raw;
	int v = -1;

	ASSERT_EQ(db_open(dir, NULL, &db), 0);
	ASSERT_TRUE(db != NULL);
	ASSERT_EQ(db_schema_version(db, &v), 0);
	ASSERT_EQ(v, db_schema_version_known());
	ASSERT_TRUE(v >= 1);
	ASSERT_EQ(db_journal_mode(db, mode, sizeof(mode)), 0);
	ASSERT_STREQ(mode, "wal");
	ASSERT_EQ(db_check_integrity(db), 0);
	db_close(db);

	ASSERT_EQ(stat(path, &sb), 0);
	ASSERT_EQ(sb.st_mode & 0777, 0600);
	ASSERT_TRUE((raw = tu_raw_open(path)) != NULL);
	ASSERT_EQ(tu_raw_int(raw, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"
	    " AND name IN ('sessions', 'throttle', 'audit', 'audit_events')"), 4);
	ASSERT_EQ(tu_raw_int(raw, "PRAGMA user_version"), db_schema_version_known());
	sqlite3_close(raw);
	free(path);
}

static void
test_reopen_idempotent(void)
{
	struct db *db = NULL;
	char *path = db_file();
	sqlite3 *raw;
	int v = 0;

	/* A row written after the first open must survive later opens: the
	 * migrations must not run again. */
	ASSERT_TRUE((raw = tu_raw_open(path)) != NULL);
	ASSERT_EQ(sqlite3_exec(raw, "INSERT INTO audit (ts_ms, event, email, client_addr,"
	    " outcome) VALUES (1, 1, 'a@example.com', '127.0.0.1', 'ok')", NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(raw);
	ASSERT_EQ(db_open(dir, NULL, &db), 0);
	ASSERT_EQ(db_schema_version(db, &v), 0);
	ASSERT_EQ(v, db_schema_version_known());
	db_close(db);
	db = NULL;
	ASSERT_EQ(db_open(dir, NULL, &db), 0);
	db_close(db);
	ASSERT_TRUE((raw = tu_raw_open(path)) != NULL);
	ASSERT_EQ(tu_raw_int(raw, "SELECT count(*) FROM audit"), 1);
	ASSERT_EQ(sqlite3_exec(raw, "DELETE FROM audit", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	free(path);
}

static void
test_newer_refused(void)
{
	struct db *db = (struct db *)&db;
	char *path = tu_path(dir, "newer.db"), sql[64];
	sqlite3 *raw = NULL;
	int newer = db_schema_version_known() + 1;

	/* A rollback-journal file from a "future" binary: we must neither
	 * migrate it nor switch it to WAL. */
	ASSERT_EQ(sqlite3_open(path, &raw), SQLITE_OK);
	(void)snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", newer);
	ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE future (x)", NULL, NULL, NULL), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);

	ASSERT_EQ(db_open_path(path, NULL, &db), DB_ERR_NEWER);
	ASSERT_TRUE(db == NULL);
	ASSERT_TRUE((raw = tu_raw_open(path)) != NULL);
	ASSERT_EQ(tu_raw_int(raw, "PRAGMA user_version"), newer);
	ASSERT_EQ(tu_raw_int(raw, "SELECT count(*) FROM sqlite_schema WHERE name = 'audit'"), 0);
	sqlite3_close(raw);
	{
		struct db_options ro = { .readonly = 1 };

		ASSERT_EQ(db_open_path(path, &ro, &db), DB_ERR_NEWER);
	}
	{
		/* Header bytes 18 and 19 are 1 for a rollback journal, 2 for WAL. */
		size_t len;
		unsigned char *buf = tu_read_file(path, &len);

		ASSERT_TRUE(buf != NULL && len >= 100);
		ASSERT_EQ(buf[18], 1);
		ASSERT_EQ(buf[19], 1);
		free(buf);
	}
	free(path);
}

static void
test_readonly(void)
{
	struct db_options ro = { .readonly = 1 };
	struct db *db = NULL;
	char *old = tu_path(dir, "old.db"), *missing = tu_path(dir, "missing.db");
	sqlite3 *raw = NULL;
	int v = 0;

	ASSERT_EQ(db_open(dir, &ro, &db), 0);
	ASSERT_EQ(db_schema_version(db, &v), 0);
	ASSERT_EQ(v, db_schema_version_known());
	db_close(db);
	db = NULL;

	/* Read-only never creates and never migrates. */
	ASSERT_EQ(db_open_path(missing, &ro, &db), VEP_ERR_IO);
	ASSERT_TRUE(access(missing, F_OK) != 0);
	ASSERT_EQ(sqlite3_open(old, &raw), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE t (x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	ASSERT_EQ(db_open_path(old, &ro, &db), DB_ERR_SCHEMA);
	ASSERT_TRUE(db == NULL);
	/* The same file opened read-write is migrated from version 0. */
	ASSERT_EQ(db_open_path(old, NULL, &db), 0);
	ASSERT_EQ(db_schema_version(db, &v), 0);
	ASSERT_EQ(v, db_schema_version_known());
	db_close(db);
	free(old);
	free(missing);
}

static void
test_not_a_database(void)
{
	struct db *db = NULL;
	char *path = tu_path(dir, "junk.db");
	FILE *f = fopen(path, "wb");
	char junk[4096];

	ASSERT_TRUE(f != NULL);
	memset(junk, 'x', sizeof(junk));
	ASSERT_EQ(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	fclose(f);
	ASSERT_EQ(db_open_path(path, NULL, &db), DB_ERR_CORRUPT);
	ASSERT_TRUE(db == NULL);
	free(path);
}

static void
test_args(void)
{
	struct db_options o = { 0 };
	struct db *db = (struct db *)&o;

	ASSERT_EQ(db_open(NULL, NULL, &db), VEP_ERR_ARG);
	ASSERT_TRUE(db == NULL);
	ASSERT_EQ(db_open("", NULL, &db), VEP_ERR_ARG);
	ASSERT_EQ(db_open(dir, NULL, NULL), VEP_ERR_ARG);
	ASSERT_EQ(db_open("/nonexistent/dir/for/sure", NULL, &db), VEP_ERR_IO);
	o.busy_timeout_ms = DB_BUSY_TIMEOUT_MS_MAX + 1;
	ASSERT_EQ(db_open(dir, &o, &db), VEP_ERR_ARG);
	o.busy_timeout_ms = -1;
	ASSERT_EQ(db_open(dir, &o, &db), VEP_ERR_ARG);
	o.busy_timeout_ms = DB_BUSY_TIMEOUT_MS_MAX;
	ASSERT_EQ(db_open(dir, &o, &db), 0);
	db_close(db);
	db_close(NULL);
}

static void
test_err_table(void)
{
	ASSERT_EQ(db_err(SQLITE_OK), 0);
	ASSERT_EQ(db_err(SQLITE_DONE), 0);
	ASSERT_EQ(db_err(SQLITE_FULL), DB_ERR_FULL);
	ASSERT_EQ(db_err(SQLITE_BUSY), DB_ERR_BUSY);
	ASSERT_EQ(db_err(SQLITE_BUSY_SNAPSHOT), DB_ERR_BUSY);
	ASSERT_EQ(db_err(SQLITE_LOCKED), DB_ERR_BUSY);
	ASSERT_EQ(db_err(SQLITE_IOERR_FSYNC), VEP_ERR_IO);
	ASSERT_EQ(db_err(SQLITE_CONSTRAINT_UNIQUE), VEP_ERR_EXISTS);
	ASSERT_EQ(db_err(SQLITE_CONSTRAINT_CHECK), VEP_ERR_INVALID);
	ASSERT_EQ(db_err(SQLITE_NOTADB), DB_ERR_CORRUPT);
	ASSERT_EQ(db_err(SQLITE_MISUSE), DB_ERR_INTERNAL);
	ASSERT_STREQ(srv_strerror(DB_ERR_FULL), "database full");
	ASSERT_STREQ(srv_strerror(DB_ERR_BUSY), "database busy");
	/* Codes outside the DB set fall through to libvep's table. */
	ASSERT_STREQ(srv_strerror(VEP_ERR_NOMEM), vep_strerror(VEP_ERR_NOMEM));
}

static void
test_size_limit(void)
{
	struct db *db = NULL;

	ASSERT_EQ(db_open(dir, NULL, &db), 0);
	ASSERT_EQ(db_set_size_limit(db, -1), VEP_ERR_ARG);
	ASSERT_EQ(db_set_size_limit(NULL, 0), VEP_ERR_ARG);
	/* A cap below the current size is raised to it by SQLite: not an error. */
	ASSERT_EQ(db_set_size_limit(db, 1), 0);
	ASSERT_EQ(db_set_size_limit(db, 0), 0);
	db_close(db);
}

/* The busy timeout is the connection's deadline: a migration that meets
 * another writer gives up with DB_ERR_BUSY close to it, not never. */
static void
test_busy_on_open(void)
{
	struct db_options o = { .busy_timeout_ms = 200 };
	struct db *db = NULL;
	char *path = tu_path(dir, "busy.db");
	struct timeval t0, t1;
	sqlite3 *raw = NULL;
	long ms;

	ASSERT_EQ(sqlite3_open(path, &raw), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(raw, "PRAGMA journal_mode = WAL", NULL, NULL, NULL), SQLITE_OK);
	ASSERT_EQ(sqlite3_exec(raw, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	gettimeofday(&t0, NULL);
	ASSERT_EQ(db_open_path(path, &o, &db), DB_ERR_BUSY);
	gettimeofday(&t1, NULL);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000;
	ASSERT_TRUE(ms >= 150);
	ASSERT_TRUE(ms < 3000);
	ASSERT_TRUE(db == NULL);
	/* Without options the deadline is DB_BUSY_TIMEOUT_MS_DEFAULT. */
	gettimeofday(&t0, NULL);
	ASSERT_EQ(db_open_path(path, NULL, &db), DB_ERR_BUSY);
	gettimeofday(&t1, NULL);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_usec - t0.tv_usec) / 1000;
	ASSERT_TRUE(ms >= DB_BUSY_TIMEOUT_MS_DEFAULT - 50);
	ASSERT_TRUE(ms < DB_BUSY_TIMEOUT_MS_DEFAULT + 3000);
	ASSERT_EQ(sqlite3_exec(raw, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);
	ASSERT_EQ(db_open_path(path, &o, &db), 0);
	db_close(db);
	sqlite3_close(raw);
	free(path);
}

int
main(void)
{
	if ((dir = tu_mkdtemp()) == NULL) {
		fprintf(stderr, "cannot create a temporary directory\n");
		return 77;
	}
	RUN(test_fresh);
	RUN(test_reopen_idempotent);
	RUN(test_newer_refused);
	RUN(test_readonly);
	RUN(test_not_a_database);
	RUN(test_args);
	RUN(test_err_table);
	RUN(test_size_limit);
	RUN(test_busy_on_open);
	tu_rmdir(dir);
	return harness_done();
}
