/*
 * core/errors.h - the server's one error vocabulary: every fallible
 * function returns 0 or a negative code, libvep's VEP_ERR_* (err.h), the
 * store's DB_ERR_*, the server's SRV_ERR_* or a request's REQ_ERR_*. The
 * four ranges never overlap, so one int carries any of them through every
 * layer, and srv_strerror names each. Only the HTTP edge turns a code into
 * a status and a public message, in one table (edge/req.h:
 * req_reply_error, req_error_from_code).
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
	DB_ERR_DOWN = -107,       /* the database server cannot be reached */
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
	SRV_ERR_BUSY = -206,       /* too much of this in flight: try again */
	SRV_ERR_CONTINUE = -207,   /* sign-in: PAM asks one more question */
	SRV_ERR_PASSWORD_EXPIRED = -208, /* sign-in: the password must be changed first */
	SRV_ERR_RESTART = -209,    /* sign-in: that step is over (timed out, used) */
};

/* What a request did wrong, or what it gets instead of an answer: each is
 * one row of edge/req.c's table (the status in the comments). */
enum req_err {
	REQ_ERR_BAD_REQUEST = -300,     /* 400 */
	REQ_ERR_BAD_TARGET = -301,      /* 400 malformed path or query string */
	REQ_ERR_BAD_DOMAIN = -302,      /* 400 ?domain= not a domain name */
	REQ_ERR_BAD_HOST = -303,        /* 400 malformed Host header */
	REQ_ERR_BAD_RESOURCE = -304,    /* 400 WebFinger resource missing/malformed */
	REQ_ERR_BAD_JSON = -305,        /* 400 body not one strict JSON object */
	REQ_ERR_UNAUTHORIZED = -306,    /* 401 not signed in */
	REQ_ERR_FORBIDDEN = -307,       /* 403 */
	REQ_ERR_CSRF = -308,            /* 403 X-CSRF-Token missing or wrong */
	REQ_ERR_ORIGIN = -309,          /* 403 Origin present and not ours */
	REQ_ERR_NOT_FOUND = -310,       /* 404 */
	REQ_ERR_UNKNOWN_DOMAIN = -311,  /* 404 a domain we do not serve */
	REQ_ERR_METHOD = -312,          /* 405 (req_reply_method adds Allow) */
	REQ_ERR_EXPECTATION = -313,     /* 417 Expect other than 100-continue */
	REQ_ERR_TOO_LARGE = -314,       /* 413 */
	REQ_ERR_URI_TOO_LONG = -315,    /* 414 */
	REQ_ERR_MEDIA_TYPE = -316,      /* 415 */
	REQ_ERR_MISDIRECTED = -317,     /* 421 Host names nothing served here */
	REQ_ERR_TOO_MANY = -318,        /* 429 */
	REQ_ERR_INTERNAL = -319,        /* 500 */
	REQ_ERR_NOT_IMPLEMENTED = -320, /* 501 a method we do not know */
	REQ_ERR_UNAVAILABLE = -321,     /* 503 */
};

/* A short English reason for any REQ_ERR_*, SRV_ERR_*, DB_ERR_* or
 * VEP_ERR_* code (never NULL). For logs and administrators, never for
 * clients (edge/req.c has their words). */
const char *srv_strerror(int err);

#endif
