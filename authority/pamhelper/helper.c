/*
 * pamhelper/helper.c - vep-pam-helper, the process that runs PAM for the
 * authority (OpenSSH's model: PAM never runs in the network process).
 *
 * Owns: the supervisor loop. It reads CONFIG, AUTH, ANSWER and CANCEL
 * frames from its socket (fd PAMP_HELPER_FD, set up by pam_client), forks
 * one short-lived worker per attempt with a socketpair to it, relays the
 * worker's further prompts (PROMPT out with the attempt's id, the client's
 * ANSWER back to the worker that waits for it; protocol in
 * pamhelper/proto.h), enforces each worker's deadline, restarted at every
 * round (deadline_ms while PAM works, answer_ms while a prompt waits;
 * SIGKILL of the worker's process group, then reaping it), kills a worker
 * on CANCEL, caps concurrent workers (BUSY beyond the cap), and sends
 * exactly one RESULT frame per AUTH frame. An attempt that took a worker is
 * answered only once that worker is reaped (a timed-out or cancelled one
 * too), so every such answer means a free slot: pam_client sends its next
 * waiting request on it and never meets BUSY.
 *
 * Must never: call PAM itself (pamhelper/worker.c does, in the worker),
 * block on a worker, log a password or an answer, pass on what a worker
 * sent without checking it (texts and notes as pamhelper/notes.h writes
 * them, at most PAMP_ROUNDS_MAX prompts, one at a time), or outlive the
 * authority: EOF on the socket kills every worker and exits;
 * PR_SET_PDEATHSIG covers a SIGKILL of the authority. Links libc, PAM
 * (through the worker) and ipc/ipc.c only.
 */
#include "pamhelper/helper.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "err.h"
#include "ipc/ipc.h"
#include "pamhelper/notes.h"
#include "pamhelper/proto.h"
#include "vep_version.h"

/* Nice value of the helper and so of every worker: a PAM attempt (fork,
 * the stack's setup, a module's own work) yields the CPU to the event loops,
 * so sign-ins add little latency to issuance or discovery (bench figure 3),
 * yet still get about a tenth of a busy machine rather than starving. */
#define HELPER_NICE 10

struct worker {
	pid_t pid;              /* 0: slot free */
	uint64_t id;
	int fd;                 /* our end of its socket, -1 once closed */
	int64_t deadline_ms;    /* monotonic; of the current round */
	int killed;             /* ended by us: killed_as is sent when reaped */
	uint32_t killed_as;     /* TIMEOUT, AUTH_FAILED (cancel) or ERROR */
	int asking;             /* its PROMPT went out; it waits for the ANSWER */
	unsigned rounds;        /* prompts relayed */
	struct ipc_msg *result; /* its RESULT, once read */
	struct ipc_buf in;
	struct ipc_buf out;     /* the ANSWER on its way (wiped as written) */
};

struct helper {
	int sock;
	int sigfd;
	int configured;
	struct pam_helper_config cfg;
	struct ipc_buf in, out;
	struct worker *workers; /* cfg.max_workers slots */
	uint32_t nworkers;
	void *stack;            /* pam_stack_preload's handle, or NULL */
};

static void helper_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Errors go to stderr, which the authority shares; never passwords. */
static void
helper_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("vep-pam-helper: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* libvep's vep_mono_ms, repeated: this process links no libvep (see
 * authority/meson.build). */
static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Queues a frame for the client; errors here mean no memory, after which
 * the helper cannot keep its promise of one answer per request: exit, and
 * the client fails everything pending and respawns us. */
static void
queue_for_client(struct helper *h, struct ipc_msg *m, int rc)
{
	if (m == NULL || rc != VEP_OK || ipc_msg_append_frame(m, &h->out) != VEP_OK) {
		helper_log("out of memory");
		exit(1);
	}
	ipc_msg_free(m);
}

/* Queues a RESULT; notes (n bytes, checked) may be NULL. */
static void
send_result(struct helper *h, uint64_t id, uint32_t outcome, uint32_t delay_us,
    const uint8_t *notes, size_t n)
{
	struct ipc_msg *m;
	int rc = VEP_ERR_NOMEM;

	m = ipc_msg_new(PAMP_MSG_RESULT);
	if (m != NULL && (rc = ipc_msg_put_u64(m, PAMP_TAG_ID, id)) == VEP_OK &&
	    (rc = ipc_msg_put_u32(m, PAMP_TAG_OUTCOME, outcome)) == VEP_OK &&
	    (rc = ipc_msg_put_u32(m, PAMP_TAG_DELAY_US, delay_us)) == VEP_OK &&
	    notes != NULL)
		rc = ipc_msg_put(m, PAMP_TAG_NOTES, notes, n);
	queue_for_client(h, m, rc);
}

static void
kill_worker(struct worker *w)
{
	/* The group takes module children (pam_exec scripts) with it. */
	kill(-w->pid, SIGKILL);
	kill(w->pid, SIGKILL);
}

/* Ends w's attempt now: killed, reported as outcome once reaped (its
 * slot stays taken until then, so the cap also counts dying workers). */
static void
end_worker(struct worker *w, uint32_t outcome)
{
	if (w->killed)
		return;
	kill_worker(w);
	w->killed = 1;
	w->killed_as = outcome;
	w->asking = 0;
}

static void
close_worker_fd(struct worker *w)
{
	if (w->fd >= 0)
		close(w->fd);
	w->fd = -1;
}

static void
drain_worker(struct worker *w)
{
	int eof = 0;

	while (w->fd >= 0) {
		size_t before = w->in.len;

		if (ipc_buf_read_fd(&w->in, w->fd, &eof) != 0 || eof) {
			close_worker_fd(w);
			break;
		}
		if (w->in.len == before)
			break;
	}
}

/* Sends what w's socket takes of the ANSWER waiting for it. A worker that
 * does not read it is past caring: its deadline ends it. */
static void
flush_worker(struct worker *w)
{
	if (w->fd >= 0 && w->out.len > 0 && ipc_buf_write_fd(&w->out, w->fd) != VEP_OK)
		ipc_buf_clear(&w->out);
}

/* w's PROMPT, checked, goes to the client with the attempt's id; w's
 * deadline becomes the answer's. */
static void
forward_prompt(struct helper *h, struct worker *w, const struct ipc_msg *m)
{
	const uint8_t *text, *notes = NULL;
	size_t tlen, nlen = 0;
	uint32_t style;
	struct ipc_msg *out;
	int rc = VEP_ERR_NOMEM;

	if (w->asking || w->result != NULL ||
	    ipc_msg_get_u32(m, PAMP_TAG_STYLE, &style) != VEP_OK ||
	    (style != PAMP_STYLE_ECHO_OFF && style != PAMP_STYLE_ECHO_ON) ||
	    ipc_msg_get(m, PAMP_TAG_TEXT, &text, &tlen) != VEP_OK || !pamp_text_ok(text, tlen) ||
	    (ipc_msg_get(m, PAMP_TAG_NOTES, &notes, &nlen) == VEP_OK &&
	    !pamp_notes_ok(notes, nlen))) {
		helper_log("worker sent a malformed prompt");
		end_worker(w, PAM_OUTCOME_ERROR);
		return;
	}
	/* The worker counts too; a second count keeps the promise even for
	 * a worker a module has corrupted. */
	if (++w->rounds > PAMP_ROUNDS_MAX) {
		end_worker(w, PAM_OUTCOME_AUTH_FAILED);
		return;
	}
	out = ipc_msg_new(PAMP_MSG_PROMPT);
	if (out != NULL && (rc = ipc_msg_put_u64(out, PAMP_TAG_ID, w->id)) == VEP_OK &&
	    (rc = ipc_msg_put_u32(out, PAMP_TAG_STYLE, style)) == VEP_OK &&
	    (rc = ipc_msg_put(out, PAMP_TAG_TEXT, text, tlen)) == VEP_OK && notes != NULL)
		rc = ipc_msg_put(out, PAMP_TAG_NOTES, notes, nlen);
	queue_for_client(h, out, rc);
	w->asking = 1;
	w->deadline_ms = now_ms() + h->cfg.answer_ms;
}

/* Takes w's complete frames: PROMPTs are relayed (unless forward is 0: the
 * worker is dead and nobody will answer), the RESULT is kept for the reap.
 * Anything else, or anything after the RESULT, ends the worker (ERROR). */
static void
take_worker_frames(struct helper *h, struct worker *w, int forward)
{
	struct ipc_msg *m = NULL;

	while (!w->killed) {
		if (ipc_take_msg(&w->in, &m) != VEP_OK) {
			end_worker(w, PAM_OUTCOME_ERROR);
			break;
		}
		if (m == NULL)
			break;
		if (ipc_msg_type(m) == PAMP_MSG_PROMPT && forward) {
			forward_prompt(h, w, m);
		} else if (ipc_msg_type(m) == PAMP_MSG_RESULT && w->result == NULL && !w->asking) {
			w->result = m;
			m = NULL;
		} else if (forward) {
			helper_log("worker sent an unexpected frame");
			end_worker(w, PAM_OUTCOME_ERROR);
		}
		ipc_msg_free(m);
		m = NULL;
	}
}

/* What a worker that ended by itself reported: its RESULT, checked, or
 * ERROR if it died without a well-formed one (a crashing module). */
static void
report_worker(struct helper *h, const struct worker *w)
{
	const uint8_t *notes = NULL;
	size_t nlen = 0;
	uint32_t outcome = PAM_OUTCOME_ERROR, delay_us = 0;
	const struct ipc_msg *m = w->result;

	if (m == NULL || ipc_msg_get_u32(m, PAMP_TAG_OUTCOME, &outcome) != VEP_OK ||
	    outcome >= PAM_OUTCOME_COUNT ||
	    (ipc_msg_get(m, PAMP_TAG_NOTES, &notes, &nlen) == VEP_OK &&
	    !pamp_notes_ok(notes, nlen))) {
		helper_log("worker ended without a result");
		send_result(h, w->id, PAM_OUTCOME_ERROR, 0, NULL, 0);
		return;
	}
	(void)ipc_msg_get_u32(m, PAMP_TAG_DELAY_US, &delay_us);
	send_result(h, w->id, outcome, delay_us, notes, nlen);
}

/* Frees w's slot and everything it held. */
static void
clear_worker(struct worker *w)
{
	close_worker_fd(w);
	ipc_msg_free(w->result);
	ipc_buf_clear(&w->in);
	ipc_buf_clear(&w->out);
	memset(w, 0, sizeof(*w));
	w->fd = -1;
}

/* A reaped worker: forward what it reported, or what we ended it for. */
static void
finish_worker(struct helper *h, struct worker *w)
{
	drain_worker(w);
	take_worker_frames(h, w, 0);
	if (w->killed)
		send_result(h, w->id, w->killed_as, 0, NULL, 0);
	else
		report_worker(h, w);
	kill(-w->pid, SIGKILL);   /* leftovers of its group, if any */
	clear_worker(w);
	h->nworkers--;
}

static int
is_worker(const struct helper *h, pid_t pid)
{
	uint32_t i;

	for (i = 0; i < h->cfg.max_workers; i++)
		if (h->workers[i].pid == pid)
			return 1;
	return 0;
}

/* Parent pid of pid from /proc/<pid>/stat, or -1. */
static pid_t
parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (f == NULL)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	/* The command name may contain anything: parse after the last ')'. */
	p = p ? strrchr(buf, ')') : NULL;
	if (p == NULL || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return -1;
	return (pid_t)ppid;
}

/* Kills every child of the helper that is not a worker. The helper is a
 * child subreaper, so processes a module started (pam_exec's script, which
 * runs in its own session out of reach of the worker's group kill) are
 * reparented to us when their worker dies; nothing a module started may
 * outlive its attempt. Killing one may orphan its own children, which the
 * next reap sweeps in turn. */
static void
kill_orphan(const struct helper *h, pid_t pid)
{
	if (pid <= 0 || pid == getpid() || is_worker(h, pid))
		return;
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
}

/* Every pid of /proc whose parent is the helper: the slow way, for kernels
 * without /proc/<pid>/task/<tid>/children (CONFIG_PROC_CHILDREN). */
static void
sweep_orphans_scan(const struct helper *h)
{
	pid_t self = getpid();
	struct dirent *de;
	DIR *d;

	d = opendir("/proc");
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)atoi(de->d_name);
		if (parent_of(pid) == self)
			kill_orphan(h, pid);
	}
	closedir(d);
}

static void
sweep_orphans(const struct helper *h)
{
	char path[64];
	FILE *f;
	long pid;

	/* One read of our own children list (the helper is single-threaded)
	 * instead of a stat of every process: this runs after every attempt. */
	snprintf(path, sizeof(path), "/proc/self/task/%d/children", (int)getpid());
	f = fopen(path, "re");
	if (f == NULL) {
		sweep_orphans_scan(h);
		return;
	}
	while (fscanf(f, "%ld", &pid) == 1)
		kill_orphan(h, (pid_t)pid);
	fclose(f);
}

static void
reap_workers(struct helper *h)
{
	pid_t pid;
	uint32_t i;
	int st, reaped = 0;

	while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
		reaped = 1;
		for (i = 0; i < h->cfg.max_workers; i++) {
			if (h->workers[i].pid == pid) {
				finish_worker(h, &h->workers[i]);
				break;
			}
		}
	}
	if (reaped)
		sweep_orphans(h);
}

/* In the forked child: become a worker and run the attempt (which arms
 * the worker's own alarm). */
static void
become_worker(struct helper *h, const struct pam_attempt *a, int fd)
{
	sigset_t all;

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	signal(SIGPIPE, SIG_DFL);
	/* Modules get no way to the authority's socket or siblings' sockets. */
	if (fd > PAMP_HELPER_FD)
		close_range(PAMP_HELPER_FD, (unsigned)fd - 1, 0);
	close_range((unsigned)fd + 1, ~0u, 0);
	pam_worker_run(&h->cfg, a, fd);
}

/* Names PAM must never be asked about, refused before a worker exists. */
static int
user_acceptable(const char *user)
{
	static const char *const refused[] = { "root" };
	size_t i;
	const unsigned char *p;

	if (user[0] == '\0')
		return 0;
	for (p = (const unsigned char *)user; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return 0;
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		if (strcmp(user, refused[i]) == 0)
			return 0;
	return 1;
}

/* The live worker of request id, or NULL. */
static struct worker *
find_worker(struct helper *h, uint64_t id)
{
	uint32_t i;

	for (i = 0; h->configured && i < h->cfg.max_workers; i++)
		if (h->workers[i].pid != 0 && h->workers[i].id == id)
			return &h->workers[i];
	return NULL;
}

static struct worker *
free_slot(struct helper *h)
{
	uint32_t i;

	for (i = 0; i < h->cfg.max_workers; i++)
		if (h->workers[i].pid == 0)
			return &h->workers[i];
	return NULL;
}

static int
handle_auth(struct helper *h, const struct ipc_msg *m)
{
	struct pam_attempt a = { 0 };
	struct worker *w;
	char *user = NULL, *password = NULL, *rhost = NULL;
	uint64_t id;
	uint32_t outcome = PAM_OUTCOME_ERROR;
	int sv[2] = { -1, -1 };
	pid_t pid;
	int rc;

	/* Without an id there is nobody to answer: the stream is broken. */
	rc = ipc_msg_get_u64(m, PAMP_TAG_ID, &id);
	if (rc == VEP_OK && !h->configured)
		rc = VEP_ERR_INVALID;
	if (rc != VEP_OK)
		goto out;
	if (ipc_msg_get_str(m, PAMP_TAG_USER, PAMP_USER_MAX_BYTES, &user) != 0 ||
	    ipc_msg_get_str(m, PAMP_TAG_PASSWORD, PAMP_PASSWORD_MAX_BYTES, &password) != 0) {
		outcome = PAM_OUTCOME_AUTH_FAILED;
		goto answer;
	}
	{
		const uint8_t *p;
		size_t n;

		if (ipc_msg_get(m, PAMP_TAG_RHOST, &p, &n) == 0 &&
		    ipc_msg_get_str(m, PAMP_TAG_RHOST, PAMP_RHOST_MAX_BYTES, &rhost) != 0)
			goto answer;
	}
	if (!user_acceptable(user)) {
		outcome = PAM_OUTCOME_USER_REFUSED;
		goto answer;
	}
	w = free_slot(h);
	if (w == NULL) {
		outcome = PAM_OUTCOME_BUSY;
		goto answer;
	}
	/* Both ends close on exec: a module's programs get neither. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
		goto answer;
	a.user = user;
	a.password = password;
	a.pwlen = strlen(password);
	a.rhost = rhost;
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		goto answer;
	if (pid == 0) {
		close(sv[0]);
		become_worker(h, &a, sv[1]);
	}
	/* Also here, so the group exists before any deadline can fire. */
	setpgid(pid, pid);
	close(sv[1]);
	sv[1] = -1;
	fcntl(sv[0], F_SETFL, O_NONBLOCK);
	w->pid = pid;
	w->id = id;
	w->fd = sv[0];
	sv[0] = -1;
	w->deadline_ms = now_ms() + h->cfg.deadline_ms;
	h->nworkers++;
	rc = VEP_OK;
	goto out;
answer:
	send_result(h, id, outcome, 0, NULL, 0);
	rc = VEP_OK;
out:
	if (sv[0] >= 0)
		close(sv[0]);
	if (sv[1] >= 0)
		close(sv[1]);
	free(user);
	if (password != NULL) {
		explicit_bzero(password, strlen(password));
		free(password);
	}
	free(rhost);
	return rc;
}

/* The client's answer to a PROMPT: to the worker waiting for it, whose
 * deadline is PAM's again. */
static int
handle_answer(struct helper *h, const struct ipc_msg *m)
{
	struct ipc_msg *fwd;
	struct worker *w;
	const uint8_t *p;
	size_t n;
	uint64_t id;

	if (!h->configured || ipc_msg_get_u64(m, PAMP_TAG_ID, &id) != VEP_OK)
		return VEP_ERR_INVALID;
	w = find_worker(h, id);
	if (w == NULL || !w->asking || w->killed) {
		/* A late answer (the worker timed out, was cancelled): the
		 * client could not know yet. Never its content. */
		helper_log("answer for request %llu, which waits for none: ignored",
		    (unsigned long long)id);
		return VEP_OK;
	}
	if (ipc_msg_get(m, PAMP_TAG_ANSWER, &p, &n) != VEP_OK || n > PAMP_PASSWORD_MAX_BYTES ||
	    memchr(p, '\0', n) != NULL) {
		end_worker(w, PAM_OUTCOME_AUTH_FAILED);
		return VEP_OK;
	}
	fwd = ipc_msg_new(PAMP_MSG_ANSWER);
	if (fwd == NULL || ipc_msg_put(fwd, PAMP_TAG_ANSWER, p, n) != VEP_OK ||
	    ipc_msg_append_frame(fwd, &w->out) != VEP_OK)
		end_worker(w, PAM_OUTCOME_ERROR);
	ipc_msg_free(fwd);
	if (w->killed)
		return VEP_OK;
	w->asking = 0;
	w->deadline_ms = now_ms() + h->cfg.deadline_ms;
	flush_worker(w);
	return VEP_OK;
}

/* The client gave up on a request (its user went away): its worker, if it
 * still runs, is killed now rather than at its deadline. */
static int
handle_cancel(struct helper *h, const struct ipc_msg *m)
{
	struct worker *w;
	uint64_t id;

	if (!h->configured || ipc_msg_get_u64(m, PAMP_TAG_ID, &id) != VEP_OK)
		return VEP_ERR_INVALID;
	if ((w = find_worker(h, id)) != NULL)
		end_worker(w, PAM_OUTCOME_AUTH_FAILED);
	return VEP_OK;
}

static int
handle_config(struct helper *h, const struct ipc_msg *m)
{
	struct pam_helper_config c = { 0 };
	int rc = VEP_ERR_INVALID;

	if (h->configured)
		goto out;
	if (ipc_msg_get_str(m, PAMP_TAG_SERVICE, PAMP_SERVICE_MAX_BYTES, &c.service) != 0 ||
	    c.service[0] == '\0' || strchr(c.service, '/') != NULL ||
	    ipc_msg_get_u32(m, PAMP_TAG_DEADLINE_MS, &c.deadline_ms) != 0 ||
	    ipc_msg_get_u32(m, PAMP_TAG_MAX_WORKERS, &c.max_workers) != 0 ||
	    ipc_msg_get_u32(m, PAMP_TAG_MIN_UID, &c.min_uid) != 0)
		goto out;
	/* Absent (an older client): a prompt waits as long as PAM may work. */
	if (ipc_msg_get_u32(m, PAMP_TAG_ANSWER_MS, &c.answer_ms) != VEP_OK)
		c.answer_ms = c.deadline_ms;
	else if (c.answer_ms < PAMP_ANSWER_MS_MIN || c.answer_ms > PAMP_ANSWER_MS_MAX)
		goto out;
	if (c.deadline_ms < PAMP_DEADLINE_MS_MIN || c.deadline_ms > PAMP_DEADLINE_MS_MAX ||
	    c.max_workers < 1 || c.max_workers > PAMP_MAX_WORKERS_MAX)
		goto out;
	h->workers = calloc(c.max_workers, sizeof(*h->workers));
	if (h->workers == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < c.max_workers; i++)
		h->workers[i].fd = -1;
	h->cfg = c;
	c.service = NULL;
	h->configured = 1;
	h->stack = pam_stack_preload(h->cfg.service);
	rc = VEP_OK;
out:
	free(c.service);
	return rc;
}

/* Frame types the helper accepts, and who handles them. */
static const struct {
	uint8_t type;
	int (*handle)(struct helper *, const struct ipc_msg *);
} helper_handlers[] = {
	{ PAMP_MSG_CONFIG, handle_config },
	{ PAMP_MSG_AUTH, handle_auth },
	{ PAMP_MSG_ANSWER, handle_answer },
	{ PAMP_MSG_CANCEL, handle_cancel },
};

static int
dispatch(struct helper *h, const struct ipc_msg *m)
{
	size_t i;

	for (i = 0; i < sizeof(helper_handlers) / sizeof(helper_handlers[0]); i++)
		if (helper_handlers[i].type == ipc_msg_type(m))
			return helper_handlers[i].handle(h, m);
	return VEP_ERR_INVALID;
}

/* Returns 0 to go on, 1 at EOF, negative on a protocol or I/O error. */
static int
read_socket(struct helper *h)
{
	struct ipc_msg *m = NULL;
	int eof = 0, rc;

	rc = ipc_buf_read_fd(&h->in, h->sock, &eof);
	if (rc != VEP_OK)
		return rc;
	for (;;) {
		rc = ipc_take_msg(&h->in, &m);
		if (rc != VEP_OK || m == NULL)
			break;
		rc = dispatch(h, m);
		ipc_msg_free(m);
		m = NULL;
		if (rc != VEP_OK)
			break;
	}
	if (rc != VEP_OK)
		return rc;
	return eof ? 1 : 0;
}

static void
enforce_deadlines(struct helper *h, int64_t now)
{
	uint32_t i;

	for (i = 0; i < h->cfg.max_workers; i++) {
		struct worker *w = &h->workers[i];

		if (w->pid == 0 || w->killed || now < w->deadline_ms)
			continue;
		/* TIMEOUT is sent when it is reaped (SIGCHLD, a moment after
		 * SIGKILL), so the answer means the slot is free. */
		end_worker(w, PAM_OUTCOME_TIMEOUT);
	}
}

/* A worker's socket is ready: the ANSWER out, its frames in. */
static void
worker_ready(struct helper *h, struct worker *w, short revents)
{
	if (revents & POLLOUT)
		flush_worker(w);
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		drain_worker(w);
		take_worker_frames(h, w, 1);
	}
}

static int
poll_timeout(const struct helper *h, int64_t now)
{
	int64_t next = -1;
	uint32_t i;

	for (i = 0; i < h->cfg.max_workers; i++) {
		const struct worker *w = &h->workers[i];

		if (w->pid == 0 || w->killed)
			continue;
		if (next < 0 || w->deadline_ms < next)
			next = w->deadline_ms;
	}
	if (next < 0)
		return -1;
	return next <= now ? 0 : (int)(next - now);
}

static void
shutdown_workers(struct helper *h)
{
	uint32_t i;

	for (i = 0; i < h->cfg.max_workers; i++) {
		if (h->workers[i].pid == 0)
			continue;
		kill_worker(&h->workers[i]);
		waitpid(h->workers[i].pid, NULL, 0);
		clear_worker(&h->workers[i]);
	}
	sweep_orphans(h);
}

static int
setup(struct helper *h)
{
	sigset_t set;

	if (fcntl(PAMP_HELPER_FD, F_GETFD) < 0) {
		helper_log("no socket on fd %d: run only by the authority", PAMP_HELPER_FD);
		return VEP_ERR_ARG;
	}
	h->sock = PAMP_HELPER_FD;
	fcntl(h->sock, F_SETFD, FD_CLOEXEC);
	fcntl(h->sock, F_SETFL, O_NONBLOCK);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	/* Passwords pass through here and through every worker (which
	 * inherits both): never in a core file, never readable by ptrace. */
	{
		struct rlimit none = { 0, 0 };

		if (setrlimit(RLIMIT_CORE, &none) != 0 || prctl(PR_SET_DUMPABLE, 0) != 0)
			helper_log("cannot disable core dumps and tracing: %s", strerror(errno));
	}
	/* The authority may be gone already (we were reparented). */
	if (getppid() == 1)
		return VEP_ERR_IO;
	if (setpriority(PRIO_PROCESS, 0, HELPER_NICE) != 0)
		helper_log("cannot lower the helper's priority: %s", strerror(errno));
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	if (sigprocmask(SIG_BLOCK, &set, NULL) != 0)
		return VEP_ERR_IO;
	h->sigfd = signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
	return h->sigfd < 0 ? VEP_ERR_IO : VEP_OK;
}

static int
run(struct helper *h)
{
	struct pollfd *pfds = NULL;
	uint32_t *slot_of = NULL;
	int rc = VEP_OK;

	for (;;) {
		size_t n = 0, cap = 2 + (h->configured ? h->cfg.max_workers : 0);
		uint32_t i;
		int ready;

		free(pfds);
		free(slot_of);
		pfds = calloc(cap, sizeof(*pfds));
		slot_of = calloc(cap, sizeof(*slot_of));
		if (pfds == NULL || slot_of == NULL) {
			rc = VEP_ERR_NOMEM;
			goto out;
		}
		pfds[n].fd = h->sock;
		pfds[n++].events = (short)(POLLIN | (h->out.len ? POLLOUT : 0));
		pfds[n].fd = h->sigfd;
		pfds[n++].events = POLLIN;
		for (i = 0; h->configured && i < h->cfg.max_workers; i++) {
			if (h->workers[i].pid == 0 || h->workers[i].fd < 0)
				continue;
			slot_of[n] = i;
			pfds[n].fd = h->workers[i].fd;
			pfds[n++].events = (short)(POLLIN | (h->workers[i].out.len ? POLLOUT : 0));
		}
		ready = poll(pfds, n, h->configured ? poll_timeout(h, now_ms()) : -1);
		if (ready < 0 && errno != EINTR) {
			rc = VEP_ERR_IO;
			goto out;
		}
		if (ready > 0) {
			for (i = 2; i < n; i++)
				if (pfds[i].revents)
					worker_ready(h, &h->workers[slot_of[i]], pfds[i].revents);
			if (pfds[1].revents & POLLIN) {
				struct signalfd_siginfo si;

				while (read(h->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
					;
			}
			if (pfds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
				rc = read_socket(h);
				if (rc != VEP_OK)
					goto out;
			}
		}
		if (h->configured) {
			reap_workers(h);
			enforce_deadlines(h, now_ms());
		}
		if (h->out.len && ipc_buf_write_fd(&h->out, h->sock) != VEP_OK) {
			rc = VEP_ERR_IO;
			goto out;
		}
	}
out:
	free(pfds);
	free(slot_of);
	return rc;
}

/* Run by hand (a terminal, arguments, or no socket where the authority puts
 * one): say what this program is instead of reading a protocol from
 * whatever descriptor 3 happens to be. */
static int
started_by_authority(int argc)
{
	int type = 0, family = 0;
	socklen_t len = sizeof(type);

	if (argc != 1 || isatty(STDIN_FILENO))
		return 0;
	if (getsockopt(PAMP_HELPER_FD, SOL_SOCKET, SO_TYPE, &type, &len) != 0 ||
	    type != SOCK_STREAM)
		return 0;
	len = sizeof(family);
	return getsockopt(PAMP_HELPER_FD, SOL_SOCKET, SO_DOMAIN, &family, &len) == 0 &&
	    family == AF_UNIX;
}

int
main(int argc, char **argv)
{
	struct helper h = { .sock = -1, .sigfd = -1 };
	int rc;

	/* The authority starts it with no argument; an administrator may ask
	 * which build sits next to the server. */
	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		printf("vep-pam-helper %s\n", VEP_VERSION);
		return 0;
	}
	if (!started_by_authority(argc)) {
		fprintf(stderr,
		    "usage: vep-pam-helper [--version]\n"
		    "vep-pam-helper checks passwords with PAM for vep-authority: it is "
		    "started by\n"
		    "vep-authority's key process, with a socket on descriptor %d, and is "
		    "not meant\n"
		    "to be run by hand. To check a PAM service, run vep-authority --check.\n",
		    PAMP_HELPER_FD);
		return 2;
	}
	rc = setup(&h);
	if (rc == VEP_OK)
		rc = run(&h);
	/* rc 1 is the authority closing the socket: a normal end. */
	if (rc < 0 && rc != VEP_ERR_IO)
		helper_log("stopping: protocol error from the authority (%d)", rc);
	if (h.configured)
		shutdown_workers(&h);
	pam_stack_release(h.stack);
	ipc_buf_clear(&h.in);
	ipc_buf_clear(&h.out);
	free(h.workers);
	free(h.cfg.service);
	if (h.sigfd >= 0)
		close(h.sigfd);
	return rc < 0 ? 1 : 0;
}
