/*
 * b64url.h - base64url without padding (RFC 4648 section 5, RFC 7515 section 2).
 *
 * Decoding is strict: the alphabet A-Z a-z 0-9 - _ only, no '=' padding, no
 * whitespace, no length of 1 mod 4, and the unused low bits of the last
 * character must be zero (so every byte string has exactly one encoding).
 */
#ifndef VEP_B64URL_H
#define VEP_B64URL_H

#include <stddef.h>
#include <stdint.h>

/* Encodes len bytes. Returns a new NUL-terminated string (free()), or NULL
 * on allocation failure. */
char *vep_b64url_encode(const uint8_t *data, size_t len);

/* Decodes slen characters of s. On success *out is a new buffer (free()) of
 * *outlen bytes, NUL-terminated one byte past the end for convenience.
 * Returns 0, VEP_ERR_INVALID or VEP_ERR_NOMEM; out-parameters cleared on entry. */
int vep_b64url_decode(const char *s, size_t slen, uint8_t **out, size_t *outlen);

#endif
