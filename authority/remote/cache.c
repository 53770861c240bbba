/*
 * remote/cache.c - a small shared table of fetched support documents (see
 * remote/cache.h).
 */
#include "remote/cache.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "email.h"

struct entry {
	char host[VEP_DOMAIN_MAX + 1];  /* "" when free */
	char *text;                     /* owned */
	size_t len;
	int64_t expires_ms;
};

struct remote_cache {
	pthread_mutex_t lock;
	struct entry v[REMOTE_CACHE_ENTRIES];
};

struct remote_cache *
remote_cache_new(void)
{
	struct remote_cache *c = calloc(1, sizeof *c);

	if (c != NULL && pthread_mutex_init(&c->lock, NULL) != 0) {
		free(c);
		c = NULL;
	}
	return c;
}

static void
entry_clear(struct entry *e)
{
	free(e->text);
	memset(e, 0, sizeof *e);
}

/* host's entry, or NULL. Called locked. */
static struct entry *
find(struct remote_cache *c, const char *host)
{
	size_t i;

	for (i = 0; i < REMOTE_CACHE_ENTRIES; i++)
		if (c->v[i].host[0] != '\0' && strcasecmp(c->v[i].host, host) == 0)
			return &c->v[i];
	return NULL;
}

int
remote_cache_get(struct remote_cache *c, const char *host, int64_t now_ms, char **text,
    size_t *len)
{
	struct entry *e;
	int found = 0;

	*text = NULL;
	*len = 0;
	pthread_mutex_lock(&c->lock);
	if ((e = find(c, host)) != NULL && e->expires_ms <= now_ms)
		entry_clear(e);
	else if (e != NULL && (*text = malloc(e->len + 1)) != NULL) {
		memcpy(*text, e->text, e->len + 1);
		*len = e->len;
		found = 1;
	}
	pthread_mutex_unlock(&c->lock);
	return found;
}

/* A free entry, else the one that expires first. Called locked. */
static struct entry *
room(struct remote_cache *c)
{
	struct entry *soonest = &c->v[0];
	size_t i;

	for (i = 0; i < REMOTE_CACHE_ENTRIES; i++) {
		if (c->v[i].host[0] == '\0')
			return &c->v[i];
		if (c->v[i].expires_ms < soonest->expires_ms)
			soonest = &c->v[i];
	}
	return soonest;
}

void
remote_cache_put(struct remote_cache *c, const char *host, const char *text, size_t len,
    int64_t expires_ms)
{
	struct entry *slot;
	size_t hlen = strlen(host);
	char *copy;

	if (hlen > VEP_DOMAIN_MAX || (copy = malloc(len + 1)) == NULL)
		return;
	memcpy(copy, text, len);
	copy[len] = '\0';
	pthread_mutex_lock(&c->lock);
	if ((slot = find(c, host)) == NULL)
		slot = room(c);
	entry_clear(slot);
	memcpy(slot->host, host, hlen + 1);
	slot->text = copy;
	slot->len = len;
	slot->expires_ms = expires_ms;
	pthread_mutex_unlock(&c->lock);
}

void
remote_cache_free(struct remote_cache *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < REMOTE_CACHE_ENTRIES; i++)
		entry_clear(&c->v[i]);
	pthread_mutex_destroy(&c->lock);
	free(c);
}
