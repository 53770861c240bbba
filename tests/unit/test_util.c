/*
 * test_util.c - err (every code has its own text), secmem, strict JSON
 * loading with its size limit, time members and the clock.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "harness.h"
#include "secmem.h"
#include "util.h"

static void
test_strerror_table(void)
{
	const char *unknown = vep_strerror(-1000);

	ASSERT_TRUE(unknown != NULL);
	ASSERT_TRUE(vep_strerror(5) != NULL);
	for (int e = VEP_OK; e >= VEP_ERR_DELEGATION; e--) {
		const char *s = vep_strerror(e);

		ASSERT_TRUE(s != NULL && s[0] != '\0');
		ASSERT_TRUE(strcmp(s, unknown) != 0);
		/* Each code has a distinct reason. */
		for (int f = e + 1; f <= VEP_OK; f++)
			ASSERT_TRUE(strcmp(s, vep_strerror(f)) != 0);
	}
	ASSERT_STREQ(vep_strerror(VEP_ERR_DELEGATION - 1), unknown);
}

static void
test_secmem(void)
{
	char buf[16];
	char *s;

	memset(buf, 'x', sizeof(buf));
	vep_memzero(buf, sizeof(buf));
	for (size_t i = 0; i < sizeof(buf); i++)
		ASSERT_EQ(buf[i], 0);
	vep_memzero(NULL, 5);
	ASSERT_EQ(vep_memeq_ct("abcd", "abcd", 4), 1);
	ASSERT_EQ(vep_memeq_ct("abcd", "abce", 4), 0);
	ASSERT_EQ(vep_memeq_ct("xbcd", "abcd", 4), 0);
	ASSERT_EQ(vep_memeq_ct("a", "b", 0), 1);
	s = strdup("secret");
	ASSERT_TRUE(s != NULL);
	vep_free_secret_str(s);
	vep_free_secret_str(NULL);
	vep_free_secret(NULL, 10);
}

static int
parse_rc(const char *text, size_t len)
{
	json_t *o = (json_t *)1;
	int rc = vep_json_parse_object(text, len, &o);

	if (rc != 0 && o != NULL)
		return 1000;
	json_decref(o);
	return rc;
}

#define PARSE(s) parse_rc((s), sizeof(s) - 1)

static void
test_json_parse(void)
{
	ASSERT_EQ(PARSE("{\"a\":1}"), 0);
	ASSERT_EQ(PARSE(" {\"a\":{\"b\":[1,2]}} "), 0);
	ASSERT_EQ(PARSE("{\"a\":1,\"a\":2}"), VEP_ERR_INVALID);    /* duplicate */
	ASSERT_EQ(PARSE("{\"a\":{\"b\":1,\"b\":1}}"), VEP_ERR_INVALID);
	ASSERT_EQ(PARSE("{\"a\":1}x"), VEP_ERR_INVALID);           /* trailing */
	ASSERT_EQ(PARSE("{\"a\":1}{}"), VEP_ERR_INVALID);
	ASSERT_EQ(PARSE("{\"a\":1}\0"), VEP_ERR_INVALID);          /* NUL */
	ASSERT_EQ(PARSE("{\"a\":\"\\u0000\"}"), VEP_ERR_INVALID);  /* escaped NUL */
	ASSERT_EQ(PARSE("[1,2]"), VEP_ERR_INVALID);                /* not object */
	ASSERT_EQ(PARSE("1"), VEP_ERR_INVALID);
	ASSERT_EQ(PARSE("\"s\""), VEP_ERR_INVALID);
	ASSERT_EQ(PARSE(""), VEP_ERR_INVALID);
	ASSERT_EQ(PARSE("{\"a\":1"), VEP_ERR_INVALID);
	ASSERT_EQ(PARSE("{'a':1}"), VEP_ERR_INVALID);
}

/* VEP_JSON_MAX_BYTES: a padded object of exactly the limit parses, one
 * byte more is VEP_ERR_TOOBIG. */
static void
test_json_size_limit(void)
{
	size_t n = VEP_JSON_MAX_BYTES;
	char *buf = malloc(n + 1);

	ASSERT_TRUE(buf != NULL);
	memset(buf, ' ', n + 1);
	memcpy(buf, "{\"a\":1}", 7);
	ASSERT_EQ(parse_rc(buf, n), 0);
	ASSERT_EQ(parse_rc(buf, n + 1), VEP_ERR_TOOBIG);
	free(buf);
}

static int
ms_rc(const char *text, int64_t *v)
{
	json_t *o = NULL;
	int rc;

	if (vep_json_parse_object(text, strlen(text), &o) != 0)
		return 1000;
	rc = vep_json_get_ms(o, "t", v);
	json_decref(o);
	return rc;
}

static void
test_get_ms(void)
{
	int64_t v = -1;

	ASSERT_EQ(ms_rc("{\"t\":1342634355913}", &v), 0);
	ASSERT_EQ(v, 1342634355913LL);
	ASSERT_EQ(ms_rc("{\"t\":0}", &v), 0);
	ASSERT_EQ(v, 0);
	ASSERT_EQ(ms_rc("{\"t\":1.342634355913e12}", &v), 0); /* JS style */
	ASSERT_EQ(v, 1342634355913LL);
	ASSERT_EQ(ms_rc("{\"t\":1000.0}", &v), 0);
	ASSERT_EQ(v, 1000);
	ASSERT_EQ(ms_rc("{\"t\":9007199254740991}", &v), 0);   /* 2^53 - 1 */
	ASSERT_EQ(ms_rc("{\"t\":9007199254740992}", &v), VEP_ERR_INVALID);
	ASSERT_EQ(v, 0); /* cleared on failure */
	ASSERT_EQ(ms_rc("{\"t\":9.007199254740992e15}", &v), VEP_ERR_INVALID);
	ASSERT_EQ(ms_rc("{\"t\":1e300}", &v), VEP_ERR_INVALID);
	ASSERT_EQ(ms_rc("{\"t\":-1}", &v), VEP_ERR_INVALID);
	ASSERT_EQ(ms_rc("{\"t\":-0.5}", &v), VEP_ERR_INVALID);
	ASSERT_EQ(ms_rc("{\"t\":1.5}", &v), VEP_ERR_INVALID);
	ASSERT_EQ(ms_rc("{\"t\":\"1000\"}", &v), VEP_ERR_INVALID);
	ASSERT_EQ(ms_rc("{\"t\":true}", &v), VEP_ERR_INVALID);
	ASSERT_EQ(ms_rc("{\"t\":null}", &v), VEP_ERR_INVALID);
	ASSERT_EQ(ms_rc("{\"u\":1}", &v), VEP_ERR_INVALID);
}

static void
test_now(void)
{
	int64_t a = vep_now_ms(), b = vep_now_ms();

	ASSERT_TRUE(a > 1600000000000LL);  /* after 2020 */
	ASSERT_TRUE(a < 4102444800000LL);  /* before 2100 */
	ASSERT_TRUE(b >= a);
}

/* What json_dumps writes for the string s of len bytes (quoted). */
static char *
jansson_quoted(const char *s, size_t len)
{
	json_t *str = json_stringn(s, len);
	char *out = str != NULL ? json_dumps(str, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;

	json_decref(str);
	return out;
}

/* vep_json_quote writes what jansson would, for every ASCII byte (NUL and
 * the control characters included), multi-byte UTF-8, and an empty string;
 * and never more than VEP_JSON_QUOTED_MAX. */
static void
test_json_quote(void)
{
	static const char *const samples[] = {
		"", "alice@example.com", "a\"b\\c/d", "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
		"\b\f\n\r\t\x01\x1f\x7f", "eyJhbGciOiJSUzI1NiJ9.e30.AA~x",
	};
	char buf[VEP_JSON_QUOTED_MAX(256) + 1];
	char *want;
	size_t n;

	for (int c = 0; c < 128; c++) {
		char one = (char)c;
		n = vep_json_quote(buf, &one, 1);
		ASSERT_TRUE(n <= VEP_JSON_QUOTED_MAX(1));
		buf[n] = '\0';
		ASSERT_TRUE((want = jansson_quoted(&one, 1)) != NULL);
		ASSERT_STREQ(buf, want);
		free(want);
	}
	for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
		size_t len = strlen(samples[i]);
		n = vep_json_quote(buf, samples[i], len);
		ASSERT_TRUE(n <= VEP_JSON_QUOTED_MAX(len));
		buf[n] = '\0';
		ASSERT_TRUE((want = jansson_quoted(samples[i], len)) != NULL);
		ASSERT_STREQ(buf, want);
		free(want);
	}
	/* The bound is reached: every byte a six-character escape. */
	char ctl[256];
	memset(ctl, 0x01, sizeof(ctl));
	ASSERT_EQ(vep_json_quote(buf, ctl, sizeof(ctl)), VEP_JSON_QUOTED_MAX(sizeof(ctl)));
}

/* The byte-at-a-time quoting vep_json_quote did before it copied runs. */
static size_t
quote_reference(char *out, const unsigned char *s, size_t len)
{
	static const char hex[] = "0123456789ABCDEF";
	char *o = out;

	*o++ = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];
		const char *short_esc = c == '"' ? "\\\"" : c == '\\' ? "\\\\" :
		    c == '\b' ? "\\b" : c == '\f' ? "\\f" : c == '\n' ? "\\n" : c == '\r' ?
		    "\\r" : c == '\t' ? "\\t" : NULL;

		if (short_esc != NULL) {
			memcpy(o, short_esc, 2);
			o += 2;
		} else if (c < 0x20) {
			memcpy(o, "\\u00", 4);
			o[4] = hex[c >> 4];
			o[5] = hex[c & 0xf];
			o += 6;
		} else {
			*o++ = (char)c;
		}
	}
	*o++ = '"';
	return (size_t)(o - out);
}

/* Random bytes, mostly ones that stand for themselves with a byte to
 * escape now and then (so runs of every length end at every offset of an
 * eight-byte word), lengths 0-300: the same output as byte by byte. */
static void
test_json_quote_runs(void)
{
	static const unsigned char special[] = { '"', '\\', 0x00, 0x01, '\n', 0x1f, 0x7f,
						 0x80, 0xff, ' ', 0x21, 0x23, 0x5b, 0x5d };
	unsigned char in[300];
	char a[VEP_JSON_QUOTED_MAX(300)], b[VEP_JSON_QUOTED_MAX(300)];
	uint32_t x = 7;

	for (int round = 0; round < 4000; round++) {
		size_t len = (size_t)round % 301, na, nb;

		for (size_t i = 0; i < len; i++) {
			x = x * 1103515245u + 12345u;
			if ((x >> 16) % (unsigned)(2 + round % 40) == 0)
				in[i] = special[(x >> 8) % sizeof(special)];
			else
				in[i] = (unsigned char)('A' + (x >> 20) % 26);
		}
		na = vep_json_quote(a, (const char *)in, len);
		nb = quote_reference(b, in, len);
		ASSERT_EQ(na, nb);
		ASSERT_MEMEQ(a, b, na);
	}
}

/* FNV-1a's published 64-bit values. */
static void
test_fnv1a(void)
{
	ASSERT_TRUE(vep_fnv1a("", 0) == 0xcbf29ce484222325ULL);
	ASSERT_TRUE(vep_fnv1a("a", 1) == 0xaf63dc4c8601ec8cULL);
	ASSERT_TRUE(vep_fnv1a("foobar", 6) == 0x85944171f73967e8ULL);
}

int
main(void)
{
	RUN(test_strerror_table);
	RUN(test_secmem);
	RUN(test_json_quote_runs);
	RUN(test_json_parse);
	RUN(test_json_size_limit);
	RUN(test_get_ms);
	RUN(test_now);
	RUN(test_json_quote);
	RUN(test_fnv1a);
	return harness_done();
}
