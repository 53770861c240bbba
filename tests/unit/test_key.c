/*
 * test_key.c - keys: strict public JSON parsing (every rejection key.h
 * lists), canonical serialisation, PEM and private-key files (modes, O_EXCL,
 * symlinks, size limit), fingerprints, and signing/verification for all four
 * algorithms with real OpenSSL keys.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "err.h"
#include "harness.h"
#include "key.h"
#include "secmem.h"

/* Keys made once: generation is the slow part of this test. */
static vep_key *rs256, *rs128, *ds128, *ds256;
static char tmpdir[] = "/tmp/vep-test-key-XXXXXX";

/* Parses obj (stolen) and returns the error code; checks *out clearing. */
static int
parse_obj(json_t *obj)
{
	vep_key *k = (vep_key *)1;
	int rc;

	if (obj == NULL)
		return 1001;
	rc = vep_key_from_json(obj, &k);
	json_decref(obj);
	if (rc != 0 && k != NULL)
		return 1000;
	vep_key_free(k);
	return rc;
}

static int
parse_rsa(const char *n, const char *e)
{
	return parse_obj(json_pack("{s:s,s:s,s:s}", "algorithm", "RS", "n", n, "e", e));
}

static int
parse_dsa(const char *y, const char *p, const char *q, const char *g)
{
	return parse_obj(json_pack("{s:s,s:s,s:s,s:s,s:s}", "algorithm", "DS",
	    "y", y, "p", p, "q", q, "g", g));
}

/* A string member of a key's canonical JSON (new copy). */
static char *
member(const vep_key *k, const char *name)
{
	json_t *o = vep_key_to_json(k);
	char *s = o ? strdup(json_string_value(json_object_get(o, name))) : NULL;

	json_decref(o);
	return s;
}

/* An odd number with exactly `bits` bits, in decimal (OPENSSL_free). */
static char *
odd_number_dec(int bits)
{
	BIGNUM *bn = BN_new();
	char *s = NULL;

	if (bn != NULL && BN_set_bit(bn, bits - 1) && BN_set_bit(bn, 0))
		s = BN_bn2dec(bn);
	BN_free(bn);
	return s;
}

/* hex op: result of a BIGNUM operation on a hex string, lowercase. */
enum hexop { SHR1, SHR4, SHR32, SHL1, SHL1024, ADD1 };

static char *
hex_op(const char *hex, enum hexop op)
{
	BIGNUM *bn = NULL;
	char *s = NULL;
	int ok = BN_hex2bn(&bn, hex) != 0;

	if (ok) {
		switch (op) {
		case SHR1: ok = BN_rshift1(bn, bn); break;
		case SHR4: ok = BN_rshift(bn, bn, 4); break;
		case SHR32: ok = BN_rshift(bn, bn, 32); break;
		case SHL1: ok = BN_lshift1(bn, bn); break;
		case SHL1024: ok = BN_lshift(bn, bn, 1024); break;
		case ADD1: ok = BN_add_word(bn, 1); break;
		}
	}
	if (ok && (s = BN_bn2hex(bn)) != NULL) {
		for (char *c = s; *c; c++)
			if (*c >= 'A' && *c <= 'F')
				*c = (char)(*c - 'A' + 'a');
		/* strip a leading zero nibble so the string is canonical */
		if (s[0] == '0' && s[1] != '\0')
			memmove(s, s + 1, strlen(s));
	}
	BN_free(bn);
	return s;
}

static void
test_rsa_json_rejections(void)
{
	char *n = member(rs128, "n"), *e = member(rs128, "e");
	char buf[2100];
	char *big;

	ASSERT_TRUE(n != NULL && e != NULL);
	ASSERT_STREQ(e, "65537");
	ASSERT_EQ(parse_rsa(n, e), 0);
	ASSERT_EQ(parse_rsa(n, "3"), 0);

	/* algorithm member */
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s}", "algorithm", "RSA", "n", n, "e", e)), VEP_ERR_ALG);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s}", "algorithm", "rs", "n", n, "e", e)), VEP_ERR_ALG);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s}", "algorithm", "RS256", "n", n, "e", e)), VEP_ERR_ALG);
	ASSERT_EQ(parse_obj(json_pack("{s:i,s:s,s:s}", "algorithm", 1, "n", n, "e", e)), VEP_ERR_INVALID);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s}", "n", n, "e", e)), VEP_ERR_INVALID);
	/* member set */
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s}", "algorithm", "RS", "n", n)), VEP_ERR_INVALID);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s}", "algorithm", "RS", "e", e)), VEP_ERR_INVALID);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s,s:s}", "algorithm", "RS", "n", n, "e", e,
	    "d", "5")), VEP_ERR_INVALID);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s,s:s}", "algorithm", "RS", "n", n, "e", e,
	    "kid", "x")), VEP_ERR_INVALID);
	ASSERT_EQ(parse_obj(json_pack("[s]", "RS")), VEP_ERR_INVALID);
	/* number syntax */
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:i}", "algorithm", "RS", "n", n, "e", 65537)), VEP_ERR_INVALID);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:n}", "algorithm", "RS", "n", n, "e")), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rsa(n, "+65537"), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rsa(n, "-65537"), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rsa(n, "065537"), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rsa(n, " 65537"), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rsa(n, "65537 "), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rsa(n, "0x10001"), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rsa(n, "10001a"), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rsa(n, "6.5537e4"), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rsa(n, ""), VEP_ERR_INVALID);
	ASSERT_EQ(parse_rsa(n, "0"), VEP_ERR_INVALID);
	snprintf(buf, sizeof(buf), "0%s", n);
	ASSERT_EQ(parse_rsa(buf, e), VEP_ERR_INVALID);
	snprintf(buf, sizeof(buf), "-%s", n);
	ASSERT_EQ(parse_rsa(buf, e), VEP_ERR_INVALID);
	/* VEP_KEY_NUM_MAX_CHARS: a longer string is TOOBIG; at the limit it
	 * is read (and then refused for its size). */
	memset(buf, '7', VEP_KEY_NUM_MAX_CHARS + 1);
	buf[VEP_KEY_NUM_MAX_CHARS + 1] = '\0';
	ASSERT_EQ(parse_rsa(buf, e), VEP_ERR_TOOBIG);
	buf[VEP_KEY_NUM_MAX_CHARS] = '\0';
	ASSERT_EQ(parse_rsa(buf, e), VEP_ERR_KEYSIZE);
	big = malloc(100001);
	ASSERT_TRUE(big != NULL);
	memset(big, '9', 100000);
	big[100000] = '\0';
	ASSERT_EQ(parse_rsa(n, big), VEP_ERR_TOOBIG);
	free(big);
	/* exponent range */
	ASSERT_EQ(parse_rsa(n, "65536"), VEP_ERR_KEY);
	ASSERT_EQ(parse_rsa(n, "2"), VEP_ERR_KEY);
	ASSERT_EQ(parse_rsa(n, "1"), VEP_ERR_KEY);
	ASSERT_EQ(parse_rsa(n, n), VEP_ERR_KEY);   /* e >= n */
	free(n);
	free(e);
}

static void
test_rsa_sizes(void)
{
	/* One bit short is tolerated (RSA_BITS_SHORT_TOLERANCE: Mozilla's
	 * vectors use 2047-bit keys), two bits short or one over is not. A
	 * 4096-bit modulus has 1234 decimal digits, over VEP_KEY_NUM_MAX_CHARS. */
	static const struct { int bits; int rc; const char *alg; } cases[] = {
		{ 512, VEP_ERR_KEYSIZE, NULL }, { 1022, VEP_ERR_KEYSIZE, NULL },
		{ 1023, 0, "RS128" }, { 1024, 0, "RS128" },
		{ 1025, VEP_ERR_KEYSIZE, NULL }, { 1536, VEP_ERR_KEYSIZE, NULL },
		{ 2046, VEP_ERR_KEYSIZE, NULL }, { 2047, 0, "RS256" },
		{ 2048, 0, "RS256" }, { 2049, VEP_ERR_KEYSIZE, NULL },
		{ 3072, VEP_ERR_KEYSIZE, NULL }, { 4096, VEP_ERR_TOOBIG, NULL },
	};

	/* The size rule looks at the modulus length only, so any odd number
	 * of the right length stands in for a real modulus here. */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *n = odd_number_dec(cases[i].bits);

		ASSERT_TRUE(n != NULL);
		ASSERT_EQ(parse_rsa(n, "65537"), cases[i].rc);
		if (cases[i].alg != NULL) {
			json_t *o = json_pack("{s:s,s:s,s:s}", "algorithm", "RS", "n", n,
			    "e", "65537");
			vep_key *k = NULL;

			ASSERT_EQ(vep_key_from_json(o, &k), 0);
			ASSERT_STREQ(vep_key_alg(k)->name, cases[i].alg);
			vep_key_free(k);
			json_decref(o);
		}
		OPENSSL_free(n);
	}
}

static void
test_dsa_json_rejections(void)
{
	char *y = member(ds128, "y"), *p = member(ds128, "p");
	char *q = member(ds128, "q"), *g = member(ds128, "g");
	char *t, *upper, buf[2100];

	ASSERT_TRUE(y && p && q && g);
	ASSERT_EQ(parse_dsa(y, p, q, g), 0);
	/* member set / types */
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s,s:s}", "algorithm", "DS", "p", p, "q", q, "g", g)),
	    VEP_ERR_INVALID);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "algorithm", "DS", "y", y, "p", p,
	    "q", q, "g", g, "x", "1")), VEP_ERR_INVALID);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s,s:s,s:i}", "algorithm", "DS", "y", y, "p", p,
	    "q", q, "g", 2)), VEP_ERR_INVALID);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s,s:s,s:s}", "algorithm", "DSA", "y", y, "p", p,
	    "q", q, "g", g)), VEP_ERR_ALG);
	/* syntax */
	snprintf(buf, sizeof(buf), "0%s", g);
	ASSERT_EQ(parse_dsa(y, p, q, buf), VEP_ERR_INVALID);
	snprintf(buf, sizeof(buf), "0x%s", g);
	ASSERT_EQ(parse_dsa(y, p, q, buf), VEP_ERR_INVALID);
	snprintf(buf, sizeof(buf), "-%s", g);
	ASSERT_EQ(parse_dsa(y, p, q, buf), VEP_ERR_INVALID);
	snprintf(buf, sizeof(buf), "%sg", q);
	ASSERT_EQ(parse_dsa(y, p, buf, g), VEP_ERR_INVALID);
	ASSERT_EQ(parse_dsa(y, p, q, ""), VEP_ERR_INVALID);
	memset(buf, 'f', VEP_KEY_NUM_MAX_CHARS + 1);
	buf[VEP_KEY_NUM_MAX_CHARS + 1] = '\0';
	ASSERT_EQ(parse_dsa(buf, p, q, g), VEP_ERR_TOOBIG);
	/* Uppercase is read; the canonical form is lowercase. */
	upper = strdup(y);
	ASSERT_TRUE(upper != NULL);
	for (char *c = upper; *c; c++)
		if (*c >= 'a' && *c <= 'f')
			*c = (char)(*c - 'a' + 'A');
	{
		json_t *o = json_pack("{s:s,s:s,s:s,s:s,s:s}", "algorithm", "DS", "y", upper,
		    "p", p, "q", q, "g", g);
		vep_key *k = NULL;
		char *canon;

		ASSERT_EQ(vep_key_from_json(o, &k), 0);
		json_decref(o);
		canon = member(k, "y");
		ASSERT_STREQ(canon, y);
		free(canon);
		vep_key_free(k);
	}
	free(upper);
	/* sizes */
	t = hex_op(p, SHR1);        /* 1023-bit p */
	ASSERT_EQ(parse_dsa(y, t, q, g), VEP_ERR_KEYSIZE);
	OPENSSL_free(t);
	t = hex_op(q, SHL1);        /* 161-bit q */
	ASSERT_EQ(parse_dsa(y, p, t, g), VEP_ERR_KEYSIZE);
	OPENSSL_free(t);
	t = hex_op(q, SHR1);        /* 159-bit q */
	ASSERT_EQ(parse_dsa(y, p, t, g), VEP_ERR_KEYSIZE);
	OPENSSL_free(t);
	t = hex_op(p, SHL1024);     /* 2048-bit p with a 160-bit q */
	ASSERT_EQ(parse_dsa(y, t, q, g), VEP_ERR_KEYSIZE);
	OPENSSL_free(t);
	/* ranges */
	ASSERT_EQ(parse_dsa(y, p, q, "1"), VEP_ERR_KEY);
	ASSERT_EQ(parse_dsa(y, p, q, p), VEP_ERR_KEY);       /* g = p */
	t = hex_op(p, ADD1);
	ASSERT_EQ(parse_dsa(y, p, q, t), VEP_ERR_KEY);       /* g > p */
	ASSERT_EQ(parse_dsa(t, p, q, g), VEP_ERR_KEY);       /* y > p */
	OPENSSL_free(t);
	ASSERT_EQ(parse_dsa(y, p, q, "2"), VEP_ERR_KEY);     /* 2^q != 1 */
	t = hex_op(g, ADD1);
	ASSERT_EQ(parse_dsa(y, p, q, t), VEP_ERR_KEY);       /* (g+1)^q != 1 */
	OPENSSL_free(t);
	ASSERT_EQ(parse_dsa("1", p, q, g), VEP_ERR_KEY);
	ASSERT_EQ(parse_dsa(p, p, q, g), VEP_ERR_KEY);       /* y = p */
	free(y);
	free(p);
	free(q);
	free(g);
}

/* A value with an odd number of hex digits (where BN_bn2hex pads a zero
 * nibble) serialises back to exactly the same lowercase string. */
static void
test_dsa_hex_canonical(void)
{
	char *y = member(ds128, "y"), *p = member(ds128, "p");
	char *q = member(ds128, "q"), *g = member(ds128, "g");
	char *odd = NULL, *back = NULL;
	json_t *o = NULL;
	vep_key *k = NULL;

	ASSERT_TRUE(y && p && q && g);
	odd = hex_op(y, SHR4);
	ASSERT_TRUE(odd != NULL);
	if (strlen(odd) % 2 == 0) {
		char *t = hex_op(odd, SHR4);

		OPENSSL_free(odd);
		odd = t;
	}
	ASSERT_TRUE(strlen(odd) % 2 == 1);
	o = json_pack("{s:s,s:s,s:s,s:s,s:s}", "algorithm", "DS", "y", odd, "p", p, "q", q, "g", g);
	ASSERT_EQ(vep_key_from_json(o, &k), 0);
	back = member(k, "y");
	ASSERT_STREQ(back, odd);
	json_decref(o);
	vep_key_free(k);
	free(back);
	OPENSSL_free(odd);
	free(y);
	free(p);
	free(q);
	free(g);
}

/* DS256 sizes: 2048/256 accepted, 2048/224 refused. */
static void
test_dsa256_sizes(void)
{
	char *y = member(ds256, "y"), *p = member(ds256, "p");
	char *q = member(ds256, "q"), *g = member(ds256, "g");
	char *t;

	ASSERT_TRUE(y && p && q && g);
	ASSERT_EQ(parse_dsa(y, p, q, g), 0);
	ASSERT_EQ(strlen(q), 64);
	t = hex_op(q, SHR32);       /* 224-bit q */
	ASSERT_EQ(parse_dsa(y, p, t, g), VEP_ERR_KEYSIZE);
	OPENSSL_free(t);
	free(y);
	free(p);
	free(q);
	free(g);
}

/* Canonical JSON: member order, compact text, and parse(serialise(k))
 * gives the same text and an equal key. */
static void
test_canonical_roundtrip(void)
{
	vep_key *keys[] = { rs256, rs128, ds128, ds256 };
	static const char *prefix[] = {
		"{\"algorithm\":\"RS\",\"n\":\"", "{\"algorithm\":\"RS\",\"n\":\"",
		"{\"algorithm\":\"DS\",\"y\":\"", "{\"algorithm\":\"DS\",\"y\":\"",
	};

	for (size_t i = 0; i < 4; i++) {
		char *text = vep_key_to_json_text(keys[i]), *again = NULL;
		vep_key *k = NULL;

		ASSERT_TRUE(text != NULL);
		ASSERT_TRUE(strncmp(text, prefix[i], strlen(prefix[i])) == 0);
		ASSERT_TRUE(strchr(text, ' ') == NULL);
		if (i < 2)
			ASSERT_TRUE(strstr(text, "\",\"e\":\"65537\"}") != NULL);
		else
			ASSERT_TRUE(strstr(text, "\",\"p\":\"") < strstr(text, "\",\"q\":\"") &&
			    strstr(text, "\",\"q\":\"") < strstr(text, "\",\"g\":\""));
		ASSERT_EQ(vep_key_from_json_text(text, strlen(text), &k), 0);
		ASSERT_TRUE(vep_key_alg(k) == vep_key_alg(keys[i]));
		ASSERT_TRUE(vep_key_public_equal(k, keys[i]));
		ASSERT_TRUE(!vep_key_has_private(k));
		again = vep_key_to_json_text(k);
		ASSERT_STREQ(again, text);
		free(again);
		free(text);
		vep_key_free(k);
	}
	ASSERT_STREQ(vep_key_alg(rs256)->name, "RS256");
	ASSERT_STREQ(vep_key_alg(rs128)->name, "RS128");
	ASSERT_STREQ(vep_key_alg(ds128)->name, "DS128");
	ASSERT_STREQ(vep_key_alg(ds256)->name, "DS256");
	ASSERT_TRUE(!vep_key_public_equal(rs256, rs128));
	ASSERT_TRUE(!vep_key_public_equal(ds128, ds256));
}

static void
test_json_text_limits(void)
{
	vep_key *k = (vep_key *)1;

	ASSERT_EQ(vep_key_from_json_text("{\"algorithm\":\"RS\"", 17, &k), VEP_ERR_INVALID);
	ASSERT_TRUE(k == NULL);
	ASSERT_EQ(vep_key_from_json_text("{\"algorithm\":\"RS\",\"algorithm\":\"DS\"}", 35, &k),
	    VEP_ERR_INVALID);
}

static void
test_sign_verify_all(void)
{
	vep_key *keys[] = { rs256, rs128, ds128, ds256 };
	static const uint8_t msg[] = "eyJhbGciOiJSUzI1NiJ9.eyJhIjoxfQ";

	for (size_t i = 0; i < 4; i++) {
		const struct vep_alg *a = vep_key_alg(keys[i]);
		uint8_t *sig = NULL, *sig2 = NULL;
		size_t siglen = 0, siglen2 = 0;
		vep_key *pub = NULL;
		uint8_t tampered[sizeof(msg)];

		ASSERT_EQ(vep_key_sign(keys[i], msg, sizeof(msg) - 1, &sig, &siglen), 0);
		ASSERT_EQ(siglen, a->sig_len);
		ASSERT_EQ(vep_key_verify(keys[i], msg, sizeof(msg) - 1, sig, siglen), 0);
		ASSERT_EQ(vep_key_public_copy(keys[i], &pub), 0);
		ASSERT_TRUE(!vep_key_has_private(pub));
		ASSERT_TRUE(vep_key_public_equal(pub, keys[i]));
		ASSERT_EQ(vep_key_verify(pub, msg, sizeof(msg) - 1, sig, siglen), 0);
		/* public half cannot sign */
		ASSERT_EQ(vep_key_sign(pub, msg, 3, &sig2, &siglen2), VEP_ERR_NOKEY);
		ASSERT_TRUE(sig2 == NULL && siglen2 == 0);
		/* tampered message and signature */
		memcpy(tampered, msg, sizeof(msg));
		tampered[5] ^= 1;
		ASSERT_EQ(vep_key_verify(pub, tampered, sizeof(msg) - 1, sig, siglen), VEP_ERR_BADSIG);
		ASSERT_EQ(vep_key_verify(pub, msg, sizeof(msg) - 2, sig, siglen), VEP_ERR_BADSIG);
		sig[siglen / 2] ^= 0x40;
		ASSERT_EQ(vep_key_verify(pub, msg, sizeof(msg) - 1, sig, siglen), VEP_ERR_BADSIG);
		sig[siglen / 2] ^= 0x40;
		ASSERT_EQ(vep_key_verify(pub, msg, sizeof(msg) - 1, sig, siglen - 1),
		    VEP_ERR_BADSIG);
		ASSERT_EQ(vep_key_verify(pub, msg, sizeof(msg) - 1, sig, 0), VEP_ERR_BADSIG);
		/* another key of another algorithm refuses it */
		ASSERT_EQ(vep_key_verify(keys[(i + 1) % 4], msg, sizeof(msg) - 1, sig, siglen),
		    VEP_ERR_BADSIG);
		free(sig);
		vep_key_free(pub);
	}
}

/* A signature one byte longer than the modulus (even with a zero first
 * byte) is refused; one shorter, because the signer dropped a leading zero
 * byte, is left-padded and verifies. */
static void
test_rsa_short_and_long_signature(void)
{
	uint8_t msg[32], *sig = NULL, longer[129];
	size_t siglen = 0;
	int found = 0;

	for (unsigned int i = 0; i < 20000 && !found; i++) {
		snprintf((char *)msg, sizeof(msg), "message %u", i);
		free(sig);
		sig = NULL;
		ASSERT_EQ(vep_key_sign(rs128, msg, strlen((char *)msg), &sig, &siglen), 0);
		ASSERT_EQ(siglen, 128);
		if (sig[0] == 0)
			found = 1;
	}
	ASSERT_TRUE(found);
	ASSERT_EQ(vep_key_verify(rs128, msg, strlen((char *)msg), sig, siglen), 0);
	ASSERT_EQ(vep_key_verify(rs128, msg, strlen((char *)msg), sig + 1, siglen - 1), 0);
	longer[0] = 0;
	memcpy(longer + 1, sig, siglen);
	ASSERT_EQ(vep_key_verify(rs128, msg, strlen((char *)msg), longer, sizeof(longer)),
	    VEP_ERR_BADSIG);
	/* A short signature that is not a stripped valid one still fails. */
	ASSERT_EQ(vep_key_verify(rs128, msg, strlen((char *)msg), sig + 2, siglen - 2),
	    VEP_ERR_BADSIG);
	free(sig);
}

/* DSA r and s must each lie in (0, q), and the length must be exact. */
static void
test_dsa_signature_ranges(void)
{
	static const uint8_t msg[] = "dsa range";
	char *qhex = member(ds128, "q");
	BIGNUM *q = NULL;
	uint8_t *sig = NULL, bad[41];
	size_t siglen = 0;

	ASSERT_TRUE(qhex != NULL && BN_hex2bn(&q, qhex) != 0);
	ASSERT_EQ(vep_key_sign(ds128, msg, sizeof(msg), &sig, &siglen), 0);
	ASSERT_EQ(siglen, 40);
	ASSERT_EQ(vep_key_verify(ds128, msg, sizeof(msg), sig, 40), 0);
	/* r = 0 */
	memcpy(bad, sig, 40);
	memset(bad, 0, 20);
	ASSERT_EQ(vep_key_verify(ds128, msg, sizeof(msg), bad, 40), VEP_ERR_BADSIG);
	/* s = 0 */
	memcpy(bad, sig, 40);
	memset(bad + 20, 0, 20);
	ASSERT_EQ(vep_key_verify(ds128, msg, sizeof(msg), bad, 40), VEP_ERR_BADSIG);
	/* r = q, s = q */
	memcpy(bad, sig, 40);
	ASSERT_TRUE(BN_bn2binpad(q, bad, 20) == 20);
	ASSERT_EQ(vep_key_verify(ds128, msg, sizeof(msg), bad, 40), VEP_ERR_BADSIG);
	memcpy(bad, sig, 40);
	ASSERT_TRUE(BN_bn2binpad(q, bad + 20, 20) == 20);
	ASSERT_EQ(vep_key_verify(ds128, msg, sizeof(msg), bad, 40), VEP_ERR_BADSIG);
	/* r = 2^160 - 1 */
	memcpy(bad, sig, 40);
	memset(bad, 0xff, 20);
	ASSERT_EQ(vep_key_verify(ds128, msg, sizeof(msg), bad, 40), VEP_ERR_BADSIG);
	/* lengths 39 and 41 */
	memcpy(bad + 1, sig, 40);
	bad[0] = 0;
	ASSERT_EQ(vep_key_verify(ds128, msg, sizeof(msg), bad, 41), VEP_ERR_BADSIG);
	ASSERT_EQ(vep_key_verify(ds128, msg, sizeof(msg), sig, 39), VEP_ERR_BADSIG);
	ASSERT_EQ(vep_key_verify(ds128, msg, sizeof(msg), sig + 1, 39), VEP_ERR_BADSIG);
	BN_free(q);
	free(qhex);
	free(sig);
}

static void
test_pem_roundtrip(void)
{
	vep_key *keys[] = { rs256, rs128, ds128, ds256 };

	for (size_t i = 0; i < 4; i++) {
		char *pem = NULL;
		vep_key *k = NULL, *pub = NULL;

		ASSERT_EQ(vep_key_to_pem(keys[i], &pem), 0);
		ASSERT_TRUE(strncmp(pem, "-----BEGIN PRIVATE KEY-----\n", 28) == 0);
		ASSERT_EQ(vep_key_from_pem(pem, strlen(pem), &k), 0);
		ASSERT_TRUE(vep_key_has_private(k));
		ASSERT_TRUE(vep_key_alg(k) == vep_key_alg(keys[i]));
		ASSERT_TRUE(vep_key_public_equal(k, keys[i]));
		vep_free_secret_str(pem);
		pem = (char *)1;
		ASSERT_EQ(vep_key_public_copy(k, &pub), 0);
		ASSERT_EQ(vep_key_to_pem(pub, &pem), VEP_ERR_NOKEY);
		ASSERT_TRUE(pem == NULL);
		vep_key_free(k);
		vep_key_free(pub);
	}
}

/* PEM text of a freshly generated OpenSSL key of another kind or size. */
static char *
foreign_pem(const char *type, size_t bits)
{
	EVP_PKEY *pk = bits ? EVP_PKEY_Q_keygen(NULL, NULL, type, bits) :
	    EVP_PKEY_Q_keygen(NULL, NULL, type, "P-256");
	BIO *bio = BIO_new(BIO_s_mem());
	char *data = NULL, *s = NULL;
	long n;

	if (pk != NULL && bio != NULL &&
	    PEM_write_bio_PrivateKey(bio, pk, NULL, NULL, 0, NULL, NULL) == 1 &&
	    (n = BIO_get_mem_data(bio, &data)) > 0)
		s = strndup(data, (size_t)n);
	EVP_PKEY_free(pk);
	BIO_free(bio);
	return s;
}

static void
test_pem_rejections(void)
{
	vep_key *k = (vep_key *)1;
	char *pem, *big;

	ASSERT_EQ(vep_key_from_pem("not a key", 9, &k), VEP_ERR_INVALID);
	ASSERT_TRUE(k == NULL);
	pem = foreign_pem("RSA", 512);
	ASSERT_TRUE(pem != NULL);
	ASSERT_EQ(vep_key_from_pem(pem, strlen(pem), &k), VEP_ERR_KEYSIZE);
	free(pem);
	pem = foreign_pem("RSA", 1536);
	ASSERT_TRUE(pem != NULL);
	ASSERT_EQ(vep_key_from_pem(pem, strlen(pem), &k), VEP_ERR_KEYSIZE);
	free(pem);
	pem = foreign_pem("EC", 0);
	ASSERT_TRUE(pem != NULL);
	ASSERT_EQ(vep_key_from_pem(pem, strlen(pem), &k), VEP_ERR_ALG);
	free(pem);
	/* 64 KiB limit: a valid key padded past it is refused unread. */
	ASSERT_EQ(vep_key_to_pem(rs128, &pem), 0);
	big = calloc(1, 64 * 1024 + 2);
	ASSERT_TRUE(big != NULL);
	memset(big, '\n', 64 * 1024 + 1);
	memcpy(big, pem, strlen(pem));
	ASSERT_EQ(vep_key_from_pem(big, 64 * 1024, &k), 0);
	vep_key_free(k);
	ASSERT_EQ(vep_key_from_pem(big, 64 * 1024 + 1, &k), VEP_ERR_TOOBIG);
	free(big);
	vep_free_secret_str(pem);
}

static void
path_in_tmp(char *buf, size_t n, const char *name)
{
	snprintf(buf, n, "%s/%s", tmpdir, name);
}

static int
write_file(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0)
		return -1;
	if (write(fd, data, len) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	close(fd);
	return chmod(path, mode);
}

static void
test_save_load(void)
{
	char path[512], other[512];
	struct stat st;
	vep_key *k = (vep_key *)1, *pub = NULL;

	path_in_tmp(path, sizeof(path), "current.pem");
	ASSERT_EQ(vep_key_save_private(rs256, path), 0);
	ASSERT_EQ(stat(path, &st), 0);
	ASSERT_EQ(st.st_mode & 07777, 0600);
	ASSERT_TRUE(S_ISREG(st.st_mode));
	/* O_EXCL: never overwritten */
	ASSERT_EQ(vep_key_save_private(rs128, path), VEP_ERR_EXISTS);
	ASSERT_EQ(vep_key_load_private(path, &k), 0);
	ASSERT_TRUE(vep_key_public_equal(k, rs256));
	ASSERT_TRUE(vep_key_has_private(k));
	vep_key_free(k);
	/* public half cannot be saved, and leaves no file behind */
	path_in_tmp(other, sizeof(other), "pub.pem");
	ASSERT_EQ(vep_key_public_copy(rs256, &pub), 0);
	ASSERT_EQ(vep_key_save_private(pub, other), VEP_ERR_NOKEY);
	ASSERT_TRUE(access(other, F_OK) != 0);
	vep_key_free(pub);
	/* modes granting group or others anything are refused */
	ASSERT_EQ(chmod(path, 0640), 0);
	ASSERT_EQ(vep_key_load_private(path, &k), VEP_ERR_PERM);
	ASSERT_TRUE(k == NULL);
	ASSERT_EQ(chmod(path, 0604), 0);
	ASSERT_EQ(vep_key_load_private(path, &k), VEP_ERR_PERM);
	ASSERT_EQ(chmod(path, 0601), 0);
	ASSERT_EQ(vep_key_load_private(path, &k), VEP_ERR_PERM);
	ASSERT_EQ(chmod(path, 0400), 0);
	ASSERT_EQ(vep_key_load_private(path, &k), 0);
	vep_key_free(k);
	k = NULL;
	/* a symlink to a good key file is not followed */
	path_in_tmp(other, sizeof(other), "link.pem");
	ASSERT_EQ(symlink(path, other), 0);
	ASSERT_EQ(vep_key_load_private(other, &k), VEP_ERR_IO);
	/* saving through a symlink is refused too (O_EXCL|O_NOFOLLOW) */
	ASSERT_TRUE(vep_key_save_private(rs128, other) != 0);
	unlink(other);
	/* not a regular file */
	ASSERT_EQ(vep_key_load_private(tmpdir, &k), VEP_ERR_IO);
	path_in_tmp(other, sizeof(other), "fifo");
	ASSERT_EQ(mkfifo(other, 0600), 0);
	ASSERT_EQ(vep_key_load_private(other, &k), VEP_ERR_IO);  /* and no hang */
	unlink(other);
	path_in_tmp(other, sizeof(other), "missing.pem");
	ASSERT_EQ(vep_key_load_private(other, &k), VEP_ERR_IO);
	/* size limit on files */
	{
		size_t n = 64 * 1024 + 1;
		char *big = malloc(n);

		ASSERT_TRUE(big != NULL);
		memset(big, '\n', n);
		path_in_tmp(other, sizeof(other), "big.pem");
		ASSERT_EQ(write_file(other, big, n, 0600), 0);
		ASSERT_EQ(vep_key_load_private(other, &k), VEP_ERR_TOOBIG);
		unlink(other);
		free(big);
	}
	/* garbage with a good mode */
	path_in_tmp(other, sizeof(other), "garbage.pem");
	ASSERT_EQ(write_file(other, "garbage\n", 8, 0600), 0);
	ASSERT_EQ(vep_key_load_private(other, &k), VEP_ERR_INVALID);
	unlink(other);
	unlink(path);
}

/* Each algorithm's key saves and loads. */
static void
test_save_load_all(void)
{
	vep_key *keys[] = { rs128, ds128, ds256 };

	for (size_t i = 0; i < 3; i++) {
		char path[512];
		vep_key *k = NULL;

		snprintf(path, sizeof(path), "%s/k%zu.pem", tmpdir, i);
		ASSERT_EQ(vep_key_save_private(keys[i], path), 0);
		ASSERT_EQ(vep_key_load_private(path, &k), 0);
		ASSERT_TRUE(vep_key_public_equal(k, keys[i]));
		vep_key_free(k);
		unlink(path);
	}
}

static void
test_fingerprint(void)
{
	char a[65], b[65], c[65], want[65];
	unsigned char md[32];
	char *text = vep_key_to_json_text(rs256);
	vep_key *pub = NULL, *parsed = NULL;

	ASSERT_TRUE(text != NULL);
	ASSERT_EQ(vep_key_fingerprint(rs256, a), 0);
	ASSERT_EQ(strlen(a), 64);
	for (size_t i = 0; i < 64; i++)
		ASSERT_TRUE((a[i] >= '0' && a[i] <= '9') || (a[i] >= 'a' && a[i] <= 'f'));
	ASSERT_EQ(EVP_Digest(text, strlen(text), md, NULL, EVP_sha256(), NULL), 1);
	for (size_t i = 0; i < 32; i++)
		snprintf(want + 2 * i, 3, "%02x", md[i]);
	ASSERT_STREQ(a, want);
	ASSERT_EQ(vep_key_fingerprint(rs256, b), 0);
	ASSERT_STREQ(a, b);
	ASSERT_EQ(vep_key_public_copy(rs256, &pub), 0);
	ASSERT_EQ(vep_key_fingerprint(pub, c), 0);
	ASSERT_STREQ(a, c);
	ASSERT_EQ(vep_key_from_json_text(text, strlen(text), &parsed), 0);
	ASSERT_EQ(vep_key_fingerprint(parsed, c), 0);
	ASSERT_STREQ(a, c);
	ASSERT_EQ(vep_key_fingerprint(ds128, c), 0);
	ASSERT_TRUE(strcmp(a, c) != 0);
	vep_key_free(pub);
	vep_key_free(parsed);
	free(text);
}

int
main(void)
{
	int rc;

	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	if (vep_key_generate_rsa(2048, &rs256) != 0 ||
	    vep_key_generate_rsa(1024, &rs128) != 0 ||
	    vep_key_generate_dsa(1024, &ds128) != 0 ||
	    vep_key_generate_dsa(2048, &ds256) != 0) {
		fprintf(stderr, "key generation failed\n");
		return 1;
	}
	RUN(test_rsa_json_rejections);
	RUN(test_rsa_sizes);
	RUN(test_dsa_json_rejections);
	RUN(test_dsa_hex_canonical);
	RUN(test_dsa256_sizes);
	RUN(test_canonical_roundtrip);
	RUN(test_json_text_limits);
	RUN(test_sign_verify_all);
	RUN(test_rsa_short_and_long_signature);
	RUN(test_dsa_signature_ranges);
	RUN(test_pem_roundtrip);
	RUN(test_pem_rejections);
	RUN(test_save_load);
	RUN(test_save_load_all);
	RUN(test_fingerprint);
	vep_key_free(rs256);
	vep_key_free(rs128);
	vep_key_free(ds128);
	vep_key_free(ds256);
	rc = harness_done();
	rmdir(tmpdir);
	return rc;
}
