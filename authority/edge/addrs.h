/*
 * edge/addrs.h - open connections per client address, over every loop.
 *
 * Promises: a client is an IPv4 address or an IPv6 /64 (one site; an
 * IPv4-mapped IPv6 address is its IPv4 address); at most cap connections
 * are counted for each; the table is safe to share between loops (locked
 * inside) and its bucket choice is seeded at random, so a client cannot
 * aim its addresses at one bucket.
 */
#ifndef AUTHORITY_EDGE_ADDRS_H
#define AUTHORITY_EDGE_ADDRS_H

#include <stddef.h>

struct sockaddr;

/* Buckets of the table at start (it doubles as it fills). */
#define ADDRS_BUCKETS_MIN 256

/* Bytes of a client's key: a family byte, then the IPv4 address or the
 * IPv6 /64 (the rest zero). */
#define ADDRS_KEY_BYTES 17

struct addrs;

/* A table of at most cap (>= 1) connections per client. Returns 0,
 * VEP_ERR_INVALID (cap 0) or VEP_ERR_NOMEM. */
int addrs_new(size_t cap, struct addrs **out);

/* Frees a table nothing counts in any more. NULL-safe. */
void addrs_free(struct addrs *t);

/* The client of sa as a key and as text (inet_ntop's, textlen bytes).
 * Returns 0, or -1 for a family other than IPv4 and IPv6. */
int addrs_key(const struct sockaddr *sa, unsigned char key[ADDRS_KEY_BYTES], char *text,
    size_t textlen);

/* Counts one more connection of key. Returns 0, VEP_ERR_TOOBIG when the
 * client is at the cap (nothing counted), or VEP_ERR_NOMEM. */
int addrs_take(struct addrs *t, const unsigned char key[ADDRS_KEY_BYTES]);

/* One connection of key (counted by addrs_take) closed. */
void addrs_release(struct addrs *t, const unsigned char key[ADDRS_KEY_BYTES]);

#endif
