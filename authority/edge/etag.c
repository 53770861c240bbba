/*
 * edge/etag.c - entity tags (SHA-256 of the body) and If-None-Match parsing.
 *
 * Owns hashing of public bodies; must never be used on secrets (nothing
 * here is constant-time, and tags are sent to anyone).
 */
#include "edge/etag.h"

#include <string.h>

#include "digest.h"
#include "err.h"

int
etag_compute(const void *body, size_t len, char out[ETAG_BUFSZ])
{
	static const char hex[] = "0123456789abcdef";
	uint8_t md[VEP_SHA256_BYTES];
	size_t i;

	out[0] = '\0';
	if (vep_sha256(body, len, md) != 0)
		return VEP_ERR_CRYPTO;
	/* 128 bits are plenty to tell versions of one document apart. */
	out[0] = '"';
	for (i = 0; i < 16; i++) {
		out[1 + 2 * i] = hex[md[i] >> 4];
		out[2 + 2 * i] = hex[md[i] & 15];
	}
	out[33] = '"';
	out[34] = '\0';
	return VEP_OK;
}

int
etag_none_match(const char *h, const char *etag)
{
	size_t elen = strlen(etag);
	const char *q;
	int first = 1;

	if (h == NULL)
		return 0;
	for (;; first = 0) {
		while (*h == ' ' || *h == '\t' || *h == ',')
			h++;
		if (*h == '\0')
			return 0;
		if (*h == '*') {
			if (!first)
				return 0;
			h++;
			while (*h == ' ' || *h == '\t')
				h++;
			/* "*" is only meaningful alone; inside a list it is malformed. */
			return *h == '\0' ? 1 : 0;
		}
		if (h[0] == 'W' && h[1] == '/')
			h += 2;
		if (*h != '"')
			return 0;
		q = strchr(h + 1, '"');
		if (q == NULL)
			return 0;
		if ((size_t)(q + 1 - h) == elen && memcmp(h, etag, elen) == 0)
			return 1;
		h = q + 1;
		while (*h == ' ' || *h == '\t')
			h++;
		if (*h != ',' && *h != '\0')
			return 0;
	}
}
