/*
 * api/router.c - the route table and preflight checks.
 *
 * Owns which path goes to which handler with which requirements. Must
 * never answer a request successfully itself: it only rejects (via the
 * edge/req.c error table) or hands over to a handler.
 */
#include "api/router.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "server/shared.h"
#include "core/config.h"
#include "core/domain.h"
#include "email.h"
#include "err.h"
#include "api/certificate.h"
#include "api/continue.h"
#include "api/session.h"
#include "core/log.h"
#include "server/loop.h"
#include "core/paths.h"
#include "api/health.h"
#include "edge/req.h"
#include "secmem.h"
#include "auth/lookup.h"
#include "auth/signin.h"
#include "core/errors.h"
#include "api/pages.h"
#include "api/discovery.h"
#include "api/verify.h"

#define GET_HEAD (REQ_M_GET | REQ_M_HEAD)

/* Every path the authority serves. */
static const struct route routes[] = {
	{ PATH_SUPPORT, GET_HEAD, ROUTE_DOMAIN, wellknown_support, NULL },
	{ PATH_PK, GET_HEAD, ROUTE_DOMAIN, wellknown_pk, NULL },
	{ PATH_HOSTMETA, GET_HEAD, ROUTE_DOMAIN, wellknown_hostmeta, NULL },
	{ PATH_HOSTMETA_JSON, GET_HEAD, ROUTE_DOMAIN, wellknown_hostmeta_json, NULL },
	/* WebFinger names its domain in ?resource=, so no ROUTE_DOMAIN. */
	{ PATH_WEBFINGER, GET_HEAD, 0, wellknown_webfinger, NULL },
	/* The address in the body names the domain. The Origin check and the
	 * JSON content type (which a cross-site form cannot send, and a
	 * cross-site fetch cannot without a CORS preflight we never grant)
	 * keep sign-in itself from being forged. */
	{ PATH_API_LOGIN, REQ_M_POST, ROUTE_ORIGIN | ROUTE_JSON_BODY, api_login, NULL },
	{ PATH_API_LOGIN_CONTINUE, REQ_M_POST, ROUTE_ORIGIN | ROUTE_JSON_BODY, api_login_continue,
	  NULL },
	{ PATH_API_SESSION, GET_HEAD, ROUTE_AUTH, NULL, api_session },
	{ PATH_API_LOGOUT, REQ_M_POST, ROUTE_ORIGIN | ROUTE_AUTH | ROUTE_CSRF, NULL, api_logout },
	{ PATH_API_CERT, REQ_M_POST, ROUTE_ORIGIN | ROUTE_AUTH | ROUTE_CSRF | ROUTE_JSON_BODY,
	  NULL, api_certificate },
	{ PATH_HEALTH, GET_HEAD, 0, api_health, NULL },
	/* Server to server, any Host: no domain, no Origin, no session; it
	 * changes nothing, so there is nothing to forge. */
	{ PATH_VERIFY, REQ_M_POST, ROUTE_PERSONA, api_verify, NULL },
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

/* Every other path is a file of www/ or nothing (api/pages.c decides). */
static const struct route static_route = { "(www)", GET_HEAD, ROUTE_DOMAIN, static_serve, NULL };

/* A check returns 0 to pass, else the error to answer with (any code of
 * core/errors.h: edge/req.c's table says what the client gets). */
typedef int (*preflight_check)(struct req *r, struct signin_session *s);

static int check_domain(struct req *r, struct signin_session *s);
static int check_origin(struct req *r, struct signin_session *s);
static int check_csrf(struct req *r, struct signin_session *s);
static int check_json(struct req *r, struct signin_session *s);

/* One row per route flag, run in this order. */
static const struct {
	unsigned flag;
	preflight_check check;
} preflights[] = {
	{ ROUTE_DOMAIN, check_domain },
	{ ROUTE_ORIGIN, check_origin },
	{ ROUTE_AUTH, NULL },   /* the store answers later: see dispatch_from */
	{ ROUTE_CSRF, check_csrf },
	{ ROUTE_JSON_BODY, check_json },
};

#define NPREFLIGHTS (sizeof(preflights) / sizeof(preflights[0]))

static int
check_domain(struct req *r, struct signin_session *s)
{
	struct domain_set *set = authority_domains(r->a);
	char host[300], hostport[300], *name = NULL;
	const char *dp;
	int local, rc, e = 0;

	if (req_param_count(r, "domain") > 1)
		return REQ_ERR_BAD_TARGET; /* which one would a verifier mean? */
	if ((dp = req_param(r, "domain")) != NULL) {
		if (strlen(dp) > VEP_DOMAIN_MAX || !vep_domain_valid(dp))
			return REQ_ERR_BAD_DOMAIN;
		if ((name = strdup(dp)) == NULL)
			return REQ_ERR_INTERNAL;
		vep_domain_lower(name);
		r->domain = domain_set_find(set, name);
		if (r->domain == NULL)
			e = REQ_ERR_UNKNOWN_DOMAIN;
		free(name);
		return e;
	}
	if ((rc = req_host(r, host, hostport, sizeof(host), &local)) != 0)
		return rc;
	/* No Host (HTTP/1.0), or an address rather than a name: the server
	 * is being reached directly (the demo at http://127.0.0.1:PORT), so
	 * the first configured domain is meant. */
	if (host[0] == '\0' || local) {
		r->domain = &set->v[0];
		return 0;
	}
	/* A login host (a domain's authority or public_url host) is served
	 * as that domain: what a reverse proxy for it passes on. */
	r->domain = domain_set_find_host(set, host);
	return r->domain != NULL ? 0 : REQ_ERR_UNKNOWN_DOMAIN;
}

/* 1 when a and b (text, without brackets) are the same IP address. */
static int
same_ip(const char *a, const char *b)
{
	unsigned char x[sizeof(struct in6_addr)], y[sizeof(struct in6_addr)];
	int fam = strchr(a, ':') != NULL ? AF_INET6 : AF_INET;

	if ((strchr(b, ':') != NULL) != (fam == AF_INET6))
		return 0;
	/* The same text is the same address, when it is one. */
	if (strcmp(a, b) == 0)
		return inet_pton(fam, a, x) == 1;
	return inet_pton(fam, a, x) == 1 && inet_pton(fam, b, y) == 1 &&
	    memcmp(x, y, fam == AF_INET6 ? sizeof(struct in6_addr) : sizeof(struct in_addr)) == 0;
}

/* Where the listener is bound, as far as Host goes. */
enum listen_kind {
	LISTEN_ONE,       /* one address: only it, as an IP literal */
	LISTEN_LOOPBACK,  /* a loopback address: it, and "localhost" */
	LISTEN_ANY,       /* 0.0.0.0 or [::]: any IP literal, and "localhost" */
};

static enum listen_kind
listen_kind(const char *addr)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (strchr(addr, ':') != NULL) {
		if (inet_pton(AF_INET6, addr, &a6) != 1)
			return LISTEN_ONE;
		return IN6_IS_ADDR_UNSPECIFIED(&a6) ? LISTEN_ANY :
		    IN6_IS_ADDR_LOOPBACK(&a6) ? LISTEN_LOOPBACK : LISTEN_ONE;
	}
	if (inet_pton(AF_INET, addr, &a4) != 1)
		return LISTEN_ONE;
	if (ntohl(a4.s_addr) == INADDR_ANY)
		return LISTEN_ANY;
	return (ntohl(a4.s_addr) >> 24) == 127 ? LISTEN_LOOPBACK : LISTEN_ONE;
}

/* Every request: the Host must name this server. A served domain or a
 * public_url host (what a reverse proxy passes on); an IP literal or
 * "localhost" only as the listen address reaches us directly. Anything
 * else is refused, so no unknown Host is reflected into documents caches
 * keep (host-meta, WebFinger), and a DNS-rebinding page, whose requests
 * carry its own name, finds nothing to talk to. */
static int
check_host(struct req *r)
{
	const struct config *cfg = authority_cfg(r->a);
	char host[300], hostport[300], uhost[300], lhost[INET6_ADDRSTRLEN];
	enum listen_kind kind;
	unsigned lport;
	int local, rc;
	size_t i;

	if ((rc = req_host(r, host, hostport, sizeof(host), &local)) != 0)
		return rc;
	if (host[0] == '\0')
		return 0; /* HTTP/1.0 (edge/conn.c refuses HTTP/1.1 without one) */
	for (i = 0; i < cfg->ndomains; i++) {
		if (strcmp(cfg->domains[i].name, host) == 0 ||
		    config_domain_is_authority_host(&cfg->domains[i], host))
			return 0;
		if (cfg->domains[i].public_url != NULL &&
		    config_url_host(cfg->domains[i].public_url, uhost, sizeof(uhost)) == 0 &&
		    (strcmp(uhost, host) == 0 || same_ip(uhost, host)))
			return 0;
	}
	/* The listen address is a restart-only key: the start's. */
	if (!local || config_parse_listen(r->a->cfg->listen, lhost, sizeof(lhost), &lport) != 0)
		return REQ_ERR_MISDIRECTED;
	kind = listen_kind(lhost);
	if (strcmp(host, "localhost") == 0)
		return kind != LISTEN_ONE ? 0 : REQ_ERR_MISDIRECTED;
	return kind == LISTEN_ANY || same_ip(lhost, host) ? 0 : REQ_ERR_MISDIRECTED;
}

/* 1 when origin ("scheme://host[:port]", no path) names this server: a
 * configured public_url, or the request's own Host over http or https (a
 * TLS-terminating proxy hides which one the browser used). */
static int
origin_ours(struct req *r, const char *origin)
{
	const struct config *cfg = authority_cfg(r->a);
	char host[300], hostport[300];
	const char *h;
	int local;
	size_t i;

	for (i = 0; i < cfg->ndomains; i++)
		if (cfg->domains[i].public_url != NULL &&
		    strcasecmp(cfg->domains[i].public_url, origin) == 0)
			return 1;
	if (strncasecmp(origin, "https://", 8) == 0)
		h = origin + 8;
	else if (strncasecmp(origin, "http://", 7) == 0)
		h = origin + 7;
	else
		return 0;
	if (req_host(r, host, hostport, sizeof(host), &local) != 0 || hostport[0] == '\0')
		return 0;
	return strcasecmp(h, hostport) == 0;
}

static int
check_origin(struct req *r, struct signin_session *s)
{
	const char *origin = req_header(r, "Origin");

	/* No Origin: not a browser's cross-origin request (browsers send one
	 * on every cross-origin POST); "null" and foreign origins are refused. */
	if (origin == NULL)
		return 0;
	return origin_ours(r, origin) ? 0 : REQ_ERR_ORIGIN;
}

/* What a session lookup's result answers, or 0 to go on. */
static int
auth_error(int rc)
{
	if (rc == 0 || rc == DB_ERR_BUSY || rc == DB_ERR_FULL || rc == DB_ERR_DOWN)
		return rc;
	/* No such session: the client is not signed in. Any other failure
	 * of the lookup is a fault here, even the store's I/O error (which
	 * elsewhere means the key process is out of reach). */
	return rc == DB_ERR_NOTFOUND ? REQ_ERR_UNAUTHORIZED : REQ_ERR_INTERNAL;
}

static int
check_csrf(struct req *r, struct signin_session *s)
{
	if (s->email[0] == '\0')
		return REQ_ERR_UNAUTHORIZED; /* routes list ROUTE_AUTH with it */
	return signin_session_csrf_ok(s, req_header(r, "X-CSRF-Token")) ? 0 : REQ_ERR_CSRF;
}

static int
check_json(struct req *r, struct signin_session *s)
{
	return req_read_json(r, &r->body);
}

static const struct route *
find_route(const char *path)
{
	size_t i;

	for (i = 0; i < NROUTES; i++)
		if (strcmp(routes[i].path, path) == 0)
			return &routes[i];
	return static_exists(path) ? &static_route : NULL;
}

/* A request waiting for the store to find its session. */
struct pending_auth {
	struct req *r;
	const struct route *rt;
	size_t next;            /* the preflight row after ROUTE_AUTH's */
};

static void dispatch_from(struct req *r, const struct route *rt, size_t from,
    struct signin_session *s);

static void
on_session(int rc, const struct signin_session *found, void *arg)
{
	struct pending_auth *p = arg;
	struct signin_session s = *found;
	int e;

	if ((e = auth_error(rc)) != 0)
		req_reply_error(p->r, e);
	else
		dispatch_from(p->r, p->rt, p->next, &s);
	signin_session_wipe(&s);
	free(p);
}

/* Runs the route's preflights from row from on, then its handler. The
 * session's row hands the rest to on_session, which the store calls at
 * once (SQLite) or when it has answered (PostgreSQL). */
static void
dispatch_from(struct req *r, const struct route *rt, size_t from, struct signin_session *s)
{
	struct pending_auth *p;
	size_t i;
	int e;

	for (i = from; i < NPREFLIGHTS; i++) {
		if ((rt->flags & preflights[i].flag) == 0)
			continue;
		if (preflights[i].check == NULL) {
			if ((p = malloc(sizeof(*p))) == NULL) {
				req_reply_error(r, VEP_ERR_NOMEM);
				return;
			}
			p->r = r;
			p->rt = rt;
			p->next = i + 1;
			lookup_session(r->loop->lookup, req_header(r, "Cookie"), on_session, p);
			return;
		}
		if ((e = preflights[i].check(r, s)) != 0) {
			req_reply_error(r, e);
			return;
		}
	}
	if (rt->flags & ROUTE_AUTH)
		rt->session_handler(r, s);
	else
		rt->handler(r);
}

void
router_dispatch(struct req *r)
{
	struct signin_session s = { 0 };
	const struct route *rt;
	unsigned allowed;
	int e;

	if ((e = check_host(r)) != 0 || (e = req_parse_target(r)) != 0) {
		req_reply_error(r, e);
		return;
	}
	if ((rt = find_route(r->path)) == NULL) {
		req_reply_error(r, REQ_ERR_NOT_FOUND);
		return;
	}
	if (rt->flags & ROUTE_PERSONA)
		r->shape = REQ_SHAPE_PERSONA;
	allowed = rt->methods;
	if (allowed & REQ_M_GET)
		allowed |= REQ_M_HEAD;
	if ((r->method & allowed) == 0) {
		req_reply_method(r, allowed);
		return;
	}
	dispatch_from(r, rt, 0, &s);
	signin_session_wipe(&s);
}

int
router_self_check(void)
{
	unsigned checked = ROUTE_PERSONA; /* a reply shape: nothing to check */
	size_t i;

	for (i = 0; i < NPREFLIGHTS; i++)
		checked |= preflights[i].flag;
	for (i = 0; i < NROUTES; i++) {
		if ((routes[i].flags & ~checked) != 0)
			return VEP_ERR_ARG;
		/* CSRF is checked against the session: it needs AUTH. */
		if ((routes[i].flags & ROUTE_CSRF) && !(routes[i].flags & ROUTE_AUTH))
			return VEP_ERR_ARG;
		/* A session is handed exactly to the handlers that take one. */
		if ((routes[i].flags & ROUTE_AUTH) ?
		    routes[i].session_handler == NULL || routes[i].handler != NULL :
		    routes[i].handler == NULL || routes[i].session_handler != NULL)
			return VEP_ERR_ARG;
	}
	return VEP_OK;
}
