/*
 * core/errors.c - names of the server's error codes (contract in
 * core/errors.h).
 */
#include "core/errors.h"

#include <stddef.h>

#include "err.h"

static const struct {
	int err;
	const char *text;
} srv_err_text[] = {
	{ DB_ERR_NOTFOUND, "not found" },
	{ DB_ERR_EXPIRED, "expired" },
	{ DB_ERR_BUSY, "database busy" },
	{ DB_ERR_FULL, "database full" },
	{ DB_ERR_NEWER, "database schema is newer than this program" },
	{ DB_ERR_SCHEMA, "database schema is not at this program's version" },
	{ DB_ERR_CORRUPT, "database file is damaged or not a database" },
	{ DB_ERR_DOWN, "database server unreachable" },
	{ SRV_ERR_CONTINUE, "sign-in needs another answer" },
	{ SRV_ERR_PASSWORD_EXPIRED, "password expired" },
	{ SRV_ERR_RESTART, "sign-in ended: start again" },
	{ DB_ERR_INTERNAL, "database error" },
	{ SRV_ERR_CANCELED, "the server stopped first" },
	{ SRV_ERR_NOT_SERVED, "domain not served here" },
	{ SRV_ERR_THROTTLED, "too many failed attempts" },
	{ SRV_ERR_DENIED, "wrong address or password" },
	{ SRV_ERR_UNDECIDED, "PAM could not decide" },
	{ SRV_ERR_UNRECORDED, "could not be recorded" },
	{ SRV_ERR_BUSY, "too many in progress" },
	{ REQ_ERR_BAD_REQUEST, "bad request" },
	{ REQ_ERR_BAD_TARGET, "malformed request target" },
	{ REQ_ERR_BAD_DOMAIN, "malformed domain parameter" },
	{ REQ_ERR_BAD_HOST, "malformed Host header" },
	{ REQ_ERR_BAD_RESOURCE, "missing or malformed WebFinger resource" },
	{ REQ_ERR_BAD_JSON, "malformed JSON body" },
	{ REQ_ERR_UNAUTHORIZED, "not signed in" },
	{ REQ_ERR_FORBIDDEN, "forbidden" },
	{ REQ_ERR_CSRF, "missing or wrong CSRF token" },
	{ REQ_ERR_ORIGIN, "cross-origin request" },
	{ REQ_ERR_NOT_FOUND, "no such path" },
	{ REQ_ERR_UNKNOWN_DOMAIN, "domain not served here" },
	{ REQ_ERR_METHOD, "method not allowed" },
	{ REQ_ERR_EXPECTATION, "unsupported Expect" },
	{ REQ_ERR_TOO_LARGE, "request too large" },
	{ REQ_ERR_URI_TOO_LONG, "request target too long" },
	{ REQ_ERR_MEDIA_TYPE, "unsupported media type" },
	{ REQ_ERR_MISDIRECTED, "Host names nothing served here" },
	{ REQ_ERR_TOO_MANY, "too many requests" },
	{ REQ_ERR_INTERNAL, "internal error" },
	{ REQ_ERR_NOT_IMPLEMENTED, "method not implemented" },
	{ REQ_ERR_UNAVAILABLE, "service unavailable" },
};

const char *
srv_strerror(int err)
{
	size_t i;

	for (i = 0; i < sizeof(srv_err_text) / sizeof(srv_err_text[0]); i++)
		if (srv_err_text[i].err == err)
			return srv_err_text[i].text;
	return vep_strerror(err);
}
