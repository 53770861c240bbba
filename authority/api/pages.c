/*
 * api/pages.c - serving www/ (contract in api/pages.h).
 */
#include "api/pages.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/shared.h"
#include "core/fixed_limits.h"
#include "core/domain.h"
#include "edge/req.h"
#include "www.h"

enum page_kind {
	KIND_ASSET,       /* scripts, styles: the default CSP */
	KIND_PAGE,        /* top-level only */
	KIND_EMBED,       /* framed by embed_origins only, which it is told */
	KIND_PROVISION,   /* legacy: framed by the shim's origin, loads its script */
	KIND_AUTHENTICATE /* legacy: top-level, loads the shim's script */
};

/* Pages by path; anything else in www_files[] is an asset. "/" is the
 * sign-in page. */
static const struct {
	const char *path;
	const char *file;
	enum page_kind kind;
} pages[] = {
	{ "/", "/sign-in", KIND_PAGE },
	{ "/sign-in", "/sign-in", KIND_PAGE },
	{ "/account", "/account", KIND_PAGE },
	{ "/share", "/share", KIND_PAGE },
	{ "/embed", "/embed", KIND_EMBED },
	{ "/sign-in/provision", "/sign-in/provision", KIND_PROVISION },
	{ "/sign-in/authenticate", "/sign-in/authenticate", KIND_AUTHENTICATE },
};

#define NPAGES (sizeof(pages) / sizeof(pages[0]))
#define DEMO_RP_PREFIX "/demo-rp/"

const struct www_file *
static_file(const char *path)
{
	size_t i;

	for (i = 0; i < www_files_count; i++)
		if (strcmp(www_files[i].path, path) == 0)
			return &www_files[i];
	return NULL;
}

/* The file and kind for a request path, or NULL. */
static const struct www_file *
lookup(const char *path, enum page_kind *kind)
{
	size_t i;

	for (i = 0; i < NPAGES; i++) {
		if (strcmp(pages[i].path, path) == 0) {
			*kind = pages[i].kind;
			return static_file(pages[i].file);
		}
	}
	*kind = KIND_ASSET;
	if (strncmp(path, DEMO_RP_PREFIX, sizeof(DEMO_RP_PREFIX) - 1) == 0)
		return NULL;
	for (i = 0; i < NPAGES; i++)
		if (strcmp(pages[i].file, path) == 0)
			return NULL; /* pages only under their own paths */
	return static_file(path);
}

int
static_exists(const char *path)
{
	enum page_kind kind;

	return lookup(path, &kind) != NULL;
}

/* Sets the CSP (and X-Frame-Options) for kind. Returns 0 or VEP_ERR_NOMEM. The
 * webmail embed may be framed by exactly the configured embed_origins (the
 * list its page is given too, see fill_page), nobody when there are none;
 * the legacy pages name the shim's origin when one is configured. */
static int
page_headers(struct req *r, const struct config *cfg, enum page_kind kind)
{
	const char *shim = cfg->shim_origin;
	char anc[LIMIT_EMBED_ORIGINS_BYTES + 300], csp[LIMIT_EMBED_ORIGINS_BYTES + 1000];
	int legacy = (kind == KIND_PROVISION || kind == KIND_AUTHENTICATE) && shim != NULL;
	int rc;

	if (kind == KIND_ASSET)
		return 0;
	if (kind == KIND_EMBED && cfg->embed_origins != NULL)
		snprintf(anc, sizeof(anc), "%s", cfg->embed_origins);
	else if (kind == KIND_PROVISION && shim != NULL)
		snprintf(anc, sizeof(anc), "%s", shim);
	else
		snprintf(anc, sizeof(anc), "'none'");
	snprintf(csp, sizeof(csp), "default-src 'none'; script-src 'self'%s%s; style-src 'self'; "
	    "connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; "
	    "frame-ancestors %s", legacy ? " " : "", legacy ? shim : "", anc);
	if ((rc = req_add_header(r, "Content-Security-Policy", csp)) != 0)
		return rc;
	/* For browsers that predate frame-ancestors. */
	if (strcmp(anc, "'none'") == 0)
		return req_add_header(r, "X-Frame-Options", "DENY");
	return 0;
}

char *
static_fill(const struct www_file *f, const char *name, const char *value, size_t *len)
{
	const char *src = (const char *)f->data, *p;
	char mark[64], *out, *o;
	size_t n = 0, mlen, vlen = strlen(value);

	if ((size_t)snprintf(mark, sizeof(mark), "{{%s}}", name) >= sizeof(mark))
		return NULL;
	mlen = strlen(mark);
	for (p = strstr(src, mark); p != NULL; p = strstr(p + mlen, mark))
		n++;
	if ((out = malloc(f->len + n * vlen + 1)) == NULL)
		return NULL;
	for (o = out; (p = strstr(src, mark)) != NULL; src = p + mlen) {
		memcpy(o, src, (size_t)(p - src));
		o += p - src;
		memcpy(o, value, vlen);
		o += vlen;
	}
	strcpy(o, src);
	*len = (size_t)(o - out) + strlen(src);
	return out;
}

/* The page's text with its placeholder filled (new text, *len), or NULL
 * when out of memory: /embed is told the origins it may talk to (checked
 * at load, so they never need escaping in an attribute); a legacy page
 * gets the tag that loads the shim's script, or nothing without a shim. */
static char *
fill_page(const struct config *cfg, const struct www_file *f, enum page_kind kind, size_t *len)
{
	char tag[400];

	if (kind == KIND_EMBED)
		return static_fill(f, "EMBED_ORIGINS",
		    cfg->embed_origins != NULL ? cfg->embed_origins : "", len);
	tag[0] = '\0';
	if (cfg->shim_origin != NULL)
		snprintf(tag, sizeof(tag), "<script src=\"%s/%s\" defer></script>",
		    cfg->shim_origin,
		    kind == KIND_PROVISION ? "provisioning_api.js" : "authentication_api.js");
	return static_fill(f, "SHIM_SCRIPT", tag, len);
}

void
static_serve(struct req *r)
{
	enum page_kind kind;
	const struct www_file *f = lookup(r->path, &kind);
	/* Loaded once: the headers and the page must agree even if a reload
	 * swaps the configuration meanwhile. */
	const struct config *cfg = authority_cfg(r->a);
	char *filled;
	size_t len;
	int rc;

	if (f == NULL) {
		req_reply_error(r, REQ_ERR_NOT_FOUND);
		return;
	}
	/* Without a shim no user agent can drive the provisioning page, and
	 * it must never load a script from an origin nobody chose. */
	if (kind == KIND_PROVISION && cfg->shim_origin == NULL) {
		req_reply_error_text(r, REQ_ERR_NOT_FOUND, "the legacy provisioning page is off: "
		    "shim_origin is not configured");
		return;
	}
	if ((rc = page_headers(r, cfg, kind)) != 0) {
		req_reply_error(r, rc);
		return;
	}
	if (kind != KIND_PROVISION && kind != KIND_AUTHENTICATE && kind != KIND_EMBED) {
		req_reply_tagged(r, f->ctype, (const char *)f->data, f->len, f->etag,
		    REQ_F_REVALIDATE);
		return;
	}
	if ((filled = fill_page(cfg, f, kind, &len)) == NULL) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply(r, 200, f->ctype, filled, len, 0);
	free(filled);
}
