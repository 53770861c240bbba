/*
 * api/continue.c - the next step of a sign-in (contract in api/continue.h),
 * on the loop that holds its conversation.
 */
#include "api/continue.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "api/session.h"
#include "auth/signin.h"
#include "core/errors.h"
#include "edge/req.h"
#include "err.h"
#include "secmem.h"
#include "server/loop.h"
#include "server/mailbox.h"
#include "server/shared.h"

/* A step carried to the conversation's loop and its answer back. */
struct step {
	struct req *r;                 /* on home's loop */
	struct loop *home, *owner;
	char continuation[SIGNIN_CONTINUATION_MAX + 1];
	char *answer;                  /* owned, wiped */
	size_t answer_len;
	/* What the owner's sign-in reported, copied for home. */
	int rc;
	struct signin_result res;      /* pointing into the copies below */
	char *email, *token, *csrf, *next, *prompt, *notes;
};

static void
wipe_free(char *s, size_t n)
{
	if (s != NULL)
		vep_memzero(s, n);
	free(s);
}

static void
wipe_str(char *s)
{
	wipe_free(s, s != NULL ? strlen(s) : 0);
}

static void
step_free(struct step *s)
{
	wipe_free(s->answer, s->answer_len);
	wipe_str(s->email);
	wipe_str(s->token);
	wipe_str(s->csrf);
	wipe_str(s->next);
	wipe_str(s->prompt);
	wipe_free(s->notes, s->res.notes_len);
	vep_memzero(s, sizeof(*s));
	free(s);
}

/* A copy of s (NULL stays NULL); *ok is cleared when memory runs out. */
static char *
copy(const char *s, int *ok)
{
	char *c;

	if (s == NULL)
		return NULL;
	if ((c = strdup(s)) == NULL)
		*ok = 0;
	return c;
}

/* Home's loop: the answer. */
static void
step_at_home(void *arg, int cancelled)
{
	struct step *s = arg;

	/* Cancelled: this loop is going away, and with it the request. */
	if (!cancelled)
		api_login_reply(s->r, s->rc, &s->res);
	step_free(s);
}

static void
step_go_home(struct step *s)
{
	if (mailbox_post(s->home->mailbox, step_at_home, s) != 0)
		step_free(s); /* home is going away: nobody to answer */
}

/* Owner's loop: what the sign-in reported, copied (its memory is the
 * sign-in's and ends with this call). */
static void
step_reported(int rc, const struct signin_result *res, void *arg)
{
	struct step *s = arg;
	int ok = 1;

	s->res = *res;
	s->res.email = s->email = copy(res->email, &ok);
	s->res.token = s->token = copy(res->token, &ok);
	s->res.csrf = s->csrf = copy(res->csrf, &ok);
	s->res.continuation = s->next = copy(res->continuation, &ok);
	s->res.prompt = s->prompt = copy(res->prompt, &ok);
	s->res.notes = NULL;
	s->res.notes_len = 0;
	if (res->notes != NULL && res->notes_len > 0) {
		if ((s->notes = malloc(res->notes_len)) != NULL) {
			memcpy(s->notes, res->notes, res->notes_len);
			s->res.notes = s->notes;
			s->res.notes_len = res->notes_len;
		} else {
			ok = 0;
		}
	}
	s->rc = ok ? rc : VEP_ERR_NOMEM;
	step_go_home(s);
}

/* Owner's loop: hand the answer to the sign-in that waits. */
static void
step_at_owner(void *arg, int cancelled)
{
	struct step *s = arg;
	int rc = cancelled ? SRV_ERR_CANCELED :
	    signin_continue(s->owner->signin, s->continuation, s->answer, s->answer_len,
	    step_reported, s);

	wipe_free(s->answer, s->answer_len);
	s->answer = NULL;
	s->answer_len = 0;
	if (rc != 0) {
		s->rc = rc;
		step_go_home(s);
	}
}

static void
on_step(int rc, const struct signin_result *res, void *arg)
{
	api_login_reply(arg, rc, res);
}

/* Carries the step to loop idx. Returns 0 or an error to answer now. */
static int
step_carry(struct req *r, long idx, const char *continuation, const char *answer,
    size_t len)
{
	struct step *s;

	if ((s = calloc(1, sizeof(*s))) == NULL || (s->answer = malloc(len + 1)) == NULL) {
		free(s);
		return VEP_ERR_NOMEM;
	}
	memcpy(s->answer, answer, len + 1);
	s->answer_len = len;
	memcpy(s->continuation, continuation, strlen(continuation) + 1);
	s->r = r;
	s->home = r->loop;
	s->owner = r->a->loops[idx];
	if (mailbox_post(s->owner->mailbox, step_at_owner, s) != 0) {
		step_free(s);
		return SRV_ERR_BUSY;
	}
	return VEP_OK;
}

void
api_login_continue(struct req *r)
{
	static const char *const fields[] = { "continuation", "answer", NULL };
	json_t *jc = json_object_get(r->body, "continuation");
	json_t *ja = json_object_get(r->body, "answer");
	char why[REQ_WHY_BUFSZ];
	const char *cont;
	long idx;
	int rc;

	if ((rc = req_check_fields(r, fields, why)) != 0) {
		req_reply_error_text(r, rc, why);
		return;
	}
	if (!json_is_string(jc) || !json_is_string(ja)) {
		req_reply_error_text(r, REQ_ERR_BAD_REQUEST,
		    "\"continuation\" and \"answer\" must be strings");
		return;
	}
	cont = json_string_value(jc);
	idx = signin_continuation_loop(cont);
	/* Malformed, too long, or of a loop this process does not have: no
	 * sign-in waits under it. */
	if (idx < 0 || (size_t)idx >= r->a->nloops ||
	    json_string_length(jc) > SIGNIN_CONTINUATION_MAX) {
		api_login_reply(r, SRV_ERR_RESTART, NULL);
		return;
	}
	/* The answer: wiped with the request's body (jansson's free wipes). */
	if ((size_t)idx == r->loop->index)
		rc = signin_continue(r->loop->signin, cont, json_string_value(ja),
		    json_string_length(ja), on_step, r);
	else
		rc = step_carry(r, idx, cont, json_string_value(ja), json_string_length(ja));
	if (rc != 0)
		api_login_reply(r, rc, NULL);
}
