/*
 * edge/tls.c - the server's TLS context (see edge/tls.h).
 */
#include "edge/tls.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/pem.h>

#include "err.h"
#include "file.h"
#include "secmem.h"

/* TLS 1.2: ephemeral (EC)DH only, AEAD only. TLS 1.3's suites are all
 * forward-secret AEAD already (OpenSSL's defaults). */
static const char tls12_ciphers[] =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:"
    "ECDHE-ECDSA-AES256-GCM-SHA384:ECDHE-RSA-AES256-GCM-SHA384:"
    "ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

static void
openssl_reason(char *err, size_t errlen, const char *what, const char *path)
{
	unsigned long e = ERR_get_error();
	char buf[256];

	ERR_error_string_n(e, buf, sizeof(buf));
	snprintf(err, errlen, "%s '%s': %s", what, path, e != 0 ? buf : "failed");
	ERR_clear_error();
}

/* Reads a whole PEM file of at most TLS_PEM_MAX bytes into a new buffer;
 * a private one must not be readable by group or others (checked on the
 * file opened, so a rename in between cannot slip another in). Symbolic
 * links are followed: certificate tools install them. */
static int
read_pem(const char *what, const char *path, int private, char **out, size_t *outlen,
    char *err, size_t errlen)
{
	int rc;

	rc = vep_file_read(path, TLS_PEM_MAX, private ? VEP_FILE_OWNER_ONLY : 0, out, outlen);
	if (rc == VEP_ERR_PERM)
		snprintf(err, errlen, "%s '%s': readable by group or others (chmod 600 it)", what,
		    path);
	else if (rc == VEP_ERR_TOOBIG)
		snprintf(err, errlen, "%s '%s': larger than 1 MiB", what, path);
	else if (rc == VEP_ERR_NOMEM)
		snprintf(err, errlen, "out of memory");
	else if (rc == VEP_ERR_INVALID)
		snprintf(err, errlen, "%s '%s': cannot read it: not a regular file", what, path);
	else if (rc != 0)
		snprintf(err, errlen, "%s '%s': cannot read it: %s", what, path, strerror(errno));
	if (rc == VEP_ERR_INVALID)
		rc = VEP_ERR_IO;
	return rc;
}

int
tls_read_files(const char *cert_path, const char *key_path, char **cert_pem, size_t *cert_len,
    char **key_pem, size_t *key_len, char *err, size_t errlen)
{
	int rc;

	*cert_pem = *key_pem = NULL;
	*cert_len = *key_len = 0;
	if ((rc = read_pem("TLS key", key_path, 1, key_pem, key_len, err, errlen)) != 0)
		return rc;
	if ((rc = read_pem("TLS certificate", cert_path, 0, cert_pem, cert_len, err,
	    errlen)) != 0) {
		vep_memzero(*key_pem, *key_len);
		free(*key_pem);
		*key_pem = NULL;
		*key_len = 0;
	}
	return rc;
}

/* Loads the leaf and any intermediates from PEM text into ctx. */
static int
use_chain(SSL_CTX *ctx, const char *pem, size_t len)
{
	BIO *bio = BIO_new_mem_buf(pem, (int)len);
	X509 *x = NULL;
	int ok = 0;

	if (bio == NULL || (x = PEM_read_bio_X509_AUX(bio, NULL, NULL, NULL)) == NULL ||
	    SSL_CTX_use_certificate(ctx, x) != 1)
		goto out;
	X509_free(x);
	while ((x = PEM_read_bio_X509(bio, NULL, NULL, NULL)) != NULL) {
		if (SSL_CTX_add0_chain_cert(ctx, x) != 1)
			goto out;
		x = NULL; /* taken */
	}
	/* The loop ends on "no more PEM": not an error. */
	if (ERR_GET_REASON(ERR_peek_last_error()) == PEM_R_NO_START_LINE)
		ERR_clear_error();
	ok = ERR_peek_error() == 0;
out:
	X509_free(x);
	BIO_free(bio);
	return ok;
}

static int
use_key(SSL_CTX *ctx, const char *pem, size_t len)
{
	BIO *bio = BIO_new_mem_buf(pem, (int)len);
	EVP_PKEY *k = NULL;
	int ok;

	ok = bio != NULL && (k = PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL)) != NULL &&
	    SSL_CTX_use_PrivateKey(ctx, k) == 1;
	EVP_PKEY_free(k);
	BIO_free(bio);
	return ok;
}

int
tls_ctx_new_pem(const char *cert_path, const char *cert_pem, size_t cert_len,
    const char *key_path, const char *key_pem, size_t key_len, SSL_CTX **out,
    char *err, size_t errlen)
{
	SSL_CTX *ctx = NULL;
	int rc = VEP_ERR_CRYPTO;

	*out = NULL;
	ERR_clear_error();
	if (cert_len > TLS_PEM_MAX || key_len > TLS_PEM_MAX) {
		snprintf(err, errlen, "TLS certificate or key larger than 1 MiB");
		return VEP_ERR_TOOBIG;
	}
	if ((ctx = SSL_CTX_new(TLS_server_method())) == NULL) {
		snprintf(err, errlen, "cannot create a TLS context");
		goto out;
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) != 1 ||
	    SSL_CTX_set_cipher_list(ctx, tls12_ciphers) != 1) {
		snprintf(err, errlen, "cannot restrict TLS versions and ciphers");
		goto out;
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION |
	    SSL_OP_NO_TICKET | SSL_OP_CIPHER_SERVER_PREFERENCE);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	rc = VEP_ERR_KEY;
	if (!use_chain(ctx, cert_pem, cert_len)) {
		openssl_reason(err, errlen, "TLS certificate", cert_path);
		goto out;
	}
	if (!use_key(ctx, key_pem, key_len)) {
		openssl_reason(err, errlen, "TLS key", key_path);
		goto out;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(err, errlen, "TLS key '%s' does not match the certificate '%s'",
		    key_path, cert_path);
		ERR_clear_error();
		goto out;
	}
	*out = ctx;
	ctx = NULL;
	rc = VEP_OK;
out:
	SSL_CTX_free(ctx);
	return rc;
}

void
tls_hsts_format(long max_age_s, int subdomains, char *buf, size_t buflen)
{
	snprintf(buf, buflen, "max-age=%ld%s", max_age_s, subdomains ? "; includeSubDomains" : "");
}
