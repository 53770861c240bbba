/*
 * core/domain.c - served domains, their keys and pre-built discovery documents.
 *
 * Owns the keysets and the bodies of /.well-known/browserid, /pk and
 * host-meta. Documents are rebuilt only when keys change (load, reload) or,
 * for host-meta without a configured public_url, when the base URL changes,
 * so a request costs a lookup and a copy. Must never log or expose private
 * keys; only public JSON leaves this file.
 */
#include "core/domain.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/account.h"
#include "email.h"
#include "err.h"
#include "key.h"
#include <jansson.h>
#include "core/paths.h"
#include "support.h"
#include "edge/tls.h"

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
	/* "provisioning" stays even when the legacy provisioning page is off
	 * (no shim_origin; it then answers 404 saying so): the deployed
	 * verifiers (browserid-local-verify's well-known-parser, Persona's)
	 * refuse a support document without it, which would fail every
	 * certificate we issue. */
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

/* A published key from the bundle: JSON null is no key. */
static int
bundle_key(const json_t *entry, const char *name, vep_key **out)
{
	const json_t *j = json_object_get(entry, name);

	*out = NULL;
	if (json_is_null(j))
		return VEP_OK;
	return vep_key_from_json(j, out);
}

/* The domain's public keys from its bundle entry, and the documents. */
static int
domain_load_keys(struct domain *d, const json_t *entry)
{
	struct vep_keyset ks;
	int rc;

	memset(&ks, 0, sizeof(ks));
	if ((rc = bundle_key(entry, "current", &ks.current)) != 0 ||
	    (rc = bundle_key(entry, "next", &ks.next)) != 0 ||
	    (rc = bundle_key(entry, "previous", &ks.previous)) != 0)
		goto out;
	if (ks.current == NULL) {
		rc = VEP_ERR_NOKEY;
		goto out;
	}
	if ((rc = vep_key_fingerprint(ks.current, d->current_fp)) != 0 ||
	    (rc = build_key_docs(&ks, &d->support, &d->pk)) != 0)
		goto out;
	if (d->cfg->authority != NULL) {
		char *text = NULL;

		if ((rc = vep_support_build_delegated(d->cfg->authority, &text)) != 0 ||
		    (rc = doc_set(&d->delegation, text)) != 0)
			goto out;
	}
	d->keys = ks;
	memset(&ks, 0, sizeof(ks));
	d->current_since = json_integer_value(json_object_get(entry, "current_since"));
out:
	vep_keyset_clear(&ks);
	return rc;
}

static void
domain_clear(struct domain *d)
{
	vep_keyset_clear(&d->keys);
	doc_clear(&d->support);
	doc_clear(&d->pk);
	doc_clear(&d->delegation);
	doc_clear(&d->hm_xrd);
	doc_clear(&d->hm_jrd);
	free(d->hm_base);
	d->hm_base = NULL;
	account_map_free(d->accounts);
	d->accounts = NULL;
}

/* A JSON string's bytes, or NULL for JSON null (borrowed). */
static const char *
bundle_text(const json_t *obj, const char *name, size_t *len)
{
	const json_t *j = json_object_get(obj, name);

	*len = json_string_length(j);
	return json_string_value(j);
}

static int
load_tls(struct domain_set *set, const json_t *bundle, char *err, size_t errlen)
{
	const struct config *cfg = set->cfg;
	const char *cert, *key;
	size_t cert_len, key_len;
	char msg[512];
	int rc;

	cert = bundle_text(bundle, "tls_cert", &cert_len);
	key = bundle_text(bundle, "tls_key", &key_len);
	if (cfg->tls_cert == NULL)
		return VEP_OK;
	if (cert == NULL || key == NULL) {
		snprintf(err, errlen, "the TLS certificate and key were not passed on");
		return VEP_ERR_INVALID;
	}
	if ((rc = tls_ctx_new_pem(cfg->tls_cert, cert, cert_len, cfg->tls_key, key, key_len,
	    &set->tls, msg, sizeof(msg))) != 0)
		snprintf(err, errlen, "%s:%u: key 'tls_key': %s", cfg->path != NULL ? cfg->path :
		    "(built in)", config_key_line(cfg, "tls_key"), msg);
	return rc;
}

int
domain_set_from_bundle(const json_t *bundle, config_maker_fn make_cfg, void *arg,
    struct domain_set **out, char *err, size_t errlen)
{
	struct domain_set *set = NULL;
	const json_t *domains = json_object_get(bundle, "domains");
	const char *text, *aliases;
	char msg[512];
	size_t i, len;
	int rc = VEP_ERR_NOMEM;

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	if ((set = calloc(1, sizeof(*set))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	text = bundle_text(bundle, "config", &len);
	if ((rc = make_cfg(arg, text, len, &set->cfg, err, errlen)) != 0)
		goto out;
	rc = VEP_ERR_INVALID;
	if (json_array_size(domains) != set->cfg->ndomains) {
		snprintf(err, errlen, "the keys passed on do not match the configuration");
		goto out;
	}
	rc = VEP_ERR_NOMEM;
	if ((set->v = calloc(set->cfg->ndomains ? set->cfg->ndomains : 1,
	    sizeof(*set->v))) == NULL) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (i = 0; i < set->cfg->ndomains; i++) {
		const struct config_domain *cd = &set->cfg->domains[i];
		const json_t *entry = json_array_get(domains, i);
		struct domain *d = &set->v[i];

		d->cfg = cd;
		set->n = i + 1;
		rc = domain_load_keys(d, entry);
		if (rc == 0 && cd->public_url != NULL)
			rc = hostmeta_cache(d, cd->public_url);
		if (rc != 0) {
			snprintf(err, errlen, "[domain %s]: published keys: %s", cd->name,
			    vep_strerror(rc));
			goto out;
		}
		aliases = bundle_text(entry, "aliases", &len);
		if ((rc = account_map_new_text(cd->account_suffix,
		    aliases != NULL ? cd->account_aliases : NULL, aliases, len, &d->accounts, msg,
		    sizeof(msg))) != 0) {
			snprintf(err, errlen, "%s:%u: [domain %s] account_aliases: %s",
			    set->cfg->path != NULL ? set->cfg->path : "(built in)",
			    cd->account_aliases_line, cd->name, msg);
			goto out;
		}
	}
	if ((rc = load_tls(set, bundle, err, errlen)) != 0)
		goto out;
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

struct domain *
domain_set_find_host(const struct domain_set *set, const char *host)
{
	char uhost[VEP_DOMAIN_MAX + 3];
	struct domain *d;
	size_t i;

	if ((d = domain_set_find(set, host)) != NULL || set == NULL || host == NULL)
		return d;
	for (i = 0; i < set->n; i++)
		if (config_domain_is_authority_host(set->v[i].cfg, host))
			return &set->v[i];
	for (i = 0; i < set->n; i++)
		if (set->v[i].cfg->public_url != NULL &&
		    config_url_host(set->v[i].cfg->public_url, uhost, sizeof(uhost)) == 0 &&
		    strcmp(uhost, host) == 0)
			return &set->v[i];
	return NULL;
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
	config_free(set->cfg);
	free(set->v);
	free(set);
}
