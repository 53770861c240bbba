/*
 * pamhelper/worker.c - one PAM attempt, in a short-lived forked worker of
 * vep-pam-helper.
 *
 * Owns: the PAM transaction (pam_start .. pam_end), the conversation
 * function (the password for the first echo-off prompt; every other prompt
 * relayed to the helper as a PROMPT, blocking for its ANSWER; info and
 * error texts collected as NOTES), the PAM_FAIL_DELAY hook, the checks
 * after PAM said yes (PAM_USER unchanged, UID policy), and its own alarm,
 * a backstop should the supervisor be stopped. This is the ONLY file in the
 * project that includes security/pam_appl.h.
 *
 * Must never: sleep for PAM's fail delay (it is captured and returned so the
 * event loop answers after a timer), log or keep the password or an answer
 * (both are wiped once PAM has its copy), give the password to any prompt
 * but the attempt's first echo-off one (never an echo-on prompt: whatever
 * shows echo-on text would show it), relay more than PAMP_ROUNDS_MAX
 * prompts, or return to the supervisor loop: the process ends with _exit()
 * so nothing inherited (atexit handlers, stdio buffers of the parent) runs
 * twice.
 */
#include "pamhelper/helper.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <security/pam_appl.h>

#include "err.h"
#include "ipc/ipc.h"
#include "pamhelper/notes.h"
#include "pamhelper/proto.h"

/* Buffer for getpwnam_r, in bytes; entries larger than this count as
 * absent, which the UID policy then refuses when a minimum is set. */
#define WORKER_PWBUF_BYTES 16384

/* Seconds the worker's alarm allows beyond the helper's deadline of the
 * current round: the helper kills us first unless it is stopped. */
#define WORKER_ALARM_SLACK_S 5u

struct conv_state {
	const struct pam_helper_config *cfg;
	char *password;        /* wiped once given */
	size_t pwlen;
	int fd;                /* socket to the helper: PROMPT out, ANSWER in */
	int password_given;    /* the first echo-off prompt had it */
	unsigned rounds;       /* prompts relayed to the client */
	unsigned messages;     /* all messages seen in this attempt */
	int flooded;           /* more than PAMP_CONV_MAX_MESSAGES */
	int refused;           /* a prompt we will not or could not answer */
	unsigned delay_us;     /* largest PAM_FAIL_DELAY request */
	struct pamp_notes notes;   /* info and error texts since the last frame */
};

/* PAM's delay callback type, per Linux-PAM's pam_fail_delay(3). */
typedef void (*worker_delay_fn)(int retval, unsigned usec_delay, void *appdata);

static void
free_responses(struct pam_response *r, int n)
{
	int i;

	if (r == NULL)
		return;
	for (i = 0; i < n; i++) {
		if (r[i].resp != NULL) {
			explicit_bzero(r[i].resp, strlen(r[i].resp));
			free(r[i].resp);
		}
	}
	free(r);
}

/* The worker's own deadline: the helper's for this round (ms) rounded up,
 * plus slack. Re-armed at every round, so a person answering several
 * prompts within the helper's deadlines never meets it. */
static void
arm_backstop(uint32_t ms)
{
	alarm((ms + 999u) / 1000u + WORKER_ALARM_SLACK_S);
}

/* Sends all of out on the blocking socket fd; wipes it. 0 or -1. */
static int
write_all(struct ipc_buf *out, int fd)
{
	int rc = 0;

	while (out->len > 0 && rc == 0) {
		size_t before = out->len;

		if (ipc_buf_write_fd(out, fd) != VEP_OK || out->len == before)
			rc = -1;
	}
	ipc_buf_clear(out);
	return rc;
}

/* Blocks for the helper's next frame on fd. New message or NULL (EOF, a
 * broken frame). */
static struct ipc_msg *
read_frame(int fd)
{
	struct ipc_buf in = { 0 };
	struct ipc_msg *m = NULL;
	int eof = 0;

	while (ipc_take_msg(&in, &m) == VEP_OK && m == NULL) {
		size_t before = in.len;

		if (ipc_buf_read_fd(&in, fd, &eof) != VEP_OK || eof || in.len == before)
			break;
	}
	ipc_buf_clear(&in);
	return m;
}

/* Asks the client one prompt through the helper and blocks for the answer:
 * PAM_SUCCESS with *answer (malloc'd, for PAM, which frees it), else
 * PAM_CONV_ERR or PAM_BUF_ERR. The notes collected so far go with it. */
static int
relay_prompt(struct conv_state *st, const struct pam_message *pm, char **answer)
{
	char text[PAMP_TEXT_MAX_BYTES + 1];
	struct ipc_buf out = { 0 };
	struct ipc_msg *m;
	uint32_t style;
	int rc = PAM_BUF_ERR;

	*answer = NULL;
	style = pm->msg_style == PAM_PROMPT_ECHO_ON ? PAMP_STYLE_ECHO_ON : PAMP_STYLE_ECHO_OFF;
	(void)pamp_text_clean(text, pm->msg);
	m = ipc_msg_new(PAMP_MSG_PROMPT);
	if (m == NULL || ipc_msg_put_u32(m, PAMP_TAG_STYLE, style) != VEP_OK ||
	    ipc_msg_put_str(m, PAMP_TAG_TEXT, text) != VEP_OK ||
	    (st->notes.len > 0 &&
	    ipc_msg_put(m, PAMP_TAG_NOTES, st->notes.data, st->notes.len) != VEP_OK) ||
	    ipc_msg_append_frame(m, &out) != VEP_OK)
		goto out;
	ipc_msg_free(m);
	m = NULL;
	pamp_notes_reset(&st->notes);
	rc = PAM_CONV_ERR;
	arm_backstop(st->cfg->answer_ms);
	if (write_all(&out, st->fd) != 0 || (m = read_frame(st->fd)) == NULL ||
	    ipc_msg_type(m) != PAMP_MSG_ANSWER ||
	    ipc_msg_get_str(m, PAMP_TAG_ANSWER, PAMP_PASSWORD_MAX_BYTES, answer) != VEP_OK)
		goto out;
	arm_backstop(st->cfg->deadline_ms);
	rc = PAM_SUCCESS;
out:
	/* The frame held the answer: ipc_msg_free wipes it. */
	ipc_msg_free(m);
	ipc_buf_clear(&out);
	return rc;
}

/* The password, for the attempt's first echo-off prompt only: PAM has its
 * copy now, so ours goes (the next prompts may wait for a person). */
static int
give_password(struct conv_state *st, char **resp)
{
	*resp = malloc(st->pwlen + 1);
	if (*resp == NULL)
		return PAM_BUF_ERR;
	memcpy(*resp, st->password, st->pwlen + 1);
	explicit_bzero(st->password, st->pwlen);
	st->password_given = 1;
	return PAM_SUCCESS;
}

/* One message of a conversation: PAM_SUCCESS or why the conversation
 * fails (and then st->refused is set when it is our refusal). */
static int
conv_one(struct conv_state *st, const struct pam_message *pm, char **resp)
{
	switch (pm->msg_style) {
	case PAM_PROMPT_ECHO_OFF:
		if (!st->password_given)
			return give_password(st, resp);
	/* FALLTHROUGH */
	case PAM_PROMPT_ECHO_ON:
		/* A second factor, or a question we cannot know the answer
		 * to: the client's. */
		if (st->rounds >= PAMP_ROUNDS_MAX) {
			st->refused = 1;
			return PAM_CONV_ERR;
		}
		st->rounds++;
		if (relay_prompt(st, pm, resp) != PAM_SUCCESS) {
			st->refused = 1;
			return PAM_CONV_ERR;
		}
		return PAM_SUCCESS;
	case PAM_TEXT_INFO:
		pamp_notes_add(&st->notes, PAMP_NOTE_INFO, pm->msg);
		return PAM_SUCCESS;
	case PAM_ERROR_MSG:
		pamp_notes_add(&st->notes, PAMP_NOTE_ERROR, pm->msg);
		return PAM_SUCCESS;
	default:
		st->refused = 1;
		return PAM_CONV_ERR;
	}
}

/* The conversation: each message in turn (conv_one). Any failure fails the
 * whole call, and the attempt with it (run_pam checks st). */
static int
worker_conv(int num_msg, const struct pam_message **msg,
    struct pam_response **resp, void *appdata)
{
	struct conv_state *st = appdata;
	struct pam_response *r = NULL;
	int i, rc = PAM_CONV_ERR;

	*resp = NULL;
	if (num_msg <= 0 || num_msg > PAM_MAX_NUM_MSG)
		goto out;
	st->messages += (unsigned)num_msg;
	if (st->messages > PAMP_CONV_MAX_MESSAGES) {
		st->flooded = 1;
		goto out;
	}
	r = calloc((size_t)num_msg, sizeof(*r));
	if (r == NULL) {
		rc = PAM_BUF_ERR;
		goto out;
	}
	for (i = 0; i < num_msg; i++)
		if ((rc = conv_one(st, msg[i], &r[i].resp)) != PAM_SUCCESS)
			goto out;
	*resp = r;
	r = NULL;
	rc = PAM_SUCCESS;
out:
	free_responses(r, num_msg);
	return rc;
}

/* Registered as PAM_FAIL_DELAY so Linux-PAM calls us instead of sleeping in
 * this process; the loop side turns the number into a timer. */
static void
worker_delay(int retval, unsigned usec_delay, void *appdata)
{
	struct conv_state *st = appdata;

	(void)retval;
	if (usec_delay > st->delay_us)
		st->delay_us = usec_delay;
}

/* The UID policy after PAM succeeded: a UID 0 account is never signed in
 * whatever its name; with min_uid > 0 the account needs a passwd entry with
 * a UID at or above it (demo accounts without one need min_uid 0). */
static int
uid_allowed(const char *user, uint32_t min_uid)
{
	struct passwd pw, *res = NULL;
	char *buf;
	int ok = 0;

	buf = malloc(WORKER_PWBUF_BYTES);
	if (buf == NULL)
		return 0;
	if (getpwnam_r(user, &pw, buf, WORKER_PWBUF_BYTES, &res) != 0)
		res = NULL;
	if (res != NULL && res->pw_uid == 0)
		goto out;
	if (min_uid == 0) {
		ok = 1;
		goto out;
	}
	ok = res != NULL && res->pw_uid >= min_uid;
out:
	free(buf);
	return ok;
}

static enum pam_outcome
run_pam(const struct pam_helper_config *cfg,
    const struct pam_attempt *a, struct conv_state *st)
{
	union {
		worker_delay_fn fn;
		const void *item;
	} delay = { .fn = worker_delay };
	struct pam_conv conv = { worker_conv, st };
	pam_handle_t *pamh = NULL;
	const void *item = NULL;
	enum pam_outcome outcome = PAM_OUTCOME_ERROR;
	int rc, expired = 0;

	rc = pam_start(cfg->service, a->user, &conv, &pamh);
	if (rc != PAM_SUCCESS) {
		pamh = NULL;
		goto out;
	}
	if (a->rhost != NULL && (rc = pam_set_item(pamh, PAM_RHOST, a->rhost)) != PAM_SUCCESS)
		goto out;
	if ((rc = pam_set_item(pamh, PAM_FAIL_DELAY, delay.item)) != PAM_SUCCESS)
		goto out;

	outcome = PAM_OUTCOME_AUTH_FAILED;
	rc = pam_authenticate(pamh, PAM_DISALLOW_NULL_AUTHTOK);
	/* A module may ignore a failed conversation and still say yes (a
	 * chatty module does): the attempt fails anyway. */
	if (rc != PAM_SUCCESS || st->flooded || st->refused)
		goto out;

	outcome = PAM_OUTCOME_ACCT_REFUSED;
	rc = pam_acct_mgmt(pamh, PAM_DISALLOW_NULL_AUTHTOK);
	/* An expired password is still the right one: said as such (after
	 * the user checks below), so the sign-in can ask for a new one. */
	if ((rc != PAM_SUCCESS && rc != PAM_NEW_AUTHTOK_REQD) || st->flooded || st->refused)
		goto out;
	expired = rc == PAM_NEW_AUTHTOK_REQD;

	/* A module that rewrote PAM_USER authenticated someone else than the
	 * account we will certify: refuse. */
	outcome = PAM_OUTCOME_USER_REFUSED;
	rc = pam_get_item(pamh, PAM_USER, &item);
	if (rc != PAM_SUCCESS || item == NULL || strcmp(item, a->user) != 0) {
		if (rc == PAM_SUCCESS)
			rc = PAM_PERM_DENIED;
		goto out;
	}
	if (!uid_allowed(a->user, cfg->min_uid)) {
		rc = PAM_PERM_DENIED;
		goto out;
	}
	rc = expired ? PAM_NEW_AUTHTOK_REQD : PAM_SUCCESS;
	outcome = expired ? PAM_OUTCOME_NEW_AUTHTOK : PAM_OUTCOME_OK;
out:
	if (pamh != NULL)
		pam_end(pamh, rc);
	return outcome;
}

void
pam_worker_run(const struct pam_helper_config *cfg,
    const struct pam_attempt *a, int fd)
{
	struct conv_state st = {
		.cfg = cfg, .password = a->password, .pwlen = a->pwlen, .fd = fd,
	};
	struct ipc_buf out = { 0 };
	struct ipc_msg *m = NULL;
	enum pam_outcome outcome;
	int status = 1;

	arm_backstop(cfg->deadline_ms);
	outcome = run_pam(cfg, a, &st);
	m = ipc_msg_new(PAMP_MSG_RESULT);
	if (m == NULL ||
	    ipc_msg_put_u32(m, PAMP_TAG_OUTCOME, (uint32_t)outcome) != 0 ||
	    ipc_msg_put_u32(m, PAMP_TAG_DELAY_US, st.delay_us) != 0 ||
	    (st.notes.len > 0 &&
	    ipc_msg_put(m, PAMP_TAG_NOTES, st.notes.data, st.notes.len) != 0) ||
	    ipc_msg_append_frame(m, &out) != 0)
		goto out;
	if (write_all(&out, fd) != 0)
		goto out;
	status = 0;
out:
	ipc_msg_free(m);
	ipc_buf_clear(&out);
	_exit(status);
}

/* A conversation for a handle that never authenticates. */
static int
preload_conv(int num_msg, const struct pam_message **msg,
    struct pam_response **resp, void *appdata)
{
	(void)num_msg;
	(void)msg;
	(void)resp;
	(void)appdata;
	return PAM_CONV_ERR;
}

void *
pam_stack_preload(const char *service)
{
	const struct pam_conv conv = { preload_conv, NULL };
	pam_handle_t *pamh = NULL;
	struct passwd pw, *res = NULL;
	char buf[1024];

	/* The passwd lookup of uid_allowed loads the NSS modules: load them
	 * here once, too (the answer itself does not matter). */
	(void)getpwnam_r("root", &pw, buf, sizeof(buf), &res);
	if (pam_start(service, NULL, &conv, &pamh) != PAM_SUCCESS) {
		if (pamh != NULL)
			pam_end(pamh, PAM_ABORT);
		return NULL;
	}
	return pamh;
}

void
pam_stack_release(void *stack)
{
	if (stack != NULL)
		pam_end(stack, PAM_SUCCESS);
}
