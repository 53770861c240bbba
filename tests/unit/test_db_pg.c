/*
 * test_db_pg.c - what only the PostgreSQL store has, on a real PostgreSQL 15
 * cluster (tests/unit/pg_run.py sets VEP_TEST_PG): the migrations from an
 * empty database to this binary's version, applied once when instances
 * start together; a newer schema refused and left alone; read-only and
 * "existing" opens; a server that cannot be reached (DB_ERR_DOWN at once,
 * not a hang); a connection the server dropped, re-made by the next call
 * outside a transaction, while a transaction it broke fails whole; the
 * cluster-wide throttle lock; and the libpq connection string never
 * appearing in what the store reports.
 */
#include <pthread.h>
#include <sys/time.h>

#include "store/db.h"
#include "store/audit.h"
#include "store/internal.h"
#include "store/sessions.h"
#include "store/throttle.h"
#include "db_testutil.h"
#include "harness.h"

static const char *conninfo;

static struct db *
open_pg(int readonly, int existing)
{
	struct db_options o = { 0 };
	struct db *db = NULL;

	o.readonly = readonly;
	o.existing = existing;
	o.pg_conninfo = conninfo;

	return db_open("/nonexistent", &o, &db) == 0 ? db : NULL;
}

static long long
raw(const char *sql)
{
	return tu_store_int(NULL, sql);
}

static int
raw_exec(const char *sql)
{
	struct tu_raw r;
	int rc = -1;

	if (tu_raw_connect(NULL, &r) == 0)
		rc = tu_raw_exec(&r, sql);
	tu_raw_close(&r);
	return rc;
}

struct opener {
	struct db *db;
	int rc;
};

static void *
open_thread(void *arg)
{
	struct opener *o = arg;
	struct db_options opt = { .pg_conninfo = conninfo };

	o->rc = db_open("/nonexistent", &opt, &o->db);
	return NULL;
}

/* Four instances start at once on an empty database: each migration is
 * applied exactly once, every one of them ends at the same version. */
static void
test_migrate_together(void)
{
	struct opener o[4] = { 0 };
	pthread_t th[4];
	int i, v;

	ASSERT_EQ(raw("SELECT count(*) FROM pg_tables WHERE tablename = 'sessions'"), 0);
	for (i = 0; i < 4; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, open_thread, &o[i]), 0);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	for (i = 0; i < 4; i++) {
		ASSERT_EQ(o[i].rc, 0);
		ASSERT_EQ(db_schema_version(o[i].db, &v), 0);
		ASSERT_EQ(v, db_schema_version_known());
		db_close(o[i].db);
	}
	ASSERT_EQ(raw("SELECT count(*) FROM vep_schema"), 1);
	ASSERT_EQ(raw("SELECT version FROM vep_schema"), db_schema_version_known());
	ASSERT_EQ(raw("SELECT count(*) FROM audit_events"), (long long)db_audit_event_count());
	/* The last migration's work is there, and once. */
	ASSERT_EQ(raw("SELECT count(*) FROM pg_indexes WHERE indexname = 'audit_signer_exp'"), 1);
}

static void
test_open_modes(void)
{
	const struct db_audit_row row = { .ts_ms = 1, .event = DB_AUDIT_LOGOUT, .outcome = "ok" };
	struct db *db;
	char mode[32];
	int v;

	ASSERT_TRUE((db = open_pg(1, 0)) != NULL);
	ASSERT_EQ(db_schema_version(db, &v), 0);
	ASSERT_EQ(v, db_schema_version_known());
	ASSERT_EQ(db_journal_mode(db, mode, sizeof(mode)), 0);
	ASSERT_STREQ(mode, "postgresql");
	ASSERT_EQ(db_check_integrity(db), 0);
	ASSERT_EQ(db_set_size_limit(db, 1), 0);
	/* Read-only means read-only. */
	ASSERT_TRUE(db_audit_add(db, &row) != 0);
	db_close(db);
	ASSERT_TRUE((db = open_pg(0, 1)) != NULL);
	db_close(db);
}

/* A database a newer program migrated: refused, and not touched. */
static void
test_newer_refused(void)
{
	struct db_options o = { .pg_conninfo = conninfo };
	struct db *db = NULL;
	int known = db_schema_version_known();
	char sql[96];

	(void)snprintf(sql, sizeof(sql), "UPDATE vep_schema SET version = %d", known + 1);
	ASSERT_EQ(raw_exec(sql), 0);
	ASSERT_EQ(db_open("/nonexistent", &o, &db), DB_ERR_NEWER);
	ASSERT_TRUE(db == NULL);
	o.readonly = 1;
	ASSERT_EQ(db_open("/nonexistent", &o, &db), DB_ERR_NEWER);
	ASSERT_EQ(raw("SELECT version FROM vep_schema"), known + 1);
	(void)snprintf(sql, sizeof(sql), "UPDATE vep_schema SET version = %d", known);
	ASSERT_EQ(raw_exec(sql), 0);
	/* One behind: read-only and existing opens want exactly ours. */
	(void)snprintf(sql, sizeof(sql), "UPDATE vep_schema SET version = %d", known - 1);
	ASSERT_EQ(raw_exec(sql), 0);
	ASSERT_EQ(db_open("/nonexistent", &o, &db), DB_ERR_SCHEMA);
	(void)snprintf(sql, sizeof(sql), "UPDATE vep_schema SET version = %d", known);
	ASSERT_EQ(raw_exec(sql), 0);
}

static long
since_ms(const struct timeval *t0)
{
	struct timeval t1;

	gettimeofday(&t1, NULL);
	return (t1.tv_sec - t0->tv_sec) * 1000L + (t1.tv_usec - t0->tv_usec) / 1000L;
}

/* No server behind the socket: DB_ERR_DOWN at once, not a hang. */
static void
test_unreachable(void)
{
	struct db_options o = {
		.pg_conninfo = "host=/nonexistent-vep-socket-dir port=5432 dbname=vep user=vep"
	};
	struct db *db = NULL;
	struct timeval t0;

	gettimeofday(&t0, NULL);
	ASSERT_EQ(db_open("/nonexistent", &o, &db), DB_ERR_DOWN);
	ASSERT_TRUE(since_ms(&t0) < 3000);
	ASSERT_TRUE(db == NULL);
	o.pg_conninfo = "";
	/* Empty: the SQLite file in the state directory (which is missing). */
	ASSERT_TRUE(db_open("/nonexistent", &o, &db) != 0);
}

/* The server drops our connection (a restart, a failover, an admin):
 * outside a transaction the next call connects again and works; a
 * transaction it broke fails whole, nothing of it is committed, and the
 * call after its rollback works again. */
static void
test_reconnect(void)
{
	struct db *db = open_pg(0, 0);
	uint8_t tok[32];
	struct db_session s;
	int64_t n = -1;

	ASSERT_TRUE(db != NULL);
	memset(tok, 0x42, sizeof(tok));
	ASSERT_EQ(db_session_create(db, "re@example.com", 1000, 600, 3600, tok, NULL), 0);
	ASSERT_EQ(raw("SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM"
	    " pg_stat_activity WHERE application_name = 'vep-authority') t"), 1);
	/* The first call after the drop meets it (the socket is closed under
	 * it) or connects again; either way the one after works. */
	if (db_session_lookup(db, tok, 1001, &s) != 0)
		ASSERT_EQ(db_session_lookup(db, tok, 1001, &s), 0);
	ASSERT_STREQ(s.email, "re@example.com");

	/* Inside a transaction: the break is the transaction's end. */
	ASSERT_EQ(db_tx_begin(db), 0);
	ASSERT_EQ(db_session_purge(db, 0, 10, &n), 0);
	ASSERT_EQ(raw("SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM"
	    " pg_stat_activity WHERE application_name = 'vep-authority') t"), 1);
	ASSERT_EQ(db_session_delete(db, tok), DB_ERR_DOWN);
	ASSERT_EQ(db_session_delete(db, tok), DB_ERR_DOWN);
	ASSERT_EQ(db_tx_commit(db), DB_ERR_DOWN);
	db_tx_rollback(db);
	ASSERT_EQ(raw("SELECT count(*) FROM sessions WHERE email = 're@example.com'"), 1);
	ASSERT_EQ(db_session_delete(db, tok), 0);
	ASSERT_EQ(raw("SELECT count(*) FROM sessions WHERE email = 're@example.com'"), 0);
	db_close(db);
}

/* Another instance holds the throttle's lock (a reservation in progress):
 * a reservation here waits at most the busy timeout, then DB_ERR_BUSY
 * with nothing counted. */
static void
test_throttle_lock_bounded(void)
{
	struct db_options o = { .pg_conninfo = conninfo, .busy_timeout_ms = 300 };
	const struct db_throttle_limits l = { 5, 20, 900, 20, 900, 0 };
	struct db_throttle_ticket t;
	struct db *a = NULL, *b = NULL;
	struct timeval t0;
	int64_t retry;
	long ms;

	ASSERT_EQ(db_open("/nonexistent", &o, &a), 0);
	ASSERT_EQ(db_open("/nonexistent", &o, &b), 0);
	ASSERT_EQ(db_tx_begin(a), 0);
	ASSERT_EQ(db_tx_lock(a, DB_LOCK_THROTTLE), 0);
	gettimeofday(&t0, NULL);
	ASSERT_EQ(db_throttle_reserve(b, "lock", "192.0.2.1", 1000, &l, &t, &retry), DB_ERR_BUSY);
	ms = since_ms(&t0);
	ASSERT_TRUE(ms >= 250);
	ASSERT_TRUE(ms < 3000);
	db_tx_rollback(a);
	ASSERT_EQ(raw("SELECT count(*) FROM throttle WHERE name = 'lock'"), 0);
	ASSERT_EQ(db_throttle_reserve(b, "lock", "192.0.2.1", 1000, &l, &t, &retry), 0);
	ASSERT_EQ(raw("SELECT count(*) FROM throttle WHERE name = 'lock'"), 1);
	db_close(a);
	db_close(b);
}

/* A batch is one pipelined transaction: a row the server refuses in its
 * middle leaves none of the batch behind (and the batch as it was), and
 * the connection goes on working. */
static void
test_batch_all_or_none(void)
{
	struct db *db = open_pg(0, 0);
	struct db_audit_batch *b = NULL;
	struct db_audit_row r = { .ts_ms = 777, .event = DB_AUDIT_LOGOUT, .outcome = "ok" };
	long long before;

	ASSERT_TRUE(db != NULL);
	ASSERT_EQ(raw_exec("ALTER TABLE audit ADD CONSTRAINT test_no_evil"
	    " CHECK (email <> 'evil@example.com')"), 0);
	before = raw("SELECT count(*) FROM audit");
	ASSERT_EQ(db_audit_batch_new(&b), 0);
	r.email = "one@example.com";
	ASSERT_EQ(db_audit_batch_add(b, &r), 0);
	r.email = "evil@example.com";
	ASSERT_EQ(db_audit_batch_add(b, &r), 0);
	r.email = "three@example.com";
	ASSERT_EQ(db_audit_batch_add(b, &r), 0);
	ASSERT_EQ(db_audit_batch_commit(db, b), VEP_ERR_INVALID);
	ASSERT_EQ(db_audit_batch_count(b), 3);
	ASSERT_EQ(raw("SELECT count(*) FROM audit"), before);
	/* The same connection, right after: a write and a read work. */
	r.email = "after@example.com";
	ASSERT_EQ(db_audit_add(db, &r), 0);
	ASSERT_EQ(raw("SELECT count(*) FROM audit"), before + 1);
	ASSERT_EQ(raw_exec("ALTER TABLE audit DROP CONSTRAINT test_no_evil"), 0);
	ASSERT_EQ(db_audit_batch_commit(db, b), 0);
	ASSERT_EQ(db_audit_batch_count(b), 0);
	ASSERT_EQ(raw("SELECT count(*) FROM audit"), before + 4);
	ASSERT_EQ(raw("SELECT count(*) FROM audit WHERE instance IS NULL AND ts_ms = 777"), 4);
	db_audit_batch_free(b);
	db_close(db);
}

int
main(void)
{
	if ((conninfo = tu_pg()) == NULL) {
		fprintf(stderr, "VEP_TEST_PG is not set: run through tests/unit/pg_run.py\n");
		return 1;
	}
	RUN(test_migrate_together);
	RUN(test_open_modes);
	RUN(test_newer_refused);
	RUN(test_unreachable);
	RUN(test_reconnect);
	RUN(test_throttle_lock_bounded);
	RUN(test_batch_all_or_none);
	return harness_done();
}
