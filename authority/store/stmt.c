/*
 * store/stmt.c - one statement interface over both engines (store/internal.h):
 * the table modules bind, step and read columns the same way whether the
 * connection is SQLite or PostgreSQL, so each module's logic is written
 * once and only the SQL text may differ.
 *
 * SQLite: a thin cover over a persistent prepared statement. PostgreSQL:
 * the bound values are gathered (integers printed, strings and blobs
 * borrowed), sent on the first step, and the rows read from the result.
 * It never copies or logs a bound value.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/pg.h"

/* PostgreSQL's type oids for the values we bind (pg_type.h). */
#define PG_OID_BYTEA 17
#define PG_OID_INT8 20
#define PG_OID_TEXT 25

struct db_st {
	struct db *db;
	int slot;
	sqlite3_stmt *sq;           /* SQLite */
	char *pg_sql;               /* PostgreSQL: the text with $N (owned) */
	int n;                      /* highest parameter bound */
	Oid types[DB_PG_PARAMS_MAX];
	const char *vals[DB_PG_PARAMS_MAX];
	int lens[DB_PG_PARAMS_MAX];
	int fmts[DB_PG_PARAMS_MAX];
	char nums[DB_PG_PARAMS_MAX][24];
	PGresult *res;              /* the last run's rows */
	int row;                    /* current row of res */
	int64_t changes;
	int error;                  /* a bind that could not be taken */
};

/* SQLite's ?N placeholders as PostgreSQL's $N (no quoted '?' in our SQL). */
static char *
pg_text(const char *sql)
{
	char *out = strdup(sql);
	char *p;

	if (out == NULL)
		return NULL;
	for (p = out; *p != '\0'; p++)
		if (*p == '?' && p[1] >= '1' && p[1] <= '9')
			*p = '$';
	return out;
}

int
db_stmt(struct db *db, enum db_stmt_slot slot, const struct db_sql *sql,
    struct db_st **out)
{
	struct db_st *st;
	int rc;

	*out = NULL;
	if (db == NULL || (unsigned)slot >= DB_STMT__COUNT || sql == NULL)
		return VEP_ERR_ARG;
	st = db->stmts[slot];
	if (st == NULL) {
		if ((st = calloc(1, sizeof(*st))) == NULL)
			return VEP_ERR_NOMEM;
		st->db = db;
		st->slot = (int)slot;
		if (db->engine == DB_ENGINE_PG) {
			st->pg_sql = sql->pg != NULL ? strdup(sql->pg) : pg_text(sql->sqlite);
			if (st->pg_sql == NULL) {
				free(st);
				return VEP_ERR_NOMEM;
			}
		} else {
			/* PERSISTENT: these live as long as the connection. */
			rc = sqlite3_prepare_v3(db->conn, sql->sqlite, -1,
			    SQLITE_PREPARE_PERSISTENT, &st->sq, NULL);
			if (rc != SQLITE_OK) {
				free(st);
				return db_err(rc);
			}
		}
		db->stmts[slot] = st;
	}
	db_stmt_done(st);
	*out = st;
	return VEP_OK;
}

/* Sets PostgreSQL parameter i (1-based) to val (borrowed; NULL: NULL) of
 * type, len bytes in binary format when fmt is 1. An index out of range is
 * remembered as the statement's error. */
static void
pg_set(struct db_st *st, int i, const char *val, Oid type, int len, int fmt)
{
	if (i < 1 || i > DB_PG_PARAMS_MAX) {
		st->error = VEP_ERR_ARG;
		return;
	}
	if (i > st->n)
		st->n = i;
	st->vals[i - 1] = val;
	st->types[i - 1] = type;
	st->lens[i - 1] = len;
	st->fmts[i - 1] = fmt;
}

/* SQLite's answer to a bind, remembered as the statement's error. */
static void
sq_bound(struct db_st *st, int rc)
{
	if (rc != SQLITE_OK)
		st->error = DB_ERR_INTERNAL;
}

void
db_st_int(struct db_st *st, int i, int64_t v)
{
	if (st->sq != NULL) {
		sq_bound(st, sqlite3_bind_int64(st->sq, i, v));
		return;
	}
	if (i < 1 || i > DB_PG_PARAMS_MAX) {
		st->error = VEP_ERR_ARG;
		return;
	}
	(void)snprintf(st->nums[i - 1], sizeof(st->nums[i - 1]), "%" PRId64, v);
	pg_set(st, i, st->nums[i - 1], PG_OID_INT8, 0, 0);
}

void
db_st_text(struct db_st *st, int i, const char *s)
{
	if (st->sq != NULL)
		sq_bound(st, s != NULL ? sqlite3_bind_text(st->sq, i, s, -1, SQLITE_STATIC) :
		    sqlite3_bind_null(st->sq, i));
	else
		pg_set(st, i, s, PG_OID_TEXT, 0, 0);
}

void
db_st_null_int(struct db_st *st, int i)
{
	if (st->sq != NULL)
		sq_bound(st, sqlite3_bind_null(st->sq, i));
	else
		pg_set(st, i, NULL, PG_OID_INT8, 0, 0);
}

void
db_st_blob(struct db_st *st, int i, const void *p, size_t n)
{
	if (n > INT32_MAX)
		st->error = VEP_ERR_TOOBIG;
	else if (st->sq != NULL)
		sq_bound(st, sqlite3_bind_blob(st->sq, i, p, (int)n, SQLITE_STATIC));
	else  /* binary: the bytes as they are */
		pg_set(st, i, p, PG_OID_BYTEA, (int)n, 1);
}

static int
pg_step(struct db_st *st)
{
	const char *tuples;
	int ret;

	if (st->res == NULL) {
		ret = pg_run(st->db->pg, st->slot, st->pg_sql, st->n, st->types, st->vals,
		    st->lens, st->fmts, &st->res);
		if (ret != 0)
			return ret;
		tuples = PQcmdTuples(st->res);
		st->changes = tuples[0] != '\0' ? strtoll(tuples, NULL, 10) : 0;
		st->row = 0;
	} else {
		st->row++;
	}
	return st->row < PQntuples(st->res) ? DB_ROW : 0;
}

int
db_st_step(struct db_st *st)
{
	int rc;

	if (st->error != 0)
		return st->error;
	if (st->sq == NULL)
		return pg_step(st);
	rc = sqlite3_step(st->sq);
	if (rc == SQLITE_ROW)
		return DB_ROW;
	return rc == SQLITE_DONE ? 0 : db_err(rc);
}

int64_t
db_st_col_int(struct db_st *st, int c)
{
	if (st->sq != NULL)
		return sqlite3_column_int64(st->sq, c);
	if (st->res == NULL || PQgetisnull(st->res, st->row, c))
		return 0;
	return strtoll(PQgetvalue(st->res, st->row, c), NULL, 10);
}

const char *
db_st_col_text(struct db_st *st, int c)
{
	if (st->sq != NULL)
		return (const char *)sqlite3_column_text(st->sq, c);
	if (st->res == NULL || PQgetisnull(st->res, st->row, c))
		return NULL;
	return PQgetvalue(st->res, st->row, c);
}

int
db_st_col_null(struct db_st *st, int c)
{
	if (st->sq != NULL)
		return sqlite3_column_type(st->sq, c) == SQLITE_NULL;
	return st->res == NULL || PQgetisnull(st->res, st->row, c);
}

int64_t
db_st_changes(struct db_st *st)
{
	if (st->sq != NULL)
		return sqlite3_changes64(st->db->conn);
	return st->changes;
}

void
db_stmt_done(struct db_st *st)
{
	if (st == NULL)
		return;
	st->error = 0;
	if (st->sq != NULL) {
		sqlite3_reset(st->sq);
		/* Bindings are SQLITE_STATIC: drop them before the strings go. */
		sqlite3_clear_bindings(st->sq);
		return;
	}
	PQclear(st->res);
	st->res = NULL;
	st->n = 0;
	memset(st->vals, 0, sizeof(st->vals));
	memset(st->types, 0, sizeof(st->types));
}

int
db_step_done(struct db_st *st)
{
	int rc = db_st_step(st);

	db_stmt_done(st);
	if (rc == 0)
		return VEP_OK;
	return rc == DB_ROW ? DB_ERR_INTERNAL : rc;
}

int
db_st_queue(struct db_st *st)
{
	int ret;

	if (st->sq != NULL || st->error != 0)
		return db_step_done(st);
	ret = pg_pipeline_send(st->db->pg, st->slot, st->pg_sql, st->n, st->types, st->vals,
	    st->lens, st->fmts);
	db_stmt_done(st);
	return ret;
}

void
db_stmts_free(struct db *db)
{
	size_t i;

	for (i = 0; i < DB_STMT__COUNT; i++) {
		struct db_st *st = db->stmts[i];

		if (st == NULL)
			continue;
		sqlite3_finalize(st->sq);
		PQclear(st->res);
		free(st->pg_sql);
		free(st);
		db->stmts[i] = NULL;
	}
}
