/*
 * api/session.h - the sign-in API: POST /api/login, GET /api/session,
 * POST /api/logout. The work is auth/signin.h's; these read and answer.
 *
 * POST /api/login {"email","password"}: the address must be of a served
 * domain (400 otherwise). Over the throttle: 429 with Retry-After. On
 * success: a new session, 200 {"email","csrf","expires"} and the session
 * cookie. Every failure - unknown user, wrong password, refused or locked
 * account, root, an unmappable name - is answered 401 with one generic
 * message once its delay is over, so none of them tells an account
 * exists. PAM timing out, busy or broken: 503 with Retry-After.
 *
 * When the PAM stack asks more than the password (a second factor):
 * 202 {"continuation","prompt","echo","messages":[{"kind","text"}],
 * "expires_in"}, and POST /api/login/continue {"continuation","answer"}
 * goes on (api/continue.h), answering as /api/login does: 200, 202 (yet
 * another question), 401 (a wrong code ends like a wrong password), ...
 * The right password of an expired account: 403 {"error","reason":
 * "password_expired"}, never a bare "wrong password".
 *
 * GET /api/session: {"email","csrf","expires"} of the live session, or 401.
 * POST /api/logout (CSRF): ends the session and clears the cookie.
 * "expires" is when the session ends if unused, in ms since the epoch.
 *
 * Must never log a password or a token, nor answer a failure before
 * auth/signin.h reports it.
 */
#ifndef AUTHORITY_API_SESSION_H
#define AUTHORITY_API_SESSION_H

struct req;
struct signin_session;

struct signin_result;

/* What a sign-in's end or next step answers (see above). */
#define API_LOGIN_EXPIRED_TEXT "Your password has expired. Change it where you manage your " \
	"mail account, then sign in again."
#define API_LOGIN_RESTART_TEXT "This sign-in has timed out. Start again."

/* Answers r with what a sign-in step reported (auth/signin.h's rc and
 * result): 200 and the cookie, 202 and the question, 401, 403, 429, 503.
 * Frees r. */
void api_login_reply(struct req *r, int rc, const struct signin_result *res);

void api_login(struct req *r);
void api_session(struct req *r, const struct signin_session *s);
void api_logout(struct req *r, const struct signin_session *s);

#endif
