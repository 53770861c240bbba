/*
 * audit_signer.h - what vep-keytool retire asks the authority's audit
 * trail: until when certificates signed by one domain key are valid. Lives
 * beside cmd_audit.c in the keytool's storage library, so that the other
 * keytool files need only libvep.
 */
#ifndef KEYTOOL_AUDIT_SIGNER_H
#define KEYTOOL_AUDIT_SIGNER_H

#include <stddef.h>
#include <stdint.h>

/* Opens state's database read-only and puts in *exp_ms the latest expiry
 * of the certificates the key with fingerprint fp signed (0: none
 * recorded). Returns 0, or non-zero with why in err. */
int kt_audit_signer_expiry(const char *state, const char *fp, int64_t *exp_ms, char *err,
    size_t errlen);

#endif
