/*
 * core/ratelimit.c - a fixed table of token buckets (see core/ratelimit.h).
 */
#include "core/ratelimit.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct bucket {
	char key[RATELIMIT_KEY_BUFSZ];  /* "" when free */
	double tokens;
	int64_t last_ms;                /* when tokens was last brought up to date */
};

struct ratelimit {
	pthread_mutex_t lock;
	struct bucket slots[RATELIMIT_SLOTS];
};

struct ratelimit *
ratelimit_new(void)
{
	struct ratelimit *rl = calloc(1, sizeof *rl);

	if (rl == NULL)
		return NULL;
	if (pthread_mutex_init(&rl->lock, NULL) != 0) {
		free(rl);
		return NULL;
	}
	return rl;
}

/* FNV-1a: spreads addresses over the table; the keys are not secret and a
 * client choosing colliding addresses only shares its own buckets. */
static uint32_t
key_hash(const char *key)
{
	uint32_t h = 2166136261u;

	for (; *key != '\0'; key++)
		h = (h ^ (unsigned char)*key) * 16777619u;
	return h;
}

/* key's bucket, or the one it takes over (reset to full). */
static struct bucket *
bucket_for(struct ratelimit *rl, const char *key, long burst, int64_t now_ms)
{
	uint32_t h = key_hash(key);
	struct bucket *b, *victim = NULL;
	size_t i;

	for (i = 0; i < RATELIMIT_PROBE; i++) {
		b = &rl->slots[(h + i) % RATELIMIT_SLOTS];
		if (b->key[0] != '\0' && strcmp(b->key, key) == 0)
			return b;
		if (victim == NULL || b->key[0] == '\0' ||
		    (victim->key[0] != '\0' && b->last_ms < victim->last_ms))
			victim = b;
	}
	/* key fits: ratelimit_take cut it to RATELIMIT_KEY_BUFSZ. */
	snprintf(victim->key, sizeof victim->key, "%s", key);
	victim->tokens = (double)burst;
	victim->last_ms = now_ms;
	return victim;
}

long
ratelimit_take(struct ratelimit *rl, const char *key, long rate, long burst, int64_t now_ms)
{
	struct bucket *b;
	char k[RATELIMIT_KEY_BUFSZ];
	long wait = 0;

	if (rate < 1)
		rate = 1;
	if (burst < 1)
		burst = 1;
	/* An empty key would read as a free bucket. */
	snprintf(k, sizeof k, "%s", key != NULL && key[0] != '\0' ? key : "-");
	pthread_mutex_lock(&rl->lock);
	b = bucket_for(rl, k, burst, now_ms);
	if (now_ms > b->last_ms) {
		b->tokens += (double)(now_ms - b->last_ms) * (double)rate / 1000.0;
		b->last_ms = now_ms;
	}
	if (b->tokens > (double)burst)
		b->tokens = (double)burst;
	if (b->tokens >= 1.0) {
		b->tokens -= 1.0;
	} else {
		/* Whole seconds until a token is back, rounded up. */
		wait = ((long)((1.0 - b->tokens) * 1000.0 / (double)rate) + 999) / 1000;
		if (wait < 1)
			wait = 1;
	}
	pthread_mutex_unlock(&rl->lock);
	return wait;
}

void
ratelimit_free(struct ratelimit *rl)
{
	if (rl == NULL)
		return;
	pthread_mutex_destroy(&rl->lock);
	free(rl);
}
