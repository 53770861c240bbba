/*
 * digest.c - thin wrappers over OpenSSL's CSPRNG, SHA-256 and HMAC (EVP).
 *
 * Owns the conversion of OpenSSL's 1/0 results into VEP_ERR_CRYPTO, and
 * HMAC (RFC 2104) over a digester's prepared SHA-256. Must never keep a
 * secret between calls: the stateless functions keep nothing, a digester
 * keeps only its fetched algorithm and a context reset after each use.
 */
#include "digest.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "err.h"
#include "secmem.h"

/* SHA-256's block: HMAC pads its key to this. */
#define SHA256_BLOCK 64

struct vep_digester {
	EVP_MD *md;                    /* SHA-256, fetched once */
	EVP_MD_CTX *ctx;
};

int
vep_random(void *out, size_t n)
{
	if (n > INT_MAX)
		return VEP_ERR_ARG;
	return RAND_bytes(out, (int)n) == 1 ? VEP_OK : VEP_ERR_CRYPTO;
}

int
vep_sha256(const void *msg, size_t len, uint8_t out[VEP_SHA256_BYTES])
{
	unsigned int n = 0;

	if (EVP_Digest(msg, len, out, &n, EVP_sha256(), NULL) != 1 || n != VEP_SHA256_BYTES)
		return VEP_ERR_CRYPTO;
	return VEP_OK;
}

int
vep_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t len,
    uint8_t out[VEP_SHA256_BYTES])
{
	unsigned int n = 0;

	if (keylen > INT_MAX)
		return VEP_ERR_ARG;
	/* HMAC() is the one-shot EVP-era interface (not deprecated in 3.0). */
	if (HMAC(EVP_sha256(), key, (int)keylen, msg, len, out, &n) == NULL ||
	    n != VEP_SHA256_BYTES)
		return VEP_ERR_CRYPTO;
	return VEP_OK;
}

vep_digester *
vep_digester_new(void)
{
	vep_digester *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	if ((d->md = EVP_MD_fetch(NULL, "SHA2-256", NULL)) == NULL ||
	    (d->ctx = EVP_MD_CTX_new()) == NULL) {
		vep_digester_free(d);
		return NULL;
	}
	return d;
}

void
vep_digester_free(vep_digester *d)
{
	if (d == NULL)
		return;
	EVP_MD_CTX_free(d->ctx);
	EVP_MD_free(d->md);
	free(d);
}

/* out = SHA-256(a || b), either part possibly empty. */
static int
sha256_two(vep_digester *d, const void *a, size_t alen, const void *b, size_t blen,
    uint8_t out[VEP_SHA256_BYTES])
{
	unsigned int n = 0;
	int ok;

	ok = EVP_DigestInit_ex2(d->ctx, d->md, NULL) == 1 &&
	    EVP_DigestUpdate(d->ctx, a, alen) == 1 && EVP_DigestUpdate(d->ctx, b, blen) == 1 &&
	    EVP_DigestFinal_ex(d->ctx, out, &n) == 1 && n == VEP_SHA256_BYTES;
	/* Back to the initial state: no hash state of the input stays. */
	if (EVP_DigestInit_ex2(d->ctx, d->md, NULL) != 1)
		ok = 0;
	return ok ? VEP_OK : VEP_ERR_CRYPTO;
}

int
vep_sha256_with(vep_digester *d, const void *msg, size_t len, uint8_t out[VEP_SHA256_BYTES])
{
	if (d == NULL || (msg == NULL && len > 0))
		return VEP_ERR_ARG;
	return sha256_two(d, msg, len, "", 0, out);
}

int
vep_hmac_sha256_with(vep_digester *d, const void *key, size_t keylen, const void *msg,
    size_t len, uint8_t out[VEP_SHA256_BYTES])
{
	uint8_t k[SHA256_BLOCK] = { 0 }, pad[SHA256_BLOCK], inner[VEP_SHA256_BYTES];
	int rc = VEP_OK;

	if (d == NULL || (key == NULL && keylen > 0) || (msg == NULL && len > 0))
		return VEP_ERR_ARG;
	/* A key longer than a block is its hash; a shorter one is padded
	 * with zeros. */
	if (keylen > SHA256_BLOCK)
		rc = sha256_two(d, key, keylen, "", 0, k);
	else if (keylen > 0)
		memcpy(k, key, keylen);
	for (size_t i = 0; i < SHA256_BLOCK; i++)
		pad[i] = k[i] ^ 0x36;
	if (rc == VEP_OK)
		rc = sha256_two(d, pad, sizeof(pad), msg, len, inner);
	for (size_t i = 0; i < SHA256_BLOCK; i++)
		pad[i] = k[i] ^ 0x5c;
	if (rc == VEP_OK)
		rc = sha256_two(d, pad, sizeof(pad), inner, sizeof(inner), out);
	vep_memzero(k, sizeof(k));
	vep_memzero(pad, sizeof(pad));
	vep_memzero(inner, sizeof(inner));
	return rc;
}
