/* test_authority_log.c - authority/core/log.c: levels and escaping of untrusted text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/fixed_limits.h"
#include "core/log.h"

static void
test_escape_controls(void)
{
	char out[LOG_ESCAPE_BUFSZ];

	log_escape(out, sizeof(out), "a\nb\"c\\d\x7f\xc3", 9);
	ASSERT_STREQ(out, "a\\x0ab\\x22c\\x5cd\\x7f\\xc3");
	log_escape(out, sizeof(out), NULL, 0);
	ASSERT_STREQ(out, "-");
}

static void
test_escape_truncates_at_limit(void)
{
	char in[LIMIT_LOG_FIELD_CHARS + 50], out[LOG_ESCAPE_BUFSZ];

	memset(in, 'x', sizeof(in));
	log_escape(out, sizeof(out), in, LIMIT_LOG_FIELD_CHARS);
	ASSERT_EQ(strlen(out), LIMIT_LOG_FIELD_CHARS);
	log_escape(out, sizeof(out), in, LIMIT_LOG_FIELD_CHARS + 1);
	ASSERT_EQ(strlen(out), LIMIT_LOG_FIELD_CHARS + 3);
	ASSERT_STREQ(out + LIMIT_LOG_FIELD_CHARS, "...");
	/* All escapes at the limit still fit the documented buffer. */
	memset(in, '\n', sizeof(in));
	log_escape(out, sizeof(out), in, sizeof(in));
	ASSERT_EQ(strlen(out), 4 * LIMIT_LOG_FIELD_CHARS + 3);
}

static void
test_escape_small_buffer(void)
{
	char out[10];

	log_escape(out, sizeof(out), "abcdefghijkl", 12);
	ASSERT_TRUE(strlen(out) < sizeof(out));
	ASSERT_TRUE(strstr(out, "...") != NULL);
}

static void
test_levels(void)
{
	enum log_level l = LOGL_ERROR;
	struct log lg;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ASSERT_EQ(log_level_parse("debug", &l), 0);
	ASSERT_EQ(l, LOGL_DEBUG);
	ASSERT_TRUE(log_level_parse("loud", &l) != 0);
	ASSERT_STREQ(log_level_name(LOGL_WARN), "warn");
	f = open_memstream(&buf, &len);
	ASSERT_TRUE(f != NULL);
	log_init(&lg, LOGL_WARN, f);
	log_info(&lg, "hidden %d", 1);
	log_warn(&lg, "shown %d", 2);
	fclose(f);
	ASSERT_TRUE(strstr(buf, "hidden") == NULL);
	ASSERT_TRUE(strstr(buf, "warn  shown 2\n") != NULL);
	ASSERT_TRUE(buf[4] == '-' && strchr(buf, 'Z') != NULL);
	free(buf);
}

int
main(void)
{
	RUN(test_escape_controls);
	RUN(test_escape_truncates_at_limit);
	RUN(test_escape_small_buffer);
	RUN(test_levels);
	return harness_done();
}
