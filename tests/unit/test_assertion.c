/*
 * test_assertion.c - assertions and backed assertions (libvep/assertion.c)
 * with real keys: signing, joining, parsing (chains, shapes, limits) and
 * every verification rule (the clock skew at its edges), plus the audience
 * comparison case by case, and the forgery an unsafe DSA user key allowed
 * (issue 11) refused.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/dsa.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "assertion.h"
#include "b64url.h"
#include "err.h"
#include "harness.h"

#define T_IAT 1700000000000LL
#define T_CERT_EXP (T_IAT + 3600 * 1000LL)
#define T_ASSERT_EXP (T_IAT + 120 * 1000LL)
#define T_NOW (T_IAT + 1000)
#define AUD "https://rp.example"
#define ISS "example.com"
#define SKEW VEP_CLOCK_SKEW_MS

static vep_key *domain_key, *other_domain_key, *user_key, *other_user_key, *dsa_user;

static char *
make_cert(const vep_key *pub, int64_t iat, int64_t exp)
{
	struct vep_cert_params p = {
		.issuer = ISS, .email = "alice@example.com", .pubkey = pub,
		.iat_ms = iat, .exp_ms = exp,
	};
	char *out = NULL;
	return vep_cert_sign(domain_key, &p, &out) == 0 ? out : NULL;
}

static char *
sign_text(const vep_key *k, const char *json)
{
	json_error_t e;
	json_t *p = json_loads(json, 0, &e);
	char *out = NULL;
	if (p == NULL || vep_jws_sign(k, p, &out) != 0)
		out = NULL;
	json_decref(p);
	return out;
}

/* Builds cert~assertion with the given pieces; NULL pieces get defaults. */
static char *
backed(const char *cert, const char *assertion)
{
	char *c = cert ? strdup(cert) : make_cert(user_key, T_IAT, T_CERT_EXP);
	char *a = NULL, *out = NULL;
	if (assertion)
		a = strdup(assertion);
	else
		vep_assertion_sign(user_key, AUD, T_ASSERT_EXP, &a);
	if (c && a)
		vep_backed_join(c, a, &out);
	free(c);
	free(a);
	return out;
}

static int
verify_text(const char *text, const char *aud, const char *iss,
    const vep_key *dk, int64_t now)
{
	vep_backed *b = NULL;
	int r = vep_backed_parse(text, strlen(text), &b);
	if (r != 0)
		return r;
	const vep_key *keys[] = { dk };
	r = vep_backed_verify(b, aud, iss, keys, 1, now);
	vep_backed_free(b);
	return r;
}

static void
test_assertion_sign_payload(void)
{
	char *a = NULL;
	ASSERT_EQ(vep_assertion_sign(user_key, AUD, T_ASSERT_EXP, &a), 0);
	vep_jws *j = NULL;
	ASSERT_EQ(vep_jws_parse(a, strlen(a), &j), 0);
	ASSERT_STREQ(j->alg->name, "RS128");
	char *pl = json_dumps(j->payload, JSON_COMPACT);
	char want[128];
	snprintf(want, sizeof want, "{\"aud\":\"%s\",\"exp\":%lld}", AUD, (long long)T_ASSERT_EXP);
	ASSERT_STREQ(pl, want);
	free(pl);
	vep_jws_free(j);
	free(a);

	ASSERT_EQ(vep_assertion_sign(dsa_user, AUD, T_ASSERT_EXP, &a), 0);
	ASSERT_EQ(vep_jws_parse(a, strlen(a), &j), 0);
	ASSERT_STREQ(j->alg->name, "DS128");
	vep_jws_free(j);
	free(a);

	a = (char *)1;
	ASSERT_EQ(vep_assertion_sign(user_key, "not a url", T_ASSERT_EXP, &a), VEP_ERR_ARG);
	ASSERT_TRUE(a == NULL);
	/* Only what a verifier given the same text matches: an origin, with
	 * "/" at most; neither a bare host nor a path. */
	ASSERT_EQ(vep_assertion_sign(user_key, "rp.example", T_ASSERT_EXP, &a), VEP_ERR_ARG);
	ASSERT_EQ(vep_assertion_sign(user_key, AUD "/path", T_ASSERT_EXP, &a), VEP_ERR_ARG);
	ASSERT_EQ(vep_assertion_sign(user_key, AUD "/", T_ASSERT_EXP, &a), 0);
	free(a);
	ASSERT_EQ(vep_assertion_sign(user_key, NULL, T_ASSERT_EXP, &a), VEP_ERR_ARG);
	ASSERT_EQ(vep_assertion_sign(user_key, AUD, -1, &a), VEP_ERR_ARG);
	ASSERT_EQ(vep_assertion_sign(NULL, AUD, 1, &a), VEP_ERR_ARG);
	vep_key *pub = NULL;
	ASSERT_EQ(vep_key_public_copy(user_key, &pub), 0);
	ASSERT_EQ(vep_assertion_sign(pub, AUD, 1, &a), VEP_ERR_NOKEY);
	vep_key_free(pub);
}

static void
test_join(void)
{
	char *out = (char *)1;
	ASSERT_EQ(vep_backed_join("a.b.c", "d.e.f", &out), 0);
	ASSERT_STREQ(out, "a.b.c~d.e.f");
	free(out);
	ASSERT_EQ(vep_backed_join("a~b", "d.e.f", &out), VEP_ERR_ARG);
	ASSERT_TRUE(out == NULL);
	ASSERT_EQ(vep_backed_join("a.b.c", "d~e", &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_backed_join("", "d.e.f", &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_backed_join("a.b.c", "", &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_backed_join(NULL, "x", &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_backed_join("x", "y", NULL), VEP_ERR_ARG);
	char *big = malloc(VEP_BACKED_MAX_BYTES);
	memset(big, 'x', VEP_BACKED_MAX_BYTES - 3);
	big[VEP_BACKED_MAX_BYTES - 3] = '\0';
	ASSERT_EQ(vep_backed_join(big, "y", &out), 0); /* exactly the limit */
	ASSERT_EQ(strlen(out), VEP_BACKED_MAX_BYTES - 1);
	free(out);
	ASSERT_EQ(vep_backed_join(big, "yy", &out), 0);
	ASSERT_EQ(strlen(out), VEP_BACKED_MAX_BYTES);
	free(out);
	ASSERT_EQ(vep_backed_join(big, "yyy", &out), VEP_ERR_TOOBIG);
	free(big);
}

static void
test_parse_and_verify(void)
{
	char *t = backed(NULL, NULL);
	vep_backed *b = NULL;
	ASSERT_TRUE(t != NULL);
	ASSERT_EQ(vep_backed_parse(t, strlen(t), &b), 0);
	ASSERT_STREQ(b->audience, AUD);
	ASSERT_EQ(b->exp_ms, T_ASSERT_EXP);
	ASSERT_EQ(b->iat_ms, -1);
	ASSERT_STREQ(b->cert->email, "alice@example.com");
	ASSERT_STREQ(b->cert->issuer, ISS);
	const vep_key *keys[] = { domain_key };
	ASSERT_EQ(vep_backed_verify(b, AUD, ISS, keys, 1, T_NOW), 0);
	ASSERT_EQ(vep_backed_verify(b, AUD, "EXAMPLE.com", keys, 1, T_NOW), 0);
	ASSERT_EQ(vep_backed_verify(b, AUD "/", ISS, keys, 1, T_NOW), 0);
	/* A relying party's audience with a path is refused (no prefix match). */
	ASSERT_EQ(vep_backed_verify(b, AUD "/path?q", ISS, keys, 1, T_NOW), VEP_ERR_AUDIENCE);
	ASSERT_EQ(vep_backed_verify(b, "https://RP.example:443", ISS, keys, 1, T_NOW), 0);
	ASSERT_EQ(vep_backed_verify(b, AUD, "other.example", keys, 1, T_NOW), VEP_ERR_ISSUER);
	ASSERT_EQ(vep_backed_verify(b, "http://rp.example", ISS, keys, 1, T_NOW), VEP_ERR_AUDIENCE);
	ASSERT_EQ(vep_backed_verify(b, "https://rp.example:8443", ISS, keys, 1, T_NOW),
	    VEP_ERR_AUDIENCE);
	ASSERT_EQ(vep_backed_verify(b, "https://evil.example", ISS, keys, 1, T_NOW),
	    VEP_ERR_AUDIENCE);
	ASSERT_EQ(vep_backed_verify(b, "garbage", ISS, keys, 1, T_NOW), VEP_ERR_AUDIENCE);
	/* Times: the assertion expires first, the certificate's iat bounds
	 * (each with the clock skew: test_clock_skew). */
	ASSERT_EQ(vep_backed_verify(b, AUD, ISS, keys, 1, T_ASSERT_EXP - 1), 0);
	ASSERT_EQ(vep_backed_verify(b, AUD, ISS, keys, 1, T_ASSERT_EXP + SKEW), VEP_ERR_EXPIRED);
	ASSERT_EQ(vep_backed_verify(b, AUD, ISS, keys, 1, T_CERT_EXP), VEP_ERR_EXPIRED);
	ASSERT_EQ(vep_backed_verify(b, AUD, ISS, keys, 1, T_IAT - SKEW - 1), VEP_ERR_NOTYET);
	const vep_key *wrong[] = { other_domain_key };
	ASSERT_EQ(vep_backed_verify(b, AUD, ISS, wrong, 1, T_NOW), VEP_ERR_BADSIG);
	ASSERT_EQ(vep_backed_verify(b, AUD, ISS, keys, 0, T_NOW), VEP_ERR_NOKEY);
	ASSERT_EQ(vep_backed_verify(NULL, AUD, ISS, keys, 1, T_NOW), VEP_ERR_ARG);
	ASSERT_EQ(vep_backed_verify(b, NULL, ISS, keys, 1, T_NOW), VEP_ERR_ARG);
	ASSERT_EQ(vep_backed_verify(b, AUD, NULL, keys, 1, T_NOW), VEP_ERR_ARG);
	vep_backed_free(b);
	vep_backed_free(NULL);
	free(t);
}

static void
test_cert_expired_before_assertion(void)
{
	char *c = make_cert(user_key, T_IAT, T_IAT + 500);
	char *t = backed(c, NULL);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_IAT + 500 + SKEW - 1), 0);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_IAT + 500 + SKEW), VEP_ERR_EXPIRED);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_IAT + 500 + SKEW + 1), VEP_ERR_EXPIRED);
	free(t);
	free(c);
}

static void
test_assertion_iat(void)
{
	char pl[256];
	snprintf(pl, sizeof pl, "{\"aud\":\"%s\",\"exp\":%lld,\"iat\":%lld}", AUD,
	    (long long)T_ASSERT_EXP, (long long)(T_NOW + 10));
	char *a = sign_text(user_key, pl);
	char *t = backed(NULL, a);
	vep_backed *b = NULL;
	ASSERT_EQ(vep_backed_parse(t, strlen(t), &b), 0);
	ASSERT_EQ(b->iat_ms, T_NOW + 10);
	vep_backed_free(b);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_NOW + 10 - SKEW - 1), VEP_ERR_NOTYET);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_NOW + 10 - SKEW), 0);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_NOW), 0);
	free(t);
	free(a);
}

/* The clock skew (cert.h), exactly at its edges, for the assertion's exp
 * and iat and, through vep_backed_verify, the certificate's iat. */
static void
test_clock_skew(void)
{
	const int64_t a_iat = T_NOW + 5000;
	char pl[256];
	snprintf(pl, sizeof pl, "{\"aud\":\"%s\",\"exp\":%lld,\"iat\":%lld}", AUD,
	    (long long)T_ASSERT_EXP, (long long)a_iat);
	char *a = sign_text(user_key, pl);
	char *t = backed(NULL, a);
	ASSERT_TRUE(t != NULL);
	/* assertion exp: accepted until the skew after it */
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_ASSERT_EXP + SKEW - 1), 0);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_ASSERT_EXP + SKEW), VEP_ERR_EXPIRED);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_ASSERT_EXP + SKEW + 1),
	    VEP_ERR_EXPIRED);
	/* assertion iat: accepted up to the skew before it */
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, a_iat - (SKEW - 1)), 0);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, a_iat - SKEW), 0);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, a_iat - (SKEW + 1)), VEP_ERR_NOTYET);
	free(t);
	free(a);

	/* certificate iat, the assertion (no iat) current */
	t = backed(NULL, NULL);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_IAT - (SKEW - 1)), 0);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_IAT - SKEW), 0);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_IAT - (SKEW + 1)), VEP_ERR_NOTYET);
	free(t);
	/* certificate exp: test_cert_expired_before_assertion */
}

static void
test_wrong_user_key(void)
{
	/* Assertion signed by another key of the same algorithm. */
	char *a = NULL;
	ASSERT_EQ(vep_assertion_sign(other_user_key, AUD, T_ASSERT_EXP, &a), 0);
	char *t = backed(NULL, a);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_NOW), VEP_ERR_BADSIG);
	free(t);
	free(a);
	/* Assertion signed with a DSA key while the certificate holds RSA. */
	ASSERT_EQ(vep_assertion_sign(dsa_user, AUD, T_ASSERT_EXP, &a), 0);
	t = backed(NULL, a);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_NOW), VEP_ERR_BADSIG);
	free(t);
	free(a);
	/* And the DSA pair done right verifies. */
	char *c = make_cert(dsa_user, T_IAT, T_CERT_EXP);
	ASSERT_EQ(vep_assertion_sign(dsa_user, AUD, T_ASSERT_EXP, &a), 0);
	t = backed(c, a);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_NOW), 0);
	free(t);
	free(a);
	free(c);
}

static char *
swap_middle(const char *jws, const char *from, const char *to)
{
	const char *d1 = strchr(jws, '.'), *d2 = strchr(d1 + 1, '.');
	uint8_t *pl = NULL;
	size_t n = 0;
	if (vep_b64url_decode(d1 + 1, (size_t)(d2 - d1 - 1), &pl, &n) != 0)
		return NULL;
	char *at = strstr((char *)pl, from);
	if (at == NULL) {
		free(pl);
		return NULL;
	}
	char buf[8192];
	snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - (char *)pl), (char *)pl, to,
	    at + strlen(from));
	free(pl);
	char *enc = vep_b64url_encode((const uint8_t *)buf, strlen(buf));
	char *out = malloc(strlen(jws) + strlen(enc) + 1);
	sprintf(out, "%.*s%s%s", (int)(d1 + 1 - jws), jws, enc, d2);
	free(enc);
	return out;
}

static void
test_tampered(void)
{
	char *a = NULL;
	ASSERT_EQ(vep_assertion_sign(user_key, AUD, T_ASSERT_EXP, &a), 0);
	char *fa = swap_middle(a, "rp.example", "rq.example");
	ASSERT_TRUE(fa != NULL);
	char *t = backed(NULL, fa);
	ASSERT_EQ(verify_text(t, "https://rq.example", ISS, domain_key, T_NOW), VEP_ERR_BADSIG);
	free(t);
	free(fa);

	char *c = make_cert(user_key, T_IAT, T_CERT_EXP);
	char *fc = swap_middle(c, "alice@", "bob@");
	ASSERT_TRUE(fc != NULL);
	t = backed(fc, a);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_NOW), VEP_ERR_BADSIG);
	free(t);
	free(fc);
	/* The certified key swapped for the attacker's: the cert breaks. */
	char *k1 = vep_key_to_json_text(user_key), *k2 = vep_key_to_json_text(other_user_key);
	fc = swap_middle(c, k1, k2);
	char *a2 = NULL;
	ASSERT_EQ(vep_assertion_sign(other_user_key, AUD, T_ASSERT_EXP, &a2), 0);
	t = backed(fc, a2);
	ASSERT_EQ(verify_text(t, AUD, ISS, domain_key, T_NOW), VEP_ERR_BADSIG);
	free(t);
	free(fc);
	free(a2);
	free(k1);
	free(k2);
	free(c);
	free(a);
}

static void
test_parse_shapes(void)
{
	vep_backed *b = (vep_backed *)1;
	ASSERT_EQ(vep_backed_parse("abc", 3, &b), VEP_ERR_INVALID);
	ASSERT_TRUE(b == NULL);
	ASSERT_EQ(vep_backed_parse("", 0, &b), VEP_ERR_INVALID);
	ASSERT_EQ(vep_backed_parse("~", 1, &b), VEP_ERR_INVALID);
	ASSERT_EQ(vep_backed_parse("a.b.c~", 6, &b), VEP_ERR_INVALID);
	ASSERT_EQ(vep_backed_parse("~a.b.c", 6, &b), VEP_ERR_INVALID);
	ASSERT_EQ(vep_backed_parse("a~b~c", 5, &b), VEP_ERR_CHAIN);
	ASSERT_EQ(vep_backed_parse("~~", 2, &b), VEP_ERR_CHAIN);
	ASSERT_EQ(vep_backed_parse("a~\0b", 4, &b), VEP_ERR_INVALID);
	ASSERT_EQ(vep_backed_parse(NULL, 0, &b), VEP_ERR_ARG);
	ASSERT_EQ(vep_backed_parse("a~b", 3, NULL), VEP_ERR_ARG);

	/* A real chain of two certificates. */
	char *c = make_cert(user_key, T_IAT, T_CERT_EXP), *a = NULL;
	ASSERT_EQ(vep_assertion_sign(user_key, AUD, T_ASSERT_EXP, &a), 0);
	char chain[16384];
	snprintf(chain, sizeof chain, "%s~%s~%s", c, c, a);
	ASSERT_EQ(vep_backed_parse(chain, strlen(chain), &b), VEP_ERR_CHAIN);
	/* Assertion and certificate swapped: the "cert" has no iss. */
	snprintf(chain, sizeof chain, "%s~%s", a, c);
	ASSERT_TRUE(vep_backed_parse(chain, strlen(chain), &b) < 0);

	/* Size limit: over it is TOOBIG before anything else. */
	char *big = malloc(VEP_BACKED_MAX_BYTES + 1);
	memset(big, 'A', VEP_BACKED_MAX_BYTES + 1);
	big[10] = '~';
	ASSERT_EQ(vep_backed_parse(big, VEP_BACKED_MAX_BYTES + 1, &b), VEP_ERR_TOOBIG);
	ASSERT_TRUE(vep_backed_parse(big, VEP_BACKED_MAX_BYTES, &b) != VEP_ERR_TOOBIG);
	free(big);

	/* Assertion payload shapes. */
	static const char *const bad_pl[] = {
		"{\"exp\":1}", "{\"aud\":5,\"exp\":1}", "{\"aud\":\"\",\"exp\":1}",
		"{\"aud\":\"https://rp.example\"}",
		"{\"aud\":\"https://rp.example\",\"exp\":\"1\"}",
		"{\"aud\":\"https://rp.example\",\"exp\":-1}",
		"{\"aud\":\"https://rp.example\",\"exp\":1,\"iat\":\"0\"}",
		"{\"aud\":[\"https://rp.example\"],\"exp\":1}",
	};
	for (size_t i = 0; i < sizeof bad_pl / sizeof bad_pl[0]; i++) {
		char *sa = sign_text(user_key, bad_pl[i]);
		char *t = backed(c, sa);
		ASSERT_TRUE(t != NULL);
		int r = vep_backed_parse(t, strlen(t), &b);
		if (r != VEP_ERR_INVALID)
			fprintf(stderr, "payload %zu: %d\n", i, r);
		ASSERT_EQ(r, VEP_ERR_INVALID);
		free(t);
		free(sa);
	}
	/* Unknown members are ignored, as deployed. */
	char *sa = sign_text(user_key, "{\"aud\":\"https://rp.example\",\"exp\":1,\"x\":{}}");
	char *t = backed(c, sa);
	ASSERT_EQ(vep_backed_parse(t, strlen(t), &b), 0);
	vep_backed_free(b);
	free(t);
	free(sa);
	free(c);
	free(a);
}

/* Every row of docs/PROTOCOL.md's table (Audience), and more: the
 * relying party's audience (rp) against the assertion's aud. Not
 * symmetric: rp may lack a scheme (http) and may not carry a path; aud
 * needs a scheme and its path is ignored. tests/interop/test_verdicts.js
 * puts the documented rows to Mozilla's verifier too. */
static const struct audience_case {
	const char *rp, *aud;
	int match;
} audience_cases[] = {
	/* scheme and default ports */
	{ "https://rp.example", "https://rp.example", 1 },
	{ "https://rp.example", "https://rp.example:443", 1 },
	{ "https://rp.example:443", "https://rp.example", 1 },
	{ "http://rp.example:80", "http://rp.example", 1 },
	{ "https://rp.example", "http://rp.example", 0 },
	{ "http://rp.example", "https://rp.example", 0 },
	{ "https://rp.example", "https://rp.example:80", 0 },
	{ "http://rp.example", "http://rp.example:443", 0 },
	{ "https://rp.example:8443", "https://rp.example", 0 },
	{ "http://rp.example:8080", "http://rp.example:8081", 0 },
	/* trailing slash and paths */
	{ "https://rp.example/", "https://rp.example", 1 },
	{ "https://rp.example", "https://rp.example/", 1 },
	{ "https://rp.example", "https://rp.example/a/b?q=1#f", 1 },
	{ "https://rp.example/path", "https://rp.example", 0 },
	{ "https://rp.example/path", "https://rp.example/path", 0 },
	{ "https://rp.example//", "https://rp.example", 0 },
	{ "https://rp.example?x=1", "https://rp.example", 0 },
	{ "https://rp.example#f", "https://rp.example", 0 },
	/* a missing scheme: the relying party's side means http */
	{ "rp.example", "http://rp.example", 1 },
	{ "rp.example", "http://rp.example:80", 1 },
	{ "rp.example", "https://rp.example", 0 },
	{ "rp.example/", "http://rp.example", 1 },
	{ "rp.example/path", "http://rp.example", 0 },
	{ "rp.example:8080", "http://rp.example:8080", 1 },
	{ "rp.example:8080", "https://rp.example:8080", 0 },
	{ "rp.example:8080", "http://rp.example", 0 },
	{ "rp.example:443", "https://rp.example", 0 },
	{ "rp.example:443", "http://rp.example:443", 1 },
	{ "localhost:10001", "http://localhost:10001", 1 },
	{ "http://rp.example", "rp.example", 0 },
	{ "rp.example", "rp.example", 0 },
	/* case: schemes and hosts compare without it */
	{ "HTTPS://RP.Example", "https://rp.example", 1 },
	{ "https://rp.example", "HTTPS://RP.EXAMPLE:443", 1 },
	{ "RP.EXAMPLE", "http://rp.example", 1 },
	/* IP literals: compared as text, as Persona's verifier does */
	{ "https://[::1]:8443", "https://[::1]:8443", 1 },
	{ "https://[2001:DB8::1]", "https://[2001:db8::1]:443", 1 },
	{ "[::1]:8080", "http://[::1]:8080", 1 },
	{ "https://[::1]", "https://[::2]", 0 },
	{ "https://[::1]", "https://[0:0::1]", 0 },
	{ "http://127.0.0.1:8080", "http://127.0.0.1:8080/", 1 },
	{ "127.0.0.1:8080", "http://127.0.0.1:8080", 1 },
	/* other hosts */
	{ "https://rp.example", "https://rp.example.evil", 0 },
	{ "https://rp.example", "https://evil.example", 0 },
	{ "https://rp.example.", "https://rp.example", 0 },
	/* ports: leading zeros are the number (Mozilla compares the text) */
	{ "https://rp.example:0443", "https://rp.example", 1 },
	{ "https://rp.example:65535", "https://rp.example:65535", 1 },
};

/* Texts malformed on both sides: never matched, by themselves or by a
 * well-formed origin on the other side. */
static const char *const audience_malformed[] = {
	"ftp://rp.example", "app://rp.example", "https://", "://rp.example",
	"https://rp.example:", "https://rp.example:0", "https://rp.example:65536",
	"https://rp.example:1234567", "https://user@rp.example", "rp.example@evil.example",
	"https://rp.example x", "https://rp.ex\xc3\xa4mple", "https://[::1", "https://[]",
	"https://[zz]", "https:/rp.example", "http:rp.example", "//rp.example", ":8080",
	"rp.example:", "https://rp.example\\", "",
};

static void
test_audience_match(void)
{
	for (size_t i = 0; i < sizeof audience_cases / sizeof audience_cases[0]; i++) {
		const struct audience_case *c = &audience_cases[i];
		int m = vep_audience_match(c->rp, c->aud);
		if (m != c->match)
			fprintf(stderr, "case %zu: rp %s, aud %s\n", i, c->rp, c->aud);
		ASSERT_EQ(m, c->match);
	}
	for (size_t i = 0; i < sizeof audience_malformed / sizeof audience_malformed[0]; i++) {
		const char *bad = audience_malformed[i];
		if (vep_audience_match(bad, bad) || vep_audience_match(bad, AUD) ||
		    vep_audience_match(AUD, bad))
			fprintf(stderr, "malformed %zu: %s\n", i, bad);
		ASSERT_EQ(vep_audience_match(bad, bad), 0);
		ASSERT_EQ(vep_audience_match(bad, AUD), 0);
		ASSERT_EQ(vep_audience_match(AUD, bad), 0);
	}
	ASSERT_EQ(vep_audience_match(NULL, AUD), 0);
	ASSERT_EQ(vep_audience_match(AUD, NULL), 0);

	/* Length limit: an aud of 2048 characters accepted, one more refused. */
	char *big = malloc(2050);
	strcpy(big, "https://rp.example/");
	memset(big + 19, 'p', 2048 - 19);
	big[2048] = '\0';
	ASSERT_EQ(vep_audience_match("https://rp.example", big), 1);
	big[2048] = 'p';
	big[2049] = '\0';
	ASSERT_EQ(vep_audience_match("https://rp.example", big), 0);
	free(big);

	/* Host length limit: 255 characters accepted, 256 refused. */
	char host[300];
	strcpy(host, "https://");
	memset(host + 8, 'h', 255);
	host[8 + 255] = '\0';
	ASSERT_EQ(vep_audience_match(host, host), 1);
	host[8 + 255] = 'h';
	host[8 + 256] = '\0';
	ASSERT_EQ(vep_audience_match(host, host), 0);
}

/* 1 when OpenSSL itself, given the DSA key (p, q, g, y) directly, accepts
 * r = s = 1 as a DS128 (SHA-1) signature of msg: shows that the forgery
 * below is real, whatever libvep does with the key. */
static int
ossl_accepts_r1s1(const BIGNUM *p, const BIGNUM *q, const BIGNUM *y,
    const char *msg)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *pctx = NULL;
	EVP_PKEY *pk = NULL;
	EVP_MD_CTX *mctx = NULL;
	DSA_SIG *sig = DSA_SIG_new();
	BIGNUM *r = BN_new(), *s = BN_new();
	unsigned char *der = NULL;
	int derlen, ok = 0;

	if (bld == NULL || sig == NULL || r == NULL || s == NULL ||
	    !BN_one(r) || !BN_one(s) || !DSA_SIG_set0(sig, r, s))
		goto out;
	r = s = NULL;
	if (!OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_FFC_P, p) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_FFC_Q, q) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_FFC_G, y) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PUB_KEY, y) ||
	    (params = OSSL_PARAM_BLD_to_param(bld)) == NULL ||
	    (pctx = EVP_PKEY_CTX_new_from_name(NULL, "DSA", NULL)) == NULL ||
	    EVP_PKEY_fromdata_init(pctx) != 1 ||
	    EVP_PKEY_fromdata(pctx, &pk, EVP_PKEY_PUBLIC_KEY, params) != 1 ||
	    (derlen = i2d_DSA_SIG(sig, &der)) <= 0 ||
	    (mctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestVerifyInit(mctx, NULL, EVP_sha1(), NULL, pk) != 1)
		goto out;
	ok = EVP_DigestVerify(mctx, der, (size_t)derlen, (const unsigned char *)msg,
	    strlen(msg)) == 1;
out:
	EVP_MD_CTX_free(mctx);
	OPENSSL_free(der);
	EVP_PKEY_free(pk);
	EVP_PKEY_CTX_free(pctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	DSA_SIG_free(sig);
	BN_free(r);
	BN_free(s);
	return ok;
}

/* Issue 11: a DS128 "user key" with q even, p composite and g = y = p - 1
 * passed the old range checks (g^q = (-1)^q = 1), and then r = s = 1
 * verifies every message whose SHA-1 is odd, for any audience, with no
 * private key. A certificate for it, signed by the real domain key, and
 * such an assertion for https://victim-rp.example are refused: the
 * certificate's key is unsafe. */
static void
test_forged_dsa_key_refused(void)
{
	static const char victim_rp[] = "https://victim-rp.example";
	BIGNUM *p = BN_new(), *q = BN_new(), *y = BN_new();
	char *ph = NULL, *qh = NULL, *yh = NULL, *cert = NULL, *h64 = NULL;
	char *p64 = NULL, *s64 = NULL, *text = NULL, *msg = NULL;
	uint8_t sig[40] = { 0 }, md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	/* p = 2^1023 + 1, q = 2^159 + 2, g = y = p - 1 = 2^1023 */
	ASSERT_TRUE(p && q && y && BN_set_bit(p, 1023) && BN_copy(y, p) &&
	    BN_add_word(p, 1) && BN_set_bit(q, 159) && BN_add_word(q, 2));
	ASSERT_TRUE((ph = BN_bn2hex(p)) && (qh = BN_bn2hex(q)) && (yh = BN_bn2hex(y)));
	for (char *s = ph; *s; s++) *s = (char)(*s >= 'A' ? *s + 32 : *s);
	for (char *s = qh; *s; s++) *s = (char)(*s >= 'A' ? *s + 32 : *s);
	for (char *s = yh; *s; s++) *s = (char)(*s >= 'A' ? *s + 32 : *s);
	{
		json_t *pl = json_pack("{s:s,s:I,s:I,s:{s:s,s:s,s:s,s:s,s:s},s:{s:s}}",
		    "iss", ISS, "iat", (json_int_t)T_IAT, "exp", (json_int_t)T_CERT_EXP,
		    "public-key", "algorithm", "DS", "y", yh, "p", ph, "q", qh, "g", yh,
		    "principal", "email", "alice@example.com");
		char *pltext = pl ? json_dumps(pl, JSON_COMPACT) : NULL;

		ASSERT_TRUE(pltext != NULL);
		cert = sign_text(domain_key, pltext);
		free(pltext);
		json_decref(pl);
	}
	ASSERT_TRUE(cert != NULL);
	/* an assertion whose signing input has an odd SHA-1 (half of them) */
	sig[19] = sig[39] = 1;                    /* r = s = 1, 20 bytes each */
	h64 = vep_b64url_encode((const uint8_t *)"{\"alg\":\"DS128\"}", 15);
	s64 = vep_b64url_encode(sig, sizeof(sig));
	ASSERT_TRUE(h64 != NULL && s64 != NULL);
	for (int64_t exp = T_ASSERT_EXP; msg == NULL && exp < T_ASSERT_EXP + 64; exp++) {
		char pl[160];

		snprintf(pl, sizeof(pl), "{\"aud\":\"%s\",\"exp\":%lld}", victim_rp,
		    (long long)exp);
		free(p64);
		p64 = vep_b64url_encode((const uint8_t *)pl, strlen(pl));
		ASSERT_TRUE(p64 != NULL);
		text = malloc(strlen(h64) + strlen(p64) + 2);
		ASSERT_TRUE(text != NULL);
		sprintf(text, "%s.%s", h64, p64);
		ASSERT_TRUE(EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha1(), NULL) == 1);
		if (md[mdlen - 1] & 1)
			msg = text;
		else
			free(text);
	}
	ASSERT_TRUE(msg != NULL);
	/* the forgery is real: OpenSSL alone accepts it */
	ASSERT_EQ(ossl_accepts_r1s1(p, q, y, msg), 1);
	{
		char *a = malloc(strlen(msg) + strlen(s64) + 2), *b = NULL;

		ASSERT_TRUE(a != NULL);
		sprintf(a, "%s.%s", msg, s64);
		ASSERT_EQ(vep_backed_join(cert, a, &b), 0);
		ASSERT_EQ(verify_text(b, victim_rp, ISS, domain_key, T_NOW), VEP_ERR_KEY);
		free(a);
		free(b);
	}
	free(msg);
	free(cert);
	free(h64);
	free(p64);
	free(s64);
	OPENSSL_free(ph);
	OPENSSL_free(qh);
	OPENSSL_free(yh);
	BN_free(p);
	BN_free(q);
	BN_free(y);
}

int
main(void)
{
	if (vep_key_generate_rsa(2048, &domain_key) != 0 ||
	    vep_key_generate_rsa(2048, &other_domain_key) != 0 ||
	    vep_key_generate_rsa(1024, &user_key) != 0 ||
	    vep_key_generate_rsa(1024, &other_user_key) != 0 ||
	    vep_key_generate_dsa(1024, &dsa_user) != 0) {
		fprintf(stderr, "key generation failed\n");
		return 1;
	}
	RUN(test_assertion_sign_payload);
	RUN(test_join);
	RUN(test_parse_and_verify);
	RUN(test_cert_expired_before_assertion);
	RUN(test_assertion_iat);
	RUN(test_clock_skew);
	RUN(test_wrong_user_key);
	RUN(test_tampered);
	RUN(test_parse_shapes);
	RUN(test_audience_match);
	RUN(test_forged_dsa_key_refused);
	vep_key_free(domain_key);
	vep_key_free(other_domain_key);
	vep_key_free(user_key);
	vep_key_free(other_user_key);
	vep_key_free(dsa_user);
	return harness_done();
}
