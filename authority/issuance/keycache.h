/*
 * issuance/keycache.h - the user keys one loop accepted lately, remembered by
 * the exact JSON text the client sent. A browser renewing its certificates
 * sends the same key every time, and turning that text into a key (decimal
 * bignums, OpenSSL's key construction), fingerprinting it (decimal again,
 * SHA-256) and writing it back into the certificate's JSON cost more than
 * the rest of the request: a hit skips all three.
 *
 * One per event loop (no locks). Only a key that passed the whole key policy
 * is remembered, under its own text: a text is found only if it is byte for
 * byte one that passed, so nothing a client sends can skip a check it has
 * not passed. A key the client sent as a JSON object rather than as text
 * is remembered under its members' encoding (keymemo.h's
 * vep_key_json_members), in a space of its own (KEYCACHE_MEMBERS): the
 * same rule, byte for byte, without writing the object out as text per
 * request. Direct-mapped: a text whose slot another takes is parsed
 * again.
 */
#ifndef AUTHORITY_ISSUANCE_KEYCACHE_H
#define AUTHORITY_ISSUANCE_KEYCACHE_H

#include <stddef.h>

#include <jansson.h>

#include "key.h"

/* Texts remembered per loop. */
#define KEYCACHE_SLOTS 256
/* Longest text remembered (bytes): a DSA-2048 key's JSON is under 2 KiB. */
#define KEYCACHE_TEXT_MAX 4096

struct keycache;

/* A remembered key: all borrowed from the cache, valid until the next
 * keycache_put or keycache_free. */
struct keycache_entry {
	const vep_key *key;
	const char *fp;         /* vep_key_fingerprint's */
	const char *text;       /* vep_key_to_json_text's: what certificates carry */
};

/* What a remembered text is. */
enum keycache_kind {
	KEYCACHE_TEXT,          /* the JSON text the client sent */
	KEYCACHE_MEMBERS,       /* an object's vep_key_json_members encoding */
};

/* Returns 0 with *out, or VEP_ERR_NOMEM. */
int keycache_new(struct keycache **out);

/* The key remembered under text (len bytes) of that kind, or NULL. */
const struct keycache_entry *keycache_get(struct keycache *kc, enum keycache_kind kind,
    const char *text, size_t len);

/* Remembers key (taken: the cache frees it) with its fingerprint fp under
 * text of that kind, in place of what the slot held. Returns the entry, or NULL when
 * the text is too long or memory ran out (key freed all the same). */
const struct keycache_entry *keycache_put(struct keycache *kc, enum keycache_kind kind,
    const char *text, size_t len, vep_key *key, const char *fp);

/* NULL-safe. */
void keycache_free(struct keycache *kc);

#endif
