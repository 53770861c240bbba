/*
 * test_writer.c - store/writer.c on a real SQLite file: jobs run in
 * submission order across the handles of one thread, each completion
 * runs on its own handle's loop (thread) and never on another's; jobs of a
 * group next to each other run as one call (bounded by
 * WRITER_GROUP_JOBS_MAX and the group's weight), never across another job,
 * and every one gets that call's result; writer_free waits for its
 * handle's jobs and for follow-ups its completions queue, and the last
 * handle stops the thread. writer_help_grouped runs the jobs in the
 * calling thread, completions included, when the writer thread is idle
 * and has no other handle, and leaves them to it when it is busy or shared.
 */
#include <pthread.h>
#include <stdlib.h>

#include <event2/event.h>
#include <event2/thread.h>

#include "store/audit.h"
#include "store/db.h"
#include "store/writer.h"
#include "err.h"
#include "db_testutil.h"
#include "harness.h"

static char *dir;

/* What ran, in the writer thread: job ids in order, and each group call's
 * size. */
struct loop1;

struct log {
	int ran[256];
	int nran;
	size_t calls[64];
	int ncalls;
	int fail;                      /* a group call's result */
};

struct job {
	struct log *log;
	int id;
	int done_rc;
	int done_count;
	pthread_t done_thread;
	pthread_t ran_thread;          /* where a group call ran it */
	struct writer *again;          /* a follow-up queued by the completion */
	struct loop1 *loop;
};

/* Holds the writer thread until released: the jobs queued meanwhile are
 * taken together. */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate_open;
static int gate_entered;        /* the thread is at the gate */

static int
job_gate(struct db *db, void *arg)
{
	(void)db;
	(void)arg;
	pthread_mutex_lock(&gate_mu);
	gate_entered = 1;
	pthread_cond_broadcast(&gate_cv);
	while (!gate_open)
		pthread_cond_wait(&gate_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);
	return 0;
}

/* Waits until the writer thread is held at the gate. */
static void
gate_wait_entered(void)
{
	pthread_mutex_lock(&gate_mu);
	while (!gate_entered)
		pthread_cond_wait(&gate_cv, &gate_mu);
	pthread_mutex_unlock(&gate_mu);
}

static void
gate(int open)
{
	pthread_mutex_lock(&gate_mu);
	gate_entered = 0;
	gate_open = open;
	pthread_cond_broadcast(&gate_cv);
	pthread_mutex_unlock(&gate_mu);
}

static int
job_plain(struct db *db, void *arg)
{
	struct job *j = arg;

	(void)db;
	j->log->ran[j->log->nran++] = j->id;
	return j->id;
}

static int
group_fn(struct db *db, void *const *args, size_t n)
{
	struct log *log = ((struct job *)args[0])->log;
	size_t i;

	(void)db;
	for (i = 0; i < n; i++)
		log->ran[log->nran++] = ((struct job *)args[i])->id;
	log->calls[log->ncalls++] = n;
	return log->fail;
}

static const struct writer_group group = { group_fn, 10 };
static const struct writer_group other_group = { group_fn, 10 };

static void
on_done(int rc, void *arg)
{
	struct job *j = arg;

	j->done_rc = rc;
	j->done_count++;
	j->done_thread = pthread_self();
	if (j->again != NULL) {
		struct writer *w = j->again;

		j->again = NULL;
		j->id += 100;
		if (writer_submit(w, job_plain, on_done, j) != 0)
			j->done_rc = -1;
	}
}

/* Order across two handles, grouping, weights and the call's result. */
static void
test_groups(void)
{
	struct event_base *b0 = event_base_new(), *b1 = event_base_new();
	struct writer *w0 = NULL, *w1 = NULL;
	struct log log = { .fail = DB_ERR_FULL };
	struct job j[12], g = { 0 };
	int i;

	ASSERT_TRUE(b0 != NULL && b1 != NULL);
	ASSERT_EQ(writer_new(b0, dir, NULL, 0, &w0), 0);
	ASSERT_EQ(writer_attach(w0, b1, &w1), 0);
	memset(j, 0, sizeof(j));
	for (i = 0; i < 12; i++) {
		j[i].log = &log;
		j[i].id = i;
	}
	gate(0);
	ASSERT_EQ(writer_submit(w0, job_gate, NULL, &g), 0);
	/* Queued while the thread waits at the gate: taken together. */
	ASSERT_EQ(writer_submit_grouped(w0, &group, 6, on_done, &j[0]), 0);
	ASSERT_EQ(writer_submit_grouped(w1, &group, 4, on_done, &j[1]), 0);
	ASSERT_EQ(writer_submit_grouped(w0, &group, 1, on_done, &j[2]), 0);
	ASSERT_EQ(writer_submit(w1, job_plain, on_done, &j[3]), 0);
	ASSERT_EQ(writer_submit_grouped(w1, &other_group, 0, on_done, &j[4]), 0);
	ASSERT_EQ(writer_submit_grouped(w0, &other_group, 0, on_done, &j[5]), 0);
	ASSERT_EQ(writer_submit_grouped(w1, &group, 20, on_done, &j[6]), 0);
	ASSERT_EQ(writer_submit_grouped(w0, &group, 0, on_done, &j[7]), 0);
	gate(1);
	/* w1's jobs (1, 3, 4, 6) have completed when it is freed; w0's wait
	 * for w0's loop. */
	writer_free(w1);
	for (i = 0; i < 8; i++) {
		int want = i == 1 || i == 3 || i == 4 || i == 6;

		ASSERT_EQ(j[i].done_count, want);
	}
	writer_free(w0);
	ASSERT_EQ(log.nran, 8);
	for (i = 0; i < 8; i++)
		ASSERT_EQ(log.ran[i], i);
	/* {0, 1}: 6 + 4 fill the weight; {2}: a plain job follows; {4, 5}:
	 * the other group; {6}: over the weight alone, it still goes, and
	 * nothing goes with it; {7}. */
	ASSERT_EQ(log.ncalls, 5);
	ASSERT_EQ(log.calls[0], 2);
	ASSERT_EQ(log.calls[1], 1);
	ASSERT_EQ(log.calls[2], 2);
	ASSERT_EQ(log.calls[3], 1);
	ASSERT_EQ(log.calls[4], 1);
	for (i = 0; i < 8; i++) {
		int want = i == 3 ? 3 : DB_ERR_FULL;

		ASSERT_EQ(j[i].done_count, 1);
		ASSERT_EQ(j[i].done_rc, want);
	}
	event_base_free(b0);
	event_base_free(b1);
}

/* A group call takes at most WRITER_GROUP_JOBS_MAX jobs. */
static void
test_group_cap(void)
{
	static const struct writer_group light = { group_fn, 1000 };
	enum { N = WRITER_GROUP_JOBS_MAX + 5 };
	struct event_base *b = event_base_new();
	struct writer *w = NULL;
	struct log log = { 0 };
	struct job j[N], g = { 0 };
	int i;

	ASSERT_TRUE(b != NULL);
	ASSERT_EQ(writer_new(b, dir, NULL, 0, &w), 0);
	gate(0);
	ASSERT_EQ(writer_submit(w, job_gate, NULL, &g), 0);
	memset(j, 0, sizeof(j));
	for (i = 0; i < N; i++) {
		j[i].log = &log;
		j[i].id = i;
		ASSERT_EQ(writer_submit_grouped(w, &light, 1, on_done, &j[i]), 0);
	}
	gate(1);
	writer_free(w);
	ASSERT_EQ(log.ncalls, 2);
	ASSERT_EQ(log.calls[0], WRITER_GROUP_JOBS_MAX);
	ASSERT_EQ(log.calls[1], 5);
	for (i = 0; i < N; i++) {
		ASSERT_EQ(log.ran[i], i);
		ASSERT_EQ(j[i].done_count, 1);
		ASSERT_EQ(j[i].done_rc, 0);
	}
	event_base_free(b);
}

/* A second loop in its own thread: its completions run there, loop 0's in
 * the main thread; a completion's follow-up runs before writer_free
 * returns. */
struct loop1 {
	struct event_base *base;
	struct writer *w;
	struct job jobs[64];
	int expected;
};

static void
on_done_count(int rc, void *arg)
{
	struct job *j = arg;
	struct loop1 *l = j->loop;

	(void)rc;
	j->done_count++;
	j->done_thread = pthread_self();
	if (--l->expected == 0)
		event_base_loopbreak(l->base);
}

static int
job_nothing(struct db *db, void *arg)
{
	(void)db;
	(void)arg;
	return 0;
}

static void *
loop1_main(void *arg)
{
	struct loop1 *l = arg;
	struct event *keep = event_new(l->base, -1, EV_PERSIST, NULL, NULL);
	struct timeval long_time = { 600, 0 };

	/* Something pending, so the loop waits for the completions. */
	event_add(keep, &long_time);
	event_base_dispatch(l->base);
	event_free(keep);
	return NULL;
}

static void
test_threads(void)
{
	struct event_base *b0 = event_base_new();
	struct writer *w0 = NULL;
	struct loop1 l = { 0 };
	struct log log = { 0 };
	struct job j0[64], again = { 0 };
	struct event *keep;
	struct timeval long_time = { 600, 0 };
	pthread_t t;
	int i;

	ASSERT_TRUE(b0 != NULL && (l.base = event_base_new()) != NULL);
	ASSERT_EQ(writer_new(b0, dir, NULL, 0, &w0), 0);
	ASSERT_EQ(writer_attach(w0, l.base, &l.w), 0);
	l.expected = 64;
	memset(j0, 0, sizeof(j0));
	for (i = 0; i < 64; i++) {
		l.jobs[i].loop = &l;
		ASSERT_EQ(writer_submit(l.w, job_nothing, on_done_count, &l.jobs[i]), 0);
	}
	ASSERT_EQ(pthread_create(&t, NULL, loop1_main, &l), 0);
	for (i = 0; i < 64; i++) {
		j0[i].log = &log;
		ASSERT_EQ(writer_submit(w0, job_nothing, on_done, &j0[i]), 0);
	}
	again.log = &log;
	again.again = w0;
	ASSERT_EQ(writer_submit(w0, job_plain, on_done, &again), 0);
	/* Loop 0 runs until its completions came (something pending, so
	 * it waits for them). */
	ASSERT_TRUE((keep = event_new(b0, -1, EV_PERSIST, NULL, NULL)) != NULL);
	event_add(keep, &long_time);
	while (again.done_count == 0)
		ASSERT_EQ(event_base_loop(b0, EVLOOP_ONCE), 0);
	event_free(keep);
	pthread_join(t, NULL);
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(l.jobs[i].done_count, 1);
		ASSERT_TRUE(pthread_equal(l.jobs[i].done_thread, t));
	}
	/* The follow-up is queued; writer_free runs it and its completion. */
	writer_free(l.w);
	writer_free(w0);
	for (i = 0; i < 64; i++) {
		ASSERT_EQ(j0[i].done_count, 1);
		ASSERT_TRUE(pthread_equal(j0[i].done_thread, pthread_self()));
	}
	ASSERT_EQ(again.done_count, 2);
	ASSERT_EQ(again.id, 100);
	ASSERT_EQ(again.done_rc, 100);
	ASSERT_EQ(log.nran, 2);
	event_base_free(b0);
	event_base_free(l.base);
}

static int
job_audit(struct db *db, void *arg)
{
	struct db_audit_row r = {
		.ts_ms = 1000, .event = DB_AUDIT_LOGOUT, .email = "w@example.com", .outcome = "ok"
	};

	(void)arg;
	return db_audit_add(db, &r);
}

/* A group function that records where it ran and writes one audit row
 * per job. */
static int
group_where(struct db *db, void *const *args, size_t n)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n; i++) {
		struct job *j = args[i];

		j->ran_thread = pthread_self();
		j->log->ran[j->log->nran++] = j->id;
		if (rc == 0)
			rc = job_audit(db, j);
	}
	return rc;
}

/* writer_help_grouped: with the thread idle the job runs here, committed
 * and completed before the call returns; with the thread busy it is the
 * thread's, and completes on this loop later. */
static void
test_help(void)
{
	static const struct writer_group where = { group_where, 10 };
	struct event_base *b = event_base_new();
	struct writer *w = NULL;
	struct log log = { 0 };
	struct job j[2], g = { 0 };
	long long before;

	memset(j, 0, sizeof(j));
	j[0].log = j[1].log = &log;
	j[1].id = 1;
	ASSERT_TRUE(b != NULL);
	ASSERT_EQ(writer_new(b, dir, NULL, 0, &w), 0);
	before = tu_store_int(dir, "SELECT count(*) FROM audit WHERE email = 'w@example.com'");
	ASSERT_EQ(writer_help_grouped(w, &where, 1, on_done, &j[0]), 0);
	ASSERT_EQ(j[0].done_count, 1);
	ASSERT_EQ(j[0].done_rc, 0);
	ASSERT_TRUE(pthread_equal(j[0].ran_thread, pthread_self()));
	ASSERT_TRUE(pthread_equal(j[0].done_thread, pthread_self()));
	ASSERT_EQ(tu_store_int(dir, "SELECT count(*) FROM audit WHERE email = 'w@example.com'"),
	    before + 1);
	/* The thread busy at the gate: queued for it, not run here. */
	gate(0);
	ASSERT_EQ(writer_submit(w, job_gate, NULL, &g), 0);
	gate_wait_entered();
	ASSERT_EQ(writer_help_grouped(w, &where, 1, on_done, &j[1]), 0);
	ASSERT_EQ(j[1].done_count, 0);
	ASSERT_EQ(log.nran, 1);
	gate(1);
	writer_free(w);
	ASSERT_EQ(j[1].done_count, 1);
	ASSERT_EQ(j[1].done_rc, 0);
	ASSERT_TRUE(!pthread_equal(j[1].ran_thread, pthread_self()));
	ASSERT_TRUE(pthread_equal(j[1].done_thread, pthread_self()));
	ASSERT_EQ(log.nran, 2);
	ASSERT_EQ(log.ran[0], 0);
	ASSERT_EQ(log.ran[1], 1);
	ASSERT_EQ(tu_store_int(dir, "SELECT count(*) FROM audit WHERE email = 'w@example.com'"),
	    before + 2);
	event_base_free(b);
}

/* With two handles on the thread, writer_help_grouped leaves the job to
 * the thread (which groups several loops' batches), idle or not. */
static void
test_help_shared(void)
{
	static const struct writer_group where = { group_where, 10 };
	struct event_base *b = event_base_new();
	struct writer *w0 = NULL, *w1 = NULL;
	struct log log = { 0 };
	struct job j = { 0 };

	j.log = &log;
	ASSERT_TRUE(b != NULL);
	ASSERT_EQ(writer_new(b, dir, NULL, 0, &w0), 0);
	ASSERT_EQ(writer_attach(w0, b, &w1), 0);
	ASSERT_EQ(writer_help_grouped(w0, &where, 1, on_done, &j), 0);
	writer_free(w0);
	ASSERT_EQ(j.done_count, 1);
	ASSERT_EQ(j.done_rc, 0);
	ASSERT_TRUE(!pthread_equal(j.ran_thread, pthread_self()));
	writer_free(w1);
	event_base_free(b);
}

/* The thread's connection writes for both handles, in the file. */
static void
test_real_write(void)
{
	struct event_base *b = event_base_new();
	struct writer *w0 = NULL, *w1 = NULL;
	struct job j[2];

	memset(j, 0, sizeof(j));
	ASSERT_TRUE(b != NULL);
	ASSERT_EQ(writer_new(b, dir, NULL, 0, &w0), 0);
	ASSERT_EQ(writer_attach(w0, b, &w1), 0);
	ASSERT_EQ(writer_submit(w0, job_audit, on_done, &j[0]), 0);
	ASSERT_EQ(writer_submit(w1, job_audit, on_done, &j[1]), 0);
	writer_free(w0);
	writer_free(w1);
	writer_free(NULL);
	ASSERT_EQ(j[0].done_count + j[1].done_count, 2);
	ASSERT_EQ(j[0].done_rc, 0);
	ASSERT_EQ(j[1].done_rc, 0);
	ASSERT_EQ(tu_store_int(dir, "SELECT count(*) FROM audit WHERE email = 'w@example.com'"),
	    2);
	event_base_free(b);
}

int
main(void)
{
	if (evthread_use_pthreads() != 0 || (dir = tu_mkdtemp()) == NULL) {
		fprintf(stderr, "cannot set up\n");
		return 1;
	}
	RUN(test_groups);
	RUN(test_group_cap);
	RUN(test_threads);
	RUN(test_real_write);
	RUN(test_help);
	RUN(test_help_shared);
	tu_rmdir(dir);
	return harness_done();
}
