/*
 * fuzz_cert.c - identity certificates (cert.c), down through jws.c and
 * key.c.
 *
 * Invariants on an accepted certificate: valid issuer host and email, sane
 * times, the certified key round-trips through its canonical JSON; and
 * verification with an attacker-chosen key (the certified one) returns 0
 * or an error code, and never succeeds the clock skew after the
 * certificate's own exp.
 */
#include <string.h>

#include "cert.h"
#include "email.h"
#include "err.h"
#include "fuzz.h"

int
fuzz_main(const uint8_t *data, size_t len)
{
	vep_cert *c = NULL;
	vep_key *k2 = NULL;
	char *t = NULL, *norm = NULL;

	if (vep_cert_parse((const char *)data, len, &c) != 0)
		return 0;
	FUZZ_CHECK(vep_host_valid(c->issuer));
	FUZZ_CHECK(vep_email_normalize(c->email, strlen(c->email), &norm) == 0);
	FUZZ_CHECK(c->exp_ms >= 0 && c->iat_ms >= -1);
	FUZZ_CHECK((t = vep_key_to_json_text(c->pubkey)) != NULL);
	FUZZ_CHECK(vep_key_from_json_text(t, strlen(t), &k2) == 0);
	FUZZ_CHECK(vep_key_public_equal(c->pubkey, k2));

	const vep_key *keys[] = { c->pubkey };
	int r = vep_cert_verify(c, keys, 1, c->exp_ms + VEP_CLOCK_SKEW_MS);
	FUZZ_CHECK(r < 0); /* never valid once the skew after its exp is over */
	r = vep_cert_verify(c, keys, 1, c->iat_ms >= 0 ? c->iat_ms : 0);
	FUZZ_CHECK(r <= 0);
	free(norm);
	free(t);
	vep_key_free(k2);
	vep_cert_free(c);
	return 0;
}
