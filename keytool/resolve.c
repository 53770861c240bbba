/*
 * resolve.c - the relying party's support-document lookup for the verify
 * commands (see resolve.h).
 *
 * Owns the --fetch URL forms, the DOMAIN=FILE map and the delegation walk.
 * Must never trust a document for a domain it was not fetched or given
 * for, and never walk more than VEP_MAX_DELEGATIONS hops.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "email.h"
#include "err.h"
#include "resolve.h"
#include "remote/discover.h"
#include "support.h"

#define KT_WELL_KNOWN "/.well-known/browserid"

int
kt_source_add_file(struct kt_source *src, char *arg)
{
	char *eq = strchr(arg, '=');

	if (src->nfiles == KT_MAX_DOC_FILES) {
		kt_err("at most %d --support-doc files", KT_MAX_DOC_FILES);
		return VEP_ERR_TOOBIG;
	}
	if (eq != NULL) {
		*eq = '\0';
		vep_domain_lower(arg);
		if (arg[0] == '\0' || eq[1] == '\0') {
			kt_err("--support-doc DOMAIN=FILE: empty domain or file");
			return VEP_ERR_INVALID;
		}
		src->files[src->nfiles].domain = arg;
		src->files[src->nfiles].path = eq + 1;
	} else {
		src->files[src->nfiles].domain = NULL;
		src->files[src->nfiles].path = arg;
	}
	src->nfiles++;
	return 0;
}

/* Builds the URL of hop `depth` for `domain`: hop 0 is the --fetch URL
 * (a document URL is used as is; a base gets the well-known path), later
 * hops go to the delegated host with the same scheme. */
static int
kt_lookup_url(const struct kt_source *src, int depth, const char *domain,
    const char *email_domain, char *out, size_t outlen)
{
	const char *u = src->fetch_url, *rest;
	size_t schemelen;
	int n;

	rest = strstr(u, "://");
	if (rest == NULL)
		return VEP_ERR_ARG;
	schemelen = (size_t)(rest - u);
	if (depth == 0 && strstr(rest + 3, KT_WELL_KNOWN) == NULL)
		return kt_support_url(u, email_domain, out, outlen);
	if (depth > 0)
		n = snprintf(out, outlen, "%.*s://%s" KT_WELL_KNOWN "?domain=%s",
		    (int)schemelen, u, domain, email_domain);
	else
		n = snprintf(out, outlen, "%s", u);
	if (n < 0 || (size_t)n >= outlen)
		return VEP_ERR_TOOBIG;
	return 0;
}

int
kt_support_url(const char *base, const char *domain, char *out, size_t outlen)
{
	size_t blen = strlen(base);
	int n;

	if (blen > 0 && base[blen - 1] == '/')
		blen--;
	if (domain != NULL)
		n = snprintf(out, outlen, "%.*s" KT_WELL_KNOWN "?domain=%s", (int)blen, base,
		    domain);
	else
		n = snprintf(out, outlen, "%.*s" KT_WELL_KNOWN, (int)blen, base);
	if (n < 0 || (size_t)n >= outlen)
		return VEP_ERR_TOOBIG;
	return 0;
}

/* The source and the email domain, for kt_get_doc. */
struct kt_walk {
	const struct kt_source *src;
	const char *email_domain;
};

/* discover_get_fn: the document text for domain at hop depth, from the
 * files given or fetched. */
static int
kt_get_doc(void *arg, int depth, const char *domain, char **text, size_t *len, char *why,
    size_t whylen)
{
	const struct kt_walk *w = arg;
	const struct kt_source *src = w->src;
	char url[KT_URL_MAX], fwhy[256];
	size_t i;
	int r;

	*text = NULL;
	*len = 0;
	if (src->fetch_url != NULL) {
		r = kt_lookup_url(src, depth, domain, w->email_domain, url, sizeof url);
		if (r != 0) {
			snprintf(why, whylen, "%s: cannot build a lookup URL", src->fetch_url);
			return r;
		}
		r = fetch_get(url, &src->fetch, text, len, NULL, fwhy, sizeof fwhy);
		if (r != 0)
			snprintf(why, whylen, "%s: %s", url, fwhy);
		return r;
	}
	for (i = 0; i < src->nfiles; i++) {
		const char *d = src->files[i].domain;

		if ((depth == 0 && d == NULL) || (d != NULL && strcmp(d, domain) == 0)) {
			r = kt_read_input(src->files[i].path, KT_INPUT_MAX_BYTES, text, len);
			if (r != 0 && whylen > 0)
				why[0] = '\0'; /* kt_read_input said why */
			return r;
		}
	}
	snprintf(why, whylen,
	    "no support document for %s (give --support-doc %s=FILE, or --fetch)", domain, domain);
	return VEP_ERR_IO;
}

int
kt_resolve(const struct kt_source *src, const char *email_domain,
    struct vep_support **doc, char **issuer)
{
	struct kt_walk w = { src, email_domain };
	char why[512];
	int r;

	why[0] = '\0';
	r = discover_walk(email_domain, kt_get_doc, &w, doc, issuer, why, sizeof why);
	if (r != 0 && why[0] != '\0')
		kt_err("%s", why);
	return r;
}
