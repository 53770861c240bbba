/*
 * test_cert.c - identity certificates (libvep/cert.c) with real keys and
 * real signatures: the exact payload we sign, every refusal of
 * vep_cert_sign, every shape rule of vep_cert_parse, vep_cert_verify's
 * signature and time checks (the clock skew at its edges), and
 * certificates for unsafe user keys (signed by the real domain key)
 * refused by the parser.
 */
#include <stdlib.h>
#include <string.h>

#include "b64url.h"
#include "cert.h"
#include "err.h"
#include "harness.h"

#define T_IAT 1700000000000LL
#define T_EXP (T_IAT + 3600 * 1000LL)

static vep_key *domain_key, *other_domain_key, *user_key, *dsa_key;

/* Signs an arbitrary payload (JSON text) with k. */
static char *
sign_text(const vep_key *k, const char *json)
{
	json_error_t e;
	json_t *p = json_loads(json, JSON_ALLOW_NUL, &e);
	char *out = NULL;
	if (p == NULL) {
		fprintf(stderr, "bad test JSON: %s\n", json);
		return NULL;
	}
	if (vep_jws_sign(k, p, &out) != 0)
		out = NULL;
	json_decref(p);
	return out;
}

static char *
issue(const char *issuer, const char *email, int64_t iat, int64_t exp)
{
	struct vep_cert_params p = {
		.issuer = issuer, .email = email, .pubkey = user_key,
		.iat_ms = iat, .exp_ms = exp,
	};
	char *out = NULL;
	if (vep_cert_sign(domain_key, &p, &out) != 0)
		return NULL;
	return out;
}

/* Decodes part idx (0 header, 1 payload) of a JWS. */
static char *
part(const char *jws, int idx)
{
	const char *s = jws;
	for (int i = 0; i < idx; i++)
		s = strchr(s, '.') + 1;
	const char *e = strchr(s, '.');
	uint8_t *out = NULL;
	size_t n = 0;
	if (vep_b64url_decode(s, (size_t)(e - s), &out, &n) != 0)
		return NULL;
	return (char *)out;
}

static void
test_sign_exact_payload(void)
{
	char *c = issue("example.com", "Alice@example.com", T_IAT, T_EXP);
	ASSERT_TRUE(c != NULL);
	char *hdr = part(c, 0), *pl = part(c, 1);
	char *kj = vep_key_to_json_text(user_key);
	char want[4096];
	snprintf(want, sizeof want,
	    "{\"iss\":\"example.com\",\"iat\":%lld,\"exp\":%lld,\"public-key\":%s,"
	    "\"principal\":{\"email\":\"Alice@example.com\"}}",
	    (long long)T_IAT, (long long)T_EXP, kj);
	ASSERT_STREQ(hdr, "{\"alg\":\"RS256\"}");
	ASSERT_STREQ(pl, want);
	/* The key's text handed in (what a caller that remembers keys does)
	 * gives the same certificate, byte for byte (PKCS#1 v1.5 signatures
	 * are deterministic); and the payload is the text a jansson tree of
	 * the same members dumps to. */
	struct vep_cert_params p = {
		.issuer = "example.com", .email = "Alice@example.com", .pubkey = user_key,
		.iat_ms = T_IAT, .exp_ms = T_EXP, .pubkey_text = kj,
	};
	char *c2 = NULL;
	ASSERT_EQ(vep_cert_sign(domain_key, &p, &c2), 0);
	ASSERT_STREQ(c2, c);
	free(c2);
	/* In two halves (the authority's key process signs the input): the
	 * same certificate again; the same refusals before anything is
	 * signed. */
	char *in = NULL;
	size_t inlen = 0, siglen = 0;
	uint8_t *sig = NULL;
	ASSERT_EQ(vep_cert_signing_input(domain_key, &p, &in, &inlen), 0);
	ASSERT_TRUE(strncmp(c, in, inlen) == 0 && c[inlen] == '.');
	ASSERT_EQ(vep_key_sign(domain_key, (const uint8_t *)in, inlen, &sig, &siglen), 0);
	ASSERT_EQ(vep_jws_join(in, sig, siglen, &c2), 0);
	ASSERT_STREQ(c2, c);
	free(c2);
	free(sig);
	free(in);
	p.exp_ms = p.iat_ms;
	in = (char *)1;
	ASSERT_EQ(vep_cert_signing_input(domain_key, &p, &in, &inlen), VEP_ERR_ARG);
	ASSERT_TRUE(in == NULL && inlen == 0);
	p.exp_ms = T_EXP;
	p.email = "not an address";
	ASSERT_EQ(vep_cert_signing_input(domain_key, &p, &in, &inlen), VEP_ERR_EMAIL);
	p.email = "Alice@example.com";
	ASSERT_EQ(vep_cert_signing_input(NULL, &p, &in, &inlen), VEP_ERR_ARG);
	json_t *tree = json_pack("{s:s,s:I,s:I,s:o,s:{s:s}}", "iss", "example.com", "iat",
	    (json_int_t)T_IAT, "exp", (json_int_t)T_EXP, "public-key", vep_key_to_json(user_key),
	    "principal", "email", "Alice@example.com");
	ASSERT_TRUE(tree != NULL);
	char *dumped = json_dumps(tree, JSON_COMPACT);
	ASSERT_STREQ(pl, dumped);
	free(dumped);
	json_decref(tree);
	free(hdr);
	free(pl);
	free(kj);
	free(c);
}

static void
test_sign_parse_verify(void)
{
	char *t = issue("example.com", "alice@example.com", T_IAT, T_EXP);
	vep_cert *c = NULL;
	ASSERT_TRUE(t != NULL);
	ASSERT_EQ(vep_cert_parse(t, strlen(t), &c), 0);
	ASSERT_STREQ(c->issuer, "example.com");
	ASSERT_STREQ(c->email, "alice@example.com");
	ASSERT_EQ(c->iat_ms, T_IAT);
	ASSERT_EQ(c->exp_ms, T_EXP);
	ASSERT_TRUE(vep_key_public_equal(c->pubkey, user_key));
	ASSERT_TRUE(!vep_key_has_private(c->pubkey));

	const vep_key *keys[] = { domain_key };
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_IAT), 0);
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_EXP - 1), 0);
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_EXP), 0);  /* within the skew */
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_EXP + 1000000), VEP_ERR_EXPIRED);
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_IAT - 1000000), VEP_ERR_NOTYET);

	/* Wrong key; a key of another algorithm skipped; rotation order. */
	const vep_key *wrong[] = { other_domain_key };
	ASSERT_EQ(vep_cert_verify(c, wrong, 1, T_IAT), VEP_ERR_BADSIG);
	const vep_key *mixed[] = { dsa_key, user_key, other_domain_key, domain_key };
	ASSERT_EQ(vep_cert_verify(c, mixed, 4, T_IAT), 0);
	const vep_key *only_dsa[] = { dsa_key };
	ASSERT_EQ(vep_cert_verify(c, only_dsa, 1, T_IAT), VEP_ERR_BADSIG);
	const vep_key *with_null[] = { NULL, domain_key };
	ASSERT_EQ(vep_cert_verify(c, with_null, 2, T_IAT), 0);
	ASSERT_EQ(vep_cert_verify(c, keys, 0, T_IAT), VEP_ERR_NOKEY);
	ASSERT_EQ(vep_cert_verify(NULL, keys, 1, T_IAT), VEP_ERR_ARG);
	ASSERT_EQ(vep_cert_verify(c, NULL, 1, T_IAT), VEP_ERR_ARG);
	vep_cert_free(c);
	vep_cert_free(NULL);
	free(t);
}

/* The clock skew, exactly at its edges: valid while
 * iat - skew <= now < exp + skew (cert.h). */
static void
test_clock_skew(void)
{
	const int64_t sk = VEP_CLOCK_SKEW_MS;
	char *t = issue("example.com", "alice@example.com", T_IAT, T_EXP);
	vep_cert *c = NULL;
	const vep_key *keys[] = { domain_key };

	/* docs/PROTOCOL.md and the README state the value. */
	ASSERT_EQ(VEP_CLOCK_SKEW_MS, 30000);
	ASSERT_TRUE(t != NULL);
	ASSERT_EQ(vep_cert_parse(t, strlen(t), &c), 0);
	/* iat up to the skew after now */
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_IAT - (sk - 1)), 0);
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_IAT - sk), 0);
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_IAT - (sk + 1)), VEP_ERR_NOTYET);
	/* exp less than the skew before now */
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_EXP + (sk - 1)), 0);
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_EXP + sk), VEP_ERR_EXPIRED);
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_EXP + (sk + 1)), VEP_ERR_EXPIRED);
	/* The signature is checked first: no time verdict for a forgery. */
	const vep_key *wrong[] = { other_domain_key };
	ASSERT_EQ(vep_cert_verify(c, wrong, 1, T_EXP + sk), VEP_ERR_BADSIG);
	vep_cert_free(c);
	free(t);

	/* The rule itself, also without iat and at the ends of int64. */
	ASSERT_EQ(vep_time_check(-1, T_EXP, 0), 0);
	ASSERT_EQ(vep_time_check(-1, T_EXP, T_EXP + sk - 1), 0);
	ASSERT_EQ(vep_time_check(-1, T_EXP, T_EXP + sk), VEP_ERR_EXPIRED);
	ASSERT_EQ(vep_time_check(0, 0, sk - 1), 0);
	ASSERT_EQ(vep_time_check(0, 0, sk), VEP_ERR_EXPIRED);
	ASSERT_EQ(vep_time_check(sk, T_EXP, 0), 0);
	ASSERT_EQ(vep_time_check(sk + 1, T_EXP, 0), VEP_ERR_NOTYET);
	ASSERT_EQ(vep_time_check(T_IAT, T_EXP, INT64_MIN), VEP_ERR_NOTYET);
	ASSERT_EQ(vep_time_check(-1, T_EXP, INT64_MIN), 0);
	ASSERT_EQ(vep_time_check(T_IAT, T_EXP, INT64_MAX), VEP_ERR_EXPIRED);
	ASSERT_EQ(vep_time_check(T_IAT, INT64_MAX, INT64_MAX), 0);
}

static void
test_sign_refusals(void)
{
	struct vep_cert_params p = {
		.issuer = "example.com", .email = "alice@example.com", .pubkey = user_key,
		.iat_ms = T_IAT, .exp_ms = T_IAT + VEP_CERT_MAX_LIFETIME_MS,
	};
	char *out = (char *)1;

	/* The lifetime limit itself is allowed, one ms more is not. */
	ASSERT_EQ(vep_cert_sign(domain_key, &p, &out), 0);
	free(out);
	p.exp_ms++;
	ASSERT_EQ(vep_cert_sign(domain_key, &p, &out), VEP_ERR_ARG);
	ASSERT_TRUE(out == NULL);
	p.exp_ms = T_IAT;
	ASSERT_EQ(vep_cert_sign(domain_key, &p, &out), VEP_ERR_ARG);
	p.exp_ms = T_IAT - 1;
	ASSERT_EQ(vep_cert_sign(domain_key, &p, &out), VEP_ERR_ARG);
	p.iat_ms = -5;
	p.exp_ms = 10;
	ASSERT_EQ(vep_cert_sign(domain_key, &p, &out), VEP_ERR_ARG);
	p.iat_ms = T_IAT;
	p.exp_ms = INT64_MAX;
	ASSERT_EQ(vep_cert_sign(domain_key, &p, &out), VEP_ERR_ARG);
	p.exp_ms = T_EXP;

	static const char *const bad_email[] = {
		"alice", "alice@EXAMPLE.com", "al ice@example.com", "alice@localhost", "",
		"\xc3\xa9@example.com",
	};
	for (size_t i = 0; i < sizeof bad_email / sizeof bad_email[0]; i++) {
		p.email = bad_email[i];
		ASSERT_EQ(vep_cert_sign(domain_key, &p, &out), VEP_ERR_EMAIL);
	}
	p.email = "alice@example.com";
	static const char *const bad_iss[] = {
		"", "Example.com", "exa mple.com", "example.com:0", "http://example.com",
	};
	for (size_t i = 0; i < sizeof bad_iss / sizeof bad_iss[0]; i++) {
		p.issuer = bad_iss[i];
		ASSERT_EQ(vep_cert_sign(domain_key, &p, &out), VEP_ERR_ARG);
	}
	p.issuer = "localhost:8080";
	ASSERT_EQ(vep_cert_sign(domain_key, &p, &out), 0);
	free(out);
	p.issuer = "example.com";

	vep_key *pub = NULL;
	ASSERT_EQ(vep_key_public_copy(domain_key, &pub), 0);
	ASSERT_EQ(vep_cert_sign(pub, &p, &out), VEP_ERR_NOKEY);
	vep_key_free(pub);
	ASSERT_EQ(vep_cert_sign(NULL, &p, &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_cert_sign(domain_key, NULL, &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_cert_sign(domain_key, &p, NULL), VEP_ERR_ARG);
	p.pubkey = NULL;
	ASSERT_EQ(vep_cert_sign(domain_key, &p, &out), VEP_ERR_ARG);
}

/* Payload variants around a valid one: {PK} is replaced by the user key. */
static int
parse_payload(const char *tmpl)
{
	char *kj = vep_key_to_json_text(user_key);
	char buf[8192];
	const char *at = strstr(tmpl, "{PK}");
	if (at != NULL)
		snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - tmpl), tmpl, kj, at + 4);
	else
		snprintf(buf, sizeof buf, "%s", tmpl);
	free(kj);
	char *t = sign_text(domain_key, buf);
	if (t == NULL)
		return 999;
	vep_cert *c = NULL;
	int r = vep_cert_parse(t, strlen(t), &c);
	if (r == 0 && c == NULL)
		r = 998;
	vep_cert_free(c);
	free(t);
	return r;
}

static void
test_parse_shapes(void)
{
	/* Accepted: Mozilla's member order, no iat, unknown members, host forms. */
	ASSERT_EQ(parse_payload("{\"public-key\":{PK},\"principal\":{\"email\":\"a@b.co\"},"
	    "\"iat\":1,\"exp\":2,\"iss\":\"b.co\"}"), 0);
	ASSERT_EQ(parse_payload("{\"iss\":\"b.co\",\"exp\":2,\"public-key\":{PK},"
	    "\"principal\":{\"email\":\"a@b.co\"},\"x\":[1]}"), 0);
	ASSERT_EQ(parse_payload("{\"iss\":\"127.0.0.1\",\"exp\":2,\"public-key\":{PK},"
	    "\"principal\":{\"email\":\"a@b.co\"}}"), 0);
	ASSERT_EQ(parse_payload("{\"iss\":\"localhost:10001\",\"exp\":2.0,\"public-key\":{PK},"
	    "\"principal\":{\"email\":\"a@b.co\"}}"), 0);

	static const char *const invalid[] = {
		"{\"exp\":2,\"public-key\":{PK},\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":5,\"exp\":2,\"public-key\":{PK},\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":\"b co\",\"exp\":2,\"public-key\":{PK},"
		"\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":\"\",\"exp\":2,\"public-key\":{PK},\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":\"b.co\",\"public-key\":{PK},\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":\"b.co\",\"exp\":\"2\",\"public-key\":{PK},"
		"\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":\"b.co\",\"exp\":-2,\"public-key\":{PK},"
		"\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":\"b.co\",\"exp\":2.5,\"public-key\":{PK},"
		"\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":\"b.co\",\"exp\":null,\"public-key\":{PK},"
		"\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":\"b.co\",\"exp\":2,\"iat\":\"1\",\"public-key\":{PK},"
		"\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":\"b.co\",\"exp\":2,\"iat\":-1,\"public-key\":{PK},"
		"\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":\"b.co\",\"exp\":2,\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":\"b.co\",\"exp\":2,\"public-key\":\"k\","
		"\"principal\":{\"email\":\"a@b.co\"}}",
		"{\"iss\":\"b.co\",\"exp\":2,\"public-key\":{PK}}",
		"{\"iss\":\"b.co\",\"exp\":2,\"public-key\":{PK},\"principal\":\"a@b.co\"}",
		"{\"iss\":\"b.co\",\"exp\":2,\"public-key\":{PK},\"principal\":{}}",
		"{\"iss\":\"b.co\",\"exp\":2,\"public-key\":{PK},\"principal\":{\"email\":7}}",
	};
	for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
		int r = parse_payload(invalid[i]);
		if (r != VEP_ERR_INVALID)
			fprintf(stderr, "case %zu: %d\n", i, r);
		ASSERT_EQ(r, VEP_ERR_INVALID);
	}
	ASSERT_EQ(parse_payload("{\"iss\":\"b.co\",\"exp\":2,\"public-key\":{PK},"
	    "\"principal\":{\"email\":\"not-an-email\"}}"), VEP_ERR_EMAIL);
	/* An escaped NUL never reaches the email rules: the JSON is refused. */
	ASSERT_TRUE(parse_payload("{\"iss\":\"b.co\",\"exp\":2,\"public-key\":{PK},"
	    "\"principal\":{\"email\":\"a\\u0000b@b.co\"}}") < 0);
	/* A key the protocol does not know is refused by key.c's rules. */
	ASSERT_TRUE(parse_payload("{\"iss\":\"b.co\",\"exp\":2,\"public-key\":"
	    "{\"algorithm\":\"RS\",\"n\":\"187\",\"e\":\"3\"},"
	    "\"principal\":{\"email\":\"a@b.co\"}}") < 0);
	ASSERT_TRUE(parse_payload("{\"iss\":\"b.co\",\"exp\":2,\"public-key\":"
	    "{\"algorithm\":\"EC\"},\"principal\":{\"email\":\"a@b.co\"}}") < 0);
}

static void
test_parse_malformed_text(void)
{
	vep_cert *c = (vep_cert *)1;
	static const char *const bad[] = {
		"", "a", "a.b", "a.b.c", "a.b.c.d", "..", "eyJhbGciOiJSUzI1NiJ9..",
		"eyJhbGciOiJSUzI1NiJ9.e30.", "eyJhbGciOiJSUzI1NiJ9.e30.AAAA",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ASSERT_TRUE(vep_cert_parse(bad[i], strlen(bad[i]), &c) < 0);
		ASSERT_TRUE(c == NULL);
	}
	ASSERT_EQ(vep_cert_parse(NULL, 0, &c), VEP_ERR_ARG);
	ASSERT_EQ(vep_cert_parse("x", 1, NULL), VEP_ERR_ARG);

	/* Over the JWS size limit. */
	size_t n = VEP_JWS_MAX_BYTES + 1;
	char *big = malloc(n);
	memset(big, 'A', n);
	big[20] = '.';
	big[40] = '.';
	ASSERT_EQ(vep_cert_parse(big, n, &c), VEP_ERR_TOOBIG);
	free(big);
}

/* Replaces the payload of a signed certificate, keeping the signature. */
static char *
swap_payload(const char *jws, const char *from, const char *to)
{
	char *pl = part(jws, 1);
	char *at = strstr(pl, from);
	if (at == NULL)
		return NULL;
	char buf[8192];
	snprintf(buf, sizeof buf, "%.*s%s%s", (int)(at - pl), pl, to, at + strlen(from));
	free(pl);
	char *enc = vep_b64url_encode((const uint8_t *)buf, strlen(buf));
	const char *d1 = strchr(jws, '.'), *d2 = strchr(d1 + 1, '.');
	char *out = malloc(strlen(jws) + strlen(enc) + 1);
	sprintf(out, "%.*s%s%s", (int)(d1 + 1 - jws), jws, enc, d2);
	free(enc);
	return out;
}

/* A certificate is only as good as the key it certifies: one for a key
 * anyone can sign with is refused when parsed, whoever signed it. */
static void
test_unsafe_user_key(void)
{
	json_t *uk = vep_key_to_json(user_key), *dk = vep_key_to_json(dsa_key);
	char *n = NULL, *q = NULL, *pl = NULL, *c = NULL;
	vep_cert *cert = NULL;
	struct { const char *what; json_t *key; } cases[5];
	size_t i, ncases = 0;

	ASSERT_TRUE(uk != NULL && dk != NULL);
	/* the honest keys' certificate parses */
	c = issue("example.com", "alice@example.com", T_IAT, T_EXP);
	ASSERT_EQ(vep_cert_parse(c, strlen(c), &cert), 0);
	vep_cert_free(cert);
	free(c);
	/* RSA: even n (the last digit made even), e = 1 */
	n = strdup(json_string_value(json_object_get(uk, "n")));
	ASSERT_TRUE(n != NULL);
	n[strlen(n) - 1] = (char)('0' + ((n[strlen(n) - 1] - '0') & ~1));
	cases[ncases].what = "even n";
	cases[ncases++].key = json_pack("{s:s,s:s,s:s}", "algorithm", "RS", "n", n, "e", "65537");
	cases[ncases].what = "e = 1";
	cases[ncases++].key = json_pack("{s:s,s:O,s:s}", "algorithm", "RS", "n",
	    json_object_get(uk, "n"), "e", "1");
	/* DSA: y = 1; q even (last hex digit made even) */
	cases[ncases].what = "y = 1";
	cases[ncases++].key = json_pack("{s:s,s:s,s:O,s:O,s:O}", "algorithm", "DS", "y", "1",
	    "p", json_object_get(dk, "p"), "q", json_object_get(dk, "q"), "g",
	    json_object_get(dk, "g"));
	q = strdup(json_string_value(json_object_get(dk, "q")));
	ASSERT_TRUE(q != NULL);
	q[strlen(q) - 1] = '2';
	cases[ncases].what = "even q";
	cases[ncases++].key = json_pack("{s:s,s:O,s:O,s:s,s:O}", "algorithm", "DS", "y",
	    json_object_get(dk, "y"), "p", json_object_get(dk, "p"), "q", q, "g",
	    json_object_get(dk, "g"));
	for (i = 0; i < ncases; i++) {
		json_t *o = json_pack("{s:s,s:I,s:I,s:O,s:{s:s}}", "iss", "example.com",
		    "iat", (json_int_t)T_IAT, "exp", (json_int_t)T_EXP, "public-key", cases[i].key,
		    "principal", "email", "alice@example.com");

		ASSERT_TRUE(cases[i].key != NULL && o != NULL);
		pl = json_dumps(o, JSON_COMPACT);
		c = pl ? sign_text(domain_key, pl) : NULL;
		ASSERT_TRUE(c != NULL);
		cert = (vep_cert *)1;
		if (vep_cert_parse(c, strlen(c), &cert) != VEP_ERR_KEY)
			fprintf(stderr, "  (case: %s)\n", cases[i].what);
		ASSERT_EQ(vep_cert_parse(c, strlen(c), &cert), VEP_ERR_KEY);
		ASSERT_TRUE(cert == NULL);
		free(pl);
		free(c);
		json_decref(o);
		json_decref(cases[i].key);
	}
	free(n);
	free(q);
	json_decref(uk);
	json_decref(dk);
}

static void
test_tampered(void)
{
	char *t = issue("example.com", "alice@example.com", T_IAT, T_EXP);
	const vep_key *keys[] = { domain_key };
	vep_cert *c = NULL;

	char *forged = swap_payload(t, "alice@", "mallory@");
	ASSERT_TRUE(forged != NULL);
	ASSERT_EQ(vep_cert_parse(forged, strlen(forged), &c), 0);
	ASSERT_STREQ(c->email, "mallory@example.com");
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_IAT), VEP_ERR_BADSIG);
	vep_cert_free(c);
	free(forged);

	/* Lifetime stretched. */
	char exp_s[32], exp_l[32];
	snprintf(exp_s, sizeof exp_s, "%lld", (long long)T_EXP);
	snprintf(exp_l, sizeof exp_l, "%lld", (long long)T_EXP + 1);
	forged = swap_payload(t, exp_s, exp_l);
	ASSERT_EQ(vep_cert_parse(forged, strlen(forged), &c), 0);
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_IAT), VEP_ERR_BADSIG);
	vep_cert_free(c);
	free(forged);

	/* One signature byte changed: flip a middle character of the sig. */
	char *copy = strdup(t);
	char *sig = strrchr(copy, '.') + 1;
	size_t mid = strlen(sig) / 2;
	sig[mid] = sig[mid] == 'A' ? 'B' : 'A';
	ASSERT_EQ(vep_cert_parse(copy, strlen(copy), &c), 0);
	ASSERT_EQ(vep_cert_verify(c, keys, 1, T_IAT), VEP_ERR_BADSIG);
	vep_cert_free(c);
	free(copy);
	free(t);
}

int
main(void)
{
	if (vep_key_generate_rsa(2048, &domain_key) != 0 ||
	    vep_key_generate_rsa(2048, &other_domain_key) != 0 ||
	    vep_key_generate_rsa(1024, &user_key) != 0 ||
	    vep_key_generate_dsa(1024, &dsa_key) != 0) {
		fprintf(stderr, "key generation failed\n");
		return 1;
	}
	RUN(test_sign_exact_payload);
	RUN(test_sign_parse_verify);
	RUN(test_clock_skew);
	RUN(test_sign_refusals);
	RUN(test_parse_shapes);
	RUN(test_parse_malformed_text);
	RUN(test_tampered);
	RUN(test_unsafe_user_key);
	vep_key_free(domain_key);
	vep_key_free(other_domain_key);
	vep_key_free(user_key);
	vep_key_free(dsa_key);
	return harness_done();
}
