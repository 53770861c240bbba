/*
 * key.h - keys as BrowserID knows them: an RSA or DSA key of a size the
 * algorithm table allows, with or without its private half.
 *
 * Public keys travel as BrowserID's legacy JSON:
 *   {"algorithm":"RS","n":"<decimal>","e":"<decimal>"}
 *   {"algorithm":"DS","y":"<hex>","p":"<hex>","q":"<hex>","g":"<hex>"}
 * Parsing is strict (untrusted input): exact member set, decimal digits only
 * for RSA (no sign, no leading zero, bounded length), lowercase or uppercase
 * hex for DSA (no sign, no prefix, no leading zeros, bounded length).
 *
 * Key policy (VEP_ERR_KEYSIZE for sizes, VEP_ERR_KEY otherwise), applied to
 * every key constructed here, from JSON, PEM or generation alike, so that
 * issuance and verification refuse the same keys:
 *   RSA: a 1024- or 2048-bit modulus (one bit short tolerated), odd, not
 *        prime (one Miller-Rabin round, random base), no prime factor
 *        below 2048; e odd, 3 <= e <= 2^32 - 1.
 *   DSA: (p, q, g) exactly one of the two published jwcrypto groups
 *        (1024/160 for DS128, 2048/256 for DS256); 1 < y < p - 1 and
 *        y^q = 1 mod p.
 * These refuse every key that is weak by construction (anyone could sign
 * with it); they cannot prove a modulus hard to factor. Generated DSA keys
 * use the published groups.
 *
 * Serialisation is canonical: members in the order above, lowercase hex,
 * so a certificate embeds what we parsed, never the client's bytes.
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

/* Largest private-key PEM file or buffer read (bytes); a 2048-bit PKCS#8
 * key is under 2 KiB, so anything near this is not a key of ours. */
#define VEP_KEY_PEM_MAX_BYTES (64 * 1024)

/* Generates an RSA key of 1024 or 2048 bits (e = 65537). */
int vep_key_generate_rsa(int bits, vep_key **out);

/* Generates a DSA key in the published jwcrypto group of p size 1024
 * (DS128) or 2048 (DS256) (tests, tools). */
int vep_key_generate_dsa(int pbits, vep_key **out);

/* Loads a private key from a PEM file. Refuses (VEP_ERR_PERM) a file whose
 * mode grants any access to group or others, and keys of sizes the table
 * does not allow (VEP_ERR_KEYSIZE). Returns VEP_ERR_IO when unreadable. */
int vep_key_load_private(const char *path, vep_key **out);

/* Like vep_key_load_private, from PEM bytes in memory (no permission check). */
int vep_key_from_pem(const char *pem, size_t len, vep_key **out);

/* Says what PEM bytes hold, for a message about a key that was refused:
 * "an RSA key of 4096 bits", "a DSA key of 1024/224 bits", "an ED25519
 * key", or "not a PEM private key". Accepts any key OpenSSL parses (it
 * only describes; vep_key_from_pem decides). Always NUL-terminates out. */
void vep_key_pem_describe(const char *pem, size_t len, char *out, size_t outlen);

/* Writes the private key as PKCS#8 PEM to a new file with mode 0600, fsyncs
 * it. Refuses to overwrite (VEP_ERR_EXISTS). VEP_ERR_NOKEY without a private half. */
int vep_key_save_private(const vep_key *k, const char *path);

/* Returns the private key as new PKCS#8 PEM text (free with vep_free_secret_str). */
int vep_key_to_pem(const vep_key *k, char **out);

/* Parses a BrowserID public key JSON object (borrowed reference), applying
 * the whole key policy. */
int vep_key_from_json(const json_t *obj, vep_key **out);

/* How much of the key policy a parse applies. */
enum vep_key_checks {
	VEP_KEY_CHECKS_ALL,    /* every rule: what vep_key_from_json does */
	/* Every rule but the costly ones (RSA: the modulus is not prime, about
	 * 2 ms for RSA-2048). Only for a caller that runs vep_key_check_costly
	 * itself (e.g. once per distinct key), or whose purpose the rule does
	 * not serve (the key process checks what it signs, not for whom). */
	VEP_KEY_CHECKS_CHEAP,
};

/* vep_key_from_json with the given share of the policy. */
int vep_key_from_json_checked(const json_t *obj, enum vep_key_checks checks, vep_key **out);

/* The rules VEP_KEY_CHECKS_CHEAP leaves out: 0, or VEP_ERR_KEY when the key
 * must not be certified or trusted. */
int vep_key_check_costly(const vep_key *k);

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

/* A new key that shares k's OpenSSL key (a reference, no copy): as cheap
 * as a pointer, for a key that is only read (verified with, serialised).
 * OpenSSL keys are not for concurrent use by two threads that change them,
 * so share a private key only within one thread. */
int vep_key_share(const vep_key *k, vep_key **out);

/* A key fingerprint: lowercase hex SHA-256, in characters without the NUL,
 * and the size of a buffer that holds one with its NUL. */
#define VEP_FINGERPRINT_HEX_LEN 64
#define VEP_FINGERPRINT_BUFSZ (VEP_FINGERPRINT_HEX_LEN + 1)

/* Writes the key's fingerprint: lowercase hex SHA-256 of its canonical
 * public JSON text, VEP_FINGERPRINT_HEX_LEN chars + NUL. */
int vep_key_fingerprint(const vep_key *k, char out[VEP_FINGERPRINT_BUFSZ]);

/* Signs msg with the key's algorithm; *sig is a new buffer (free()) in JWS
 * form (RSA: modulus-length bytes; DSA: raw r||s, each left-padded). */
int vep_key_sign(const vep_key *k, const uint8_t *msg, size_t len,
    uint8_t **sig, size_t *siglen);

/*
 * A prepared signing context for one thread: vep_key_sign without its
 * per-call set-up (OpenSSL's implicit fetches, a new signing context with
 * its padding and digest), which it does once, so each signature costs
 * the digest and the private-key operation only. It holds its OWN copy
 * of the key (EVP_PKEY_dup), never a reference to k's: OpenSSL 3.0 gives
 * an RSA key one blinding factor for the thread that used it first and a
 * shared, locked one to every other thread, so threads that each sign
 * with a signer of their own never share, or wait for, blinding state.
 * k may be freed, or used elsewhere, as soon as vep_key_signer_new
 * returns.
 *
 * vep_key_signer_new: 0 with *out (new, vep_key_signer_free), or
 * VEP_ERR_ARG (k or out NULL), VEP_ERR_NOKEY (k has no private half),
 * VEP_ERR_NOMEM, VEP_ERR_CRYPTO; *out is NULL on error.
 * vep_key_signer_sign: exactly vep_key_sign's output and errors for the
 * key the signer was made from (RSA: the same bytes, PKCS#1 v1.5 being
 * deterministic); VEP_ERR_ARG for s, sig or siglen NULL, or msg NULL with
 * len > 0. One thread at a time per signer (it is not locked); different
 * signers, of one key or several, may sign concurrently.
 * vep_key_signer_free: NULL-safe; frees the copy, whose private numbers
 * OpenSSL clears.
 */
typedef struct vep_key_signer vep_key_signer;

int vep_key_signer_new(const vep_key *k, vep_key_signer **out);

int vep_key_signer_sign(vep_key_signer *s, const uint8_t *msg, size_t len,
    uint8_t **sig, size_t *siglen);

void vep_key_signer_free(vep_key_signer *s);

/* Verifies a JWS-form signature. RSA signatures shorter than the modulus are
 * left-padded with zeros first (the JS signer drops leading zero bytes).
 * Returns 0 or VEP_ERR_BADSIG. */
int vep_key_verify(const vep_key *k, const uint8_t *msg, size_t len,
    const uint8_t *sig, size_t siglen);

void vep_key_free(vep_key *k);

#endif
