/*
 * key.c - BrowserID keys: construction from JSON, PEM and generation, the
 * canonical public JSON and fingerprint, private-key files, and dispatch of
 * signing and verification to the key's family (alg_rsa.c, alg_dsa.c).
 *
 * Owns struct vep_key and the private-key file rules (created 0600 with
 * O_EXCL, never read when group or others may access it, never through a
 * symlink). It must never write private material anywhere but the file or
 * buffer the caller asked for, and it leaves every buffer that held PEM
 * text zeroed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "alg_impl.h"
#include "err.h"
#include "file.h"
#include "key.h"
#include "secmem.h"
#include "util.h"

struct vep_key {
	EVP_PKEY *pkey;
	const struct vep_alg *alg;
	const struct vep_alg_ops *ops;
	int has_private;
};

/* Wraps pkey (stolen, also on failure) in a new vep_key after the family's
 * size checks. */
static int
key_wrap(EVP_PKEY *pkey, int has_private, vep_key **out)
{
	const struct vep_alg_ops *ops;
	const struct vep_alg *alg = NULL;
	vep_key *k = NULL;
	int rc;

	*out = NULL;
	if ((ops = vep_alg_ops_for_pkey(pkey)) == NULL) {
		rc = VEP_ERR_ALG;
		goto out;
	}
	if ((rc = ops->check(pkey, &alg)) != 0)
		goto out;
	if ((k = calloc(1, sizeof(*k))) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	k->pkey = pkey;
	k->alg = alg;
	k->ops = ops;
	k->has_private = has_private;
	pkey = NULL;
	*out = k;
	rc = VEP_OK;
out:
	EVP_PKEY_free(pkey);
	return rc;
}

static int
key_generate(enum vep_family family, int bits, vep_key **out)
{
	const struct vep_alg_ops *ops = vep_alg_ops_by_family(family);
	EVP_PKEY *pkey = NULL;
	int rc;

	if (out == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	*out = NULL;
	if ((rc = ops->generate(bits, &pkey)) != 0)
		goto out;
	rc = key_wrap(pkey, 1, out);
out:
	return rc;
}

/* RSA key of 1024 or 2048 bits, e = 65537. */
int
vep_key_generate_rsa(int bits, vep_key **out)
{
	return key_generate(VEP_FAMILY_RSA, bits, out);
}

/* DSA key in the published group: 1024/160 or 2048/256. */
int
vep_key_generate_dsa(int pbits, vep_key **out)
{
	return key_generate(VEP_FAMILY_DSA, pbits, out);
}

/* Never prompt on a terminal for an encrypted key: we store none. */
static int
pem_no_password(char *buf, int size, int rwflag, void *u)
{
	(void)buf;
	(void)size;
	(void)rwflag;
	(void)u;
	return 0;
}

/* PEM bytes -> private key. */
int
vep_key_from_pem(const char *pem, size_t len, vep_key **out)
{
	EVP_PKEY *pkey = NULL;
	BIO *bio = NULL;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (pem == NULL || out == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if (len > VEP_KEY_PEM_MAX_BYTES) {
		rc = VEP_ERR_TOOBIG;
		goto out;
	}
	if ((bio = BIO_new_mem_buf(pem, (int)len)) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	if ((pkey = PEM_read_bio_PrivateKey(bio, NULL, pem_no_password, NULL)) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_INVALID);
		goto out;
	}
	rc = key_wrap(pkey, 1, out);
out:
	BIO_free(bio);
	return rc;
}

void
vep_key_pem_describe(const char *pem, size_t len, char *out, size_t outlen)
{
	EVP_PKEY *pkey = NULL;
	BIGNUM *q = NULL;
	BIO *bio = NULL;
	const char *type;

	if (out == NULL || outlen == 0)
		return;
	snprintf(out, outlen, "not a PEM private key");
	if (pem == NULL || len > VEP_KEY_PEM_MAX_BYTES ||
	    (bio = BIO_new_mem_buf(pem, (int)len)) == NULL ||
	    (pkey = PEM_read_bio_PrivateKey(bio, NULL, pem_no_password, NULL)) == NULL)
		goto out;
	if (EVP_PKEY_is_a(pkey, "RSA"))
		snprintf(out, outlen, "an RSA key of %d bits", EVP_PKEY_get_bits(pkey));
	else if (EVP_PKEY_is_a(pkey, "DSA") &&
	    EVP_PKEY_get_bn_param(pkey, OSSL_PKEY_PARAM_FFC_Q, &q) == 1)
		snprintf(out, outlen, "a DSA key of %d/%d bits", EVP_PKEY_get_bits(pkey),
		    BN_num_bits(q));
	else if ((type = EVP_PKEY_get0_type_name(pkey)) != NULL)
		snprintf(out, outlen, "a key of type %s", type);
	else
		snprintf(out, outlen, "a key of a type OpenSSL cannot name");
out:
	BN_free(q);
	EVP_PKEY_free(pkey);
	BIO_free(bio);
	ERR_clear_error();
}

/* Loads a private key file, checking the opened file (not the path, which
 * could change between a stat and an open). */
int
vep_key_load_private(const char *path, vep_key **out)
{
	char *buf = NULL;
	size_t len = 0;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (path == NULL || out == NULL)
		return VEP_ERR_ARG;
	/* Not through a symbolic link, a regular file only its owner may
	 * touch, checked on the opened file. */
	rc = vep_file_read(path, VEP_KEY_PEM_MAX_BYTES, VEP_FILE_NOFOLLOW | VEP_FILE_OWNER_ONLY,
	    &buf, &len);
	if (rc == VEP_ERR_INVALID)
		rc = VEP_ERR_IO;   /* not a regular file: as if unreadable */
	if (rc == 0)
		rc = vep_key_from_pem(buf, len, out);
	vep_file_free(buf, len);
	return rc;
}

/* Private key -> new PKCS#8 PEM text (vep_free_secret_str). */
int
vep_key_to_pem(const vep_key *k, char **out)
{
	BIO *bio = NULL;
	char *data = NULL, *s = NULL;
	long n;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (k == NULL || out == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if (!k->has_private) {
		rc = VEP_ERR_NOKEY;
		goto out;
	}
	/* A memory BIO's buffer is cleansed by OpenSSL when freed. */
	if ((bio = BIO_new(BIO_s_mem())) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_NOMEM);
		goto out;
	}
	/* With OpenSSL 3 this writes PKCS#8 ("BEGIN PRIVATE KEY"). */
	if (PEM_write_bio_PrivateKey(bio, k->pkey, NULL, NULL, 0, NULL, NULL) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	if ((n = BIO_get_mem_data(bio, &data)) <= 0) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	if ((s = malloc((size_t)n + 1)) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	memcpy(s, data, (size_t)n);
	s[n] = '\0';
	*out = s;
	rc = VEP_OK;
out:
	BIO_free(bio);
	return rc;
}

/* Writes all len bytes, retrying short writes and EINTR. */
static int
write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return VEP_ERR_IO;
		p += n;
		len -= (size_t)n;
	}
	return VEP_OK;
}

/* New file, 0600, O_EXCL, fsynced; a partial file is removed on failure. */
int
vep_key_save_private(const vep_key *k, const char *path)
{
	char *pem = NULL;
	int fd = -1, rc, created = 0;

	if (k == NULL || path == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if ((rc = vep_key_to_pem(k, &pem)) != 0)
		goto out;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = errno == EEXIST ? VEP_ERR_EXISTS : VEP_ERR_IO;
		goto out;
	}
	created = 1;
	if ((rc = write_all(fd, pem, strlen(pem))) != 0)
		goto out;
	if (fsync(fd) != 0) {
		rc = VEP_ERR_IO;
		goto out;
	}
	rc = close(fd) == 0 ? VEP_OK : VEP_ERR_IO;
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	if (rc != 0 && created)
		unlink(path);
	vep_free_secret_str(pem);
	return rc;
}

/* Public key JSON object (borrowed) -> key. The member set must be exactly
 * "algorithm" plus the family's numbers: an extra member could be read
 * differently by another verifier. */
int
vep_key_from_json(const json_t *obj, vep_key **out)
{
	return vep_key_from_json_checked(obj, VEP_KEY_CHECKS_ALL, out);
}

int
vep_key_check_costly(const vep_key *k)
{
	if (k == NULL)
		return VEP_ERR_ARG;
	return k->ops->check_costly != NULL ? k->ops->check_costly(k->pkey) : VEP_OK;
}

int
vep_key_from_json_checked(const json_t *obj, enum vep_key_checks checks, vep_key **out)
{
	const struct vep_alg_ops *ops;
	const struct vep_alg *alg = NULL;
	const json_t *algv;
	EVP_PKEY *pkey = NULL;
	vep_key *k = NULL;
	size_t n = 0;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (out == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if (!json_is_object(obj)) {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	algv = json_object_get(obj, "algorithm");
	if (!json_is_string(algv)) {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	if ((ops = vep_alg_ops_by_json_name(json_string_value(algv))) == NULL) {
		rc = VEP_ERR_ALG;
		goto out;
	}
	for (n = 0; ops->members[n] != NULL; n++) {
		if (json_object_get(obj, ops->members[n]) == NULL) {
			rc = VEP_ERR_INVALID;
			goto out;
		}
	}
	if (json_object_size(obj) != n + 1) {
		rc = VEP_ERR_INVALID;
		goto out;
	}
	if ((rc = ops->from_json(obj, checks == VEP_KEY_CHECKS_ALL, &pkey, &alg)) != 0)
		goto out;
	if ((k = calloc(1, sizeof(*k))) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	k->pkey = pkey;
	k->alg = alg;
	k->ops = ops;
	k->has_private = 0;
	pkey = NULL;
	*out = k;
	rc = VEP_OK;
out:
	EVP_PKEY_free(pkey);
	return rc;
}

/* Untrusted JSON text -> key. */
int
vep_key_from_json_text(const char *text, size_t len, vep_key **out)
{
	json_t *obj = NULL;
	int rc;

	if (out != NULL)
		*out = NULL;
	if ((rc = vep_json_parse_object(text, len, &obj)) != 0)
		goto out;
	rc = vep_key_from_json(obj, out);
out:
	json_decref(obj);
	return rc;
}

/* Canonical public JSON, new reference; NULL on OOM or a bad key. */
json_t *
vep_key_to_json(const vep_key *k)
{
	json_t *obj = NULL;

	if (k == NULL)
		return NULL;
	if ((obj = json_object()) == NULL)
		return NULL;
	/* jansson keeps insertion order, which makes this the canonical order. */
	if (json_object_set_new(obj, "algorithm", json_string(k->ops->json_name)) != 0 ||
	    k->ops->to_json(k->pkey, obj) != 0) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

/* Canonical public JSON as compact text (free()). */
char *
vep_key_to_json_text(const vep_key *k)
{
	json_t *obj = vep_key_to_json(k);
	char *s;

	if (obj == NULL)
		return NULL;
	s = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	return s;
}

const struct vep_alg *
vep_key_alg(const vep_key *k)
{
	return k != NULL ? k->alg : NULL;
}

int
vep_key_has_private(const vep_key *k)
{
	return k != NULL && k->has_private;
}

/* Compares the public halves (and domain parameters) only. */
int
vep_key_public_equal(const vep_key *a, const vep_key *b)
{
	if (a == NULL || b == NULL || a->alg != b->alg)
		return 0;
	return EVP_PKEY_eq(a->pkey, b->pkey) == 1;
}

/* New key with only the public half, via OpenSSL's exported parameters. */
int
vep_key_public_copy(const vep_key *k, vep_key **out)
{
	OSSL_PARAM *params = NULL;
	EVP_PKEY *pkey = NULL;
	vep_key *c = NULL;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (k == NULL || out == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if (EVP_PKEY_todata(k->pkey, EVP_PKEY_PUBLIC_KEY, &params) != 1) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	if ((rc = vep_pkey_public_from_params(k->ops->ossl_name, params, &pkey)) != 0)
		goto out;
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	c->pkey = pkey;
	c->alg = k->alg;
	c->ops = k->ops;
	c->has_private = 0;
	pkey = NULL;
	*out = c;
	rc = VEP_OK;
out:
	EVP_PKEY_free(pkey);
	OSSL_PARAM_free(params);
	return rc;
}

/* Lowercase hex SHA-256 of the canonical public JSON text. */
int
vep_key_fingerprint(const vep_key *k, char out[VEP_FINGERPRINT_BUFSZ])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char md[VEP_FINGERPRINT_HEX_LEN / 2];
	unsigned int mdlen = 0;
	char *text = NULL;
	int rc;

	if (out != NULL)
		out[0] = '\0';
	if (k == NULL || out == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if ((text = vep_key_to_json_text(k)) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	if (EVP_Digest(text, strlen(text), md, &mdlen, EVP_sha256(), NULL) != 1 ||
	    mdlen != sizeof(md)) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	for (size_t i = 0; i < sizeof(md); i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 15];
	}
	out[VEP_FINGERPRINT_HEX_LEN] = '\0';
	rc = VEP_OK;
out:
	free(text);
	return rc;
}

/* Signs with the key's algorithm; VEP_ERR_NOKEY without a private half. */
int
vep_key_sign(const vep_key *k, const uint8_t *msg, size_t len,
    uint8_t **sig, size_t *siglen)
{
	int rc;

	if (sig != NULL)
		*sig = NULL;
	if (siglen != NULL)
		*siglen = 0;
	if (k == NULL || (msg == NULL && len > 0) || sig == NULL || siglen == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if (!k->has_private) {
		rc = VEP_ERR_NOKEY;
		goto out;
	}
	rc = k->ops->sign(k->alg, k->pkey, msg != NULL ? msg : (const uint8_t *)"",
	    len, sig, siglen);
out:
	return rc;
}

/* Verifies a JWS-form signature with the key's algorithm. */
int
vep_key_verify(const vep_key *k, const uint8_t *msg, size_t len,
    const uint8_t *sig, size_t siglen)
{
	int rc;

	if (k == NULL || (msg == NULL && len > 0) || (sig == NULL && siglen > 0)) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if (sig == NULL) {
		rc = VEP_ERR_BADSIG;
		goto out;
	}
	rc = k->ops->verify(k->alg, k->pkey, msg != NULL ? msg : (const uint8_t *)"",
	    len, sig, siglen);
out:
	return rc;
}

/* The signer (key.h): its own copy of the key, and the family's prepared
 * context when the family has one (alg_impl.h's sign_prepare), else
 * nothing more: it then signs with the family's plain sign on its copy,
 * which still keeps it apart from other threads' copies. */
struct vep_key_signer {
	EVP_PKEY *pkey;                  /* owned: EVP_PKEY_dup of the key's */
	const struct vep_alg *alg;
	const struct vep_alg_ops *ops;
	void *prep;                      /* owned: ops->sign_prepare's, or NULL */
};

int
vep_key_signer_new(const vep_key *k, vep_key_signer **out)
{
	vep_key_signer *s = NULL;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (k == NULL || out == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if (!k->has_private) {
		rc = VEP_ERR_NOKEY;
		goto out;
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		rc = VEP_ERR_NOMEM;
		goto out;
	}
	s->alg = k->alg;
	s->ops = k->ops;
	/* A copy, not EVP_PKEY_up_ref: the copy's RSA blinding state is its
	 * own (key.h). */
	if ((s->pkey = EVP_PKEY_dup(k->pkey)) == NULL) {
		rc = vep_ossl_fail(VEP_ERR_CRYPTO);
		goto out;
	}
	if (s->ops->sign_prepare != NULL &&
	    (rc = s->ops->sign_prepare(s->alg, s->pkey, &s->prep)) != 0)
		goto out;
	*out = s;
	s = NULL;
	rc = VEP_OK;
out:
	vep_key_signer_free(s);
	return rc;
}

/* vep_key_sign's checks, then the prepared path (or the plain one). */
int
vep_key_signer_sign(vep_key_signer *s, const uint8_t *msg, size_t len,
    uint8_t **sig, size_t *siglen)
{
	int rc;

	if (sig != NULL)
		*sig = NULL;
	if (siglen != NULL)
		*siglen = 0;
	if (s == NULL || (msg == NULL && len > 0) || sig == NULL || siglen == NULL) {
		rc = VEP_ERR_ARG;
		goto out;
	}
	if (msg == NULL)
		msg = (const uint8_t *)"";
	if (s->prep != NULL)
		rc = s->ops->sign_prepared(s->alg, s->prep, msg, len, sig, siglen);
	else
		rc = s->ops->sign(s->alg, s->pkey, msg, len, sig, siglen);
out:
	return rc;
}

void
vep_key_signer_free(vep_key_signer *s)
{
	if (s == NULL)
		return;
	/* The prepared context refers to the copy: it goes first. */
	if (s->prep != NULL)
		s->ops->sign_release(s->prep);
	EVP_PKEY_free(s->pkey);
	free(s);
}

void
vep_key_free(vep_key *k)
{
	if (k == NULL)
		return;
	EVP_PKEY_free(k->pkey);
	free(k);
}

int
vep_key_share(const vep_key *k, vep_key **out)
{
	vep_key *c;

	if (out != NULL)
		*out = NULL;
	if (k == NULL || out == NULL)
		return VEP_ERR_ARG;
	if ((c = calloc(1, sizeof(*c))) == NULL)
		return VEP_ERR_NOMEM;
	if (EVP_PKEY_up_ref(k->pkey) != 1) {
		free(c);
		return vep_ossl_fail(VEP_ERR_CRYPTO);
	}
	*c = *k;
	*out = c;
	return VEP_OK;
}
