/*
 * core/metrics.h - the authority's counters and latency histograms, and
 * their Prometheus text exposition (format 0.0.4).
 *
 * One struct metrics per process, in struct authority: every event loop adds
 * to it with relaxed atomic increments (a few per request, nothing beside
 * the cost of a sign-in or a signature), and the scrape reads it. Values
 * only grow (counters) until the process ends; gauges are computed at
 * scrape time by the caller (struct metrics_gauges).
 *
 * Must never hold a label value from a client: outcome and result labels
 * come from fixed tables here, domain labels from the configuration.
 */
#ifndef AUTHORITY_CORE_METRICS_H
#define AUTHORITY_CORE_METRICS_H

#include <stdatomic.h>
#include <stddef.h>

/* Sign-in decisions, as the log names them ("sign-in OUTCOME: ..."). */
enum metrics_signin {
	METRICS_SIGNIN_OK,
	METRICS_SIGNIN_AUTH_FAILED,   /* wrong password or unknown account */
	METRICS_SIGNIN_THROTTLED,     /* refused by the throttle before PAM */
	METRICS_SIGNIN_REFUSED,       /* address not served, account not allowed
	                               * (PAM's acct-refused, user-refused too) */
	METRICS_SIGNIN_ERROR,         /* PAM could not decide (error, timeout, busy) */
	METRICS_SIGNIN_N
};

/* Certificate requests of signed-in users. */
enum metrics_cert {
	METRICS_CERT_ISSUED,
	METRICS_CERT_REFUSED,         /* the request was not acceptable (4xx) */
	METRICS_CERT_FAILED,          /* we could not (signing, recording: 5xx) */
	METRICS_CERT_N
};

/* POST /verify answers. */
enum metrics_verify {
	METRICS_VERIFY_OKAY,          /* status okay */
	METRICS_VERIFY_FAILURE,       /* status failure: the assertion is not valid */
	METRICS_VERIFY_REFUSED,       /* no verdict: a malformed request, the rate
	                               * limit, too many in flight (4xx, 5xx) */
	METRICS_VERIFY_N
};

/* Histogram bucket upper bounds in seconds (the +Inf bucket is implied). */
#define METRICS_BUCKETS { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, \
			  2.5, 5.0, 10.0 }
#define METRICS_NBUCKETS 13

struct metrics_hist {
	atomic_ulong le[METRICS_NBUCKETS]; /* observations <= each bound (not cumulative) */
	atomic_ulong count;
	atomic_ullong sum_us;              /* total in microseconds */
};

struct metrics {
	atomic_ulong signins[METRICS_SIGNIN_N];
	atomic_ulong certs[METRICS_CERT_N];
	atomic_ulong verifies[METRICS_VERIFY_N];
	atomic_ulong reload_failures;
	atomic_ulong pam_helper_lost;      /* PAM helpers that died or misbehaved
	                                    * (each is replaced) */
	struct metrics_hist pam;           /* one PAM conversation, start to answer */
	struct metrics_hist request;       /* first byte of a request to its answer */
};

/* Counts a sign-in decision by the outcome word the log uses ("ok",
 * "auth-failed", "throttled", "refused ...", PAM's "error"/"timeout"/...). */
void metrics_signin(struct metrics *m, const char *outcome);

void metrics_cert(struct metrics *m, enum metrics_cert result);
void metrics_verify(struct metrics *m, enum metrics_verify result);

/* Adds one observation of seconds (negative counts as 0). */
void metrics_observe(struct metrics_hist *h, double seconds);

/* What the scrape computes on the spot. */
struct metrics_domain_gauge {
	const char *domain;      /* configured name: [a-z0-9.-] only */
	double key_age_s;        /* age of the signing key's file, -1 unknown */
};

struct metrics_gauges {
	double start_time_s;     /* process start, seconds since the epoch */
	long long sessions;      /* sessions not expired, -1 when unknown */
	int reload_ok;           /* 1: the last reload (or the start) succeeded */
	int database_up;         /* 1: the store answered its last read */
	const struct metrics_domain_gauge *domains;
	size_t ndomains;
};

/* Writes the exposition into *out (new, NUL-terminated, free()), *len its
 * length. Returns 0 or VEP_ERR_NOMEM. */
int metrics_render(const struct metrics *m, const struct metrics_gauges *g, char **out,
    size_t *len);

#endif
