/*
 * resolve.h - finding the keys and the expected issuer for an email
 * domain, as a relying party does: the domain's support document, from a
 * file or fetched, following delegation ({"authority":host}) at most
 * VEP_MAX_DELEGATIONS hops and never in a loop.
 */
#ifndef VEP_KT_RESOLVE_H
#define VEP_KT_RESOLVE_H

#include <stddef.h>

#include "remote/fetch.h"
#include "kt.h"
#include "support.h"

/* Largest URL built for a lookup (bytes). */
#define KT_URL_MAX 2048

struct kt_doc_file {
	const char *domain;  /* NULL: the email domain's document */
	const char *path;
};

struct kt_source {
	const char *fetch_url;                 /* NULL: use files */
	struct fetch_opts fetch;
	struct kt_doc_file files[KT_MAX_DOC_FILES];
	size_t nfiles;
};

/* Adds a --support-doc argument ("FILE" or "DOMAIN=FILE"). Returns 0, or
 * VEP_ERR_TOOBIG / VEP_ERR_INVALID (message printed). */
int kt_source_add_file(struct kt_source *src, char *arg);

/* The support document's URL under base (http[s]://host[:port], a
 * trailing '/' allowed): base + /.well-known/browserid, and ?domain=DOMAIN
 * when domain is not NULL, into out. Returns 0 or VEP_ERR_TOOBIG. */
int kt_support_url(const char *base, const char *domain, char *out, size_t outlen);

/* Resolves email_domain (lowercase). On success *doc is the primary's
 * document (new, vep_support_free) and *issuer the expected issuer (new
 * text). Returns 0 or a VEP code: VEP_ERR_DISABLED, VEP_ERR_DELEGATION,
 * VEP_ERR_INVALID (bad document), VEP_ERR_IO (fetch/read). The reason is
 * printed to stderr. */
int kt_resolve(const struct kt_source *src, const char *email_domain,
    struct vep_support **doc, char **issuer);

#endif
