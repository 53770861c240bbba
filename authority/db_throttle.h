/*
 * db_throttle.h - counting failed sign-ins per account and per client
 * address, on disk so that a restart does not hand an attacker fresh tries.
 *
 * The sign-in handler asks db_throttle_check BEFORE it asks PAM, records
 * every failure with db_throttle_record_failure, and every success with
 * db_throttle_record_success. Account names are counted whether or not the
 * account exists (so the throttle is no account-existence oracle), exactly
 * as they will be given to PAM.
 *
 * Windows are fixed: an account's first failure opens a window of
 * account_window_s; failures inside it count; when account_max have been
 * counted, the account is refused until the window ends. The same holds for
 * a client address with addr_max / addr_window_s. (A fixed window lets at
 * most 2 x max attempts straddle a window boundary; that is the price of one
 * row per name instead of one per attempt.)
 *
 * A success resets the account's counter but NOT the address's: otherwise
 * an attacker holding one valid account could sign into it between guesses
 * at other accounts and never be slowed down from that address.
 *
 * Memory stays bounded: rows live on disk, one per (kind, name), found
 * through a unique index (O(log n)); every recorded failure also deletes up
 * to DB_THROTTLE_PRUNE_PER_WRITE expired rows, and db_throttle_prune lets a
 * timer delete more in bounded steps.
 *
 * Times are seconds since the epoch, supplied by the caller.
 */
#ifndef VEP_AUTHORITY_DB_THROTTLE_H
#define VEP_AUTHORITY_DB_THROTTLE_H

#include <stdint.h>

#include "db.h"

/* Defaults from the issue: 5 failures per account, 20 per client address,
 * each per 15 minutes. */
#define DB_THROTTLE_ACCOUNT_MAX_DEFAULT 5             /* failures */
#define DB_THROTTLE_ACCOUNT_WINDOW_S_DEFAULT (15 * 60) /* seconds */
#define DB_THROTTLE_ADDR_MAX_DEFAULT 20               /* failures */
#define DB_THROTTLE_ADDR_WINDOW_S_DEFAULT (15 * 60)    /* seconds */
/* Longest window a configuration may ask for (seconds: one day). */
#define DB_THROTTLE_WINDOW_MAX_S (24 * 3600)
/* Longest account name or address stored (bytes); longer ones are refused
 * with VEP_ERR_TOOBIG, which the handler turns into a failed sign-in. */
#define DB_THROTTLE_NAME_MAX 320
/* Expired rows deleted along with each recorded failure (rows). */
#define DB_THROTTLE_PRUNE_PER_WRITE 8

struct db_throttle_limits {
	int64_t account_max;       /* failures per window, >= 1 */
	int64_t account_window_s;  /* 1..DB_THROTTLE_WINDOW_MAX_S */
	int64_t addr_max;
	int64_t addr_window_s;
};

/* Fills l with the DB_THROTTLE_*_DEFAULT values. */
void db_throttle_limits_default(struct db_throttle_limits *l);

/* Asks whether a sign-in for account from addr may go to PAM at now.
 * Either name may be NULL (not counted), not both. limits NULL = defaults.
 * Returns 0 when allowed (*retry_after_s = 0), DB_ERR_THROTTLED when the
 * account or the address has used its failures in the current window, with
 * *retry_after_s >= 1 the seconds until every window that blocks ends; else
 * VEP_ERR_ARG, VEP_ERR_TOOBIG, DB_ERR_BUSY. Reads only. */
int db_throttle_check(struct db *db, const char *account, const char *addr,
    int64_t now, const struct db_throttle_limits *limits, int64_t *retry_after_s);

/* Counts one failed sign-in for account and addr (NULL: not counted) at now,
 * in one transaction that also prunes a few expired rows. */
int db_throttle_record_failure(struct db *db, const char *account, const char *addr,
    int64_t now, const struct db_throttle_limits *limits);

/* Forgets the account's failures after a successful sign-in (the address
 * keeps its count, see above). */
int db_throttle_record_success(struct db *db, const char *account);

/* Deletes at most max_rows windows that ended at or before now; *count (may
 * be NULL) gets how many. Call again while *count == max_rows. */
int db_throttle_prune(struct db *db, int64_t now, int64_t max_rows, int64_t *count);

#endif
