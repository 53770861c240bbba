/*
 * remote/cache.h - support documents of other domains, kept as long as
 * their Cache-Control max-age says (at most a day, remote/fetch.h), shared
 * by every event loop's remote verifications.
 *
 * A fixed number of entries (REMOTE_CACHE_ENTRIES): when full, the entry
 * that expires first makes room. A document without max-age (or with
 * no-store, no-cache) is not kept: the next verification fetches it again.
 * Thread-safe (one mutex, held only to copy text in or out).
 */
#ifndef AUTHORITY_REMOTE_CACHE_H
#define AUTHORITY_REMOTE_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define REMOTE_CACHE_ENTRIES 256

struct remote_cache;

/* Returns a new, empty cache, or NULL. */
struct remote_cache *remote_cache_new(void);

/* The document of host (lowercase) still fresh at now_ms: 1 with *text
 * (new, free()) and *len, 0 when there is none. */
int remote_cache_get(struct remote_cache *c, const char *host, int64_t now_ms, char **text,
    size_t *len);

/* Keeps len bytes of text for host until expires_ms (copied; a failure to
 * keep it is not an error: the next verification fetches again). */
void remote_cache_put(struct remote_cache *c, const char *host, const char *text, size_t len,
    int64_t expires_ms);

void remote_cache_free(struct remote_cache *c);

#endif
