/*
 * edge/tls.h - the server's TLS context for native HTTPS (tls_cert, tls_key).
 *
 * Promises: TLS 1.2 and 1.3 only; TLS 1.2 with ECDHE key exchange and AEAD
 * ciphers only (forward secrecy); no compression, no renegotiation, no
 * session tickets (their key would outlive a key change); the key file
 * refused when group or others can read it; the certificate chain and the
 * key checked to match before the context is used. The context is built
 * at start and on every reload (SIGHUP) into the domain set, so a reload
 * that fails keeps the old certificate, like the old domain keys.
 *
 * Must never log or expose the private key.
 */
#ifndef AUTHORITY_EDGE_TLS_H
#define AUTHORITY_EDGE_TLS_H

#include <stddef.h>

#include <openssl/ssl.h>

/* Room for a Strict-Transport-Security value (tls_hsts_format). */
#define TLS_HSTS_MAX 64

/* Largest certificate chain or key file read, in bytes. */
#define TLS_PEM_MAX (1024 * 1024)

/* Reads the certificate chain and key files (by a process that may read
 * them, for one that may not): *cert_pem and *key_pem are new
 * (NUL-terminated; wipe the key with vep_memzero before free()). Returns
 * 0, VEP_ERR_IO (unreadable), VEP_ERR_PERM (key readable by group or
 * others), VEP_ERR_TOOBIG (over TLS_PEM_MAX), with a reason in err. */
int tls_read_files(const char *cert_path, const char *key_path, char **cert_pem,
    size_t *cert_len, char **key_pem, size_t *key_len, char *err, size_t errlen);

/* Builds a server context from a PEM certificate chain (leaf first) and
 * its PEM private key, as read from the paths named (for messages). Returns
 * 0 with *out (SSL_CTX_free), or VEP_ERR_KEY (not a certificate and
 * matching key), VEP_ERR_TOOBIG, VEP_ERR_CRYPTO, with a reason in err. */
int tls_ctx_new_pem(const char *cert_path, const char *cert_pem, size_t cert_len,
    const char *key_path, const char *key_pem, size_t key_len, SSL_CTX **out,
    char *err, size_t errlen);

/* The Strict-Transport-Security value every HTTPS response carries:
 * "max-age=N" and, when subdomains, "; includeSubDomains" (an opt-in: the
 * authority's host is often the mail domain itself, whose other hosts may
 * not all speak HTTPS). buf holds TLS_HSTS_MAX bytes. */
void tls_hsts_format(long max_age_s, int subdomains, char *buf, size_t buflen);

#endif
