/*
 * auth/lookup.c - the loop's reads of the store (contract in auth/lookup.h):
 * inline on SQLite, in the reader thread on PostgreSQL.
 */
#include "auth/lookup.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "core/errors.h"
#include "core/log.h"
#include "secmem.h"
#include "server/shared.h"
#include "store/deferred.h"
#include "store/sessions.h"
#include "store/writer.h"

struct lookup {
	struct authority *a;      /* borrowed, as are base, db, reader and writer */
	struct event_base *base;
	struct db *db;            /* SQLite: the loop's connection */
	struct writer *reader;    /* PostgreSQL: the loop's reader thread */
	struct writer *writer;
	struct event *ping;       /* owned (PostgreSQL) */
	int ping_pending;         /* a ping is queued in the reader */
	int store_rc;             /* the last ping's (or lookup's) verdict on the store */
	int64_t alive;            /* sessions alive at the last ping */
	int64_t counted;          /* the reader's count, read only once its ping is done */
	vep_digester *digester;   /* owned: hashes each presented token */
};

/* One session lookup in the reader thread. */
struct lookup_job {
	struct lookup *lk;
	uint8_t hash[DB_SESSION_HASH_BYTES];
	int64_t now;
	struct db_session row;
	struct signin_session out;
	lookup_found done;
	void *arg;
};

/* Whether the result of a read says the store answered. */
static int
store_verdict(int rc)
{
	return rc == DB_ERR_NOTFOUND || rc == DB_ERR_EXPIRED ? 0 : rc;
}

/* Turns a lookup's result into what the caller gets, slides the idle
 * timer of a session found, and wipes the row. */
static int
lookup_finish(struct lookup *lk, int rc, struct db_session *row, int64_t now,
    struct signin_session *out)
{
	if (rc == 0) {
		deferred_session_touch(lk->writer, &lk->a->log, row, now); /* without waiting */
		snprintf(out->email, sizeof(out->email), "%s", row->email);
		out->expires_at = row->expires_at;
	} else {
		if (rc != DB_ERR_NOTFOUND && rc != DB_ERR_EXPIRED)
			log_error(&lk->a->log, "session lookup: %s", srv_strerror(rc));
		signin_session_wipe(out);
		if (rc == DB_ERR_EXPIRED)
			rc = DB_ERR_NOTFOUND;
	}
	vep_memzero(row, sizeof(*row));
	return rc;
}

/* In the reader thread. */
static int
job_lookup(struct db *db, void *arg)
{
	struct lookup_job *j = arg;

	return db_session_lookup(db, j->out.tokens.token_hash, j->now, &j->row);
}

static void
job_found(int rc, void *arg)
{
	struct lookup_job *j = arg;
	struct lookup *lk = j->lk;

	/* Only a ping says "down" (a lookup may meet a dropped connection
	 * that the next call re-makes); any answer says "up". */
	if (store_verdict(rc) != DB_ERR_DOWN)
		lk->store_rc = store_verdict(rc);
	rc = lookup_finish(lk, rc, &j->row, j->now, &j->out);
	j->done(rc, &j->out, j->arg);
	signin_session_wipe(&j->out);
	free(j);
}

void
lookup_session(struct lookup *lk, const char *cookie, lookup_found done, void *arg)
{
	char token[SESSION_TOKEN_CHARS + 1];
	struct signin_session out;
	struct db_session row;
	struct lookup_job *j;
	int64_t now = (int64_t)time(NULL);
	int rc;

	memset(&out, 0, sizeof(out));
	rc = session_cookie_find(cookie, token);
	if (rc == 0)
		rc = session_tokens_from(lk->digester, token, &out.tokens);
	vep_memzero(token, sizeof(token));
	if (rc != 0) {
		signin_session_wipe(&out);
		done(rc == VEP_ERR_CRYPTO || rc == VEP_ERR_NOMEM ? rc : DB_ERR_NOTFOUND, &out,
		    arg);
		return;
	}
	if (lk->reader == NULL) {
		rc = db_session_lookup(lk->db, out.tokens.token_hash, now, &row);
		rc = lookup_finish(lk, rc, &row, now, &out);
		done(rc, &out, arg);
		signin_session_wipe(&out);
		return;
	}
	if (lk->store_rc == DB_ERR_DOWN || (j = calloc(1, sizeof(*j))) == NULL) {
		signin_session_wipe(&out);
		done(lk->store_rc == DB_ERR_DOWN ? DB_ERR_DOWN : VEP_ERR_NOMEM, &out, arg);
		return;
	}
	j->lk = lk;
	j->now = now;
	j->out = out;
	j->done = done;
	j->arg = arg;
	signin_session_wipe(&out);
	if (writer_submit(lk->reader, job_lookup, job_found, j) != 0) {
		signin_session_wipe(&j->out);
		free(j);
		done(VEP_ERR_NOMEM, &out, arg);
	}
}

/* In the reader thread: the count doubles as the question "do you answer". */
static int
job_ping(struct db *db, void *arg)
{
	struct lookup *lk = arg;

	return db_session_count(db, (int64_t)time(NULL), &lk->counted);
}

static void
job_pinged(int rc, void *arg)
{
	struct lookup *lk = arg;

	lk->ping_pending = 0;
	lk->store_rc = rc;
	if (rc == 0)
		lk->alive = lk->counted;
}

static void
on_ping(evutil_socket_t fd, short what, void *arg)
{
	struct lookup *lk = arg;

	/* One at a time: a store that hangs does not fill the queue. */
	if (lk->ping_pending)
		return;
	if (writer_submit(lk->reader, job_ping, job_pinged, lk) == 0)
		lk->ping_pending = 1;
}

const char *
lookup_problem(struct lookup *lk)
{
	int version;

	if (lk->reader == NULL)
		return db_schema_version(lk->db, &version) != 0 ? "database does not answer" : NULL;
	if (lk->store_rc == DB_ERR_DOWN)
		return "database unreachable";
	return lk->store_rc != 0 ? "database does not answer" : NULL;
}

int
lookup_store_shared(const struct lookup *lk)
{
	return lk->reader != NULL;
}

int
lookup_sessions_alive(struct lookup *lk, int64_t *count)
{
	if (lk->reader == NULL)
		return db_session_count(lk->db, (int64_t)time(NULL), count);
	*count = lk->alive;
	return lk->store_rc;
}

int
lookup_new(struct authority *a, struct event_base *base, struct db *db,
    struct writer *reader, struct writer *writer, struct lookup **out)
{
	struct timeval tv = { LOOKUP_PING_MS / 1000, (LOOKUP_PING_MS % 1000) * 1000 };
	struct lookup *lk;

	*out = NULL;
	if ((lk = calloc(1, sizeof(*lk))) == NULL)
		return VEP_ERR_NOMEM;
	lk->a = a;
	lk->base = base;
	lk->db = db;
	lk->reader = reader;
	lk->writer = writer;
	if ((lk->digester = vep_digester_new()) == NULL) {
		lookup_free(lk);
		return VEP_ERR_NOMEM;
	}
	if (reader != NULL) {
		if ((lk->ping = event_new(base, -1, EV_PERSIST, on_ping, lk)) == NULL ||
		    event_add(lk->ping, &tv) != 0) {
			lookup_free(lk);
			return VEP_ERR_NOMEM;
		}
		on_ping(-1, 0, lk);
	}
	*out = lk;
	return VEP_OK;
}

void
lookup_free(struct lookup *lk)
{
	if (lk == NULL)
		return;
	if (lk->ping != NULL)
		event_free(lk->ping);
	vep_digester_free(lk->digester);
	free(lk);
}
