/*
 * issuance/keycheck.h - remembers which user keys have passed libvep's costly key
 * checks (key.h: vep_key_check_costly; for RSA-2048 about 2 ms, seven
 * signatures' worth), so that a browser renewing certificates for the key it
 * keeps pays them once, not for every certificate.
 *
 * One per event loop (no locks). A key is remembered by its fingerprint
 * (SHA-256 of its canonical public JSON), and only after it passed: nothing
 * a client sends can make a key skip the checks that it has not passed.
 * Direct-mapped: a key whose slot another takes is simply checked again.
 */
#ifndef AUTHORITY_ISSUANCE_KEYCHECK_H
#define AUTHORITY_ISSUANCE_KEYCHECK_H

#include "key.h"

/* Keys remembered per loop (64 bytes each). */
#define KEYCHECK_SLOTS 1024

struct keycheck;

/* Returns 0 with *out, or VEP_ERR_NOMEM. */
int keycheck_new(struct keycheck **out);

/* 0 when k (whose fingerprint is fp, vep_key_fingerprint) passes the costly
 * rules of the key policy, from memory or checked now and then remembered;
 * otherwise what vep_key_check_costly returned (VEP_ERR_KEY: refuse it). */
int keycheck_costly(struct keycheck *kc, const vep_key *k, const char fp[VEP_FINGERPRINT_BUFSZ]);

/* NULL-safe. */
void keycheck_free(struct keycheck *kc);

#endif
