/*
 * util.c - JSON time members and quoting, the clock, UTF-8 repair.
 *
 * Untrusted JSON text becomes a jansson object in json_parse.c alone.
 */
#include <math.h>
#include <string.h>
#include <time.h>

#include "err.h"
#include "util.h"

/* JavaScript numbers are exact only below 2^53; a time at or above that was
 * not written by a deployed client and cannot round-trip through one. */
#define VEP_JSON_INT_LIMIT 9007199254740992LL /* 2^53 */

/* Reads a non-negative integral time member (integer, or a real that is
 * exactly integral, as JavaScript prints large numbers), below 2^53. */
int
vep_json_get_ms(const json_t *obj, const char *name, int64_t *out)
{
	const json_t *v;
	int rc = VEP_ERR_INVALID;

	if (out != NULL)
		*out = 0;
	if (obj == NULL || name == NULL || out == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	v = json_object_get(obj, name);
	if (json_is_integer(v)) {
		json_int_t i = json_integer_value(v);

		if (i < 0 || i >= VEP_JSON_INT_LIMIT)
			goto out;
		*out = (int64_t)i;
		rc = VEP_OK;
	} else if (json_is_real(v)) {
		double d = json_real_value(v);

		/* The range check comes first so the cast below is defined. */
		if (!isfinite(d) || d < 0 || d >= (double)VEP_JSON_INT_LIMIT)
			goto out;
		if ((double)(int64_t)d != d)
			goto out;
		*out = (int64_t)d;
		rc = VEP_OK;
	}
out:
	return rc;
}

/* Milliseconds since the epoch from CLOCK_REALTIME. */
int64_t
vep_now_ms(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_REALTIME, &ts) != 0)
		return 0;
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
vep_mono_ms(void)
{
	struct timespec ts;

	/* CLOCK_MONOTONIC cannot fail on Linux with a valid pointer. */
	(void)clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

size_t
vep_utf8_len(const unsigned char *p, const unsigned char *end)
{
	uint32_t cp;
	size_t n, i;

	if (p >= end)
		return 0;
	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2, cp = p[0] & 0x1f;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3, cp = p[0] & 0x0f;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4, cp = p[0] & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (p[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10ffff ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return n;
}

void
vep_utf8_sanitize(char *s)
{
	unsigned char *p = (unsigned char *)s, *end = p + strlen(s);
	size_t n;

	while (*p != '\0') {
		if ((n = vep_utf8_len(p, end)) == 0) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
}

/* What vep_json_quote writes after a backslash for each byte: the letter
 * of a short escape, 'u' for \\u00XX, 0 for a byte that stands for itself
 * (every byte from 0x80 on too, which the table leaves out). */
static const char json_escape[256] = {
	'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'b', 't', 'n', 'u', 'f', 'r', 'u', 'u',
	'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u', 'u',
	0, 0, '"', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, '\\', 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
	0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
};

/* 1 when none of the 8 bytes of w needs escaping: none below 0x20, none a
 * '"' or a '\\' (the classic "has a zero byte" test on w and on w with
 * each of those two XORed out; it can flag a byte next to a real match
 * but never misses one). */
static int
plain8(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL, high = 0x8080808080808080ULL;
	uint64_t q = w ^ ones * '"', b = w ^ ones * '\\';

	return ((((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b)) & high) == 0;
}

size_t
vep_json_quote(char *out, const char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *p = (const unsigned char *)s, *end = p + len, *run;
	char *o = out, e;
	uint64_t w;

	*o++ = '"';
	while (p < end) {
		/* The run of bytes that stand for themselves, eight at a time
		 * while it lasts, is copied at once. */
		run = p;
		while (end - p >= 8 && (memcpy(&w, p, 8), plain8(w)))
			p += 8;
		while (p < end && json_escape[*p] == 0)
			p++;
		memcpy(o, run, (size_t)(p - run));
		o += p - run;
		if (p == end)
			break;
		e = json_escape[*p];
		*o++ = '\\';
		*o++ = e;
		if (e == 'u') {
			*o++ = '0';
			*o++ = '0';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 0xf];
		}
		p++;
	}
	*o++ = '"';
	return (size_t)(o - out);
}

uint64_t
vep_fnv1a(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return h;
}
