/*
 * test_db_throttle.c - sign-in throttling on a real SQLite file: the pair,
 * account and address limits with injected time, known addresses exempt
 * from the account-wide limit, reservations settled as failure, success or
 * nothing known, windows ending, the atomicity of a reservation against
 * other connections in parallel, survival across a re-open, bounded
 * pruning, argument limits, and 100,000 distinct names leaving a bounded
 * table.
 */
#include <pthread.h>
#include <time.h>

#include "store/db.h"
#include "db_testutil.h"
#include "store/throttle.h"
#include "harness.h"

static char *dir;
static struct db *db;

/* The shipped defaults (core/config.c's table). */
static const struct db_throttle_limits defaults = {
	.pair_max = 5, .account_max = 20, .account_window_s = 900,
	.addr_max = 20, .addr_window_s = 900, .known_for_s = 30 * 86400,
};

static long long
rows(void)
{
	return tu_store_int(dir, "SELECT count(*) FROM throttle");
}

/* One attempt that PAM turns down. */
static int
fail(const char *account, const char *addr, int64_t now, const struct db_throttle_limits *l)
{
	struct db_throttle_ticket t;
	int64_t retry;
	int rc = db_throttle_reserve(db, account, addr, now, l, &t, &retry);

	if (rc == 0)
		rc = db_throttle_settle(db, account, addr, now, l, &t, DB_THROTTLE_FAILED);
	return rc;
}

/* One attempt that PAM accepts. */
static int
succeed(const char *account, const char *addr, int64_t now, const struct db_throttle_limits *l)
{
	struct db_throttle_ticket t;
	int64_t retry;
	int rc = db_throttle_reserve(db, account, addr, now, l, &t, &retry);

	if (rc == 0)
		rc = db_throttle_settle(db, account, addr, now, l, &t, DB_THROTTLE_SUCCEEDED);
	return rc;
}

/* Would an attempt be let through now? (It is counted, then taken back.) */
static int
allowed(const char *account, const char *addr, int64_t now, const struct db_throttle_limits *l,
    int64_t *retry)
{
	struct db_throttle_ticket t;
	int rc = db_throttle_reserve(db, account, addr, now, l, &t, retry);

	if (rc == 0)
		rc = db_throttle_settle(db, account, addr, now, l, &t, DB_THROTTLE_UNDECIDED);
	return rc;
}

static void
test_pair_limit(void)
{
	int64_t retry = -1, t = 100000;
	int i;

	for (i = 0; i < 5; i++)
		ASSERT_EQ(fail("alice", "192.0.2.1", t + i, &defaults), 0);
	ASSERT_EQ(allowed("alice", "192.0.2.1", t + 10, &defaults, &retry), SRV_ERR_THROTTLED);
	ASSERT_EQ(retry, 900 - 10);
	/* The owner elsewhere, and others here, are not held by it. */
	ASSERT_EQ(allowed("alice", "192.0.2.2", t + 10, &defaults, &retry), 0);
	ASSERT_EQ(retry, 0);
	ASSERT_EQ(allowed("bob", "192.0.2.1", t + 10, &defaults, &retry), 0);
	/* The window ends 15 min after its first attempt. */
	ASSERT_EQ(allowed("alice", "192.0.2.1", t + 899, &defaults, &retry), SRV_ERR_THROTTLED);
	ASSERT_EQ(retry, 1);
	ASSERT_EQ(allowed("alice", "192.0.2.1", t + 900, &defaults, &retry), 0);
}

static void
test_account_limit_spares_known_address(void)
{
	int64_t retry = -1, t = 200000;
	char addr[32];
	int i;

	/* carol signs in from home once: home is known to her. */
	ASSERT_EQ(succeed("carol", "198.51.100.7", t, &defaults), 0);
	/* 20 guesses from 20 other addresses exhaust the account-wide limit. */
	for (i = 0; i < 20; i++) {
		(void)snprintf(addr, sizeof(addr), "203.0.113.%d", i);
		ASSERT_EQ(fail("carol", addr, t + 1, &defaults), 0);
	}
	ASSERT_EQ(allowed("carol", "203.0.113.200", t + 2, &defaults, &retry),
	    SRV_ERR_THROTTLED);
	ASSERT_EQ(retry, 900 - 1);
	/* From home she still gets in, and still within her pair limit. */
	ASSERT_EQ(allowed("carol", "198.51.100.7", t + 2, &defaults, &retry), 0);
	for (i = 0; i < 5; i++)
		ASSERT_EQ(fail("carol", "198.51.100.7", t + 3, &defaults), 0);
	ASSERT_EQ(allowed("carol", "198.51.100.7", t + 3, &defaults, &retry), SRV_ERR_THROTTLED);
	/* Trust lapses after known_for_s. */
	ASSERT_EQ(succeed("dora", "198.51.100.8", t, &defaults), 0);
	for (i = 0; i < 20; i++) {
		(void)snprintf(addr, sizeof(addr), "203.0.114.%d", i);
		ASSERT_EQ(fail("dora", addr, t + defaults.known_for_s, &defaults), 0);
	}
	ASSERT_EQ(allowed("dora", "198.51.100.8", t + defaults.known_for_s + 1, &defaults,
	    &retry), SRV_ERR_THROTTLED);
	/* known_for_s = 0: no address is ever known. */
	{
		struct db_throttle_limits l = defaults;

		l.known_for_s = 0;
		l.account_max = 2;
		ASSERT_EQ(succeed("erin", "198.51.100.9", t, &l), 0);
		ASSERT_EQ(fail("erin", "203.0.115.1", t, &l), 0);
		ASSERT_EQ(fail("erin", "203.0.115.2", t, &l), 0);
		ASSERT_EQ(allowed("erin", "198.51.100.9", t, &l, &retry), SRV_ERR_THROTTLED);
	}
}

static void
test_address_limit(void)
{
	int64_t retry = -1, t = 300000;
	char account[32];
	int i;

	/* 20 per address, each for a different (maybe non-existent) account. */
	for (i = 0; i < 20; i++) {
		(void)snprintf(account, sizeof(account), "nosuchuser%d", i);
		ASSERT_EQ(fail(account, "203.0.113.9", t, &defaults), 0);
	}
	ASSERT_EQ(allowed("fresh", "203.0.113.9", t + 60, &defaults, &retry), SRV_ERR_THROTTLED);
	ASSERT_EQ(retry, 900 - 60);
	ASSERT_EQ(allowed("fresh", "203.0.113.10", t + 60, &defaults, &retry), 0);
	/* A success is not counted against the address, nor does it reset it. */
	ASSERT_EQ(allowed("fresh", "203.0.113.9", t + 60, &defaults, &retry), SRV_ERR_THROTTLED);
	ASSERT_EQ(allowed("fresh", "203.0.113.9", t + 900, &defaults, &retry), 0);
}

static void
test_settle(void)
{
	struct db_throttle_limits l = defaults;
	struct db_throttle_ticket tk, first, refused;
	int64_t retry = -1, t = 400000;

	l.pair_max = 2;
	l.account_max = 3;
	/* Reservations count at once: two in flight fill the pair's limit. */
	ASSERT_EQ(db_throttle_reserve(db, "frank", "192.0.2.50", t, &l, &first, &retry), 0);
	ASSERT_EQ(db_throttle_reserve(db, "frank", "192.0.2.50", t, &l, &tk, &retry), 0);
	ASSERT_EQ(db_throttle_reserve(db, "frank", "192.0.2.50", t, &l, &refused, &retry),
	    SRV_ERR_THROTTLED);
	ASSERT_EQ(refused.window_end[0], 0);
	/* Undecided takes one back. */
	ASSERT_EQ(db_throttle_settle(db, "frank", "192.0.2.50", t, &l, &first,
	    DB_THROTTLE_UNDECIDED), 0);
	ASSERT_EQ(db_throttle_reserve(db, "frank", "192.0.2.50", t, &l, &tk, &retry), 0);
	/* Success: the pair forgotten, account and address take it back. */
	ASSERT_EQ(db_throttle_settle(db, "frank", "192.0.2.50", t, &l, &tk,
	    DB_THROTTLE_SUCCEEDED), 0);
	ASSERT_EQ(fail("frank", "192.0.2.50", t, &l), 0);
	ASSERT_EQ(allowed("frank", "192.0.2.50", t, &l, &retry), 0);
	/* A reservation whose window ended before it settled leaves the new
	 * window's count alone. */
	ASSERT_EQ(db_throttle_reserve(db, "gina", "192.0.2.60", t, &l, &tk, &retry), 0);
	ASSERT_EQ(fail("gina", "192.0.2.61", t + 900, &l), 0);
	ASSERT_EQ(fail("gina", "192.0.2.62", t + 900, &l), 0);
	ASSERT_EQ(db_throttle_settle(db, "gina", "192.0.2.60", t + 900, &l, &tk,
	    DB_THROTTLE_UNDECIDED), 0);
	ASSERT_EQ(fail("gina", "192.0.2.63", t + 900, &l), 0);
	ASSERT_EQ(allowed("gina", "192.0.2.64", t + 900, &l, &retry), SRV_ERR_THROTTLED);
	/* Failed changes nothing. */
	ASSERT_EQ(db_throttle_reserve(db, "hal", "192.0.2.70", t, &l, &tk, &retry), 0);
	ASSERT_EQ(db_throttle_settle(db, "hal", "192.0.2.70", t, &l, &tk, DB_THROTTLE_FAILED), 0);
	ASSERT_EQ(fail("hal", "192.0.2.70", t, &l), 0);
	ASSERT_EQ(allowed("hal", "192.0.2.70", t, &l, &retry), SRV_ERR_THROTTLED);
}

/* Threads reserving for one account through their own connections at
 * once: the write lock makes check-and-count one step, so exactly the
 * limit get through whatever the interleaving. */
#define RACE_THREADS 8
#define RACE_TRIES 12

struct racer {
	struct db *db;
	int granted;
	int errors;
};

static void *
race(void *arg)
{
	struct racer *r = arg;
	struct db_throttle_ticket tk;
	int64_t retry;
	int i, rc;

	for (i = 0; i < RACE_TRIES; i++) {
		rc = db_throttle_reserve(r->db, "ivan", "192.0.2.80", 500000, &defaults, &tk,
		    &retry);
		if (rc == 0)
			r->granted++;
		else if (rc != SRV_ERR_THROTTLED)
			r->errors++;
	}
	return NULL;
}

static void
test_reserve_is_atomic(void)
{
	struct racer r[RACE_THREADS] = { 0 };
	pthread_t th[RACE_THREADS];
	int i, granted = 0, errors = 0;

	for (i = 0; i < RACE_THREADS; i++)
		ASSERT_EQ(tu_db_open(dir, NULL, &r[i].db), 0);
	for (i = 0; i < RACE_THREADS; i++)
		ASSERT_EQ(pthread_create(&th[i], NULL, race, &r[i]), 0);
	for (i = 0; i < RACE_THREADS; i++) {
		pthread_join(th[i], NULL);
		granted += r[i].granted;
		errors += r[i].errors;
		db_close(r[i].db);
	}
	ASSERT_EQ(errors, 0);
	ASSERT_EQ(granted, (int)defaults.pair_max);
}

static void
test_survives_reopen(void)
{
	int64_t retry = 0, t = 600000;
	int i;

	for (i = 0; i < 5; i++)
		ASSERT_EQ(fail("eve", "192.0.2.90", t, &defaults), 0);
	db_close(db);
	db = NULL;
	ASSERT_EQ(tu_db_open(dir, NULL, &db), 0);
	ASSERT_EQ(allowed("eve", "192.0.2.90", t + 1, &defaults, &retry), SRV_ERR_THROTTLED);
	ASSERT_EQ(retry, 900 - 1);
}

static void
test_args(void)
{
	struct db_throttle_limits l = defaults;
	struct db_throttle_ticket tk;
	char longname[DB_THROTTLE_NAME_MAX + 2];
	int64_t retry = 5;

	ASSERT_EQ(db_throttle_reserve(db, NULL, "a", 1, &l, &tk, &retry), VEP_ERR_ARG);
	ASSERT_EQ(retry, 0);
	ASSERT_EQ(db_throttle_reserve(db, "x", NULL, 1, &l, &tk, &retry), VEP_ERR_ARG);
	ASSERT_EQ(db_throttle_reserve(db, "x", "a", 1, NULL, &tk, &retry), VEP_ERR_ARG);
	ASSERT_EQ(db_throttle_reserve(db, "x", "a", 1, &l, NULL, &retry), VEP_ERR_ARG);
	ASSERT_EQ(db_throttle_reserve(db, "x", "a", 1, &l, &tk, NULL), VEP_ERR_ARG);
	ASSERT_EQ(db_throttle_reserve(NULL, "x", "a", 1, &l, &tk, &retry), VEP_ERR_ARG);
	ASSERT_EQ(db_throttle_reserve(db, "", "a", 1, &l, &tk, &retry), VEP_ERR_ARG);
	ASSERT_EQ(db_throttle_reserve(db, "x", "a b", 1, &l, &tk, &retry), VEP_ERR_ARG);
	l.account_window_s = DB_THROTTLE_WINDOW_MAX_S + 1;
	ASSERT_EQ(db_throttle_reserve(db, "x", "a", 1, &l, &tk, &retry), VEP_ERR_ARG);
	l = defaults;
	l.pair_max = 0;
	ASSERT_EQ(db_throttle_reserve(db, "x", "a", 1, &l, &tk, &retry), VEP_ERR_ARG);
	l = defaults;
	l.known_for_s = DB_THROTTLE_KNOWN_MAX_S + 1;
	ASSERT_EQ(db_throttle_reserve(db, "x", "a", 1, &l, &tk, &retry), VEP_ERR_ARG);
	l.known_for_s = -1;
	ASSERT_EQ(db_throttle_reserve(db, "x", "a", 1, &l, &tk, &retry), VEP_ERR_ARG);
	ASSERT_EQ(db_throttle_settle(db, "x", "a", 1, &defaults, NULL, DB_THROTTLE_FAILED),
	    VEP_ERR_ARG);

	memset(longname, 'n', sizeof(longname));
	longname[DB_THROTTLE_NAME_MAX] = '\0';
	ASSERT_EQ(fail(longname, "a", 1, &defaults), 0);
	longname[DB_THROTTLE_NAME_MAX] = 'n';
	longname[DB_THROTTLE_NAME_MAX + 1] = '\0';
	ASSERT_EQ(fail(longname, "a", 1, &defaults), VEP_ERR_TOOBIG);
	ASSERT_EQ(fail("x", longname, 1, &defaults), VEP_ERR_TOOBIG);
}

static void
test_prune_bounded(void)
{
	struct db_throttle_limits l = { 5, 5, 10, 20, 10, 0 };
	int64_t n = -1, t = 700000, retry = 0;
	char name[32];
	int i;

	/* Drain whatever earlier tests left, far in the future. */
	do
		ASSERT_EQ(db_throttle_prune(db, 100000000, 1000, &n), 0);
	while (n == 1000);
	ASSERT_EQ(rows(), 0);
	/* 50 attempts from one address: 50 pairs + 50 accounts + 1 address. */
	for (i = 0; i < 50; i++) {
		(void)snprintf(name, sizeof(name), "p%d", i);
		l.addr_max = 100;
		ASSERT_EQ(fail(name, "192.0.2.1", t, &l), 0);
	}
	ASSERT_EQ(rows(), 101);
	ASSERT_EQ(fail("late", "192.0.2.2", t + 100, &l), 0);
	/* That reservation pruned DB_THROTTLE_PRUNE_PER_WRITE ended rows. */
	ASSERT_EQ(rows(), 101 + 3 - DB_THROTTLE_PRUNE_PER_WRITE);
	ASSERT_EQ(db_throttle_prune(db, t + 100, 0, &n), VEP_ERR_ARG);
	ASSERT_EQ(db_throttle_prune(db, t + 100, 40, &n), 0);
	ASSERT_EQ(n, 40);
	ASSERT_EQ(db_throttle_prune(db, t + 100, 40, &n), 0);
	ASSERT_EQ(n, 40);
	ASSERT_EQ(db_throttle_prune(db, t + 100, 40, &n), 0);
	ASSERT_EQ(n, 101 - DB_THROTTLE_PRUNE_PER_WRITE - 80);
	ASSERT_EQ(db_throttle_prune(db, t + 100, 40, &n), 0);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(rows(), 3);   /* "late" is still in its windows */
	ASSERT_EQ(allowed("late", "192.0.2.2", t + 100, &l, &retry), 0);
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 100,000 distinct names (50,000 accounts, each failing from its own
 * address), ten attempts a second of simulated time with 60 s windows: the
 * table holds only the live windows plus the pruning lag, not 150,000 rows,
 * and reservations stay fast. The file lives on tmpfs when there is one:
 * this measures bounds, not the disk's fsync rate (every attempt is a
 * commit). */
static void
test_many_names_bounded(void)
{
	struct db_throttle_limits l = { 5, 5, 60, 20, 60, 0 };
	/* A PostgreSQL transaction costs a round trip: fewer calls, the same
	 * rate of new names per second, so the same bound holds. */
	const int calls = tu_pg() != NULL ? 5000 : 50000;
	int64_t t0 = 1000000;
	long long n, base, max_live = 3 * 60 * 10;
	double start, took;
	char acct[32], addr[48], *fast = NULL;
	struct db *mdb = NULL, *keep = db;
	struct db_throttle_ticket tk;
	int64_t retry;
	int i;

	if (tu_pg() == NULL && access("/dev/shm", W_OK) == 0) {
		fast = strdup("/dev/shm/vepdb-test-XXXXXX");
		if (fast != NULL && mkdtemp(fast) == NULL) {
			free(fast);
			fast = NULL;
		}
	}
	ASSERT_EQ(tu_db_open(fast ? fast : dir, NULL, &mdb), 0);
	/* Rows of the tests before that outlive t0 (PostgreSQL: one store). */
	base = tu_store_int(fast ? fast : dir, "SELECT count(*) FROM throttle");
	ASSERT_TRUE(base >= 0);
	start = now_s();
	for (i = 0; i < calls; i++) {
		(void)snprintf(acct, sizeof(acct), "user%06d", i);
		(void)snprintf(addr, sizeof(addr), "2001:db8:%x:%x::", i >> 16, i & 0xffff);
		if (db_throttle_reserve(mdb, acct, addr, t0 + i / 10, &l, &tk, &retry) != 0)
			break;
	}
	took = now_s() - start;
	ASSERT_EQ(i, calls);
	fprintf(stderr, "     %d names counted in %.2f s\n", 2 * calls, took);
	n = tu_store_int(fast ? fast : dir, "SELECT count(*) FROM throttle");
	/* Live windows: 60 s x 10/s x 3 kinds; pruning keeps up (8 > 3 per write). */
	ASSERT_TRUE(n > 0);
	ASSERT_TRUE(n <= max_live + 3 * DB_THROTTLE_PRUNE_PER_WRITE + base);

	db = mdb;
	start = now_s();
	for (i = 0; i < 2000; i++) {
		(void)snprintf(acct, sizeof(acct), "user%06d", calls - 1 - (i % 500));
		ASSERT_EQ(allowed(acct, "2001:db8:ffff::", t0 + calls / 10, &l, &retry), 0);
	}
	took = now_s() - start;
	db = keep;
	fprintf(stderr, "     2000 checks in %.3f s\n", took);
	/* Indexed lookups: well under a few seconds even under ASan. */
	ASSERT_TRUE(took < 10.0);
	db_close(mdb);
	tu_rmdir(fast);
}

struct seen {
	char lines[16][160];
	size_t n;
};

static int
seen_cb(const struct db_throttle_entry *e, void *arg)
{
	struct seen *sn = arg;

	if (sn->n < 16 && ((e->account != NULL && strncmp(e->account, "lc-", 3) == 0) ||
	    (e->addr != NULL && strncmp(e->addr, "198.51.100.", 11) == 0)))
		(void)snprintf(sn->lines[sn->n++], sizeof(sn->lines[0]), "%s %s %s %lld",
		    e->kind, e->account ? e->account : "-", e->addr ? e->addr : "-",
		    (long long)e->count);
	return 0;
}

static int
has(const struct seen *sn, const char *line)
{
	size_t i;

	for (i = 0; i < sn->n; i++)
		if (strcmp(sn->lines[i], line) == 0)
			return 1;
	return 0;
}

/* An administrator's listing and clearing: what is counted, by kind; a
 * cleared account may try again at once; known addresses stay. */
static void
test_list_clear(void)
{
	int64_t now = 7000000, retry, n = -1;
	struct seen sn;
	int i;

	ASSERT_EQ(fail("lc-acct", "198.51.100.7", now, &defaults), 0);
	ASSERT_EQ(fail("lc-acct", "198.51.100.7", now, &defaults), 0);
	ASSERT_EQ(fail("lc-acct", "198.51.100.8", now, &defaults), 0);
	ASSERT_EQ(succeed("lc-other", "198.51.100.7", now, &defaults), 0);
	memset(&sn, 0, sizeof(sn));
	ASSERT_EQ(db_throttle_list(db, now + 1, seen_cb, &sn), 0);
	ASSERT_TRUE(has(&sn, "account lc-acct - 3"));
	ASSERT_TRUE(has(&sn, "address - 198.51.100.7 2"));
	ASSERT_TRUE(has(&sn, "address - 198.51.100.8 1"));
	ASSERT_TRUE(has(&sn, "pair lc-acct 198.51.100.7 2"));
	ASSERT_TRUE(has(&sn, "pair lc-acct 198.51.100.8 1"));
	ASSERT_TRUE(has(&sn, "known lc-other 198.51.100.7 1"));
	ASSERT_EQ(sn.n, 6);
	/* Ended windows are not shown. */
	memset(&sn, 0, sizeof(sn));
	ASSERT_EQ(db_throttle_list(db, now + defaults.account_window_s, seen_cb, &sn), 0);
	ASSERT_EQ(sn.n, 1);

	ASSERT_EQ(db_throttle_clear(db, "lc-acct", NULL, &n), 0);
	ASSERT_EQ(n, 3);   /* the account's own count and its two pairs */
	memset(&sn, 0, sizeof(sn));
	ASSERT_EQ(db_throttle_list(db, now + 1, seen_cb, &sn), 0);
	ASSERT_EQ(sn.n, 3);
	ASSERT_TRUE(has(&sn, "known lc-other 198.51.100.7 1"));
	ASSERT_EQ(db_throttle_clear(db, NULL, "198.51.100.8", &n), 0);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(db_throttle_clear(db, NULL, "198.51.100.8", &n), 0);
	ASSERT_EQ(n, 0);

	/* Locked out by the pair limit; clearing the pair lets it in at once. */
	for (i = 0; i < defaults.pair_max; i++)
		ASSERT_EQ(fail("lc-lock", "198.51.100.9", now, &defaults), 0);
	ASSERT_EQ(allowed("lc-lock", "198.51.100.9", now + 1, &defaults, &retry),
	    SRV_ERR_THROTTLED);
	ASSERT_EQ(db_throttle_clear(db, "lc-lock", "198.51.100.9", &n), 0);
	ASSERT_EQ(n, 1);
	ASSERT_EQ(allowed("lc-lock", "198.51.100.9", now + 1, &defaults, &retry), 0);

	ASSERT_EQ(db_throttle_clear(db, NULL, NULL, &n), 0);
	ASSERT_TRUE(n >= 2);
	memset(&sn, 0, sizeof(sn));
	ASSERT_EQ(db_throttle_list(db, now + 1, seen_cb, &sn), 0);
	ASSERT_EQ(sn.n, 1);   /* the known address */
	ASSERT_EQ(db_throttle_clear(db, "", NULL, &n), VEP_ERR_ARG);
	ASSERT_EQ(db_throttle_clear(db, NULL, "a b", &n), VEP_ERR_ARG);
	ASSERT_EQ(db_throttle_list(db, now, NULL, NULL), VEP_ERR_ARG);
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
	RUN(test_pair_limit);
	RUN(test_account_limit_spares_known_address);
	RUN(test_address_limit);
	RUN(test_settle);
	RUN(test_reserve_is_atomic);
	RUN(test_survives_reopen);
	RUN(test_args);
	RUN(test_prune_bounded);
	RUN(test_many_names_bounded);
	RUN(test_list_clear);
	db_close(db);
	tu_rmdir(dir);
	return harness_done();
}
