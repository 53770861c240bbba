/*
 * audit_testutil.h - audit rows written the way the server writes them, for
 * the tests that need an audit trail (test_db_audit.c, test_cmd_audit.c).
 *
 * Sign-ins go through db_audit_add, as store/deferred.c writes the rows
 * auth/signin.c hands it; certificates through a batch, as issuance/issuance.c
 * records them (here a batch of one row).
 *
 * Header-only (static inline functions) so each test stays one executable.
 */
#ifndef VEP_TEST_AUDIT_TESTUTIL_H
#define VEP_TEST_AUDIT_TESTUTIL_H

#include <stdint.h>

#include "store/audit.h"

/* A sign-in success (success != 0) or failure of account (NULL = unknown)
 * from client_addr, with its outcome word. */
static inline int
tu_audit_login(struct db *db, int64_t ts_ms, int success, const char *account,
    const char *client_addr, const char *outcome)
{
	struct db_audit_row r = {
		.ts_ms = ts_ms,
		.event = success ? DB_AUDIT_LOGIN_SUCCESS : DB_AUDIT_LOGIN_FAILURE,
		.email = account, .client_addr = client_addr, .outcome = outcome,
	};

	return db_audit_add(db, &r);
}

/* The domain key fingerprint tu_audit_cert records as the signer. */
#define TU_SIGNER_FP "5151515151515151515151515151515151515151515151515151515151515151"

/* A certificate issued to email for the key key_fp, signed by TU_SIGNER_FP,
 * committed as a batch:
 * the batch's error when the row is refused, else the commit's. */
static inline int
tu_audit_cert(struct db *db, int64_t ts_ms, const char *email, const char *key_fp,
    int64_t iat_ms, int64_t exp_ms, const char *client_addr)
{
	struct db_audit_row r = {
		.ts_ms = ts_ms, .event = DB_AUDIT_CERT_ISSUED, .email = email,
		.key_fp = key_fp, .iat_ms = iat_ms, .exp_ms = exp_ms,
		.client_addr = client_addr, .outcome = "ok", .signer_fp = TU_SIGNER_FP,
	};
	struct db_audit_batch *b = NULL;
	int ret;

	if ((ret = db_audit_batch_new(&b)) == 0 && (ret = db_audit_batch_add(b, &r)) == 0)
		ret = db_audit_batch_commit(db, b);
	db_audit_batch_free(b);
	return ret;
}

#endif
