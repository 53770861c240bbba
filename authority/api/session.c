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
#include "pamhelper/notes.h"
#include "err.h"
#include "secmem.h"
#include "util.h"
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

/* PAM's messages as [{"kind":"info"|"error","text"}] (the helper checked
 * the entries; a text that is not UTF-8 shows '?' for what JSON cannot
 * carry). */
static json_t *
notes_json(const char *notes, size_t len)
{
	json_t *a = json_array(), *o;
	size_t off = 0, n;
	const char *text;
	char kind, *t;

	while (a != NULL &&
	    pamp_notes_next((const uint8_t *)notes, len, &off, &kind, &text, &n) == 1) {
		if ((t = strndup(text, n)) == NULL) {
			json_decref(a);
			return NULL;
		}
		vep_utf8_sanitize(t);
		o = json_pack("{ssss}", "kind", kind == PAMP_NOTE_ERROR ? "error" : "info",
		    "text", t);
		free(t);
		if (o == NULL || json_array_append_new(a, o) != 0) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

/* 202: one more question before the sign-in is done. */
static void
reply_question(struct req *r, const struct signin_result *res)
{
	json_t *o, *notes = notes_json(res->notes, res->notes_len);
	char *prompt = strdup(res->prompt != NULL ? res->prompt : "");

	if (notes == NULL || prompt == NULL) {
		json_decref(notes);
		free(prompt);
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	vep_utf8_sanitize(prompt);
	o = json_pack("{sssssbsosI}", "continuation", res->continuation, "prompt", prompt,
	    "echo", res->echo, "messages", notes, "expires_in", (json_int_t)res->answer_within_s);
	free(prompt);
	if (o == NULL) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply_json(r, 202, o);
	json_decref(o);
}

/* A refusal with words of its own and a "reason" a client can act on. */
static void
reply_reason(struct req *r, int status, const char *error, const char *reason)
{
	json_t *o = json_pack("{ssss}", "error", error, "reason", reason);

	if (o == NULL) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply_json(r, status, o);
	json_decref(o);
}

void
api_login_reply(struct req *r, int rc, const struct signin_result *res)
{
	static const struct signin_result none;

	if (res == NULL)
		res = &none;
	switch (rc) {
	case 0:
		reply_signed_in(r, res);
		break;
	case SRV_ERR_CONTINUE:
		reply_question(r, res);
		break;
	case SRV_ERR_PASSWORD_EXPIRED:
		reply_reason(r, 403, API_LOGIN_EXPIRED_TEXT, "password_expired");
		break;
	case SRV_ERR_RESTART:
		reply_reason(r, 401, API_LOGIN_RESTART_TEXT, "restart");
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

static void
on_signin(int rc, const struct signin_result *res, void *arg)
{
	api_login_reply(arg, rc, res);
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
