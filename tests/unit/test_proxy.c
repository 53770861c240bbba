/*
 * test_proxy.c - trusted proxies and X-Forwarded-For (authority/edge/proxy.c):
 * list syntax (addresses, prefixes, separators, errors, the entry cap),
 * matching, and the right-to-left walk: untrusted peers' headers ignored,
 * trusted hops skipped, a garbage entry stopping the walk at the hop that
 * reported it, an all-trusted chain, IPv6 canonical form, several headers
 * joined, the hop cap and an over-long header.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "err.h"
#include "edge/proxy.h"

static struct proxy_list *
list(const char *text)
{
	struct proxy_list *l = NULL;
	char why[160];

	harness_checks++;
	if (proxy_list_parse(text, &l, why, sizeof(why)) != VEP_OK) {
		fprintf(stderr, "%s: '%s' refused: %s\n", harness_current, text, why);
		harness_failed++;
	}
	return l;
}

static void
refused(const char *text, int rc, const char *why_part)
{
	struct proxy_list *l = (struct proxy_list *)1;
	char why[160] = "";

	ASSERT_EQ(proxy_list_parse(text, &l, why, sizeof(why)), rc);
	ASSERT_TRUE(l == NULL);
	ASSERT_TRUE(strstr(why, why_part) != NULL);
}

static void
test_syntax(void)
{
	struct proxy_list *l = list(" 10.0.0.0/8,192.0.2.1\t2001:db8::/32 , ::1 ");

	ASSERT_TRUE(proxy_list_has(l, "10.255.1.2"));
	ASSERT_TRUE(!proxy_list_has(l, "11.0.0.1"));
	ASSERT_TRUE(proxy_list_has(l, "192.0.2.1"));
	ASSERT_TRUE(!proxy_list_has(l, "192.0.2.2"));
	ASSERT_TRUE(proxy_list_has(l, "2001:db8:ffff::1"));
	ASSERT_TRUE(!proxy_list_has(l, "2001:db9::1"));
	ASSERT_TRUE(proxy_list_has(l, "::1"));
	ASSERT_TRUE(!proxy_list_has(l, "127.0.0.1"));
	ASSERT_TRUE(!proxy_list_has(l, "unknown"));
	proxy_list_free(l);
	l = list("0.0.0.0/0");
	ASSERT_TRUE(proxy_list_has(l, "203.0.113.1"));
	ASSERT_TRUE(!proxy_list_has(l, "::1"));
	proxy_list_free(l);
	l = list("10.1.2.2/31");
	ASSERT_TRUE(proxy_list_has(l, "10.1.2.3") && !proxy_list_has(l, "10.1.2.4"));
	proxy_list_free(l);
	refused("", VEP_ERR_INVALID, "at least one");
	refused(" , ", VEP_ERR_INVALID, "at least one");
	refused("localhost", VEP_ERR_INVALID, "not an IPv4 or IPv6");
	refused("10.0.0.1/8", VEP_ERR_INVALID, "host bits");
	refused("10.0.0.0/33", VEP_ERR_INVALID, "prefix");
	refused("10.0.0.0/", VEP_ERR_INVALID, "prefix");
	refused("10.0.0.0/-1", VEP_ERR_INVALID, "prefix");
	refused("10.0.0.0/8x", VEP_ERR_INVALID, "prefix");
	refused("::/129", VEP_ERR_INVALID, "prefix");
	refused("[::1]", VEP_ERR_INVALID, "not an IPv4 or IPv6");
	refused("10.0.0.1:80", VEP_ERR_INVALID, "not an IPv4 or IPv6");
}

static void
test_cap(void)
{
	char text[PROXY_LIST_MAX * 16 + 32];
	struct proxy_list *l;
	size_t i, off = 0;

	for (i = 0; i < PROXY_LIST_MAX; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "10.0.%zu.1 ", i);
	l = list(text);
	ASSERT_TRUE(proxy_list_has(l, "10.0.63.1"));
	proxy_list_free(l);
	snprintf(text + off, sizeof(text) - off, "10.1.0.1");
	refused(text, VEP_ERR_TOOBIG, "more than 64");
}

static void
client(const struct proxy_list *l, const char *peer, const char *xff, const char *want)
{
	char out[64];

	proxy_client_addr(l, peer, xff, out, sizeof(out));
	if (strcmp(out, want) != 0)
		fprintf(stderr, "peer %s xff '%s': got %s, want %s\n", peer, xff ? xff : "(none)",
		    out, want);
	ASSERT_STREQ(out, want);
}

/* An address longer than the caller's buffer is cut to fit, terminated,
 * as snprintf would: the peer's, and a hop's. */
static void
test_cut(void)
{
	struct proxy_list *l = list("127.0.0.1");
	char out[8];

	memset(out, 'x', sizeof(out));
	proxy_client_addr(NULL, "203.0.113.5", NULL, out, sizeof(out));
	ASSERT_STREQ(out, "203.0.1");
	proxy_client_addr(l, "127.0.0.1", "198.51.100.1", out, sizeof(out));
	ASSERT_STREQ(out, "198.51.");
	proxy_client_addr(NULL, "a", NULL, out, 1);
	ASSERT_STREQ(out, "");
	proxy_list_free(l);
}

static void
test_walk(void)
{
	struct proxy_list *l = list("127.0.0.1 10.0.0.0/8 ::1");
	char big[PROXY_XFF_MAX + 16];

	/* No list, no header, or an untrusted peer: the peer. */
	client(NULL, "203.0.113.5", "198.51.100.1", "203.0.113.5");
	client(l, "127.0.0.1", NULL, "127.0.0.1");
	client(l, "203.0.113.5", "198.51.100.1", "203.0.113.5");
	/* One trusted hop. */
	client(l, "127.0.0.1", "198.51.100.1", "198.51.100.1");
	/* A client's own header is to the left of what proxies added. */
	client(l, "127.0.0.1", "6.6.6.6, 198.51.100.1", "198.51.100.1");
	/* Trusted hops are skipped. */
	client(l, "127.0.0.1", "6.6.6.6,198.51.100.1 , 10.0.0.2,  10.0.0.3", "198.51.100.1");
	/* Every hop trusted: the leftmost. */
	client(l, "127.0.0.1", "10.0.0.9, 10.0.0.2", "10.0.0.9");
	/* Garbage stops the walk at the hop that reported it. */
	client(l, "127.0.0.1", "198.51.100.1, bogus", "127.0.0.1");
	client(l, "127.0.0.1", "198.51.100.1, garbage, 10.0.0.2", "10.0.0.2");
	client(l, "127.0.0.1", "198.51.100.1,,10.0.0.2", "10.0.0.2");
	client(l, "127.0.0.1", "", "127.0.0.1");
	client(l, "127.0.0.1", "198.51.100.1:443", "127.0.0.1");
	client(l, "127.0.0.1", "[2001:db8::1]", "127.0.0.1");
	/* IPv6, in canonical form. */
	client(l, "::1", "2001:DB8:0:0::0001", "2001:db8::1");
	client(l, "::1", "::ffff:10.0.0.1, 2001:db8::2", "2001:db8::2");
	/* The hop cap: 20 trusted hops, the 17th from the right ends it. */
	client(l, "127.0.0.1", "198.51.100.1,10.0.0.1,10.0.0.2,10.0.0.3,10.0.0.4,10.0.0.5,"
	    "10.0.0.6,10.0.0.7,10.0.0.8,10.0.0.9,10.0.0.10,10.0.0.11,10.0.0.12,10.0.0.13,"
	    "10.0.0.14,10.0.0.15,10.0.0.16", "10.0.0.1");
	/* Over-long: ignored. */
	memset(big, ' ', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	memcpy(big + sizeof(big) - 16, "198.51.100.1", 12);
	client(l, "127.0.0.1", big, "127.0.0.1");
	proxy_list_free(l);
}

int
main(void)
{
	RUN(test_syntax);
	RUN(test_cap);
	RUN(test_walk);
	RUN(test_cut);
	return harness_done();
}
