/*
 * test_keydir.c - the key directory on a real file system: first key,
 * rotation order, retirement, leftovers of a crash, permission checks and
 * the path length limit, and what a failed load says. Real RSA keys from OpenSSL, real files in a
 * mkdtemp directory removed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "key.h"
#include "keydir.h"
#include "harness.h"

static char base[PATH_MAX];

static void
path_in(char *out, size_t n, const char *dir, const char *name)
{
	if (snprintf(out, n, "%s/%s", dir, name) >= (int)n)
		abort();
}

/* Makes a fresh subdirectory name (not created) under base. */
static void
fresh_dir(char *out, size_t n, const char *name)
{
	if (snprintf(out, n, "%s/%s", base, name) >= (int)n)
		abort();
}

static int
file_mode(const char *path)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return -1;
	return (int)(st.st_mode & 07777);
}

static int
write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	ssize_t w;

	if (fd < 0)
		return -1;
	w = write(fd, text, strlen(text));
	close(fd);
	return w == (ssize_t)strlen(text) ? 0 : -1;
}

static void
test_ensure_creates_once(void)
{
	char dir[PATH_MAX], cur[PATH_MAX];
	struct vep_keyset a = { 0 }, b = { 0 };
	int created = -1;

	fresh_dir(dir, sizeof dir, "ensure");
	ASSERT_EQ(vep_keydir_ensure(dir, &created), 0);
	ASSERT_EQ(created, 1);
	ASSERT_EQ(file_mode(dir), 0700);
	path_in(cur, sizeof cur, dir, VEP_KEYDIR_CURRENT);
	ASSERT_EQ(file_mode(cur), 0600);
	ASSERT_EQ(vep_keydir_load(dir, &a), 0);
	ASSERT_TRUE(a.current != NULL);
	ASSERT_TRUE(a.previous == NULL);
	ASSERT_TRUE(vep_key_has_private(a.current));
	ASSERT_STREQ(vep_key_alg(a.current)->name, "RS256");

	/* A second ensure leaves the key alone. */
	ASSERT_EQ(vep_keydir_ensure(dir, &created), 0);
	ASSERT_EQ(created, 0);
	ASSERT_EQ(vep_keydir_ensure(dir, NULL), 0);
	ASSERT_EQ(vep_keydir_load(dir, &b), 0);
	ASSERT_TRUE(vep_key_public_equal(a.current, b.current));
	vep_keyset_clear(&a);
	vep_keyset_clear(&b);
	ASSERT_TRUE(a.current == NULL && b.current == NULL);
	vep_keyset_clear(NULL);
}

static void
test_rotate_and_retire(void)
{
	char dir[PATH_MAX], prev[PATH_MAX], cur[PATH_MAX];
	struct vep_keyset k0 = { 0 }, k1 = { 0 }, k2 = { 0 };

	fresh_dir(dir, sizeof dir, "rotate");
	ASSERT_EQ(vep_keydir_ensure(dir, NULL), 0);
	ASSERT_EQ(vep_keydir_load(dir, &k0), 0);

	ASSERT_EQ(vep_keydir_rotate(dir), 0);
	ASSERT_EQ(vep_keydir_load(dir, &k1), 0);
	ASSERT_TRUE(k1.previous != NULL);
	ASSERT_TRUE(vep_key_public_equal(k1.previous, k0.current));
	ASSERT_TRUE(!vep_key_public_equal(k1.current, k0.current));
	path_in(prev, sizeof prev, dir, VEP_KEYDIR_PREVIOUS);
	path_in(cur, sizeof cur, dir, VEP_KEYDIR_CURRENT);
	ASSERT_EQ(file_mode(prev), 0600);
	ASSERT_EQ(file_mode(cur), 0600);

	/* A second rotation retires k0 for good. */
	ASSERT_EQ(vep_keydir_rotate(dir), 0);
	ASSERT_EQ(vep_keydir_load(dir, &k2), 0);
	ASSERT_TRUE(vep_key_public_equal(k2.previous, k1.current));
	ASSERT_TRUE(!vep_key_public_equal(k2.previous, k0.current));
	ASSERT_TRUE(!vep_key_public_equal(k2.current, k0.current));
	ASSERT_TRUE(!vep_key_public_equal(k2.current, k1.current));
	vep_keyset_clear(&k1);

	ASSERT_EQ(vep_keydir_retire(dir), 0);
	ASSERT_EQ(access(prev, F_OK), -1);
	ASSERT_EQ(vep_keydir_load(dir, &k1), 0);
	ASSERT_TRUE(k1.previous == NULL);
	ASSERT_TRUE(vep_key_public_equal(k1.current, k2.current));
	/* Retiring with nothing to retire is not an error. */
	ASSERT_EQ(vep_keydir_retire(dir), 0);

	/* No temporary files are left behind. */
	path_in(prev, sizeof prev, dir, ".new-current.pem.tmp");
	ASSERT_EQ(access(prev, F_OK), -1);
	path_in(prev, sizeof prev, dir, ".new-previous.pem.tmp");
	ASSERT_EQ(access(prev, F_OK), -1);
	vep_keyset_clear(&k0);
	vep_keyset_clear(&k1);
	vep_keyset_clear(&k2);
}

/* The three-step rotation: prepare publishes next, rotate switches to it. */
static void
test_prepare_then_rotate(void)
{
	char dir[PATH_MAX], next[PATH_MAX];
	struct vep_keyset k0 = { 0 }, k1 = { 0 }, k2 = { 0 };
	const vep_key *pub[VEP_KEYSET_MAX];

	fresh_dir(dir, sizeof dir, "prepare");
	ASSERT_EQ(vep_keydir_ensure(dir, NULL), 0);
	ASSERT_EQ(vep_keydir_load(dir, &k0), 0);
	ASSERT_TRUE(k0.next == NULL);
	ASSERT_EQ(vep_keyset_published(&k0, pub), 1);

	ASSERT_EQ(vep_keydir_prepare(dir), 0);
	ASSERT_EQ(vep_keydir_prepare(dir), VEP_ERR_EXISTS);
	path_in(next, sizeof next, dir, VEP_KEYDIR_NEXT);
	ASSERT_EQ(file_mode(next), 0600);
	ASSERT_EQ(vep_keydir_load(dir, &k1), 0);
	ASSERT_TRUE(k1.next != NULL);
	ASSERT_TRUE(vep_key_public_equal(k1.current, k0.current));
	ASSERT_TRUE(!vep_key_public_equal(k1.next, k0.current));
	/* Published: current first (the "public-key"), then next. */
	ASSERT_EQ(vep_keyset_published(&k1, pub), 2);
	ASSERT_TRUE(pub[0] == k1.current && pub[1] == k1.next);

	ASSERT_EQ(vep_keydir_rotate(dir), 0);
	ASSERT_EQ(access(next, F_OK), -1);
	ASSERT_EQ(vep_keydir_load(dir, &k2), 0);
	ASSERT_TRUE(vep_key_public_equal(k2.current, k1.next));
	ASSERT_TRUE(vep_key_public_equal(k2.previous, k0.current));
	ASSERT_TRUE(k2.next == NULL);
	ASSERT_EQ(vep_keyset_published(&k2, pub), 2);
	ASSERT_TRUE(pub[0] == k2.current && pub[1] == k2.previous);
	vep_keyset_clear(&k0);
	vep_keyset_clear(&k1);
	vep_keyset_clear(&k2);
}

static void
test_crash_leftovers(void)
{
	char dir[PATH_MAX], p[PATH_MAX], cur[PATH_MAX], prev[PATH_MAX];
	struct vep_keyset k0 = { 0 }, k1 = { 0 };

	fresh_dir(dir, sizeof dir, "crash");
	ASSERT_EQ(vep_keydir_ensure(dir, NULL), 0);
	ASSERT_EQ(vep_keydir_load(dir, &k0), 0);

	/* A crash mid-write left garbage temporaries, even with a bad mode. */
	path_in(p, sizeof p, dir, ".new-current.pem.tmp");
	ASSERT_EQ(write_file(p, "-----BEGIN PRIVATE KEY-----\ntrunc", 0644), 0);
	path_in(p, sizeof p, dir, ".new-previous.pem.tmp");
	ASSERT_EQ(write_file(p, "junk", 0600), 0);
	ASSERT_EQ(vep_keydir_rotate(dir), 0);
	ASSERT_EQ(vep_keydir_load(dir, &k1), 0);
	ASSERT_TRUE(vep_key_public_equal(k1.previous, k0.current));
	vep_keyset_clear(&k1);

	/* A crash between the two renames leaves current == previous: it
	 * loads, publishes the key once, and the next rotation proceeds. */
	path_in(cur, sizeof cur, dir, VEP_KEYDIR_CURRENT);
	path_in(prev, sizeof prev, dir, VEP_KEYDIR_PREVIOUS);
	ASSERT_EQ(unlink(prev), 0);
	ASSERT_EQ(link(cur, prev), 0);
	ASSERT_EQ(vep_keydir_load(dir, &k1), 0);
	ASSERT_TRUE(k1.previous == NULL);
	ASSERT_EQ(vep_keydir_rotate(dir), 0);
	vep_keyset_clear(&k0);
	ASSERT_EQ(vep_keydir_load(dir, &k0), 0);
	ASSERT_TRUE(vep_key_public_equal(k0.previous, k1.current));
	vep_keyset_clear(&k0);
	vep_keyset_clear(&k1);
}

static void
test_permissions(void)
{
	char dir[PATH_MAX], cur[PATH_MAX], prev[PATH_MAX];
	struct vep_keyset ks = { 0 };

	fresh_dir(dir, sizeof dir, "perm");
	ASSERT_EQ(vep_keydir_ensure(dir, NULL), 0);
	path_in(cur, sizeof cur, dir, VEP_KEYDIR_CURRENT);
	path_in(prev, sizeof prev, dir, VEP_KEYDIR_PREVIOUS);

	ASSERT_EQ(chmod(cur, 0640), 0);
	ks.current = (vep_key *)&ks; /* out must be cleared on entry */
	ASSERT_EQ(vep_keydir_load(dir, &ks), VEP_ERR_PERM);
	ASSERT_TRUE(ks.current == NULL && ks.previous == NULL);
	ASSERT_EQ(vep_keydir_rotate(dir), VEP_ERR_PERM);
	ASSERT_EQ(chmod(cur, 0604), 0);
	ASSERT_EQ(vep_keydir_load(dir, &ks), VEP_ERR_PERM);
	ASSERT_EQ(chmod(cur, 0600), 0);

	/* previous is checked too. */
	ASSERT_EQ(vep_keydir_rotate(dir), 0);
	ASSERT_EQ(chmod(prev, 0644), 0);
	ASSERT_EQ(vep_keydir_load(dir, &ks), VEP_ERR_PERM);
	ASSERT_TRUE(ks.current == NULL && ks.previous == NULL);
	ASSERT_EQ(chmod(prev, 0600), 0);
	ASSERT_EQ(vep_keydir_load(dir, &ks), 0);
	vep_keyset_clear(&ks);

	/* A directory others can write is refused for writing keys. */
	ASSERT_EQ(chmod(dir, 0770), 0);
	ASSERT_EQ(vep_keydir_rotate(dir), VEP_ERR_PERM);
	ASSERT_EQ(vep_keydir_retire(dir), VEP_ERR_PERM);
	ASSERT_EQ(chmod(dir, 0700), 0);
}

static void
test_missing_and_errors(void)
{
	char dir[PATH_MAX], file[PATH_MAX];
	struct vep_keyset ks = { 0 };

	fresh_dir(dir, sizeof dir, "empty");
	ASSERT_EQ(mkdir(dir, 0700), 0);
	ASSERT_EQ(vep_keydir_load(dir, &ks), VEP_ERR_NOKEY);
	ASSERT_EQ(vep_keydir_rotate(dir), VEP_ERR_NOKEY);
	ASSERT_EQ(vep_keydir_retire(dir), 0);

	fresh_dir(dir, sizeof dir, "nonexistent");
	ASSERT_EQ(vep_keydir_load(dir, &ks), VEP_ERR_NOKEY);
	ASSERT_EQ(vep_keydir_rotate(dir), VEP_ERR_IO);

	/* ensure on a path that is a file, not a directory */
	fresh_dir(file, sizeof file, "plainfile");
	ASSERT_EQ(write_file(file, "x", 0600), 0);
	ASSERT_EQ(vep_keydir_ensure(file, NULL), VEP_ERR_IO);

	/* A garbage current key is reported, not replaced. */
	fresh_dir(dir, sizeof dir, "garbage");
	ASSERT_EQ(mkdir(dir, 0700), 0);
	path_in(file, sizeof file, dir, VEP_KEYDIR_CURRENT);
	ASSERT_EQ(write_file(file, "not a key", 0600), 0);
	ASSERT_TRUE(vep_keydir_load(dir, &ks) < 0);
	ASSERT_TRUE(vep_keydir_rotate(dir) < 0);
	ASSERT_EQ(vep_keydir_ensure(dir, NULL), 0); /* leaves it alone */

	ASSERT_EQ(vep_keydir_load(NULL, &ks), VEP_ERR_ARG);
	ASSERT_EQ(vep_keydir_load(dir, NULL), VEP_ERR_ARG);
	ASSERT_EQ(vep_keydir_rotate(NULL), VEP_ERR_ARG);
	ASSERT_EQ(vep_keydir_retire(NULL), VEP_ERR_ARG);
	ASSERT_EQ(vep_keydir_ensure(NULL, NULL), VEP_ERR_ARG);
}

/* What an administrator is told about a key directory that does not load:
 * the file, its size, what it holds and what would be allowed. */
static void
test_fault_text(void)
{
	char dir[PATH_MAX], file[PATH_MAX], text[512], big[70000];
	struct vep_keyset ks = { 0 };
	struct vep_keydir_fault fault;
	vep_key *k = NULL;

	vep_alg_sizes_text(text, sizeof(text));
	ASSERT_STREQ(text, "RSA 2048 or 1024 bits, DSA 1024/160 or 2048/256 bits");
	vep_alg_sizes_text(text, 8);
	ASSERT_TRUE(strlen(text) == 7);

	fresh_dir(dir, sizeof dir, "faults");
	ASSERT_EQ(mkdir(dir, 0700), 0);
	ASSERT_EQ(vep_keydir_load_explained(dir, &ks, &fault), VEP_ERR_NOKEY);
	vep_keydir_fault_text(VEP_ERR_NOKEY, &fault, text, sizeof(text));
	ASSERT_TRUE(strstr(text, "current.pem: no such file") != NULL);
	ASSERT_TRUE(strstr(text, "vep-keytool init") != NULL);

	path_in(file, sizeof file, dir, VEP_KEYDIR_CURRENT);
	ASSERT_EQ(write_file(file, "not a key", 0600), 0);
	ASSERT_EQ(vep_keydir_load_explained(dir, &ks, &fault), VEP_ERR_INVALID);
	vep_keydir_fault_text(VEP_ERR_INVALID, &fault, text, sizeof(text));
	ASSERT_STREQ(text, "current.pem: malformed input (9 bytes; not a PEM private key)");

	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	(void)unlink(file);
	ASSERT_EQ(write_file(file, big, 0600), 0);
	ASSERT_EQ(vep_keydir_load_explained(dir, &ks, &fault), VEP_ERR_TOOBIG);
	vep_keydir_fault_text(VEP_ERR_TOOBIG, &fault, text, sizeof(text));
	ASSERT_STREQ(text, "current.pem: 69999 bytes, a key file holds at most 65536 bytes");

	/* A good current key and a DSA next key of a size BrowserID lacks is
	 * refused, and the fault names next.pem. */
	(void)unlink(file);
	ASSERT_EQ(vep_key_generate_rsa(2048, &k), 0);
	ASSERT_EQ(vep_key_save_private(k, file), 0);
	vep_key_free(k);
	path_in(file, sizeof file, dir, VEP_KEYDIR_NEXT);
	{
		char cmd[PATH_MAX + 128];

		snprintf(cmd, sizeof(cmd), "umask 077; openssl genpkey -algorithm RSA -pkeyopt "
		    "rsa_keygen_bits:3072 -out '%s' 2>/dev/null", file);
		ASSERT_EQ(system(cmd), 0);
	}
	ASSERT_EQ(vep_keydir_load_explained(dir, &ks, &fault), VEP_ERR_KEYSIZE);
	vep_keydir_fault_text(VEP_ERR_KEYSIZE, &fault, text, sizeof(text));
	ASSERT_STREQ(text, "next.pem: key size not allowed (an RSA key of 3072 bits; the keys "
	    "allowed: RSA 2048 or 1024 bits, DSA 1024/160 or 2048/256 bits)");
	ASSERT_TRUE(ks.current == NULL);

	/* No fault given: same result, nothing written anywhere. */
	ASSERT_EQ(vep_keydir_load_explained(dir, &ks, NULL), VEP_ERR_KEYSIZE);
	(void)unlink(file);
	ASSERT_EQ(vep_keydir_load_explained(dir, &ks, &fault), 0);
	vep_keyset_clear(&ks);
}

/* The path limit (PATH_MAX bytes) is enforced before touching the disk. */
static void
test_path_limit(void)
{
	char *dir;
	struct vep_keyset ks = { 0 };
	size_t n = PATH_MAX - 4; /* fits alone, not with "/current.pem" */

	dir = malloc(n + 1);
	ASSERT_TRUE(dir != NULL);
	memset(dir, 'a', n);
	dir[0] = '/';
	dir[n] = '\0';
	ASSERT_EQ(vep_keydir_load(dir, &ks), VEP_ERR_TOOBIG);
	ASSERT_EQ(vep_keydir_retire(dir), VEP_ERR_TOOBIG);
	free(dir);
}

static int
rm_tree(const char *path)
{
	char cmd[PATH_MAX + 16];

	snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
	return system(cmd);
}

int
main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(base, sizeof base, "%s/test_keydir.XXXXXX", tmp ? tmp : "/tmp");
	if (mkdtemp(base) == NULL) {
		perror("mkdtemp");
		return 77;
	}
	RUN(test_ensure_creates_once);
	RUN(test_rotate_and_retire);
	RUN(test_prepare_then_rotate);
	RUN(test_crash_leftovers);
	RUN(test_permissions);
	RUN(test_missing_and_errors);
	RUN(test_path_limit);
	RUN(test_fault_text);
	(void)rm_tree(base);
	return harness_done();
}
