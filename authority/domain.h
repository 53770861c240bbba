/*
 * domain.h - the served domains: each one's keys (vep_keydir layout) and its
 * discovery documents, built once per key change and then served as bytes
 * with a precomputed ETag.
 *
 * Owns loading keys for the server and turning them into documents. Must
 * never parse HTTP or decide status codes (wellknown.c does), and never
 * hands private keys to anyone but the signer (domain_signing_key).
 */
#ifndef AUTHORITY_DOMAIN_H
#define AUTHORITY_DOMAIN_H

#include <stddef.h>

#include "config.h"
#include "etag.h"
#include "keydir.h"

struct account_map;

/* A ready-to-send body and its strong ETag. */
struct doc {
	char *body;               /* owned, NUL-terminated */
	size_t len;
	char etag[ETAG_BUFSZ];
};

struct domain {
	const struct config_domain *cfg; /* borrowed from the configuration */
	struct vep_keyset keys;          /* owned; current has its private half */
	struct doc support;              /* /.well-known/browserid */
	struct doc pk;                   /* /pk: the bare current key */
	/* host-meta carries absolute URLs, so it depends on the base URL:
	 * fixed when public_url is configured (built at load), otherwise the
	 * request's scheme://Host, built per request (domain_hostmeta). */
	char *hm_base;                   /* owned, base of hm_xrd / hm_jrd */
	struct doc hm_xrd;               /* /.well-known/host-meta */
	struct doc hm_jrd;               /* /.well-known/host-meta.json */
	struct account_map *accounts;    /* owned: address -> PAM user (account.h) */
};

struct domain_set {
	struct domain *v;   /* owned, in configuration order; v[0] is the default */
	size_t n;
	struct ssl_ctx_st *tls; /* owned: native HTTPS context (tls.h), NULL for HTTP */
};

/* Loads every configured domain's keys and builds its documents, and the
 * TLS context when tls_cert and tls_key are set (both or neither). On error
 * returns the first failure (VEP_ERR_* of vep_keydir_load, e.g. VEP_ERR_PERM
 * or VEP_ERR_IO) with a message "FILE:LINE: [domain D] key_dir 'DIR': reason"
 * in err, and *out NULL. cfg must outlive the set. */
int domain_set_load(const struct config *cfg, struct domain_set **out,
    char *err, size_t errlen);

/* Finds a served domain by lowercase name, NULL when not served. */
struct domain *domain_set_find(const struct domain_set *set, const char *name);

/* Host-meta for base ("scheme://host[:port]", already validated by the
 * caller: only [A-Za-z0-9.:[]-] characters), as XRD (json == 0) or JRD
 * (json == 1): the document built at load for the configured public_url,
 * else one built now into tmp. *out points to one or the other; the caller
 * calls domain_doc_clear(tmp) when done. A domain never changes once
 * loaded (every event loop reads it; a reload builds a new set). Returns 0
 * or VEP_ERR_NOMEM / VEP_ERR_CRYPTO. */
int domain_hostmeta(const struct domain *d, const char *base, int json, struct doc *tmp,
    const struct doc **out);

/* Frees a document's body (for domain_hostmeta's tmp). */
void domain_doc_clear(struct doc *doc);

/* The key that signs certificates for this domain (borrowed). */
const vep_key *domain_signing_key(const struct domain *d);

void domain_set_free(struct domain_set *set);

#endif
