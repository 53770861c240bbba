/*
 * test_jws.c - JWS compact serialization: our exact output form, strict
 * parsing, algorithm binding, and Mozilla's browserid-crypto known-answer
 * vectors (certificates signed with RS256 domain keys, assertions signed
 * with DS128 user keys) verified at the JWS level.
 *
 * The vectors file comes from VEP_VECTORS (set by meson); its absence is a
 * failure, not a skip: the file ships beside the project.
 */
#include <stdlib.h>
#include <string.h>

#include "b64url.h"
#include "err.h"
#include "harness.h"
#include "jws.h"
#include "key.h"

static vep_key *rs256, *rs128, *ds128;
static json_t *vectors;

static int
parse_rc(const char *text)
{
	vep_jws *j = (vep_jws *)1;
	int rc = vep_jws_parse(text, strlen(text), &j);

	if (rc != 0 && j != NULL)
		return 1000;
	vep_jws_free(j);
	return rc;
}

/* Builds b64(h).b64(p).b64(sig) from raw texts. */
static char *
make_token(const char *h, const char *p, const char *sig64)
{
	char *h64 = vep_b64url_encode((const uint8_t *)h, strlen(h));
	char *p64 = vep_b64url_encode((const uint8_t *)p, strlen(p));
	size_t n = strlen(h64) + strlen(p64) + strlen(sig64) + 3;
	char *s = malloc(n);

	if (s == NULL)
		abort();
	snprintf(s, n, "%s.%s.%s", h64, p64, sig64);
	free(h64);
	free(p64);
	return s;
}

static void
test_sign_form(void)
{
	json_t *payload = json_pack("{s:s,s:I}", "aud", "https://rp.example", "exp",
	    (json_int_t)1342635957027LL);
	char *tok = NULL, *dot;
	vep_jws *j = NULL;

	ASSERT_EQ(vep_jws_sign(rs256, payload, &tok), 0);
	/* {"alg":"RS256"} exactly, then the compact payload in insertion order */
	ASSERT_TRUE(strncmp(tok, "eyJhbGciOiJSUzI1NiJ9.", 21) == 0);
	ASSERT_EQ(vep_jws_parse(tok, strlen(tok), &j), 0);
	ASSERT_STREQ(j->alg->name, "RS256");
	ASSERT_EQ(j->sig_len, 256);
	ASSERT_EQ(json_object_size(j->header), 1);
	ASSERT_STREQ(json_string_value(json_object_get(j->payload, "aud")), "https://rp.example");
	dot = strrchr(tok, '.');
	ASSERT_EQ(j->signing_input_len, (size_t)(dot - tok));
	ASSERT_TRUE(strncmp(j->signing_input, tok, j->signing_input_len) == 0);
	{
		uint8_t *raw = NULL;
		size_t rawlen = 0;
		const char *p = strchr(tok, '.') + 1;

		ASSERT_EQ(vep_b64url_decode(p, (size_t)(dot - p), &raw, &rawlen), 0);
		ASSERT_STREQ((char *)raw, "{\"aud\":\"https://rp.example\",\"exp\":1342635957027}");
		free(raw);
	}
	ASSERT_EQ(vep_jws_verify(j, rs256), 0);
	vep_jws_free(j);
	free(tok);
	json_decref(payload);
}

static void
test_sign_verify_each_alg(void)
{
	vep_key *keys[] = { rs256, rs128, ds128 };
	static const char *names[] = { "RS256", "RS128", "DS128" };
	json_t *payload = json_pack("{s:s}", "a", "b");

	for (size_t i = 0; i < 3; i++) {
		char *tok = NULL, *h64 = NULL, hdr[32];
		vep_jws *j = NULL;
		vep_key *pub = NULL;

		ASSERT_EQ(vep_jws_sign(keys[i], payload, &tok), 0);
		snprintf(hdr, sizeof(hdr), "{\"alg\":\"%s\"}", names[i]);
		h64 = vep_b64url_encode((const uint8_t *)hdr, strlen(hdr));
		ASSERT_TRUE(strncmp(tok, h64, strlen(h64)) == 0);
		free(h64);
		ASSERT_EQ(vep_jws_parse(tok, strlen(tok), &j), 0);
		ASSERT_EQ(vep_key_public_copy(keys[i], &pub), 0);
		ASSERT_EQ(vep_jws_verify(j, pub), 0);
		/* the key of another algorithm: refused before any maths */
		ASSERT_EQ(vep_jws_verify(j, keys[(i + 1) % 3]), VEP_ERR_ALG);
		vep_jws_free(j);
		vep_key_free(pub);
		free(tok);
	}
	json_decref(payload);
}

/* Changing the header alg to another RSA size, or any byte of the
 * payload, breaks the token. */
static void
test_tamper_and_alg_mismatch(void)
{
	json_t *payload = json_pack("{s:s}", "email", "alice@example.com");
	char *tok = NULL, *forged;
	const char *p, *s;
	vep_jws *j = NULL;
	vep_key *other = NULL;

	ASSERT_EQ(vep_jws_sign(rs256, payload, &tok), 0);
	p = strchr(tok, '.') + 1;
	s = strrchr(tok, '.') + 1;
	/* header says RS128 but key is RS256 */
	{
		char *h = vep_b64url_encode((const uint8_t *)"{\"alg\":\"RS128\"}", 15);
		size_t n = strlen(h) + strlen(p) + 2;

		forged = malloc(n);
		ASSERT_TRUE(forged != NULL);
		snprintf(forged, n, "%s.%s", h, p);
		free(h);
		ASSERT_EQ(vep_jws_parse(forged, strlen(forged), &j), 0);
		ASSERT_EQ(vep_jws_verify(j, rs256), VEP_ERR_ALG);
		vep_jws_free(j);
		j = NULL;
		free(forged);
	}
	/* a different RS256 key */
	ASSERT_EQ(vep_jws_parse(tok, strlen(tok), &j), 0);
	ASSERT_EQ(vep_key_generate_rsa(2048, &other), 0);
	ASSERT_EQ(vep_jws_verify(j, other), VEP_ERR_BADSIG);
	vep_jws_free(j);
	j = NULL;
	/* payload changed */
	forged = strdup(tok);
	forged[(p - tok) + 3] = forged[(p - tok) + 3] == 'A' ? 'B' : 'A';
	ASSERT_EQ(vep_jws_parse(forged, strlen(forged), &j), 0);
	ASSERT_EQ(vep_jws_verify(j, rs256), VEP_ERR_BADSIG);
	vep_jws_free(j);
	j = NULL;
	/* signature changed */
	forged[(p - tok) + 3] = tok[(p - tok) + 3];
	forged[(s - tok) + 10] = forged[(s - tok) + 10] == 'A' ? 'B' : 'A';
	ASSERT_EQ(vep_jws_parse(forged, strlen(forged), &j), 0);
	ASSERT_EQ(vep_jws_verify(j, rs256), VEP_ERR_BADSIG);
	vep_jws_free(j);
	free(forged);
	vep_key_free(other);
	free(tok);
	json_decref(payload);
}

static void
test_parse_rejections(void)
{
	char *t;

	ASSERT_EQ(parse_rc(""), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rc("abc"), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rc("eyJhbGciOiJSUzI1NiJ9.e30"), VEP_ERR_INVALID);     /* 2 parts */
	ASSERT_EQ(parse_rc("eyJhbGciOiJSUzI1NiJ9.e30.AAAA.AAAA"), VEP_ERR_INVALID); /* 4 */
	ASSERT_EQ(parse_rc("eyJhbGciOiJSUzI1NiJ9.e30.AAAA"), 0);
	ASSERT_EQ(parse_rc("eyJhbGciOiJSUzI1NiJ9.e30."), VEP_ERR_INVALID);    /* empty sig */
	ASSERT_EQ(parse_rc("eyJhbGciOiJSUzI1NiJ9.e30.AAAA="), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rc("eyJhbGciOiJSUzI1NiJ9.e30.AA+A"), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rc("eyJhbGciOiJSUzI1NiJ9 .e30.AAAA"), VEP_ERR_INVALID);
	/* header shapes */
	t = make_token("{\"alg\":\"RS64\"}", "{}", "AAAA");
	ASSERT_EQ(parse_rc(t), VEP_ERR_ALG);
	free(t);
	t = make_token("{\"alg\":\"none\"}", "{}", "AAAA");
	ASSERT_EQ(parse_rc(t), VEP_ERR_ALG);
	free(t);
	t = make_token("{\"alg\":\"HS256\"}", "{}", "AAAA");
	ASSERT_EQ(parse_rc(t), VEP_ERR_ALG);
	free(t);
	t = make_token("{\"alg\":256}", "{}", "AAAA");
	ASSERT_EQ(parse_rc(t), VEP_ERR_INVALID);
	free(t);
	t = make_token("{}", "{}", "AAAA");
	ASSERT_EQ(parse_rc(t), VEP_ERR_INVALID);
	free(t);
	t = make_token("{\"alg\":\"RS256\",\"alg\":\"RS256\"}", "{}", "AAAA");
	ASSERT_EQ(parse_rc(t), VEP_ERR_INVALID);
	free(t);
	t = make_token("[\"RS256\"]", "{}", "AAAA");
	ASSERT_EQ(parse_rc(t), VEP_ERR_INVALID);
	free(t);
	/* other header members are ignored */
	t = make_token("{\"alg\":\"RS256\",\"typ\":\"JWT\"}", "{}", "AAAA");
	ASSERT_EQ(parse_rc(t), 0);
	free(t);
	/* payload shapes */
	t = make_token("{\"alg\":\"RS256\"}", "[1]", "AAAA");
	ASSERT_EQ(parse_rc(t), VEP_ERR_INVALID);
	free(t);
	t = make_token("{\"alg\":\"RS256\"}", "\"x\"", "AAAA");
	ASSERT_EQ(parse_rc(t), VEP_ERR_INVALID);
	free(t);
	t = make_token("{\"alg\":\"RS256\"}", "{\"a\":1,\"a\":2}", "AAAA");
	ASSERT_EQ(parse_rc(t), VEP_ERR_INVALID);
	free(t);
	t = make_token("{\"alg\":\"RS256\"}", "{\"a\":1} x", "AAAA");
	ASSERT_EQ(parse_rc(t), VEP_ERR_INVALID);
	free(t);
}

/* VEP_JWS_MAX_BYTES: a token of exactly the limit parses, one byte more
 * is VEP_ERR_TOOBIG. */
static void
test_size_limit(void)
{
	size_t n = VEP_JWS_MAX_BYTES;
	char *t = malloc(n + 2);
	const char *prefix = "eyJhbGciOiJSUzI1NiJ9.e30.";
	vep_jws *j = NULL;

	ASSERT_TRUE(t != NULL);
	strcpy(t, prefix);
	memset(t + strlen(prefix), 'A', n + 1 - strlen(prefix));
	t[n + 1] = '\0';
	/* n - prefix chars of 'A' must not be 1 mod 4 for the limit case */
	ASSERT_TRUE((n - strlen(prefix)) % 4 != 1);
	ASSERT_EQ(vep_jws_parse(t, n, &j), 0);
	vep_jws_free(j);
	j = NULL;
	ASSERT_EQ(vep_jws_parse(t, n + 1, &j), VEP_ERR_TOOBIG);
	ASSERT_TRUE(j == NULL);
	free(t);
}

/* Parses one compact JWS from the vectors and verifies it with key. */
static int
verify_vector(const char *tok, size_t len, const json_t *keyjson, json_t **payload)
{
	vep_jws *j = NULL;
	vep_key *k = NULL;
	int rc;

	if (payload != NULL)
		*payload = NULL;
	if ((rc = vep_key_from_json(keyjson, &k)) != 0)
		goto out;
	if ((rc = vep_jws_parse(tok, len, &j)) != 0)
		goto out;
	if ((rc = vep_jws_verify(j, k)) != 0)
		goto out;
	if (payload != NULL)
		*payload = json_incref(j->payload);
out:
	vep_jws_free(j);
	vep_key_free(k);
	return rc;
}

/* Canonical text of a parsed key equals the text of the vector's own JSON
 * (Mozilla published lowercase hex without leading zeros too). */
static int
canonical_same(const json_t *keyjson)
{
	vep_key *k = NULL;
	char *a = NULL, *b = NULL;
	int same = 0;

	if (vep_key_from_json(keyjson, &k) == 0 &&
	    (a = vep_key_to_json_text(k)) != NULL &&
	    (b = json_dumps(keyjson, JSON_COMPACT)) != NULL)
		same = strcmp(a, b) == 0;
	vep_key_free(k);
	free(a);
	free(b);
	return same;
}

static void
test_vectors_certs(void)
{
	json_t *certs = json_object_get(vectors, "CERTS"), *v;
	size_t i;

	ASSERT_TRUE(json_array_size(certs) >= 1);
	json_array_foreach(certs, i, v) {
		const char *cert = json_string_value(json_object_get(v, "cert"));
		const json_t *ck = json_object_get(v, "certifierPublicKey");
		const json_t *pk = json_object_get(v, "containedPublicKey");
		json_t *payload = NULL;
		vep_key *inner = NULL, *want = NULL;
		char *tampered;

		ASSERT_TRUE(cert != NULL);
		ASSERT_EQ(verify_vector(cert, strlen(cert), ck, &payload), 0);
		ASSERT_TRUE(canonical_same(ck));
		ASSERT_TRUE(canonical_same(pk));
		ASSERT_STREQ(json_string_value(json_object_get(json_object_get(payload,
		    "principal"), "email")),
		    json_string_value(json_object_get(v, "email")));
		ASSERT_EQ(vep_key_from_json(json_object_get(payload, "public-key"), &inner), 0);
		ASSERT_EQ(vep_key_from_json(pk, &want), 0);
		ASSERT_TRUE(vep_key_public_equal(inner, want));
		ASSERT_STREQ(vep_key_alg(inner)->name, "DS128");
		vep_key_free(inner);
		vep_key_free(want);
		json_decref(payload);
		/* a payload re-encoded with another address keeps its signature
		 * no more */
		{
			const char *p1 = strchr(cert, '.') + 1, *p2 = strrchr(cert, '.');
			uint8_t *raw = NULL;
			size_t rawlen = 0;
			char *at, *p64, *forged;

			ASSERT_EQ(vep_b64url_decode(p1, (size_t)(p2 - p1), &raw, &rawlen), 0);
			ASSERT_TRUE((at = strstr((char *)raw, "user@")) != NULL);
			at[0] = 'x';
			p64 = vep_b64url_encode(raw, rawlen);
			forged = malloc(strlen(cert) + strlen(p64) + 1);
			ASSERT_TRUE(p64 != NULL && forged != NULL);
			sprintf(forged, "%.*s.%s%s", (int)(p1 - 1 - cert), cert, p64, p2);
			ASSERT_EQ(verify_vector(forged, strlen(forged), ck, NULL), VEP_ERR_BADSIG);
			free(forged);
			free(p64);
			free(raw);
		}
		/* one changed signature character breaks it */
		tampered = strdup(cert);
		{
			size_t at = (size_t)(strrchr(tampered, '.') - tampered) + 30;

			tampered[at] = tampered[at] == 'A' ? 'B' : 'A';
		}
		ASSERT_EQ(verify_vector(tampered, strlen(tampered), ck, NULL), VEP_ERR_BADSIG);
		free(tampered);
	}
}

/* "cert~assertion": the cert with the issuer key, the DS128 assertion with
 * the key the cert certifies. */
static void
check_backed(const char *backed, const json_t *rootkey, const char *want_aud)
{
	const char *tilde = strchr(backed, '~');
	json_t *cpayload = NULL, *apayload = NULL;
	const json_t *userkey;
	vep_jws *aj = NULL;

	ASSERT_TRUE(tilde != NULL && strchr(tilde + 1, '~') == NULL);
	ASSERT_EQ(verify_vector(backed, (size_t)(tilde - backed), rootkey, &cpayload), 0);
	userkey = json_object_get(cpayload, "public-key");
	ASSERT_TRUE(userkey != NULL);
	ASSERT_TRUE(canonical_same(userkey));
	ASSERT_EQ(vep_jws_parse(tilde + 1, strlen(tilde + 1), &aj), 0);
	ASSERT_STREQ(aj->alg->name, "DS128");
	ASSERT_EQ(aj->sig_len, 40);
	vep_jws_free(aj);
	ASSERT_EQ(verify_vector(tilde + 1, strlen(tilde + 1), userkey, &apayload), 0);
	ASSERT_STREQ(json_string_value(json_object_get(apayload, "aud")), want_aud);
	/* the assertion does not verify with the domain key (alg differs) nor
	 * after a signature change */
	ASSERT_EQ(verify_vector(tilde + 1, strlen(tilde + 1), rootkey, NULL), VEP_ERR_ALG);
	{
		char *t = strdup(tilde + 1);
		size_t at = (size_t)(strrchr(t, '.') - t) + 10;

		t[at] = t[at] == 'A' ? 'B' : 'A';
		ASSERT_EQ(verify_vector(t, strlen(t), userkey, NULL), VEP_ERR_BADSIG);
		free(t);
	}
	json_decref(cpayload);
	json_decref(apayload);
}

static void
test_vectors_assertions(void)
{
	json_t *list = json_object_get(vectors, "ASSERTIONS"), *v;
	size_t i;

	ASSERT_TRUE(json_array_size(list) >= 1);
	json_array_foreach(list, i, v) {
		check_backed(json_string_value(json_object_get(v, "assertion")),
		    json_object_get(v, "root"), "http://localhost:10001");
	}
}

static void
test_vectors_backed(void)
{
	json_t *list = json_object_get(vectors, "BACKED_ASSERTIONS"), *v;
	size_t i;

	ASSERT_TRUE(json_array_size(list) >= 1);
	json_array_foreach(list, i, v) {
		check_backed(json_string_value(json_object_get(v, "assertion")),
		    json_object_get(v, "certifyingKey"),
		    json_string_value(json_object_get(v, "audience")));
	}
}

/* The two halves (signing input, then the token of it and a signature
 * made elsewhere) give what signing in one call gives: the same input,
 * a token that parses and verifies; and they refuse what it refuses. */
static void
test_sign_halves(void)
{
	static const char payload[] = "{\"iss\":\"example.test\",\"n\":1}";
	size_t plen = sizeof(payload) - 1, inlen = 0, siglen = 0;
	char *input = NULL, *tok = NULL, *whole = NULL;
	struct vep_signer s = { ds128, vep_signer_key_sign, NULL };
	uint8_t *sig = NULL;
	vep_jws *j = NULL;

	ASSERT_EQ(vep_jws_signing_input(ds128, payload, plen, &input, &inlen), VEP_OK);
	ASSERT_EQ(inlen, strlen(input));
	ASSERT_EQ(vep_jws_sign_text_with(&s, payload, plen, &whole), VEP_OK);
	/* DSA signatures differ per call; the input before them does not. */
	ASSERT_TRUE(strncmp(whole, input, inlen) == 0 && whole[inlen] == '.');
	ASSERT_EQ(vep_key_sign(ds128, (const uint8_t *)input, inlen, &sig, &siglen), VEP_OK);
	ASSERT_EQ(vep_jws_join(input, sig, siglen, &tok), VEP_OK);
	ASSERT_EQ(vep_jws_parse(tok, strlen(tok), &j), VEP_OK);
	ASSERT_EQ(vep_jws_verify(j, ds128), VEP_OK);
	ASSERT_TRUE(vep_jws_verify(j, rs256) != VEP_OK);
	vep_jws_free(j);
	free(tok);
	tok = (char *)1;
	ASSERT_EQ(vep_jws_join(input, sig, 0, &tok), VEP_ERR_ARG);
	ASSERT_TRUE(tok == NULL);
	ASSERT_EQ(vep_jws_join(NULL, sig, siglen, &tok), VEP_ERR_ARG);
	free(sig);
	free(input);
	free(whole);
	input = (char *)1;
	ASSERT_EQ(vep_jws_signing_input(ds128, "[1]", 3, &input, &inlen), VEP_ERR_ARG);
	ASSERT_TRUE(input == NULL && inlen == 0);
	ASSERT_EQ(vep_jws_signing_input(NULL, payload, plen, &input, &inlen), VEP_ERR_ARG);
	ASSERT_EQ(vep_jws_signing_input(ds128, payload, 0, &input, &inlen), VEP_ERR_ARG);
}

int
main(void)
{
	const char *path = getenv("VEP_VECTORS");
	json_error_t jerr;
	int rc;

	if (path == NULL || (vectors = json_load_file(path, 0, &jerr)) == NULL) {
		fprintf(stderr, "cannot load vectors (VEP_VECTORS=%s)\n", path ? path : "(unset)");
		return 1;
	}
	if (vep_key_generate_rsa(2048, &rs256) != 0 ||
	    vep_key_generate_rsa(1024, &rs128) != 0 ||
	    vep_key_generate_dsa(1024, &ds128) != 0) {
		fprintf(stderr, "key generation failed\n");
		return 1;
	}
	RUN(test_sign_form);
	RUN(test_sign_halves);
	RUN(test_sign_verify_each_alg);
	RUN(test_tamper_and_alg_mismatch);
	RUN(test_parse_rejections);
	RUN(test_size_limit);
	RUN(test_vectors_certs);
	RUN(test_vectors_assertions);
	RUN(test_vectors_backed);
	vep_key_free(rs256);
	vep_key_free(rs128);
	vep_key_free(ds128);
	json_decref(vectors);
	rc = harness_done();
	return rc;
}
