/*
 * fuzz_cookie.c - the Cookie header (session_cookie_find) and the session
 * token it carries (session_tokens_from).
 *
 * Invariants: a found token has exactly SESSION_TOKEN_CHARS characters of
 * the token alphabet and appears in the header as SESSION_COOKIE=token; a
 * token that session_tokens_from accepts derives a CSRF token that matches
 * itself and not a different one, the same whether hashed statelessly or
 * through a digester.
 */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "auth/token.h"

int
fuzz_main(const uint8_t *data, size_t len)
{
	char token[SESSION_TOKEN_CHARS + 1], *hdr, *needle;
	struct session_tokens t, u;
	vep_digester *dg;
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
		if (session_tokens_from(NULL, token, &t) == 0) {
			FUZZ_CHECK(session_csrf_matches(&t, t.csrf));
			FUZZ_CHECK(!session_csrf_matches(&t, "x"));
			/* The loops' digester derives the same bytes. */
			FUZZ_CHECK((dg = vep_digester_new()) != NULL);
			FUZZ_CHECK(session_tokens_from(dg, token, &u) == 0);
			FUZZ_CHECK(strcmp(u.csrf, t.csrf) == 0);
			FUZZ_CHECK(memcmp(u.token_hash, t.token_hash, sizeof(t.token_hash)) == 0);
			vep_digester_free(dg);
			session_tokens_wipe(&u);
			session_tokens_wipe(&t);
		}
	}
	free(hdr);
	return 0;
}
