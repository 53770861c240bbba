/*
 * fuzz_support.c - the support document (support.c), down through key.c.
 *
 * Invariants on an accepted document: exactly one of disabled, delegated or
 * primary; a primary has 1 or more distinct keys and both paths; whatever
 * the builders accept to rebuild from the parsed fields parses back to the
 * same fields (keys equal and in the same order).
 */
#include <string.h>

#include "err.h"
#include "fuzz.h"
#include "support.h"

static void
check_rebuild(const struct vep_support *s)
{
	char *doc = NULL;
	struct vep_support *s2 = NULL;
	int r;

	if (s->disabled)
		r = vep_support_build_disabled(&doc);
	else if (s->authority != NULL)
		r = vep_support_build_delegated(s->authority, &doc);
	else
		r = vep_support_build((const vep_key *const *)s->keys, s->nkeys,
		    s->authentication, s->provisioning, &doc);
	/* The builders are stricter than the parser (paths must start with
	 * '/', at most VEP_SUPPORT_MAX_KEYS keys): refusing is allowed. */
	FUZZ_CHECK(r == 0 || r == VEP_ERR_ARG);
	if (r != 0)
		return;
	FUZZ_CHECK(vep_support_parse(doc, strlen(doc), &s2) == 0);
	FUZZ_CHECK(s2->disabled == s->disabled);
	FUZZ_CHECK((s2->authority == NULL) == (s->authority == NULL));
	if (s->authority != NULL)
		FUZZ_CHECK(strcmp(s2->authority, s->authority) == 0);
	FUZZ_CHECK(s2->nkeys == s->nkeys);
	for (size_t i = 0; i < s->nkeys; i++)
		FUZZ_CHECK(vep_key_public_equal(s->keys[i], s2->keys[i]));
	if (s->nkeys > 0) {
		FUZZ_CHECK(strcmp(s2->authentication, s->authentication) == 0);
		FUZZ_CHECK(strcmp(s2->provisioning, s->provisioning) == 0);
	}
	vep_support_free(s2);
	free(doc);
}

int
fuzz_main(const uint8_t *data, size_t len)
{
	struct vep_support *s = NULL;

	if (vep_support_parse((const char *)data, len, &s) != 0)
		return 0;
	int forms = (s->disabled != 0) + (s->authority != NULL) + (s->nkeys > 0);
	FUZZ_CHECK(forms == 1);
	if (s->nkeys > 0) {
		FUZZ_CHECK(s->authentication != NULL && s->provisioning != NULL);
		for (size_t i = 0; i < s->nkeys; i++)
			for (size_t j = i + 1; j < s->nkeys; j++)
				FUZZ_CHECK(!vep_key_public_equal(s->keys[i], s->keys[j]));
	}
	check_rebuild(s);
	vep_support_free(s);
	return 0;
}
