/*
 * remote/addr.h - which addresses the remote verifier may connect to.
 *
 * A support document URL names a host the assertion's sender chose, so a
 * verifier that fetched whatever the name resolves to could be pointed at
 * the authority's own network (a server-side request forgery): loopback,
 * private and shared ranges, link-local (cloud metadata services live at
 * 169.254.169.254), multicast, reserved and documentation ranges. Only
 * global unicast addresses are reached, unless the administrator lists an
 * address or prefix in verify_remote_allow. The name is resolved once and
 * the connection made to the address that was checked, so a second lookup
 * (DNS rebinding) cannot change where it goes.
 *
 * Pure but for remote_addr_resolve's getaddrinfo; thread-safe.
 */
#ifndef AUTHORITY_REMOTE_ADDR_H
#define AUTHORITY_REMOTE_ADDR_H

#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>

struct proxy_list;

/* 1 when sa (AF_INET or AF_INET6) is a global unicast address, else 0. An
 * IPv4-mapped IPv6 address is judged as its IPv4 address. */
int remote_addr_public(const struct sockaddr *sa);

/* 1 when addr (IP text) may be connected to: public, or in allow (may be
 * NULL). 0 for anything else, text that is no address included. */
int remote_addr_allowed(const char *addr, const struct proxy_list *allow);

/* Resolves host and writes the first address it may connect to (IP text)
 * into out. Returns 0; VEP_ERR_IO when the name does not resolve;
 * VEP_ERR_PERM when it resolves only to addresses not allowed. why gets a
 * short reason. */
int remote_addr_resolve(const char *host, const struct proxy_list *allow,
    char out[INET6_ADDRSTRLEN], char *why, size_t whylen);

#endif
