/*
 * issuance/batch.c - batched audit commits for certificates (contract in
 * issuance/batch.h).
 */
#include "issuance/batch.h"

#include <stdlib.h>

#include <event2/event.h>
#include <jansson.h>

#include "server/shared.h"
#include "store/writer.h"
#include "store/audit.h"
#include "core/log.h"
#include "server/loop.h"
#include "edge/req.h"

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

/* One batch on its way to disk with the answers waiting for it. */
struct commit {
	struct issuance *is;
	struct db_audit_batch *batch;
	struct waiting *head;
	unsigned n;
};

static void
answer_all(struct waiting *w, int ok)
{
	while (w != NULL) {
		struct waiting *next = w->next;
		if (ok) {
			req_reply_json(w->r, 200, w->reply);
		} else {
			req_add_header(w->r, "Retry-After", "5");
			req_reply_error(w->r, REQ_ERR_UNAVAILABLE);
		}
		json_decref(w->reply);
		free(w);
		w = next;
	}
}

static int
do_commit(struct db *db, void *arg)
{
	struct commit *c = arg;

	return db_audit_batch_commit(db, c->batch);
}

static void
commit_done(int rc, void *arg)
{
	struct commit *c = arg;

	if (rc != 0)
		log_error(&c->is->l->a->log, "audit of %u certificate%s: %s (not issued)", c->n,
		    c->n == 1 ? "" : "s", srv_strerror(rc));
	answer_all(c->head, rc == 0);
	db_audit_batch_free(c->batch);
	free(c);
}

/* Hands the current batch to the writer thread and starts a new one. */
static void
flush(struct issuance *is)
{
	struct commit *c;

	is->scheduled = 0;
	if (is->n == 0)
		return;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		goto fail;
	c->is = is;
	c->batch = is->batch;
	c->head = is->head;
	c->n = is->n;
	if (db_audit_batch_new(&is->batch) != 0) {
		is->batch = c->batch;
		free(c);
		goto fail;
	}
	is->head = NULL;
	is->tail = &is->head;
	is->n = 0;
	if (writer_submit(is->l->writer, do_commit, commit_done, c) != 0)
		commit_done(VEP_ERR_NOMEM, c);
	return;
fail:
	/* No memory to commit: nothing is issued. */
	log_error(&is->l->a->log, "out of memory committing certificates (not issued)");
	answer_all(is->head, 0);
	is->head = NULL;
	is->tail = &is->head;
	is->n = 0;
	db_audit_batch_free(is->batch);
	if (db_audit_batch_new(&is->batch) != 0)
		is->batch = NULL;
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
