/*
 * test_digest.c - SHA-256 and HMAC-SHA256, stateless and through a
 * digester: FIPS 180 and RFC 4231 vectors (cases 1-7, the 131-byte keys
 * included), and the digester against the stateless functions for every
 * key length 0-200 and message length 0-300 (fixed-seed bytes), one
 * digester used throughout.
 */
#include <stdlib.h>
#include <string.h>

#include "digest.h"
#include "err.h"
#include "harness.h"

static void
unhex(const char *h, uint8_t *out)
{
	for (size_t i = 0; h[2 * i] != '\0'; i++) {
		unsigned v;

		sscanf(h + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
}

static void
test_sha256_vectors(void)
{
	vep_digester *d = vep_digester_new();
	uint8_t want[32], got[32];

	ASSERT_TRUE(d != NULL);
	unhex("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", want);
	ASSERT_EQ(vep_sha256("abc", 3, got), VEP_OK);
	ASSERT_MEMEQ(got, want, 32);
	memset(got, 0, sizeof(got));
	ASSERT_EQ(vep_sha256_with(d, "abc", 3, got), VEP_OK);
	ASSERT_MEMEQ(got, want, 32);
	unhex("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", want);
	ASSERT_EQ(vep_sha256_with(d, NULL, 0, got), VEP_OK);
	ASSERT_MEMEQ(got, want, 32);
	ASSERT_EQ(vep_sha256_with(NULL, "abc", 3, got), VEP_ERR_ARG);
	ASSERT_EQ(vep_sha256_with(d, NULL, 3, got), VEP_ERR_ARG);
	vep_digester_free(d);
	vep_digester_free(NULL);
}

struct rfc4231 {
	uint8_t key_byte;      /* the key: key_len times this byte, or 1..25 when 0 */
	size_t key_len;
	const char *data;      /* text, or NULL: data_len times data_byte */
	uint8_t data_byte;
	size_t data_len;
	const char *mac;       /* hex; case 5 is truncated to 128 bits */
};

static const struct rfc4231 cases[] = {
	{ 0x0b, 20, "Hi There", 0, 0,
	  "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7" },
	{ 0, 0, "what do ya want for nothing?", 0, 0,
	  "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843" },
	{ 0xaa, 20, NULL, 0xdd, 50,
	  "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe" },
	{ 0, 25, NULL, 0xcd, 50,
	  "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b" },
	{ 0x0c, 20, "Test With Truncation", 0, 0, "a3b6167473100ee06e0c796c2955552b" },
	{ 0xaa, 131, "Test Using Larger Than Block-Size Key - Hash Key First", 0, 0,
	  "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54" },
	{ 0xaa, 131, "This is a test using a larger than block-size key and a larger than "
	  "block-size data. The key needs to be hashed before being used by the HMAC "
	  "algorithm.", 0, 0,
	  "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2" },
};

static void
test_hmac_rfc4231(void)
{
	vep_digester *d = vep_digester_new();
	uint8_t key[131], data[64], want[32], got[32], plain[32];

	ASSERT_TRUE(d != NULL);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		const struct rfc4231 *t = &cases[c];
		const void *k = key, *m = data;
		size_t klen = t->key_len, mlen = t->data_len, maclen = strlen(t->mac) / 2;

		if (c == 1) {
			k = "Jefe";
			klen = 4;
		} else if (t->key_byte == 0) {
			for (size_t i = 0; i < klen; i++)
				key[i] = (uint8_t)(i + 1);
		} else {
			memset(key, t->key_byte, klen);
		}
		if (t->data != NULL) {
			m = t->data;
			mlen = strlen(t->data);
		} else {
			memset(data, t->data_byte, mlen);
		}
		unhex(t->mac, want);
		ASSERT_EQ(vep_hmac_sha256_with(d, k, klen, m, mlen, got), VEP_OK);
		if (memcmp(got, want, maclen) != 0)
			HARNESS_FAIL("RFC 4231 case %zu (digester)", c + 1);
		ASSERT_EQ(vep_hmac_sha256(k, klen, m, mlen, plain), VEP_OK);
		if (memcmp(plain, want, maclen) != 0)
			HARNESS_FAIL("RFC 4231 case %zu (stateless)", c + 1);
	}
	vep_digester_free(d);
}

/* One digester, thousands of calls, every key length across the block
 * boundary: the same MACs and hashes as the stateless functions. */
static void
test_against_stateless(void)
{
	vep_digester *d = vep_digester_new();
	uint8_t buf[512], a[32], b[32];
	uint32_t x = 12345;

	ASSERT_TRUE(d != NULL);
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	for (size_t klen = 0; klen <= 200; klen++) {
		for (size_t mlen = 0; mlen <= 300; mlen += 1 + mlen / 16) {
			ASSERT_EQ(vep_hmac_sha256_with(d, buf + 200, klen, buf, mlen, a), VEP_OK);
			ASSERT_EQ(vep_hmac_sha256(buf + 200, klen, buf, mlen, b), VEP_OK);
			if (memcmp(a, b, 32) != 0)
				HARNESS_FAIL("HMAC, key %zu, message %zu bytes", klen, mlen);
		}
		ASSERT_EQ(vep_sha256_with(d, buf, klen, a), VEP_OK);
		ASSERT_EQ(vep_sha256(buf, klen, b), VEP_OK);
		ASSERT_MEMEQ(a, b, 32);
	}
	ASSERT_EQ(vep_hmac_sha256_with(d, NULL, 0, NULL, 0, a), VEP_OK);
	ASSERT_EQ(vep_hmac_sha256("", 0, "", 0, b), VEP_OK);
	ASSERT_MEMEQ(a, b, 32);
	ASSERT_EQ(vep_hmac_sha256_with(d, NULL, 1, "x", 1, a), VEP_ERR_ARG);
	ASSERT_EQ(vep_hmac_sha256_with(NULL, "k", 1, "x", 1, a), VEP_ERR_ARG);
	vep_digester_free(d);
}

int
main(void)
{
	RUN(test_sha256_vectors);
	RUN(test_hmac_rfc4231);
	RUN(test_against_stateless);
	return harness_done();
}
