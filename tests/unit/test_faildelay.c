/*
 * test_faildelay.c - the failed-sign-in delay policy (authority/auth/faildelay.c):
 * bounds, per-user stability, PAM's delay added and capped, the remaining
 * time after an attempt's elapsed time, and a fresh secret per instance.
 */
#include <stdio.h>

#include "harness.h"
#include "auth/faildelay.h"

static void
test_bounds_and_stability(void)
{
	struct faildelay *fd = NULL;
	uint32_t first = 0, t;
	int distinct = 0, i;
	char user[32];

	ASSERT_EQ(faildelay_new(&fd), 0);
	ASSERT_TRUE(fd != NULL);
	for (i = 0; i < 64; i++) {
		snprintf(user, sizeof(user), "user%d", i);
		t = faildelay_target_ms(fd, user, 0);
		ASSERT_TRUE(t >= FAILDELAY_MIN_MS);
		ASSERT_TRUE(t < FAILDELAY_MIN_MS + FAILDELAY_JITTER_MS);
		/* Stable: the same user always gets the same jitter. */
		ASSERT_EQ(faildelay_target_ms(fd, user, 0), t);
		if (i == 0)
			first = t;
		else if (t != first)
			distinct = 1;
	}
	ASSERT_TRUE(distinct);
	/* Case matters: the name is hashed exactly as typed. */
	faildelay_free(fd);
}

static void
test_pam_delay(void)
{
	struct faildelay *fd = NULL;
	uint32_t base;

	ASSERT_EQ(faildelay_new(&fd), 0);
	base = faildelay_target_ms(fd, "alice", 0);
	ASSERT_EQ(faildelay_target_ms(fd, "alice", 300000), base + 300);
	ASSERT_EQ(faildelay_target_ms(fd, "alice", 999), base);
	ASSERT_EQ(faildelay_target_ms(fd, "alice", FAILDELAY_PAM_MAX_MS * 1000u),
	    base + FAILDELAY_PAM_MAX_MS);
	/* A module asking for an hour gets the cap. */
	ASSERT_EQ(faildelay_target_ms(fd, "alice", 3600u * 1000000u),
	    base + FAILDELAY_PAM_MAX_MS);
	faildelay_free(fd);
}

static void
test_remaining(void)
{
	struct faildelay *fd = NULL;
	uint32_t t;

	ASSERT_EQ(faildelay_new(&fd), 0);
	t = faildelay_target_ms(fd, "bob", 200000);
	ASSERT_EQ(faildelay_remaining_ms(fd, "bob", 200000, 0), t);
	ASSERT_EQ(faildelay_remaining_ms(fd, "bob", 200000, 100), t - 100);
	ASSERT_EQ(faildelay_remaining_ms(fd, "bob", 200000, t), 0);
	ASSERT_EQ(faildelay_remaining_ms(fd, "bob", 200000, (uint64_t)t + 5000), 0);
	faildelay_free(fd);
	faildelay_free(NULL);
}

static void
test_secret_per_instance(void)
{
	struct faildelay *a = NULL, *b = NULL;
	char user[32];
	int differ = 0, i;

	ASSERT_EQ(faildelay_new(&a), 0);
	ASSERT_EQ(faildelay_new(&b), 0);
	for (i = 0; i < 32 && !differ; i++) {
		snprintf(user, sizeof(user), "u%d", i);
		differ = faildelay_target_ms(a, user, 0) != faildelay_target_ms(b, user, 0);
	}
	ASSERT_TRUE(differ);
	faildelay_free(a);
	faildelay_free(b);
}

int
main(void)
{
	RUN(test_bounds_and_stability);
	RUN(test_pam_delay);
	RUN(test_remaining);
	RUN(test_secret_per_instance);
	return harness_done();
}
