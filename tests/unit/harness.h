/*
 * harness.h - the tiny unit-test harness: ASSERT_* macros that record a
 * failure (file:line and the expression) and return from the test function,
 * and RUN() that calls one test. main() ends with `return harness_done();`,
 * which prints "N checks, N failed" and returns the exit status.
 *
 * Tests that cannot run here exit 77 (meson's "skip"); CI's test script
 * turns a skip into a failure so coverage cannot silently vanish.
 */
#ifndef VEP_TEST_HARNESS_H
#define VEP_TEST_HARNESS_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int harness_checks;
static int harness_failed;
static const char *harness_current = "";

#define HARNESS_FAIL(...) do { \
	harness_failed++; \
	fprintf(stderr, "FAIL %s (%s:%d): ", harness_current, __FILE__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); \
	fputc('\n', stderr); \
	return; \
} while (0)

#define ASSERT_TRUE(c) do { harness_checks++; \
	if (!(c)) HARNESS_FAIL("%s", #c); } while (0)

#define ASSERT_EQ(a, b) do { harness_checks++; \
	long long a_ = (long long)(a), b_ = (long long)(b); \
	if (a_ != b_) HARNESS_FAIL("%s == %s: %lld != %lld", #a, #b, a_, b_); } while (0)

#define ASSERT_STREQ(a, b) do { harness_checks++; \
	const char *a_ = (a), *b_ = (b); \
	if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0) \
		HARNESS_FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, \
		    a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } while (0)

#define ASSERT_MEMEQ(a, b, n) do { harness_checks++; \
	if (memcmp((a), (b), (n)) != 0) \
		HARNESS_FAIL("%s == %s (%zu bytes)", #a, #b, (size_t)(n)); } while (0)

#define RUN(fn) do { harness_current = #fn; int before_ = harness_failed; fn(); \
	if (harness_failed == before_) fprintf(stderr, "ok   %s\n", #fn); } while (0)

static inline int
harness_done(void)
{
	printf("%d checks, %d failed\n", harness_checks, harness_failed);
	return harness_failed ? 1 : 0;
}

#endif
