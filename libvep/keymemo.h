/*
 * keymemo.h - public keys that passed the key policy, remembered by their
 * JSON members, for a parser that meets the same key again and again: the
 * key process checks every certificate it signs, and a browser renews its
 * certificates with one key. A hit skips what a key costs to parse
 * (decimal into bignums, trial division, OpenSSL's key construction), which
 * is most of what that check costs.
 *
 * A key is found only when its object's members are byte for byte those
 * of one that passed, under at least the share of the policy asked for
 * (key.h: VEP_KEY_CHECKS_ALL serves a CHEAP request, not the reverse), so
 * nothing can skip a rule it has not passed. Objects whose members are not
 * all strings, or longer than VEP_KEYMEMO_BYTES_MAX, are parsed and never
 * remembered. Direct-mapped: a key whose slot another takes is parsed
 * again; an attacker aiming keys at one slot only makes them be parsed.
 *
 * One thread at a time per memo (no locks).
 */
#ifndef VEP_KEYMEMO_H
#define VEP_KEYMEMO_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "key.h"

/* Keys remembered per memo. */
#define VEP_KEYMEMO_SLOTS 64
/* Longest member encoding remembered (bytes): a DSA-2048 key's members
 * come to under 2 KiB. */
#define VEP_KEYMEMO_BYTES_MAX 4096

typedef struct vep_keymemo vep_keymemo;

/* Writes into buf the members of obj as bytes that tell two objects apart
 * exactly: each name and string value, length-prefixed (4 bytes,
 * big-endian; so names and values may hold any byte, NUL included), in the
 * object's order. Two objects with the same encoding have the same
 * members and values, so they are the same key. Returns the length, or 0
 * when obj is not an object of string members only that fits in
 * VEP_KEYMEMO_BYTES_MAX (such an object is simply not remembered). */
size_t vep_key_json_members(const json_t *obj, uint8_t buf[VEP_KEYMEMO_BYTES_MAX]);

/* Returns 0 with *out, or VEP_ERR_NOMEM. */
int vep_keymemo_new(vep_keymemo **out);

/* vep_key_from_json_checked(obj, checks, out) with memo (may be NULL: no
 * memo). *out is new either way (vep_key_free): on a hit it shares the
 * remembered key's OpenSSL key (vep_key_share). Errors are
 * vep_key_from_json_checked's. */
int vep_key_from_json_memo(vep_keymemo *memo, const json_t *obj, enum vep_key_checks checks,
    vep_key **out);

/* NULL-safe. */
void vep_keymemo_free(vep_keymemo *memo);

#endif
