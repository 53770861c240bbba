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

struct event_base;
struct server;

struct authority {
	struct config *cfg;          /* owned: validated configuration */
	struct log log;              /* where diagnostics go (stderr) */
	struct domain_set *domains;  /* owned: served domains, keys, documents */
	struct event_base *base;     /* owned: the one event loop (never blocks) */
	struct server *server;       /* owned: the HTTP listener */
	int demo;                    /* 1 when started with --demo */
	/* Later work adds its members here (database, PAM client, ...), each
	 * created in main.c after the configuration and freed in reverse. */
};

#endif
