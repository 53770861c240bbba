/*
 * edge/proxy.c - trusted proxies and X-Forwarded-For (contract in edge/proxy.h).
 */
#include "edge/proxy.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "err.h"

struct proxy_net {
	int family;          /* AF_INET or AF_INET6 */
	uint8_t addr[16];
	unsigned prefix;     /* bits */
};

struct proxy_list {
	struct proxy_net v[PROXY_LIST_MAX];
	size_t n;
};

/* Parses a plain address of len bytes. Returns 0 or VEP_ERR_INVALID. */
static int
parse_addr(const char *s, size_t len, int *family, uint8_t addr[16])
{
	char buf[INET6_ADDRSTRLEN];

	if (len == 0 || len >= sizeof(buf))
		return VEP_ERR_INVALID;
	memcpy(buf, s, len);
	buf[len] = '\0';
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, buf, addr) == 1) {
		*family = AF_INET;
		return VEP_OK;
	}
	if (inet_pton(AF_INET6, buf, addr) == 1) {
		*family = AF_INET6;
		return VEP_OK;
	}
	return VEP_ERR_INVALID;
}

/* 1 when the first bits of a and b agree. */
static int
prefix_match(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned whole = bits / 8, rest = bits % 8;

	if (memcmp(a, b, whole) != 0)
		return 0;
	return rest == 0 || ((a[whole] ^ b[whole]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static int
parse_entry(const char *s, size_t len, struct proxy_net *n, char *why, size_t whylen)
{
	const char *slash = memchr(s, '/', len);
	size_t alen = slash != NULL ? (size_t)(slash - s) : len;
	unsigned max, prefix;
	char *end, num[4];

	if (parse_addr(s, alen, &n->family, n->addr) != 0) {
		snprintf(why, whylen, "'%.*s' is not an IPv4 or IPv6 address", (int)alen > 64 ? 64 :
		    (int)alen, s);
		return VEP_ERR_INVALID;
	}
	max = n->family == AF_INET ? 32 : 128;
	prefix = max;
	if (slash != NULL) {
		size_t plen = len - alen - 1;
		if (plen == 0 || plen > 3 || slash[1] < '0' || slash[1] > '9') {
			snprintf(why, whylen, "bad prefix length in '%.*s'", (int)len > 64 ? 64 :
			    (int)len, s);
			return VEP_ERR_INVALID;
		}
		memcpy(num, slash + 1, plen);
		num[plen] = '\0';
		prefix = (unsigned)strtoul(num, &end, 10);
		if (*end != '\0' || prefix > max) {
			snprintf(why, whylen, "bad prefix length in '%.*s'", (int)len > 64 ? 64 :
			    (int)len, s);
			return VEP_ERR_INVALID;
		}
	}
	/* Bits below the prefix set would make 10.0.0.1/8 mean 10.0.0.0/8:
	 * say so rather than guess what was meant. */
	{
		uint8_t masked[16];
		unsigned i;

		memcpy(masked, n->addr, 16);
		for (i = prefix; i < max; i++)
			masked[i / 8] &= (uint8_t)(~(0x80u >> (i % 8)));
		if (memcmp(masked, n->addr, 16) != 0) {
			snprintf(why, whylen, "'%.*s' has host bits set below the prefix",
			    (int)len > 64 ? 64 : (int)len, s);
			return VEP_ERR_INVALID;
		}
	}
	n->prefix = prefix;
	return VEP_OK;
}

int
proxy_list_parse(const char *text, struct proxy_list **out, char *why, size_t whylen)
{
	struct proxy_list *l;
	const char *p = text;
	size_t len;
	int rc;

	*out = NULL;
	if ((l = calloc(1, sizeof(*l))) == NULL) {
		snprintf(why, whylen, "out of memory");
		return VEP_ERR_NOMEM;
	}
	for (;;) {
		p += strspn(p, " \t,");
		if (*p == '\0')
			break;
		len = strcspn(p, " \t,");
		if (l->n == PROXY_LIST_MAX) {
			snprintf(why, whylen, "more than %d entries", PROXY_LIST_MAX);
			proxy_list_free(l);
			return VEP_ERR_TOOBIG;
		}
		if ((rc = parse_entry(p, len, &l->v[l->n], why, whylen)) != 0) {
			proxy_list_free(l);
			return rc;
		}
		l->n++;
		p += len;
	}
	if (l->n == 0) {
		snprintf(why, whylen, "must list at least one address");
		proxy_list_free(l);
		return VEP_ERR_INVALID;
	}
	*out = l;
	return VEP_OK;
}

static int
has(const struct proxy_list *l, int family, const uint8_t addr[16])
{
	size_t i;

	for (i = 0; l != NULL && i < l->n; i++)
		if (l->v[i].family == family && prefix_match(l->v[i].addr, addr, l->v[i].prefix))
			return 1;
	return 0;
}

int
proxy_list_has(const struct proxy_list *l, const char *addr)
{
	uint8_t a[16];
	int family;

	return addr != NULL && parse_addr(addr, strlen(addr), &family, a) == 0 &&
	    has(l, family, a);
}

/* s into out (outlen bytes, outlen > 0), cut to fit as snprintf would:
 * every request's address goes through here. */
static void
copy_text(char *out, size_t outlen, const char *s)
{
	size_t n = strlen(s);

	if (n >= outlen)
		n = outlen - 1;
	memcpy(out, s, n);
	out[n] = '\0';
}

void
proxy_client_addr(const struct proxy_list *l, const char *peer, const char *xff, char *out,
    size_t outlen)
{
	const char *end, *start;
	char buf[INET6_ADDRSTRLEN];
	uint8_t a[16];
	size_t len, hops;
	int family;

	copy_text(out, outlen, peer);
	if (xff == NULL || !proxy_list_has(l, peer) || strlen(xff) > PROXY_XFF_MAX)
		return;
	end = xff + strlen(xff);
	for (hops = 0; hops < PROXY_HOPS_MAX; hops++) {
		start = end;
		while (start > xff && start[-1] != ',')
			start--;
		len = (size_t)(end - start);
		while (len > 0 && (*start == ' ' || *start == '\t')) {
			start++;
			len--;
		}
		while (len > 0 && (start[len - 1] == ' ' || start[len - 1] == '\t'))
			len--;
		/* Not an address: the hop to its right (in out) said so, and
		 * is as far as anything can be believed. */
		if (parse_addr(start, len, &family, a) != 0 ||
		    inet_ntop(family, a, buf, sizeof(buf)) == NULL)
			return;
		copy_text(out, outlen, buf);
		if (!has(l, family, a))
			return;
		while (start > xff && start[-1] != ',')
			start--;
		if (start == xff)
			return;          /* every hop trusted: the leftmost */
		end = start - 1;     /* before the comma */
	}
}

void
proxy_list_free(struct proxy_list *l)
{
	free(l);
}
