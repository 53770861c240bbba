/*
 * remote/remote.h - verifying assertions of domains this authority does not
 * serve (POST /verify with verify_remote = yes), the way a relying party's
 * verifier does: the email domain's support document over HTTPS, following
 * "authority" delegation (at most VEP_MAX_DELEGATIONS hops, never in a
 * loop), its published keys ("public-key" and "keys"), then libvep's
 * vep_backed_verify.
 *
 * The waiting (DNS, connect, TLS, the document) happens in a thread per
 * verification, never in the event loop; the loop gets the verdict through
 * a completion run in its own thread. At most REMOTE_MAX_INFLIGHT per loop
 * at once. Each fetch: https only, on port 443 (or where
 * verify_remote_connect says), to an address remote/addr.h allows, no
 * redirects, 200 application/json of at most REMOTE_MAX_DOC_BYTES,
 * verify_remote_timeout per step and verify_remote_total for the whole
 * verification; documents are kept for their max-age (remote/cache.h).
 *
 * Owns the threads and their jobs. Must never let a job outlive remote_free,
 * nor read the configuration from a thread (a reload may free it): what a
 * job needs is copied when it is asked for.
 */
#ifndef AUTHORITY_REMOTE_REMOTE_H
#define AUTHORITY_REMOTE_REMOTE_H

#include "assertion.h"

struct config;
struct event_base;
struct remote;
struct remote_cache;

/* Remote verifications in flight per event loop. */
#define REMOTE_MAX_INFLIGHT 16
/* Largest support document fetched (bytes): Persona's own were < 2 KiB. */
#define REMOTE_MAX_DOC_BYTES (32 * 1024)
/* Room for a verdict's reason. */
#define REMOTE_REASON_BUFSZ 256

struct remote_result {
	int rc;                          /* 0: valid; else a VEP_ERR_* */
	char reason[REMOTE_REASON_BUFSZ]; /* public text of a failure ("" for rc's own) */
	vep_backed *backed;              /* owned by the result when rc == 0 */
};

/* Runs in the loop's thread with the verdict; the result is freed after it
 * returns (take backed by setting it to NULL). */
typedef void (*remote_done)(struct remote_result *res, void *arg);

/* A verifier whose completions run on base, sharing cache (borrowed, must
 * outlive it). Returns 0 or VEP_ERR_NOMEM. */
int remote_new(struct event_base *base, struct remote_cache *cache, struct remote **out);

/* Starts verifying *backed (a parsed assertion whose email's domain is not
 * served here) for audience under cfg's verify_remote_* settings; done(arg)
 * runs exactly once unless this returns an error. On 0 *backed is taken
 * (set to NULL); on an error the caller keeps it. Returns 0,
 * VEP_ERR_NOMEM, or SRV_ERR_BUSY (core/errors.h) when
 * REMOTE_MAX_INFLIGHT are running. */
int remote_verify(struct remote *rm, vep_backed **backed, const char *audience,
    const struct config *cfg, remote_done done, void *arg);

/* Waits for every job (each ends within its verify_remote_total), runs
 * their completions in the caller's thread, frees. NULL-safe. */
void remote_free(struct remote *rm);

#endif
