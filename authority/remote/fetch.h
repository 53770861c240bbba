/*
 * remote/fetch.h - one bounded HTTP(S) GET, the way a BrowserID verifier
 * fetches a support document: no redirects, 200 only, application/json
 * only, a body cap, a timeout per step and one for the whole. https
 * verifies the certificate chain and the host name. Blocking: it runs its
 * own event base to completion, so callers run it in a thread of their own
 * (vep-keytool's main thread; the authority's remote verifier threads,
 * remote/remote.h). Used by both.
 */
#ifndef VEP_REMOTE_FETCH_H
#define VEP_REMOTE_FETCH_H

#include <stddef.h>

/* Largest response body accepted (bytes) and largest header block. */
#define FETCH_MAX_BODY_BYTES (64 * 1024)
#define FETCH_MAX_HEADER_BYTES (16 * 1024)

struct fetch_opts {
	const char *connect_host;  /* NULL: the URL's host (an address to pin a
	                            * checked resolution; TLS still checks the
	                            * URL's host name) */
	int connect_port;          /* 0: the URL's port */
	const char *cafile;        /* NULL: the system's trust store */
	int timeout_s;             /* > 0: connecting, and each read or write */
	int total_s;               /* the whole fetch; 0: timeout_s + 1 */
	size_t max_body;           /* 0: FETCH_MAX_BODY_BYTES (and never more) */
	const char *user_agent;    /* NULL: "vep-keytool" */
};

/* GETs url. On success *body is new NUL-terminated text (free()) of *len
 * bytes, and *max_age_s (may be NULL) the response's Cache-Control max-age
 * in seconds: -1 when it has none, 0 for no-store or no-cache. Returns 0;
 * VEP_ERR_IO for a transport/TLS/timeout failure; VEP_ERR_INVALID for a
 * non-200 status, a redirect or another content type; VEP_ERR_TOOBIG over
 * the body cap; VEP_ERR_ARG for a bad URL. A short reason (no body
 * content) is written to why. */
int fetch_get(const char *url, const struct fetch_opts *o, char **body, size_t *len,
    long *max_age_s, char *why, size_t whylen);

#endif
