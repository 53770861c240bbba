/*
 * server/loops.c - the event loops' lives (contract in server/loops.h).
 */
#include "server/loops.h"
#include "server/loop.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "server/shared.h"
#include "store/writer.h"
#include "store/db.h"
#include "err.h"
#include "auth/lookup.h"
#include "server/mailbox.h"
#include "auth/signin.h"
#include "issuance/issuance.h"
#include "keyproc/keeper.h"
#include "core/log.h"
#include "auth/pam_client.h"
#include "api/router.h"
#include "edge/listener.h"
#include "store/deferred.h"
#include "remote/remote.h"

/* Deletes dead rows, one bounded step per table per run: a backlog drains
 * over several runs instead of blocking the loop in one. */
static void
on_housekeeping(evutil_socket_t fd, short what, void *arg)
{
	struct loop *l = arg;

	deferred_housekeeping(l->writer, &l->a->log, (int64_t)time(NULL), LOOP_PURGE_ROWS);
}

/* This loop is between callbacks, so it holds no pointer into the domain
 * set a reload just replaced. */
static void
on_ack(evutil_socket_t fd, short what, void *arg)
{
	struct loop *l = arg;

	authority_domains_ack(l->a);
}

size_t
loop_default_count(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n < 1 ? 1 : (size_t)n;
}

/* The name audit rows give this instance: instance_name, else the host
 * name with anything but [A-Za-z0-9._-] as '-' (at most DB_INSTANCE_MAX). */
static void
instance_name(const struct config *cfg, char out[DB_INSTANCE_MAX + 1])
{
	char host[256];
	size_t i, n;

	if (cfg->instance_name != NULL) {
		snprintf(out, DB_INSTANCE_MAX + 1, "%s", cfg->instance_name);
		return;
	}
	if (gethostname(host, sizeof(host)) != 0 || host[0] == '\0')
		snprintf(host, sizeof(host), "localhost");
	host[sizeof(host) - 1] = '\0';
	n = strlen(host) < DB_INSTANCE_MAX ? strlen(host) : DB_INSTANCE_MAX;
	for (i = 0; i < n; i++)
		out[i] = isalnum((unsigned char)host[i]) || strchr("._-", host[i]) != NULL ?
		    host[i] : '-';
	out[n] = '\0';
}

/* The store's name in messages: never the connection string, which may
 * hold a password. */
static void
store_failed(const struct config *cfg, const char *what, int rc, char *err, size_t errlen)
{
	if (cfg->database != NULL)
		snprintf(err, errlen, "%s (the PostgreSQL store, key 'database'): %s", what,
		    srv_strerror(rc));
	else
		snprintf(err, errlen, "%s in '%s': %s", what, cfg->state_dir, srv_strerror(rc));
}

static int
open_db(struct loop *l, char *err, size_t errlen)
{
	const struct config *cfg = l->a->cfg;
	char name[DB_INSTANCE_MAX + 1];
	struct db_options o = { 0 };
	int rc;

	if (mkdir(cfg->state_dir, 0700) != 0 && errno != EEXIST) {
		snprintf(err, errlen, "state_dir '%s': cannot create: %s", cfg->state_dir,
		    strerror(errno));
		return VEP_ERR_IO;
	}
	instance_name(cfg, name);
	o.instance = name;
	o.pg_conninfo = cfg->database;
	/* The reads: a PostgreSQL round trip never on the loop. */
	rc = cfg->database != NULL ? writer_new(l->base, cfg->state_dir, &o, 0, &l->reader) :
	    db_open(cfg->state_dir, &o, &l->db);
	if (rc != 0) {
		store_failed(cfg, "database", rc, err, errlen);
		return rc;
	}
	/* SQLite: every loop's writes on loop 0's writer thread (one write
	 * lock, one fsync for several loops' audit batches). PostgreSQL: a
	 * connection per loop, which the server runs side by side. */
	if (cfg->database == NULL && l->index > 0)
		rc = writer_attach(l->a->loops[0]->writer, l->base, &l->writer);
	else
		rc = writer_new(l->base, cfg->state_dir, &o,
		    (long long)cfg->db_max_mib * 1024 * 1024, &l->writer);
	if (rc != 0) {
		store_failed(cfg, "database writer", rc, err, errlen);
		return rc;
	}
	return VEP_OK;
}

static int
start_pam(struct loop *l, char *err, size_t errlen)
{
	const struct config *cfg = l->a->cfg;
	struct pam_client_config pc;
	size_t n = l->a->nloops;
	int rc;

	memset(&pc, 0, sizeof(pc));
	pc.service = cfg->pam_service;
	pc.deadline_ms = (uint32_t)cfg->pam_timeout_s * 1000u;
	/* Sign-in relays PAM's further questions (auth/signin.h). */
	pc.conversations = 1;
	pc.answer_ms = (uint32_t)cfg->pam_answer_timeout_s * 1000u;
	/* Each loop's helper gets its share of the workers. */
	pc.max_workers = (uint32_t)(((size_t)cfg->pam_workers + n - 1) / n);
	pc.min_uid = (uint32_t)cfg->pam_min_uid;
	pc.lost = &l->a->metrics.pam_helper_lost;
	/* The helper runs with the key process's privileges, which PAM
	 * modules such as pam_unix need; this process may have dropped them. */
	pc.spawn = keeper_spawn_helper;
	pc.spawn_arg = l->keeper;
	if ((rc = pam_client_new(l->base, &pc, &l->pam)) != 0)
		snprintf(err, errlen, "cannot start vep-pam-helper: %s", vep_strerror(rc));
	return rc;
}

/* An event base whose epoll backend batches interest changes per
 * iteration: a request that enables and disables writing within one pass
 * costs no epoll_ctl at all (bench figure 2: about 10-20% more requests
 * per second). We never dup() a descriptor that is in the base, the one
 * case libevent warns the changelist gets wrong. */
static struct event_base *
new_base(void)
{
	struct event_config *ec = event_config_new();
	struct event_base *base;

	if (ec == NULL)
		return NULL;
	event_config_set_flag(ec, EVENT_BASE_FLAG_EPOLL_USE_CHANGELIST);
	base = event_base_new_with_config(ec);
	event_config_free(ec);
	return base;
}

int
loop_new(struct authority *a, size_t index, const char *listen, struct loop **out,
    char *err, size_t errlen)
{
	struct loop *l;
	int rc = VEP_ERR_NOMEM;

	*out = NULL;
	if ((l = calloc(1, sizeof(*l))) == NULL || (l->base = new_base()) == NULL) {
		snprintf(err, errlen, "cannot create an event loop");
		goto fail;
	}
	l->a = a;
	l->index = index;
	l->keeper = keeper_chan(a->keeper, index);
	if ((rc = mailbox_new(l->base, &a->mailboxes[index])) != 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	l->mailbox = a->mailboxes[index];
	/* Nothing is dispatched before loop_open: binding first lets the
	 * process drop root between the two. */
	if ((rc = server_listen(l, listen, authority_domains(a)->tls != NULL, router_dispatch,
	    &l->server)) != 0) {
		snprintf(err, errlen, "cannot listen on %s", listen);
		goto fail;
	}
	*out = l;
	return VEP_OK;
fail:
	loop_free(l);
	return rc;
}

int
loop_open(struct loop *l, char *err, size_t errlen)
{
	struct timeval tv = { LOOP_HOUSEKEEPING_S, 0 };
	int rc;

	if ((rc = open_db(l, err, errlen)) != 0 || (rc = start_pam(l, err, errlen)) != 0)
		return rc;
	if (signin_new(l->a, l->base, l->index, l->writer, l->pam, &l->signin) != 0 ||
	    lookup_new(l->a, l->base, l->db, l->reader, l->writer, &l->lookup) != 0 ||
	    issuance_new(l->base, l->writer, l->keeper, &l->a->log, &l->issuance) != 0 ||
	    remote_new(l->base, l->a->remote_cache, &l->remote) != 0 ||
	    (l->ack = event_new(l->base, -1, 0, on_ack, l)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return VEP_ERR_NOMEM;
	}
	if (l->index == 0) {
		l->housekeeping = event_new(l->base, -1, EV_PERSIST, on_housekeeping, l);
		if (l->housekeeping == NULL || event_add(l->housekeeping, &tv) != 0) {
			snprintf(err, errlen, "cannot arm the housekeeping timer");
			return VEP_ERR_NOMEM;
		}
	}
	return VEP_OK;
}

static void *
loop_thread(void *arg)
{
	struct loop *l = arg;

	if (event_base_dispatch(l->base) != 0)
		log_error(&l->a->log, "event loop %zu failed", l->index);
	return NULL;
}

int
loop_start_thread(struct loop *l)
{
	if (pthread_create(&l->thread, NULL, loop_thread, l) != 0)
		return VEP_ERR_NOMEM;
	l->threaded = 1;
	return VEP_OK;
}

void
loop_stop(struct loop *l)
{
	if (l != NULL && l->base != NULL)
		event_base_loopexit(l->base, NULL);
}

void
loop_free(struct loop *l)
{
	if (l == NULL)
		return;
	if (l->threaded)
		pthread_join(l->thread, NULL);
	/* Reads and writes still queued are made; their completions answer
	 * what they can before the listener goes. Reads first: a session
	 * found slides its idle timer through the writer. */
	writer_free(l->reader);
	lookup_free(l->lookup);
	writer_free(l->writer);
	/* Remote verifications end within verify_remote_total; theirs too. */
	remote_free(l->remote);
	signin_free(l->signin);
	issuance_free(l->issuance);
	if (l->housekeeping != NULL)
		event_free(l->housekeeping);
	if (l->ack != NULL)
		event_free(l->ack);
	server_free(l->server);
	/* Before the base goes: what other loops post from now on fails. */
	mailbox_detach(l->mailbox);
	pam_client_free(l->pam);
	db_close(l->db);
	if (l->base != NULL)
		event_base_free(l->base);
	free(l);
}

/* How often loop 0 looks whether every loop has acked (milliseconds). */
#define RETIRE_POLL_MS 10

static void
on_retire_poll(evutil_socket_t fd, short what, void *arg)
{
	struct authority *a = arg;
	struct timeval tv = { 0, RETIRE_POLL_MS * 1000 };

	if (atomic_load(&a->acks) + 1 < a->nloops) {
		evtimer_add(a->retire_timer, &tv);
		return;
	}
	domain_set_free(a->retiring);
	a->retiring = NULL;
}

int
loops_domains_swap(struct authority *a, struct domain_set *next)
{
	struct timeval tv = { 0, 0 };
	size_t i;

	if (a->retiring != NULL) {
		domain_set_free(next);
		return VEP_ERR_EXISTS;
	}
	if (a->retire_timer == NULL &&
	    (a->retire_timer = evtimer_new(a->loops[0]->base, on_retire_poll, a)) == NULL) {
		domain_set_free(next);
		return VEP_ERR_NOMEM;
	}
	atomic_store(&a->acks, 0);
	a->retiring = atomic_exchange_explicit(&a->domains, next, memory_order_acq_rel);
	/* Loop 0 is running this callback: it holds no old pointer. */
	for (i = 1; i < a->nloops; i++)
		event_active(a->loops[i]->ack, EV_TIMEOUT, 0);
	evtimer_add(a->retire_timer, &tv);
	return VEP_OK;
}
