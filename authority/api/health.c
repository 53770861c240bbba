/*
 * api/health.c - GET /healthz (see api/health.h).
 */
#include "api/health.h"

#include <string.h>

#include "server/shared.h"
#include "store/db.h"
#include "core/domain.h"
#include "keyproc/keeper.h"
#include "core/log.h"
#include "server/loop.h"
#include "auth/pam_client.h"
#include "core/paths.h"
#include "edge/req.h"

static const char health_ok[] = "{\"status\":\"ok\"}\n";
static const char health_down[] = "{\"status\":\"unavailable\"}\n";

/* The first part that cannot serve, or NULL. */
static const char *
health_problem(const struct req *r)
{
	const struct domain_set *ds = authority_domains(r->a);
	int version;

	if (ds == NULL || ds->n == 0)
		return "no domain keys loaded";
	if (db_schema_version(r->loop->db, &version) != 0)
		return "database does not answer";
	if (pam_client_helper_pid(r->loop->pam) == 0)
		return "PAM helper not running";
	if (!keeper_chan_ok(r->loop->keeper))
		return "the key process does not answer";
	return NULL;
}

void
api_health(struct req *r)
{
	const char *why = health_problem(r);

	if (why == NULL) {
		req_reply(r, 200, MEDIA_JSON, health_ok, strlen(health_ok), 0);
		return;
	}
	log_warn(&r->a->log, "health check failed: %s", why);
	req_reply(r, 503, MEDIA_JSON, health_down, strlen(health_down), 0);
}
