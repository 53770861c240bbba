/*
 * domain.c - served domains, their keys and pre-built discovery documents.
 *
 * Owns the keysets and the bodies of /.well-known/browserid, /pk and
 * host-meta. Documents are rebuilt only when keys change (load, reload) or,
 * for host-meta without a configured public_url, when the base URL changes,
 * so a request costs a lookup and a copy. Must never log or expose private
 * keys; only public JSON leaves this file.
 */
#include "domain.h"

#include "account.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "account.h"
#include "err.h"
#include "key.h"
#include <jansson.h>
#include "paths.h"
#include "support.h"
#include "tls.h"

static void
doc_clear(struct doc *doc)
{
	free(doc->body);
	memset(doc, 0, sizeof(*doc));
}

/* Takes ownership of body (even on error). */
static int
doc_set(struct doc *doc, char *body)
{
	int rc;

	memset(doc, 0, sizeof(*doc));
	if (body == NULL)
		return VEP_ERR_NOMEM;
	doc->body = body;
	doc->len = strlen(body);
	if ((rc = etag_compute(body, doc->len, doc->etag)) != 0)
		doc_clear(doc);
	return rc;
}

/* Builds the key-dependent documents from ks into support and pk. */
static int
build_key_docs(const struct vep_keyset *ks, struct doc *support, struct doc *pk)
{
	const vep_key *keys[VEP_KEYSET_MAX];
	size_t n = vep_keyset_published(ks, keys);
	char *text = NULL;
	int rc;

	memset(support, 0, sizeof(*support));
	memset(pk, 0, sizeof(*pk));
	rc = vep_support_build(keys, n, PATH_SIGNIN_AUTHENTICATE, PATH_SIGNIN_PROVISION, &text);
	if (rc != 0)
		goto out;
	if ((rc = doc_set(support, text)) != 0)
		goto out;
	if ((rc = doc_set(pk, vep_key_to_json_text(ks->current))) != 0)
		goto out;
out:
	if (rc != 0) {
		doc_clear(support);
		doc_clear(pk);
	}
	return rc;
}

static int
build_hostmeta(const char *base, int json, struct doc *doc)
{
	char *text = NULL;
	int n;

	if (json)
		n = asprintf(&text,
		    "{\"links\":["
		    "{\"rel\":\"" REL_LRDD "\",\"type\":\"" MEDIA_JRD "\","
		    "\"template\":\"%s" PATH_WEBFINGER "?resource={uri}\"},"
		    "{\"rel\":\"" REL_PUBLIC_KEY "\",\"type\":\"" MEDIA_JSON "\","
		    "\"href\":\"%s" PATH_PK "\"},"
		    "{\"rel\":\"" REL_DESCRIBEDBY "\",\"type\":\"" MEDIA_JSON "\","
		    "\"href\":\"%s" PATH_SUPPORT "\"}]}",
		    base, base, base);
	else
		n = asprintf(&text,
		    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		    "<XRD xmlns=\"http://docs.oasis-open.org/ns/xri/xrd-1.0\">\n"
		    "  <Link rel=\"" REL_LRDD "\" type=\"" MEDIA_JRD "\" "
		    "template=\"%s" PATH_WEBFINGER "?resource={uri}\"/>\n"
		    "  <Link rel=\"" REL_PUBLIC_KEY "\" type=\"" MEDIA_JSON "\" "
		    "href=\"%s" PATH_PK "\"/>\n"
		    "  <Link rel=\"" REL_DESCRIBEDBY "\" type=\"" MEDIA_JSON "\" "
		    "href=\"%s" PATH_SUPPORT "\"/>\n"
		    "</XRD>\n",
		    base, base, base);
	/* No escaping needed: the caller guarantees base holds only URL
	 * host characters, none of which is special in JSON or XML. */
	return doc_set(doc, n < 0 ? NULL : text);
}

int
domain_hostmeta(const struct domain *d, const char *base, int json, struct doc *tmp,
    const struct doc **out)
{
	int rc;

	*out = NULL;
	memset(tmp, 0, sizeof(*tmp));
	if (d->hm_base != NULL && strcmp(d->hm_base, base) == 0) {
		*out = json ? &d->hm_jrd : &d->hm_xrd;
		return VEP_OK;
	}
	/* Not the configured public_url: built for this request (loops
	 * share the domain, so nothing here may change it). */
	if ((rc = build_hostmeta(base, json, tmp)) != 0)
		return rc;
	*out = tmp;
	return VEP_OK;
}

void
domain_doc_clear(struct doc *doc)
{
	doc_clear(doc);
}

/* Builds the host-meta documents for the configured public_url once. */
static int
hostmeta_cache(struct domain *d, const char *base)
{
	int rc;

	if ((d->hm_base = strdup(base)) == NULL)
		return VEP_ERR_NOMEM;
	if ((rc = build_hostmeta(base, 0, &d->hm_xrd)) != 0)
		return rc;
	return build_hostmeta(base, 1, &d->hm_jrd);
}

/* Signs with k and verifies with the public key as published (parsed back
 * from its BrowserID JSON): a private key that does not sign for its public
 * half (damaged parameters, a mixed-up file) is refused before anyone is
 * given a certificate nobody can verify. Returns 0, VEP_ERR_BADSIG or
 * another VEP_ERR_*. */
static int
key_selftest(const vep_key *k)
{
	static const uint8_t msg[] = "vep-authority key self-test";
	vep_key *pub = NULL;
	uint8_t *sig = NULL;
	size_t siglen = 0;
	json_t *j;
	int rc;

	if ((j = vep_key_to_json(k)) == NULL)
		return VEP_ERR_NOMEM;
	rc = vep_key_from_json(j, &pub);
	json_decref(j);
	if (rc == 0)
		rc = vep_key_sign(k, msg, sizeof(msg) - 1, &sig, &siglen);
	if (rc == 0)
		rc = vep_key_verify(pub, msg, sizeof(msg) - 1, sig, siglen);
	free(sig);
	vep_key_free(pub);
	return rc;
}

/* key_selftest for every key the set publishes. */
static int
keyset_selftest(const struct vep_keyset *ks)
{
	const vep_key *keys[VEP_KEYSET_MAX];
	size_t i, n = vep_keyset_published(ks, keys);
	int rc;

	for (i = 0; i < n; i++)
		if ((rc = key_selftest(keys[i])) != 0)
			return rc;
	return VEP_OK;
}

static int
domain_load_keys(struct domain *d)
{
	struct vep_keyset ks;
	struct doc support, pk;
	int rc;

	if ((rc = vep_keydir_load(d->cfg->key_dir, &ks)) != 0)
		return rc;
	if ((rc = keyset_selftest(&ks)) != 0) {
		vep_keyset_clear(&ks);
		return rc;
	}
	if ((rc = build_key_docs(&ks, &support, &pk)) != 0) {
		vep_keyset_clear(&ks);
		return rc;
	}
	vep_keyset_clear(&d->keys);
	doc_clear(&d->support);
	doc_clear(&d->pk);
	d->keys = ks;
	d->support = support;
	d->pk = pk;
	return VEP_OK;
}

static void
domain_clear(struct domain *d)
{
	vep_keyset_clear(&d->keys);
	doc_clear(&d->support);
	doc_clear(&d->pk);
	doc_clear(&d->hm_xrd);
	doc_clear(&d->hm_jrd);
	free(d->hm_base);
	d->hm_base = NULL;
	account_map_free(d->accounts);
	d->accounts = NULL;
}

int
domain_set_load(const struct config *cfg, struct domain_set **out, char *err, size_t errlen)
{
	struct domain_set *set = NULL;
	char msg[512];
	size_t i;
	int rc = VEP_ERR_NOMEM;

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if ((set = calloc(1, sizeof(*set))) == NULL ||
	    (set->v = calloc(cfg->ndomains ? cfg->ndomains : 1, sizeof(*set->v))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < cfg->ndomains; i++) {
		const struct config_domain *cd = &cfg->domains[i];
		struct domain *d = &set->v[i];

		d->cfg = cd;
		set->n = i + 1;
		rc = domain_load_keys(d);
		if (rc == 0 && cd->public_url != NULL)
			rc = hostmeta_cache(d, cd->public_url);
		if (rc != 0) {
			snprintf(err, errlen, "%s:%u: [domain %s] key_dir '%s': %s",
			    cfg->path != NULL ? cfg->path : "(built in)", cd->key_dir_line,
			    cd->name, cd->key_dir, rc == VEP_ERR_BADSIG ?
			    "key self-test failed: a signature does not verify with the key's public "
			    "half (damaged or mismatched key file)" : vep_strerror(rc));
			goto out;
		}
		if ((rc = account_map_new(cd->account_suffix, cd->account_aliases, &d->accounts,
		    msg, sizeof(msg))) != 0) {
			snprintf(err, errlen, "%s:%u: [domain %s] account_aliases: %s",
			    cfg->path != NULL ? cfg->path : "(built in)", cd->account_aliases_line,
			    cd->name, msg);
			goto out;
		}
	}
	if ((cfg->tls_cert == NULL) != (cfg->tls_key == NULL)) {
		snprintf(err, errlen, "%s: keys 'tls_cert' and 'tls_key': set both or neither",
		    cfg->path != NULL ? cfg->path : "(built in)");
		rc = VEP_ERR_INVALID;
		goto out;
	}
	if (cfg->tls_cert != NULL &&
	    (rc = tls_ctx_new(cfg->tls_cert, cfg->tls_key, &set->tls, msg, sizeof(msg))) != 0) {
		snprintf(err, errlen, "%s: %s", cfg->path != NULL ? cfg->path : "(built in)", msg);
		goto out;
	}
	*out = set;
	set = NULL;
	rc = VEP_OK;
out:
	domain_set_free(set);
	return rc;
}

struct domain *
domain_set_find(const struct domain_set *set, const char *name)
{
	size_t i;

	for (i = 0; set != NULL && name != NULL && i < set->n; i++)
		if (strcmp(set->v[i].cfg->name, name) == 0)
			return &set->v[i];
	return NULL;
}

const vep_key *
domain_signing_key(const struct domain *d)
{
	return d->keys.current;
}

void
domain_set_free(struct domain_set *set)
{
	size_t i;

	if (set == NULL)
		return;
	for (i = 0; i < set->n; i++)
		domain_clear(&set->v[i]);
	/* Connections still open keep their own reference. */
	SSL_CTX_free(set->tls);
	free(set->v);
	free(set);
}
