/*
 * issuance/issuance.c - signing certificates and recording them in batches
 * (contract in issuance/issuance.h).
 */
#include "issuance/issuance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "cert.h"
#include "core/domain.h"
#include "core/errors.h"
#include "core/log.h"
#include "email.h"
#include "err.h"
#include "issuance/keycheck.h"
#include "keymemo.h"
#include "keyproc/keeper.h"
#include "secmem.h"
#include "store/audit.h"
#include "store/deferred.h"
#include "store/writer.h"
#include "util.h"

/* A certificate waiting for its signature, then for its row to be
 * durable. */
struct waiting {
	struct waiting *next;
	issuance_done_fn done;
	void *arg;
	char *cert;                    /* owned, once signed */
	char email[VEP_EMAIL_MAX + 1];
	int64_t iat_ms, exp_ms;
	/* For the signing pass and the audit row. */
	char *input;                   /* owned until signed: the signing input */
	size_t inlen;
	char signer_fp[VEP_FINGERPRINT_BUFSZ]; /* the domain key that signs it */
	char key_fp[VEP_FINGERPRINT_BUFSZ];    /* the user key's */
	char *client_addr;             /* owned, or NULL */
	int64_t ts_ms;
};

struct issuance {
	struct event_base *base;
	struct writer *writer;         /* borrowed */
	struct keeper_chan *keeper;    /* borrowed */
	struct log *log;               /* borrowed */
	struct keycheck *keycheck;     /* owned */
	struct keycache *keycache;     /* owned: keys by their text */
	struct db_audit_batch *batch;  /* owned: this iteration's rows */
	struct waiting *head, **tail;
	unsigned n;
	struct event *flush;
	int scheduled;
	/* Orders of this pass not signed yet: the signing pass (an event
	 * activated like flush, so after the requests already due) sends
	 * them to the key process together (keeper_sign_batch). */
	struct waiting *tosign, **tosign_tail;
	struct event *sign;
	int sign_scheduled;
	/* A batch is with the writer. The next one waits until it is done
	 * and takes every row signed meanwhile: one commit (one fsync) per
	 * round trip of the disk instead of one per loop iteration, with no
	 * certificate waiting longer than it would behind the writer's queue
	 * (jobs run in order). */
	int inflight;
};

/* One batch on its way to disk with the certificates waiting for it. */
struct commit {
	struct issuance *is;
	struct db_audit_batch *batch;
	struct waiting *head;
	unsigned n;
};

static void
waiting_free(struct waiting *w)
{
	if (w->cert != NULL)
		vep_memzero(w->cert, strlen(w->cert));
	free(w->cert);
	if (w->input != NULL)
		vep_memzero(w->input, w->inlen);
	free(w->input);
	free(w->client_addr);
	free(w);
}

/* Reports rc to w's order and frees w. */
static void
report(struct waiting *w, int rc)
{
	struct issuance_cert c;

	c.cert = w->cert;
	c.email = w->email;
	c.iat_ms = w->iat_ms;
	c.exp_ms = w->exp_ms;
	w->done(rc, rc == 0 ? &c : NULL, w->arg);
	waiting_free(w);
}

/* Reports rc to every order of the list and frees it. */
static void
report_all(struct waiting *w, int rc)
{
	while (w != NULL) {
		struct waiting *next = w->next;
		report(w, rc);
		w = next;
	}
}

/* Several loops' batches next to each other in the writer's queue go in
 * one transaction: one fsync for all of them. */
static int
commit_batches(struct db *db, void *const *args, size_t n)
{
	struct db_audit_batch *b[WRITER_GROUP_JOBS_MAX];
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = ((const struct commit *)args[i])->batch;
	return db_audit_batches_commit(db, b, n);
}

_Static_assert(DB_AUDIT_COMMIT_BATCHES_MAX >= WRITER_GROUP_JOBS_MAX,
    "a writer group's batches fit one db_audit_batches_commit");

static const struct writer_group audit_commit = { commit_batches, DB_AUDIT_BATCH_MAX };

static void flush(struct issuance *is, int help);

static void
commit_done(int rc, void *arg)
{
	struct commit *c = arg;
	struct issuance *is = c->is;

	if (rc != 0)
		log_error(is->log, "audit of %u certificate%s: %s (not issued)", c->n,
		    c->n == 1 ? "" : "s", srv_strerror(rc));
	report_all(c->head, rc);
	db_audit_batch_free(c->batch);
	free(c);
	is->inflight = 0;
	/* What was signed while this batch was on its way goes now. */
	if (is->n > 0 && !is->scheduled)
		flush(is, 0);
}

/* Hands the current batch to the writer and starts a new one; with help,
 * through writer_help_grouped (the caller is about to wait for the key
 * process: with SQLite the commit runs in this thread meanwhile). */
static void
flush(struct issuance *is, int help)
{
	struct commit *c;
	int rc;

	is->scheduled = 0;
	/* A full batch goes even behind another (enqueue), so a batch never
	 * grows past DB_AUDIT_BATCH_MAX. */
	if (is->n == 0 || (is->inflight && is->n < DB_AUDIT_BATCH_MAX))
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
	is->inflight = 1;
	rc = help ? writer_help_grouped(is->writer, &audit_commit, c->n, commit_done, c) :
	    writer_submit_grouped(is->writer, &audit_commit, c->n, commit_done, c);
	if (rc != 0)
		commit_done(VEP_ERR_NOMEM, c);
	return;
fail:
	/* No memory to commit: nothing is issued. */
	log_error(is->log, "out of memory committing certificates (not issued)");
	report_all(is->head, VEP_ERR_NOMEM);
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
	struct issuance *is = arg;

	(void)fd;
	(void)what;
	/* A signing pass is due in this iteration, after requests read in
	 * it: it commits the batch while the key process signs. */
	if (is->sign_scheduled)
		return;
	flush(is, 0);
}

static void sign_pass(struct issuance *is);

static void
on_sign(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	sign_pass(arg);
}

int
issuance_new(struct event_base *base, struct writer *writer, struct keeper_chan *keeper,
    struct log *log, struct issuance **out)
{
	struct issuance *is;

	*out = NULL;
	if ((is = calloc(1, sizeof(*is))) == NULL)
		return VEP_ERR_NOMEM;
	is->base = base;
	is->writer = writer;
	is->keeper = keeper;
	is->log = log;
	is->tail = &is->head;
	is->tosign_tail = &is->tosign;
	if (keycheck_new(&is->keycheck) != 0 || keycache_new(&is->keycache) != 0 ||
	    db_audit_batch_new(&is->batch) != 0 ||
	    (is->flush = evtimer_new(base, on_flush, is)) == NULL ||
	    (is->sign = event_new(base, -1, 0, on_sign, is)) == NULL) {
		issuance_free(is);
		return VEP_ERR_NOMEM;
	}
	*out = is;
	return VEP_OK;
}

int
issuance_user_key(struct issuance *is, const json_t *value, const struct keycache_entry **out,
    char fp[VEP_FINGERPRINT_BUFSZ])
{
	uint8_t members[VEP_KEYMEMO_BYTES_MAX];
	enum keycache_kind kind;
	const char *id;
	size_t idlen;
	json_t *parsed = NULL;
	const json_t *obj;
	vep_key *k = NULL;
	int rc;

	*out = NULL;
	fp[0] = '\0';
	if (json_is_string(value)) {
		kind = KEYCACHE_TEXT;
		id = json_string_value(value);
		idlen = json_string_length(value);
	} else if (json_is_object(value)) {
		/* Found by its members, not by its text written out again. */
		kind = KEYCACHE_MEMBERS;
		id = (const char *)members;
		idlen = vep_key_json_members(value, members);
	} else {
		return VEP_ERR_ARG;
	}
	if (idlen > 0 && (*out = keycache_get(is->keycache, kind, id, idlen)) != NULL) {
		snprintf(fp, VEP_FINGERPRINT_BUFSZ, "%s", (*out)->fp);
		return VEP_OK;
	}
	if (kind == KEYCACHE_TEXT) {
		if ((rc = vep_json_parse_object(id, idlen, &parsed)) != 0)
			return rc;
		obj = parsed;
		if (idlen > KEYCACHE_TEXT_MAX) {
			/* Padded past what the cache keeps: remembered by its
			 * members instead, which fit for every key of ours. */
			kind = KEYCACHE_MEMBERS;
			id = (const char *)members;
			idlen = vep_key_json_members(obj, members);
		}
	} else {
		obj = value;
	}
	if ((rc = vep_key_from_json_checked(obj, VEP_KEY_CHECKS_CHEAP, &k)) == 0 &&
	    (rc = vep_key_fingerprint(k, fp)) == 0 &&
	    (rc = keycheck_costly(is->keycheck, k, fp)) == 0) {
		if (idlen > 0) {
			*out = keycache_put(is->keycache, kind, id, idlen, k, fp);
			k = NULL;
			if (*out == NULL)
				rc = VEP_ERR_NOMEM;
		} else {
			/* Not an object of strings: no key of ours (the parser
			 * refused it above); never remembered. */
			rc = VEP_ERR_INVALID;
		}
	}
	vep_key_free(k);
	json_decref(parsed);
	return rc;
}

const char *
issuance_problem(struct issuance *is)
{
	return keeper_chan_ok(is->keeper) ? NULL : "the key process does not answer";
}

/* Queues w until its row (made of w, copied) is committed. Returns 0, or
 * SRV_ERR_UNRECORDED (w is the caller's still). */
static int
enqueue(struct issuance *is, struct waiting *w)
{
	struct db_audit_row row = { 0 };

	if (is->n >= DB_AUDIT_BATCH_MAX)
		flush(is, 0); /* a full batch goes now; this row starts the next */
	if (is->batch == NULL && db_audit_batch_new(&is->batch) != 0)
		is->batch = NULL;
	row.ts_ms = w->ts_ms;
	row.event = DB_AUDIT_CERT_ISSUED;
	row.email = w->email;
	row.key_fp = w->key_fp[0] != '\0' ? w->key_fp : NULL;
	row.iat_ms = w->iat_ms;
	row.exp_ms = w->exp_ms;
	row.client_addr = w->client_addr;
	row.outcome = "ok";
	row.signer_fp = w->signer_fp;
	if (is->batch == NULL || db_audit_batch_add(is->batch, &row) != 0)
		return SRV_ERR_UNRECORDED;
	*is->tail = w;
	is->tail = &w->next;
	is->n++;
	if (!is->scheduled) {
		/* In the next iteration, after the requests it reads: a
		 * signing pass they start commits the batch (on_flush). */
		static const struct timeval now = { 0, 0 };
		is->scheduled = 1;
		if (event_add(is->flush, &now) != 0) {
			is->scheduled = 0;
			flush(is, 0);
		}
	}
	return VEP_OK;
}

/* The signed certificate of item it for w (its signature freed), queued
 * for its row; or w reported with what went wrong. */
static void
signed_one(struct issuance *is, struct waiting *w, struct keeper_item *it)
{
	const char *at;
	int rc = it->rc;

	if (rc == 0)
		rc = vep_jws_join(w->input, it->sig, it->siglen, &w->cert);
	free(it->sig);
	it->sig = NULL;
	vep_memzero(w->input, w->inlen);
	free(w->input);
	w->input = NULL;
	if (rc != 0) {
		/* The domain, as before signing: the address stays out of logs. */
		at = strrchr(w->email, '@');
		log_error(is->log, "certificate for %s: %s", at != NULL ? at + 1 : "?",
		    vep_strerror(rc));
		report(w, rc);
	} else if (enqueue(is, w) != 0) {
		report(w, SRV_ERR_UNRECORDED);
	}
}

/* Signs the orders waiting, as many as one request takes (the same domain
 * key, KEEPER_SIGN_BATCH_MAX and KEEPER_SIGN_BATCH_BYTES), and comes again
 * for the rest after what else is due. */
static void
sign_pass(struct issuance *is)
{
	struct waiting *batch[KEEPER_SIGN_BATCH_MAX], *w;
	struct keeper_item items[KEEPER_SIGN_BATCH_MAX];
	struct keeper_key key = { is->keeper, NULL };
	size_t n = 0, bytes = 0, i;
	int sent;

	is->sign_scheduled = 0;
	while ((w = is->tosign) != NULL && n < KEEPER_SIGN_BATCH_MAX &&
	    (n == 0 || (strcmp(w->signer_fp, batch[0]->signer_fp) == 0 &&
	    bytes + w->inlen + KEEPER_ITEM_OVERHEAD <= KEEPER_SIGN_BATCH_BYTES))) {
		is->tosign = w->next;
		w->next = NULL;
		items[n].input = (const uint8_t *)w->input;
		items[n].len = w->inlen;
		bytes += w->inlen + KEEPER_ITEM_OVERHEAD;
		batch[n++] = w;
	}
	if (is->tosign == NULL)
		is->tosign_tail = &is->tosign;
	if (n == 0) {
		if (is->n > 0)
			flush(is, 0);
		return;
	}
	key.fingerprint = batch[0]->signer_fp;
	/* Each item's rc says how it went, the whole request's failure
	 * included. While the key process signs, the rows signed before
	 * are committed (writer_help_grouped: in this thread with SQLite
	 * and one loop when the writer is idle: no thread to wake, and
	 * their answers leave now rather than after this batch). */
	sent = keeper_sign_send(&key, items, n) == 0;
	if (is->n > 0)
		flush(is, sent);
	if (sent)
		(void)keeper_sign_recv(&key, items, n);
	for (i = 0; i < n; i++)
		signed_one(is, batch[i], &items[i]);
	if (is->tosign != NULL && !is->sign_scheduled) {
		is->sign_scheduled = 1;
		event_active(is->sign, EV_TIMEOUT, 0);
	}
}

int
issuance_certify(struct issuance *is, const struct issuance_order *o, issuance_done_fn done,
    void *arg)
{
	const struct domain *d = o->domain;
	struct vep_cert_params p = { 0 };
	struct waiting *w;
	int64_t now = vep_now_ms();
	int rc;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return VEP_ERR_NOMEM;
	snprintf(w->email, sizeof(w->email), "%s", o->email);
	p.issuer = config_domain_issuer(d->cfg);
	p.email = w->email;
	p.pubkey = o->pubkey;
	p.pubkey_text = o->pubkey_text;
	p.iat_ms = now - CERT_BACKDATE_MS;
	p.exp_ms = now + (int64_t)o->lifetime_s * 1000;
	if (p.exp_ms - p.iat_ms > VEP_CERT_MAX_LIFETIME_MS)
		p.exp_ms = p.iat_ms + VEP_CERT_MAX_LIFETIME_MS;
	if ((rc = vep_cert_signing_input(d->keys.current, &p, &w->input, &w->inlen)) == 0 &&
	    w->inlen + KEEPER_ITEM_OVERHEAD > KEEPER_SIGN_BATCH_BYTES)
		rc = VEP_ERR_TOOBIG;
	if (rc == 0 && o->client_addr != NULL && (w->client_addr = strdup(o->client_addr)) ==
	    NULL)
		rc = VEP_ERR_NOMEM;
	if (rc != 0) {
		log_error(is->log, "certificate for %s: %s", d->cfg->name, vep_strerror(rc));
		waiting_free(w);
		return rc;
	}
	/* Copied: a reload may replace the domain before the signing pass. */
	snprintf(w->signer_fp, sizeof(w->signer_fp), "%s", d->current_fp);
	snprintf(w->key_fp, sizeof(w->key_fp), "%s", o->key_fp != NULL ? o->key_fp : "");
	w->done = done;
	w->arg = arg;
	w->iat_ms = p.iat_ms;
	w->exp_ms = p.exp_ms;
	w->ts_ms = now;
	*is->tosign_tail = w;
	is->tosign_tail = &w->next;
	if (!is->sign_scheduled) {
		is->sign_scheduled = 1;
		event_active(is->sign, EV_TIMEOUT, 0);
	}
	return VEP_OK;
}

void
issuance_refused(struct issuance *is, const char *email, const char *key_fp,
    const char *client_addr, const char *outcome)
{
	struct db_audit_row row = { 0 };

	row.ts_ms = vep_now_ms();
	row.event = DB_AUDIT_CERT_REFUSED;
	row.email = email;
	row.key_fp = key_fp;
	row.client_addr = client_addr;
	row.outcome = outcome;
	deferred_audit(is->writer, is->log, &row);
}

void
issuance_free(struct issuance *is)
{
	if (is == NULL)
		return;
	report_all(is->tosign, SRV_ERR_CANCELED);
	is->tosign = NULL;
	report_all(is->head, SRV_ERR_CANCELED);
	is->head = NULL;
	if (is->sign != NULL)
		event_free(is->sign);
	if (is->flush != NULL)
		event_free(is->flush);
	db_audit_batch_free(is->batch);
	keycheck_free(is->keycheck);
	keycache_free(is->keycache);
	free(is);
}
