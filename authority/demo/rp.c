/*
 * demo/rp.c - the demo relying party (contract in demo/rp.h).
 */
#include "demo/rp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "assertion.h"
#include "server/shared.h"
#include "core/domain.h"
#include "email.h"
#include "err.h"
#include "server/loop.h"
#include "edge/req.h"
#include "edge/listener.h"
#include "api/pages.h"
#include "util.h"
#include "www.h"

/* What the relying party serves, and which are pages (they name the
 * authority's origin, filled in as {{AUTHORITY}}). */
static const struct {
	const char *path;
	const char *file;
	int page;
} rp_files[] = {
	{ "/", "/demo-rp/index", 1 },
	{ "/webmail", "/demo-rp/webmail", 1 },
	{ "/demo-rp.js", "/demo-rp/demo-rp.js", 0 },
	{ "/webmail.js", "/demo-rp/webmail.js", 0 },
	{ "/style.css", "/style.css", 0 },
};

#define NRP_FILES (sizeof(rp_files) / sizeof(rp_files[0]))

/* "http://" and a listener's bound address as a browser on this machine
 * reaches it: a wildcard address (0.0.0.0, [::]) means the loopback one.
 * Plain http:// works in the browser (WebCrypto, secure cookies) only on
 * loopback anyway. */
static void
browser_origin(const struct server *s, char *out, size_t outlen)
{
	const char *addr = server_address(s);

	if (strncmp(addr, "0.0.0.0:", 8) == 0)
		snprintf(out, outlen, "http://127.0.0.1:%s", addr + 8);
	else if (strncmp(addr, "[::]:", 5) == 0)
		snprintf(out, outlen, "http://[::1]:%s", addr + 5);
	else
		snprintf(out, outlen, "http://%s", addr);
}

void
demo_rp_origin(const struct authority *a, char *out, size_t outlen)
{
	browser_origin(a->demo_rp, out, outlen);
}

/* The authority's origin as the browser reaches it in the demo. */
static void
authority_origin(struct req *r, char *out, size_t outlen)
{
	browser_origin(r->a->loops[0]->server, out, outlen);
}

static void
serve_page(struct req *r, const struct www_file *f)
{
	char auth[SERVER_ADDR_BUFSZ + 16], csp[600], *text;
	size_t len;

	authority_origin(r, auth, sizeof(auth));
	snprintf(csp, sizeof(csp), "default-src 'none'; script-src 'self' %s; style-src 'self'; "
	    "connect-src 'self'; img-src 'self' data:; frame-src %s; form-action 'self'; "
	    "base-uri 'none'; "
	    "frame-ancestors 'none'", auth, auth);
	if ((text = static_fill(f, "AUTHORITY", auth, &len)) == NULL ||
	    req_add_header(r, "Content-Security-Policy", csp) != 0) {
		free(text);
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply(r, 200, f->ctype, text, len, 0);
	free(text);
}

/* Verifies a backed assertion for this site's own origin: the one it was
 * started on, fixed for its lifetime. Never the request's Host header: a
 * site that took its audience from the request would accept an assertion
 * made for evil.example (which evil.example's owner gets from any visitor
 * who signs in there) when it arrives with "Host: evil.example". */
static void
verify(struct req *r)
{
	char audience[SERVER_ADDR_BUFSZ + 16], msg[160];
	const vep_key *keys[VEP_KEYSET_MAX];
	const struct domain *d;
	vep_backed *b = NULL;
	const char *text, *at;
	json_t *o;
	size_t n = 0;
	int rc;

	if ((rc = req_read_json(r, &r->body)) != 0) {
		req_reply_error(r, rc);
		return;
	}
	text = json_string_value(json_object_get(r->body, "assertion"));
	if (text == NULL) {
		req_reply_error_text(r, REQ_ERR_BAD_REQUEST, "\"assertion\" must be a string");
		return;
	}
	demo_rp_origin(r->a, audience, sizeof(audience));
	rc = vep_backed_parse(text, strlen(text), &b);
	at = rc == 0 ? strrchr(b->cert->email, '@') : NULL;
	d = at != NULL ? domain_set_find(authority_domains(r->a), at + 1) : NULL;
	if (rc == 0 && d == NULL)
		rc = VEP_ERR_ISSUER;
	if (rc == 0) {
		n = vep_keyset_published(&d->keys, keys);
		rc = vep_backed_verify(b, audience, d->cfg->name, keys, n, vep_now_ms());
	}
	if (rc != 0) {
		snprintf(msg, sizeof(msg), "assertion refused: %s", vep_strerror(rc));
		req_reply_error_text(r, REQ_ERR_UNAUTHORIZED, msg);
	} else if ((o = json_pack("{ssssss}", "email", b->cert->email, "issuer", b->cert->issuer,
	    "audience", audience)) != NULL) {
		req_reply_json(r, 200, o);
		json_decref(o);
	} else {
		req_reply_error(r, REQ_ERR_INTERNAL);
	}
	vep_backed_free(b);
}

static void
handle(struct req *r)
{
	size_t i;
	int e;

	if ((e = req_parse_target(r)) != 0) {
		req_reply_error(r, e);
		return;
	}
	if (strcmp(r->path, "/verify") == 0) {
		if (r->method != REQ_M_POST)
			req_reply_method(r, REQ_M_POST);
		else
			verify(r);
		return;
	}
	for (i = 0; i < NRP_FILES; i++) {
		const struct www_file *f;
		if (strcmp(rp_files[i].path, r->path) != 0)
			continue;
		if ((r->method & (REQ_M_GET | REQ_M_HEAD)) == 0) {
			req_reply_method(r, REQ_M_GET | REQ_M_HEAD);
			return;
		}
		if ((f = static_file(rp_files[i].file)) == NULL)
			break;
		if (rp_files[i].page)
			serve_page(r, f);
		else
			req_reply_tagged(r, f->ctype, (const char *)f->data, f->len, f->etag,
			    REQ_F_REVALIDATE);
		return;
	}
	req_reply_error(r, REQ_ERR_NOT_FOUND);
}

int
demo_rp_start(struct authority *a, const char *listen, char *err, size_t errlen)
{
	int rc = server_listen(a->loops[0], listen, 0, handle, &a->demo_rp);

	if (rc != 0) {
		snprintf(err, errlen, "demo relying party: cannot listen on %s", listen);
		return rc;
	}
	printf("demo relying party on http://%s\n", server_address(a->demo_rp));
	fflush(stdout);
	return VEP_OK;
}

void
demo_rp_stop(struct authority *a)
{
	server_free(a->demo_rp);
	a->demo_rp = NULL;
}
