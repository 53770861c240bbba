/* test_authority_session.c - authority/auth/token.c: tokens, the CSRF token's
 * derivation, the Cookie header parser and Set-Cookie values. */
#include <string.h>

#include "digest.h"
#include "err.h"
#include "harness.h"
#include "auth/token.h"

static void
test_new_tokens(void)
{
	struct session_tokens a, b, c;
	uint8_t h[VEP_SHA256_BYTES];
	size_t i;

	ASSERT_EQ(session_tokens_new(&a), 0);
	ASSERT_EQ(session_tokens_new(&b), 0);
	ASSERT_EQ(strlen(a.token), SESSION_TOKEN_CHARS);
	ASSERT_EQ(strlen(a.csrf), SESSION_TOKEN_CHARS);
	ASSERT_TRUE(strcmp(a.token, b.token) != 0);
	ASSERT_TRUE(strcmp(a.token, a.csrf) != 0);
	for (i = 0; i < SESSION_TOKEN_CHARS; i++)
		ASSERT_TRUE(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789-_", a.token[i]) != NULL);
	/* What the database stores is the SHA-256 of each token. */
	ASSERT_EQ(vep_sha256(a.token, SESSION_TOKEN_CHARS, h), 0);
	ASSERT_MEMEQ(h, a.token_hash, sizeof(h));
	ASSERT_EQ(vep_sha256(a.csrf, SESSION_TOKEN_CHARS, h), 0);
	ASSERT_MEMEQ(h, a.csrf_hash, sizeof(h));
	/* The presented token gives back the same CSRF token and hashes. */
	ASSERT_EQ(session_tokens_from(a.token, &c), 0);
	ASSERT_STREQ(c.csrf, a.csrf);
	ASSERT_MEMEQ(c.token_hash, a.token_hash, sizeof(h));
	session_tokens_wipe(&c);
	ASSERT_EQ(c.token[0], 0);
	ASSERT_EQ(c.csrf_hash[0] | c.csrf_hash[31], 0);
}

static void
test_from_rejects(void)
{
	struct session_tokens t;
	char s[80];

	memset(s, 'A', sizeof(s));
	s[SESSION_TOKEN_CHARS - 1] = '\0';
	ASSERT_EQ(session_tokens_from(s, &t), VEP_ERR_INVALID);   /* short */
	s[SESSION_TOKEN_CHARS - 1] = 'A';
	s[SESSION_TOKEN_CHARS + 1] = '\0';
	ASSERT_EQ(session_tokens_from(s, &t), VEP_ERR_INVALID);   /* long */
	s[SESSION_TOKEN_CHARS] = '\0';
	ASSERT_EQ(session_tokens_from(s, &t), 0);
	s[5] = '=';
	ASSERT_EQ(session_tokens_from(s, &t), VEP_ERR_INVALID);   /* not base64url */
	s[5] = '+';
	ASSERT_EQ(session_tokens_from(s, &t), VEP_ERR_INVALID);
	ASSERT_EQ(session_tokens_from("", &t), VEP_ERR_INVALID);
}

static void
test_csrf_matches(void)
{
	struct session_tokens t;
	char wrong[SESSION_TOKEN_CHARS + 2];

	ASSERT_EQ(session_tokens_new(&t), 0);
	ASSERT_EQ(session_csrf_matches(&t, t.csrf), 1);
	ASSERT_EQ(session_csrf_matches(&t, NULL), 0);
	ASSERT_EQ(session_csrf_matches(&t, ""), 0);
	memcpy(wrong, t.csrf, sizeof(t.csrf));
	wrong[SESSION_TOKEN_CHARS - 1] ^= 1;
	ASSERT_EQ(session_csrf_matches(&t, wrong), 0);
	memcpy(wrong, t.csrf, sizeof(t.csrf));
	strcat(wrong, "A");
	ASSERT_EQ(session_csrf_matches(&t, wrong), 0);
	ASSERT_EQ(session_csrf_matches(&t, t.token), 0);
}

static void
test_cookie_find(void)
{
	char tok[SESSION_TOKEN_CHARS + 1], h[300];
	const char *v = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ";

	ASSERT_EQ(strlen(v), SESSION_TOKEN_CHARS);
	ASSERT_EQ(session_cookie_find(NULL, tok), VEP_ERR_NOKEY);
	ASSERT_EQ(session_cookie_find("", tok), VEP_ERR_NOKEY);
	ASSERT_EQ(session_cookie_find("a=b; c=d", tok), VEP_ERR_NOKEY);
	snprintf(h, sizeof(h), SESSION_COOKIE "=%s", v);
	ASSERT_EQ(session_cookie_find(h, tok), 0);
	ASSERT_STREQ(tok, v);
	snprintf(h, sizeof(h), "a=b;  " SESSION_COOKIE "=%s ;c=d", v);
	ASSERT_EQ(session_cookie_find(h, tok), 0);
	ASSERT_STREQ(tok, v);
	/* A cookie whose name merely ends or starts like ours is not ours. */
	snprintf(h, sizeof(h), "x" SESSION_COOKIE "=%s; " SESSION_COOKIE "x=%s", v, v);
	ASSERT_EQ(session_cookie_find(h, tok), VEP_ERR_NOKEY);
	/* Twice (a planted duplicate): refused. */
	snprintf(h, sizeof(h), SESSION_COOKIE "=%s; " SESSION_COOKIE "=%s", v, v);
	ASSERT_EQ(session_cookie_find(h, tok), VEP_ERR_INVALID);
	ASSERT_EQ(tok[0], 0);
	ASSERT_EQ(session_cookie_find(SESSION_COOKIE "=short", tok), VEP_ERR_INVALID);
	ASSERT_EQ(session_cookie_find(SESSION_COOKIE "=", tok), VEP_ERR_INVALID);
}

static void
test_set_cookie(void)
{
	char c[SESSION_COOKIE_BUFSZ];
	struct session_tokens t;

	ASSERT_EQ(session_tokens_new(&t), 0);
	session_cookie_set(c, t.token, 86400);
	ASSERT_TRUE(strncmp(c, "__Host-vep_session=", 19) == 0);
	ASSERT_TRUE(strstr(c, "; Path=/;") != NULL);
	ASSERT_TRUE(strstr(c, "; Max-Age=86400;") != NULL);
	ASSERT_TRUE(strstr(c, "; Secure") != NULL);
	ASSERT_TRUE(strstr(c, "; HttpOnly") != NULL);
	ASSERT_TRUE(strstr(c, "; SameSite=None") != NULL);
	ASSERT_TRUE(strstr(c, "Domain") == NULL);
	ASSERT_TRUE(strstr(session_cookie_clear(), "Max-Age=0") != NULL);
	ASSERT_TRUE(strncmp(session_cookie_clear(), "__Host-vep_session=;", 20) == 0);
}

int
main(void)
{
	RUN(test_new_tokens);
	RUN(test_from_rejects);
	RUN(test_csrf_matches);
	RUN(test_cookie_find);
	RUN(test_set_cookie);
	return harness_done();
}
