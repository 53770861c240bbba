/*
 * assertion.h - assertions and backed assertions (cert "~" assertion).
 *
 * An assertion's payload is {"aud":"https://rp.example","exp":<ms>} signed
 * with the user key from the certificate. Verification applies every rule
 * the deployed verifiers apply: exactly one certificate, issuer equal to the
 * email's domain (or the authority that domain delegates to), certificate
 * signed by one of the issuer's keys and current, assertion signed by the
 * certified key and current, audience equal on scheme, host and port.
 * "Current" allows VEP_CLOCK_SKEW_MS (cert.h) on either side, the same for
 * the certificate and the assertion, so every verifier built on libvep
 * (vep-keytool, the authority's POST /verify) agrees on every time.
 */
#ifndef VEP_ASSERTION_H
#define VEP_ASSERTION_H

#include <stddef.h>
#include <stdint.h>

#include "cert.h"
#include "jws.h"
#include "key.h"

/* Largest backed assertion accepted (bytes). */
#define VEP_BACKED_MAX_BYTES (64 * 1024)

/* Signs an assertion for audience with the user key. *out is new text. */
int vep_assertion_sign(const vep_key *user_key, const char *audience,
    int64_t exp_ms, char **out);

/* Builds "cert~assertion" as new text. */
int vep_backed_join(const char *cert, const char *assertion, char **out);

typedef struct vep_backed {
	vep_cert *cert;       /* owned */
	vep_jws *assertion;   /* owned */
	char *audience;       /* owned, the assertion's aud */
	int64_t exp_ms;       /* the assertion's exp */
	int64_t iat_ms;       /* the assertion's iat, -1 when absent */
} vep_backed;

/* Parses untrusted "cert~assertion". More than one certificate gives
 * VEP_ERR_CHAIN. */
int vep_backed_parse(const char *text, size_t len, vep_backed **out);

/* Verifies a parsed backed assertion:
 *  - the certificate's iss equals issuer (the caller resolves it: the email's
 *    domain, or the authority that domain delegates to) else VEP_ERR_ISSUER;
 *  - the certificate verifies against keys (vep_cert_verify);
 *  - the assertion verifies with the certified key, and its exp (and iat,
 *    when present) pass vep_time_check, skew included;
 *  - vep_audience_match(audience, aud) else VEP_ERR_AUDIENCE: audience is
 *    the relying party's, the assertion's aud the other side.
 */
int vep_backed_verify(const vep_backed *b, const char *audience,
    const char *issuer, const vep_key *const *keys, size_t nkeys, int64_t now_ms);

/* Whether an assertion made for aud may be accepted by the relying party
 * that calls itself rp. Not symmetric: the two sides follow Persona's
 * verifier (browserid-local-verify's compare-audiences.js) and
 * docs/PROTOCOL.md's table.
 *  - rp, the relying party's own audience (what it hands its verifier):
 *    "scheme://host[:port]" or, with no scheme, "host[:port]", which means
 *    http; either may end with "/". Any other path, a query or a fragment
 *    is refused: a URL there is a configuration mistake, never matched on
 *    its origin.
 *  - aud, the assertion's: "scheme://host[:port]" followed by anything that
 *    starts with "/", "?" or "#", which is ignored (the user agent wrote
 *    it and signed it). The scheme is required.
 * Both: schemes http and https only, case-insensitive, default ports
 * filled in (http 80, https 443); hosts are DNS names or bracketed IPv6
 * literals, compared as text without case; text over 2048 characters, a
 * host over 255, a control, space or non-ASCII character, userinfo, an
 * empty or out-of-range port make a side malformed. Returns 1 when they
 * match, 0 otherwise (including when either is malformed or NULL). */
int vep_audience_match(const char *rp, const char *aud);

void vep_backed_free(vep_backed *b);

#endif
