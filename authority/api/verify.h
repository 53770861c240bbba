/*
 * api/verify.h - POST /verify: Persona's remote verifier contract, so that
 * relying-party code written for Persona (any language) works unchanged
 * when pointed at this authority.
 *
 * Request: fields "assertion" (a backed assertion, cert~assertion) and
 * "audience" (the relying party's origin), as
 * application/x-www-form-urlencoded or as a JSON object
 * (application/json); at most VERIFY_MAX_BODY_BYTES, Persona's limit.
 * Spaces, tabs and line ends around either are dropped (what a file or a
 * shell leaves). Fields other than these two are ignored, as Persona ignored them (its
 * libraries send some: "experimental_*" flags); either of the two given
 * twice is refused.
 *
 * Answer 200 for every verdict: {"status":"okay","email","audience",
 * "expires" (the assertion's exp, ms since the epoch),"issuer" (the
 * certificate's iss)}, or {"status":"failure","reason":TEXT}. A malformed
 * request gets 400, a method other than POST 405, a body over the limit
 * 413, another content type 415, a client over verify_rate 429 with
 * Retry-After: all with the {"status":"failure","reason"} body.
 *
 * Verdicts: libvep's vep_backed_verify with the email domain's published
 * keys (current, next and previous) and the domain's issuer (its own name,
 * or the login host it delegates to). Assertions of domains this authority
 * does not serve are refused ("not a domain of this authority"). Replays
 * are not stopped: an assertion verifies as often as it is shown until it
 * expires, as with every BrowserID verifier (a relying party keeps its own
 * record of the assertions it accepted).
 */
#ifndef AUTHORITY_API_VERIFY_H
#define AUTHORITY_API_VERIFY_H

struct req;

/* Persona's limit on a verification request's body. */
#define VERIFY_MAX_BODY_BYTES (10 * 1024)

void api_verify(struct req *r);

#endif
