/*
 * test_db_session.c - sessions on a real SQLite file: create and look up,
 * idle expiry and its sliding, absolute expiry, delete, the per-address cap,
 * bounded purge, argument limits, the administrator's list and revoke,
 * and that only hashes reach the disk (the
 * raw token bytes must not appear in the database or its WAL).
 */
#include <openssl/evp.h>

#include "store/db.h"
#include "store/sessions.h"
#include "db_testutil.h"
#include "harness.h"

static char *dir;
static struct db *db;

/* One integer from a second, raw connection to the file. */
static long long
raw_count(const char *sql)
{
	return tu_store_int(dir, sql);
}

/* Sessions the file holds for email (a literal without quotes). */
static long long
sessions_of(const char *email)
{
	char sql[160];

	(void)snprintf(sql, sizeof(sql),
	    "SELECT count(*) FROM sessions WHERE email = '%s'", email);
	return raw_count(sql);
}

/* A distinct 32-byte "hash" per n (no crypto needed where only identity
 * matters). */
static void
fake_hash(uint8_t h[DB_SESSION_HASH_BYTES], unsigned n, uint8_t salt)
{
	size_t i;

	for (i = 0; i < DB_SESSION_HASH_BYTES; i++)
		h[i] = (uint8_t)(n >> (8 * (i % 4))) ^ (uint8_t)(i * 37) ^ salt;
}

static void
test_create_lookup(void)
{
	uint8_t tok[32], other[32];
	struct db_session s;
	int64_t id = 0;

	fake_hash(tok, 1, 0);
	fake_hash(other, 2, 0);
	ASSERT_EQ(db_session_create(db, "alice@example.com", 1000, 600, 3600, tok, &id), 0);
	ASSERT_TRUE(id > 0);
	ASSERT_EQ(db_session_lookup(db, tok, 1001, &s), 0);
	ASSERT_EQ(s.id, id);
	ASSERT_STREQ(s.email, "alice@example.com");
	ASSERT_EQ(s.created, 1000);
	ASSERT_EQ(s.last_seen, 1000);
	ASSERT_EQ(s.idle_s, 600);
	ASSERT_EQ(s.absolute_at, 4600);
	ASSERT_EQ(s.expires_at, 1600);
	/* The row holds the token's hash and nothing of the CSRF token, which
	 * auth/token.c derives from the token whenever it is needed. */
	ASSERT_EQ(sessions_of("alice@example.com"), 1);
	ASSERT_EQ(raw_count(tu_pg() != NULL ?
	    "SELECT count(*) FROM information_schema.columns"
	    " WHERE table_name = 'sessions' AND column_name LIKE '%csrf%'" :
	    "SELECT count(*) FROM pragma_table_info('sessions') WHERE name LIKE '%csrf%'"), 0);
	ASSERT_EQ(raw_count(tu_pg() != NULL ?
	    "SELECT count(*) FROM information_schema.columns"
	    " WHERE table_name = 'sessions' AND column_name = 'token_hash'" :
	    "SELECT count(*) FROM pragma_table_info('sessions') WHERE name = 'token_hash'"), 1);
	ASSERT_EQ(db_session_lookup(db, other, 1001, &s), DB_ERR_NOTFOUND);
	ASSERT_EQ(s.id, 0);
	ASSERT_EQ(s.email[0], '\0');
	/* The same token hash twice is refused, not silently replaced. */
	ASSERT_EQ(db_session_create(db, "bob@example.com", 1000, 600, 3600, tok, NULL),
	    VEP_ERR_EXISTS);
	ASSERT_EQ(db_session_delete(db, tok), 0);
}

static void
test_idle_expiry_and_touch(void)
{
	uint8_t tok[32];
	struct db_session s;

	fake_hash(tok, 10, 0);
	ASSERT_EQ(db_session_create(db, "a@example.com", 1000, 600, 3600, tok, NULL), 0);
	ASSERT_EQ(db_session_lookup(db, tok, 1599, &s), 0);
	ASSERT_EQ(db_session_lookup(db, tok, 1600, &s), DB_ERR_EXPIRED);

	/* Used at 1100: the idle timeout slides to 1700. */
	ASSERT_EQ(db_session_lookup(db, tok, 1100, &s), 0);
	ASSERT_EQ(db_session_touch(db, &s, 1100), 0);
	ASSERT_EQ(s.last_seen, 1100);
	ASSERT_EQ(s.expires_at, 1700);
	ASSERT_EQ(db_session_lookup(db, tok, 1650, &s), 0);
	ASSERT_EQ(s.last_seen, 1100);
	/* Within DB_SESSION_TOUCH_MIN_S of the last touch: no write. */
	ASSERT_EQ(db_session_touch(db, &s, 1100 + DB_SESSION_TOUCH_MIN_S - 1), 0);
	ASSERT_EQ(db_session_lookup(db, tok, 1650, &s), 0);
	ASSERT_EQ(s.last_seen, 1100);
	ASSERT_EQ(db_session_touch(db, &s, 1100 + DB_SESSION_TOUCH_MIN_S), 0);
	ASSERT_EQ(db_session_lookup(db, tok, 1650, &s), 0);
	ASSERT_EQ(s.last_seen, 1100 + DB_SESSION_TOUCH_MIN_S);
	ASSERT_EQ(db_session_lookup(db, tok, 1700 + DB_SESSION_TOUCH_MIN_S, &s), DB_ERR_EXPIRED);
	ASSERT_EQ(db_session_delete(db, tok), 0);
}

static void
test_absolute_expiry(void)
{
	uint8_t tok[32];
	struct db_session s, keep;
	int64_t now;

	fake_hash(tok, 20, 0);
	ASSERT_EQ(db_session_create(db, "a@example.com", 1000, 600, 3600, tok, NULL), 0);
	/* Used every 500 s: never idle, yet dead at created + 3600. */
	for (now = 1500; now < 4600; now += 500) {
		ASSERT_EQ(db_session_lookup(db, tok, now, &s), 0);
		ASSERT_EQ(db_session_touch(db, &s, now), 0);
		ASSERT_TRUE(s.expires_at <= 4600);
	}
	ASSERT_EQ(s.expires_at, 4600);
	ASSERT_EQ(db_session_lookup(db, tok, 4599, &s), 0);
	keep = s;
	ASSERT_EQ(db_session_lookup(db, tok, 4600, &s), DB_ERR_EXPIRED);
	/* Touching a dead session does not revive it. */
	ASSERT_EQ(db_session_touch(db, &keep, 4600), DB_ERR_NOTFOUND);
	ASSERT_EQ(db_session_lookup(db, tok, 4600, &s), DB_ERR_EXPIRED);
	ASSERT_EQ(db_session_delete(db, tok), 0);
}

static void
test_delete(void)
{
	uint8_t tok[32];
	struct db_session s;
	unsigned i;

	fake_hash(tok, 30, 0);
	ASSERT_EQ(db_session_create(db, "a@example.com", 1000, 600, 3600, tok, NULL), 0);
	ASSERT_EQ(db_session_lookup(db, tok, 1001, &s), 0);
	ASSERT_EQ(db_session_delete(db, tok), 0);
	ASSERT_EQ(db_session_lookup(db, tok, 1001, &s), DB_ERR_NOTFOUND);
	ASSERT_EQ(db_session_delete(db, tok), DB_ERR_NOTFOUND);
	ASSERT_EQ(db_session_touch(db, &s, 2000), VEP_ERR_ARG);   /* cleared by lookup */

	for (i = 0; i < 3; i++) {
		fake_hash(tok, 40 + i, 0);
		ASSERT_EQ(db_session_create(db, "everywhere@example.com", 1000, 600, 3600,
		    tok, NULL), 0);
	}
	/* Ending one session of an address leaves its others alone. */
	ASSERT_EQ(sessions_of("everywhere@example.com"), 3);
	for (i = 0; i < 3; i++) {
		fake_hash(tok, 40 + i, 0);
		ASSERT_EQ(db_session_delete(db, tok), 0);
		ASSERT_EQ(sessions_of("everywhere@example.com"), 2 - (long long)i);
	}
	ASSERT_EQ(db_session_lookup(db, tok, 1001, &s), DB_ERR_NOTFOUND);
}

static void
test_per_email_cap(void)
{
	uint8_t first[32], tok[32];
	struct db_session s;
	unsigned i;

	fake_hash(first, 1000, 0);
	ASSERT_EQ(db_session_create(db, "cap@example.com", 1000, 600, 3600, first, NULL), 0);
	for (i = 1; i < DB_SESSIONS_PER_EMAIL_MAX; i++) {
		fake_hash(tok, 1000 + i, 0);
		ASSERT_EQ(db_session_create(db, "cap@example.com", 1000 + i, 600, 3600,
		    tok, NULL), 0);
	}
	ASSERT_EQ(db_session_lookup(db, first, 1100, &s), 0);
	/* One more ends the oldest, and only it. */
	fake_hash(tok, 1000 + DB_SESSIONS_PER_EMAIL_MAX, 0);
	ASSERT_EQ(db_session_create(db, "cap@example.com", 1100, 600, 3600, tok, NULL), 0);
	ASSERT_EQ(db_session_lookup(db, first, 1100, &s), DB_ERR_NOTFOUND);
	fake_hash(tok, 1001, 0);
	ASSERT_EQ(db_session_lookup(db, tok, 1100, &s), 0);
	ASSERT_EQ(sessions_of("cap@example.com"), DB_SESSIONS_PER_EMAIL_MAX);
	for (i = 1; i <= DB_SESSIONS_PER_EMAIL_MAX; i++) {
		fake_hash(tok, 1000 + i, 0);
		ASSERT_EQ(db_session_delete(db, tok), 0);
	}
	ASSERT_EQ(sessions_of("cap@example.com"), 0);
}

static void
test_purge_bounded(void)
{
	uint8_t tok[32], live[32];
	struct db_session s;
	char email[64];
	int64_t n = -1;
	unsigned i;

	for (i = 0; i < 10; i++) {
		fake_hash(tok, 2000 + i, 0);
		(void)snprintf(email, sizeof(email), "u%u@example.com", i);
		ASSERT_EQ(db_session_create(db, email, 1000, 60, 3600, tok, NULL), 0);
	}
	fake_hash(live, 3000, 0);
	ASSERT_EQ(db_session_create(db, "live@example.com", 1000, 6000, 6000, live, NULL), 0);
	ASSERT_EQ(db_session_purge(db, 5000, 0, &n), VEP_ERR_ARG);
	ASSERT_EQ(db_session_purge(db, 5000, 4, &n), 0);
	ASSERT_EQ(n, 4);
	ASSERT_EQ(db_session_purge(db, 5000, 4, &n), 0);
	ASSERT_EQ(n, 4);
	ASSERT_EQ(db_session_purge(db, 5000, 4, &n), 0);
	ASSERT_EQ(n, 2);
	ASSERT_EQ(db_session_purge(db, 5000, 4, &n), 0);
	ASSERT_EQ(n, 0);
	ASSERT_EQ(db_session_lookup(db, live, 5000, &s), 0);
	ASSERT_EQ(db_session_delete(db, live), 0);
}

static void
test_limits(void)
{
	uint8_t tok[32];
	char email[DB_SESSION_EMAIL_MAX + 2];
	struct db_session s;

	fake_hash(tok, 4000, 0);
	memset(email, 'a', sizeof(email));
	memcpy(email + DB_SESSION_EMAIL_MAX - 12, "@example.com", 12);
	email[DB_SESSION_EMAIL_MAX] = '\0';
	ASSERT_EQ(db_session_create(db, email, 1000, 600, 3600, tok, NULL), 0);
	ASSERT_EQ(db_session_lookup(db, tok, 1001, &s), 0);
	ASSERT_EQ(strlen(s.email), DB_SESSION_EMAIL_MAX);
	ASSERT_EQ(db_session_delete(db, tok), 0);
	email[DB_SESSION_EMAIL_MAX] = 'm';
	email[DB_SESSION_EMAIL_MAX + 1] = '\0';
	ASSERT_EQ(db_session_create(db, email, 1000, 600, 3600, tok, NULL), VEP_ERR_TOOBIG);

	ASSERT_EQ(db_session_create(db, "a@example.com", 1000, 0, 3600, tok, NULL), VEP_ERR_ARG);
	ASSERT_EQ(db_session_create(db, "a@example.com", 1000, 600, 0, tok, NULL), VEP_ERR_ARG);
	ASSERT_EQ(db_session_create(db, "a@example.com", 1000, DB_SESSION_LIFETIME_MAX_S + 1,
	    3600, tok, NULL), VEP_ERR_ARG);
	ASSERT_EQ(db_session_create(db, "a@example.com", 1000, 600,
	    DB_SESSION_LIFETIME_MAX_S + 1, tok, NULL), VEP_ERR_ARG);
	ASSERT_EQ(db_session_create(db, "a@example.com", 1000, DB_SESSION_LIFETIME_MAX_S,
	    DB_SESSION_LIFETIME_MAX_S, tok, NULL), 0);
	ASSERT_EQ(db_session_delete(db, tok), 0);
	ASSERT_EQ(db_session_create(db, "", 1000, 600, 3600, tok, NULL), VEP_ERR_ARG);
	ASSERT_EQ(db_session_create(db, NULL, 1000, 600, 3600, tok, NULL), VEP_ERR_ARG);
	ASSERT_EQ(db_session_create(NULL, "a@example.com", 1000, 600, 3600, tok, NULL),
	    VEP_ERR_ARG);
	ASSERT_EQ(db_session_lookup(db, NULL, 1000, &s), VEP_ERR_ARG);
}

static int
contains(const unsigned char *hay, size_t n, const uint8_t *needle, size_t m)
{
	return hay != NULL && memmem(hay, n, needle, m) != NULL;
}

/* Only the token's hash is stored: the raw token never reaches the database
 * file or its WAL, while its hash does (so the scan can see); nothing of a
 * CSRF token, neither it nor its hash, is ever there. */
static void
test_only_hashes_on_disk(void)
{
	static const char token[] = "RAW-SESSION-TOKEN-0123456789abcdefXYZ";
	static const char csrf_tok[] = "RAW-CSRF-TOKEN-fedcba9876543210QRS";
	uint8_t th[32], ch[32];
	unsigned int hl = 0;
	struct db_session s;
	char *path = tu_path(dir, DB_FILE_NAME), *wal = tu_path(dir, DB_FILE_NAME "-wal");
	unsigned char *a, *b;
	size_t alen, blen;
	int found_hash;

	ASSERT_EQ(EVP_Digest(token, strlen(token), th, &hl, EVP_sha256(), NULL), 1);
	ASSERT_EQ(EVP_Digest(csrf_tok, strlen(csrf_tok), ch, &hl, EVP_sha256(), NULL), 1);
	ASSERT_EQ(db_session_create(db, "hash@example.com", 1000, 600, 3600, th, NULL), 0);
	ASSERT_EQ(db_session_lookup(db, th, 1001, &s), 0);
	if (tu_pg() != NULL) {
		/* The server's files are not ours to scan: what a reader of the
		 * tables sees instead. The row holds the hash; no column is
		 * the token or anything of a CSRF token. */
		ASSERT_EQ(raw_count("SELECT count(*) FROM sessions"
		    " WHERE email = 'hash@example.com' AND length(token_hash) = 32"), 1);
		ASSERT_EQ(raw_count("SELECT count(*) FROM sessions s"
		    " WHERE position('RAW-SESSION-TOKEN' in s::text) > 0"
		    " OR position('RAW-CSRF' in s::text) > 0"), 0);
		ASSERT_EQ(db_session_delete(db, th), 0);
		free(path);
		free(wal);
		return;
	}

	a = tu_read_file(path, &alen);
	b = tu_read_file(wal, &blen);
	ASSERT_TRUE(a != NULL);
	found_hash = contains(a, alen, th, 32) || contains(b, blen, th, 32);
	ASSERT_TRUE(found_hash);
	ASSERT_TRUE(!contains(a, alen, (const uint8_t *)token, strlen(token)));
	ASSERT_TRUE(!contains(b, blen, (const uint8_t *)token, strlen(token)));
	ASSERT_TRUE(!contains(a, alen, (const uint8_t *)csrf_tok, strlen(csrf_tok)));
	ASSERT_TRUE(!contains(b, blen, (const uint8_t *)csrf_tok, strlen(csrf_tok)));
	ASSERT_TRUE(!contains(a, alen, ch, 32));
	ASSERT_TRUE(!contains(b, blen, ch, 32));
	free(a);
	free(b);
	free(path);
	free(wal);
}

/* Sessions survive a restart (they are on disk, not in memory). */
struct listed {
	int64_t ids[8];
	char emails[8][DB_SESSION_EMAIL_MAX + 1];
	size_t n;
};

static int
list_cb(const struct db_session *s, void *arg)
{
	struct listed *l = arg;

	if (strncmp(s->email, "list-", 5) != 0 || l->n == 8)
		return 0;
	l->ids[l->n] = s->id;
	(void)snprintf(l->emails[l->n], sizeof(l->emails[0]), "%s", s->email);
	l->n++;
	return 0;
}

static int
stop_cb(const struct db_session *s, void *arg)
{
	(void)s;
	(void)arg;
	return 7;
}

/* An administrator's listing and revocation: live sessions only, by
 * address, and a revoked token is no longer found. */
static void
test_list_revoke(void)
{
	uint8_t h[4][DB_SESSION_HASH_BYTES];
	int64_t ids[4], now = 5000000;
	struct db_session s;
	struct listed l;
	unsigned i;

	for (i = 0; i < 4; i++)
		fake_hash(h[i], 900 + i, 0x5a);
	ASSERT_EQ(db_session_create(db, "list-b@example.com", now, 3600, 86400, h[0], &ids[0]),
	    0);
	ASSERT_EQ(db_session_create(db, "list-a@example.com", now + 1, 3600, 86400, h[1],
	    &ids[1]), 0);
	ASSERT_EQ(db_session_create(db, "list-a@example.com", now + 2, 3600, 86400, h[2],
	    &ids[2]), 0);
	/* Dead by now + 10: not listed. */
	ASSERT_EQ(db_session_create(db, "list-a@example.com", now, 5, 86400, h[3], &ids[3]), 0);

	memset(&l, 0, sizeof(l));
	ASSERT_EQ(db_session_list(db, NULL, now + 10, list_cb, &l), 0);
	ASSERT_EQ(l.n, 3);
	ASSERT_STREQ(l.emails[0], "list-a@example.com");
	ASSERT_EQ(l.ids[0], ids[1]);
	ASSERT_EQ(l.ids[1], ids[2]);
	ASSERT_STREQ(l.emails[2], "list-b@example.com");
	memset(&l, 0, sizeof(l));
	ASSERT_EQ(db_session_list(db, "list-b@example.com", now + 10, list_cb, &l), 0);
	ASSERT_EQ(l.n, 1);
	ASSERT_EQ(l.ids[0], ids[0]);
	ASSERT_EQ(db_session_list(db, NULL, now + 10, stop_cb, NULL), 7);

	ASSERT_EQ(db_session_revoke(db, ids[1]), 0);
	ASSERT_EQ(db_session_lookup(db, h[1], now + 10, &s), DB_ERR_NOTFOUND);
	ASSERT_EQ(db_session_lookup(db, h[2], now + 10, &s), 0);
	ASSERT_EQ(db_session_revoke(db, ids[1]), DB_ERR_NOTFOUND);
	ASSERT_EQ(db_session_revoke(db, 0), VEP_ERR_ARG);
	ASSERT_EQ(db_session_revoke(NULL, ids[2]), VEP_ERR_ARG);
	ASSERT_EQ(db_session_list(db, NULL, now, NULL, NULL), VEP_ERR_ARG);
	memset(&l, 0, sizeof(l));
	ASSERT_EQ(db_session_list(db, "list-a@example.com", now + 10, list_cb, &l), 0);
	ASSERT_EQ(l.n, 1);
}

static void
test_survives_reopen(void)
{
	uint8_t tok[32];
	struct db_session s;

	fake_hash(tok, 5000, 0);
	ASSERT_EQ(db_session_create(db, "r@example.com", 1000, 600, 3600, tok, NULL), 0);
	db_close(db);
	db = NULL;
	ASSERT_EQ(tu_db_open(dir, NULL, &db), 0);
	ASSERT_EQ(db_session_lookup(db, tok, 1001, &s), 0);
	ASSERT_STREQ(s.email, "r@example.com");
	ASSERT_EQ(s.expires_at, 1600);
}

int
main(void)
{
	if ((dir = tu_mkdtemp()) == NULL)
		return 77;
	if (tu_db_open(dir, NULL, &db) != 0) {
		fprintf(stderr, "db_open failed\n");
		tu_rmdir(dir);
		return 1;
	}
	RUN(test_create_lookup);
	RUN(test_idle_expiry_and_touch);
	RUN(test_absolute_expiry);
	RUN(test_delete);
	RUN(test_per_email_cap);
	RUN(test_purge_bounded);
	RUN(test_limits);
	RUN(test_only_hashes_on_disk);
	RUN(test_list_revoke);
	RUN(test_survives_reopen);
	db_close(db);
	tu_rmdir(dir);
	return harness_done();
}
