/*
 * test_remote.c - the remote verifier's address policy (remote/addr.c:
 * what an assertion's domain may make the authority connect to), its
 * document cache (remote/cache.c) and /verify's token buckets
 * (core/ratelimit.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ratelimit.h"
#include "edge/proxy.h"
#include "err.h"
#include "harness.h"
#include "remote/addr.h"
#include "remote/cache.h"

static void
test_addr_policy(void)
{
	static const struct {
		const char *addr;
		int public;
	} cases[] = {
		{ "93.184.216.34", 1 }, { "8.8.8.8", 1 }, { "1.1.1.1", 1 },
		{ "127.0.0.1", 0 }, { "127.255.255.254", 0 }, { "0.0.0.0", 0 }, { "0.1.2.3", 0 },
		{ "10.0.0.1", 0 }, { "172.16.0.1", 0 }, { "172.31.255.255", 0 },
		{ "172.32.0.1", 1 },
		{ "192.168.1.1", 0 }, { "100.64.0.1", 0 }, { "100.127.255.255", 0 },
		{ "100.128.0.1", 1 }, { "169.254.169.254", 0 }, { "192.0.0.8", 0 },
		{ "192.0.2.1", 0 }, { "198.18.0.1", 0 }, { "198.19.255.255", 0 },
		{ "198.51.100.7", 0 }, { "203.0.113.9", 0 }, { "224.0.0.1", 0 },
		{ "239.255.255.250", 0 }, { "240.0.0.1", 0 }, { "255.255.255.255", 0 },
		{ "2606:2800:220:1:248:1893:25c8:1946", 1 }, { "2a00:1450:4001:80b::200e", 1 },
		{ "::1", 0 }, { "::", 0 }, { "fe80::1", 0 }, { "fc00::1", 0 },
		{ "fd12:3456::1", 0 },
		{ "ff02::1", 0 }, { "2001:db8::1", 0 }, { "2002:7f00:1::1", 0 },
		{ "2001:0:4136:e378::1", 0 }, { "64:ff9b::7f00:1", 0 },
		{ "::ffff:127.0.0.1", 0 }, { "::ffff:10.0.0.1", 0 }, { "::ffff:8.8.8.8", 1 },
		{ "example.com", 0 }, { "", 0 }, { "1.2.3", 0 },
	};
	struct proxy_list *allow = NULL;
	char why[128];
	size_t i;

	for (i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		if (remote_addr_allowed(cases[i].addr, NULL) != cases[i].public)
			fprintf(stderr, "address %s\n", cases[i].addr);
		ASSERT_EQ(remote_addr_allowed(cases[i].addr, NULL), cases[i].public);
	}
	/* verify_remote_allow opens exactly what it lists. */
	ASSERT_EQ(proxy_list_parse("127.0.0.1 10.1.0.0/16 fd00::/8", &allow, why, sizeof why), 0);
	ASSERT_EQ(remote_addr_allowed("127.0.0.1", allow), 1);
	ASSERT_EQ(remote_addr_allowed("127.0.0.2", allow), 0);
	ASSERT_EQ(remote_addr_allowed("10.1.200.3", allow), 1);
	ASSERT_EQ(remote_addr_allowed("10.2.0.1", allow), 0);
	ASSERT_EQ(remote_addr_allowed("fd12::1", allow), 1);
	ASSERT_EQ(remote_addr_allowed("169.254.169.254", allow), 0);
	ASSERT_EQ(remote_addr_allowed("8.8.8.8", allow), 1);
	proxy_list_free(allow);
}

static void
test_resolve(void)
{
	char out[INET6_ADDRSTRLEN], why[200];
	struct proxy_list *allow = NULL;

	/* Names that resolve only to loopback are refused, and say why. */
	ASSERT_EQ(remote_addr_resolve("localhost", NULL, out, why, sizeof why), VEP_ERR_PERM);
	ASSERT_TRUE(strstr(why, "not allowed") != NULL);
	ASSERT_EQ(proxy_list_parse("127.0.0.1 ::1", &allow, why, sizeof why), 0);
	ASSERT_EQ(remote_addr_resolve("localhost", allow, out, why, sizeof why), 0);
	ASSERT_TRUE(strcmp(out, "127.0.0.1") == 0 || strcmp(out, "::1") == 0);
	ASSERT_EQ(remote_addr_resolve("nowhere.invalid", allow, out, why, sizeof why), VEP_ERR_IO);
	ASSERT_TRUE(strstr(why, "cannot resolve") != NULL);
	proxy_list_free(allow);
}

static void
test_cache(void)
{
	struct remote_cache *c = remote_cache_new();
	char *text, host[32];
	size_t len;
	int i;

	ASSERT_TRUE(c != NULL);
	ASSERT_EQ(remote_cache_get(c, "a.test", 1000, &text, &len), 0);
	remote_cache_put(c, "a.test", "{\"x\":1}", 7, 2000);
	ASSERT_EQ(remote_cache_get(c, "A.TEST", 1999, &text, &len), 1);
	ASSERT_EQ(len, 7);
	ASSERT_STREQ(text, "{\"x\":1}");
	free(text);
	/* Expired: gone. */
	ASSERT_EQ(remote_cache_get(c, "a.test", 2000, &text, &len), 0);
	/* Replacing keeps one entry per host. */
	remote_cache_put(c, "b.test", "1", 1, 5000);
	remote_cache_put(c, "b.test", "22", 2, 6000);
	ASSERT_EQ(remote_cache_get(c, "b.test", 5500, &text, &len), 1);
	ASSERT_STREQ(text, "22");
	free(text);
	/* Full: the entry that expires first makes room, never a fresher one. */
	for (i = 0; i < REMOTE_CACHE_ENTRIES + 10; i++) {
		snprintf(host, sizeof host, "h%d.test", i);
		remote_cache_put(c, host, "x", 1, 10000 + i);
	}
	ASSERT_EQ(remote_cache_get(c, "b.test", 5500, &text, &len), 0);
	ASSERT_EQ(remote_cache_get(c, "h0.test", 5500, &text, &len), 0);
	snprintf(host, sizeof host, "h%d.test", REMOTE_CACHE_ENTRIES + 9);
	ASSERT_EQ(remote_cache_get(c, host, 5500, &text, &len), 1);
	free(text);
	remote_cache_free(c);
}

static void
test_ratelimit(void)
{
	struct ratelimit *rl = ratelimit_new();
	char key[32];
	int i;

	ASSERT_TRUE(rl != NULL);
	/* A burst of 3, then 1 per second. */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(ratelimit_take(rl, "1.2.3.4", 1, 3, 1000), 0);
	ASSERT_EQ(ratelimit_take(rl, "1.2.3.4", 1, 3, 1000), 1);
	ASSERT_EQ(ratelimit_take(rl, "1.2.3.4", 1, 3, 1500), 1);
	ASSERT_EQ(ratelimit_take(rl, "1.2.3.4", 1, 3, 2000), 0);
	ASSERT_EQ(ratelimit_take(rl, "1.2.3.4", 1, 3, 2000), 1);
	/* Another client has its own bucket. */
	ASSERT_EQ(ratelimit_take(rl, "5.6.7.8", 1, 3, 2000), 0);
	/* The wait says when a token is back: 10 per second, 1 at once. */
	ASSERT_EQ(ratelimit_take(rl, "9.9.9.9", 10, 1, 0), 0);
	ASSERT_EQ(ratelimit_take(rl, "9.9.9.9", 10, 1, 0), 1);
	/* Idle for long: back to the burst, never beyond it. */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(ratelimit_take(rl, "1.2.3.4", 1, 3, 1000000), 0);
	ASSERT_EQ(ratelimit_take(rl, "1.2.3.4", 1, 3, 1000000), 1);
	/* Many clients: memory is fixed; a client pushed out starts full. */
	for (i = 0; i < RATELIMIT_SLOTS * 2; i++) {
		snprintf(key, sizeof key, "10.0.%d.%d", i / 256, i % 256);
		ASSERT_EQ(ratelimit_take(rl, key, 1, 1, 2000000 + i), 0);
	}
	/* An empty or absent key is one client too. */
	ASSERT_EQ(ratelimit_take(rl, "", 1, 1, 5000000), 0);
	ASSERT_EQ(ratelimit_take(rl, NULL, 1, 1, 5000000), 1);
	ratelimit_free(rl);
}

int
main(void)
{
	RUN(test_addr_policy);
	RUN(test_resolve);
	RUN(test_cache);
	RUN(test_ratelimit);
	return harness_done();
}
