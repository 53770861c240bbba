/*
 * keymemo.c - keys by their JSON members (contract in keymemo.h).
 */
#include "keymemo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "util.h"

struct slot {
	uint8_t *bytes;                /* owned: the member encoding; NULL: empty */
	size_t len;
	enum vep_key_checks checks;    /* what the key passed */
	vep_key *key;                  /* owned */
};

struct vep_keymemo {
	struct slot slots[VEP_KEYMEMO_SLOTS];
};

/* Appends a length-prefixed field (4 bytes big-endian, then the bytes) to
 * buf at *off. Returns 0, or -1 when it does not fit. */
static int
put_field(uint8_t *buf, size_t *off, const char *s, size_t n)
{
	if (n > VEP_KEYMEMO_BYTES_MAX || VEP_KEYMEMO_BYTES_MAX - *off < n + 4)
		return -1;
	buf[(*off)++] = (uint8_t)(n >> 24);
	buf[(*off)++] = (uint8_t)(n >> 16);
	buf[(*off)++] = (uint8_t)(n >> 8);
	buf[(*off)++] = (uint8_t)n;
	memcpy(buf + *off, s, n);
	*off += n;
	return 0;
}

size_t
vep_key_json_members(const json_t *obj, uint8_t buf[VEP_KEYMEMO_BYTES_MAX])
{
	const char *name;
	json_t *v;
	size_t off = 0;

	if (!json_is_object(obj))
		return 0;
	/* jansson's iteration macro takes a non-const object; nothing is
	 * changed. */
	json_object_foreach((json_t *)obj, name, v) {
		if (!json_is_string(v) || put_field(buf, &off, name, strlen(name)) != 0 ||
		    put_field(buf, &off, json_string_value(v), json_string_length(v)) != 0)
			return 0;
	}
	return off;
}

static size_t
slot_of(const uint8_t *b, size_t len)
{
	return (size_t)(vep_fnv1a(b, len) % VEP_KEYMEMO_SLOTS);
}

static void
slot_clear(struct slot *s)
{
	free(s->bytes);
	vep_key_free(s->key);
	memset(s, 0, sizeof(*s));
}

int
vep_keymemo_new(vep_keymemo **out)
{
	*out = calloc(1, sizeof(**out));
	return *out != NULL ? VEP_OK : VEP_ERR_NOMEM;
}

/* 1 when a key that passed have serves a request for want: ALL is more
 * than CHEAP. */
static int
checks_cover(enum vep_key_checks have, enum vep_key_checks want)
{
	return have == VEP_KEY_CHECKS_ALL || have == want;
}

int
vep_key_from_json_memo(vep_keymemo *memo, const json_t *obj, enum vep_key_checks checks,
    vep_key **out)
{
	uint8_t buf[VEP_KEYMEMO_BYTES_MAX];
	struct slot *s;
	vep_key *k = NULL;
	size_t len;
	int rc;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (memo == NULL || (len = vep_key_json_members(obj, buf)) == 0)
		return vep_key_from_json_checked(obj, checks, out);
	s = &memo->slots[slot_of(buf, len)];
	if (s->bytes != NULL && s->len == len && memcmp(s->bytes, buf, len) == 0 &&
	    checks_cover(s->checks, checks))
		return vep_key_share(s->key, out);
	if ((rc = vep_key_from_json_checked(obj, checks, &k)) != 0)
		return rc;
	/* Remembered when there is room; the answer does not depend on it. */
	slot_clear(s);
	if ((s->bytes = malloc(len)) != NULL && vep_key_share(k, &s->key) == 0) {
		memcpy(s->bytes, buf, len);
		s->len = len;
		s->checks = checks;
	} else {
		slot_clear(s);
	}
	*out = k;
	return VEP_OK;
}

void
vep_keymemo_free(vep_keymemo *memo)
{
	if (memo == NULL)
		return;
	for (size_t i = 0; i < VEP_KEYMEMO_SLOTS; i++)
		slot_clear(&memo->slots[i]);
	free(memo);
}
