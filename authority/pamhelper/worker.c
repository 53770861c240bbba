/*
 * pamhelper/worker.c - one PAM attempt, in a short-lived forked worker of
 * vep-pam-helper.
 *
 * Owns: the PAM transaction (pam_start .. pam_end), the conversation
 * function, the PAM_FAIL_DELAY hook, and the checks after PAM said yes
 * (PAM_USER unchanged, UID policy). This is the ONLY file in the project
 * that includes security/pam_appl.h.
 *
 * Must never: sleep for PAM's fail delay (it is captured and returned so the
 * event loop answers after a timer), log or keep the password, answer an
 * echo-on prompt with the password, or return to the supervisor loop: the
 * process ends with _exit() so nothing inherited (atexit handlers, stdio
 * buffers of the parent) runs twice.
 */
#include "pamhelper/helper.h"

#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <security/pam_appl.h>

#include "ipc/ipc.h"
#include "pamhelper/proto.h"

/* Buffer for getpwnam_r, in bytes; entries larger than this count as
 * absent, which the UID policy then refuses when a minimum is set. */
#define WORKER_PWBUF_BYTES 16384

struct conv_state {
	const char *password;
	size_t pwlen;
	unsigned messages;     /* all messages seen in this attempt */
	int flooded;           /* more than PAMP_CONV_MAX_MESSAGES */
	int refused;           /* a prompt we will not answer (echo on, unknown) */
	unsigned delay_us;     /* largest PAM_FAIL_DELAY request */
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

/* The conversation: the password for each echo-off prompt, nothing for
 * informational messages, and failure for anything else. An echo-on prompt
 * asks for something we do not have (a username, an OTP); answering it with
 * the password would disclose it to whatever displays echo-on text. */
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
	for (i = 0; i < num_msg; i++) {
		switch (msg[i]->msg_style) {
		case PAM_PROMPT_ECHO_OFF:
			r[i].resp = malloc(st->pwlen + 1);
			if (r[i].resp == NULL) {
				rc = PAM_BUF_ERR;
				goto out;
			}
			memcpy(r[i].resp, st->password, st->pwlen + 1);
			break;
		case PAM_TEXT_INFO:
		case PAM_ERROR_MSG:
			break;
		default:
			st->refused = 1;
			goto out;
		}
	}
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
	int rc;

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
	if (rc != PAM_SUCCESS)
		goto out;

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
	outcome = PAM_OUTCOME_OK;
out:
	if (pamh != NULL)
		pam_end(pamh, rc);
	return outcome;
}

void
pam_worker_run(const struct pam_helper_config *cfg,
    const struct pam_attempt *a, int result_fd)
{
	struct conv_state st = { .password = a->password, .pwlen = a->pwlen };
	struct ipc_buf out = { 0 };
	struct ipc_msg *m = NULL;
	enum pam_outcome outcome;
	int status = 1;

	outcome = run_pam(cfg, a, &st);
	m = ipc_msg_new(PAMP_MSG_RESULT);
	if (m == NULL ||
	    ipc_msg_put_u32(m, PAMP_TAG_OUTCOME, (uint32_t)outcome) != 0 ||
	    ipc_msg_put_u32(m, PAMP_TAG_DELAY_US, st.delay_us) != 0 ||
	    ipc_msg_append_frame(m, &out) != 0)
		goto out;
	/* The pipe is blocking and the frame far below PIPE_BUF: one write. */
	if (ipc_buf_write_fd(&out, result_fd) != 0 || out.len != 0)
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
