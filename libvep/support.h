/*
 * support.h - the BrowserID support document (/.well-known/browserid).
 *
 *   {"public-key":{...},"keys":[current, previous...],
 *    "authentication":"/...","provisioning":"/..."}
 *   {"authority":"host"}     delegation
 *   {"disabled":true}        opting out
 *
 * Building writes members in this order. Parsing (what a verifier does) is
 * strict about types but, like the deployed verifiers, ignores unknown
 * members.
 */
#ifndef VEP_SUPPORT_H
#define VEP_SUPPORT_H

#include <stddef.h>

#include "key.h"

/* Largest number of keys accepted in "keys". */
#define VEP_SUPPORT_MAX_KEYS 8

/* Delegations a verifier follows from the email's domain before giving up
 * (hops; the chain of domains is one longer). Mozilla's verifier,
 * browserid-local-verify, defaults its maxDelegations to 5; www/rp.js's
 * MAX_DELEGATIONS states the same number. */
#define VEP_MAX_DELEGATIONS 5

struct vep_support {
	int disabled;            /* 1 when {"disabled":true} */
	char *authority;         /* delegation target host, or NULL */
	vep_key **keys;          /* public-key first, then the other keys; owned */
	size_t nkeys;
	char *authentication;    /* path or NULL */
	char *provisioning;      /* path or NULL */
};

/* Builds a primary's document. keys[0] is the current key (also written as
 * "public-key"), the rest are published in "keys" too. *out is new text. */
int vep_support_build(const vep_key *const *keys, size_t nkeys,
    const char *authentication, const char *provisioning, char **out);

/* Builds {"authority":host}. */
int vep_support_build_delegated(const char *authority, char **out);

/* Builds {"disabled":true}. */
int vep_support_build_disabled(char **out);

/* Parses an untrusted document. *out is new (vep_support_free). A primary
 * must have public-key, authentication and provisioning. */
int vep_support_parse(const char *text, size_t len, struct vep_support **out);

void vep_support_free(struct vep_support *s);

#endif
