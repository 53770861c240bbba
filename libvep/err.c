/*
 * err.c - the text of every VEP_ERR_* code.
 *
 * Owns the one table from code to reason. The strings are fixed English and
 * must never contain input data: callers show them to anyone (HTTP 400
 * bodies, CLI messages).
 */
#include <stddef.h>

#include "err.h"

/* Indexed by -code, so the order follows the enum in err.h. */
static const char *const err_text[] = {
	[-VEP_OK] = "success",
	[-VEP_ERR_NOMEM] = "out of memory",
	[-VEP_ERR_INVALID] = "malformed input",
	[-VEP_ERR_TOOBIG] = "input too large",
	[-VEP_ERR_ALG] = "unsupported algorithm",
	[-VEP_ERR_KEYSIZE] = "key size not allowed",
	[-VEP_ERR_KEY] = "invalid or unsafe key",
	[-VEP_ERR_BADSIG] = "signature does not verify",
	[-VEP_ERR_EXPIRED] = "expired",
	[-VEP_ERR_NOTYET] = "issued in the future",
	[-VEP_ERR_AUDIENCE] = "audience does not match",
	[-VEP_ERR_ISSUER] = "issuer not allowed for this email",
	[-VEP_ERR_EMAIL] = "email address not acceptable",
	[-VEP_ERR_CHAIN] = "not exactly one certificate",
	[-VEP_ERR_DISABLED] = "domain has disabled BrowserID",
	[-VEP_ERR_IO] = "input/output error",
	[-VEP_ERR_PERM] = "private key file is accessible to group or others",
	[-VEP_ERR_EXISTS] = "file already exists",
	[-VEP_ERR_CRYPTO] = "cryptographic library failure",
	[-VEP_ERR_NOKEY] = "private key required",
	[-VEP_ERR_ARG] = "invalid argument",
	[-VEP_ERR_TIME] = "times missing or out of range",
	[-VEP_ERR_DELEGATION] = "delegation loop or too deep",
};

/* Returns a static string for err; codes outside the table get a generic
 * reason rather than NULL so callers can print without checking. */
const char *
vep_strerror(int err)
{
	size_t i;

	if (err > 0)
		return "unknown error";
	i = (size_t)(-(long)err);
	if (i >= sizeof(err_text) / sizeof(err_text[0]) || err_text[i] == NULL)
		return "unknown error";
	return err_text[i];
}
