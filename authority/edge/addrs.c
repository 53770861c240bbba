/*
 * edge/addrs.c - the per-address connection table (see edge/addrs.h): a
 * hash table of counts under one mutex, entries freed at zero.
 */
#include "edge/addrs.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <openssl/rand.h>

#include "err.h"

/* Bytes of an IPv6 prefix counted as one client (a /64: one site). */
#define ADDRS_V6_PREFIX_BYTES 8

/* One client's open connections. */
struct addr_entry {
	unsigned char key[ADDRS_KEY_BYTES];
	size_t count;
	struct addr_entry *next;
};

struct addrs {
	pthread_mutex_t lock;
	size_t cap;               /* connections per client */
	struct addr_entry **buckets;
	size_t nbuckets;          /* a power of two */
	size_t n;                 /* clients with open connections */
	uint64_t seed;            /* random: bucket choice is not the client's */
};

/* The bucket of key (seeded FNV-1a, then mixed). */
static size_t
bucket(const struct addrs *t, const unsigned char *key)
{
	uint64_t h = 14695981039346656037ULL ^ t->seed;

	for (size_t i = 0; i < ADDRS_KEY_BYTES; i++)
		h = (h ^ key[i]) * 1099511628211ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return (size_t)h & (t->nbuckets - 1);
}

/* Doubles the buckets (under the lock); on allocation failure the table
 * just stays fuller. */
static void
grow(struct addrs *t)
{
	size_t n = t->nbuckets * 2, old = t->nbuckets;
	struct addr_entry **b = calloc(n, sizeof(*b)), **ob = t->buckets, *e, *next;

	if (b == NULL)
		return;
	t->buckets = b;
	t->nbuckets = n;
	for (size_t i = 0; i < old; i++) {
		for (e = ob[i]; e != NULL; e = next) {
			size_t h = bucket(t, e->key);
			next = e->next;
			e->next = b[h];
			b[h] = e;
		}
	}
	free(ob);
}

int
addrs_new(size_t cap, struct addrs **out)
{
	struct addrs *t;

	*out = NULL;
	if (cap == 0)
		return VEP_ERR_INVALID;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return VEP_ERR_NOMEM;
	t->cap = cap;
	t->nbuckets = ADDRS_BUCKETS_MIN;
	if ((t->buckets = calloc(t->nbuckets, sizeof(*t->buckets))) == NULL ||
	    pthread_mutex_init(&t->lock, NULL) != 0) {
		free(t->buckets);
		free(t);
		return VEP_ERR_NOMEM;
	}
	/* Without randomness the seed is only less secret, not wrong. */
	if (RAND_bytes((unsigned char *)&t->seed, sizeof(t->seed)) != 1)
		t->seed = (uint64_t)time(NULL);
	*out = t;
	return VEP_OK;
}

void
addrs_free(struct addrs *t)
{
	struct addr_entry *e, *next;

	if (t == NULL)
		return;
	for (size_t i = 0; i < t->nbuckets; i++) {
		for (e = t->buckets[i]; e != NULL; e = next) {
			next = e->next;
			free(e);
		}
	}
	free(t->buckets);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

int
addrs_key(const struct sockaddr *sa, unsigned char key[ADDRS_KEY_BYTES], char *text,
    size_t textlen)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)(const void *)sa;
	const struct sockaddr_in *s4 = (const struct sockaddr_in *)(const void *)sa;

	memset(key, 0, ADDRS_KEY_BYTES);
	if (sa->sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		key[0] = 4;
		memcpy(key + 1, s6->sin6_addr.s6_addr + 12, 4);
		return inet_ntop(AF_INET, key + 1, text, (socklen_t)textlen) != NULL ? 0 : -1;
	}
	if (sa->sa_family == AF_INET6) {
		key[0] = 6;
		memcpy(key + 1, s6->sin6_addr.s6_addr, ADDRS_V6_PREFIX_BYTES);
		return inet_ntop(AF_INET6, &s6->sin6_addr, text, (socklen_t)textlen) != NULL ?
		    0 : -1;
	}
	if (sa->sa_family == AF_INET) {
		key[0] = 4;
		memcpy(key + 1, &s4->sin_addr, 4);
		return inet_ntop(AF_INET, &s4->sin_addr, text, (socklen_t)textlen) != NULL ? 0 : -1;
	}
	return -1;
}

int
addrs_take(struct addrs *t, const unsigned char key[ADDRS_KEY_BYTES])
{
	struct addr_entry *e;
	size_t h;
	int rc = VEP_OK;

	pthread_mutex_lock(&t->lock);
	h = bucket(t, key);
	for (e = t->buckets[h]; e != NULL; e = e->next)
		if (memcmp(e->key, key, ADDRS_KEY_BYTES) == 0)
			break;
	if (e == NULL) {
		if ((e = calloc(1, sizeof(*e))) == NULL) {
			rc = VEP_ERR_NOMEM;
			goto out;
		}
		memcpy(e->key, key, ADDRS_KEY_BYTES);
		e->next = t->buckets[h];
		t->buckets[h] = e;
		if (++t->n > t->nbuckets)
			grow(t);
	}
	if (e->count >= t->cap)
		rc = VEP_ERR_TOOBIG;
	else
		e->count++;
out:
	pthread_mutex_unlock(&t->lock);
	return rc;
}

void
addrs_release(struct addrs *t, const unsigned char key[ADDRS_KEY_BYTES])
{
	struct addr_entry **pp, *e;

	pthread_mutex_lock(&t->lock);
	for (pp = &t->buckets[bucket(t, key)]; (e = *pp) != NULL; pp = &e->next) {
		if (memcmp(e->key, key, ADDRS_KEY_BYTES) != 0)
			continue;
		if (e->count > 0)
			e->count--;
		if (e->count == 0) {
			*pp = e->next;
			free(e);
			t->n--;
		}
		break;
	}
	pthread_mutex_unlock(&t->lock);
}
