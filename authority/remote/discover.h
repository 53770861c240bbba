/*
 * remote/discover.h - from an email domain to the keys that may sign its
 * certificates and the issuer they must name, as every BrowserID verifier
 * finds them: the domain's support document, and while it delegates
 * ({"authority":HOST}) the document of HOST, at most VEP_MAX_DELEGATIONS
 * hops and never back to a host already seen. A disabled domain, a
 * document libvep refuses, or a primary without a key ends the walk.
 *
 * Where documents come from is the caller's (a get function): vep-keytool
 * reads files or fetches from a URL it was given; the authority's remote
 * verifier fetches over HTTPS with its address policy and cache. The walk
 * and its refusals are one piece of code for both.
 */
#ifndef AUTHORITY_REMOTE_DISCOVER_H
#define AUTHORITY_REMOTE_DISCOVER_H

#include <stddef.h>

#include "support.h"

/* Gets the support document of host (lowercase) at hop depth (0: the email
 * domain itself): 0 with *text (new, free()) of *len bytes, else a VEP code
 * with a reason in why. */
typedef int (*discover_get_fn)(void *arg, int depth, const char *host, char **text,
    size_t *len, char *why, size_t whylen);

/* Walks from email_domain (lowercase). On success *doc is the primary's
 * document (new, vep_support_free) and *issuer the expected issuer (new
 * text). Returns 0, get's error, VEP_ERR_DISABLED, VEP_ERR_DELEGATION,
 * VEP_ERR_INVALID (a document refused, or no key) or VEP_ERR_NOMEM, with
 * a reason in why. */
int discover_walk(const char *email_domain, discover_get_fn get, void *arg,
    struct vep_support **doc, char **issuer, char *why, size_t whylen);

#endif
