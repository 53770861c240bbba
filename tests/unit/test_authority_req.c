/* test_authority_req.c - authority/req.c: request-target decoding and the
 * error table (no network: struct req is filled by hand). */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "harness.h"
#include "authority_limits.h"
#include "req.h"

static void
clear(struct req *r)
{
	size_t i;

	for (i = 0; i < r->nparams; i++) {
		free(r->params[i].name);
		free(r->params[i].value);
	}
	free(r->params);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

static enum req_error
parse(struct req *r, const char *target)
{
	clear(r);
	r->target = target;
	return req_parse_target(r);
}

static void
test_pct_decode(void)
{
	char *out = NULL;

	ASSERT_EQ(req_pct_decode("a%41%7a+b", 9, &out), 0);
	ASSERT_STREQ(out, "aAz+b");
	free(out);
	ASSERT_EQ(req_pct_decode("%", 1, &out), VEP_ERR_INVALID);
	ASSERT_TRUE(out == NULL);
	ASSERT_EQ(req_pct_decode("%4", 2, &out), VEP_ERR_INVALID);
	ASSERT_EQ(req_pct_decode("%4g", 3, &out), VEP_ERR_INVALID);
	ASSERT_EQ(req_pct_decode("%00", 3, &out), VEP_ERR_INVALID);
	/* Only len bytes are read: the '%' after them does not count. */
	ASSERT_EQ(req_pct_decode("ab%", 2, &out), 0);
	ASSERT_STREQ(out, "ab");
	free(out);
}

static void
test_targets(void)
{
	struct req r;
	char long_target[LIMIT_URI_BYTES + 2];

	memset(&r, 0, sizeof(r));
	ASSERT_EQ(parse(&r, "/pk"), REQ_ERR_COUNT);
	ASSERT_STREQ(r.path, "/pk");
	ASSERT_EQ(r.nparams, 0);
	ASSERT_EQ(parse(&r, "/a%62c?x=1&&y&z=%41+b&x=2"), REQ_ERR_COUNT);
	ASSERT_STREQ(r.path, "/abc");
	ASSERT_EQ(r.nparams, 4);
	ASSERT_STREQ(req_param(&r, "x"), "1");
	ASSERT_EQ(req_param_count(&r, "x"), 2);
	ASSERT_STREQ(req_param(&r, "y"), "");
	ASSERT_STREQ(req_param(&r, "z"), "A+b");
	ASSERT_TRUE(req_param(&r, "w") == NULL);
	ASSERT_EQ(parse(&r, "pk"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "http://x/pk"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "/a%2Fb"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "/a%2fb"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "/pk?a=%2F"), REQ_ERR_COUNT); /* fine in a query */
	ASSERT_EQ(parse(&r, "/pk?a=%zz"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "/pk?a%=1"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "/pk#frag"), REQ_ERR_BAD_TARGET);
	ASSERT_EQ(parse(&r, "/p k"), REQ_ERR_BAD_TARGET);
	memset(long_target, 'a', sizeof(long_target));
	long_target[0] = '/';
	long_target[LIMIT_URI_BYTES] = '\0';
	ASSERT_EQ(parse(&r, long_target), REQ_ERR_COUNT);
	long_target[LIMIT_URI_BYTES] = 'a';
	long_target[LIMIT_URI_BYTES + 1] = '\0';
	ASSERT_EQ(parse(&r, long_target), REQ_ERR_URI_TOO_LONG);
	clear(&r);
}

static void
test_param_limit(void)
{
	char target[LIMIT_QUERY_PARAMS * 8 + 16];
	struct req r;
	size_t o;
	int i;

	memset(&r, 0, sizeof(r));
	o = (size_t)snprintf(target, sizeof(target), "/?");
	for (i = 0; i < LIMIT_QUERY_PARAMS; i++)
		o += (size_t)snprintf(target + o, sizeof(target) - o, "a=%d&", i % 10);
	ASSERT_EQ(parse(&r, target), REQ_ERR_COUNT);
	ASSERT_EQ(r.nparams, LIMIT_QUERY_PARAMS);
	snprintf(target + o, sizeof(target) - o, "b");
	ASSERT_EQ(parse(&r, target), REQ_ERR_BAD_TARGET);
	clear(&r);
}

static void
test_error_table(void)
{
	ASSERT_EQ(req_error_status(REQ_ERR_NOT_FOUND), 404);
	ASSERT_EQ(req_error_status(REQ_ERR_URI_TOO_LONG), 414);
	ASSERT_EQ(req_error_status(REQ_ERR_COUNT), 500);
	ASSERT_EQ(req_error_from_vep(VEP_ERR_INVALID), REQ_ERR_BAD_REQUEST);
	ASSERT_EQ(req_error_from_vep(VEP_ERR_TOOBIG), REQ_ERR_TOO_LARGE);
	ASSERT_EQ(req_error_from_vep(VEP_ERR_IO), REQ_ERR_UNAVAILABLE);
	ASSERT_EQ(req_error_from_vep(VEP_ERR_CRYPTO), REQ_ERR_INTERNAL);
	ASSERT_EQ(req_error_from_vep(VEP_ERR_NOMEM), REQ_ERR_INTERNAL);
}

int
main(void)
{
	RUN(test_pct_decode);
	RUN(test_targets);
	RUN(test_param_limit);
	RUN(test_error_table);
	return harness_done();
}
