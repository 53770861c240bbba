/*
 * api/discovery.c - handlers of the discovery endpoints.
 *
 * Owns the WebFinger answer and the choice of base URL for absolute links.
 * Must never consult accounts (no PAM, no database): discovery is the same
 * for every address, which is what keeps WebFinger from being an oracle.
 */
#include "api/discovery.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "server/shared.h"
#include "core/domain.h"
#include "email.h"
#include "err.h"
#include "edge/etag.h"
#include "core/paths.h"
#include "edge/req.h"

/* Discovery documents are public and cacheable by anyone, and browser-side
 * verifiers may fetch them cross-origin (RFC 6415 section 5, RFC 7033
 * section 5). */
#define PUBLIC_DOC (REQ_F_CACHE | REQ_F_CORS)

/* Room for "https://" + a 253-byte host + ":" + port, and then some. */
#define BASE_BUFSZ 300

/* The WebFinger links, in answer order. */
static const struct {
	const char *rel;
	const char *type;
	const char *path;
} webfinger_links[] = {
	{ REL_PUBLIC_KEY, MEDIA_JSON, PATH_PK },
	{ REL_DESCRIBEDBY, MEDIA_JSON, PATH_SUPPORT },
};

/* The base of absolute links for domain d: its configured public_url, else
 * http:// and the request's Host, else the domain itself. The Host is only
 * reflected when it is an address of this server or a domain we serve, and
 * req_host has limited it to host characters, so it cannot inject markup or
 * point links elsewhere. Returns 0 or the error to answer. */
static int
link_base(const struct req *r, const struct domain *d, char base[BASE_BUFSZ])
{
	char host[260], hostport[260];
	int local, rc;

	if (d->cfg->public_url != NULL) {
		snprintf(base, BASE_BUFSZ, "%s", d->cfg->public_url);
		return 0;
	}
	if ((rc = req_host(r, host, hostport, sizeof(host), &local)) != 0)
		return rc;
	if (host[0] != '\0' && !local &&
	    domain_set_find_host(authority_domains(r->a), host) == NULL)
		return REQ_ERR_UNKNOWN_DOMAIN;
	/* The scheme we were reached with; behind a TLS proxy the
	 * administrator sets public_url. */
	snprintf(base, BASE_BUFSZ, "%s://%s", req_is_tls(r) ? "https" : "http",
	    host[0] != '\0' ? hostport : d->cfg->name);
	return 0;
}

/* 1 when the request reached us by the delegating domain's own name: a
 * verifier asking the email domain itself must be sent to its authority
 * (the login host, or a request by address, gets the keys). */
static int
asks_delegating_name(const struct req *r, const struct domain *d)
{
	char host[260], hostport[260];
	int local;

	return d->cfg->authority != NULL &&
	    req_host(r, host, hostport, sizeof(host), &local) == 0 && !local &&
	    strcmp(host, d->cfg->name) == 0;
}

void
wellknown_support(struct req *r)
{
	const struct doc *doc = asks_delegating_name(r, r->domain) ? &r->domain->delegation :
	    &r->domain->support;

	req_reply_tagged(r, MEDIA_JSON, doc->body, doc->len, doc->etag, PUBLIC_DOC);
}

void
wellknown_pk(struct req *r)
{
	const struct doc *doc = &r->domain->pk;

	req_reply_tagged(r, MEDIA_JSON, doc->body, doc->len, doc->etag, PUBLIC_DOC);
}

static void
hostmeta(struct req *r, int json)
{
	char base[BASE_BUFSZ];
	const struct doc *doc;
	struct doc tmp;
	int rc;

	if ((rc = link_base(r, r->domain, base)) != 0) {
		req_reply_error(r, rc);
		return;
	}
	if ((rc = domain_hostmeta(r->domain, base, json, &tmp, &doc)) != 0) {
		log_error(&r->a->log, "host-meta for %s: %s", r->domain->cfg->name,
		    vep_strerror(rc));
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply_tagged(r, json ? MEDIA_JRD : MEDIA_XRD, doc->body, doc->len, doc->etag,
	    PUBLIC_DOC);
	domain_doc_clear(&tmp);
}

void
wellknown_hostmeta(struct req *r)
{
	hostmeta(r, 0);
}

void
wellknown_hostmeta_json(struct req *r)
{
	hostmeta(r, 1);
}

/* Appends local, percent-encoding what RFC 7565's userpart does not allow
 * raw (anything but unreserved and sub-delims), to s (n bytes). */
static void
encode_userpart(const char *local, char *s, size_t n)
{
	static const char raw[] = "-._~!$&'()*+,;=";
	static const char hex[] = "0123456789ABCDEF";
	size_t o = strlen(s);

	for (; *local != '\0' && o + 4 < n; local++) {
		unsigned char c = (unsigned char)*local;
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr(raw, c) != NULL) {
			s[o++] = (char)c;
		} else {
			s[o++] = '%';
			s[o++] = hex[c >> 4];
			s[o++] = hex[c & 15];
		}
	}
	s[o] = '\0';
}

/* 1 when the request has no rel parameter or one equal to rel. */
static int
rel_wanted(const struct req *r, const char *rel)
{
	size_t i, n = 0;

	for (i = 0; i < r->nparams; i++) {
		if (strcmp(r->params[i].name, "rel") != 0)
			continue;
		n++;
		if (strcmp(r->params[i].value, rel) == 0)
			return 1;
	}
	return n == 0;
}

/* Parses resource "acct:LOCAL@DOMAIN" into the normalised email (new text)
 * and the served domain. Returns 0 or the error to answer. */
static int
parse_resource(const struct req *r, char **email, struct domain **dom)
{
	const char *res, *at;
	char *local = NULL, *text = NULL, *lp = NULL, *dp = NULL;
	int e = REQ_ERR_BAD_RESOURCE;

	*email = NULL;
	*dom = NULL;
	if (req_param_count(r, "resource") != 1)
		goto out;
	res = req_param(r, "resource");
	/* URI schemes are case-insensitive (RFC 3986 section 3.1). */
	if (strncasecmp(res, "acct:", 5) != 0)
		goto out;
	res += 5;
	if ((at = strrchr(res, '@')) == NULL || strchr(at, '%') != NULL)
		goto out;
	/* The userpart may itself be percent-encoded (RFC 7565 section 7). */
	if (req_pct_decode(res, (size_t)(at - res), &local) != 0)
		goto out;
	if (asprintf(&text, "%s%s", local, at) < 0) {
		text = NULL;
		e = REQ_ERR_INTERNAL;
		goto out;
	}
	if (vep_email_normalize(text, strlen(text), email) != 0)
		goto out;
	if (vep_email_split(*email, &lp, &dp) != 0) {
		e = REQ_ERR_INTERNAL;
		goto out;
	}
	if ((*dom = domain_set_find(authority_domains(r->a), dp)) == NULL) {
		e = REQ_ERR_UNKNOWN_DOMAIN;
		goto out;
	}
	e = 0;
out:
	if (e != 0) {
		free(*email);
		*email = NULL;
		*dom = NULL;
	}
	free(local);
	free(text);
	free(lp);
	free(dp);
	return e;
}

void
wellknown_webfinger(struct req *r)
{
	char base[BASE_BUFSZ], subject[4 * 256 + 16], etag[ETAG_BUFSZ], href[BASE_BUFSZ + 64];
	struct domain *d;
	json_t *doc = NULL, *links = NULL, *link;
	char *email = NULL, *text = NULL, *at;
	size_t i;
	int e;

	if ((e = parse_resource(r, &email, &d)) != 0 || (e = link_base(r, d, base)) != 0) {
		req_reply_error(r, e);
		goto out;
	}
	at = strrchr(email, '@');
	*at = '\0';
	snprintf(subject, sizeof(subject), "acct:");
	encode_userpart(email, subject, sizeof(subject));
	snprintf(subject + strlen(subject), sizeof(subject) - strlen(subject), "@%s", at + 1);
	if ((links = json_array()) == NULL)
		goto oom;
	for (i = 0; i < sizeof(webfinger_links) / sizeof(webfinger_links[0]); i++) {
		if (!rel_wanted(r, webfinger_links[i].rel))
			continue;
		snprintf(href, sizeof(href), "%s%s", base, webfinger_links[i].path);
		link = json_pack("{s:s, s:s, s:s}", "rel", webfinger_links[i].rel,
		    "type", webfinger_links[i].type, "href", href);
		if (link == NULL || json_array_append_new(links, link) != 0)
			goto oom;
	}
	doc = json_pack("{s:s, s:O}", "subject", subject, "links", links);
	if (doc == NULL || (text = json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER)) == NULL)
		goto oom;
	if (etag_compute(text, strlen(text), etag) != 0)
		goto oom;
	req_reply_tagged(r, MEDIA_JRD, text, strlen(text), etag, PUBLIC_DOC);
	goto out;
oom:
	log_error(&r->a->log, "webfinger: out of memory");
	req_reply_error(r, REQ_ERR_INTERNAL);
out:
	json_decref(links);
	json_decref(doc);
	free(text);
	free(email);
}
