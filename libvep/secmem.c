/*
 * secmem.c - wiping and constant-time comparison of secret bytes.
 *
 * Owns the only primitives libvep uses for secrets. It must never branch on
 * secret contents: comparison goes through OpenSSL's CRYPTO_memcmp, whose
 * time depends on the length only, and wiping through explicit_bzero, which
 * the compiler may not drop as a dead store.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "secmem.h"

/* Overwrites n bytes at p with zeros; never optimised away. */
void
vep_memzero(void *p, size_t n)
{
	if (p != NULL && n > 0)
		explicit_bzero(p, n);
}

/* Returns 1 when equal, 0 otherwise, in time depending only on n. */
int
vep_memeq_ct(const void *a, const void *b, size_t n)
{
	if (n == 0)
		return 1;
	return CRYPTO_memcmp(a, b, n) == 0;
}

/* Zeroes then frees p. NULL-safe. */
void
vep_free_secret(void *p, size_t n)
{
	if (p == NULL)
		return;
	vep_memzero(p, n);
	free(p);
}

/* Zeroes a NUL-terminated string in place, then frees it. NULL-safe. */
void
vep_free_secret_str(char *s)
{
	if (s == NULL)
		return;
	vep_free_secret(s, strlen(s));
}
