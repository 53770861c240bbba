/*
 * file.c - reading a whole file (contract in file.h).
 *
 * Owns the open flags, the checks on the opened file and the read loop.
 * Must never leave file contents in memory it frees: a buffer that grows is
 * copied and the old one wiped, and every error path wipes.
 */
#include "file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "err.h"
#include "secmem.h"

/* First buffer for a stream of unknown size (bytes). */
#define VEP_FILE_STREAM_START 4096

/* Reads fd to its end into a buffer of first capacity hint + 2 (one byte
 * past max tells "exactly max" from "more"; one for the NUL), growing it up
 * to max + 2. */
static int
read_all(int fd, size_t max, size_t hint, char **out, size_t *len)
{
	size_t cap = (hint < max ? hint : max) + 2, used = 0, ncap;
	char *buf, *nbuf;
	ssize_t n;
	int rc;

	if ((buf = malloc(cap)) == NULL)
		return VEP_ERR_NOMEM;
	for (;;) {
		if (used == cap - 1) {
			if (cap == max + 2) {
				rc = VEP_ERR_TOOBIG;
				goto out;
			}
			ncap = cap > (max + 2) / 2 ? max + 2 : cap * 2;
			if ((nbuf = malloc(ncap)) == NULL) {
				rc = VEP_ERR_NOMEM;
				goto out;
			}
			memcpy(nbuf, buf, used);
			vep_free_secret(buf, cap);
			buf = nbuf;
			cap = ncap;
		}
		n = read(fd, buf + used, cap - 1 - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = VEP_ERR_IO;
			goto out;
		}
		if (n == 0)
			break;
		used += (size_t)n;
		if (used > max) {
			rc = VEP_ERR_TOOBIG;
			goto out;
		}
	}
	buf[used] = '\0';
	*out = buf;
	*len = used;
	return VEP_OK;
out:
	vep_free_secret(buf, cap);
	return rc;
}

int
vep_file_read_fd(int fd, size_t max, char **out, size_t *len)
{
	if (out != NULL)
		*out = NULL;
	if (len != NULL)
		*len = 0;
	if (fd < 0 || out == NULL || len == NULL)
		return VEP_ERR_ARG;
	return read_all(fd, max, VEP_FILE_STREAM_START, out, len);
}

int
vep_file_read(const char *path, size_t max, unsigned flags, char **out, size_t *len)
{
	struct stat st;
	int fd = -1, rc, saved;

	if (out != NULL)
		*out = NULL;
	if (len != NULL)
		*len = 0;
	if (path == NULL || out == NULL || len == NULL)
		return VEP_ERR_ARG;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK |
	    ((flags & VEP_FILE_NOFOLLOW) ? O_NOFOLLOW : 0));
	if (fd < 0)
		return VEP_ERR_IO;
	if (fstat(fd, &st) != 0) {
		rc = VEP_ERR_IO;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	if (((flags & VEP_FILE_OWNER_ONLY) && (st.st_mode & 077) != 0) ||
	    ((flags & VEP_FILE_OWNER_WRITES) && (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)) {
		rc = VEP_ERR_PERM;
		goto out;
	}
	if (st.st_size < 0 || (unsigned long long)st.st_size > max) {
		rc = VEP_ERR_TOOBIG;
		goto out;
	}
	/* The size is a hint only: the file may change while we read, and
	 * the cap holds whatever it does. */
	rc = read_all(fd, max, (size_t)st.st_size, out, len);
out:
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

void
vep_file_free(char *buf, size_t len)
{
	if (buf != NULL)
		vep_free_secret(buf, len + 1);
}
