/*
 * test_json_parse.c - vep_json_parse_object against jansson's json_loadb
 * (JSON_REJECT_DUPLICATES, one object): both must accept and refuse the same
 * texts and build equal trees (json_equal, and the same compact dump, so the
 * members' order too). Cases: a hand-written list, every UTF-8 lead and
 * continuation byte, \u escapes at every boundary, every byte put into,
 * over and out of every position of a few texts, random texts with random
 * damage (fixed seed), the depth limit, the number limits.
 */
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "harness.h"
#include "util.h"

static int cases, accepted;

/* What util.c's vep_json_parse_object did before json_parse.c. */
static int
reference(const char *text, size_t len, json_t **out)
{
	json_error_t e;
	json_t *v;

	*out = NULL;
	if (len > VEP_JSON_MAX_BYTES)
		return VEP_ERR_TOOBIG;
	if (memchr(text, '\0', len) != NULL)
		return VEP_ERR_INVALID;
	if ((v = json_loadb(text, len, JSON_REJECT_DUPLICATES, &e)) == NULL)
		return VEP_ERR_INVALID;
	if (!json_is_object(v)) {
		json_decref(v);
		return VEP_ERR_INVALID;
	}
	*out = v;
	return VEP_OK;
}

static int
same_tree(json_t *a, json_t *b)
{
	char *da, *db;
	int ok;

	if (!json_equal(a, b))
		return 0;
	da = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY);
	db = json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY);
	ok = da != NULL && db != NULL && strcmp(da, db) == 0;
	free(da);
	free(db);
	return ok;
}

/* 1 when both readers agree on text; prints the text when not. */
static int
agree(const char *text, size_t len)
{
	json_t *a = NULL, *b = NULL;
	int ra = vep_json_parse_object(text, len, &a), rb = reference(text, len, &b), ok;

	ok = ra == rb && (ra != VEP_OK || same_tree(a, b)) && (ra == VEP_OK) == (a != NULL);
	if (!ok) {
		fprintf(stderr, "disagree (ours %d, jansson %d) on %zu bytes: ", ra, rb, len);
		for (size_t i = 0; i < len && i < 200; i++)
			fprintf(stderr, (unsigned char)text[i] >= 0x20 &&
			    (unsigned char)text[i] < 0x7f ? "%c" : "\\x%02x",
			    (unsigned char)text[i]);
		fputc('\n', stderr);
	}
	cases++;
	accepted += ra == VEP_OK;
	json_decref(a);
	json_decref(b);
	return ok;
}

static int
agree_str(const char *text)
{
	return agree(text, strlen(text));
}

static const char *const accept[] = {
	"{}", " {} ", "\t\r\n{\t\r\n}\t\r\n", "{\"a\":1}", "{\"\":\"\"}",
	"{\"a\":[]}", "{\"a\":[1,2,3]}", "{\"a\":{\"b\":{\"c\":null}}}",
	"{\"t\":true,\"f\":false,\"n\":null}", "{ \"a\" : [ 1 , { } , [ ] ] }",
	"{\"pubkey\":{\"algorithm\":\"RS\",\"n\":\"1234567890\",\"e\":\"65537\"},"
	"\"duration\":3600}",
	"{\"s\":\"\\\"\\\\\\/\\b\\f\\n\\r\\t\"}", "{\"s\":\"\\u00e9\\u00E9\\u20AC\"}",
	"{\"s\":\"\\ud83d\\ude00\"}", "{\"s\":\"\\uD83D\\uDE00x\"}", "{\"s\":\"\xc3\xa9\"}",
	"{\"s\":\"\xe2\x82\xac\",\"t\":\"\xf0\x9f\x98\x80\"}", "{\"s\":\"\x7f\"}",
	"{\"\\u00e9\":{\"\\u00e8\":\"\\n\",\"x\":\"\\t\"},\"\\u00e0\":\"\\\"\"}",
	"{\"a\":{\"a\":1}}", "{\"a\":1,\"b\":2,\"c\":3,\"d\":4,\"e\":5,\"f\":6,\"g\":7,\"h\":8,"
	"\"i\":9,\"j\":10}",
	"{\"n\":0}", "{\"n\":-0}", "{\"n\":-0.0}", "{\"n\":0.5}", "{\"n\":1e5}", "{\"n\":1E+5}",
	"{\"n\":1e-5}", "{\"n\":-1.25e-300}", "{\"n\":1e-400}", "{\"n\":1.7976931348623157e308}",
	"{\"n\":9223372036854775807}", "{\"n\":-9223372036854775808}",
	"{\"n\":123456789012345678901234567890.5}", "{\"n\":[0,-1,1.0,10]}",
	"{\"s\":\"\\/\"}", "{\"a\":\"x\",\"b\":\"\\u0061\"}",
};

static const char *const refuse[] = {
	"", " ", "[]", "[1]", "1", "\"s\"", "null", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\" 1}",
	"{\"a\":1,}", "{,}", "{\"a\":1 \"b\":2}", "{\"a\":[1,]}", "{\"a\":[,1]}", "{\"a\":[1 2]}",
	"{\"a\":1}x", "{\"a\":1}{}", "{\"a\":1} ,", "{a:1}", "{'a':1}", "{\"a\":'x'}",
	"{\"a\":1,\"a\":2}", "{\"a\":1,\"\\u0061\":2}", "{\"a\":tru}", "{\"a\":truex}",
	"{\"a\":True}", "{\"a\":nul}", "{\"a\":nulll}", "{\"a\":falsey}", "{\"a\":true1}",
	"{\"n\":01}", "{\"n\":-01}", "{\"n\":00}", "{\"n\":1.}", "{\"n\":.5}", "{\"n\":-}",
	"{\"n\":-.5}", "{\"n\":1e}", "{\"n\":1e+}", "{\"n\":1.5e-}", "{\"n\":+1}", "{\"n\":1x}",
	"{\"n\":0x10}", "{\"n\":NaN}", "{\"n\":Infinity}", "{\"n\":-Infinity}", "{\"n\":1e309}",
	"{\"n\":-1e309}", "{\"n\":9223372036854775808}", "{\"n\":-9223372036854775809}",
	"{\"n\":99999999999999999999}", "{\"s\":\"\\u0000\"}", "{\"\\u0000\":1}",
	"{\"s\":\"\\x41\"}", "{\"s\":\"\\a\"}", "{\"s\":\"\\u12\"}", "{\"s\":\"\\u12G4\"}",
	"{\"s\":\"\\ud83d\"}", "{\"s\":\"\\ud83dx\"}", "{\"s\":\"\\ud83d\\u0041\"}",
	"{\"s\":\"\\ude00\"}", "{\"s\":\"\\ud83d\\ud83d\"}", "{\"s\":\"\\ud83d\\n\"}",
	"{\"s\":\"\\", "{\"s\":\"abc", "{\"s\":\"\n\"}", "{\"s\":\"\t\"}", "{\"s\":\"\x1f\"}",
	"{\"s\":\"\xc3\"}", "{\"s\":\"\xc3(\"}", "{\"s\":\"\xc0\x80\"}", "{\"s\":\"\xed\xa0\x80\"}",
	"{\"s\":\"\xf4\x90\x80\x80\"}", "{\"s\":\"\xf8\x88\x80\x80\x80\"}", "{\"s\":\"\xff\"}",
	"{\"s\":\"\xe2\x82\"}", "\xef\xbb\xbf{}", "{} \xff", "{\"a\":1}\x0b", "{\x0b}",
	"{\"a\":\xc3\xa9}", "{\"a\":[}", "{\"a\":[1}", "{\"a\":{]}", "{\"a\":{\"b\":1]}",
};

static void
test_handwritten(void)
{
	json_t *o;

	for (size_t i = 0; i < sizeof(accept) / sizeof(accept[0]); i++) {
		ASSERT_TRUE(agree_str(accept[i]));
		if (vep_json_parse_object(accept[i], strlen(accept[i]), &o) != VEP_OK)
			HARNESS_FAIL("refused %s", accept[i]);
		json_decref(o);
	}
	for (size_t i = 0; i < sizeof(refuse) / sizeof(refuse[0]); i++) {
		ASSERT_TRUE(agree_str(refuse[i]));
		if (vep_json_parse_object(refuse[i], strlen(refuse[i]), &o) == VEP_OK)
			HARNESS_FAIL("accepted %s", refuse[i]);
	}
}

static const unsigned char tails[] = { 0x00, 0x22, 0x41, 0x5c, 0x7f, 0x80, 0x8f, 0x90,
				       0x9f, 0xa0, 0xbf, 0xc0, 0xff };

/* b1 followed by two and by three bytes of tails (the last from the
 * continuation bytes among them). */
static int
agree_long_forms(unsigned b1)
{
	char t[32];
	int n, ok = 1;

	for (size_t i = 0; i < sizeof(tails); i++) {
		for (size_t j = 0; j < sizeof(tails); j++) {
			n = snprintf(t, sizeof(t), "{\"k\":\"%c%c%c\"}", b1, tails[i], tails[j]);
			ok &= agree(t, (size_t)n);
			for (size_t k = 5; k < 11; k++) {
				n = snprintf(t, sizeof(t), "{\"k\":\"%c%c%c%c\"}", b1, tails[i],
				    tails[j], tails[k]);
				ok &= agree(t, (size_t)n);
			}
		}
	}
	return ok;
}

/* Every two-byte string of a byte over 0x7f and any second byte, and the
 * boundaries of three- and four-byte forms, in a value and in a key. */
static void
test_utf8(void)
{
	char t[32];
	int n;

	for (unsigned b1 = 0x80; b1 <= 0xff; b1++) {
		for (unsigned b2 = 0; b2 <= 0xff; b2++) {
			n = snprintf(t, sizeof(t), "{\"k\":\"x%c%cy\"}", b1, b2);
			ASSERT_TRUE(agree(t, (size_t)n));
			n = snprintf(t, sizeof(t), "{\"%c%c\":1}", b1, b2);
			ASSERT_TRUE(agree(t, (size_t)n));
		}
		ASSERT_TRUE(agree_long_forms(b1));
	}
}

static void
test_escapes(void)
{
	static const char *const u[] = { "0000", "0001", "001f", "0020", "0022", "005c", "007f",
					 "0080", "07ff", "0800", "d7ff", "d800", "dbff", "DBFF",
					 "dc00", "DC00", "dfff", "e000", "fffe", "ffff", "FFFF",
					 "00e9", "00E9", "12g4", "12", "" };
	static const char e[] = "\"\\/bfnrtuxa0' U";
	const size_t nu = sizeof(u) / sizeof(u[0]);
	char t[64];

	for (size_t i = 0; i < nu; i++) {
		snprintf(t, sizeof(t), "{\"k\":\"\\u%s\"}", u[i]);
		ASSERT_TRUE(agree_str(t));
		snprintf(t, sizeof(t), "{\"\\u%s\":0}", u[i]);
		ASSERT_TRUE(agree_str(t));
		for (size_t j = 0; j < nu; j++) {
			snprintf(t, sizeof(t), "{\"k\":\"a\\u%s\\u%sb\"}", u[i], u[j]);
			ASSERT_TRUE(agree_str(t));
		}
	}
	for (size_t i = 0; i < sizeof(e) - 1; i++) {
		snprintf(t, sizeof(t), "{\"k\":\"\\%c\"}", e[i]);
		ASSERT_TRUE(agree_str(t));
		snprintf(t, sizeof(t), "{\"k\":\"\\ud800\\%c\"}", e[i]);
		ASSERT_TRUE(agree_str(t));
	}
}

static const char *const templates[] = {
	"{\"a\":[1,-2.5e3,true,null,\"x\\n\"],\"b\":{}}",
	"{\"\\u00e9\":{\"k\":\"\xc3\xa9\\t\"},\"n\":-0.0E+1}",
	"{\"pubkey\":{\"algorithm\":\"RS\",\"n\":\"90\",\"e\":\"3\"},\"duration\":3600}",
};

/* Each byte value put in place of, and in front of, every byte of each
 * template, and each byte left out. */
static void
test_every_byte_everywhere(void)
{
	char t[128];

	for (size_t k = 0; k < sizeof(templates) / sizeof(templates[0]); k++) {
		const char *s = templates[k];
		size_t n = strlen(s);

		ASSERT_TRUE(agree(s, n));
		for (size_t i = 0; i < n; i++) {
			for (unsigned c = 0; c <= 0xff; c++) {
				memcpy(t, s, n);
				t[i] = (char)c;
				ASSERT_TRUE(agree(t, n));
				memcpy(t, s, i);
				t[i] = (char)c;
				memcpy(t + i + 1, s + i, n - i);
				ASSERT_TRUE(agree(t, n + 1));
			}
			memcpy(t, s, i);
			memcpy(t + i, s + i + 1, n - i - 1);
			ASSERT_TRUE(agree(t, n - 1));
		}
	}
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static unsigned
rnd(unsigned n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (unsigned)(rng % n);
}

struct text {
	char b[4096];
	size_t n;
};

static void
put(struct text *t, const char *s)
{
	size_t n = strlen(s);

	if (t->n + n < sizeof(t->b)) {
		memcpy(t->b + t->n, s, n);
		t->n += n;
	}
}

static void gen_value(struct text *t, int depth);

static void
gen_string(struct text *t)
{
	static const char *const bits[] = { "a", "Z", "0", " ", "\\n", "\\\"", "\\\\", "\\/",
					    "\\u00e9", "\\ud83d\\ude00", "\xc3\xa9", "\xe2\x82\xac",
					    "\xf0\x9f\x98\x80", "-", "_", "\\u0041" };
	unsigned n = rnd(6);

	put(t, "\"");
	while (n-- > 0)
		put(t, bits[rnd(sizeof(bits) / sizeof(bits[0]))]);
	put(t, "\"");
}

static void
gen_value(struct text *t, int depth)
{
	static const char *const atoms[] = { "0", "-0", "1", "-17", "3.25", "-1e3", "2E-2",
					     "1.5e+10", "9223372036854775807", "true", "false",
					     "null" };
	unsigned kind = rnd(depth > 3 ? 2 : 4), n;

	if (kind == 0) {
		gen_string(t);
	} else if (kind == 1) {
		put(t, atoms[rnd(sizeof(atoms) / sizeof(atoms[0]))]);
	} else if (kind == 2) {
		put(t, "[");
		for (n = rnd(4); n > 0; n--) {
			gen_value(t, depth + 1);
			if (n > 1)
				put(t, rnd(8) == 0 ? " , " : ",");
		}
		put(t, "]");
	} else {
		put(t, "{");
		for (n = rnd(4); n > 0; n--) {
			gen_string(t);
			put(t, rnd(8) == 0 ? " : " : ":");
			gen_value(t, depth + 1);
			if (n > 1)
				put(t, ",");
		}
		put(t, "}");
	}
}

/* Random objects, whole and with one to three bytes changed, put in or
 * left out. */
static void
test_random(void)
{
	static const char noise[] = "{}[]:,\"\\ .-+eE0123456789tfnaulrsx\n\x80\xc3\xa9\xff";
	struct text t;
	json_t *o;
	int before = accepted, whole = 0;

	for (int i = 0; i < 20000; i++) {
		t.n = 0;
		put(&t, "{");
		for (unsigned n = rnd(4); n > 0; n--) {
			gen_string(&t);
			put(&t, ":");
			gen_value(&t, 1);
			if (n > 1)
				put(&t, ",");
		}
		put(&t, "}");
		ASSERT_TRUE(agree(t.b, t.n));
		if (vep_json_parse_object(t.b, t.n, &o) == VEP_OK)
			whole++;
		json_decref(o);
		for (unsigned m = rnd(3) + 1; m > 0 && t.n > 0 && t.n + 1 < sizeof(t.b); m--) {
			size_t at = rnd((unsigned)t.n);
			char c = noise[rnd(sizeof(noise) - 1)];

			switch (rnd(3)) {
			case 0:
				t.b[at] = c;
				break;
			case 1:
				memmove(t.b + at + 1, t.b + at, t.n - at);
				t.b[at] = c;
				t.n++;
				break;
			default:
				memmove(t.b + at, t.b + at + 1, t.n - at - 1);
				t.n--;
				break;
			}
		}
		ASSERT_TRUE(agree(t.b, t.n));
	}
	/* Not vacuous: most whole texts are objects (some repeat a key), some
	 * damaged ones still are, most are not. */
	ASSERT_TRUE(whole > 18000);
	ASSERT_TRUE(accepted - before - whole > 300);
	ASSERT_TRUE(accepted - before - whole < 5000);
}

/* jansson refuses a value nested deeper than JSON_PARSER_MAX_DEPTH (the
 * outer object is depth 1). */
static void
test_depth(void)
{
	size_t cap = 6 * JSON_PARSER_MAX_DEPTH + 64, n;
	char *t = malloc(cap);
	int rc;
	json_t *o;

	ASSERT_TRUE(t != NULL);
	for (size_t k = JSON_PARSER_MAX_DEPTH - 3; k <= JSON_PARSER_MAX_DEPTH + 1; k++) {
		/* k arrays in the object, empty or with a number inside */
		for (int inner = 0; inner < 2; inner++) {
			n = (size_t)snprintf(t, cap, "{\"a\":");
			memset(t + n, '[', k);
			n += k;
			if (inner)
				t[n++] = '7';
			memset(t + n, ']', k);
			n += k;
			t[n++] = '}';
			if (!agree(t, n)) {
				free(t);
				ASSERT_TRUE(0);
			}
			rc = vep_json_parse_object(t, n, &o);
			json_decref(o);
			if (rc != ((k + 1 + (size_t)inner <= JSON_PARSER_MAX_DEPTH) ?
			    VEP_OK : VEP_ERR_INVALID)) {
				free(t);
				ASSERT_TRUE(0);
			}
		}
		/* k objects, the outer one included */
		n = 0;
		for (size_t i = 1; i < k; i++)
			n += (size_t)snprintf(t + n, cap - n, "{\"a\":");
		n += (size_t)snprintf(t + n, cap - n, "{}");
		memset(t + n, '}', k - 1);
		n += k - 1;
		if (!agree(t, n)) {
			free(t);
			ASSERT_TRUE(0);
		}
	}
	free(t);
}

/* Long texts: a string of 60,000 bytes (plain, then escaped, then UTF-8),
 * a number of 300 digits, and the size limit. */
static void
test_long(void)
{
	size_t cap = VEP_JSON_MAX_BYTES + 16, n;
	char *t = malloc(cap);
	json_t *o;

	ASSERT_TRUE(t != NULL);
	for (int kind = 0; kind < 3; kind++) {
		n = (size_t)snprintf(t, cap, "{\"s\":\"");
		while (n < 60000)
			n += (size_t)snprintf(t + n, cap - n, "%s",
			    kind == 0 ? "abcd" : kind == 1 ? "\\n\\u00e9" : "\xc3\xa9");
		n += (size_t)snprintf(t + n, cap - n, "\",\"n\":1");
		memset(t + n, '0', 300);
		n += 300;
		t[n++] = '.';
		memset(t + n, '5', 300);
		n += 300;
		t[n++] = '}';
		if (!agree(t, n)) {
			free(t);
			ASSERT_TRUE(0);
		}
	}
	n = (size_t)snprintf(t, cap, "{\"s\":\"");
	memset(t + n, 'x', VEP_JSON_MAX_BYTES - n - 2);
	n = VEP_JSON_MAX_BYTES - 2;
	t[n++] = '"';
	t[n++] = '}';
	if (vep_json_parse_object(t, n, &o) != VEP_OK) {
		free(t);
		ASSERT_TRUE(0);
	}
	json_decref(o);
	memmove(t + 1, t, n);
	t[0] = ' ';
	if (vep_json_parse_object(t, n + 1, &o) != VEP_ERR_TOOBIG || o != NULL) {
		free(t);
		ASSERT_TRUE(0);
	}
	free(t);
}

/* Decoded keys wait in the reader's scratch space while their values,
 * with decoded strings of their own, are read: each key must come out as
 * it was written. */
static void
test_decoded_keys(void)
{
	const char *t = "{\"\\u00e9\":{\"\\u00e8\":[\"\\n\",{\"\\u00e0\":\"\\t\"}],"
	    "\"x\\u00ff\":\"\\\"\"},\"\\u00ea\":\"\\u00eb\"}";
	json_t *o = NULL, *in;

	ASSERT_TRUE(agree_str(t));
	ASSERT_EQ(vep_json_parse_object(t, strlen(t), &o), VEP_OK);
	in = json_object_get(o, "\xc3\xa9");
	ASSERT_TRUE(json_is_object(in));
	ASSERT_TRUE(json_is_array(json_object_get(in, "\xc3\xa8")));
	ASSERT_STREQ(json_string_value(json_object_get(in, "x\xc3\xbf")), "\"");
	ASSERT_STREQ(json_string_value(json_object_get(o, "\xc3\xaa")), "\xc3\xab");
	json_decref(o);
}

static void
test_arguments(void)
{
	json_t *o = (json_t *)1;

	ASSERT_EQ(vep_json_parse_object(NULL, 0, &o), VEP_ERR_ARG);
	ASSERT_TRUE(o == NULL);
	ASSERT_EQ(vep_json_parse_object("{}", 2, NULL), VEP_ERR_ARG);
	ASSERT_EQ(vep_json_parse_object("{}\0", 3, &o), VEP_ERR_INVALID);
	ASSERT_TRUE(o == NULL);
}

int
main(void)
{
	RUN(test_arguments);
	RUN(test_handwritten);
	RUN(test_utf8);
	RUN(test_escapes);
	RUN(test_every_byte_everywhere);
	RUN(test_random);
	RUN(test_depth);
	RUN(test_long);
	RUN(test_decoded_keys);
	printf("%d texts compared, %d accepted by both\n", cases, accepted);
	return harness_done();
}
