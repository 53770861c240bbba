/*
 * issuance/batch.h - certificates answered in batches: the audit rows of every
 * certificate signed during one event-loop iteration are committed in one
 * transaction (one fsync), and only then are the certificates sent. If the
 * commit fails (disk full, locked), every certificate of the batch is
 * withheld and its client gets 503: no certificate leaves unrecorded, and
 * an iteration costs one fsync however many certificates it signed.
 *
 * The flush runs as an event activated at the loop's normal priority, so it
 * comes after the callbacks already due in this iteration (more rows join
 * the batch) and before the loop waits for input again. It hands the batch
 * to the loop's writer thread (store/writer.h): the loop goes on signing
 * while the batch is made durable, and answers when it is.
 *
 * Owns the batch and the waiting answers. Must never send a certificate
 * before its row is durable.
 */
#ifndef AUTHORITY_ISSUANCE_BATCH_H
#define AUTHORITY_ISSUANCE_BATCH_H

struct db_audit_row;
struct issuance;
struct json_t;
struct loop;
struct req;

/* A new, empty batch for loop l. Returns 0 or VEP_ERR_NOMEM. */
int issuance_new(struct loop *l, struct issuance **out);

/* Queues r's 200 answer (reply: taken) until row (copied) is committed. On
 * any error r is answered 503 at once (and reply released). */
void issuance_submit(struct issuance *is, struct req *r, const struct db_audit_row *row,
    struct json_t *reply);

/* Requests waiting in the batch (for tests and logs). */
unsigned issuance_pending(const struct issuance *is);

/* Drops the batch without answering (shutdown). NULL-safe. */
void issuance_free(struct issuance *is);

#endif
