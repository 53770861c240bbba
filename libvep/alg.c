/*
 * alg.c - the one table of JWS algorithms, the table of families, and the
 * strict number-string helpers the families share.
 *
 * Owns which (family, size) pairs exist; nothing else in libvep lists them.
 * It must never grow an entry the deployed verifiers do not know (their
 * parsers reject anything else, so a certificate using it would be useless).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/err.h>

#include "alg.h"
#include "alg_impl.h"
#include "err.h"
#include "key.h"

static const struct vep_alg alg_table[] = {
	{ "RS256", VEP_FAMILY_RSA, 2048, 0, 256 },
	{ "RS128", VEP_FAMILY_RSA, 1024, 0, 128 },
	{ "DS128", VEP_FAMILY_DSA, 1024, 160, 40 },
	{ "DS256", VEP_FAMILY_DSA, 2048, 256, 64 },
};

#define ALG_COUNT (sizeof(alg_table) / sizeof(alg_table[0]))

static const struct vep_alg_ops *const family_table[] = {
	&vep_alg_rsa_ops,
	&vep_alg_dsa_ops,
};

#define FAMILY_COUNT (sizeof(family_table) / sizeof(family_table[0]))

/* Looks up by JWS name (case-sensitive, as the verifiers compare it). */
const struct vep_alg *
vep_alg_by_name(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < ALG_COUNT; i++)
		if (strcmp(alg_table[i].name, name) == 0)
			return &alg_table[i];
	return NULL;
}

/* Looks up by family and sizes; qbits is ignored for RSA. */
const struct vep_alg *
vep_alg_by_size(enum vep_family family, int bits, int qbits)
{
	size_t i;

	for (i = 0; i < ALG_COUNT; i++) {
		const struct vep_alg *a = &alg_table[i];

		if (a->family != family || a->bits != bits)
			continue;
		if (family == VEP_FAMILY_DSA && a->qbits != qbits)
			continue;
		return a;
	}
	return NULL;
}

void
vep_alg_sizes_text(char *out, size_t outlen)
{
	static const struct {
		enum vep_family family;
		const char *name;
	} fam[] = { { VEP_FAMILY_RSA, "RSA" }, { VEP_FAMILY_DSA, "DSA" } };
	size_t used = 0, f, i;
	int n, first;

	if (out == NULL || outlen == 0)
		return;
	out[0] = '\0';
	for (f = 0; f < sizeof(fam) / sizeof(fam[0]); f++) {
		first = 1;
		for (i = 0; i < ALG_COUNT && used < outlen; i++) {
			const struct vep_alg *a = &alg_table[i];

			if (a->family != fam[f].family)
				continue;
			if (a->qbits > 0)
				n = snprintf(out + used, outlen - used, "%s%d/%d", first ?
				    (f > 0 ? " bits, DSA " : "DSA ") : " or ", a->bits, a->qbits);
			else
				n = snprintf(out + used, outlen - used, "%s%d", first ?
				    (f > 0 ? " bits, RSA " : "RSA ") : " or ", a->bits);
			used += n > 0 ? (size_t)n : 0;
			first = 0;
		}
	}
	if (used < outlen)
		snprintf(out + used, outlen - used, " bits");
}

const struct vep_alg_ops *
vep_alg_ops_by_json_name(const char *name)
{
	size_t i;

	if (name == NULL)
		return NULL;
	for (i = 0; i < FAMILY_COUNT; i++)
		if (strcmp(family_table[i]->json_name, name) == 0)
			return family_table[i];
	return NULL;
}

const struct vep_alg_ops *
vep_alg_ops_for_pkey(const EVP_PKEY *pkey)
{
	size_t i;

	if (pkey == NULL)
		return NULL;
	for (i = 0; i < FAMILY_COUNT; i++)
		if (EVP_PKEY_is_a(pkey, family_table[i]->ossl_name))
			return family_table[i];
	return NULL;
}

const struct vep_alg_ops *
vep_alg_ops_by_family(enum vep_family family)
{
	size_t i;

	for (i = 0; i < FAMILY_COUNT; i++)
		if (family_table[i]->family == family)
			return family_table[i];
	return NULL;
}

static int
digit_ok(unsigned char c, enum vep_radix radix)
{
	/* Explicit ranges, not isxdigit(): locale must not widen the set. */
	if (c >= '0' && c <= '9')
		return 1;
	if (radix == VEP_RADIX_DEC)
		return 0;
	return (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Strict number string -> BIGNUM. OpenSSL's BN_dec2bn/BN_hex2bn accept a
 * sign and stop at the first non-digit, so the whole string is checked here
 * first and the count they consumed is compared with its length. */
int
vep_bn_from_json(const json_t *obj, const char *name, enum vep_radix radix,
    BIGNUM **out)
{
	const json_t *v;
	const char *s;
	BIGNUM *bn = NULL;
	size_t len, i;
	int rc, used;

	if (out != NULL)
		*out = NULL;
	if (obj == NULL || name == NULL || out == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	v = json_object_get(obj, name);
	if (!json_is_string(v)) {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	s = json_string_value(v);
	len = json_string_length(v);
	if (len > VEP_KEY_NUM_MAX_CHARS) {
		rc = VEP_ERR_TOOBIG;
		goto out;
	}
	/* Empty, or a leading zero (which also rules out the value 0, never a
	 * valid key number), gives a second spelling of the same number. */
	if (len == 0 || s[0] == '0') {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	for (i = 0; i < len; i++) {
		if (!digit_ok((unsigned char)s[i], radix)) {
			rc = VEP_ERR_INVALID;
			goto out;
		}
	}
	used = radix == VEP_RADIX_DEC ? BN_dec2bn(&bn, s) : BN_hex2bn(&bn, s);
	if (used == 0 || bn == NULL) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	if ((size_t)used != len) {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	*out = bn;
	bn = NULL;
	rc = VEP_OK;
out:
	BN_free(bn);
	return rc;
}

/* BIGNUM -> canonical number string member. BN_bn2hex writes uppercase and
 * whole bytes (so possibly one leading zero nibble): both are normalised to
 * the lowercase, unpadded form the deployed publishers used. */
int
vep_bn_to_json(json_t *obj, const char *name, const BIGNUM *bn,
    enum vep_radix radix)
{
	char *s = NULL, *p;
	int rc;

	if (obj == NULL || name == NULL || bn == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	s = radix == VEP_RADIX_DEC ? BN_bn2dec(bn) : BN_bn2hex(bn);
	if (s == NULL) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	p = s;
	if (radix == VEP_RADIX_HEX) {
		for (char *c = s; *c != '\0'; c++)
			if (*c >= 'A' && *c <= 'F')
				*c = (char)(*c - 'A' + 'a');
		while (p[0] == '0' && p[1] != '\0')
			p++;
	}
	if (json_object_set_new(obj, name, json_string(p)) != 0) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	rc = VEP_OK;
out:
	OPENSSL_free(s);
	return rc;
}

int
vep_ossl_fail(int rc)
{
	ERR_clear_error();
	return rc;
}

int
vep_pkey_public_from_params(const char *ossl_name, const OSSL_PARAM *params,
    EVP_PKEY **out)
{
	EVP_PKEY_CTX *ctx = NULL;
	int rc = VEP_OK;

	*out = NULL;
	if ((ctx = EVP_PKEY_CTX_new_from_name(NULL, ossl_name, NULL)) == NULL ||
	    EVP_PKEY_fromdata_init(ctx) != 1 ||
	    EVP_PKEY_fromdata(ctx, out, EVP_PKEY_PUBLIC_KEY, (OSSL_PARAM *)params) != 1)
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
	EVP_PKEY_CTX_free(ctx);
	return rc;
}
