/*
 * auth/pam_client.c - the event-loop side of PAM sign-in (contract in
 * auth/pam_client.h).
 *
 * Owns: the helper's lifecycle as its user sees it (asking the spawner for
 * one, death noticed as EOF or misbehaviour, respawn with backoff), the request
 * table (ids, deadlines, cancellation), the waiting queue, the rounds of a
 * conversation (PROMPT to the callback, pam_client_answer back; the
 * backstop restarted at each), and the wire to the helper.
 *
 * The queue: at most max_workers requests are at the helper at once (its
 * cap, so it never has to answer BUSY), counting those whose caller is done
 * with them (answered by the backstop, cancelled) until the helper's answer
 * says their worker is gone; the rest wait here, in order of arrival, and
 * are sent as answers come back. The helper answers only once the worker's
 * slot is free (pamhelper/helper.c), so an answer always makes room.
 *
 * Must never: block the loop (writes are non-blocking through a queue),
 * signal or reap the helper (the spawner's: auth/pam_spawn.h), call a callback
 * from inside pam_client_start or pam_client_answer, leave a password or an
 * answer in memory it frees (request frames and the output queue are wiped
 * as they drain), or leave a worker waiting for an answer nobody will give:
 * a request its caller is done with while its worker asks is CANCELled in
 * the helper at once.
 */
#include "auth/pam_client.h"

#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <unistd.h>

#include <event2/event.h>

#include "err.h"
#include "ipc/ipc.h"
#include "secmem.h"

/* Where a request is. */
enum pam_req_state {
	REQ_BUSY,                /* refused at start: BUSY from the loop, at once */
	REQ_WAITING,             /* in the queue (or the helper is down) */
	REQ_SENT,                /* at the helper, caller waiting */
	REQ_ORPHAN,              /* at the helper, caller done with it: it holds a
	                          * worker slot until the helper answers */
};

struct pam_req {
	TAILQ_ENTRY(pam_req) link;   /* pc->reqs: every request */
	TAILQ_ENTRY(pam_req) qlink;  /* pc->waiting, while REQ_WAITING */
	struct pam_client *pc;
	uint64_t id;
	pam_client_cb cb;            /* NULL once orphaned */
	void *arg;
	struct event *timer;     /* BUSY now; queue deadline; backstop */
	enum pam_req_state state;
	int asking;              /* REQ_SENT: its worker waits for an answer */
	struct ipc_buf frame;    /* AUTH frame while not yet sent; wiped */
};

TAILQ_HEAD(pam_req_list, pam_req);

struct pam_client {
	struct event_base *base;
	char *service;
	uint32_t deadline_ms;
	uint32_t answer_ms;      /* 0: not sent, the helper uses deadline_ms */
	uint32_t max_workers;
	uint32_t min_uid;
	int conversations;       /* prompts go to the callback (else refused) */
	atomic_ulong *lost;      /* borrowed, may be NULL (pam_client_config) */

	pid_t pid;               /* running helper, 0 when down */
	pam_client_spawn_fn spawn; /* starts the helper; it also ends and reaps it */
	void *spawn_arg;
	int fd;
	struct event *ev_read;
	struct event *ev_write;
	struct ipc_buf in;
	struct ipc_buf out;

	struct event *ev_respawn;
	uint32_t backoff_ms;

	struct pam_req_list reqs;
	struct pam_req_list waiting; /* REQ_WAITING, oldest first */
	size_t nwaiting;
	size_t nheld;            /* REQ_SENT + REQ_ORPHAN: the helper's busy slots */
	uint64_t next_id;
};

static void helper_lost(struct pam_client *pc);
static int helper_spawn(struct pam_client *pc);

static void
req_free(struct pam_req *r)
{
	if (r == NULL)
		return;
	if (r->timer)
		event_free(r->timer);
	ipc_buf_clear(&r->frame);
	vep_memzero(r, sizeof(*r));
	free(r);
}

static void
ms_to_tv(uint32_t ms, struct timeval *tv)
{
	tv->tv_sec = ms / 1000;
	tv->tv_usec = (suseconds_t)(ms % 1000) * 1000;
}

/* Takes r out of every count and list and frees it. */
static void
req_remove(struct pam_client *pc, struct pam_req *r)
{
	TAILQ_REMOVE(&pc->reqs, r, link);
	if (r->state == REQ_WAITING) {
		TAILQ_REMOVE(&pc->waiting, r, qlink);
		pc->nwaiting--;
	}
	if (r->state == REQ_SENT || r->state == REQ_ORPHAN)
		pc->nheld--;
	req_free(r);
}

static void
want_write(struct pam_client *pc)
{
	if (pc->pid != 0 && pc->ev_write != NULL && pc->out.len > 0)
		event_add(pc->ev_write, NULL);
}

/* Asks the helper to end request id's worker now. */
static int
queue_cancel(struct pam_client *pc, uint64_t id)
{
	struct ipc_msg *m;
	int rc = VEP_ERR_NOMEM;

	m = ipc_msg_new(PAMP_MSG_CANCEL);
	if (m != NULL && (rc = ipc_msg_put_u64(m, PAMP_TAG_ID, id)) == VEP_OK)
		rc = ipc_msg_append_frame(m, &pc->out);
	ipc_msg_free(m);
	if (rc == VEP_OK)
		want_write(pc);
	return rc;
}

/* A sent request's backstop, for the round it is in: the helper answers
 * within its own deadline of that round, this only if it does not. */
static void
arm_backstop(struct pam_client *pc, struct pam_req *r)
{
	struct timeval tv;
	uint32_t ms = r->asking && pc->answer_ms ? pc->answer_ms : pc->deadline_ms;

	ms_to_tv(ms + PAM_CLIENT_BACKSTOP_SLACK_MS, &tv);
	evtimer_add(r->timer, &tv);
}

/* The caller is done with r (answered without the helper, or cancelled).
 * One the helper holds stays, muted, until its answer frees the slot; if
 * its worker waits for an answer, the helper is told to end it now. */
static void
req_forget(struct pam_client *pc, struct pam_req *r)
{
	if (r->state != REQ_SENT) {
		req_remove(pc, r);
		return;
	}
	/* Without memory for the CANCEL the helper's answer deadline ends
	 * the worker instead: later, never wrongly. */
	if (r->asking)
		(void)queue_cancel(pc, r->id);
	r->state = REQ_ORPHAN;
	r->asking = 0;
	r->cb = NULL;
	r->arg = NULL;
	evtimer_del(r->timer);
}

/* Calls r's callback with its final outcome (notes: n bytes as received,
 * may be NULL); afterwards r is gone (freed, or an orphan when the helper
 * still holds it and released is 0). */
static void
deliver(struct pam_req *r, enum pam_outcome outcome, uint32_t delay_us,
    const uint8_t *notes, size_t n, int released)
{
	struct pam_client *pc = r->pc;
	struct pam_client_result res = {
		.id = r->id, .outcome = outcome, .pam_delay_us = delay_us,
		.notes = (const char *)notes, .notes_len = notes != NULL ? n : 0,
	};
	pam_client_cb cb = r->cb;
	void *arg = r->arg;

	if (released)
		req_remove(pc, r);
	else
		req_forget(pc, r);
	cb(&res, arg);
}

static struct pam_req *
find_req(struct pam_client *pc, uint64_t id)
{
	struct pam_req *r;

	TAILQ_FOREACH(r, &pc->reqs, link) {
		if (r->id == id)
			return r;
	}
	return NULL;
}

static void
req_timer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pam_req *r = arg;

	(void)fd;
	(void)what;
	/* BUSY decided at start, delivered from the loop; or the queue
	 * deadline (no worker came free in deadline_ms: nothing was tried);
	 * or the backstop (the helper did not answer in deadline + slack). */
	deliver(r, r->state == REQ_BUSY ? PAM_OUTCOME_BUSY : PAM_OUTCOME_TIMEOUT, 0,
	    NULL, 0, 0);
}

/* Moves waiting r's frame into the output queue of the running helper; its
 * timer becomes the backstop. */
static int
send_req(struct pam_client *pc, struct pam_req *r)
{
	int rc;

	rc = ipc_buf_append(&pc->out, r->frame.data, r->frame.len);
	if (rc != VEP_OK)
		return rc;
	ipc_buf_clear(&r->frame);
	TAILQ_REMOVE(&pc->waiting, r, qlink);
	pc->nwaiting--;
	r->state = REQ_SENT;
	pc->nheld++;
	arm_backstop(pc, r);
	want_write(pc);
	return VEP_OK;
}

/* Sends waiting requests, oldest first, while the helper has free slots. */
static void
pump(struct pam_client *pc)
{
	struct pam_req *r;

	while (pc->pid != 0 && pc->ev_write != NULL && pc->nheld < pc->max_workers &&
	    (r = TAILQ_FIRST(&pc->waiting)) != NULL)
		if (send_req(pc, r) != VEP_OK)
			break;   /* out of memory: its queue deadline answers */
}

static void
handle_result(struct pam_client *pc, const struct ipc_msg *m)
{
	struct pam_req *r;
	const uint8_t *notes = NULL;
	size_t nlen = 0;
	uint64_t id;
	uint32_t outcome, delay_us = 0;

	if (ipc_msg_get_u64(m, PAMP_TAG_ID, &id) != VEP_OK ||
	    ipc_msg_get_u32(m, PAMP_TAG_OUTCOME, &outcome) != VEP_OK ||
	    outcome >= PAM_OUTCOME_COUNT)
		return;
	(void)ipc_msg_get_u32(m, PAMP_TAG_DELAY_US, &delay_us);
	/* Optional: absent, or over its cap (the helper checks what it
	 * sends), the caller sees none. */
	if (ipc_msg_get(m, PAMP_TAG_NOTES, &notes, &nlen) != VEP_OK ||
	    nlen > PAMP_NOTES_MAX_BYTES)
		notes = NULL;
	/* A caller that cannot ask for a new password hears what it heard
	 * before the outcome existed: the account is refused. */
	if (outcome == PAM_OUTCOME_NEW_AUTHTOK && !pc->conversations)
		outcome = PAM_OUTCOME_ACCT_REFUSED;
	/* The helper answers: it is healthy, so the next death starts the
	 * backoff from the bottom again. */
	pc->backoff_ms = PAM_CLIENT_RESPAWN_MIN_MS;
	r = find_req(pc, id);
	if (r == NULL || (r->state != REQ_SENT && r->state != REQ_ORPHAN))
		return;
	/* Its worker is gone: the slot is free for the next in line. */
	if (r->state == REQ_ORPHAN)
		req_remove(pc, r);   /* cancelled, or answered by the backstop */
	else
		deliver(r, (enum pam_outcome)outcome, delay_us, notes, nlen, 1);
	pump(pc);
}

/* A PROMPT's fields: 0, or -1 when the helper sent something malformed. */
static int
prompt_fields(const struct ipc_msg *m, uint32_t *style, char **text,
    const uint8_t **notes, size_t *nlen)
{
	*notes = NULL;
	*nlen = 0;
	*text = NULL;
	if (ipc_msg_get_u32(m, PAMP_TAG_STYLE, style) != VEP_OK ||
	    (*style != PAMP_STYLE_ECHO_OFF && *style != PAMP_STYLE_ECHO_ON) ||
	    ipc_msg_get_str(m, PAMP_TAG_TEXT, PAMP_TEXT_MAX_BYTES, text) != VEP_OK)
		return -1;
	if (ipc_msg_get(m, PAMP_TAG_NOTES, notes, nlen) != VEP_OK)
		*notes = NULL;
	else if (*nlen > PAMP_NOTES_MAX_BYTES)
		return -1;
	return 0;
}

/* PAM asks a further question for request id. With conversations on, the
 * callback hears it and the request waits for pam_client_answer under the
 * answer's backstop; otherwise (or when malformed) the attempt ends here
 * and its worker in the helper. */
static void
handle_prompt(struct pam_client *pc, const struct ipc_msg *m)
{
	struct pam_client_result res = { 0 };
	struct pam_req *r;
	const uint8_t *notes;
	size_t nlen;
	char *text = NULL;
	uint32_t style;
	uint64_t id;
	int ok;

	if (ipc_msg_get_u64(m, PAMP_TAG_ID, &id) != VEP_OK)
		return;
	r = find_req(pc, id);
	if (r == NULL || (r->state != REQ_SENT && r->state != REQ_ORPHAN))
		return;
	if (r->state == REQ_ORPHAN) {
		/* Nobody will answer: free the worker now. Without memory
		 * the helper's answer deadline does. */
		(void)queue_cancel(pc, id);
		return;
	}
	ok = prompt_fields(m, &style, &text, &notes, &nlen) == 0 && !r->asking;
	r->asking = 1;
	if (!ok || !pc->conversations) {
		/* req_forget sends the CANCEL. */
		deliver(r, ok ? PAM_OUTCOME_AUTH_FAILED : PAM_OUTCOME_ERROR, 0, NULL, 0, 0);
		free(text);
		return;
	}
	arm_backstop(pc, r);
	res.id = id;
	/* Not an outcome: a caller that misses the flag fails closed. */
	res.outcome = PAM_OUTCOME_AUTH_FAILED;
	res.prompt = 1;
	res.echo = style == PAMP_STYLE_ECHO_ON;
	res.text = text;
	res.notes = (const char *)notes;
	res.notes_len = notes != NULL ? nlen : 0;
	/* r may be answered, cancelled or orphaned inside: not touched after. */
	r->cb(&res, r->arg);
	free(text);
}

static void
read_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pam_client *pc = arg;
	struct ipc_msg *m = NULL;
	int eof = 0, rc;

	(void)what;
	rc = ipc_buf_read_fd(&pc->in, fd, &eof);
	while (rc == VEP_OK) {
		rc = ipc_take_msg(&pc->in, &m);
		if (rc != VEP_OK || m == NULL)
			break;
		if (ipc_msg_type(m) == PAMP_MSG_RESULT)
			handle_result(pc, m);
		else if (ipc_msg_type(m) == PAMP_MSG_PROMPT)
			handle_prompt(pc, m);
		else
			rc = VEP_ERR_INVALID;
		ipc_msg_free(m);
		m = NULL;
	}
	if (rc != VEP_OK || eof)
		helper_lost(pc);
}

static void
write_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pam_client *pc = arg;

	(void)what;
	if (ipc_buf_write_fd(&pc->out, fd) != VEP_OK) {
		helper_lost(pc);
		return;
	}
	if (pc->out.len == 0)
		event_del(pc->ev_write);
}

static void
respawn_cb(evutil_socket_t fd, short what, void *arg)
{
	struct pam_client *pc = arg;
	struct timeval tv;

	(void)fd;
	(void)what;
	if (pc->pid != 0 || helper_spawn(pc) == VEP_OK)
		return;
	ms_to_tv(pc->backoff_ms, &tv);
	pc->backoff_ms = pc->backoff_ms * 2 > PAM_CLIENT_RESPAWN_MAX_MS ?
	    PAM_CLIENT_RESPAWN_MAX_MS : pc->backoff_ms * 2;
	event_add(pc->ev_respawn, &tv);
}

static void
close_channel(struct pam_client *pc)
{
	if (pc->ev_read) {
		event_free(pc->ev_read);
		pc->ev_read = NULL;
	}
	if (pc->ev_write) {
		event_free(pc->ev_write);
		pc->ev_write = NULL;
	}
	if (pc->fd >= 0)
		close(pc->fd);
	pc->fd = -1;
	ipc_buf_clear(&pc->in);
	ipc_buf_clear(&pc->out);
}

/* The helper is gone or misbehaved: drop it, fail what it held, respawn. */
static void
helper_lost(struct pam_client *pc)
{
	struct pam_req *r;
	struct timeval tv;

	close_channel(pc);
	if (pc->lost != NULL)
		atomic_fetch_add_explicit(pc->lost, 1, memory_order_relaxed);
	/* Not our child: the spawner ends and reaps it when asked for the
	 * next one (it sees its socket closed). */
	pc->pid = 0;
	/* What it held fails (ERROR; orphans just go); waiting requests stay
	 * queued, in order, for the next helper, each still under its queue
	 * deadline. Callbacks may start new requests; those wait, so the
	 * scan ends. */
	for (;;) {
		TAILQ_FOREACH(r, &pc->reqs, link) {
			if (r->state == REQ_SENT || r->state == REQ_ORPHAN)
				break;
		}
		if (r == NULL)
			break;
		if (r->state == REQ_ORPHAN)
			req_remove(pc, r);
		else
			deliver(r, PAM_OUTCOME_ERROR, 0, NULL, 0, 1);
	}
	if (!event_pending(pc->ev_respawn, EV_TIMEOUT, NULL)) {
		ms_to_tv(pc->backoff_ms, &tv);
		event_add(pc->ev_respawn, &tv);
		pc->backoff_ms = pc->backoff_ms * 2 > PAM_CLIENT_RESPAWN_MAX_MS ?
		    PAM_CLIENT_RESPAWN_MAX_MS : pc->backoff_ms * 2;
	}
}

static int
queue_config(struct pam_client *pc)
{
	struct ipc_msg *m;
	int rc = VEP_ERR_NOMEM;

	m = ipc_msg_new(PAMP_MSG_CONFIG);
	if (m == NULL)
		goto out;
	if ((rc = ipc_msg_put_str(m, PAMP_TAG_SERVICE, pc->service)) != VEP_OK ||
	    (rc = ipc_msg_put_u32(m, PAMP_TAG_DEADLINE_MS, pc->deadline_ms)) != VEP_OK ||
	    (rc = ipc_msg_put_u32(m, PAMP_TAG_MAX_WORKERS, pc->max_workers)) != VEP_OK ||
	    (rc = ipc_msg_put_u32(m, PAMP_TAG_MIN_UID, pc->min_uid)) != VEP_OK ||
	    (pc->answer_ms != 0 &&
	    (rc = ipc_msg_put_u32(m, PAMP_TAG_ANSWER_MS, pc->answer_ms)) != VEP_OK))
		goto out;
	rc = ipc_msg_append_frame(m, &pc->out);
out:
	ipc_msg_free(m);
	return rc;
}

static int
helper_spawn(struct pam_client *pc)
{
	int fd = -1;
	pid_t pid = 0;
	int rc;

	rc = pc->spawn(pc->spawn_arg, &fd, &pid);
	if (rc != VEP_OK)
		return rc;
	pc->fd = fd;
	pc->pid = pid;
	if (evutil_make_socket_nonblocking(pc->fd) != 0)
		goto lost;
	pc->ev_read = event_new(pc->base, pc->fd, EV_READ | EV_PERSIST, read_cb, pc);
	pc->ev_write = event_new(pc->base, pc->fd, EV_WRITE | EV_PERSIST, write_cb, pc);
	if (pc->ev_read == NULL || pc->ev_write == NULL ||
	    event_add(pc->ev_read, NULL) != 0 || queue_config(pc) != VEP_OK)
		goto lost;
	pump(pc);
	want_write(pc);
	return VEP_OK;
lost:
	/* Counted as a death: backoff and respawn as for a crash. */
	helper_lost(pc);
	return VEP_OK;
}

int
pam_client_new(struct event_base *base, const struct pam_client_config *cfg,
    struct pam_client **out)
{
	struct pam_client *pc = NULL;
	int rc = VEP_ERR_ARG;

	*out = NULL;
	if (base == NULL || cfg == NULL || cfg->spawn == NULL || cfg->service == NULL ||
	    cfg->service[0] == '\0' || strlen(cfg->service) > PAMP_SERVICE_MAX_BYTES ||
	    strchr(cfg->service, '/') != NULL ||
	    cfg->deadline_ms < PAMP_DEADLINE_MS_MIN || cfg->deadline_ms > PAMP_DEADLINE_MS_MAX ||
	    cfg->max_workers < 1 || cfg->max_workers > PAMP_MAX_WORKERS_MAX ||
	    (cfg->answer_ms != 0 &&
	    (cfg->answer_ms < PAMP_ANSWER_MS_MIN || cfg->answer_ms > PAMP_ANSWER_MS_MAX)))
		goto out;
	rc = VEP_ERR_NOMEM;
	pc = calloc(1, sizeof(*pc));
	if (pc == NULL)
		goto out;
	TAILQ_INIT(&pc->reqs);
	TAILQ_INIT(&pc->waiting);
	pc->fd = -1;
	pc->base = base;
	pc->deadline_ms = cfg->deadline_ms;
	pc->max_workers = cfg->max_workers;
	pc->min_uid = cfg->min_uid;
	pc->answer_ms = cfg->answer_ms;
	pc->conversations = cfg->conversations != 0;
	pc->lost = cfg->lost;
	pc->backoff_ms = PAM_CLIENT_RESPAWN_MIN_MS;
	pc->next_id = 1;
	pc->service = strdup(cfg->service);
	pc->spawn = cfg->spawn;
	pc->spawn_arg = cfg->spawn_arg;
	pc->ev_respawn = evtimer_new(base, respawn_cb, pc);
	if (pc->service == NULL || pc->ev_respawn == NULL)
		goto out;
	rc = helper_spawn(pc);
	if (rc != VEP_OK)
		goto out;
	*out = pc;
	pc = NULL;
out:
	pam_client_free(pc);
	return rc;
}

int
pam_client_start(struct pam_client *pc, const char *user,
    const void *password, size_t pwlen, const char *rhost,
    pam_client_cb cb, void *arg, uint64_t *id)
{
	struct pam_req *r = NULL;
	struct ipc_msg *m = NULL;
	struct timeval tv;
	uint32_t wait_ms;
	int rc;

	*id = 0;
	rc = VEP_ERR_ARG;
	if (pc == NULL || user == NULL || (password == NULL && pwlen) || cb == NULL)
		goto out;
	rc = VEP_ERR_INVALID;
	if (user[0] == '\0' || (pwlen && memchr(password, '\0', pwlen) != NULL))
		goto out;
	rc = VEP_ERR_TOOBIG;
	if (strlen(user) > PAMP_USER_MAX_BYTES || pwlen > PAMP_PASSWORD_MAX_BYTES ||
	    (rhost != NULL && strlen(rhost) > PAMP_RHOST_MAX_BYTES))
		goto out;
	rc = VEP_ERR_NOMEM;
	r = calloc(1, sizeof(*r));
	if (r == NULL)
		goto out;
	r->pc = pc;
	r->id = pc->next_id++;
	r->cb = cb;
	r->arg = arg;
	r->state = REQ_WAITING;
	r->timer = evtimer_new(pc->base, req_timer_cb, r);
	if (r->timer == NULL)
		goto out;
	/* The queue deadline: a request that no worker took up within
	 * deadline_ms gets TIMEOUT (sending it restarts the timer as the
	 * backstop), so an answer comes within 2 * deadline + slack. */
	wait_ms = pc->deadline_ms;
	if (pc->nwaiting >= (size_t)pc->max_workers * PAM_CLIENT_PENDING_PER_WORKER) {
		/* Answered from the loop, not from here: callers never see
		 * their callback run inside their own call. The queue is
		 * full only when no slot is free (pump keeps it empty
		 * otherwise). */
		r->state = REQ_BUSY;
		wait_ms = 0;
	} else {
		m = ipc_msg_new(PAMP_MSG_AUTH);
		if (m == NULL)
			goto out;
		if ((rc = ipc_msg_put_u64(m, PAMP_TAG_ID, r->id)) != VEP_OK ||
		    (rc = ipc_msg_put_str(m, PAMP_TAG_USER, user)) != VEP_OK ||
		    (rc = ipc_msg_put(m, PAMP_TAG_PASSWORD, password, pwlen)) != VEP_OK ||
		    (rhost != NULL &&
		    (rc = ipc_msg_put_str(m, PAMP_TAG_RHOST, rhost)) != VEP_OK) ||
		    (rc = ipc_msg_append_frame(m, &r->frame)) != VEP_OK)
			goto out;
	}
	ms_to_tv(wait_ms, &tv);
	rc = VEP_ERR_NOMEM;
	if (evtimer_add(r->timer, &tv) != 0)
		goto out;
	TAILQ_INSERT_TAIL(&pc->reqs, r, link);
	if (r->state == REQ_WAITING) {
		TAILQ_INSERT_TAIL(&pc->waiting, r, qlink);
		pc->nwaiting++;
	}
	*id = r->id;
	r = NULL;
	pump(pc);
	rc = VEP_OK;
out:
	ipc_msg_free(m);
	req_free(r);
	return rc;
}

int
pam_client_cancel(struct pam_client *pc, uint64_t id)
{
	struct pam_req *r;

	if (pc == NULL || (r = find_req(pc, id)) == NULL || r->state == REQ_ORPHAN)
		return VEP_ERR_INVALID;
	/* A waiting one leaves the queue (never sent); a sent one keeps its
	 * slot until the helper answers (at once when its worker was asking:
	 * req_forget has it killed). */
	req_forget(pc, r);
	return VEP_OK;
}

int
pam_client_answer(struct pam_client *pc, uint64_t id, const void *answer, size_t len)
{
	struct pam_req *r;
	struct ipc_msg *m;
	int rc;

	if (pc == NULL || (answer == NULL && len))
		return VEP_ERR_ARG;
	r = find_req(pc, id);
	if (r == NULL || r->state != REQ_SENT || !r->asking ||
	    (len && memchr(answer, '\0', len) != NULL))
		return VEP_ERR_INVALID;
	if (len > PAMP_PASSWORD_MAX_BYTES)
		return VEP_ERR_TOOBIG;
	/* Copied into the message and the output queue, both wiped when
	 * released or drained. */
	rc = VEP_ERR_NOMEM;
	m = ipc_msg_new(PAMP_MSG_ANSWER);
	if (m != NULL && (rc = ipc_msg_put_u64(m, PAMP_TAG_ID, id)) == VEP_OK &&
	    (rc = ipc_msg_put(m, PAMP_TAG_ANSWER, len ? answer : "", len)) == VEP_OK)
		rc = ipc_msg_append_frame(m, &pc->out);
	ipc_msg_free(m);
	if (rc != VEP_OK)
		return rc;
	/* PAM works again: its deadline is the backstop's. */
	r->asking = 0;
	arm_backstop(pc, r);
	want_write(pc);
	return VEP_OK;
}

pid_t
pam_client_helper_pid(const struct pam_client *pc)
{
	return pc ? pc->pid : 0;
}

void
pam_client_free(struct pam_client *pc)
{
	struct pam_req *r;

	if (pc == NULL)
		return;
	while ((r = TAILQ_FIRST(&pc->reqs)) != NULL) {
		TAILQ_REMOVE(&pc->reqs, r, link);
		req_free(r);
	}
	close_channel(pc);
	if (pc->ev_respawn)
		event_free(pc->ev_respawn);
	free(pc->service);
	free(pc);
}
