/* test_authority_config.c - authority/core/config.c: the listen parser, defaults,
 * loading and messages (the CLI side is in tests/integration/test_config.py). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/config.h"
#include "err.h"
#include "harness.h"
#include "core/fixed_limits.h"

static void
test_listen(void)
{
	char host[64];
	unsigned port = 1;

	ASSERT_EQ(config_parse_listen("127.0.0.1:0", host, sizeof(host), &port), 0);
	ASSERT_STREQ(host, "127.0.0.1");
	ASSERT_EQ(port, 0);
	ASSERT_EQ(config_parse_listen("[::1]:8080", host, sizeof(host), &port), 0);
	ASSERT_STREQ(host, "::1");
	ASSERT_EQ(port, 8080);
	ASSERT_EQ(config_parse_listen("0.0.0.0:65535", host, sizeof(host), &port), 0);
	ASSERT_TRUE(config_parse_listen("0.0.0.0:65536", host, sizeof(host), &port) != 0);
	ASSERT_TRUE(config_parse_listen("localhost:80", host, sizeof(host), &port) != 0);
	ASSERT_TRUE(config_parse_listen("::1:80", host, sizeof(host), &port) != 0);
	ASSERT_TRUE(config_parse_listen("[::1]80", host, sizeof(host), &port) != 0);
	ASSERT_TRUE(config_parse_listen("1.2.3.4:", host, sizeof(host), &port) != 0);
	ASSERT_TRUE(config_parse_listen("1.2.3.4:+1", host, sizeof(host), &port) != 0);
	ASSERT_TRUE(config_parse_listen(":80", host, sizeof(host), &port) != 0);
	ASSERT_TRUE(config_parse_listen(NULL, host, sizeof(host), &port) != 0);
}

static void
test_defaults(void)
{
	struct config *cfg = config_new();

	ASSERT_TRUE(cfg != NULL);
	ASSERT_STREQ(cfg->listen, "127.0.0.1:8080");
	/* The defaults of authority/CONFIG.md, from core/config.c's table
	 * alone (nothing else holds them). */
	ASSERT_EQ(cfg->max_age_s, 300);
	ASSERT_EQ(cfg->request_timeout_s, 30);
	ASSERT_STREQ(cfg->pam_service, "vep-authority");
	ASSERT_EQ(cfg->pam_timeout_s, 10);
	ASSERT_EQ(cfg->pam_min_uid, 1000);
	ASSERT_EQ(cfg->log_level, LOGL_INFO);
	ASSERT_EQ(cfg->ndomains, 0);
	ASSERT_EQ(config_add_domain(cfg, "Example.COM", "/k"), 0);
	ASSERT_TRUE(config_find_domain(cfg, "example.com") != NULL);
	ASSERT_EQ(config_add_domain(cfg, "example.com", "/k"), VEP_ERR_EXISTS);
	ASSERT_EQ(config_add_domain(cfg, "bad_domain", "/k"), VEP_ERR_INVALID);
	ASSERT_EQ(config_add_domain(cfg, "b.example", "relative"), VEP_ERR_INVALID);
	config_free(cfg);
	config_free(NULL);
}

static int
load_text(const char *text, struct config **cfg, char *err, size_t errlen)
{
	char path[] = "/tmp/vep-cfg-XXXXXX";
	int fd = mkstemp(path), rc;

	if (fd < 0)
		return -100;
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text)) {
		close(fd);
		return -100;
	}
	close(fd);
	rc = config_load(path, cfg, err, errlen);
	unlink(path);
	return rc;
}

static void
test_load(void)
{
	struct config *cfg = NULL;
	char err[512];

	ASSERT_EQ(load_text("max_age = 0\nrequest_timeout = 600\n[domain a.example]\n"
	    "key_dir = /k\npublic_url = HTTPS://Id.A.example/\n[domain b.example]\n"
	    "key_dir = rel\n", &cfg, err, sizeof(err)), 0);
	ASSERT_EQ(cfg->max_age_s, 0);
	ASSERT_EQ(cfg->request_timeout_s, 600);
	ASSERT_EQ(cfg->ndomains, 2);
	ASSERT_STREQ(cfg->domains[0].public_url, "https://id.a.example");
	ASSERT_EQ(cfg->domains[0].line, 3);
	ASSERT_EQ(cfg->domains[0].key_dir_line, 4);
	ASSERT_STREQ(cfg->domains[1].key_dir, "/tmp/rel");
	ASSERT_TRUE(cfg->domains[1].public_url == NULL);
	config_free(cfg);

	ASSERT_EQ(load_text("\nmax_age = 86401\n[domain a.example]\nkey_dir = /k\n", &cfg,
	    err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_TRUE(cfg == NULL);
	ASSERT_TRUE(strstr(err, ":2: key 'max_age': must be an integer from 0 to 86400") != NULL);
	ASSERT_EQ(load_text("[domain a.example]\n", &cfg, err, sizeof(err)), VEP_ERR_INVALID);
	ASSERT_TRUE(strstr(err, ":1: key 'key_dir': missing in [domain a.example]") != NULL);
}

static void
test_set_override(void)
{
	struct config *cfg = config_new();
	char err[256];

	ASSERT_EQ(config_set(cfg, "--listen", "listen", "[::]:0", err, sizeof(err)), 0);
	ASSERT_STREQ(cfg->listen, "[::]:0");
	ASSERT_TRUE(config_set(cfg, "--listen", "listen", "x", err, sizeof(err)) != 0);
	ASSERT_TRUE(strstr(err, "--listen: key 'listen'") != NULL);
	ASSERT_TRUE(config_set(cfg, "--x", "key_dir", "/k", err, sizeof(err)) != 0);
	ASSERT_TRUE(config_set(cfg, "--state", "state_dir", "rel", err, sizeof(err)) != 0);
	config_free(cfg);
}

int
main(void)
{
	RUN(test_listen);
	RUN(test_defaults);
	RUN(test_load);
	RUN(test_set_override);
	return harness_done();
}
