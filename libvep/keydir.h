/*
 * keydir.h - a domain's key directory, shared by vep-keytool and the
 * authority so both agree on one layout:
 *
 *   DIR/current.pem    the signing key (required), mode 0600
 *   DIR/previous.pem   the key before the last rotation (optional), 0600
 *
 * Both are published in the support document ("keys"); only current signs.
 * Rotation keeps every step atomic (new key written to a temporary file,
 * fsynced, then renamed; the directory fsynced), so a crash leaves either the
 * old or the new pair, never a missing current key.
 */
#ifndef VEP_KEYDIR_H
#define VEP_KEYDIR_H

#include "key.h"

#define VEP_KEYDIR_CURRENT "current.pem"
#define VEP_KEYDIR_PREVIOUS "previous.pem"

struct vep_keyset {
	vep_key *current;   /* owned, with private half */
	vep_key *previous;  /* owned, may be NULL */
};

/* Loads DIR's keys (permission rules of vep_key_load_private apply to
 * each). out is cleared on entry; on error nothing is left allocated. */
int vep_keydir_load(const char *dir, struct vep_keyset *out);

/* Creates DIR (mode 0700) if missing and a new RSA-2048 current key if
 * DIR has none. Leaves existing keys alone. *created set to 1 when a key
 * was generated (created may be NULL). */
int vep_keydir_ensure(const char *dir, int *created);

/* current -> previous (an older previous is retired), new current. */
int vep_keydir_rotate(const char *dir);

/* Removes previous.pem (no error when there is none). */
int vep_keydir_retire(const char *dir);

/* Frees both keys and clears the set. NULL-safe. */
void vep_keyset_clear(struct vep_keyset *ks);

#endif
