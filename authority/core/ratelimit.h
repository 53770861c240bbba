/*
 * core/ratelimit.h - requests per client: a token bucket per key (a client
 * address's counting form, auth/throttle_key.h), shared by every event loop.
 *
 * A key may spend burst requests at once and then rate per second. The
 * table has a fixed number of buckets (RATELIMIT_SLOTS), so memory never
 * grows with the number of clients: when a key finds neither its bucket nor
 * a free one among the few it may use, it takes the one used longest ago
 * (that client then starts again with a full bucket, which only ever errs on
 * the side of serving). Rate and burst are passed on every call, so a reload
 * that changes them applies at once.
 *
 * Thread-safe (one mutex; a call is a few dozen instructions).
 */
#ifndef AUTHORITY_CORE_RATELIMIT_H
#define AUTHORITY_CORE_RATELIMIT_H

#include <stdint.h>

/* Buckets in a table, and how many of them one key may use. */
#define RATELIMIT_SLOTS 4096
#define RATELIMIT_PROBE 8
/* Longest key kept (bytes, with the NUL); longer keys are cut. */
#define RATELIMIT_KEY_BUFSZ 64

struct ratelimit;

/* Returns a new, empty table, or NULL on allocation failure. */
struct ratelimit *ratelimit_new(void);

/* Takes one request for key at now_ms (a monotonic clock) from its bucket
 * of burst requests refilled at rate per second (both >= 1). Returns 0 when
 * the request may go ahead, else the whole seconds (>= 1) until one may:
 * the Retry-After to answer with. */
long ratelimit_take(struct ratelimit *rl, const char *key, long rate, long burst,
    int64_t now_ms);

void ratelimit_free(struct ratelimit *rl);

#endif
