/*
 * server/shared.c - the shared domain set's end (contract in
 * server/shared.h).
 */
#include "server/shared.h"

#include <event2/event.h>

#include "err.h"

void
authority_domains_ack(struct authority *a)
{
	atomic_fetch_add(&a->acks, 1);
}

void
authority_domains_free(struct authority *a)
{
	if (a->retire_timer != NULL)
		event_free(a->retire_timer);
	a->retire_timer = NULL;
	domain_set_free(a->retiring);
	a->retiring = NULL;
	domain_set_free(atomic_exchange(&a->domains, NULL));
}
