/*
 * server/mailbox.c - work one loop posts to another (contract in
 * server/mailbox.h).
 */
#include "server/mailbox.h"

#include <pthread.h>
#include <stdlib.h>

#include <event2/event.h>

#include "core/errors.h"
#include "err.h"

struct letter {
	struct letter *next;
	mailbox_fn fn;
	void *arg;
};

struct mailbox {
	pthread_mutex_t mu;
	struct letter *head, **tail; /* under mu */
	int detached;                /* under mu */
	struct event *wake;          /* on the loop's base; NULL once detached */
};

/* Takes the whole queue (the caller holds mu). */
static struct letter *
take_all(struct mailbox *mb)
{
	struct letter *all = mb->head;

	mb->head = NULL;
	mb->tail = &mb->head;
	return all;
}

static void
deliver(struct letter *l, int cancelled)
{
	while (l != NULL) {
		struct letter *next = l->next;

		l->fn(l->arg, cancelled);
		free(l);
		l = next;
	}
}

static void
on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct mailbox *mb = arg;
	struct letter *all;

	(void)fd;
	(void)what;
	pthread_mutex_lock(&mb->mu);
	all = take_all(mb);
	pthread_mutex_unlock(&mb->mu);
	deliver(all, 0);
}

int
mailbox_new(struct event_base *base, struct mailbox **out)
{
	struct mailbox *mb;

	*out = NULL;
	if ((mb = calloc(1, sizeof(*mb))) == NULL)
		return VEP_ERR_NOMEM;
	pthread_mutex_init(&mb->mu, NULL);
	mb->tail = &mb->head;
	if ((mb->wake = event_new(base, -1, 0, on_wake, mb)) == NULL) {
		mailbox_free(mb);
		return VEP_ERR_NOMEM;
	}
	*out = mb;
	return VEP_OK;
}

int
mailbox_post(struct mailbox *mb, mailbox_fn fn, void *arg)
{
	struct letter *l;
	int rc = VEP_OK;

	if ((l = calloc(1, sizeof(*l))) == NULL)
		return VEP_ERR_NOMEM;
	l->fn = fn;
	l->arg = arg;
	pthread_mutex_lock(&mb->mu);
	if (mb->detached) {
		rc = SRV_ERR_CANCELED;
	} else {
		*mb->tail = l;
		mb->tail = &l->next;
		l = NULL;
		event_active(mb->wake, EV_TIMEOUT, 0);
	}
	pthread_mutex_unlock(&mb->mu);
	free(l);
	return rc;
}

void
mailbox_detach(struct mailbox *mb)
{
	struct letter *all;

	if (mb == NULL)
		return;
	pthread_mutex_lock(&mb->mu);
	mb->detached = 1;
	all = take_all(mb);
	if (mb->wake != NULL)
		event_free(mb->wake);
	mb->wake = NULL;
	pthread_mutex_unlock(&mb->mu);
	deliver(all, 1);
}

void
mailbox_free(struct mailbox *mb)
{
	if (mb == NULL)
		return;
	mailbox_detach(mb);
	pthread_mutex_destroy(&mb->mu);
	free(mb);
}
