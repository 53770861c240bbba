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
	{ DB_ERR_INTERNAL, "database error" },
	{ SRV_ERR_CANCELED, "the server stopped first" },
	{ SRV_ERR_NOT_SERVED, "domain not served here" },
	{ SRV_ERR_THROTTLED, "too many failed attempts" },
	{ SRV_ERR_DENIED, "wrong address or password" },
	{ SRV_ERR_UNDECIDED, "PAM could not decide" },
	{ SRV_ERR_UNRECORDED, "could not be recorded" },
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
