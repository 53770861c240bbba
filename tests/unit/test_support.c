/*
 * test_support.c - the support document (libvep/support.c): exact text of
 * what we publish, parse of what others publish (primary, delegation,
 * disabled), types, limits and malformed documents.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "harness.h"
#include "support.h"
#include "util.h"

static vep_key *k1, *k2, *k3;

static int
parse(const char *text, struct vep_support **s)
{
	return vep_support_parse(text, strlen(text), s);
}

/* Replaces every {K1} {K2} {K3} in tmpl by the keys' JSON. */
static char *
expand(const char *tmpl)
{
	char *kj[3] = {
		vep_key_to_json_text(k1), vep_key_to_json_text(k2),
		vep_key_to_json_text(k3)
	};
	size_t cap = strlen(tmpl) + 1;
	for (const char *p = tmpl; (p = strstr(p, "{K")) != NULL; p++)
		cap += 4096;
	char *out = malloc(cap), *o = out;
	for (const char *p = tmpl; *p != '\0';) {
		if (strncmp(p, "{K", 2) == 0 && p[2] >= '1' && p[2] <= '3' && p[3] == '}') {
			o += sprintf(o, "%s", kj[p[2] - '1']);
			p += 4;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	for (int i = 0; i < 3; i++)
		free(kj[i]);
	return out;
}

static void
test_build_exact(void)
{
	const vep_key *keys[] = { k1, k2 };
	char *out = NULL;
	ASSERT_EQ(vep_support_build(keys, 2, "/sign_in", "/provision", &out), 0);
	char *want = expand("{\"public-key\":{K1},\"keys\":[{K1},{K2}],"
	    "\"authentication\":\"/sign_in\",\"provisioning\":\"/provision\"}");
	ASSERT_STREQ(out, want);
	free(want);
	free(out);

	ASSERT_EQ(vep_support_build(keys, 1, "/a", "/p", &out), 0);
	want = expand("{\"public-key\":{K1},\"keys\":[{K1}],\"authentication\":\"/a\","
	    "\"provisioning\":\"/p\"}");
	ASSERT_STREQ(out, want);
	free(want);
	free(out);

	ASSERT_EQ(vep_support_build_delegated("login.example.org", &out), 0);
	ASSERT_STREQ(out, "{\"authority\":\"login.example.org\"}");
	free(out);
	ASSERT_EQ(vep_support_build_disabled(&out), 0);
	ASSERT_STREQ(out, "{\"disabled\":true}");
	free(out);
}

static void
test_build_refusals(void)
{
	const vep_key *keys[VEP_SUPPORT_MAX_KEYS + 1];
	for (size_t i = 0; i <= VEP_SUPPORT_MAX_KEYS; i++)
		keys[i] = k1;
	char *out = (char *)1;
	ASSERT_EQ(vep_support_build(keys, VEP_SUPPORT_MAX_KEYS, "/a", "/p", &out), 0);
	free(out);
	ASSERT_EQ(vep_support_build(keys, VEP_SUPPORT_MAX_KEYS + 1, "/a", "/p", &out), VEP_ERR_ARG);
	ASSERT_TRUE(out == NULL);
	ASSERT_EQ(vep_support_build(keys, 0, "/a", "/p", &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_support_build(NULL, 1, "/a", "/p", &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_support_build(keys, 1, "a", "/p", &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_support_build(keys, 1, "/a", "https://x.example/p", &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_support_build(keys, 1, "/a b", "/p", &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_support_build(keys, 1, NULL, "/p", &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_support_build(keys, 1, "/a", NULL, &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_support_build(keys, 1, "/a", "/p", NULL), VEP_ERR_ARG);
	const vep_key *with_null[] = { k1, NULL };
	ASSERT_EQ(vep_support_build(with_null, 2, "/a", "/p", &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_support_build_delegated("not a host", &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_support_build_delegated(NULL, &out), VEP_ERR_ARG);
	ASSERT_EQ(vep_support_build_disabled(NULL), VEP_ERR_ARG);
}

static void
test_parse_primary(void)
{
	const vep_key *keys[] = { k1, k2 };
	char *doc = NULL;
	struct vep_support *s = NULL;
	ASSERT_EQ(vep_support_build(keys, 2, "/sign_in", "/provision", &doc), 0);
	ASSERT_EQ(parse(doc, &s), 0);
	ASSERT_EQ(s->disabled, 0);
	ASSERT_TRUE(s->authority == NULL);
	ASSERT_EQ(s->nkeys, 2);
	ASSERT_TRUE(vep_key_public_equal(s->keys[0], k1));
	ASSERT_TRUE(vep_key_public_equal(s->keys[1], k2));
	ASSERT_STREQ(s->authentication, "/sign_in");
	ASSERT_STREQ(s->provisioning, "/provision");
	vep_support_free(s);
	vep_support_free(NULL);
	free(doc);

	/* Old form without keys; public-key not repeated in keys; dups. */
	char *t = expand("{\"public-key\":{K1},\"authentication\":\"/a\",\"provisioning\":\"/p\"}");
	ASSERT_EQ(parse(t, &s), 0);
	ASSERT_EQ(s->nkeys, 1);
	vep_support_free(s);
	free(t);
	t = expand("{\"public-key\":{K2},\"keys\":[{K1},{K3},{K1},{K2}],"
	    "\"authentication\":\"/a\",\"provisioning\":\"/p\",\"unknown\":[1,2]}");
	ASSERT_EQ(parse(t, &s), 0);
	ASSERT_EQ(s->nkeys, 3);
	ASSERT_TRUE(vep_key_public_equal(s->keys[0], k2));
	ASSERT_TRUE(vep_key_public_equal(s->keys[1], k1));
	ASSERT_TRUE(vep_key_public_equal(s->keys[2], k3));
	vep_support_free(s);
	free(t);
	t = expand("{\"public-key\":{K1},\"keys\":[],\"authentication\":\"/a\","
	    "\"provisioning\":\"/p\"}");
	ASSERT_EQ(parse(t, &s), 0);
	ASSERT_EQ(s->nkeys, 1);
	vep_support_free(s);
	free(t);
	/* "disabled": false is not disabled. */
	t = expand("{\"disabled\":false,\"public-key\":{K1},\"authentication\":\"/a\","
	    "\"provisioning\":\"/p\"}");
	ASSERT_EQ(parse(t, &s), 0);
	ASSERT_EQ(s->disabled, 0);
	vep_support_free(s);
	free(t);
}

/* A document whose "keys" lists n copies of K2 after K1... then K3. */
static char *
keys_doc(int n)
{
	char tmpl[1024] = "{\"public-key\":{K1},\"keys\":[";
	for (int i = 0; i < n; i++)
		strcat(tmpl, i == 0 ? "{K2}" : i < VEP_SUPPORT_MAX_KEYS ? ",{K2}" : ",{K3}");
	strcat(tmpl, "],\"authentication\":\"/a\",\"provisioning\":\"/p\"}");
	return expand(tmpl);
}

static void
test_parse_keys_limit(void)
{
	struct vep_support *s = NULL;
	char *t = keys_doc(VEP_SUPPORT_MAX_KEYS);
	ASSERT_EQ(parse(t, &s), 0);
	ASSERT_EQ(s->nkeys, 2);
	vep_support_free(s);
	free(t);
	t = keys_doc(VEP_SUPPORT_MAX_KEYS + 1);
	ASSERT_EQ(parse(t, &s), VEP_ERR_TOOBIG);
	ASSERT_TRUE(s == NULL);
	free(t);
}

static void
test_parse_other_forms(void)
{
	struct vep_support *s = NULL;
	ASSERT_EQ(parse("{\"disabled\":true}", &s), 0);
	ASSERT_EQ(s->disabled, 1);
	ASSERT_EQ(s->nkeys, 0);
	vep_support_free(s);
	/* disabled wins over everything else, as deployed. */
	ASSERT_EQ(parse("{\"authority\":\"x.example\",\"disabled\":true,\"public-key\":5}", &s), 0);
	ASSERT_EQ(s->disabled, 1);
	ASSERT_TRUE(s->authority == NULL);
	vep_support_free(s);

	ASSERT_EQ(parse("{\"authority\":\"login.example.org\"}", &s), 0);
	ASSERT_STREQ(s->authority, "login.example.org");
	ASSERT_EQ(s->disabled, 0);
	ASSERT_EQ(s->nkeys, 0);
	vep_support_free(s);
	ASSERT_EQ(parse("{\"authority\":\"localhost:10001\"}", &s), 0);
	ASSERT_STREQ(s->authority, "localhost:10001");
	vep_support_free(s);
}

static void
test_parse_malformed(void)
{
	static const char *const invalid[] = {
		"[]", "\"x\"", "{", "{}", "{\"disabled\":\"true\"}", "{\"disabled\":1}",
		"{\"authority\":5}", "{\"authority\":\"\"}", "{\"authority\":\"a b\"}",
		"{\"authority\":\"https://x.example\"}", "{\"authority\":null}",
		"{\"public-key\":{K1}}",
		"{\"public-key\":{K1},\"authentication\":\"/a\"}",
		"{\"public-key\":{K1},\"provisioning\":\"/p\"}",
		"{\"authentication\":\"/a\",\"provisioning\":\"/p\"}",
		"{\"public-key\":\"k\",\"authentication\":\"/a\",\"provisioning\":\"/p\"}",
		"{\"public-key\":{K1},\"authentication\":5,\"provisioning\":\"/p\"}",
		"{\"public-key\":{K1},\"authentication\":\"/a\",\"provisioning\":\"\"}",
		"{\"public-key\":{K1},\"keys\":{K2},\"authentication\":\"/a\","
		"\"provisioning\":\"/p\"}",
		"{\"public-key\":{K1},\"keys\":[1],\"authentication\":\"/a\","
		"\"provisioning\":\"/p\"}",
		"{\"public-key\":{K1},\"public-key\":{K2},\"authentication\":\"/a\","
		"\"provisioning\":\"/p\"}",
		"{\"public-key\":{K1},\"authentication\":\"/a\",\"provisioning\":\"/p\"} x",
	};
	struct vep_support *s = (struct vep_support *)1;
	for (size_t i = 0; i < sizeof invalid / sizeof invalid[0]; i++) {
		char *t = expand(invalid[i]);
		int r = parse(t, &s);
		if (r != VEP_ERR_INVALID)
			fprintf(stderr, "case %zu: %d\n", i, r);
		ASSERT_EQ(r, VEP_ERR_INVALID);
		ASSERT_TRUE(s == NULL);
		free(t);
	}
	/* A key the protocol refuses makes the whole document unusable. */
	ASSERT_TRUE(parse("{\"public-key\":{\"algorithm\":\"RS\",\"n\":\"187\",\"e\":\"3\"},"
	    "\"authentication\":\"/a\",\"provisioning\":\"/p\"}", &s) < 0);
	ASSERT_TRUE(parse("{\"public-key\":{\"algorithm\":\"XX\"},"
	    "\"authentication\":\"/a\",\"provisioning\":\"/p\"}", &s) < 0);
	ASSERT_EQ(vep_support_parse("{\"disabled\":true}\0", 18, &s), VEP_ERR_INVALID);
	ASSERT_EQ(vep_support_parse(NULL, 0, &s), VEP_ERR_ARG);
	ASSERT_EQ(vep_support_parse("{}", 2, NULL), VEP_ERR_ARG);

	/* Over the JSON size limit. */
	size_t n = VEP_JSON_MAX_BYTES + 1;
	char *big = malloc(n + 1);
	memset(big, ' ', n);
	memcpy(big, "{\"disabled\":true}", 17);
	big[n] = '\0';
	ASSERT_EQ(vep_support_parse(big, n, &s), VEP_ERR_TOOBIG);
	free(big);
}

int
main(void)
{
	if (vep_key_generate_rsa(2048, &k1) != 0 || vep_key_generate_rsa(1024, &k2) != 0 ||
	    vep_key_generate_rsa(1024, &k3) != 0) {
		fprintf(stderr, "key generation failed\n");
		return 1;
	}
	RUN(test_build_exact);
	RUN(test_build_refusals);
	RUN(test_parse_primary);
	RUN(test_parse_keys_limit);
	RUN(test_parse_other_forms);
	RUN(test_parse_malformed);
	vep_key_free(k1);
	vep_key_free(k2);
	vep_key_free(k3);
	return harness_done();
}
