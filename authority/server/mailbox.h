/*
 * server/mailbox.h - a loop's mailbox: work another loop's thread asks this
 * loop to do (a sign-in's answer reaching the loop whose PAM helper holds
 * the conversation, and the result going back to the loop that holds the
 * request). libevent's bases are thread-safe here (evthread_use_pthreads),
 * so posting is a locked queue and an event_active.
 *
 * Lifetime: the authority owns every mailbox and frees them after every
 * loop is gone (mailbox_free), so posting is memory-safe whatever loop is
 * shutting down. A loop detaches its mailbox before its base goes
 * (mailbox_detach): posts then fail, and what was queued runs at once with
 * cancelled = 1, when it must only free what it owns (its peer loop may be
 * gone too).
 */
#ifndef AUTHORITY_SERVER_MAILBOX_H
#define AUTHORITY_SERVER_MAILBOX_H

struct event_base;
struct mailbox;

/* Runs in the mailbox's loop (cancelled 0), or at detach (cancelled 1). */
typedef void (*mailbox_fn)(void *arg, int cancelled);

/* A mailbox whose work runs on base. Returns 0 or VEP_ERR_NOMEM. */
int mailbox_new(struct event_base *base, struct mailbox **out);

/* From any thread: fn(arg, 0) will run in the mailbox's loop. Returns 0,
 * or VEP_ERR_NOMEM / SRV_ERR_CANCELED (detached), and then fn is never
 * called. */
int mailbox_post(struct mailbox *mb, mailbox_fn fn, void *arg);

/* In the mailbox's loop, before its base is freed: no more posts; what is
 * queued runs with cancelled = 1. NULL-safe. */
void mailbox_detach(struct mailbox *mb);

/* After every loop is gone. NULL-safe. */
void mailbox_free(struct mailbox *mb);

#endif
