/*
 * cert.h - BrowserID identity certificates.
 *
 * Payload as deployed by Persona (times in milliseconds since the epoch):
 *   {"iss":"example.com","iat":<ms>,"exp":<ms>,
 *    "public-key":{...},"principal":{"email":"alice@example.com"}}
 * signed with the domain key. The embedded public key is re-serialised
 * canonically from the parsed key.
 */
#ifndef VEP_CERT_H
#define VEP_CERT_H

#include <stddef.h>
#include <stdint.h>

#include "jws.h"
#include "key.h"
#include "keymemo.h"

/* Hard cap on a certificate's lifetime, whatever anyone asks (ms). */
#define VEP_CERT_MAX_LIFETIME_MS (24LL * 3600 * 1000)

/* Clock skew every libvep verdict allows (ms), for certificates and
 * assertions alike (docs/PROTOCOL.md, Clock skew): an iat up to this much
 * after the verifier's clock and an exp up to this much before it are still
 * accepted. 30 s covers a browser or an issuer whose clock is off by the
 * tens of seconds seen on machines without working NTP, and is three times
 * the issuer's 10 s back-dating; it stays a quarter of the 2-minute life of
 * the assertions browsers make, so a captured assertion lives at most 30 s
 * longer. Issuing is unchanged: certificates are still back-dated, so the
 * deployed verifiers, which allow no skew, accept them too. */
#define VEP_CLOCK_SKEW_MS (30LL * 1000)

struct vep_cert_params {
	const char *issuer;     /* domain, lowercase */
	const char *email;      /* normalised address */
	const vep_key *pubkey;  /* user's public key */
	int64_t iat_ms;
	int64_t exp_ms;         /* must be > iat_ms, exp - iat <= VEP_CERT_MAX_LIFETIME_MS */
	/* Optional (NULL: made here; zero-initialise the struct): pubkey's
	 * canonical JSON text as vep_key_to_json_text makes it, put in the
	 * certificate as it is instead of made again (a caller that
	 * remembers keys keeps it with the key). */
	const char *pubkey_text;
};

/* Builds and signs a certificate with domain_key. *out is new text (free()). */
int vep_cert_sign(const vep_key *domain_key, const struct vep_cert_params *p, char **out);

/* What vep_cert_sign_with signs: the certificate's JWS signing input
 * for a domain key of pub's algorithm (vep_jws_signing_input), after the
 * same checks. *input is new text of *inlen bytes; vep_jws_join makes the
 * certificate of it and its signature. */
int vep_cert_signing_input(const vep_key *pub, const struct vep_cert_params *p, char **input,
    size_t *inlen);

/* The same with a domain key held elsewhere (jws.h's vep_signer). */
int vep_cert_sign_with(const struct vep_signer *s, const struct vep_cert_params *p, char **out);

typedef struct vep_cert {
	vep_jws *jws;         /* owned */
	char *issuer;         /* owned */
	char *email;          /* owned, as in the certificate */
	vep_key *pubkey;      /* owned, the certified user key */
	int64_t iat_ms;       /* -1 when absent (allowed by deployed verifiers) */
	int64_t exp_ms;
} vep_cert;

/* Parses an untrusted certificate (structure only; no signature check).
 * Requires iss (string), exp (number), public-key, principal.email. */
int vep_cert_parse(const char *text, size_t len, vep_cert **out);

/* vep_cert_parse with the given share of the key policy for the certified
 * key (key.h). */
int vep_cert_parse_checked(const char *text, size_t len, enum vep_key_checks checks,
    vep_cert **out);

/* vep_cert_parse_checked remembering the certified keys that passed in
 * memo (keymemo.h; NULL: none), for a parser that checks many
 * certificates of the same few keys. */
int vep_cert_parse_memo(const char *text, size_t len, enum vep_key_checks checks,
    vep_keymemo *memo, vep_cert **out);

/* Checks the signature against any of keys[0..nkeys), then times
 * (vep_time_check). */
int vep_cert_verify(const vep_cert *c, const vep_key *const *keys, size_t nkeys,
    int64_t now_ms);

void vep_cert_free(vep_cert *c);

/* The validity window of every libvep verdict, with VEP_CLOCK_SKEW_MS on
 * both sides: VEP_ERR_NOTYET when iat_ms (-1: absent, no bound) is more
 * than the skew after now, VEP_ERR_EXPIRED when exp is the skew or more
 * before now, else 0: valid while iat - skew <= now < exp + skew. */
int vep_time_check(int64_t iat_ms, int64_t exp_ms, int64_t now_ms);

#endif
