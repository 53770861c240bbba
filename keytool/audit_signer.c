/*
 * audit_signer.c - until when a domain key's certificates are valid, from
 * the audit trail (see audit_signer.h).
 */
#include "audit_signer.h"

#include <stdio.h>

#include "err.h"
#include "store/audit.h"
#include "store/db.h"

int
kt_audit_signer_expiry(const char *state, const char *fp, int64_t *exp_ms, char *err,
    size_t errlen)
{
	struct db_options dbo = { .readonly = 1 };
	struct db *db = NULL;
	int rc;

	*exp_ms = 0;
	if ((rc = db_open(state, &dbo, &db)) == 0)
		rc = db_audit_signer_last_expiry(db, fp, exp_ms);
	if (rc != 0)
		snprintf(err, errlen, "%s: cannot read the audit trail: %s", state,
		    rc == VEP_ERR_IO ? "no database or no access" : srv_strerror(rc));
	db_close(db);
	return rc;
}
