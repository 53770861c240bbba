/*
 * issuance/issuance.h - one loop's certificate issuance: checks a user's
 * public key, signs a certificate for it through the key process, and
 * reports the certificate back only once its audit row is durable.
 *
 * Knows no HTTP: the handler (api/certificate.c) reads the request and
 * answers it from the callback.
 *
 * Batches: the audit rows of every certificate signed during one event-loop
 * iteration are committed in one transaction (one fsync) through the
 * loop's writer (store/writer.h), and only then reported. The flush runs
 * as a timer due at once, so in the next iteration, after the requests
 * that iteration reads: when they start a signing pass, that pass sends
 * its batch to the key process first and then commits the rows while the
 * key process signs (writer_help_grouped: with SQLite and one loop in
 * this thread, the writer thread not woken), so their answers leave during the signature
 * rather than after it; otherwise the writer thread commits them while the
 * loop goes on.
 *
 * Promises: the callback runs exactly once per accepted order, never
 * before the row is committed with rc 0; with the signing error when the
 * key process did not sign it; with DB_ERR_* / VEP_ERR_NOMEM / SRV_ERR_UNRECORDED
 * when the row could not be recorded (the certificate is then never
 * reported: no certificate leaves unrecorded); with SRV_ERR_CANCELED from
 * issuance_free at shutdown.
 */
#ifndef AUTHORITY_ISSUANCE_ISSUANCE_H
#define AUTHORITY_ISSUANCE_ISSUANCE_H

#include <stdint.h>

#include "issuance/keycache.h"
#include "key.h"

struct domain;
struct event_base;
struct issuance;
struct keeper_chan;
struct log;
struct writer;

/* Shortest certificate lifetime issued (seconds). */
#define CERT_MIN_DURATION_S 300
/* How far iat is set before now (milliseconds): verifiers allow no clock
 * skew. */
#define CERT_BACKDATE_MS 10000

/* What to certify. Everything is borrowed for the call. */
struct issuance_order {
	const struct domain *domain;  /* the email's domain: its current key signs */
	const char *email;            /* the signed-in address */
	const vep_key *pubkey;        /* parsed and checked (issuance_user_key) */
	const char *key_fp;           /* its fingerprint (vep_key_fingerprint) */
	long lifetime_s;              /* asked for; capped by VEP_CERT_MAX_LIFETIME_MS */
	const char *client_addr;      /* for the audit row */
	const char *pubkey_text;      /* pubkey's JSON text (vep_key_to_json_text), or NULL */
};

/* A certificate issued and recorded; valid during the callback only. */
struct issuance_cert {
	const char *cert;
	const char *email;
	int64_t iat_ms, exp_ms;
};

typedef void (*issuance_done_fn)(int rc, const struct issuance_cert *c, void *arg);

/* A loop's issuance: signs through keeper, commits with writer, on base.
 * Returns 0 or VEP_ERR_NOMEM. */
int issuance_new(struct event_base *base, struct writer *writer,
    struct keeper_chan *keeper, struct log *log, struct issuance **out);

/* The user key of a request's "pubkey" value (borrowed): a BrowserID key
 * object, or its JSON text (what a user agent's genKeyPair returns), under
 * the whole key policy: parsed, fingerprinted and checked once per distinct
 * text or object and loop (issuance/keycache.h; the costly rules once per
 * key, issuance/keycheck.h). Returns 0 with *out (borrowed until this
 * loop's next call here), VEP_ERR_ARG when value is neither, what the
 * parser or the policy refused (VEP_ERR_INVALID, VEP_ERR_KEY,
 * VEP_ERR_TOOBIG...), or VEP_ERR_NOMEM. fp gets the key's fingerprint
 * whenever it is known (a refused key's too, for the audit row), else "". */
int issuance_user_key(struct issuance *is, const json_t *value,
    const struct keycache_entry **out, char fp[VEP_FINGERPRINT_BUFSZ]);

/* "the key process does not answer" when is cannot sign now, or NULL. */
const char *issuance_problem(struct issuance *is);

/* Queues the certificate for this pass's signing: the orders of one
 * event-loop pass are signed together by the key process
 * (keeper_sign_batch), after the callbacks already due, then their rows
 * queued as above. done reports the certificate when its row is durable,
 * or why not: a signing error (VEP_ERR_IO: the key process is gone or
 * stalled; others), SRV_ERR_UNRECORDED when there is no room to record
 * it, a DB_ERR_*. Returns 0 (done will run), or else done never runs:
 * VEP_ERR_NOMEM, or why the certificate cannot be written (its input
 * refused by vep_cert_signing_input, VEP_ERR_TOOBIG past what a request
 * to the key process takes). */
int issuance_certify(struct issuance *is, const struct issuance_order *o,
    issuance_done_fn done, void *arg);

/* Records a certificate request that was refused (event cert_refused) for
 * the signed-in email, with the user key's fingerprint when it was parsed
 * (else NULL), the client address and the reason word (outcome: "bad_key",
 * "bad_request", ...). Does not wait for the disk: the refusal's answer does
 * not depend on it (a failure to record is logged). */
void issuance_refused(struct issuance *is, const char *email, const char *key_fp,
    const char *client_addr, const char *outcome);

/* Reports SRV_ERR_CANCELED to every order still waiting, and frees is.
 * NULL-safe. */
void issuance_free(struct issuance *is);

#endif
