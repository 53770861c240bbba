/*
 * core/domain.h - the served domains: each one's keys (vep_keydir layout) and its
 * discovery documents, built once per key change and then served as bytes
 * with a precomputed ETag.
 *
 * Owns turning the key process's bundle (keyproc/keyring.h: configuration text,
 * public keys, alias tables, TLS pair) into domains and documents. Must
 * never parse HTTP or decide status codes (api/discovery.c does), and never
 * sees a private domain key: those stay in the key process (keyproc/keeper.h).
 */
#ifndef AUTHORITY_CORE_DOMAIN_H
#define AUTHORITY_CORE_DOMAIN_H

#include <stddef.h>

#include "core/config.h"
#include "edge/etag.h"
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
	struct vep_keyset keys;          /* owned; public halves only */
	char current_fp[VEP_FINGERPRINT_BUFSZ]; /* fingerprint of keys.current:
	                                         * names it to the key process */
	long long current_since;         /* when current.pem was written (s since
	                                  * the epoch), 0 unknown: the metrics */
	struct doc support;              /* /.well-known/browserid */
	struct doc pk;                   /* /pk: the bare current key */
	struct doc delegation;           /* {"authority":HOST} when cfg->authority is set:
	                                  * what the domain's own name answers */
	/* host-meta carries absolute URLs, so it depends on the base URL:
	 * fixed when public_url is configured (built at load), otherwise the
	 * request's scheme://Host, built per request (domain_hostmeta). */
	char *hm_base;                   /* owned, base of hm_xrd / hm_jrd */
	struct doc hm_xrd;               /* /.well-known/host-meta */
	struct doc hm_jrd;               /* /.well-known/host-meta.json */
	struct account_map *accounts;    /* owned: address -> PAM user (auth/account.h) */
};

struct domain_set {
	struct config *cfg; /* owned: the configuration these domains were built from */
	struct domain *v;   /* owned, in configuration order; v[0] is the default */
	size_t n;
	struct ssl_ctx_st *tls; /* owned: native HTTPS context (edge/tls.h), NULL for HTTP */
};

/* Builds the served domains from a keyring bundle (keyproc/keyring.h): the
 * configuration from its text through make_cfg (owned by the set), each
 * domain's published keys and documents, its alias table, and the TLS
 * context when tls_cert and tls_key are set. On error returns VEP_ERR_*
 * with a message in err and *out NULL. */
int domain_set_from_bundle(const json_t *bundle, config_maker_fn make_cfg, void *arg,
    struct domain_set **out, char *err, size_t errlen);

/* Finds a served domain by lowercase name, NULL when not served. */
struct domain *domain_set_find(const struct domain_set *set, const char *name);

/* Finds the domain a request's Host (lowercase, no port) means: a served
 * domain of that name, else the first (in configuration order) whose
 * authority is that host, else the first whose public_url has that host (a
 * login host, e.g. login.example.com for example.com). NULL when none. */
struct domain *domain_set_find_host(const struct domain_set *set, const char *host);

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

void domain_set_free(struct domain_set *set);

#endif
