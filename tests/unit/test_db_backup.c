/*
 * test_db_backup.c - store/backup.c on real SQLite files: a backup made
 * while another connection keeps writing is one consistent commit, passes
 * integrity_check, is a single file (no -wal beside it) and refuses a
 * non-empty destination; a restore puts every row back, refuses while
 * another connection holds the database, refuses a damaged, foreign or
 * newer backup; and the read-write "existing" open never creates or
 * migrates a file.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/audit.h"
#include "store/backup.h"
#include "store/db.h"
#include "audit_testutil.h"
#include "db_testutil.h"
#include "harness.h"

/* Rows the writer thread adds while the backup runs. */
#define WRITER_ROWS 400

static char *dir;

/* An empty 0600 file, as cmd_backup makes one. */
static char *
empty_file(const char *name)
{
	char *p = tu_path(dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600);

	if (fd >= 0)
		close(fd);
	return p;
}

/* A raw connection that creates the file (tu_raw_open does not). */
static sqlite3 *
raw_create(const char *path)
{
	sqlite3 *c = NULL;

	if (sqlite3_open(path, &c) != SQLITE_OK) {
		sqlite3_close(c);
		return NULL;
	}
	return c;
}

static long long
count_in(const char *path, const char *sql)
{
	sqlite3 *raw = tu_raw_open(path);
	long long n = raw ? tu_raw_int(raw, sql) : -1;

	sqlite3_close(raw);
	return n;
}

/* Byte 18 of the file's header: 1 for a rollback journal, 2 for WAL. */
static int
header_journal_byte(const char *path)
{
	unsigned char h[20];
	FILE *f = fopen(path, "rb");
	size_t n = f != NULL ? fread(h, 1, sizeof(h), f) : 0;

	if (f != NULL)
		fclose(f);
	return n == sizeof(h) ? h[18] : -1;
}

struct writer {
	char *path;
	int done;
};

/* Another connection adding audit rows one commit each, as the server does. */
static void *
write_rows(void *arg)
{
	struct writer *w = arg;
	struct db *db = NULL;
	int i;

	if (db_open_path(w->path, NULL, &db) != 0)
		return NULL;
	for (i = 0; i < WRITER_ROWS; i++)
		if (tu_audit_login(db, 1000 + i, 1, "burst@example.com", "192.0.2.9", "ok") != 0)
			break;
	db_close(db);
	w->done = i;
	return NULL;
}

static void
test_backup_consistent_while_writing(void)
{
	struct writer w = { .path = tu_path(dir, DB_FILE_NAME) };
	char *bak = empty_file("consistent.bak"), *wal;
	struct db *db = NULL, *src = NULL;
	struct db_options ro = { .readonly = 1 };
	long long n, maxid;
	pthread_t t;
	struct stat st;
	int v = 0;

	ASSERT_EQ(db_open_path(w.path, NULL, &db), 0);
	ASSERT_EQ(tu_audit_login(db, 1, 1, "first@example.com", "192.0.2.1", "ok"), 0);
	ASSERT_EQ(db_open_path(w.path, &ro, &src), 0);
	ASSERT_EQ(pthread_create(&t, NULL, write_rows, &w), 0);
	usleep(20000);
	ASSERT_EQ(db_backup(src, bak), 0);
	pthread_join(t, NULL);
	ASSERT_EQ(w.done, WRITER_ROWS);
	/* One commit's worth: rows 1..N without a gap, whatever N was. */
	n = count_in(bak, "SELECT count(*) FROM audit");
	maxid = count_in(bak, "SELECT max(id) FROM audit");
	ASSERT_TRUE(n >= 1);
	ASSERT_EQ(n, maxid);
	ASSERT_EQ(db_backup_check(bak, &v), 0);
	ASSERT_EQ(v, db_schema_version_known());
	ASSERT_EQ(stat(bak, &st), 0);
	ASSERT_EQ(st.st_mode & 0777, 0600);
	wal = tu_path(dir, "consistent.bak-wal");
	ASSERT_TRUE(access(wal, F_OK) != 0);
	free(wal);
	/* A destination that is not empty is never written. */
	ASSERT_EQ(db_backup(src, bak), VEP_ERR_IO);
	ASSERT_EQ(count_in(bak, "SELECT count(*) FROM audit"), n);
	db_close(src);
	db_close(db);
	free(bak);
	free(w.path);
}

static void
test_restore(void)
{
	char *live = tu_path(dir, DB_FILE_NAME), *bak = empty_file("restore.bak");
	char *fresh = tu_path(dir, "fresh.db");
	struct db_options ro = { .readonly = 1 };
	struct db *db = NULL, *holder = NULL;
	long long before;
	struct stat st;

	ASSERT_EQ(db_open_path(live, &ro, &db), 0);
	ASSERT_EQ(db_backup(db, bak), 0);
	db_close(db);
	before = count_in(bak, "SELECT count(*) FROM audit");
	ASSERT_TRUE(before > 1);

	/* Into a new file: created 0600, every row there. */
	ASSERT_EQ(db_restore(fresh, bak), 0);
	ASSERT_EQ(stat(fresh, &st), 0);
	ASSERT_EQ(st.st_mode & 0777, 0600);
	ASSERT_EQ(count_in(fresh, "SELECT count(*) FROM audit"), before);
	/* In the server's WAL mode again, so a reader may open it as it is. */
	ASSERT_EQ(header_journal_byte(fresh), 2);
	ASSERT_EQ(db_open_path(fresh, &ro, &db), 0);
	db_close(db);
	ASSERT_EQ(db_open_path(fresh, NULL, &db), 0);
	ASSERT_EQ(db_check_integrity(db), 0);

	/* Over a database that has moved on: back to the backup's rows. */
	ASSERT_EQ(tu_audit_login(db, 5, 0, "later@example.com", "192.0.2.2", "bad_password"), 0);
	db_close(db);
	ASSERT_EQ(db_restore(fresh, bak), 0);
	ASSERT_EQ(count_in(fresh, "SELECT count(*) FROM audit"), before);

	/* Refused, with nothing changed, while another connection has it open. */
	ASSERT_EQ(db_open_path(fresh, NULL, &holder), 0);
	ASSERT_EQ(tu_audit_login(holder, 6, 0, "held@example.com", "192.0.2.3", "x"), 0);
	ASSERT_EQ(db_restore(fresh, bak), DB_ERR_BUSY);
	ASSERT_EQ(count_in(fresh, "SELECT count(*) FROM audit"), before + 1);
	db_close(holder);

	free(live);
	free(bak);
	free(fresh);
}

static void
test_bad_backups(void)
{
	char *junk = tu_path(dir, "junk.bak"), *foreign = tu_path(dir, "foreign.bak");
	char *newer = tu_path(dir, "newer.bak"), *target = tu_path(dir, "target.db");
	char *missing = tu_path(dir, "missing.bak");
	char sql[64];
	sqlite3 *raw;
	int fd;

	fd = open(junk, O_WRONLY | O_CREAT | O_EXCL, 0600);
	ASSERT_TRUE(fd >= 0);
	ASSERT_EQ(write(fd, "not a database at all, not even close to one....", 48), 48);
	close(fd);
	ASSERT_EQ(db_backup_check(junk, NULL), DB_ERR_CORRUPT);
	ASSERT_EQ(db_restore(target, junk), DB_ERR_CORRUPT);
	ASSERT_TRUE(access(target, F_OK) != 0);

	raw = raw_create(foreign);
	ASSERT_TRUE(raw != NULL);
	ASSERT_EQ(sqlite3_exec(raw, "CREATE TABLE t (a)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	ASSERT_EQ(db_backup_check(foreign, NULL), DB_ERR_SCHEMA);

	raw = raw_create(newer);
	ASSERT_TRUE(raw != NULL);
	(void)snprintf(sql, sizeof(sql), "PRAGMA user_version = %d",
	    db_schema_version_known() + 1);
	ASSERT_EQ(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	ASSERT_EQ(db_backup_check(newer, NULL), DB_ERR_NEWER);
	ASSERT_EQ(db_backup_check(missing, NULL), VEP_ERR_IO);
	ASSERT_EQ(db_backup_check(NULL, NULL), VEP_ERR_ARG);
	ASSERT_EQ(db_backup(NULL, junk), VEP_ERR_ARG);
	ASSERT_TRUE(access(target, F_OK) != 0);
	free(junk);
	free(foreign);
	free(newer);
	free(target);
	free(missing);
}

static void
test_existing_open(void)
{
	struct db_options ex = { .existing = 1 };
	char *missing = tu_path(dir, "nothing.db"), *old = tu_path(dir, "old.db");
	struct db *db = NULL;
	sqlite3 *raw;

	ASSERT_TRUE(db_open_path(missing, &ex, &db) != 0);
	ASSERT_TRUE(db == NULL);
	ASSERT_TRUE(access(missing, F_OK) != 0);
	raw = raw_create(old);
	ASSERT_TRUE(raw != NULL);
	ASSERT_EQ(sqlite3_exec(raw, "PRAGMA user_version = 1", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(raw);
	ASSERT_EQ(db_open_path(old, &ex, &db), DB_ERR_SCHEMA);
	ASSERT_EQ(count_in(old, "PRAGMA user_version"), 1);
	free(missing);
	free(old);
}

int
main(void)
{
	if ((dir = tu_mkdtemp()) == NULL)
		return 77;
	RUN(test_backup_consistent_while_writing);
	RUN(test_restore);
	RUN(test_bad_backups);
	RUN(test_existing_open);
	tu_rmdir(dir);
	return harness_done();
}
