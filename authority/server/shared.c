/*
 * server/shared.c - replacing the shared domain set without locks (contract in
 * server/shared.h).
 */
#include "server/shared.h"

#include <event2/event.h>

#include "err.h"
#include "core/log.h"
#include "server/loop.h"

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
authority_domains_swap(struct authority *a, struct domain_set *next)
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
