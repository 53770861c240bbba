/*
 * assertion.c - owns assertions ({"aud","exp"} signed with the user key),
 * backed assertions ("cert~assertion"), their verification as a relying
 * party's verifier does it, and the audience (origin) comparison.
 *
 * It must never accept a chain of more than one certificate (the deployed
 * verifiers refuse them), never let a check pass on a parse it could not
 * complete (a malformed audience matches nothing), and never decide which
 * issuer may speak for an email: the caller resolves that (support document,
 * delegation) and passes the answer in.
 */
#include "assertion.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "err.h"
#include "util.h"

/* Separator between certificate and assertion in a backed assertion. */
#define BACKED_SEP '~'
/* Longest audience (origin URL) considered, characters: far above any real
 * origin, small enough that a hostile one costs nothing to compare. */
#define AUDIENCE_MAX_CHARS 2048
/* Longest host inside an audience: a DNS name or a bracketed IPv6. */
#define AUDIENCE_HOST_MAX 255
/* Largest port number. */
#define AUDIENCE_PORT_MAX 65535

#define ASSERTION_AUD "aud"
#define ASSERTION_EXP "exp"
#define ASSERTION_IAT "iat"

/* The schemes an audience may use and their default ports: a table, so
 * adding one is one line. */
static const struct {
	const char *name;
	unsigned port;
} audience_schemes[] = {
	{ "http", 80 },
	{ "https", 443 },
};

/* Which side of the comparison a text is: the relying party's (what it
 * hands its verifier, maybe hand-written) or the assertion's aud (written
 * by the user agent, signed, so trusted to be an origin). */
enum origin_side {
	ORIGIN_RP,      /* scheme optional (http), path at most "/" */
	ORIGIN_AUD,     /* scheme required, anything after the authority ignored */
};

struct origin {
	const char *scheme;     /* points into audience_schemes */
	const char *host;       /* into the parsed text, not NUL-terminated */
	size_t host_len;
	unsigned port;
};

static int
is_host_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '-' || c == '.';
}

static int
is_v6_char(unsigned char c)
{
	return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
	    (c >= '0' && c <= '9') || c == ':' || c == '.';
}

/* 1 when s (NUL-terminated) is at most AUDIENCE_MAX_CHARS printable ASCII
 * characters without a space. */
static int
origin_text_ok(const char *s)
{
	size_t len, i;

	if (s == NULL || (len = strnlen(s, AUDIENCE_MAX_CHARS + 1)) > AUDIENCE_MAX_CHARS)
		return 0;
	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] <= 0x20 || (unsigned char)s[i] >= 0x7f)
			return 0;
	return 1;
}

/* Reads "scheme://" at *p into o, moving *p past it. Without "://" the
 * relying party's side defaults to http, as Persona's verifier does
 * ("rp.example", "rp.example:8080"); the assertion's side has no default.
 * Returns 0 or -1 (an unknown scheme, or none where one is required). */
static int
origin_scheme(const char **p, enum origin_side side, struct origin *o)
{
	const char *sep = strstr(*p, "://");
	size_t i, n;

	if (sep == NULL) {
		if (side != ORIGIN_RP)
			return -1;
		o->scheme = audience_schemes[0].name;
		o->port = audience_schemes[0].port;
		return 0;
	}
	n = (size_t)(sep - *p);
	for (i = 0; i < sizeof audience_schemes / sizeof audience_schemes[0]; i++) {
		if (strlen(audience_schemes[i].name) == n &&
		    strncasecmp(*p, audience_schemes[i].name, n) == 0) {
			o->scheme = audience_schemes[i].name;
			o->port = audience_schemes[i].port;
			*p = sep + 3;
			return 0;
		}
	}
	return -1;
}

/* Reads a host (DNS name or bracketed IPv6 literal) at *p into o. */
static int
origin_host(const char **p, struct origin *o)
{
	const char *s = *p;

	if (*s == '[') {
		const char *end = strchr(s, ']');
		if (end == NULL || end == s + 1)
			return -1;
		for (const char *q = s + 1; q < end; q++)
			if (!is_v6_char((unsigned char)*q))
				return -1;
		o->host = s;
		o->host_len = (size_t)(end - s) + 1;
		*p = end + 1;
	} else {
		o->host = s;
		while (is_host_char((unsigned char)*s))
			s++;
		o->host_len = (size_t)(s - o->host);
		*p = s;
	}
	return o->host_len == 0 || o->host_len > AUDIENCE_HOST_MAX ? -1 : 0;
}

/* Reads ":port" at *p into o, if there is one. */
static int
origin_port(const char **p, struct origin *o)
{
	unsigned long port = 0;
	const char *s = *p, *d;

	if (*s != ':')
		return 0;
	d = ++s;
	while (*s >= '0' && *s <= '9' && s - d <= 5) {
		port = port * 10 + (unsigned long)(*s - '0');
		s++;
	}
	/* An empty port ("host:") is refused rather than defaulted: no
	 * browser writes an origin that way. */
	if (s == d || port == 0 || port > AUDIENCE_PORT_MAX)
		return -1;
	o->port = (unsigned)port;
	*p = s;
	return 0;
}

/* Checks what follows the authority. The relying party's side may end
 * there or with "/" (Persona's verifier refuses any other path: an RP that
 * passes a URL for its origin is told so rather than matched on a prefix);
 * the assertion's may go on with a path, query or fragment, ignored. Any
 * other character ('@' of userinfo, a stray one) is malformed. */
static int
origin_rest(const char *p, enum origin_side side)
{
	if (side == ORIGIN_RP)
		return strcmp(p, "") == 0 || strcmp(p, "/") == 0 ? 0 : -1;
	return *p == '\0' || *p == '/' || *p == '?' || *p == '#' ? 0 : -1;
}

/* Parses one side of an audience comparison into o. Returns 0 or -1. */
static int
origin_parse(const char *s, enum origin_side side, struct origin *o)
{
	const char *p = s;

	memset(o, 0, sizeof *o);
	if (!origin_text_ok(s))
		return -1;
	if (origin_scheme(&p, side, o) != 0 || origin_host(&p, o) != 0 ||
	    origin_port(&p, o) != 0)
		return -1;
	return origin_rest(p, side);
}

int
vep_audience_match(const char *rp, const char *aud)
{
	struct origin a, b;

	if (origin_parse(rp, ORIGIN_RP, &a) != 0 || origin_parse(aud, ORIGIN_AUD, &b) != 0)
		return 0;
	return a.scheme == b.scheme && a.port == b.port && a.host_len == b.host_len &&
	    strncasecmp(a.host, b.host, a.host_len) == 0;
}

int
vep_assertion_sign(const vep_key *user_key, const char *audience,
    int64_t exp_ms, char **out)
{
	int ret = VEP_ERR_ARG;
	json_t *payload = NULL;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (user_key == NULL || audience == NULL || exp_ms < 0)
		goto out;
	/* Refuse to sign for an audience that a verifier given the same
	 * text would not match: an origin, at most with "/". */
	if (!vep_audience_match(audience, audience))
		goto out;
	if (!vep_key_has_private(user_key)) {
		ret = VEP_ERR_NOKEY;
		goto out;
	}
	ret = VEP_ERR_NOMEM;
	if ((payload = json_object()) == NULL ||
	    json_object_set_new(payload, ASSERTION_AUD, json_string(audience)) != 0 ||
	    json_object_set_new(payload, ASSERTION_EXP, json_integer(exp_ms)) != 0)
		goto out;
	ret = vep_jws_sign(user_key, payload, out);
out:
	json_decref(payload);
	return ret;
}

int
vep_backed_join(const char *cert, const char *assertion, char **out)
{
	int ret = VEP_ERR_ARG;
	size_t clen, alen;
	char *s = NULL;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (cert == NULL || assertion == NULL)
		goto out;
	clen = strlen(cert);
	alen = strlen(assertion);
	if (clen == 0 || alen == 0 || memchr(cert, BACKED_SEP, clen) != NULL ||
	    memchr(assertion, BACKED_SEP, alen) != NULL)
		goto out;
	if (clen + 1 + alen > VEP_BACKED_MAX_BYTES) {
		ret = VEP_ERR_TOOBIG;
		goto out;
	}
	if ((s = malloc(clen + 1 + alen + 1)) == NULL) {
		ret = VEP_ERR_NOMEM;
		goto out;
	}
	memcpy(s, cert, clen);
	s[clen] = BACKED_SEP;
	memcpy(s + clen + 1, assertion, alen + 1);
	*out = s;
	ret = VEP_OK;
out:
	return ret;
}

int
vep_backed_parse(const char *text, size_t len, vep_backed **out)
{
	int ret = VEP_ERR_INVALID;
	vep_backed *b = NULL;
	const char *sep;
	const json_t *aud;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (text == NULL)
		return VEP_ERR_ARG;
	if (len > VEP_BACKED_MAX_BYTES)
		return VEP_ERR_TOOBIG;
	if (memchr(text, '\0', len) != NULL)
		return VEP_ERR_INVALID;
	if ((sep = memchr(text, BACKED_SEP, len)) == NULL)
		return VEP_ERR_INVALID;
	size_t clen = (size_t)(sep - text);
	const char *a = sep + 1;
	size_t alen = len - clen - 1;
	/* cert~cert~assertion: a chain the deployed verifiers refuse. */
	if (memchr(a, BACKED_SEP, alen) != NULL)
		return VEP_ERR_CHAIN;
	if (clen == 0 || alen == 0)
		return VEP_ERR_INVALID;

	if ((b = calloc(1, sizeof *b)) == NULL)
		return VEP_ERR_NOMEM;
	b->iat_ms = -1;
	if ((ret = vep_cert_parse(text, clen, &b->cert)) != 0 ||
	    (ret = vep_jws_parse(a, alen, &b->assertion)) != 0)
		goto out;
	ret = VEP_ERR_INVALID;
	aud = json_object_get(b->assertion->payload, ASSERTION_AUD);
	if (!json_is_string(aud) || json_string_length(aud) == 0 ||
	    strlen(json_string_value(aud)) != json_string_length(aud))
		goto out;
	if (vep_json_get_ms(b->assertion->payload, ASSERTION_EXP, &b->exp_ms) != 0)
		goto out;
	if (json_object_get(b->assertion->payload, ASSERTION_IAT) != NULL &&
	    vep_json_get_ms(b->assertion->payload, ASSERTION_IAT, &b->iat_ms) != 0)
		goto out;
	if ((b->audience = strdup(json_string_value(aud))) == NULL) {
		ret = VEP_ERR_NOMEM;
		goto out;
	}
	*out = b;
	b = NULL;
	ret = VEP_OK;
out:
	vep_backed_free(b);
	return ret;
}

int
vep_backed_verify(const vep_backed *b, const char *audience,
    const char *issuer, const vep_key *const *keys, size_t nkeys, int64_t now_ms)
{
	int ret = VEP_ERR_ARG;

	if (b == NULL || b->cert == NULL || b->assertion == NULL ||
	    b->audience == NULL || audience == NULL || issuer == NULL)
		goto out;
	/* Host names compare case-insensitively; the caller's resolution of
	 * the email's domain already chose which issuer is acceptable. */
	if (strcasecmp(b->cert->issuer, issuer) != 0) {
		ret = VEP_ERR_ISSUER;
		goto out;
	}
	if ((ret = vep_cert_verify(b->cert, keys, nkeys, now_ms)) != 0)
		goto out;
	/* A header alg other than the certified key's means the certified
	 * key did not sign it: a bad signature, not an unknown algorithm. */
	ret = vep_jws_verify(b->assertion, b->cert->pubkey);
	if (ret == VEP_ERR_ALG)
		ret = VEP_ERR_BADSIG;
	if (ret != 0)
		goto out;
	/* The same window, skew included, as the certificate's. */
	if ((ret = vep_time_check(b->iat_ms, b->exp_ms, now_ms)) != 0)
		goto out;
	if (!vep_audience_match(audience, b->audience)) {
		ret = VEP_ERR_AUDIENCE;
		goto out;
	}
	ret = VEP_OK;
out:
	return ret;
}

void
vep_backed_free(vep_backed *b)
{
	if (b == NULL)
		return;
	vep_cert_free(b->cert);
	vep_jws_free(b->assertion);
	free(b->audience);
	free(b);
}
