/*
 * test_vectors.c - Mozilla's browserid-crypto known-answer vectors (made by
 * someone else's code, as deployed by Persona) through libvep's parsers and
 * verifiers: each verifies "as of" its own times with the expected issuer,
 * email, audience and times, and is refused once expired, with a tampered
 * byte, with the wrong key and with the wrong audience.
 *
 * The file comes from $VEP_VECTORS (set by meson); without it the test
 * cannot run and exits 77.
 */
#include <stdlib.h>
#include <string.h>

#include "assertion.h"
#include "cert.h"
#include "err.h"
#include "harness.h"

static json_t *vectors;

static vep_key *
key_of(const json_t *obj)
{
	vep_key *k = NULL;
	if (vep_key_from_json(obj, &k) != 0)
		return NULL;
	return k;
}

static const char *
str_of(const json_t *o, const char *name)
{
	return json_string_value(json_object_get(o, name));
}

static int64_t
ms_of(const json_t *o, const char *name)
{
	return (int64_t)json_integer_value(json_object_get(o, name));
}

/* Changes one character at pos_in_part of part (1 payload, 2 signature),
 * keeping it in the base64url alphabet where possible. The result must be
 * refused, either by the parser or by the signature check. New string. */
static char *
tamper(const char *token, size_t pos_in_part, int part)
{
	char *t = strdup(token);
	char *p = t;
	for (int i = 0; i < part; i++)
		p = strchr(p, '.') + 1;
	char *c = p + pos_in_part;
	/* Swap between two letters whose 6-bit values differ only in bit 0,
	 * so the decoded JSON stays mostly intact. */
	*c = (*c == 'A') ? 'B' : (*c == 'B') ? 'A' : (*c ^ 1);
	return t;
}

static void
test_certs(void)
{
	const json_t *arr = json_object_get(vectors, "CERTS");
	ASSERT_TRUE(json_array_size(arr) > 0);
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *v = json_array_get(arr, i);
		const char *text = str_of(v, "cert");
		int64_t issued = ms_of(v, "issued_at"), expires = ms_of(v, "expires_at");
		vep_key *root = key_of(json_object_get(v, "certifierPublicKey"));
		vep_key *contained = key_of(json_object_get(v, "containedPublicKey"));
		vep_cert *c = NULL;
		ASSERT_TRUE(root != NULL && contained != NULL);
		ASSERT_EQ(vep_cert_parse(text, strlen(text), &c), 0);
		ASSERT_STREQ(c->issuer, str_of(v, "issuer"));
		ASSERT_STREQ(c->email, str_of(v, "email"));
		ASSERT_EQ(c->iat_ms, issued);
		ASSERT_EQ(c->exp_ms, expires);
		ASSERT_TRUE(vep_key_public_equal(c->pubkey, contained));
		ASSERT_STREQ(vep_key_alg(c->pubkey)->name, "DS128");
		ASSERT_STREQ(c->jws->alg->name, "RS256");

		const vep_key *keys[] = { root };
		ASSERT_EQ(vep_cert_verify(c, keys, 1, issued), 0);
		ASSERT_EQ(vep_cert_verify(c, keys, 1, issued + 1), 0);
		ASSERT_EQ(vep_cert_verify(c, keys, 1, expires - 1), 0);
		/* The clock skew (cert.h) on both sides. */
		ASSERT_EQ(vep_cert_verify(c, keys, 1, expires + VEP_CLOCK_SKEW_MS - 1), 0);
		ASSERT_EQ(vep_cert_verify(c, keys, 1, expires + VEP_CLOCK_SKEW_MS),
		    VEP_ERR_EXPIRED);
		ASSERT_EQ(vep_cert_verify(c, keys, 1, issued - VEP_CLOCK_SKEW_MS), 0);
		ASSERT_EQ(vep_cert_verify(c, keys, 1, issued - VEP_CLOCK_SKEW_MS - 1),
		    VEP_ERR_NOTYET);
		/* The contained key did not sign it (and is another alg). */
		const vep_key *wrong[] = { contained };
		ASSERT_EQ(vep_cert_verify(c, wrong, 1, issued + 1), VEP_ERR_BADSIG);
		vep_cert_free(c);

		/* A changed byte in the payload or the signature. */
		for (int part = 1; part <= 2; part++) {
			char *t = tamper(text, 30, part);
			int r = vep_cert_parse(t, strlen(t), &c);
			if (r == 0) {
				r = vep_cert_verify(c, keys, 1, issued + 1);
				vep_cert_free(c);
				ASSERT_EQ(r, VEP_ERR_BADSIG);
			} else {
				ASSERT_TRUE(r < 0);
			}
			free(t);
		}
		vep_key_free(root);
		vep_key_free(contained);
	}
}

static void
check_backed(const char *text, const vep_key *root, const char *issuer,
    const char *email, const char *audience, int64_t now, int64_t exp, int64_t iat)
{
	vep_backed *b = NULL;
	const vep_key *keys[] = { root };

	ASSERT_EQ(vep_backed_parse(text, strlen(text), &b), 0);
	ASSERT_STREQ(b->cert->issuer, issuer);
	ASSERT_STREQ(b->cert->email, email);
	ASSERT_STREQ(b->audience, audience);
	ASSERT_EQ(b->exp_ms, exp);
	ASSERT_EQ(b->iat_ms, iat);
	ASSERT_STREQ(b->assertion->alg->name, "DS128");
	ASSERT_EQ(vep_backed_verify(b, audience, issuer, keys, 1, now), 0);
	ASSERT_EQ(vep_backed_verify(b, audience, issuer, keys, 1, exp + VEP_CLOCK_SKEW_MS - 1), 0);
	ASSERT_EQ(vep_backed_verify(b, audience, issuer, keys, 1, exp + VEP_CLOCK_SKEW_MS),
	    VEP_ERR_EXPIRED);
	ASSERT_EQ(vep_backed_verify(b, "https://other.example", issuer, keys, 1, now),
	    VEP_ERR_AUDIENCE);
	ASSERT_EQ(vep_backed_verify(b, audience, "other.example", keys, 1, now), VEP_ERR_ISSUER);
	const vep_key *wrong[] = { b->cert->pubkey };
	ASSERT_EQ(vep_backed_verify(b, audience, issuer, wrong, 1, now), VEP_ERR_BADSIG);
	vep_backed_free(b);

	/* Tamper with the certificate, the assertion payload, the signature. */
	const char *tilde = strchr(text, '~');
	size_t cert_len = (size_t)(tilde - text);
	static const struct { int in_assertion; int part; } spots[] = {
		{ 0, 1 }, { 0, 2 }, { 1, 1 }, { 1, 2 },
	};
	for (size_t i = 0; i < sizeof spots / sizeof spots[0]; i++) {
		char *t;
		if (spots[i].in_assertion) {
			char *a = tamper(tilde + 1, 10, spots[i].part);
			t = malloc(strlen(text) + 1);
			memcpy(t, text, cert_len + 1);
			strcpy(t + cert_len + 1, a);
			free(a);
		} else {
			t = tamper(text, 30, spots[i].part);
		}
		int r = vep_backed_parse(t, strlen(t), &b);
		if (r == 0) {
			r = vep_backed_verify(b, audience, issuer, keys, 1, now);
			vep_backed_free(b);
			if (r != VEP_ERR_BADSIG)
				fprintf(stderr, "spot %zu: %d\n", i, r);
			ASSERT_EQ(r, VEP_ERR_BADSIG);
		} else {
			ASSERT_TRUE(r < 0);
		}
		free(t);
	}
}

static void
test_backed_assertions(void)
{
	const json_t *arr = json_object_get(vectors, "BACKED_ASSERTIONS");
	ASSERT_TRUE(json_array_size(arr) > 0);
	for (size_t i = 0; i < json_array_size(arr); i++) {
		const json_t *v = json_array_get(arr, i);
		vep_key *root = key_of(json_object_get(v, "certifyingKey"));
		const char *email = str_of(v, "email");
		ASSERT_TRUE(root != NULL && email != NULL);
		/* The issuer is the email's domain here. */
		const char *issuer = strchr(email, '@') + 1;
		int64_t issued = ms_of(v, "issued_at");
		check_backed(str_of(v, "assertion"), root, issuer, email, str_of(v, "audience"),
		    issued + 1, ms_of(v, "expires_at"), issued);
		vep_key_free(root);
	}
}

/* The older ASSERTIONS vector states no expectations; these were read from
 * its payloads: a certificate from issuer 127.0.0.1 (iat 1335559098768) and
 * a DS128 assertion for http://localhost:10001 expiring at 1335559415733. */
static void
test_assertions(void)
{
	const json_t *arr = json_object_get(vectors, "ASSERTIONS");
	ASSERT_EQ(json_array_size(arr), 1);
	const json_t *v = json_array_get(arr, 0);
	vep_key *root = key_of(json_object_get(v, "root"));
	ASSERT_TRUE(root != NULL);
	const int64_t cert_iat = 1335559098768LL, a_exp = 1335559415733LL;
	check_backed(str_of(v, "assertion"), root, "127.0.0.1", "ben@adida.net",
	    "http://localhost:10001", cert_iat + 1, a_exp, -1);

	vep_backed *b = NULL;
	const char *text = str_of(v, "assertion");
	const vep_key *keys[] = { root };
	ASSERT_EQ(vep_backed_parse(text, strlen(text), &b), 0);
	ASSERT_EQ(b->cert->iat_ms, cert_iat);
	ASSERT_EQ(vep_backed_verify(b, "http://localhost:10001", "127.0.0.1", keys, 1,
	    cert_iat - VEP_CLOCK_SKEW_MS - 1), VEP_ERR_NOTYET);
	/* Port and scheme are part of the audience. */
	ASSERT_EQ(vep_backed_verify(b, "http://localhost", "127.0.0.1", keys, 1, cert_iat + 1),
	    VEP_ERR_AUDIENCE);
	ASSERT_EQ(vep_backed_verify(b, "https://localhost:10001", "127.0.0.1", keys, 1,
	    cert_iat + 1), VEP_ERR_AUDIENCE);
	vep_backed_free(b);
	vep_key_free(root);
}

int
main(void)
{
	const char *path = getenv("VEP_VECTORS");
	json_error_t e;
	if (path == NULL || (vectors = json_load_file(path, 0, &e)) == NULL) {
		fprintf(stderr, "vectors not available (%s): skipping\n",
		    path ? path : "VEP_VECTORS unset");
		return 77;
	}
	RUN(test_certs);
	RUN(test_backed_assertions);
	RUN(test_assertions);
	json_decref(vectors);
	return harness_done();
}
