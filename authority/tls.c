/*
 * tls.c - the server's TLS context (see tls.h).
 */
#include "tls.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/err.h>

#include "err.h"

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

int
tls_ctx_new(const char *cert_path, const char *key_path, SSL_CTX **out,
    char *err, size_t errlen)
{
	struct stat st;
	SSL_CTX *ctx = NULL;
	int rc = VEP_ERR_CRYPTO;

	*out = NULL;
	if (stat(key_path, &st) != 0) {
		snprintf(err, errlen, "TLS key '%s': cannot read it", key_path);
		return VEP_ERR_IO;
	}
	if ((st.st_mode & 077) != 0) {
		snprintf(err, errlen, "TLS key '%s': readable by group or others (chmod 600 it)",
		    key_path);
		return VEP_ERR_PERM;
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
	if (SSL_CTX_use_certificate_chain_file(ctx, cert_path) != 1) {
		openssl_reason(err, errlen, "TLS certificate", cert_path);
		goto out;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key_path, SSL_FILETYPE_PEM) != 1) {
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
