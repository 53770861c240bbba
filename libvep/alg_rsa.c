/*
 * alg_rsa.c - the RSA family: RS256 (2048-bit) and RS128 (1024-bit), both
 * RSASSA-PKCS1-v1_5 with SHA-256.
 *
 * Owns RSA public JSON ({"n","e"} in decimal), size and value checks (the
 * key policy below), key generation, and signing/verification through
 * OpenSSL's EVP interface. It must never accept a modulus size outside the
 * table (RS64 and 3072/4096-bit keys are rejected by the deployed verifiers;
 * only the one-bit-short tolerance below widens it), nor a key that anyone
 * could sign with, nor use deprecated RSA_* calls.
 *
 * Key policy, for every key that becomes a vep_key (JSON, PEM, generation),
 * so issuance and verification apply the same rules:
 *   - n odd, with no prime factor below RSA_TRIAL_PRIME_BOUND, and not
 *     prime (one Miller-Rabin round with a random base: a prime always
 *     passes it, an honest p*q essentially never does);
 *   - e odd, RSA_E_MIN <= e <= RSA_E_MAX (WebCrypto and jwcrypto use 65537).
 * A prime n, or n = small factor * prime, lets anyone compute a private
 * exponent; a huge e (say n - 2) serves no honest key. These checks refuse
 * keys that are weak by construction; they cannot prove that a modulus is
 * hard to factor.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include "alg_impl.h"
#include "err.h"

/* Smallest public exponent we accept; e = 1 makes "signing" the identity. */
#define RSA_E_MIN 3

/* Largest public exponent we accept: 2^32 - 1. Every generator in use picks
 * 3, 17 or 65537; a bound keeps verification cheap and rules out exponents
 * derived from n. */
#define RSA_E_MAX 0xffffffffUL

/* Trial division bound: n must have no prime factor below it. Covers the
 * odd primes of small_primes[] (all of them up to 2039); 2 is the oddness
 * check. */
#define RSA_TRIAL_PRIME_BOUND 2048

/* The odd primes below RSA_TRIAL_PRIME_BOUND. */
static const unsigned short small_primes[] = {
	3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67,
	71, 73, 79, 83, 89, 97, 101, 103, 107, 109, 113, 127, 131, 137, 139,
	149, 151, 157, 163, 167, 173, 179, 181, 191, 193, 197, 199, 211, 223,
	227, 229, 233, 239, 241, 251, 257, 263, 269, 271, 277, 281, 283, 293,
	307, 311, 313, 317, 331, 337, 347, 349, 353, 359, 367, 373, 379, 383,
	389, 397, 401, 409, 419, 421, 431, 433, 439, 443, 449, 457, 461, 463,
	467, 479, 487, 491, 499, 503, 509, 521, 523, 541, 547, 557, 563, 569,
	571, 577, 587, 593, 599, 601, 607, 613, 617, 619, 631, 641, 643, 647,
	653, 659, 661, 673, 677, 683, 691, 701, 709, 719, 727, 733, 739, 743,
	751, 757, 761, 769, 773, 787, 797, 809, 811, 821, 823, 827, 829, 839,
	853, 857, 859, 863, 877, 881, 883, 887, 907, 911, 919, 929, 937, 941,
	947, 953, 967, 971, 977, 983, 991, 997, 1009, 1013, 1019, 1021, 1031,
	1033, 1039, 1049, 1051, 1061, 1063, 1069, 1087, 1091, 1093, 1097, 1103,
	1109, 1117, 1123, 1129, 1151, 1153, 1163, 1171, 1181, 1187, 1193, 1201,
	1213, 1217, 1223, 1229, 1231, 1237, 1249, 1259, 1277, 1279, 1283, 1289,
	1291, 1297, 1301, 1303, 1307, 1319, 1321, 1327, 1361, 1367, 1373, 1381,
	1399, 1409, 1423, 1427, 1429, 1433, 1439, 1447, 1451, 1453, 1459, 1471,
	1481, 1483, 1487, 1489, 1493, 1499, 1511, 1523, 1531, 1543, 1549, 1553,
	1559, 1567, 1571, 1579, 1583, 1597, 1601, 1607, 1609, 1613, 1619, 1621,
	1627, 1637, 1657, 1663, 1667, 1669, 1693, 1697, 1699, 1709, 1721, 1723,
	1733, 1741, 1747, 1753, 1759, 1777, 1783, 1787, 1789, 1801, 1811, 1823,
	1831, 1847, 1861, 1867, 1871, 1873, 1877, 1879, 1889, 1901, 1907, 1913,
	1931, 1933, 1949, 1951, 1973, 1979, 1987, 1993, 1997, 1999, 2003, 2011,
	2017, 2027, 2029, 2039
};

/* Largest signature of any RSA table entry (bytes): RS256's 2048-bit
 * modulus. Sizes the stack buffer that left-pads short signatures. */
#define RSA_SIG_MAX_BYTES 256

static const char *const rsa_members[] = { "n", "e", NULL };

/* How many bits a modulus may fall short of its table size (bits). Old
 * JavaScript generators (jsbn, used by Persona's jwcrypto) sometimes made
 * 2047-bit "2048-bit" moduli: Mozilla's own known-answer certificates are
 * signed with such keys, and the deployed verifiers accept them (they
 * tolerate one bit either way). One bit over is not accepted: no known
 * generator makes those, and the signature would not fit the table's
 * sig_len. */
#define RSA_BITS_SHORT_TOLERANCE 1

/* Maps a modulus to its table entry, or VEP_ERR_KEYSIZE. */
static int
rsa_alg_for_n(const BIGNUM *n, const struct vep_alg **alg)
{
	int bits = BN_num_bits(n);

	*alg = NULL;
	for (int short_by = 0; short_by <= RSA_BITS_SHORT_TOLERANCE && *alg == NULL;
	    short_by++)
		*alg = vep_alg_by_size(VEP_FAMILY_RSA, bits + short_by, 0);
	return *alg != NULL ? VEP_OK : VEP_ERR_KEYSIZE;
}

/* e odd, RSA_E_MIN <= e <= RSA_E_MAX (so also e < n). */
static int
rsa_check_e(const BIGNUM *e)
{
	BN_ULONG w;

	if (!BN_is_odd(e) || BN_num_bits(e) > 32)
		return VEP_ERR_KEY;
	w = BN_get_word(e);
	return w >= RSA_E_MIN && w <= RSA_E_MAX ? VEP_OK : VEP_ERR_KEY;
}

/* 1 when n has a factor in small_primes[]. The primes are grouped into
 * products that fit one BN_ULONG, so n is divided once per group (a few
 * dozen word divisions of n) and each prime is tested on the remainder. */
static int
rsa_has_small_factor(const BIGNUM *n)
{
	const size_t count = sizeof(small_primes) / sizeof(small_primes[0]);
	size_t i = 0, j;

	while (i < count) {
		BN_ULONG m = 1, r;

		for (j = i; j < count && m <= (BN_ULONG)-1 / small_primes[j]; j++)
			m *= small_primes[j];
		if ((r = BN_mod_word(n, m)) == (BN_ULONG)-1)
			return 1; /* cannot happen for m > 0; refuse rather than pass */
		for (; i < j; i++)
			if (r % small_primes[i] == 0)
				return 1;
	}
	return 0;
}

/* One Miller-Rabin round on odd n > 3 with a random base a in [2, n - 2]:
 * *probable_prime = 1 when a is no witness of compositeness. Every prime
 * passes; for an RSA modulus p*q the chance of passing is negligible, and
 * below 1/4 for any composite, so a prime is always refused and an honest
 * key never. This is the most expensive check (one modular exponentiation
 * with an exponent as long as n); it runs last. */
static int
rsa_mr_round(const BIGNUM *n, BN_CTX *bctx, int *probable_prime)
{
	BN_MONT_CTX *mont = NULL;
	BIGNUM *n1, *d, *a, *x;
	int rc, s = 0;

	*probable_prime = 0;
	BN_CTX_start(bctx);
	n1 = BN_CTX_get(bctx);
	d = BN_CTX_get(bctx);
	a = BN_CTX_get(bctx);
	if ((x = BN_CTX_get(bctx)) == NULL || (mont = BN_MONT_CTX_new()) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	/* n - 1 = 2^s * d with d odd; a = 2 + uniform in [0, n - 4]. */
	if (!BN_sub(n1, n, BN_value_one()) || !BN_sub_word(n1, 2) ||
	    !BN_rand_range(a, n1) || !BN_add_word(a, 2) ||
	    !BN_sub(n1, n, BN_value_one())) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	while (!BN_is_bit_set(n1, s))
		s++;
	if (!BN_rshift(d, n1, s) || !BN_MONT_CTX_set(mont, n, bctx) ||
	    !BN_mod_exp_mont(x, a, d, n, bctx, mont)) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	if (BN_is_one(x) || BN_cmp(x, n1) == 0) {
		*probable_prime = 1;
		rc = VEP_OK;
		goto out;
	}
	for (int i = 1; i < s; i++) {
		if (!BN_mod_sqr(x, x, n, bctx)) {
			rc = vep_ossl_fail(VEP_ERR_CRYPTO);
			goto out;
		}
		if (BN_cmp(x, n1) == 0) {
			*probable_prime = 1;
			break;
		}
		if (BN_is_one(x))
			break; /* a nontrivial square root of 1: composite */
	}
	rc = VEP_OK;
out:
	BN_MONT_CTX_free(mont);
	BN_CTX_end(bctx);
	return rc;
}

/* The costly rule of the key policy: n is not prime (one Miller-Rabin
 * round, one full-length modular exponentiation: about 2 ms for RSA-2048,
 * seven signatures' worth). */
static int
rsa_check_not_prime(const BIGNUM *n)
{
	BN_CTX *bctx = NULL;
	int rc, prime = 0;

	if ((bctx = BN_CTX_new()) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	if ((rc = rsa_mr_round(n, bctx, &prime)) != 0)
		goto out;
	rc = prime ? VEP_ERR_KEY : VEP_OK;
out:
	BN_CTX_free(bctx);
	return rc;
}

/* The key policy (file header) on a modulus whose size is already allowed:
 * the cheap checks first, the Miller-Rabin round last (left out when costly
 * is 0: rsa_check_costly then applies it). */
static int
rsa_check_values(const BIGNUM *n, const BIGNUM *e, int costly)
{
	int rc;

	if ((rc = rsa_check_e(e)) != 0)
		return rc;
	if (!BN_is_odd(n) || rsa_has_small_factor(n))
		return VEP_ERR_KEY;
	return costly ? rsa_check_not_prime(n) : VEP_OK;
}

static int
rsa_check_costly(const EVP_PKEY *pkey)
{
	BIGNUM *n = NULL;
	int rc;

	if (!EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_N, &n))
		return vep_ossl_fail(VEP_ERR_KEY);
	rc = rsa_check_not_prime(n);
	BN_free(n);
	return rc;
}

static int
rsa_from_json(const json_t *obj, int costly, EVP_PKEY **pkey, const struct vep_alg **alg)
{
	BIGNUM *n = NULL, *e = NULL;
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY *k = NULL;
	const struct vep_alg *a = NULL;
	int rc;

	*pkey = NULL;
	*alg = NULL;
	if ((rc = vep_bn_from_json(obj, "n", VEP_RADIX_DEC, &n)) != 0 ||
	    (rc = vep_bn_from_json(obj, "e", VEP_RADIX_DEC, &e)) != 0)
		goto out;
	if ((rc = rsa_alg_for_n(n, &a)) != 0 || (rc = rsa_check_values(n, e, costly)) != 0)
		goto out;
	if ((bld = OSSL_PARAM_BLD_new()) == NULL ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) ||
	    (params = OSSL_PARAM_BLD_to_param(bld)) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	if ((rc = vep_pkey_public_from_params("RSA", params, &k)) != 0)
		goto out;
	*pkey = k;
	*alg = a;
	k = NULL;
	rc = VEP_OK;
out:
	EVP_PKEY_free(k);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(n);
	BN_free(e);
	return rc;
}

static int
rsa_to_json(const EVP_PKEY *pkey, json_t *obj)
{
	BIGNUM *n = NULL, *e = NULL;
	int rc;

	if (!EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_N, &n) ||
	    !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_E, &e)) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	if ((rc = vep_bn_to_json(obj, "n", n, VEP_RADIX_DEC)) != 0 ||
	    (rc = vep_bn_to_json(obj, "e", e, VEP_RADIX_DEC)) != 0)
		goto out;
	rc = VEP_OK;
out:
	BN_free(n);
	BN_free(e);
	return rc;
}

/* A key from PEM or generation gets the same size and exponent rules as
 * one from JSON, so a bad file cannot sign what we would refuse to read. */
static int
rsa_check(const EVP_PKEY *pkey, const struct vep_alg **alg)
{
	BIGNUM *n = NULL, *e = NULL;
	const struct vep_alg *a = NULL;
	int rc;

	*alg = NULL;
	if (!EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_N, &n) ||
	    !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_RSA_E, &e)) {
		rc = vep_ossl_fail(VEP_ERR_KEY);
		goto out;
	}
	if ((rc = rsa_alg_for_n(n, &a)) != 0 || (rc = rsa_check_values(n, e, 1)) != 0)
		goto out;
	*alg = a;
	rc = VEP_OK;
out:
	BN_free(n);
	BN_free(e);
	return rc;
}

static int
rsa_generate(int bits, EVP_PKEY **out)
{
	int rc;

	*out = NULL;
	if (vep_alg_by_size(VEP_FAMILY_RSA, bits, 0) == NULL) {
		rc = VEP_ERR_KEYSIZE;
		goto out;
	}
	/* OpenSSL's default public exponent is 65537. */
	if ((*out = EVP_PKEY_Q_keygen(NULL, NULL, "RSA", (size_t)bits)) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	rc = VEP_OK;
out:
	return rc;
}

static int
rsa_sign(const struct vep_alg *alg, EVP_PKEY *pkey, const uint8_t *msg,
    size_t len, uint8_t **sig, size_t *siglen)
{
	EVP_MD_CTX *mctx = NULL;
	uint8_t *buf = NULL;
	size_t blen = alg->sig_len;
	int rc;

	*sig = NULL;
	*siglen = 0;
	if ((buf = malloc(blen)) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	/* The default padding of an RSA signing context is PKCS#1 v1.5. */
	if ((mctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit(mctx, NULL, EVP_sha256(), NULL, pkey) != 1 ||
	    EVP_DigestSign(mctx, buf, &blen, msg, len) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	if (blen != alg->sig_len) {
		rc = VEP_ERR_CRYPTO;
		goto out;
	}
	*sig = buf;
	*siglen = blen;
	buf = NULL;
	rc = VEP_OK;
out:
	free(buf);
	EVP_MD_CTX_free(mctx);
	return rc;
}

/* A prepared RSASSA-PKCS1-v1_5 / SHA-256 signing context: rsa_sign's
 * EVP_DigestSignInit, per signature, fetches SHA-256 and the RSA signature
 * implementation (EVP_sha256() is a legacy pointer: each init looks the
 * provider's up again), makes a new EVP_PKEY_CTX and sets its padding and
 * digest. Here that is done once: the digest is fetched once, the ctx is
 * initialised once, and a signature costs the SHA-256 of msg and
 * EVP_PKEY_sign on the digest. OpenSSL 3.0 lets EVP_PKEY_sign run again
 * and again on one initialised ctx (the provider keeps no per-signature
 * state in it; test_key checks many signatures on one signer). The ctx
 * refers to the caller's pkey, which outlives it (key.c's signer). */
struct rsa_prep {
	EVP_MD *md;                      /* fetched SHA-256 */
	EVP_PKEY_CTX *pctx;              /* sign-initialised: PKCS#1 v1.5, SHA-256 */
};

static void
rsa_sign_release(void *prep)
{
	struct rsa_prep *rp = prep;

	if (rp == NULL)
		return;
	EVP_PKEY_CTX_free(rp->pctx);
	EVP_MD_free(rp->md);
	free(rp);
}

static int
rsa_sign_prepare(const struct vep_alg *alg, EVP_PKEY *pkey, void **prep)
{
	struct rsa_prep *rp = NULL;
	int rc;

	(void)alg;
	*prep = NULL;
	if ((rp = calloc(1, sizeof(*rp))) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	/* Padding and digest are set explicitly: the ctx's defaults are not
	 * what this file promises, only what OpenSSL happens to pick. */
	if ((rp->md = EVP_MD_fetch(NULL, "SHA256", NULL)) == NULL ||
	    (rp->pctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL)) == NULL ||
	    EVP_PKEY_sign_init(rp->pctx) != 1 ||
	    EVP_PKEY_CTX_set_rsa_padding(rp->pctx, RSA_PKCS1_PADDING) != 1 ||
	    EVP_PKEY_CTX_set_signature_md(rp->pctx, rp->md) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	*prep = rp;
	rp = NULL;
	rc = VEP_OK;
out:
	rsa_sign_release(rp);
	return rc;
}

/* rsa_sign's output and checks, on a prepared context. */
static int
rsa_sign_prepared(const struct vep_alg *alg, void *prep, const uint8_t *msg, size_t len,
    uint8_t **sig, size_t *siglen)
{
	struct rsa_prep *rp = prep;
	unsigned char dgst[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	uint8_t *buf = NULL;
	size_t blen = alg->sig_len;
	int rc;

	*sig = NULL;
	*siglen = 0;
	if ((buf = malloc(blen)) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	if (EVP_Digest(msg, len, dgst, &dlen, rp->md, NULL) != 1 ||
	    EVP_PKEY_sign(rp->pctx, buf, &blen, dgst, dlen) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	if (blen != alg->sig_len) {
		rc = VEP_ERR_CRYPTO;
		goto out;
	}
	*sig = buf;
	*siglen = blen;
	buf = NULL;
	rc = VEP_OK;
out:
	free(buf);
	return rc;
}

/* The JS signer emits the signature integer without leading zero bytes, so
 * about one signature in 256 is shorter than the modulus: left-pad it. A
 * longer one can never be valid. */
static int
rsa_verify(const struct vep_alg *alg, EVP_PKEY *pkey, const uint8_t *msg,
    size_t len, const uint8_t *sig, size_t siglen)
{
	EVP_MD_CTX *mctx = NULL;
	uint8_t padded[RSA_SIG_MAX_BYTES];
	const uint8_t *s = sig;
	int rc;

	if (alg->sig_len > sizeof(padded)) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if (siglen == 0 || siglen > alg->sig_len) {
		rc = VEP_ERR_BADSIG;
		goto out;
	}
	if (siglen < alg->sig_len) {
		memset(padded, 0, alg->sig_len - siglen);
		memcpy(padded + (alg->sig_len - siglen), sig, siglen);
		s = padded;
	}
	if ((mctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestVerifyInit(mctx, NULL, EVP_sha256(), NULL, pkey) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	if (EVP_DigestVerify(mctx, s, alg->sig_len, msg, len) != 1) {
		rc = vep_ossl_fail(VEP_ERR_BADSIG);
		goto out;
	}
	rc = VEP_OK;
out:
	EVP_MD_CTX_free(mctx);
	return rc;
}

const struct vep_alg_ops vep_alg_rsa_ops = {
	.family = VEP_FAMILY_RSA,
	.json_name = "RS",
	.ossl_name = "RSA",
	.members = rsa_members,
	.from_json = rsa_from_json,
	.check_costly = rsa_check_costly,
	.to_json = rsa_to_json,
	.check = rsa_check,
	.generate = rsa_generate,
	.sign = rsa_sign,
	.verify = rsa_verify,
	.sign_prepare = rsa_sign_prepare,
	.sign_prepared = rsa_sign_prepared,
	.sign_release = rsa_sign_release,
};
