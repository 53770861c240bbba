/*
 * auth/signin.h - one loop's authentication: signing in through PAM under
 * the throttle and the failure delay, and signing out (the session a
 * cookie names is found by auth/lookup.h).
 *
 * Knows no HTTP: the handlers (api/session.c, api/router.c) read requests
 * and answer from what this reports. Sign-in, in order: the address is
 * normalised and mapped to a PAM user (auth/account.h); the attempt is
 * counted under the throttle before PAM runs, in one atomic step that
 * refuses it when over a limit (store/throttle.h); PAM answers in
 * vep-pam-helper (auth/pam_client.h) while the loop serves others; success
 * ends the session the request came with and stores a new one
 * (auth/token.h); every failure - unknown user, wrong password, refused or
 * locked account, root, an unmappable name - is audited and reported only
 * when its delay is over (auth/faildelay.h), so none tells an account
 * exists. Names PAM must never see still run through PAM as a stand-in
 * account, for the same timing.
 *
 * Owns the sign-ins in flight and their timers. Must never log a password,
 * a token or a user name.
 */
#ifndef AUTHORITY_AUTH_SIGNIN_H
#define AUTHORITY_AUTH_SIGNIN_H

#include <stddef.h>
#include <stdint.h>

#include "auth/token.h"
#include "email.h"

struct authority;
struct event_base;
struct pam_client;
struct signin;
struct writer;

/* A one-loop authentication service. All borrowed: a (what loops share),
 * base, writer (writes), pam (the loop's helper, which must relay PAM's
 * further questions: pam_client_config.conversations); loop_index names
 * the loop in continuations. Returns 0 or VEP_ERR_NOMEM. */
int signin_new(struct authority *a, struct event_base *base, size_t loop_index,
    struct writer *writer, struct pam_client *pam, struct signin **out);

/* Reports SRV_ERR_CANCELED to every sign-in still waiting (their PAM
 * requests and timers cancelled), then frees sg. NULL-safe. */
void signin_free(struct signin *sg);

/* What keeps sg from signing anyone in now (the PAM helper is not
 * running), or NULL. The store's part is auth/lookup.h's. */
const char *signin_problem(struct signin *sg);

/* A live session as handlers see it. Holds its tokens: wipe with
 * signin_session_wipe. */
struct signin_session {
	char email[VEP_EMAIL_MAX + 1];
	int64_t expires_at;            /* s since the epoch: when it ends if unused */
	struct session_tokens tokens;
};

/* 1 when header (X-CSRF-Token, may be NULL) is s's CSRF token. */
int signin_session_csrf_ok(const struct signin_session *s, const char *header);

void signin_session_wipe(struct signin_session *s);

/* One attempt, all borrowed for the call but password, which must stay
 * valid until the callback or signin_start's failure; it is wiped as soon
 * as PAM has it. */
struct signin_attempt {
	const char *email;
	size_t email_len;
	const char *password;
	size_t password_len;
	const char *client_addr;
	const char *cookie;            /* the request's Cookie header, or NULL */
};

/* Longest continuation (chars): "<loop index>." and the secret's 43
 * base64url characters. */
#define SIGNIN_CONTINUATION_MAX 64
/* Bytes of randomness in a continuation's secret. */
#define SIGNIN_CONTINUATION_BYTES 32

/* What a sign-in ends in; valid during the callback only. */
struct signin_result {
	const char *email;             /* rc 0: the address signed in */
	const char *token;             /* rc 0: the new session's cookie value */
	const char *csrf;              /* rc 0: its CSRF token */
	int64_t expires_at;            /* rc 0: s, when it ends if unused */
	long cookie_max_age_s;         /* rc 0: the session's whole lifetime */
	int64_t retry_after_s;         /* SRV_ERR_THROTTLED: the wait */
	/* SRV_ERR_CONTINUE: PAM asks one more question (a second factor, a
	 * token's PIN): answer it with signin_continue. */
	const char *continuation;      /* hand it back with the answer */
	const char *prompt;            /* PAM's question as its module wrote it (capped) */
	int echo;                      /* 1: no secret, may be shown as typed */
	const char *notes;             /* PAM's messages since the last step: entries of
	                                * a kind byte 'I' (info) or 'E' (error), the
	                                * text, a NUL; notes_len bytes in all */
	size_t notes_len;
	int64_t answer_within_s;       /* the time the user has to answer */
};

/* rc: 0 signed in; SRV_ERR_CONTINUE (PAM asks more: the sign-in waits
 * for signin_continue, this callback is done); SRV_ERR_DENIED (any failure,
 * its delay over); SRV_ERR_PASSWORD_EXPIRED (the right password, which
 * must be changed first);
 * SRV_ERR_THROTTLED (over a limit, not tried); SRV_ERR_UNDECIDED (PAM timed
 * out, busy or broken: try again); DB_ERR_* (the store failed);
 * VEP_ERR_NOMEM / VEP_ERR_CRYPTO; SRV_ERR_CANCELED (shutdown). */
typedef void (*signin_done_fn)(int rc, const struct signin_result *res, void *arg);

/* Starts a sign-in; done runs exactly once, later. Returns 0, or without
 * calling done: VEP_ERR_TOOBIG (password over PAMP_PASSWORD_MAX_BYTES),
 * VEP_ERR_EMAIL / VEP_ERR_INVALID (not an address), SRV_ERR_NOT_SERVED
 * (its domain is not served here), VEP_ERR_NOMEM. */
int signin_start(struct signin *sg, const struct signin_attempt *at, signin_done_fn done,
    void *arg);

/* Goes on with the sign-in that waits under continuation (from a
 * SRV_ERR_CONTINUE of this loop's signin) with the user's answer (len
 * bytes, copied: the caller wipes its own). done then runs exactly once,
 * later, as for signin_start: 0, SRV_ERR_CONTINUE again (with a new
 * continuation: each one serves once), SRV_ERR_DENIED after its delay
 * (a wrong code ends like a wrong password)... Returns 0, or without
 * calling done: SRV_ERR_RESTART (no sign-in waits under that continuation
 * here: unknown, used, or timed out), VEP_ERR_NOMEM. */
int signin_continue(struct signin *sg, const char *continuation, const void *answer,
    size_t len, signin_done_fn done, void *arg);

/* The loop a continuation belongs to (its index), or -1 when it is not
 * one. */
long signin_continuation_loop(const char *continuation);

/* Ends session s (its email is audited with client_addr); done(rc, arg)
 * runs once the end is durable: 0 (also when it had ended meanwhile),
 * DB_ERR_*, VEP_ERR_NOMEM. Returns 0, or VEP_ERR_NOMEM without calling
 * done. */
int signin_session_end(struct signin *sg, const struct signin_session *s,
    const char *client_addr, void (*done)(int rc, void *arg), void *arg);

#endif
