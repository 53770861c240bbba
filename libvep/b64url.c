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

/* Returns the 6-bit value of c, or -1 when c is outside the alphabet. A
 * switch on ranges rather than a 256-entry table keeps the mapping visibly
 * equal to the alphabet above. */
static int
b64url_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '-')
		return 62;
	if (c == '_')
		return 63;
	return -1;
}

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
	for (i = 0; i < slen; i++) {
		int v = b64url_value((unsigned char)s[i]);

		if (v < 0) {
			rc = VEP_ERR_INVALID;
			goto out;
		}
		acc = acc << 6 | (uint32_t)v;
		if (i % 4 == 3) {
			buf[o++] = (uint8_t)(acc >> 16);
			buf[o++] = (uint8_t)(acc >> 8);
			buf[o++] = (uint8_t)acc;
			acc = 0;
		}
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
