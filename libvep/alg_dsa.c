/*
 * alg_dsa.c - the DSA family: DS128 (p 1024 / q 160, SHA-1) and DS256
 * (p 2048 / q 256, SHA-256), signatures as raw r||s.
 *
 * Owns DSA public JSON ({"y","p","q","g"} in hex), the key policy below,
 * generation, and the conversion between JWS's fixed-width r||s and the DER
 * that OpenSSL's EVP interface speaks. Persona's browser code made DS128 user
 * keys, so certificates and assertions with them still arrive. It must never
 * use the deprecated DSA_* key functions (DSA_SIG_* are not deprecated) nor
 * accept a signature whose r or s lies outside (0, q).
 *
 * Key policy, for every key that becomes a vep_key (JSON, PEM, generation):
 *   - (p, q, g) is exactly one of the two published jwcrypto parameter sets
 *     (dsa_groups[]: the only groups browserid-crypto ever generated keys
 *     in); it fixes the size, so DS128 is 1024/160 and DS256 2048/256;
 *   - 1 < y < p - 1 and y^q = 1 (mod p): y lies in the order-q subgroup.
 * Fixed groups make "p and q prime, q | p - 1, g of order q" a property of
 * two constants, checked once by the tests, instead of a primality proof
 * per key (a 2048-bit p would cost tens of milliseconds). Without them,
 * q even, p composite and g = y = p - 1 let anyone sign anything.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/core_names.h>
#include <openssl/dsa.h>
#include <openssl/param_build.h>

#include "alg_impl.h"
#include "err.h"

static const char *const dsa_members[] = { "y", "p", "q", "g", NULL };

/* The published jwcrypto (browserid-crypto) domain parameters, lowercase
 * hex as jwcrypto writes them: FIPS 186-3 test-vector groups (A.2.3,
 * verifiable canonical generation of g), 1024/160 for DS128 and 2048/256
 * for DS256. tests/unit/test_key.c checks they are sound. */
struct dsa_group {
	int pbits, qbits;
	const char *p, *q, *g;
};

static const struct dsa_group dsa_groups[] = {
	{ 1024, 160,
	  "ff600483db6abfc5b45eab78594b3533d550d9f1bf2a992a7a8daa6dc34f8045"
	  "ad4e6e0c429d334eeeaaefd7e23d4810be00e4cc1492cba325ba81ff2d5a5b30"
	  "5a8d17eb3bf4a06a349d392e00d329744a5179380344e82a18c47933438f891e"
	  "22aeef812d69c8f75e326cb70ea000c3f776dfdbd604638c2ef717fc26d02e17",
	  "e21e04f911d1ed7991008ecaab3bf775984309c3",
	  "c52a4a0ff3b7e61fdf1867ce84138369a6154f4afa92966e3c827e25cfa6cf50"
	  "8b90e5de419e1337e07a2e9e2a3cd5dea704d175f8ebf6af397d69e110b96afb"
	  "17c7a03259329e4829b0d03bbc7896b15b4ade53e130858cc34d96269aa89041"
	  "f409136c7242a38895c9d5bccad4f389af1d7a4bd1398bd072dffa896233397a" },
	{ 2048, 256,
	  "d6c4e5045697756c7a312d02c2289c25d40f9954261f7b5876214b6df109c738"
	  "b76226b199bb7e33f8fc7ac1dcc316e1e7c78973951bfc6ff2e00cc987cd76fc"
	  "fb0b8c0096b0b460fffac960ca4136c28f4bfb580de47cf7e7934c3985e3b3d9"
	  "43b77f06ef2af3ac3494fc3c6fc49810a63853862a02bb1c824a01b7fc688e40"
	  "28527a58ad58c9d512922660db5d505bc263af293bc93bcd6d885a157579d7f5"
	  "2952236dd9d06a4fc3bc2247d21f1a70f5848eb0176513537c983f5a36737f01"
	  "f82b44546e8e7f0fabc457e3de1d9c5dba96965b10a2a0580b0ad0f88179e100"
	  "66107fb74314a07e6745863bc797b7002ebec0b000a98eb697414709ac17b401",
	  "b1e370f6472c8754ccd75e99666ec8ef1fd748b748bbbc08503d82ce8055ab3b",
	  "9a8269ab2e3b733a5242179d8f8ddb17ff93297d9eab00376db211a22b19c854"
	  "dfa80166df2132cbc51fb224b0904abb22da2c7b7850f782124cb575b116f41e"
	  "a7c4fc75b1d77525204cd7c23a15999004c23cdeb72359ee74e886a1dde7855a"
	  "e05fe847447d0a68059002c3819a75dc7dcbb30e39efac36e07e2c404b7ca98b"
	  "263b25fa314ba93c0625718bd489cea6d04ba4b0b7f156eeb4c56c44b50e4fb5"
	  "bce9d7ae0d55b379225feb0214a04bed72f33e0664d290e7c840df3e2abb5e48"
	  "189fa4e90646f1867db289c6560476799f7be8420a6dc01d078de437f280fff2"
	  "d7ddf1248d56e1a54b933a41629d6c252983c58795105802d30d7bcd819cf6ef" },
};

#define DSA_GROUP_COUNT (sizeof(dsa_groups) / sizeof(dsa_groups[0]))

/* Maps p and q to a table entry, or VEP_ERR_KEYSIZE. */
static int
dsa_alg_for(const BIGNUM *p, const BIGNUM *q, const struct vep_alg **alg)
{
	*alg = vep_alg_by_size(VEP_FAMILY_DSA, BN_num_bits(p), BN_num_bits(q));
	return *alg != NULL ? VEP_OK : VEP_ERR_KEYSIZE;
}

/* The group of the given sizes as new BIGNUMs; VEP_ERR_KEYSIZE if none. */
static int
dsa_group_get(int pbits, int qbits, BIGNUM **p, BIGNUM **q, BIGNUM **g)
{
	const struct dsa_group *grp = NULL;

	*p = *q = *g = NULL;
	for (size_t i = 0; i < DSA_GROUP_COUNT && grp == NULL; i++)
		if (dsa_groups[i].pbits == pbits && dsa_groups[i].qbits == qbits)
			grp = &dsa_groups[i];
	if (grp == NULL)
		return VEP_ERR_KEYSIZE;
	if (!BN_hex2bn(p, grp->p) || !BN_hex2bn(q, grp->q) || !BN_hex2bn(g, grp->g)) {
		BN_free(*p);
		BN_free(*q);
		BN_free(*g);
		*p = *q = *g = NULL;
		return vep_ossl_fail(VEP_ERR_NOMEM);
	}
	return VEP_OK;
}

static const EVP_MD *
dsa_md(const struct vep_alg *alg)
{
	/* DS128 is SHA-1 (the label is the strength jwcrypto claimed). */
	return alg->qbits == 160 ? EVP_sha1() : EVP_sha256();
}

/* The key policy (file header) for a key whose sizes map to alg: (p, q, g)
 * is alg's published group, 1 < y < p - 1, and y^q = 1 (mod p). The last
 * is the one exponentiation (exponent q: 160 or 256 bits), the same work
 * as verifying g's order was before the groups were fixed. */
static int
dsa_check_values(const struct vep_alg *alg, const BIGNUM *p, const BIGNUM *q,
    const BIGNUM *g, const BIGNUM *y)
{
	BIGNUM *gp = NULL, *gq = NULL, *gg = NULL, *t = NULL;
	BN_CTX *bctx = NULL;
	int rc;

	if ((rc = dsa_group_get(alg->bits, alg->qbits, &gp, &gq, &gg)) != 0)
		goto out;
	if (BN_cmp(p, gp) != 0 || BN_cmp(q, gq) != 0 || BN_cmp(g, gg) != 0) {
		rc = VEP_ERR_KEY;
		goto out;
	}
	if ((bctx = BN_CTX_new()) == NULL || (t = BN_new()) == NULL ||
	    !BN_sub(t, p, BN_value_one())) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	/* y in (1, p - 1): 0, 1 and p - 1 (order 2) are never honest. */
	if (BN_is_negative(y) || BN_is_zero(y) || BN_is_one(y) || BN_cmp(y, t) >= 0) {
		rc = VEP_ERR_KEY;
		goto out;
	}
	if (!BN_mod_exp(t, y, q, p, bctx)) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	rc = BN_is_one(t) ? VEP_OK : VEP_ERR_KEY;
out:
	BN_free(t);
	BN_free(gp);
	BN_free(gq);
	BN_free(gg);
	BN_CTX_free(bctx);
	return rc;
}

static int
dsa_from_json(const json_t *obj, int costly, EVP_PKEY **pkey, const struct vep_alg **alg)
{
	BIGNUM *y = NULL, *p = NULL, *q = NULL, *g = NULL;
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY *k = NULL;
	const struct vep_alg *a = NULL;
	int rc;

	/* Every DSA rule is cheap enough to apply always (the y^q check that
	 * stops the forgery costs no more than a signature check). */
	(void)costly;
	*pkey = NULL;
	*alg = NULL;
	if ((rc = vep_bn_from_json(obj, "y", VEP_RADIX_HEX, &y)) != 0 ||
	    (rc = vep_bn_from_json(obj, "p", VEP_RADIX_HEX, &p)) != 0 ||
	    (rc = vep_bn_from_json(obj, "q", VEP_RADIX_HEX, &q)) != 0 ||
	    (rc = vep_bn_from_json(obj, "g", VEP_RADIX_HEX, &g)) != 0)
		goto out;
	if ((rc = dsa_alg_for(p, q, &a)) != 0 ||
	    (rc = dsa_check_values(a, p, q, g, y)) != 0)
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
	    (rc = dsa_check_values(a, p, q, g, y)) != 0)
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

/* A key in the published group of that size (as jwcrypto made them): the
 * policy admits no other group, and no parameter generation is needed. */
static int
dsa_generate(int bits, EVP_PKEY **out)
{
	BIGNUM *p = NULL, *q = NULL, *g = NULL;
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *pctx = NULL, *kctx = NULL;
	EVP_PKEY *dom = NULL;
	int rc;

	*out = NULL;
	if (vep_alg_by_size(VEP_FAMILY_DSA, bits, bits == 1024 ? 160 : 256) == NULL) {
		rc = VEP_ERR_KEYSIZE;
		goto out;
	}
	if ((rc = dsa_group_get(bits, bits == 1024 ? 160 : 256, &p, &q, &g)) != 0)
		goto out;
	if ((bld = OSSL_PARAM_BLD_new()) == NULL ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_FFC_P, p) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_FFC_Q, q) ||
	    !OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_FFC_G, g) ||
	    (params = OSSL_PARAM_BLD_to_param(bld)) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	if ((pctx = EVP_PKEY_CTX_new_from_name(NULL, "DSA", NULL)) == NULL ||
	    EVP_PKEY_fromdata_init(pctx) != 1 ||
	    EVP_PKEY_fromdata(pctx, &dom, EVP_PKEY_KEY_PARAMETERS, params) != 1 ||
	    (kctx = EVP_PKEY_CTX_new_from_pkey(NULL, dom, NULL)) == NULL ||
	    EVP_PKEY_keygen_init(kctx) != 1 ||
	    EVP_PKEY_keygen(kctx, out) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	rc = VEP_OK;
out:
	EVP_PKEY_free(dom);
	EVP_PKEY_CTX_free(pctx);
	EVP_PKEY_CTX_free(kctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(p);
	BN_free(q);
	BN_free(g);
	return rc;
}

/* A DER DSA-Sig-Value (derlen bytes) -> JWS form: r||s, each left-padded
 * to q's length; *sig is new (free()). */
static int
dsa_der_to_jws(const struct vep_alg *alg, const unsigned char *der, size_t derlen,
    uint8_t **sig, size_t *siglen)
{
	DSA_SIG *ds = NULL;
	const BIGNUM *r, *s;
	const unsigned char *dp = der;
	uint8_t *buf = NULL;
	size_t qbytes = (size_t)alg->qbits / 8;
	int rc;

	*sig = NULL;
	*siglen = 0;
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
	DSA_SIG_free(ds);
	return rc;
}

static int
dsa_sign(const struct vep_alg *alg, EVP_PKEY *pkey, const uint8_t *msg,
    size_t len, uint8_t **sig, size_t *siglen)
{
	EVP_MD_CTX *mctx = NULL;
	unsigned char *der = NULL;
	size_t derlen = 0;
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
	rc = dsa_der_to_jws(alg, der, derlen, sig, siglen);
out:
	free(der);
	EVP_MD_CTX_free(mctx);
	return rc;
}

/* A prepared DSA signing context, for the same reasons as alg_rsa.c's (the
 * domain key is RSA in every deployment; DSA has it so that a signer
 * behaves the same for every key): the family's digest (dsa_md's) fetched
 * once, an EVP_PKEY_CTX initialised once with it as the signature digest,
 * so a signature is the digest of msg and EVP_PKEY_sign on it, then the
 * same DER -> r||s as dsa_sign. The ctx refers to the caller's pkey, which
 * outlives it (key.c's signer). */
struct dsa_prep {
	EVP_MD *md;                      /* fetched SHA-1 (DS128) or SHA-256 (DS256) */
	EVP_PKEY_CTX *pctx;              /* sign-initialised with md */
	size_t dermax;                   /* largest DER signature of the key */
};

static void
dsa_sign_release(void *prep)
{
	struct dsa_prep *dp = prep;

	if (dp == NULL)
		return;
	EVP_PKEY_CTX_free(dp->pctx);
	EVP_MD_free(dp->md);
	free(dp);
}

static int
dsa_sign_prepare(const struct vep_alg *alg, EVP_PKEY *pkey, void **prep)
{
	struct dsa_prep *dp = NULL;
	int rc, size;

	*prep = NULL;
	if ((dp = calloc(1, sizeof(*dp))) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	if ((size = EVP_PKEY_get_size(pkey)) <= 0 ||
	    (dp->md = EVP_MD_fetch(NULL, EVP_MD_get0_name(dsa_md(alg)), NULL)) == NULL ||
	    (dp->pctx = EVP_PKEY_CTX_new_from_pkey(NULL, pkey, NULL)) == NULL ||
	    EVP_PKEY_sign_init(dp->pctx) != 1 ||
	    EVP_PKEY_CTX_set_signature_md(dp->pctx, dp->md) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	dp->dermax = (size_t)size;
	*prep = dp;
	dp = NULL;
	rc = VEP_OK;
out:
	dsa_sign_release(dp);
	return rc;
}

/* dsa_sign's output and checks, on a prepared context. */
static int
dsa_sign_prepared(const struct vep_alg *alg, void *prep, const uint8_t *msg, size_t len,
    uint8_t **sig, size_t *siglen)
{
	struct dsa_prep *dp = prep;
	unsigned char dgst[EVP_MAX_MD_SIZE], *der = NULL;
	unsigned int dlen = 0;
	size_t derlen = dp->dermax;
	int rc;

	*sig = NULL;
	*siglen = 0;
	if ((der = malloc(derlen)) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	if (EVP_Digest(msg, len, dgst, &dlen, dp->md, NULL) != 1 ||
	    EVP_PKEY_sign(dp->pctx, der, &derlen, dgst, dlen) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	rc = dsa_der_to_jws(alg, der, derlen, sig, siglen);
out:
	free(der);
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
	.sign_prepare = dsa_sign_prepare,
	.sign_prepared = dsa_sign_prepared,
	.sign_release = dsa_sign_release,
};
