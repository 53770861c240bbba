/*
 * edge/proxy.h - which reverse proxies are trusted to name the client
 * (trusted_proxies), and the client address of a request that came
 * through them (X-Forwarded-For).
 *
 * The client is the peer unless the peer is trusted. Then the
 * X-Forwarded-For list is read from the right (the nearest proxy's entry
 * last): trusted entries are skipped, and the first untrusted one is the
 * client. An entry that is not a plain IPv4 or IPv6 address ends the walk:
 * the client is the hop that reported it, since nothing further left can be
 * believed. A list of only trusted entries names its leftmost. Clients
 * never choose their own address by sending the header: only what a
 * trusted proxy appended counts.
 *
 * Must never: resolve names, or accept ports, brackets or anything but an
 * address in an entry.
 */
#ifndef AUTHORITY_EDGE_PROXY_H
#define AUTHORITY_EDGE_PROXY_H

#include <stddef.h>
#include <stdint.h>

/* Most entries in trusted_proxies. */
#define PROXY_LIST_MAX 64
/* Most X-Forwarded-For entries read (from the right) per request. */
#define PROXY_HOPS_MAX 16
/* Longest X-Forwarded-For value read, in bytes; more is ignored (the
 * peer stays the client). */
#define PROXY_XFF_MAX 2048

struct proxy_list;

/* Parses "ADDR[/PREFIX]" entries separated by spaces or commas (IPv4 or
 * IPv6; an address without prefix is one host; host bits under the prefix
 * must be zero). Returns 0 with *out (proxy_list_free), or VEP_ERR_INVALID
 * / VEP_ERR_TOOBIG with a reason in why, or VEP_ERR_NOMEM. */
int proxy_list_parse(const char *text, struct proxy_list **out, char *why, size_t whylen);

/* 1 when addr (text, as inet_ntop writes it) is in the list. */
int proxy_list_has(const struct proxy_list *l, const char *addr);

/* Writes the client address of a request from peer (text) carrying the
 * joined X-Forwarded-For values xff (NULL when absent) into out (outlen
 * bytes, at least 46). l may be NULL (no proxy trusted). */
void proxy_client_addr(const struct proxy_list *l, const char *peer, const char *xff,
    char *out, size_t outlen);

void proxy_list_free(struct proxy_list *l);

#endif
