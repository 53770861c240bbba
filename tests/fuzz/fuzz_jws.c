/*
 * fuzz_jws.c - JWS compact serialisation (jws.c) and base64url (b64url.c).
 *
 * Invariants: an accepted token's signing input is exactly its text up to
 * the last '.', and its signature re-encodes to exactly the third part
 * (strict base64url has one encoding per byte string); base64url decode ->
 * encode reproduces the input and encode -> decode reproduces the bytes.
 */
#include <string.h>

#include "b64url.h"
#include "fuzz.h"
#include "jws.h"

static void
check_jws(const uint8_t *data, size_t len)
{
	vep_jws *j = NULL;

	if (vep_jws_parse((const char *)data, len, &j) != 0)
		return;
	FUZZ_CHECK(j->alg != NULL);
	FUZZ_CHECK(json_is_object(j->header) && json_is_object(j->payload));
	const uint8_t *dot = memrchr(data, '.', len);
	FUZZ_CHECK(dot != NULL);
	size_t in_len = (size_t)(dot - data);
	FUZZ_CHECK(j->signing_input_len == in_len);
	FUZZ_CHECK(memcmp(j->signing_input, data, in_len) == 0);
	FUZZ_CHECK(j->signing_input[in_len] == '\0');
	char *e = vep_b64url_encode(j->sig, j->sig_len);
	FUZZ_CHECK(e != NULL);
	FUZZ_CHECK(strlen(e) == len - in_len - 1);
	FUZZ_CHECK(memcmp(e, dot + 1, len - in_len - 1) == 0);
	free(e);
	vep_jws_free(j);
}

static void
check_b64url(const uint8_t *data, size_t len)
{
	uint8_t *dec = NULL, *dec2 = NULL;
	size_t n = 0, n2 = 0;
	char *e;

	if (vep_b64url_decode((const char *)data, len, &dec, &n) == 0) {
		FUZZ_CHECK(dec[n] == 0);
		FUZZ_CHECK((e = vep_b64url_encode(dec, n)) != NULL);
		FUZZ_CHECK(strlen(e) == len && memcmp(e, data, len) == 0);
		free(e);
		free(dec);
	}
	FUZZ_CHECK((e = vep_b64url_encode(data, len)) != NULL);
	FUZZ_CHECK(vep_b64url_decode(e, strlen(e), &dec2, &n2) == 0);
	FUZZ_CHECK(n2 == len && (len == 0 || memcmp(dec2, data, len) == 0));
	free(dec2);
	free(e);
}

int
fuzz_main(const uint8_t *data, size_t len)
{
	check_jws(data, len);
	check_b64url(data, len);
	return 0;
}
