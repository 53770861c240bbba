/*
 * router.c - the route table and preflight checks.
 *
 * Owns which path goes to which handler with which requirements. Must
 * never answer a request successfully itself: it only rejects (via the
 * req.c error table) or hands over to a handler.
 */
#include "router.h"

#include <stdlib.h>
#include <string.h>

#include "authority.h"
#include "domain.h"
#include "email.h"
#include "err.h"
#include "paths.h"
#include "req.h"
#include "wellknown.h"

#define GET_HEAD (REQ_M_GET | REQ_M_HEAD)

/* Every path the authority serves. */
static const struct route routes[] = {
	{ PATH_SUPPORT, GET_HEAD, ROUTE_DOMAIN, wellknown_support },
	{ PATH_PK, GET_HEAD, ROUTE_DOMAIN, wellknown_pk },
	{ PATH_HOSTMETA, GET_HEAD, ROUTE_DOMAIN, wellknown_hostmeta },
	{ PATH_HOSTMETA_JSON, GET_HEAD, ROUTE_DOMAIN, wellknown_hostmeta_json },
	/* WebFinger names its domain in ?resource=, so no ROUTE_DOMAIN. */
	{ PATH_WEBFINGER, GET_HEAD, 0, wellknown_webfinger },
};

#define NROUTES (sizeof(routes) / sizeof(routes[0]))

/* A check returns REQ_ERR_COUNT to pass, else the error to answer with. */
typedef enum req_error (*preflight_check)(struct req *r);

static enum req_error check_domain(struct req *r);

/* One row per route flag, run in this order. ROUTE_AUTH, ROUTE_CSRF and
 * ROUTE_JSON_BODY get their rows with the session and certificate work. */
static const struct {
	unsigned flag;
	preflight_check check;
} preflights[] = {
	{ ROUTE_DOMAIN, check_domain },
};

#define NPREFLIGHTS (sizeof(preflights) / sizeof(preflights[0]))

static enum req_error
check_domain(struct req *r)
{
	struct domain_set *set = r->a->domains;
	char host[300], hostport[300], *name = NULL;
	const char *dp;
	int local, rc;
	enum req_error e = REQ_ERR_COUNT;

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
	rc = req_host(r, host, hostport, sizeof(host), &local);
	if (rc < 0)
		return REQ_ERR_BAD_HOST;
	/* No Host (HTTP/1.0), or an address rather than a name: the server
	 * is being reached directly (the demo at http://127.0.0.1:PORT), so
	 * the first configured domain is meant. */
	if (rc == 1 || local) {
		r->domain = &set->v[0];
		return REQ_ERR_COUNT;
	}
	r->domain = domain_set_find(set, host);
	return r->domain != NULL ? REQ_ERR_COUNT : REQ_ERR_UNKNOWN_DOMAIN;
}

static const struct route *
find_route(const char *path)
{
	size_t i;

	for (i = 0; i < NROUTES; i++)
		if (strcmp(routes[i].path, path) == 0)
			return &routes[i];
	return NULL;
}

void
router_dispatch(struct req *r)
{
	const struct route *rt;
	enum req_error e;
	unsigned allowed;
	size_t i;

	if ((e = req_parse_target(r)) != REQ_ERR_COUNT) {
		req_reply_error(r, e);
		return;
	}
	if ((rt = find_route(r->path)) == NULL) {
		req_reply_error(r, REQ_ERR_NOT_FOUND);
		return;
	}
	allowed = rt->methods;
	if (allowed & REQ_M_GET)
		allowed |= REQ_M_HEAD;
	if ((r->method & allowed) == 0) {
		req_reply_method(r, allowed);
		return;
	}
	for (i = 0; i < NPREFLIGHTS; i++) {
		if ((rt->flags & preflights[i].flag) == 0)
			continue;
		if ((e = preflights[i].check(r)) != REQ_ERR_COUNT) {
			req_reply_error(r, e);
			return;
		}
	}
	rt->handler(r);
}

int
router_self_check(void)
{
	unsigned checked = 0;
	size_t i;

	for (i = 0; i < NPREFLIGHTS; i++)
		checked |= preflights[i].flag;
	for (i = 0; i < NROUTES; i++)
		if ((routes[i].flags & ~checked) != 0)
			return VEP_ERR_ARG;
	return VEP_OK;
}
