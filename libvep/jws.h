/*
 * jws.h - JWS compact serialization as BrowserID deployed it.
 *
 * A token is b64url(header) "." b64url(payload) "." b64url(signature); the
 * signature covers the ASCII bytes of the first two parts. Our header is
 * exactly {"alg":"<name>"}. Parsing is strict: three parts, strict base64url,
 * header and payload each one JSON object without duplicate keys, header
 * "alg" a known algorithm, total length at most VEP_JWS_MAX_BYTES.
 */
#ifndef VEP_JWS_H
#define VEP_JWS_H

#include <stddef.h>
#include <stdint.h>
#include <jansson.h>

#include "alg.h"
#include "key.h"

/* Largest JWS text accepted (bytes). */
#define VEP_JWS_MAX_BYTES (32 * 1024)

typedef struct vep_jws {
	const struct vep_alg *alg; /* from the header, never NULL once parsed */
	json_t *header;            /* owned */
	json_t *payload;           /* owned */
	uint8_t *sig;              /* owned */
	size_t sig_len;
	char *signing_input;       /* owned copy of "header.payload" (NUL-terminated) */
	size_t signing_input_len;
} vep_jws;

/* Signs payload (a JSON object, borrowed) with k; the header is
 * {"alg":<k's alg>}. *out is new text (free()). */
int vep_jws_sign(const vep_key *k, const json_t *payload, char **out);

/* Parses len bytes of untrusted text. *out is new (vep_jws_free). */
int vep_jws_parse(const char *text, size_t len, vep_jws **out);

/* Verifies the signature with k. The header alg must be k's alg
 * (VEP_ERR_ALG otherwise). Returns 0 or VEP_ERR_BADSIG. */
int vep_jws_verify(const vep_jws *jws, const vep_key *k);

void vep_jws_free(vep_jws *jws);

#endif
