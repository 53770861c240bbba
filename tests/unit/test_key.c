/*
 * test_key.c - keys: strict public JSON parsing (every rejection key.h
 * lists), canonical serialisation, PEM and private-key files (modes, O_EXCL,
 * symlinks, size limit), fingerprints, signing/verification for all four
 * algorithms with real OpenSSL keys, the prepared signer (vep_key_signer:
 * vep_key_sign's bytes for RSA, DSA signatures that verify, one context
 * reused many times, its own key copy, threads with a signer each), and
 * the key policy: every class of key that anyone could sign with (RSA n
 * even, prime, with a small factor, odd e out of range; DSA outside the
 * published jwcrypto groups, y outside the order-q subgroup) refused from
 * JSON and from PEM.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bn.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
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

/* An RSA-like modulus of exactly `bits` bits, the product of two random
 * primes, in decimal (OPENSSL_free); NULL on failure. */
static char *
modulus_dec(int bits)
{
	BIGNUM *p = BN_new(), *q = BN_new(), *n = BN_new();
	BN_CTX *ctx = BN_CTX_new();
	char *s = NULL;

	for (int tries = 0; tries < 50 && s == NULL && p && q && n && ctx; tries++) {
		if (!BN_generate_prime_ex(p, bits / 2, 0, NULL, NULL, NULL) ||
		    !BN_generate_prime_ex(q, bits - bits / 2, 0, NULL, NULL, NULL) ||
		    !BN_mul(n, p, q, ctx))
			break;
		if (BN_num_bits(n) == bits)
			s = BN_bn2dec(n);
	}
	BN_free(p);
	BN_free(q);
	BN_free(n);
	BN_CTX_free(ctx);
	return s;
}

/* m (a small number, or 1) times a random prime, the product of exactly
 * `bits` bits; decimal (OPENSSL_free). The prime is searched upwards from a
 * random start in [2^(bits-1) / m, 2^bits / m). */
static char *
prime_times_dec(int bits, BN_ULONG m)
{
	BIGNUM *lo = BN_new(), *span = BN_new(), *p = BN_new();
	BN_CTX *ctx = BN_CTX_new();
	char *s = NULL;

	if (lo == NULL || span == NULL || p == NULL || ctx == NULL ||
	    !BN_set_bit(lo, bits - 1) || BN_div_word(lo, m) == (BN_ULONG)-1 ||
	    !BN_add_word(lo, 1) || !BN_copy(span, lo) || !BN_rshift1(span, span) ||
	    !BN_rand_range(p, span) || !BN_add(p, p, lo) || !BN_set_bit(p, 0))
		goto out;
	while (BN_check_prime(p, ctx, NULL) == 0)
		if (!BN_add_word(p, 2))
			goto out;
	if (BN_mul_word(p, m) && BN_num_bits(p) == bits)
		s = BN_bn2dec(p);
out:
	BN_free(lo);
	BN_free(span);
	BN_free(p);
	BN_CTX_free(ctx);
	return s;
}

/* The decimal n - (n mod m) + r: a number of n's size congruent to r
 * modulo m (OPENSSL_free). */
static char *
dec_adjust(const char *dec, BN_ULONG m, BN_ULONG r)
{
	BIGNUM *bn = NULL;
	char *s = NULL;

	if (BN_dec2bn(&bn, dec) != 0) {
		BN_ULONG cur = BN_mod_word(bn, m);

		if (BN_sub_word(bn, cur) && BN_add_word(bn, r))
			s = BN_bn2dec(bn);
	}
	BN_free(bn);
	return s;
}

/* The decimal n - k (OPENSSL_free). */
static char *
dec_minus(const char *dec, BN_ULONG k)
{
	BIGNUM *bn = NULL;
	char *s = NULL;

	if (BN_dec2bn(&bn, dec) != 0 && BN_sub_word(bn, k))
		s = BN_bn2dec(bn);
	BN_free(bn);
	return s;
}

/* hex op: result of a BIGNUM operation on a hex string, lowercase. */
enum hexop { SHR1, SHR4, SHR32, SHL1, SHL1024, ADD1, SUB1, ADD2 };

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
		case SUB1: ok = BN_sub_word(bn, 1); break;
		case ADD2: ok = BN_add_word(bn, 2); break;
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

/* VEP_KEY_CHECKS_CHEAP leaves out exactly the costly rule (RSA n not
 * prime), which vep_key_check_costly then applies; every cheap rule holds
 * in both modes. */
static void
test_cheap_and_costly(void)
{
	char *prime = prime_times_dec(2048, 1), *good = NULL;
	json_t *o;
	vep_key *k = NULL;

	ASSERT_TRUE(prime != NULL);
	o = json_pack("{s:s,s:s,s:s}", "algorithm", "RS", "n", prime, "e", "65537");
	ASSERT_EQ(vep_key_from_json(o, &k), VEP_ERR_KEY);
	ASSERT_EQ(vep_key_from_json_checked(o, VEP_KEY_CHECKS_ALL, &k), VEP_ERR_KEY);
	ASSERT_EQ(vep_key_from_json_checked(o, VEP_KEY_CHECKS_CHEAP, &k), 0);
	ASSERT_EQ(vep_key_check_costly(k), VEP_ERR_KEY);
	vep_key_free(k);
	k = NULL;
	json_decref(o);
	/* Cheap rules still hold: an even exponent, a factor of 3. */
	o = json_pack("{s:s,s:s,s:s}", "algorithm", "RS", "n", prime, "e", "65536");
	ASSERT_EQ(vep_key_from_json_checked(o, VEP_KEY_CHECKS_CHEAP, &k), VEP_ERR_KEY);
	json_decref(o);
	OPENSSL_free(prime);
	prime = prime_times_dec(2048, 3);
	ASSERT_TRUE(prime != NULL);
	o = json_pack("{s:s,s:s,s:s}", "algorithm", "RS", "n", prime, "e", "65537");
	ASSERT_EQ(vep_key_from_json_checked(o, VEP_KEY_CHECKS_CHEAP, &k), VEP_ERR_KEY);
	json_decref(o);
	/* An honest key passes both. */
	good = member(rs256, "n");
	ASSERT_TRUE(good != NULL);
	o = json_pack("{s:s,s:s,s:s}", "algorithm", "RS", "n", good, "e", "65537");
	ASSERT_EQ(vep_key_from_json_checked(o, VEP_KEY_CHECKS_CHEAP, &k), 0);
	ASSERT_EQ(vep_key_check_costly(k), 0);
	vep_key_free(k);
	json_decref(o);
	ASSERT_EQ(vep_key_check_costly(NULL), VEP_ERR_ARG);
	OPENSSL_free(prime);
	free(good);
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
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s}", "algorithm", "RSA", "n", n, "e", e)),
	    VEP_ERR_ALG);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s}", "algorithm", "rs", "n", n, "e", e)),
	    VEP_ERR_ALG);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s}", "algorithm", "RS256", "n", n, "e", e)),
	    VEP_ERR_ALG);
	ASSERT_EQ(parse_obj(json_pack("{s:i,s:s,s:s}", "algorithm", 1, "n", n, "e", e)),
	    VEP_ERR_INVALID);
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
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:i}", "algorithm", "RS", "n", n, "e", 65537)),
	    VEP_ERR_INVALID);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:n}", "algorithm", "RS", "n", n, "e")),
	    VEP_ERR_INVALID);
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

	/* The size rule is checked first, so any odd number of a refused
	 * length stands in for a modulus; an accepted length needs one that
	 * also passes the key policy (a product of two primes). */
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *n = cases[i].rc == 0 ? modulus_dec(cases[i].bits) :
		    odd_number_dec(cases[i].bits);

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
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s,s:s}", "algorithm", "DS", "p", p, "q", q,
	    "g", g)), VEP_ERR_INVALID);
	ASSERT_EQ(parse_obj(json_pack("{s:s,s:s,s:s,s:s,s:s,s:s}", "algorithm", "DS", "y", y,
	    "p", p, "q", q, "g", g, "x", "1")), VEP_ERR_INVALID);
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
	/* y must stay in the subgroup: g^x for the first x that gives an odd
	 * number of hex digits (about one in 16 does). */
	{
		BIGNUM *bp = NULL, *bg = NULL, *bk = BN_new(), *by = BN_new();
		BN_CTX *ctx = BN_CTX_new();

		ASSERT_TRUE(BN_hex2bn(&bp, p) && BN_hex2bn(&bg, g) && bk && by && ctx);
		for (BN_ULONG x = 2; x < 2000 && odd == NULL; x++) {
			char *h;

			if (!BN_set_word(bk, x) || !BN_mod_exp(by, bg, bk, bp, ctx) ||
			    (h = BN_bn2hex(by)) == NULL)
				break;
			if (h[0] == '0') {       /* BN_bn2hex padded a nibble */
				for (char *c = h; *c; c++)
					if (*c >= 'A' && *c <= 'F')
						*c = (char)(*c - 'A' + 'a');
				odd = OPENSSL_strdup(h + 1);
			}
			OPENSSL_free(h);
		}
		BN_free(bp);
		BN_free(bg);
		BN_free(bk);
		BN_free(by);
		BN_CTX_free(ctx);
	}
	ASSERT_TRUE(odd != NULL && strlen(odd) % 2 == 1);
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
		ASSERT_EQ(vep_key_verify(pub, tampered, sizeof(msg) - 1, sig, siglen),
		    VEP_ERR_BADSIG);
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

/* vep_key_signer gives vep_key_sign's bytes for RSA (PKCS#1 v1.5 is
 * deterministic), for the empty message (NULL and "") up to a 32 KiB one,
 * and keeps giving them over many signatures on one prepared context. */
static void
test_signer_rsa_same_bytes(void)
{
	const vep_key *keys[] = { rs256, rs128 };
	static const size_t lens[] = { 0, 1, 31, 32, 33, 1000, 32 * 1024 };
	uint8_t *msg = malloc(32 * 1024);

	ASSERT_TRUE(msg != NULL);
	for (size_t i = 0; i < 32 * 1024; i++)
		msg[i] = (uint8_t)(i * 131 + 7);
	for (size_t i = 0; i < 2; i++) {
		vep_key_signer *s = (vep_key_signer *)1;
		uint8_t *a = NULL, *b = NULL;
		size_t alen = 0, blen = 0;
		int bad = 0;

		ASSERT_EQ(vep_key_signer_new(keys[i], &s), VEP_OK);
		ASSERT_TRUE(s != NULL);
		/* Empty: msg NULL and "" alike. */
		ASSERT_EQ(vep_key_sign(keys[i], NULL, 0, &a, &alen), 0);
		ASSERT_EQ(vep_key_signer_sign(s, NULL, 0, &b, &blen), 0);
		ASSERT_TRUE(alen == vep_key_alg(keys[i])->sig_len && blen == alen);
		ASSERT_MEMEQ(a, b, alen);
		free(b);
		b = NULL;
		ASSERT_EQ(vep_key_signer_sign(s, (const uint8_t *)"", 0, &b, &blen), 0);
		ASSERT_TRUE(blen == alen);
		ASSERT_MEMEQ(a, b, alen);
		free(a);
		free(b);
		a = b = NULL;
		for (size_t j = 0; j < sizeof(lens) / sizeof(lens[0]); j++) {
			ASSERT_EQ(vep_key_sign(keys[i], msg, lens[j], &a, &alen), 0);
			ASSERT_EQ(vep_key_signer_sign(s, msg, lens[j], &b, &blen), 0);
			ASSERT_TRUE(blen == alen && alen == vep_key_alg(keys[i])->sig_len);
			ASSERT_MEMEQ(a, b, alen);
			ASSERT_EQ(vep_key_verify(keys[i], msg, lens[j], b, blen), 0);
			free(a);
			free(b);
			a = b = NULL;
		}
		/* The context reused: every signature verifies, and each is
		 * still vep_key_sign's (checked on every 16th: the point is
		 * the reuse, vep_key_sign costs as much again). */
		for (unsigned j = 0; j < (i == 0 ? 64u : 256u) && !bad; j++) {
			size_t n = (j * 977u) % (32 * 1024);

			msg[j % 1024] ^= 0x5a;
			if (vep_key_signer_sign(s, msg, n, &b, &blen) != 0 ||
			    blen != vep_key_alg(keys[i])->sig_len ||
			    vep_key_verify(keys[i], msg, n, b, blen) != 0)
				bad = 1;
			if (!bad && j % 16 == 0 &&
			    (vep_key_sign(keys[i], msg, n, &a, &alen) != 0 || alen != blen ||
			    memcmp(a, b, blen) != 0))
				bad = 2;
			free(a);
			free(b);
			a = b = NULL;
		}
		ASSERT_EQ(bad, 0);
		vep_key_signer_free(s);
	}
	free(msg);
}

/* A DSA signer's signatures (random k: not comparable byte for byte) have
 * the table's length and verify, over many on one context. */
static void
test_signer_dsa(void)
{
	const vep_key *keys[] = { ds128, ds256 };
	static const uint8_t msg[] = "eyJhbGciOiJEUzEyOCJ9.eyJhIjoxfQ";

	for (size_t i = 0; i < 2; i++) {
		const struct vep_alg *a = vep_key_alg(keys[i]);
		vep_key_signer *s = NULL;
		vep_key *pub = NULL;
		uint8_t *sig = NULL;
		size_t siglen = 0;
		int bad = 0;

		ASSERT_EQ(vep_key_signer_new(keys[i], &s), VEP_OK);
		ASSERT_EQ(vep_key_public_copy(keys[i], &pub), VEP_OK);
		ASSERT_EQ(vep_key_signer_sign(s, NULL, 0, &sig, &siglen), 0);
		ASSERT_EQ(siglen, a->sig_len);
		ASSERT_EQ(vep_key_verify(pub, (const uint8_t *)"", 0, sig, siglen), 0);
		free(sig);
		sig = NULL;
		for (size_t n = 0; n < 64 && !bad; n++) {
			size_t len = n % (sizeof(msg) - 1);

			if (vep_key_signer_sign(s, msg, len, &sig, &siglen) != 0 ||
			    siglen != a->sig_len ||
			    vep_key_verify(pub, msg, len, sig, siglen) != 0 ||
			    vep_key_verify(pub, msg, len + 1, sig, siglen) != VEP_ERR_BADSIG)
				bad = 1;
			free(sig);
			sig = NULL;
		}
		ASSERT_EQ(bad, 0);
		vep_key_signer_free(s);
		vep_key_free(pub);
	}
}

/* Errors: a public key has nothing to sign with, NULL arguments are
 * refused with the out-parameters cleared; the signer's key is its own
 * copy, so it signs on after the key it was made from is freed. */
static void
test_signer_errors_and_copy(void)
{
	static const uint8_t msg[] = "after the key is gone";
	vep_key_signer *s = (vep_key_signer *)1;
	vep_key *pub = NULL, *k = NULL;
	uint8_t *sig = (uint8_t *)1, *ref = NULL;
	size_t siglen = 7, reflen = 0;

	ASSERT_EQ(vep_key_public_copy(rs256, &pub), VEP_OK);
	ASSERT_EQ(vep_key_signer_new(pub, &s), VEP_ERR_NOKEY);
	ASSERT_TRUE(s == NULL);
	s = (vep_key_signer *)1;
	ASSERT_EQ(vep_key_signer_new(NULL, &s), VEP_ERR_ARG);
	ASSERT_TRUE(s == NULL);
	ASSERT_EQ(vep_key_signer_new(rs256, NULL), VEP_ERR_ARG);
	ASSERT_EQ(vep_key_signer_sign(NULL, msg, 3, &sig, &siglen), VEP_ERR_ARG);
	ASSERT_TRUE(sig == NULL && siglen == 0);
	vep_key_signer_free(NULL);

	ASSERT_EQ(vep_key_generate_rsa(1024, &k), VEP_OK);
	ASSERT_EQ(vep_key_sign(k, msg, sizeof(msg) - 1, &ref, &reflen), 0);
	ASSERT_EQ(vep_key_signer_new(k, &s), VEP_OK);
	sig = (uint8_t *)1;
	siglen = 7;
	ASSERT_EQ(vep_key_signer_sign(s, NULL, 1, &sig, &siglen), VEP_ERR_ARG);
	ASSERT_TRUE(sig == NULL && siglen == 0);
	ASSERT_EQ(vep_key_signer_sign(s, msg, 3, NULL, &siglen), VEP_ERR_ARG);
	sig = (uint8_t *)1;
	ASSERT_EQ(vep_key_signer_sign(s, msg, 3, &sig, NULL), VEP_ERR_ARG);
	ASSERT_TRUE(sig == NULL);
	vep_key_free(k);
	ASSERT_EQ(vep_key_signer_sign(s, msg, sizeof(msg) - 1, &sig, &siglen), 0);
	ASSERT_TRUE(siglen == reflen);
	ASSERT_MEMEQ(sig, ref, reflen);
	free(sig);
	free(ref);
	vep_key_signer_free(s);
	vep_key_free(pub);
}

/* Threads, each with a signer of its own of one key, signing at once: every
 * signature is vep_key_sign's. */
struct signer_job {
	const uint8_t *msg;
	size_t len;
	const uint8_t *ref;
	size_t reflen;
	int bad;
};

static void *
signer_thread(void *arg)
{
	struct signer_job *j = arg;
	vep_key_signer *s = NULL;
	uint8_t *sig = NULL;
	size_t siglen = 0;

	if (vep_key_signer_new(rs128, &s) != 0) {
		j->bad = 1;
		return NULL;
	}
	for (int i = 0; i < 40 && !j->bad; i++) {
		if (vep_key_signer_sign(s, j->msg, j->len, &sig, &siglen) != 0 ||
		    siglen != j->reflen || memcmp(sig, j->ref, siglen) != 0)
			j->bad = 1;
		free(sig);
		sig = NULL;
	}
	vep_key_signer_free(s);
	return NULL;
}

static void
test_signer_threads(void)
{
	static const uint8_t msg[] = "eyJhbGciOiJSUzEyOCJ9.eyJ0aHJlYWRzIjo0fQ";
	struct signer_job jobs[4];
	pthread_t t[4];
	uint8_t *ref = NULL;
	size_t reflen = 0;

	ASSERT_EQ(vep_key_sign(rs128, msg, sizeof(msg) - 1, &ref, &reflen), 0);
	for (size_t i = 0; i < 4; i++) {
		jobs[i] = (struct signer_job){ msg, sizeof(msg) - 1, ref, reflen, 0 };
		ASSERT_EQ(pthread_create(&t[i], NULL, signer_thread, &jobs[i]), 0);
	}
	for (size_t i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ASSERT_EQ(jobs[i].bad, 0);
	}
	free(ref);
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
	char a[VEP_FINGERPRINT_BUFSZ], b[VEP_FINGERPRINT_BUFSZ], c[VEP_FINGERPRINT_BUFSZ];
	char want[VEP_FINGERPRINT_BUFSZ];
	unsigned char md[32];
	char *text = vep_key_to_json_text(rs256);
	vep_key *pub = NULL, *parsed = NULL;

	ASSERT_TRUE(text != NULL);
	ASSERT_EQ(vep_key_fingerprint(rs256, a), 0);
	ASSERT_EQ(strlen(a), 64);
	ASSERT_EQ(VEP_FINGERPRINT_HEX_LEN, 64);
	for (size_t i = 0; i < VEP_FINGERPRINT_HEX_LEN; i++)
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

/* The published jwcrypto groups, as browserid-crypto's lib/algs/ds.js
 * spells them (DS128 = its keysize 128/160, DS256 = 256). */
static const char *const jw_groups[2][3] = {
	{
		"ff600483db6abfc5b45eab78594b3533d550d9f1bf2a992a7a8daa6dc34f8045"
		"ad4e6e0c429d334eeeaaefd7e23d4810be00e4cc1492cba325ba81ff2d5a5b30"
		"5a8d17eb3bf4a06a349d392e00d329744a5179380344e82a18c47933438f891e"
		"22aeef812d69c8f75e326cb70ea000c3f776dfdbd604638c2ef717fc26d02e17",
		"e21e04f911d1ed7991008ecaab3bf775984309c3",
		"c52a4a0ff3b7e61fdf1867ce84138369a6154f4afa92966e3c827e25cfa6cf50"
		"8b90e5de419e1337e07a2e9e2a3cd5dea704d175f8ebf6af397d69e110b96afb"
		"17c7a03259329e4829b0d03bbc7896b15b4ade53e130858cc34d96269aa89041"
		"f409136c7242a38895c9d5bccad4f389af1d7a4bd1398bd072dffa896233397a"
	},
	{
		"d6c4e5045697756c7a312d02c2289c25d40f9954261f7b5876214b6df109c738"
		"b76226b199bb7e33f8fc7ac1dcc316e1e7c78973951bfc6ff2e00cc987cd76fc"
		"fb0b8c0096b0b460fffac960ca4136c28f4bfb580de47cf7e7934c3985e3b3d9"
		"43b77f06ef2af3ac3494fc3c6fc49810a63853862a02bb1c824a01b7fc688e40"
		"28527a58ad58c9d512922660db5d505bc263af293bc93bcd6d885a157579d7f5"
		"2952236dd9d06a4fc3bc2247d21f1a70f5848eb0176513537c983f5a36737f01"
		"f82b44546e8e7f0fabc457e3de1d9c5dba96965b10a2a0580b0ad0f88179e100"
		"66107fb74314a07e6745863bc797b7002ebec0b000a98eb697414709ac17b401",
		"b1e370f6472c8754ccd75e99666ec8ef1fd748b748bbbc08503d82ce8055ab3b",
		"9a8269ab2e3b733a5242179d8f8ddb17ff93297d9eab00376db211a22b19c854"
		"dfa80166df2132cbc51fb224b0904abb22da2c7b7850f782124cb575b116f41e"
		"a7c4fc75b1d77525204cd7c23a15999004c23cdeb72359ee74e886a1dde7855a"
		"e05fe847447d0a68059002c3819a75dc7dcbb30e39efac36e07e2c404b7ca98b"
		"263b25fa314ba93c0625718bd489cea6d04ba4b0b7f156eeb4c56c44b50e4fb5"
		"bce9d7ae0d55b379225feb0214a04bed72f33e0664d290e7c840df3e2abb5e48"
		"189fa4e90646f1867db289c6560476799f7be8420a6dc01d078de437f280fff2"
		"d7ddf1248d56e1a54b933a41629d6c252983c58795105802d30d7bcd819cf6ef"
	},
};

/* RSA key policy: n odd, not prime, no prime factor below 2048; e odd in
 * [3, 2^32 - 1]. */
static void
test_rsa_key_policy(void)
{
	char *n = member(rs256, "n"), *n1 = member(rs128, "n"), *t;

	ASSERT_TRUE(n != NULL && n1 != NULL);
	/* honest keys: WebCrypto / jwcrypto's 65537, and other odd e */
	ASSERT_EQ(parse_rsa(n, "65537"), 0);
	ASSERT_EQ(parse_rsa(n1, "65537"), 0);
	ASSERT_EQ(parse_rsa(n, "3"), 0);
	ASSERT_EQ(parse_rsa(n, "17"), 0);
	ASSERT_EQ(parse_rsa(n, "4294967295"), 0);          /* 2^32 - 1 */
	/* e: even, 1, over 2^32 - 1, n - 2 */
	ASSERT_EQ(parse_rsa(n, "65538"), VEP_ERR_KEY);
	ASSERT_EQ(parse_rsa(n, "4294967296"), VEP_ERR_KEY);
	ASSERT_EQ(parse_rsa(n, "4294967297"), VEP_ERR_KEY);
	ASSERT_EQ(parse_rsa(n, "18446744073709551617"), VEP_ERR_KEY);
	ASSERT_EQ(parse_rsa(n, "1"), VEP_ERR_KEY);
	t = dec_minus(n, 2);
	ASSERT_EQ(parse_rsa(n, t), VEP_ERR_KEY);             /* e = n - 2 */
	OPENSSL_free(t);
	/* n even (same size) */
	t = dec_minus(n, 1);
	ASSERT_EQ(parse_rsa(t, "65537"), VEP_ERR_KEY);
	OPENSSL_free(t);
	/* n divisible by 3, by the largest prime of the table (2039), and by
	 * the smallest prime above it (2053, accepted: the bound is 2048) */
	t = dec_adjust(n, 6, 3);
	ASSERT_EQ(parse_rsa(t, "65537"), VEP_ERR_KEY);
	OPENSSL_free(t);
	t = dec_adjust(n, 2 * 2039, 2039);
	ASSERT_EQ(parse_rsa(t, "65537"), VEP_ERR_KEY);
	OPENSSL_free(t);
	t = prime_times_dec(2048, 2053);      /* not looked for: documented */
	ASSERT_TRUE(t != NULL);
	ASSERT_EQ(parse_rsa(t, "65537"), 0);
	OPENSSL_free(t);
	/* n = 3 * prime: phi(n) is public, anyone can sign */
	t = prime_times_dec(2048, 3);
	ASSERT_TRUE(t != NULL);
	ASSERT_EQ(parse_rsa(t, "65537"), VEP_ERR_KEY);
	OPENSSL_free(t);
	/* n prime (RS256 and RS128 sizes; the base is random: try a few) */
	t = prime_times_dec(2048, 1);
	ASSERT_TRUE(t != NULL);
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(parse_rsa(t, "65537"), VEP_ERR_KEY);
	ASSERT_EQ(parse_rsa(t, "3"), VEP_ERR_KEY);
	{
		char *e = dec_minus(t, 2);          /* e = n - 2 with n prime */

		ASSERT_EQ(parse_rsa(t, e), VEP_ERR_KEY);
		OPENSSL_free(e);
	}
	OPENSSL_free(t);
	t = prime_times_dec(1024, 1);
	ASSERT_TRUE(t != NULL);
	ASSERT_EQ(parse_rsa(t, "65537"), VEP_ERR_KEY);
	OPENSSL_free(t);
	free(n);
	free(n1);
}

/* The published groups are sound: p and q prime, q | p - 1, 1 < g < p and
 * g^q = 1 (mod p). The library trusts them instead of testing per key. */
static void
test_dsa_groups_sound(void)
{
	BN_CTX *ctx = BN_CTX_new();

	ASSERT_TRUE(ctx != NULL);
	for (int i = 0; i < 2; i++) {
		BIGNUM *p = NULL, *q = NULL, *g = NULL, *t = BN_new();

		ASSERT_TRUE(BN_hex2bn(&p, jw_groups[i][0]) && BN_hex2bn(&q, jw_groups[i][1]) &&
		    BN_hex2bn(&g, jw_groups[i][2]) && t != NULL);
		ASSERT_EQ(BN_num_bits(p), i == 0 ? 1024 : 2048);
		ASSERT_EQ(BN_num_bits(q), i == 0 ? 160 : 256);
		ASSERT_EQ(BN_check_prime(p, ctx, NULL), 1);
		ASSERT_EQ(BN_check_prime(q, ctx, NULL), 1);
		ASSERT_TRUE(BN_sub(t, p, BN_value_one()) && BN_mod(t, t, q, ctx));
		ASSERT_TRUE(BN_is_zero(t));
		ASSERT_TRUE(BN_cmp(g, BN_value_one()) > 0 && BN_cmp(g, p) < 0);
		ASSERT_TRUE(BN_mod_exp(t, g, q, p, ctx) && BN_is_one(t));
		BN_free(p);
		BN_free(q);
		BN_free(g);
		BN_free(t);
	}
	BN_CTX_free(ctx);
}

/* DSA key policy: exactly a published group; 1 < y < p - 1, y^q = 1. */
static void
test_dsa_key_policy(void)
{
	vep_key *keys[2] = { ds128, ds256 };

	for (int i = 0; i < 2; i++) {
		const char *p = jw_groups[i][0], *q = jw_groups[i][1], *g = jw_groups[i][2];
		char *y = member(keys[i], "y"), *t, *pm1 = hex_op(p, SUB1);

		ASSERT_TRUE(y != NULL && pm1 != NULL);
		/* generated keys live in the published group */
		t = member(keys[i], "p");
		ASSERT_STREQ(t, p);
		free(t);
		t = member(keys[i], "q");
		ASSERT_STREQ(t, q);
		free(t);
		t = member(keys[i], "g");
		ASSERT_STREQ(t, g);
		free(t);
		ASSERT_EQ(parse_dsa(y, p, q, g), 0);
		/* y: p - 1 (order 2), 1, 0, p, p + 1, outside the subgroup */
		ASSERT_EQ(parse_dsa(pm1, p, q, g), VEP_ERR_KEY);
		ASSERT_EQ(parse_dsa("1", p, q, g), VEP_ERR_KEY);
		ASSERT_EQ(parse_dsa("0", p, q, g), VEP_ERR_INVALID); /* no leading zero */
		ASSERT_EQ(parse_dsa(p, p, q, g), VEP_ERR_KEY);
		t = hex_op(p, ADD1);
		ASSERT_EQ(parse_dsa(t, p, q, g), VEP_ERR_KEY);
		OPENSSL_free(t);
		ASSERT_EQ(parse_dsa("2", p, q, g), VEP_ERR_KEY);
		t = hex_op(y, ADD1);
		ASSERT_EQ(parse_dsa(t, p, q, g), VEP_ERR_KEY);
		OPENSSL_free(t);
		/* g = p - 1: order 2, not q */
		ASSERT_EQ(parse_dsa(y, p, q, pm1), VEP_ERR_KEY);
		/* g = y: an element of the subgroup, but not the group's g */
		ASSERT_EQ(parse_dsa(y, p, q, y), VEP_ERR_KEY);
		/* composite p (p + 2 is odd and, for these p, composite) */
		t = hex_op(p, ADD2);
		ASSERT_EQ(parse_dsa(y, t, q, g), VEP_ERR_KEY);
		OPENSSL_free(t);
		/* even q of the right size */
		t = hex_op(q, ADD1);
		ASSERT_EQ(parse_dsa(y, p, t, g), VEP_ERR_KEY);
		OPENSSL_free(t);
		free(y);
		OPENSSL_free(pm1);
	}
	/* the groups crossed: DS256's p with DS128's q is no allowed size */
	ASSERT_EQ(parse_dsa("2", jw_groups[1][0], jw_groups[0][1], jw_groups[1][2]),
	    VEP_ERR_KEYSIZE);
}

/* The forgery of issue 11: q even, p composite, g = y = p - 1 satisfies
 * g^q = 1 and lets r = s = 1 "verify" half of all messages. Refused. */
static void
test_dsa_forgery_key(void)
{
	/* p - 1 = 2^1023, p = 2^1023 + 1 (odd, divisible by 3); q = 2^159 + 2 */
	char *two_1024 = hex_op("1", SHL1024);
	char *pm1 = two_1024 ? hex_op(two_1024, SHR1) : NULL;
	char *p = pm1 ? hex_op(pm1, ADD1) : NULL;

	ASSERT_TRUE(p != NULL);
	ASSERT_EQ(parse_dsa(pm1, p, "8000000000000000000000000000000000000002", pm1),
	    VEP_ERR_KEY);
	/* the same with the group's own q and g: still not the group */
	ASSERT_EQ(parse_dsa(pm1, p, jw_groups[0][1], jw_groups[0][2]), VEP_ERR_KEY);
	OPENSSL_free(two_1024);
	OPENSSL_free(pm1);
	OPENSSL_free(p);
}

/* The same policy on keys read from PEM (domain keys, keytool keys): a
 * private RSA key with a prime modulus, and a DSA key in a sound group of
 * OpenSSL's own making that is not a published one. */
static void
test_pem_key_policy(void)
{
	BIGNUM *n = BN_new(), *e = NULL, *d = BN_new(), *nm1 = BN_new();
	BN_CTX *ctx = BN_CTX_new();
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	OSSL_PARAM *params = NULL;
	EVP_PKEY_CTX *pctx = NULL;
	EVP_PKEY *pk = NULL, *dom = NULL;
	vep_key *k = (vep_key *)1;
	BIO *bio = NULL;
	char *data;
	long len;

	ASSERT_TRUE(n && d && nm1 && ctx && bld);
	/* RSA, n prime, d = e^-1 mod (n - 1): a working key anyone can rebuild */
	ASSERT_TRUE(BN_generate_prime_ex(n, 2048, 0, NULL, NULL, NULL) && BN_dec2bn(&e, "65537") &&
	    BN_sub(nm1, n, BN_value_one()) && BN_mod_inverse(d, e, nm1, ctx) != NULL);
	/* PKCS#1 wants CRT values; "n = n * 1" fills them in a way that
	 * encodes (the reader does not check them, the policy must). */
	ASSERT_TRUE(OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_D, d) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_FACTOR1, n) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_FACTOR2, BN_value_one()) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_EXPONENT1, d) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_EXPONENT2, BN_value_one()) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_COEFFICIENT1, BN_value_one()) &&
	    (params = OSSL_PARAM_BLD_to_param(bld)) != NULL);
	ASSERT_TRUE((pctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL)) != NULL &&
	    EVP_PKEY_fromdata_init(pctx) == 1 &&
	    EVP_PKEY_fromdata(pctx, &pk, EVP_PKEY_KEYPAIR, params) == 1);
	ASSERT_TRUE((bio = BIO_new(BIO_s_mem())) != NULL &&
	    PEM_write_bio_PrivateKey(bio, pk, NULL, NULL, 0, NULL, NULL) == 1);
	len = BIO_get_mem_data(bio, &data);
	ASSERT_EQ(vep_key_from_pem(data, (size_t)len, &k), VEP_ERR_KEY);
	ASSERT_TRUE(k == NULL);
	BIO_free(bio);
	EVP_PKEY_free(pk);
	EVP_PKEY_CTX_free(pctx);
	pk = NULL;
	/* DSA 1024/160 in fresh FIPS 186-4 parameters */
	ASSERT_TRUE((pctx = EVP_PKEY_CTX_new_from_name(NULL, "DSA", NULL)) != NULL &&
	    EVP_PKEY_paramgen_init(pctx) == 1 &&
	    EVP_PKEY_CTX_set_dsa_paramgen_bits(pctx, 1024) == 1 &&
	    EVP_PKEY_CTX_set_dsa_paramgen_q_bits(pctx, 160) == 1 &&
	    EVP_PKEY_paramgen(pctx, &dom) == 1);
	EVP_PKEY_CTX_free(pctx);
	ASSERT_TRUE((pctx = EVP_PKEY_CTX_new_from_pkey(NULL, dom, NULL)) != NULL &&
	    EVP_PKEY_keygen_init(pctx) == 1 && EVP_PKEY_keygen(pctx, &pk) == 1);
	ASSERT_TRUE((bio = BIO_new(BIO_s_mem())) != NULL &&
	    PEM_write_bio_PrivateKey(bio, pk, NULL, NULL, 0, NULL, NULL) == 1);
	len = BIO_get_mem_data(bio, &data);
	k = (vep_key *)1;
	ASSERT_EQ(vep_key_from_pem(data, (size_t)len, &k), VEP_ERR_KEY);
	ASSERT_TRUE(k == NULL);
	BIO_free(bio);
	EVP_PKEY_free(pk);
	EVP_PKEY_free(dom);
	EVP_PKEY_CTX_free(pctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(n);
	BN_free(e);
	BN_free(d);
	BN_free(nm1);
	BN_CTX_free(ctx);
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
	RUN(test_cheap_and_costly);
	RUN(test_rsa_sizes);
	RUN(test_dsa_json_rejections);
	RUN(test_dsa_hex_canonical);
	RUN(test_dsa256_sizes);
	RUN(test_rsa_key_policy);
	RUN(test_dsa_groups_sound);
	RUN(test_dsa_key_policy);
	RUN(test_dsa_forgery_key);
	RUN(test_pem_key_policy);
	RUN(test_canonical_roundtrip);
	RUN(test_json_text_limits);
	RUN(test_sign_verify_all);
	RUN(test_signer_rsa_same_bytes);
	RUN(test_signer_dsa);
	RUN(test_signer_errors_and_copy);
	RUN(test_signer_threads);
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
