/*
 * api/continue.h - POST /api/login/continue {"continuation","answer"}: the
 * next step of a sign-in whose PAM stack asked more than the password
 * (api/session.h has the whole exchange).
 *
 * The conversation waits in the PAM helper of the event loop that started
 * it; the continuation names that loop, and a request that another loop
 * accepted is carried there and its answer back (server/mailbox.h), so any
 * connection may carry the step. An unknown, used or timed-out
 * continuation: 401 {"error","reason":"restart"}.
 *
 * Must never log or keep the answer (it may be a one-time code or a PIN)
 * beyond handing it to the sign-in.
 */
#ifndef AUTHORITY_API_CONTINUE_H
#define AUTHORITY_API_CONTINUE_H

struct req;

void api_login_continue(struct req *r);

#endif
