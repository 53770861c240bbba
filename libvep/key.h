/*
 * key.h - keys as BrowserID knows them: an RSA or DSA key of a size the
 * algorithm table allows, with or without its private half.
 *
 * Public keys travel as BrowserID's legacy JSON:
 *   {"algorithm":"RS","n":"<decimal>","e":"<decimal>"}
 *   {"algorithm":"DS","y":"<hex>","p":"<hex>","q":"<hex>","g":"<hex>"}
 * Parsing is strict (untrusted input): exact member set, decimal digits only
 * for RSA (no sign, no leading zero, bounded length), lowercase or uppercase
 * hex for DSA (no sign, no prefix, no leading zeros, bounded length); RSA
 * modulus of exactly 1024 or 2048 bits, odd e >= 3 (and e < n); DSA
 * (p,q) of 1024/160 or 2048/256 bits with 1 < g < p, 1 < y < p, and
 * g^q = 1 mod p. Serialisation is canonical: members in the order above,
 * lowercase hex, so a certificate embeds what we parsed, never the client's
 * bytes.
 *
 * Private keys are stored as PKCS#8 PEM files, created with mode 0600 and
 * O_EXCL; loading refuses a file that group or others can read.
 *
 * Ownership: vep_key_* constructors return a new key the caller frees with
 * vep_key_free (NULL-safe; private material is released by OpenSSL, which
 * clears it).
 */
#ifndef VEP_KEY_H
#define VEP_KEY_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "alg.h"

typedef struct vep_key vep_key;

/* Largest decoded length of a single number string in key JSON (chars). */
#define VEP_KEY_NUM_MAX_CHARS 1024

/* Generates an RSA key of 1024 or 2048 bits (e = 65537). */
int vep_key_generate_rsa(int bits, vep_key **out);

/* Generates a DSA key with (p,q) sizes 1024/160 or 2048/256 (tests, tools). */
int vep_key_generate_dsa(int pbits, vep_key **out);

/* Loads a private key from a PEM file. Refuses (VEP_ERR_PERM) a file whose
 * mode grants any access to group or others, and keys of sizes the table
 * does not allow (VEP_ERR_KEYSIZE). Returns VEP_ERR_IO when unreadable. */
int vep_key_load_private(const char *path, vep_key **out);

/* Like vep_key_load_private, from PEM bytes in memory (no permission check). */
int vep_key_from_pem(const char *pem, size_t len, vep_key **out);

/* Writes the private key as PKCS#8 PEM to a new file with mode 0600, fsyncs
 * it. Refuses to overwrite (VEP_ERR_EXISTS). VEP_ERR_NOKEY without a private half. */
int vep_key_save_private(const vep_key *k, const char *path);

/* Returns the private key as new PKCS#8 PEM text (free with vep_free_secret_str). */
int vep_key_to_pem(const vep_key *k, char **out);

/* Parses a BrowserID public key JSON object (borrowed reference). */
int vep_key_from_json(const json_t *obj, vep_key **out);

/* Parses a BrowserID public key from JSON text (untrusted). */
int vep_key_from_json_text(const char *text, size_t len, vep_key **out);

/* Returns the canonical public key JSON as a new reference, or NULL on OOM. */
json_t *vep_key_to_json(const vep_key *k);

/* Returns the canonical public key JSON as new compact text (free()). */
char *vep_key_to_json_text(const vep_key *k);

/* The key's algorithm (never NULL for a constructed key). */
const struct vep_alg *vep_key_alg(const vep_key *k);

/* 1 when the key has its private half. */
int vep_key_has_private(const vep_key *k);

/* 1 when both keys have the same public half. */
int vep_key_public_equal(const vep_key *a, const vep_key *b);

/* Returns a new key holding only the public half of k. */
int vep_key_public_copy(const vep_key *k, vep_key **out);

/* Writes the key's fingerprint: lowercase hex SHA-256 of its canonical
 * public JSON text, 64 chars + NUL. */
int vep_key_fingerprint(const vep_key *k, char out[65]);

/* Signs msg with the key's algorithm; *sig is a new buffer (free()) in JWS
 * form (RSA: modulus-length bytes; DSA: raw r||s, each left-padded). */
int vep_key_sign(const vep_key *k, const uint8_t *msg, size_t len,
    uint8_t **sig, size_t *siglen);

/* Verifies a JWS-form signature. RSA signatures shorter than the modulus are
 * left-padded with zeros first (the JS signer drops leading zero bytes).
 * Returns 0 or VEP_ERR_BADSIG. */
int vep_key_verify(const vep_key *k, const uint8_t *msg, size_t len,
    const uint8_t *sig, size_t siglen);

void vep_key_free(vep_key *k);

#endif
