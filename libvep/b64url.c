/*
 * b64url.c - base64url without padding (RFC 4648 section 5).
 *
 * Owns encoding and the strict decoder. Decoding accepts exactly one
 * spelling per byte string: no padding, no whitespace, no other alphabet,
 * no length of 1 mod 4, zero unused trailing bits. It must never be
 * lenient: a JWS whose parts can be respelled could be replayed or
 * compared inconsistently elsewhere.
 */
#include <stdint.h>
#include <stdlib.h>

#include "b64url.h"
#include "err.h"

static const char b64url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* The 6-bit value of each byte, 64 for the bytes outside the alphabet:
 * the decoder looks four characters up and tests one bit of their OR,
 * where comparing ranges per character cost a certificate's strict check
 * 22,000 instructions. unit_b64url checks every entry against the
 * alphabet above. */
static const uint8_t b64url_values[256] = {
	64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
	64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
	64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 62, 64, 64,
	52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 64, 64, 64, 64, 64, 64,
	64,  0,  1,  2,  3,  4,  5,  6,  7,  8,  9, 10, 11, 12, 13, 14,
	15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 64, 64, 64, 64, 63,
	64, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40,
	41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 64, 64, 64, 64, 64,
	64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
	64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
	64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
	64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
	64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
	64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
	64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
	64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64, 64,
};

/* Encodes len bytes as a new NUL-terminated string (free()), NULL on OOM. */
char *
vep_b64url_encode(const uint8_t *data, size_t len)
{
	size_t olen, i, o = 0;
	char *s;

	if (len > (SIZE_MAX - 4) / 4 * 3)
		return NULL;
	olen = len / 3 * 4 + (len % 3 == 0 ? 0 : len % 3 + 1);
	if ((s = malloc(olen + 1)) == NULL)
		return NULL;
	for (i = 0; i + 2 < len; i += 3) {
		uint32_t v = (uint32_t)data[i] << 16 |
		    (uint32_t)data[i + 1] << 8 | data[i + 2];

		s[o++] = b64url_alphabet[v >> 18 & 63];
		s[o++] = b64url_alphabet[v >> 12 & 63];
		s[o++] = b64url_alphabet[v >> 6 & 63];
		s[o++] = b64url_alphabet[v & 63];
	}
	if (len - i == 1) {
		uint32_t v = (uint32_t)data[i] << 16;

		s[o++] = b64url_alphabet[v >> 18 & 63];
		s[o++] = b64url_alphabet[v >> 12 & 63];
	} else if (len - i == 2) {
		uint32_t v = (uint32_t)data[i] << 16 | (uint32_t)data[i + 1] << 8;

		s[o++] = b64url_alphabet[v >> 18 & 63];
		s[o++] = b64url_alphabet[v >> 12 & 63];
		s[o++] = b64url_alphabet[v >> 6 & 63];
	}
	s[o] = '\0';
	return s;
}

/* Strictly decodes slen characters into a new buffer (free()). */
int
vep_b64url_decode(const char *s, size_t slen, uint8_t **out, size_t *outlen)
{
	uint8_t *buf = NULL;
	size_t i, o = 0, rem, blen;
	uint32_t acc = 0;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (outlen != NULL)
		*outlen = 0;
	if ((s == NULL && slen > 0) || out == NULL || outlen == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	rem = slen % 4;
	if (rem == 1) {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	blen = slen / 4 * 3 + (rem == 0 ? 0 : rem - 1);
	if ((buf = malloc(blen + 1)) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	for (i = 0; i + 4 <= slen; i += 4) {
		uint32_t a = b64url_values[(unsigned char)s[i]];
		uint32_t b = b64url_values[(unsigned char)s[i + 1]];
		uint32_t c = b64url_values[(unsigned char)s[i + 2]];
		uint32_t d = b64url_values[(unsigned char)s[i + 3]];

		if (((a | b | c | d) & 64) != 0) {
			rc = VEP_ERR_INVALID;
			goto out;
		}
		acc = a << 18 | b << 12 | c << 6 | d;
		buf[o++] = (uint8_t)(acc >> 16);
		buf[o++] = (uint8_t)(acc >> 8);
		buf[o++] = (uint8_t)acc;
	}
	acc = 0;
	for (; i < slen; i++) {
		uint32_t v = b64url_values[(unsigned char)s[i]];

		if (v == 64) {
			rc = VEP_ERR_INVALID;
			goto out;
		}
		acc = acc << 6 | v;
	}
	/* A final group of 2 chars carries 8 data bits + 4 unused, of 3 chars
	 * 16 + 2 unused; the unused bits must be zero for a unique spelling. */
	if (rem == 2) {
		if ((acc & 0xf) != 0) {
			rc = VEP_ERR_INVALID;
			goto out;
		}
		buf[o++] = (uint8_t)(acc >> 4);
	} else if (rem == 3) {
		if ((acc & 0x3) != 0) {
			rc = VEP_ERR_INVALID;
			goto out;
		}
		buf[o++] = (uint8_t)(acc >> 10);
		buf[o++] = (uint8_t)(acc >> 2);
	}
	buf[o] = '\0';
	*out = buf;
	*outlen = o;
	buf = NULL;
	rc = VEP_OK;
out:
	free(buf);
	return rc;
}
