/*
 * test_alg.c - the algorithm table: exactly the four deployed algorithms,
 * looked up by name and by size, and nothing else.
 */
#include <stddef.h>

#include "alg.h"
#include "err.h"
#include "harness.h"
#include "key.h"

static void
test_by_name(void)
{
	static const struct {
		const char *name;
		enum vep_family family;
		int bits, qbits;
		size_t sig_len;
	} want[] = {
		{ "RS256", VEP_FAMILY_RSA, 2048, 0, 256 },
		{ "RS128", VEP_FAMILY_RSA, 1024, 0, 128 },
		{ "DS128", VEP_FAMILY_DSA, 1024, 160, 40 },
		{ "DS256", VEP_FAMILY_DSA, 2048, 256, 64 },
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct vep_alg *a = vep_alg_by_name(want[i].name);

		ASSERT_TRUE(a != NULL);
		ASSERT_STREQ(a->name, want[i].name);
		ASSERT_EQ(a->family, want[i].family);
		ASSERT_EQ(a->bits, want[i].bits);
		ASSERT_EQ(a->qbits, want[i].qbits);
		ASSERT_EQ(a->sig_len, want[i].sig_len);
		ASSERT_TRUE(vep_alg_by_size(a->family, a->bits, a->qbits) == a);
	}
	ASSERT_TRUE(vep_alg_by_name("RS64") == NULL);
	ASSERT_TRUE(vep_alg_by_name("rs256") == NULL);
	ASSERT_TRUE(vep_alg_by_name("RS512") == NULL);
	ASSERT_TRUE(vep_alg_by_name("ES256") == NULL);
	ASSERT_TRUE(vep_alg_by_name("none") == NULL);
	ASSERT_TRUE(vep_alg_by_name("") == NULL);
	ASSERT_TRUE(vep_alg_by_name(NULL) == NULL);
}

static void
test_by_size(void)
{
	ASSERT_TRUE(vep_alg_by_size(VEP_FAMILY_RSA, 512, 0) == NULL);
	ASSERT_TRUE(vep_alg_by_size(VEP_FAMILY_RSA, 1536, 0) == NULL);
	ASSERT_TRUE(vep_alg_by_size(VEP_FAMILY_RSA, 3072, 0) == NULL);
	ASSERT_TRUE(vep_alg_by_size(VEP_FAMILY_RSA, 4096, 0) == NULL);
	ASSERT_TRUE(vep_alg_by_size(VEP_FAMILY_RSA, 2047, 0) == NULL);
	ASSERT_TRUE(vep_alg_by_size(VEP_FAMILY_DSA, 2048, 224) == NULL);
	ASSERT_TRUE(vep_alg_by_size(VEP_FAMILY_DSA, 1024, 256) == NULL);
	ASSERT_TRUE(vep_alg_by_size(VEP_FAMILY_DSA, 2048, 160) == NULL);
	ASSERT_TRUE(vep_alg_by_size(VEP_FAMILY_DSA, 3072, 256) == NULL);
	ASSERT_TRUE(vep_alg_by_size(VEP_FAMILY_DSA, 1024, 0) == NULL);
}

/* Generation refuses sizes outside the table before doing any work. */
static void
test_generate_sizes(void)
{
	vep_key *k = (vep_key *)1;

	ASSERT_EQ(vep_key_generate_rsa(512, &k), VEP_ERR_KEYSIZE);
	ASSERT_TRUE(k == NULL);
	ASSERT_EQ(vep_key_generate_rsa(3072, &k), VEP_ERR_KEYSIZE);
	ASSERT_EQ(vep_key_generate_rsa(4096, &k), VEP_ERR_KEYSIZE);
	ASSERT_EQ(vep_key_generate_dsa(3072, &k), VEP_ERR_KEYSIZE);
	ASSERT_EQ(vep_key_generate_dsa(512, &k), VEP_ERR_KEYSIZE);
}

int
main(void)
{
	RUN(test_by_name);
	RUN(test_by_size);
	RUN(test_generate_sizes);
	return harness_done();
}
