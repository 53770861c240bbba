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

/* Something that signs with a private key held elsewhere (another
 * process): pub is the key's public half (its algorithm names the header),
 * sign writes a JWS-form signature as vep_key_sign does (*sig new, free())
 * and returns 0 or a VEP_ERR_*. */
struct vep_signer {
	const vep_key *pub;
	int (*sign)(void *ctx, const vep_key *pub, const uint8_t *msg, size_t len,
	    uint8_t **sig, size_t *siglen);
	void *ctx;
};

/* A vep_signer sign function for a key that is here: pub has its private
 * half; ctx unused. */
int vep_signer_key_sign(void *ctx, const vep_key *pub, const uint8_t *msg, size_t len,
    uint8_t **sig, size_t *siglen);

/* Signs payload (a JSON object, borrowed) with k; the header is
 * {"alg":<k's alg>}. *out is new text (free()). */
int vep_jws_sign(const vep_key *k, const json_t *payload, char **out);

/* The same through a signer: VEP_ERR_ARG when it has no public key or no
 * sign function, else what its sign returns. */
int vep_jws_sign_with(const struct vep_signer *s, const json_t *payload, char **out);

/* The same for a payload already written as JSON text (plen bytes, one
 * object: the caller's text is signed as it is, so it must be what
 * json_dumps would give for the object it means, or at least valid JSON:
 * vep_cert_sign_with writes it). */
int vep_jws_sign_text_with(const struct vep_signer *s, const char *payload, size_t plen,
    char **out);

/* vep_jws_sign_text_with in two halves, for a signature made elsewhere
 * and later (the authority's key process signs several at once): the
 * signing input b64url({"alg":<pub's alg>}) "." b64url(payload) (*input
 * new text of *inlen bytes; VEP_ERR_ARG as vep_jws_sign_text_with), and
 * the token made of that input and its signature (*out new text). */
int vep_jws_signing_input(const vep_key *pub, const char *payload, size_t plen, char **input,
    size_t *inlen);
int vep_jws_join(const char *input, const uint8_t *sig, size_t siglen, char **out);

/* Parses len bytes of untrusted text. *out is new (vep_jws_free). */
int vep_jws_parse(const char *text, size_t len, vep_jws **out);

/* Verifies the signature with k. The header alg must be k's alg
 * (VEP_ERR_ALG otherwise). Returns 0 or VEP_ERR_BADSIG. */
int vep_jws_verify(const vep_jws *jws, const vep_key *k);

void vep_jws_free(vep_jws *jws);

#endif
