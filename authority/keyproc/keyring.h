/*
 * keyproc/keyring.h - what only the privileged side reads: the configuration file,
 * each domain's private keys, the TLS pair and the alias tables; and the
 * bundle that carries all of it but the private keys to the network
 * process (keyproc/keeper.h), which builds its domain set from it (core/domain.h).
 *
 * A load is all or nothing: every domain's keys load and pass the
 * self-test (sign, then verify with the public half as published), and the
 * bundle is checked by building a domain set from it exactly as the network
 * process will, before anything is returned.
 *
 * Must never put a private domain key into the bundle, or log one.
 */
#ifndef AUTHORITY_KEYPROC_KEYRING_H
#define AUTHORITY_KEYPROC_KEYRING_H

#include <stdatomic.h>
#include <stddef.h>

#include <jansson.h>

#include "core/config.h"
#include "keydir.h"

struct keyring_signers;

struct keyring {
	struct config *cfg;         /* owned */
	struct vep_keyset *sets;    /* owned, one per cfg->domains[i] */
	char (*fingerprints)[VEP_FINGERPRINT_BUFSZ];   /* owned: of each set's current key */
	size_t n;
	/* Owned: the signers of each set's current key, one slot per
	 * signing thread (keyring_signer); made by the first signature,
	 * NULL until then. */
	_Atomic(struct keyring_signers *) signers;
};

/* Reads config_path (NULL: the built-in configuration) through make_cfg,
 * loads every domain's keys, self-tests them, and returns the keyring and
 * the bundle for the network process (new reference):
 *   {"config": TEXT|null,
 *    "domains": [{"current": KEY, "next": KEY|null, "previous": KEY|null,
 *                 "aliases": TEXT|null}, ...],       (configuration order)
 *    "tls_cert": PEM|null, "tls_key": PEM|null}
 * KEY is the public key JSON. On error returns VEP_ERR_* with
 * "FILE:LINE: [domain D] ...: reason" in err and nothing allocated. */
int keyring_load(const char *config_path, config_maker_fn make_cfg, void *arg,
    struct keyring **out, json_t **bundle, char *err, size_t errlen);

/* The current key (private half) with this fingerprint
 * (vep_key_fingerprint) of the served domain named domain (an email's
 * domain, compared ignoring case), or NULL when that domain's current key
 * has another fingerprint or the domain is not served; *issuer (may be
 * NULL) is then the iss its certificates carry (config_domain_issuer).
 * With domain NULL, any domain's. Borrowed. */
const vep_key *keyring_find(const struct keyring *kr, const char *fingerprint,
    const char *domain, const char **issuer);

/*
 * The prepared signer (key.h's vep_key_signer) of key, which must be one
 * of kr's current keys as keyring_find gave it, for the thread that owns
 * slot: 0 with *out (borrowed: valid as long as kr), VEP_ERR_NOKEY when key
 * is none of kr's current keys (kr NULL included), VEP_ERR_ARG when slot
 * >= nslots or nslots is not what kr's first call said, or what
 * vep_key_signer_new returns (nothing is kept then; the next call tries
 * again).
 *
 * Why signers live here: a signer holds a copy of a domain's private key,
 * so it must go when the key goes, and must never be taken for another
 * key's. Kept in the keyring beside the key, it is freed by keyring_free
 * with the key and found through the key's own row, never through a cache
 * keyed by a pointer that a later allocation could reuse. key is matched
 * by identity among kr's live keys: the caller holds both from the same
 * hold of the lock that keeps kr alive (keeper.c's rwlock), so it cannot
 * be a freed key's address.
 *
 * Threads: each slot is one thread's (the key process's loop i uses slot
 * i, and no other thread does), so slot i's signers are made, used and
 * replaced by that thread alone, without a lock, and no thread ever signs
 * with another's signer (which would share its OpenSSL state). Calls for
 * different slots may run concurrently (under a read lock); the table of
 * slots is made by the first call of any thread, sized n x nslots, and
 * published with one compare-and-swap, so two first calls at once leave
 * one table and no leak. Every call on one keyring must pass the same
 * nslots. keyring_free must not run concurrently with any call (keeper.c
 * frees a keyring only once it is unlinked under the write lock).
 */
int keyring_signer(struct keyring *kr, const vep_key *key, size_t slot, size_t nslots,
    vep_key_signer **out);

/* Frees the keyring, wiping its keys and freeing its signers. NULL-safe. */
void keyring_free(struct keyring *kr);

#endif
