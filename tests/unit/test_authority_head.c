/* test_authority_head.c - authority/edge/head.c: splitting heads the raw
 * scanner accepted, keep-alive, where a chunked body ends and its data;
 * and that every head it splits here is one the scanner accepts. */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "harness.h"
#include "edge/head.h"
#include "edge/req.h"

/* Only what the scanner accepts reaches head_parse: *out is NULL when
 * either refuses. */
static void
parse_into(const char *text, struct head **out)
{
	struct req_scan s;

	*out = NULL;
	req_scan_init(&s);
	ASSERT_EQ(req_scan_feed(&s, (const unsigned char *)text, strlen(text)), 0);
	ASSERT_EQ(s.heads, 1);
	ASSERT_EQ(head_parse(text, strlen(text), out), 0);
}

static struct head *
parse(const char *text)
{
	struct head *h;

	parse_into(text, &h);
	return h;
}

static void
test_split(void)
{
	struct head *h = parse("POST /api/cert?x=1 HTTP/1.1\r\nHost: example.test\r\n"
	    "Content-Length:\t2 \r\nX-Empty:\r\nX-Forwarded-For: 10.0.0.1\r\n"
	    "x-forwarded-for:  10.0.0.2\t\r\n\r\n");

	ASSERT_TRUE(h != NULL);
	if (h == NULL)
		return;
	ASSERT_STREQ(h->method, "POST");
	ASSERT_STREQ(h->target, "/api/cert?x=1");
	ASSERT_EQ(h->minor, 1);
	ASSERT_EQ(h->nfields, 5);
	ASSERT_EQ(h->length, 2);
	ASSERT_EQ(h->chunked, 0);
	ASSERT_EQ(h->expect_continue, 0);
	ASSERT_STREQ(head_find(h, "host"), "example.test");
	ASSERT_STREQ(head_find(h, "CONTENT-LENGTH"), "2");
	ASSERT_STREQ(head_find(h, "X-Empty"), "");
	/* The first of several. */
	ASSERT_STREQ(head_find(h, "X-Forwarded-For"), "10.0.0.1");
	ASSERT_STREQ(h->fields[4].name, "x-forwarded-for");
	ASSERT_STREQ(h->fields[4].value, "10.0.0.2");
	ASSERT_TRUE(head_find(h, "Cookie") == NULL);
	head_free(h);

	h = parse("PUT /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: Chunked\r\n"
	    "Expect: 100-Continue\r\n\r\n");
	ASSERT_TRUE(h != NULL);
	if (h == NULL)
		return;
	ASSERT_EQ(h->chunked, 1);
	ASSERT_EQ(h->expect_continue, 1);
	ASSERT_EQ(h->length, 0);
	head_free(h);
	/* HTTP/1.0 gets no 100 Continue (nor did it from libevent). */
	h = parse("POST /x HTTP/1.0\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\n");
	ASSERT_TRUE(h != NULL);
	if (h == NULL)
		return;
	ASSERT_EQ(h->minor, 0);
	ASSERT_EQ(h->expect_continue, 0);
	ASSERT_EQ(head_find(h, "Host") == NULL, 1);
	head_free(h);

	/* Not a request line: refused, never read past the end. */
	ASSERT_EQ(head_parse("GARBAGE\r\n\r\n", 11, &h), VEP_ERR_INVALID);
	ASSERT_TRUE(h == NULL);
	ASSERT_EQ(head_parse("GET /\r\n\r\n", 9, &h), VEP_ERR_INVALID);
	ASSERT_EQ(head_parse("GET / HTTP/1.1\r\nNoColon\r\n\r\n", 27, &h), VEP_ERR_INVALID);
	ASSERT_EQ(head_parse("", 0, &h), VEP_ERR_INVALID);
}

static void
test_keep_alive(void)
{
	static const struct {
		const char *head;
		int keep;
	} cases[] = {
		{ "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 1 },
		{ "GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n", 0 },
		{ "GET / HTTP/1.1\r\nHost: a\r\nConnection: CLOSE\r\n\r\n", 0 },
		{ "GET / HTTP/1.1\r\nHost: a\r\nConnection: keep-alive\r\n\r\n", 1 },
		/* Only the first Connection field counts. */
		{ "GET / HTTP/1.1\r\nHost: a\r\nConnection: x\r\nConnection: close\r\n\r\n", 1 },
		{ "GET / HTTP/1.0\r\n\r\n", 0 },
		{ "GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n", 1 },
		{ "GET / HTTP/1.0\r\nConnection: keep-alive, foo\r\n\r\n", 1 },
		{ "GET / HTTP/1.0\r\nConnection: close\r\n\r\n", 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct head *h = parse(cases[i].head);

		ASSERT_EQ(h != NULL && head_keep_alive(h), cases[i].keep);
		head_free(h);
	}
}

static void
test_chunked(void)
{
	static const char body[] = "2\r\n{}\r\n00000003\r\nabc\r\na\r\n0123456789\r\n0\r\n\r\nNEXT";
	size_t whole = sizeof(body) - 1 - 4, n;
	unsigned char out[sizeof(body)];
	struct req_scan s;
	static const char head[] =
	    "POST /x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n";

	/* The scanner accepts the body (and sees the next request begin). */
	req_scan_init(&s);
	ASSERT_EQ(req_scan_feed(&s, (const unsigned char *)head, sizeof(head) - 1), 0);
	ASSERT_EQ(req_scan_feed(&s, (const unsigned char *)body, whole), 0);
	ASSERT_EQ(s.requests, 1);

	ASSERT_EQ(head_chunked_length((const unsigned char *)body, sizeof(body) - 1), whole);
	/* Any prefix is not yet all there. */
	for (n = 0; n < whole; n++)
		ASSERT_EQ(head_chunked_length((const unsigned char *)body, n), 0);
	ASSERT_EQ(head_dechunk((const unsigned char *)body, whole, out), 15);
	ASSERT_MEMEQ(out, "{}abc0123456789", 15);
	ASSERT_EQ(head_chunked_length((const unsigned char *)"0\r\n\r\n", 5), 5);
	ASSERT_EQ(head_dechunk((const unsigned char *)"0\r\n\r\n", 5, out), 0);
	/* A size larger than what is there: not all there, never read. */
	ASSERT_EQ(head_chunked_length((const unsigned char *)"ffffffff\r\nab", 12), 0);
}

int
main(void)
{
	RUN(test_split);
	RUN(test_keep_alive);
	RUN(test_chunked);
	return harness_done();
}
