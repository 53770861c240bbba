/*
 * test_keycache.c - the per-loop memory of accepted user keys by their JSON
 * text: a text is found only byte for byte and of its kind, with the key,
 * its fingerprint and its JSON text as put; another text of the same key is another entry; a
 * text whose slot another takes is gone (and its key freed, which ASan
 * checks); an over-long text is not remembered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "harness.h"
#include "issuance/keycache.h"

static struct keycache *kc;
static vep_key *domain;

static const char *
text_of(const vep_key *k)
{
	static char buf[4096];
	char *t = vep_key_to_json_text(k);

	snprintf(buf, sizeof(buf), "%s", t != NULL ? t : "");
	free(t);
	return buf;
}

static void
test_put_get(void)
{
	vep_key *k = NULL, *copy = NULL;
	char fp[VEP_FINGERPRINT_BUFSZ], text[4096], spaced[4200];
	const struct keycache_entry *e;
	char *canon;

	ASSERT_EQ(vep_key_public_copy(domain, &k), 0);
	ASSERT_EQ(vep_key_fingerprint(k, fp), 0);
	snprintf(text, sizeof(text), "%s", text_of(k));
	ASSERT_TRUE(keycache_get(kc, KEYCACHE_TEXT, text, strlen(text)) == NULL);
	ASSERT_TRUE((e = keycache_put(kc, KEYCACHE_TEXT, text, strlen(text), k, fp)) != NULL);
	ASSERT_TRUE(keycache_get(kc, KEYCACHE_TEXT, text, strlen(text)) == e);
	ASSERT_STREQ(e->fp, fp);
	ASSERT_TRUE(vep_key_public_equal(e->key, domain));
	ASSERT_TRUE((canon = vep_key_to_json_text(domain)) != NULL);
	ASSERT_STREQ(e->text, canon);
	free(canon);
	/* The same bytes as another kind are another entry. */
	ASSERT_TRUE(keycache_get(kc, KEYCACHE_MEMBERS, text, strlen(text)) == NULL);
	/* Byte for byte: a prefix, or the same key spelt with a space, is not it. */
	ASSERT_TRUE(keycache_get(kc, KEYCACHE_TEXT, text, strlen(text) - 1) == NULL);
	snprintf(spaced, sizeof(spaced), " %s", text);
	ASSERT_TRUE(keycache_get(kc, KEYCACHE_TEXT, spaced, strlen(spaced)) == NULL);
	ASSERT_EQ(vep_key_public_copy(domain, &copy), 0);
	e = keycache_put(kc, KEYCACHE_TEXT, spaced, strlen(spaced), copy, fp);
	ASSERT_TRUE(e != NULL);
	ASSERT_TRUE(keycache_get(kc, KEYCACHE_TEXT, spaced, strlen(spaced)) == e);
	ASSERT_TRUE(vep_key_public_equal(e->key, domain));
}

/* Many texts through few slots: every get answers its own text or nothing. */
static void
test_eviction(void)
{
	char text[64], fp[VEP_FINGERPRINT_BUFSZ];
	const struct keycache_entry *e;
	vep_key *k;
	int i, found = 0;

	for (i = 0; i < 4 * KEYCACHE_SLOTS; i++) {
		ASSERT_EQ(vep_key_public_copy(domain, &k), 0);
		snprintf(text, sizeof(text), "{\"n\":%d}", i);
		snprintf(fp, sizeof(fp), "%064d", i);
		ASSERT_TRUE(keycache_put(kc, KEYCACHE_TEXT, text, strlen(text), k, fp) != NULL);
	}
	for (i = 0; i < 4 * KEYCACHE_SLOTS; i++) {
		snprintf(text, sizeof(text), "{\"n\":%d}", i);
		snprintf(fp, sizeof(fp), "%064d", i);
		if ((e = keycache_get(kc, KEYCACHE_TEXT, text, strlen(text))) != NULL) {
			ASSERT_STREQ(e->fp, fp);
			found++;
		}
	}
	ASSERT_TRUE(found > 0 && found <= KEYCACHE_SLOTS);
}

static void
test_too_long(void)
{
	static char big[KEYCACHE_TEXT_MAX + 2];
	char fp[VEP_FINGERPRINT_BUFSZ] = "x";
	vep_key *k;

	memset(big, 'a', sizeof(big) - 1);
	ASSERT_EQ(vep_key_public_copy(domain, &k), 0);
	/* k freed */
	ASSERT_TRUE(keycache_put(kc, KEYCACHE_TEXT, big, strlen(big), k, fp) == NULL);
	ASSERT_TRUE(keycache_get(kc, KEYCACHE_TEXT, big, strlen(big)) == NULL);
}

int
main(void)
{
	if (keycache_new(&kc) != 0 || vep_key_generate_rsa(2048, &domain) != 0)
		return 1;
	RUN(test_put_get);
	RUN(test_eviction);
	RUN(test_too_long);
	keycache_free(kc);
	vep_key_free(domain);
	return harness_done();
}
