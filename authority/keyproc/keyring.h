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

#include <stddef.h>

#include <jansson.h>

#include "core/config.h"
#include "keydir.h"

struct keyring {
	struct config *cfg;         /* owned */
	struct vep_keyset *sets;    /* owned, one per cfg->domains[i] */
	char (*fingerprints)[VEP_FINGERPRINT_BUFSZ];   /* owned: of each set's current key */
	size_t n;
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

/* Frees the keyring, wiping its keys. NULL-safe. */
void keyring_free(struct keyring *kr);

#endif
