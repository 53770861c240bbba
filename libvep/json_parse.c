/*
 * json_parse.c - the strict reader of untrusted JSON objects (contract:
 * vep_json_parse_object in util.h).
 *
 * Owns the one place where untrusted text becomes a jansson tree. It
 * accepts exactly the texts jansson 2.14's json_loadb accepts with
 * JSON_REJECT_DUPLICATES when they are one object, and builds the same tree
 * (same members, same order, same values): tests/unit/test_json_parse.c
 * holds the two side by side on every case it has. It reads the buffer in
 * place instead: jansson's lexer takes every byte through a stream callback
 * and a token buffer, which cost a certificate request about 100,000
 * instructions for its 1 KB body (most of it the key's 617 digits), in
 * the network process and again in the key process.
 *
 * It must never accept what jansson refuses (a second reader of the same
 * text must not see something else), never recurse past jansson's depth,
 * and never leave decoded text (a password, say) in freed memory.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "secmem.h"
#include "util.h"

_Static_assert(sizeof(json_int_t) == sizeof(int64_t), "json_int_t is 64 bits");

/* A number's text as strtod gets it, when it is short enough for the
 * stack; longer ones (digits nobody sends) go to the heap. */
#define NUMBER_STACK 64

struct rd {
	const unsigned char *p, *end;
	/* Strings with escapes or non-ASCII bytes are decoded here, one after
	 * the other: a key stays put (used grows past it) while its value is
	 * read. Decoded text is never longer than its source, so the input's
	 * length is room for all of it. */
	char *scratch;
	size_t cap, used;
	int rc;                        /* the first failure */
};

/* 1 for the bytes that stand for themselves inside a string: printable
 * ASCII and DEL, but '"' (0x22) and '\\' (0x5c). */
static const unsigned char plain[256] = {
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	1, 1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	/* 0x80-0xff: UTF-8, checked on the slow path */
};

static json_t *read_value(struct rd *r, unsigned depth);

static json_t *
fail(struct rd *r, int rc)
{
	if (r->rc == VEP_OK)
		r->rc = rc;
	return NULL;
}

static int
is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static void
skip_ws(struct rd *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' ||
	    *r->p == '\t'))
		r->p++;
}

/* Four hex digits at p (before end) as a number, or -1. */
static long
hex4(const unsigned char *p, const unsigned char *end)
{
	long v = 0;

	if (end - p < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		unsigned char c = p[i];

		v <<= 4;
		if (is_digit(c))
			v += c - '0';
		else if (c >= 'a' && c <= 'f')
			v += c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v += c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static size_t
utf8_put(char *o, uint32_t cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | cp >> 6);
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | cp >> 12);
		o[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | cp >> 18);
	o[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* The escape after a backslash at *q (q past the backslash) decoded to
 * out; *q moves past it. Returns the bytes written, or 0 when it is not
 * an escape jansson takes (\u0000 included: jansson refuses a NUL in
 * every key and every string without JSON_ALLOW_NUL). */
static size_t
unescape(const unsigned char **q, const unsigned char *end, char *out)
{
	const unsigned char *p = *q;
	long cp, lo;

	if (p >= end)
		return 0;
	*q = p + 1;
	switch (*p) {
	case '"': case '\\': case '/': *out = (char)*p; return 1;
	case 'b': *out = '\b'; return 1;
	case 'f': *out = '\f'; return 1;
	case 'n': *out = '\n'; return 1;
	case 'r': *out = '\r'; return 1;
	case 't': *out = '\t'; return 1;
	case 'u': break;
	default: return 0;
	}
	if ((cp = hex4(p + 1, end)) < 0 || cp == 0 || (cp >= 0xdc00 && cp <= 0xdfff))
		return 0;
	p += 5;
	if (cp >= 0xd800 && cp <= 0xdbff) {
		/* A high surrogate takes the low one of its pair at once. */
		if (end - p < 2 || p[0] != '\\' || p[1] != 'u' || (lo = hex4(p + 2, end)) < 0 ||
		    lo < 0xdc00 || lo > 0xdfff)
			return 0;
		cp = ((cp - 0xd800) << 10) + (lo - 0xdc00) + 0x10000;
		p += 6;
	}
	*q = p;
	return utf8_put(out, (uint32_t)cp);
}

/* The rest of a string from start (just past its opening quote), which has
 * an escape or a byte over 0x7f: decoded into the scratch buffer at used. */
static int
read_string_slow(struct rd *r, const unsigned char *start, const char **s, size_t *n)
{
	const unsigned char *q = start;
	size_t o, k;
	char *out;

	if (r->scratch == NULL) {
		if ((r->scratch = malloc(r->cap)) == NULL)
			return VEP_ERR_NOMEM;
	}
	out = r->scratch + r->used;
	o = 0;
	for (;;) {
		if (q >= r->end)
			return VEP_ERR_INVALID;
		if (plain[*q]) {
			out[o++] = (char)*q++;
		} else if (*q == '"') {
			break;
		} else if (*q == '\\') {
			q++;
			if ((k = unescape(&q, r->end, out + o)) == 0)
				return VEP_ERR_INVALID;
			o += k;
		} else if (*q < 0x20 || (k = vep_utf8_len(q, r->end)) == 0) {
			return VEP_ERR_INVALID;
		} else {
			memcpy(out + o, q, k);
			o += k;
			q += k;
		}
	}
	r->p = q + 1;
	*s = out;
	*n = o;
	return VEP_OK;
}

/* The string at r->p (its opening quote) as *s and *n: in the input itself
 * when it needs no decoding, which is every string of a certificate
 * request, else in the scratch buffer (valid until the next string). */
static int
read_string(struct rd *r, const char **s, size_t *n)
{
	const unsigned char *start = ++r->p;

	while (r->p < r->end && plain[*r->p])
		r->p++;
	if (r->p < r->end && *r->p == '"') {
		*s = (const char *)start;
		*n = (size_t)(r->p - start);
		r->p++;
		return VEP_OK;
	}
	return read_string_slow(r, start, s, n);
}

/* Digits from s to end as an integer, or -1 past int64 (strtoll's
 * ERANGE, which jansson refuses). */
static int
to_int(const unsigned char *s, const unsigned char *end, int neg, json_int_t *out)
{
	uint64_t v = 0, limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;

	for (; s < end; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (limit - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (!neg)
		*out = (json_int_t)v;
	else
		*out = v == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(json_int_t)v;
	return 0;
}

/* The text from s to end (a JSON number with a fraction or exponent) as
 * strtod reads it in the C locale, whatever this thread's locale says
 * (jansson swaps in the locale's decimal point to the same effect). */
static json_t *
to_real(struct rd *r, const unsigned char *s, const unsigned char *end)
{
	char stack[NUMBER_STACK], *text = stack;
	size_t n = (size_t)(end - s);
	locale_t c, old;
	double d;
	int e;
	json_t *v;

	if (n >= sizeof(stack) && (text = malloc(n + 1)) == NULL)
		return fail(r, VEP_ERR_NOMEM);
	memcpy(text, s, n);
	text[n] = '\0';
	if ((c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0)) == (locale_t)0) {
		if (text != stack)
			free(text);
		return fail(r, VEP_ERR_NOMEM);
	}
	old = uselocale(c);
	errno = 0;
	d = strtod(text, NULL);
	e = errno;
	uselocale(old);
	freelocale(c);
	if (text != stack)
		free(text);
	if ((d == HUGE_VAL || d == -HUGE_VAL) && e == ERANGE)
		return fail(r, VEP_ERR_INVALID); /* jansson: "real number overflow" */
	if ((v = json_real(d)) == NULL)
		return fail(r, VEP_ERR_NOMEM);
	return v;
}

/* -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at r->p: an integer when
 * it has neither fraction nor exponent, else a real. */
static json_t *
read_number(struct rd *r)
{
	const unsigned char *s = r->p, *q = s, *end = r->end;
	json_int_t i;
	json_t *v;
	int neg = 0, real = 0;

	if (*q == '-') {
		neg = 1;
		q++;
	}
	if (q >= end || !is_digit(*q))
		return fail(r, VEP_ERR_INVALID);
	if (*q == '0') {
		if (++q < end && is_digit(*q))
			return fail(r, VEP_ERR_INVALID);
	} else {
		while (q < end && is_digit(*q))
			q++;
	}
	if (q < end && *q == '.') {
		if (++q >= end || !is_digit(*q))
			return fail(r, VEP_ERR_INVALID);
		while (q < end && is_digit(*q))
			q++;
		real = 1;
	}
	if (q < end && (*q == 'e' || *q == 'E')) {
		if (++q < end && (*q == '+' || *q == '-'))
			q++;
		if (q >= end || !is_digit(*q))
			return fail(r, VEP_ERR_INVALID);
		while (q < end && is_digit(*q))
			q++;
		real = 1;
	}
	r->p = q;
	if (real)
		return to_real(r, s, q);
	if (to_int(s + neg, q, neg, &i) != 0)
		return fail(r, VEP_ERR_INVALID);
	if ((v = json_integer(i)) == NULL)
		return fail(r, VEP_ERR_NOMEM);
	return v;
}

static json_t *
read_literal(struct rd *r, const char *word, size_t n, json_t *v)
{
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
		return fail(r, VEP_ERR_INVALID);
	r->p += n;
	return v;
}

/* After a member or an element: 1 at a ',' (passed, with the white space
 * after it: another one follows), 0 at close (passed: the container
 * ends), -1 at anything else. */
static int
next_item(struct rd *r, unsigned char close)
{
	skip_ws(r);
	if (r->p < r->end && *r->p == ',') {
		r->p++;
		skip_ws(r);
		return 1;
	}
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return 0;
	}
	return -1;
}

/* At an opening '{' or '[': passes it and the white space after it; 1
 * when close follows at once (passed too: the container is empty). */
static int
open_empty(struct rd *r, unsigned char close)
{
	r->p++;
	skip_ws(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		return 1;
	}
	return 0;
}

static json_t *
read_object(struct rd *r, unsigned depth)
{
	json_t *o, *v;
	const char *key;
	size_t klen, used;
	int rc, more;

	if ((o = json_object()) == NULL)
		return fail(r, VEP_ERR_NOMEM);
	if (open_empty(r, '}'))
		return o;
	for (;;) {
		if (r->p >= r->end || *r->p != '"') {
			rc = VEP_ERR_INVALID;
			break;
		}
		if ((rc = read_string(r, &key, &klen)) != VEP_OK)
			break;
		if (json_object_getn(o, key, klen) != NULL) {
			rc = VEP_ERR_INVALID; /* JSON_REJECT_DUPLICATES */
			break;
		}
		skip_ws(r);
		if (r->p >= r->end || *r->p != ':') {
			rc = VEP_ERR_INVALID;
			break;
		}
		r->p++;
		skip_ws(r);
		/* A decoded key stays in the scratch buffer while the value,
		 * which may decode strings of its own, is read. */
		used = r->used;
		if (r->scratch != NULL && key == r->scratch + r->used)
			r->used += klen;
		v = read_value(r, depth + 1);
		r->used = used;
		if (v == NULL) {
			rc = VEP_ERR_INVALID;
			break;
		}
		if (json_object_setn_new_nocheck(o, key, klen, v) != 0) {
			rc = VEP_ERR_NOMEM;
			break;
		}
		if ((more = next_item(r, '}')) == 0)
			return o;
		if (more < 0) {
			rc = VEP_ERR_INVALID;
			break;
		}
	}
	json_decref(o);
	return fail(r, rc);
}

static json_t *
read_array(struct rd *r, unsigned depth)
{
	json_t *a, *v;
	int more;

	if ((a = json_array()) == NULL)
		return fail(r, VEP_ERR_NOMEM);
	if (open_empty(r, ']'))
		return a;
	for (;;) {
		if ((v = read_value(r, depth + 1)) == NULL)
			break;
		if (json_array_append_new(a, v) != 0) {
			fail(r, VEP_ERR_NOMEM);
			break;
		}
		if ((more = next_item(r, ']')) == 0)
			return a;
		if (more < 0) {
			fail(r, VEP_ERR_INVALID);
			break;
		}
	}
	json_decref(a);
	return NULL;
}

/* The value at r->p (no white space before it), nested depth deep (the
 * outermost object is 1): jansson refuses values deeper than
 * JSON_PARSER_MAX_DEPTH, and so does this. */
static json_t *
read_value(struct rd *r, unsigned depth)
{
	const char *s;
	size_t n;
	json_t *v;
	int rc;

	if (depth > JSON_PARSER_MAX_DEPTH || r->p >= r->end)
		return fail(r, VEP_ERR_INVALID);
	switch (*r->p) {
	case '{':
		return read_object(r, depth);
	case '[':
		return read_array(r, depth);
	case '"':
		if ((rc = read_string(r, &s, &n)) != VEP_OK)
			return fail(r, rc);
		if ((v = json_stringn_nocheck(s, n)) == NULL)
			return fail(r, VEP_ERR_NOMEM);
		return v;
	case 't':
		return read_literal(r, "true", 4, json_true());
	case 'f':
		return read_literal(r, "false", 5, json_false());
	case 'n':
		return read_literal(r, "null", 4, json_null());
	default:
		if (*r->p == '-' || is_digit(*r->p))
			return read_number(r);
		return fail(r, VEP_ERR_INVALID);
	}
}

int
vep_json_parse_object(const char *text, size_t len, json_t **out)
{
	struct rd r = { 0 };
	json_t *v;

	if (out != NULL)
		*out = NULL;
	if (text == NULL || out == NULL)
		return VEP_ERR_ARG;
	if (len > VEP_JSON_MAX_BYTES)
		return VEP_ERR_TOOBIG;
	/* jansson reads an embedded NUL as the end of a string only with
	 * some flags; refused outright, so no two readers can disagree. */
	if (memchr(text, '\0', len) != NULL)
		return VEP_ERR_INVALID;
	r.p = (const unsigned char *)text;
	r.end = r.p + len;
	r.cap = len;
	skip_ws(&r);
	/* One object, and nothing after it but white space. */
	if (r.p >= r.end || *r.p != '{')
		return VEP_ERR_INVALID;
	if ((v = read_object(&r, 1)) != NULL) {
		skip_ws(&r);
		if (r.p != r.end) {
			json_decref(v);
			v = NULL;
			r.rc = VEP_ERR_INVALID;
		}
	}
	if (r.scratch != NULL) {
		vep_memzero(r.scratch, r.cap);
		free(r.scratch);
	}
	if (v == NULL)
		return r.rc != VEP_OK ? r.rc : VEP_ERR_INVALID;
	*out = v;
	return VEP_OK;
}
