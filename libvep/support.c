/*
 * support.c - owns the BrowserID support document (/.well-known/browserid):
 * building a primary's, a delegating or a disabled document, and parsing an
 * untrusted one the way a verifier reads it.
 *
 * It must never publish a private key (only vep_key_to_json output goes
 * in), never accept a primary document without a usable key and both IdP
 * paths, and never follow a delegation itself: it reports the authority and
 * the caller decides (and bounds the depth).
 */
#include "support.h"

#include <stdlib.h>
#include <string.h>

#include "email.h"
#include "err.h"
#include "util.h"

#define SUPPORT_PUBKEY "public-key"
#define SUPPORT_KEYS "keys"
#define SUPPORT_AUTHN "authentication"
#define SUPPORT_PROV "provisioning"
#define SUPPORT_AUTHORITY "authority"
#define SUPPORT_DISABLED "disabled"

/* Dumps obj as compact text in insertion order. */
static int
dump(const json_t *obj, char **out)
{
	*out = json_dumps(obj, JSON_COMPACT | JSON_PRESERVE_ORDER);
	return *out != NULL ? VEP_OK : VEP_ERR_NOMEM;
}

/* An IdP path we are willing to publish: absolute, printable ASCII. */
static int
path_ok(const char *p)
{
	if (p == NULL || p[0] != '/')
		return 0;
	for (; *p != '\0'; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return 0;
	return 1;
}

int
vep_support_build(const vep_key *const *keys, size_t nkeys,
    const char *authentication, const char *provisioning, char **out)
{
	int ret = VEP_ERR_ARG;
	json_t *doc = NULL, *arr = NULL;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (keys == NULL || nkeys == 0 || nkeys > VEP_SUPPORT_MAX_KEYS ||
	    !path_ok(authentication) || !path_ok(provisioning))
		goto out;
	for (size_t i = 0; i < nkeys; i++)
		if (keys[i] == NULL)
			goto out;
	ret = VEP_ERR_NOMEM;
	if ((doc = json_object()) == NULL || (arr = json_array()) == NULL)
		goto out;
	if (json_object_set_new(doc, SUPPORT_PUBKEY, vep_key_to_json(keys[0])) != 0)
		goto out;
	for (size_t i = 0; i < nkeys; i++)
		if (json_array_append_new(arr, vep_key_to_json(keys[i])) != 0)
			goto out;
	ret = json_object_set_new(doc, SUPPORT_KEYS, arr);
	arr = NULL; /* stolen, even on failure */
	if (ret != 0 ||
	    json_object_set_new(doc, SUPPORT_AUTHN, json_string(authentication)) != 0 ||
	    json_object_set_new(doc, SUPPORT_PROV, json_string(provisioning)) != 0) {
		ret = VEP_ERR_NOMEM;
		goto out;
	}
	ret = dump(doc, out);
out:
	json_decref(arr);
	json_decref(doc);
	return ret;
}

int
vep_support_build_delegated(const char *authority, char **out)
{
	int ret = VEP_ERR_ARG;
	json_t *doc = NULL;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (!vep_host_valid(authority))
		goto out;
	ret = VEP_ERR_NOMEM;
	if ((doc = json_object()) == NULL ||
	    json_object_set_new(doc, SUPPORT_AUTHORITY, json_string(authority)) != 0)
		goto out;
	ret = dump(doc, out);
out:
	json_decref(doc);
	return ret;
}

int
vep_support_build_disabled(char **out)
{
	int ret = VEP_ERR_NOMEM;
	json_t *doc = NULL;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if ((doc = json_object()) == NULL ||
	    json_object_set_new(doc, SUPPORT_DISABLED, json_true()) != 0)
		goto out;
	ret = dump(doc, out);
out:
	json_decref(doc);
	return ret;
}

/* Copies string member name of doc into *out: VEP_ERR_INVALID unless it is
 * a non-empty string without NUL bytes. */
static int
get_string(const json_t *doc, const char *name, char **out)
{
	const json_t *v = json_object_get(doc, name);

	*out = NULL;
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return VEP_ERR_INVALID;
	if ((*out = strdup(json_string_value(v))) == NULL)
		return VEP_ERR_NOMEM;
	return VEP_OK;
}

/* Appends k to s->keys unless an equal key is already there; takes k. */
static void
add_key(struct vep_support *s, vep_key *k)
{
	for (size_t i = 0; i < s->nkeys; i++) {
		if (vep_key_public_equal(s->keys[i], k)) {
			vep_key_free(k);
			return;
		}
	}
	s->keys[s->nkeys++] = k;
}

/* The primary's members: public-key, optional keys[], both paths. */
static int
parse_primary(const json_t *doc, struct vep_support *s)
{
	int ret;
	const json_t *pk = json_object_get(doc, SUPPORT_PUBKEY);
	const json_t *arr = json_object_get(doc, SUPPORT_KEYS);
	vep_key *k = NULL;

	if (!json_is_object(pk))
		return VEP_ERR_INVALID;
	if (arr != NULL && !json_is_array(arr))
		return VEP_ERR_INVALID;
	if (arr != NULL && json_array_size(arr) > VEP_SUPPORT_MAX_KEYS)
		return VEP_ERR_TOOBIG;
	/* Room for public-key plus every listed key. */
	size_t room = 1 + (arr != NULL ? json_array_size(arr) : 0);
	if ((s->keys = calloc(room, sizeof *s->keys)) == NULL)
		return VEP_ERR_NOMEM;
	if ((ret = vep_key_from_json(pk, &k)) != 0)
		return ret;
	add_key(s, k);
	for (size_t i = 0; arr != NULL && i < json_array_size(arr); i++) {
		const json_t *e = json_array_get(arr, i);
		if (!json_is_object(e))
			return VEP_ERR_INVALID;
		if ((ret = vep_key_from_json(e, &k)) != 0)
			return ret;
		add_key(s, k);
	}
	if ((ret = get_string(doc, SUPPORT_AUTHN, &s->authentication)) != 0 ||
	    (ret = get_string(doc, SUPPORT_PROV, &s->provisioning)) != 0)
		return ret;
	return VEP_OK;
}

int
vep_support_parse(const char *text, size_t len, struct vep_support **out)
{
	int ret;
	json_t *doc = NULL;
	struct vep_support *s = NULL;
	const json_t *dis, *auth;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if ((ret = vep_json_parse_object(text, len, &doc)) != 0)
		goto out;
	if ((s = calloc(1, sizeof *s)) == NULL) {
		ret = VEP_ERR_NOMEM;
		goto out;
	}
	ret = VEP_ERR_INVALID;
	/* "disabled" wins over anything else in the document, as the
	 * deployed verifiers read it; false means "not disabled". */
	dis = json_object_get(doc, SUPPORT_DISABLED);
	if (dis != NULL && !json_is_boolean(dis))
		goto out;
	if (json_is_true(dis)) {
		s->disabled = 1;
		ret = VEP_OK;
		goto done;
	}
	auth = json_object_get(doc, SUPPORT_AUTHORITY);
	if (auth != NULL) {
		if ((ret = get_string(doc, SUPPORT_AUTHORITY, &s->authority)) != 0)
			goto out;
		if (!vep_host_valid(s->authority)) {
			ret = VEP_ERR_INVALID;
			goto out;
		}
		ret = VEP_OK;
		goto done;
	}
	if ((ret = parse_primary(doc, s)) != 0)
		goto out;
done:
	*out = s;
	s = NULL;
out:
	vep_support_free(s);
	json_decref(doc);
	return ret;
}

void
vep_support_free(struct vep_support *s)
{
	if (s == NULL)
		return;
	for (size_t i = 0; i < s->nkeys; i++)
		vep_key_free(s->keys[i]);
	free(s->keys);
	free(s->authority);
	free(s->authentication);
	free(s->provisioning);
	free(s);
}
