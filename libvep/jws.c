/*
 * jws.c - JWS compact serialization as BrowserID deployed it.
 *
 * Owns building and strictly parsing "header.payload.signature" tokens and
 * checking a parsed token against a key. Our header is exactly
 * {"alg":"<name>"}; on input other header members are ignored (deployed
 * signers never relied on any), but "alg" must name a table algorithm. It
 * must never verify with an algorithm other than the key's own (no
 * algorithm substitution), nor accept a respelled token (strict base64url,
 * strict JSON).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "b64url.h"
#include "err.h"
#include "jws.h"
#include "util.h"

/* Builds "a.b" from two NUL-terminated parts; new text or NULL. */
static char *
join_dot(const char *a, const char *b, size_t *outlen)
{
	size_t la = strlen(a), lb = strlen(b);
	char *s;

	if ((s = malloc(la + lb + 2)) == NULL)
		return NULL;
	memcpy(s, a, la);
	s[la] = '.';
	memcpy(s + la + 1, b, lb);
	s[la + lb + 1] = '\0';
	if (outlen != NULL)
		*outlen = la + lb + 1;
	return s;
}

int
vep_signer_key_sign(void *ctx, const vep_key *pub, const uint8_t *msg, size_t len, uint8_t **sig,
    size_t *siglen)
{
	(void)ctx;
	return vep_key_sign(pub, msg, len, sig, siglen);
}

int
vep_jws_sign(const vep_key *k, const json_t *payload, char **out)
{
	struct vep_signer s = { k, vep_signer_key_sign, NULL };

	if (out != NULL)
		*out = NULL;
	if (k == NULL || out == NULL)
		return VEP_ERR_ARG;
	if (!vep_key_has_private(k))
		return VEP_ERR_NOKEY;
	return vep_jws_sign_with(&s, payload, out);
}

int
vep_jws_sign_with(const struct vep_signer *s, const json_t *payload, char **out)
{
	char *ptext = NULL;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (!json_is_object(payload))
		return VEP_ERR_ARG;
	if ((ptext = json_dumps(payload, JSON_COMPACT)) == NULL)
		return VEP_ERR_NOMEM;
	rc = vep_jws_sign_text_with(s, ptext, strlen(ptext), out);
	free(ptext);
	return rc;
}

int
vep_jws_signing_input(const vep_key *pub, const char *payload, size_t plen, char **input,
    size_t *inlen)
{
	const struct vep_alg *alg;
	char htext[64];
	char *h64 = NULL, *p64 = NULL;
	int hlen, rc = VEP_ERR_NOMEM;

	if (input != NULL)
		*input = NULL;
	if (inlen != NULL)
		*inlen = 0;
	if (pub == NULL || input == NULL || inlen == NULL || payload == NULL || plen == 0 ||
	    payload[0] != '{' || (alg = vep_key_alg(pub)) == NULL)
		return VEP_ERR_ARG;
	/* Algorithm names are short ASCII words of the table: no escaping. */
	hlen = snprintf(htext, sizeof(htext), "{\"alg\":\"%s\"}", alg->name);
	if (hlen < 0 || (size_t)hlen >= sizeof(htext))
		return VEP_ERR_ARG;
	if ((h64 = vep_b64url_encode((const uint8_t *)htext, (size_t)hlen)) != NULL &&
	    (p64 = vep_b64url_encode((const uint8_t *)payload, plen)) != NULL &&
	    (*input = join_dot(h64, p64, inlen)) != NULL)
		rc = VEP_OK;
	free(h64);
	free(p64);
	return rc;
}

int
vep_jws_join(const char *input, const uint8_t *sig, size_t siglen, char **out)
{
	char *s64;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = NULL;
	if (input == NULL || sig == NULL || siglen == 0)
		return VEP_ERR_ARG;
	if ((s64 = vep_b64url_encode(sig, siglen)) == NULL)
		return VEP_ERR_NOMEM;
	*out = join_dot(input, s64, NULL);
	free(s64);
	return *out != NULL ? VEP_OK : VEP_ERR_NOMEM;
}

int
vep_jws_sign_text_with(const struct vep_signer *s, const char *payload, size_t plen,
    char **out)
{
	char *input = NULL;
	uint8_t *sig = NULL;
	size_t siglen = 0, inlen = 0;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (s == NULL || s->pub == NULL || s->sign == NULL || out == NULL)
		return VEP_ERR_ARG;
	if ((rc = vep_jws_signing_input(s->pub, payload, plen, &input, &inlen)) == 0 &&
	    (rc = s->sign(s->ctx, s->pub, (const uint8_t *)input, inlen, &sig, &siglen)) == 0)
		rc = vep_jws_join(input, sig, siglen, out);
	free(input);
	free(sig);
	return rc;
}

/* Decodes a base64url part and parses it as one strict JSON object. */
static int
decode_object(const char *s, size_t len, json_t **out)
{
	uint8_t *raw = NULL;
	size_t rawlen = 0;
	int rc;

	*out = NULL;
	if ((rc = vep_b64url_decode(s, len, &raw, &rawlen)) != 0)
		goto out;
	rc = vep_json_parse_object((const char *)raw, rawlen, out);
out:
	free(raw);
	return rc;
}

/* Parses untrusted compact JWS text. */
int
vep_jws_parse(const char *text, size_t len, vep_jws **out)
{
	const char *dot1, *dot2, *sigp;
	const json_t *algv;
	vep_jws *j = NULL;
	size_t hlen, plen, slen;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (text == NULL || out == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if (len > VEP_JWS_MAX_BYTES) {
		rc = VEP_ERR_TOOBIG;
		goto out;
	}
	/* Exactly three parts: a third '.' lands in the signature part, which
	 * the strict decoder then refuses. */
	if ((dot1 = memchr(text, '.', len)) == NULL ||
	    (dot2 = memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - text))) == NULL) {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	hlen = (size_t)(dot1 - text);
	plen = (size_t)(dot2 - dot1 - 1);
	sigp = dot2 + 1;
	slen = len - (size_t)(sigp - text);
	if ((j = calloc(1, sizeof(*j))) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	if ((rc = decode_object(text, hlen, &j->header)) != 0)
		goto out;
	algv = json_object_get(j->header, "alg");
	if (!json_is_string(algv)) {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	if ((j->alg = vep_alg_by_name(json_string_value(algv))) == NULL) {
		rc = VEP_ERR_ALG;
		goto out;
	}
	if ((rc = decode_object(dot1 + 1, plen, &j->payload)) != 0)
		goto out;
	if ((rc = vep_b64url_decode(sigp, slen, &j->sig, &j->sig_len)) != 0)
		goto out;
	if (j->sig_len == 0) {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	j->signing_input_len = (size_t)(dot2 - text);
	if ((j->signing_input = malloc(j->signing_input_len + 1)) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	memcpy(j->signing_input, text, j->signing_input_len);
	j->signing_input[j->signing_input_len] = '\0';
	*out = j;
	j = NULL;
	rc = VEP_OK;
out:
	vep_jws_free(j);
	return rc;
}

/* Verifies with k; the header's alg must be k's (no substitution). */
int
vep_jws_verify(const vep_jws *jws, const vep_key *k)
{
	int rc;

	if (jws == NULL || k == NULL || jws->alg == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if (jws->alg != vep_key_alg(k)) {
		rc = VEP_ERR_ALG;
		goto out;
	}
	rc = vep_key_verify(k, (const uint8_t *)jws->signing_input,
	    jws->signing_input_len, jws->sig, jws->sig_len);
out:
	return rc;
}

void
vep_jws_free(vep_jws *jws)
{
	if (jws == NULL)
		return;
	json_decref(jws->header);
	json_decref(jws->payload);
	free(jws->sig);
	free(jws->signing_input);
	free(jws);
}
