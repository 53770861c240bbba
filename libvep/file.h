/*
 * file.h - reading a whole file, the one hardened way (configuration, key and
 * TLS files, alias tables, vep-keytool's inputs).
 *
 * vep_file_read opens the path with O_CLOEXEC and O_NONBLOCK (a FIFO put in
 * a file's place cannot hang the open; it is then refused), checks the
 * opened file, never the path (a rename in between cannot slip another
 * in): a regular file, the caller's permission rule, at most the caller's
 * cap; then reads it all, through short reads and EINTR, into a new
 * NUL-terminated buffer. Buffers that held a secret are wiped on release:
 * the growing buffer by this module, the result by vep_file_free.
 */
#ifndef VEP_FILE_H
#define VEP_FILE_H

#include <stddef.h>

/* vep_file_read flags. */
enum {
	VEP_FILE_NOFOLLOW = 1 << 0,       /* refuse a symbolic link at path (VEP_ERR_IO) */
	VEP_FILE_OWNER_ONLY = 1 << 1,     /* refuse a mode granting group or others
	                                   * anything (VEP_ERR_PERM): private keys */
	VEP_FILE_OWNER_WRITES = 1 << 2,   /* refuse a file group or others may write
	                                   * (VEP_ERR_PERM): files that grant access */
};

/* Reads the regular file at path, of at most max bytes, into *out (new,
 * NUL-terminated; *len bytes before the NUL; an empty file gives ""). Out
 * parameters are cleared on entry and set only on success. Returns 0,
 * VEP_ERR_ARG, VEP_ERR_IO (cannot open or read it: errno says why),
 * VEP_ERR_INVALID (not a regular file), VEP_ERR_PERM (flags' rule),
 * VEP_ERR_TOOBIG (over max bytes) or VEP_ERR_NOMEM. */
int vep_file_read(const char *path, size_t max, unsigned flags, char **out, size_t *len);

/* The same from an open stream (standard input, a pipe), read to its end;
 * no check on what fd is. Does not close fd. */
int vep_file_read_fd(int fd, size_t max, char **out, size_t *len);

/* Wipes the len bytes of a buffer vep_file_read* returned, then frees it.
 * For buffers that held secrets; free() does for the others. NULL-safe. */
void vep_file_free(char *buf, size_t len);

#endif
