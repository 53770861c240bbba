/* test_authority_errors.c - authority/core/errors.c: one vocabulary, four
 * ranges that never overlap, and a name for every code. */
#include <string.h>

#include "core/errors.h"
#include "err.h"
#include "harness.h"

static void
test_every_code_named(void)
{
	int e;

	/* Every code of every range, and the gaps between them. */
	for (e = -400; e <= 1; e++) {
		ASSERT_TRUE(srv_strerror(e) != NULL);
		ASSERT_TRUE(srv_strerror(e)[0] != '\0');
	}
	ASSERT_TRUE(srv_strerror(-100000) != NULL);
	ASSERT_TRUE(srv_strerror(100000) != NULL);
	for (e = VEP_ERR_DELEGATION; e <= VEP_ERR_NOMEM; e++)
		ASSERT_STREQ(srv_strerror(e), vep_strerror(e));
	for (e = REQ_ERR_UNAVAILABLE; e <= REQ_ERR_BAD_REQUEST; e++)
		ASSERT_TRUE(strcmp(srv_strerror(e), "unknown error") != 0);
	for (e = SRV_ERR_BUSY; e <= SRV_ERR_CANCELED; e++)
		ASSERT_TRUE(strcmp(srv_strerror(e), "unknown error") != 0);
	ASSERT_STREQ(srv_strerror(REQ_ERR_TOO_LARGE), "request too large");
	ASSERT_STREQ(srv_strerror(SRV_ERR_DENIED), "wrong address or password");
	ASSERT_STREQ(srv_strerror(DB_ERR_FULL), "database full");
	ASSERT_STREQ(srv_strerror(-299), "unknown error");
}

static void
test_ranges(void)
{
	/* Each range below the one before: one int carries any of them. */
	ASSERT_TRUE((int)VEP_ERR_DELEGATION > (int)DB_ERR_NOTFOUND);
	ASSERT_TRUE((int)DB_ERR_INTERNAL > (int)SRV_ERR_CANCELED);
	ASSERT_TRUE((int)SRV_ERR_BUSY > (int)REQ_ERR_BAD_REQUEST);
	ASSERT_EQ(REQ_ERR_BAD_REQUEST - REQ_ERR_UNAVAILABLE, 21);
}

int
main(void)
{
	RUN(test_every_code_named);
	RUN(test_ranges);
	return harness_done();
}
