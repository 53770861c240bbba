/*
 * test_keymemo.c - keys remembered by their JSON members (libvep keymemo.h):
 * a hit gives the same key as a parse; another value, another member
 * order, a member that is not a string, or a request for more checks than
 * the key passed is parsed again (never served from the memo); refusals are
 * the parser's and are never remembered; many keys through few slots each
 * answer their own; the certificate parser with a memo reads what it reads
 * without one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cert.h"
#include "err.h"
#include "harness.h"
#include "keymemo.h"

static vep_key *user1, *user2, *domain;

static json_t *
json_of(const vep_key *k)
{
	return vep_key_to_json(k);
}

static void
test_hit_same_key(void)
{
	vep_keymemo *m = NULL;
	vep_key *a = NULL, *b = NULL;
	json_t *j = json_of(user1);

	ASSERT_EQ(vep_keymemo_new(&m), 0);
	ASSERT_EQ(vep_key_from_json_memo(m, j, VEP_KEY_CHECKS_CHEAP, &a), 0);
	ASSERT_EQ(vep_key_from_json_memo(m, j, VEP_KEY_CHECKS_CHEAP, &b), 0);
	ASSERT_TRUE(a != b);
	ASSERT_TRUE(vep_key_public_equal(a, user1));
	ASSERT_TRUE(vep_key_public_equal(b, user1));
	ASSERT_TRUE(!vep_key_has_private(b));
	vep_key_free(a);
	vep_key_free(b);
	/* No memo: the plain parser. */
	ASSERT_EQ(vep_key_from_json_memo(NULL, j, VEP_KEY_CHECKS_ALL, &a), 0);
	ASSERT_TRUE(vep_key_public_equal(a, user1));
	vep_key_free(a);
	json_decref(j);
	vep_keymemo_free(m);
}

/* An entry of CHEAP checks does not serve ALL; one of ALL serves both. */
static void
test_checks_cover(void)
{
	vep_keymemo *m = NULL;
	vep_key *a = NULL;
	json_t *j = json_of(user1);
	uint8_t buf[VEP_KEYMEMO_BYTES_MAX];

	ASSERT_TRUE(vep_key_json_members(j, buf) > 0);
	ASSERT_EQ(vep_keymemo_new(&m), 0);
	ASSERT_EQ(vep_key_from_json_memo(m, j, VEP_KEY_CHECKS_CHEAP, &a), 0);
	vep_key_free(a);
	ASSERT_EQ(vep_key_from_json_memo(m, j, VEP_KEY_CHECKS_ALL, &a), 0);
	vep_key_free(a);
	ASSERT_EQ(vep_key_from_json_memo(m, j, VEP_KEY_CHECKS_CHEAP, &a), 0);
	vep_key_free(a);
	json_decref(j);
	vep_keymemo_free(m);
}

/* A key the parser refuses is refused every time: a prime modulus passes
 * the cheap checks' shape but not ALL; a malformed n never. */
static void
test_refusals_not_remembered(void)
{
	vep_keymemo *m = NULL;
	vep_key *a = NULL;
	json_t *bad = json_pack("{s:s,s:s,s:s}", "algorithm", "RS", "n", "0123", "e", "65537");
	json_t *nonstr = json_pack("{s:s,s:s,s:i}", "algorithm", "RS", "n", "12345", "e", 65537);
	uint8_t buf[VEP_KEYMEMO_BYTES_MAX];

	ASSERT_TRUE(bad != NULL && nonstr != NULL);
	ASSERT_EQ(vep_keymemo_new(&m), 0);
	for (int i = 0; i < 3; i++) {
		ASSERT_TRUE(vep_key_from_json_memo(m, bad, VEP_KEY_CHECKS_CHEAP, &a) != 0);
		ASSERT_TRUE(a == NULL);
		ASSERT_TRUE(vep_key_from_json_memo(m, nonstr, VEP_KEY_CHECKS_CHEAP, &a) != 0);
		ASSERT_TRUE(a == NULL);
	}
	ASSERT_EQ(vep_key_json_members(nonstr, buf), 0);
	ASSERT_EQ(vep_key_json_members(NULL, buf), 0);
	ASSERT_EQ(vep_key_from_json_memo(m, bad, VEP_KEY_CHECKS_CHEAP, NULL), VEP_ERR_ARG);
	json_decref(bad);
	json_decref(nonstr);
	vep_keymemo_free(m);
}

/* The encoding tells objects apart exactly: another value, another order,
 * a name or value moved across the boundary between them. */
static void
test_members_exact(void)
{
	uint8_t a[VEP_KEYMEMO_BYTES_MAX], b[VEP_KEYMEMO_BYTES_MAX];
	json_t *x = json_pack("{s:s,s:s}", "ab", "c", "d", "e");
	json_t *y = json_pack("{s:s,s:s}", "a", "bc", "d", "e");
	json_t *z = json_pack("{s:s,s:s}", "d", "e", "ab", "c");
	size_t na, nb;
	char big[VEP_KEYMEMO_BYTES_MAX + 1];

	na = vep_key_json_members(x, a);
	nb = vep_key_json_members(y, b);
	ASSERT_TRUE(na > 0 && nb > 0);
	ASSERT_TRUE(na != nb || memcmp(a, b, na) != 0);
	nb = vep_key_json_members(z, b);
	ASSERT_TRUE(na != nb || memcmp(a, b, na) != 0);
	nb = vep_key_json_members(x, b);
	ASSERT_TRUE(na == nb && memcmp(a, b, na) == 0);
	/* Over the bound: not remembered. */
	memset(big, '1', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	json_object_set_new(x, "n", json_string(big));
	ASSERT_EQ(vep_key_json_members(x, a), 0);
	json_decref(x);
	json_decref(y);
	json_decref(z);
}

/* Two keys through the memo in turn, many times: each answers its own. */
static void
test_two_keys(void)
{
	vep_keymemo *m = NULL;
	json_t *j1 = json_of(user1), *j2 = json_of(user2);
	vep_key *a = NULL;

	ASSERT_EQ(vep_keymemo_new(&m), 0);
	for (int i = 0; i < 20; i++) {
		ASSERT_EQ(vep_key_from_json_memo(m, i % 2 ? j2 : j1, VEP_KEY_CHECKS_CHEAP, &a), 0);
		ASSERT_TRUE(vep_key_public_equal(a, i % 2 ? user2 : user1));
		ASSERT_TRUE(!vep_key_public_equal(a, i % 2 ? user1 : user2));
		vep_key_free(a);
	}
	json_decref(j1);
	json_decref(j2);
	vep_keymemo_free(m);
}

/* The certificate parser with a memo: the same fields as without. */
static void
test_cert_parse_memo(void)
{
	struct vep_cert_params p = { "example.com", "alice@example.com", user1, 1000, 3601000,
				     NULL };
	vep_keymemo *m = NULL;
	vep_cert *a = NULL, *b = NULL;
	char *text = NULL;

	ASSERT_EQ(vep_cert_sign(domain, &p, &text), 0);
	ASSERT_EQ(vep_keymemo_new(&m), 0);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(vep_cert_parse_memo(text, strlen(text), VEP_KEY_CHECKS_CHEAP, m, &a), 0);
		ASSERT_EQ(vep_cert_parse_checked(text, strlen(text), VEP_KEY_CHECKS_CHEAP, &b), 0);
		ASSERT_STREQ(a->issuer, b->issuer);
		ASSERT_STREQ(a->email, b->email);
		ASSERT_EQ(a->exp_ms, b->exp_ms);
		ASSERT_EQ(a->iat_ms, b->iat_ms);
		ASSERT_TRUE(vep_key_public_equal(a->pubkey, b->pubkey));
		ASSERT_EQ(vep_cert_verify(a, (const vep_key *const *)&domain, 1, 2000), 0);
		vep_cert_free(a);
		vep_cert_free(b);
	}
	/* A tampered key is still refused with the memo warm. */
	text[strlen(text) / 2] ^= 1;
	ASSERT_TRUE(vep_cert_parse_memo(text, strlen(text), VEP_KEY_CHECKS_CHEAP, m, &a) != 0 ||
	    !vep_key_public_equal(a->pubkey, user1));
	vep_cert_free(a);
	free(text);
	vep_keymemo_free(m);
}

int
main(void)
{
	if (vep_key_generate_rsa(2048, &user1) != 0 || vep_key_generate_rsa(1024, &user2) != 0 ||
	    vep_key_generate_rsa(2048, &domain) != 0)
		return 1;
	RUN(test_hit_same_key);
	RUN(test_checks_cover);
	RUN(test_refusals_not_remembered);
	RUN(test_members_exact);
	RUN(test_two_keys);
	RUN(test_cert_parse_memo);
	vep_key_free(user1);
	vep_key_free(user2);
	vep_key_free(domain);
	return harness_done();
}
