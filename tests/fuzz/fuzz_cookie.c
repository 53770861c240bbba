/*
 * fuzz_cookie.c - the Cookie header (session_cookie_find) and the session
 * token it carries (session_tokens_from).
 *
 * Invariants: a found token has exactly SESSION_TOKEN_CHARS characters of
 * the token alphabet and appears in the header as SESSION_COOKIE=token; a
 * token that session_tokens_from accepts derives a CSRF token that matches
 * itself and not a different one.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "auth/token.h"

int
fuzz_main(const uint8_t *data, size_t len)
{
	char token[SESSION_TOKEN_CHARS + 1], *hdr, *needle;
	struct session_tokens t;
	size_t nlen;

	if ((hdr = malloc(len + 1)) == NULL)
		return 0;
	memcpy(hdr, data, len);
	hdr[len] = '\0';
	if (session_cookie_find(hdr, token) == 0) {
		FUZZ_CHECK(strlen(token) == SESSION_TOKEN_CHARS);
		nlen = strlen(SESSION_COOKIE) + 1 + SESSION_TOKEN_CHARS;
		if ((needle = malloc(nlen + 1)) != NULL) {
			strcpy(needle, SESSION_COOKIE);
			strcat(needle, "=");
			strcat(needle, token);
			FUZZ_CHECK(strstr(hdr, needle) != NULL);
			free(needle);
		}
		if (session_tokens_from(token, &t) == 0) {
			FUZZ_CHECK(session_csrf_matches(&t, t.csrf));
			FUZZ_CHECK(!session_csrf_matches(&t, "x"));
			session_tokens_wipe(&t);
		}
	}
	free(hdr);
	return 0;
}
