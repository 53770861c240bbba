/*
 * keydir.c - the domain key directory: loading current/previous, creating
 * the first key, rotating and retiring.
 *
 * Owns the on-disk layout named in keydir.h and the order of the renames
 * that make rotation crash-safe. At every instant DIR/current.pem is a
 * complete key: a new key is written to a temporary file (0600, O_EXCL,
 * fsynced by vep_key_save_private), the old current is hard-linked to a
 * second temporary name and renamed over previous.pem, and only then is the
 * new key renamed over current.pem; the directory is fsynced after each
 * step. A crash between the two renames leaves current == previous (the
 * older previous already retired), which loads and serves correctly; the
 * next rotation finishes the job. Writers (ensure, rotate, retire) take an
 * exclusive flock on the directory, so a stale temporary file left by a
 * crash can be removed safely by whoever holds the lock.
 *
 * Must never: overwrite current.pem with anything but a complete, synced
 * key; leave a window with no current.pem; read or write outside DIR; keep
 * private key bytes around (they stay inside OpenSSL's key objects).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "file.h"
#include "key.h"
#include "keydir.h"

/* Longest path we build inside the directory (bytes, with the NUL). */
#define KEYDIR_PATH_MAX PATH_MAX

/* Temporary names, both inside DIR; only a lock holder creates them. */
#define KEYDIR_NEW_TMP ".new-current.pem.tmp"
#define KEYDIR_PREV_TMP ".new-previous.pem.tmp"

/* The domain key: RS256 is the only size every deployed verifier accepts. */
#define KEYDIR_RSA_BITS 2048

/* Mode of a directory we create: the keys are nobody else's business. */
#define KEYDIR_DIR_MODE 0700

static int
keydir_path(const char *dir, const char *name, char out[KEYDIR_PATH_MAX])
{
	int n;

	n = snprintf(out, KEYDIR_PATH_MAX, "%s/%s", dir, name);
	if (n < 0 || n >= KEYDIR_PATH_MAX)
		return VEP_ERR_TOOBIG;
	return 0;
}

/* Makes the directory entries written so far durable. */
static int
keydir_sync(int dfd)
{
	return fsync(dfd) == 0 ? 0 : VEP_ERR_IO;
}

/*
 * Opens DIR and takes the writers' lock. A directory writable by group or
 * others is refused: whoever can write it can swap the signing key.
 */
static int
keydir_lock(const char *dir, int *dfd_out)
{
	struct stat st;
	int dfd, r;

	*dfd_out = -1;
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		r = VEP_ERR_IO;
		goto out;
	}
	if (fstat(dfd, &st) != 0) {
		r = VEP_ERR_IO;
		goto out;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
		r = VEP_ERR_PERM;
		goto out;
	}
	if (flock(dfd, LOCK_EX) != 0) {
		r = VEP_ERR_IO;
		goto out;
	}
	*dfd_out = dfd;
	dfd = -1;
	r = 0;
out:
	if (dfd >= 0)
		close(dfd);
	return r;
}

static void
keydir_unlock(int dfd)
{
	if (dfd >= 0)
		close(dfd); /* releases the flock */
}

/* Removes a file; a missing one is fine. */
static int
keydir_unlink(const char *path)
{
	if (unlink(path) != 0 && errno != ENOENT)
		return VEP_ERR_IO;
	return 0;
}

/* 1 when path exists (any type), 0 when it does not, <0 on error. */
static int
keydir_exists(const char *path)
{
	struct stat st;

	if (lstat(path, &st) == 0)
		return 1;
	return errno == ENOENT ? 0 : VEP_ERR_IO;
}

/* Generates a new domain key and writes it, synced, to DIR/KEYDIR_NEW_TMP.
 * A leftover temporary file from a crash is removed first. */
static int
keydir_write_new(const char *dir, char tmp[KEYDIR_PATH_MAX])
{
	vep_key *k = NULL;
	int r;

	if ((r = keydir_path(dir, KEYDIR_NEW_TMP, tmp)) != 0)
		goto out;
	if ((r = keydir_unlink(tmp)) != 0)
		goto out;
	if ((r = vep_key_generate_rsa(KEYDIR_RSA_BITS, &k)) != 0)
		goto out;
	r = vep_key_save_private(k, tmp);
out:
	vep_key_free(k);
	return r;
}

/* Records which file failed and what it holds (read again: the load
 * itself keeps no bytes). Only for messages; errors here are ignored. */
static void
keydir_fault_note(const char *path, const char *name, struct vep_keydir_fault *fault)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;

	if (fault == NULL)
		return;
	fault->file = name;
	fault->bytes = lstat(path, &st) == 0 && S_ISREG(st.st_mode) ? (long long)st.st_size : -1;
	fault->what[0] = '\0';
	if (vep_file_read(path, VEP_KEY_PEM_MAX_BYTES, VEP_FILE_NOFOLLOW | VEP_FILE_OWNER_ONLY,
	    &buf, &len) == 0)
		vep_key_pem_describe(buf, len, fault->what, sizeof(fault->what));
	vep_file_free(buf, len);
}

/* Loads DIR/name into *out. A missing file is VEP_ERR_NOKEY when required,
 * else fine (*out NULL). A key equal to current is dropped: a rotation
 * interrupted between its renames leaves the same key under two names, and
 * it is published once. */
static int
keydir_load_one(const char *dir, const char *name, int required, const vep_key *current,
    vep_key **out, struct vep_keydir_fault *fault)
{
	char path[KEYDIR_PATH_MAX];
	int r;

	*out = NULL;
	if ((r = keydir_path(dir, name, path)) != 0)
		return r;
	if ((r = keydir_exists(path)) <= 0) {
		if (r == 0 && required)
			r = VEP_ERR_NOKEY;
		if (r != 0 && fault != NULL) {
			fault->file = name;
			fault->bytes = -1;
		}
		return r;
	}
	if ((r = vep_key_load_private(path, out)) != 0) {
		keydir_fault_note(path, name, fault);
		return r;
	}
	if (current != NULL && vep_key_public_equal(current, *out)) {
		vep_key_free(*out);
		*out = NULL;
	}
	return 0;
}

int
vep_keydir_load(const char *dir, struct vep_keyset *out)
{
	return vep_keydir_load_explained(dir, out, NULL);
}

int
vep_keydir_load_explained(const char *dir, struct vep_keyset *out,
    struct vep_keydir_fault *fault)
{
	struct vep_keyset ks = { 0 };
	int r;

	if (fault != NULL)
		*fault = (struct vep_keydir_fault){ NULL, -1, "" };
	if (out == NULL)
		return VEP_ERR_ARG;
	out->current = NULL;
	out->previous = NULL;
	out->next = NULL;
	if (dir == NULL) {
		r = VEP_ERR_ARG;
		goto out;
	}
	if ((r = keydir_load_one(dir, VEP_KEYDIR_CURRENT, 1, NULL, &ks.current, fault)) != 0 ||
	    (r = keydir_load_one(dir, VEP_KEYDIR_PREVIOUS, 0, ks.current, &ks.previous,
	    fault)) != 0 ||
	    (r = keydir_load_one(dir, VEP_KEYDIR_NEXT, 0, ks.current, &ks.next, fault)) != 0)
		goto out;
	*out = ks;
	ks.current = NULL;
	ks.previous = NULL;
	ks.next = NULL;
	r = 0;
out:
	vep_keyset_clear(&ks);
	return r;
}

void
vep_keydir_fault_text(int rc, const struct vep_keydir_fault *fault, char *out, size_t outlen)
{
	char sizes[128], bytes[64] = "";
	const char *file = fault != NULL && fault->file != NULL ? fault->file : NULL;

	if (out == NULL || outlen == 0)
		return;
	if (file == NULL) {
		snprintf(out, outlen, "%s", vep_strerror(rc));
		return;
	}
	if (rc == VEP_ERR_NOKEY) {
		snprintf(out, outlen, "%s: no such file (create the keys with vep-keytool init)",
		    file);
		return;
	}
	if (fault->bytes >= 0)
		snprintf(bytes, sizeof(bytes), "%lld bytes", fault->bytes);
	switch (rc) {
	case VEP_ERR_TOOBIG:
		snprintf(out, outlen, "%s: %s, a key file holds at most %d bytes", file,
		    fault->bytes >= 0 ? bytes : "too large", VEP_KEY_PEM_MAX_BYTES);
		break;
	case VEP_ERR_KEYSIZE:
	case VEP_ERR_ALG:
	case VEP_ERR_KEY:
		vep_alg_sizes_text(sizes, sizeof(sizes));
		snprintf(out, outlen, "%s: %s (%s; the keys allowed: %s)", file, vep_strerror(rc),
		    fault->what[0] != '\0' ? fault->what : bytes, sizes);
		break;
	case VEP_ERR_PERM:
		snprintf(out, outlen, "%s: %s (a key file must be a regular file only its owner "
		    "can read or write, mode 0600, not a symbolic link)", file, vep_strerror(rc));
		break;
	default:
		snprintf(out, outlen, "%s: %s (%s%s%s)", file, vep_strerror(rc), bytes,
		    bytes[0] != '\0' && fault->what[0] != '\0' ? "; " : "", fault->what);
	}
}

int
vep_keydir_ensure(const char *dir, int *created)
{
	char cur[KEYDIR_PATH_MAX], tmp[KEYDIR_PATH_MAX];
	struct stat st;
	int dfd = -1, r;

	if (created != NULL)
		*created = 0;
	if (dir == NULL)
		return VEP_ERR_ARG;
	if (mkdir(dir, KEYDIR_DIR_MODE) != 0 && errno != EEXIST) {
		r = VEP_ERR_IO;
		goto out;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		r = VEP_ERR_IO;
		goto out;
	}
	if ((r = keydir_path(dir, VEP_KEYDIR_CURRENT, cur)) != 0)
		goto out;
	if ((r = keydir_lock(dir, &dfd)) != 0)
		goto out;
	if ((r = keydir_exists(cur)) < 0)
		goto out;
	if (r == 1) {
		r = 0;
		goto out;
	}
	if ((r = keydir_write_new(dir, tmp)) != 0)
		goto out;
	/* link() never replaces: if someone without our lock made a current
	 * key meanwhile, theirs wins and ours is discarded. */
	if (link(tmp, cur) != 0) {
		r = errno == EEXIST ? 0 : VEP_ERR_IO;
		(void)unlink(tmp);
		goto out;
	}
	if (unlink(tmp) != 0) {
		r = VEP_ERR_IO;
		goto out;
	}
	if ((r = keydir_sync(dfd)) != 0)
		goto out;
	if (created != NULL)
		*created = 1;
	r = 0;
out:
	keydir_unlock(dfd);
	return r;
}

int
vep_keydir_prepare(const char *dir)
{
	char next[KEYDIR_PATH_MAX], tmp[KEYDIR_PATH_MAX];
	int dfd = -1, r;

	if (dir == NULL)
		return VEP_ERR_ARG;
	if ((r = keydir_path(dir, VEP_KEYDIR_NEXT, next)) != 0)
		goto out;
	if ((r = keydir_lock(dir, &dfd)) != 0)
		goto out;
	if ((r = keydir_exists(next)) < 0)
		goto out;
	if (r == 1) {
		r = VEP_ERR_EXISTS;
		goto out;
	}
	if ((r = keydir_write_new(dir, tmp)) != 0)
		goto out;
	if (rename(tmp, next) != 0) {
		(void)unlink(tmp);
		r = VEP_ERR_IO;
		goto out;
	}
	r = keydir_sync(dfd);
out:
	keydir_unlock(dfd);
	return r;
}

int
vep_keydir_rotate(const char *dir)
{
	char cur[KEYDIR_PATH_MAX], prev[KEYDIR_PATH_MAX], next[KEYDIR_PATH_MAX];
	char tmp[KEYDIR_PATH_MAX], ptmp[KEYDIR_PATH_MAX];
	vep_key *nk = NULL;
	vep_key *old = NULL;
	int dfd = -1, r;

	if (dir == NULL)
		return VEP_ERR_ARG;
	if ((r = keydir_path(dir, VEP_KEYDIR_CURRENT, cur)) != 0 ||
	    (r = keydir_path(dir, VEP_KEYDIR_PREVIOUS, prev)) != 0 ||
	    (r = keydir_path(dir, VEP_KEYDIR_NEXT, next)) != 0 ||
	    (r = keydir_path(dir, KEYDIR_PREV_TMP, ptmp)) != 0)
		goto out;
	if ((r = keydir_lock(dir, &dfd)) != 0)
		goto out;
	/* The current key must load (permissions, size) before we demote it:
	 * publishing a broken previous key helps nobody. */
	if ((r = keydir_exists(cur)) < 0)
		goto out;
	if (r == 0) {
		r = VEP_ERR_NOKEY;
		goto out;
	}
	if ((r = vep_key_load_private(cur, &old)) != 0)
		goto out;
	/* The new current: the published next key when there is one (it must
	 * load too), else a fresh one. */
	if ((r = keydir_exists(next)) < 0)
		goto out;
	if (r == 1) {
		if ((r = vep_key_load_private(next, &nk)) != 0)
			goto out;
		if ((r = keydir_path(dir, VEP_KEYDIR_NEXT, tmp)) != 0)
			goto out;
	} else if ((r = keydir_write_new(dir, tmp)) != 0)
		goto out;
	if ((r = keydir_sync(dfd)) != 0)
		goto out;
	/* previous := current, while current stays in place. */
	if ((r = keydir_unlink(ptmp)) != 0)
		goto out;
	if (link(cur, ptmp) != 0) {
		r = VEP_ERR_IO;
		goto out;
	}
	if (rename(ptmp, prev) != 0) {
		(void)unlink(ptmp);
		r = VEP_ERR_IO;
		goto out;
	}
	if ((r = keydir_sync(dfd)) != 0)
		goto out;
	/* current := new, atomically replacing the old name. */
	if (rename(tmp, cur) != 0) {
		r = VEP_ERR_IO;
		goto out;
	}
	r = keydir_sync(dfd);
out:
	vep_key_free(old);
	vep_key_free(nk);
	keydir_unlock(dfd);
	return r;
}

int
vep_keydir_retire(const char *dir)
{
	char prev[KEYDIR_PATH_MAX];
	int dfd = -1, r;

	if (dir == NULL)
		return VEP_ERR_ARG;
	if ((r = keydir_path(dir, VEP_KEYDIR_PREVIOUS, prev)) != 0)
		goto out;
	if ((r = keydir_lock(dir, &dfd)) != 0)
		goto out;
	if ((r = keydir_unlink(prev)) != 0)
		goto out;
	r = keydir_sync(dfd);
out:
	keydir_unlock(dfd);
	return r;
}

void
vep_keyset_clear(struct vep_keyset *ks)
{
	if (ks == NULL)
		return;
	vep_key_free(ks->current);
	vep_key_free(ks->previous);
	vep_key_free(ks->next);
	ks->current = NULL;
	ks->previous = NULL;
	ks->next = NULL;
}

size_t
vep_keyset_published(const struct vep_keyset *ks, const vep_key *out[VEP_KEYSET_MAX])
{
	size_t n = 0;

	out[n++] = ks->current;
	if (ks->next != NULL)
		out[n++] = ks->next;
	if (ks->previous != NULL)
		out[n++] = ks->previous;
	return n;
}
