/*
 * issuance.c - batched audit commits for certificates (contract in
 * issuance.h).
 */
#include "issuance.h"

#include <stdlib.h>

#include <event2/event.h>
#include <jansson.h>

#include "authority.h"
#include "db_audit.h"
#include "log.h"
#include "loop.h"
#include "req.h"

struct waiting {
	struct waiting *next;
	struct req *r;
	json_t *reply;
};

struct issuance {
	struct loop *l;
	struct db_audit_batch *batch;
	struct waiting *head, **tail;
	unsigned n;
	struct event *flush;
	int scheduled;
};

static void
answer_all(struct issuance *is, int ok)
{
	struct waiting *w;

	while ((w = is->head) != NULL) {
		is->head = w->next;
		if (ok) {
			req_reply_json(w->r, 200, w->reply);
		} else {
			req_add_header(w->r, "Retry-After", "5");
			req_reply_error(w->r, REQ_ERR_UNAVAILABLE);
		}
		json_decref(w->reply);
		free(w);
	}
	is->tail = &is->head;
	is->n = 0;
}

static void
flush(struct issuance *is)
{
	int rc;

	is->scheduled = 0;
	if (is->n == 0)
		return;
	rc = db_audit_batch_commit(is->l->db, is->batch);
	if (rc != 0) {
		log_error(&is->l->a->log, "audit of %u certificate%s: %s (not issued)", is->n,
		    is->n == 1 ? "" : "s", db_strerror(rc));
		/* The batch keeps its rows on failure; none of them happened. */
		db_audit_batch_free(is->batch);
		is->batch = NULL;
		if (db_audit_batch_new(&is->batch) != 0)
			is->batch = NULL;
	}
	answer_all(is, rc == 0);
}

static void
on_flush(evutil_socket_t fd, short what, void *arg)
{
	flush(arg);
}

int
issuance_new(struct loop *l, struct issuance **out)
{
	struct issuance *is;

	*out = NULL;
	if ((is = calloc(1, sizeof(*is))) == NULL)
		return VEP_ERR_NOMEM;
	is->l = l;
	is->tail = &is->head;
	if (db_audit_batch_new(&is->batch) != 0 ||
	    (is->flush = event_new(l->base, -1, 0, on_flush, is)) == NULL) {
		issuance_free(is);
		return VEP_ERR_NOMEM;
	}
	*out = is;
	return VEP_OK;
}

void
issuance_submit(struct issuance *is, struct req *r, const struct db_audit_row *row,
    json_t *reply)
{
	struct waiting *w = NULL;
	int rc;

	if (is->n >= DB_AUDIT_BATCH_MAX)
		flush(is); /* a full batch goes now; this row starts the next */
	if (is->batch == NULL && db_audit_batch_new(&is->batch) != 0)
		is->batch = NULL;
	if (is->batch == NULL || (w = calloc(1, sizeof(*w))) == NULL ||
	    (rc = db_audit_batch_add(is->batch, row)) != 0) {
		free(w);
		json_decref(reply);
		req_reply_error(r, REQ_ERR_UNAVAILABLE);
		return;
	}
	w->r = r;
	w->reply = reply;
	*is->tail = w;
	is->tail = &w->next;
	is->n++;
	if (!is->scheduled) {
		is->scheduled = 1;
		event_active(is->flush, EV_TIMEOUT, 0);
	}
}

unsigned
issuance_pending(const struct issuance *is)
{
	return is->n;
}

void
issuance_free(struct issuance *is)
{
	struct waiting *w;

	if (is == NULL)
		return;
	while ((w = is->head) != NULL) {
		is->head = w->next;
		req_abandon(w->r);
		json_decref(w->reply);
		free(w);
	}
	if (is->flush != NULL)
		event_free(is->flush);
	db_audit_batch_free(is->batch);
	free(is);
}
