/*
 * db_testutil.h - helpers shared by the storage unit tests (test_db*.c,
 * test_cmd_audit.c): a private temporary directory per test run, a second
 * raw SQLite connection to look at the file behind the module's back, and
 * reading whole files to scan their bytes.
 *
 * The same tests run against PostgreSQL when VEP_TEST_PG holds a connection
 * string (tests/unit/pg_run.py starts a cluster of its own and sets it):
 * tu_db_open then opens that store, and tu_raw_* look at it through libpq.
 *
 * Header-only (static inline functions) so each test stays one executable.
 */
#ifndef VEP_TEST_DB_TESTUTIL_H
#define VEP_TEST_DB_TESTUTIL_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "store/db.h"

/* Creates a fresh directory under $TMPDIR (or /tmp); returns a malloc'd path
 * or NULL. */
static inline char *
tu_mkdtemp(void)
{
	const char *base = getenv("TMPDIR");
	char *path = NULL;

	if (base == NULL || *base == '\0')
		base = "/tmp";
	if (asprintf(&path, "%s/vepdb-test-XXXXXX", base) < 0)
		return NULL;
	if (mkdtemp(path) == NULL) {
		free(path);
		return NULL;
	}
	return path;
}

/* Removes the files directly inside dir, then dir, and frees the path. */
static inline void
tu_rmdir(char *dir)
{
	DIR *d;
	struct dirent *e;
	char *p;

	if (dir == NULL)
		return;
	if ((d = opendir(dir)) != NULL) {
		while ((e = readdir(d)) != NULL) {
			if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
				continue;
			if (asprintf(&p, "%s/%s", dir, e->d_name) >= 0) {
				(void)unlink(p);
				free(p);
			}
		}
		closedir(d);
	}
	(void)rmdir(dir);
	free(dir);
}

/* dir/name as a new string (aborts on OOM: tests only). */
static inline char *
tu_path(const char *dir, const char *name)
{
	char *p = NULL;

	if (asprintf(&p, "%s/%s", dir, name) < 0)
		abort();
	return p;
}

/* A second, raw connection to the database file. */
static inline sqlite3 *
tu_raw_open(const char *path)
{
	sqlite3 *c = NULL;

	if (sqlite3_open_v2(path, &c, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		sqlite3_close(c);
		return NULL;
	}
	return c;
}

/* Runs a query yielding one integer; -1 on error. */
static inline long long
tu_raw_int(sqlite3 *c, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long v = -1;

	if (sqlite3_prepare_v2(c, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* The PostgreSQL store under test, or NULL for the SQLite file. */
static inline const char *
tu_pg(void)
{
	const char *c = getenv("VEP_TEST_PG");

	return c != NULL && *c != '\0' ? c : NULL;
}

/* db_open of dir's file, or of the PostgreSQL store under test; opt may be
 * NULL. */
static inline int
tu_db_open(const char *dir, const struct db_options *opt, struct db **out)
{
	struct db_options o = { 0 };

	if (opt != NULL)
		o = *opt;
	if (tu_pg() != NULL)
		o.pg_conninfo = tu_pg();
	return db_open(dir, &o, out);
}

/* A second, raw connection to the store of dir (either engine). */
struct tu_raw {
	sqlite3 *sq;
	PGconn *pg;
};

static inline int
tu_raw_connect(const char *dir, struct tu_raw *r)
{
	char *path;

	memset(r, 0, sizeof(*r));
	if (tu_pg() != NULL) {
		r->pg = PQconnectdb(tu_pg());
		return r->pg != NULL && PQstatus(r->pg) == CONNECTION_OK ? 0 : -1;
	}
	if (dir == NULL)
		return -1;
	path = tu_path(dir, DB_FILE_NAME);
	r->sq = tu_raw_open(path);
	free(path);
	return r->sq != NULL ? 0 : -1;
}

static inline void
tu_raw_close(struct tu_raw *r)
{
	sqlite3_close(r->sq);
	PQfinish(r->pg);
	memset(r, 0, sizeof(*r));
}

/* Runs sql (no rows wanted): 0 or -1. */
static inline int
tu_raw_exec(struct tu_raw *r, const char *sql)
{
	PGresult *res;
	int ok;

	if (r->sq != NULL)
		return sqlite3_exec(r->sq, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
	res = PQexec(r->pg, sql);
	ok = PQresultStatus(res) == PGRES_COMMAND_OK || PQresultStatus(res) == PGRES_TUPLES_OK;
	PQclear(res);
	return ok ? 0 : -1;
}

/* One integer from sql; -1 on error (NULL reads as 0). */
static inline long long
tu_raw_value(struct tu_raw *r, const char *sql)
{
	PGresult *res;
	long long v = -1;

	if (r->sq != NULL)
		return tu_raw_int(r->sq, sql);
	res = PQexec(r->pg, sql);
	if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) == 1)
		v = PQgetisnull(res, 0, 0) ? 0 : strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return v;
}

/* One integer from the store of dir through a fresh raw connection. */
static inline long long
tu_store_int(const char *dir, const char *sql)
{
	struct tu_raw r;
	long long v = -1;

	if (tu_raw_connect(dir, &r) == 0)
		v = tu_raw_value(&r, sql);
	tu_raw_close(&r);
	return v;
}

/* Starts a transaction on r that holds off every writer of table until
 * the ROLLBACK (SQLite: the file's write lock; PostgreSQL: a table lock
 * that conflicts with INSERT, UPDATE and DELETE). 0 or -1. */
static inline int
tu_raw_lock_writes(struct tu_raw *r, const char *table)
{
	char sql[96];

	if (r->sq != NULL)
		return tu_raw_exec(r, "BEGIN IMMEDIATE");
	if (tu_raw_exec(r, "BEGIN") != 0)
		return -1;
	(void)snprintf(sql, sizeof(sql), "LOCK TABLE %s IN EXCLUSIVE MODE", table);
	return tu_raw_exec(r, sql);
}

/* Reads a whole file; *len gets its size. NULL if missing or unreadable. */
static inline unsigned char *
tu_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	long n;

	*len = 0;
	if (f == NULL)
		return NULL;
	if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 &&
	    fseek(f, 0, SEEK_SET) == 0 && (buf = malloc((size_t)n + 1)) != NULL) {
		if (fread(buf, 1, (size_t)n, f) != (size_t)n) {
			free(buf);
			buf = NULL;
		} else {
			*len = (size_t)n;
		}
	}
	fclose(f);
	return buf;
}

#endif
