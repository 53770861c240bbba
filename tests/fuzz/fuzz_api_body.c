/*
 * fuzz_api_body.c - the HTTP API's request bodies: the strict JSON object
 * parser every POST goes through (vep_json_parse_object), then what the
 * handlers take from it: "pubkey" for /api/cert (an object, or the JSON
 * text a user agent's genKeyPair returns), "email" for /api/login; and the
 * raw bytes as PAM's text (a prompt, a message) on its way into a 202
 * answer (vep_utf8_sanitize).
 *
 * Invariants: the parser accepts exactly what jansson's json_loadb does
 * (JSON_REJECT_DUPLICATES, one object) and builds an equal tree; an
 * accepted body is an object that survives a compact re-serialisation and
 * re-parse unchanged; an accepted key has a public
 * half only and a canonical text that parses back to the same key; an
 * accepted email is idempotent under normalisation; any bytes, sanitised,
 * are a string jansson takes, sanitising again changes nothing, and a
 * body's strings (already UTF-8) are left as they are.
 */
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "email.h"
#include "fuzz.h"
#include "key.h"
#include "util.h"

static void
check_key(const json_t *pk)
{
	vep_key *k = NULL, *k2 = NULL;
	char *text;
	int rc;

	if (json_is_object(pk))
		rc = vep_key_from_json(pk, &k);
	else if (json_is_string(pk))
		rc = vep_key_from_json_text(json_string_value(pk), json_string_length(pk), &k);
	else
		return;
	if (rc != 0)
		return;
	FUZZ_CHECK(!vep_key_has_private(k));
	text = vep_key_to_json_text(k);
	FUZZ_CHECK(text != NULL);
	FUZZ_CHECK(vep_key_from_json_text(text, strlen(text), &k2) == 0);
	FUZZ_CHECK(vep_key_public_equal(k, k2));
	free(text);
	vep_key_free(k2);
	vep_key_free(k);
}

static void
check_email(const json_t *e)
{
	char *n = NULL, *n2 = NULL;

	if (!json_is_string(e) ||
	    vep_email_normalize(json_string_value(e), json_string_length(e), &n) != 0)
		return;
	FUZZ_CHECK(vep_email_normalize(n, strlen(n), &n2) == 0);
	FUZZ_CHECK(strcmp(n, n2) == 0);
	free(n);
	free(n2);
}

/* PAM's text is any bytes up to its NUL. */
static void
check_pam_text(const uint8_t *data, size_t len)
{
	char *t = malloc(len + 1), *again;
	json_t *j;

	FUZZ_CHECK(t != NULL);
	memcpy(t, data, len);
	t[len] = '\0';
	vep_utf8_sanitize(t);
	FUZZ_CHECK((j = json_string(t)) != NULL);
	json_decref(j);
	again = strdup(t);
	FUZZ_CHECK(again != NULL);
	vep_utf8_sanitize(again);
	FUZZ_CHECK(strcmp(again, t) == 0);
	free(again);
	free(t);
}

/* A string a body held is UTF-8 already: sanitising keeps it. */
static void
check_body_text(const json_t *s)
{
	char *t;

	if (!json_is_string(s) || strlen(json_string_value(s)) != json_string_length(s))
		return;
	t = strdup(json_string_value(s));
	FUZZ_CHECK(t != NULL);
	vep_utf8_sanitize(t);
	FUZZ_CHECK(strcmp(t, json_string_value(s)) == 0);
	free(t);
}

/* jansson's reader, as vep_json_parse_object used it before it read the
 * text itself: the two must agree on every input. */
static void
check_reference(const uint8_t *data, size_t len, const json_t *ours)
{
	json_error_t e;
	json_t *v = NULL;

	if (len <= VEP_JSON_MAX_BYTES && memchr(data, '\0', len) == NULL)
		v = json_loadb((const char *)data, len, JSON_REJECT_DUPLICATES, &e);
	if (v != NULL && !json_is_object(v)) {
		json_decref(v);
		v = NULL;
	}
	FUZZ_CHECK((v == NULL) == (ours == NULL));
	FUZZ_CHECK(v == NULL || json_equal(v, ours));
	json_decref(v);
}

int
fuzz_main(const uint8_t *data, size_t len)
{
	json_t *o = NULL, *again = NULL;
	char *text;

	check_pam_text(data, len);
	(void)vep_json_parse_object((const char *)data, len, &o);
	check_reference(data, len, o);
	if (o == NULL)
		return 0;
	FUZZ_CHECK(json_is_object(o));
	text = json_dumps(o, JSON_COMPACT | JSON_ENCODE_ANY);
	FUZZ_CHECK(text != NULL);
	FUZZ_CHECK(vep_json_parse_object(text, strlen(text), &again) == 0);
	FUZZ_CHECK(json_equal(o, again));
	free(text);
	json_decref(again);
	check_key(json_object_get(o, "pubkey"));
	check_email(json_object_get(o, "email"));
	check_body_text(json_object_get(o, "answer"));
	check_body_text(json_object_get(o, "continuation"));
	json_decref(o);
	return 0;
}
