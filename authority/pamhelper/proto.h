/*
 * pamhelper/proto.h - the vocabulary spoken between pam_client (in the authority's
 * event loop) and vep-pam-helper: message types, field tags, outcomes, and
 * the limits both sides enforce.
 *
 * Owns: numbers on the wire and the limits' values. Must never: include PAM
 * or libevent headers; both sides include this file.
 *
 * Conversation:
 *   client -> helper  CONFIG  {SERVICE, DEADLINE_MS, MAX_WORKERS, MIN_UID}
 *                     (first frame after spawn, exactly once)
 *   client -> helper  AUTH    {ID, USER, PASSWORD, RHOST?}
 *   helper -> client  RESULT  {ID, OUTCOME, DELAY_US}
 *   worker -> helper  RESULT  {OUTCOME, DELAY_US}   (over the worker's pipe)
 */
#ifndef AUTHORITY_PAMHELPER_PROTO_H
#define AUTHORITY_PAMHELPER_PROTO_H

#include <stdint.h>

/* Message types. */
enum {
	PAMP_MSG_CONFIG = 1,
	PAMP_MSG_AUTH = 2,
	PAMP_MSG_RESULT = 3,
};

/* Field tags. */
enum {
	PAMP_TAG_ID = 1,           /* u64 request id chosen by the client */
	PAMP_TAG_USER = 2,         /* string: the account name given to pam_start */
	PAMP_TAG_PASSWORD = 3,     /* bytes: the password, exactly as typed */
	PAMP_TAG_RHOST = 4,        /* string: client address for PAM_RHOST */
	PAMP_TAG_OUTCOME = 5,      /* u32 enum pam_outcome */
	PAMP_TAG_DELAY_US = 6,     /* u32 PAM_FAIL_DELAY requested by modules, usec */
	PAMP_TAG_SERVICE = 7,      /* string: PAM service name */
	PAMP_TAG_DEADLINE_MS = 8,  /* u32 per-attempt deadline */
	PAMP_TAG_MAX_WORKERS = 9,  /* u32 concurrent attempts */
	PAMP_TAG_MIN_UID = 10,     /* u32 lowest UID allowed to sign in; 0 = no check */
};

/* What became of one attempt. The HTTP layer shows every refusal as one
 * generic failure; the distinction is for logs and tests. */
enum pam_outcome {
	PAM_OUTCOME_OK = 0,           /* authenticated, account valid, user checks passed */
	PAM_OUTCOME_AUTH_FAILED = 1,  /* wrong password, unknown user, conversation refused */
	PAM_OUTCOME_ACCT_REFUSED = 2, /* pam_acct_mgmt said no (expired, locked) */
	PAM_OUTCOME_USER_REFUSED = 3, /* root, UID below minimum, PAM_USER rewritten */
	PAM_OUTCOME_TIMEOUT = 4,      /* deadline passed; worker killed (HTTP 503) */
	PAM_OUTCOME_BUSY = 5,         /* concurrency cap reached (HTTP 503) */
	PAM_OUTCOME_ERROR = 6,        /* helper or worker failed (crash, PAM setup) */
	PAM_OUTCOME_COUNT
};

/* Longest password accepted, in bytes (byte for byte, no NUL inside). */
#define PAMP_PASSWORD_MAX_BYTES 4096
/* Longest account name, in bytes. */
#define PAMP_USER_MAX_BYTES 256
/* Longest remote host string, in bytes (an IPv6 literal with zone fits). */
#define PAMP_RHOST_MAX_BYTES 256
/* Longest PAM service name, in bytes. */
#define PAMP_SERVICE_MAX_BYTES 64

/* Per-attempt deadline: allowed range, in milliseconds. (The defaults of
 * what the authority sends are its configuration's: core/config.c.) */
#define PAMP_DEADLINE_MS_MIN 100u
#define PAMP_DEADLINE_MS_MAX 120000u
/* Concurrent PAM workers: upper bound. */
#define PAMP_MAX_WORKERS_MAX 256u
/* Messages a conversation may carry in one attempt before it is treated
 * as a flood and the attempt fails. */
#define PAMP_CONV_MAX_MESSAGES 32u

/* The file descriptor on which vep-pam-helper finds its socket. */
#define PAMP_HELPER_FD 3

/* Stable lowercase name of an outcome, for logs and tests. */
static inline const char *
pam_outcome_name(unsigned o)
{
	static const char *const names[PAM_OUTCOME_COUNT] = {
		[PAM_OUTCOME_OK] = "ok",
		[PAM_OUTCOME_AUTH_FAILED] = "auth-failed",
		[PAM_OUTCOME_ACCT_REFUSED] = "acct-refused",
		[PAM_OUTCOME_USER_REFUSED] = "user-refused",
		[PAM_OUTCOME_TIMEOUT] = "timeout",
		[PAM_OUTCOME_BUSY] = "busy",
		[PAM_OUTCOME_ERROR] = "error",
	};
	return o < PAM_OUTCOME_COUNT ? names[o] : "unknown";
}

#endif
