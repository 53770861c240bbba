/*
 * test_b64url.c - base64url: round trips of every length 0..300 and each
 * way a strict decoder must refuse input.
 */
#include <stdlib.h>
#include <string.h>

#include "b64url.h"
#include "err.h"
#include "harness.h"

/* Round trip for every length, with varied bytes, plus the exact length of
 * the unpadded encoding. */
static void
test_roundtrip_lengths(void)
{
	uint8_t data[300];

	for (size_t i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t)(i * 167 + 13);
	for (size_t n = 0; n <= sizeof(data); n++) {
		char *s = vep_b64url_encode(data, n);
		uint8_t *back = NULL;
		size_t blen = 99;

		ASSERT_TRUE(s != NULL);
		ASSERT_EQ(strlen(s), n / 3 * 4 + (n % 3 ? n % 3 + 1 : 0));
		ASSERT_TRUE(strchr(s, '=') == NULL);
		ASSERT_EQ(vep_b64url_decode(s, strlen(s), &back, &blen), 0);
		ASSERT_EQ(blen, n);
		ASSERT_TRUE(n == 0 || memcmp(back, data, n) == 0);
		ASSERT_EQ(back[n], 0);
		free(s);
		free(back);
	}
}

/* Known answers including both URL-safe characters. */
static void
test_known(void)
{
	static const uint8_t all62[] = { 0xfb, 0xff, 0xbf };
	char *s;

	s = vep_b64url_encode((const uint8_t *)"foobar", 6);
	ASSERT_STREQ(s, "Zm9vYmFy");
	free(s);
	s = vep_b64url_encode((const uint8_t *)"fo", 2);
	ASSERT_STREQ(s, "Zm8");
	free(s);
	s = vep_b64url_encode(all62, 3);
	ASSERT_STREQ(s, "-_-_");
	free(s);
	s = vep_b64url_encode((const uint8_t *)"{\"alg\":\"RS256\"}", 15);
	ASSERT_STREQ(s, "eyJhbGciOiJSUzI1NiJ9");
	free(s);
}

static int
decode_rc(const char *s)
{
	uint8_t *out = (uint8_t *)1;
	size_t n = 7;
	int rc = vep_b64url_decode(s, strlen(s), &out, &n);

	if (rc != 0 && (out != NULL || n != 0))
		return 1000; /* out-parameters must be cleared on failure */
	free(out);
	return rc;
}

static void
test_rejections(void)
{
	ASSERT_EQ(decode_rc("Zm8="), VEP_ERR_INVALID);     /* padding */
	ASSERT_EQ(decode_rc("Zg=="), VEP_ERR_INVALID);
	ASSERT_EQ(decode_rc("Zm9v+mFy"), VEP_ERR_INVALID); /* standard alphabet */
	ASSERT_EQ(decode_rc("Zm9v/mFy"), VEP_ERR_INVALID);
	ASSERT_EQ(decode_rc("Zm9v YmFy"), VEP_ERR_INVALID); /* whitespace */
	ASSERT_EQ(decode_rc("Zm9vYmFy\n"), VEP_ERR_INVALID);
	ASSERT_EQ(decode_rc("\tZm8"), VEP_ERR_INVALID);
	ASSERT_EQ(decode_rc("Zm9vY"), VEP_ERR_INVALID);     /* len % 4 == 1 */
	ASSERT_EQ(decode_rc("A"), VEP_ERR_INVALID);
	ASSERT_EQ(decode_rc("Zh"), VEP_ERR_INVALID);        /* 'h' leaves bits set */
	ASSERT_EQ(decode_rc("Zm9"), VEP_ERR_INVALID);       /* '9' leaves bits set */
	ASSERT_EQ(decode_rc("Zm8."), VEP_ERR_INVALID);
	ASSERT_EQ(decode_rc("Zm\xc3\xa9"), VEP_ERR_INVALID); /* non-ASCII */
	/* The canonical spellings of the same bytes are accepted. */
	ASSERT_EQ(decode_rc("Zg"), 0);
	ASSERT_EQ(decode_rc("Zm8"), 0);
	ASSERT_EQ(decode_rc(""), 0);
}

/* An embedded NUL inside the given length is refused, not a terminator. */
static void
test_embedded_nul(void)
{
	uint8_t *out = NULL;
	size_t n = 0;

	ASSERT_EQ(vep_b64url_decode("Zm\0v", 4, &out, &n), VEP_ERR_INVALID);
	ASSERT_TRUE(out == NULL);
}

/* Of all 64*64 two-character texts, exactly one per byte value (256)
 * decodes: every byte string has a single accepted spelling. */
static void
test_unique_spelling(void)
{
	static const char alpha[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	int accepted = 0;

	for (int i = 0; i < 64; i++) {
		for (int j = 0; j < 64; j++) {
			char s[3] = { alpha[i], alpha[j], '\0' };

			if (decode_rc(s) == 0)
				accepted++;
		}
	}
	ASSERT_EQ(accepted, 256);
}

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* 1 when byte c at pos of len characters ('A' elsewhere) decodes as it
 * must: accepted exactly when c is in the alphabet and, in the last place
 * of a short final group, leaves the unused low bits zero; and then its
 * index comes back in the bits of its place. */
static int
byte_at_ok(unsigned c, size_t len, size_t pos)
{
	const char *at = c != 0 ? memchr(alphabet, (int)c, 64) : NULL;
	size_t v = at != NULL ? (size_t)(at - alphabet) : 0, n = 0;
	size_t first = pos / 4 * 3, place = pos % 4;
	unsigned unused = len % 4 == 2 ? 0xf : len % 4 == 3 ? 0x3 : 0;
	int valid = at != NULL && (pos != len - 1 || (v & unused) == 0), rc, ok;
	uint32_t bits = 0;
	uint8_t *out = NULL;
	char s[8];

	memset(s, 'A', sizeof(s));
	s[pos] = (char)c;
	rc = vep_b64url_decode(s, len, &out, &n);
	ok = (rc == 0) == valid;
	if (ok && rc == 0) {
		for (size_t k = first; k < first + 3 && k < n; k++)
			bits |= (uint32_t)out[k] << (16 - 8 * (k - first));
		ok = (bits >> (18 - 6 * place) & 63) == v;
	}
	free(out);
	return ok;
}

/* Every byte value at every place of a full group and of both short
 * final groups (the decoder's table against the alphabet). */
static void
test_every_byte(void)
{
	static const size_t lens[] = { 4, 8, 2, 3, 6, 7 };

	for (unsigned c = 0; c <= 0xff; c++)
		for (size_t l = 0; l < sizeof(lens) / sizeof(lens[0]); l++)
			for (size_t pos = 0; pos < lens[l]; pos++)
				if (!byte_at_ok(c, lens[l], pos))
					HARNESS_FAIL("byte 0x%02x at %zu of %zu", c, pos, lens[l]);
}

int
main(void)
{
	RUN(test_roundtrip_lengths);
	RUN(test_known);
	RUN(test_rejections);
	RUN(test_embedded_nul);
	RUN(test_unique_spelling);
	RUN(test_every_byte);
	return harness_done();
}
