/*
 * db_testutil.h - helpers shared by the storage unit tests (test_db*.c,
 * test_cmd_audit.c): a private temporary directory per test run, a second
 * raw SQLite connection to look at the file behind the module's back, and
 * reading whole files to scan their bytes.
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

#include <sqlite3.h>

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
