/*
 * store/throttle.h - counting sign-in attempts per account, per account and
 * client address, and per client address, on disk so that a restart does not
 * hand an attacker fresh tries.
 *
 * An attempt is counted BEFORE PAM sees it, in the same write transaction
 * that checks the limits (db_throttle_reserve), so that however many
 * attempts arrive at once, on however many loops or processes sharing the
 * file, at most the limit of them ever reach PAM. When PAM has answered,
 * db_throttle_settle turns the reservation into what it was: a failure
 * (it stays counted), a success, or nothing known (PAM timed out or was
 * busy: it is taken back). Account names are counted whether or not the
 * account exists (so the throttle is no account-existence oracle).
 *
 * Three counters, each a fixed window opened by its first attempt:
 *   pair     one account from one client address: pair_max per
 *            account_window_s. The low limit.
 *   account  one account from anywhere: account_max per account_window_s,
 *            NOT applied to an attempt from an address the account signed
 *            in from within the last known_for_s ("known" address). So an
 *            attacker elsewhere can exhaust the account-wide limit but never
 *            lock the owner out of the place they usually sign in from.
 *   address  one client address, across accounts: addr_max per
 *            addr_window_s (a success does not reset it: otherwise an
 *            attacker with one valid account could sign into it between
 *            guesses at others).
 * Guesses at one account per window are thus bounded by account_max +
 * pair_max x (addresses it signed in from recently); a known address comes
 * only from a successful sign-in. A fixed window lets at most 2 x max
 * attempts straddle a window boundary; that is the price of one row per
 * name instead of one per attempt.
 *
 * The caller gives names already in their counting form (auth/throttle_key.h:
 * the account as the PAM backend compares it, IPv6 addresses per /64).
 *
 * Memory stays bounded: rows live on disk, one per (kind, name), found
 * through a unique index (O(log n)); every reservation also deletes up to
 * DB_THROTTLE_PRUNE_PER_WRITE ended rows, and db_throttle_prune lets a
 * timer delete more in bounded steps.
 *
 * Times are seconds since the epoch, supplied by the caller.
 */
#ifndef AUTHORITY_STORE_THROTTLE_H
#define AUTHORITY_STORE_THROTTLE_H

#include <stdint.h>

#include "store/db.h"

/* Longest window a configuration may ask for (seconds: one day). */
#define DB_THROTTLE_WINDOW_MAX_S (24 * 3600)
/* Longest an address stays known to an account (seconds: a year). */
#define DB_THROTTLE_KNOWN_MAX_S (365 * 24 * 3600)
/* Longest account name or address stored (bytes); longer ones are refused
 * with VEP_ERR_TOOBIG, which the handler turns into a failed sign-in. */
#define DB_THROTTLE_NAME_MAX 320
/* Ended rows deleted along with each reservation (rows). */
#define DB_THROTTLE_PRUNE_PER_WRITE 8
/* The counters a reservation may count in (pair, account, address). */
#define DB_THROTTLE_COUNTERS 3

struct db_throttle_limits {
	int64_t pair_max;          /* attempts per account and address per window, >= 1 */
	int64_t account_max;       /* per account from addresses not known to it, >= 1 */
	int64_t account_window_s;  /* 1..DB_THROTTLE_WINDOW_MAX_S, pair and account */
	int64_t addr_max;          /* per client address, >= 1 */
	int64_t addr_window_s;     /* 1..DB_THROTTLE_WINDOW_MAX_S */
	int64_t known_for_s;       /* 0..DB_THROTTLE_KNOWN_MAX_S; 0 = never known */
};

/* What a reservation counted: the end of the window each counter was
 * counted in (0: not counted), so that settling takes back exactly that
 * attempt and never one of a later window. */
struct db_throttle_ticket {
	int64_t window_end[DB_THROTTLE_COUNTERS];
};

enum db_throttle_outcome {
	DB_THROTTLE_FAILED,     /* PAM said no: the attempt stays counted */
	DB_THROTTLE_SUCCEEDED,  /* signed in: taken back; the address becomes known */
	DB_THROTTLE_UNDECIDED,  /* PAM timed out, was busy or broke: taken back */
};

/* Checks the limits for one attempt of account from addr at now and, when
 * none is reached, counts it in every counter, in one write transaction
 * (BEGIN IMMEDIATE: atomic against every other connection to the file).
 * Returns 0 with *t filled and *retry_after_s = 0; SRV_ERR_THROTTLED with
 * *retry_after_s >= 1, the seconds until every window that blocks ends, and
 * nothing counted; else VEP_ERR_ARG, VEP_ERR_TOOBIG, DB_ERR_BUSY,
 * DB_ERR_FULL and the like (nothing counted). */
int db_throttle_reserve(struct db *db, const char *account, const char *addr, int64_t now,
    const struct db_throttle_limits *limits, struct db_throttle_ticket *t,
    int64_t *retry_after_s);

/* Settles a reservation made by db_throttle_reserve for the same names:
 * FAILED changes nothing; SUCCEEDED takes the attempt back from the account
 * and address counters, forgets the pair's count and makes addr known to
 * account until now + known_for_s; UNDECIDED takes the attempt back from all
 * three. A counter whose window has moved on since is left alone. */
int db_throttle_settle(struct db *db, const char *account, const char *addr, int64_t now,
    const struct db_throttle_limits *limits, const struct db_throttle_ticket *t,
    enum db_throttle_outcome outcome);

/* Deletes at most max_rows rows that ended at or before now; *count (may
 * be NULL) gets how many. Call again while *count == max_rows. */
int db_throttle_prune(struct db *db, int64_t now, int64_t max_rows, int64_t *count);

/* One row as an administrator sees it (db_throttle_list). Strings are
 * borrowed until the callback returns. */
struct db_throttle_entry {
	const char *kind;      /* "pair", "account", "address" or "known" */
	const char *account;   /* counting form; NULL for "address" */
	const char *addr;      /* counting form; NULL for "account" */
	int64_t count;         /* attempts counted in the window (1 for "known") */
	int64_t window_end;    /* s: when the count (or the trust) ends */
};

/* A non-zero return stops db_throttle_list and becomes its result. It
 * must not use the same struct db. */
typedef int (*db_throttle_cb)(const struct db_throttle_entry *e, void *arg);

/* Calls cb for every count and known address still running at now,
 * ordered by kind ("account", "address", "pair", "known"), then name. */
int db_throttle_list(struct db *db, int64_t now, db_throttle_cb cb, void *arg);

/* Forgets counts (an administrator unlocking): with account only, the
 * account's own count and every pair count of it; with addr only, the
 * address's count and every pair count from it; with both, that one pair's
 * count; with neither, every count. Known addresses stay. The next attempt
 * is checked against what remains, at once. *count (may be NULL) gets the
 * rows removed. Errors: VEP_ERR_ARG (an empty name, an address with a
 * space), DB_ERR_BUSY, DB_ERR_FULL, VEP_ERR_IO. */
int db_throttle_clear(struct db *db, const char *account, const char *addr, int64_t *count);

#endif
