/*
 * alg.h - the one table of JWS algorithms the deployed BrowserID verifiers know.
 *
 *   RS256  RSA 2048            RSASSA-PKCS1-v1_5 + SHA-256
 *   RS128  RSA 1024            RSASSA-PKCS1-v1_5 + SHA-256 (128 is a size label)
 *   DS128  DSA p1024 / q160    SHA-1,   signature raw r||s, 20+20 bytes
 *   DS256  DSA p2048 / q256    SHA-256, signature raw r||s, 32+32 bytes
 *
 * Each family lives in its own file (alg_rsa.c, alg_dsa.c) behind struct
 * vep_alg_ops; this header is what the rest of libvep sees. Nothing else is
 * accepted: RS64 and any other size are refused with VEP_ERR_KEYSIZE /
 * VEP_ERR_ALG.
 */
#ifndef VEP_ALG_H
#define VEP_ALG_H

#include <stddef.h>

enum vep_family { VEP_FAMILY_RSA, VEP_FAMILY_DSA };

struct vep_alg {
	const char *name;        /* JWS "alg": "RS256", "RS128", "DS128", "DS256" */
	enum vep_family family;  /* RSA or DSA */
	int bits;                /* RSA modulus bits, or DSA p bits */
	int qbits;               /* DSA q bits, 0 for RSA */
	size_t sig_len;          /* exact signature length in bytes (RSA: modulus bytes) */
};

/* Looks up an algorithm by its JWS name. Returns NULL when unknown. */
const struct vep_alg *vep_alg_by_name(const char *name);

/* Looks up the algorithm for a key family and size. Returns NULL when the
 * protocol does not allow that size. */
const struct vep_alg *vep_alg_by_size(enum vep_family family, int bits, int qbits);

/* Writes the key sizes the table allows, for messages that must say what
 * would have been accepted: "RSA 2048 or 1024 bits, DSA 1024/160 or
 * 2048/256 bits". Always NUL-terminates (truncating when out is short). */
void vep_alg_sizes_text(char *out, size_t outlen);

#endif
