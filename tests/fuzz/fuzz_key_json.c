/*
 * fuzz_key_json.c - BrowserID public key JSON (key.c).
 *
 * Invariants on any accepted key: it has no private half, a known
 * algorithm, and parse -> serialise -> parse gives an equal key with the
 * same canonical text and fingerprint.
 */
#include <string.h>

#include "fuzz.h"
#include "key.h"

int fuzz_main(const uint8_t *data, size_t len)
{
	vep_key *k = NULL, *k2 = NULL;
	char *t = NULL, *t2 = NULL;
	char fp[65], fp2[65];

	if (vep_key_from_json_text((const char *)data, len, &k) != 0)
		return 0;
	FUZZ_CHECK(k != NULL);
	FUZZ_CHECK(!vep_key_has_private(k));
	FUZZ_CHECK(vep_key_alg(k) != NULL);
	FUZZ_CHECK((t = vep_key_to_json_text(k)) != NULL);
	FUZZ_CHECK(vep_key_from_json_text(t, strlen(t), &k2) == 0);
	FUZZ_CHECK(vep_key_public_equal(k, k2));
	FUZZ_CHECK(vep_key_alg(k) == vep_key_alg(k2));
	FUZZ_CHECK((t2 = vep_key_to_json_text(k2)) != NULL);
	FUZZ_CHECK(strcmp(t, t2) == 0);
	FUZZ_CHECK(vep_key_fingerprint(k, fp) == 0 && vep_key_fingerprint(k2, fp2) == 0);
	FUZZ_CHECK(strcmp(fp, fp2) == 0);
	free(t);
	free(t2);
	vep_key_free(k);
	vep_key_free(k2);
	return 0;
}
