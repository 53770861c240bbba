/*
 * edge/req.c - per-request state, request-target decoding and all replies.
 *
 * Owns a request's parts from arrival to the one reply, the bytes of every
 * response, the access log line and the one error->status table. Must
 * never reply twice: every reply function ends by freeing the struct req.
 */
#include "edge/req.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <sys/queue.h>

#include <event2/buffer.h>
#include <jansson.h>

#include "server/shared.h"
#include "edge/tls.h"
#include "err.h"
#include "edge/etag.h"
#include "edge/head.h"
#include "core/fixed_limits.h"
#include "core/log.h"
#include "server/loop.h"
#include "edge/proxy.h"
#include "secmem.h"
#include "util.h"

/* The one error table: the status, reason phrase (for answers edge/conn.c
 * writes itself) and public message of every REQ_ERR_*. The messages are
 * fixed strings, never input or internals. */
static const struct req_error_row {
	int err;
	int status;
	const char *reason;
	const char *message;
} req_errors[] = {
	{ REQ_ERR_BAD_REQUEST, 400, "Bad Request", "bad request" },
	{ REQ_ERR_BAD_TARGET, 400, "Bad Request", "malformed request target" },
	{ REQ_ERR_BAD_DOMAIN, 400, "Bad Request", "invalid domain parameter" },
	{ REQ_ERR_BAD_HOST, 400, "Bad Request", "invalid Host header" },
	{ REQ_ERR_BAD_RESOURCE, 400, "Bad Request", "missing or malformed resource" },
	{ REQ_ERR_BAD_JSON, 400, "Bad Request", "malformed JSON body" },
	{ REQ_ERR_UNAUTHORIZED, 401, "Unauthorized", "not signed in" },
	{ REQ_ERR_FORBIDDEN, 403, "Forbidden", "forbidden" },
	{ REQ_ERR_CSRF, 403, "Forbidden", "missing or wrong X-CSRF-Token header" },
	{ REQ_ERR_ORIGIN, 403, "Forbidden", "cross-origin request refused" },
	{ REQ_ERR_NOT_FOUND, 404, "Not Found", "not found" },
	{ REQ_ERR_UNKNOWN_DOMAIN, 404, "Not Found", "domain not served here" },
	{ REQ_ERR_METHOD, 405, "Method Not Allowed", "method not allowed" },
	{ REQ_ERR_EXPECTATION, 417, "Expectation Failed", "expectation failed" },
	{ REQ_ERR_TOO_LARGE, 413, "Content Too Large", "request too large" },
	{ REQ_ERR_URI_TOO_LONG, 414, "URI Too Long", "request target too long" },
	{ REQ_ERR_MEDIA_TYPE, 415, "Unsupported Media Type", "unsupported media type" },
	{ REQ_ERR_MISDIRECTED, 421, "Misdirected Request", "host not served here" },
	{ REQ_ERR_TOO_MANY, 429, "Too Many Requests", "too many requests" },
	{ REQ_ERR_INTERNAL, 500, "Internal Server Error", "internal error" },
	{ REQ_ERR_NOT_IMPLEMENTED, 501, "Not Implemented", "method not implemented" },
	{ REQ_ERR_UNAVAILABLE, 503, "Service Unavailable", "service unavailable" },
};

#define NERRORS (sizeof(req_errors) / sizeof(req_errors[0]))

/* The rest of the vocabulary (core/errors.h) that a request can end in:
 * the REQ_ERR_* row each is answered with, and a more precise public
 * message than the row's, or NULL. Any code in neither table is ours, not
 * the client's: INTERNAL. */
static const struct {
	int err;
	int as;
	const char *message;
} req_error_codes[] = {
	/* libvep: what the client sent is unacceptable; I/O is the key
	 * process gone or stalled, an outage. */
	{ VEP_ERR_INVALID, REQ_ERR_BAD_REQUEST, NULL },
	{ VEP_ERR_TOOBIG, REQ_ERR_TOO_LARGE, NULL },
	{ VEP_ERR_ALG, REQ_ERR_BAD_REQUEST, NULL },
	{ VEP_ERR_KEYSIZE, REQ_ERR_BAD_REQUEST, NULL },
	{ VEP_ERR_KEY, REQ_ERR_BAD_REQUEST, NULL },
	{ VEP_ERR_EMAIL, REQ_ERR_BAD_REQUEST, NULL },
	{ VEP_ERR_TIME, REQ_ERR_BAD_REQUEST, NULL },
	{ VEP_ERR_IO, REQ_ERR_UNAVAILABLE, NULL },
	/* The server's verdicts, and what it could not do now. */
	{ SRV_ERR_CANCELED, REQ_ERR_UNAVAILABLE, NULL },
	{ SRV_ERR_NOT_SERVED, REQ_ERR_BAD_REQUEST,
	  "this authority does not serve that address's domain" },
	{ SRV_ERR_THROTTLED, REQ_ERR_TOO_MANY, "too many failed sign-ins; try again later" },
	/* The one answer to every failed sign-in, whatever the reason. */
	{ SRV_ERR_DENIED, REQ_ERR_UNAUTHORIZED, "wrong address or password" },
	{ SRV_ERR_UNDECIDED, REQ_ERR_UNAVAILABLE, NULL },
	{ SRV_ERR_UNRECORDED, REQ_ERR_UNAVAILABLE, NULL },
	{ SRV_ERR_BUSY, REQ_ERR_UNAVAILABLE, NULL },
	/* The store: locked, full or out of reach is an outage; anything else is
	 * broken. */
	{ DB_ERR_BUSY, REQ_ERR_UNAVAILABLE, NULL },
	{ DB_ERR_FULL, REQ_ERR_UNAVAILABLE, NULL },
	{ DB_ERR_DOWN, REQ_ERR_UNAVAILABLE, NULL },
};

/* err's own row, or NULL when err is no REQ_ERR_*. */
static const struct req_error_row *
find_row(int err)
{
	size_t i;

	for (i = 0; i < NERRORS; i++)
		if (req_errors[i].err == err)
			return &req_errors[i];
	return NULL;
}

/* The row err is answered with, and its public message (may be NULL). */
static const struct req_error_row *
error_row(int err, const char **message)
{
	const struct req_error_row *row;
	const char *precise = NULL;
	size_t i;

	for (i = 0; i < sizeof(req_error_codes) / sizeof(req_error_codes[0]); i++) {
		if (req_error_codes[i].err == err) {
			err = req_error_codes[i].as;
			precise = req_error_codes[i].message;
			break;
		}
	}
	if ((row = find_row(err)) == NULL) {
		row = find_row(REQ_ERR_INTERNAL);
		precise = NULL;
	}
	if (message != NULL)
		*message = precise != NULL ? precise : row->message;
	return row;
}

/* Our bits and names of the methods (also the Allow order), and whether a
 * request of the method may have a body at all (not HEAD or TRACE, whose
 * "body" a lenient reader would take for the next request). */
static const struct {
	unsigned bit;
	const char *name;
	int body;
} req_methods[] = {
	{ REQ_M_GET, "GET", 1 },
	{ REQ_M_HEAD, "HEAD", 0 },
	{ REQ_M_POST, "POST", 1 },
	{ REQ_M_PUT, "PUT", 1 },
	{ REQ_M_DELETE, "DELETE", 1 },
	{ REQ_M_OPTIONS, "OPTIONS", 1 },
	{ REQ_M_TRACE, "TRACE", 0 },
	{ REQ_M_CONNECT, "CONNECT", 1 },
	{ REQ_M_PATCH, "PATCH", 1 },
};

#define NMETHODS (sizeof(req_methods) / sizeof(req_methods[0]))

static const char default_csp[] = "default-src 'none'; frame-ancestors 'none'";

int
req_error_from_code(int err)
{
	return error_row(err, NULL)->err;
}

int
req_error_status(int err)
{
	return error_row(err, NULL)->status;
}

const char *
req_error_message(int err)
{
	const char *message;

	error_row(err, &message);
	return message;
}

/* Every X-Forwarded-For value in order, joined by commas, into buf; NULL
 * when there is none or they do not fit (then the peer is the client). */
static const char *
forwarded_for(const struct head *h, char *buf, size_t buflen)
{
	size_t used = 0, n;

	buf[0] = '\0';
	for (size_t i = 0; i < h->nfields; i++) {
		if (strcasecmp(h->fields[i].name, "X-Forwarded-For") != 0)
			continue;
		n = strlen(h->fields[i].value);
		if (used + n + 2 > buflen)
			return NULL;
		if (used > 0)
			buf[used++] = ',';
		memcpy(buf + used, h->fields[i].value, n + 1);
		used += n;
	}
	return used > 0 ? buf : NULL;
}

/* The peer, or the client a trusted proxy names (edge/proxy.h). */
static void
client_address(struct req *r, const char *peer)
{
	const struct proxy_list *trusted = authority_cfg(r->a)->trusted_proxies;
	char xff[PROXY_XFF_MAX + 1];

	proxy_client_addr(trusted, peer != NULL ? peer : "unknown", trusted != NULL ?
	    forwarded_for(r->head, xff, sizeof(xff)) : NULL, r->client_addr,
	    sizeof(r->client_addr));
}

/* Answers a request we hold no struct req for: a bare 500, then the close. */
static void
reply_bare_500(const struct req_link *link)
{
	char raw[REQ_RAW_BUFSZ];
	struct evbuffer *buf = evbuffer_new();
	size_t n = req_raw_reply(raw, sizeof(raw), REQ_ERR_INTERNAL, NULL, link->hsts,
	    NULL);

	if (buf == NULL || n == 0 || evbuffer_add(buf, raw, n) != 0)
		link->abandon(link->conn);
	else
		link->reply(link->conn, buf, 0);
	if (buf != NULL)
		evbuffer_free(buf);
}

static int host_parse(struct req *r, const char *h);

struct req *
req_new(struct loop *l, struct head *h, unsigned char *body, size_t len,
    const struct req_link *link)
{
	struct authority *a = l->a;
	struct req *r;
	size_t i;

	if ((r = calloc(1, sizeof(*r))) == NULL) {
		log_error(&a->log, "out of memory for a request");
		head_free(h);
		if (body != NULL)
			vep_free_secret(body, len);
		reply_bare_500(link);
		return NULL;
	}
	r->link = *link;
	r->link.peer = NULL;  /* borrowed only until here */
	r->head = h;
	r->content = body;
	r->content_len = len;
	r->a = a;
	r->loop = l;
	r->method_name = "?";
	for (i = 0; i < NMETHODS; i++) {
		if (strcmp(req_methods[i].name, h->method) == 0) {
			r->method = req_methods[i].bit;
			r->method_name = req_methods[i].name;
		}
	}
	r->target = h->target;
	clock_gettime(CLOCK_MONOTONIC, &r->start);
	client_address(r, link->peer);
	if ((r->host_rc = host_parse(r, req_header(r, "Host"))) != 0) {
		r->host[0] = r->hostport[0] = '\0';
		r->host_local = 0;
	}
	return r;
}

static void
req_free(struct req *r)
{
	size_t i;

	for (i = 0; i < r->nparams; i++) {
		free(r->params[i].name);
		free(r->params[i].value);
	}
	free(r->params);
	free(r->path);
	json_decref(r->body);
	for (i = 0; i < r->nout; i++)
		free(r->out[i].name);
	free(r->out);
	if (r->content != NULL)
		vep_free_secret(r->content, r->content_len);
	head_free(r->head);
	free(r);
}

static int
hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int
req_pct_decode(const char *s, size_t len, char **out)
{
	char *d;
	size_t i, o = 0;
	int hi, lo;

	*out = NULL;
	if ((d = malloc(len + 1)) == NULL)
		return VEP_ERR_NOMEM;
	for (i = 0; i < len; i++) {
		if (s[i] != '%') {
			d[o++] = s[i];
			continue;
		}
		if (i + 2 >= len) {
			free(d);
			return VEP_ERR_INVALID;
		}
		hi = hexval((unsigned char)s[i + 1]);
		lo = hi < 0 ? -1 : hexval((unsigned char)s[i + 2]);
		if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
			free(d);
			return VEP_ERR_INVALID;
		}
		d[o++] = (char)(hi * 16 + lo);
		i += 2;
	}
	d[o] = '\0';
	*out = d;
	return VEP_OK;
}

/* Adds one decoded name=value pair from raw bytes [s, s+len). */
static int
add_param(struct req *r, const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len);
	struct req_param *np, p = { NULL, NULL };
	size_t nlen = eq != NULL ? (size_t)(eq - s) : len;

	if (r->nparams >= LIMIT_QUERY_PARAMS)
		return REQ_ERR_BAD_TARGET;
	if (req_pct_decode(s, nlen, &p.name) != 0)
		goto bad;
	if (eq != NULL) {
		if (req_pct_decode(eq + 1, len - nlen - 1, &p.value) != 0)
			goto bad;
	} else if ((p.value = strdup("")) == NULL) {
		goto bad;
	}
	if ((np = realloc(r->params, (r->nparams + 1) * sizeof(*np))) == NULL)
		goto bad;
	r->params = np;
	r->params[r->nparams++] = p;
	return 0;
bad:
	free(p.name);
	free(p.value);
	/* An allocation failure here is reported as a bad target too: the
	 * request is tiny (LIMIT_URI_BYTES), so only a broken host fails. */
	return REQ_ERR_BAD_TARGET;
}

int
req_parse_target(struct req *r)
{
	const char *t = r->target, *q, *s, *amp, *end;
	size_t len = strlen(t), i;
	int e;

	if (len > LIMIT_URI_BYTES)
		return REQ_ERR_URI_TOO_LONG;
	/* Origin-form only ("/path?query"): absolute-form is for proxies,
	 * and "*" is for OPTIONS, which nothing here serves. */
	if (t[0] != '/')
		return REQ_ERR_BAD_TARGET;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)t[i];
		if (c <= 0x20 || c >= 0x7f || c == '#')
			return REQ_ERR_BAD_TARGET;
	}
	q = strchr(t, '?');
	end = q != NULL ? q : t + len;
	/* An encoded slash would let "/a%2Fb" name what "/a/b" names without
	 * looking like it; nothing legitimate needs one. */
	for (s = t; s + 2 < end; s++)
		if (s[0] == '%' && s[1] == '2' && (s[2] == 'f' || s[2] == 'F'))
			return REQ_ERR_BAD_TARGET;
	if (req_pct_decode(t, (size_t)(end - t), &r->path) != 0)
		return REQ_ERR_BAD_TARGET;
	if (q == NULL)
		return 0;
	for (s = q + 1; *s != '\0'; s = *amp != '\0' ? amp + 1 : amp) {
		amp = strchr(s, '&');
		if (amp == NULL)
			amp = s + strlen(s);
		if (amp == s)
			continue; /* "a=1&&b=2": an empty pair carries nothing */
		if ((e = add_param(r, s, (size_t)(amp - s))) != 0)
			return e;
	}
	return 0;
}

const char *
req_param(const struct req *r, const char *name)
{
	size_t i;

	for (i = 0; i < r->nparams; i++)
		if (strcmp(r->params[i].name, name) == 0)
			return r->params[i].value;
	return NULL;
}

size_t
req_param_count(const struct req *r, const char *name)
{
	size_t i, n = 0;

	for (i = 0; i < r->nparams; i++)
		if (strcmp(r->params[i].name, name) == 0)
			n++;
	return n;
}

const char *
req_header(const struct req *r, const char *name)
{
	return r->head != NULL ? head_find(r->head, name) : NULL;
}

int
req_is_tls(const struct req *r)
{
	return r->link.tls;
}

/* Where the raw scanner is (struct req_scan's state). */
enum scan_state {
	SCAN_IDLE,          /* between requests: the next byte starts one */
	SCAN_METHOD,
	SCAN_TARGET,
	SCAN_VERSION,
	SCAN_LINE_LF,       /* CR of the request line seen */
	SCAN_FIELD_START,   /* at the start of a header line */
	SCAN_NAME,
	SCAN_VALUE,
	SCAN_FIELD_LF,      /* CR of a header line seen */
	SCAN_HEAD_LF,       /* CR of the empty line seen */
	SCAN_BODY,          /* Content-Length bytes */
	SCAN_CHUNK_SIZE,
	SCAN_CHUNK_SIZE_LF,
	SCAN_CHUNK_DATA,
	SCAN_CHUNK_CR,      /* the CRLF after a chunk's data */
	SCAN_CHUNK_LF,
	SCAN_TRAILER,       /* after the last chunk: only the empty line */
	SCAN_TRAILER_LF,
	SCAN_FAILED,
};

/* The header fields that decide framing (names as lowercased). */
enum scan_field { FIELD_OTHER, FIELD_HOST, FIELD_CL, FIELD_TE, FIELD_EXPECT };

static const struct {
	const char *name;
	enum scan_field field;
} scan_fields[] = {
	{ "host", FIELD_HOST },
	{ "content-length", FIELD_CL },
	{ "transfer-encoding", FIELD_TE },
	{ "expect", FIELD_EXPECT },
};

/* RFC 9110 tchar: ALPHA, DIGIT and !#$%&'*+-.^_`|~, one bit per byte
 * value (ASCII whatever the locale; checked byte by byte in
 * unit_authority_req). */
static int
is_tchar(unsigned char c)
{
	static const uint32_t tchar[8] = {
		0x00000000, 0x03ff6cfa, 0xc7fffffe, 0x57ffffff, 0, 0, 0, 0,
	};

	return (int)(tchar[c >> 5] >> (c & 31) & 1);
}

/* ASCII lower case (a header name's bytes are tchars). */
static unsigned char
ascii_lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c | 0x20) : c;
}

static int
scan_fail(struct req_scan *s, int e, const char *why)
{
	s->state = SCAN_FAILED;
	s->error = e;
	s->why = why != NULL ? why : req_error_message(e);
	return e;
}

static void
scan_capture(struct req_scan *s, unsigned char c)
{
	if (s->caplen < REQ_SCAN_CAPTURE)
		s->cap[s->caplen++] = (char)c;
	else
		s->capover = 1;
}

static void
scan_capture_reset(struct req_scan *s)
{
	s->caplen = 0;
	s->capover = 0;
}

void
req_scan_init(struct req_scan *s)
{
	memset(s, 0, sizeof(*s));
	s->state = SCAN_IDLE;
	s->error = 0;
}

/* The request line's method ended (at the space). */
static int
scan_method(struct req_scan *s)
{
	size_t i;

	s->cap[s->caplen] = '\0';
	for (i = 0; i < NMETHODS && !s->capover; i++) {
		if (strcmp(req_methods[i].name, s->cap) != 0)
			continue;
		s->method = req_methods[i].bit;
		/* CONNECT takes an authority-form target: we are no
		 * proxy. */
		if (s->method == REQ_M_CONNECT)
			break;
		return 0;
	}
	/* A method we do not know: 501, as RFC 9110 asks. */
	return scan_fail(s, REQ_ERR_NOT_IMPLEMENTED, NULL);
}

/* A header line's value ended (at its CR): judges the framing ones. */
static void
scan_value(struct req_scan *s)
{
	size_t i;

	while (s->caplen > 0 && (s->cap[s->caplen - 1] == ' ' || s->cap[s->caplen - 1] == '\t'))
		s->caplen--;
	s->cap[s->caplen] = '\0';
	switch (s->field) {
	case FIELD_CL:
		s->cl_bad = s->capover || s->caplen == 0 ||
		    strspn(s->cap, "0123456789") != s->caplen;
		s->cl = 0;
		/* Saturates above the body limit: only "too large" matters. */
		for (i = 0; i < s->caplen && !s->cl_bad; i++)
			if (s->cl <= LIMIT_BODY_BYTES)
				s->cl = s->cl * 10 + (unsigned)(s->cap[i] - '0');
		break;
	case FIELD_TE:
		s->te_bad = s->capover || strcasecmp(s->cap, "chunked") != 0;
		break;
	case FIELD_EXPECT:
		s->expect_bad = s->capover || strcasecmp(s->cap, "100-continue") != 0;
		break;
	default:
		break;
	}
}

/* The head ended: is its framing unambiguous, and what follows it? */
static int
scan_head_end(struct req_scan *s)
{
	int body = 0;
	size_t i;

	s->heads++;
	for (i = 0; i < NMETHODS; i++)
		if (req_methods[i].bit == s->method)
			body = req_methods[i].body;
	if (!s->http10 && s->nhost == 0)
		return scan_fail(s, REQ_ERR_BAD_REQUEST, "missing Host header");
	if (s->nhost > 1)
		return scan_fail(s, REQ_ERR_BAD_REQUEST, "more than one Host header");
	if (s->ncl > 1)
		return scan_fail(s, REQ_ERR_BAD_REQUEST, "more than one Content-Length");
	if (s->nte > 1)
		return scan_fail(s, REQ_ERR_BAD_REQUEST, "more than one Transfer-Encoding");
	if (s->nte > 0 && s->ncl > 0)
		return scan_fail(s, REQ_ERR_BAD_REQUEST,
		    "Transfer-Encoding together with Content-Length");
	if (s->nte > 0 && s->te_bad)
		return scan_fail(s, REQ_ERR_BAD_REQUEST,
		    "unsupported Transfer-Encoding (only chunked)");
	if (s->nte > 0 && s->http10)
		return scan_fail(s, REQ_ERR_BAD_REQUEST,
		    "Transfer-Encoding in an HTTP/1.0 request");
	if (s->ncl > 0 && s->cl_bad)
		return scan_fail(s, REQ_ERR_BAD_REQUEST, "malformed Content-Length");
	if (s->nexpect > 0 && s->expect_bad)
		return scan_fail(s, REQ_ERR_EXPECTATION, NULL);
	if (!body && (s->nte > 0 || s->cl > 0))
		return scan_fail(s, REQ_ERR_BAD_REQUEST, "a body on a HEAD or TRACE request");
	if (s->cl > LIMIT_BODY_BYTES)
		return scan_fail(s, REQ_ERR_TOO_LARGE, NULL);
	if (s->nte > 0) {
		s->state = SCAN_CHUNK_SIZE;
		s->left = 0;
		s->digits = 0;
		s->body = 0;
	} else if (s->cl > 0) {
		s->state = SCAN_BODY;
		s->left = s->cl;
	} else {
		s->state = SCAN_IDLE;
	}
	return 0;
}

/* How many of the n bytes at p, at most max, a header value that is not
 * kept takes as they are: neither CR nor a control character (tab
 * allowed) nor DEL. */
static size_t
scan_plain_run(const unsigned char *p, size_t n, size_t max)
{
	size_t k = 0;

	if (n > max)
		n = max;
	while (k < n && (p[k] >= 0x20 || p[k] == '\t') && p[k] != 0x7f)
		k++;
	return k;
}

/* One byte of a request line or header line (the head). */
static int
scan_head_byte(struct req_scan *s, unsigned char c)
{
	size_t i;

	if (++s->head_bytes > LIMIT_HEADER_BYTES)
		return scan_fail(s, REQ_ERR_BAD_REQUEST, "request head too large");
	switch (s->state) {
	case SCAN_METHOD:
		if (c == ' ' && s->caplen > 0) {
			s->state = SCAN_TARGET;
			s->digits = 0;
			return scan_method(s);
		}
		if (is_tchar(c)) {
			scan_capture(s, c);
			return 0;
		}
		if ((c == '\r' || c == '\n') && s->caplen == 0)
			return scan_fail(s, REQ_ERR_BAD_REQUEST,
			    "empty line before the request line");
		return scan_fail(s, REQ_ERR_BAD_REQUEST, "malformed request line");
	case SCAN_TARGET:
		if (c == ' ' && s->digits > 0) {
			s->state = SCAN_VERSION;
			scan_capture_reset(s);
			return 0;
		}
		if (c <= 0x20 || c >= 0x7f)
			return scan_fail(s, REQ_ERR_BAD_REQUEST, "malformed request line");
		/* Origin-form only: "/", not "//" (which a URI parser reads
		 * as an authority). */
		if ((s->digits == 0 && c != '/') || (s->digits == 1 && c == '/'))
			return scan_fail(s, REQ_ERR_BAD_TARGET, NULL);
		if (s->digits < 2)
			s->digits++;  /* characters of the target so far, up to 2 */
		return 0;
	case SCAN_VERSION:
		if (c != '\r') {
			if (c <= 0x20 || c >= 0x7f)
				return scan_fail(s, REQ_ERR_BAD_REQUEST, "malformed request line");
			scan_capture(s, c);
			return 0;
		}
		s->cap[s->caplen] = '\0';
		if (s->capover || (strcmp(s->cap, "HTTP/1.1") != 0 &&
		    strcmp(s->cap, "HTTP/1.0") != 0))
			return scan_fail(s, REQ_ERR_BAD_REQUEST, "unsupported HTTP version");
		s->http10 = strcmp(s->cap, "HTTP/1.0") == 0;
		s->state = SCAN_LINE_LF;
		return 0;
	case SCAN_LINE_LF:
	case SCAN_FIELD_LF:
		if (c != '\n')
			return scan_fail(s, REQ_ERR_BAD_REQUEST, "CR without LF");
		s->state = SCAN_FIELD_START;
		return 0;
	case SCAN_FIELD_START:
		if (c == '\r') {
			s->state = SCAN_HEAD_LF;
			return 0;
		}
		if (c == ' ' || c == '\t')
			return scan_fail(s, REQ_ERR_BAD_REQUEST,
			    "obsolete line folding in a header");
		if (!is_tchar(c))
			return scan_fail(s, REQ_ERR_BAD_REQUEST, "malformed header line");
		scan_capture_reset(s);
		scan_capture(s, ascii_lower(c));
		s->state = SCAN_NAME;
		return 0;
	case SCAN_NAME:
		if (is_tchar(c)) {
			scan_capture(s, ascii_lower(c));
			return 0;
		}
		if (c == ' ' || c == '\t')
			return scan_fail(s, REQ_ERR_BAD_REQUEST,
			    "space in a header name or before its colon");
		if (c != ':')
			return scan_fail(s, REQ_ERR_BAD_REQUEST, "malformed header line");
		s->cap[s->caplen] = '\0';
		s->field = FIELD_OTHER;
		for (i = 0; i < sizeof(scan_fields) / sizeof(scan_fields[0]) && !s->capover; i++)
			if (strcmp(scan_fields[i].name, s->cap) == 0)
				s->field = scan_fields[i].field;
		s->nhost += s->field == FIELD_HOST;
		s->ncl += s->field == FIELD_CL;
		s->nte += s->field == FIELD_TE;
		s->nexpect += s->field == FIELD_EXPECT;
		scan_capture_reset(s);
		s->state = SCAN_VALUE;
		return 0;
	case SCAN_VALUE:
		if (c == '\r') {
			scan_value(s);
			s->state = SCAN_FIELD_LF;
			return 0;
		}
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return scan_fail(s, REQ_ERR_BAD_REQUEST,
			    "control character in a header value");
		/* Only framing values are kept, without leading OWS. */
		if (s->field != FIELD_OTHER && s->field != FIELD_HOST &&
		    (s->caplen > 0 || (c != ' ' && c != '\t')))
			scan_capture(s, c);
		return 0;
	case SCAN_HEAD_LF:
		if (c != '\n')
			return scan_fail(s, REQ_ERR_BAD_REQUEST, "CR without LF");
		return scan_head_end(s);
	default:
		return scan_fail(s, REQ_ERR_INTERNAL, NULL);
	}
}

/* One byte of a chunked body's framing (not of a chunk's data). */
static int
scan_chunk_byte(struct req_scan *s, unsigned char c)
{
	switch (s->state) {
	case SCAN_CHUNK_SIZE:
		if (isxdigit(c) && s->digits < REQ_SCAN_CHUNK_DIGITS) {
			s->digits++;
			s->left = s->left * 16 + (unsigned)hexval(c);
			return 0;
		}
		if (c != '\r' || s->digits == 0)
			return scan_fail(s, REQ_ERR_BAD_REQUEST, "malformed chunk size");
		s->state = SCAN_CHUNK_SIZE_LF;
		return 0;
	case SCAN_CHUNK_SIZE_LF:
		if (c != '\n')
			return scan_fail(s, REQ_ERR_BAD_REQUEST, "malformed chunk size");
		if (s->left == 0) {
			s->state = SCAN_TRAILER;
			return 0;
		}
		s->body += s->left;
		if (s->body > LIMIT_BODY_BYTES)
			return scan_fail(s, REQ_ERR_TOO_LARGE, NULL);
		s->state = SCAN_CHUNK_DATA;
		return 0;
	case SCAN_CHUNK_CR:
	case SCAN_CHUNK_LF:
		if (c != (s->state == SCAN_CHUNK_CR ? '\r' : '\n'))
			return scan_fail(s, REQ_ERR_BAD_REQUEST, "chunk data not followed by CRLF");
		if (s->state == SCAN_CHUNK_CR) {
			s->state = SCAN_CHUNK_LF;
		} else {
			s->state = SCAN_CHUNK_SIZE;
			s->left = 0;
			s->digits = 0;
		}
		return 0;
	case SCAN_TRAILER:
	case SCAN_TRAILER_LF:
		/* Trailer fields would be headers that arrive after the
		 * body: refused (a proxy may merge them, or drop them). */
		if (c != (s->state == SCAN_TRAILER ? '\r' : '\n'))
			return scan_fail(s, REQ_ERR_BAD_REQUEST,
			    "trailer fields in a chunked body");
		s->state = s->state == SCAN_TRAILER ? SCAN_TRAILER_LF : SCAN_IDLE;
		return 0;
	default:
		return scan_fail(s, REQ_ERR_INTERNAL, NULL);
	}
}

int
req_scan_feed(struct req_scan *s, const unsigned char *p, size_t n)
{
	size_t i = 0, k;
	int e = 0;

	while (i < n && s->state != SCAN_FAILED) {
		if (s->state == SCAN_BODY || s->state == SCAN_CHUNK_DATA) {
			/* Data: skipped in bulk. */
			k = (unsigned long long)(n - i) < s->left ? n - i : (size_t)s->left;
			s->left -= k;
			s->offset += k;
			i += k;
			if (s->left == 0)
				s->state = s->state == SCAN_BODY ? SCAN_IDLE : SCAN_CHUNK_CR;
			continue;
		}
		if (s->state == SCAN_IDLE) {
			/* The first byte of the next request. */
			unsigned heads = s->heads, requests = s->requests;
			unsigned long long offset = s->offset;

			req_scan_init(s);
			s->heads = heads;
			s->requests = requests + 1;
			s->offset = s->start = offset;
			s->state = SCAN_METHOD;
		}
		if (s->state == SCAN_VALUE && (s->field == FIELD_OTHER || s->field == FIELD_HOST)) {
			/* A value that is not kept (most of a head: cookies,
			 * tokens, agents): skipped in bulk up to its CR or the
			 * first byte scan_head_byte would refuse, which it then
			 * sees (as it does the byte past the head limit). */
			k = scan_plain_run(p + i, n - i, LIMIT_HEADER_BYTES - s->head_bytes);
			s->head_bytes += k;
			s->offset += k;
			i += k;
			if (i == n)
				break;
		}
		if (s->state >= SCAN_CHUNK_SIZE)
			e = scan_chunk_byte(s, p[i]);
		else
			e = scan_head_byte(s, p[i]);
		if (e != 0)
			break;
		s->offset++;
		i++;
	}
	return s->state == SCAN_FAILED ? s->error : 0;
}

size_t
req_raw_reply(char *buf, size_t buflen, int err, const char *message, const char *hsts,
    const char *extra)
{
	const char *fixed;
	const struct req_error_row *e = error_row(err, &fixed);
	char body[320];
	int n, m;

	if (message == NULL || e->status >= 500 || strpbrk(message, "\"\\") != NULL)
		message = fixed;
	n = snprintf(body, sizeof(body),
	    "{\"error\":\"%s\",\"status\":\"failure\",\"reason\":\"%s\"}", message, message);
	if (n < 0 || (size_t)n >= sizeof(body))
		return 0;
	m = snprintf(buf, buflen,
	    "HTTP/1.1 %d %s\r\n"
	    "Content-Type: application/json\r\n"
	    "Content-Length: %d\r\n"
	    "Connection: close\r\n"
	    "Cache-Control: no-store\r\n"
	    "X-Content-Type-Options: nosniff\r\n"
	    "Referrer-Policy: no-referrer\r\n"
	    "Content-Security-Policy: %s\r\n"
	    "%s%s%s%s"
	    "\r\n"
	    "%s",
	    e->status, e->reason, n, default_csp,
	    hsts != NULL ? "Strict-Transport-Security: " : "", hsts != NULL ? hsts : "",
	    hsts != NULL ? "\r\n" : "",
	    extra != NULL ? extra : "", body);
	if (m < 0 || (size_t)m >= buflen)
		return 0;
	return (size_t)m;
}

/* 1 for the bytes a host name may hold (letters, digits, '.', '-'), in
 * ASCII whatever the locale. */
static int
host_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '.' || c == '-';
}

/* Parses Host header h (NULL: none) into r's host, hostport and
 * host_local, as req_host describes; returns 0 or REQ_ERR_BAD_HOST. */
static int
host_parse(struct req *r, const char *h)
{
	unsigned char addr[sizeof(struct in6_addr)];
	const char *port = NULL, *hend;
	char *host = r->host;
	size_t n, i;
	int digits = 1;

	if (h == NULL)
		return 0;
	if (strlen(h) >= REQ_HOST_BUFSZ)
		return REQ_ERR_BAD_HOST;
	if (h[0] == '[') {
		if ((hend = strchr(h, ']')) == NULL)
			return REQ_ERR_BAD_HOST;
		n = (size_t)(hend - h - 1);
		memcpy(host, h + 1, n);
		host[n] = '\0';
		if (inet_pton(AF_INET6, host, addr) != 1)
			return REQ_ERR_BAD_HOST;
		r->host_local = 1;
		if (hend[1] == ':')
			port = hend + 2;
		else if (hend[1] != '\0')
			return REQ_ERR_BAD_HOST;
	} else {
		hend = strchr(h, ':');
		n = hend != NULL ? (size_t)(hend - h) : strlen(h);
		if (hend != NULL)
			port = hend + 1;
		if (n == 0)
			return REQ_ERR_BAD_HOST;
		for (i = 0; i < n; i++) {
			unsigned char c = (unsigned char)h[i];
			if (!host_char(c))
				return REQ_ERR_BAD_HOST;
			host[i] = (char)ascii_lower(c);
			digits &= (c >= '0' && c <= '9') || c == '.';
		}
		host[n] = '\0';
		if (n > 1 && host[n - 1] == '.') /* the absolute form names the same host */
			host[--n] = '\0';
		/* Only digits and dots can make an IPv4 address. */
		if ((digits && inet_pton(AF_INET, host, addr) == 1) ||
		    strcmp(host, "localhost") == 0)
			r->host_local = 1;
	}
	if (port != NULL) {
		unsigned long v = 0;

		n = strlen(port);
		if (n == 0 || n > 5 || strspn(port, "0123456789") != n)
			return REQ_ERR_BAD_HOST;
		for (i = 0; i < n; i++)
			v = v * 10 + (unsigned long)(port[i] - '0');
		if (v < 1 || v > 65535)
			return REQ_ERR_BAD_HOST;
	}
	for (i = 0; h[i] != '\0'; i++)
		r->hostport[i] = (char)ascii_lower((unsigned char)h[i]);
	r->hostport[i] = '\0';
	return 0;
}

int
req_host(const struct req *r, char *host, char *hostport, size_t hostlen, int *local)
{
	host[0] = hostport[0] = '\0';
	*local = 0;
	if (r->host_rc != 0)
		return r->host_rc;
	if (strlen(r->hostport) >= hostlen)
		return REQ_ERR_BAD_HOST;
	memcpy(host, r->host, strlen(r->host) + 1);
	memcpy(hostport, r->hostport, strlen(r->hostport) + 1);
	*local = r->host_local;
	return 0;
}

/* 1 when response header f is called name (any case), of nlen bytes:
 * the length first, which the one block tells (edge/req.h). */
static int
out_is(const struct req_field *f, const char *name, size_t nlen)
{
	return (size_t)(f->value - f->name) == nlen + 1 && strcasecmp(f->name, name) == 0;
}

/* Removes every response header called name. */
static void
out_remove(struct req *r, const char *name)
{
	size_t i = 0, nlen = strlen(name);

	while (i < r->nout) {
		if (!out_is(&r->out[i], name, nlen)) {
			i++;
			continue;
		}
		free(r->out[i].name);
		memmove(&r->out[i], &r->out[i + 1], (r->nout - i - 1) * sizeof(r->out[0]));
		r->nout--;
	}
}

/* The first response header called name, or NULL. */
static const char *
out_find(const struct req *r, const char *name)
{
	size_t nlen = strlen(name);

	for (size_t i = 0; i < r->nout; i++)
		if (out_is(&r->out[i], name, nlen))
			return r->out[i].value;
	return NULL;
}

/* Room for this many response headers at first: what a reply of ours
 * sets, so one allocation serves most. */
#define REQ_OUT_FIRST 16

/* Appends a response header: name and value copied into one block.
 * Returns 0 or VEP_ERR_NOMEM. */
static int
out_add(struct req *r, const char *name, const char *value)
{
	size_t nlen = strlen(name), vlen = strlen(value), cap;
	struct req_field *n;
	char *block;

	if (r->nout == r->outcap) {
		cap = r->outcap == 0 ? REQ_OUT_FIRST : 2 * r->outcap;
		if ((n = realloc(r->out, cap * sizeof(*n))) == NULL)
			return VEP_ERR_NOMEM;
		r->out = n;
		r->outcap = cap;
	}
	if ((block = malloc(nlen + vlen + 2)) == NULL)
		return VEP_ERR_NOMEM;
	memcpy(block, name, nlen + 1);
	memcpy(block + nlen + 1, value, vlen + 1);
	r->out[r->nout].name = block;
	r->out[r->nout].value = block + nlen + 1;
	r->nout++;
	return VEP_OK;
}

int
req_add_header(struct req *r, const char *name, const char *value)
{
	out_remove(r, name);
	return out_add(r, name, value);
}

/* One line per answered request: who (the client after trusted proxies),
 * which domain (Host), what, the outcome, how big and how long. */
static void
access_log(const struct req *r, int status, size_t len)
{
	char path[LOG_ESCAPE_BUFSZ], host[LOG_ESCAPE_BUFSZ], line[3 * LOG_ESCAPE_BUFSZ];
	const struct config *cfg = r->a->cfg;
	const char *h;
	struct timespec now;
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (double)(now.tv_sec - r->start.tv_sec) * 1e3 +
	    (double)(now.tv_nsec - r->start.tv_nsec) / 1e6;
	metrics_observe(&r->a->metrics.request, ms / 1e3);
	if (cfg->access_log == CONFIG_ACCESS_LOG_OFF ||
	    (cfg->access_log == CONFIG_ACCESS_LOG_STDERR && r->a->log.level < LOGL_INFO))
		return;
	/* The path only: the query may carry an address, which is the
	 * user's business, not the log's. */
	log_escape(path, sizeof(path), r->path != NULL ? r->path : r->target,
	    r->path != NULL ? strlen(r->path) : strcspn(r->target, "?"));
	h = r->head != NULL ? head_find(r->head, "Host") : NULL;
	log_escape(host, sizeof(host), h, h != NULL ? strlen(h) : 0);
	snprintf(line, sizeof(line), "%s %s %s \"%s\" %d %zu %.1fms", r->client_addr, host,
	    r->method_name, path, status, len, ms);
	if (cfg->access_log == CONFIG_ACCESS_LOG_SYSLOG)
		syslog_out_send(&r->a->access_syslog, LOG_INFO, line);
	else
		log_info(&r->a->log, "%s", line);
}

/* The reason phrase of a status, as libevent 2.1.12's HTTP server wrote it
 * (clients only show it; kept so that answers stay byte for byte). */
static const char *
status_phrase(int status)
{
	static const char *const phrases[][18] = {
		{ "Continue", "Switching Protocols" },
		{ "OK", "Created", "Accepted", "Non-Authoritative Information", "No Content",
		  "Reset Content", "Partial Content" },
		{ "Multiple Choices", "Moved Permanently", "Found", "See Other", "Not Modified",
		  "Use Proxy", "Temporary Redirect" },
		{ "Bad Request", "Unauthorized", "Payment Required", "Forbidden", "Not Found",
		  "Method Not Allowed", "Not Acceptable", "Proxy Authentication Required",
		  "Request Time-out", "Conflict", "Gone", "Length Required",
		  "Precondition Failed", "Request Entity Too Large", "Request-URI Too Large",
		  "Unsupported Media Type", "Requested range not satisfiable",
		  "Expectation Failed" },
		{ "Internal Server Error", "Not Implemented", "Bad Gateway", "Service Unavailable",
		  "Gateway Time-out", "HTTP Version not supported" },
	};
	static const char *const classes[] = {
		"Informational", "Success", "Redirection", "Client Error", "Server Error",
	};
	int klass = status / 100 - 1, sub = status % 100;

	if (klass < 0 || klass >= 5)
		return "Unknown Status Class";
	if (sub >= 18 || phrases[klass][sub] == NULL)
		return classes[klass];
	return phrases[klass][sub];
}

/* The decimal digits of v at o (no NUL); returns how many. */
static size_t
put_decimal(char *o, unsigned long long v)
{
	char digits[20];
	size_t n = 0;

	do {
		digits[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	for (size_t i = 0; i < n; i++)
		o[i] = digits[n - 1 - i];
	return n;
}

/* Two digits of v (0-99) at o. */
static char *
put2(char *o, int v)
{
	o[0] = (char)('0' + v / 10 % 10);
	o[1] = (char)('0' + v % 10);
	return o + 2;
}

/* An IMF-fixdate of now ("Sun, 06 Nov 1994 08:49:37 GMT"), whatever the
 * locale, in out (REQ_DATE_BUFSZ bytes with the NUL). */
#define REQ_DATE_BUFSZ 32
static void
http_date(char out[REQ_DATE_BUFSZ])
{
	static const char days[7][4] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };
	static const char months[12][4] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul",
					    "Aug", "Sep", "Oct", "Nov", "Dec" };
	time_t now = time(NULL);
	struct tm tm;
	char *o = out;

	/* Years 0-9999 only (four digits); gmtime_r fails past them anyway. */
	if (gmtime_r(&now, &tm) == NULL || tm.tm_year < -1900 || tm.tm_year > 9999 - 1900) {
		memset(&tm, 0, sizeof(tm));
		tm.tm_mday = 1;
		tm.tm_year = 70;
		tm.tm_wday = 4;
	}
	memcpy(o, days[tm.tm_wday % 7], 3);
	o += 3;
	*o++ = ',';
	*o++ = ' ';
	o = put2(o, tm.tm_mday);
	*o++ = ' ';
	memcpy(o, months[tm.tm_mon % 12], 3);
	o += 3;
	*o++ = ' ';
	o = put2(put2(o, (tm.tm_year + 1900) / 100), (tm.tm_year + 1900) % 100);
	*o++ = ' ';
	o = put2(o, tm.tm_hour);
	*o++ = ':';
	o = put2(o, tm.tm_min);
	*o++ = ':';
	o = put2(o, tm.tm_sec);
	memcpy(o, " GMT", 5);
}

/* Appends s to head at *off (room checked by the caller). */
static void
put_str(char *head, size_t *off, const char *s, size_t n)
{
	memcpy(head + *off, s, n);
	*off += n;
}

/* The status line and headers, then the empty line, added to buf in one
 * piece (one copy, where a printf per header cost a reply ~9,000
 * instructions). Returns 0 or VEP_ERR_NOMEM. */
static int
write_head(struct req *r, struct evbuffer *buf, int minor, int status)
{
	const char *phrase = status_phrase(status);
	size_t plen = strlen(phrase), off = 0;
	size_t need = sizeof("HTTP/1. \r\n\r\n") + 2 * 20 + plen;
	char stack[2048], *head = stack;
	int rc;

	for (size_t i = 0; i < r->nout; i++)
		need += strlen(r->out[i].name) + strlen(r->out[i].value) + 4;
	if (need > sizeof(stack) && (head = malloc(need)) == NULL)
		return VEP_ERR_NOMEM;
	put_str(head, &off, "HTTP/1.", 7);
	off += put_decimal(head + off, (unsigned long long)(minor > 0 ? minor : 0));
	head[off++] = ' ';
	off += put_decimal(head + off, (unsigned long long)(status > 0 ? status : 0));
	head[off++] = ' ';
	put_str(head, &off, phrase, plen);
	put_str(head, &off, "\r\n", 2);
	for (size_t i = 0; i < r->nout; i++) {
		put_str(head, &off, r->out[i].name, strlen(r->out[i].name));
		put_str(head, &off, ": ", 2);
		put_str(head, &off, r->out[i].value, strlen(r->out[i].value));
		put_str(head, &off, "\r\n", 2);
	}
	put_str(head, &off, "\r\n", 2);
	rc = evbuffer_add(buf, head, off) == 0 ? VEP_OK : VEP_ERR_NOMEM;
	if (head != stack)
		free(head);
	return rc;
}

/* Writes the whole response into buf: the request's HTTP version, the
 * headers in r->out plus what HTTP/1.0 and 1.1 want (Date; Connection
 * keep-alive for an HTTP/1.0 client that asked, close when the client
 * said close), then the body unless there must be none. Sets *keep when
 * the connection stays open. Returns 0 or VEP_ERR_NOMEM. */
static int
write_response(struct req *r, struct evbuffer *buf, int status, const char *body,
    size_t len, int *keep)
{
	const char *conn = req_header(r, "Connection"), *mine;
	char date[REQ_DATE_BUFSZ];
	int minor = r->head != NULL ? r->head->minor : 1, rc = VEP_OK;

	if (minor >= 1 && out_find(r, "Date") == NULL) {
		http_date(date);
		rc = out_add(r, "Date", date);
	}
	if (rc == VEP_OK && minor == 0 && conn != NULL && strncasecmp(conn, "keep-alive", 10) == 0)
		rc = out_add(r, "Connection", "keep-alive");
	if (rc == VEP_OK && conn != NULL && strcasecmp(conn, "close") == 0) {
		out_remove(r, "Connection");
		rc = out_add(r, "Connection", "close");
	}
	if (rc != VEP_OK)
		return rc;
	mine = out_find(r, "Connection");
	*keep = r->head != NULL && head_keep_alive(r->head) &&
	    (mine == NULL || strcasecmp(mine, "close") != 0);
	if ((rc = write_head(r, buf, minor, status)) != VEP_OK)
		return rc;
	if (status != 304 && r->method != REQ_M_HEAD && len > 0 &&
	    evbuffer_add(buf, body, len) != 0)
		return VEP_ERR_NOMEM;
	return VEP_OK;
}

void
req_reply(struct req *r, int status, const char *ctype, const char *body, size_t len,
    unsigned flags)
{
	struct evbuffer *buf = evbuffer_new();
	char num[64];
	int rc = buf != NULL ? VEP_OK : VEP_ERR_NOMEM, keep = 0;

	if (rc == VEP_OK && status != 304) {
		/* Set even for HEAD, which gets no body: the length a GET
		 * would have. */
		num[put_decimal(num, len)] = '\0';
		if ((rc = req_add_header(r, "Content-Type", ctype)) == VEP_OK)
			rc = req_add_header(r, "Content-Length", num);
	}
	if (rc == VEP_OK)
		rc = out_add(r, "X-Content-Type-Options", "nosniff");
	if (rc == VEP_OK)
		rc = out_add(r, "Referrer-Policy", "no-referrer");
	if (rc == VEP_OK && r->link.hsts != NULL)
		rc = out_add(r, "Strict-Transport-Security", r->link.hsts);
	if (rc == VEP_OK && out_find(r, "Content-Security-Policy") == NULL)
		rc = out_add(r, "Content-Security-Policy", default_csp);
	if (rc == VEP_OK) {
		if (flags & REQ_F_CACHE) {
			long age = authority_cfg(r->a)->max_age_s;
			size_t n = sizeof("public, max-age=") - 1;

			memcpy(num, "public, max-age=", n);
			n += put_decimal(num + n, (unsigned long long)(age > 0 ? age : 0));
			num[n] = '\0';
			rc = out_add(r, "Cache-Control", num);
		} else {
			rc = out_add(r, "Cache-Control", flags & REQ_F_REVALIDATE ? "no-cache" :
			    "no-store");
		}
	}
	if (rc == VEP_OK && (flags & REQ_F_CORS))
		rc = out_add(r, "Access-Control-Allow-Origin", "*");
	if (rc == VEP_OK)
		rc = write_response(r, buf, status, body, len, &keep);
	if (rc != VEP_OK) {
		/* Nothing sent yet: the one reply becomes a bare 500. */
		char raw[REQ_RAW_BUFSZ];
		size_t n = req_raw_reply(raw, sizeof(raw), REQ_ERR_INTERNAL, NULL, r->link.hsts,
		    NULL);

		log_error(&r->a->log, "out of memory for a response");
		status = 500;
		keep = 0;
		if (buf != NULL)
			evbuffer_drain(buf, evbuffer_get_length(buf));
		if (buf == NULL || n == 0 || evbuffer_add(buf, raw, n) != 0) {
			access_log(r, status, 0);
			if (buf != NULL)
				evbuffer_free(buf);
			req_abandon(r);
			return;
		}
	}
	access_log(r, status, len);
	if (r->link.reply != NULL)
		r->link.reply(r->link.conn, buf, keep);
	evbuffer_free(buf);
	req_free(r);
}

void
req_reply_tagged(struct req *r, const char *ctype, const char *body, size_t len,
    const char *etag, unsigned flags)
{
	int notmod = etag_none_match(req_header(r, "If-None-Match"), etag);

	if (req_add_header(r, "ETag", etag) != 0) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply(r, notmod ? 304 : 200, ctype, body, notmod ? 0 : len, flags);
}

/* 1 when a response header named name (any case) is already set. */
static int
has_out_header(const struct req *r, const char *name)
{
	return out_find(r, name) != NULL;
}

void
req_reply_error(struct req *r, int err)
{
	const char *message;
	const struct req_error_row *e = error_row(err, &message);
	char body[192];
	int n;

	/* Every 503 tells the client when to come back (a handler may have
	 * said a time of its own already). */
	if (e->status == 503 && !has_out_header(r, "Retry-After"))
		(void)req_add_header(r, "Retry-After", REQ_RETRY_AFTER_DEFAULT);
	/* The table's messages need no escaping. */
	if (r->shape == REQ_SHAPE_PERSONA)
		n = snprintf(body, sizeof(body), "{\"status\":\"failure\",\"reason\":\"%s\"}",
		    message);
	else
		n = snprintf(body, sizeof(body), "{\"error\":\"%s\"}", message);
	req_reply(r, e->status, "application/json", body, (size_t)n, 0);
}

void
req_reply_method(struct req *r, unsigned allowed)
{
	char allow[128];
	size_t i, o = 0;

	allow[0] = '\0';
	for (i = 0; i < NMETHODS; i++) {
		if (allowed & req_methods[i].bit)
			o += (size_t)snprintf(allow + o, sizeof(allow) - o, "%s%s",
			    o ? ", " : "", req_methods[i].name);
	}
	req_add_header(r, "Allow", allow);
	req_reply_error(r, REQ_ERR_METHOD);
}

void
req_reply_error_text(struct req *r, int err, const char *message)
{
	const struct req_error_row *e = error_row(err, NULL);
	json_t *o;

	/* A 5xx names no details, whatever the caller had to say. */
	if (message == NULL || message[0] == '\0' || e->status >= 500 ||
	    (o = r->shape == REQ_SHAPE_PERSONA
	    ? json_pack("{ssss}", "status", "failure", "reason", message)
	    : json_pack("{ss}", "error", message)) == NULL) {
		req_reply_error(r, err);
		return;
	}
	req_reply_json(r, e->status, o);
	json_decref(o);
}

void
req_reply_json(struct req *r, int status, const json_t *body)
{
	char *text = json_dumps(body, JSON_COMPACT);

	if (text == NULL) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply(r, status, "application/json", text, strlen(text), 0);
	vep_free_secret_str(text);
}

int
req_media_type_is(const char *ct, const char *mt)
{
	size_t n = strlen(mt);

	if (ct == NULL || strncasecmp(ct, mt, n) != 0)
		return 0;
	ct += n;
	while (*ct == ' ' || *ct == '\t')
		ct++;
	return *ct == '\0' || *ct == ';';
}

/* 1 when a Content-Type value is application/json, with any parameters
 * but a charset other than utf-8. */
static int
json_content_type(const char *ct)
{
	const char *p;

	if (!req_media_type_is(ct, "application/json"))
		return 0;
	/* JSON is UTF-8 (RFC 8259); any other declared charset is a lie
	 * or a different document. */
	for (p = strchr(ct, ';'); p != NULL; p = strchr(p + 1, ';')) {
		const char *q = p + 1;
		while (*q == ' ' || *q == '\t')
			q++;
		if (strncasecmp(q, "charset=", 8) == 0) {
			q += 8;
			if (*q == '"')
				q++;
			if (strncasecmp(q, "utf-8", 5) != 0 ||
			    (q[5] != '\0' && q[5] != ';' && q[5] != '"' && q[5] != ' '))
				return 0;
		}
	}
	return 1;
}

int
req_read_json(struct req *r, json_t **out)
{
	size_t len = r->content_len;
	json_t *o = NULL;
	int rc;

	*out = NULL;
	if (!json_content_type(req_header(r, "Content-Type")))
		return REQ_ERR_MEDIA_TYPE;
	if (len > LIMIT_BODY_BYTES)
		return REQ_ERR_TOO_LARGE; /* the scanner normally stops it first */
	if (len == 0 || r->content == NULL)
		return REQ_ERR_BAD_JSON;
	rc = vep_json_parse_object((const char *)r->content, len, &o);
	/* The body may be a password: wiped now, not when r goes. */
	vep_free_secret(r->content, len);
	r->content = NULL;
	r->content_len = 0;
	if (rc != 0)
		return rc == VEP_ERR_NOMEM ? REQ_ERR_INTERNAL : REQ_ERR_BAD_JSON;
	*out = o;
	return 0;
}

void
req_abandon(struct req *r)
{
	if (r->link.abandon != NULL)
		r->link.abandon(r->link.conn);
	r->link.reply = NULL;
	r->link.abandon = NULL;
	req_free(r);
}

int
req_check_fields(const struct req *r, const char *const *known, char why[REQ_WHY_BUFSZ])
{
	/* The first 64 bytes of a name, each escaped as at most 4, and room
	 * for log_escape's "..." and NUL (it never cuts this short). */
	char name[64 * 4 + 8];
	const char *key;
	json_t *v;
	size_t i;

	why[0] = '\0';
	json_object_foreach(r->body, key, v) {
		for (i = 0; known[i] != NULL && strcmp(known[i], key) != 0; i++)
			;
		if (known[i] != NULL)
			continue;
		/* The name is the client's own input: escaped and bounded. */
		log_escape(name, sizeof(name), key, strlen(key) > 64 ? 64 : strlen(key));
		snprintf(why, REQ_WHY_BUFSZ, "unknown field \"%s\"", name);
		return REQ_ERR_BAD_REQUEST;
	}
	return 0;
}
