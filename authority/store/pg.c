/*
 * store/pg.c - the PostgreSQL engine (contract in store/pg.h): connecting,
 * the session's settings, migrations, prepared statements and SQLSTATE ->
 * DB_ERR_* conversion.
 *
 * It must never log or print a bound value, nor the connection string
 * (it may hold a password), and never leave a transaction open when
 * pg_open returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/pg.h"
#include "util.h"
#include "migrations.h"

/* The migrations' advisory lock (db_tx_lock's are PG_LOCK_BASE + n, n >= 1). */
#define PG_LOCK_MIGRATE PG_LOCK_BASE

/* Seconds libpq waits for a server before giving up on a connection. */
#define PG_CONNECT_TIMEOUT_S "5"

/* After a failed reconnection, calls fail at once for this long (ms)
 * before the next attempt: a server that is down costs each request
 * nothing, one that hangs costs one connect timeout per this period. */
#define PG_RETRY_MS 1000

/* How much longer than the busy timeout a statement may run before the
 * server cancels it: a statement that waits for no lock is an indexed
 * lookup or a short write, so only a stuck server reaches this. */
#define PG_STATEMENT_SLACK_MS 4000

/* A prepared statement of this connection: the types it was prepared with. */
struct pg_prepared {
	int ready;
	int n;
	Oid types[DB_PG_PARAMS_MAX];
};

struct pg {
	PGconn *conn;
	int busy_ms;
	int in_tx;
	int broken_in_tx;  /* the connection broke inside the open transaction */
	int64_t retry_at_ms; /* monotonic: no reconnection before this */
	int piped;         /* in a pipeline (pg_pipeline_begin) */
	int pipe_results;  /* results the pipeline's commands will give */
	int pipe_err;      /* the first error of the pipeline, or 0 */
	int *pipe_slot;    /* owned: per result, the slot it prepares, or -1 */
	int pipe_cap;
	struct pg_prepared prepared[DB_STMT__COUNT];
};

/* SQLSTATE classes and codes, most specific first. */
static const struct {
	const char *state;  /* 5 characters, or a 2-character class */
	int err;
} pg_err_table[] = {
	{ "23505", VEP_ERR_EXISTS },   /* unique_violation */
	{ "23", VEP_ERR_INVALID },     /* integrity constraint */
	{ "53100", DB_ERR_FULL },      /* disk_full */
	{ "53", DB_ERR_FULL },         /* insufficient resources */
	{ "54", VEP_ERR_TOOBIG },      /* program limit exceeded */
	{ "55P03", DB_ERR_BUSY },      /* lock_not_available (lock_timeout) */
	{ "57014", DB_ERR_BUSY },      /* query_canceled (statement_timeout) */
	{ "40", DB_ERR_BUSY },         /* serialization failure, deadlock */
	{ "57P", DB_ERR_DOWN },        /* admin shutdown, crash, cannot connect now */
	{ "08", DB_ERR_DOWN },         /* connection exception */
	{ "58", VEP_ERR_IO },          /* system error (I/O) */
	{ "XX001", DB_ERR_CORRUPT },   /* data_corrupted */
	{ "XX002", DB_ERR_CORRUPT },   /* index_corrupted */
};

static int
pg_err_state(const char *state)
{
	size_t i, len;

	if (state == NULL)
		return DB_ERR_INTERNAL;
	for (i = 0; i < sizeof(pg_err_table) / sizeof(pg_err_table[0]); i++) {
		len = strlen(pg_err_table[i].state);
		if (strncmp(state, pg_err_table[i].state, len) == 0)
			return pg_err_table[i].err;
	}
	return DB_ERR_INTERNAL;
}

/* The error of a failed result (or of a missing one). */
static int
pg_err_result(struct pg *pg, const PGresult *res)
{
	if (PQstatus(pg->conn) != CONNECTION_OK) {
		if (pg->in_tx)
			pg->broken_in_tx = 1;
		return DB_ERR_DOWN;
	}
	if (res == NULL)
		return VEP_ERR_NOMEM;
	return pg_err_state(PQresultErrorField(res, PG_DIAG_SQLSTATE));
}

static int pg_configure(struct pg *pg);

/* Before a call: a connection that broke outside a transaction is made
 * again (its prepared statements went with it). */
static int
pg_ready(struct pg *pg)
{
	size_t i;

	if (pg->broken_in_tx)
		return DB_ERR_DOWN;
	if (PQstatus(pg->conn) == CONNECTION_OK)
		return VEP_OK;
	if (pg->in_tx) {
		pg->broken_in_tx = 1;
		return DB_ERR_DOWN;
	}
	if (vep_mono_ms() < pg->retry_at_ms)
		return DB_ERR_DOWN;
	PQreset(pg->conn);
	if (PQstatus(pg->conn) != CONNECTION_OK || pg_configure(pg) != 0) {
		pg->retry_at_ms = vep_mono_ms() + PG_RETRY_MS;
		return DB_ERR_DOWN;
	}
	for (i = 0; i < DB_STMT__COUNT; i++)
		pg->prepared[i].ready = 0;
	return VEP_OK;
}

/* Runs a command; *res gets its result when want_rows. */
static int
pg_command(struct pg *pg, const char *sql, PGresult **out)
{
	PGresult *res;
	ExecStatusType status;
	int ret;

	if (out != NULL)
		*out = NULL;
	if ((ret = pg_ready(pg)) != 0)
		return ret;
	res = PQexec(pg->conn, sql);
	status = PQresultStatus(res);
	if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK &&
	    status != PGRES_EMPTY_QUERY) {
		ret = pg_err_result(pg, res);
		PQclear(res);
		return ret;
	}
	if (out != NULL)
		*out = res;
	else
		PQclear(res);
	return VEP_OK;
}

int
pg_tx_begin(struct pg *pg)
{
	int ret = pg_command(pg, "BEGIN", NULL);

	if (ret == 0)
		pg->in_tx = 1;
	return ret;
}

int
pg_tx_commit(struct pg *pg)
{
	int ret = pg_command(pg, "COMMIT", NULL);

	/* A failed COMMIT ends the transaction too (rolled back). */
	pg->in_tx = pg->broken_in_tx = 0;
	return ret;
}

void
pg_tx_rollback(struct pg *pg)
{
	/* After a break the server rolled back already. */
	if (pg->in_tx && !pg->broken_in_tx && PQstatus(pg->conn) == CONNECTION_OK)
		(void)pg_command(pg, "ROLLBACK", NULL);
	pg->in_tx = pg->broken_in_tx = 0;
}

/* One integer from a query. */
static int
pg_query_int(struct pg *pg, const char *sql, long long *out)
{
	PGresult *res;
	int ret;

	*out = 0;
	if ((ret = pg_command(pg, sql, &res)) != 0)
		return ret;
	if (PQntuples(res) != 1 || PQnfields(res) < 1 || PQgetisnull(res, 0, 0))
		ret = DB_ERR_INTERNAL;
	else
		*out = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return ret;
}

int
pg_tx_lock(struct pg *pg, long long key)
{
	char sql[80];
	long long one;

	(void)snprintf(sql, sizeof(sql), "SELECT 1 FROM pg_advisory_xact_lock(%lld)", key);
	return pg_query_int(pg, sql, &one);
}

/* Notes that slot's statement is (being) prepared with these types. */
static void
pg_prepared_as(struct pg_prepared *p, int n, const Oid *types)
{
	p->ready = 1;
	p->n = n;
	if (n > 0)
		memcpy(p->types, types, (size_t)n * sizeof(Oid));
}

static int
pg_same_types(const struct pg_prepared *p, int n, const Oid *types)
{
	return p->n == n && (n == 0 || memcmp(p->types, types, (size_t)n * sizeof(Oid)) == 0);
}

int
pg_run(struct pg *pg, int slot, const char *sql, int n, const Oid *types,
    const char *const *vals, const int *lens, const int *fmts, PGresult **out)
{
	struct pg_prepared *p;
	char name[24];
	PGresult *res;
	ExecStatusType status;
	int ret;

	*out = NULL;
	if (slot < 0 || slot >= DB_STMT__COUNT || n < 0 || n > DB_PG_PARAMS_MAX)
		return VEP_ERR_ARG;
	if ((ret = pg_ready(pg)) != 0)
		return ret;
	p = &pg->prepared[slot];
	(void)snprintf(name, sizeof(name), "vep_%d", slot);
	if (!p->ready) {
		res = PQprepare(pg->conn, name, sql, n, types);
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			ret = pg_err_result(pg, res);
			PQclear(res);
			return ret;
		}
		PQclear(res);
		pg_prepared_as(p, n, types);
	}
	if (pg_same_types(p, n, types))
		res = PQexecPrepared(pg->conn, name, n, vals, lens, fmts, 0);
	else
		res = PQexecParams(pg->conn, sql, n, types, vals, lens, fmts, 0);
	status = PQresultStatus(res);
	if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
		ret = pg_err_result(pg, res);
		PQclear(res);
		return ret;
	}
	*out = res;
	return VEP_OK;
}

/* One more result to read at the end of the pipeline: a prepare of slot,
 * or (-1) anything else. */
static int
pg_pipeline_expect(struct pg *pg, int slot)
{
	int *grown;

	if (pg->pipe_results == pg->pipe_cap) {
		grown = realloc(pg->pipe_slot, (size_t)(pg->pipe_cap + 64) * sizeof(int));
		if (grown == NULL) {
			pg->pipe_err = VEP_ERR_NOMEM;
			return VEP_ERR_NOMEM;
		}
		pg->pipe_slot = grown;
		pg->pipe_cap += 64;
	}
	pg->pipe_slot[pg->pipe_results++] = slot;
	return VEP_OK;
}

int
pg_pipeline_begin(struct pg *pg)
{
	int ret;

	if (pg->piped)
		return VEP_ERR_ARG;
	if ((ret = pg_ready(pg)) != 0)
		return ret;
	if (PQenterPipelineMode(pg->conn) != 1)
		return pg_err_result(pg, NULL);
	pg->piped = 1;
	pg->pipe_results = 0;
	pg->pipe_err = 0;
	if (PQsendQueryParams(pg->conn, "BEGIN", 0, NULL, NULL, NULL, NULL, 0) != 1) {
		pg->pipe_err = pg_err_result(pg, NULL);
		return pg->pipe_err;
	}
	return pg_pipeline_expect(pg, -1);
}

int
pg_pipeline_send(struct pg *pg, int slot, const char *sql, int n, const Oid *types,
    const char *const *vals, const int *lens, const int *fmts)
{
	struct pg_prepared *p;
	char name[24];
	int ok;

	if (!pg->piped || slot < 0 || slot >= DB_STMT__COUNT || n < 0 || n > DB_PG_PARAMS_MAX)
		return VEP_ERR_ARG;
	if (pg->pipe_err != 0)
		return pg->pipe_err;
	p = &pg->prepared[slot];
	(void)snprintf(name, sizeof(name), "vep_%d", slot);
	if (!p->ready) {
		if (PQsendPrepare(pg->conn, name, sql, n, types) != 1)
			goto fail;
		if (pg_pipeline_expect(pg, slot) != 0)
			return pg->pipe_err;
		pg_prepared_as(p, n, types);
	}
	if (pg_same_types(p, n, types))
		ok = PQsendQueryPrepared(pg->conn, name, n, vals, lens, fmts, 0);
	else
		ok = PQsendQueryParams(pg->conn, sql, n, types, vals, lens, fmts, 0);
	if (ok != 1)
		goto fail;
	return pg_pipeline_expect(pg, -1);
fail:
	pg->pipe_err = pg_err_result(pg, NULL);
	return pg->pipe_err;
}

/* Reads the result of command i and the NULL that ends it; records the
 * first error; a prepare that did not happen is made again next time. */
static void
pg_pipeline_read(struct pg *pg, int i)
{
	PGresult *res = PQgetResult(pg->conn);
	ExecStatusType st;

	if (res == NULL) {
		if (pg->pipe_err == 0)
			pg->pipe_err = pg_err_result(pg, NULL);
		return;
	}
	st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && pg->pipe_slot[i] >= 0)
		pg->prepared[pg->pipe_slot[i]].ready = 0;
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK && pg->pipe_err == 0)
		pg->pipe_err = st == PGRES_PIPELINE_ABORTED ? DB_ERR_INTERNAL :
		    pg_err_result(pg, res);
	PQclear(res);
	if ((res = PQgetResult(pg->conn)) != NULL)
		PQclear(res);
}

int
pg_pipeline_end(struct pg *pg, int commit)
{
	PGresult *res;
	int i, ret;

	if (!pg->piped)
		return VEP_ERR_ARG;
	if (pg->pipe_err == 0 && PQsendQueryParams(pg->conn, commit ? "COMMIT" : "ROLLBACK",
	    0, NULL, NULL, NULL, NULL, 0) == 1)
		(void)pg_pipeline_expect(pg, -1);
	else if (pg->pipe_err == 0)
		pg->pipe_err = pg_err_result(pg, NULL);
	if (PQpipelineSync(pg->conn) != 1 && pg->pipe_err == 0)
		pg->pipe_err = pg_err_result(pg, NULL);
	for (i = 0; i < pg->pipe_results && PQstatus(pg->conn) == CONNECTION_OK; i++)
		pg_pipeline_read(pg, i);
	/* The sync's own result ends the pipeline. */
	while (PQstatus(pg->conn) == CONNECTION_OK && (res = PQgetResult(pg->conn)) != NULL) {
		ExecStatusType st = PQresultStatus(res);

		PQclear(res);
		if (st == PGRES_PIPELINE_SYNC)
			break;
	}
	(void)PQexitPipelineMode(pg->conn);
	pg->piped = 0;
	ret = pg->pipe_err != 0 ? pg->pipe_err : PQstatus(pg->conn) != CONNECTION_OK ?
	    DB_ERR_DOWN : VEP_OK;
	/* A statement that failed left the transaction aborted: end it. */
	if (ret != 0 && PQstatus(pg->conn) == CONNECTION_OK &&
	    PQtransactionStatus(pg->conn) == PQTRANS_INERROR)
		(void)pg_command(pg, "ROLLBACK", NULL);
	return commit ? ret : VEP_OK;
}

int
pg_schema_version(struct pg *pg, int *out)
{
	long long v;
	int ret;

	*out = 0;
	/* No table yet: an empty database, version 0. */
	if ((ret = pg_query_int(pg, "SELECT count(*) FROM pg_catalog.pg_tables"
	    " WHERE tablename = 'vep_schema' AND schemaname = current_schema()", &v)) != 0 ||
	    v == 0)
		return ret;
	if ((ret = pg_query_int(pg, "SELECT coalesce(max(version), 0) FROM vep_schema", &v)) == 0)
		*out = (int)v;
	return ret;
}

/* Applies migration m unless another instance got there first: the version
 * is read under the migration lock. */
static int
pg_apply_migration(struct pg *pg, const struct db_migration *m)
{
	char sql[96];
	int v, ret;

	if ((ret = pg_tx_begin(pg)) != 0)
		return ret;
	if ((ret = pg_tx_lock(pg, PG_LOCK_MIGRATE)) != 0 ||
	    (ret = pg_command(pg, "CREATE TABLE IF NOT EXISTS vep_schema"
	    " (version INTEGER NOT NULL)", NULL)) != 0 ||
	    (ret = pg_schema_version(pg, &v)) != 0)
		goto out;
	if (v >= m->version)
		goto out;
	if (v != m->version - 1) {
		ret = DB_ERR_SCHEMA;
		goto out;
	}
	if ((ret = pg_command(pg, m->pg_sql, NULL)) != 0)
		goto out;
	(void)snprintf(sql, sizeof(sql), "DELETE FROM vep_schema;"
	    " INSERT INTO vep_schema (version) VALUES (%d)", m->version);
	if ((ret = pg_command(pg, sql, NULL)) != 0)
		goto out;
	return pg_tx_commit(pg);
out:
	pg_tx_rollback(pg);
	return ret;
}

/* Settings of every session: commits durable whatever the server's
 * default (no certificate leaves before its audit row is on disk), lock
 * waits bounded by the busy timeout, statements by a little more, UTC. */
static int
pg_configure(struct pg *pg)
{
	char sql[160];

	(void)snprintf(sql, sizeof(sql), "SET synchronous_commit = on;"
	    " SET lock_timeout = %d; SET statement_timeout = %d;"
	    " SET idle_in_transaction_session_timeout = %d",
	    pg->busy_ms, pg->busy_ms + PG_STATEMENT_SLACK_MS,
	    pg->busy_ms + PG_STATEMENT_SLACK_MS);
	return pg_command(pg, sql, NULL);
}

static void
pg_notice_ignore(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

static int
pg_connect(struct pg *pg, const char *conninfo)
{
	/* conninfo comes last: what the administrator wrote wins. */
	const char *const keys[] = { "connect_timeout", "application_name", "dbname", NULL };
	const char *const vals[] = { PG_CONNECT_TIMEOUT_S, "vep-authority", conninfo, NULL };

	pg->conn = PQconnectdbParams(keys, vals, 1);
	if (pg->conn == NULL)
		return VEP_ERR_NOMEM;
	if (PQstatus(pg->conn) != CONNECTION_OK)
		return DB_ERR_DOWN;
	/* libpq would print the server's notices on stderr. */
	(void)PQsetNoticeProcessor(pg->conn, pg_notice_ignore, NULL);
	return VEP_OK;
}

int
pg_open(const char *conninfo, enum pg_open_mode mode, int busy_ms, struct pg **out)
{
	struct pg *pg;
	int existing, version, ret;
	size_t i;

	*out = NULL;
	if (conninfo == NULL || conninfo[0] == '\0' || strlen(conninfo) > PG_CONNINFO_MAX ||
	    busy_ms <= 0)
		return VEP_ERR_ARG;
	if ((pg = calloc(1, sizeof(*pg))) == NULL)
		return VEP_ERR_NOMEM;
	pg->busy_ms = busy_ms;
	existing = mode != PG_OPEN_MIGRATE;
	if ((ret = pg_connect(pg, conninfo)) != 0 || (ret = pg_configure(pg)) != 0 ||
	    (ret = pg_schema_version(pg, &version)) != 0)
		goto fail;
	if (version > (int)db_migrations_count || version < 0) {
		ret = DB_ERR_NEWER;
		goto fail;
	}
	if (existing && version != (int)db_migrations_count) {
		ret = DB_ERR_SCHEMA;
		goto fail;
	}
	for (i = 0; !existing && i < db_migrations_count; i++)
		if ((ret = pg_apply_migration(pg, &db_migrations[i])) != 0)
			goto fail;
	if (mode == PG_OPEN_READONLY &&
	    (ret = pg_command(pg, "SET default_transaction_read_only = on", NULL)) != 0)
		goto fail;
	*out = pg;
	return VEP_OK;
fail:
	pg_close(pg);
	return ret;
}

int
pg_check(const char *conninfo, int busy_ms)
{
	struct pg *pg;
	int version, ret;

	if (conninfo == NULL || conninfo[0] == '\0' || strlen(conninfo) > PG_CONNINFO_MAX)
		return VEP_ERR_ARG;
	if ((pg = calloc(1, sizeof(*pg))) == NULL)
		return VEP_ERR_NOMEM;
	pg->busy_ms = busy_ms;
	if ((ret = pg_connect(pg, conninfo)) == 0 && (ret = pg_configure(pg)) == 0 &&
	    (ret = pg_schema_version(pg, &version)) == 0 &&
	    (version > (int)db_migrations_count || version < 0))
		ret = DB_ERR_NEWER;
	pg_close(pg);
	return ret;
}

void
pg_close(struct pg *pg)
{
	if (pg == NULL)
		return;
	PQfinish(pg->conn);
	free(pg->pipe_slot);
	free(pg);
}
