/*
 * keydir.h - a domain's key directory, shared by vep-keytool and the
 * authority so both agree on one layout:
 *
 *   DIR/current.pem    the signing key (required), mode 0600
 *   DIR/next.pem       the key the next rotation will switch to (optional),
 *                      published ahead so that verifiers holding a cached
 *                      support document already know it, 0600
 *   DIR/previous.pem   the key before the last rotation (optional), 0600
 *
 * All are published in the support document ("keys"); only current signs.
 * Rotation keeps every step atomic (new key written to a temporary file,
 * fsynced, then renamed; the directory fsynced), so a crash leaves either the
 * old or the new pair, never a missing current key.
 */
#ifndef VEP_KEYDIR_H
#define VEP_KEYDIR_H

#include "key.h"

#define VEP_KEYDIR_CURRENT "current.pem"
#define VEP_KEYDIR_PREVIOUS "previous.pem"
#define VEP_KEYDIR_NEXT "next.pem"

/* Most keys a key directory publishes: current, next, previous. */
#define VEP_KEYSET_MAX 3

struct vep_keyset {
	vep_key *current;   /* owned, with private half */
	vep_key *previous;  /* owned, may be NULL */
	vep_key *next;      /* owned, may be NULL */
};

/* The keys to publish, current first (the support document's
 * "public-key"), then next and previous when present. Returns how many
 * (1 to VEP_KEYSET_MAX) were written to out; borrowed from ks. */
size_t vep_keyset_published(const struct vep_keyset *ks, const vep_key *out[VEP_KEYSET_MAX]);

/* Loads DIR's keys (permission rules of vep_key_load_private apply to
 * each). out is cleared on entry; on error nothing is left allocated. */
int vep_keydir_load(const char *dir, struct vep_keyset *out);

/* Which file of a key directory failed to load, and what it holds, for an
 * administrator's message. */
struct vep_keydir_fault {
	const char *file;  /* VEP_KEYDIR_CURRENT/_NEXT/_PREVIOUS, NULL: the directory */
	long long bytes;   /* the file's size, -1 when it cannot be told */
	char what[96];     /* vep_key_pem_describe's words when the file was read,
	                    * else "" */
};

/* vep_keydir_load, filling *fault (may be NULL) when it fails. */
int vep_keydir_load_explained(const char *dir, struct vep_keyset *out,
    struct vep_keydir_fault *fault);

/* Writes one line saying why DIR's keys did not load, from the error and
 * the fault: the file, its size, and for a key of the wrong kind or size
 * what it is and what is allowed; for a file too large, the limit. */
void vep_keydir_fault_text(int rc, const struct vep_keydir_fault *fault, char *out,
    size_t outlen);

/* Creates DIR (mode 0700) if missing and a new RSA-2048 current key if
 * DIR has none. Leaves existing keys alone. *created set to 1 when a key
 * was generated (created may be NULL). */
int vep_keydir_ensure(const char *dir, int *created);

/* Generates next.pem, to be published before it signs. Returns
 * VEP_ERR_EXISTS when there is one already. */
int vep_keydir_prepare(const char *dir);

/* current -> previous (an older previous is retired); next -> current when
 * there is a next key, else a newly generated current. */
int vep_keydir_rotate(const char *dir);

/* Removes previous.pem (no error when there is none). */
int vep_keydir_retire(const char *dir);

/* Frees every key and clears the set. NULL-safe. */
void vep_keyset_clear(struct vep_keyset *ks);

#endif
