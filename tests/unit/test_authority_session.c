/* test_authority_session.c - authority/auth/token.c: tokens, the CSRF token's
 * derivation, the Cookie header parser and Set-Cookie values; and that a
 * session stored by a version-2 database (which kept a hash of the CSRF
 * token) still signs in after the migration that dropped it. */
#include <string.h>
#include <time.h>

#include "b64url.h"
#include "digest.h"
#include "err.h"
#include "secmem.h"
#include "db_testutil.h"
#include "harness.h"
#include "migrations.h"
#include "auth/token.h"
#include "store/db.h"
#include "store/sessions.h"

static void
test_new_tokens(void)
{
	struct session_tokens a, b, c;
	uint8_t h[VEP_SHA256_BYTES];
	vep_digester *dg;
	char *csrf;
	size_t i;

	ASSERT_EQ(session_tokens_new(NULL, &a), 0);
	ASSERT_EQ(session_tokens_new(NULL, &b), 0);
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
	/* The CSRF token is HMAC-SHA256(token, "vep-csrf"), nowhere stored. */
	ASSERT_EQ(vep_hmac_sha256(a.token, SESSION_TOKEN_CHARS, "vep-csrf", 8, h), 0);
	csrf = vep_b64url_encode(h, sizeof(h));
	ASSERT_STREQ(csrf, a.csrf);
	vep_free_secret_str(csrf);
	/* The presented token gives back the same CSRF token and hashes. */
	ASSERT_EQ(session_tokens_from(NULL, a.token, &c), 0);
	ASSERT_STREQ(c.csrf, a.csrf);
	ASSERT_MEMEQ(c.token_hash, a.token_hash, sizeof(h));
	session_tokens_wipe(&c);
	/* And through a digester (the loops' hot path), the same bytes. */
	dg = vep_digester_new();
	ASSERT_TRUE(dg != NULL);
	for (int k = 0; k < 3; k++) {
		ASSERT_EQ(session_tokens_from(dg, k == 1 ? b.token : a.token, &c), 0);
		ASSERT_STREQ(c.csrf, k == 1 ? b.csrf : a.csrf);
		ASSERT_MEMEQ(c.token_hash, k == 1 ? b.token_hash : a.token_hash, sizeof(h));
		session_tokens_wipe(&c);
	}
	ASSERT_EQ(session_tokens_new(dg, &c), 0);
	ASSERT_EQ(vep_sha256(c.token, SESSION_TOKEN_CHARS, h), 0);
	ASSERT_MEMEQ(h, c.token_hash, sizeof(h));
	vep_digester_free(dg);
	session_tokens_wipe(&c);
	ASSERT_EQ(session_tokens_from(NULL, a.token, &c), 0);
	session_tokens_wipe(&c);
	ASSERT_EQ(c.token[0], 0);
	ASSERT_EQ(c.csrf[0], 0);
	ASSERT_EQ(c.token_hash[0] | c.token_hash[31], 0);
}

static void
test_from_rejects(void)
{
	struct session_tokens t;
	char s[80];

	memset(s, 'A', sizeof(s));
	s[SESSION_TOKEN_CHARS - 1] = '\0';
	ASSERT_EQ(session_tokens_from(NULL, s, &t), VEP_ERR_INVALID);   /* short */
	s[SESSION_TOKEN_CHARS - 1] = 'A';
	s[SESSION_TOKEN_CHARS + 1] = '\0';
	ASSERT_EQ(session_tokens_from(NULL, s, &t), VEP_ERR_INVALID);   /* long */
	s[SESSION_TOKEN_CHARS] = '\0';
	ASSERT_EQ(session_tokens_from(NULL, s, &t), 0);
	s[5] = '=';
	ASSERT_EQ(session_tokens_from(NULL, s, &t), VEP_ERR_INVALID);   /* not base64url */
	s[5] = '+';
	ASSERT_EQ(session_tokens_from(NULL, s, &t), VEP_ERR_INVALID);
	ASSERT_EQ(session_tokens_from(NULL, "", &t), VEP_ERR_INVALID);
}

static void
test_csrf_matches(void)
{
	struct session_tokens t;
	char wrong[SESSION_TOKEN_CHARS + 2];

	ASSERT_EQ(session_tokens_new(NULL, &t), 0);
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

	ASSERT_EQ(session_tokens_new(NULL, &t), 0);
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

/* Version 2 of the schema is the last that stored sessions' csrf_hash. */
#define SCHEMA_WITH_CSRF_HASH 2

/* A database left by a version-2 binary, holding one session of t made the
 * way that binary made it, migrates; the session then signs in as
 * auth/signin.c's signin_session_find does (cookie, token, hash, lookup) and
 * its CSRF token, derived from the cookie, still matches. */
static void
test_session_survives_migration(void)
{
	static const char ins[] =
	    "INSERT INTO sessions (token_hash, csrf_hash, email, created, last_seen,"
	    " idle_s, absolute_at, expires_at) VALUES (?1, ?2, 'old@example.com',"
	    " ?3, ?3, 600, ?3 + 3600, ?3 + 600)";
	char *dir = tu_mkdtemp(), *path, cookie[SESSION_COOKIE_BUFSZ];
	char token[SESSION_TOKEN_CHARS + 1], sql[64];
	struct session_tokens t, u;
	uint8_t csrf_hash[VEP_SHA256_BYTES];
	int64_t now = (int64_t)time(NULL);
	struct db_session s;
	struct db *db = NULL;
	sqlite3_stmt *st = NULL;
	sqlite3 *raw = NULL;
	size_t i;
	int v = 0;

	ASSERT_TRUE(dir != NULL);
	path = tu_path(dir, DB_FILE_NAME);
	ASSERT_TRUE(db_schema_version_known() > SCHEMA_WITH_CSRF_HASH);
	ASSERT_EQ(sqlite3_open(path, &raw), SQLITE_OK);
	for (i = 0; i < SCHEMA_WITH_CSRF_HASH; i++)
		ASSERT_EQ(sqlite3_exec(raw, db_migrations[i].sql, NULL, NULL, NULL), SQLITE_OK);
	(void)snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", SCHEMA_WITH_CSRF_HASH);
	ASSERT_EQ(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK);
	ASSERT_EQ(session_tokens_new(NULL, &t), 0);
	ASSERT_EQ(vep_sha256(t.csrf, SESSION_TOKEN_CHARS, csrf_hash), 0);
	ASSERT_EQ(sqlite3_prepare_v2(raw, ins, -1, &st, NULL), SQLITE_OK);
	sqlite3_bind_blob(st, 1, t.token_hash, sizeof(t.token_hash), SQLITE_STATIC);
	sqlite3_bind_blob(st, 2, csrf_hash, sizeof(csrf_hash), SQLITE_STATIC);
	sqlite3_bind_int64(st, 3, now);
	ASSERT_EQ(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	sqlite3_close(raw);

	ASSERT_EQ(db_open(dir, NULL, &db), 0);
	ASSERT_EQ(db_schema_version(db, &v), 0);
	ASSERT_EQ(v, db_schema_version_known());
	session_cookie_set(cookie, t.token, 3600);
	*strchr(cookie, ';') = '\0';   /* the Cookie header the browser sends back */
	ASSERT_EQ(session_cookie_find(cookie, token), 0);
	ASSERT_EQ(session_tokens_from(NULL, token, &u), 0);
	ASSERT_EQ(db_session_lookup(db, u.token_hash, now + 1, &s), 0);
	ASSERT_STREQ(s.email, "old@example.com");
	ASSERT_EQ(s.expires_at, now + 600);
	ASSERT_EQ(session_csrf_matches(&u, t.csrf), 1);
	db_close(db);

	/* The column is gone, the row is not. */
	ASSERT_TRUE((raw = tu_raw_open(path)) != NULL);
	ASSERT_EQ(tu_raw_int(raw, "SELECT count(*) FROM pragma_table_info('sessions')"
	    " WHERE name = 'csrf_hash'"), 0);
	ASSERT_EQ(tu_raw_int(raw, "SELECT count(*) FROM sessions"), 1);
	sqlite3_close(raw);
	session_tokens_wipe(&t);
	session_tokens_wipe(&u);
	vep_memzero(token, sizeof(token));
	free(path);
	tu_rmdir(dir);
}

int
main(void)
{
	RUN(test_new_tokens);
	RUN(test_from_rejects);
	RUN(test_csrf_matches);
	RUN(test_cookie_find);
	RUN(test_set_cookie);
	RUN(test_session_survives_migration);
	return harness_done();
}
