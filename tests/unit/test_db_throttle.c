/*
 * test_db_throttle.c - failed sign-in throttling on a real SQLite file:
 * the per-account and per-address limits with injected time, the window
 * ending, success resetting the account but not the address, survival
 * across a re-open, bounded pruning, argument limits, and 100,000 distinct
 * names leaving a bounded table with fast lookups.
 */
#include <time.h>

#include "db.h"
#include "db_testutil.h"
#include "db_throttle.h"
#include "harness.h"

static char *dir;
static struct db *db;

static long long
rows(void)
{
	char *path = tu_path(dir, DB_FILE_NAME);
	sqlite3 *raw = tu_raw_open(path);
	long long n = raw ? tu_raw_int(raw, "SELECT count(*) FROM throttle") : -1;

	sqlite3_close(raw);
	free(path);
	return n;
}

static void
test_account_limit(void)
{
	int64_t retry = -1, t = 100000;
	int i;

	/* Defaults: 5 per account per 15 min. Distinct addresses so only the
	 * account counter can trip. */
	for (i = 0; i < DB_THROTTLE_ACCOUNT_MAX_DEFAULT; i++) {
		char addr[32];

		(void)snprintf(addr, sizeof(addr), "192.0.2.%d", i);
		ASSERT_EQ(db_throttle_check(db, "alice", addr, t + i, NULL, &retry), 0);
		ASSERT_EQ(retry, 0);
		ASSERT_EQ(db_throttle_record_failure(db, "alice", addr, t + i, NULL), 0);
	}
	ASSERT_EQ(db_throttle_check(db, "alice", "198.51.100.1", t + 10, NULL, &retry),
	    DB_ERR_THROTTLED);
	ASSERT_EQ(retry, DB_THROTTLE_ACCOUNT_WINDOW_S_DEFAULT - 10);
	/* Other accounts from the same addresses are not affected. */
	ASSERT_EQ(db_throttle_check(db, "bob", "192.0.2.0", t + 10, NULL, &retry), 0);
	/* The window ends 15 min after the first failure. */
	ASSERT_EQ(db_throttle_check(db, "alice", NULL,
	    t + DB_THROTTLE_ACCOUNT_WINDOW_S_DEFAULT - 1, NULL, &retry), DB_ERR_THROTTLED);
	ASSERT_EQ(retry, 1);
	ASSERT_EQ(db_throttle_check(db, "alice", NULL,
	    t + DB_THROTTLE_ACCOUNT_WINDOW_S_DEFAULT, NULL, &retry), 0);
	ASSERT_EQ(retry, 0);
	/* A failure after the window opens a new one with a count of 1. */
	t += DB_THROTTLE_ACCOUNT_WINDOW_S_DEFAULT;
	for (i = 0; i < DB_THROTTLE_ACCOUNT_MAX_DEFAULT - 1; i++)
		ASSERT_EQ(db_throttle_record_failure(db, "alice", NULL, t, NULL), 0);
	ASSERT_EQ(db_throttle_check(db, "alice", NULL, t, NULL, &retry), 0);
	ASSERT_EQ(db_throttle_record_failure(db, "alice", NULL, t, NULL), 0);
	ASSERT_EQ(db_throttle_check(db, "alice", NULL, t, NULL, &retry), DB_ERR_THROTTLED);
	ASSERT_EQ(retry, DB_THROTTLE_ACCOUNT_WINDOW_S_DEFAULT);
	ASSERT_EQ(db_throttle_record_success(db, "alice"), 0);
}

static void
test_address_limit(void)
{
	int64_t retry = -1, t = 200000;
	char account[32];
	int i;

	/* 20 per address, each failure for a different (maybe non-existent)
	 * account: the address is counted regardless. */
	for (i = 0; i < DB_THROTTLE_ADDR_MAX_DEFAULT; i++) {
		(void)snprintf(account, sizeof(account), "nosuchuser%d", i);
		ASSERT_EQ(db_throttle_check(db, account, "203.0.113.9", t, NULL, &retry), 0);
		ASSERT_EQ(db_throttle_record_failure(db, account, "203.0.113.9", t, NULL), 0);
	}
	ASSERT_EQ(db_throttle_check(db, "fresh", "203.0.113.9", t + 60, NULL, &retry),
	    DB_ERR_THROTTLED);
	ASSERT_EQ(retry, DB_THROTTLE_ADDR_WINDOW_S_DEFAULT - 60);
	ASSERT_EQ(db_throttle_check(db, "fresh", "203.0.113.10", t + 60, NULL, &retry), 0);

	/* A success resets the account, never the address. */
	ASSERT_EQ(db_throttle_record_success(db, "nosuchuser0"), 0);
	ASSERT_EQ(db_throttle_check(db, "fresh", "203.0.113.9", t + 60, NULL, &retry),
	    DB_ERR_THROTTLED);
	ASSERT_EQ(db_throttle_check(db, NULL, "203.0.113.9",
	    t + DB_THROTTLE_ADDR_WINDOW_S_DEFAULT, NULL, &retry), 0);
}

static void
test_success_resets_account(void)
{
	int64_t retry = 0, t = 300000;
	int i;

	for (i = 0; i < DB_THROTTLE_ACCOUNT_MAX_DEFAULT; i++)
		ASSERT_EQ(db_throttle_record_failure(db, "carol", "192.0.2.77", t, NULL), 0);
	ASSERT_EQ(db_throttle_check(db, "carol", NULL, t, NULL, &retry), DB_ERR_THROTTLED);
	ASSERT_EQ(db_throttle_record_success(db, "carol"), 0);
	ASSERT_EQ(db_throttle_check(db, "carol", NULL, t, NULL, &retry), 0);
	/* Success for an account never seen is fine. */
	ASSERT_EQ(db_throttle_record_success(db, "never-failed"), 0);
}

static void
test_longest_wait_wins(void)
{
	struct db_throttle_limits l = { 1, 100, 1, 500 };
	int64_t retry = 0, t = 400000;

	ASSERT_EQ(db_throttle_record_failure(db, "dave", "192.0.2.200", t, &l), 0);
	ASSERT_EQ(db_throttle_check(db, "dave", "192.0.2.200", t + 10, &l, &retry),
	    DB_ERR_THROTTLED);
	ASSERT_EQ(retry, 490);
	ASSERT_EQ(db_throttle_check(db, "dave", NULL, t + 10, &l, &retry), DB_ERR_THROTTLED);
	ASSERT_EQ(retry, 90);
}

static void
test_survives_reopen(void)
{
	int64_t retry = 0, t = 500000;
	int i;

	for (i = 0; i < DB_THROTTLE_ACCOUNT_MAX_DEFAULT; i++)
		ASSERT_EQ(db_throttle_record_failure(db, "eve", NULL, t, NULL), 0);
	db_close(db);
	db = NULL;
	ASSERT_EQ(db_open(dir, NULL, &db), 0);
	ASSERT_EQ(db_throttle_check(db, "eve", NULL, t + 1, NULL, &retry), DB_ERR_THROTTLED);
	ASSERT_EQ(retry, DB_THROTTLE_ACCOUNT_WINDOW_S_DEFAULT - 1);
}

static void
test_args(void)
{
	struct db_throttle_limits l;
	char longname[DB_THROTTLE_NAME_MAX + 2];
	int64_t retry = 5;

	db_throttle_limits_default(&l);
	ASSERT_EQ(l.account_max, 5);
	ASSERT_EQ(l.account_window_s, 900);
	ASSERT_EQ(l.addr_max, 20);
	ASSERT_EQ(l.addr_window_s, 900);
	ASSERT_EQ(db_throttle_check(db, NULL, NULL, 1, NULL, &retry), VEP_ERR_ARG);
	ASSERT_EQ(retry, 0);
	ASSERT_EQ(db_throttle_check(db, "x", NULL, 1, NULL, NULL), VEP_ERR_ARG);
	ASSERT_EQ(db_throttle_record_failure(NULL, "x", NULL, 1, NULL), VEP_ERR_ARG);
	l.account_window_s = DB_THROTTLE_WINDOW_MAX_S + 1;
	ASSERT_EQ(db_throttle_record_failure(db, "x", NULL, 1, &l), VEP_ERR_ARG);
	l.account_window_s = DB_THROTTLE_WINDOW_MAX_S;
	l.addr_max = 0;
	ASSERT_EQ(db_throttle_check(db, "x", NULL, 1, &l, &retry), VEP_ERR_ARG);
	l.addr_max = 1;
	ASSERT_EQ(db_throttle_check(db, "x", NULL, 1, &l, &retry), 0);

	memset(longname, 'n', sizeof(longname));
	longname[DB_THROTTLE_NAME_MAX] = '\0';
	ASSERT_EQ(db_throttle_record_failure(db, longname, NULL, 1, NULL), 0);
	longname[DB_THROTTLE_NAME_MAX] = 'n';
	longname[DB_THROTTLE_NAME_MAX + 1] = '\0';
	ASSERT_EQ(db_throttle_record_failure(db, longname, NULL, 1, NULL), VEP_ERR_TOOBIG);
	ASSERT_EQ(db_throttle_check(db, NULL, longname, 1, NULL, &retry), VEP_ERR_TOOBIG);
	ASSERT_EQ(db_throttle_record_success(db, longname), VEP_ERR_TOOBIG);
}

static void
test_prune_bounded(void)
{
	struct db_throttle_limits l = { 5, 10, 20, 10 };
	int64_t n = -1, t = 600000, retry = 0;
	long long before;
	char name[32];
	int i;

	/* Drain whatever earlier tests left, far in the future. */
	do
		ASSERT_EQ(db_throttle_prune(db, 10000000, 1000, &n), 0);
	while (n == 1000);
	ASSERT_EQ(rows(), 0);
	for (i = 0; i < 50; i++) {
		(void)snprintf(name, sizeof(name), "p%d", i);
		ASSERT_EQ(db_throttle_record_failure(db, name, NULL, t, &l), 0);
	}
	ASSERT_EQ(db_throttle_record_failure(db, "late", NULL, t + 100, &l), 0);
	/* That write pruned DB_THROTTLE_PRUNE_PER_WRITE expired windows. */
	before = rows();
	ASSERT_EQ(before, 51 - DB_THROTTLE_PRUNE_PER_WRITE);
	ASSERT_EQ(db_throttle_prune(db, t + 100, 0, &n), VEP_ERR_ARG);
	ASSERT_EQ(db_throttle_prune(db, t + 100, 20, &n), 0);
	ASSERT_EQ(n, 20);
	ASSERT_EQ(db_throttle_prune(db, t + 100, 20, &n), 0);
	ASSERT_EQ(n, 20);
	ASSERT_EQ(db_throttle_prune(db, t + 100, 20, &n), 0);
	ASSERT_EQ(n, 50 - DB_THROTTLE_PRUNE_PER_WRITE - 40);
	ASSERT_EQ(db_throttle_prune(db, t + 100, 20, &n), 0);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(rows(), 1);   /* "late" is still in its window */
	ASSERT_EQ(db_throttle_check(db, "late", NULL, t + 100, &l, &retry), 0);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 100,000 distinct names (50,000 accounts, each failing from its own
 * address), ten failures a second of simulated time with 60 s windows: the
 * table holds only the live windows plus the pruning lag, not 100,000 rows,
 * and checks stay fast. The file lives on tmpfs when there is one: this
 * measures bounds, not the disk's fsync rate (every failure is a commit). */
static void
test_many_names_bounded(void)
{
	struct db_throttle_limits l = { 5, 60, 20, 60 };
	const int calls = 50000;
	int64_t t0 = 1000000, retry = 0;
	long long n, max_live = 2 * 60 * 10;
	double start, took;
	char acct[32], addr[48], *fast = NULL, *path;
	struct db *mdb = NULL;
	sqlite3 *raw;
	int i;

	if (access("/dev/shm", W_OK) == 0) {
		fast = strdup("/dev/shm/vepdb-test-XXXXXX");
		if (fast != NULL && mkdtemp(fast) == NULL) {
			free(fast);
			fast = NULL;
		}
	}
	ASSERT_EQ(db_open(fast ? fast : dir, NULL, &mdb), 0);
	start = now_s();
	for (i = 0; i < calls; i++) {
		(void)snprintf(acct, sizeof(acct), "user%06d", i);
		(void)snprintf(addr, sizeof(addr), "2001:db8::%x:%x", i >> 16, i & 0xffff);
		if (db_throttle_record_failure(mdb, acct, addr, t0 + i / 10, &l) != 0)
			break;
	}
	took = now_s() - start;
	ASSERT_EQ(i, calls);
	fprintf(stderr, "     %d names recorded in %.2f s\n", 2 * calls, took);
	path = tu_path(fast ? fast : dir, DB_FILE_NAME);
	raw = tu_raw_open(path);
	free(path);
	ASSERT_TRUE(raw != NULL);
	n = tu_raw_int(raw, "SELECT count(*) FROM throttle");
	sqlite3_close(raw);
	/* Live windows: 60 s x 10/s x 2 kinds; pruning keeps up (8 > 2 per write). */
	ASSERT_TRUE(n > 0);
	ASSERT_TRUE(n <= max_live + 2 * DB_THROTTLE_PRUNE_PER_WRITE);

	start = now_s();
	for (i = 0; i < 10000; i++) {
		(void)snprintf(acct, sizeof(acct), "user%06d", calls - 1 - (i % 500));
		ASSERT_EQ(db_throttle_check(mdb, acct, NULL, t0 + calls / 10, &l, &retry), 0);
	}
	took = now_s() - start;
	fprintf(stderr, "     10000 checks in %.3f s\n", took);
	/* Indexed lookups: 10,000 in well under a few seconds even under ASan. */
	ASSERT_TRUE(took < 5.0);
	db_close(mdb);
	tu_rmdir(fast);
}

int
main(void)
{
	if ((dir = tu_mkdtemp()) == NULL)
		return 77;
	if (db_open(dir, NULL, &db) != 0) {
		fprintf(stderr, "db_open failed\n");
		tu_rmdir(dir);
		return 1;
	}
	RUN(test_account_limit);
	RUN(test_address_limit);
	RUN(test_success_resets_account);
	RUN(test_longest_wait_wins);
	RUN(test_survives_reopen);
	RUN(test_args);
	RUN(test_prune_bounded);
	RUN(test_many_names_bounded);
	db_close(db);
	tu_rmdir(dir);
	return harness_done();
}
