/*
 * core/paths.h - the public URL paths and link relations of the authority, in
 * one place: the route table, the support document, host-meta and
 * WebFinger all take them from here so they cannot drift apart.
 *
 * Must never hold anything but constants.
 */
#ifndef AUTHORITY_CORE_PATHS_H
#define AUTHORITY_CORE_PATHS_H

/* Discovery (public, cacheable). */
#define PATH_SUPPORT "/.well-known/browserid"
#define PATH_PK "/pk"
#define PATH_HOSTMETA "/.well-known/host-meta"
#define PATH_HOSTMETA_JSON "/.well-known/host-meta.json"
#define PATH_WEBFINGER "/.well-known/webfinger"

/* The IdP pages the support document announces (served by the static/www
 * work; BrowserID user agents load them relative to the domain). */
#define PATH_API_LOGIN "/api/login"
#define PATH_API_LOGIN_CONTINUE "/api/login/continue"
#define PATH_API_SESSION "/api/session"
#define PATH_API_LOGOUT "/api/logout"
#define PATH_API_CERT "/api/cert"
#define PATH_SIGNIN_AUTHENTICATE "/sign-in/authenticate"
#define PATH_SIGNIN_PROVISION "/sign-in/provision"

/* Operations (public, says only ok or not). */
#define PATH_HEALTH "/healthz"
/* Persona's remote verifier contract (api/verify.h). */
#define PATH_VERIFY "/verify"

/* Link relations (compared case-sensitively, RFC 7033 section 4.4.4.1). */
#define REL_LRDD "lrdd"
#define REL_PUBLIC_KEY "https://browserid.org/vocab#publicKey"
#define REL_DESCRIBEDBY "describedby"

/* Media types. */
#define MEDIA_JSON "application/json"
#define MEDIA_JRD "application/jrd+json"
#define MEDIA_XRD "application/xrd+xml"

#endif
