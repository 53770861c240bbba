/*
 * auth/token.c - session and CSRF tokens, and the session cookie (contract in
 * auth/token.h).
 *
 * Owns the token format. Must never compare secrets with memcmp/strcmp
 * (vep_memeq_ct only) and never leave a token in freed memory.
 */
#include "auth/token.h"

#include <stdio.h>
#include <string.h>

#include "b64url.h"
#include "err.h"
#include "secmem.h"

/* Domain-separates the CSRF token from anything else derived from a token. */
static const char csrf_label[] = "vep-csrf";

/* Base64url of exactly 32 bytes into a fixed buffer, wiping the heap copy. */
static int
encode32(const uint8_t in[32], char out[SESSION_TOKEN_CHARS + 1])
{
	char *s = vep_b64url_encode(in, 32);

	if (s == NULL)
		return VEP_ERR_NOMEM;
	if (strlen(s) != SESSION_TOKEN_CHARS) {
		vep_free_secret_str(s);
		return VEP_ERR_CRYPTO;
	}
	memcpy(out, s, SESSION_TOKEN_CHARS + 1);
	vep_free_secret_str(s);
	return VEP_OK;
}

/* Fills the derived fields of t from t->token. */
static int
derive(vep_digester *d, struct session_tokens *t)
{
	uint8_t mac[VEP_SHA256_BYTES];
	int rc;

	rc = d != NULL ?
	    vep_hmac_sha256_with(d, t->token, SESSION_TOKEN_CHARS, csrf_label,
	    sizeof(csrf_label) - 1, mac) :
	    vep_hmac_sha256(t->token, SESSION_TOKEN_CHARS, csrf_label, sizeof(csrf_label) - 1,
	    mac);
	if (rc == 0 && (rc = encode32(mac, t->csrf)) == 0)
		rc = d != NULL ? vep_sha256_with(d, t->token, SESSION_TOKEN_CHARS, t->token_hash) :
		    vep_sha256(t->token, SESSION_TOKEN_CHARS, t->token_hash);
	vep_memzero(mac, sizeof(mac));
	return rc;
}

int
session_tokens_new(vep_digester *d, struct session_tokens *t)
{
	uint8_t raw[SESSION_TOKEN_BYTES];
	int rc;

	memset(t, 0, sizeof(*t));
	if ((rc = vep_random(raw, sizeof(raw))) == 0 && (rc = encode32(raw, t->token)) == 0)
		rc = derive(d, t);
	vep_memzero(raw, sizeof(raw));
	if (rc != 0)
		session_tokens_wipe(t);
	return rc;
}

static int
b64url_char(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	    c == '-' || c == '_';
}

int
session_tokens_from(vep_digester *d, const char *token, struct session_tokens *t)
{
	size_t i;
	int rc;

	memset(t, 0, sizeof(*t));
	for (i = 0; token[i] != '\0' && i <= SESSION_TOKEN_CHARS; i++)
		if (!b64url_char((unsigned char)token[i]))
			return VEP_ERR_INVALID;
	if (i != SESSION_TOKEN_CHARS)
		return VEP_ERR_INVALID;
	memcpy(t->token, token, SESSION_TOKEN_CHARS + 1);
	if ((rc = derive(d, t)) != 0)
		session_tokens_wipe(t);
	return rc;
}

int
session_csrf_matches(const struct session_tokens *t, const char *header)
{
	/* The length is public (fixed); only the bytes are compared in
	 * constant time. */
	if (header == NULL || strlen(header) != SESSION_TOKEN_CHARS)
		return 0;
	return vep_memeq_ct(t->csrf, header, SESSION_TOKEN_CHARS);
}

int
session_cookie_find(const char *h, char token[SESSION_TOKEN_CHARS + 1])
{
	const size_t nlen = sizeof(SESSION_COOKIE) - 1;
	int found = 0;
	size_t vlen;

	token[0] = '\0';
	while (h != NULL && *h != '\0') {
		while (*h == ' ' || *h == '\t' || *h == ';')
			h++;
		vlen = strcspn(h, ";");
		if (vlen > nlen && strncmp(h, SESSION_COOKIE "=", nlen + 1) == 0) {
			const char *v = h + nlen + 1;
			size_t n = vlen - nlen - 1;
			while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
				n--;
			if (found++ || n != SESSION_TOKEN_CHARS) {
				vep_memzero(token, SESSION_TOKEN_CHARS + 1);
				return VEP_ERR_INVALID;
			}
			memcpy(token, v, n);
			token[n] = '\0';
		}
		h += vlen;
	}
	return found ? VEP_OK : VEP_ERR_NOKEY;
}

void
session_cookie_set(char out[SESSION_COOKIE_BUFSZ], const char *token, long max_age_s)
{
	snprintf(out, SESSION_COOKIE_BUFSZ,
	    SESSION_COOKIE "=%s; Path=/; Max-Age=%ld; Secure; HttpOnly; SameSite=None",
	    token, max_age_s);
}

const char *
session_cookie_clear(void)
{
	return SESSION_COOKIE "=; Path=/; Max-Age=0; Secure; HttpOnly; SameSite=None";
}

void
session_tokens_wipe(struct session_tokens *t)
{
	vep_memzero(t, sizeof(*t));
}
