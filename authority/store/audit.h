/*
 * store/audit.h - the audit trail: every sign-in success and failure and every
 * certificate issued, durable before the caller replies.
 *
 * A row holds the time, the event, the address or account concerned (or
 * "unknown"), the user key's fingerprint, the certificate's iat/exp, the
 * client address and an outcome word. Writes return only after the commit
 * is on disk (synchronous=FULL); when it cannot be (DB_ERR_FULL: disk or
 * size limit full; DB_ERR_BUSY: locked past the busy timeout; VEP_ERR_IO)
 * nothing of the write remains and the caller answers 503 without the
 * certificate. No certificate leaves unrecorded.
 *
 * A single row (db_audit_add: sign-ins, sign-outs, through store/deferred.h)
 * commits one transaction; a batch (db_audit_batch_*: certificates, through
 * issuance/issuance.h) gathers rows in memory and commits them all in one
 * transaction, all or none, so an event loop can pay one fsync per iteration
 * instead of one per request.
 *
 * Times are milliseconds since the epoch (certificate times are in ms).
 */
#ifndef AUTHORITY_STORE_AUDIT_H
#define AUTHORITY_STORE_AUDIT_H

#include <stddef.h>
#include <stdint.h>

#include "key.h"
#include "store/db.h"

/* What a row records for a missing address, account or client address. */
#define DB_AUDIT_UNKNOWN "unknown"
/* Longest email/account, client address or outcome stored (bytes). */
#define DB_AUDIT_TEXT_MAX 320
/* A key fingerprint: lowercase hex SHA-256 (chars, without the NUL). */
#define DB_AUDIT_FP_CHARS VEP_FINGERPRINT_HEX_LEN
/* Most rows one batch holds (rows); db_audit_batch_add refuses more. */
#define DB_AUDIT_BATCH_MAX 1024
/* The most batches db_audit_batches_commit takes at once. */
#define DB_AUDIT_COMMIT_BATCHES_MAX 32

/* The events; the numbers are the schema's audit_events ids. */
enum db_audit_event {
	DB_AUDIT_LOGIN_SUCCESS = 1,
	DB_AUDIT_LOGIN_FAILURE = 2,
	DB_AUDIT_CERT_ISSUED = 3,
	DB_AUDIT_CERT_REFUSED = 4,
	DB_AUDIT_LOGOUT = 5,
};

struct db_audit_row {
	int64_t id;               /* set by db_audit_query; ignored on writes */
	int64_t ts_ms;            /* when it happened, ms since the epoch */
	enum db_audit_event event;
	const char *email;        /* address or account; NULL = "unknown" */
	const char *key_fp;       /* DB_AUDIT_FP_CHARS lowercase hex or NULL */
	int64_t iat_ms;           /* certificate iat, 0 = none */
	int64_t exp_ms;           /* certificate exp, 0 = none */
	const char *client_addr;  /* NULL = "unknown" */
	const char *outcome;      /* required: "ok", "bad_password", ... */
	const char *signer_fp;    /* cert_issued: the signing domain key's fingerprint
	                           * (DB_AUDIT_FP_CHARS lowercase hex); NULL otherwise */
	const char *account;      /* sign-ins: the PAM account used, or NULL */
	/* Read by db_audit_query: the instance that wrote the row (NULL on
	 * older rows). Ignored on writes: a row names the instance_name of the
	 * connection that writes it (struct db_options). */
	const char *instance;
};

/* The event's name ("login_success", ...), or NULL for an unknown value. */
const char *db_audit_event_name(enum db_audit_event ev);

/* Looks up an event by name. Returns 0 or VEP_ERR_INVALID. */
int db_audit_event_from_name(const char *name, enum db_audit_event *out);

/* Number of events and the i-th of them in table order (for listings and
 * the test that compares with the schema); i < db_audit_event_count(). */
size_t db_audit_event_count(void);
enum db_audit_event db_audit_event_at(size_t i);

/* Appends one row and commits it before returning. Errors: VEP_ERR_ARG
 * (unknown event, missing outcome, a fingerprint not DB_AUDIT_FP_CHARS
 * lowercase hex, negative time, a DB_AUDIT_CERT_ISSUED row without email,
 * key_fp or signer_fp), VEP_ERR_TOOBIG (a text over DB_AUDIT_TEXT_MAX),
 * DB_ERR_FULL, DB_ERR_BUSY, VEP_ERR_IO; on error no row was written. */
int db_audit_add(struct db *db, const struct db_audit_row *row);

struct db_audit_batch;

/* A new empty batch (free with db_audit_batch_free). */
int db_audit_batch_new(struct db_audit_batch **out);

/* Validates row like db_audit_add and copies it (strings included) into the
 * batch. VEP_ERR_TOOBIG when the batch holds DB_AUDIT_BATCH_MAX rows. */
int db_audit_batch_add(struct db_audit_batch *b, const struct db_audit_row *row);

/* Rows waiting in the batch. */
size_t db_audit_batch_count(const struct db_audit_batch *b);

/* Writes every row of the batch in one transaction. On success the batch is
 * emptied; on failure none of its rows is in the database and the batch is
 * left as it was (the caller answers each waiting request with 503). */
int db_audit_batch_commit(struct db *db, struct db_audit_batch *b);

/* Writes every row of n batches in one transaction (several loops'
 * batches, one fsync), in order: all of them, or on failure none, the
 * batches then left as they were. On success each is emptied. */
int db_audit_batches_commit(struct db *db, struct db_audit_batch *const *b, size_t n);

/* Frees the batch and its rows. NULL-safe. */
void db_audit_batch_free(struct db_audit_batch *b);

struct db_audit_filter {
	/* NULL = all rows. An address ('@' inside) keeps the rows of exactly
	 * that address; an account name (no '@') keeps the rows of that name
	 * as typed and of every address whose local part it is ("alice":
	 * "alice" and "alice@example.com", not "alice.b@example.com"). */
	const char *email;
	int64_t since_ms;    /* only rows with ts_ms >= since_ms */
	int64_t limit;       /* the newest this many rows; 0 = no limit */
};

/* Called once per row; strings are borrowed until it returns. A non-zero
 * return stops the query and becomes db_audit_query's result. It must not
 * use the same struct db. */
typedef int (*db_audit_cb)(const struct db_audit_row *row, void *arg);

/* Calls cb for the rows matching f (NULL = all), oldest first (ts_ms, then
 * insertion order); with a limit, the newest f->limit of them, still oldest
 * first (like tail). Returns 0, cb's non-zero value, or an error. */
int db_audit_query(struct db *db, const struct db_audit_filter *f,
    db_audit_cb cb, void *arg);

/* The latest expiry (exp_ms) of the certificates the domain key with this
 * fingerprint signed, into *exp_ms; 0 when the trail has none. Returns 0 or
 * an error. */
int db_audit_signer_last_expiry(struct db *db, const char *signer_fp, int64_t *exp_ms);

/* Deletes at most max_rows rows older than before_ms (ts_ms < before_ms),
 * oldest first, in one transaction; *count (may be NULL) gets how many.
 * Call again while *count == max_rows, so a pruning administrator holds the
 * write lock only briefly between the server's writes. Errors: VEP_ERR_ARG
 * (negative time, max_rows < 1), DB_ERR_BUSY, DB_ERR_FULL, VEP_ERR_IO. */
int db_audit_prune(struct db *db, int64_t before_ms, int64_t max_rows, int64_t *count);

#endif
