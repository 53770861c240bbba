/*
 * store/writer.h - a loop's database writer: a thread with its own
 * connection (SQLite or PostgreSQL) that runs the loop's writes (audit
 * rows, sessions, throttle counts), so an event loop never waits for a
 * commit's fsync or for another loop's write lock. With SQLite, reads stay
 * in the loop, on its own connection (WAL: readers never wait for writers);
 * with PostgreSQL, whose every read is a round trip to a server that may be
 * slow or gone, a second one of these runs the loop's reads.
 *
 * A job is a function run in the writer thread on its connection, and a
 * completion run afterwards in the loop's thread with the job's result.
 * Jobs run in submission order. The job's argument belongs to the job from
 * submission until its completion has run.
 *
 * Owns the thread, its connection and the two queues. Must never call a
 * completion outside the loop's thread.
 */
#ifndef AUTHORITY_STORE_WRITER_H
#define AUTHORITY_STORE_WRITER_H

struct writer;
struct db;
struct db_options;
struct event_base;

/* Runs in the writer thread. Returns 0 or an error code. */
typedef int (*writer_fn)(struct db *db, void *arg);
/* Runs in the loop's thread with what the job returned. */
typedef void (*writer_done)(int rc, void *arg);

/* Opens the writer's connection (db_open of state_dir with opt, which may
 * be NULL; a SQLite file capped at max_bytes when not 0) and starts its
 * thread; completions are delivered on base. Returns 0 or VEP_ERR_* /
 * DB_ERR_*. */
int writer_new(struct event_base *base, const char *state_dir, const struct db_options *opt,
    long long max_bytes, struct writer **out);

/* Queues a job. done may be NULL (nothing to do afterwards). Returns 0 or
 * VEP_ERR_NOMEM, and then nothing was queued. */
int writer_submit(struct writer *c, writer_fn fn, writer_done done, void *arg);

/* Runs every queued job, stops the thread, runs the last completions (in
 * the caller's thread, which must be the loop's) and any jobs those queue,
 * with their completions, until none is left; then frees. NULL-safe. */
void writer_free(struct writer *c);

#endif
