/*
 * fuzz_backed.c - backed assertions "cert~assertion" (assertion.c), down
 * through cert.c, jws.c and key.c.
 *
 * Invariants on an accepted backed assertion: joining its two parts gives
 * the input back; verifying against its own issuer and audience never
 * reports VEP_ERR_ISSUER, nor VEP_ERR_AUDIENCE for an audience that matches
 * itself; every result is 0 or a VEP_ERR_* code.
 */
#include <string.h>

#include "assertion.h"
#include "err.h"
#include "fuzz.h"

int
fuzz_main(const uint8_t *data, size_t len)
{
	vep_backed *b = NULL;
	char *joined = NULL;

	if (vep_backed_parse((const char *)data, len, &b) != 0)
		return 0;
	const char *tilde = memchr(data, '~', len);
	FUZZ_CHECK(tilde != NULL);
	char *cert = strndup((const char *)data, (size_t)(tilde - (const char *)data));
	char *as = strndup(tilde + 1, len - (size_t)(tilde - (const char *)data) - 1);
	FUZZ_CHECK(cert != NULL && as != NULL);
	FUZZ_CHECK(vep_backed_join(cert, as, &joined) == 0);
	FUZZ_CHECK(strlen(joined) == len && memcmp(joined, data, len) == 0);

	const vep_key *keys[] = { b->cert->pubkey };
	int self = vep_audience_match(b->audience, b->audience);
	int r = vep_backed_verify(b, b->audience, b->cert->issuer, keys, 1,
	    b->exp_ms > 0 ? b->exp_ms - 1 : 0);
	FUZZ_CHECK(r <= 0 && r != VEP_ERR_ISSUER && r != VEP_ERR_ARG);
	FUZZ_CHECK(!(self && r == VEP_ERR_AUDIENCE));
	free(cert);
	free(as);
	free(joined);
	vep_backed_free(b);
	return 0;
}
