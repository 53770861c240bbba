/*
 * store/writer.c - the loop's database writer thread (contract in
 * store/writer.h).
 */
#include "store/writer.h"

#include <pthread.h>
#include <stdlib.h>

#include <event2/event.h>

#include "store/db.h"
#include "err.h"

struct job {
	struct job *next;
	writer_fn fn;
	writer_done done;
	void *arg;
	int rc;
};

struct queue {
	struct job *head, **tail;
};

struct writer {
	struct db *db;
	pthread_t thread;
	int running;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct queue todo;           /* loop -> writer */
	struct queue finished;       /* writer -> loop */
	int stopping;
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

static void
on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct writer *c = arg;
	struct job *done;

	pthread_mutex_lock(&c->mu);
	done = queue_take(&c->finished);
	pthread_mutex_unlock(&c->mu);
	run_completions(done);
}

static void *
writer(void *arg)
{
	struct writer *c = arg;
	struct job *batch, *j;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (c->todo.head == NULL && !c->stopping)
			pthread_cond_wait(&c->cv, &c->mu);
		if (c->todo.head == NULL && c->stopping)
			break;
		batch = queue_take(&c->todo);
		pthread_mutex_unlock(&c->mu);
		for (j = batch; j != NULL; j = j->next)
			j->rc = j->fn(c->db, j->arg);
		pthread_mutex_lock(&c->mu);
		while (batch != NULL) {
			j = batch;
			batch = batch->next;
			queue_push(&c->finished, j);
		}
		event_active(c->wake, EV_TIMEOUT, 0);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

int
writer_new(struct event_base *base, const char *state_dir, const struct db_options *opt,
    long long max_bytes, struct writer **out)
{
	struct writer *c;
	int rc;

	*out = NULL;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return VEP_ERR_NOMEM;
	queue_init(&c->todo);
	queue_init(&c->finished);
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	if ((rc = db_open(state_dir, opt, &c->db)) != 0 ||
	    (max_bytes > 0 && (rc = db_set_size_limit(c->db, max_bytes)) != 0))
		goto fail;
	rc = VEP_ERR_NOMEM;
	if ((c->wake = event_new(base, -1, 0, on_wake, c)) == NULL ||
	    pthread_create(&c->thread, NULL, writer, c) != 0)
		goto fail;
	c->running = 1;
	*out = c;
	return VEP_OK;
fail:
	writer_free(c);
	return rc;
}

int
writer_submit(struct writer *c, writer_fn fn, writer_done done, void *arg)
{
	struct job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return VEP_ERR_NOMEM;
	j->fn = fn;
	j->done = done;
	j->arg = arg;
	pthread_mutex_lock(&c->mu);
	queue_push(&c->todo, j);
	pthread_cond_signal(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return VEP_OK;
}

void
writer_free(struct writer *c)
{
	struct job *done;

	if (c == NULL)
		return;
	if (c->running) {
		pthread_mutex_lock(&c->mu);
		c->stopping = 1;
		pthread_cond_signal(&c->cv);
		pthread_mutex_unlock(&c->mu);
		pthread_join(c->thread, NULL);
	}
	done = queue_take(&c->finished);
	run_completions(done);
	/* Completions may queue follow-up jobs (a sign-in counted goes on to
	 * settle): the thread is gone, so they run here, with theirs, until
	 * nothing is left. No lock: no other thread uses c any more. */
	while ((done = queue_take(&c->todo)) != NULL) {
		struct job *j;

		for (j = done; j != NULL; j = j->next)
			j->rc = c->db != NULL ? j->fn(c->db, j->arg) : VEP_ERR_ARG;
		run_completions(done);
	}
	if (c->wake != NULL)
		event_free(c->wake);
	db_close(c->db);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c);
}
