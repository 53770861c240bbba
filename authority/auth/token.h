/*
 * auth/token.h - session tokens and the cookie that carries them.
 *
 * A session token is SESSION_TOKEN_BYTES from the CSPRNG, sent to the
 * browser base64url-encoded in the cookie SESSION_COOKIE and never stored:
 * the database keeps its SHA-256 (store/sessions.h). The CSRF token is derived
 * from it, HMAC-SHA256(token, "vep-csrf"), so GET /api/session can tell a
 * page its CSRF token again without the database holding anything of it.
 *
 * The cookie is `__Host-` prefixed (the browser then insists on Secure,
 * Path=/ and no Domain, so a sibling host cannot plant or shadow it),
 * HttpOnly, and SameSite=None: the BrowserID provisioning page runs in a
 * third-party iframe and must see it. Cross-site requests that carry it are
 * stopped by the CSRF token and the Origin check (api/router.c), not by
 * SameSite.
 *
 * Owns token generation, derivation, parsing of the Cookie header and the
 * Set-Cookie values. Must never log a token or keep one after
 * session_tokens_wipe.
 */
#ifndef AUTHORITY_AUTH_TOKEN_H
#define AUTHORITY_AUTH_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#include "digest.h"

#define SESSION_COOKIE "__Host-vep_session"
/* Random bytes in a session token. */
#define SESSION_TOKEN_BYTES 32
/* Characters of a token or CSRF token in base64url (no padding). */
#define SESSION_TOKEN_CHARS 43
/* Longest Set-Cookie value session_cookie_set writes (bytes with NUL). */
#define SESSION_COOKIE_BUFSZ 160

struct session_tokens {
	char token[SESSION_TOKEN_CHARS + 1];   /* the cookie value */
	char csrf[SESSION_TOKEN_CHARS + 1];    /* what X-CSRF-Token must carry */
	uint8_t token_hash[VEP_SHA256_BYTES];  /* what the database stores */
};

/* Draws a fresh token and derives the rest, hashing with d (digest.h), or
 * with the stateless functions when d is NULL (the same bytes either way).
 * Returns 0 or VEP_ERR_CRYPTO / VEP_ERR_NOMEM. */
int session_tokens_new(vep_digester *d, struct session_tokens *t);

/* Derives the rest from a presented token (exactly SESSION_TOKEN_CHARS
 * base64url characters), hashing as session_tokens_new does. Returns 0 or
 * VEP_ERR_INVALID (malformed), VEP_ERR_CRYPTO, VEP_ERR_NOMEM. */
int session_tokens_from(vep_digester *d, const char *token, struct session_tokens *t);

/* 1 when header (the X-CSRF-Token value, may be NULL) equals t->csrf;
 * constant time in the token's length. */
int session_csrf_matches(const struct session_tokens *t, const char *header);

/* Finds SESSION_COOKIE in a Cookie header (may be NULL) and copies its value
 * to token (SESSION_TOKEN_CHARS + 1 bytes). Returns 0, VEP_ERR_NOKEY when
 * absent, VEP_ERR_INVALID when malformed or present more than once (which
 * one would the browser mean?). */
int session_cookie_find(const char *cookie_header, char token[SESSION_TOKEN_CHARS + 1]);

/* Writes the Set-Cookie value that stores token for max_age_s seconds. */
void session_cookie_set(char out[SESSION_COOKIE_BUFSZ], const char *token, long max_age_s);

/* The Set-Cookie value that makes the browser forget the session. */
const char *session_cookie_clear(void);

/* Wipes every secret in t. */
void session_tokens_wipe(struct session_tokens *t);

#endif
