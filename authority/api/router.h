/*
 * api/router.h - the route table and the preflight checks every request passes
 * before its handler runs.
 *
 * A route is {path, allowed methods, flags, handler}; paths match exactly.
 * Preflight, in order: request target (414 / 400), route lookup (404),
 * method (405 with Allow; HEAD is allowed wherever GET is), then one check
 * function per flag, from the preflight table in api/router.c, in the order
 * domain, origin, session, CSRF, body: cheap refusals first, and the body
 * (which may hold a password) is only read for requests allowed that far. Adding a
 * requirement for a route is adding a flag, its one check function and its
 * table row.
 *
 * Owns dispatch only. Must never produce a document itself (handlers do)
 * nor write HTTP itself (edge/req.c does).
 */
#ifndef AUTHORITY_API_ROUTER_H
#define AUTHORITY_API_ROUTER_H

struct req;
struct signin_session;
struct signin_session;

/* Route flags: what preflight establishes or enforces before the handler. */
#define ROUTE_DOMAIN 0x01     /* resolve r->domain: ?domain=, else Host, else the
	                       * first domain (IP literal / localhost Host too);
	                       * 400 bad domain or Host, 404 unknown domain */
#define ROUTE_ORIGIN 0x10     /* an Origin header, when present, is ours: 403.
	                       * Ours: a domain's public_url, or http(s):// and
	                       * the request's own Host (same origin). */
#define ROUTE_AUTH 0x02       /* a live session (cookie SESSION_COOKIE), handed
	                       * to session_handler; its idle timer slides; 401 */
#define ROUTE_CSRF 0x04       /* X-CSRF-Token equals the session's CSRF token: 403
	                       * (needs ROUTE_AUTH, checked before it) */
#define ROUTE_JSON_BODY 0x08  /* r->body: a strict JSON object sent as
	                       * application/json within LIMIT_BODY_BYTES:
	                       * 415 / 413 / 400 */

#define ROUTE_PERSONA 0x20    /* no check: every error of the route, the
	                       * router's own included (405), is written in
	                       * Persona's shape (edge/req.h REQ_SHAPE_PERSONA) */

/* A handler answers exactly once, now or later (see edge/req.h). */
typedef void (*route_handler)(struct req *r);
/* A session handler gets the session ROUTE_AUTH found, for the call only
 * (it copies what it keeps). */
typedef void (*route_session_handler)(struct req *r, const struct signin_session *s);

struct route {
	const char *path;        /* exact, decoded path */
	unsigned methods;        /* REQ_M_* bits */
	unsigned flags;          /* ROUTE_* */
	route_handler handler;   /* without ROUTE_AUTH */
	route_session_handler session_handler; /* with ROUTE_AUTH */
};

/* Runs preflight and the matching handler for r (which it then owns). */
void router_dispatch(struct req *r);

/* Checks the route table against the preflight table: returns 0, or
 * VEP_ERR_ARG when a route uses a flag that has no check yet (so an
 * unenforced requirement is caught at start-up, never silently skipped). */
int router_self_check(void);

#endif
