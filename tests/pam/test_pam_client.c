/*
 * test_pam_client.c - pam_client (authority/auth/pam_client.c) in a real libevent
 * loop against the real vep-pam-helper under pam_wrapper: real libpam, real
 * modules (pam_matrix, pam_exec, pam_deny, pam_faildelay, pam_chatty, and
 * tests/pam/pam_vep_test.so), nss_wrapper for the UID policy. Besides the
 * password: conversations (further prompts relayed to the caller, their
 * notes, rounds, deadlines and cancellation) and expired passwords.
 *
 * Usage: test_pam_client <vep-pam-helper> <pam_vep_test.so>
 * Exits 77 when libpam_wrapper.so is not installed. Helpers are started
 * and ended as the key process does, through auth/pam_spawn.h (one struct
 * pam_spawn per client, as per loop channel there). The wrapper variables
 * are given to the helper only (pam_spawn's extra_env), never to this
 * process.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "harness.h"
#include "err.h"
#include "auth/pam_client.h"
#include "auth/pam_spawn.h"

#define LIBDIR "/usr/lib/x86_64-linux-gnu"
#define PAM_WRAPPER_LIB LIBDIR "/libpam_wrapper.so"
#define NSS_WRAPPER_LIB LIBDIR "/libnss_wrapper.so"
#define WRAPPER_MODULES LIBDIR "/pam_wrapper"
#define SYSTEM_MODULES LIBDIR "/security"

/* Longest any single attempt may take in these tests before we give up
 * waiting, in milliseconds (a safety net, never expected to fire). */
#define TEST_WAIT_MAX_MS 20000
/* Clients alive at once in one test. */
#define TEST_CLIENTS_MAX 8

struct ctx {
	struct event_base *base;
	char *helper;
	char *module;
	char dir[64];
	char path[256];
	char *env_plain[10];
	char *env_nss[10];
	/* Each live client's spawner (its helper's starter and reaper). */
	struct {
		struct pam_client *pc;
		struct pam_spawn sp;
	} clients[TEST_CLIENTS_MAX];
};

static struct ctx T;

struct outcome {
	int done;
	struct pam_client_result r;
	int64_t at_ms;
};

static int64_t
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
on_result(const struct pam_client_result *r, void *arg)
{
	struct outcome *o = arg;

	o->done++;
	o->r = *r;
	o->at_ms = now_ms();
}

static void
loop_until(struct outcome *const *os, size_t n, int64_t max_ms)
{
	int64_t end = now_ms() + max_ms;
	size_t i, done;

	for (;;) {
		for (i = 0, done = 0; i < n; i++)
			done += os[i]->done ? 1 : 0;
		if (done == n || now_ms() >= end)
			return;
		event_base_loop(T.base, EVLOOP_ONCE);
	}
}

static void
loop_for(int64_t ms)
{
	struct timeval tv = { (time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000 };

	event_base_loopexit(T.base, &tv);
	event_base_dispatch(T.base);
}

static const char *
file(const char *name)
{
	snprintf(T.path, sizeof(T.path), "%s/%s", T.dir, name);
	return T.path;
}

static int
write_file(const char *name, const char *text, size_t n, mode_t mode)
{
	FILE *f = fopen(file(name), "wb");

	if (f == NULL || fwrite(text, 1, n, f) != n) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	return chmod(file(name), mode);
}

/* A client with c's settings (its spawner filled in here), helpers
 * started with env. */
static struct pam_client *
client_new(struct pam_client_config *c, char **env)
{
	struct pam_client *pc = NULL;
	size_t i;

	for (i = 0; i < TEST_CLIENTS_MAX && T.clients[i].pc != NULL; i++)
		;
	if (i == TEST_CLIENTS_MAX)
		return NULL;
	memset(&T.clients[i].sp, 0, sizeof(T.clients[i].sp));
	T.clients[i].sp.helper_path = T.helper;
	T.clients[i].sp.extra_env = (const char *const *)env;
	c->spawn = pam_spawn_next;
	c->spawn_arg = &T.clients[i].sp;
	if (pam_client_new(T.base, c, &pc) != 0) {
		pam_spawn_end(&T.clients[i].sp, 0);
		return NULL;
	}
	T.clients[i].pc = pc;
	return pc;
}

static struct pam_client *
client(const char *service, uint32_t deadline_ms,
    uint32_t max_workers, uint32_t min_uid, char **env)
{
	struct pam_client_config c;

	memset(&c, 0, sizeof(c));
	c.service = service;
	c.deadline_ms = deadline_ms;
	c.max_workers = max_workers;
	c.min_uid = min_uid;
	return client_new(&c, env);
}

/* A client that takes part in conversations (or not: conversations 0);
 * answer_ms as pam_client_config's. */
static struct pam_client *
client_conv(const char *service, uint32_t deadline_ms, uint32_t max_workers,
    uint32_t answer_ms, int conversations)
{
	struct pam_client_config c;

	memset(&c, 0, sizeof(c));
	c.service = service;
	c.deadline_ms = deadline_ms;
	c.max_workers = max_workers;
	c.answer_ms = answer_ms;
	c.conversations = conversations;
	return client_new(&c, T.env_plain);
}

/* pam_client_free, then what the key process does when the loop's channel
 * closes: the helper gets its grace period to end, and is reaped. */
static void
client_free(struct pam_client *pc)
{
	size_t i;

	pam_client_free(pc);
	for (i = 0; pc != NULL && i < TEST_CLIENTS_MAX; i++) {
		if (T.clients[i].pc == pc) {
			pam_spawn_end(&T.clients[i].sp, PAM_SPAWN_STOP_GRACE_MS);
			T.clients[i].pc = NULL;
		}
	}
}

/* One attempt, run to completion. Returns the outcome; *ms the time taken. */
static int
attempt(struct pam_client *pc, const char *user, const char *pw,
    size_t pwlen, const char *rhost, struct outcome *o)
{
	struct outcome *list[1] = { o };
	uint64_t id;
	int64_t t0 = now_ms();

	memset(o, 0, sizeof(*o));
	if (pam_client_start(pc, user, pw, pwlen, rhost, on_result, o, &id) != 0)
		return -1;
	loop_until(list, 1, TEST_WAIT_MAX_MS);
	if (!o->done)
		return -2;
	o->at_ms -= t0;
	return (int)o->r.outcome;
}

static int
auth(struct pam_client *pc, const char *user, const char *pw)
{
	struct outcome o;

	return attempt(pc, user, pw, strlen(pw), "198.51.100.1", &o);
}

static int
read_text(const char *name, char *buf, size_t n)
{
	FILE *f = fopen(file(name), "r");
	size_t got;

	if (f == NULL)
		return -1;
	got = fread(buf, 1, n - 1, f);
	buf[got] = '\0';
	fclose(f);
	return 0;
}

static void
test_basic(void)
{
	struct pam_client *pc = client("vep-test", 5000, 4, 0, T.env_plain);
	char seen[4096] = "";
	struct outcome o;

	ASSERT_TRUE(pc != NULL);
	ASSERT_TRUE(pam_client_helper_pid(pc) > 0);
	ASSERT_EQ(auth(pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_EQ(auth(pc, "alice", "correct horsE"), PAM_OUTCOME_AUTH_FAILED);
	ASSERT_EQ(auth(pc, "alice", "correct horse "), PAM_OUTCOME_AUTH_FAILED);
	ASSERT_EQ(auth(pc, "alice", ""), PAM_OUTCOME_AUTH_FAILED);
	ASSERT_EQ(auth(pc, "nobody-here", "correct horse"), PAM_OUTCOME_AUTH_FAILED);
	/* root has a valid passdb entry, and is refused before PAM runs. */
	ASSERT_EQ(auth(pc, "root", "rootpw"), PAM_OUTCOME_USER_REFUSED);
	ASSERT_EQ(read_text("seen_users", seen, sizeof(seen)), 0);
	ASSERT_TRUE(strstr(seen, "alice\n") != NULL);
	ASSERT_TRUE(strstr(seen, "root") == NULL);
	/* PAM_RHOST reaches the modules. */
	ASSERT_EQ(attempt(pc, "rhostcheck", "pw", 2, "203.0.113.9", &o), PAM_OUTCOME_OK);
	ASSERT_EQ(read_text("rhost", seen, sizeof(seen)), 0);
	ASSERT_STREQ(seen, "203.0.113.9\n");
	client_free(pc);
}

static void
test_argument_limits(void)
{
	struct pam_client *pc = client("vep-test", 5000, 4, 0, T.env_plain);
	char *big = malloc(PAMP_PASSWORD_MAX_BYTES + 2);
	char user[PAMP_USER_MAX_BYTES + 2];
	struct pam_client_config c;
	struct pam_client *bad = NULL;
	struct pam_spawn sp;
	uint64_t id = 99;
	struct outcome o = { 0 };

	ASSERT_TRUE(pc != NULL && big != NULL);
	memset(big, 'a', PAMP_PASSWORD_MAX_BYTES + 1);
	ASSERT_EQ(pam_client_start(pc, "alice", big, PAMP_PASSWORD_MAX_BYTES + 1,
	    NULL, on_result, &o, &id), VEP_ERR_TOOBIG);
	ASSERT_EQ(id, 0);
	ASSERT_EQ(pam_client_start(pc, "alice", "a\0b", 3, NULL, on_result, &o, &id),
	    VEP_ERR_INVALID);
	ASSERT_EQ(pam_client_start(pc, "", "x", 1, NULL, on_result, &o, &id), VEP_ERR_INVALID);
	memset(user, 'u', sizeof(user) - 1);
	user[sizeof(user) - 1] = '\0';
	ASSERT_EQ(pam_client_start(pc, user, "x", 1, NULL, on_result, &o, &id), VEP_ERR_TOOBIG);
	memset(big, 'h', PAMP_RHOST_MAX_BYTES + 1);
	big[PAMP_RHOST_MAX_BYTES + 1] = '\0';
	ASSERT_EQ(pam_client_start(pc, "alice", "x", 1, big, on_result, &o, &id), VEP_ERR_TOOBIG);
	loop_for(100);
	ASSERT_EQ(o.done, 0);   /* refused starts never call back */
	user[PAMP_USER_MAX_BYTES] = '\0';   /* exactly at the limits: accepted */
	big[PAMP_RHOST_MAX_BYTES] = '\0';
	ASSERT_EQ(attempt(pc, user, "x", 1, big, &o), PAM_OUTCOME_AUTH_FAILED);
	client_free(pc);
	free(big);

	memset(&c, 0, sizeof(c));
	c.service = "vep-test";
	c.max_workers = 1;
	c.deadline_ms = 1000;
	ASSERT_EQ(pam_client_new(T.base, &c, &bad), VEP_ERR_ARG);   /* no spawner */
	memset(&sp, 0, sizeof(sp));
	sp.helper_path = T.helper;
	c.spawn = pam_spawn_next;
	c.spawn_arg = &sp;
	c.deadline_ms = PAMP_DEADLINE_MS_MIN - 1;
	ASSERT_EQ(pam_client_new(T.base, &c, &bad), VEP_ERR_ARG);
	c.deadline_ms = PAMP_DEADLINE_MS_MAX + 1;
	ASSERT_EQ(pam_client_new(T.base, &c, &bad), VEP_ERR_ARG);
	c.deadline_ms = 1000;
	c.max_workers = 0;
	ASSERT_EQ(pam_client_new(T.base, &c, &bad), VEP_ERR_ARG);
	c.max_workers = PAMP_MAX_WORKERS_MAX + 1;
	ASSERT_EQ(pam_client_new(T.base, &c, &bad), VEP_ERR_ARG);
	c.max_workers = 1;
	c.service = "../etc/passwd";
	ASSERT_EQ(pam_client_new(T.base, &c, &bad), VEP_ERR_ARG);
	c.service = "vep-test";
	sp.helper_path = "/nonexistent/vep-pam-helper";
	ASSERT_EQ(pam_client_new(T.base, &c, &bad), VEP_ERR_IO);
	ASSERT_TRUE(bad == NULL);
	ASSERT_EQ(sp.pid, 0);
}

static void
fill_password(char *p, size_t n)
{
	static const char pattern[] = "Correct Horse battery STAPLE ~!@#$%^&*()_+ ";
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = pattern[i % (sizeof(pattern) - 1)];
	p[n] = '\0';
}

static void
test_long_passwords(void)
{
	struct pam_client *matrix = client("vep-test", 5000, 4, 0, T.env_plain);
	struct pam_client *exact = client("vep-exact", 5000, 4, 0, T.env_plain);
	char *pw = malloc(PAMP_PASSWORD_MAX_BYTES + 1);
	struct outcome o;

	ASSERT_TRUE(matrix != NULL && exact != NULL && pw != NULL);
	/* 1024 bytes through pam_matrix (its own limit is 1024). */
	fill_password(pw, 1024);
	ASSERT_EQ(attempt(matrix, "longpw", pw, 1024, NULL, &o), PAM_OUTCOME_OK);
	pw[1000] = 'x';
	ASSERT_EQ(attempt(matrix, "longpw", pw, 1024, NULL, &o), PAM_OUTCOME_AUTH_FAILED);
	/* 4000 bytes, checked byte for byte by pam_vep_test.so. */
	fill_password(pw, 4000);
	ASSERT_EQ(attempt(exact, "alice", pw, 4000, NULL, &o), PAM_OUTCOME_OK);
	ASSERT_EQ(attempt(exact, "alice", pw, 3999, NULL, &o), PAM_OUTCOME_AUTH_FAILED);
	pw[3999] = 'X';   /* a space became a capital: case and spaces count */
	ASSERT_EQ(attempt(exact, "alice", pw, 4000, NULL, &o), PAM_OUTCOME_AUTH_FAILED);
	client_free(matrix);
	client_free(exact);
	free(pw);
}

static void
test_account_refused(void)
{
	struct pam_client *pc = client("vep-acct", 5000, 4, 0, T.env_plain);

	ASSERT_TRUE(pc != NULL);
	ASSERT_EQ(auth(pc, "alice", "correct horse"), PAM_OUTCOME_ACCT_REFUSED);
	ASSERT_EQ(auth(pc, "alice", "wrong"), PAM_OUTCOME_AUTH_FAILED);
	client_free(pc);
}

struct ticker {
	struct event *ev;
	int64_t last_ms;
	int64_t max_gap_ms;
	int ticks;
};

static void
tick(evutil_socket_t fd, short what, void *arg)
{
	struct ticker *t = arg;
	int64_t now = now_ms();

	(void)fd;
	(void)what;
	if (t->last_ms && now - t->last_ms > t->max_gap_ms)
		t->max_gap_ms = now - t->last_ms;
	t->last_ms = now;
	t->ticks++;
}

static int
proc_alive(pid_t pid)
{
	char path[64], buf[256], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (f == NULL)
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	return p != NULL && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
}

/* A module that hangs: TIMEOUT at the deadline, the hung script killed,
 * and a 50 ms timer in the same loop keeps its pace meanwhile. Also the
 * concurrency cap: a third attempt with both workers busy waits its turn
 * and runs once a killed worker's slot is free. */
static void
test_hang_timeout_and_queue(void)
{
	struct pam_client *pc = client("vep-test", 1000, 2, 0, T.env_plain);
	struct ticker tk = { 0 };
	struct timeval every = { 0, 50 * 1000 };
	struct outcome a, b, c;
	struct outcome *both[2] = { &a, &b }, *third[1] = { &c };
	uint64_t id;
	int64_t t0;
	char pidtext[32] = "";
	pid_t sleeper;
	int started, inside;

	ASSERT_TRUE(pc != NULL);
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	memset(&c, 0, sizeof(c));
	ASSERT_EQ(pam_client_start(pc, "sleeper", "pw", 2, NULL, on_result, &a, &id), 0);
	ASSERT_EQ(pam_client_start(pc, "sleeper", "pw", 2, NULL, on_result, &b, &id), 0);
	t0 = now_ms();
	tk.ev = event_new(T.base, -1, EV_PERSIST, tick, &tk);
	ASSERT_TRUE(tk.ev != NULL);
	event_add(tk.ev, &every);
	loop_for(600);
	started = pam_client_start(pc, "alice", "correct horse", 13, NULL, on_result, &c, &id);
	inside = c.done;
	loop_until(both, 2, TEST_WAIT_MAX_MS);
	loop_until(third, 1, TEST_WAIT_MAX_MS);
	/* The ticker must be gone before any assertion can return early. */
	event_free(tk.ev);
	ASSERT_EQ(started, 0);
	ASSERT_EQ(inside, 0);   /* never called back inside start */
	ASSERT_EQ(c.done, 1);
	ASSERT_EQ(c.r.outcome, PAM_OUTCOME_OK);
	/* It waited for a slot: answered after the first timeout. */
	ASSERT_TRUE(c.at_ms >= a.at_ms || c.at_ms >= b.at_ms);
	ASSERT_EQ(a.done, 1);
	ASSERT_EQ(b.done, 1);
	ASSERT_EQ(a.r.outcome, PAM_OUTCOME_TIMEOUT);
	ASSERT_EQ(b.r.outcome, PAM_OUTCOME_TIMEOUT);
	/* The helper's deadline answered, not the loop's backstop. */
	ASSERT_TRUE(a.at_ms - t0 >= 900);
	ASSERT_TRUE(a.at_ms - t0 < 1000 + (int64_t)PAM_CLIENT_BACKSTOP_SLACK_MS);
	fprintf(stderr, "  timeout after %lld ms; %d ticks, max gap %lld ms\n",
	    (long long)(a.at_ms - t0), tk.ticks, (long long)tk.max_gap_ms);
	ASSERT_TRUE(tk.ticks >= 12);
	ASSERT_TRUE(tk.max_gap_ms < 250);
	/* The module's sleeping script died with its worker. */
	ASSERT_EQ(read_text("sleeper.pid", pidtext, sizeof(pidtext)), 0);
	sleeper = (pid_t)atoi(pidtext);
	ASSERT_TRUE(sleeper > 0);
	loop_for(200);
	ASSERT_TRUE(!proc_alive(sleeper));
	/* Slots are free again once the killed workers are reaped. */
	ASSERT_EQ(auth(pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	client_free(pc);
}

static void
test_helper_killed(void)
{
	struct pam_client *pc = client("vep-test", 5000, 4, 0, T.env_plain);
	struct outcome a;
	struct outcome *list[1] = { &a };
	uint64_t id;
	pid_t old;
	int64_t t0, end;

	ASSERT_TRUE(pc != NULL);
	memset(&a, 0, sizeof(a));
	old = pam_client_helper_pid(pc);
	ASSERT_EQ(pam_client_start(pc, "sleeper", "pw", 2, NULL, on_result, &a, &id), 0);
	loop_for(300);
	t0 = now_ms();
	ASSERT_EQ(kill(old, SIGKILL), 0);
	loop_until(list, 1, 3000);
	ASSERT_EQ(a.done, 1);
	ASSERT_EQ(a.r.outcome, PAM_OUTCOME_ERROR);
	ASSERT_TRUE(a.at_ms - t0 < 1000);
	/* Respawned after the backoff, as a new process. */
	end = now_ms() + 3000;
	while ((pam_client_helper_pid(pc) == 0 || pam_client_helper_pid(pc) == old) &&
	    now_ms() < end)
		loop_for(20);
	ASSERT_TRUE(pam_client_helper_pid(pc) != 0);
	ASSERT_TRUE(pam_client_helper_pid(pc) != old);
	ASSERT_EQ(auth(pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	/* A request started while the helper is down waits for the respawn. */
	ASSERT_EQ(kill(pam_client_helper_pid(pc), SIGKILL), 0);
	end = now_ms() + 3000;
	while (pam_client_helper_pid(pc) != 0 && now_ms() < end)
		event_base_loop(T.base, EVLOOP_ONCE);
	ASSERT_EQ(pam_client_helper_pid(pc), 0);
	ASSERT_EQ(auth(pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	client_free(pc);
}

static void
test_worker_crash(void)
{
	struct pam_client *pc = client("vep-test", 5000, 4, 0, T.env_plain);
	pid_t helper;

	ASSERT_TRUE(pc != NULL);
	helper = pam_client_helper_pid(pc);
	ASSERT_EQ(auth(pc, "boom", "pw"), PAM_OUTCOME_ERROR);
	ASSERT_EQ(pam_client_helper_pid(pc), helper);
	ASSERT_EQ(auth(pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	client_free(pc);
}

static void
test_cancel(void)
{
	struct pam_client *pc = client("vep-test", 5000, 4, 0, T.env_plain);
	struct outcome a = { 0 };
	uint64_t id;

	ASSERT_TRUE(pc != NULL);
	ASSERT_EQ(pam_client_start(pc, "alice", "correct horse", 13, NULL, on_result, &a, &id), 0);
	ASSERT_EQ(pam_client_cancel(pc, id), 0);
	ASSERT_EQ(pam_client_cancel(pc, id), VEP_ERR_INVALID);
	loop_for(500);
	ASSERT_EQ(a.done, 0);
	ASSERT_EQ(auth(pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	client_free(pc);
}

/* A helper that stops answering (SIGSTOP): the loop's own backstop answers
 * the request it holds TIMEOUT after deadline + slack; the ones waiting
 * behind it get TIMEOUT after deadline of waiting; beyond max_workers *
 * PAM_CLIENT_PENDING_PER_WORKER waiting the loop says BUSY at once. */
static void
test_backstop_and_pending_cap(void)
{
	struct pam_client *pc = client("vep-test", 500, 1, 0, T.env_plain);
	struct outcome o[PAM_CLIENT_PENDING_PER_WORKER + 2];
	struct outcome *list[PAM_CLIENT_PENDING_PER_WORKER + 2];
	uint64_t id;
	int64_t t0;
	size_t i, n = 1 + PAM_CLIENT_PENDING_PER_WORKER;
	pid_t helper;

	ASSERT_TRUE(pc != NULL);
	loop_for(100);
	helper = pam_client_helper_pid(pc);
	ASSERT_EQ(kill(helper, SIGSTOP), 0);
	memset(o, 0, sizeof(o));
	t0 = now_ms();
	for (i = 0; i <= n; i++) {
		list[i] = &o[i];
		ASSERT_EQ(pam_client_start(pc, "alice", "correct horse", 13, NULL,
		    on_result, &o[i], &id), 0);
	}
	ASSERT_EQ(o[n].done, 0);
	loop_until(&list[n], 1, 1000);
	ASSERT_EQ(o[n].r.outcome, PAM_OUTCOME_BUSY);
	ASSERT_TRUE(o[n].at_ms - t0 < 400);
	loop_until(list, n, TEST_WAIT_MAX_MS);
	for (i = 0; i < n; i++) {
		ASSERT_EQ(o[i].done, 1);
		ASSERT_EQ(o[i].r.outcome, PAM_OUTCOME_TIMEOUT);
	}
	ASSERT_TRUE(o[0].at_ms - t0 >= 500 + (int64_t)PAM_CLIENT_BACKSTOP_SLACK_MS - 100);
	for (i = 1; i < n; i++) {
		ASSERT_TRUE(o[i].at_ms - t0 >= 450);
		ASSERT_TRUE(o[i].at_ms - t0 < 500 + (int64_t)PAM_CLIENT_BACKSTOP_SLACK_MS - 100);
	}
	kill(helper, SIGCONT);
	/* Late answers for the backstopped ids are dropped (their callbacks
	 * ran once already); once the helper has worked them off, new
	 * requests work. */
	loop_for(1500);
	for (i = 0; i <= n; i++)
		ASSERT_EQ(o[i].done, 1);
	ASSERT_EQ(auth(pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	client_free(pc);
}

/* Milliseconds every attempt of the "vep-slow" service takes. */
#define TEST_SLOW_MS 500

/* Position of name in the order the PAM stack saw users (seen_users, one
 * per line), or -1 when PAM never saw it. */
static int
seen_at(const char *name)
{
	static char seen[16384];
	char *line, *save = NULL;
	int pos = 0;

	if (read_text("seen_users", seen, sizeof(seen)) != 0)
		return -1;
	for (line = strtok_r(seen, "\n", &save); line; line = strtok_r(NULL, "\n", &save), pos++)
		if (strcmp(line, name) == 0)
			return pos;
	return -1;
}

/* pam_workers' promise: with 2 workers busy, 8 more wait their turn (4 per
 * worker) and are all answered by PAM, first come first served, 2 at a
 * time; the 11th and 12th get BUSY at once and never reach PAM. */
static void
test_queue_fifo_and_cap(void)
{
	enum { WORKERS = 2, TAKEN = WORKERS * (1 + PAM_CLIENT_PENDING_PER_WORKER), N = TAKEN + 2 };
	struct pam_client *pc = client("vep-slow", 8000, WORKERS, 0, T.env_plain);
	struct outcome o[N], *list[N];
	char name[32];
	uint64_t id;
	int64_t t0;
	size_t i, j;

	ASSERT_TRUE(pc != NULL);
	unlink(file("seen_users"));
	memset(o, 0, sizeof(o));
	t0 = now_ms();
	for (i = 0; i < N; i++) {
		list[i] = &o[i];
		snprintf(name, sizeof(name), "fifo%zu", i);
		ASSERT_EQ(pam_client_start(pc, name, "pw", 2, NULL, on_result, &o[i], &id), 0);
	}
	loop_until(&list[TAKEN], N - TAKEN, 1000);
	for (i = TAKEN; i < N; i++) {
		ASSERT_EQ(o[i].done, 1);
		ASSERT_EQ(o[i].r.outcome, PAM_OUTCOME_BUSY);
		ASSERT_TRUE(o[i].at_ms - t0 < TEST_SLOW_MS);
	}
	loop_until(list, TAKEN, TEST_WAIT_MAX_MS);
	for (i = 0; i < TAKEN; i++) {
		ASSERT_EQ(o[i].done, 1);
		ASSERT_EQ(o[i].r.outcome, PAM_OUTCOME_OK);
	}
	fprintf(stderr, "  %d attempts of %d ms on %d workers: last answered after %lld ms\n",
	    (int)TAKEN, TEST_SLOW_MS, (int)WORKERS, (long long)(o[TAKEN - 1].at_ms - t0));
	/* Two at a time: five rounds. */
	ASSERT_TRUE(o[TAKEN - 1].at_ms - t0 >= (TAKEN / WORKERS) * TEST_SLOW_MS - 100);
	/* In order: each started after the one two places ahead finished,
	 * and PAM saw them in the order they came (a neighbour may overtake
	 * by one: two workers start together). */
	for (i = 0; i < TAKEN; i++) {
		for (j = i + WORKERS; j < TAKEN; j++)
			ASSERT_TRUE(o[i].at_ms <= o[j].at_ms);
		snprintf(name, sizeof(name), "fifo%zu", i);
		ASSERT_TRUE(seen_at(name) >= 0);
		ASSERT_TRUE(seen_at(name) + 1 >= (int)i && seen_at(name) <= (int)i + 1);
	}
	for (i = TAKEN; i < N; i++) {
		snprintf(name, sizeof(name), "fifo%zu", i);
		ASSERT_EQ(seen_at(name), -1);
	}
	client_free(pc);
}

/* Cancelling a waiting request: it leaves the queue and never reaches PAM;
 * the next one moves up. Cancelling the running one: its worker keeps the
 * slot until it is done, so the next waits for it. */
static void
test_queue_cancel(void)
{
	struct pam_client *pc = client("vep-slow", 8000, 1, 0, T.env_plain);
	struct outcome o[4], *list[4];
	uint64_t ids[4];
	char name[32];
	int64_t t0;
	size_t i;

	ASSERT_TRUE(pc != NULL);
	unlink(file("seen_users"));
	memset(o, 0, sizeof(o));
	t0 = now_ms();
	for (i = 0; i < 4; i++) {
		list[i] = &o[i];
		snprintf(name, sizeof(name), "cancel%zu", i);
		ASSERT_EQ(pam_client_start(pc, name, "pw", 2, NULL, on_result, &o[i], &ids[i]), 0);
	}
	ASSERT_EQ(pam_client_cancel(pc, ids[2]), 0);   /* waiting */
	ASSERT_EQ(pam_client_cancel(pc, ids[2]), VEP_ERR_INVALID);
	loop_for(100);
	ASSERT_EQ(pam_client_cancel(pc, ids[0]), 0);   /* running */
	ASSERT_EQ(pam_client_cancel(pc, ids[0]), VEP_ERR_INVALID);
	loop_until(&list[3], 1, TEST_WAIT_MAX_MS);
	loop_for(200);
	ASSERT_EQ(o[0].done, 0);
	ASSERT_EQ(o[2].done, 0);
	ASSERT_EQ(o[1].done, 1);
	ASSERT_EQ(o[3].done, 1);
	ASSERT_EQ(o[1].r.outcome, PAM_OUTCOME_OK);
	ASSERT_EQ(o[3].r.outcome, PAM_OUTCOME_OK);
	/* cancel1 ran after cancel0's worker, cancel3 after it (and PAM never
	 * saw cancel2, below). */
	ASSERT_TRUE(o[1].at_ms - t0 >= 2 * TEST_SLOW_MS - 100);
	ASSERT_TRUE(o[3].at_ms - t0 >= 3 * TEST_SLOW_MS - 100);
	ASSERT_EQ(seen_at("cancel0"), 0);
	ASSERT_EQ(seen_at("cancel1"), 1);
	ASSERT_EQ(seen_at("cancel2"), -1);
	ASSERT_EQ(seen_at("cancel3"), 2);
	client_free(pc);
}

/* The helper dies with one attempt running and two waiting: the running
 * one fails (ERROR), the waiting ones are sent, in order, to the next. */
static void
test_queue_helper_death(void)
{
	struct pam_client *pc = client("vep-slow", 8000, 1, 0, T.env_plain);
	struct outcome o[3], *list[3];
	char name[32];
	uint64_t id;
	pid_t old;
	size_t i;

	ASSERT_TRUE(pc != NULL);
	unlink(file("seen_users"));
	memset(o, 0, sizeof(o));
	old = pam_client_helper_pid(pc);
	for (i = 0; i < 3; i++) {
		list[i] = &o[i];
		snprintf(name, sizeof(name), "death%zu", i);
		ASSERT_EQ(pam_client_start(pc, name, "pw", 2, NULL, on_result, &o[i], &id), 0);
	}
	loop_for(200);
	ASSERT_EQ(kill(old, SIGKILL), 0);
	loop_until(list, 3, TEST_WAIT_MAX_MS);
	ASSERT_EQ(o[0].r.outcome, PAM_OUTCOME_ERROR);
	ASSERT_EQ(o[1].r.outcome, PAM_OUTCOME_OK);
	ASSERT_EQ(o[2].r.outcome, PAM_OUTCOME_OK);
	ASSERT_TRUE(o[1].at_ms < o[2].at_ms);
	ASSERT_TRUE(pam_client_helper_pid(pc) != old);
	ASSERT_EQ(seen_at("death1"), 1);
	ASSERT_EQ(seen_at("death2"), 2);
	client_free(pc);
}

static void
test_min_uid(void)
{
	struct pam_client *strict = client("vep-test", 5000, 4, 1000, T.env_nss);
	struct pam_client *open = client("vep-test", 5000, 4, 0, T.env_nss);

	ASSERT_TRUE(strict != NULL && open != NULL);
	ASSERT_EQ(auth(strict, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_EQ(auth(strict, "lowuid", "pw"), PAM_OUTCOME_USER_REFUSED);
	ASSERT_EQ(auth(strict, "nopw", "pw"), PAM_OUTCOME_USER_REFUSED);
	ASSERT_EQ(auth(strict, "toor", "pw"), PAM_OUTCOME_USER_REFUSED);
	ASSERT_EQ(auth(strict, "lowuid", "wrong"), PAM_OUTCOME_AUTH_FAILED);
	/* min_uid 0 (the demo): no passwd entry needed, but UID 0 never. */
	ASSERT_EQ(auth(open, "nopw", "pw"), PAM_OUTCOME_OK);
	ASSERT_EQ(auth(open, "lowuid", "pw"), PAM_OUTCOME_OK);
	ASSERT_EQ(auth(open, "toor", "pw"), PAM_OUTCOME_USER_REFUSED);
	client_free(strict);
	client_free(open);
}

static void
test_fail_delay_captured(void)
{
	struct pam_client *pc = client("vep-delay", 5000, 4, 0, T.env_plain);
	struct outcome o;

	ASSERT_TRUE(pc != NULL);
	ASSERT_EQ(attempt(pc, "alice", "wrong", 5, NULL, &o), PAM_OUTCOME_AUTH_FAILED);
	fprintf(stderr, "  PAM asked for %u us; answered after %lld ms\n",
	    o.r.pam_delay_us, (long long)o.at_ms);
	/* pam_faildelay delay=2000000; libpam randomises it by up to 50%. */
	ASSERT_TRUE(o.r.pam_delay_us >= 1000000);
	ASSERT_TRUE(o.r.pam_delay_us <= 3000000);
	/* and nobody slept for it. */
	ASSERT_TRUE(o.at_ms < 1000);
	ASSERT_EQ(attempt(pc, "alice", "correct horse", 13, NULL, &o), PAM_OUTCOME_OK);
	client_free(pc);
}

static void
test_conversation_rules(void)
{
	struct pam_client *flood = client("vep-chatty", 5000, 4, 0, T.env_plain);
	struct pam_client *chat = client("vep-chatty-ok", 5000, 4, 0, T.env_plain);
	struct pam_client *echo = client("vep-echo", 5000, 4, 0, T.env_plain);
	struct pam_client *rewrite = client("vep-rewrite", 5000, 4, 0, T.env_plain);

	ASSERT_TRUE(flood && chat && echo && rewrite);
	/* Over PAMP_CONV_MAX_MESSAGES messages: failed even with the password. */
	ASSERT_EQ(auth(flood, "alice", "correct horse"), PAM_OUTCOME_AUTH_FAILED);
	/* A few informational messages are fine. */
	ASSERT_EQ(auth(chat, "alice", "correct horse"), PAM_OUTCOME_OK);
	/* An echo-on prompt is never answered with the password. */
	ASSERT_EQ(auth(echo, "alice", "correct horse"), PAM_OUTCOME_AUTH_FAILED);
	/* A module that rewrites PAM_USER signs nobody in. */
	ASSERT_EQ(auth(rewrite, "alice", "correct horse"), PAM_OUTCOME_USER_REFUSED);
	client_free(flood);
	client_free(chat);
	client_free(echo);
	client_free(rewrite);
}

/* Most prompts one conversation test records. */
#define TALK_PROMPTS_MAX 8

/* One attempt with a conversation: the callback records each prompt and
 * answers it with answers[i] (at once, or delay_ms later from the loop;
 * NULL: leaves it waiting), and records the outcome. */
struct talk {
	struct pam_client *pc;
	uint64_t id;
	const char *answers[TALK_PROMPTS_MAX];
	int64_t delay_ms;
	int prompts;
	int answer_rc[TALK_PROMPTS_MAX];
	int echo[TALK_PROMPTS_MAX];
	char text[TALK_PROMPTS_MAX][PAMP_TEXT_MAX_BYTES + 1];
	char notes[TALK_PROMPTS_MAX][PAMP_NOTES_MAX_BYTES];
	size_t notes_len[TALK_PROMPTS_MAX];
	int64_t prompt_at_ms;   /* the last prompt's arrival */
	struct outcome o;       /* o.r's pointers are not kept: see below */
	char result_notes[PAMP_NOTES_MAX_BYTES];
	size_t result_notes_len;
	int after_result;       /* callbacks after the outcome: must stay 0 */
};

static void
talk_answer(struct talk *t)
{
	const char *a = t->answers[t->prompts - 1];

	t->answer_rc[t->prompts - 1] = pam_client_answer(t->pc, t->id, a, strlen(a));
}

static void
talk_later(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	talk_answer(arg);
}

static void
on_talk(const struct pam_client_result *r, void *arg)
{
	struct talk *t = arg;
	struct timeval tv;
	int i = t->prompts;

	if (t->o.done) {
		t->after_result++;
		return;
	}
	if (!r->prompt) {
		t->o.done++;
		t->o.r = *r;
		t->o.r.text = NULL;
		t->o.r.notes = NULL;
		t->o.at_ms = now_ms();
		t->result_notes_len = r->notes_len;
		if (r->notes_len <= sizeof(t->result_notes) && r->notes_len > 0)
			memcpy(t->result_notes, r->notes, r->notes_len);
		return;
	}
	t->prompt_at_ms = now_ms();
	if (i >= TALK_PROMPTS_MAX)
		return;
	t->prompts++;
	t->echo[i] = r->echo;
	snprintf(t->text[i], sizeof(t->text[i]), "%s", r->text ? r->text : "(null)");
	t->notes_len[i] = r->notes_len;
	if (r->notes_len <= sizeof(t->notes[i]) && r->notes_len > 0)
		memcpy(t->notes[i], r->notes, r->notes_len);
	if (t->answers[i] == NULL)
		return;
	if (t->delay_ms == 0) {
		talk_answer(t);
		return;
	}
	tv.tv_sec = (time_t)(t->delay_ms / 1000);
	tv.tv_usec = (suseconds_t)(t->delay_ms % 1000) * 1000;
	t->answer_rc[i] = event_base_once(T.base, -1, EV_TIMEOUT, talk_later, t, &tv);
}

/* Starts t's attempt; 0 or the start's error. */
static int
talk_start(struct talk *t, struct pam_client *pc, const char *user, const char *pw)
{
	memset(&t->o, 0, sizeof(t->o));
	t->pc = pc;
	t->prompts = 0;
	t->after_result = 0;
	t->result_notes_len = 0;
	return pam_client_start(pc, user, pw, strlen(pw), NULL, on_talk, t, &t->id);
}

/* Runs t's attempt to its outcome; returns it (negative: none came). */
static int
talk_run(struct talk *t, struct pam_client *pc, const char *user, const char *pw)
{
	struct outcome *list[1] = { &t->o };
	int64_t t0 = now_ms();

	if (talk_start(t, pc, user, pw) != 0)
		return -1;
	loop_until(list, 1, TEST_WAIT_MAX_MS);
	if (!t->o.done)
		return -2;
	t->o.at_ms -= t0;
	return (int)t->o.r.outcome;
}

/* Loops until t has had n prompts (or its outcome); returns prompts. */
static int
talk_until_prompts(struct talk *t, int n)
{
	int64_t end = now_ms() + TEST_WAIT_MAX_MS;

	while (t->prompts < n && !t->o.done && now_ms() < end)
		event_base_loop(T.base, EVLOOP_ONCE);
	return t->prompts;
}

/* The worker pid the last ask of a pidfile= module line wrote, or 0. */
static pid_t
last_pid(const char *name)
{
	char text[4096], *line, *last = NULL, *save = NULL;

	if (read_text(name, text, sizeof(text)) != 0)
		return 0;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		last = line;
	return last ? (pid_t)atoi(last) : 0;
}

/* Loops until pid is gone or ms passed; returns whether it is gone. */
static int
gone_within(pid_t pid, int64_t ms)
{
	int64_t end = now_ms() + ms;

	while (proc_alive(pid) && now_ms() < end)
		loop_for(20);
	return !proc_alive(pid);
}

/* Password, then a one-time code asked by a later module: the code goes to
 * the caller, never the password, whatever the code's answer is. */
static void
test_second_factor(void)
{
	struct pam_client *pc = client_conv("vep-2fa", 5000, 2, 0, 1);
	static struct talk t;
	char log[4096] = "";

	ASSERT_TRUE(pc != NULL);
	unlink(file("answers.log"));
	memset(&t, 0, sizeof(t));
	t.answers[0] = "424242";
	ASSERT_EQ(talk_run(&t, pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_EQ(t.prompts, 1);
	ASSERT_EQ(t.echo[0], 0);
	ASSERT_STREQ(t.text[0], "Verification code: ");
	ASSERT_EQ(t.answer_rc[0], 0);
	ASSERT_EQ(t.o.r.prompt, 0);
	t.answers[0] = "000000";
	ASSERT_EQ(talk_run(&t, pc, "alice", "correct horse"), PAM_OUTCOME_AUTH_FAILED);
	ASSERT_EQ(t.prompts, 1);
	/* A wrong password: the stack goes on (required), the code is still
	 * asked, and the attempt fails even with the right one. */
	t.answers[0] = "424242";
	ASSERT_EQ(talk_run(&t, pc, "alice", "wrong horse"), PAM_OUTCOME_AUTH_FAILED);
	ASSERT_EQ(t.prompts, 1);
	loop_for(50);
	ASSERT_EQ(t.after_result, 0);
	/* What the code prompt got: the answers, never the password. */
	ASSERT_EQ(read_text("answers.log", log, sizeof(log)), 0);
	ASSERT_STREQ(log, "424242\n000000\n424242\n");
	ASSERT_TRUE(strstr(log, "horse") == NULL);
	client_free(pc);
}

/* An echo-on question is relayed as such (echo = 1); so is an echo-on
 * password prompt, which never gets the password by itself. */
static void
test_echo_prompt(void)
{
	struct pam_client *pc = client_conv("vep-echo2", 5000, 2, 0, 1);
	struct pam_client *echo = client_conv("vep-echo", 5000, 2, 0, 1);
	static struct talk t;

	ASSERT_TRUE(pc != NULL && echo != NULL);
	memset(&t, 0, sizeof(t));
	t.answers[0] = "blue";
	ASSERT_EQ(talk_run(&t, pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_EQ(t.prompts, 1);
	ASSERT_EQ(t.echo[0], 1);
	ASSERT_STREQ(t.text[0], "Favourite colour? ");
	t.answers[0] = "red";
	ASSERT_EQ(talk_run(&t, pc, "alice", "correct horse"), PAM_OUTCOME_AUTH_FAILED);
	/* pam_matrix's echo-on "Password: ": the caller's to answer. */
	t.answers[0] = "correct horse";
	ASSERT_EQ(talk_run(&t, echo, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_EQ(t.prompts, 1);
	ASSERT_EQ(t.echo[0], 1);
	client_free(pc);
	client_free(echo);
}

/* What one notes blob holds: entries, and the text of entry i (a copy). */
static int
notes_entries(const char *notes, size_t n, int want, char *text, size_t cap)
{
	size_t off = 0;
	int count = 0;

	while (off < n) {
		size_t len = strnlen(notes + off + 1, n - off - 1);

		if (count == want)
			snprintf(text, cap, "%c%.*s", notes[off], (int)len, notes + off + 1);
		count++;
		off += len + 2;
	}
	return count;
}

/* Info and error texts reach the caller in order, each with the next
 * frame: those before a prompt with it, the rest with the outcome. */
static void
test_notes(void)
{
	struct pam_client *pc = client_conv("vep-notes", 5000, 2, 0, 1);
	struct pam_client *plain = client("vep-chatty-ok", 5000, 2, 0, T.env_plain);
	static struct talk t;
	static const char before[] = "IWelcome\0ECareful\0", after[] = "IBye\0";
	char text[PAMP_NOTES_MAX_BYTES + 2];

	ASSERT_TRUE(pc != NULL && plain != NULL);
	memset(&t, 0, sizeof(t));
	t.answers[0] = "7";
	ASSERT_EQ(talk_run(&t, pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_EQ(t.prompts, 1);
	ASSERT_STREQ(t.text[0], "Code: ");
	ASSERT_EQ(t.notes_len[0], sizeof(before) - 1);
	ASSERT_MEMEQ(t.notes[0], before, sizeof(before) - 1);
	ASSERT_EQ(t.result_notes_len, sizeof(after) - 1);
	ASSERT_MEMEQ(t.result_notes, after, sizeof(after) - 1);
	/* A failed attempt shows them too (pam_vep_test's Bye runs anyway). */
	t.answers[0] = "8";
	ASSERT_EQ(talk_run(&t, pc, "alice", "correct horse"), PAM_OUTCOME_AUTH_FAILED);
	ASSERT_EQ(t.notes_len[0], sizeof(before) - 1);
	/* Without conversations the outcome carries them as well. */
	memset(&t, 0, sizeof(t));
	ASSERT_EQ(talk_run(&t, plain, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_EQ(t.prompts, 0);
	fprintf(stderr, "  pam_chatty: %d notes\n",
	    notes_entries(t.result_notes, t.result_notes_len, -1, text, sizeof(text)));
	ASSERT_EQ(notes_entries(t.result_notes, t.result_notes_len, 0, text, sizeof(text)), 8);
	client_free(pc);
	client_free(plain);
}

/* The caps: at most PAMP_NOTES_MAX entries and PAMP_NOTES_MAX_BYTES per
 * frame, texts cut at PAMP_TEXT_MAX_BYTES on a UTF-8 boundary, control
 * characters replaced; never an error. */
static void
test_notes_capped(void)
{
	struct pam_client *many = client_conv("vep-notes-many", 5000, 2, 0, 1);
	struct pam_client *big = client_conv("vep-notes-big", 5000, 2, 0, 1);
	static struct talk t;
	char text[PAMP_NOTES_MAX_BYTES + 2], want[PAMP_TEXT_MAX_BYTES + 2];

	ASSERT_TRUE(many != NULL && big != NULL);
	memset(&t, 0, sizeof(t));
	ASSERT_EQ(talk_run(&t, many, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_EQ(notes_entries(t.result_notes, t.result_notes_len, 7, text, sizeof(text)),
	    PAMP_NOTES_MAX);
	ASSERT_STREQ(text, "Inote");
	ASSERT_EQ(talk_run(&t, big, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_TRUE(t.result_notes_len <= PAMP_NOTES_MAX_BYTES);
	/* The control characters, then one long text: the next ones do not
	 * fit in 1024 bytes and are dropped. */
	ASSERT_EQ(notes_entries(t.result_notes, t.result_notes_len, 0, text, sizeof(text)), 2);
	ASSERT_STREQ(text, "EC?[1m\tend\n?");
	ASSERT_EQ(notes_entries(t.result_notes, t.result_notes_len, 1, text, sizeof(text)), 2);
	/* "a", 510 'x', then a 3-byte character across the cap: left out. */
	memset(want, 'x', sizeof(want));
	want[0] = 'I';
	want[1] = 'a';
	want[PAMP_TEXT_MAX_BYTES] = '\0';
	ASSERT_EQ(strlen(text), PAMP_TEXT_MAX_BYTES);
	ASSERT_STREQ(text, want);
	client_free(many);
	client_free(big);
}

/* PAMP_ROUNDS_MAX prompts are relayed; one more fails the attempt. */
static void
test_rounds_max(void)
{
	struct pam_client *four = client_conv("vep-rounds4", 5000, 2, 0, 1);
	struct pam_client *five = client_conv("vep-rounds5", 5000, 2, 0, 1);
	static struct talk t;
	int i;

	ASSERT_TRUE(four != NULL && five != NULL);
	memset(&t, 0, sizeof(t));
	t.answers[0] = "a1";
	t.answers[1] = "a2";
	t.answers[2] = "a3";
	t.answers[3] = "a4";
	t.answers[4] = "a5";
	ASSERT_EQ(talk_run(&t, four, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_EQ(t.prompts, PAMP_ROUNDS_MAX);
	ASSERT_STREQ(t.text[3], "Q4: ");
	ASSERT_EQ(talk_run(&t, five, "alice", "correct horse"), PAM_OUTCOME_AUTH_FAILED);
	ASSERT_EQ(t.prompts, PAMP_ROUNDS_MAX);
	for (i = 0; i < PAMP_ROUNDS_MAX; i++)
		ASSERT_EQ(t.answer_rc[i], 0);
	client_free(four);
	client_free(five);
}

/* Nobody answers: TIMEOUT at answer_ms, from the helper (before the loop's
 * backstop), and the worker is gone; its slot serves the next attempt. */
static void
test_answer_timeout(void)
{
	struct pam_client *pc = client_conv("vep-2fa", 1000, 1, PAMP_ANSWER_MS_MIN, 1);
	static struct talk t;
	pid_t worker;

	ASSERT_TRUE(pc != NULL);
	unlink(file("workers.pid"));
	memset(&t, 0, sizeof(t));
	ASSERT_EQ(talk_run(&t, pc, "alice", "correct horse"), PAM_OUTCOME_TIMEOUT);
	ASSERT_EQ(t.prompts, 1);
	fprintf(stderr, "  unanswered prompt: TIMEOUT after %lld ms\n", (long long)t.o.at_ms);
	ASSERT_TRUE(t.o.at_ms >= PAMP_ANSWER_MS_MIN - 100);
	ASSERT_TRUE(t.o.at_ms < PAMP_ANSWER_MS_MIN + (int64_t)PAM_CLIENT_BACKSTOP_SLACK_MS);
	worker = last_pid("workers.pid");
	ASSERT_TRUE(worker > 0);
	ASSERT_TRUE(gone_within(worker, 500));
	/* A late answer is refused here, and the slot is free. */
	ASSERT_EQ(pam_client_answer(pc, t.id, "424242", 6), VEP_ERR_INVALID);
	t.answers[0] = "424242";
	ASSERT_EQ(talk_run(&t, pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	client_free(pc);
}

/* Every round restarts the deadlines: answers that come later than
 * deadline_ms (but within answer_ms) are fine, over several rounds, and
 * past the worker's own alarm for deadline_ms (deadline + 5 s), too. */
static void
test_rounds_restart_deadline(void)
{
	struct pam_client *pc = client_conv("vep-rounds4", 1000, 1, 3000, 1);
	struct pam_client *slow = client_conv("vep-2fa", 1000, 1, 10000, 1);
	static struct talk t;

	ASSERT_TRUE(pc != NULL && slow != NULL);
	memset(&t, 0, sizeof(t));
	t.answers[0] = "a1";
	t.answers[1] = "a2";
	t.answers[2] = "a3";
	t.answers[3] = "a4";
	t.delay_ms = 1500;
	ASSERT_EQ(talk_run(&t, pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_EQ(t.prompts, 4);
	ASSERT_TRUE(t.o.at_ms >= 4 * 1500);
	memset(&t, 0, sizeof(t));
	t.answers[0] = "424242";
	t.delay_ms = 6500;
	ASSERT_EQ(talk_run(&t, slow, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_TRUE(t.o.at_ms >= 6500);
	client_free(pc);
	client_free(slow);
}

/* Cancelling a request whose prompt waits: the worker is killed at once
 * (not at answer_ms), the callback is not called again, and the slot
 * serves the next attempt at once. */
static void
test_cancel_while_asking(void)
{
	struct pam_client *pc = client_conv("vep-2fa", 5000, 1, 60000, 1);
	static struct talk t, u;
	pid_t worker;
	int64_t t0;

	ASSERT_TRUE(pc != NULL);
	unlink(file("workers.pid"));
	memset(&t, 0, sizeof(t));
	memset(&u, 0, sizeof(u));
	ASSERT_EQ(talk_start(&t, pc, "alice", "correct horse"), 0);
	ASSERT_EQ(talk_until_prompts(&t, 1), 1);
	worker = last_pid("workers.pid");
	ASSERT_TRUE(worker > 0 && proc_alive(worker));
	t0 = now_ms();
	ASSERT_EQ(pam_client_cancel(pc, t.id), 0);
	ASSERT_EQ(pam_client_answer(pc, t.id, "424242", 6), VEP_ERR_INVALID);
	ASSERT_TRUE(gone_within(worker, 1000));
	fprintf(stderr, "  worker gone %lld ms after the cancel\n", (long long)(now_ms() - t0));
	u.answers[0] = "424242";
	ASSERT_EQ(talk_run(&u, pc, "alice", "correct horse"), PAM_OUTCOME_OK);
	ASSERT_TRUE(u.o.at_ms < 2000);
	ASSERT_EQ(t.o.done, 0);
	ASSERT_EQ(t.prompts, 1);
	client_free(pc);
}

/* pam_client_answer's refusals: an id that waits for no answer (unknown,
 * running without a prompt, answered already, finished), a NUL inside,
 * too long. Answering from the loop, outside the callback, works. */
static void
test_answer_refusals(void)
{
	struct pam_client *pc = client_conv("vep-2fa", 5000, 1, 0, 1);
	static struct talk t;
	char *big = malloc(PAMP_PASSWORD_MAX_BYTES + 1);
	struct outcome *list[1] = { &t.o };

	ASSERT_TRUE(pc != NULL && big != NULL);
	memset(big, '4', PAMP_PASSWORD_MAX_BYTES + 1);
	memset(&t, 0, sizeof(t));
	ASSERT_EQ(pam_client_answer(pc, 12345, "1", 1), VEP_ERR_INVALID);
	ASSERT_EQ(talk_start(&t, pc, "alice", "correct horse"), 0);
	ASSERT_EQ(pam_client_answer(pc, t.id, "1", 1), VEP_ERR_INVALID);
	ASSERT_EQ(talk_until_prompts(&t, 1), 1);
	ASSERT_EQ(pam_client_answer(pc, t.id + 1, "1", 1), VEP_ERR_INVALID);
	ASSERT_EQ(pam_client_answer(pc, t.id, "42\0" "4242", 7), VEP_ERR_INVALID);
	ASSERT_EQ(pam_client_answer(pc, t.id, big, PAMP_PASSWORD_MAX_BYTES + 1),
	    VEP_ERR_TOOBIG);
	ASSERT_EQ(pam_client_answer(pc, t.id, "424242", 6), 0);
	ASSERT_EQ(pam_client_answer(pc, t.id, "424242", 6), VEP_ERR_INVALID);
	loop_until(list, 1, TEST_WAIT_MAX_MS);
	ASSERT_EQ(t.o.done, 1);
	ASSERT_EQ(t.o.r.outcome, PAM_OUTCOME_OK);
	ASSERT_EQ(pam_client_answer(pc, t.id, "424242", 6), VEP_ERR_INVALID);
	/* An empty answer is an answer (a wrong one here). */
	t.answers[0] = "";
	ASSERT_EQ(talk_run(&t, pc, "alice", "correct horse"), PAM_OUTCOME_AUTH_FAILED);
	ASSERT_EQ(t.answer_rc[0], 0);
	free(big);
	client_free(pc);
}

/* pam_acct_mgmt's PAM_NEW_AUTHTOK_REQD: NEW_AUTHTOK only after the right
 * password; a client without conversations hears ACCT_REFUSED as before. */
static void
test_expired_password(void)
{
	struct pam_client *pc = client_conv("vep-expired", 5000, 2, 0, 1);
	struct pam_client *old = client_conv("vep-expired", 5000, 2, 0, 0);

	ASSERT_TRUE(pc != NULL && old != NULL);
	ASSERT_EQ(auth(pc, "alice", "correct horse"), PAM_OUTCOME_NEW_AUTHTOK);
	ASSERT_STREQ(pam_outcome_name(PAM_OUTCOME_NEW_AUTHTOK), "new-authtok");
	ASSERT_EQ(auth(pc, "alice", "wrong"), PAM_OUTCOME_AUTH_FAILED);
	ASSERT_EQ(auth(pc, "rhostcheck", "pw"), PAM_OUTCOME_OK);
	ASSERT_EQ(auth(old, "alice", "correct horse"), PAM_OUTCOME_ACCT_REFUSED);
	ASSERT_EQ(auth(old, "alice", "wrong"), PAM_OUTCOME_AUTH_FAILED);
	client_free(pc);
	client_free(old);
}

/* A caller that has not opted in: a second prompt fails the attempt
 * (AUTH_FAILED, as before conversations), at once, and frees its worker. */
static void
test_no_conversations(void)
{
	struct pam_client *pc = client_conv("vep-2fa", 5000, 1, 0, 0);
	struct outcome o;
	pid_t worker;

	ASSERT_TRUE(pc != NULL);
	unlink(file("workers.pid"));
	ASSERT_EQ(attempt(pc, "alice", "correct horse", 13, NULL, &o), PAM_OUTCOME_AUTH_FAILED);
	ASSERT_TRUE(o.at_ms < 1000);
	worker = last_pid("workers.pid");
	ASSERT_TRUE(worker > 0);
	ASSERT_TRUE(gone_within(worker, 1000));
	ASSERT_EQ(attempt(pc, "alice", "correct horse", 13, NULL, &o), PAM_OUTCOME_AUTH_FAILED);
	ASSERT_TRUE(o.at_ms < 1000);
	client_free(pc);
}

/* The services of the conversation tests (m: pam_matrix). */
static int
setup_conv_files(const char *m)
{
	char buf[2048], matrix[512], permit[256];
	int rc = 0;

	snprintf(matrix, sizeof(matrix), "auth required %s passdb=%s/passdb\n", m, T.dir);
	snprintf(permit, sizeof(permit), "account required %s/pam_permit.so\n", SYSTEM_MODULES);
	snprintf(buf, sizeof(buf), "%s"
	    "auth required %s [ask=noecho:Verification code: :424242] log=%s/answers.log "
	    "pidfile=%s/workers.pid\n%s", matrix, T.module, T.dir, T.dir, permit);
	rc |= write_file("vep-2fa", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "%sauth required %s [ask=echo:Favourite colour? :blue]\n%s",
	    matrix, T.module, permit);
	rc |= write_file("vep-echo2", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "auth required %s info=Welcome\n%s"
	    "auth required %s [ask=noecho:Code: :7] error=Careful\n"
	    "auth required %s info=Bye\n%s", T.module, matrix, T.module, T.module, permit);
	rc |= write_file("vep-notes", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "%sauth required %s info=note times=10\n%s",
	    matrix, T.module, permit);
	rc |= write_file("vep-notes-many", buf, strlen(buf), 0644);
	/* "a", 510 'x' and a euro sign (3 bytes) across the 512-byte cap. */
	snprintf(buf, sizeof(buf), "auth required %s error=C ctl\n"
	    "auth required %s info=a pad=510 tail=\xe2\x82\xac times=3\n%s%s",
	    T.module, T.module, matrix, permit);
	rc |= write_file("vep-notes-big", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "%s"
	    "auth required %s [ask=noecho:Q1: :a1]\nauth required %s [ask=noecho:Q2: :a2]\n"
	    "auth required %s [ask=noecho:Q3: :a3]\nauth required %s [ask=noecho:Q4: :a4]\n%s",
	    matrix, T.module, T.module, T.module, T.module, permit);
	rc |= write_file("vep-rounds4", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "%s"
	    "auth required %s [ask=noecho:Q1: :a1]\nauth required %s [ask=noecho:Q2: :a2]\n"
	    "auth required %s [ask=noecho:Q3: :a3]\nauth required %s [ask=noecho:Q4: :a4]\n"
	    "auth required %s [ask=noecho:Q5: :a5]\n%s",
	    matrix, T.module, T.module, T.module, T.module, T.module, permit);
	rc |= write_file("vep-rounds5", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "%saccount required %s expired_user=alice\n",
	    matrix, T.module);
	rc |= write_file("vep-expired", buf, strlen(buf), 0644);
	return rc;
}

static int
setup_files(void)
{
	char pw1024[1025], buf[2048], *p4000;
	const char *m = WRAPPER_MODULES "/pam_matrix.so";
	int rc = 0;

	fill_password(pw1024, 1024);
	p4000 = malloc(4001);
	if (p4000 == NULL)
		return -1;
	fill_password(p4000, 4000);
	rc |= write_file("expect.pw", p4000, 4000, 0600);
	free(p4000);
	snprintf(buf, sizeof(buf),
	    "alice:correct horse:vep-test\nroot:rootpw:vep-test\nrhostcheck:pw:vep-test\n"
	    "lowuid:pw:vep-test\nnopw:pw:vep-test\ntoor:pw:vep-test\n"
	    "sleeper:pw:vep-test\nlongpw:%s:vep-test\n", pw1024);
	rc |= write_file("passdb", buf, strlen(buf), 0600);
	snprintf(buf, sizeof(buf),
	    "#!/bin/sh\necho \"$PAM_USER\" >> %s/seen_users\n"
	    "case \"$PAM_USER\" in\n"
	    "sleeper) echo $$ > %s/sleeper.pid; exec sleep 30;;\n"
	    "rhostcheck) echo \"$PAM_RHOST\" > %s/rhost;;\n"
	    "esac\nexit 0\n", T.dir, T.dir, T.dir);
	rc |= write_file("hook.sh", buf, strlen(buf), 0700);
	snprintf(buf, sizeof(buf),
	    "auth required %s/pam_exec.so quiet %s/hook.sh\n"
	    "auth required %s crash_user=boom\n"
	    "auth required %s passdb=%s/passdb\n"
	    "account required %s/pam_permit.so\n",
	    SYSTEM_MODULES, T.dir, T.module, m, T.dir, SYSTEM_MODULES);
	rc |= write_file("vep-test", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "auth required %s passdb=%s/passdb\n"
	    "account required %s/pam_deny.so\n", m, T.dir, SYSTEM_MODULES);
	rc |= write_file("vep-acct", buf, strlen(buf), 0644);
	/* Everyone in, after TEST_SLOW_MS; the hook records the order. */
	snprintf(buf, sizeof(buf), "auth required %s/pam_exec.so quiet %s/hook.sh\n"
	    "auth required %s sleep_ms=%d\n"
	    "auth required %s/pam_permit.so\n"
	    "account required %s/pam_permit.so\n",
	    SYSTEM_MODULES, T.dir, T.module, TEST_SLOW_MS, SYSTEM_MODULES, SYSTEM_MODULES);
	rc |= write_file("vep-slow", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "auth optional %s/pam_faildelay.so delay=2000000\n"
	    "auth required %s passdb=%s/passdb\n"
	    "account required %s/pam_permit.so\n", SYSTEM_MODULES, m, T.dir, SYSTEM_MODULES);
	rc |= write_file("vep-delay", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "auth required %s/pam_chatty.so num_lines=20 info error\n"
	    "auth required %s passdb=%s/passdb\n"
	    "account required %s/pam_permit.so\n", WRAPPER_MODULES, m, T.dir, SYSTEM_MODULES);
	rc |= write_file("vep-chatty", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "auth required %s/pam_chatty.so num_lines=4 info error\n"
	    "auth required %s passdb=%s/passdb\n"
	    "account required %s/pam_permit.so\n", WRAPPER_MODULES, m, T.dir, SYSTEM_MODULES);
	rc |= write_file("vep-chatty-ok", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "auth required %s passdb=%s/passdb echo\n"
	    "account required %s/pam_permit.so\n", m, T.dir, SYSTEM_MODULES);
	rc |= write_file("vep-echo", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "auth required %s passdb=%s/passdb\n"
	    "auth required %s rewrite_user=mallory\n"
	    "account required %s/pam_permit.so\n", m, T.dir, T.module, SYSTEM_MODULES);
	rc |= write_file("vep-rewrite", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "auth required %s expect=%s/expect.pw\n"
	    "account required %s/pam_permit.so\n", T.module, T.dir, SYSTEM_MODULES);
	rc |= write_file("vep-exact", buf, strlen(buf), 0644);
	rc |= setup_conv_files(m);
	snprintf(buf, sizeof(buf),
	    "alice:x:1001:1001:Alice:/nonexistent:/bin/false\n"
	    "lowuid:x:500:500::/nonexistent:/bin/false\n"
	    "toor:x:0:0::/root:/bin/false\n");
	rc |= write_file("passwd", buf, strlen(buf), 0644);
	snprintf(buf, sizeof(buf), "users:x:1001:\nlow:x:500:\nroot:x:0:\n");
	rc |= write_file("group", buf, strlen(buf), 0644);
	/* libpam falls back to "other" for unknown services; deny all. */
	snprintf(buf, sizeof(buf), "auth required %s/pam_deny.so\n"
	    "account required %s/pam_deny.so\n", SYSTEM_MODULES, SYSTEM_MODULES);
	rc |= write_file("other", buf, strlen(buf), 0644);
	return rc;
}

/* a + b + c as a new string. */
static char *
join(const char *a, const char *b, const char *c)
{
	size_t n = strlen(a) + strlen(b) + strlen(c) + 1;
	char *s = malloc(n);

	if (s != NULL)
		snprintf(s, n, "%s%s%s", a, b, c);
	return s;
}

static void
setup_env(void)
{
	const char *asan = getenv("ASAN_OPTIONS");
	int i = 0, j = 0;

	T.env_plain[i++] = join("LD_PRELOAD=", PAM_WRAPPER_LIB, "");
	T.env_nss[j++] = join("LD_PRELOAD=", PAM_WRAPPER_LIB, ":" NSS_WRAPPER_LIB);
	T.env_plain[i++] = join("PAM_WRAPPER=1", "", "");
	T.env_nss[j++] = join("PAM_WRAPPER=1", "", "");
	T.env_plain[i++] = join("PAM_WRAPPER_SERVICE_DIR=", T.dir, "");
	T.env_nss[j++] = join("PAM_WRAPPER_SERVICE_DIR=", T.dir, "");
	T.env_nss[j++] = join("NSS_WRAPPER_PASSWD=", T.dir, "/passwd");
	T.env_nss[j++] = join("NSS_WRAPPER_GROUP=", T.dir, "/group");
#if defined(__SANITIZE_ADDRESS__)
	/* The helper is instrumented too and the wrappers are preloaded ahead
	 * of the ASan runtime. */
	T.env_plain[i++] = join("PAM_WRAPPER_DISABLE_DEEPBIND=1", "", "");
	T.env_nss[j++] = join("PAM_WRAPPER_DISABLE_DEEPBIND=1", "", "");
	/* Debian's pam_wrapper 1.1.4 reads this name instead (upstream bug). */
	T.env_plain[i++] = join("UID_WRAPPER_DISABLE_DEEPBIND=1", "", "");
	T.env_nss[j++] = join("UID_WRAPPER_DISABLE_DEEPBIND=1", "", "");
	T.env_plain[i++] = join("ASAN_OPTIONS=", asan ? asan : "",
	    asan ? ":verify_asan_link_order=0" : "verify_asan_link_order=0");
	T.env_nss[j++] = join("ASAN_OPTIONS=", asan ? asan : "",
	    asan ? ":verify_asan_link_order=0" : "verify_asan_link_order=0");
#else
	(void)asan;
#endif
	T.env_plain[i] = NULL;
	T.env_nss[j] = NULL;
}

static void
cleanup(void)
{
	static const char *const names[] = {
		"expect.pw", "passdb", "hook.sh", "vep-test", "vep-acct", "vep-slow", "vep-delay",
		"vep-chatty", "vep-chatty-ok", "vep-echo", "vep-rewrite", "vep-exact",
		"passwd", "group", "seen_users", "sleeper.pid", "rhost", "other",
		"vep-2fa", "vep-echo2", "vep-notes", "vep-notes-many", "vep-notes-big",
		"vep-rounds4", "vep-rounds5", "vep-expired", "answers.log", "workers.pid",
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		unlink(file(names[i]));
	rmdir(T.dir);
	for (i = 0; T.env_plain[i]; i++)
		free(T.env_plain[i]);
	for (i = 0; T.env_nss[i]; i++)
		free(T.env_nss[i]);
}

int
main(int argc, char **argv)
{
	struct rlimit nocore = { 0, 0 };
	int rc;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s <vep-pam-helper> <pam_vep_test.so> [test]\n", argv[0]);
		return 2;
	}
	if (access(PAM_WRAPPER_LIB, R_OK) != 0) {
		fprintf(stderr, "skip: %s not installed (Debian package libpam-wrapper)\n",
		    PAM_WRAPPER_LIB);
		return 77;
	}
	if (access(NSS_WRAPPER_LIB, R_OK) != 0) {
		fprintf(stderr, "skip: %s not installed (libnss-wrapper)\n", NSS_WRAPPER_LIB);
		return 77;
	}
	/* The crash test aborts a worker on purpose: no core files. */
	setrlimit(RLIMIT_CORE, &nocore);
	signal(SIGPIPE, SIG_IGN);
	/* pam_wrapper resolves relative module paths under /lib/security. */
	T.helper = realpath(argv[1], NULL);
	T.module = realpath(argv[2], NULL);
	if (T.helper == NULL || T.module == NULL) {
		perror("realpath");
		return 1;
	}
	snprintf(T.dir, sizeof(T.dir), "/tmp/vep-pam-test.XXXXXX");
	if (mkdtemp(T.dir) == NULL || setup_files() != 0) {
		perror("test setup");
		return 1;
	}
	setup_env();
	T.base = event_base_new();
	if (T.base == NULL)
		return 1;

	if (argc < 4 || strcmp(argv[3], "test_basic") == 0)
		RUN(test_basic);
	if (argc < 4 || strcmp(argv[3], "test_argument_limits") == 0)
		RUN(test_argument_limits);
	if (argc < 4 || strcmp(argv[3], "test_long_passwords") == 0)
		RUN(test_long_passwords);
	if (argc < 4 || strcmp(argv[3], "test_account_refused") == 0)
		RUN(test_account_refused);
	if (argc < 4 || strcmp(argv[3], "test_hang_timeout_and_queue") == 0)
		RUN(test_hang_timeout_and_queue);
	if (argc < 4 || strcmp(argv[3], "test_helper_killed") == 0)
		RUN(test_helper_killed);
	if (argc < 4 || strcmp(argv[3], "test_worker_crash") == 0)
		RUN(test_worker_crash);
	if (argc < 4 || strcmp(argv[3], "test_cancel") == 0)
		RUN(test_cancel);
	if (argc < 4 || strcmp(argv[3], "test_backstop_and_pending_cap") == 0)
		RUN(test_backstop_and_pending_cap);
	if (argc < 4 || strcmp(argv[3], "test_queue_fifo_and_cap") == 0)
		RUN(test_queue_fifo_and_cap);
	if (argc < 4 || strcmp(argv[3], "test_queue_cancel") == 0)
		RUN(test_queue_cancel);
	if (argc < 4 || strcmp(argv[3], "test_queue_helper_death") == 0)
		RUN(test_queue_helper_death);
	if (argc < 4 || strcmp(argv[3], "test_min_uid") == 0)
		RUN(test_min_uid);
	if (argc < 4 || strcmp(argv[3], "test_fail_delay_captured") == 0)
		RUN(test_fail_delay_captured);
	if (argc < 4 || strcmp(argv[3], "test_conversation_rules") == 0)
		RUN(test_conversation_rules);
	if (argc < 4 || strcmp(argv[3], "test_second_factor") == 0)
		RUN(test_second_factor);
	if (argc < 4 || strcmp(argv[3], "test_echo_prompt") == 0)
		RUN(test_echo_prompt);
	if (argc < 4 || strcmp(argv[3], "test_notes") == 0)
		RUN(test_notes);
	if (argc < 4 || strcmp(argv[3], "test_notes_capped") == 0)
		RUN(test_notes_capped);
	if (argc < 4 || strcmp(argv[3], "test_rounds_max") == 0)
		RUN(test_rounds_max);
	if (argc < 4 || strcmp(argv[3], "test_answer_timeout") == 0)
		RUN(test_answer_timeout);
	if (argc < 4 || strcmp(argv[3], "test_rounds_restart_deadline") == 0)
		RUN(test_rounds_restart_deadline);
	if (argc < 4 || strcmp(argv[3], "test_cancel_while_asking") == 0)
		RUN(test_cancel_while_asking);
	if (argc < 4 || strcmp(argv[3], "test_answer_refusals") == 0)
		RUN(test_answer_refusals);
	if (argc < 4 || strcmp(argv[3], "test_expired_password") == 0)
		RUN(test_expired_password);
	if (argc < 4 || strcmp(argv[3], "test_no_conversations") == 0)
		RUN(test_no_conversations);

	event_base_free(T.base);
	cleanup();
	free(T.helper);
	free(T.module);
	rc = harness_done();
	return rc;
}
