/* test_authority_req.c - authority/edge/req.c: request-target decoding, the
 * error table, the raw request scanner, the raw answers and the exact bytes
 * of req_reply's answers (no network: struct req is filled by hand or made
 * by req_new on a stand-in loop, the scanner fed bytes). */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "err.h"
#include "harness.h"
#include "core/config.h"
#include "core/domain.h"
#include "core/fixed_limits.h"
#include "core/log.h"
#include "edge/head.h"
#include "edge/req.h"
#include "server/loop.h"
#include "server/shared.h"

static void
clear(struct req *r)
{
	size_t i;

	for (i = 0; i < r->nparams; i++) {
		free(r->params[i].name);
		free(r->params[i].value);
	}
	free(r->params);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

static int
parse(struct req *r, const char *target)
{
	clear(r);
	r->target = target;
	return req_parse_target(r);
}

static void
test_pct_decode(void)
{
	char *out = NULL;

	ASSERT_EQ(req_pct_decode("a%41%7a+b", 9, &out), 0);
	ASSERT_STREQ(out, "aAz+b");
	free(out);
	ASSERT_EQ(req_pct_decode("%", 1, &out), VEP_ERR_INVALID);
	ASSERT_TRUE(out == NULL);
	ASSERT_EQ(req_pct_decode("%4", 2, &out), VEP_ERR_INVALID);
	ASSERT_EQ(req_pct_decode("%4g", 3, &out), VEP_ERR_INVALID);
	ASSERT_EQ(req_pct_decode("%00", 3, &out), VEP_ERR_INVALID);
	/* Only len bytes are read: the '%' after them does not count. */
	ASSERT_EQ(req_pct_decode("ab%", 2, &out), 0);
	ASSERT_STREQ(out, "ab");
	free(out);
}

static void
test_targets(void)
{
	struct req r;
	char long_target[LIMIT_URI_BYTES + 2];

	memset(&r, 0, sizeof(r));
	ASSERT_EQ(parse(&r, "/pk"), 0);
	ASSERT_STREQ(r.path, "/pk");
	ASSERT_EQ(r.nparams, 0);
	ASSERT_EQ(parse(&r, "/a%62c?x=1&&y&z=%41+b&x=2"), 0);
	ASSERT_STREQ(r.path, "/abc");
	ASSERT_EQ(r.nparams, 4);
	ASSERT_STREQ(req_param(&r, "x"), "1");
	ASSERT_EQ(req_param_count(&r, "x"), 2);
	ASSERT_STREQ(req_param(&r, "y"), "");
	ASSERT_STREQ(req_param(&r, "z"), "A+b");
	ASSERT_TRUE(req_param(&r, "w") == NULL);
	ASSERT_EQ(parse(&r, "pk"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "http://x/pk"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "/a%2Fb"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "/a%2fb"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "/pk?a=%2F"), 0); /* fine in a query */
	ASSERT_EQ(parse(&r, "/pk?a=%zz"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "/pk?a%=1"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "/pk#frag"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "/p k"), REQ_ERR_BAD_TARGET);
	memset(long_target, 'a', sizeof(long_target));
	long_target[0] = '/';
	long_target[LIMIT_URI_BYTES] = '\0';
	ASSERT_EQ(parse(&r, long_target), 0);
	long_target[LIMIT_URI_BYTES] = 'a';
	long_target[LIMIT_URI_BYTES + 1] = '\0';
	ASSERT_EQ(parse(&r, long_target), REQ_ERR_URI_TOO_LONG);
	clear(&r);
}

static void
test_param_limit(void)
{
	char target[LIMIT_QUERY_PARAMS * 8 + 16];
	struct req r;
	size_t o;
	int i;

	memset(&r, 0, sizeof(r));
	o = (size_t)snprintf(target, sizeof(target), "/?");
	for (i = 0; i < LIMIT_QUERY_PARAMS; i++)
		o += (size_t)snprintf(target + o, sizeof(target) - o, "a=%d&", i % 10);
	ASSERT_EQ(parse(&r, target), 0);
	ASSERT_EQ(r.nparams, LIMIT_QUERY_PARAMS);
	snprintf(target + o, sizeof(target) - o, "b");
	ASSERT_EQ(parse(&r, target), REQ_ERR_BAD_TARGET);
	clear(&r);
}

static void
test_error_table(void)
{
	ASSERT_EQ(req_error_status(REQ_ERR_NOT_FOUND), 404);
	ASSERT_EQ(req_error_status(REQ_ERR_URI_TOO_LONG), 414);
	ASSERT_EQ(req_error_status(-999), 500); /* no such code */
	ASSERT_EQ(req_error_from_code(VEP_ERR_INVALID), REQ_ERR_BAD_REQUEST);
	ASSERT_EQ(req_error_from_code(VEP_ERR_TOOBIG), REQ_ERR_TOO_LARGE);
	ASSERT_EQ(req_error_from_code(VEP_ERR_IO), REQ_ERR_UNAVAILABLE);
	ASSERT_EQ(req_error_from_code(VEP_ERR_CRYPTO), REQ_ERR_INTERNAL);
	ASSERT_EQ(req_error_from_code(VEP_ERR_NOMEM), REQ_ERR_INTERNAL);
}

/* Every code of the vocabulary, and the status and public message the
 * handlers answered it with before they all went through the one table. */
static const struct {
	int err;
	int status;
	const char *message;
} answers[] = {
	{ REQ_ERR_BAD_REQUEST, 400, "bad request" },
	{ REQ_ERR_BAD_TARGET, 400, "malformed request target" },
	{ REQ_ERR_BAD_DOMAIN, 400, "invalid domain parameter" },
	{ REQ_ERR_BAD_HOST, 400, "invalid Host header" },
	{ REQ_ERR_BAD_RESOURCE, 400, "missing or malformed resource" },
	{ REQ_ERR_BAD_JSON, 400, "malformed JSON body" },
	{ REQ_ERR_UNAUTHORIZED, 401, "not signed in" },
	{ REQ_ERR_FORBIDDEN, 403, "forbidden" },
	{ REQ_ERR_CSRF, 403, "missing or wrong X-CSRF-Token header" },
	{ REQ_ERR_ORIGIN, 403, "cross-origin request refused" },
	{ REQ_ERR_NOT_FOUND, 404, "not found" },
	{ REQ_ERR_UNKNOWN_DOMAIN, 404, "domain not served here" },
	{ REQ_ERR_METHOD, 405, "method not allowed" },
	{ REQ_ERR_EXPECTATION, 417, "expectation failed" },
	{ REQ_ERR_TOO_LARGE, 413, "request too large" },
	{ REQ_ERR_URI_TOO_LONG, 414, "request target too long" },
	{ REQ_ERR_MEDIA_TYPE, 415, "unsupported media type" },
	{ REQ_ERR_MISDIRECTED, 421, "host not served here" },
	{ REQ_ERR_TOO_MANY, 429, "too many requests" },
	{ REQ_ERR_INTERNAL, 500, "internal error" },
	{ REQ_ERR_NOT_IMPLEMENTED, 501, "method not implemented" },
	{ REQ_ERR_UNAVAILABLE, 503, "service unavailable" },
	/* libvep's (the mapping req_error_from_vep had, and the handlers'). */
	{ VEP_ERR_NOMEM, 500, "internal error" },
	{ VEP_ERR_INVALID, 400, "bad request" },
	{ VEP_ERR_TOOBIG, 413, "request too large" },
	{ VEP_ERR_ALG, 400, "bad request" },
	{ VEP_ERR_KEYSIZE, 400, "bad request" },
	{ VEP_ERR_KEY, 400, "bad request" },
	{ VEP_ERR_BADSIG, 500, "internal error" },
	{ VEP_ERR_EXPIRED, 500, "internal error" },
	{ VEP_ERR_NOTYET, 500, "internal error" },
	{ VEP_ERR_AUDIENCE, 500, "internal error" },
	{ VEP_ERR_ISSUER, 500, "internal error" },
	{ VEP_ERR_EMAIL, 400, "bad request" },
	{ VEP_ERR_CHAIN, 500, "internal error" },
	{ VEP_ERR_DISABLED, 500, "internal error" },
	{ VEP_ERR_IO, 503, "service unavailable" },
	{ VEP_ERR_PERM, 500, "internal error" },
	{ VEP_ERR_EXISTS, 500, "internal error" },
	{ VEP_ERR_CRYPTO, 500, "internal error" },
	{ VEP_ERR_NOKEY, 500, "internal error" },
	{ VEP_ERR_ARG, 500, "internal error" },
	{ VEP_ERR_TIME, 400, "bad request" },
	{ VEP_ERR_DELEGATION, 500, "internal error" },
	/* The server's: api/session.c's and api/certificate.c's answers. */
	{ SRV_ERR_CANCELED, 503, "service unavailable" },
	{ SRV_ERR_NOT_SERVED, 400, "this authority does not serve that address's domain" },
	{ SRV_ERR_THROTTLED, 429, "too many failed sign-ins; try again later" },
	{ SRV_ERR_DENIED, 401, "wrong address or password" },
	{ SRV_ERR_UNDECIDED, 503, "service unavailable" },
	{ SRV_ERR_UNRECORDED, 503, "service unavailable" },
	{ SRV_ERR_BUSY, 503, "service unavailable" },
	/* The store's: api/router.c's session check. */
	{ DB_ERR_NOTFOUND, 500, "internal error" },
	{ DB_ERR_EXPIRED, 500, "internal error" },
	{ DB_ERR_BUSY, 503, "service unavailable" },
	{ DB_ERR_FULL, 503, "service unavailable" },
	{ DB_ERR_NEWER, 500, "internal error" },
	{ DB_ERR_SCHEMA, 500, "internal error" },
	{ DB_ERR_CORRUPT, 500, "internal error" },
	{ DB_ERR_INTERNAL, 500, "internal error" },
	/* No code at all: never an answer that looks like success. */
	{ 0, 500, "internal error" },
	{ 1, 500, "internal error" },
	{ -23, 500, "internal error" },
	{ -299, 500, "internal error" },
	{ -322, 500, "internal error" },
	{ -100000, 500, "internal error" },
};

static void
test_every_code(void)
{
	char buf[REQ_RAW_BUFSZ], want[REQ_RAW_BUFSZ];
	size_t i;
	int e;

	for (i = 0; i < sizeof(answers) / sizeof(answers[0]); i++) {
		e = answers[i].err;
		ASSERT_EQ(req_error_status(e), answers[i].status);
		ASSERT_STREQ(req_error_message(e), answers[i].message);
		/* The row it is answered with says the same status. */
		ASSERT_TRUE(req_error_from_code(e) <= REQ_ERR_BAD_REQUEST &&
		    req_error_from_code(e) >= REQ_ERR_UNAVAILABLE);
		ASSERT_EQ(req_error_status(req_error_from_code(e)), answers[i].status);
		/* edge/conn.c's answers go through the same table. */
		ASSERT_TRUE(req_raw_reply(buf, sizeof(buf), e, NULL, NULL, NULL) > 0);
		snprintf(want, sizeof(want), "HTTP/1.1 %d ", answers[i].status);
		ASSERT_TRUE(strncmp(buf, want, strlen(want)) == 0);
		snprintf(want, sizeof(want),
		    "\r\n\r\n{\"error\":\"%s\",\"status\":\"failure\",\"reason\":\"%s\"}",
		    answers[i].message, answers[i].message);
		ASSERT_TRUE(strstr(buf, want) != NULL);
	}
	for (e = REQ_ERR_UNAVAILABLE; e <= REQ_ERR_BAD_REQUEST; e++)
		ASSERT_EQ(req_error_from_code(e), e);
	/* A 5xx never carries the caller's words. */
	ASSERT_TRUE(req_raw_reply(buf, sizeof(buf), DB_ERR_CORRUPT, "db.sqlite is damaged", NULL,
	    NULL) > 0);
	ASSERT_TRUE(strstr(buf, "{\"error\":\"internal error\",\"status\":\"failure\","
	    "\"reason\":\"internal error\"}") != NULL);
	ASSERT_TRUE(strstr(buf, "sqlite") == NULL);
}

static void
test_check_fields(void)
{
	static const char *const known[] = { "pubkey", "duration", NULL };
	char why[REQ_WHY_BUFSZ], name[80], want[REQ_WHY_BUFSZ];
	struct req r;

	memset(&r, 0, sizeof(r));
	r.body = json_pack("{s:s, s:i}", "pubkey", "k", "duration", 600);
	ASSERT_TRUE(r.body != NULL);
	ASSERT_EQ(req_check_fields(&r, known, why), 0);
	ASSERT_STREQ(why, "");
	ASSERT_EQ(json_object_set_new(r.body, "durtion", json_integer(600)), 0);
	ASSERT_EQ(req_check_fields(&r, known, why), REQ_ERR_BAD_REQUEST);
	ASSERT_STREQ(why, "unknown field \"durtion\"");
	json_decref(r.body);
	/* The client's name is escaped and cut at 64 bytes: it still fits. */
	memset(name, '"', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	r.body = json_pack("{s:i}", name, 1);
	ASSERT_TRUE(r.body != NULL);
	ASSERT_EQ(req_check_fields(&r, known, why), REQ_ERR_BAD_REQUEST);
	snprintf(want, sizeof(want), "unknown field \"");
	while (strlen(want) < 15 + 64 * 4)
		strcat(want, "\\x22");
	strcat(want, "\"");
	ASSERT_STREQ(why, want);
	json_decref(r.body);
}


/* Scans text in one piece and, again, one byte at a time: both must agree
 * (else the result is SCAN_DISAGREE, which no test expects). */
#define SCAN_DISAGREE 1

static int
scan(const char *text, struct req_scan *out)
{
	struct req_scan s1, s2;
	size_t n = strlen(text), i;
	int e1, e2 = 0;

	req_scan_init(&s1);
	req_scan_init(&s2);
	e1 = req_scan_feed(&s1, (const unsigned char *)text, n);
	for (i = 0; i < n; i++)
		e2 = req_scan_feed(&s2, (const unsigned char *)text + i, 1);
	if (out != NULL)
		*out = s1;
	if (e1 != e2 || s1.requests != s2.requests || s1.start != s2.start)
		return SCAN_DISAGREE;
	return e1;
}

#define GET "GET /pk HTTP/1.1\r\nHost: example.test\r\n"
#define POST "POST /pk HTTP/1.1\r\nHost: example.test\r\n"

static void
test_scan_good(void)
{
	struct req_scan s;

	ASSERT_EQ(scan(GET "\r\n", &s), 0);
	ASSERT_EQ(s.requests, 1);
	ASSERT_EQ(s.heads, 1);
	ASSERT_EQ(scan(GET "\r\n" GET "X-A: a  b\t c\r\n\r\n", &s), 0);
	ASSERT_EQ(s.requests, 2);
	ASSERT_EQ(scan("GET / HTTP/1.0\r\n\r\n", NULL), 0);
	ASSERT_EQ(scan(POST "Content-Length:\t 2 \r\n\r\n{}" GET "\r\n", &s), 0);
	ASSERT_EQ(s.requests, 2);
	ASSERT_EQ(scan(POST "Transfer-Encoding: Chunked\r\n\r\n2\r\n{}\r\n000A\r\n0123456789\r\n"
	    "0\r\n\r\n" GET "\r\n", &s), 0);
	ASSERT_EQ(s.requests, 2);
	/* A body's bytes are not read as a head, whatever they look like. */
	ASSERT_EQ(scan(POST "Content-Length: 4\r\n\r\n\r\n \x01" GET "\r\n", &s), 0);
	ASSERT_EQ(s.requests, 2);
	ASSERT_EQ(scan(POST "Expect: 100-Continue\r\nContent-Length: 0\r\n\r\n", NULL),
	    0);
	ASSERT_EQ(scan("HEAD /pk HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", NULL),
	    0);
	/* obs-text is allowed in values. */
	ASSERT_EQ(scan(GET "X-A: caf\xc3\xa9\r\n\r\n", NULL), 0);
}

static void
test_scan_refused(void)
{
	static const struct {
		const char *text;
		int e;
	} bad[] = {
		{ "GET /pk HTTP/1.1\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ GET "Host: example.test\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ GET "X-A: a\r\n b\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ GET "X-A: a\r\n\tb\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ POST "Content-Length: +2\r\n\r\n{}", REQ_ERR_BAD_REQUEST },
		{ POST "Content-Length: 0x2\r\n\r\n{}", REQ_ERR_BAD_REQUEST },
		{ POST "Content-Length: 2 2\r\n\r\n{}", REQ_ERR_BAD_REQUEST },
		{ POST "Content-Length: \r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ POST "Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}", REQ_ERR_BAD_REQUEST },
		{ POST "Content-Length: 123456789012345678901234567890123\r\n\r\n",
		  REQ_ERR_BAD_REQUEST },
		{ POST "Content-Length: 99999999999999999999\r\n\r\n", REQ_ERR_TOO_LARGE },
		{ POST "Transfer-Encoding: chunked\r\n\r\n0x2\r\n{}\r\n0\r\n\r\n",
		  REQ_ERR_BAD_REQUEST },
		{ POST "Transfer-Encoding: chunked\r\n\r\n2 \r\n{}\r\n0\r\n\r\n",
		  REQ_ERR_BAD_REQUEST },
		{ POST "Transfer-Encoding: chunked\r\n\r\n2;a\r\n{}\r\n0\r\n\r\n",
		  REQ_ERR_BAD_REQUEST },
		{ POST "Transfer-Encoding: chunked\r\n\r\n000000002\r\n{}\r\n0\r\n\r\n",
		  REQ_ERR_BAD_REQUEST },
		{ POST "Transfer-Encoding: chunked\r\n\r\n2\r\n{}0\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ POST "Transfer-Encoding: chunked\r\n\r\n0\r\nX: y\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ POST "Transfer-Encoding: chunked\r\n\r\n4001\r\n", REQ_ERR_TOO_LARGE },
		{ POST "Transfer-Encoding: gzip, chunked\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ POST "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
		  REQ_ERR_BAD_REQUEST },
		{ POST "Transfer-Encoding: chunked\r\nContent-Length: 0\r\n\r\n",
		  REQ_ERR_BAD_REQUEST },
		{ "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ "HEAD / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n\r\nG", REQ_ERR_BAD_REQUEST },
		{ "TRACE / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n",
		  REQ_ERR_BAD_REQUEST },
		{ GET "X-A: a\rb\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ GET "X-A: a\x7f\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ "GET /pk HTTP/1.1\nHost: x\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ GET "X-A: b\n\r\n", REQ_ERR_BAD_REQUEST },
		{ GET "X A: b\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ GET "X-A : b\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ GET "X-A\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ GET "X(A): b\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ "GET /pk HTTP/1.2\r\nHost: x\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ "GET /pk HTTP/1.1 \r\nHost: x\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ "GET  /pk HTTP/1.1\r\nHost: x\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ "\r\nGET /pk HTTP/1.1\r\nHost: x\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ "GET /p\x01k HTTP/1.1\r\nHost: x\r\n\r\n", REQ_ERR_BAD_REQUEST },
		{ "BREW /pot HTTP/1.1\r\nHost: x\r\n\r\n", REQ_ERR_NOT_IMPLEMENTED },
		{ "get /pk HTTP/1.1\r\nHost: x\r\n\r\n", REQ_ERR_NOT_IMPLEMENTED },
		{ POST "Expect: tea\r\n\r\n", REQ_ERR_EXPECTATION },
		{ "CONNECT example.test:443 HTTP/1.1\r\nHost: x\r\n\r\n",
		  REQ_ERR_NOT_IMPLEMENTED },
		{ "GET * HTTP/1.1\r\nHost: x\r\n\r\n", REQ_ERR_BAD_TARGET },
		{ "GET http://x/pk HTTP/1.1\r\nHost: x\r\n\r\n", REQ_ERR_BAD_TARGET },
		{ "GET //[::1/pk HTTP/1.1\r\nHost: x\r\n\r\n", REQ_ERR_BAD_TARGET },
	};
	static const char nul[] = GET "X-A: a\0b\r\n\r\n";
	struct req_scan s;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(scan(bad[i].text, &s), bad[i].e);
		ASSERT_TRUE(s.why != NULL);
		/* Refused for good: more bytes change nothing. */
		ASSERT_EQ(req_scan_feed(&s, (const unsigned char *)GET "\r\n", 5), bad[i].e);
	}
	/* NUL in a value (libevent would cut the value there). */
	req_scan_init(&s);
	ASSERT_EQ(req_scan_feed(&s, (const unsigned char *)nul, sizeof(nul) - 1),
	    REQ_ERR_BAD_REQUEST);
}

static void
test_scan_where(void)
{
	struct req_scan s;
	char head[LIMIT_HEADER_BYTES + 64];

	/* The refused request is the second, starting after the first. */
	ASSERT_EQ(scan(GET "\r\n" GET "X-A: a\r\n b\r\n\r\n", &s), REQ_ERR_BAD_REQUEST);
	ASSERT_EQ(s.requests, 2);
	ASSERT_EQ(s.start, strlen(GET "\r\n"));
	/* The head limit, CRLFs included. */
	memset(head, 'a', sizeof(head));
	memcpy(head, GET "X-Pad: ", strlen(GET "X-Pad: "));
	memcpy(head + LIMIT_HEADER_BYTES - 4, "\r\n\r\n", 5);
	ASSERT_EQ(scan(head, NULL), 0);
	memcpy(head + LIMIT_HEADER_BYTES - 4, "a\r\n\r\n", 6);
	ASSERT_EQ(scan(head, NULL), REQ_ERR_BAD_REQUEST);
}

/* Every byte value at every place of a value that is not kept (which the
 * scanner skips in bulk) and of one that is: refused exactly when it is a
 * control character other than tab, or DEL (a CR not followed by LF), and
 * the same whole and a byte at a time. */
/* What scan() must return for byte c at place j of a value vlen bytes long
 * under header number ni (2 is Content-Length, which takes digits only,
 * with blanks allowed at either end). */
static int
value_byte_want(size_t ni, int c, size_t j, size_t vlen)
{
	if ((c < 0x20 && c != '\t') || c == 0x7f)
		return REQ_ERR_BAD_REQUEST;
	if (ni != 2 || (c >= '0' && c <= '9'))
		return 0;
	if ((c == ' ' || c == '\t') && (j == 0 || j == vlen - 1))
		return 0;
	return REQ_ERR_BAD_REQUEST;
}

static void
test_scan_value_bytes(void)
{
	static const char *const names[] = { "X-Token", "Host", "Content-Length" };
	char text[256];
	size_t ni, j, len, vlen;
	int c, e, want;

	for (ni = 0; ni < sizeof(names) / sizeof(names[0]); ni++) {
		vlen = ni == 2 ? 3 : 40;
		len = (size_t)snprintf(text, sizeof(text), "GET /pk HTTP/1.1\r\n%s%s: ",
		    ni == 1 ? "" : "Host: x\r\n", names[ni]);
		for (j = 0; j < vlen; j++) {
			for (c = 1; c < 256; c++) {
				memset(text + len, ni == 2 ? '0' : 'v', vlen);
				text[len + j] = (char)c;
				memcpy(text + len + vlen, "\r\n\r\n", 5);
				want = value_byte_want(ni, c, j, vlen);
				e = scan(text, NULL);
				if (e != want)
					fprintf(stderr, "value byte 0x%02x at %zu of %s: "
					    "%d, want %d\n", c, j, names[ni], e, want);
				ASSERT_EQ(e, want);
			}
		}
	}
}

/* Every byte value in a header name and in the method: accepted exactly
 * when it is an RFC 9110 tchar; a name matches its field in any case. */
static void
test_scan_name_bytes(void)
{
	static const char tchars[] = "!#$%&'*+-.^_`|~";
	char text[128];
	int c, e, want, tchar;

	for (c = 1; c < 256; c++) {
		tchar = (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') ||
		    (c >= 'a' && c <= 'z') || strchr(tchars, c) != NULL;
		(void)snprintf(text, sizeof(text), GET "X%cA: b\r\n\r\n", c);
		e = scan(text, NULL);
		/* (":": the name "X", then a value "A: b".) */
		want = tchar || c == ':' ? 0 : REQ_ERR_BAD_REQUEST;
		if (e != want)
			fprintf(stderr, "name byte 0x%02x: %d, want %d\n", c, e, want);
		ASSERT_EQ(e, want);
		(void)snprintf(text, sizeof(text), "G%cET /pk HTTP/1.1\r\nHost: x\r\n\r\n", c);
		e = scan(text, NULL);
		/* A method of tchars that is none of ours ("GxET", or "G"
		 * before the space) is not implemented. */
		want = tchar || c == ' ' ? REQ_ERR_NOT_IMPLEMENTED : REQ_ERR_BAD_REQUEST;
		ASSERT_EQ(e, want);
	}
	ASSERT_EQ(scan(POST "cOnTeNt-LeNgTh: 2\r\n\r\n{}" GET "\r\n", NULL), 0);
	ASSERT_EQ(scan(POST "CONTENT-LENGTH: 2\r\nContent-length: 2\r\n\r\n{}", NULL),
	    REQ_ERR_BAD_REQUEST);
}

static void
test_raw_reply(void)
{
	char buf[REQ_RAW_BUFSZ], want[64];
	const char *body;
	size_t n;

	n = req_raw_reply(buf, sizeof(buf), REQ_ERR_UNAVAILABLE, NULL, NULL, "Retry-After: 1\r\n");
	ASSERT_TRUE(n > 0);
	ASSERT_EQ(n, strlen(buf));
	ASSERT_TRUE(strncmp(buf, "HTTP/1.1 503 Service Unavailable\r\n", 34) == 0);
	body = strstr(buf, "\r\n\r\n") + 4;
	/* Both shapes: the route, and so the one its client reads, is not
	 * known when edge/conn.c refuses. */
	ASSERT_STREQ(body, "{\"error\":\"service unavailable\",\"status\":\"failure\","
	    "\"reason\":\"service unavailable\"}");
	snprintf(want, sizeof(want), "\r\nContent-Length: %zu\r\n", strlen(body));
	ASSERT_TRUE(strstr(buf, want) != NULL);
	ASSERT_TRUE(strstr(buf, "\r\nRetry-After: 1\r\n") != NULL);
	ASSERT_TRUE(strstr(buf, "Strict-Transport-Security") == NULL);
	n = req_raw_reply(buf, sizeof(buf), REQ_ERR_BAD_REQUEST, "obsolete line folding",
	    "max-age=31536000", NULL);
	ASSERT_TRUE(n > 0);
	ASSERT_TRUE(strstr(buf, "\r\nStrict-Transport-Security: max-age=") != NULL);
	ASSERT_TRUE(strstr(buf, "{\"error\":\"obsolete line folding\",\"status\":\"failure\","
	    "\"reason\":\"obsolete line folding\"}") != NULL);
	/* A message that would need escaping falls back to the table's. */
	n = req_raw_reply(buf, sizeof(buf), REQ_ERR_BAD_REQUEST, "a \"b\"", NULL, NULL);
	ASSERT_TRUE(strstr(buf, "{\"error\":\"bad request\",\"status\":\"failure\","
	    "\"reason\":\"bad request\"}") != NULL);
	ASSERT_EQ(req_raw_reply(buf, 16, REQ_ERR_BAD_REQUEST, NULL, NULL, NULL), 0);
	ASSERT_EQ(req_error_status(REQ_ERR_MISDIRECTED), 421);
}

/* What a connection received from req_reply. */
struct sent {
	char bytes[4096];
	size_t len;
	int keep;
	int calls;
};

static void
on_sent(void *conn, struct evbuffer *reply, int keep_alive)
{
	struct sent *o = conn;
	size_t n = evbuffer_get_length(reply);

	o->calls++;
	o->keep = keep_alive;
	o->len = n < sizeof(o->bytes) - 1 ? n : sizeof(o->bytes) - 1;
	evbuffer_remove(reply, o->bytes, o->len);
	o->bytes[o->len] = '\0';
}

static void
on_abandoned(void *conn)
{
	((struct sent *)conn)->calls += 100;
}

/* A stand-in for what a loop's requests borrow: the authority's log and
 * live configuration (access log off). */
struct stage {
	struct authority a;
	struct domain_set ds;
	struct loop l;
};

static int
stage_init(struct stage *st)
{
	memset(st, 0, sizeof(*st));
	if ((st->ds.cfg = config_new()) == NULL)
		return -1;
	st->ds.cfg->access_log = CONFIG_ACCESS_LOG_OFF;
	st->ds.cfg->max_age_s = 3600;
	st->a.cfg = st->ds.cfg;
	atomic_store(&st->a.domains, &st->ds);
	log_init(&st->a.log, LOGL_ERROR, stderr);
	st->l.a = &st->a;
	return 0;
}

/* A request of the stage whose answer lands in o; NULL on failure. */
static struct req *
stage_req(struct stage *st, const char *head, const char *hsts, struct sent *o)
{
	struct req_link link = { on_sent, on_abandoned, o, "192.0.2.1", 0, hsts };
	struct head *h = NULL;

	memset(o, 0, sizeof(*o));
	if (head_parse(head, strlen(head), &h) != 0)
		return NULL;
	return req_new(&st->l, h, NULL, 0, &link);
}

/* The date every fixed answer below carries (set by the test, so the
 * bytes do not depend on the clock). */
#define FIXED_DATE "Sun, 06 Nov 1994 08:49:37 GMT"
#define COMMON "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n" \
	"Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n"

/* Sets 40 headers X-H00..X-H39 on r, then x-h03 again, and writes into
 * want the 200 answer with json's body that req_reply must then send. */
static void
many_headers(struct req *r, char *want, size_t wantlen)
{
	char name[16], value[16];
	size_t off;
	int i;

	off = (size_t)snprintf(want, wantlen, "HTTP/1.1 200 OK\r\nDate: " FIXED_DATE "\r\n");
	for (i = 0; i < 40; i++) {
		snprintf(name, sizeof(name), "X-H%02d", i);
		snprintf(value, sizeof(value), "v%d", i);
		ASSERT_EQ(req_add_header(r, name, value), 0);
		if (i != 3)
			off += (size_t)snprintf(want + off, wantlen - off, "%s: %s\r\n", name,
			    value);
	}
	ASSERT_EQ(req_add_header(r, "x-h03", "again"), 0);
	snprintf(want + off, wantlen - off, "x-h03: again\r\n"
	    "Content-Type: application/json\r\nContent-Length: 7\r\n" COMMON
	    "Cache-Control: no-store\r\n\r\n{\"a\":1}");
}

/* Answers byte for byte: the status line (HTTP version of the request,
 * code, libevent's reason phrase), the headers in order, the numbers in
 * Content-Length and max-age, Connection as each version wants it. */
static void
test_reply_bytes(void)
{
	static const char *const json = "{\"a\":1}";
	char want[2048];
	struct stage st;
	struct sent o;
	struct req *r;

	ASSERT_EQ(stage_init(&st), 0);

	/* HTTP/1.1, a plain 200 with a body. */
	ASSERT_TRUE((r = stage_req(&st, "GET /pk HTTP/1.1\r\nHost: a\r\n\r\n", NULL,
	    &o)) != NULL);
	ASSERT_EQ(req_add_header(r, "Date", FIXED_DATE), 0);
	req_reply(r, 200, "application/json", json, strlen(json), 0);
	ASSERT_EQ(o.calls, 1);
	ASSERT_EQ(o.keep, 1);
	ASSERT_STREQ(o.bytes, "HTTP/1.1 200 OK\r\n"
	    "Date: " FIXED_DATE "\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: 7\r\n"
	    COMMON
	    "Cache-Control: no-store\r\n"
	    "\r\n"
	    "{\"a\":1}");

	/* HTTP/1.0 asking for keep-alive; cacheable, public, HSTS. */
	ASSERT_TRUE((r = stage_req(&st, "GET /pk HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
	    "max-age=31536000", &o)) != NULL);
	req_reply(r, 200, "text/plain", "0123456789", 10, REQ_F_CACHE | REQ_F_CORS);
	ASSERT_EQ(o.calls, 1);
	ASSERT_EQ(o.keep, 1);
	ASSERT_STREQ(o.bytes, "HTTP/1.0 200 OK\r\n"
	    "Content-Type: text/plain\r\n"
	    "Content-Length: 10\r\n"
	    "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n"
	    "Strict-Transport-Security: max-age=31536000\r\n"
	    "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n"
	    "Cache-Control: public, max-age=3600\r\n"
	    "Access-Control-Allow-Origin: *\r\n"
	    "Connection: keep-alive\r\n"
	    "\r\n"
	    "0123456789");

	/* HTTP/1.0 without keep-alive: no Date, closed after. */
	ASSERT_TRUE((r = stage_req(&st, "GET / HTTP/1.0\r\n\r\n", NULL, &o)) != NULL);
	req_reply(r, 404, "application/json", "", 0, REQ_F_REVALIDATE);
	ASSERT_EQ(o.keep, 0);
	ASSERT_STREQ(o.bytes, "HTTP/1.0 404 Not Found\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: 0\r\n"
	    COMMON
	    "Cache-Control: no-cache\r\n"
	    "\r\n");

	/* HEAD: the length a GET would have had, no body; the client's
	 * close. The largest numbers a reply can carry. */
	st.ds.cfg->max_age_s = LONG_MAX;
	ASSERT_TRUE((r = stage_req(&st, "HEAD /x HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
	    NULL, &o)) != NULL);
	ASSERT_EQ(req_add_header(r, "Date", FIXED_DATE), 0);
	req_reply(r, 503, "text/html", NULL, SIZE_MAX, REQ_F_CACHE);
	ASSERT_EQ(o.keep, 0);
	ASSERT_EQ(SIZE_MAX, 18446744073709551615ULL);
	ASSERT_EQ(LONG_MAX, 9223372036854775807LL);
	ASSERT_STREQ(o.bytes, "HTTP/1.1 503 Service Unavailable\r\n"
	    "Date: " FIXED_DATE "\r\n"
	    "Content-Type: text/html\r\n"
	    "Content-Length: 18446744073709551615\r\n"
	    COMMON
	    "Cache-Control: public, max-age=9223372036854775807\r\n"
	    "Connection: close\r\n"
	    "\r\n");
	st.ds.cfg->max_age_s = 0;

	/* 304: neither type nor length; a handler's own header kept. */
	ASSERT_TRUE((r = stage_req(&st, "GET /pk HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"t\"\r\n"
	    "\r\n", NULL, &o)) != NULL);
	ASSERT_EQ(req_add_header(r, "Date", FIXED_DATE), 0);
	req_reply_tagged(r, "application/json", json, strlen(json), "\"t\"", REQ_F_CACHE);
	ASSERT_STREQ(o.bytes, "HTTP/1.1 304 Not Modified\r\n"
	    "Date: " FIXED_DATE "\r\n"
	    "ETag: \"t\"\r\n"
	    COMMON
	    "Cache-Control: public, max-age=0\r\n"
	    "\r\n");

	/* More headers than the first allocation holds (REQ_OUT_FIRST), one
	 * set again in another case: the second replaces the first, in its
	 * own place; all in order. */
	ASSERT_TRUE((r = stage_req(&st, "GET /pk HTTP/1.1\r\nHost: a\r\n\r\n", NULL, &o)) != NULL);
	ASSERT_EQ(req_add_header(r, "Date", FIXED_DATE), 0);
	many_headers(r, want, sizeof(want));
	req_reply(r, 200, "application/json", json, strlen(json), 0);
	ASSERT_STREQ(o.bytes, want);

	/* Statuses outside libevent's table get their class's phrase. */
	ASSERT_TRUE((r = stage_req(&st, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", NULL, &o)) != NULL);
	ASSERT_EQ(req_add_header(r, "Date", FIXED_DATE), 0);
	req_reply(r, 299, "text/plain", "x", 1, 0);
	ASSERT_TRUE(strncmp(o.bytes, "HTTP/1.1 299 Success\r\n", 22) == 0);
	ASSERT_TRUE((r = stage_req(&st, "GET / HTTP/1.1\r\nHost: a\r\n\r\n", NULL, &o)) != NULL);
	req_reply(r, 999, "text/plain", "x", 1, 0);
	ASSERT_TRUE(strncmp(o.bytes, "HTTP/1.1 999 Unknown Status Class\r\n", 35) == 0);
	config_free(st.ds.cfg);
}

/* An HTTP/1.1 answer carries the Date the clock gives, last, as an
 * IMF-fixdate. */
static void
test_reply_date(void)
{
	struct stage st;
	struct sent o;
	struct req *r;
	const char *d, *end;
	char day[4], mon[4];
	int dd, yy, hh, mm, ss;

	ASSERT_EQ(stage_init(&st), 0);
	ASSERT_TRUE((r = stage_req(&st, "GET /pk HTTP/1.1\r\nHost: a\r\n\r\n", NULL, &o)) != NULL);
	req_reply(r, 200, "text/plain", "hi", 2, 0);
	ASSERT_TRUE(strncmp(o.bytes, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
	    "Content-Length: 2\r\n" COMMON "Cache-Control: no-store\r\nDate: ",
	    strlen("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\n"
	    COMMON "Cache-Control: no-store\r\nDate: ")) == 0);
	ASSERT_TRUE((d = strstr(o.bytes, "\r\nDate: ")) != NULL);
	d += 8;
	ASSERT_TRUE((end = strstr(d, "\r\n\r\nhi")) != NULL);
	ASSERT_EQ(end - d, 29);
	ASSERT_EQ(sscanf(d, "%3s, %2d %3s %4d %2d:%2d:%2d GMT", day, &dd, mon, &yy, &hh, &mm,
	    &ss), 7);
	ASSERT_TRUE(yy >= 2024);
	ASSERT_STREQ(end, "\r\n\r\nhi");
	config_free(st.ds.cfg);
}

/* req_host on one Host value (NULL: no Host header) with hostlen bytes:
 * its return, and for 0 what it wrote. */
static int
host_of(struct stage *st, const char *value, size_t hostlen, char *host, char *hostport,
    int *local)
{
	char head[1024];
	struct sent o;
	struct req *r;
	int rc;

	if (value != NULL)
		snprintf(head, sizeof(head), "GET / HTTP/1.1\r\nHost: %s\r\n\r\n", value);
	else
		snprintf(head, sizeof(head), "GET / HTTP/1.0\r\n\r\n");
	if ((r = stage_req(st, head, NULL, &o)) == NULL)
		return -1000;
	rc = req_host(r, host, hostport, hostlen, local);
	req_abandon(r);
	return rc;
}

/* The Host header: lowercased, the absolute form's dot dropped from host
 * only, IP literals and localhost local, ports 1 to 65535, only letters,
 * digits, dots and dashes in a name; the same answer on every call, cut
 * to each caller's buffer. */
static void
test_host(void)
{
	static const struct {
		const char *value;
		int rc;
		const char *host, *hostport;
		int local;
	} cases[] = {
		{ "Example.TEST", 0, "example.test", "example.test", 0 },
		{ "example.test.", 0, "example.test", "example.test.", 0 },
		{ "example.test:8443", 0, "example.test", "example.test:8443", 0 },
		{ "127.0.0.1:8080", 0, "127.0.0.1", "127.0.0.1:8080", 1 },
		{ "1.2.3", 0, "1.2.3", "1.2.3", 0 },
		{ "1.2.3.4.", 0, "1.2.3.4", "1.2.3.4.", 1 },
		{ "[::1]:443", 0, "::1", "[::1]:443", 1 },
		{ "[::1]", 0, "::1", "[::1]", 1 },
		{ "LocalHost", 0, "localhost", "localhost", 1 },
		{ "a:65535", 0, "a", "a:65535", 0 },
		{ "a:1", 0, "a", "a:1", 0 },
		{ "a:0", REQ_ERR_BAD_HOST, "", "", 0 },
		{ "a:65536", REQ_ERR_BAD_HOST, "", "", 0 },
		{ "a:123456", REQ_ERR_BAD_HOST, "", "", 0 },
		{ "a:", REQ_ERR_BAD_HOST, "", "", 0 },
		{ "a:8x", REQ_ERR_BAD_HOST, "", "", 0 },
		{ ":80", REQ_ERR_BAD_HOST, "", "", 0 },
		{ "a_b", REQ_ERR_BAD_HOST, "", "", 0 },
		{ "a\xc3\xa9", REQ_ERR_BAD_HOST, "", "", 0 },
		{ "[::1", REQ_ERR_BAD_HOST, "", "", 0 },
		{ "[zz]", REQ_ERR_BAD_HOST, "", "", 0 },
		{ "[::1]x", REQ_ERR_BAD_HOST, "", "", 0 },
		{ NULL, 0, "", "", 0 },
	};
	char host[REQ_HOST_BUFSZ], hostport[REQ_HOST_BUFSZ], name[REQ_HOST_BUFSZ + 1];
	struct stage st;
	size_t i;
	int local;

	ASSERT_EQ(stage_init(&st), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		local = -1;
		ASSERT_EQ(host_of(&st, cases[i].value, sizeof(host), host, hostport, &local),
		    cases[i].rc);
		ASSERT_STREQ(host, cases[i].host);
		ASSERT_STREQ(hostport, cases[i].hostport);
		ASSERT_EQ(local, cases[i].local);
	}
	/* The longest name taken, and each caller's own buffer. */
	memset(name, 'a', REQ_HOST_BUFSZ - 1);
	name[REQ_HOST_BUFSZ - 1] = '\0';
	ASSERT_EQ(host_of(&st, name, sizeof(host), host, hostport, &local), 0);
	ASSERT_EQ(strlen(hostport), REQ_HOST_BUFSZ - 1);
	ASSERT_EQ(host_of(&st, name, REQ_HOST_BUFSZ - 1, host, hostport, &local),
	    REQ_ERR_BAD_HOST);
	name[REQ_HOST_BUFSZ - 1] = 'a';
	name[REQ_HOST_BUFSZ] = '\0';
	ASSERT_EQ(host_of(&st, name, sizeof(host), host, hostport, &local), REQ_ERR_BAD_HOST);
	config_free(st.ds.cfg);
}

int
main(void)
{
	RUN(test_host);
	RUN(test_pct_decode);
	RUN(test_targets);
	RUN(test_param_limit);
	RUN(test_error_table);
	RUN(test_every_code);
	RUN(test_check_fields);
	RUN(test_scan_good);
	RUN(test_scan_refused);
	RUN(test_scan_where);
	RUN(test_scan_value_bytes);
	RUN(test_scan_name_bytes);
	RUN(test_raw_reply);
	RUN(test_reply_bytes);
	RUN(test_reply_date);
	return harness_done();
}
