/*
 * core/metrics.c - counters, histograms and their exposition (see
 * core/metrics.h).
 */
#include "core/metrics.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"

static const double bucket_bounds[METRICS_NBUCKETS] = METRICS_BUCKETS;

/* Label values, indexed by the enums. */
static const char *const signin_names[METRICS_SIGNIN_N] = {
	[METRICS_SIGNIN_OK] = "ok",
	[METRICS_SIGNIN_AUTH_FAILED] = "auth_failed",
	[METRICS_SIGNIN_THROTTLED] = "throttled",
	[METRICS_SIGNIN_REFUSED] = "refused",
	[METRICS_SIGNIN_ERROR] = "error",
};

static const char *const cert_names[METRICS_CERT_N] = {
	[METRICS_CERT_ISSUED] = "issued",
	[METRICS_CERT_REFUSED] = "refused",
	[METRICS_CERT_FAILED] = "failed",
};

static const char *const verify_names[METRICS_VERIFY_N] = {
	[METRICS_VERIFY_OKAY] = "okay",
	[METRICS_VERIFY_FAILURE] = "failure",
	[METRICS_VERIFY_REFUSED] = "refused",
};

void
metrics_signin(struct metrics *m, const char *outcome)
{
	enum metrics_signin i = METRICS_SIGNIN_ERROR;

	if (strcmp(outcome, "ok") == 0)
		i = METRICS_SIGNIN_OK;
	else if (strcmp(outcome, "auth-failed") == 0)
		i = METRICS_SIGNIN_AUTH_FAILED;
	else if (strcmp(outcome, "throttled") == 0)
		i = METRICS_SIGNIN_THROTTLED;
	else if (strstr(outcome, "refused") != NULL ||   /* "refused (...)", "acct-refused"... */
	    strcmp(outcome, "password_expired") == 0)    /* the account refuses until changed */
		i = METRICS_SIGNIN_REFUSED;
	atomic_fetch_add_explicit(&m->signins[i], 1, memory_order_relaxed);
}

void
metrics_cert(struct metrics *m, enum metrics_cert result)
{
	if ((unsigned)result < METRICS_CERT_N)
		atomic_fetch_add_explicit(&m->certs[result], 1, memory_order_relaxed);
}

void
metrics_verify(struct metrics *m, enum metrics_verify result)
{
	if ((unsigned)result < METRICS_VERIFY_N)
		atomic_fetch_add_explicit(&m->verifies[result], 1, memory_order_relaxed);
}

void
metrics_observe(struct metrics_hist *h, double seconds)
{
	size_t i;

	if (!(seconds > 0))
		seconds = 0;
	for (i = 0; i < METRICS_NBUCKETS && seconds > bucket_bounds[i]; i++)
		;
	if (i < METRICS_NBUCKETS)
		atomic_fetch_add_explicit(&h->le[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_us, (unsigned long long)(seconds * 1e6),
	    memory_order_relaxed);
}

/* A growing text buffer; after the first failure every append is a no-op
 * and the failure is reported at the end. */
struct text {
	char *s;
	size_t len, cap;
	int failed;
};

static void
put(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void
put(struct text *t, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		if (t->failed)
			return;
		va_start(ap, fmt);
		n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			t->failed = 1;
			return;
		}
		if ((size_t)n < t->cap - t->len) {
			t->len += (size_t)n;
			return;
		}
		char *bigger = realloc(t->s, t->cap * 2 + (size_t)n);
		if (bigger == NULL) {
			t->failed = 1;
			return;
		}
		t->s = bigger;
		t->cap = t->cap * 2 + (size_t)n;
	}
}

static unsigned long
load(const atomic_ulong *v)
{
	return atomic_load_explicit(v, memory_order_relaxed);
}

static void
put_hist(struct text *t, const char *name, const char *help, const struct metrics_hist *h)
{
	unsigned long cum = 0, count = load(&h->count);
	size_t i;

	put(t, "# HELP %s %s\n# TYPE %s histogram\n", name, help, name);
	for (i = 0; i < METRICS_NBUCKETS; i++) {
		cum += load(&h->le[i]);
		/* Observations land in count last: never report more in a
		 * bucket than in the total. */
		put(t, "%s_bucket{le=\"%g\"} %lu\n", name, bucket_bounds[i],
		    cum < count ? cum : count);
	}
	put(t, "%s_bucket{le=\"+Inf\"} %lu\n", name, count);
	put(t, "%s_sum %.6f\n%s_count %lu\n", name,
	    (double)atomic_load_explicit(&h->sum_us, memory_order_relaxed) / 1e6, name, count);
}

int
metrics_render(const struct metrics *m, const struct metrics_gauges *g, char **out,
    size_t *len)
{
	struct text t = { malloc(4096), 0, 4096, 0 };
	size_t i;

	*out = NULL;
	*len = 0;
	if (t.s == NULL)
		return VEP_ERR_NOMEM;
	put(&t, "# HELP vep_signins_total Sign-in decisions, by outcome.\n"
	    "# TYPE vep_signins_total counter\n");
	for (i = 0; i < METRICS_SIGNIN_N; i++)
		put(&t, "vep_signins_total{outcome=\"%s\"} %lu\n", signin_names[i],
		    load(&m->signins[i]));
	put(&t, "# HELP vep_certificates_total Certificate requests of signed-in users, by "
	    "result.\n# TYPE vep_certificates_total counter\n");
	for (i = 0; i < METRICS_CERT_N; i++)
		put(&t, "vep_certificates_total{result=\"%s\"} %lu\n", cert_names[i],
		    load(&m->certs[i]));
	put(&t, "# HELP vep_verifications_total POST /verify answers, by result.\n"
	    "# TYPE vep_verifications_total counter\n");
	for (i = 0; i < METRICS_VERIFY_N; i++)
		put(&t, "vep_verifications_total{result=\"%s\"} %lu\n", verify_names[i],
		    load(&m->verifies[i]));
	put_hist(&t, "vep_pam_duration_seconds",
	    "Time from a PAM attempt's start to its answer (queueing included).", &m->pam);
	put_hist(&t, "vep_request_duration_seconds",
	    "Time from a request's first byte to its answer.", &m->request);
	put(&t, "# HELP vep_reload_failures_total Reloads (SIGHUP) that failed.\n"
	    "# TYPE vep_reload_failures_total counter\nvep_reload_failures_total %lu\n",
	    load(&m->reload_failures));
	put(&t, "# HELP vep_last_reload_success 1 when the last reload (or the start) "
	    "succeeded.\n# TYPE vep_last_reload_success gauge\nvep_last_reload_success %d\n",
	    g->reload_ok ? 1 : 0);
	put(&t, "# HELP vep_pam_helper_restarts_total PAM helpers replaced after they died or "
	    "misbehaved.\n# TYPE vep_pam_helper_restarts_total counter\n"
	    "vep_pam_helper_restarts_total %lu\n", load(&m->pam_helper_lost));
	put(&t, "# HELP vep_database_up 1 when the store (SQLite file or PostgreSQL) answered "
	    "this event loop's last read.\n# TYPE vep_database_up gauge\nvep_database_up %d\n",
	    g->database_up ? 1 : 0);
	if (g->sessions >= 0)
		put(&t, "# HELP vep_sessions Sessions not expired.\n# TYPE vep_sessions gauge\n"
		    "vep_sessions %lld\n", g->sessions);
	put(&t, "# HELP vep_domain_key_age_seconds Age of each domain's signing key file.\n"
	    "# TYPE vep_domain_key_age_seconds gauge\n");
	for (i = 0; i < g->ndomains; i++)
		if (g->domains[i].key_age_s >= 0)
			put(&t, "vep_domain_key_age_seconds{domain=\"%s\"} %.0f\n",
			    g->domains[i].domain, g->domains[i].key_age_s);
	put(&t, "# HELP vep_start_time_seconds When the process started, seconds since the "
	    "epoch.\n# TYPE vep_start_time_seconds gauge\nvep_start_time_seconds %.3f\n",
	    g->start_time_s);
	if (t.failed) {
		free(t.s);
		return VEP_ERR_NOMEM;
	}
	*out = t.s;
	*len = t.len;
	return 0;
}
