/*
 * edge/head.h - the parts of a request whose bytes the raw scanner
 * (req_scan_*, edge/req.h) has already accepted: the head split into
 * method, target, version and header fields, where the body ends, and a
 * chunked body decoded.
 *
 * Promises: nothing here judges framing; the scanner is the one check. So
 * these functions assume well-formed input (one request line, CRLF line
 * ends, "name:value" fields, at most one Content-Length of plain digits,
 * Transfer-Encoding only "chunked", chunk sizes of hex digits without
 * extensions, no trailer fields) and only never read out of bounds when it
 * is not. A head is one allocation holding its own copy of the bytes.
 */
#ifndef AUTHORITY_EDGE_HEAD_H
#define AUTHORITY_EDGE_HEAD_H

#include <stddef.h>

struct head_field {
	const char *name;   /* as sent (compare case-insensitively) */
	const char *value;  /* without leading or trailing spaces and tabs */
};

struct head {
	const char *method;
	const char *target;
	int minor;                 /* HTTP/1.<minor>: 0 or 1 */
	int chunked;               /* Transfer-Encoding: chunked */
	int expect_continue;       /* HTTP/1.1 with Expect: 100-continue */
	unsigned long long length; /* Content-Length, 0 when absent */
	size_t nfields;
	struct head_field *fields; /* in request order */
};

/* Splits the len bytes at p (a whole head, request line to the empty line
 * included) into *out (new; free with head_free). Returns 0,
 * VEP_ERR_INVALID (not a request line) or VEP_ERR_NOMEM. */
int head_parse(const char *p, size_t len, struct head **out);

/* NULL-safe. */
void head_free(struct head *h);

/* The first value of the field called name (any case), or NULL. */
const char *head_find(const struct head *h, const char *name);

/* 1 when the connection stays open after the answer to h (and an answer
 * whose own Connection field is not "close"): HTTP/1.1 unless
 * "Connection: close", HTTP/1.0 only with "Connection: keep-alive". Only
 * the first Connection field counts (as libevent 2.1.12 read it). */
int head_keep_alive(const struct head *h);

/* Bytes of the chunked body at the start of p (len bytes available, last
 * chunk and empty trailer included), or 0 while it is not all there. */
size_t head_chunked_length(const unsigned char *p, size_t len);

/* Decodes the whole chunked body of n bytes at p (head_chunked_length's
 * count) into out, which has room for n bytes. Returns the data's length. */
size_t head_dechunk(const unsigned char *p, size_t n, unsigned char *out);

#endif
