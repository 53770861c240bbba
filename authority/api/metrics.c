/*
 * api/metrics.c - GET /metrics (see api/metrics.h).
 */
#include "api/metrics.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth/lookup.h"
#include "core/domain.h"
#include "core/metrics.h"
#include "edge/req.h"
#include "server/loop.h"
#include "server/shared.h"

/* Most domains whose key age a scrape reports (the configuration allows
 * fewer; a larger set is cut, not refused). */
#define METRICS_DOMAINS_MAX 256

void
api_metrics(struct req *r)
{
	struct metrics_domain_gauge doms[METRICS_DOMAINS_MAX];
	const struct domain_set *ds = authority_domains(r->a);
	struct metrics_gauges g = { 0 };
	struct timespec now;
	int64_t sessions = -1;
	char *text = NULL;
	size_t len = 0, i;
	int rc;

	if ((rc = req_parse_target(r)) != 0) {
		req_reply_error(r, rc);
		return;
	}
	if (strcmp(r->path, PATH_METRICS) != 0) {
		req_reply_error(r, REQ_ERR_NOT_FOUND);
		return;
	}
	if ((r->method & (REQ_M_GET | REQ_M_HEAD)) == 0) {
		req_reply_method(r, REQ_M_GET | REQ_M_HEAD);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	if (lookup_sessions_alive(r->loop->lookup, &sessions) != 0)
		sessions = -1;
	g.database_up = lookup_problem(r->loop->lookup) == NULL;
	for (i = 0; ds != NULL && i < ds->n && i < METRICS_DOMAINS_MAX; i++) {
		doms[i].domain = ds->v[i].cfg->name;
		doms[i].key_age_s = ds->v[i].current_since > 0 ?
		    (double)(now.tv_sec - ds->v[i].current_since) : -1;
	}
	g.start_time_s = (double)r->a->started.tv_sec + (double)r->a->started.tv_nsec / 1e9;
	g.sessions = sessions;
	g.reload_ok = !atomic_load(&r->a->reload_failed);
	g.domains = doms;
	g.ndomains = i;
	if (metrics_render(&r->a->metrics, &g, &text, &len) != 0) {
		req_reply_error(r, REQ_ERR_INTERNAL);
		return;
	}
	req_reply(r, 200, MEDIA_PROMETHEUS, text, len, 0);
	free(text);
}
