/*
 * test_email.c - email, domain and host syntax (libvep/email.c): every rule
 * of email.h, its limits at and just past the boundary, and malformed input.
 */
#include <stdlib.h>
#include <string.h>

#include "email.h"
#include "err.h"
#include "harness.h"

static int
norm_ok(const char *s)
{
	char *out = NULL;
	int r = vep_email_normalize(s, strlen(s), &out);
	free(out);
	return r == 0;
}

static void
test_valid_addresses(void)
{
	static const char *const ok[] = {
		"alice@example.com", "a@b.co", "first.last@example.com",
		"x!#$%&'*+/=?^_`{|}~-y@example.com", "user+tag@sub.example.org",
		"1@123.example", "a@xn--bcher-kva.example", "a@a-b.example",
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		if (!norm_ok(ok[i]))
			fprintf(stderr, "rejected: %s\n", ok[i]);
		ASSERT_TRUE(norm_ok(ok[i]));
	}
}

static void
test_invalid_addresses(void)
{
	static const char *const bad[] = {
		"", "@", "alice", "alice@", "@example.com", "alice@@example.com",
		"a@b@example.com", ".alice@example.com", "alice.@example.com",
		"al..ice@example.com", "al ice@example.com", "alice@exa mple.com",
		"\"alice\"@example.com", "alice@localhost", "alice@example.com.",
		"alice@.example.com", "alice@example..com", "alice@-example.com",
		"alice@example-.com", "alice@exa_mple.com", "alice@[127.0.0.1]",
		"alice@127.0.0.1", "alice@example.123", "al(ice)@example.com",
		"al,ice@example.com", "alice@example.com\n", "al\tice@example.com",
		("al\x7f" "ice@example.com"), "al\xc3\xa9@example.com",
		"alice@ex\xc3\xa9.com", "alice@example.com:443", "alice\\@example.com",
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (norm_ok(bad[i]))
			fprintf(stderr, "accepted: %s\n", bad[i]);
		ASSERT_TRUE(!norm_ok(bad[i]));
	}
}

static void
test_nul_byte(void)
{
	char *out = (char *)1;
	ASSERT_EQ(vep_email_normalize("alice@example.com\0x", 19, &out), VEP_ERR_EMAIL);
	ASSERT_TRUE(out == NULL);
	ASSERT_EQ(vep_email_normalize("ali\0ce@example.com", 18, &out), VEP_ERR_EMAIL);
	ASSERT_EQ(vep_email_normalize(NULL, 3, &out), VEP_ERR_EMAIL);
	ASSERT_EQ(vep_email_normalize("a@b.co", 6, NULL), VEP_ERR_ARG);
}

static void
test_normalize_lowercases_domain_only(void)
{
	char *out = NULL;
	const char *in = "Alice.Smith@EXAMPLE.Com";
	ASSERT_EQ(vep_email_normalize(in, strlen(in), &out), 0);
	ASSERT_STREQ(out, "Alice.Smith@example.com");
	free(out);
	/* Only len bytes count: a longer buffer is not read past len. */
	ASSERT_EQ(vep_email_normalize("bob@example.comXYZ", 15, &out), 0);
	ASSERT_STREQ(out, "bob@example.com");
	free(out);
}

static void
test_limits(void)
{
	char buf[400];
	/* Local part: 64 accepted, 65 refused. */
	memset(buf, 'a', VEP_EMAIL_LOCAL_MAX);
	strcpy(buf + VEP_EMAIL_LOCAL_MAX, "@example.com");
	ASSERT_TRUE(norm_ok(buf));
	memset(buf, 'a', VEP_EMAIL_LOCAL_MAX + 1);
	strcpy(buf + VEP_EMAIL_LOCAL_MAX + 1, "@example.com");
	ASSERT_TRUE(!norm_ok(buf));

	/* Label: 63 accepted, 64 refused. */
	strcpy(buf, "a@");
	memset(buf + 2, 'b', 63);
	strcpy(buf + 65, ".com");
	ASSERT_TRUE(norm_ok(buf));
	strcpy(buf, "a@");
	memset(buf + 2, 'b', 64);
	strcpy(buf + 66, ".com");
	ASSERT_TRUE(!norm_ok(buf));

	/* Domain: 253 accepted (labels of 63+1), 254 refused. */
	char dom[300];
	size_t n = 0;
	while (n + 64 <= VEP_DOMAIN_MAX) {
		memset(dom + n, 'd', 63);
		dom[n + 63] = '.';
		n += 64;
	}
	size_t rest = VEP_DOMAIN_MAX - n; /* 253 - 192 = 61 */
	memset(dom + n, 'e', rest);
	dom[n + rest] = '\0';
	ASSERT_EQ(strlen(dom), VEP_DOMAIN_MAX);
	ASSERT_TRUE(vep_domain_valid(dom));
	dom[n + rest] = 'e';
	dom[n + rest + 1] = '\0';
	ASSERT_TRUE(!vep_domain_valid(dom));

	/* Whole address: 254 accepted, 255 refused (domain stays valid). */
	char addr[320];
	dom[VEP_DOMAIN_MAX - 2] = '\0'; /* 251 chars */
	snprintf(addr, sizeof addr, "a@%s", dom);
	ASSERT_EQ(strlen(addr), 253);
	ASSERT_TRUE(norm_ok(addr));
	snprintf(addr, sizeof addr, "ab@%s", dom);
	ASSERT_EQ(strlen(addr), VEP_EMAIL_MAX);
	ASSERT_TRUE(norm_ok(addr));
	snprintf(addr, sizeof addr, "abc@%s", dom);
	ASSERT_EQ(strlen(addr), VEP_EMAIL_MAX + 1);
	ASSERT_TRUE(!norm_ok(addr));
}

static void
test_split(void)
{
	char *l = (char *)1, *d = (char *)1;
	ASSERT_EQ(vep_email_split("alice@example.com", &l, &d), 0);
	ASSERT_STREQ(l, "alice");
	ASSERT_STREQ(d, "example.com");
	free(l);
	free(d);
	l = d = (char *)1;
	ASSERT_EQ(vep_email_split("not-an-address", &l, &d), VEP_ERR_EMAIL);
	ASSERT_TRUE(l == NULL && d == NULL);
	ASSERT_EQ(vep_email_split(NULL, &l, &d), VEP_ERR_EMAIL);
	ASSERT_EQ(vep_email_split("a@b.co", NULL, &d), VEP_ERR_ARG);
}

static void
test_domain(void)
{
	ASSERT_TRUE(vep_domain_valid("example.com"));
	ASSERT_TRUE(vep_domain_valid("EXAMPLE.COM"));
	ASSERT_TRUE(!vep_domain_valid("localhost"));
	ASSERT_TRUE(!vep_domain_valid("[127.0.0.1]"));
	ASSERT_TRUE(!vep_domain_valid("[::1]"));
	ASSERT_TRUE(!vep_domain_valid("127.0.0.1"));
	ASSERT_TRUE(!vep_domain_valid("example.com:443"));
	ASSERT_TRUE(!vep_domain_valid("example.com."));
	ASSERT_TRUE(!vep_domain_valid(""));
	ASSERT_TRUE(!vep_domain_valid(NULL));

	char d[] = "Sub.EXAMPLE.com";
	vep_domain_lower(d);
	ASSERT_STREQ(d, "sub.example.com");
	vep_domain_lower(NULL);
}

static void
test_host(void)
{
	static const char *const ok[] = {
		"example.com", "example.com:8443", "localhost", "localhost:10001",
		"127.0.0.1", "127.0.0.1:1", "10.0.0.255:65535",
	};
	static const char *const bad[] = {
		"", ":80", "example.com:", "example.com:0", "example.com:65536",
		"example.com:080", "example.com:123456", "example.com:8a",
		"256.1.1.1", "1.2.3", "01.2.3.4", "1.2.3.4.5", "[::1]", "[::1]:80",
		"exa mple.com", "example.com/", "-localhost", "1234", "a:1:2",
		"user@example.com",
	};
	for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
		if (!vep_host_valid(ok[i]))
			fprintf(stderr, "rejected host: %s\n", ok[i]);
		ASSERT_TRUE(vep_host_valid(ok[i]));
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		if (vep_host_valid(bad[i]))
			fprintf(stderr, "accepted host: %s\n", bad[i]);
		ASSERT_TRUE(!vep_host_valid(bad[i]));
	}
	ASSERT_TRUE(!vep_host_valid(NULL));
}

int
main(void)
{
	RUN(test_valid_addresses);
	RUN(test_invalid_addresses);
	RUN(test_nul_byte);
	RUN(test_normalize_lowercases_domain_only);
	RUN(test_limits);
	RUN(test_split);
	RUN(test_domain);
	RUN(test_host);
	return harness_done();
}
