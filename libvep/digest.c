/*
 * digest.c - thin wrappers over OpenSSL's CSPRNG, SHA-256 and HMAC (EVP).
 *
 * Owns the conversion of OpenSSL's 1/0 results into VEP_ERR_CRYPTO. Must
 * never keep state between calls.
 */
#include "digest.h"

#include <limits.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include "err.h"

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
