/*
 * store/deferred.c - fire-and-forget database writes (contract in store/deferred.h).
 */
#include "store/deferred.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/writer.h"
#include "store/audit.h"
#include "store/throttle.h"
#include "core/log.h"

struct touch_job {
	struct db_session s;
	int64_t now;
};

struct delete_job {
	uint8_t hash[DB_SESSION_HASH_BYTES];
};

struct audit_job {
	struct log *log;
	struct db_audit_row row;
	char email[DB_AUDIT_TEXT_MAX + 1];
	char fp[DB_AUDIT_FP_CHARS + 1];
	char client[DB_AUDIT_TEXT_MAX + 1];
	char outcome[DB_AUDIT_TEXT_MAX + 1];
	char signer[DB_AUDIT_FP_CHARS + 1];
	char account[DB_AUDIT_TEXT_MAX + 1];
	int rc;
};

struct housekeeping_job {
	struct log *log;
	int64_t now, rows, sessions;
	int rc_sessions, rc_throttle;
};

static void
free_arg(int rc, void *arg)
{
	free(arg);
}

/* Queues fn on w; when even that fails (no memory), the write
 * is dropped and its argument freed. */
static void
submit(struct writer *w, struct log *log, writer_fn fn, writer_done done, void *arg)
{
	if (arg == NULL || writer_submit(w, fn, done, arg) != 0) {
		log_error(log, "out of memory for a database write (dropped)");
		free(arg);
	}
}

static int
do_touch(struct db *db, void *arg)
{
	struct touch_job *j = arg;

	return db_session_touch(db, &j->s, j->now);
}

void
deferred_session_touch(struct writer *w, struct log *log, struct db_session *s, int64_t now)
{
	struct touch_job *j;
	int64_t exp;

	if (now - s->last_seen < DB_SESSION_TOUCH_MIN_S)
		return; /* db_session_touch would skip it too */
	if ((j = malloc(sizeof(*j))) != NULL) {
		j->s = *s;
		j->now = now;
	}
	submit(w, log, do_touch, free_arg, j);
	exp = now + s->idle_s;
	s->last_seen = now;
	s->expires_at = exp < s->absolute_at ? exp : s->absolute_at;
}

static int
do_delete(struct db *db, void *arg)
{
	struct delete_job *j = arg;

	return db_session_delete(db, j->hash);
}

void
deferred_session_delete(struct writer *w, struct log *log,
    const uint8_t hash[DB_SESSION_HASH_BYTES])
{
	struct delete_job *j = malloc(sizeof(*j));

	if (j != NULL)
		memcpy(j->hash, hash, sizeof(j->hash));
	submit(w, log, do_delete, free_arg, j);
}

static int
do_audit(struct db *db, void *arg)
{
	struct audit_job *j = arg;

	return db_audit_add(db, &j->row);
}

static void
audit_done(int rc, void *arg)
{
	struct audit_job *j = arg;

	if (rc != 0)
		log_error(j->log, "audit: %s", srv_strerror(rc));
	free(j);
}

/* Copies a possibly NULL text into buf; returns buf or NULL. */
static const char *
copy(char *buf, size_t len, const char *s)
{
	if (s == NULL)
		return NULL;
	snprintf(buf, len, "%s", s);
	return buf;
}

void
deferred_audit(struct writer *w, struct log *log, const struct db_audit_row *row)
{
	struct audit_job *j = calloc(1, sizeof(*j));

	if (j != NULL) {
		j->log = log;
		j->row = *row;
		j->row.email = copy(j->email, sizeof(j->email), row->email);
		j->row.key_fp = copy(j->fp, sizeof(j->fp), row->key_fp);
		j->row.client_addr = copy(j->client, sizeof(j->client), row->client_addr);
		j->row.outcome = copy(j->outcome, sizeof(j->outcome), row->outcome);
		j->row.signer_fp = copy(j->signer, sizeof(j->signer), row->signer_fp);
		j->row.account = copy(j->account, sizeof(j->account), row->account);
	}
	submit(w, log, do_audit, audit_done, j);
}

static int
do_housekeeping(struct db *db, void *arg)
{
	struct housekeeping_job *j = arg;

	j->rc_sessions = db_session_purge(db, j->now, j->rows, &j->sessions);
	j->rc_throttle = db_throttle_prune(db, j->now, j->rows, NULL);
	return 0;
}

static void
housekeeping_done(int rc, void *arg)
{
	struct housekeeping_job *j = arg;

	if (j->rc_sessions != 0)
		log_warn(j->log, "housekeeping: sessions: %s", srv_strerror(j->rc_sessions));
	else if (j->sessions > 0)
		log_debug(j->log, "housekeeping: %lld dead sessions deleted",
		    (long long)j->sessions);
	if (j->rc_throttle != 0)
		log_warn(j->log, "housekeeping: throttle: %s", srv_strerror(j->rc_throttle));
	free(j);
}

void
deferred_housekeeping(struct writer *w, struct log *log, int64_t now, int64_t rows)
{
	struct housekeeping_job *j = calloc(1, sizeof(*j));

	if (j != NULL) {
		j->log = log;
		j->now = now;
		j->rows = rows;
	}
	submit(w, log, do_housekeeping, housekeeping_done, j);
}
