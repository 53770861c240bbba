/*
 * api/certificate.h - POST /api/cert: certify the public key a signed-in browser made.
 *
 * Body: {"pubkey": <BrowserID public key, as an object or as the JSON text
 * a user agent's genKeyPair returns>, "duration": <seconds, optional>,
 * "email": <optional; when present it must be the session's address>}.
 * Answer: 200 {"cert","email","iat","exp"} (times in ms since the epoch).
 *
 * Rules (docs/PROTOCOL.md): the key is parsed and checked by libvep (a wrong
 * algorithm, size or value is a 400 that says which); the lifetime is the
 * request's duration (default: the configured maximum), capped by
 * cert_max_duration and VEP_CERT_MAX_LIFETIME_MS, and at least
 * CERT_MIN_DURATION_S (issuance/issuance.h; user agents drop certificates with under 2 minutes
 * left); iat is back-dated by CERT_BACKDATE_MS because verifiers allow no
 * clock skew; the email is exactly the session's address, signed by that
 * address's domain key. The audit row is committed before the answer: when
 * it cannot be, the answer is 503 and the certificate is never sent.
 *
 * Must never sign a key it did not parse itself (the certificate embeds
 * libvep's canonical serialisation, not the client's bytes).
 */
#ifndef AUTHORITY_API_CERTIFICATE_H
#define AUTHORITY_API_CERTIFICATE_H

struct req;
struct signin_session;

void api_certificate(struct req *r, const struct signin_session *s);

#endif
