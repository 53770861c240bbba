/*
 * api/health.h - GET /healthz: whether this process can serve, for load
 * balancers and monitors.
 *
 * 200 {"status":"ok"} when the event loop that answers has its domain keys,
 * a database connection that answers a read, and a running PAM helper;
 * else 503 {"status":"unavailable"} (the log says which part failed). After
 * a failed reload (SIGHUP), while the old configuration and keys still
 * serve: 200 {"status":"degraded"}, until a reload succeeds. Also 200
 * degraded while the PostgreSQL store does not answer: every instance
 * shares it, so taking this one out of a load balancer would help nothing
 * and stop discovery, which still serves; sign-in and issuance answer 503
 * meanwhile. Never cached;
 * no domain, key, account, address or version in the answer: it is public,
 * and says only ok, degraded or unavailable.
 */
#ifndef AUTHORITY_API_HEALTH_H
#define AUTHORITY_API_HEALTH_H

struct req;

void api_health(struct req *r);

#endif
