/*
 * test_db_audit.c - the audit trail on a real SQLite file: the event table
 * agrees with the schema, rows round-trip and are found by address and
 * time, a committed row is visible to another connection, argument limits,
 * batches commit all or nothing (several in one transaction too), a full
 * database (PRAGMA max_page_count) gives DB_ERR_FULL with no partial row
 * and an intact file, and a second connection holding the write lock gives
 * DB_ERR_BUSY within the deadline.
 */
#include <sys/time.h>

#include "store/db.h"
#include "store/audit.h"
#include "audit_testutil.h"
#include "db_testutil.h"
#include "harness.h"

static char *dir;
static struct db *db;

static const char fp1[] =
    "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

static long long
raw_count(const char *sql)
{
	return tu_store_int(dir, sql);
}

static long long
audit_rows(void)
{
	return raw_count("SELECT count(*) FROM audit");
}

static void
test_event_table_matches_schema(void)
{
	char sql[160];
	enum db_audit_event ev;
	size_t i, seen = 0;

	for (i = 0; i < db_audit_event_count(); i++) {
		ev = db_audit_event_at(i);
		(void)snprintf(sql, sizeof(sql), "SELECT count(*) FROM audit_events"
		    " WHERE id = %d AND name = '%s'", (int)ev, db_audit_event_name(ev));
		ASSERT_EQ(raw_count(sql), 1);
		ASSERT_EQ(db_audit_event_from_name(db_audit_event_name(ev), &ev), 0);
		ASSERT_EQ(ev, db_audit_event_at(i));
		seen++;
	}
	ASSERT_EQ(raw_count("SELECT count(*) FROM audit_events"), (long long)seen);
	ASSERT_EQ(seen, db_audit_event_count());
	for (i = 0; i < db_audit_event_count(); i++)
		ASSERT_TRUE(db_audit_event_name(db_audit_event_at(i)) != NULL);
	ASSERT_TRUE(db_audit_event_name((enum db_audit_event)99) == NULL);
	ASSERT_EQ(db_audit_event_from_name("nope", &ev), VEP_ERR_INVALID);
}

struct collect {
	int n;
	int64_t ids[64];
	char emails[64][64];
	char outcomes[64][32];
	enum db_audit_event events[64];
	int64_t iat[64], exp[64];
	int fp_set[64];
	int stop_after;
};

/* Keeps the last account and signer seen (test_signer_and_account). */
static int
account_cb(const struct db_audit_row *r, void *arg)
{
	struct {
		int n;
		char account[16], signer[80];
	} *seen = arg;

	seen->n++;
	if (r->account != NULL)
		(void)snprintf(seen->account, sizeof(seen->account), "%s", r->account);
	if (r->signer_fp != NULL)
		(void)snprintf(seen->signer, sizeof(seen->signer), "%s", r->signer_fp);
	return 0;
}

static int
collect_cb(const struct db_audit_row *r, void *arg)
{
	struct collect *c = arg;

	if (c->n >= 64)
		return -999;
	c->ids[c->n] = r->id;
	(void)snprintf(c->emails[c->n], sizeof(c->emails[0]), "%s", r->email);
	(void)snprintf(c->outcomes[c->n], sizeof(c->outcomes[0]), "%s", r->outcome);
	c->events[c->n] = r->event;
	c->iat[c->n] = r->iat_ms;
	c->exp[c->n] = r->exp_ms;
	c->fp_set[c->n] = r->key_fp != NULL && strcmp(r->key_fp, fp1) == 0;
	c->n++;
	return c->stop_after && c->n >= c->stop_after ? 42 : 0;
}

static void
test_rows_and_queries(void)
{
	struct db_audit_filter f = { 0 };
	struct collect c;

	ASSERT_EQ(tu_audit_login(db, 1000, 0, "alice", "192.0.2.1", "bad_password"), 0);
	ASSERT_EQ(tu_audit_login(db, 2000, 1, "alice@example.com", "192.0.2.1", "ok"), 0);
	ASSERT_EQ(tu_audit_cert(db, 3000, "alice@example.com", fp1, 2990, 3000 + 3600000,
	    "192.0.2.1"), 0);
	ASSERT_EQ(tu_audit_login(db, 4000, 0, NULL, NULL, "failed"), 0);
	ASSERT_EQ(tu_audit_cert(db, 5000, "bob@example.com", fp1, 4990, 6000, "192.0.2.2"), 0);
	/* Committed: another connection sees every row right away. */
	ASSERT_EQ(audit_rows(), 5);

	memset(&c, 0, sizeof(c));
	ASSERT_EQ(db_audit_query(db, NULL, collect_cb, &c), 0);
	ASSERT_EQ(c.n, 5);
	ASSERT_STREQ(c.emails[0], "alice");
	ASSERT_EQ(c.events[0], DB_AUDIT_LOGIN_FAILURE);
	ASSERT_STREQ(c.outcomes[0], "bad_password");
	ASSERT_EQ(c.events[1], DB_AUDIT_LOGIN_SUCCESS);
	ASSERT_STREQ(c.outcomes[1], "ok");
	ASSERT_EQ(c.events[2], DB_AUDIT_CERT_ISSUED);
	ASSERT_EQ(c.iat[2], 2990);
	ASSERT_EQ(c.exp[2], 3603000);
	ASSERT_TRUE(c.fp_set[2]);
	ASSERT_TRUE(!c.fp_set[0]);
	ASSERT_EQ(c.iat[0], 0);
	ASSERT_STREQ(c.emails[3], DB_AUDIT_UNKNOWN);
	ASSERT_STREQ(c.outcomes[3], "failed");
	ASSERT_TRUE(c.ids[0] < c.ids[1]);

	memset(&c, 0, sizeof(c));
	f.email = "alice@example.com";
	ASSERT_EQ(db_audit_query(db, &f, collect_cb, &c), 0);
	ASSERT_EQ(c.n, 2);
	ASSERT_EQ(c.events[0], DB_AUDIT_LOGIN_SUCCESS);
	ASSERT_EQ(c.events[1], DB_AUDIT_CERT_ISSUED);

	/* An account name: as typed, and the addresses whose local part it is. */
	memset(&c, 0, sizeof(c));
	f.email = "alice";
	ASSERT_EQ(db_audit_query(db, &f, collect_cb, &c), 0);
	ASSERT_EQ(c.n, 3);
	ASSERT_STREQ(c.emails[0], "alice");
	memset(&c, 0, sizeof(c));
	f.email = "alic";
	ASSERT_EQ(db_audit_query(db, &f, collect_cb, &c), 0);
	ASSERT_EQ(c.n, 0);

	memset(&c, 0, sizeof(c));
	f.email = NULL;
	f.since_ms = 3000;
	ASSERT_EQ(db_audit_query(db, &f, collect_cb, &c), 0);
	ASSERT_EQ(c.n, 3);
	ASSERT_STREQ(c.emails[2], "bob@example.com");

	memset(&c, 0, sizeof(c));
	f.email = "alice@example.com";
	f.since_ms = 2001;
	ASSERT_EQ(db_audit_query(db, &f, collect_cb, &c), 0);
	ASSERT_EQ(c.n, 1);

	memset(&c, 0, sizeof(c));
	f.email = NULL;
	f.since_ms = 0;
	f.limit = 2;
	ASSERT_EQ(db_audit_query(db, &f, collect_cb, &c), 0);
	ASSERT_EQ(c.n, 2);
	/* The newest two (bob's rows), still oldest first. */
	ASSERT_STREQ(c.emails[1], "bob@example.com");
	ASSERT_STREQ(c.emails[0], DB_AUDIT_UNKNOWN);
	ASSERT_TRUE(c.ids[0] < c.ids[1]);

	/* A callback's non-zero return stops the walk and is passed back. */
	memset(&c, 0, sizeof(c));
	c.stop_after = 1;
	ASSERT_EQ(db_audit_query(db, NULL, collect_cb, &c), 42);
	ASSERT_EQ(c.n, 1);
	f.limit = -1;
	ASSERT_EQ(db_audit_query(db, &f, collect_cb, &c), VEP_ERR_ARG);
	ASSERT_EQ(db_audit_query(db, NULL, NULL, &c), VEP_ERR_ARG);
}

static void
test_prune(void)
{
	char *path = tu_path(dir, "prune.db");
	struct db *p = NULL;
	struct db_audit_row r = { .event = DB_AUDIT_LOGOUT, .outcome = "ok" };
	int64_t n = -1;
	int i;

	if (tu_pg() != NULL) {
		/* One store for every test: start from an empty trail. */
		struct tu_raw raw;

		ASSERT_EQ(tu_raw_connect(dir, &raw), 0);
		ASSERT_EQ(tu_raw_exec(&raw, "DELETE FROM audit"), 0);
		tu_raw_close(&raw);
		ASSERT_EQ(tu_db_open(dir, NULL, &p), 0);
	} else {
		ASSERT_EQ(db_open_path(path, NULL, &p), 0);
	}
	for (i = 1; i <= 5; i++) {
		r.ts_ms = i * 100;
		ASSERT_EQ(db_audit_add(p, &r), 0);
	}
	/* Bounded batches, oldest first; a row at the bound stays. */
	ASSERT_EQ(db_audit_prune(p, 400, 2, &n), 0);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(db_audit_prune(p, 400, 2, &n), 0);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(db_audit_prune(p, 400, 2, &n), 0);
	ASSERT_EQ(n, 0);
	if (tu_pg() != NULL) {
		ASSERT_EQ(raw_count("SELECT min(ts_ms) FROM audit"), 400);
	} else {
		sqlite3 *raw = tu_raw_open(path);

		ASSERT_EQ(tu_raw_int(raw, "SELECT min(ts_ms) FROM audit"), 400);
		sqlite3_close(raw);
	}
	ASSERT_EQ(db_audit_prune(p, -1, 2, &n), VEP_ERR_ARG);
	ASSERT_EQ(db_audit_prune(p, 400, 0, &n), VEP_ERR_ARG);
	ASSERT_EQ(db_audit_prune(NULL, 400, 2, &n), VEP_ERR_ARG);
	db_close(p);
	free(path);
}

static void
test_args(void)
{
	struct db_audit_row r = { .ts_ms = 1, .event = DB_AUDIT_LOGOUT, .outcome = "ok" };
	char big[DB_AUDIT_TEXT_MAX + 2];
	long long before = audit_rows();

	ASSERT_EQ(tu_audit_cert(db, 1, "a@example.com", "ABCDEF", 1, 2, "x"), VEP_ERR_ARG);
	ASSERT_EQ(tu_audit_cert(db, 1, "a@example.com",
	    "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef", 1, 2, "x"),
	    VEP_ERR_ARG);
	ASSERT_EQ(tu_audit_cert(db, 1, "a@example.com", NULL, 1, 2, "x"), VEP_ERR_ARG);
	ASSERT_EQ(tu_audit_cert(db, 1, NULL, fp1, 1, 2, "x"), VEP_ERR_ARG);
	ASSERT_EQ(tu_audit_cert(db, -1, "a@example.com", fp1, 1, 2, "x"), VEP_ERR_ARG);
	r.event = (enum db_audit_event)77;
	ASSERT_EQ(db_audit_add(db, &r), VEP_ERR_ARG);
	r.event = DB_AUDIT_LOGOUT;
	r.outcome = NULL;
	ASSERT_EQ(db_audit_add(db, &r), VEP_ERR_ARG);
	r.outcome = "ok";
	memset(big, 'b', sizeof(big));
	big[DB_AUDIT_TEXT_MAX] = '\0';
	r.email = big;
	ASSERT_EQ(db_audit_add(db, &r), 0);
	big[DB_AUDIT_TEXT_MAX] = 'b';
	big[DB_AUDIT_TEXT_MAX + 1] = '\0';
	ASSERT_EQ(db_audit_add(db, &r), VEP_ERR_TOOBIG);
	r.email = NULL;
	r.client_addr = big;
	ASSERT_EQ(db_audit_add(db, &r), VEP_ERR_TOOBIG);
	r.client_addr = NULL;
	r.outcome = big;
	ASSERT_EQ(db_audit_add(db, &r), VEP_ERR_TOOBIG);
	ASSERT_EQ(db_audit_add(NULL, &r), VEP_ERR_ARG);
	ASSERT_EQ(audit_rows(), before + 1);
}

static void
test_batch(void)
{
	struct db_audit_row r = {
		.ts_ms = 9000, .event = DB_AUDIT_CERT_ISSUED,
		.key_fp = fp1, .iat_ms = 8990, .exp_ms = 99000, .outcome = "ok",
		.signer_fp = TU_SIGNER_FP
	};
	struct db_audit_batch *b = NULL;
	struct db_audit_filter f = { .email = "batch@example.com" };
	struct collect c;
	char email[64];
	long long before = audit_rows();
	int i;

	ASSERT_EQ(db_audit_batch_new(&b), 0);
	ASSERT_EQ(db_audit_batch_commit(db, b), 0);   /* empty: nothing to do */
	for (i = 0; i < 3; i++) {
		/* The batch copies: the caller's buffer may change right after. */
		(void)snprintf(email, sizeof(email), "batch@example.com");
		r.email = email;
		r.client_addr = "198.51.100.7";
		ASSERT_EQ(db_audit_batch_add(b, &r), 0);
		memset(email, 'X', sizeof(email) - 1);
	}
	ASSERT_EQ(db_audit_batch_count(b), 3);
	ASSERT_EQ(db_audit_batch_commit(db, b), 0);
	ASSERT_EQ(db_audit_batch_count(b), 0);
	ASSERT_EQ(audit_rows(), before + 3);
	memset(&c, 0, sizeof(c));
	ASSERT_EQ(db_audit_query(db, &f, collect_cb, &c), 0);
	ASSERT_EQ(c.n, 3);
	ASSERT_TRUE(c.fp_set[2]);

	/* Several batches in one transaction, in order: each emptied. */
	{
		struct db_audit_batch *two[2] = { NULL, NULL };
		struct db_audit_batch *many[DB_AUDIT_COMMIT_BATCHES_MAX + 1] = { NULL };

		ASSERT_EQ(db_audit_batch_new(&two[0]), 0);
		ASSERT_EQ(db_audit_batch_new(&two[1]), 0);
		r.email = "second@example.com";
		ASSERT_EQ(db_audit_batch_add(two[1], &r), 0);
		ASSERT_EQ(db_audit_batch_add(two[1], &r), 0);
		r.email = "first@example.com";
		ASSERT_EQ(db_audit_batch_add(two[0], &r), 0);
		ASSERT_EQ(db_audit_batches_commit(db, two, 2), 0);
		ASSERT_EQ(db_audit_batch_count(two[0]), 0);
		ASSERT_EQ(db_audit_batch_count(two[1]), 0);
		ASSERT_EQ(audit_rows(), before + 6);
		ASSERT_EQ(raw_count("SELECT count(*) FROM audit WHERE email = 'second@example.com'"
		    " AND id > (SELECT id FROM audit WHERE email = 'first@example.com')"), 2);
		ASSERT_EQ(db_audit_batches_commit(db, two, 2), 0);   /* empty ones */
		ASSERT_EQ(db_audit_batches_commit(db, two, 0), 0);
		ASSERT_EQ(db_audit_batches_commit(db, many, DB_AUDIT_COMMIT_BATCHES_MAX + 1),
		    VEP_ERR_ARG);
		ASSERT_EQ(db_audit_batches_commit(db, many, 1), VEP_ERR_ARG);   /* NULL */
		ASSERT_EQ(db_audit_batches_commit(NULL, two, 2), VEP_ERR_ARG);
		db_audit_batch_free(two[0]);
		db_audit_batch_free(two[1]);
		before += 3;
	}

	/* DB_AUDIT_BATCH_MAX rows, then refusal. */
	r.email = "max@example.com";
	for (i = 0; i < DB_AUDIT_BATCH_MAX; i++)
		ASSERT_EQ(db_audit_batch_add(b, &r), 0);
	ASSERT_EQ(db_audit_batch_add(b, &r), VEP_ERR_TOOBIG);
	r.key_fp = "short";
	ASSERT_EQ(db_audit_batch_add(b, &r), VEP_ERR_ARG);
	ASSERT_EQ(db_audit_batch_count(b), DB_AUDIT_BATCH_MAX);
	db_audit_batch_free(b);
	db_audit_batch_free(NULL);
	ASSERT_EQ(audit_rows(), before + 3);
}

/* Disk full: cap the file at its current size, then write until SQLite
 * says SQLITE_FULL. The failing write leaves no row, the file passes
 * integrity_check, and writing works again once there is room. */
static void
test_disk_full(void)
{
	struct db_audit_row r = {
		.ts_ms = 10000, .event = DB_AUDIT_CERT_ISSUED,
		.key_fp = fp1, .iat_ms = 1, .exp_ms = 2, .outcome = "ok",
		.signer_fp = TU_SIGNER_FP
	};
	struct db_audit_batch *b = NULL, *two[2] = { NULL, NULL };
	char email[DB_AUDIT_TEXT_MAX + 1];
	long long before, after;
	int i, ret = 0;

	/* A size cap is SQLite's (db_set_size_limit); PostgreSQL's own full
	 * disk (SQLSTATE 53100 -> DB_ERR_FULL, store/pg.c) is not made here. */
	if (tu_pg() != NULL)
		return;
	memset(email, 'f', sizeof(email));
	email[DB_AUDIT_TEXT_MAX] = '\0';
	r.email = email;
	r.client_addr = email;
	ASSERT_EQ(db_set_size_limit(db, 1), 0);   /* = current size */
	/* Each row is ~700 bytes: a few pages' worth must hit the cap. */
	for (i = 0; i < 1000; i++) {
		before = audit_rows();
		if ((ret = db_audit_add(db, &r)) != 0)
			break;
	}
	ASSERT_EQ(ret, DB_ERR_FULL);
	after = audit_rows();
	ASSERT_EQ(after, before);
	ASSERT_EQ(db_check_integrity(db), 0);
	ASSERT_EQ(raw_count("SELECT count(*) FROM pragma_integrity_check WHERE"
	    " integrity_check = 'ok'"), 1);

	/* A batch that does not fit: none of it lands, the batch stays. */
	ASSERT_EQ(db_audit_batch_new(&b), 0);
	for (i = 0; i < 200; i++)
		ASSERT_EQ(db_audit_batch_add(b, &r), 0);
	ASSERT_EQ(db_audit_batch_commit(db, b), DB_ERR_FULL);
	ASSERT_EQ(audit_rows(), after);
	ASSERT_EQ(db_audit_batch_count(b), 200);
	ASSERT_EQ(db_check_integrity(db), 0);

	/* Two batches in one transaction, the second too big: neither lands,
	 * both stay as they were. */
	ASSERT_EQ(db_audit_batch_new(&two[0]), 0);
	ASSERT_EQ(db_audit_batch_add(two[0], &r), 0);
	two[1] = b;
	ASSERT_EQ(db_audit_batches_commit(db, two, 2), DB_ERR_FULL);
	ASSERT_EQ(audit_rows(), after);
	ASSERT_EQ(db_audit_batch_count(two[0]), 1);
	ASSERT_EQ(db_audit_batch_count(b), 200);

	ASSERT_EQ(db_set_size_limit(db, 0), 0);
	ASSERT_EQ(db_audit_batches_commit(db, two, 2), 0);
	ASSERT_EQ(audit_rows(), after + 201);
	ASSERT_EQ(db_audit_add(db, &r), 0);
	ASSERT_EQ(audit_rows(), after + 202);
	db_audit_batch_free(two[0]);
	db_audit_batch_free(b);
}

static long
elapsed_ms(const struct timeval *a, const struct timeval *b)
{
	return (b->tv_sec - a->tv_sec) * 1000 + (b->tv_usec - a->tv_usec) / 1000;
}

/* Another connection holds the write lock: the audit write gives up with
 * DB_ERR_BUSY at the busy deadline, writes nothing, and succeeds once the
 * lock is gone. */
static void
test_busy(void)
{
	struct db_options o = { .busy_timeout_ms = 250 };
	struct db *bdb = NULL;
	struct db_audit_batch *b = NULL;
	struct db_audit_row r = {
		.ts_ms = 20000, .event = DB_AUDIT_LOGOUT,
		.email = "busy@example.com", .outcome = "ok"
	};
	struct timeval t0, t1;
	struct tu_raw raw;
	long long before = audit_rows();
	long ms;

	ASSERT_EQ(tu_raw_connect(dir, &raw), 0);
	ASSERT_EQ(tu_db_open(dir, &o, &bdb), 0);
	ASSERT_EQ(tu_raw_lock_writes(&raw, "audit"), 0);
	gettimeofday(&t0, NULL);
	ASSERT_EQ(tu_audit_cert(bdb, 20000, "busy@example.com", fp1, 1, 2, "192.0.2.9"),
	    DB_ERR_BUSY);
	gettimeofday(&t1, NULL);
	ms = elapsed_ms(&t0, &t1);
	ASSERT_TRUE(ms >= 200);
	ASSERT_TRUE(ms < 3000);
	ASSERT_EQ(db_audit_batch_new(&b), 0);
	ASSERT_EQ(db_audit_batch_add(b, &r), 0);
	ASSERT_EQ(db_audit_batch_commit(bdb, b), DB_ERR_BUSY);
	ASSERT_EQ(db_audit_batch_count(b), 1);
	ASSERT_EQ(tu_raw_exec(&raw, "ROLLBACK"), 0);
	ASSERT_EQ(audit_rows(), before);
	ASSERT_EQ(tu_audit_cert(bdb, 20000, "busy@example.com", fp1, 1, 2, "192.0.2.9"), 0);
	ASSERT_EQ(db_audit_batch_commit(bdb, b), 0);
	ASSERT_EQ(audit_rows(), before + 2);
	db_audit_batch_free(b);
	db_close(bdb);
	tu_raw_close(&raw);
}

/* Which domain key signed (and when its last certificate expires), and
 * which PAM account a sign-in used. */
static void
test_signer_and_account(void)
{
	static const char other[] =
	    "7777777777777777777777777777777777777777777777777777777777777777";
	struct db_audit_row r = {
		.ts_ms = 50000, .event = DB_AUDIT_CERT_ISSUED, .email = "s@example.com",
		.key_fp = fp1, .iat_ms = 49990, .exp_ms = 900000, .outcome = "ok",
	};
	struct db_audit_row login = {
		.ts_ms = 50001, .event = DB_AUDIT_LOGIN_SUCCESS, .email = "s@example.com",
		.outcome = "ok", .account = "sam",
	};
	struct db_audit_filter f = { .email = "s@example.com" };
	struct account_seen {
		int n;
		char account[16], signer[80];
	} seen = { 0 };
	int64_t exp = -1;

	ASSERT_EQ(db_audit_add(db, &r), VEP_ERR_ARG);      /* a certificate names its signer */
	r.signer_fp = "short";
	ASSERT_EQ(db_audit_add(db, &r), VEP_ERR_ARG);
	r.signer_fp = other;
	ASSERT_EQ(db_audit_add(db, &r), 0);
	r.exp_ms = 800000;                                 /* an earlier one: max wins */
	ASSERT_EQ(db_audit_add(db, &r), 0);
	ASSERT_EQ(db_audit_add(db, &login), 0);
	ASSERT_EQ(db_audit_signer_last_expiry(db, other, &exp), 0);
	ASSERT_EQ(exp, 900000);
	ASSERT_EQ(db_audit_signer_last_expiry(db, fp1, &exp), 0);
	ASSERT_EQ(exp, 0);                                 /* none signed by it */
	ASSERT_EQ(db_audit_signer_last_expiry(db, "nothex", &exp), VEP_ERR_ARG);
	ASSERT_EQ(db_audit_query(db, &f, account_cb, &seen), 0);
	ASSERT_EQ(seen.n, 3);
	ASSERT_STREQ(seen.account, "sam");
	ASSERT_STREQ(seen.signer, other);
}

int
main(void)
{
	if ((dir = tu_mkdtemp()) == NULL)
		return 77;
	if (tu_db_open(dir, NULL, &db) != 0) {
		fprintf(stderr, "db_open failed\n");
		tu_rmdir(dir);
		return 1;
	}
	RUN(test_event_table_matches_schema);
	RUN(test_rows_and_queries);
	RUN(test_prune);
	RUN(test_args);
	RUN(test_batch);
	RUN(test_disk_full);
	RUN(test_busy);
	RUN(test_signer_and_account);
	db_close(db);
	tu_rmdir(dir);
	return harness_done();
}
