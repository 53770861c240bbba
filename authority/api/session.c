/*
 * api/session.c - sign-in, session and sign-out handlers (contract in
 * api/session.h).
 *
 * A sign-in is a struct login that lives from the request to its answer:
 * waiting for PAM, then (failures only) for the delay timer. The list in
 * struct authority lets shutdown drop those still waiting.
 */
#include "api/session.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>
#include <jansson.h>

#include "auth/account.h"
#include "server/shared.h"
#include "store/audit.h"
#include "store/sessions.h"
#include "store/throttle.h"
#include "core/domain.h"
#include "email.h"
#include "err.h"
#include "digest.h"
#include "auth/faildelay.h"
#include "store/writer.h"
#include "core/log.h"
#include "server/loop.h"
#include "auth/pam_client.h"
#include "edge/req.h"
#include "secmem.h"
#include "auth/token.h"
#include "auth/throttle_key.h"
#include "store/deferred.h"

/* The one answer to every failed sign-in, whatever the reason. */
static const char login_failed[] = "wrong address or password";

/* Names PAM is never asked about (root, unsafe or too long) still go
 * through PAM, as this account that nobody has and with a random password,
 * so that their answer waits for exactly what the stack asks for an unknown
 * user (PAM_FAIL_DELAY, modules' own pauses): the same timing floor as every
 * other failure. The typed password never leaves for such a name. */
#define LOGIN_STAND_IN_USER "vep-refused-name"
/* Random bytes of the stand-in's password (sent as hex). */
#define LOGIN_STAND_IN_PW_BYTES 16
/* Busy timeouts (DB_BUSY_TIMEOUT_MS_DEFAULT each) a sign-in's reservation
 * may wait for the database's write lock before the answer is 503. */
#define LOGIN_RESERVE_TRIES 3

struct login {
	struct login *next, **prevp;   /* in loop->logins */
	struct authority *a;
	struct loop *loop;             /* the loop the request came on */
	struct req *r;                 /* answered exactly once, then NULL */
	char email[VEP_EMAIL_MAX + 1];
	char account[ACCOUNT_USER_MAX + 1]; /* PAM user, or the address when unmappable */
	int mapped;                    /* account is a PAM user (else the stand-in runs) */
	const char *pw;                /* borrowed from r's body; wiped once sent */
	size_t pwlen;
	/* The throttle's names for this attempt (auth/throttle_key.h). */
	char key_account[ACCOUNT_USER_MAX + 1];
	char key_addr[THROTTLE_KEY_ADDR_BUFSZ];
	struct db_throttle_limits limits;
	struct db_throttle_ticket ticket; /* what the reservation counted */
	int64_t retry_after_s;         /* when the reservation was refused */
	int had_session;               /* the request came with a session cookie */
	uint8_t old_hash[DB_SESSION_HASH_BYTES]; /* its hash: ended only on success */
	struct timespec start;         /* monotonic: the delay counts from here */
	uint64_t pam_id;
	int pam_pending;
	int64_t now;                   /* s: when the writer was asked */
	uint32_t pam_delay_us;         /* PAM_FAIL_DELAY asked for */
	struct session_tokens tokens;  /* the new session's (secret; wiped with l) */
	struct event *timer;           /* the failure delay */
};

static void
login_free(struct login *l)
{
	if (l == NULL)
		return;
	if (l->prevp != NULL) {
		*l->prevp = l->next;
		if (l->next != NULL)
			l->next->prevp = l->prevp;
	}
	if (l->pam_pending)
		pam_client_cancel(l->loop->pam, l->pam_id);
	if (l->timer != NULL)
		event_free(l->timer);
	vep_memzero(l, sizeof(*l));
	free(l);
}

/* The password is needed only until PAM has it (or will never get it). */
static void
login_forget_password(struct login *l)
{
	if (l->pw != NULL)
		vep_memzero((char *)l->pw, l->pwlen);
	l->pw = NULL;
	l->pwlen = 0;
}

/* Answers r with an error and ends the sign-in. */
static void
login_end(struct login *l, enum req_error e)
{
	login_forget_password(l);
	req_reply_error(l->r, e);
	l->r = NULL;
	login_free(l);
}

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint64_t
elapsed_ms(const struct timespec *since)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (uint64_t)((now.tv_sec - since->tv_sec) * 1000 +
	    (now.tv_nsec - since->tv_nsec) / 1000000);
}

static void
throttle_limits(const struct config *cfg, struct db_throttle_limits *l)
{
	l->pair_max = cfg->throttle_pair_max;
	l->account_max = cfg->throttle_account_max;
	l->account_window_s = cfg->throttle_account_window_s;
	l->addr_max = cfg->throttle_addr_max;
	l->addr_window_s = cfg->throttle_addr_window_s;
	l->known_for_s = cfg->throttle_known_for_s;
}

/* One log line per sign-in decision: outcome, the address asked for
 * (escaped and cut: it is the client's text) or "unknown" when it is not
 * one of ours, and the client address. Never the password. */
static void
log_login(const struct authority *a, const char *outcome, const char *email,
    const char *client_addr)
{
	char esc[LOG_ESCAPE_BUFSZ];

	log_info(&a->log, "sign-in %s: account %s from %s", outcome,
	    email != NULL && email[0] != '\0' ? log_escape(esc, sizeof(esc), email, strlen(email)) :
	    "unknown", client_addr);
}

/* Audits a sign-in outcome without waiting (store/deferred.h), and logs it. A
 * failure to record is logged: the answer to the user does not depend on
 * it. */
static void
audit_login(struct login *l, int success, const char *outcome)
{
	struct db_audit_row row = { 0 };

	log_login(l->a, outcome, l->email, l->r->client_addr);
	row.ts_ms = now_ms();
	row.event = success ? DB_AUDIT_LOGIN_SUCCESS : DB_AUDIT_LOGIN_FAILURE;
	row.email = l->email;
	row.client_addr = l->r->client_addr;
	row.outcome = outcome;
	deferred_audit(l->loop, &row);
}

/* {"email","csrf","expires"} for a session. */
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

static void
on_delay_over(evutil_socket_t fd, short what, void *arg)
{
	struct login *l = arg;

	(void)fd;
	(void)what;
	req_reply_error_text(l->r, REQ_ERR_UNAUTHORIZED, login_failed);
	l->r = NULL;
	login_free(l);
}

/* Audits a failure (already counted by the reservation) and answers 401
 * when its delay is over. */
static void
login_fail(struct login *l, const char *outcome, uint32_t pam_delay_us)
{
	struct timeval tv;
	uint32_t ms;

	login_forget_password(l);
	audit_login(l, 0, outcome);
	ms = faildelay_remaining_ms(l->a->faildelay, l->key_account, pam_delay_us,
	    elapsed_ms(&l->start));
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	if ((l->timer = evtimer_new(l->loop->base, on_delay_over, l)) == NULL ||
	    evtimer_add(l->timer, &tv) != 0) {
		/* Answering at once would leak timing; 503 leaks nothing. */
		login_end(l, REQ_ERR_UNAVAILABLE);
	}
}

/* A throttle settlement nobody waits for: the names and ticket copied. */
struct settle_job {
	struct loop *loop;
	char account[ACCOUNT_USER_MAX + 1];
	char addr[THROTTLE_KEY_ADDR_BUFSZ];
	struct db_throttle_limits limits;
	struct db_throttle_ticket ticket;
	int64_t now;
};

static int
write_settle_undecided(struct db *db, void *arg)
{
	struct settle_job *j = arg;

	return db_throttle_settle(db, j->account, j->addr, j->now, &j->limits, &j->ticket,
	    DB_THROTTLE_UNDECIDED);
}

static void
settle_written(int rc, void *arg)
{
	struct settle_job *j = arg;

	if (rc != 0)
		log_error(&j->loop->a->log, "throttle: %s", srv_strerror(rc));
	free(j);
}

/* PAM could not decide: the attempt is taken back from the counters (a
 * failure to do so merely leaves it counted), and the client asked to
 * retry. */
static void
login_undecided(struct login *l, const char *outcome)
{
	struct settle_job *j = calloc(1, sizeof(*j));

	if (j != NULL) {
		j->loop = l->loop;
		memcpy(j->account, l->key_account, sizeof(j->account));
		memcpy(j->addr, l->key_addr, sizeof(j->addr));
		j->limits = l->limits;
		j->ticket = l->ticket;
		j->now = (int64_t)time(NULL);
		if (writer_submit(l->loop->writer, write_settle_undecided, settle_written,
		    j) != 0)
			free(j);
	}
	log_warn(&l->a->log, "sign-in: PAM %s", outcome);
	audit_login(l, 0, outcome);
	req_add_header(l->r, "Retry-After", "5");
	login_end(l, REQ_ERR_UNAVAILABLE);
}

/* In the writer thread: settle the attempt, end the session the request
 * came with (only now: a failed sign-in must not sign anyone out), store
 * the new one. */
static int
write_success(struct db *db, void *arg)
{
	struct login *l = arg;
	const struct config *cfg = l->a->cfg;
	int rc;

	/* Best effort: the attempt merely stays counted. */
	(void)db_throttle_settle(db, l->key_account, l->key_addr, l->now, &l->limits,
	    &l->ticket, DB_THROTTLE_SUCCEEDED);
	if (l->had_session && (rc = db_session_delete(db, l->old_hash)) != 0 &&
	    rc != DB_ERR_NOTFOUND)
		return rc;
	return db_session_create(db, l->email, l->now, cfg->session_idle_s,
	    cfg->session_lifetime_s, l->tokens.token_hash, l->tokens.csrf_hash, NULL);
}

/* Back in the loop: answer 200 with the cookie once the session exists. */
static void
success_written(int rc, void *arg)
{
	struct login *l = arg;
	const struct config *cfg = l->a->cfg;
	char cookie[SESSION_COOKIE_BUFSZ];

	if (rc != 0) {
		log_error(&l->a->log, "session: %s", srv_strerror(rc));
		req_add_header(l->r, "Retry-After", "5");
		req_reply_error(l->r, REQ_ERR_UNAVAILABLE);
		goto out;
	}
	audit_login(l, 1, "ok");
	session_cookie_set(cookie, l->tokens.token, cfg->session_lifetime_s);
	if (req_add_header(l->r, "Set-Cookie", cookie) != 0) {
		req_reply_error(l->r, REQ_ERR_INTERNAL);
		goto out;
	}
	/* The idle clock runs out first unless the lifetime is shorter. */
	reply_session(l->r, l->email, l->tokens.csrf, l->now + (cfg->session_idle_s <
	    cfg->session_lifetime_s ? cfg->session_idle_s : cfg->session_lifetime_s));
	vep_memzero(cookie, sizeof(cookie));
out:
	l->r = NULL;
	login_free(l);
}

/* Draws the session's tokens and has the writer store it. */
static void
login_succeed(struct login *l)
{
	l->now = (int64_t)time(NULL);
	if (session_tokens_new(&l->tokens) != 0) {
		login_end(l, REQ_ERR_INTERNAL);
		return;
	}
	if (writer_submit(l->loop->writer, write_success, success_written, l) != 0)
		success_written(VEP_ERR_NOMEM, l);
}

static void
on_pam(const struct pam_client_result *res, void *arg)
{
	struct login *l = arg;

	l->pam_pending = 0;
	switch (res->outcome) {
	case PAM_OUTCOME_OK:
		if (l->mapped) {
			login_succeed(l);
			return;
		}
		/* The stand-in exists after all: still no sign-in for a name
		 * refused before PAM. */
		login_fail(l, "refused", res->pam_delay_us);
		return;
	case PAM_OUTCOME_AUTH_FAILED:
	case PAM_OUTCOME_ACCT_REFUSED:
	case PAM_OUTCOME_USER_REFUSED:
		login_fail(l, l->mapped ? pam_outcome_name(res->outcome) : "refused",
		    res->pam_delay_us);
		return;
	default:
		/* Timeout, busy, broken: nothing about the account is known,
		 * so nothing is counted against it. */
		login_undecided(l, pam_outcome_name(res->outcome));
	}
}

/* Hands the attempt to PAM: the account with the typed password, or the
 * stand-in with a random one when the name may not reach PAM. */
static void
login_ask_pam(struct login *l)
{
	uint8_t rnd[LOGIN_STAND_IN_PW_BYTES];
	char standin_pw[2 * LOGIN_STAND_IN_PW_BYTES + 1];
	size_t i;
	int rc;

	if (l->mapped) {
		rc = pam_client_start(l->loop->pam, l->account, l->pw, l->pwlen,
		    l->r->client_addr, on_pam, l, &l->pam_id);
	} else if ((rc = vep_random(rnd, sizeof(rnd))) == 0) {
		for (i = 0; i < sizeof(rnd); i++)
			(void)snprintf(standin_pw + 2 * i, 3, "%02x", rnd[i]);
		rc = pam_client_start(l->loop->pam, LOGIN_STAND_IN_USER, standin_pw,
		    strlen(standin_pw), l->r->client_addr, on_pam, l, &l->pam_id);
		vep_memzero(standin_pw, sizeof(standin_pw));
		vep_memzero(rnd, sizeof(rnd));
	}
	login_forget_password(l);
	if (rc == 0) {
		l->pam_pending = 1;
		return;
	}
	if (rc == VEP_ERR_NOMEM || rc == VEP_ERR_CRYPTO) {
		login_undecided(l, "error");
		return;
	}
	/* Over PAM's limits (a password with a NUL, a name too long): the
	 * same failure as a wrong password, on the same clock. */
	login_fail(l, "refused", 0);
}

/* Answers 429 with the wait, in the header and the body. */
static void
reply_throttled(struct req *r, int64_t retry_s)
{
	char num[32];
	json_t *o;

	snprintf(num, sizeof(num), "%lld", (long long)retry_s);
	req_add_header(r, "Retry-After", num);
	o = json_pack("{sssI}", "error", "too many failed sign-ins; try again later",
	    "retry_after", (json_int_t)retry_s);
	if (o == NULL) {
		req_reply_error(r, REQ_ERR_TOO_MANY);
		return;
	}
	req_reply_json(r, 429, o);
	json_decref(o);
}

/* In the writer thread: count the attempt, or refuse it, in one step.
 * Every loop's writer takes the same write lock, one fsync'd commit each:
 * through a burst another writer may hold it past one busy timeout. A
 * sign-in, answered after a second or more anyway, waits up to
 * LOGIN_RESERVE_TRIES of them rather than fail for someone else's write. */
static int
write_reserve(struct db *db, void *arg)
{
	struct login *l = arg;
	int i, rc = DB_ERR_BUSY;

	for (i = 0; i < LOGIN_RESERVE_TRIES && rc == DB_ERR_BUSY; i++)
		rc = db_throttle_reserve(db, l->key_account, l->key_addr, l->now, &l->limits,
		    &l->ticket, &l->retry_after_s);
	return rc;
}

/* Back in the loop: on to PAM once counted. */
static void
reserve_written(int rc, void *arg)
{
	struct login *l = arg;

	if (rc == SRV_ERR_THROTTLED) {
		login_forget_password(l);
		log_login(l->a, "throttled", l->email, l->r->client_addr);
		reply_throttled(l->r, l->retry_after_s);
		l->r = NULL;
		login_free(l);
		return;
	}
	if (rc != 0) {
		log_error(&l->a->log, "throttle: %s", srv_strerror(rc));
		req_add_header(l->r, "Retry-After", "5");
		login_end(l, REQ_ERR_UNAVAILABLE);
		return;
	}
	login_ask_pam(l);
}

/* Remembers the session the request came with, to end it if and when this
 * sign-in succeeds: every sign-in gets a fresh token, and the old one
 * should not outlive it. */
static void
note_previous_session(struct req *r, struct login *l)
{
	char token[SESSION_TOKEN_CHARS + 1];
	struct session_tokens t;

	if (session_cookie_find(req_header(r, "Cookie"), token) == 0 &&
	    session_tokens_from(token, &t) == 0) {
		memcpy(l->old_hash, t.token_hash, sizeof(l->old_hash));
		l->had_session = 1;
		session_tokens_wipe(&t);
	}
	vep_memzero(token, sizeof(token));
}

/* Validates the body and maps the address; answers and returns -1 when the
 * request ends here. l->mapped is 0 when the address cannot sign in at all
 * (root, unsafe name): it still takes the failure path. */
static int
login_prepare(struct req *r, struct login *l)
{
	json_t *je = json_object_get(r->body, "email");
	json_t *jp = json_object_get(r->body, "password");
	char *email = NULL, *local = NULL, *dom = NULL;
	static const char *const fields[] = { "email", "password", NULL };
	const struct domain *d;
	int rc;

	if (req_refuse_unknown_fields(r, fields) != 0)
		return -1;
	if (!json_is_string(je) || !json_is_string(jp)) {
		req_reply_error_text(r, REQ_ERR_BAD_REQUEST,
		    "\"email\" and \"password\" must be strings");
		return -1;
	}
	l->pw = json_string_value(jp);
	l->pwlen = json_string_length(jp);
	if (l->pwlen > PAMP_PASSWORD_MAX_BYTES) {
		req_reply_error_text(r, REQ_ERR_TOO_LARGE, "password too long");
		return -1;
	}
	rc = vep_email_normalize(json_string_value(je), json_string_length(je), &email);
	if (rc == 0)
		rc = vep_email_split(email, &local, &dom);
	if (rc != 0) {
		free(email);
		log_login(r->a, "refused (not an address)", NULL, r->client_addr);
		req_reply_error_text(r, rc == VEP_ERR_NOMEM ? REQ_ERR_INTERNAL : REQ_ERR_BAD_REQUEST,
		    "not a valid email address");
		return -1;
	}
	d = domain_set_find(authority_domains(r->a), dom);
	if (d == NULL) {
		log_login(r->a, "refused (domain not served)", NULL, r->client_addr);
		req_reply_error_text(r, REQ_ERR_BAD_REQUEST,
		    "this authority does not serve that address's domain");
		rc = -1;
		goto out;
	}
	snprintf(l->email, sizeof(l->email), "%s", email);
	rc = account_map_user(d->accounts, local, l->account, sizeof(l->account));
	l->mapped = rc == 0;
	if (!l->mapped) /* count and delay it under the address itself */
		snprintf(l->account, sizeof(l->account), "%s", email);
	rc = 0;
	if (throttle_key_account(l->account, (int)r->a->cfg->pam_user_case_insensitive,
	    l->key_account, sizeof(l->key_account)) != 0 ||
	    throttle_key_addr(r->client_addr, l->key_addr, sizeof(l->key_addr)) != 0) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		rc = -1;
	}
out:
	free(email);
	free(local);
	free(dom);
	return rc;
}

void
api_login(struct req *r)
{
	struct authority *a = r->a;
	struct login *l;

	if ((l = calloc(1, sizeof(*l))) == NULL) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	l->a = a;
	l->loop = r->loop;
	l->r = r;
	clock_gettime(CLOCK_MONOTONIC, &l->start);
	if (login_prepare(r, l) != 0) {
		/* The password, if set, dies with the answered request's body
		 * (wiped by jansson's free, see main.c). */
		l->r = NULL;
		l->pw = NULL;
		login_free(l);
		return;
	}
	note_previous_session(r, l);
	throttle_limits(a->cfg, &l->limits);
	l->now = (int64_t)time(NULL);
	l->next = r->loop->logins;
	if (l->next != NULL)
		l->next->prevp = &l->next;
	l->prevp = &r->loop->logins;
	r->loop->logins = l;
	if (writer_submit(r->loop->writer, write_reserve, reserve_written, l) != 0)
		login_end(l, REQ_ERR_INTERNAL);
}

void
api_session(struct req *r)
{
	reply_session(r, r->session.email, r->tokens.csrf, r->session.expires_at);
}

/* In the writer thread: end the session (r is the handler's until done). */
static int
write_logout(struct db *db, void *arg)
{
	struct req *r = arg;
	int rc = db_session_delete(db, r->tokens.token_hash);

	return rc == DB_ERR_NOTFOUND ? 0 : rc; /* ended meanwhile: same result */
}

static void
logout_written(int rc, void *arg)
{
	struct req *r = arg;
	struct db_audit_row row = { 0 };
	json_t *o;

	if (rc != 0) {
		log_error(&r->a->log, "sign-out: %s", srv_strerror(rc));
		req_reply_error(r, REQ_ERR_UNAVAILABLE);
		return;
	}
	row.ts_ms = now_ms();
	row.event = DB_AUDIT_LOGOUT;
	row.email = r->session.email;
	row.client_addr = r->client_addr;
	row.outcome = "ok";
	deferred_audit(r->loop, &row);
	if (req_add_header(r, "Set-Cookie", session_cookie_clear()) != 0 ||
	    (o = json_pack("{sb}", "signed_out", 1)) == NULL) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply_json(r, 200, o);
	json_decref(o);
}

void
api_logout(struct req *r)
{
	if (writer_submit(r->loop->writer, write_logout, logout_written, r) != 0)
		req_reply_error(r, REQ_ERR_INTERNAL);
}

void
api_session_abandon_all(struct loop *lp)
{
	while (lp->logins != NULL) {
		struct login *l = lp->logins;
		if (l->r != NULL)
			req_abandon(l->r);
		l->r = NULL;
		login_free(l);
	}
}
