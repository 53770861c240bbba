/*
 * alg_rsa.c - the RSA family: RS256 (2048-bit) and RS128 (1024-bit), both
 * RSASSA-PKCS1-v1_5 with SHA-256.
 *
 * Owns RSA public JSON ({"n","e"} in decimal), size and range checks, key
 * generation, and signing/verification through OpenSSL's EVP interface. It
 * must never accept a modulus size outside the table (RS64 and 3072/4096-bit
 * keys are rejected by the deployed verifiers; only the one-bit-short
 * tolerance below widens it), nor use deprecated RSA_* calls.
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

/* e odd, RSA_E_MIN <= e < n. */
static int
rsa_check_e(const BIGNUM *n, const BIGNUM *e)
{
	if (!BN_is_odd(e) || BN_cmp(e, n) >= 0)
		return VEP_ERR_KEY;
	if (BN_num_bits(e) <= 32 && BN_get_word(e) < RSA_E_MIN)
		return VEP_ERR_KEY;
	return VEP_OK;
}

static int
rsa_from_json(const json_t *obj, EVP_PKEY **pkey, const struct vep_alg **alg)
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
	if ((rc = rsa_alg_for_n(n, &a)) != 0 || (rc = rsa_check_e(n, e)) != 0)
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
	if ((rc = rsa_alg_for_n(n, &a)) != 0 || (rc = rsa_check_e(n, e)) != 0)
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
	.to_json = rsa_to_json,
	.check = rsa_check,
	.generate = rsa_generate,
	.sign = rsa_sign,
	.verify = rsa_verify,
};
