/*
 * authority.h - the one struct authority: everything the running server
 * owns, built in main.c and passed down to every module that needs more
 * than its own arguments. There are no mutable globals anywhere else.
 *
 * Owns nothing by itself; main.c creates and frees each member in order.
 */
#ifndef AUTHORITY_AUTHORITY_H
#define AUTHORITY_AUTHORITY_H

#include "config.h"
#include "domain.h"
#include "log.h"

struct db;
struct event;
struct event_base;
struct faildelay;
struct login;
struct pam_client;
struct server;

struct authority {
	struct config *cfg;          /* owned: validated configuration */
	struct log log;              /* where diagnostics go (stderr) */
	struct domain_set *domains;  /* owned: served domains, keys, documents */
	struct event_base *base;     /* owned: the one event loop (never blocks) */
	struct server *server;       /* owned: the HTTP listener */
	struct server *demo_rp;      /* owned: the demo relying party (--demo only) */
	int demo;                    /* 1 when started with --demo */
	struct db *db;               /* owned: sessions, throttle, audit trail */
	struct pam_client *pam;      /* owned: sign-in through vep-pam-helper */
	struct faildelay *faildelay; /* owned: when failed sign-ins are answered */
	struct login *logins;        /* sign-ins waiting for PAM or their delay
	                              * (h_session.c's list; ended at shutdown) */
	struct event *housekeeping;  /* owned: purges dead sessions and windows */
	/* Each member is created in main.c after the configuration and freed
	 * in reverse. */
};

#endif
