/*
 * auth/signin.c - sign-in, sessions and sign-out for one loop (contract in
 * auth/signin.h).
 *
 * A sign-in is a struct login that lives from signin_start to its report:
 * waiting for the throttle's reservation, for PAM, then for the session's
 * write (success) or the delay timer (failure). The service's list lets
 * shutdown cancel those still waiting.
 */
#include "auth/signin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "auth/account.h"
#include "auth/faildelay.h"
#include "auth/pam_client.h"
#include "auth/throttle_key.h"
#include "b64url.h"
#include "core/domain.h"
#include "core/errors.h"
#include "core/log.h"
#include "digest.h"
#include "err.h"
#include "secmem.h"
#include "server/shared.h"
#include "store/audit.h"
#include "store/deferred.h"
#include "store/sessions.h"
#include "store/throttle.h"
#include "store/writer.h"

/* Names PAM is never asked about (root, unsafe or too long) still go
 * through PAM, as this account that nobody has and with a random password,
 * so that their answer waits for exactly what the stack asks for an unknown
 * user (PAM_FAIL_DELAY, modules' own pauses): the same timing floor as every
 * other failure. The typed password never leaves for such a name. */
#define LOGIN_STAND_IN_USER "vep-refused-name"
/* Random bytes of the stand-in's password (sent as hex). */
#define LOGIN_STAND_IN_PW_BYTES 16
/* Busy timeouts (DB_BUSY_TIMEOUT_MS_DEFAULT each) a sign-in's reservation
 * may wait for the database's write lock before it fails. */
#define LOGIN_RESERVE_TRIES 3

struct signin {
	struct authority *a;           /* borrowed, as are the rest */
	struct event_base *base;
	size_t loop_index;             /* names this loop in continuations */
	unsigned waiting;              /* sign-ins waiting for the user's answer */
	unsigned waiting_max;          /* at most; beyond, a question is not asked */
	struct writer *writer;
	struct pam_client *pam;
	struct login *logins;          /* sign-ins in flight */
	/* Refusals before any throttle (not an address, a domain not served)
	 * are audited at most SIGNIN_REFUSALS_AUDITED_PER_S a second: they cost
	 * the client nothing, and each row is a write. */
	int64_t refusal_second;        /* the second being counted */
	unsigned refusals_audited;     /* rows written in it */
	unsigned long refusals_skipped; /* rows not written since the last note */
};

/* Sign-ins one loop lets wait for their users' answers at once: half its
 * share of the PAM workers (each waiting conversation holds one), at
 * least one, so passwords always find a worker. */
static unsigned
signin_waiting_max(const struct config *cfg, size_t nloops)
{
	size_t n = nloops > 0 ? nloops : 1;
	size_t share = ((size_t)cfg->pam_workers + n - 1) / n;

	return share / 2 > 0 ? (unsigned)(share / 2) : 1;
}

/* Most refusal rows one loop writes per second (see struct signin). */
#define SIGNIN_REFUSALS_AUDITED_PER_S 20

struct login {
	struct login *next, **prevp;   /* in sg->logins */
	struct signin *sg;
	signin_done_fn done;           /* reported exactly once, then NULL */
	void *arg;
	char email[VEP_EMAIL_MAX + 1];
	char account[ACCOUNT_USER_MAX + 1]; /* PAM user, or the address when unmappable */
	int mapped;                    /* account is a PAM user (else the stand-in runs) */
	const char *pw;                /* borrowed from the caller; wiped once sent */
	size_t pwlen;
	char client_addr[THROTTLE_KEY_ADDR_BUFSZ];
	/* The throttle's names for this attempt (auth/throttle_key.h). */
	char key_account[ACCOUNT_USER_MAX + 1];
	char key_addr[THROTTLE_KEY_ADDR_BUFSZ];
	struct db_throttle_limits limits;
	struct db_throttle_ticket ticket; /* what the reservation counted */
	int64_t retry_after_s;         /* when the reservation was refused */
	int had_session;               /* the attempt came with a session cookie */
	uint8_t old_hash[DB_SESSION_HASH_BYTES]; /* its hash: ended only on success */
	struct timespec start;         /* monotonic: the delay counts from here */
	uint64_t pam_id;
	int pam_pending;
	struct timespec pam_start;     /* monotonic: when PAM was asked */
	int64_t now;                   /* s: when the writer was asked */
	struct session_tokens tokens;  /* the new session's (secret; wiped with l) */
	struct event *timer;           /* the failure delay */
	/* PAM asked a question the user has yet to answer: the conversation
	 * waits in the helper, no request waits here (done is NULL), and the
	 * answer comes with this continuation (signin_continue). */
	int waiting;
	char continuation[SIGNIN_CONTINUATION_MAX + 1];
	int asked;                     /* a question went to the user already */
	/* second_factor_prompt: PAM refused before asking anything, and the
	 * user is asked all the same, so that the question tells nothing; the
	 * answer then gets this failure. No PAM worker waits meanwhile: the
	 * expiry timer ends it. */
	int decoy;
	const char *decoy_outcome;     /* static */
	uint32_t decoy_delay_us;
	struct event *expiry;
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
		pam_client_cancel(l->sg->pam, l->pam_id);
	if (l->waiting)
		l->sg->waiting--;
	if (l->timer != NULL)
		event_free(l->timer);
	if (l->expiry != NULL)
		event_free(l->expiry);
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

/* Reports rc (with res, or an empty one) and ends the sign-in. */
static void
login_report(struct login *l, int rc, const struct signin_result *res)
{
	struct signin_result none = { 0 };

	login_forget_password(l);
	/* No request waits while the user is asked: the end is only logged. */
	if (l->done != NULL)
		l->done(rc, res != NULL ? res : &none, l->arg);
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
log_login(struct authority *a, const char *outcome, const char *email,
    const char *client_addr)
{
	char esc[LOG_ESCAPE_BUFSZ];

	metrics_signin(&a->metrics, outcome);
	log_info(&a->log, "sign-in %s: account %s from %s", outcome,
	    email != NULL && email[0] != '\0' ? log_escape(esc, sizeof(esc), email, strlen(email)) :
	    "unknown", client_addr);
}

/* Audits a sign-in outcome without waiting (store/deferred.h), and logs it.
 * A failure to record is logged: the answer does not depend on it. */
static void
audit_login(struct login *l, int success, const char *outcome)
{
	struct signin *sg = l->sg;
	struct db_audit_row row = { 0 };

	log_login(sg->a, outcome, l->email, l->client_addr);
	row.ts_ms = now_ms();
	row.event = success ? DB_AUDIT_LOGIN_SUCCESS : DB_AUDIT_LOGIN_FAILURE;
	row.email = l->email;
	row.client_addr = l->client_addr;
	row.outcome = outcome;
	row.account = l->mapped ? l->account : NULL;
	deferred_audit(sg->writer, &sg->a->log, &row);
}

/* Audits an attempt refused before it became a login (no account known):
 * the address as typed when it is one (normalized), else "unknown". */
static void
audit_refusal(struct signin *sg, const char *email, const char *client_addr,
    const char *outcome)
{
	struct db_audit_row row = { 0 };
	/* The second the row is stamped with: time(NULL) reads a coarser
	 * clock that lags up to a tick, so counting by it let a second's
	 * rows exceed the cap around its start (seen: 25). */
	int64_t ts_ms = now_ms(), second = ts_ms / 1000;

	if (second != sg->refusal_second) {
		if (sg->refusals_skipped > 0)
			log_warn(&sg->a->log, "audit: %lu refused sign-in attempts not recorded "
			    "(more than %d a second; each is in the log)", sg->refusals_skipped,
			    SIGNIN_REFUSALS_AUDITED_PER_S);
		sg->refusal_second = second;
		sg->refusals_audited = 0;
		sg->refusals_skipped = 0;
	}
	if (sg->refusals_audited >= SIGNIN_REFUSALS_AUDITED_PER_S) {
		sg->refusals_skipped++;
		return;
	}
	sg->refusals_audited++;
	row.ts_ms = ts_ms;
	row.event = DB_AUDIT_LOGIN_FAILURE;
	row.email = email;
	row.client_addr = client_addr;
	row.outcome = outcome;
	deferred_audit(sg->writer, &sg->a->log, &row);
}

static void
on_delay_over(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	login_report(arg, SRV_ERR_DENIED, NULL);
}

/* Audits a failure (already counted by the reservation) and reports it
 * when its delay is over. */
static void
login_fail(struct login *l, const char *outcome, uint32_t pam_delay_us)
{
	struct timeval tv;
	uint32_t ms;

	login_forget_password(l);
	audit_login(l, 0, outcome);
	ms = faildelay_remaining_ms(l->sg->a->faildelay, l->key_account, pam_delay_us,
	    elapsed_ms(&l->start));
	tv.tv_sec = ms / 1000;
	tv.tv_usec = (ms % 1000) * 1000;
	/* libevent counts a timer from the time it cached when this loop
	 * iteration began, which may be well before now (a busy iteration):
	 * from there, the answer would come early by that much, under the
	 * minimum delay. */
	event_base_update_cache_time(l->sg->base);
	if ((l->timer = evtimer_new(l->sg->base, on_delay_over, l)) == NULL ||
	    evtimer_add(l->timer, &tv) != 0) {
		/* Reporting the failure at once would leak timing; "try again"
		 * leaks nothing. */
		login_report(l, SRV_ERR_UNDECIDED, NULL);
	}
}

/* A throttle settlement nobody waits for: the names and ticket copied. */
struct settle_job {
	struct authority *a;
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
		log_error(&j->a->log, "throttle: %s", srv_strerror(rc));
	free(j);
}

/* Takes the attempt back from the throttle's counters without waiting (a
 * failure to do so merely leaves it counted). */
static void
login_take_back(struct login *l)
{
	struct settle_job *j = calloc(1, sizeof(*j));

	if (j != NULL) {
		j->a = l->sg->a;
		memcpy(j->account, l->key_account, sizeof(j->account));
		memcpy(j->addr, l->key_addr, sizeof(j->addr));
		j->limits = l->limits;
		j->ticket = l->ticket;
		j->now = (int64_t)time(NULL);
		if (writer_submit(l->sg->writer, write_settle_undecided, settle_written, j) != 0)
			free(j);
	}
}

/* PAM could not decide: the attempt is taken back, and the client told to
 * retry. */
static void
login_undecided(struct login *l, const char *outcome)
{
	login_take_back(l);
	log_warn(&l->sg->a->log, "sign-in: PAM %s", outcome);
	audit_login(l, 0, outcome);
	login_report(l, SRV_ERR_UNDECIDED, NULL);
}

/* In the writer thread: settle the attempt, end the session the attempt
 * came with (only now: a failed sign-in must not sign anyone out), store
 * the new one. */
static int
write_success(struct db *db, void *arg)
{
	struct login *l = arg;
	const struct config *cfg = l->sg->a->cfg;
	int rc;

	/* Best effort: the attempt merely stays counted. */
	(void)db_throttle_settle(db, l->key_account, l->key_addr, l->now, &l->limits,
	    &l->ticket, DB_THROTTLE_SUCCEEDED);
	if (l->had_session && (rc = db_session_delete(db, l->old_hash)) != 0 &&
	    rc != DB_ERR_NOTFOUND)
		return rc;
	return db_session_create(db, l->email, l->now, cfg->session_idle_s,
	    cfg->session_lifetime_s, l->tokens.token_hash, NULL);
}

/* Back in the loop: report the session once it exists. */
static void
success_written(int rc, void *arg)
{
	struct login *l = arg;
	const struct config *cfg = l->sg->a->cfg;
	struct signin_result res = { 0 };

	if (rc != 0) {
		log_error(&l->sg->a->log, "session: %s", srv_strerror(rc));
		login_report(l, rc, NULL);
		return;
	}
	audit_login(l, 1, "ok");
	res.email = l->email;
	res.token = l->tokens.token;
	res.csrf = l->tokens.csrf;
	/* The idle clock runs out first unless the lifetime is shorter. */
	res.expires_at = l->now + (cfg->session_idle_s < cfg->session_lifetime_s ?
	    cfg->session_idle_s : cfg->session_lifetime_s);
	res.cookie_max_age_s = cfg->session_lifetime_s;
	login_report(l, 0, &res);
}

/* Draws the session's tokens and has the writer store it. */
static void
login_succeed(struct login *l)
{
	int rc;

	l->now = (int64_t)time(NULL);
	if ((rc = session_tokens_new(NULL, &l->tokens)) != 0) {
		login_report(l, rc, NULL);
		return;
	}
	if (writer_submit(l->sg->writer, write_success, success_written, l) != 0)
		success_written(VEP_ERR_NOMEM, l);
}

/* The password was right, but it has expired: the user must change it
 * where the mail account is managed. Nothing is counted against the
 * account (the password was right); the answer says so at once. */
static void
login_expired(struct login *l)
{
	login_take_back(l);
	audit_login(l, 0, "password_expired");
	login_report(l, SRV_ERR_PASSWORD_EXPIRED, NULL);
}

/* Gives the waiting sign-in a fresh continuation. Returns 0 or an error. */
static int
login_new_continuation(struct login *l)
{
	uint8_t rnd[SIGNIN_CONTINUATION_BYTES];
	char *secret = NULL;
	int rc = VEP_ERR_NOMEM;

	if ((rc = vep_random(rnd, sizeof(rnd))) == 0 &&
	    (secret = vep_b64url_encode(rnd, sizeof(rnd))) == NULL)
		rc = VEP_ERR_NOMEM;
	if (rc == 0) {
		(void)snprintf(l->continuation, sizeof(l->continuation), "%zu.%s",
		    l->sg->loop_index, secret);
		vep_memzero(secret, strlen(secret));
	}
	free(secret);
	vep_memzero(rnd, sizeof(rnd));
	return rc;
}

/* Answers the request with the question (its text: PAM's, or the
 * configured second_factor_prompt for the first) and lets the sign-in wait
 * for signin_continue. */
static void
login_wait(struct login *l, const char *text, int echo, const char *notes, size_t notes_len)
{
	struct signin *sg = l->sg;
	const struct config *cfg = sg->a->cfg;
	struct signin_result res = { 0 };
	signin_done_fn done = l->done;
	void *arg = l->arg;

	l->waiting = 1;
	sg->waiting++;
	l->done = NULL;
	l->arg = NULL;
	res.continuation = l->continuation;
	res.prompt = !l->asked && cfg->second_factor_prompt != NULL ? cfg->second_factor_prompt :
	    text != NULL ? text : "";
	res.echo = echo;
	res.notes = notes;
	res.notes_len = notes_len;
	res.answer_within_s = (int64_t)cfg->pam_answer_timeout_s;
	l->asked = 1;
	done(SRV_ERR_CONTINUE, &res, arg);
}

/* PAM asks the user one more question: the request gets it with a fresh
 * continuation, and the sign-in waits, its conversation open in the
 * helper (which ends it after the answer timeout), for signin_continue. */
static void
login_ask_user(struct login *l, const struct pam_client_result *pr)
{
	struct signin *sg = l->sg;

	if (l->done == NULL || sg->waiting >= sg->waiting_max) {
		/* Every slot holds a user's conversation: this one is not
		 * asked (the PAM helper's workers stay free for passwords). */
		pam_client_cancel(sg->pam, l->pam_id);
		l->pam_pending = 0;
		login_undecided(l, "busy");
		return;
	}
	if (login_new_continuation(l) != 0) {
		pam_client_cancel(sg->pam, l->pam_id);
		l->pam_pending = 0;
		login_undecided(l, "error");
		return;
	}
	log_info(&sg->a->log, "sign-in: PAM asks a further question (from %s)", l->client_addr);
	login_wait(l, pr->text, pr->echo, pr->notes, pr->notes_len);
}

static void
on_decoy_expired(evutil_socket_t fd, short what, void *arg)
{
	struct login *l = arg;

	(void)fd;
	(void)what;
	audit_login(l, 0, l->decoy_outcome);
	login_report(l, SRV_ERR_DENIED, NULL);
}

/* PAM refused before asking anything, and second_factor_prompt says every
 * account is asked a question: ask it all the same (a refusal without one
 * would tell an unknown account or a wrong password from a right one), and
 * answer the failure after the answer. Returns 0, or an error when the
 * question cannot be asked (the failure is then reported as usual). */
static int
login_decoy(struct login *l, const char *outcome, uint32_t pam_delay_us)
{
	struct signin *sg = l->sg;
	struct timeval tv = { sg->a->cfg->pam_answer_timeout_s, 0 };

	if (sg->a->cfg->second_factor_prompt == NULL || l->asked || l->done == NULL ||
	    sg->waiting >= sg->waiting_max || login_new_continuation(l) != 0 ||
	    (l->expiry = evtimer_new(sg->base, on_decoy_expired, l)) == NULL ||
	    evtimer_add(l->expiry, &tv) != 0)
		return VEP_ERR_NOMEM;
	login_forget_password(l);
	l->decoy = 1;
	l->decoy_outcome = outcome;
	l->decoy_delay_us = pam_delay_us;
	login_wait(l, NULL, 0, NULL, 0);
	return VEP_OK;
}

static void
on_pam(const struct pam_client_result *res, void *arg)
{
	struct login *l = arg;
	struct timespec now;

	if (res->prompt) {
		login_ask_user(l, res);
		return;
	}
	l->pam_pending = 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	metrics_observe(&l->sg->a->metrics.pam, (double)(now.tv_sec - l->pam_start.tv_sec) +
	    (double)(now.tv_nsec - l->pam_start.tv_nsec) / 1e9);
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
	case PAM_OUTCOME_NEW_AUTHTOK:
		if (l->mapped) {
			login_expired(l);
			return;
		}
		login_fail(l, "refused", res->pam_delay_us);
		return;
	case PAM_OUTCOME_AUTH_FAILED:
	case PAM_OUTCOME_ACCT_REFUSED:
	case PAM_OUTCOME_USER_REFUSED:
		if (login_decoy(l, l->mapped ? pam_outcome_name(res->outcome) : "refused",
		    res->pam_delay_us) != 0)
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

	clock_gettime(CLOCK_MONOTONIC, &l->pam_start);
	if (l->mapped) {
		rc = pam_client_start(l->sg->pam, l->account, l->pw, l->pwlen, l->client_addr,
		    on_pam, l, &l->pam_id);
	} else if ((rc = vep_random(rnd, sizeof(rnd))) == 0) {
		for (i = 0; i < sizeof(rnd); i++)
			(void)snprintf(standin_pw + 2 * i, 3, "%02x", rnd[i]);
		rc = pam_client_start(l->sg->pam, LOGIN_STAND_IN_USER, standin_pw,
		    strlen(standin_pw), l->client_addr, on_pam, l, &l->pam_id);
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
	struct signin_result res = { 0 };

	if (rc == SRV_ERR_THROTTLED) {
		audit_login(l, 0, "throttled");
		res.retry_after_s = l->retry_after_s;
		login_report(l, rc, &res);
		return;
	}
	if (rc != 0) {
		log_error(&l->sg->a->log, "throttle: %s", srv_strerror(rc));
		login_report(l, rc, NULL);
		return;
	}
	login_ask_pam(l);
}

/* Remembers the session the attempt came with, to end it if and when this
 * sign-in succeeds: every sign-in gets a fresh token, and the old one
 * should not outlive it. */
static void
note_previous_session(struct login *l, const char *cookie)
{
	char token[SESSION_TOKEN_CHARS + 1];
	struct session_tokens t;

	if (session_cookie_find(cookie, token) == 0 && session_tokens_from(NULL, token, &t) == 0) {
		memcpy(l->old_hash, t.token_hash, sizeof(l->old_hash));
		l->had_session = 1;
		session_tokens_wipe(&t);
	}
	vep_memzero(token, sizeof(token));
}

/* Maps the address to its account and the throttle's names. Returns 0
 * (l->mapped is 0 when the address cannot sign in at all - root, an unsafe
 * name: it still takes the failure path), or the error signin_start
 * returns. */
static int
login_prepare(struct login *l, const struct signin_attempt *at)
{
	struct authority *a = l->sg->a;
	char *email = NULL, *local = NULL, *dom = NULL;
	const struct domain *d;
	int rc;

	if (at->password_len > PAMP_PASSWORD_MAX_BYTES)
		return VEP_ERR_TOOBIG;
	rc = vep_email_normalize(at->email, at->email_len, &email);
	if (rc == 0)
		rc = vep_email_split(email, &local, &dom);
	if (rc != 0) {
		log_login(a, "refused (not an address)", NULL, at->client_addr);
		audit_refusal(l->sg, NULL, at->client_addr, "not_an_address");
		goto out;
	}
	d = domain_set_find(authority_domains(a), dom);
	if (d == NULL) {
		log_login(a, "refused (domain not served)", NULL, at->client_addr);
		audit_refusal(l->sg, email, at->client_addr, "domain_not_served");
		rc = SRV_ERR_NOT_SERVED;
		goto out;
	}
	snprintf(l->email, sizeof(l->email), "%s", email);
	snprintf(l->client_addr, sizeof(l->client_addr), "%s", at->client_addr);
	l->mapped = account_map_user(d->accounts, local, l->account, sizeof(l->account)) == 0;
	if (!l->mapped) /* count and delay it under the address itself */
		snprintf(l->account, sizeof(l->account), "%s", email);
	if (throttle_key_account(l->account, (int)a->cfg->pam_user_case_insensitive,
	    l->key_account, sizeof(l->key_account)) != 0 ||
	    throttle_key_addr(at->client_addr, l->key_addr, sizeof(l->key_addr)) != 0)
		rc = VEP_ERR_NOMEM;
out:
	free(email);
	free(local);
	free(dom);
	return rc;
}

int
signin_start(struct signin *sg, const struct signin_attempt *at, signin_done_fn done,
    void *arg)
{
	struct login *l;
	int rc;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return VEP_ERR_NOMEM;
	l->sg = sg;
	clock_gettime(CLOCK_MONOTONIC, &l->start);
	if ((rc = login_prepare(l, at)) != 0) {
		login_free(l);
		return rc;
	}
	l->done = done;
	l->arg = arg;
	l->pw = at->password;
	l->pwlen = at->password_len;
	note_previous_session(l, at->cookie);
	throttle_limits(sg->a->cfg, &l->limits);
	l->now = (int64_t)time(NULL);
	l->next = sg->logins;
	if (l->next != NULL)
		l->next->prevp = &l->next;
	l->prevp = &sg->logins;
	sg->logins = l;
	if (writer_submit(sg->writer, write_reserve, reserve_written, l) != 0) {
		l->done = NULL;
		login_forget_password(l);
		login_free(l);
		return VEP_ERR_NOMEM;
	}
	return VEP_OK;
}

long
signin_continuation_loop(const char *continuation)
{
	char *end;
	long idx;

	if (continuation == NULL || continuation[0] < '0' || continuation[0] > '9')
		return -1;
	idx = strtol(continuation, &end, 10);
	return *end == '.' && idx >= 0 && idx < 100000 ? idx : -1;
}

/* The sign-in waiting under continuation, compared in constant time. */
static struct login *
find_waiting(struct signin *sg, const char *continuation)
{
	size_t n = strlen(continuation);
	struct login *l;

	if (n == 0 || n > SIGNIN_CONTINUATION_MAX)
		return NULL;
	for (l = sg->logins; l != NULL; l = l->next)
		if (l->waiting && strlen(l->continuation) == n &&
		    vep_memeq_ct(l->continuation, continuation, n))
			return l;
	return NULL;
}

int
signin_continue(struct signin *sg, const char *continuation, const void *answer, size_t len,
    signin_done_fn done, void *arg)
{
	struct login *l;

	if (continuation == NULL || (l = find_waiting(sg, continuation)) == NULL)
		return SRV_ERR_RESTART;
	/* Each continuation serves once. */
	vep_memzero(l->continuation, sizeof(l->continuation));
	l->waiting = 0;
	sg->waiting--;
	l->done = done;
	l->arg = arg;
	/* The failure delay counts from this request. */
	clock_gettime(CLOCK_MONOTONIC, &l->start);
	clock_gettime(CLOCK_MONOTONIC, &l->pam_start);
	if (l->decoy) {
		/* PAM said no before the question: whatever the answer. */
		event_free(l->expiry);
		l->expiry = NULL;
		login_fail(l, l->decoy_outcome, l->decoy_delay_us);
		return VEP_OK;
	}
	if (pam_client_answer(sg->pam, l->pam_id, answer, len) != 0) {
		/* An answer PAM cannot carry (too long, a NUL inside): the same
		 * failure as a wrong one, on the same clock. */
		pam_client_cancel(sg->pam, l->pam_id);
		l->pam_pending = 0;
		login_fail(l, "refused", 0);
	}
	return VEP_OK;
}

int
signin_session_csrf_ok(const struct signin_session *s, const char *header)
{
	return session_csrf_matches(&s->tokens, header);
}

void
signin_session_wipe(struct signin_session *s)
{
	session_tokens_wipe(&s->tokens);
	vep_memzero(s, sizeof(*s));
}

/* A sign-out on its way to disk. */
struct logout {
	struct signin *sg;
	uint8_t hash[DB_SESSION_HASH_BYTES];
	char email[VEP_EMAIL_MAX + 1];
	char client_addr[THROTTLE_KEY_ADDR_BUFSZ];
	void (*done)(int rc, void *arg);
	void *arg;
};

/* In the writer thread: end the session. */
static int
write_logout(struct db *db, void *arg)
{
	struct logout *o = arg;
	int rc = db_session_delete(db, o->hash);

	return rc == DB_ERR_NOTFOUND ? 0 : rc; /* ended meanwhile: same result */
}

static void
logout_written(int rc, void *arg)
{
	struct logout *o = arg;
	struct db_audit_row row = { 0 };

	if (rc != 0) {
		log_error(&o->sg->a->log, "sign-out: %s", srv_strerror(rc));
	} else {
		row.ts_ms = now_ms();
		row.event = DB_AUDIT_LOGOUT;
		row.email = o->email;
		row.client_addr = o->client_addr;
		row.outcome = "ok";
		deferred_audit(o->sg->writer, &o->sg->a->log, &row);
	}
	o->done(rc, o->arg);
	free(o);
}

int
signin_session_end(struct signin *sg, const struct signin_session *s,
    const char *client_addr, void (*done)(int rc, void *arg), void *arg)
{
	struct logout *o;

	if ((o = calloc(1, sizeof(*o))) == NULL)
		return VEP_ERR_NOMEM;
	o->sg = sg;
	memcpy(o->hash, s->tokens.token_hash, sizeof(o->hash));
	snprintf(o->email, sizeof(o->email), "%s", s->email);
	snprintf(o->client_addr, sizeof(o->client_addr), "%s", client_addr);
	o->done = done;
	o->arg = arg;
	if (writer_submit(sg->writer, write_logout, logout_written, o) != 0) {
		free(o);
		return VEP_ERR_NOMEM;
	}
	return VEP_OK;
}

const char *
signin_problem(struct signin *sg)
{
	if (pam_client_helper_pid(sg->pam) == 0)
		return "PAM helper not running";
	return NULL;
}

int
signin_new(struct authority *a, struct event_base *base, size_t loop_index,
    struct writer *writer, struct pam_client *pam, struct signin **out)
{
	struct signin *sg;

	*out = NULL;
	if ((sg = calloc(1, sizeof(*sg))) == NULL)
		return VEP_ERR_NOMEM;
	sg->a = a;
	sg->base = base;
	sg->loop_index = loop_index;
	sg->waiting_max = signin_waiting_max(a->cfg, a->nloops);
	sg->writer = writer;
	sg->pam = pam;
	*out = sg;
	return VEP_OK;
}

void
signin_free(struct signin *sg)
{
	if (sg == NULL)
		return;
	while (sg->logins != NULL)
		login_report(sg->logins, SRV_ERR_CANCELED, NULL);
	free(sg);
}
