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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "email.h"
#include "err.h"
#include "keymemo.h"
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

/* The payload's text, written directly in the member order above and
 * escaped as json_dumps escapes (vep_json_quote): the same bytes as the
 * jansson tree this once was, without building one per certificate.
 * pubkey is the key's canonical JSON text. *out is new text (free()). */
static int
payload_text(const struct vep_cert_params *p, const char *pubkey, char **out, size_t *outlen)
{
	size_t ilen = strlen(p->issuer), elen = strlen(p->email), klen = strlen(pubkey);
	size_t cap = VEP_JSON_QUOTED_MAX(ilen) + VEP_JSON_QUOTED_MAX(elen) + klen + 128;
	char *t, *o;

	*out = NULL;
	if ((t = malloc(cap)) == NULL)
		return VEP_ERR_NOMEM;
	o = t;
	o += sprintf(o, "{\"" CERT_ISS "\":");
	o += vep_json_quote(o, p->issuer, ilen);
	o += sprintf(o, ",\"" CERT_IAT "\":%lld,\"" CERT_EXP "\":%lld,\"" CERT_PUBKEY "\":",
	    (long long)p->iat_ms, (long long)p->exp_ms);
	memcpy(o, pubkey, klen);
	o += klen;
	o += sprintf(o, ",\"" CERT_PRINCIPAL "\":{\"" CERT_EMAIL "\":");
	o += vep_json_quote(o, p->email, elen);
	*o++ = '}';
	*o++ = '}';
	*o = '\0';
	*out = t;
	*outlen = (size_t)(o - t);
	return VEP_OK;
}

int
vep_cert_signing_input(const vep_key *pub, const struct vep_cert_params *p, char **input,
    size_t *inlen)
{
	int ret = VEP_ERR_ARG;
	char *made = NULL, *payload = NULL;
	const char *pubkey;
	size_t plen = 0;

	if (input == NULL || inlen == NULL)
		return VEP_ERR_ARG;
	*input = NULL;
	*inlen = 0;
	if (pub == NULL || p == NULL || p->pubkey == NULL || p->issuer == NULL ||
	    p->email == NULL)
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
	if ((pubkey = p->pubkey_text) == NULL &&
	    (pubkey = made = vep_key_to_json_text(p->pubkey)) == NULL)
		goto out;
	if ((ret = payload_text(p, pubkey, &payload, &plen)) != 0)
		goto out;
	ret = vep_jws_signing_input(pub, payload, plen, input, inlen);
out:
	free(made);
	free(payload);
	return ret;
}

int
vep_cert_sign_with(const struct vep_signer *s, const struct vep_cert_params *p, char **out)
{
	char *input = NULL;
	uint8_t *sig = NULL;
	size_t inlen = 0, siglen = 0;
	int ret;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (s == NULL || s->sign == NULL)
		return VEP_ERR_ARG;
	if ((ret = vep_cert_signing_input(s->pub, p, &input, &inlen)) == 0 &&
	    (ret = s->sign(s->ctx, s->pub, (const uint8_t *)input, inlen, &sig, &siglen)) == 0)
		ret = vep_jws_join(input, sig, siglen, out);
	free(input);
	free(sig);
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
	return vep_cert_parse_memo(text, len, checks, NULL, out);
}

int
vep_cert_parse_memo(const char *text, size_t len, enum vep_key_checks checks,
    vep_keymemo *memo, vep_cert **out)
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
	if ((ret = vep_key_from_json_memo(memo, pk, checks, &c->pubkey)) != 0)
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
