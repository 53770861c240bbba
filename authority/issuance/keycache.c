/*
 * issuance/keycache.c - user keys by their JSON text (contract in
 * issuance/keycache.h).
 */
#include "issuance/keycache.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "util.h"

struct slot {
	char *text;                    /* owned; NULL: empty */
	size_t len;
	enum keycache_kind kind;
	vep_key *key;                  /* owned */
	char *json;                    /* owned: the key's canonical JSON text */
	char fp[VEP_FINGERPRINT_BUFSZ];
	struct keycache_entry entry;   /* pointing into the above */
};

struct keycache {
	struct slot slots[KEYCACHE_SLOTS];
};

/* Where text lives (vep_fnv1a: an attacker who aims two texts at one slot
 * only makes both be parsed again). */
static size_t
slot_of(const char *text, size_t len)
{
	return (size_t)(vep_fnv1a(text, len) % KEYCACHE_SLOTS);
}

static void
slot_clear(struct slot *s)
{
	free(s->text);
	vep_key_free(s->key);
	free(s->json);
	memset(s, 0, sizeof(*s));
}

int
keycache_new(struct keycache **out)
{
	*out = calloc(1, sizeof(**out));
	return *out != NULL ? VEP_OK : VEP_ERR_NOMEM;
}

const struct keycache_entry *
keycache_get(struct keycache *kc, enum keycache_kind kind, const char *text, size_t len)
{
	struct slot *s = &kc->slots[slot_of(text, len)];

	if (s->text == NULL || s->kind != kind || s->len != len || memcmp(s->text, text, len) != 0)
		return NULL;
	return &s->entry;
}

const struct keycache_entry *
keycache_put(struct keycache *kc, enum keycache_kind kind, const char *text, size_t len,
    vep_key *key, const char *fp)
{
	struct slot *s;

	if (len > KEYCACHE_TEXT_MAX) {
		vep_key_free(key);
		return NULL;
	}
	s = &kc->slots[slot_of(text, len)];
	slot_clear(s);
	if ((s->text = malloc(len + 1)) == NULL || (s->json = vep_key_to_json_text(key)) == NULL) {
		slot_clear(s);
		vep_key_free(key);
		return NULL;
	}
	memcpy(s->text, text, len);
	s->text[len] = '\0';
	s->len = len;
	s->kind = kind;
	s->key = key;
	snprintf(s->fp, sizeof(s->fp), "%s", fp);
	s->entry.key = s->key;
	s->entry.fp = s->fp;
	s->entry.text = s->json;
	return &s->entry;
}

void
keycache_free(struct keycache *kc)
{
	size_t i;

	if (kc == NULL)
		return;
	for (i = 0; i < KEYCACHE_SLOTS; i++)
		slot_clear(&kc->slots[i]);
	free(kc);
}
