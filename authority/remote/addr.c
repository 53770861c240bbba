/*
 * remote/addr.c - the address policy of remote verification (see
 * remote/addr.h).
 */
#include "remote/addr.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "edge/proxy.h"
#include "err.h"

/* IPv4 ranges that are not global unicast (RFC 6890 and successors). */
static const struct {
	uint32_t net;
	unsigned bits;
} v4_denied[] = {
	{ 0x00000000, 8 },   /* "this network" */
	{ 0x0a000000, 8 },   /* private */
	{ 0x64400000, 10 },  /* shared address space (carrier-grade NAT) */
	{ 0x7f000000, 8 },   /* loopback */
	{ 0xa9fe0000, 16 },  /* link-local (cloud metadata) */
	{ 0xac100000, 12 },  /* private */
	{ 0xc0000000, 24 },  /* IETF protocol assignments */
	{ 0xc0000200, 24 },  /* documentation */
	{ 0xc0a80000, 16 },  /* private */
	{ 0xc6120000, 15 },  /* benchmarking */
	{ 0xc6336400, 24 },  /* documentation */
	{ 0xcb007100, 24 },  /* documentation */
	{ 0xe0000000, 4 },   /* multicast */
	{ 0xf0000000, 4 },   /* reserved, broadcast */
};

static int
v4_public(uint32_t a)
{
	size_t i;

	for (i = 0; i < sizeof v4_denied / sizeof v4_denied[0]; i++) {
		uint32_t mask = 0xffffffffu << (32 - v4_denied[i].bits);
		if ((a & mask) == v4_denied[i].net)
			return 0;
	}
	return 1;
}

static int
v6_public(const struct in6_addr *a)
{
	const uint8_t *b = a->s6_addr;
	uint32_t v4;

	if (IN6_IS_ADDR_V4MAPPED(a)) {
		memcpy(&v4, b + 12, 4);
		return v4_public(ntohl(v4));
	}
	/* Global unicast is 2000::/3; within it, documentation (2001:db8::/32)
	 * and the mapped or translated forms that reach IPv4 by another way
	 * (6to4 2002::/16, Teredo 2001::/32, NAT64 64:ff9b::/96 is outside
	 * 2000::/3 already) are refused too. Everything else (loopback,
	 * unspecified, link-local fe80::/10, unique local fc00::/7, multicast
	 * ff00::/8) is outside 2000::/3. */
	if ((b[0] & 0xe0) != 0x20)
		return 0;
	if (b[0] == 0x20 && b[1] == 0x01 && ((b[2] == 0x0d && b[3] == 0xb8) ||
	    (b[2] == 0x00 && b[3] == 0x00)))
		return 0;
	if (b[0] == 0x20 && b[1] == 0x02)
		return 0;
	return 1;
}

int
remote_addr_public(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return v4_public(ntohl(
			    ((const struct sockaddr_in *)(const void *)sa)->sin_addr.s_addr));
	if (sa->sa_family == AF_INET6)
		return v6_public(&((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr);
	return 0;
}

int
remote_addr_allowed(const char *addr, const struct proxy_list *allow)
{
	struct sockaddr_in6 s6;
	struct sockaddr_in s4;

	memset(&s4, 0, sizeof s4);
	memset(&s6, 0, sizeof s6);
	if (inet_pton(AF_INET, addr, &s4.sin_addr) == 1)
		s4.sin_family = AF_INET;
	else if (inet_pton(AF_INET6, addr, &s6.sin6_addr) == 1)
		s6.sin6_family = AF_INET6;
	else
		return 0;
	if (allow != NULL && proxy_list_has(allow, addr))
		return 1;
	return remote_addr_public(s4.sin_family == AF_INET ? (const struct sockaddr *)&s4
	    : (const struct sockaddr *)&s6);
}

int
remote_addr_resolve(const char *host, const struct proxy_list *allow,
    char out[INET6_ADDRSTRLEN], char *why, size_t whylen)
{
	struct addrinfo hints, *res = NULL, *ai;
	char text[INET6_ADDRSTRLEN];
	const void *src;
	int rc, seen = 0;

	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, "443", &hints, &res)) != 0) {
		snprintf(why, whylen, "cannot resolve %s: %s", host, gai_strerror(rc));
		return VEP_ERR_IO;
	}
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		if (ai->ai_family == AF_INET)
			src = &((const struct sockaddr_in *)(const void *)ai->ai_addr)->sin_addr;
		else if (ai->ai_family == AF_INET6)
			src = &((const struct sockaddr_in6 *)(const void *)ai->ai_addr)->sin6_addr;
		else
			continue;
		if (inet_ntop(ai->ai_family, src, text, sizeof text) == NULL)
			continue;
		seen++;
		if (remote_addr_allowed(text, allow)) {
			memcpy(out, text, sizeof text);
			freeaddrinfo(res);
			return 0;
		}
	}
	freeaddrinfo(res);
	snprintf(why, whylen, seen ? "%s resolves only to addresses not allowed (private, "
	    "loopback, link-local...; see verify_remote_allow)" : "cannot resolve %s", host);
	return seen ? VEP_ERR_PERM : VEP_ERR_IO;
}
