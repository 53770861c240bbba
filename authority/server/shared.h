/*
 * server/shared.h - the one struct authority: what every event loop shares,
 * built in main.c and passed down to every module that needs more than its
 * own arguments. There are no mutable globals anywhere else.
 *
 * Shared means read-only while the loops run, with one exception: the
 * domain set, which a reload (SIGHUP, handled by loop 0) replaces whole.
 * Readers load the pointer once per callback (authority_domains); the old
 * set is freed only after every other loop has run a callback since the
 * swap (authority_domains_ack), so no reader can still hold it. No lock.
 *
 * Owns nothing by itself; main.c creates and frees each member in order.
 */
#ifndef AUTHORITY_SERVER_SHARED_H
#define AUTHORITY_SERVER_SHARED_H

#include <stdatomic.h>
#include <stddef.h>
#include <time.h>

#include "core/config.h"
#include "core/domain.h"
#include "keyproc/keyring.h"
#include "core/log.h"
#include "core/metrics.h"
#include "core/sdnotify.h"
#include "core/syslog_out.h"

struct event;
struct faildelay;
struct ratelimit;
struct remote_cache;
struct keeper;
struct loop;

struct authority {
	/* owned: the configuration at start, for what only a restart changes
	 * (sockets, loops, database, PAM, user); what a reload changes is read
	 * from the domain set's (authority_cfg). */
	struct config *cfg;
	struct log log;              /* where diagnostics go (stderr) */
	struct domain_set *_Atomic domains; /* owned: served domains (authority_domains) */
	struct faildelay *faildelay; /* owned: when failed sign-ins are answered */
	struct ratelimit *verify_limit; /* owned: POST /verify per client (core/ratelimit.h) */
	struct remote_cache *remote_cache; /* owned: other domains' support documents
	                                    * (remote/cache.h) */
	struct keeper *keeper;       /* owned: the key process (keyproc/keeper.h) */
	config_maker_fn make_cfg;  /* how configuration text becomes a config */
	void *make_cfg_arg;
	int failed;                  /* a fatal event stopped the loops: exit 1 */
	char **pam_env;              /* owned: extra PAM helper environment (demo) */
	struct loop **loops;         /* owned: the event loops; loops[0] is the main thread's */
	struct mailbox **mailboxes;  /* owned: one per loop, freed after every loop */
	size_t nloops;
	int demo;                    /* 1 when started with --demo */
	struct server *demo_rp;      /* owned: the demo relying party (--demo, loop 0) */
	/* Reload bookkeeping (loop 0 only, but for acks). */
	struct domain_set *retiring; /* the replaced set, freed once every loop acked */
	atomic_size_t acks;          /* loops that acked since the swap */
	struct event *retire_timer;  /* owned: polls acks while a set is retiring */
	unsigned long long reloads;  /* SIGHUPs answered since start (loop 0 only) */
	atomic_int reload_failed;    /* 1 while the last reload failed: /healthz
	                              * says "degraded" (any loop reads it) */
	struct sdnotify notify;      /* owned: systemd's notify socket (core/sdnotify.h) */
	struct metrics metrics;      /* counters every loop adds to (core/metrics.h) */
	struct server *metrics_server; /* owned: the metrics_listen listener, or NULL */
	struct timespec started;     /* CLOCK_REALTIME at start, for the metrics */
	struct syslog_out access_syslog; /* owned: where access lines go with
	                                  * access_log = syslog (fd -1 otherwise) */
};

/* The current domain set. Load once per callback and do not keep it
 * across callbacks. */
static inline struct domain_set *
authority_domains(struct authority *a)
{
	return atomic_load_explicit(&a->domains, memory_order_acquire);
}

/* The configuration of the current domain set: the live one, for settings
 * a reload changes. Same rules as authority_domains. */
static inline const struct config *
authority_cfg(struct authority *a)
{
	return authority_domains(a)->cfg;
}

/* Called by each other loop from a callback after a swap. */
void authority_domains_ack(struct authority *a);

/* Frees a retiring set at shutdown, after every loop has stopped. */
void authority_domains_free(struct authority *a);

#endif
