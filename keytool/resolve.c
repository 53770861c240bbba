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
#include "support.h"

/* Largest URL we build for a lookup (bytes). */
#define KT_URL_MAX 2048

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
	if (depth > 0) {
		n = snprintf(out, outlen, "%.*s://%s" KT_WELL_KNOWN "?domain=%s",
		    (int)schemelen, u, domain, email_domain);
	} else if (strstr(rest + 3, KT_WELL_KNOWN) != NULL) {
		n = snprintf(out, outlen, "%s", u);
	} else {
		size_t ulen = strlen(u);

		if (ulen > 0 && u[ulen - 1] == '/')
			ulen--;
		n = snprintf(out, outlen, "%.*s" KT_WELL_KNOWN "?domain=%s",
		    (int)ulen, u, email_domain);
	}
	if (n < 0 || (size_t)n >= outlen)
		return VEP_ERR_TOOBIG;
	return 0;
}

/* Gets the document text for domain at hop depth. */
static int
kt_get_doc(const struct kt_source *src, int depth, const char *domain,
    const char *email_domain, char **text, size_t *len)
{
	char url[KT_URL_MAX], why[256];
	size_t i;
	int r;

	*text = NULL;
	*len = 0;
	if (src->fetch_url != NULL) {
		if ((r = kt_lookup_url(src, depth, domain, email_domain, url, sizeof url)) != 0) {
			kt_err("%s: cannot build a lookup URL", src->fetch_url);
			return r;
		}
		r = fetch_get(url, &src->fetch, text, len, NULL, why, sizeof why);
		if (r != 0)
			kt_err("%s: %s", url, why);
		return r;
	}
	for (i = 0; i < src->nfiles; i++) {
		const char *d = src->files[i].domain;

		if ((depth == 0 && d == NULL) || (d != NULL && strcmp(d, domain) == 0))
			return kt_read_input(src->files[i].path, KT_INPUT_MAX_BYTES, text, len);
	}
	kt_err("no support document for %s (give --support-doc %s=FILE, or --fetch)",
	    domain, domain);
	return VEP_ERR_IO;
}

int
kt_resolve(const struct kt_source *src, const char *email_domain,
    struct vep_support **doc, char **issuer)
{
	char *chain[VEP_MAX_DELEGATIONS + 1] = { NULL };
	struct vep_support *s = NULL;
	char *text = NULL;
	size_t len = 0, nchain = 0, i;
	int depth, r;

	*doc = NULL;
	*issuer = NULL;
	if ((chain[0] = strdup(email_domain)) == NULL)
		return VEP_ERR_NOMEM;
	nchain = 1;
	for (depth = 0; ; depth++) {
		const char *domain = chain[nchain - 1];

		if ((r = kt_get_doc(src, depth, domain, email_domain, &text, &len)) != 0)
			goto out;
		r = vep_support_parse(text, len, &s);
		free(text);
		text = NULL;
		if (r != 0) {
			kt_err("support document of %s: %s", domain, vep_strerror(r));
			goto out;
		}
		if (s->disabled) {
			kt_err("%s has disabled BrowserID", domain);
			r = VEP_ERR_DISABLED;
			goto out;
		}
		if (s->authority == NULL)
			break;
		for (i = 0; i < nchain; i++) {
			if (strcasecmp(chain[i], s->authority) == 0) {
				kt_err("delegation loop at %s", s->authority);
				r = VEP_ERR_DELEGATION;
				goto out;
			}
		}
		if (nchain == VEP_MAX_DELEGATIONS + 1) {
			kt_err("more than %d delegations", VEP_MAX_DELEGATIONS);
			r = VEP_ERR_DELEGATION;
			goto out;
		}
		if ((chain[nchain] = strdup(s->authority)) == NULL) {
			r = VEP_ERR_NOMEM;
			goto out;
		}
		vep_domain_lower(chain[nchain]);
		nchain++;
		vep_support_free(s);
		s = NULL;
	}
	if (s->nkeys == 0) {
		kt_err("support document of %s has no key", chain[nchain - 1]);
		r = VEP_ERR_INVALID;
		goto out;
	}
	*issuer = chain[nchain - 1];
	chain[nchain - 1] = NULL;
	*doc = s;
	s = NULL;
	r = 0;
out:
	for (i = 0; i < nchain; i++)
		free(chain[i]);
	vep_support_free(s);
	free(text);
	return r;
}
