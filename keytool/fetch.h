/*
 * fetch.h - one bounded HTTP(S) GET, the way a BrowserID verifier fetches a
 * support document: no redirects, 200 only, application/json only, a body
 * cap and a timeout. https verifies the certificate chain and the host name.
 */
#ifndef VEP_KT_FETCH_H
#define VEP_KT_FETCH_H

#include <stddef.h>

/* Largest response body accepted (bytes) and largest header block. */
#define KT_FETCH_MAX_BODY_BYTES (64 * 1024)
#define KT_FETCH_MAX_HEADER_BYTES (16 * 1024)

struct kt_fetch_opts {
	const char *connect_host;  /* NULL: the URL's host */
	int connect_port;          /* 0: the URL's port */
	const char *cafile;        /* NULL: the system's trust store */
	int timeout_s;             /* > 0 */
};

/* GETs url. On success *body is new NUL-terminated text (free()) of *len
 * bytes. Returns 0; VEP_ERR_IO for a transport/TLS/timeout failure;
 * VEP_ERR_INVALID for a non-200 status, a redirect or another content
 * type; VEP_ERR_TOOBIG over the body cap; VEP_ERR_ARG for a bad URL. A
 * short reason (no body content) is written to why. */
int kt_fetch(const char *url, const struct kt_fetch_opts *o, char **body,
    size_t *len, char *why, size_t whylen);

#endif
