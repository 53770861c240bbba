/*
 * alg_impl.h - internal: what each algorithm family file (alg_rsa.c,
 * alg_dsa.c) provides behind the public table in alg.h, and the strict
 * number helpers they share (alg.c).
 *
 * Only libvep's key.c and the family files include this. A family never
 * decides by itself which sizes exist: it maps a key's sizes to an entry of
 * the one table through vep_alg_by_size(), so alg.c stays the single list.
 * It must never expose OpenSSL types outside libvep.
 */
#ifndef VEP_ALG_IMPL_H
#define VEP_ALG_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/evp.h>

#include "alg.h"

struct vep_alg_ops {
	enum vep_family family;
	const char *json_name;       /* "algorithm" member value: "RS", "DS" */
	const char *ossl_name;       /* OpenSSL key type: "RSA", "DSA" */
	/* Number members of the public JSON, canonical order, NULL-ended. */
	const char *const *members;

	/* Builds a public key from obj, whose member set key.c has already
	 * checked. Validates syntax (VEP_ERR_INVALID / VEP_ERR_TOOBIG), sizes
	 * (VEP_ERR_KEYSIZE) and the key policy of key.h (VEP_ERR_KEY), all of
	 * it, or with costly 0 all but the rules check_costly applies. *pkey
	 * is new. */
	int (*from_json)(const json_t *obj, int costly, EVP_PKEY **pkey,
	    const struct vep_alg **alg);

	/* The rules of the key policy that from_json leaves out when told not
	 * to be costly: 0 or VEP_ERR_KEY. NULL when there are none. */
	int (*check_costly)(const EVP_PKEY *pkey);

	/* Appends the number members to obj in canonical order. */
	int (*to_json)(const EVP_PKEY *pkey, json_t *obj);

	/* Maps a key from elsewhere (PEM, generation) to its table entry;
	 * VEP_ERR_KEYSIZE when its sizes are not allowed, VEP_ERR_KEY when
	 * the key policy of key.h refuses it (the same rules as from_json). */
	int (*check)(const EVP_PKEY *pkey, const struct vep_alg **alg);

	/* Generates a private key; bits is RSA modulus or DSA p bits. */
	int (*generate)(int bits, EVP_PKEY **out);

	/* Signs msg; *sig is new (free()) in JWS form, alg->sig_len bytes. */
	int (*sign)(const struct vep_alg *alg, EVP_PKEY *pkey,
	    const uint8_t *msg, size_t len, uint8_t **sig, size_t *siglen);

	/* Verifies a JWS-form signature: 0 or VEP_ERR_BADSIG. */
	int (*verify)(const struct vep_alg *alg, EVP_PKEY *pkey,
	    const uint8_t *msg, size_t len, const uint8_t *sig, size_t siglen);

	/* A prepared signing context (key.h's vep_key_signer): what sign
	 * sets up per call (the digest's fetch, the EVP_PKEY_CTX and its
	 * parameters) done once. sign_prepare builds *prep (new, opaque)
	 * for pkey, which the caller keeps alive and unchanged until
	 * sign_release; sign_prepared then gives exactly what sign gives
	 * for that key (same checks, same form, same errors), one thread at
	 * a time per prep; sign_release frees prep (NULL-safe). All three
	 * NULL for a family that has no prepared path: key.c then calls
	 * sign on the signer's own key. */
	int (*sign_prepare)(const struct vep_alg *alg, EVP_PKEY *pkey, void **prep);
	int (*sign_prepared)(const struct vep_alg *alg, void *prep, const uint8_t *msg,
	    size_t len, uint8_t **sig, size_t *siglen);
	void (*sign_release)(void *prep);
};

extern const struct vep_alg_ops vep_alg_rsa_ops;
extern const struct vep_alg_ops vep_alg_dsa_ops;

/* The family implementation for a JSON "algorithm" value; NULL if unknown. */
const struct vep_alg_ops *vep_alg_ops_by_json_name(const char *name);

/* The family implementation whose OpenSSL type pkey is; NULL if none. */
const struct vep_alg_ops *vep_alg_ops_for_pkey(const EVP_PKEY *pkey);

/* The family implementation for a family; never NULL for a valid family. */
const struct vep_alg_ops *vep_alg_ops_by_family(enum vep_family family);

enum vep_radix { VEP_RADIX_DEC, VEP_RADIX_HEX };

/* Parses member name of obj (borrowed) as a strict positive number string:
 * digits of the radix only (hex: either case), no sign, prefix or leading
 * zero, at most VEP_KEY_NUM_MAX_CHARS. *out is a new BIGNUM. Returns 0,
 * VEP_ERR_INVALID, VEP_ERR_TOOBIG or VEP_ERR_NOMEM. */
int vep_bn_from_json(const json_t *obj, const char *name, enum vep_radix radix,
    BIGNUM **out);

/* Sets member name of obj to bn as decimal or lowercase hex without leading
 * zeros. Returns 0 or VEP_ERR_NOMEM. */
int vep_bn_to_json(json_t *obj, const char *name, const BIGNUM *bn,
    enum vep_radix radix);

/* Converts OpenSSL's 1-on-success calls' failure into a libvep error after
 * emptying OpenSSL's error queue, so stale entries never reach later calls. */
int vep_ossl_fail(int rc);

/* Builds a public-only EVP_PKEY of OpenSSL key type ossl_name ("RSA",
 * "DSA") from params. *out is a new key. Returns 0 or VEP_ERR_CRYPTO. */
int vep_pkey_public_from_params(const char *ossl_name, const OSSL_PARAM *params,
    EVP_PKEY **out);

#endif
