/*
 * api/session.c - the sign-in API's handlers (contract in api/session.h):
 * they read the request, hand the work to auth/signin.h and answer what it
 * reports.
 */
#include "api/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "auth/signin.h"
#include "core/errors.h"
#include "edge/req.h"
#include "err.h"
#include "secmem.h"
#include "server/loop.h"

/* What a refused sign-in says where the table's words (edge/req.c) are
 * too general: its status is still the table's. */
static const struct {
	int err;
	const char *message;
} start_refusals[] = {
	{ VEP_ERR_TOOBIG, "password too long" },
	{ VEP_ERR_EMAIL, "not a valid email address" },
	{ VEP_ERR_INVALID, "not a valid email address" },
};

/* {"email","csrf","expires"} for a session ("expires" in ms). */
static void
reply_session(struct req *r, const char *email, const char *csrf, int64_t expires_s)
{
	json_t *o = json_pack("{sssssI}", "email", email, "csrf", csrf,
	    "expires", (json_int_t)(expires_s * 1000));

	if (o == NULL) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply_json(r, 200, o);
	json_decref(o);
}

/* Answers SRV_ERR_THROTTLED (429) with the wait, in the header and the
 * body. */
static void
reply_throttled(struct req *r, int64_t retry_s)
{
	char num[32];
	json_t *o;

	snprintf(num, sizeof(num), "%lld", (long long)retry_s);
	req_add_header(r, "Retry-After", num);
	o = json_pack("{sssI}", "error", req_error_message(SRV_ERR_THROTTLED),
	    "retry_after", (json_int_t)retry_s);
	if (o == NULL) {
		req_reply_error(r, SRV_ERR_THROTTLED);
		return;
	}
	req_reply_json(r, req_error_status(SRV_ERR_THROTTLED), o);
	json_decref(o);
}

/* Answers a sign-in with its session and cookie. */
static void
reply_signed_in(struct req *r, const struct signin_result *res)
{
	char cookie[SESSION_COOKIE_BUFSZ];

	session_cookie_set(cookie, res->token, res->cookie_max_age_s);
	if (req_add_header(r, "Set-Cookie", cookie) != 0)
		req_reply_error(r, REQ_ERR_INTERNAL);
	else
		reply_session(r, res->email, res->csrf, res->expires_at);
	vep_memzero(cookie, sizeof(cookie));
}

static void
on_signin(int rc, const struct signin_result *res, void *arg)
{
	struct req *r = arg;

	switch (rc) {
	case 0:
		reply_signed_in(r, res);
		break;
	case SRV_ERR_THROTTLED:
		reply_throttled(r, res->retry_after_s);
		break;
	case SRV_ERR_CANCELED:
		req_abandon(r);
		break;
	case SRV_ERR_DENIED:
	case VEP_ERR_NOMEM:
	case VEP_ERR_CRYPTO:
		req_reply_error(r, rc);
		break;
	default:
		/* PAM undecided or the store failing, however it failed: an
		 * outage, not a verdict. */
		req_add_header(r, "Retry-After", "5");
		req_reply_error(r, REQ_ERR_UNAVAILABLE);
	}
}

void
api_login(struct req *r)
{
	static const char *const fields[] = { "email", "password", NULL };
	json_t *je = json_object_get(r->body, "email");
	json_t *jp = json_object_get(r->body, "password");
	char why[REQ_WHY_BUFSZ];
	const char *message = NULL;
	struct signin_attempt at;
	size_t i;
	int rc;

	if ((rc = req_check_fields(r, fields, why)) != 0) {
		req_reply_error_text(r, rc, why);
		return;
	}
	if (!json_is_string(je) || !json_is_string(jp)) {
		req_reply_error_text(r, REQ_ERR_BAD_REQUEST,
		    "\"email\" and \"password\" must be strings");
		return;
	}
	at.email = json_string_value(je);
	at.email_len = json_string_length(je);
	/* Wiped as soon as PAM has it; else with the request's body (jansson's
	 * free wipes, see main.c). */
	at.password = json_string_value(jp);
	at.password_len = json_string_length(jp);
	at.client_addr = r->client_addr;
	at.cookie = req_header(r, "Cookie");
	if ((rc = signin_start(r->loop->signin, &at, on_signin, r)) == 0)
		return;
	for (i = 0; i < sizeof(start_refusals) / sizeof(start_refusals[0]); i++)
		if (start_refusals[i].err == rc)
			message = start_refusals[i].message;
	req_reply_error_text(r, rc, message);
}

void
api_session(struct req *r, const struct signin_session *s)
{
	reply_session(r, s->email, s->tokens.csrf, s->expires_at);
}

static void
on_signed_out(int rc, void *arg)
{
	struct req *r = arg;
	json_t *o;

	/* Not durable, however it failed: the session may still be live,
	 * and signing out again is safe. */
	if (rc != 0) {
		req_reply_error(r, REQ_ERR_UNAVAILABLE);
		return;
	}
	if (req_add_header(r, "Set-Cookie", session_cookie_clear()) != 0 ||
	    (o = json_pack("{sb}", "signed_out", 1)) == NULL) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply_json(r, 200, o);
	json_decref(o);
}

void
api_logout(struct req *r, const struct signin_session *s)
{
	int rc = signin_session_end(r->loop->signin, s, r->client_addr, on_signed_out, r);

	if (rc != 0)
		req_reply_error(r, rc);
}
