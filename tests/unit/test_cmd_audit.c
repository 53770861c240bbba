/*
 * test_cmd_audit.c - `vep-keytool audit` against a real database: the
 * --since time grammar, text and JSON Lines output, --email/--since/--limit
 * filters (--limit: the newest rows; --email: an address or an account
 * name), audit prune, control characters neutralised in text output, the read-only
 * open (no migration of a missing or older database), and usage errors.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <time.h>

#include <jansson.h>

#include "cmd_audit.h"
#include "state.h"
#include "store/db.h"
#include "store/audit.h"
#include "audit_testutil.h"
#include "db_testutil.h"
#include "harness.h"

static char *dir;

static const char fp[] =
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/* Runs cmd_audit on the NULL-terminated argument list with stdout
 * captured; returns its exit code and the output (malloc'd) in *out. The
 * arguments are copied: getopt may permute argv. */
static int
run(char **out, const char *arg0, ...)
{
	char *path = tu_path(dir, "stdout.txt"), *argv[16];
	const char *a;
	int argc = 0, saved, fd, rc, i;
	va_list ap;
	size_t len;

	va_start(ap, arg0);
	for (a = arg0; a != NULL && argc < 15; a = va_arg(ap, const char *))
		argv[argc++] = strdup(a);
	va_end(ap);
	argv[argc] = NULL;
	fflush(stdout);
	saved = dup(1);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (saved < 0 || fd < 0)
		abort();
	dup2(fd, 1);
	close(fd);
	rc = cmd_audit(argc, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	*out = (char *)tu_read_file(path, &len);
	if (*out != NULL)
		(*out)[len] = '\0';
	for (i = 0; i < argc; i++)
		free(argv[i]);
	free(path);
	return rc;
}

static int
count_lines(const char *s)
{
	int n = 0;

	for (; s != NULL && *s; s++)
		n += *s == '\n';
	return n;
}

static void
test_parse_time(void)
{
	int64_t t = -1, now = 1700000000;

	ASSERT_EQ(kt_state_parse_time("1700000000", now, &t), 0);
	ASSERT_EQ(t, 1700000000);
	ASSERT_EQ(kt_state_parse_time("0", now, &t), 0);
	ASSERT_EQ(t, 0);
	ASSERT_EQ(kt_state_parse_time("1h", now, &t), 0);
	ASSERT_EQ(t, now - 3600);
	ASSERT_EQ(kt_state_parse_time("7d", now, &t), 0);
	ASSERT_EQ(t, now - 7 * 86400);
	ASSERT_EQ(kt_state_parse_time("90m", now, &t), 0);
	ASSERT_EQ(t, now - 5400);
	ASSERT_EQ(kt_state_parse_time("30s", now, &t), 0);
	ASSERT_EQ(t, now - 30);
	ASSERT_EQ(kt_state_parse_time("2w", now, &t), 0);
	ASSERT_EQ(t, now - 14 * 86400);
	ASSERT_EQ(kt_state_parse_time("2023-11-14T22:13:20Z", now, &t), 0);
	ASSERT_EQ(t, 1700000000);
	ASSERT_EQ(kt_state_parse_time("2023-11-14T22:13:20", now, &t), 0);
	ASSERT_EQ(t, 1700000000);
	ASSERT_EQ(kt_state_parse_time("2023-11-14T22:13Z", now, &t), 0);
	ASSERT_EQ(t, 1700000000 - 20);
	ASSERT_EQ(kt_state_parse_time("2023-11-14", now, &t), 0);
	ASSERT_EQ(t, 1699920000);
	ASSERT_EQ(kt_state_parse_time("9999-12-31T23:59:59Z", now, &t), 0);
	ASSERT_EQ(t, KT_STATE_TIME_MAX_S);

	ASSERT_EQ(kt_state_parse_time("", now, &t), VEP_ERR_INVALID);
	ASSERT_EQ(t, 0);
	ASSERT_EQ(kt_state_parse_time("h", now, &t), VEP_ERR_INVALID);
	ASSERT_EQ(kt_state_parse_time("1y", now, &t), VEP_ERR_INVALID);
	ASSERT_EQ(kt_state_parse_time("-1h", now, &t), VEP_ERR_INVALID);
	ASSERT_EQ(kt_state_parse_time("1.5h", now, &t), VEP_ERR_INVALID);
	ASSERT_EQ(kt_state_parse_time("99999999d", now, &t), VEP_ERR_INVALID);
	ASSERT_EQ(kt_state_parse_time("253402300800", now, &t), VEP_ERR_INVALID);
	ASSERT_EQ(kt_state_parse_time("2023-02-30", now, &t), VEP_ERR_INVALID);
	ASSERT_EQ(kt_state_parse_time("2023-11-14T25:00:00Z", now, &t), VEP_ERR_INVALID);
	ASSERT_EQ(kt_state_parse_time("2023-11-14T22:13:20+02:00", now, &t), VEP_ERR_INVALID);
	ASSERT_EQ(kt_state_parse_time("23-11-14", now, &t), VEP_ERR_INVALID);
	ASSERT_EQ(kt_state_parse_time("yesterday", now, &t), VEP_ERR_INVALID);
}

static void
test_output(void)
{
	struct db *db = NULL;
	char *out = NULL;
	int64_t now_ms = (int64_t)time(NULL) * 1000;
	json_error_t jerr;
	json_t *o;
	char *nl;

	ASSERT_EQ(db_open(dir, NULL, &db), 0);
	ASSERT_EQ(tu_audit_login(db, now_ms - 3 * 3600000, 0, "evil\033[2Jname", "192.0.2.66",
	    "bad_password"), 0);
	ASSERT_EQ(tu_audit_login(db, now_ms - 60000, 1, "alice@example.com", "192.0.2.1", "ok"), 0);
	ASSERT_EQ(tu_audit_cert(db, now_ms - 50000, "alice@example.com", fp, now_ms - 60000,
	    now_ms + 3600000, "192.0.2.1"), 0);
	db_close(db);

	ASSERT_EQ(run(&out, "audit", "--state", dir, (char *)NULL), 0);
	ASSERT_EQ(count_lines(out), 3);
	ASSERT_TRUE(strstr(out, "login_failure") != NULL);
	ASSERT_TRUE(strstr(out, "evil?[2Jname") != NULL);
	ASSERT_TRUE(strchr(out, '\033') == NULL);
	ASSERT_TRUE(strstr(out, fp) != NULL);
	ASSERT_TRUE(strstr(out, "cert_issued") != NULL);
	free(out);

	ASSERT_EQ(run(&out, "audit", "--state", dir, "--email", "alice@example.com",
	    (char *)NULL), 0);
	ASSERT_EQ(count_lines(out), 2);
	ASSERT_TRUE(strstr(out, "evil") == NULL);
	free(out);

	ASSERT_EQ(run(&out, "audit", "--state", dir, "--since", "1h", (char *)NULL), 0);
	ASSERT_EQ(count_lines(out), 2);
	free(out);

	/* --limit keeps the newest rows, printed oldest first. */
	ASSERT_EQ(run(&out, "audit", "--state", dir, "--limit", "2", (char *)NULL), 0);
	ASSERT_EQ(count_lines(out), 2);
	ASSERT_TRUE(strstr(out, "evil") == NULL);
	ASSERT_TRUE(strstr(out, "login_success") != NULL);
	ASSERT_TRUE(strstr(out, "login_success") < strstr(out, "cert_issued"));
	free(out);
	ASSERT_EQ(run(&out, "audit", "--state", dir, "--limit", "1", (char *)NULL), 0);
	ASSERT_EQ(count_lines(out), 1);
	ASSERT_TRUE(strstr(out, "cert_issued") != NULL);
	free(out);

	ASSERT_EQ(run(&out, "audit", "--state", dir, "--json", "--email", "alice@example.com",
	    (char *)NULL), 0);
	ASSERT_EQ(count_lines(out), 2);
	nl = strchr(out, '\n');
	ASSERT_TRUE(nl != NULL);
	o = json_loads(nl + 1, JSON_DISABLE_EOF_CHECK, &jerr);
	ASSERT_TRUE(o != NULL);
	ASSERT_STREQ(json_string_value(json_object_get(o, "event")), "cert_issued");
	ASSERT_STREQ(json_string_value(json_object_get(o, "email")), "alice@example.com");
	ASSERT_STREQ(json_string_value(json_object_get(o, "key_fingerprint")), fp);
	ASSERT_EQ(json_integer_value(json_object_get(o, "exp_ms")), now_ms + 3600000);
	ASSERT_EQ(json_integer_value(json_object_get(o, "ts_ms")), now_ms - 50000);
	ASSERT_TRUE(json_is_string(json_object_get(o, "time")));
	json_decref(o);
	o = json_loads(out, JSON_DISABLE_EOF_CHECK, &jerr);
	ASSERT_TRUE(o != NULL);
	ASSERT_TRUE(json_is_null(json_object_get(o, "key_fingerprint")));
	ASSERT_TRUE(json_is_null(json_object_get(o, "iat_ms")));
	json_decref(o);
	free(out);
}

/* --email with an account name; audit prune. Runs after test_output, on
 * its three rows (one 3 h old, two within the last minutes). */
static void
test_account_and_prune(void)
{
	char *empty = tu_path(dir, "empty-prune");
	struct db *db = NULL;
	char *out = NULL;
	int64_t now_ms = (int64_t)time(NULL) * 1000;

	ASSERT_EQ(db_open(dir, NULL, &db), 0);
	ASSERT_EQ(tu_audit_login(db, now_ms - 40000, 0, "alice", "192.0.2.1", "bad_password"), 0);
	ASSERT_EQ(tu_audit_login(db, now_ms - 30000, 1, "alice@example.org", "192.0.2.1", "ok"),
	    0);
	ASSERT_EQ(tu_audit_login(db, now_ms - 20000, 1, "alice.b@example.com", "192.0.2.1",
	    "ok"), 0);
	db_close(db);

	/* An account name: itself and the addresses whose local part it is. */
	ASSERT_EQ(run(&out, "audit", "--state", dir, "--email", "alice", (char *)NULL), 0);
	ASSERT_EQ(count_lines(out), 4);
	ASSERT_TRUE(strstr(out, "alice.b") == NULL);
	ASSERT_TRUE(strstr(out, "alice@example.org") != NULL);
	free(out);
	/* An address: exactly itself. */
	ASSERT_EQ(run(&out, "audit", "--state", dir, "--email", "alice@example.org",
	    (char *)NULL), 0);
	ASSERT_EQ(count_lines(out), 1);
	free(out);
	ASSERT_EQ(run(&out, "audit", "--state", dir, "--email", "alice", "--limit", "1",
	    (char *)NULL), 0);
	ASSERT_EQ(count_lines(out), 1);
	ASSERT_TRUE(strstr(out, "alice@example.org") != NULL);
	free(out);

	/* The default retention (a year) keeps everything here. */
	ASSERT_EQ(run(&out, "audit", "prune", "--state", dir, (char *)NULL), 0);
	ASSERT_TRUE(strstr(out, "deleted 0 audit rows") != NULL);
	free(out);
	ASSERT_EQ(run(&out, "audit", "prune", "--state", dir, "--before", "2h", (char *)NULL), 0);
	ASSERT_TRUE(strstr(out, "deleted 1 audit row ") != NULL);
	free(out);
	ASSERT_EQ(run(&out, "audit", "--state", dir, (char *)NULL), 0);
	ASSERT_EQ(count_lines(out), 5);
	ASSERT_TRUE(strstr(out, "evil") == NULL);
	free(out);
	ASSERT_EQ(run(&out, "audit", "prune", "--state", dir, "--before", "soon", (char *)NULL),
	    2);
	free(out);
	ASSERT_EQ(run(&out, "audit", "prune", "--state", dir, "extra", (char *)NULL), 2);
	free(out);
	ASSERT_EQ(run(&out, "audit", "prune", "--help", (char *)NULL), 0);
	ASSERT_TRUE(strstr(out, "365d") != NULL);
	free(out);
	/* Pruning never creates a database. */
	ASSERT_EQ(mkdir(empty, 0700), 0);
	ASSERT_EQ(run(&out, "audit", "prune", "--state", empty, (char *)NULL), 2);
	free(out);
	{
		char *dbfile = tu_path(empty, DB_FILE_NAME);

		ASSERT_TRUE(access(dbfile, F_OK) != 0);
		free(dbfile);
	}
	tu_rmdir(empty);
}

static void
test_usage_and_readonly(void)
{
	char *empty = tu_path(dir, "empty");
	char *out = NULL;

	ASSERT_EQ(run(&out, "audit", (char *)NULL), 2);
	free(out);
	ASSERT_EQ(run(&out, "audit", "--state", dir, "--since", "soon", (char *)NULL), 2);
	free(out);
	ASSERT_EQ(run(&out, "audit", "--state", dir, "--limit", "0", (char *)NULL), 2);
	free(out);
	ASSERT_EQ(run(&out, "audit", "--state", dir, "extra", (char *)NULL), 2);
	free(out);
	ASSERT_EQ(run(&out, "audit", "--bogus", (char *)NULL), 2);
	free(out);
	ASSERT_EQ(run(&out, "audit", "--help", (char *)NULL), 0);
	ASSERT_TRUE(strstr(out, "--state DIR") != NULL);
	free(out);
	/* A state directory without a database: an error, and no file made. */
	ASSERT_EQ(mkdir(empty, 0700), 0);
	ASSERT_EQ(run(&out, "audit", "--state", empty, (char *)NULL), 2);
	free(out);
	{
		char *dbfile = tu_path(empty, DB_FILE_NAME);

		ASSERT_TRUE(access(dbfile, F_OK) != 0);
		free(dbfile);
	}
	tu_rmdir(empty);
}

int
main(void)
{
	if ((dir = tu_mkdtemp()) == NULL)
		return 77;
	RUN(test_parse_time);
	RUN(test_output);
	RUN(test_account_and_prune);
	RUN(test_usage_and_readonly);
	tu_rmdir(dir);
	return harness_done();
}
