/*
 * audit_signer.h - what vep-keytool retire asks the authority's audit
 * trail: until when certificates signed by one domain key are valid. Lives
 * beside cmd_audit.c in the keytool's storage library, so that the other
 * keytool files need only libvep.
 */
#ifndef KEYTOOL_AUDIT_SIGNER_H
#define KEYTOOL_AUDIT_SIGNER_H

#include <stdint.h>

struct kt_store;

/* Opens the store (state.h: a state directory or a PostgreSQL store)
 * read-only and puts in *exp_ms the latest expiry of the certificates the
 * key with fingerprint fp signed (0: none recorded). Returns 0, or
 * non-zero after printing why ("vep-keytool retire: ..."). */
int kt_audit_signer_expiry(const struct kt_store *store, const char *fp, int64_t *exp_ms);

#endif
