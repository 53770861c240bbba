/*
 * digest.h - randomness, SHA-256 and HMAC-SHA256 for code outside libvep.
 *
 * The authority needs session tokens, their hashes and keyed hashes; this is
 * the one place that calls OpenSSL for them, so no other module includes
 * OpenSSL headers for such small jobs. Every function returning int returns VEP_OK or
 * VEP_ERR_CRYPTO (the crypto library failed: treat it as an internal error,
 * never as "no randomness needed").
 */
#ifndef VEP_DIGEST_H
#define VEP_DIGEST_H

#include <stddef.h>
#include <stdint.h>

/* Bytes of a SHA-256 or HMAC-SHA256 output. */
#define VEP_SHA256_BYTES 32

/* Fills n bytes at out from the CSPRNG. */
int vep_random(void *out, size_t n);

/* out = SHA-256(msg[0..len)). */
int vep_sha256(const void *msg, size_t len, uint8_t out[VEP_SHA256_BYTES]);

/* out = HMAC-SHA256(key[0..keylen), msg[0..len)). */
int vep_hmac_sha256(const void *key, size_t keylen, const void *msg, size_t len,
    uint8_t out[VEP_SHA256_BYTES]);

/* The same two functions for a hot path: SHA-256 fetched from OpenSSL once
 * and one digest context used again and again, where each call above
 * fetches the algorithms by name and allocates a context (a session
 * token's CSRF MAC and hash: 2.4 us that way, 0.6 us this way, on the
 * machine of bench/README.md). One per thread: a digester is not safe to share. It keeps no
 * secret between calls (its context is set back to SHA-256's initial
 * state after each). */
typedef struct vep_digester vep_digester;

/* A new digester, or NULL (out of memory, or OpenSSL has no SHA-256). */
vep_digester *vep_digester_new(void);
void vep_digester_free(vep_digester *d);
int vep_sha256_with(vep_digester *d, const void *msg, size_t len,
    uint8_t out[VEP_SHA256_BYTES]);
int vep_hmac_sha256_with(vep_digester *d, const void *key, size_t keylen, const void *msg,
    size_t len, uint8_t out[VEP_SHA256_BYTES]);

#endif
