/*
 * core/errors.h - the server's one error vocabulary: every fallible
 * function returns 0 or a negative code, libvep's VEP_ERR_* (err.h), the
 * store's DB_ERR_* or the server's SRV_ERR_*. The three ranges never
 * overlap, so one int carries any of them through every layer, and
 * srv_strerror names each. Only api/ turns a code into an HTTP status
 * (edge/req.h: req_error_from_code).
 */
#ifndef AUTHORITY_CORE_ERRORS_H
#define AUTHORITY_CORE_ERRORS_H

/* The store's (store/): what SQLite's answers mean to a caller. */
enum db_err {
	DB_ERR_NOTFOUND = -100,   /* no such row (session, ...) */
	DB_ERR_EXPIRED = -101,    /* the row exists but has expired */
	DB_ERR_BUSY = -102,       /* locked by another connection past the busy timeout */
	DB_ERR_FULL = -103,       /* disk or size limit full; nothing was written */
	DB_ERR_NEWER = -104,      /* the file's schema is newer than this binary knows */
	DB_ERR_SCHEMA = -105,     /* read-only open of a database not at our version */
	DB_ERR_CORRUPT = -106,    /* not a database, or damaged */
	DB_ERR_INTERNAL = -108,   /* SQLite refused something it should not have */
};

/* The server's own, where neither libvep nor the store has a word. */
enum srv_err {
	SRV_ERR_CANCELED = -200,   /* the server stopped before it could answer */
	SRV_ERR_NOT_SERVED = -201, /* a domain this authority does not serve */
	SRV_ERR_THROTTLED = -202,  /* too many failed sign-ins: try again later */
	SRV_ERR_DENIED = -203,     /* wrong address or password */
	SRV_ERR_UNDECIDED = -204,  /* PAM could not decide: try again */
	SRV_ERR_UNRECORDED = -205, /* no room to record it: not done */
};

/* A short English reason for any SRV_ERR_*, DB_ERR_* or VEP_ERR_* code
 * (never NULL). For logs and administrators, never for clients. */
const char *srv_strerror(int err);

#endif
