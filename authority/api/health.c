/*
 * api/health.c - GET /healthz (see api/health.h).
 */
#include "api/health.h"

#include <string.h>

#include "server/shared.h"
#include "core/domain.h"
#include "core/log.h"
#include "server/loop.h"
#include "auth/lookup.h"
#include "auth/signin.h"
#include "issuance/issuance.h"
#include "core/paths.h"
#include "edge/req.h"

static const char health_ok[] = "{\"status\":\"ok\"}\n";
static const char health_down[] = "{\"status\":\"unavailable\"}\n";
/* Serving, but the last reload failed: the old configuration and keys are
 * still in use. 200 so that load balancers keep sending traffic; a body that
 * is not "ok" so that monitoring notices. The reason is in the log only. */
static const char health_degraded[] = "{\"status\":\"degraded\"}\n";

/* The first part of this process that cannot serve, or NULL. */
static const char *
health_problem(const struct req *r)
{
	const struct domain_set *ds = authority_domains(r->a);
	const char *why;

	if (ds == NULL || ds->n == 0)
		return "no domain keys loaded";
	if (!lookup_store_shared(r->loop->lookup) &&
	    (why = lookup_problem(r->loop->lookup)) != NULL)
		return why;
	if ((why = signin_problem(r->loop->signin)) != NULL)
		return why;
	return issuance_problem(r->loop->issuance);
}

void
api_health(struct req *r)
{
	const char *why = health_problem(r), *shared = NULL;

	if (why == NULL && lookup_store_shared(r->loop->lookup) &&
	    (shared = lookup_problem(r->loop->lookup)) != NULL)
		log_warn(&r->a->log, "health check degraded: %s", shared);
	if (why == NULL && (shared != NULL || atomic_load(&r->a->reload_failed))) {
		req_reply(r, 200, MEDIA_JSON, health_degraded, strlen(health_degraded), 0);
		return;
	}
	if (why == NULL) {
		req_reply(r, 200, MEDIA_JSON, health_ok, strlen(health_ok), 0);
		return;
	}
	log_warn(&r->a->log, "health check failed: %s", why);
	req_reply(r, 503, MEDIA_JSON, health_down, strlen(health_down), 0);
}
