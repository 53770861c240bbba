/*
 * auth/lookup.h - the reads one loop makes of the store: the session a
 * cookie names, how many sessions are alive, and whether the store answers.
 *
 * With SQLite the reads run on the loop's own connection and answer at once
 * (WAL: a read never waits for a writer). With PostgreSQL every read is a
 * round trip to a server that may be slow or gone, so it runs in the loop's
 * reader thread (store/writer.h) and answers later on the loop; the loop
 * never waits for it. A timer asks the store every LOOKUP_PING_MS how many
 * sessions are alive, which keeps the health and metrics figures current
 * without a request waiting, and reconnects to a store that came back.
 *
 * Owns the lookups in flight (each ends with its callback, at the latest
 * when the reader thread is freed) and the timer. Never logs a token.
 */
#ifndef AUTHORITY_AUTH_LOOKUP_H
#define AUTHORITY_AUTH_LOOKUP_H

#include <stdint.h>

#include "auth/signin.h"

struct authority;
struct db;
struct event_base;
struct lookup;
struct writer;

/* How often the PostgreSQL store is asked whether it answers (ms). While
 * the last answer was "unreachable", lookups fail at once with DB_ERR_DOWN
 * instead of queueing behind a store that may take a connect timeout to
 * say so; a lookup or ping that succeeds ends that. */
#define LOOKUP_PING_MS 1000

/* A loop's reads: on db (SQLite; reader NULL) or through reader
 * (PostgreSQL; db NULL). A session found slides its idle timer through
 * writer. All borrowed. Returns 0 or VEP_ERR_NOMEM. */
int lookup_new(struct authority *a, struct event_base *base, struct db *db,
    struct writer *reader, struct writer *writer, struct lookup **out);

/* Stops the timer and frees. Lookups still in flight are the reader's:
 * free the reader thread first. NULL-safe. */
void lookup_free(struct lookup *lk);

/* Called once per lookup_session: rc 0 with s (borrowed, wiped after the
 * call), DB_ERR_NOTFOUND (no cookie, a malformed one, no such session or an
 * ended one), a DB_ERR_* of the store (BUSY, FULL, DOWN...), VEP_ERR_NOMEM or
 * VEP_ERR_CRYPTO, with s all zero. */
typedef void (*lookup_found)(int rc, const struct signin_session *s, void *arg);

/* Finds the live session the Cookie header (may be NULL) names and slides
 * its idle timer (without waiting for the write), then calls done: before
 * returning (SQLite, or no cookie) or later on the loop (PostgreSQL). */
void lookup_session(struct lookup *lk, const char *cookie, lookup_found done, void *arg);

/* What keeps the store from answering now ("database unreachable",
 * "database does not answer"), or NULL. */
const char *lookup_problem(struct lookup *lk);

/* 1 when the store is a server several instances share (PostgreSQL), 0
 * for this machine's own file. */
int lookup_store_shared(const struct lookup *lk);

/* The sessions alive now into *count (for the metrics; with PostgreSQL as
 * of the last ping). Returns 0 or the store's error. */
int lookup_sessions_alive(struct lookup *lk, int64_t *count);

#endif
