/*
 * pamhelper/proto.h - the vocabulary spoken between pam_client (in the authority's
 * event loop) and vep-pam-helper: message types, field tags, outcomes, and
 * the limits both sides enforce.
 *
 * Owns: numbers on the wire and the limits' values. Must never: include PAM
 * or libevent headers; both sides include this file.
 *
 * Conversation (? marks an optional field):
 *   client -> helper  CONFIG  {SERVICE, DEADLINE_MS, MAX_WORKERS, MIN_UID,
 *                              ANSWER_MS?}  (first frame after spawn, exactly once)
 *   client -> helper  AUTH    {ID, USER, PASSWORD, RHOST?}
 *   helper -> client  PROMPT  {ID, STYLE, TEXT, NOTES?}   (0 to PAMP_ROUNDS_MAX)
 *   client -> helper  ANSWER  {ID, ANSWER}                (one per PROMPT)
 *   client -> helper  CANCEL  {ID}                        (any time)
 *   helper -> client  RESULT  {ID, OUTCOME, DELAY_US, NOTES?}   (exactly one)
 * and between the helper and one worker, over the worker's socket:
 *   worker -> helper  PROMPT  {STYLE, TEXT, NOTES?}
 *   helper -> worker  ANSWER  {ANSWER}
 *   worker -> helper  RESULT  {OUTCOME, DELAY_US, NOTES?}
 *
 * Prompts (OpenSSH's keyboard-interactive over PAM): the worker answers the
 * attempt's first echo-off prompt with PASSWORD; every later prompt, echo
 * off or on, and an echo-on prompt before it, is relayed as a PROMPT and
 * the worker blocks until its ANSWER. PASSWORD never answers anything but
 * that first echo-off prompt. Binary and radio prompts are refused. A
 * PROMPT beyond PAMP_ROUNDS_MAX in one attempt is not relayed: the
 * attempt fails AUTH_FAILED, as a refused conversation does. Deadlines
 * restart at every round: the helper gives a worker DEADLINE_MS while PAM
 * works and ANSWER_MS (absent: DEADLINE_MS) while a PROMPT waits for its
 * ANSWER; past either it kills the worker and answers TIMEOUT. CANCEL kills
 * the request's worker at once (its RESULT, AUTH_FAILED, still follows and
 * frees the slot); an ANSWER or CANCEL for an id whose worker does not wait
 * is ignored.
 *
 * TEXT: at most PAMP_TEXT_MAX_BYTES, longer texts cut at a UTF-8 character
 * boundary; control characters other than \n and \t replaced by '?'.
 * NOTES: the PAM_TEXT_INFO and PAM_ERROR_MSG texts the stack showed since
 * the previous frame of the attempt, in order, as a sequence of entries:
 * one kind byte (PAMP_NOTE_INFO 'I' or PAMP_NOTE_ERROR 'E'), the text
 * (cleaned as TEXT is), a NUL. At most PAMP_NOTES_MAX entries and
 * PAMP_NOTES_MAX_BYTES in all per frame; an entry that does not fit is
 * dropped with every later one of the frame, never an error. Absent when
 * there is nothing to show. pamhelper/notes.h writes and reads them.
 */
#ifndef AUTHORITY_PAMHELPER_PROTO_H
#define AUTHORITY_PAMHELPER_PROTO_H

#include <stdint.h>

/* Message types. */
enum {
	PAMP_MSG_CONFIG = 1,
	PAMP_MSG_AUTH = 2,
	PAMP_MSG_RESULT = 3,
	PAMP_MSG_PROMPT = 4,
	PAMP_MSG_ANSWER = 5,
	PAMP_MSG_CANCEL = 6,
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
	PAMP_TAG_STYLE = 11,       /* u32 PAMP_STYLE_*: how a PROMPT's answer is typed */
	PAMP_TAG_TEXT = 12,        /* string: a PROMPT's text, as PAM worded it */
	PAMP_TAG_NOTES = 13,       /* bytes: info and error texts (see above) */
	PAMP_TAG_ANSWER = 14,      /* bytes: the answer to a PROMPT, no NUL inside */
	PAMP_TAG_ANSWER_MS = 15,   /* u32 how long a PROMPT waits for its ANSWER */
};

/* PROMPT styles. */
enum {
	PAMP_STYLE_ECHO_OFF = 1,   /* a secret: not shown as typed */
	PAMP_STYLE_ECHO_ON = 2,    /* shown as typed */
};

/* Kinds of NOTES entries. */
#define PAMP_NOTE_INFO 'I'
#define PAMP_NOTE_ERROR 'E'

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
	PAM_OUTCOME_NEW_AUTHTOK = 7,  /* authenticated, but pam_acct_mgmt wants a new
	                               * password (PAM_NEW_AUTHTOK_REQD: expired) */
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
/* Longest PROMPT text and NOTES entry text, in bytes. */
#define PAMP_TEXT_MAX_BYTES 512
/* NOTES per frame: most entries, and most bytes in all. */
#define PAMP_NOTES_MAX 8
#define PAMP_NOTES_MAX_BYTES 1024
/* Prompts relayed to the client per attempt; one more fails the attempt. */
#define PAMP_ROUNDS_MAX 4

/* Per-attempt deadline: allowed range, in milliseconds. (The defaults of
 * what the authority sends are its configuration's: core/config.c.) */
#define PAMP_DEADLINE_MS_MIN 100u
#define PAMP_DEADLINE_MS_MAX 120000u
/* How long a PROMPT waits for its ANSWER: allowed range, in milliseconds
 * (a person reads a code off a device). */
#define PAMP_ANSWER_MS_MIN 1000u
#define PAMP_ANSWER_MS_MAX 600000u
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
		[PAM_OUTCOME_NEW_AUTHTOK] = "new-authtok",
	};
	return o < PAM_OUTCOME_COUNT ? names[o] : "unknown";
}

#endif
