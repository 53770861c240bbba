/*
 * test_account.c - address to PAM user mapping (authority/auth/account.c): the
 * default rule, the suffix, the alias table (hits, misses, comments, CRLF,
 * errors with their line numbers, permissions, size limits), "root" refused
 * however it is reached, unsafe and oversized names, and a 50,000-entry
 * table loaded and searched.
 *
 * Alias files are written into a private temporary directory, removed at
 * the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "auth/account.h"
#include "err.h"

_Static_assert(ACCOUNT_USER_MAX == PAMP_USER_MAX_BYTES,
    "a mapped name must always fit the PAM helper's request");

static char tmpdir[64];
static unsigned file_seq;

/* Writes len bytes to a new file in tmpdir with mode; the path goes to
 * path (PATH_LEN bytes). Returns 0 or -1. */
#define PATH_LEN 128
static int
write_file_mode(const char *text, size_t len, mode_t mode, char *path)
{
	int fd;
	size_t off = 0;
	ssize_t n;

	snprintf(path, PATH_LEN, "%s/aliases-%u", tmpdir, file_seq++);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		return -1;
	while (off < len) {
		if ((n = write(fd, text + off, len - off)) <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)n;
	}
	/* fchmod, not open's mode: the umask must not hide the bits tested. */
	if (fchmod(fd, mode) != 0) {
		close(fd);
		return -1;
	}
	return close(fd);
}

static int
write_file(const char *text, char *path)
{
	return write_file_mode(text, strlen(text), 0600, path);
}

/* Loads text as an alias file with suffix; returns account_map_new's code. */
static int
load(const char *suffix, const char *text, struct account_map **m, char *err, size_t errlen)
{
	char path[PATH_LEN];

	if (write_file(text, path) != 0)
		return -100;
	return account_map_new(suffix, path, m, err, errlen);
}

/* Maps local through m; the name goes to out (ACCOUNT_USER_MAX + 1 bytes). */
static int
map(const struct account_map *m, const char *local, char *out)
{
	return account_map_user(m, local, out, ACCOUNT_USER_MAX + 1);
}

static void
test_default_rule(void)
{
	struct account_map *m = NULL;
	char out[ACCOUNT_USER_MAX + 1], err[256];

	ASSERT_EQ(account_map_new(NULL, NULL, &m, err, sizeof(err)), 0);
	ASSERT_TRUE(m != NULL);
	ASSERT_EQ(account_map_alias_count(m), 0);
	ASSERT_EQ(map(m, "alice", out), 0);
	ASSERT_STREQ(out, "alice");
	/* Byte for byte: the local part's case is kept. */
	ASSERT_EQ(map(m, "Alice.Smith+tag", out), 0);
	ASSERT_STREQ(out, "Alice.Smith+tag");
	/* An empty suffix is no suffix. */
	account_map_free(m);
	m = NULL;
	ASSERT_EQ(account_map_new("", NULL, &m, err, sizeof(err)), 0);
	ASSERT_EQ(map(m, "alice", out), 0);
	ASSERT_STREQ(out, "alice");
	account_map_free(m);
}

static void
test_suffix(void)
{
	struct account_map *m = NULL;
	char out[ACCOUNT_USER_MAX + 1], err[256];

	ASSERT_EQ(account_map_new("@example.com", NULL, &m, err, sizeof(err)), 0);
	ASSERT_EQ(map(m, "alice", out), 0);
	ASSERT_STREQ(out, "alice@example.com");
	account_map_free(m);
	m = NULL;
	/* A suffix may begin with '-': it never starts the name. */
	ASSERT_EQ(account_map_new("-ext", NULL, &m, err, sizeof(err)), 0);
	ASSERT_EQ(map(m, "bob", out), 0);
	ASSERT_STREQ(out, "bob-ext");
	/* ... but the local part still may not. */
	ASSERT_EQ(map(m, "-bob", out), VEP_ERR_INVALID);
	account_map_free(m);
	m = NULL;
	/* A suffix that would make every name unsafe is refused up front. */
	ASSERT_EQ(account_map_new("a b", NULL, &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_TRUE(m == NULL);
	ASSERT_TRUE(strstr(err, "account_suffix") != NULL);
	ASSERT_EQ(account_map_new("x/y", NULL, &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_EQ(account_map_new("x:y", NULL, &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_EQ(account_map_new("x\ny", NULL, &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_TRUE(m == NULL);
}

static void
test_aliases(void)
{
	struct account_map *m = NULL;
	char out[ACCOUNT_USER_MAX + 1], err[256];

	ASSERT_EQ(load("_x", "alice bob\ncarol   dave.smith\n", &m, err, sizeof(err)), 0);
	ASSERT_EQ(account_map_alias_count(m), 2);
	/* Hit: the alias replaces the whole name; no suffix is added. */
	ASSERT_EQ(map(m, "alice", out), 0);
	ASSERT_STREQ(out, "bob");
	ASSERT_EQ(map(m, "carol", out), 0);
	ASSERT_STREQ(out, "dave.smith");
	/* Misses fall back to local + suffix: exact bytes only. */
	ASSERT_EQ(map(m, "Alice", out), 0);
	ASSERT_STREQ(out, "Alice_x");
	ASSERT_EQ(map(m, "alic", out), 0);
	ASSERT_STREQ(out, "alic_x");
	ASSERT_EQ(map(m, "alice2", out), 0);
	ASSERT_STREQ(out, "alice2_x");
	ASSERT_EQ(map(m, "bob", out), 0);
	ASSERT_STREQ(out, "bob_x");
	account_map_free(m);
	m = NULL;
	/* An alias can move an otherwise refused local part to a real user. */
	ASSERT_EQ(load(NULL, "root postmaster\n-bob bob\n", &m, err, sizeof(err)), 0);
	ASSERT_EQ(map(m, "root", out), 0);
	ASSERT_STREQ(out, "postmaster");
	ASSERT_EQ(map(m, "-bob", out), 0);
	ASSERT_STREQ(out, "bob");
	account_map_free(m);
}

static void
test_comments_blank_crlf(void)
{
	struct account_map *m = NULL;
	char out[ACCOUNT_USER_MAX + 1], err[256];

	ASSERT_EQ(load(NULL,
	    "# who signs in as whom\n"
	    "\n"
	    "   \n"
	    "\t# indented comment\n"
	    "alice\tbob\r\n"
	    "\r\n"
	    "  carol dave  \n"
	    "erin frank", /* no final newline */
	    &m, err, sizeof(err)), 0);
	ASSERT_EQ(account_map_alias_count(m), 3);
	ASSERT_EQ(map(m, "alice", out), 0);
	ASSERT_STREQ(out, "bob");
	ASSERT_EQ(map(m, "carol", out), 0);
	ASSERT_STREQ(out, "dave");
	ASSERT_EQ(map(m, "erin", out), 0);
	ASSERT_STREQ(out, "frank");
	account_map_free(m);
	m = NULL;
	/* An empty file and a comment-only file are empty tables. */
	ASSERT_EQ(load(NULL, "", &m, err, sizeof(err)), 0);
	ASSERT_EQ(account_map_alias_count(m), 0);
	account_map_free(m);
	m = NULL;
	ASSERT_EQ(load(NULL, "# nothing yet\n", &m, err, sizeof(err)), 0);
	ASSERT_EQ(account_map_alias_count(m), 0);
	account_map_free(m);
}

static void
test_root_refused(void)
{
	struct account_map *m = NULL;
	char out[ACCOUNT_USER_MAX + 1], err[256], path[PATH_LEN];

	/* Directly, by the default rule; out is left empty. */
	ASSERT_EQ(account_map_new(NULL, NULL, &m, err, sizeof(err)), 0);
	strcpy(out, "junk");
	ASSERT_EQ(map(m, "root", out), VEP_ERR_PERM);
	ASSERT_STREQ(out, "");
	ASSERT_EQ(map(m, "Root", out), VEP_ERR_PERM);
	ASSERT_EQ(map(m, "ROOT", out), VEP_ERR_PERM);
	/* Near misses are ordinary users. */
	ASSERT_EQ(map(m, "root2", out), 0);
	ASSERT_EQ(map(m, "roo", out), 0);
	ASSERT_EQ(map(m, "rootx", out), 0);
	account_map_free(m);
	m = NULL;

	/* By splitting the name between local part and suffix. */
	ASSERT_EQ(account_map_new("ot", NULL, &m, err, sizeof(err)), 0);
	ASSERT_EQ(map(m, "ro", out), VEP_ERR_PERM);
	ASSERT_STREQ(out, "");
	ASSERT_EQ(map(m, "alice", out), 0);
	ASSERT_STREQ(out, "aliceot");
	account_map_free(m);
	m = NULL;
	ASSERT_EQ(account_map_new("t", NULL, &m, err, sizeof(err)), 0);
	ASSERT_EQ(map(m, "roo", out), VEP_ERR_PERM);
	account_map_free(m);
	m = NULL;
	ASSERT_EQ(account_map_new("root", NULL, &m, err, sizeof(err)), 0);
	ASSERT_EQ(map(m, "", out), VEP_ERR_PERM);
	ASSERT_EQ(map(m, "x", out), 0);
	ASSERT_STREQ(out, "xroot");
	account_map_free(m);
	m = NULL;

	/* Via an alias: the table itself is refused, naming the line. */
	ASSERT_EQ(write_file("alice bob\nadmin root\n", path), 0);
	ASSERT_EQ(account_map_new(NULL, path, &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_TRUE(m == NULL);
	ASSERT_TRUE(strncmp(err, path, strlen(path)) == 0);
	ASSERT_TRUE(strstr(err, ":2: ") != NULL);
	ASSERT_TRUE(strstr(err, "root") != NULL);
	ASSERT_EQ(load(NULL, "admin ROOT\n", &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_TRUE(strstr(err, ":1: ") != NULL);
	/* And an alias to a name that only becomes root with the suffix
	 * cannot happen: aliases take no suffix. */
	ASSERT_EQ(load("ot", "admin ro\n", &m, err, sizeof(err)), 0);
	ASSERT_EQ(map(m, "admin", out), 0);
	ASSERT_STREQ(out, "ro");
	ASSERT_EQ(map(m, "ro", out), VEP_ERR_PERM);
	account_map_free(m);
}

static void
test_unsafe_names(void)
{
	static const char *const bad[] = {
		"", "-alice", "-", "a/b", "../etc", "a:b", "a b", "a\tb", "a\nb",
		"a\rb", ("a\x01" "b"), "a\x7f", "\x1b[31m",
	};
	struct account_map *m = NULL;
	char out[ACCOUNT_USER_MAX + 1], err[256];
	size_t i;

	ASSERT_EQ(account_map_new(NULL, NULL, &m, err, sizeof(err)), 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		strcpy(out, "junk");
		ASSERT_EQ(map(m, bad[i], out), VEP_ERR_INVALID);
		ASSERT_STREQ(out, "");
	}
	/* What is fine: dots, plus, inner hyphen, digits, '@', UTF-8. */
	ASSERT_EQ(map(m, "a.b+c-d_9", out), 0);
	ASSERT_EQ(map(m, "a@b", out), 0);
	ASSERT_EQ(map(m, "j\xc3\xb6rg", out), 0);
	/* Programming errors. */
	ASSERT_EQ(account_map_user(NULL, "alice", out, sizeof(out)), VEP_ERR_ARG);
	ASSERT_EQ(account_map_user(m, NULL, out, sizeof(out)), VEP_ERR_ARG);
	ASSERT_EQ(account_map_user(m, "alice", NULL, 0), VEP_ERR_ARG);
	account_map_free(m);
	m = NULL;

	/* Unsafe PAM users in the table are refused with their line. */
	ASSERT_EQ(load(NULL, "alice -bob\n", &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_TRUE(strstr(err, ":1: ") != NULL);
	ASSERT_EQ(load(NULL, "# x\nalice b:ob\n", &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_TRUE(strstr(err, ":2: ") != NULL);
	ASSERT_EQ(load(NULL, "alice ../bob\n", &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_EQ(load(NULL, "alice b\x01ob\n", &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_EQ(load(NULL, "alice bob\x7f\n", &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_TRUE(m == NULL);
}

static void
test_too_long(void)
{
	struct account_map *m = NULL;
	char out[ACCOUNT_USER_MAX + 2], err[256], name[ACCOUNT_USER_MAX + 2];
	char *line;
	size_t n;
	int rc;

	memset(name, 'a', sizeof(name));
	ASSERT_EQ(account_map_new(NULL, NULL, &m, err, sizeof(err)), 0);
	/* Exactly ACCOUNT_USER_MAX bytes fits ACCOUNT_USER_MAX + 1. */
	name[ACCOUNT_USER_MAX] = '\0';
	ASSERT_EQ(account_map_user(m, name, out, ACCOUNT_USER_MAX + 1), 0);
	ASSERT_EQ(strlen(out), ACCOUNT_USER_MAX);
	/* One byte short of room: TOOBIG, out empty. */
	ASSERT_EQ(account_map_user(m, name, out, ACCOUNT_USER_MAX), VEP_ERR_TOOBIG);
	ASSERT_STREQ(out, "");
	ASSERT_EQ(account_map_user(m, "alice", out, 5), VEP_ERR_TOOBIG);
	ASSERT_EQ(account_map_user(m, "alice", out, 6), 0);
	ASSERT_STREQ(out, "alice");
	ASSERT_EQ(account_map_user(m, "alice", out, 0), VEP_ERR_TOOBIG);
	/* Over ACCOUNT_USER_MAX: TOOBIG even with room to spare. */
	name[ACCOUNT_USER_MAX] = 'a';
	name[ACCOUNT_USER_MAX + 1] = '\0';
	ASSERT_EQ(account_map_user(m, name, out, sizeof(out)), VEP_ERR_TOOBIG);
	account_map_free(m);
	m = NULL;

	/* Local part plus suffix over the limit. */
	ASSERT_EQ(account_map_new("@example.com", NULL, &m, err, sizeof(err)), 0);
	n = ACCOUNT_USER_MAX - strlen("@example.com");
	name[n] = '\0';
	ASSERT_EQ(account_map_user(m, name, out, sizeof(out)), 0);
	name[n] = 'a';
	name[n + 1] = '\0';
	ASSERT_EQ(account_map_user(m, name, out, sizeof(out)), VEP_ERR_TOOBIG);
	account_map_free(m);
	m = NULL;
	memset(name, 'a', sizeof(name));
	name[ACCOUNT_USER_MAX + 1] = '\0';
	ASSERT_EQ(account_map_new(name, NULL, &m, err, sizeof(err)), VEP_ERR_TOOBIG);
	ASSERT_TRUE(m == NULL);

	/* An alias of exactly ACCOUNT_USER_MAX bytes loads; one more does not. */
	line = malloc(ACCOUNT_USER_MAX + 16);
	ASSERT_TRUE(line != NULL);
	memset(name, 'u', sizeof(name));
	name[ACCOUNT_USER_MAX] = '\0';
	snprintf(line, ACCOUNT_USER_MAX + 16, "alice %s\n", name);
	if (load(NULL, line, &m, err, sizeof(err)) != 0) {
		free(line);
		ASSERT_TRUE(0);
	}
	if (map(m, "alice", out) != 0 || strcmp(out, name) != 0) {
		free(line);
		ASSERT_TRUE(0);
	}
	account_map_free(m);
	m = NULL;
	name[ACCOUNT_USER_MAX] = 'u';
	name[ACCOUNT_USER_MAX + 1] = '\0';
	snprintf(line, ACCOUNT_USER_MAX + 16, "alice %s\n", name);
	rc = load(NULL, line, &m, err, sizeof(err));
	free(line);
	ASSERT_EQ(rc, VEP_ERR_INVALID);
	ASSERT_TRUE(strstr(err, ":1: ") != NULL);
}

static void
test_duplicate(void)
{
	struct account_map *m = NULL;
	char err[256], path[PATH_LEN], want[PATH_LEN + 8];

	ASSERT_EQ(write_file("# table\nalice a\n\nbob b\ncarol c\nalice c2\nbob b2\n", path), 0);
	ASSERT_EQ(account_map_new(NULL, path, &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_TRUE(m == NULL);
	/* The first repeating line in the file, and where it was first. */
	snprintf(want, sizeof(want), "%s:6: ", path);
	ASSERT_TRUE(strncmp(err, want, strlen(want)) == 0);
	ASSERT_TRUE(strstr(err, "'alice'") != NULL);
	ASSERT_TRUE(strstr(err, "line 2") != NULL);
	/* Three times: the second occurrence is reported. */
	ASSERT_EQ(load(NULL, "x 1\ny 1\nx 2\nx 3\n", &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_TRUE(strstr(err, ":3: ") != NULL);
	ASSERT_TRUE(strstr(err, "line 1") != NULL);
	/* Local parts differing only in case are different local parts. */
	ASSERT_EQ(load(NULL, "alice a\nAlice b\n", &m, err, sizeof(err)), 0);
	ASSERT_EQ(account_map_alias_count(m), 2);
	account_map_free(m);
}

static void
test_bad_lines(void)
{
	static const struct {
		const char *text;
		int rc;
		const char *where;
	} cases[] = {
		{ "alice\n", VEP_ERR_INVALID, ":1: " },
		{ "# c\n\nalice bob extra\n", VEP_ERR_INVALID, ":3: " },
		{ "alice bob # trailing comment\n", VEP_ERR_INVALID, ":1: " },
		{ "alice@example.com bob\n", VEP_ERR_INVALID, ":1: " },
		{ "ok fine\nal ice bob\n", VEP_ERR_INVALID, ":2: " },
		{ "al\"ice bob\n", VEP_ERR_INVALID, ":1: " },
		{ "a,b bob\n", VEP_ERR_INVALID, ":1: " },
		{ "ok fine\nalice\rbob\n", VEP_ERR_INVALID, ":2: " },
		/* 65 characters: longer than any local part. */
		{ "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b\n",
		  VEP_ERR_INVALID, ":1: " },
	};
	struct account_map *m = NULL;
	char err[256], path[PATH_LEN];
	char *big;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(load(NULL, cases[i].text, &m, err, sizeof(err)), cases[i].rc);
		ASSERT_TRUE(m == NULL);
		if (strstr(err, cases[i].where) == NULL)
			HARNESS_FAIL("case %zu: err \"%s\" lacks \"%s\"", i, err, cases[i].where);
	}
	/* 64 characters is fine. */
	ASSERT_EQ(load(NULL, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b\n",
	    &m, err, sizeof(err)), 0);
	account_map_free(m);
	m = NULL;

	/* A NUL inside a line would hide the rest of it. */
	ASSERT_EQ(write_file_mode("ok fine\nalice bob\0evil\n", 23, 0600, path), 0);
	ASSERT_EQ(account_map_new(NULL, path, &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_TRUE(strstr(err, ":2: ") != NULL);

	/* Lines: ACCOUNT_ALIASES_LINE_MAX bytes is fine, one more is not. */
	big = malloc(2 * ACCOUNT_ALIASES_LINE_MAX);
	ASSERT_TRUE(big != NULL);
	memset(big, ' ', 2 * ACCOUNT_ALIASES_LINE_MAX);
	memcpy(big, "ok fine\nalice bob", 17);
	big[8 + ACCOUNT_ALIASES_LINE_MAX] = '\n';
	if (write_file_mode(big, 9 + ACCOUNT_ALIASES_LINE_MAX, 0600, path) != 0 ||
	    account_map_new(NULL, path, &m, err, sizeof(err)) != 0) {
		free(big);
		HARNESS_FAIL("a %d-byte line was refused: %s", ACCOUNT_ALIASES_LINE_MAX, err);
	}
	account_map_free(m);
	m = NULL;
	big[8 + ACCOUNT_ALIASES_LINE_MAX] = ' ';
	big[9 + ACCOUNT_ALIASES_LINE_MAX] = '\n';
	rc = write_file_mode(big, 10 + ACCOUNT_ALIASES_LINE_MAX, 0600, path);
	free(big);
	ASSERT_EQ(rc, 0);
	ASSERT_EQ(account_map_new(NULL, path, &m, err, sizeof(err)), VEP_ERR_TOOBIG);
	ASSERT_TRUE(strstr(err, ":2: ") != NULL);
	ASSERT_TRUE(m == NULL);
}

static void
test_file_refused(void)
{
	struct account_map *m = NULL;
	char err[256], path[PATH_LEN];
	int fd;

	/* Group- or world-writable: it decides who signs in as whom. */
	ASSERT_EQ(write_file_mode("alice bob\n", 10, 0620, path), 0);
	ASSERT_EQ(account_map_new(NULL, path, &m, err, sizeof(err)), VEP_ERR_PERM);
	ASSERT_TRUE(m == NULL);
	ASSERT_TRUE(strstr(err, "chmod go-w") != NULL);
	ASSERT_TRUE(strstr(err, path) != NULL);
	ASSERT_EQ(chmod(path, 0602), 0);
	ASSERT_EQ(account_map_new(NULL, path, &m, err, sizeof(err)), VEP_ERR_PERM);
	ASSERT_EQ(chmod(path, 0666), 0);
	ASSERT_EQ(account_map_new(NULL, path, &m, err, sizeof(err)), VEP_ERR_PERM);
	/* Readable by all is fine; only writing matters. */
	ASSERT_EQ(chmod(path, 0644), 0);
	ASSERT_EQ(account_map_new(NULL, path, &m, err, sizeof(err)), 0);
	ASSERT_EQ(account_map_alias_count(m), 1);
	account_map_free(m);
	m = NULL;

	/* Missing file. */
	snprintf(path, sizeof(path), "%s/does-not-exist", tmpdir);
	ASSERT_EQ(account_map_new(NULL, path, &m, err, sizeof(err)), VEP_ERR_IO);
	ASSERT_TRUE(strstr(err, path) != NULL);
	/* Not a regular file: a directory, and a FIFO (which must not hang). */
	ASSERT_EQ(account_map_new(NULL, tmpdir, &m, err, sizeof(err)), VEP_ERR_INVALID);
	snprintf(path, sizeof(path), "%s/fifo", tmpdir);
	ASSERT_EQ(mkfifo(path, 0600), 0);
	ASSERT_EQ(account_map_new(NULL, path, &m, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_EQ(unlink(path), 0);

	/* Over the size cap (sparse, so cheap to make). */
	snprintf(path, sizeof(path), "%s/huge", tmpdir);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ASSERT_TRUE(fd >= 0);
	if (ftruncate(fd, ACCOUNT_ALIASES_FILE_MAX + 1) != 0) {
		close(fd);
		ASSERT_TRUE(0);
	}
	close(fd);
	ASSERT_EQ(account_map_new(NULL, path, &m, err, sizeof(err)), VEP_ERR_TOOBIG);
	ASSERT_TRUE(m == NULL);
	ASSERT_EQ(unlink(path), 0);

	/* The error buffer may be absent. */
	ASSERT_EQ(account_map_new(NULL, tmpdir, &m, NULL, 0), VEP_ERR_INVALID);
	account_map_free(NULL);
	ASSERT_EQ(account_map_alias_count(NULL), 0);
}

/* Builds a table of n entries "uNNNNNN pNNNNNN" in a scrambled order. */
static char *
make_table(size_t n, size_t *len)
{
	char *buf = malloc(n * 24 + 1), *p;
	size_t i, k;

	if (buf == NULL)
		return NULL;
	p = buf;
	for (i = 0; i < n; i++) {
		/* 7919 is prime and does not divide n: a permutation. */
		k = (i * 7919) % n;
		p += sprintf(p, "u%06zu p%06zu\n", k, k);
	}
	*len = (size_t)(p - buf);
	return buf;
}

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void
test_large_table(void)
{
	const size_t n = 50000;
	struct account_map *m = NULL;
	char out[ACCOUNT_USER_MAX + 1], err[256], path[PATH_LEN], local[32], want[32];
	char *text;
	size_t len, i;
	double t0;
	int rc;

	text = make_table(n, &len);
	ASSERT_TRUE(text != NULL);
	rc = write_file_mode(text, len, 0600, path);
	free(text);
	ASSERT_EQ(rc, 0);
	ASSERT_EQ(account_map_new("_s", path, &m, err, sizeof(err)), 0);
	ASSERT_EQ(account_map_alias_count(m), n);
	t0 = now_s();
	for (i = 0; i < n; i++) {
		snprintf(local, sizeof(local), "u%06zu", i);
		snprintf(want, sizeof(want), "p%06zu", i);
		if (map(m, local, out) != 0 || strcmp(out, want) != 0)
			HARNESS_FAIL("%s -> \"%s\", want \"%s\"", local, out, want);
	}
	/* Misses on either side of and between the entries. */
	ASSERT_EQ(map(m, "u", out), 0);
	ASSERT_STREQ(out, "u_s");
	ASSERT_EQ(map(m, "u050000", out), 0);
	ASSERT_STREQ(out, "u050000_s");
	ASSERT_EQ(map(m, "u0000005", out), 0);
	ASSERT_STREQ(out, "u0000005_s");
	ASSERT_EQ(map(m, "a", out), 0);
	ASSERT_EQ(map(m, "zzz", out), 0);
	ASSERT_STREQ(out, "zzz_s");
	/* Binary search does these in milliseconds; a linear scan would need
	 * over a billion comparisons. */
	ASSERT_TRUE(now_s() - t0 < 5.0);
	account_map_free(m);
}

static void
test_entry_cap(void)
{
	struct account_map *m = NULL;
	char err[256], path[PATH_LEN];
	char *text;
	size_t len;
	int rc;

	text = make_table(ACCOUNT_ALIASES_MAX, &len);
	ASSERT_TRUE(text != NULL);
	rc = write_file_mode(text, len, 0600, path);
	ASSERT_EQ(rc, 0);
	rc = account_map_new(NULL, path, &m, err, sizeof(err));
	if (rc != 0) {
		free(text);
		HARNESS_FAIL("%d entries refused: %s", ACCOUNT_ALIASES_MAX, err);
	}
	ASSERT_EQ(account_map_alias_count(m), ACCOUNT_ALIASES_MAX);
	account_map_free(m);
	m = NULL;
	/* One more (with a comment before it) is refused, naming its line. */
	text = realloc(text, len + 64);
	ASSERT_TRUE(text != NULL);
	len += (size_t)sprintf(text + len, "# one too many\nextra one\n");
	rc = write_file_mode(text, len, 0600, path);
	free(text);
	ASSERT_EQ(rc, 0);
	ASSERT_EQ(account_map_new(NULL, path, &m, err, sizeof(err)), VEP_ERR_TOOBIG);
	ASSERT_TRUE(m == NULL);
	ASSERT_TRUE(strstr(err, ":100002: ") != NULL);
}

/* Removes what the tests left in tmpdir, then tmpdir. */
static void
cleanup(void)
{
	char path[PATH_LEN];
	unsigned i;

	for (i = 0; i < file_seq; i++) {
		snprintf(path, sizeof(path), "%s/aliases-%u", tmpdir, i);
		if (unlink(path) != 0 && errno != ENOENT)
			fprintf(stderr, "cannot remove %s\n", path);
	}
	/* Left behind only when their test failed half-way. */
	snprintf(path, sizeof(path), "%s/fifo", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/huge", tmpdir);
	unlink(path);
	rmdir(tmpdir);
}

int
main(void)
{
	const char *base = getenv("TMPDIR");

	snprintf(tmpdir, sizeof(tmpdir), "%s/vep-account-XXXXXX",
	    base != NULL && base[0] != '\0' && strlen(base) < 32 ? base : "/tmp");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_default_rule);
	RUN(test_suffix);
	RUN(test_aliases);
	RUN(test_comments_blank_crlf);
	RUN(test_root_refused);
	RUN(test_unsafe_names);
	RUN(test_too_long);
	RUN(test_duplicate);
	RUN(test_bad_lines);
	RUN(test_file_refused);
	RUN(test_large_table);
	RUN(test_entry_cap);
	cleanup();
	return harness_done();
}
