/*
 * test_throttle_key.c - the names the throttle counts under: accounts as
 * the PAM backend compares them, IPv4 as itself, IPv4-mapped IPv6 as IPv4,
 * IPv6 per /64, other text kept, buffers too small refused.
 */
#include "err.h"
#include "harness.h"
#include "auth/throttle_key.h"

static void
test_account(void)
{
	char out[16];

	ASSERT_EQ(throttle_key_account("Alice.Smith", 0, out, sizeof(out)), 0);
	ASSERT_STREQ(out, "Alice.Smith");
	ASSERT_EQ(throttle_key_account("Alice.Smith", 1, out, sizeof(out)), 0);
	ASSERT_STREQ(out, "alice.smith");
	/* Only ASCII folds: other bytes are the directory's business. */
	ASSERT_EQ(throttle_key_account("\xc3\x89Z", 1, out, sizeof(out)), 0);
	ASSERT_STREQ(out, "\xc3\x89z");
	ASSERT_EQ(throttle_key_account("0123456789abcdef", 0, out, sizeof(out)), VEP_ERR_TOOBIG);
	ASSERT_STREQ(out, "");
	ASSERT_EQ(throttle_key_account(NULL, 0, out, sizeof(out)), VEP_ERR_ARG);
	ASSERT_EQ(throttle_key_account("a", 0, NULL, 4), VEP_ERR_ARG);
}

static void
test_addr(void)
{
	char out[THROTTLE_KEY_ADDR_BUFSZ];

	ASSERT_EQ(throttle_key_addr("192.0.2.1", out, sizeof(out)), 0);
	ASSERT_STREQ(out, "192.0.2.1");
	ASSERT_EQ(throttle_key_addr("::ffff:192.0.2.1", out, sizeof(out)), 0);
	ASSERT_STREQ(out, "192.0.2.1");
	/* Every address of one /64 counts as one. */
	ASSERT_EQ(throttle_key_addr("2001:db8:1:2:aaaa:bbbb:cccc:dddd", out, sizeof(out)), 0);
	ASSERT_STREQ(out, "2001:db8:1:2::/64");
	ASSERT_EQ(throttle_key_addr("2001:DB8:1:2::1", out, sizeof(out)), 0);
	ASSERT_STREQ(out, "2001:db8:1:2::/64");
	ASSERT_EQ(throttle_key_addr("2001:db8:1:3::1", out, sizeof(out)), 0);
	ASSERT_STREQ(out, "2001:db8:1:3::/64");
	ASSERT_EQ(throttle_key_addr("::1", out, sizeof(out)), 0);
	ASSERT_STREQ(out, "::/64");
	ASSERT_EQ(throttle_key_addr("unknown", out, sizeof(out)), 0);
	ASSERT_STREQ(out, "unknown");
	{
		char small[8];

		ASSERT_EQ(throttle_key_addr("2001:db8::1", small, sizeof(small)), VEP_ERR_TOOBIG);
		ASSERT_STREQ(small, "");
		ASSERT_EQ(throttle_key_addr("192.0.2.123", small, sizeof(small)), VEP_ERR_TOOBIG);
	}
	ASSERT_EQ(throttle_key_addr(NULL, out, sizeof(out)), VEP_ERR_ARG);
}

int
main(void)
{
	RUN(test_account);
	RUN(test_addr);
	return harness_done();
}
