/*
 * api/metrics.h - GET /metrics on the metrics listener (metrics_listen):
 * the Prometheus text exposition of core/metrics.h, with the gauges taken
 * at scrape time (sessions alive from this loop's database connection, each
 * domain's key age, whether the last reload succeeded).
 *
 * Served only on its own listener, never on the public one: the figures are
 * for the operator (bind it to loopback or a management network). Any other
 * path is 404, any other method 405; never cached.
 */
#ifndef AUTHORITY_API_METRICS_H
#define AUTHORITY_API_METRICS_H

struct req;

#define PATH_METRICS "/metrics"
#define MEDIA_PROMETHEUS "text/plain; version=0.0.4; charset=utf-8"

/* The metrics listener's handler (edge/listener.h server_handler). */
void api_metrics(struct req *r);

#endif
