/*
 * store/throttle.c - the SQL of the throttle table: fixed-window attempt
 * counters per account and address pair, per account and per client
 * address, and the addresses known to an account (contract in
 * store/throttle.h).
 *
 * It never reads the clock and never decides what a throttled client is
 * told; it answers "counted" or "wait N seconds" and keeps the counts.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/internal.h"
#include "store/throttle.h"

static const struct db_sql sql_get = {
	"SELECT failures, window_end FROM throttle WHERE kind = ?1 AND name = ?2", NULL
};
/* An attempt after the window ended opens a new one (SET sees the old row;
 * PostgreSQL needs the table named where SQLite takes the bare column). */
static const struct db_sql sql_count = {
	"INSERT INTO throttle (kind, name, window_end, failures)"
	" VALUES (?1, ?2, ?3 + ?4, 1)"
	" ON CONFLICT (kind, name) DO UPDATE SET"
	" failures = CASE WHEN window_end <= ?3 THEN 1 ELSE failures + 1 END,"
	" window_end = CASE WHEN window_end <= ?3 THEN ?3 + ?4 ELSE window_end END"
	" RETURNING window_end",
	"INSERT INTO throttle (kind, name, window_end, failures)"
	" VALUES ($1, $2, $3 + $4, 1)"
	" ON CONFLICT (kind, name) DO UPDATE SET"
	" failures = CASE WHEN throttle.window_end <= $3 THEN 1"
	" ELSE throttle.failures + 1 END,"
	" window_end = CASE WHEN throttle.window_end <= $3 THEN $3 + $4"
	" ELSE throttle.window_end END"
	" RETURNING window_end"
};
/* Taking one attempt back, only from the window it was counted in. */
static const struct db_sql sql_uncount = {
	"UPDATE throttle SET failures = failures - 1"
	" WHERE kind = ?1 AND name = ?2 AND window_end = ?3 AND failures > 1", NULL
};
static const struct db_sql sql_uncount_last = {
	"DELETE FROM throttle"
	" WHERE kind = ?1 AND name = ?2 AND window_end = ?3 AND failures = 1", NULL
};
/* A live count forgotten (an ended one is the pruner's). */
static const struct db_sql sql_forget = {
	"DELETE FROM throttle WHERE kind = ?1 AND name = ?2 AND window_end > ?3", NULL
};
static const struct db_sql sql_know = {
	"INSERT INTO throttle (kind, name, window_end, failures) VALUES (?1, ?2, ?3, 1)"
	" ON CONFLICT (kind, name) DO UPDATE SET window_end = excluded.window_end", NULL
};
static const struct db_sql sql_prune = {
	"DELETE FROM throttle WHERE id IN (SELECT id FROM throttle"
	" WHERE window_end <= ?1 ORDER BY window_end LIMIT ?2)", NULL
};

/* An administrator's view: live counts and known addresses, the pair's
 * name split at its one space into address and account. */
static const struct db_sql sql_list = {
	"SELECT kind, name, failures, window_end FROM throttle WHERE window_end > ?1"
	" ORDER BY kind, name", NULL
};
/* ?1 account, ?2 address; NULL matches any. Known addresses (kind 4) are
 * trust, not a count, and stay. SQLite's instr() is PostgreSQL's strpos(). */
static const struct db_sql sql_clear = {
	"DELETE FROM throttle WHERE kind IN (1, 2, 3)"
	" AND (CAST(?1 AS TEXT) IS NULL OR (kind = 1 AND name = ?1)"
	" OR (kind = 3 AND substr(name, instr(name, ' ') + 1) = ?1))"
	" AND (CAST(?2 AS TEXT) IS NULL OR (kind = 2 AND name = ?2)"
	" OR (kind = 3 AND substr(name, 1, instr(name, ' ') - 1) = ?2))",
	"DELETE FROM throttle WHERE kind IN (1, 2, 3)"
	" AND (CAST($1 AS TEXT) IS NULL OR (kind = 1 AND name = $1)"
	" OR (kind = 3 AND substr(name, strpos(name, ' ') + 1) = $1))"
	" AND (CAST($2 AS TEXT) IS NULL OR (kind = 2 AND name = $2)"
	" OR (kind = 3 AND substr(name, 1, strpos(name, ' ') - 1) = $2))"
};

/* The schema's `kind` values. */
enum throttle_kind {
	THROTTLE_ACCOUNT = 1,
	THROTTLE_ADDR = 2,
	THROTTLE_PAIR = 3,
	THROTTLE_KNOWN = 4,
};

/* The counters, in the order of struct db_throttle_ticket. */
static const struct {
	enum throttle_kind kind;
	size_t max_off;     /* offsetof the limit in struct db_throttle_limits */
	size_t window_off;
} counters[DB_THROTTLE_COUNTERS] = {
	{ THROTTLE_PAIR, offsetof(struct db_throttle_limits, pair_max),
	  offsetof(struct db_throttle_limits, account_window_s) },
	{ THROTTLE_ACCOUNT, offsetof(struct db_throttle_limits, account_max),
	  offsetof(struct db_throttle_limits, account_window_s) },
	{ THROTTLE_ADDR, offsetof(struct db_throttle_limits, addr_max),
	  offsetof(struct db_throttle_limits, addr_window_s) },
};
enum { C_PAIR, C_ACCOUNT, C_ADDR };

/* The names of one attempt: names[i] is counters[i]'s row name; the pair's
 * is "ADDR ACCOUNT" (an address holds no space, so the split is unique). */
struct throttle_names {
	const char *names[DB_THROTTLE_COUNTERS];
	char *pair;         /* owned */
};

static int64_t
limit_at(const struct db_throttle_limits *l, size_t off)
{
	int64_t v;

	memcpy(&v, (const char *)l + off, sizeof(v));
	return v;
}

static int
limits_valid(const struct db_throttle_limits *l)
{
	size_t i;

	for (i = 0; i < DB_THROTTLE_COUNTERS; i++) {
		int64_t max = limit_at(l, counters[i].max_off);
		int64_t win = limit_at(l, counters[i].window_off);

		if (max < 1 || win < 1 || win > DB_THROTTLE_WINDOW_MAX_S)
			return 0;
	}
	return l->known_for_s >= 0 && l->known_for_s <= DB_THROTTLE_KNOWN_MAX_S;
}

static void
names_clear(struct throttle_names *n)
{
	free(n->pair);
	memset(n, 0, sizeof(*n));
}

/* Validates the arguments every call shares and builds the row names. */
static int
names_make(struct db *db, const char *account, const char *addr,
    const struct db_throttle_limits *limits, struct throttle_names *n)
{
	size_t alen, dlen;

	memset(n, 0, sizeof(*n));
	if (db == NULL || account == NULL || addr == NULL || limits == NULL ||
	    !limits_valid(limits) || account[0] == '\0' || addr[0] == '\0' ||
	    strchr(addr, ' ') != NULL)
		return VEP_ERR_ARG;
	alen = strlen(account);
	dlen = strlen(addr);
	if (alen > DB_THROTTLE_NAME_MAX || dlen > DB_THROTTLE_NAME_MAX)
		return VEP_ERR_TOOBIG;
	if ((n->pair = malloc(dlen + 1 + alen + 1)) == NULL)
		return VEP_ERR_NOMEM;
	memcpy(n->pair, addr, dlen);
	n->pair[dlen] = ' ';
	memcpy(n->pair + dlen + 1, account, alen + 1);
	n->names[C_PAIR] = n->pair;
	n->names[C_ACCOUNT] = account;
	n->names[C_ADDR] = addr;
	return VEP_OK;
}

/* *failures and *window_end of a row, 0 and 0 when there is none. */
static int
row_get(struct db *db, enum throttle_kind kind, const char *name, int64_t *failures,
    int64_t *window_end)
{
	struct db_st *st;
	int rc, ret;

	*failures = *window_end = 0;
	if ((ret = db_stmt(db, DB_STMT_THROTTLE_GET, &sql_get, &st)) != 0)
		return ret;
	db_st_int(st, 1, kind);
	db_st_text(st, 2, name);
	rc = db_st_step(st);
	if (rc == DB_ROW) {
		*failures = db_st_col_int(st, 0);
		*window_end = db_st_col_int(st, 1);
		ret = VEP_OK;
	} else {
		ret = rc;
	}
	db_stmt_done(st);
	return ret;
}

/* Counts one attempt in a counter; *window_end gets the window it landed in. */
static int
row_count(struct db *db, enum throttle_kind kind, const char *name, int64_t now,
    int64_t window_s, int64_t *window_end)
{
	struct db_st *st;
	int rc, ret;

	if ((ret = db_stmt(db, DB_STMT_THROTTLE_COUNT, &sql_count, &st)) != 0)
		return ret;
	db_st_int(st, 1, kind);
	db_st_text(st, 2, name);
	db_st_int(st, 3, now);
	db_st_int(st, 4, window_s);
	rc = db_st_step(st);
	if (rc == DB_ROW) {
		*window_end = db_st_col_int(st, 0);
		rc = db_st_step(st);
	}
	ret = rc;
	db_stmt_done(st);
	return ret;
}

/* Binds (kind, name, number) to a cached statement and runs it. */
static int
row_run(struct db *db, enum db_stmt_slot slot, const struct db_sql *sql, enum throttle_kind kind,
    const char *name, int64_t number)
{
	struct db_st *st;
	int ret;

	if ((ret = db_stmt(db, slot, sql, &st)) != 0)
		return ret;
	db_st_int(st, 1, kind);
	db_st_text(st, 2, name);
	db_st_int(st, 3, number);
	return db_step_done(st);
}

/* Takes one attempt back from a counter, if it is still in window_end. */
static int
row_uncount(struct db *db, enum throttle_kind kind, const char *name, int64_t window_end)
{
	int ret;

	if (window_end == 0)
		return VEP_OK;
	if ((ret = row_run(db, DB_STMT_THROTTLE_UNCOUNT, &sql_uncount, kind, name,
	    window_end)) != 0)
		return ret;
	return row_run(db, DB_STMT_THROTTLE_UNCOUNT_LAST, &sql_uncount_last, kind, name,
	    window_end);
}

/* Inside the transaction: is addr known to account at now? */
static int
pair_known(struct db *db, const struct throttle_names *n, const struct db_throttle_limits *l,
    int64_t now, int *known)
{
	int64_t one, until;
	int ret;

	*known = 0;
	if (l->known_for_s == 0)
		return VEP_OK;
	if ((ret = row_get(db, THROTTLE_KNOWN, n->names[C_PAIR], &one, &until)) != 0)
		return ret;
	*known = until > now;
	return VEP_OK;
}

int
db_throttle_reserve(struct db *db, const char *account, const char *addr, int64_t now,
    const struct db_throttle_limits *limits, struct db_throttle_ticket *t,
    int64_t *retry_after_s)
{
	struct throttle_names n;
	int64_t wait = 0, failures, end;
	size_t i;
	int ret, known;

	if (t != NULL)
		memset(t, 0, sizeof(*t));
	if (retry_after_s != NULL)
		*retry_after_s = 0;
	if (t == NULL || retry_after_s == NULL)
		return VEP_ERR_ARG;
	if ((ret = names_make(db, account, addr, limits, &n)) != 0)
		return ret;
	if ((ret = db_tx_begin(db)) != 0)
		goto out;
	/* Check and count as one step on every instance sharing the store. */
	if ((ret = db_tx_lock(db, DB_LOCK_THROTTLE)) != 0 ||
	    (ret = pair_known(db, &n, limits, now, &known)) != 0)
		goto rollback;
	for (i = 0; i < DB_THROTTLE_COUNTERS; i++) {
		if (i == C_ACCOUNT && known)
			continue;
		if ((ret = row_get(db, counters[i].kind, n.names[i], &failures, &end)) != 0)
			goto rollback;
		if (end > now && failures >= limit_at(limits, counters[i].max_off) &&
		    end - now > wait)
			wait = end - now;
	}
	if (wait > 0) {
		*retry_after_s = wait;
		ret = SRV_ERR_THROTTLED;
		goto rollback;
	}
	/* The account counter counts attempts from known addresses too: they
	 * are failures at the account; only its limit does not hold them. */
	for (i = 0; i < DB_THROTTLE_COUNTERS; i++)
		if ((ret = row_count(db, counters[i].kind, n.names[i], now,
		    limit_at(limits, counters[i].window_off), &t->window_end[i])) != 0)
			goto rollback;
	if ((ret = db_throttle_prune(db, now, DB_THROTTLE_PRUNE_PER_WRITE, NULL)) != 0)
		goto rollback;
	if ((ret = db_tx_commit(db)) != 0)
		memset(t, 0, sizeof(*t));
	goto out;
rollback:
	memset(t, 0, sizeof(*t));
	db_tx_rollback(db);
out:
	names_clear(&n);
	return ret;
}

int
db_throttle_settle(struct db *db, const char *account, const char *addr, int64_t now,
    const struct db_throttle_limits *limits, const struct db_throttle_ticket *t,
    enum db_throttle_outcome outcome)
{
	struct throttle_names n;
	int ret;

	if (t == NULL)
		return VEP_ERR_ARG;
	if ((ret = names_make(db, account, addr, limits, &n)) != 0)
		return ret;
	if (outcome == DB_THROTTLE_FAILED)
		goto out;
	if ((ret = db_tx_begin(db)) != 0)
		goto out;
	if ((ret = db_tx_lock(db, DB_LOCK_THROTTLE)) != 0 ||
	    (ret = row_uncount(db, THROTTLE_ACCOUNT, account, t->window_end[C_ACCOUNT])) != 0 ||
	    (ret = row_uncount(db, THROTTLE_ADDR, addr, t->window_end[C_ADDR])) != 0)
		goto rollback;
	if (outcome == DB_THROTTLE_UNDECIDED)
		ret = row_uncount(db, THROTTLE_PAIR, n.pair, t->window_end[C_PAIR]);
	else {
		/* The owner's own typos from here are forgiven. */
		ret = row_run(db, DB_STMT_THROTTLE_FORGET, &sql_forget, THROTTLE_PAIR, n.pair, now);
		if (ret == 0 && limits->known_for_s > 0)
			ret = row_run(db, DB_STMT_THROTTLE_KNOW, &sql_know, THROTTLE_KNOWN, n.pair,
			    now + limits->known_for_s);
	}
	if (ret != 0)
		goto rollback;
	ret = db_tx_commit(db);
	goto out;
rollback:
	db_tx_rollback(db);
out:
	names_clear(&n);
	return ret;
}

int
db_throttle_prune(struct db *db, int64_t now, int64_t max_rows, int64_t *count)
{
	struct db_st *st;
	int ret;

	if (count != NULL)
		*count = 0;
	if (db == NULL || max_rows <= 0)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_THROTTLE_PRUNE, &sql_prune, &st)) != 0)
		return ret;
	db_st_int(st, 1, now);
	db_st_int(st, 2, max_rows);
	if ((ret = db_step_done(st)) != 0)
		return ret;
	if (count != NULL)
		*count = db_st_changes(st);
	return VEP_OK;
}

/* The names of the schema's kinds, as db_throttle_entry.kind shows them. */
static const struct {
	enum throttle_kind kind;
	const char *name;
} kind_names[] = {
	{ THROTTLE_ACCOUNT, "account" },
	{ THROTTLE_ADDR, "address" },
	{ THROTTLE_PAIR, "pair" },
	{ THROTTLE_KNOWN, "known" },
};

static const char *
kind_name(int kind)
{
	size_t i;

	for (i = 0; i < sizeof(kind_names) / sizeof(kind_names[0]); i++)
		if ((int)kind_names[i].kind == kind)
			return kind_names[i].name;
	return NULL;
}

/* Fills e from one row; the pair's and the known address's "ADDR ACCOUNT"
 * is split into buf. */
static int
entry_from_row(struct db_st *st, char *buf, size_t buflen, struct db_throttle_entry *e)
{
	const char *name = db_st_col_text(st, 1);
	int kind = (int)db_st_col_int(st, 0);
	char *sp;

	memset(e, 0, sizeof(*e));
	if (name == NULL || (e->kind = kind_name(kind)) == NULL ||
	    strlen(name) >= buflen)
		return DB_ERR_CORRUPT;
	memcpy(buf, name, strlen(name) + 1);
	e->count = db_st_col_int(st, 2);
	e->window_end = db_st_col_int(st, 3);
	if (kind == THROTTLE_ACCOUNT) {
		e->account = buf;
	} else if (kind == THROTTLE_ADDR) {
		e->addr = buf;
	} else {
		if ((sp = strchr(buf, ' ')) == NULL)
			return DB_ERR_CORRUPT;
		*sp = '\0';
		e->addr = buf;
		e->account = sp + 1;
	}
	return VEP_OK;
}

int
db_throttle_list(struct db *db, int64_t now, db_throttle_cb cb, void *arg)
{
	char buf[2 * DB_THROTTLE_NAME_MAX + 2];
	struct db_throttle_entry e;
	struct db_st *st = NULL;
	int rc, ret;

	if (db == NULL || cb == NULL)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_THROTTLE_LIST, &sql_list, &st)) != 0)
		return ret;
	db_st_int(st, 1, now);
	while ((rc = db_st_step(st)) == DB_ROW) {
		if ((ret = entry_from_row(st, buf, sizeof(buf), &e)) != 0 ||
		    (ret = cb(&e, arg)) != 0)
			goto out;
	}
	ret = rc;
out:
	db_stmt_done(st);
	return ret;
}

int
db_throttle_clear(struct db *db, const char *account, const char *addr, int64_t *count)
{
	struct db_st *st;
	int ret;

	if (count != NULL)
		*count = 0;
	if (db == NULL || (account != NULL && account[0] == '\0') ||
	    (addr != NULL && (addr[0] == '\0' || strchr(addr, ' ') != NULL)))
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_THROTTLE_CLEAR, &sql_clear, &st)) != 0)
		return ret;
	db_st_text(st, 1, account);
	db_st_text(st, 2, addr);
	if ((ret = db_step_done(st)) != 0)
		return ret;
	if (count != NULL)
		*count = db_st_changes(st);
	return VEP_OK;
}
