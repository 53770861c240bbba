/*
 * auth/pam_client.h - the event-loop side of PAM sign-in: asynchronous password
 * checks answered by vep-pam-helper, a separate process, and the further
 * questions PAM may ask (a second factor), relayed to the caller.
 *
 * Owns: asking a spawner for the helper (the key process in production,
 * auth/pam_spawn.h), noticing its death and asking again with backoff,
 * request ids, the queue of requests
 * waiting for a worker, a deadline per request, and cancellation. Results
 * arrive later through a callback, never from inside pam_client_start.
 *
 * Admission: at most max_workers attempts are at the helper at once; more
 * wait their turn here, first come first served, and are sent as workers
 * come free; with max_workers * PAM_CLIENT_PENDING_PER_WORKER already
 * waiting, a new request is answered BUSY at once. Deadlines: a request
 * that waited deadline_ms without a worker is answered TIMEOUT (PAM never
 * saw it); once sent, the helper's deadline applies, with the loop's
 * backstop at deadline_ms + PAM_CLIENT_BACKSTOP_SLACK_MS. Both restart at
 * every round of a conversation: while a prompt waits for
 * pam_client_answer they are answer_ms (+ slack), then deadline_ms (+
 * slack) again. So a request without prompts is answered within
 * 2 * deadline_ms + PAM_CLIENT_BACKSTOP_SLACK_MS, and each of at most
 * PAMP_ROUNDS_MAX prompts adds at most answer_ms + deadline_ms + slack.
 * When the helper dies, the attempts it held fail (ERROR) and the waiting
 * ones stay queued, in order, for the respawned helper.
 *
 * Conversations (OpenSSH's keyboard-interactive over PAM): the helper
 * answers the first echo-off prompt with the password; any other prompt
 * (a one-time code, an echo-on question) comes here. With
 * conversations set, the callback hears it (prompt = 1) and the attempt
 * waits, holding its worker, for pam_client_answer or pam_client_cancel;
 * without, the attempt fails AUTH_FAILED at once (the single-password
 * behaviour). Either way a request its caller is done with while a prompt
 * waits has its worker killed at once.
 *
 * Must never: block the loop (no waiting on the helper, no sleep), fork,
 * signal or reap the helper (the spawner does), include
 * PAM headers, log or keep a password or answer longer than it waits for
 * its turn and takes to hand to the helper (buffers are wiped; a cancelled
 * or timed out waiting request's at once), or decide HTTP answers: it
 * reports prompts, an outcome and PAM's requested fail delay;
 * auth/faildelay.h turns failures into a timer and the login handler maps
 * outcomes to statuses.
 */
#ifndef AUTHORITY_AUTH_PAM_CLIENT_H
#define AUTHORITY_AUTH_PAM_CLIENT_H

#include <stddef.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "pamhelper/proto.h"

struct event_base;
struct pam_client;

/* Extra time the loop gives the helper beyond the PAM deadline before its
 * own backstop answers TIMEOUT, in milliseconds. */
#define PAM_CLIENT_BACKSTOP_SLACK_MS 2000u
/* Helper respawn backoff: first delay and ceiling, in milliseconds; the delay
 * doubles after each death and resets once the helper answers. */
#define PAM_CLIENT_RESPAWN_MIN_MS 50u
#define PAM_CLIENT_RESPAWN_MAX_MS 5000u
/* Requests waiting for a worker, per allowed worker (beyond the
 * max_workers running); beyond it BUSY at once. */
#define PAM_CLIENT_PENDING_PER_WORKER 4u

/* Starts a helper (in production in the key process, keyproc/keeper.h,
 * which uses auth/pam_spawn.h) and hands over its socket: 0 with *fd and
 * *pid, or VEP_ERR_*. The client never signals or reaps the helper; the
 * spawner ends and reaps the previous one when asked for the next, and when
 * its channel closes. */
typedef int (*pam_client_spawn_fn)(void *arg, int *fd, pid_t *pid);

struct pam_client_config {
	pam_client_spawn_fn spawn;   /* required */
	void *spawn_arg;
	/* No defaults here: the authority fills these from its configuration
	 * (pam_service, pam_timeout, pam_workers, pam_min_uid). */
	const char *service;     /* PAM service name */
	uint32_t deadline_ms;    /* per attempt */
	uint32_t max_workers;    /* concurrent attempts in the helper */
	uint32_t min_uid;        /* lowest UID allowed; 0 disables the check */
	atomic_ulong *lost;      /* optional: incremented each time a helper dies or
	                          * misbehaves (it is then replaced); may be shared */
	uint32_t answer_ms;      /* how long a prompt waits for its answer: 0 = as
	                          * deadline_ms, else PAMP_ANSWER_MS_MIN..MAX */
	int conversations;       /* 1: prompts reach the callback (prompt = 1);
	                          * 0 (default): a prompt beyond the password fails
	                          * the attempt, and NEW_AUTHTOK reads ACCT_REFUSED */
};

/* What the callback receives. Pointers are borrowed for the call. */
struct pam_client_result {
	uint64_t id;
	enum pam_outcome outcome;  /* meaningless when prompt is 1 (AUTH_FAILED) */
	uint32_t pam_delay_us;   /* PAM_FAIL_DELAY requested by modules, 0 if none */
	int prompt;              /* 1: PAM asks text; the callback WILL be called
	                          * again for id after pam_client_answer */
	int echo;                /* prompt: 1 shown as typed, 0 a secret */
	const char *text;        /* prompt: NUL-terminated, cleaned (pamhelper/proto.h) */
	const char *notes;       /* NOTES bytes as received (pamhelper/proto.h), the
	                          * info and error texts since the previous call */
	size_t notes_len;        /* 0 (and notes NULL) when there are none */
};

/* Called once per started request with its outcome unless it was
 * cancelled (BUSY and TIMEOUT included), and, with conversations, before
 * that once per prompt (prompt = 1); r is borrowed for the call. The
 * callback may start, answer or cancel requests but must not free the
 * client. */
typedef void (*pam_client_cb)(const struct pam_client_result *r, void *arg);

/* Creates a client on base and asks for the helper. Returns 0 with *out set,
 * VEP_ERR_ARG (no spawn function, values outside PAMP_* ranges, service name
 * empty, too long or with '/'), VEP_ERR_NOMEM, or the spawn function's
 * error (the first helper could not be started). */
int pam_client_new(struct event_base *base, const struct pam_client_config *cfg,
    struct pam_client **out);

/* Starts one attempt: user (NUL-terminated, at most PAMP_USER_MAX_BYTES),
 * password (pwlen bytes, passed byte for byte, at most
 * PAMP_PASSWORD_MAX_BYTES, no NUL inside: PAM cannot carry one), rhost
 * (client address for PAM_RHOST, may be NULL). The password is copied into
 * a wiped buffer; the caller keeps and wipes its own. On 0 *id is the
 * request id and cb will be called once later: sent to the helper at once
 * when one of max_workers slots is free, else queued behind earlier ones
 * (BUSY, from the loop, when max_workers * PAM_CLIENT_PENDING_PER_WORKER
 * are already waiting; TIMEOUT after deadline_ms of waiting). Returns
 * VEP_ERR_INVALID (empty user, NUL in password), VEP_ERR_TOOBIG (a field over
 * its limit) or VEP_ERR_NOMEM, and then cb is never called. */
int pam_client_start(struct pam_client *pc, const char *user,
    const void *password, size_t pwlen, const char *rhost,
    pam_client_cb cb, void *arg, uint64_t *id);

/* Drops request id (its HTTP client went away): the callback will not be
 * called. A waiting one leaves the queue and never reaches PAM; one at the
 * helper runs on (its slot stays taken) and its result is discarded,
 * except one waiting for an answer: its worker is killed at once.
 * Returns 0 or VEP_ERR_INVALID when no such request is pending (already
 * answered or never started). */
int pam_client_cancel(struct pam_client *pc, uint64_t id);

/* Answers the prompt request id waits for (len bytes, passed byte for byte,
 * at most PAMP_PASSWORD_MAX_BYTES, no NUL inside), copied into a wiped
 * buffer; the caller keeps and wipes its own. The callback is called
 * later, never from inside. Returns 0, VEP_ERR_INVALID (id waits for no
 * answer: unknown, finished, cancelled, not asking; or a NUL inside),
 * VEP_ERR_TOOBIG or VEP_ERR_NOMEM. */
int pam_client_answer(struct pam_client *pc, uint64_t id, const void *answer, size_t len);

/* Pid of the running helper, 0 while it is down. For logs and tests. */
pid_t pam_client_helper_pid(const struct pam_client *pc);

/* Closes the helper's socket (the helper then ends; its spawner reaps it)
 * and frees everything; pending callbacks are not called. NULL-safe. */
void pam_client_free(struct pam_client *pc);

#endif
