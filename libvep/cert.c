/*
 * cert.c - owns BrowserID identity certificates: building and signing the
 * payload as Persona deployed it, parsing an untrusted one, and checking its
 * signature and validity window.
 *
 * It must never embed the client's key bytes (the key is re-serialised from
 * what key.c parsed), never sign something a deployed verifier would refuse
 * (bad email, bad issuer, inverted or over-long lifetime), and never decide
 * issuer policy: which issuer may speak for which email is the caller's
 * business (assertion.c takes it as an argument).
 */
#include "cert.h"

#include <stdlib.h>
#include <string.h>

#include "email.h"
#include "err.h"
#include "util.h"

/* Payload member names, written in this order (as Persona's IdPs did). */
#define CERT_ISS "iss"
#define CERT_IAT "iat"
#define CERT_EXP "exp"
#define CERT_PUBKEY "public-key"
#define CERT_PRINCIPAL "principal"
#define CERT_EMAIL "email"

/* 1 when s is a lowercase issuer host as vep_host_valid accepts it. */
static int
issuer_ok(const char *s)
{
	if (!vep_host_valid(s))
		return 0;
	for (; *s != '\0'; s++)
		if (*s >= 'A' && *s <= 'Z')
			return 0;
	return 1;
}

/* 1 when s is already a normalised address (valid, domain lowercase). */
static int
email_normalised(const char *s)
{
	char *norm = NULL;
	int ok = vep_email_normalize(s, strlen(s), &norm) == 0 && strcmp(norm, s) == 0;
	free(norm);
	return ok;
}

/* Adds member name to obj, stealing v (jansson's json_object_set_new). */
static int
set_new(json_t *obj, const char *name, json_t *v)
{
	if (v == NULL)
		return VEP_ERR_NOMEM;
	return json_object_set_new(obj, name, v) == 0 ? VEP_OK : VEP_ERR_NOMEM;
}

int
vep_cert_sign(const vep_key *domain_key, const struct vep_cert_params *p, char **out)
{
	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (domain_key == NULL)
		return VEP_ERR_ARG;
	if (!vep_key_has_private(domain_key))
		return VEP_ERR_NOKEY;
	return vep_cert_sign_with(&(struct vep_signer){ domain_key, vep_signer_key_sign, NULL },
	    p, out);
}

int
vep_cert_sign_with(const struct vep_signer *s, const struct vep_cert_params *p, char **out)
{
	int ret = VEP_ERR_ARG;
	json_t *payload = NULL, *principal = NULL;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (s == NULL || p == NULL || p->pubkey == NULL || p->issuer == NULL || p->email == NULL)
		goto out;
	if (!issuer_ok(p->issuer))
		goto out;
	if (!email_normalised(p->email)) {
		ret = VEP_ERR_EMAIL;
		goto out;
	}
	/* Written this way so a huge exp cannot overflow the subtraction. */
	if (p->iat_ms < 0 || p->exp_ms <= p->iat_ms ||
	    p->exp_ms - p->iat_ms > VEP_CERT_MAX_LIFETIME_MS)
		goto out;

	ret = VEP_ERR_NOMEM;
	if ((payload = json_object()) == NULL || (principal = json_object()) == NULL)
		goto out;
	if ((ret = set_new(principal, CERT_EMAIL, json_string(p->email))) != 0)
		goto out;
	if ((ret = set_new(payload, CERT_ISS, json_string(p->issuer))) != 0 ||
	    (ret = set_new(payload, CERT_IAT, json_integer(p->iat_ms))) != 0 ||
	    (ret = set_new(payload, CERT_EXP, json_integer(p->exp_ms))) != 0 ||
	    (ret = set_new(payload, CERT_PUBKEY, p->pubkey_json != NULL ?
	    json_incref((json_t *)p->pubkey_json) : vep_key_to_json(p->pubkey))) != 0)
		goto out;
	ret = set_new(payload, CERT_PRINCIPAL, principal);
	principal = NULL; /* stolen, even on failure */
	if (ret != 0)
		goto out;
	ret = vep_jws_sign_with(s, payload, out);
out:
	json_decref(principal);
	json_decref(payload);
	return ret;
}

int
vep_cert_parse(const char *text, size_t len, vep_cert **out)
{
	return vep_cert_parse_checked(text, len, VEP_KEY_CHECKS_ALL, out);
}

int
vep_cert_parse_checked(const char *text, size_t len, enum vep_key_checks checks,
    vep_cert **out)
{
	int ret;
	vep_cert *c = NULL;
	const json_t *pl, *iss, *pk, *principal, *email;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (text == NULL)
		return VEP_ERR_ARG;
	if ((c = calloc(1, sizeof *c)) == NULL)
		return VEP_ERR_NOMEM;
	c->iat_ms = -1;
	if ((ret = vep_jws_parse(text, len, &c->jws)) != 0)
		goto out;
	pl = c->jws->payload;

	ret = VEP_ERR_INVALID;
	iss = json_object_get(pl, CERT_ISS);
	if (!json_is_string(iss) || !vep_host_valid(json_string_value(iss)))
		goto out;
	if (vep_json_get_ms(pl, CERT_EXP, &c->exp_ms) != 0)
		goto out;
	/* iat is optional (early Persona certificates lack it), but when
	 * present it must be a valid time, not silently ignored. */
	if (json_object_get(pl, CERT_IAT) != NULL &&
	    vep_json_get_ms(pl, CERT_IAT, &c->iat_ms) != 0)
		goto out;
	pk = json_object_get(pl, CERT_PUBKEY);
	principal = json_object_get(pl, CERT_PRINCIPAL);
	if (!json_is_object(pk) || !json_is_object(principal))
		goto out;
	email = json_object_get(principal, CERT_EMAIL);
	if (!json_is_string(email))
		goto out;
	/* Kept exactly as certified (comparisons are the caller's), but it
	 * must be an address a verifier would accept. */
	const char *e = json_string_value(email);
	size_t elen = json_string_length(email);
	char *norm = NULL;
	if ((ret = vep_email_normalize(e, elen, &norm)) != 0)
		goto out;
	free(norm);

	ret = VEP_ERR_NOMEM;
	if ((c->issuer = strdup(json_string_value(iss))) == NULL ||
	    (c->email = strdup(e)) == NULL)
		goto out;
	if ((ret = vep_key_from_json_checked(pk, checks, &c->pubkey)) != 0)
		goto out;
	*out = c;
	c = NULL;
	ret = VEP_OK;
out:
	vep_cert_free(c);
	return ret;
}

int
vep_cert_verify(const vep_cert *c, const vep_key *const *keys, size_t nkeys,
    int64_t now_ms)
{
	int ret = VEP_ERR_BADSIG;

	if (c == NULL || c->jws == NULL || (keys == NULL && nkeys > 0)) {
		ret = VEP_ERR_ARG;
		goto out;
	}
	if (nkeys == 0) {
		ret = VEP_ERR_NOKEY;
		goto out;
	}
	for (size_t i = 0; i < nkeys; i++) {
		/* A key of another algorithm cannot have made this signature;
		 * skipping it keeps vep_jws_verify's VEP_ERR_ALG from masking
		 * a later key that does match. */
		const struct vep_alg *a = keys[i] ? vep_key_alg(keys[i]) : NULL;
		if (a == NULL || strcmp(a->name, c->jws->alg->name) != 0)
			continue;
		if (vep_jws_verify(c->jws, keys[i]) == 0) {
			ret = VEP_OK;
			break;
		}
	}
	if (ret == VEP_OK)
		ret = vep_time_check(c->iat_ms, c->exp_ms, now_ms);
out:
	return ret;
}

int
vep_time_check(int64_t iat_ms, int64_t exp_ms, int64_t now_ms)
{
	/* Written so that no subtraction can overflow, whatever the caller
	 * passes: iat is not negative there, and now is checked first. */
	if (iat_ms >= 0 && now_ms < iat_ms - VEP_CLOCK_SKEW_MS)
		return VEP_ERR_NOTYET;
	if (now_ms >= INT64_MIN + VEP_CLOCK_SKEW_MS && exp_ms <= now_ms - VEP_CLOCK_SKEW_MS)
		return VEP_ERR_EXPIRED;
	return VEP_OK;
}

void
vep_cert_free(vep_cert *c)
{
	if (c == NULL)
		return;
	vep_jws_free(c->jws);
	free(c->issuer);
	free(c->email);
	vep_key_free(c->pubkey);
	free(c);
}
