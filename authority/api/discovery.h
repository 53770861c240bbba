/*
 * api/discovery.h - the public discovery endpoints: the BrowserID support
 * document, /pk, host-meta (XRD and JRD) and WebFinger.
 *
 * Each handler answers exactly once (see edge/req.h). Documents that depend only
 * on keys come pre-built from core/domain.c; handlers add nothing but headers.
 * Must never reveal whether an account exists: WebFinger answers every
 * well-formed address of a served domain with the same shape.
 */
#ifndef AUTHORITY_API_DISCOVERY_H
#define AUTHORITY_API_DISCOVERY_H

struct req;

/* GET/HEAD /.well-known/browserid (r->domain set by ROUTE_DOMAIN). */
void wellknown_support(struct req *r);

/* GET/HEAD /pk: the bare current public key JSON. */
void wellknown_pk(struct req *r);

/* GET/HEAD /.well-known/host-meta (XRD) and host-meta.json (JRD). */
void wellknown_hostmeta(struct req *r);
void wellknown_hostmeta_json(struct req *r);

/* GET/HEAD /.well-known/webfinger?resource=acct:LOCAL@DOMAIN[&rel=...]. */
void wellknown_webfinger(struct req *r);

#endif
