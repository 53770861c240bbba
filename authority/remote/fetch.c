/*
 * remote/fetch.c - the HTTP client of vep-keytool and of the authority's
 * remote verifier, on libevent's evhttp (plain) and bufferevent_openssl
 * (TLS). One request per event base, run to completion.
 *
 * Owns the transport rules a relying party applies to support documents:
 * never follow a redirect, refuse anything but 200 application/json, cap
 * the body and headers, give up after a timeout, verify TLS peers (chain
 * and host name). Must never: disable certificate verification, or read a
 * body past the cap.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "err.h"
#include "remote/fetch.h"

/* The longest max-age taken from an answer (seconds). */
#define FETCH_MAX_AGE_CAP_S 86400L

/* Longest request target (path + query) we send (bytes). */
#define FETCH_MAX_TARGET 2048

struct fetch_ctx {
	struct event_base *base;
	struct bufferevent *bev;
	int done;
	int status;
	int err;               /* VEP code */
	char *body;
	size_t len;
	char *why;
	size_t whylen;
	size_t max_body;
	long max_age;          /* Cache-Control max-age, -1 none */
};

static const struct {
	enum evhttp_request_error code;
	const char *why;
} fetch_errors[] = {
	{ EVREQ_HTTP_TIMEOUT, "timed out" },
	{ EVREQ_HTTP_EOF, "connection closed early" },
	{ EVREQ_HTTP_INVALID_HEADER, "invalid response headers" },
	{ EVREQ_HTTP_BUFFER_ERROR, "connection failed" },
	{ EVREQ_HTTP_REQUEST_CANCEL, "request cancelled" },
	{ EVREQ_HTTP_DATA_TOO_LONG, "response too large" },
};

static void
fetch_error_cb(enum evhttp_request_error code, void *arg)
{
	struct fetch_ctx *ctx = arg;
	const char *why = "request failed";
	unsigned long ssl_err;
	size_t i;

	for (i = 0; i < sizeof fetch_errors / sizeof fetch_errors[0]; i++)
		if (fetch_errors[i].code == code)
			why = fetch_errors[i].why;
	ctx->err = code == EVREQ_HTTP_DATA_TOO_LONG ? VEP_ERR_TOOBIG : VEP_ERR_IO;
	if (ctx->bev != NULL && (ssl_err = bufferevent_get_openssl_error(ctx->bev)) != 0) {
		char buf[256];

		ERR_error_string_n(ssl_err, buf, sizeof buf);
		snprintf(ctx->why, ctx->whylen, "TLS: %s", buf);
	} else
		snprintf(ctx->why, ctx->whylen, "%s", why);
}

/* The max-age of a Cache-Control value in seconds: -1 when it names none,
 * 0 when it forbids keeping the answer (no-store, no-cache), capped at a
 * day (what a verifier keeps longer it can fetch again). */
static long
cache_max_age(const char *cc)
{
	const char *p;
	long v = -1;

	if (cc == NULL)
		return -1;
	if (strcasestr(cc, "no-store") != NULL || strcasestr(cc, "no-cache") != NULL)
		return 0;
	if ((p = strcasestr(cc, "max-age=")) != NULL) {
		p += 8;
		if (*p < '0' || *p > '9')
			return -1;
		for (v = 0; *p >= '0' && *p <= '9' && v <= FETCH_MAX_AGE_CAP_S; p++)
			v = v * 10 + (*p - '0');
		if (v > FETCH_MAX_AGE_CAP_S)
			v = FETCH_MAX_AGE_CAP_S;
	}
	return v;
}

static void
fetch_done_cb(struct evhttp_request *req, void *arg)
{
	struct fetch_ctx *ctx = arg;
	struct evbuffer *in;
	const char *ctype;
	size_t n;

	ctx->done = 1;
	event_base_loopbreak(ctx->base);
	if (req == NULL || evhttp_request_get_response_code(req) == 0) {
		if (ctx->err == 0) {
			ctx->err = VEP_ERR_IO;
			snprintf(ctx->why, ctx->whylen, "no response (connection or TLS failure)");
		}
		return;
	}
	ctx->status = evhttp_request_get_response_code(req);
	if (ctx->status >= 300 && ctx->status < 400) {
		ctx->err = VEP_ERR_INVALID;
		snprintf(ctx->why, ctx->whylen,
		    "HTTP %d redirect (not followed: verifiers refuse redirects)", ctx->status);
		return;
	}
	if (ctx->status != 200) {
		ctx->err = VEP_ERR_INVALID;
		snprintf(ctx->why, ctx->whylen, "HTTP status %d", ctx->status);
		return;
	}
	ctype = evhttp_find_header(evhttp_request_get_input_headers(req), "Content-Type");
	if (ctype == NULL || strncasecmp(ctype, "application/json", 16) != 0) {
		ctx->err = VEP_ERR_INVALID;
		snprintf(ctx->why, ctx->whylen, "Content-Type is not application/json");
		return;
	}
	ctx->max_age = cache_max_age(evhttp_find_header(evhttp_request_get_input_headers(req),
	    "Cache-Control"));
	in = evhttp_request_get_input_buffer(req);
	n = evbuffer_get_length(in);
	if (n > ctx->max_body) {
		ctx->err = VEP_ERR_TOOBIG;
		snprintf(ctx->why, ctx->whylen, "response too large");
		return;
	}
	if ((ctx->body = malloc(n + 1)) == NULL) {
		ctx->err = VEP_ERR_NOMEM;
		snprintf(ctx->why, ctx->whylen, "out of memory");
		return;
	}
	if (evbuffer_remove(in, ctx->body, n) != (int)n) {
		ctx->err = VEP_ERR_IO;
		snprintf(ctx->why, ctx->whylen, "read error");
		return;
	}
	ctx->body[n] = '\0';
	ctx->len = n;
}

/* A TLS client for host: system or given CAs, peer and name verified. */
static SSL *
fetch_ssl_new(const char *host, const char *cafile, SSL_CTX **ctx_out)
{
	SSL_CTX *sctx;
	SSL *ssl = NULL;
	int ok;

	*ctx_out = NULL;
	if ((sctx = SSL_CTX_new(TLS_client_method())) == NULL)
		return NULL;
	SSL_CTX_set_min_proto_version(sctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(sctx, SSL_VERIFY_PEER, NULL);
	ok = cafile != NULL ? SSL_CTX_load_verify_locations(sctx, cafile, NULL)
	    : SSL_CTX_set_default_verify_paths(sctx);
	if (ok != 1 || (ssl = SSL_new(sctx)) == NULL)
		goto fail;
	/* An IP literal is checked against the IP SANs, a name against DNS. */
	if (X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) != 1) {
		if (SSL_set_tlsext_host_name(ssl, host) != 1 || SSL_set1_host(ssl, host) != 1)
			goto fail;
	}
	*ctx_out = sctx;
	return ssl;
fail:
	SSL_free(ssl);
	SSL_CTX_free(sctx);
	return NULL;
}

int
fetch_get(const char *url, const struct fetch_opts *o, char **body, size_t *len,
    long *max_age_s, char *why, size_t whylen)
{
	struct fetch_ctx ctx;
	struct evhttp_uri *uri = NULL;
	struct evhttp_connection *conn = NULL;
	struct evhttp_request *req = NULL;
	struct evkeyvalq *hdrs;
	SSL_CTX *sctx = NULL;
	SSL *ssl = NULL;
	const char *scheme, *host, *path, *query;
	char target[FETCH_MAX_TARGET], hosthdr[300];
	struct timeval guard;
	int port, https, n, r;

	*body = NULL;
	*len = 0;
	if (max_age_s != NULL)
		*max_age_s = -1;
	if (whylen > 0)
		why[0] = '\0';
	memset(&ctx, 0, sizeof ctx);
	ctx.why = why;
	ctx.whylen = whylen;
	ctx.max_age = -1;
	ctx.max_body = o->max_body > 0 && o->max_body < FETCH_MAX_BODY_BYTES ? o->max_body
	    : FETCH_MAX_BODY_BYTES;
	if ((uri = evhttp_uri_parse_with_flags(url, 0)) == NULL ||
	    (scheme = evhttp_uri_get_scheme(uri)) == NULL ||
	    (host = evhttp_uri_get_host(uri)) == NULL || host[0] == '\0') {
		snprintf(why, whylen, "not an absolute http(s) URL");
		r = VEP_ERR_ARG;
		goto out;
	}
	if (strcasecmp(scheme, "https") == 0)
		https = 1;
	else if (strcasecmp(scheme, "http") == 0)
		https = 0;
	else {
		snprintf(why, whylen, "scheme must be http or https");
		r = VEP_ERR_ARG;
		goto out;
	}
	port = evhttp_uri_get_port(uri);
	if (port < 0)
		port = https ? 443 : 80;
	path = evhttp_uri_get_path(uri);
	query = evhttp_uri_get_query(uri);
	n = snprintf(target, sizeof target, "%s%s%s",
	    path != NULL && path[0] != '\0' ? path : "/",
	    query != NULL ? "?" : "", query != NULL ? query : "");
	if (n < 0 || (size_t)n >= sizeof target) {
		snprintf(why, whylen, "URL too long");
		r = VEP_ERR_ARG;
		goto out;
	}
	if (evhttp_uri_get_port(uri) >= 0)
		n = snprintf(hosthdr, sizeof hosthdr, "%s:%d", host, port);
	else
		n = snprintf(hosthdr, sizeof hosthdr, "%s", host);
	if (n < 0 || (size_t)n >= sizeof hosthdr) {
		snprintf(why, whylen, "host name too long");
		r = VEP_ERR_ARG;
		goto out;
	}
	if ((ctx.base = event_base_new()) == NULL) {
		r = VEP_ERR_NOMEM;
		goto out;
	}
	if (https) {
		if ((ssl = fetch_ssl_new(host, o->cafile, &sctx)) == NULL) {
			snprintf(why, whylen, "TLS setup failed (CA file?)");
			r = VEP_ERR_IO;
			goto out;
		}
		ctx.bev = bufferevent_openssl_socket_new(ctx.base, -1, ssl,
		    BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE);
		if (ctx.bev == NULL) {
			r = VEP_ERR_NOMEM;
			goto out;
		}
		ssl = NULL; /* owned by the bufferevent now */
		bufferevent_openssl_set_allow_dirty_shutdown(ctx.bev, 1);
	} else if ((ctx.bev = bufferevent_socket_new(ctx.base, -1,
	    BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		r = VEP_ERR_NOMEM;
		goto out;
	}
	/* The connection frees the bufferevent. A NULL dns base resolves
	 * with getaddrinfo, which is fine for a one-shot tool. */
	conn = evhttp_connection_base_bufferevent_new(ctx.base, NULL, ctx.bev,
	    o->connect_host != NULL ? o->connect_host : host,
	    (unsigned short)(o->connect_port > 0 ? o->connect_port : port));
	if (conn == NULL) {
		bufferevent_free(ctx.bev);
		ctx.bev = NULL;
		r = VEP_ERR_NOMEM;
		goto out;
	}
	evhttp_connection_set_timeout(conn, o->timeout_s);
	evhttp_connection_set_retries(conn, 0);
	evhttp_connection_set_max_body_size(conn, (ev_ssize_t)ctx.max_body);
	evhttp_connection_set_max_headers_size(conn, FETCH_MAX_HEADER_BYTES);
	if ((req = evhttp_request_new(fetch_done_cb, &ctx)) == NULL) {
		r = VEP_ERR_NOMEM;
		goto out;
	}
	evhttp_request_set_error_cb(req, fetch_error_cb);
	hdrs = evhttp_request_get_output_headers(req);
	evhttp_add_header(hdrs, "Host", hosthdr);
	evhttp_add_header(hdrs, "Accept", "application/json");
	evhttp_add_header(hdrs, "User-Agent",
	    o->user_agent != NULL ? o->user_agent : "vep-keytool");
	evhttp_add_header(hdrs, "Connection", "close");
	if (evhttp_make_request(conn, req, EVHTTP_REQ_GET, target) != 0) {
		/* evhttp freed the request on failure. */
		snprintf(why, whylen, "cannot start the request");
		r = VEP_ERR_IO;
		goto out;
	}
	/* Over evhttp's per-operation timeout: the whole fetch (connect, TLS,
	 * headers, body) ends within total_s, however slowly the bytes come. */
	guard.tv_sec = o->total_s > 0 ? o->total_s : o->timeout_s + 1;
	guard.tv_usec = 0;
	event_base_loopexit(ctx.base, &guard);
	event_base_dispatch(ctx.base);
	if (!ctx.done) {
		snprintf(why, whylen, "timed out");
		r = VEP_ERR_IO;
		goto out;
	}
	if (ctx.err != 0) {
		r = ctx.err;
		goto out;
	}
	*body = ctx.body;
	*len = ctx.len;
	if (max_age_s != NULL)
		*max_age_s = ctx.max_age;
	ctx.body = NULL;
	r = 0;
out:
	free(ctx.body);
	if (conn != NULL)
		evhttp_connection_free(conn);
	SSL_free(ssl);
	SSL_CTX_free(sctx);
	if (ctx.base != NULL)
		event_base_free(ctx.base);
	if (uri != NULL)
		evhttp_uri_free(uri);
	return r;
}
