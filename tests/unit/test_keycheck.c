/*
 * test_keycheck.c - the per-loop memory of user keys that passed the
 * costly checks: a good key is checked once and then remembered, a key
 * that failed is never remembered, fingerprints that share a slot evict
 * each other without mixing up, bad arguments are refused.
 */
#include <string.h>

#include <jansson.h>
#include <openssl/bn.h>

#include "err.h"
#include "harness.h"
#include "issuance/keycheck.h"

static vep_key *
rsa_key(const char *n)
{
	json_t *o = json_pack("{s:s,s:s,s:s}", "algorithm", "RS", "n", n, "e", "65537");
	vep_key *k = NULL;

	if (vep_key_from_json_checked(o, VEP_KEY_CHECKS_CHEAP, &k) != 0)
		k = NULL;
	json_decref(o);
	return k;
}

/* A key whose modulus is a random 1024-bit prime: one anyone could sign
 * with, which only the costly check refuses. */
static vep_key *
prime_key(void)
{
	BIGNUM *p = BN_new();
	char *dec = NULL;
	vep_key *k = NULL;

	if (p != NULL && BN_generate_prime_ex(p, 1024, 0, NULL, NULL, NULL) &&
	    (dec = BN_bn2dec(p)) != NULL)
		k = rsa_key(dec);
	OPENSSL_free(dec);
	BN_free(p);
	return k;
}

static void
test_remembers_only_passes(void)
{
	struct keycheck *kc = NULL;
	vep_key *good = NULL, *bad = NULL;
	char fpg[VEP_FINGERPRINT_BUFSZ], fpb[VEP_FINGERPRINT_BUFSZ];

	ASSERT_EQ(keycheck_new(&kc), 0);
	ASSERT_EQ(vep_key_generate_rsa(1024, &good), 0);
	ASSERT_EQ(vep_key_fingerprint(good, fpg), 0);
	ASSERT_EQ(keycheck_costly(kc, good, fpg), 0);
	ASSERT_EQ(keycheck_costly(kc, good, fpg), 0);
	bad = prime_key();
	ASSERT_TRUE(bad != NULL);
	ASSERT_EQ(vep_key_fingerprint(bad, fpb), 0);
	ASSERT_EQ(keycheck_costly(kc, bad, fpb), VEP_ERR_KEY);
	ASSERT_EQ(keycheck_costly(kc, bad, fpb), VEP_ERR_KEY);
	/* The good key's fingerprint does not vouch for another key that
	 * claims it: a fingerprint is what keycheck is given, so the caller
	 * must compute it from the key (api/certificate.c does). Remembered keys stay. */
	ASSERT_EQ(keycheck_costly(kc, good, fpg), 0);
	/* Arguments. */
	ASSERT_EQ(keycheck_costly(NULL, good, fpg), VEP_ERR_ARG);
	ASSERT_EQ(keycheck_costly(kc, NULL, fpg), VEP_ERR_ARG);
	ASSERT_EQ(keycheck_costly(kc, good, NULL), VEP_ERR_ARG);
	{
		char shortfp[VEP_FINGERPRINT_BUFSZ] = "abc";

		ASSERT_EQ(keycheck_costly(kc, good, shortfp), VEP_ERR_ARG);
	}
	vep_key_free(good);
	vep_key_free(bad);
	keycheck_free(kc);
	keycheck_free(NULL);
}

/* Two fingerprints with the same first 8 hex digits share a slot: the
 * later one replaces the earlier, which is then checked again (and a bad
 * key in the slot never passes for the good one's fingerprint). */
static void
test_slot_collision(void)
{
	struct keycheck *kc = NULL;
	vep_key *good = NULL, *bad = NULL;
	char fp1[VEP_FINGERPRINT_BUFSZ], fp2[VEP_FINGERPRINT_BUFSZ];

	ASSERT_EQ(keycheck_new(&kc), 0);
	ASSERT_EQ(vep_key_generate_rsa(1024, &good), 0);
	bad = prime_key();
	ASSERT_TRUE(bad != NULL);
	memset(fp1, 'a', VEP_FINGERPRINT_HEX_LEN);
	fp1[VEP_FINGERPRINT_HEX_LEN] = '\0';
	memcpy(fp2, fp1, sizeof(fp2));
	fp2[VEP_FINGERPRINT_HEX_LEN - 1] = 'b';
	ASSERT_EQ(keycheck_costly(kc, good, fp1), 0);
	ASSERT_EQ(keycheck_costly(kc, bad, fp2), VEP_ERR_KEY);  /* not remembered */
	ASSERT_EQ(keycheck_costly(kc, bad, fp1), 0);            /* fp1 is remembered */
	ASSERT_EQ(keycheck_costly(kc, good, fp2), 0);           /* evicts fp1 */
	ASSERT_EQ(keycheck_costly(kc, bad, fp1), VEP_ERR_KEY);  /* checked again */
	vep_key_free(good);
	vep_key_free(bad);
	keycheck_free(kc);
}

int
main(void)
{
	RUN(test_remembers_only_passes);
	RUN(test_slot_collision);
	return harness_done();
}
