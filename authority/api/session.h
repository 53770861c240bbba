/*
 * api/session.h - the sign-in API: POST /api/login, GET /api/session,
 * POST /api/logout.
 *
 * POST /api/login {"email","password"}: the address must be of a served
 * domain; its local part maps to a PAM user (auth/account.h). The throttle
 * (store/throttle.h) is asked before PAM; over it: 429 with Retry-After. PAM
 * runs in vep-pam-helper (auth/pam_client.h) while the loop serves others. On
 * success: a new session (auth/token.h), 200 {"email","csrf","expires"} and
 * the session cookie. Every failure - unknown user, wrong password,
 * refused or locked account, root, an unmappable name - is counted, audited
 * and answered 401 with one generic message after the auth/faildelay.h timer, so
 * none of them tells an account exists. PAM timing out, busy or broken: 503.
 *
 * GET /api/session: {"email","csrf","expires"} of the live session, or 401.
 * POST /api/logout (CSRF): ends the session and clears the cookie.
 * "expires" is when the session ends if unused, in ms since the epoch.
 *
 * Owns the sign-ins in flight (each loop's login list) and their
 * timers. Must never log a password, a token or a user name, nor answer a
 * failure before its delay.
 */
#ifndef AUTHORITY_API_SESSION_H
#define AUTHORITY_API_SESSION_H

struct loop;
struct req;

void api_login(struct req *r);
void api_session(struct req *r);
void api_logout(struct req *r);

/* Drops every sign-in still waiting (shutdown): cancels its PAM request and
 * timer and abandons its request without an answer. */
void api_session_abandon_all(struct loop *l);

#endif
