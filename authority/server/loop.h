/*
 * server/loop.h - one event loop: a thread with its own libevent base, its own
 * listening socket (SO_REUSEPORT: the kernel spreads connections over the
 * loops), its own database connection for reads and a handle on a writer
 * thread for writes (so it never waits for an fsync: with SQLite loop 0's
 * thread, which every loop shares; with PostgreSQL its own), PAM helper,
 * sign-ins in flight
 * and batch of audit rows. Loops share only what never changes while they run
 * (configuration, failure-delay secret) and the domain set, which a reload
 * replaces whole (server/shared.h). So the hot path takes no lock.
 *
 * Loop 0 runs in the main thread and also owns the signals, housekeeping
 * and the demo relying party; the others run in threads of their own.
 *
 * This header is the struct every layer reaches its loop's parts through;
 * server/loops.h starts, runs and stops loops. Nothing may touch another
 * loop's members (only loop_stop, which is thread-safe).
 */
#ifndef AUTHORITY_SERVER_LOOP_H
#define AUTHORITY_SERVER_LOOP_H

#include <pthread.h>
#include <stddef.h>

struct authority;
struct writer;
struct db;
struct event;
struct event_base;
struct issuance;
struct keeper_chan;
struct pam_client;
struct remote;
struct server;
struct lookup;
struct mailbox;
struct signin;

/* How often loop 0 deletes dead sessions and windows (seconds), and how
 * many rows one step deletes per table (a step never holds the write lock
 * long). */
#define LOOP_HOUSEKEEPING_S 60
#define LOOP_PURGE_ROWS 500

struct loop {
	struct authority *a;        /* shared */
	size_t index;               /* 0 = the main thread's */
	struct event_base *base;    /* owned */
	struct server *server;      /* owned: this loop's listener */
	struct db *db;              /* owned: this loop's connection, for reads (SQLite);
	                             * NULL with PostgreSQL */
	struct writer *reader;      /* owned: the thread of this loop's reads (PostgreSQL),
	                             * or NULL */
	struct writer *writer;      /* owned: this loop's handle on a database writer thread
	                             * (store/writer.h) */
	struct pam_client *pam;     /* owned: this loop's PAM helper */
	struct signin *signin;      /* owned: sign-in and sessions (auth/signin.h) */
	struct lookup *lookup;      /* owned: the store's reads (auth/lookup.h) */
	struct issuance *issuance;  /* owned: certificates signed and recorded
	                             * (issuance/issuance.h) */
	struct remote *remote;      /* owned: other domains' assertions verified in
	                             * threads (remote/remote.h) */
	struct event *housekeeping; /* owned, loop 0 only */
	struct event *ack;          /* owned: "I no longer use the old domain set" */
	struct keeper_chan *keeper; /* borrowed: this loop's channel to the key process */
	struct mailbox *mailbox;    /* borrowed (the authority frees it after every loop):
	                             * work other loops post here (server/mailbox.h) */
	pthread_t thread;
	int threaded;               /* 1 once the thread runs */
};

#endif
