/*
 * audit_signer.c - until when a domain key's certificates are valid, from
 * the audit trail (see audit_signer.h).
 */
#include "audit_signer.h"

#include <stdio.h>

#include "err.h"
#include "state.h"
#include "store/audit.h"
#include "store/db.h"

int
kt_audit_signer_expiry(const struct kt_store *store, const char *fp, int64_t *exp_ms)
{
	struct db *db = NULL;
	int rc;

	*exp_ms = 0;
	if ((rc = kt_state_open("retire", store, KT_STATE_READ, &db)) != 0)
		return rc;
	if ((rc = db_audit_signer_last_expiry(db, fp, exp_ms)) != 0)
		fprintf(stderr, "vep-keytool retire: cannot read the audit trail: %s\n",
		    srv_strerror(rc));
	db_close(db);
	return rc;
}
