/*
 * store/writer.h - database writers: a thread with its own connection
 * (SQLite or PostgreSQL) that runs an event loop's writes (audit rows,
 * sessions, throttle counts), so the loop never waits for a commit's
 * fsync, except when it chooses to run them itself while it waits for
 * something else anyway (writer_help_grouped, SQLite only). With SQLite,
 * reads stay in the loop, on its own connection (WAL: readers never wait
 * for writers), and every loop shares one writer
 * thread (writer_attach): SQLite takes one write lock at a time anyway,
 * so one thread commits as fast as several, never sleeps on another
 * connection's lock, and can put several loops' audit batches in one
 * transaction (one fsync; writer_submit_grouped). With PostgreSQL, each
 * loop has a thread of its own (the server takes concurrent writers), and
 * a second one of these runs the loop's reads, each a round trip to a
 * server that may be slow or gone.
 *
 * A struct writer is one loop's handle on a thread: its completions run on
 * that loop's base. A job is a function run in the writer thread on its
 * connection, and a completion run afterwards in the loop's thread with
 * the job's result. Jobs run in submission order (across the handles of
 * one thread too). The job's argument belongs to the job from submission
 * until its completion has run.
 *
 * Owns the thread, its connection and the queues. Must never call a
 * completion outside its handle's loop thread.
 */
#ifndef AUTHORITY_STORE_WRITER_H
#define AUTHORITY_STORE_WRITER_H

#include <stddef.h>

struct writer;
struct db;
struct db_options;
struct event_base;

/* Runs in the writer thread. Returns 0 or an error code. */
typedef int (*writer_fn)(struct db *db, void *arg);
/* Runs in the loop's thread with what the job returned. */
typedef void (*writer_done)(int rc, void *arg);

/* The most jobs one call of a group's function takes. */
#define WRITER_GROUP_JOBS_MAX 32

/* Jobs that may share one transaction. Queued jobs of the same group next
 * to each other (from any handle of the thread) run as one call of fn with
 * their arguments in submission order, at most WRITER_GROUP_JOBS_MAX and,
 * beyond the first, at most max_weight of their weights together; every
 * one of them gets fn's result, so fn must do all or nothing. */
struct writer_group {
	int (*fn)(struct db *db, void *const *args, size_t n);
	size_t max_weight;
};

/* Opens a connection (db_open of state_dir with opt, which may be NULL; a
 * SQLite file capped at max_bytes when not 0), starts its thread and
 * returns the first handle on it, whose completions are delivered on
 * base. Returns 0 or VEP_ERR_* / DB_ERR_*. */
int writer_new(struct event_base *base, const char *state_dir, const struct db_options *opt,
    long long max_bytes, struct writer **out);

/* Another handle on w's thread, delivering on base (another loop's).
 * Returns 0 or VEP_ERR_NOMEM. */
int writer_attach(struct writer *w, struct event_base *base, struct writer **out);

/* Queues a job. done may be NULL (nothing to do afterwards). Returns 0 or
 * VEP_ERR_NOMEM, and then nothing was queued. */
int writer_submit(struct writer *w, writer_fn fn, writer_done done, void *arg);

/* Queues a job of group g (which must outlive it) weighing weight. As
 * writer_submit. */
int writer_submit_grouped(struct writer *w, const struct writer_group *g, size_t weight,
    writer_done done, void *arg);

/* As writer_submit_grouped, for a loop about to wait anyway (for the key
 * process, during a signing round trip): with SQLite, when this is the
 * thread's only handle and the thread is not running jobs now, the
 * calling thread runs every job queued (this one last, all in order, as
 * the thread would) and then this handle's completions, before
 * returning; the writer thread is not woken for them. Otherwise the job
 * is queued for the thread: it is running jobs; or several loops share
 * it (it puts their batches in one transaction, which a loop committing
 * its own would prevent); or the store is PostgreSQL, whose commits a
 * loop must never wait for. The caller's loop waits for the commit's
 * fsync only here. Returns 0 or VEP_ERR_NOMEM (nothing queued). */
int writer_help_grouped(struct writer *w, const struct writer_group *g, size_t weight,
    writer_done done, void *arg);

/* Waits for every job queued through w, running their completions in the
 * caller's thread (which must be w's loop's, its loop no longer running)
 * as they come, with those of any jobs the completions queue, until none
 * is left; then frees the handle, and with the thread's last handle stops
 * the thread and closes its connection. NULL-safe. */
void writer_free(struct writer *w);

#endif
