/*
 * alg_dsa.c - the DSA family: DS128 (p 1024 / q 160, SHA-1) and DS256
 * (p 2048 / q 256, SHA-256), signatures as raw r||s.
 *
 * Owns DSA public JSON ({"y","p","q","g"} in hex), domain-parameter checks,
 * generation, and the conversion between JWS's fixed-width r||s and the DER
 * that OpenSSL's EVP interface speaks. Persona's browser code made DS128 user
 * keys, so certificates and assertions with them still arrive. It must never
 * use the deprecated DSA_* key functions (DSA_SIG_* are not deprecated) nor
 * accept a signature whose r or s lies outside (0, q).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/dsa.h>
#include <openssl/param_build.h>

#include "alg_impl.h"
#include "err.h"

static const char *const dsa_members[] = { "y", "p", "q", "g", NULL };

/* Maps p and q to a table entry, or VEP_ERR_KEYSIZE. */
static int
dsa_alg_for(const BIGNUM *p, const BIGNUM *q, const struct vep_alg **alg)
{
	*alg = vep_alg_by_size(VEP_FAMILY_DSA, BN_num_bits(p), BN_num_bits(q));
	return *alg != NULL ? VEP_OK : VEP_ERR_KEYSIZE;
}

static const EVP_MD *
dsa_md(const struct vep_alg *alg)
{
	/* DS128 is SHA-1 (the label is the strength jwcrypto claimed). */
	return alg->qbits == 160 ? EVP_sha1() : EVP_sha256();
}

/* 1 < x < p. */
static int
dsa_in_group_range(const BIGNUM *x, const BIGNUM *p)
{
	return !BN_is_zero(x) && !BN_is_one(x) && !BN_is_negative(x) &&
	    BN_cmp(x, p) < 0;
}

/* Range checks of the public values: 1 < g < p, 1 < y < p, and g
 * generates the order-q subgroup (g^q = 1 mod p), so a forged "key" with a
 * small-order generator cannot make many signatures verify. */
static int
dsa_check_values(const BIGNUM *p, const BIGNUM *q, const BIGNUM *g,
    const BIGNUM *y)
{
	BN_CTX *bctx = NULL;
	BIGNUM *t = NULL;
	int rc;

	if (!dsa_in_group_range(g, p) || !dsa_in_group_range(y, p)) {
		rc = VEP_ERR_KEY;
		goto out;
	}
	if ((bctx = BN_CTX_new()) == NULL || (t = BN_new()) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	if (!BN_mod_exp(t, g, q, p, bctx)) {
		/* An even p fails Montgomery setup: not a valid group anyway. */
		rc = vep_ossl_fail(VEP_ERR_KEY);
		goto out;
	}
	rc = BN_is_one(t) ? VEP_OK : VEP_ERR_KEY;
out:
	BN_free(t);
	BN_CTX_free(bctx);
	return rc;
}

static int
dsa_from_json(const json_t *obj, EVP_PKEY **pkey, const struct vep_alg **alg)
{
	BIGNUM *y = NULL, *p = NULL, *q = NULL, *g = NULL;
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY *k = NULL;
	const struct vep_alg *a = NULL;
	int rc;

	*pkey = NULL;
	*alg = NULL;
	if ((rc = vep_bn_from_json(obj, "y", VEP_RADIX_HEX, &y)) != 0 ||
	    (rc = vep_bn_from_json(obj, "p", VEP_RADIX_HEX, &p)) != 0 ||
	    (rc = vep_bn_from_json(obj, "q", VEP_RADIX_HEX, &q)) != 0 ||
	    (rc = vep_bn_from_json(obj, "g", VEP_RADIX_HEX, &g)) != 0)
		goto out;
	if ((rc = dsa_alg_for(p, q, &a)) != 0 ||
	    (rc = dsa_check_values(p, q, g, y)) != 0)
		goto out;
	if ((bld = OSSL_PARAM_BLD_new()) == NULL ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_FFC_P, p) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_FFC_Q, q) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_FFC_G, g) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_PUB_KEY, y) ||
	    (params = OSSL_PARAM_BLD_to_param(bld)) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	if ((rc = vep_pkey_public_from_params("DSA", params, &k)) != 0)
		goto out;
	*pkey = k;
	*alg = a;
	k = NULL;
	rc = VEP_OK;
out:
	EVP_PKEY_free(k);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(y);
	BN_free(p);
	BN_free(q);
	BN_free(g);
	return rc;
}

/* Fetches the public values; any of the out-pointers may be NULL. */
static int
dsa_get(const EVP_PKEY *pkey, BIGNUM **y, BIGNUM **p, BIGNUM **q, BIGNUM **g)
{
	if ((y != NULL && !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_PUB_KEY, y)) ||
	    (p != NULL && !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_FFC_P, p)) ||
	    (q != NULL && !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_FFC_Q, q)) ||
	    (g != NULL && !EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_FFC_G, g)))
		return vep_ossl_fail(VEP_ERR_KEY);
	return VEP_OK;
}

static int
dsa_to_json(const EVP_PKEY *pkey, json_t *obj)
{
	BIGNUM *y = NULL, *p = NULL, *q = NULL, *g = NULL;
	int rc;

	if ((rc = dsa_get(pkey, &y, &p, &q, &g)) != 0)
		goto out;
	if ((rc = vep_bn_to_json(obj, "y", y, VEP_RADIX_HEX)) != 0 ||
	    (rc = vep_bn_to_json(obj, "p", p, VEP_RADIX_HEX)) != 0 ||
	    (rc = vep_bn_to_json(obj, "q", q, VEP_RADIX_HEX)) != 0 ||
	    (rc = vep_bn_to_json(obj, "g", g, VEP_RADIX_HEX)) != 0)
		goto out;
	rc = VEP_OK;
out:
	BN_free(y);
	BN_free(p);
	BN_free(q);
	BN_free(g);
	return rc;
}

static int
dsa_check(const EVP_PKEY *pkey, const struct vep_alg **alg)
{
	BIGNUM *y = NULL, *p = NULL, *q = NULL, *g = NULL;
	const struct vep_alg *a = NULL;
	int rc;

	*alg = NULL;
	if ((rc = dsa_get(pkey, &y, &p, &q, &g)) != 0)
		goto out;
	if ((rc = dsa_alg_for(p, q, &a)) != 0 ||
	    (rc = dsa_check_values(p, q, g, y)) != 0)
		goto out;
	*alg = a;
	rc = VEP_OK;
out:
	BN_free(y);
	BN_free(p);
	BN_free(q);
	BN_free(g);
	return rc;
}

/* Fresh domain parameters, then a key in them (FIPS 186-4 generation, the
 * OpenSSL default; well under a second for 2048/256). */
static int
dsa_generate(int bits, EVP_PKEY **out)
{
	const struct vep_alg *a = NULL;
	EVP_PKEY_CTX *pctx = NULL, *kctx = NULL;
	EVP_PKEY *params = NULL;
	int rc, qbits;

	*out = NULL;
	qbits = bits == 1024 ? 160 : 256;
	if ((a = vep_alg_by_size(VEP_FAMILY_DSA, bits, qbits)) == NULL) {
		rc = VEP_ERR_KEYSIZE;
		goto out;
	}
	if ((pctx = EVP_PKEY_CTX_new_from_name(NULL, "DSA", NULL)) == NULL ||
	    EVP_PKEY_paramgen_init(pctx) != 1 ||
	    EVP_PKEY_CTX_set_dsa_paramgen_bits(pctx, a->bits) != 1 ||
	    EVP_PKEY_CTX_set_dsa_paramgen_q_bits(pctx, a->qbits) != 1 ||
	    EVP_PKEY_paramgen(pctx, &params) != 1 ||
	    (kctx = EVP_PKEY_CTX_new_from_pkey(NULL, params, NULL)) == NULL ||
	    EVP_PKEY_keygen_init(kctx) != 1 ||
	    EVP_PKEY_keygen(kctx, out) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	rc = VEP_OK;
out:
	EVP_PKEY_free(params);
	EVP_PKEY_CTX_free(pctx);
	EVP_PKEY_CTX_free(kctx);
	return rc;
}

static int
dsa_sign(const struct vep_alg *alg, EVP_PKEY *pkey, const uint8_t *msg,
    size_t len, uint8_t **sig, size_t *siglen)
{
	EVP_MD_CTX *mctx = NULL;
	DSA_SIG *ds = NULL;
	const BIGNUM *r, *s;
	const unsigned char *dp;
	unsigned char *der = NULL;
	uint8_t *buf = NULL;
	size_t derlen = 0, qbytes = (size_t)alg->qbits / 8;
	int rc;

	*sig = NULL;
	*siglen = 0;
	if ((mctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestSignInit(mctx, NULL, dsa_md(alg), NULL, pkey) != 1 ||
	    EVP_DigestSign(mctx, NULL, &derlen, msg, len) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	if ((der = malloc(derlen)) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	if (EVP_DigestSign(mctx, der, &derlen, msg, len) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	dp = der;
	if ((ds = d2i_DSA_SIG(NULL, &dp, (long)derlen)) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	DSA_SIG_get0(ds, &r, &s);
	if ((buf = malloc(2 * qbytes)) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	/* Fixed width: what the deployed verifiers split at qbytes. */
	if (BN_bn2binpad(r, buf, (int)qbytes) < 0 ||
	    BN_bn2binpad(s, buf + qbytes, (int)qbytes) < 0) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	*sig = buf;
	*siglen = 2 * qbytes;
	buf = NULL;
	rc = VEP_OK;
out:
	free(buf);
	free(der);
	DSA_SIG_free(ds);
	EVP_MD_CTX_free(mctx);
	return rc;
}

static int
dsa_verify(const struct vep_alg *alg, EVP_PKEY *pkey, const uint8_t *msg,
    size_t len, const uint8_t *sig, size_t siglen)
{
	EVP_MD_CTX *mctx = NULL;
	DSA_SIG *ds = NULL;
	BIGNUM *r = NULL, *s = NULL, *q = NULL;
	unsigned char *der = NULL;
	size_t qbytes = (size_t)alg->qbits / 8;
	int rc, derlen;

	if (siglen != 2 * qbytes) {
		rc = VEP_ERR_BADSIG;
		goto out;
	}
	if ((rc = dsa_get(pkey, NULL, NULL, &q, NULL)) != 0)
		goto out;
	if ((r = BN_bin2bn(sig, (int)qbytes, NULL)) == NULL ||
	    (s = BN_bin2bn(sig + qbytes, (int)qbytes, NULL)) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	/* OpenSSL checks this too; doing it here makes the rule ours and
	 * independent of the library version. */
	if (BN_is_zero(r) || BN_is_zero(s) || BN_cmp(r, q) >= 0 ||
	    BN_cmp(s, q) >= 0) {
		rc = VEP_ERR_BADSIG;
		goto out;
	}
	if ((ds = DSA_SIG_new()) == NULL || !DSA_SIG_set0(ds, r, s)) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	r = s = NULL; /* owned by ds now */
	if ((derlen = i2d_DSA_SIG(ds, &der)) <= 0) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	if ((mctx = EVP_MD_CTX_new()) == NULL ||
	    EVP_DigestVerifyInit(mctx, NULL, dsa_md(alg), NULL, pkey) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	if (EVP_DigestVerify(mctx, der, (size_t)derlen, msg, len) != 1) {
		rc = vep_ossl_fail(VEP_ERR_BADSIG);
		goto out;
	}
	rc = VEP_OK;
out:
	EVP_MD_CTX_free(mctx);
	OPENSSL_free(der);
	DSA_SIG_free(ds);
	BN_free(r);
	BN_free(s);
	BN_free(q);
	return rc;
}

const struct vep_alg_ops vep_alg_dsa_ops = {
	.family = VEP_FAMILY_DSA,
	.json_name = "DS",
	.ossl_name = "DSA",
	.members = dsa_members,
	.from_json = dsa_from_json,
	.to_json = dsa_to_json,
	.check = dsa_check,
	.generate = dsa_generate,
	.sign = dsa_sign,
	.verify = dsa_verify,
};
