/*
 * edge/etag.h - strong entity tags for response bodies and If-None-Match.
 *
 * Owns the tag format ("\"" + 32 hex digits of SHA-256(body) + "\"") and the
 * header matching rule. Never sees anything secret: only public documents
 * get tags.
 */
#ifndef AUTHORITY_EDGE_ETAG_H
#define AUTHORITY_EDGE_ETAG_H

#include <stddef.h>

/* Quotes + 32 hex digits + NUL. */
#define ETAG_BUFSZ 35

/* Writes the strong tag of len bytes at body to out. Returns 0 or
 * VEP_ERR_CRYPTO. */
int etag_compute(const void *body, size_t len, char out[ETAG_BUFSZ]);

/* 1 when an If-None-Match header value (NULL when absent) matches etag under
 * RFC 9110's weak comparison (which If-None-Match uses): "*", or any listed
 * tag equal to etag with or without a W/ prefix. A malformed list matches
 * nothing, so a garbled header costs a full response, never a wrong 304. */
int etag_none_match(const char *header, const char *etag);

#endif
