/*
 * fuzz_key_json.c - BrowserID public key JSON (key.c).
 *
 * Invariants on any accepted key: it has no private half, a known
 * algorithm, parse -> serialise -> parse gives an equal key with the
 * same canonical text and fingerprint, and the cheap parts of the key
 * policy (key.h) hold on its numbers: RSA n odd, e odd in [3, 2^32 - 1];
 * DSA 1 < y < p - 1 and q odd. The seeds hold one key of each unsafe
 * class (unsafe-*), all refused.
 */
#include <string.h>

#include <openssl/bn.h>

#include "fuzz.h"
#include "key.h"

/* A number member of the canonical JSON as a new BIGNUM. */
static BIGNUM *
member_bn(const json_t *o, const char *name, int hex)
{
	const char *s = json_string_value(json_object_get(o, name));
	BIGNUM *bn = NULL;

	FUZZ_CHECK(s != NULL);
	FUZZ_CHECK((hex ? BN_hex2bn(&bn, s) : BN_dec2bn(&bn, s)) == (int)strlen(s));
	return bn;
}

static void
check_policy(const vep_key *k)
{
	json_t *o = vep_key_to_json(k);
	const char *alg;

	FUZZ_CHECK(o != NULL);
	alg = json_string_value(json_object_get(o, "algorithm"));
	FUZZ_CHECK(alg != NULL);
	if (strcmp(alg, "RS") == 0) {
		BIGNUM *n = member_bn(o, "n", 0), *e = member_bn(o, "e", 0);

		FUZZ_CHECK(BN_is_odd(n) && BN_is_odd(e) && BN_num_bits(e) <= 32 &&
		    BN_get_word(e) >= 3);
		BN_free(n);
		BN_free(e);
	} else {
		BIGNUM *y = member_bn(o, "y", 1), *p = member_bn(o, "p", 1);
		BIGNUM *q = member_bn(o, "q", 1), *pm1 = BN_dup(p);

		FUZZ_CHECK(pm1 != NULL && BN_sub_word(pm1, 1));
		FUZZ_CHECK(!BN_is_one(y) && BN_cmp(y, pm1) < 0 && BN_is_odd(q));
		BN_free(y);
		BN_free(p);
		BN_free(q);
		BN_free(pm1);
	}
	json_decref(o);
}

int
fuzz_main(const uint8_t *data, size_t len)
{
	vep_key *k = NULL, *k2 = NULL;
	char *t = NULL, *t2 = NULL;
	char fp[VEP_FINGERPRINT_BUFSZ], fp2[VEP_FINGERPRINT_BUFSZ];

	if (vep_key_from_json_text((const char *)data, len, &k) != 0)
		return 0;
	FUZZ_CHECK(k != NULL);
	FUZZ_CHECK(!vep_key_has_private(k));
	FUZZ_CHECK(vep_key_alg(k) != NULL);
	FUZZ_CHECK((t = vep_key_to_json_text(k)) != NULL);
	FUZZ_CHECK(vep_key_from_json_text(t, strlen(t), &k2) == 0);
	FUZZ_CHECK(vep_key_public_equal(k, k2));
	FUZZ_CHECK(vep_key_alg(k) == vep_key_alg(k2));
	FUZZ_CHECK((t2 = vep_key_to_json_text(k2)) != NULL);
	FUZZ_CHECK(strcmp(t, t2) == 0);
	FUZZ_CHECK(vep_key_fingerprint(k, fp) == 0 && vep_key_fingerprint(k2, fp2) == 0);
	FUZZ_CHECK(strcmp(fp, fp2) == 0);
	check_policy(k);
	free(t);
	free(t2);
	vep_key_free(k);
	vep_key_free(k2);
	return 0;
}
