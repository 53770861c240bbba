/*
 * remote/remote.c - other domains' assertions, verified in threads (see
 * remote/remote.h).
 */
#include "remote/remote.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <event2/event.h>

#include "core/config.h"
#include "core/errors.h"
#include "edge/proxy.h"
#include "email.h"
#include "err.h"
#include "remote/addr.h"
#include "remote/cache.h"
#include "remote/discover.h"
#include "remote/fetch.h"
#include "util.h"

#define WELL_KNOWN "/.well-known/browserid"
#define USER_AGENT "vep-authority (BrowserID verifier)"

/* What a job needs from the configuration, copied when it is asked for. */
struct remote_params {
	int timeout_s;
	int total_s;
	char *cafile;          /* owned, or NULL */
	char *allow;           /* owned, or NULL */
	char *connect;         /* owned, or NULL */
};

struct remote_job {
	struct remote *rm;
	struct remote_job *prev, *next;  /* rm's list */
	pthread_t thread;
	struct event *ev;                /* owned: the completion, on rm's base */
	char *audience;                  /* owned */
	struct remote_params p;
	struct remote_result res;
	remote_done done;
	void *arg;
};

struct remote {
	struct event_base *base;
	struct remote_cache *cache;      /* borrowed */
	struct remote_job *jobs;         /* in flight or completed, not yet reported */
	size_t n;
};

int
remote_new(struct event_base *base, struct remote_cache *cache, struct remote **out)
{
	struct remote *rm = calloc(1, sizeof *rm);

	*out = NULL;
	if (rm == NULL)
		return VEP_ERR_NOMEM;
	rm->base = base;
	rm->cache = cache;
	*out = rm;
	return VEP_OK;
}

/* A job's deadline and where it connects: what one fetch needs. */
struct hop_ctx {
	const struct remote_params *p;
	struct remote_cache *cache;
	const struct proxy_list *allow;
	int64_t deadline_ms;             /* monotonic */
};

/* discover_get_fn: host's support document, from the cache or fetched. */
static int
hop_doc(void *arg, int depth, const char *host, char **text, size_t *len, char *why,
    size_t whylen)
{
	struct hop_ctx *h = arg;
	struct fetch_opts o;
	char addr[INET6_ADDRSTRLEN], url[VEP_DOMAIN_MAX + 32], fwhy[200];
	unsigned port = 443;
	int64_t left = h->deadline_ms - vep_mono_ms();
	long max_age = -1;
	int rc;

	if (remote_cache_get(h->cache, host, vep_now_ms(), text, len))
		return 0;
	if (left < 1000) {
		snprintf(why, whylen, "timed out before fetching the support document of %s", host);
		return VEP_ERR_IO;
	}
	if (!config_connect_lookup(h->p->connect, host, addr, &port) &&
	    (rc = remote_addr_resolve(host, h->allow, addr, why, whylen)) != 0)
		return VEP_ERR_IO;
	if (!remote_addr_allowed(addr, h->allow)) {
		snprintf(why, whylen, "%s: address not allowed (see verify_remote_allow)", host);
		return VEP_ERR_IO;
	}
	memset(&o, 0, sizeof o);
	o.connect_host = addr;
	o.connect_port = (int)port;
	o.cafile = h->p->cafile;
	o.timeout_s = h->p->timeout_s;
	o.total_s = (int)(left / 1000);
	o.max_body = REMOTE_MAX_DOC_BYTES;
	o.user_agent = USER_AGENT;
	snprintf(url, sizeof url, "https://%s" WELL_KNOWN, host);
	if ((rc = fetch_get(url, &o, text, len, &max_age, fwhy, sizeof fwhy)) != 0) {
		snprintf(why, whylen, "cannot fetch the support document of %s: %s", host, fwhy);
		return rc;
	}
	if (max_age > 0)
		remote_cache_put(h->cache, host, *text, *len, vep_now_ms() + max_age * 1000);
	return 0;
}

/* The whole verification of one job, in its thread. */
static void
job_verify(struct remote_job *j)
{
	struct remote_result *res = &j->res;
	struct proxy_list *allow = NULL;
	struct vep_support *doc = NULL;
	struct hop_ctx h;
	char *local = NULL, *domain = NULL, *issuer = NULL, why[128];
	int rc;

	if ((rc = vep_email_split(res->backed->cert->email, &local, &domain)) != 0)
		goto out;
	vep_domain_lower(domain);
	if (j->p.allow != NULL && (rc = proxy_list_parse(j->p.allow, &allow, why,
	    sizeof why)) != 0)
		goto out;
	h.p = &j->p;
	h.cache = j->rm->cache;
	h.allow = allow;
	h.deadline_ms = vep_mono_ms() + (int64_t)j->p.total_s * 1000;
	if ((rc = discover_walk(domain, hop_doc, &h, &doc, &issuer, res->reason,
	    sizeof res->reason)) != 0)
		goto out;
	rc = vep_backed_verify(res->backed, j->audience, issuer,
	    (const vep_key *const *)doc->keys, doc->nkeys, vep_now_ms());
out:
	res->rc = rc;
	if (rc != 0) {
		vep_backed_free(res->backed);
		res->backed = NULL;
	}
	free(local);
	free(domain);
	free(issuer);
	vep_support_free(doc);
	proxy_list_free(allow);
}

static void *
job_thread(void *arg)
{
	struct remote_job *j = arg;

	job_verify(j);
	/* The loop may run the completion (and free j) from here on. */
	event_active(j->ev, EV_TIMEOUT, 0);
	return NULL;
}

static void
params_clear(struct remote_params *p)
{
	free(p->cafile);
	free(p->allow);
	free(p->connect);
	memset(p, 0, sizeof *p);
}

static void
job_free(struct remote_job *j)
{
	if (j == NULL)
		return;
	if (j->ev != NULL)
		event_free(j->ev);
	free(j->audience);
	params_clear(&j->p);
	vep_backed_free(j->res.backed);
	free(j);
}

/* Reports j (its thread has ended) and frees it. */
static void
job_report(struct remote_job *j)
{
	struct remote *rm = j->rm;

	pthread_join(j->thread, NULL);
	if (j->prev != NULL)
		j->prev->next = j->next;
	else
		rm->jobs = j->next;
	if (j->next != NULL)
		j->next->prev = j->prev;
	rm->n--;
	j->done(&j->res, j->arg);
	job_free(j);
}

static void
on_job_done(evutil_socket_t fd, short what, void *arg)
{
	job_report(arg);
}

/* Copies s into *dst (NULL stays NULL). */
static int
dup_opt(const char *s, char **dst)
{
	*dst = NULL;
	return s != NULL && (*dst = strdup(s)) == NULL ? VEP_ERR_NOMEM : 0;
}

int
remote_verify(struct remote *rm, vep_backed **backed, const char *audience,
    const struct config *cfg, remote_done done, void *arg)
{
	struct remote_job *j;

	if (rm->n >= REMOTE_MAX_INFLIGHT)
		return SRV_ERR_BUSY;
	if ((j = calloc(1, sizeof *j)) == NULL)
		return VEP_ERR_NOMEM;
	j->rm = rm;
	j->done = done;
	j->arg = arg;
	j->p.timeout_s = (int)cfg->verify_remote_timeout_s;
	j->p.total_s = (int)cfg->verify_remote_total_s;
	if ((j->audience = strdup(audience)) == NULL ||
	    dup_opt(cfg->verify_remote_cafile, &j->p.cafile) != 0 ||
	    dup_opt(cfg->verify_remote_allow, &j->p.allow) != 0 ||
	    dup_opt(cfg->verify_remote_connect, &j->p.connect) != 0 ||
	    (j->ev = event_new(rm->base, -1, 0, on_job_done, j)) == NULL) {
		job_free(j);
		return VEP_ERR_NOMEM;
	}
	j->res.backed = *backed;
	if (pthread_create(&j->thread, NULL, job_thread, j) != 0) {
		j->res.backed = NULL; /* the caller keeps it on an error */
		job_free(j);
		return SRV_ERR_BUSY;
	}
	*backed = NULL;
	j->next = rm->jobs;
	if (rm->jobs != NULL)
		rm->jobs->prev = j;
	rm->jobs = j;
	rm->n++;
	return 0;
}

void
remote_free(struct remote *rm)
{
	if (rm == NULL)
		return;
	/* Each thread ends within its total; joining reports it whether or
	 * not its completion event ran (the loop has stopped). */
	while (rm->jobs != NULL)
		job_report(rm->jobs);
	free(rm);
}
