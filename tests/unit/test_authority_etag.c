/* test_authority_etag.c - authority/edge/etag.c: tags and If-None-Match matching. */
#include <string.h>

#include "edge/etag.h"
#include "harness.h"

static void
test_compute(void)
{
	char a[ETAG_BUFSZ], b[ETAG_BUFSZ];

	ASSERT_EQ(etag_compute("abc", 3, a), 0);
	ASSERT_EQ(strlen(a), 34);
	ASSERT_TRUE(a[0] == '"' && a[33] == '"');
	/* SHA-256("abc") starts ba7816bf8f01cfea414140de5dae2223. */
	ASSERT_STREQ(a, "\"ba7816bf8f01cfea414140de5dae2223\"");
	ASSERT_EQ(etag_compute("abd", 3, b), 0);
	ASSERT_TRUE(strcmp(a, b) != 0);
}

static void
test_none_match(void)
{
	const char *t = "\"0123\"";

	ASSERT_EQ(etag_none_match(NULL, t), 0);
	ASSERT_EQ(etag_none_match("\"0123\"", t), 1);
	ASSERT_EQ(etag_none_match("W/\"0123\"", t), 1);
	ASSERT_EQ(etag_none_match("\"x\", W/\"0123\"", t), 1);
	ASSERT_EQ(etag_none_match(" \"x\" ,\"0123\" ", t), 1);
	ASSERT_EQ(etag_none_match("*", t), 1);
	ASSERT_EQ(etag_none_match(" * ", t), 1);
	ASSERT_EQ(etag_none_match("\"x\", *", t), 0);
	ASSERT_EQ(etag_none_match("\"x\"", t), 0);
	ASSERT_EQ(etag_none_match("0123", t), 0);
	ASSERT_EQ(etag_none_match("\"0123", t), 0);
	ASSERT_EQ(etag_none_match("\"x\" junk, \"0123\"", t), 0);
	ASSERT_EQ(etag_none_match("\"01\"", t), 0);
	ASSERT_EQ(etag_none_match("", t), 0);
}

int
main(void)
{
	RUN(test_compute);
	RUN(test_none_match);
	return harness_done();
}
