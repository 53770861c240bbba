/*
 * secmem.h - handling of secret bytes.
 *
 * Anything that held a secret (password, session token, private key bytes)
 * is wiped with vep_memzero before it is freed, and secrets are compared with
 * vep_memeq_ct, whose running time depends only on the length.
 */
#ifndef VEP_SECMEM_H
#define VEP_SECMEM_H

#include <stddef.h>

/* Overwrites n bytes at p with zeros in a way the compiler cannot elide. */
void vep_memzero(void *p, size_t n);

/* Returns 1 when the n bytes at a and b are equal, else 0; constant time in n. */
int vep_memeq_ct(const void *a, const void *b, size_t n);

/* Zeroes n bytes at p, then frees p. NULL-safe. */
void vep_free_secret(void *p, size_t n);

/* Zeroes a NUL-terminated string in place, then frees it. NULL-safe. */
void vep_free_secret_str(char *s);

#endif
