/*
 * store/writer.c - database writer threads and the loops' handles on them
 * (contract in store/writer.h).
 */
#include "store/writer.h"

#include <pthread.h>
#include <stdlib.h>

#include <event2/event.h>

#include "store/db.h"
#include "err.h"

struct job {
	struct job *next;
	writer_fn fn;                    /* or NULL in a group's job */
	const struct writer_group *group;
	size_t weight;
	writer_done done;
	void *arg;
	int rc;
	struct writer *w;                /* whose completion it is */
};

struct queue {
	struct job *head, **tail;
};

/* One thread and its connection; everything here is under mu. */
struct wthread {
	struct db *db;
	pthread_t thread;
	int running;
	int busy;                    /* jobs are running on db (in the thread or a loop) */
	pthread_mutex_t mu;
	pthread_cond_t todo_cv;      /* todo has jobs, or stopping */
	pthread_cond_t done_cv;      /* a handle's finished has jobs */
	struct queue todo;           /* loops -> thread */
	int stopping;
	unsigned handles;            /* the last one's writer_free stops the thread */
};

struct writer {
	struct wthread *t;
	struct queue finished;       /* thread -> loop, under t->mu */
	size_t pending;              /* queued, not yet finished; under t->mu */
	struct event *wake;          /* activated when finished gets jobs */
};

static void
queue_init(struct queue *q)
{
	q->head = NULL;
	q->tail = &q->head;
}

static void
queue_push(struct queue *q, struct job *j)
{
	j->next = NULL;
	*q->tail = j;
	q->tail = &j->next;
}

/* Takes the whole queue (the caller holds the mutex). */
static struct job *
queue_take(struct queue *q)
{
	struct job *all = q->head;

	queue_init(q);
	return all;
}

static void
run_completions(struct job *j)
{
	while (j != NULL) {
		struct job *next = j->next;
		if (j->done != NULL)
			j->done(j->rc, j->arg);
		free(j);
		j = next;
	}
}

/* The jobs from j on that one call of j's group takes; returns the first
 * job after them, their arguments in args, their number in *n. */
static struct job *
group_take(struct job *j, void **args, size_t *n)
{
	const struct writer_group *g = j->group;
	size_t weight = 0;

	*n = 0;
	while (j != NULL && j->group == g && *n < WRITER_GROUP_JOBS_MAX &&
	    (*n == 0 || weight + j->weight <= g->max_weight)) {
		weight += j->weight;
		args[(*n)++] = j->arg;
		j = j->next;
	}
	return j;
}

/* Runs a list of jobs in order on db, each group's run of neighbours in
 * one call; sets each job's rc. */
static void
run_jobs(struct db *db, struct job *j)
{
	void *args[WRITER_GROUP_JOBS_MAX];
	struct job *end;
	size_t n;
	int rc;

	while (j != NULL) {
		if (j->group == NULL) {
			j->rc = j->fn(db, j->arg);
			j = j->next;
			continue;
		}
		end = group_take(j, args, &n);
		rc = j->group->fn(db, args, n);
		for (; j != end; j = j->next)
			j->rc = rc;
	}
}

static void
on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct writer *w = arg;
	struct job *done;

	pthread_mutex_lock(&w->t->mu);
	done = queue_take(&w->finished);
	pthread_mutex_unlock(&w->t->mu);
	run_completions(done);
}

/* Hands each finished job to its handle (the caller holds the mutex). */
static void
finish(struct wthread *t, struct job *batch)
{
	struct job *j;

	while (batch != NULL) {
		j = batch;
		batch = batch->next;
		queue_push(&j->w->finished, j);
		j->w->pending--;
		/* Once per handle and list is enough; again is harmless. */
		if (batch == NULL || batch->w != j->w)
			event_active(j->w->wake, EV_TIMEOUT, 0);
	}
	pthread_cond_broadcast(&t->done_cv);
}

/* Runs every job queued, as the one running jobs (the caller holds the
 * mutex, and holds it again on return; it is released while they run). */
static void
run_queued(struct wthread *t)
{
	struct job *batch = queue_take(&t->todo);

	t->busy = 1;
	pthread_mutex_unlock(&t->mu);
	run_jobs(t->db, batch);
	pthread_mutex_lock(&t->mu);
	t->busy = 0;
	finish(t, batch);
}

static void *
thread_main(void *arg)
{
	struct wthread *t = arg;

	pthread_mutex_lock(&t->mu);
	for (;;) {
		/* While a loop runs jobs itself, the next are for whoever
		 * comes first after it (it wakes this thread if any are left). */
		while ((t->todo.head == NULL || t->busy) && !t->stopping)
			pthread_cond_wait(&t->todo_cv, &t->mu);
		/* Stopping: every handle has drained, so no loop is running
		 * jobs and none is queued. */
		if (t->todo.head == NULL || t->busy)
			break;
		run_queued(t);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

/* Stops t's thread (every handle has drained: nothing is queued) and
 * frees it. NULL-safe. */
static void
wthread_free(struct wthread *t)
{
	if (t == NULL)
		return;
	if (t->running) {
		pthread_mutex_lock(&t->mu);
		t->stopping = 1;
		pthread_cond_signal(&t->todo_cv);
		pthread_mutex_unlock(&t->mu);
		pthread_join(t->thread, NULL);
	}
	db_close(t->db);
	pthread_mutex_destroy(&t->mu);
	pthread_cond_destroy(&t->todo_cv);
	pthread_cond_destroy(&t->done_cv);
	free(t);
}

static int
wthread_new(const char *state_dir, const struct db_options *opt, long long max_bytes,
    struct wthread **out)
{
	struct wthread *t;
	int rc;

	*out = NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return VEP_ERR_NOMEM;
	queue_init(&t->todo);
	pthread_mutex_init(&t->mu, NULL);
	pthread_cond_init(&t->todo_cv, NULL);
	pthread_cond_init(&t->done_cv, NULL);
	if ((rc = db_open(state_dir, opt, &t->db)) != 0 ||
	    (max_bytes > 0 && (rc = db_set_size_limit(t->db, max_bytes)) != 0))
		goto fail;
	if (pthread_create(&t->thread, NULL, thread_main, t) != 0) {
		rc = VEP_ERR_NOMEM;
		goto fail;
	}
	t->running = 1;
	*out = t;
	return VEP_OK;
fail:
	wthread_free(t);
	return rc;
}

/* A handle on t delivering on base; counts itself among t's handles. */
static int
handle_new(struct wthread *t, struct event_base *base, struct writer **out)
{
	struct writer *w;

	*out = NULL;
	if ((w = calloc(1, sizeof(*w))) == NULL)
		return VEP_ERR_NOMEM;
	queue_init(&w->finished);
	if ((w->wake = event_new(base, -1, 0, on_wake, w)) == NULL) {
		free(w);
		return VEP_ERR_NOMEM;
	}
	w->t = t;
	pthread_mutex_lock(&t->mu);
	t->handles++;
	pthread_mutex_unlock(&t->mu);
	*out = w;
	return VEP_OK;
}

int
writer_new(struct event_base *base, const char *state_dir, const struct db_options *opt,
    long long max_bytes, struct writer **out)
{
	struct wthread *t;
	int rc;

	*out = NULL;
	if ((rc = wthread_new(state_dir, opt, max_bytes, &t)) != 0)
		return rc;
	if ((rc = handle_new(t, base, out)) != 0)
		wthread_free(t);
	return rc;
}

int
writer_attach(struct writer *w, struct event_base *base, struct writer **out)
{
	return handle_new(w->t, base, out);
}

/* A job for w: fn, or one of group g weighing weight; NULL without
 * memory. */
static struct job *
job_new(struct writer *w, writer_fn fn, const struct writer_group *g, size_t weight,
    writer_done done, void *arg)
{
	struct job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	j->fn = fn;
	j->group = g;
	j->weight = weight;
	j->done = done;
	j->arg = arg;
	j->w = w;
	return j;
}

/* Queues j (the caller holds the mutex). */
static void
enqueue(struct wthread *t, struct job *j)
{
	queue_push(&t->todo, j);
	j->w->pending++;
}

/* Queues j for the thread and wakes it (the caller holds the mutex). */
static void
enqueue_for_thread(struct wthread *t, struct job *j)
{
	enqueue(t, j);
	/* Busy: whoever runs jobs looks at the queue again when done. */
	if (!t->busy)
		pthread_cond_signal(&t->todo_cv);
}

/* Queues a job for the thread, and wakes it. */
static int
submit(struct writer *w, writer_fn fn, const struct writer_group *g, size_t weight,
    writer_done done, void *arg)
{
	struct wthread *t = w->t;
	struct job *j = job_new(w, fn, g, weight, done, arg);

	if (j == NULL)
		return VEP_ERR_NOMEM;
	pthread_mutex_lock(&t->mu);
	enqueue_for_thread(t, j);
	pthread_mutex_unlock(&t->mu);
	return VEP_OK;
}

int
writer_submit(struct writer *w, writer_fn fn, writer_done done, void *arg)
{
	return submit(w, fn, NULL, 0, done, arg);
}

int
writer_submit_grouped(struct writer *w, const struct writer_group *g, size_t weight,
    writer_done done, void *arg)
{
	return submit(w, NULL, g, weight, done, arg);
}

int
writer_help_grouped(struct writer *w, const struct writer_group *g, size_t weight,
    writer_done done, void *arg)
{
	struct wthread *t = w->t;
	struct job *j = job_new(w, NULL, g, weight, done, arg), *mine;

	if (j == NULL)
		return VEP_ERR_NOMEM;
	pthread_mutex_lock(&t->mu);
	/* With several loops the thread runs their batches side by side in
	 * one transaction; a loop that ran its own would take that away. */
	if (!db_is_local(t->db) || t->busy || t->handles > 1) {
		enqueue_for_thread(t, j);
		pthread_mutex_unlock(&t->mu);
		return VEP_OK;
	}
	/* Everything queued, in order, as the thread would run it. */
	enqueue(t, j);
	run_queued(t);
	if (t->todo.head != NULL)
		pthread_cond_signal(&t->todo_cv);
	mine = queue_take(&w->finished);
	pthread_mutex_unlock(&t->mu);
	/* This loop's completions now (its wake event finds none left);
	 * other loops' on their own loops, as always. */
	run_completions(mine);
	return VEP_OK;
}

void
writer_free(struct writer *w)
{
	struct wthread *t;
	struct job *done;
	int last;

	if (w == NULL)
		return;
	t = w->t;
	/* The thread runs until its last handle goes, so every job queued
	 * here, and every follow-up a completion queues, is run by it. */
	pthread_mutex_lock(&t->mu);
	for (;;) {
		while (w->finished.head == NULL && w->pending > 0)
			pthread_cond_wait(&t->done_cv, &t->mu);
		if (w->finished.head == NULL)
			break;
		done = queue_take(&w->finished);
		pthread_mutex_unlock(&t->mu);
		run_completions(done);
		pthread_mutex_lock(&t->mu);
	}
	last = --t->handles == 0;
	pthread_mutex_unlock(&t->mu);
	event_free(w->wake);
	free(w);
	if (last)
		wthread_free(t);
}
