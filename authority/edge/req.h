/*
 * edge/req.h - one HTTP request as the handlers see it, and every way of
 * answering it.
 *
 * Owns a request's parts from arrival to the one reply (its head, edge/head.h,
 * its body and the response headers), request-target parsing (strict
 * percent-decoding), the bytes of every response (status line, the common
 * headers, keep-alive as HTTP/1.0 and 1.1 want it) and the ONE table mapping
 * errors to statuses and public messages. Must never put internals (paths, library errors) in a
 * response body: 5xx bodies say only "internal error" / "service
 * unavailable"; details go to the log.
 *
 * Lifetime: edge/listener.c creates a struct req per request and hands it to the
 * router. Every request is answered exactly once, by one req_reply* call,
 * which also frees the struct req; after that call the handler must not
 * touch it. A handler may return without answering and answer later from a
 * callback (deferred, e.g. when PAM answers). If the client disconnects in
 * between, the request stays valid (edge/conn.h) and the reply goes
 * nowhere, so we still reply exactly once.
 */
#ifndef AUTHORITY_EDGE_REQ_H
#define AUTHORITY_EDGE_REQ_H

#include <stddef.h>
#include <time.h>

#include "core/errors.h"

struct authority;
struct domain;
struct evbuffer;
struct head;
struct loop;
struct json_t;

/* Methods as a bit set, so a route can allow several. */
enum req_method {
	REQ_M_GET = 1 << 0,
	REQ_M_HEAD = 1 << 1,
	REQ_M_POST = 1 << 2,
	REQ_M_PUT = 1 << 3,
	REQ_M_DELETE = 1 << 4,
	REQ_M_OPTIONS = 1 << 5,
	REQ_M_TRACE = 1 << 6,
	REQ_M_CONNECT = 1 << 7,
	REQ_M_PATCH = 1 << 8,
};

/* Every error a request can end in is a code of core/errors.h: its own
 * REQ_ERR_* or whatever a layer below reported (VEP_ERR_*, DB_ERR_*,
 * SRV_ERR_*). The status and the public message of each are in the one
 * table in edge/req.c, nowhere else; 0 is success everywhere. */

/* Room for a public message a check writes for the reply (req_check_fields,
 * the handlers' own checks): an unknown field's name of up to 64 bytes,
 * each escaped as 4, and the words around it. */
#define REQ_WHY_BUFSZ 320

/* Room for an IPv6 address as text. */
#define REQ_ADDR_BUFSZ 64

/* How a request's errors are written. Persona's verifier contract
 * (POST /verify) has its own error body, which its client libraries read:
 * {"status":"failure","reason":MESSAGE}. Status and message still come from
 * the one table. */
enum req_shape {
	REQ_SHAPE_ERROR = 0,     /* {"error":MESSAGE} */
	REQ_SHAPE_PERSONA = 1,   /* {"status":"failure","reason":MESSAGE} */
};

/* Reply flags. */
#define REQ_F_CACHE 0x1   /* Cache-Control: public, max-age=<max_age>; else no-store */
#define REQ_F_CORS 0x2    /* Access-Control-Allow-Origin: * (public documents only) */
#define REQ_F_REVALIDATE 0x4 /* Cache-Control: no-cache (cache, but ask with the ETag) */

struct req_param {
	char *name;   /* decoded, owned */
	char *value;  /* decoded, owned; "" for a bare name */
};

/* Where a request came from and where its answer goes (edge/listener.c
 * fills it from the connection, edge/conn.h). */
struct req_link {
	/* Takes reply's bytes (a whole response) as the answer; the
	 * connection stays open only when keep_alive. */
	void (*reply)(void *conn, struct evbuffer *reply, int keep_alive);
	/* Ends the request without an answer. */
	void (*abandon)(void *conn);
	void *conn;
	const char *peer;            /* the connection's peer address as text */
	int tls;                     /* 1: native HTTPS */
	const char *hsts;            /* Strict-Transport-Security value, NULL: none */
};

/* A response header: name owns one block holding both, value points
 * into it. */
struct req_field {
	char *name;
	char *value;
};

/* The most bytes of a Host header req_host takes, its NUL included. */
#define REQ_HOST_BUFSZ 300

struct req {
	struct req_link link;        /* touched only by edge/req.c */
	struct head *head;           /* owned: method, target, version, fields */
	unsigned char *content;      /* owned: the body as received, decoded; wiped */
	size_t content_len;
	struct req_field *out;       /* owned: response headers, in order */
	size_t nout, outcap;
	/* The Host header parsed once (req_new), for req_host. */
	int host_rc;
	int host_local;
	char host[REQ_HOST_BUFSZ], hostport[REQ_HOST_BUFSZ];
	struct authority *a;         /* borrowed: what all loops share */
	struct loop *loop;           /* borrowed: the loop serving this request */
	unsigned method;             /* one REQ_M_* bit, 0 when unknown */
	const char *method_name;     /* static */
	const char *target;          /* raw request target, borrowed from head */
	char *path;                  /* decoded path, owned (after req_parse_target) */
	struct req_param *params;    /* decoded query, owned, in request order */
	size_t nparams;
	struct domain *domain;       /* set by the router for ROUTE_DOMAIN routes */
	struct timespec start;       /* monotonic, for the access log */
	char client_addr[REQ_ADDR_BUFSZ]; /* peer IP as text ("unknown" if none) */
	struct json_t *body;         /* owned: the JSON object (ROUTE_JSON_BODY) */
	int shape;                   /* enum req_shape: how its errors are written */
};

/* A request of loop l: takes h and body (len bytes, may be NULL when 0;
 * wiped when freed) whatever happens; the answer goes through link (copied).
 * Returns NULL on allocation failure, after answering 500 itself. */
struct req *req_new(struct loop *l, struct head *h, unsigned char *body, size_t len,
    const struct req_link *link);

/* 1 when the request came over native HTTPS (tls_cert), else 0. */
int req_is_tls(const struct req *r);

/*
 * The raw request scanner: every byte a connection sends, pipelined
 * requests and bodies included, read in order before anything else reads
 * it (edge/conn.c feeds it from the connection's input buffer). It is the
 * one framing check: edge/head.c splits only what it accepted. A proxy in
 * front of us may read a lenient request differently than we would (folded
 * lines, "+5" or "0x5" as a length, a value cut at NUL, a space before the
 * colon, a bare LF, a missing Host, trailer fields, the body of a HEAD
 * request: request smuggling), so whatever two readers could read
 * differently is refused here:
 *   - request line: METHOD SP origin-form-target SP HTTP/1.0|HTTP/1.1
 *     CRLF: one of enum req_method but CONNECT (else 501), a
 *     target starting with one "/", no empty line before the line;
 *   - header lines: token ":" value CRLF; no space in or after the name,
 *     no obs-fold, no control character (NUL, CR, DEL...; HTAB is fine) in
 *     a value; lines end with CRLF only;
 *   - the head at most LIMIT_HEADER_BYTES, CRLFs included;
 *   - HTTP/1.1: exactly one Host; HTTP/1.0: at most one;
 *   - Content-Length: one, plain digits (OWS around), at most
 *     LIMIT_BODY_BYTES (else 413); Transfer-Encoding: one, exactly
 *     "chunked" (any case), HTTP/1.1 only, never with Content-Length;
 *     neither on HEAD or TRACE (whose body no reader expects);
 *   - Expect: only 100-continue (else 417);
 *   - chunked bodies: sizes of 1 to REQ_SCAN_CHUNK_DIGITS hex digits and
 *     nothing else (no 0x, sign, space or extension), CRLF after each
 *     chunk's data, no trailer fields, at most LIMIT_BODY_BYTES in all.
 * Once it refuses, the scanner stays refused (the connection's framing can
 * no longer be trusted).
 */

/* Bytes of a method, a header name or a framing header's value kept to
 * tell them apart; longer ones are just "other" (or invalid). */
#define REQ_SCAN_CAPTURE 32
/* Hex digits of a chunk size: LIMIT_BODY_BYTES needs 5; leading zeros
 * beyond this many are refused. */
#define REQ_SCAN_CHUNK_DIGITS 8

struct req_scan {
	int state;                /* edge/req.c's enum scan_state */
	int error;                /* 0 while well framed, else a REQ_ERR_* */
	const char *why;          /* the refusal's public text, or NULL */
	unsigned long long offset; /* bytes scanned */
	unsigned long long start; /* offset of the current request's first byte */
	unsigned requests;        /* requests begun (1 = the first) */
	unsigned heads;           /* heads complete */
	/* The current request. */
	size_t head_bytes;
	unsigned method;          /* REQ_M_* */
	int http10;
	unsigned nhost, ncl, nte, nexpect;
	int field;                /* which framing header the line is */
	int cl_bad, te_bad, expect_bad;
	unsigned long long cl;
	unsigned long long left;  /* body or chunk bytes still to come */
	unsigned long long body;  /* chunked body bytes so far */
	unsigned digits;
	char cap[REQ_SCAN_CAPTURE + 1];
	size_t caplen;
	int capover;
};

/* Starts scanning a new connection. */
void req_scan_init(struct req_scan *s);

/* Scans the next n bytes of the connection. Returns 0 while they are well
 * framed, else the error to answer (REQ_ERR_BAD_REQUEST, BAD_TARGET,
 * TOO_LARGE, EXPECTATION or NOT_IMPLEMENTED) with its public text in
 * s->why, the offending request's number in s->requests and its first
 * byte at s->start; every later call returns the same. */
int req_scan_feed(struct req_scan *s, const unsigned char *p, size_t n);

/* Room for req_raw_reply's answer. */
#define REQ_RAW_BUFSZ 1024

/* Writes a whole HTTP/1.1 answer for err (any code, as req_reply_error)
 * into buf (buflen bytes, at least REQ_RAW_BUFSZ), for edge/conn.c to send
 * where there is no request to answer through (a refused connection or
 * request): the table's status, a JSON body {"error": message} (the
 * table's message when NULL or for a 5xx; a fixed public text without
 * quotes or backslashes) that also carries Persona's shape
 * ({"error":M,"status":"failure","reason":M}: the route, and so which shape
 * the client reads, is not known yet), Content-Length computed from that body,
 * Connection: close, Cache-Control: no-store and the security headers of
 * req_reply (Strict-Transport-Security: hsts, unless NULL), plus extra
 * (whole header lines ending in CRLF, or NULL). Returns its length, 0 when it does not fit. */
size_t req_raw_reply(char *buf, size_t buflen, int err, const char *message, const char *hsts,
    const char *extra);

/* Splits and decodes the request target into path and params. Returns
 * 0 on success, else the error to answer with: REQ_ERR_URI_TOO_LONG over
 * LIMIT_URI_BYTES, BAD_TARGET for anything but origin-form, bad or
 * NUL-producing percent-escapes, an encoded "/" in the path, or more than
 * LIMIT_QUERY_PARAMS parameters. "+" stays "+" (RFC 3986; addresses may
 * contain it). */
int req_parse_target(struct req *r);

/* Value of the first parameter called name, or NULL. */
const char *req_param(const struct req *r, const char *name);

/* Number of parameters called name. */
size_t req_param_count(const struct req *r, const char *name);

/* Value of a request header (case-insensitive name), or NULL. */
const char *req_header(const struct req *r, const char *name);

/* The Host header as lowercase host (without port or brackets) and
 * hostport (with them), each hostlen bytes (at most REQ_HOST_BUFSZ are
 * taken). *local is 1 for an IP literal or "localhost". A port must be 1
 * to 65535. Returns 0 (with empty outputs when there is no Host header,
 * as in HTTP/1.0) or REQ_ERR_BAD_HOST when it is malformed or does not
 * fit. Parsed once per request (req_new), copied out on every call. */
int req_host(const struct req *r, char *host, char *hostport, size_t hostlen, int *local);

/* Adds a response header (copied). Handlers use it for headers the reply
 * functions do not set; a Content-Security-Policy set here replaces the
 * default. Returns 0 or VEP_ERR_NOMEM. */
int req_add_header(struct req *r, const char *name, const char *value);

/* Answers with status, content type and len bytes of body (copied), the
 * security headers (X-Content-Type-Options, Referrer-Policy, a default CSP
 * "default-src 'none'; frame-ancestors 'none'"; Strict-Transport-Security
 * over HTTPS), Content-Length (also for
 * HEAD, which gets no body), and Cache-Control per flags. Frees r. */
void req_reply(struct req *r, int status, const char *ctype, const char *body,
    size_t len, unsigned flags);

/* Answers a public document with its strong ETag: 304 (no body) when the
 * request's If-None-Match matches, else 200. Frees r. */
void req_reply_tagged(struct req *r, const char *ctype, const char *body, size_t len,
    const char *etag, unsigned flags);

/* Frees r without answering: only at shutdown, for requests still waiting
 * (their connection, if still open, closes). */
void req_abandon(struct req *r);

/* Retry-After of a 503 whose handler named no time (seconds). */
#define REQ_RETRY_AFTER_DEFAULT "5"

/* Answers err, any code of core/errors.h, from the one table:
 * {"error":"<public message>"} with its status, and with a 503 a
 * Retry-After (REQ_RETRY_AFTER_DEFAULT unless one is set). A code the table does
 * not name (or 0, which is no error) is answered 500 "internal error".
 * Frees r. */
void req_reply_error(struct req *r, int err);

/* Same, with a more precise public message (a fixed string, vep_strerror's
 * or one a check wrote, never internals), or the table's when message is
 * NULL or empty. A 5xx always says the table's message: it carries no
 * details. Frees r. */
void req_reply_error_text(struct req *r, int err, const char *message);

/* Answers status with body serialised compactly as application/json; the
 * serialised text is wiped after sending (it may carry a CSRF token or a
 * certificate). Does not take body. Frees r. */
void req_reply_json(struct req *r, int status, const struct json_t *body);

/* 1 when ct (a Content-Type value, NULL allowed) is the media type mt,
 * compared without case, with or without parameters; else 0. */
int req_media_type_is(const char *ct, const char *mt);

/* Reads the request body as one JSON object into *out (new reference):
 * Content-Type must be application/json (parameters allowed; a charset
 * must be utf-8), the body at most LIMIT_BODY_BYTES, strict JSON (no
 * duplicate keys, no NUL in strings). The raw body is wiped and freed after
 * parsing: it may hold a password. Returns 0, or
 * REQ_ERR_MEDIA_TYPE, TOO_LARGE, BAD_JSON or INTERNAL. */
int req_read_json(struct req *r, struct json_t **out);

/* Returns 0 when every member of r->body is in known (a NULL-terminated
 * list), else REQ_ERR_BAD_REQUEST with why naming the first that is not
 * ("unknown field \"durtion\"", the name escaped and cut short), for the
 * caller's reply. A misspelt field must not be silently ignored
 * ("durtion" would otherwise mean the default lifetime). */
int req_check_fields(const struct req *r, const char *const *known, char why[REQ_WHY_BUFSZ]);

/* Answers 405 with an Allow header listing allowed (REQ_M_* bits). Frees r. */
void req_reply_method(struct req *r, unsigned allowed);

/* The REQ_ERR_* row err is answered with (from the one table): itself for
 * a REQ_ERR_*; libvep's input errors 400 (BAD_REQUEST; TOOBIG: TOO_LARGE),
 * VEP_ERR_IO 503 (UNAVAILABLE: the key process gone or stalled); a denied
 * sign-in 401, a throttled one 429; a server or store that cannot answer
 * now (SRV_ERR_CANCELED, UNDECIDED, UNRECORDED, DB_ERR_BUSY, FULL) 503;
 * anything else, and 0, INTERNAL (500). */
int req_error_from_code(int err);

/* Status code of err (from the one table). */
int req_error_status(int err);

/* The public message of err (from the one table; never NULL). */
const char *req_error_message(int err);

/* Percent-decodes len bytes of s strictly (every '%' followed by two hex
 * digits; no decoded NUL). *out is new text. Returns 0, VEP_ERR_INVALID or
 * VEP_ERR_NOMEM. Exposed for WebFinger's acct: userpart and tests. */
int req_pct_decode(const char *s, size_t len, char **out);

#endif
