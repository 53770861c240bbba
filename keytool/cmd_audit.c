/*
 * cmd_audit.c - `vep-keytool audit`: print the audit trail (sign-ins and
 * issued certificates) from the authority's database, as text for a person
 * or as JSON Lines (one object per row) for a program.
 *
 * It opens the database read-only through store/db.h and must never write it,
 * migrate it or create files in the state directory (the authority may run
 * as another user). Stored strings came from the network (typed account
 * names): control characters are never written to a terminal as they are.
 */
#include <ctype.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cmd_audit.h"
#include "store/db.h"
#include "store/audit.h"
#include "err.h"

#define CMD_AUDIT_EXIT_OK 0
#define CMD_AUDIT_EXIT_USAGE 2
/* Room for one formatted time, with gcc's worst case for each int field. */
#define CMD_AUDIT_TIME_BUF 96

static const char cmd_audit_usage[] =
    "usage: vep-keytool audit --state DIR [--email ADDR] [--since TIME]\n"
    "                         [--limit N] [--json]\n"
    "Prints the audit trail of the authority whose state directory is DIR:\n"
    "sign-in successes and failures and issued certificates, oldest first.\n"
    "--email keeps the rows of one address or account name (exact match);\n"
    "--since TIME keeps rows at or after TIME: ISO-8601 UTC (2026-01-31,\n"
    "2026-01-31T12:00:00Z), epoch seconds, or an age such as 90m, 1h, 7d, 2w.\n"
    "--json prints one JSON object per line. The database is opened\n"
    "read-only.\n";

/* Seconds per unit of a relative age. */
static const struct {
	char unit;
	int64_t seconds;
} age_units[] = {
	{ 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 }, { 'w', 7 * 86400 },
};

/* Absolute formats strptime must consume entirely (UTC). */
static const char *const iso_formats[] = {
	"%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S",
	"%Y-%m-%dT%H:%MZ", "%Y-%m-%dT%H:%M",
	"%Y-%m-%d",
};

static int
parse_digits(const char *s, size_t len, int64_t max, int64_t *out)
{
	int64_t v = 0;
	size_t i;

	*out = 0;
	if (len == 0 || len > 18)
		return VEP_ERR_INVALID;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return VEP_ERR_INVALID;
		v = v * 10 + (s[i] - '0');
	}
	if (v > max)
		return VEP_ERR_INVALID;
	*out = v;
	return VEP_OK;
}

int
cmd_audit_parse_time(const char *s, int64_t now_s, int64_t *out_s)
{
	struct tm tm, back;
	int64_t n;
	size_t len, i;
	time_t t;

	if (out_s == NULL)
		return VEP_ERR_ARG;
	*out_s = 0;
	if (s == NULL || (len = strlen(s)) == 0)
		return VEP_ERR_INVALID;
	if (parse_digits(s, len, CMD_AUDIT_TIME_MAX_S, &n) == 0) {
		*out_s = n;
		return VEP_OK;
	}
	for (i = 0; i < sizeof(age_units) / sizeof(age_units[0]); i++) {
		if (s[len - 1] != age_units[i].unit)
			continue;
		if (parse_digits(s, len - 1, CMD_AUDIT_TIME_MAX_S / age_units[i].seconds,
		    &n) != 0 || n * age_units[i].seconds > now_s)
			return VEP_ERR_INVALID;
		*out_s = now_s - n * age_units[i].seconds;
		return VEP_OK;
	}
	for (i = 0; i < sizeof(iso_formats) / sizeof(iso_formats[0]); i++) {
		const char *end;

		memset(&tm, 0, sizeof(tm));
		end = strptime(s, iso_formats[i], &tm);
		if (end == NULL || *end != '\0')
			continue;
		/* strptime takes a 4-digit year loosely; insist on the form. */
		if (!isdigit((unsigned char)s[0]) || !isdigit((unsigned char)s[3]) ||
		    s[4] != '-')
			return VEP_ERR_INVALID;
		back = tm;
		if ((t = timegm(&tm)) == (time_t)-1 || t < 0 || t > CMD_AUDIT_TIME_MAX_S)
			return VEP_ERR_INVALID;
		/* timegm normalises 2026-02-30 to March: refuse such dates. */
		if (tm.tm_year != back.tm_year || tm.tm_mon != back.tm_mon ||
		    tm.tm_mday != back.tm_mday ||
		    tm.tm_hour != back.tm_hour || tm.tm_min != back.tm_min ||
		    tm.tm_sec != back.tm_sec)
			return VEP_ERR_INVALID;
		*out_s = (int64_t)t;
		return VEP_OK;
	}
	return VEP_ERR_INVALID;
}

/* ISO-8601 UTC with milliseconds. */
static void
format_ms(int64_t ms, char out[CMD_AUDIT_TIME_BUF])
{
	struct tm tm;
	time_t t = (time_t)(ms / 1000);

	if (ms < 0 || gmtime_r(&t, &tm) == NULL) {
		(void)snprintf(out, CMD_AUDIT_TIME_BUF, "(invalid time)");
		return;
	}
	(void)snprintf(out, CMD_AUDIT_TIME_BUF, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, (int)(ms % 1000));
}

/* Copies s for a terminal: control characters and DEL become '?'. */
static const char *
printable(const char *s, char *buf, size_t buflen)
{
	size_t i;

	if (s == NULL)
		return "-";
	for (i = 0; s[i] != '\0' && i + 1 < buflen; i++)
		buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

static int
print_text(const struct db_audit_row *r, void *arg)
{
	char when[CMD_AUDIT_TIME_BUF], iat[CMD_AUDIT_TIME_BUF], exp[CMD_AUDIT_TIME_BUF];
	char email[DB_AUDIT_TEXT_MAX + 1], client[DB_AUDIT_TEXT_MAX + 1];
	char outcome[DB_AUDIT_TEXT_MAX + 1];
	const char *ev = db_audit_event_name(r->event);

	(void)arg;
	format_ms(r->ts_ms, when);
	printf("%s %-13s %s from %s: %s", when, ev ? ev : "?",
	    printable(r->email, email, sizeof(email)),
	    printable(r->client_addr, client, sizeof(client)),
	    printable(r->outcome, outcome, sizeof(outcome)));
	if (r->key_fp != NULL)
		printf(" key %s", printable(r->key_fp, email, sizeof(email)));
	if (r->iat_ms != 0 || r->exp_ms != 0) {
		format_ms(r->iat_ms, iat);
		format_ms(r->exp_ms, exp);
		printf(" valid %s to %s", iat, exp);
	}
	putchar('\n');
	return ferror(stdout) ? VEP_ERR_IO : VEP_OK;
}

static json_t *
opt_int(int64_t v)
{
	return v != 0 ? json_integer(v) : json_null();
}

static int
print_json(const struct db_audit_row *r, void *arg)
{
	const char *ev = db_audit_event_name(r->event);
	char when[CMD_AUDIT_TIME_BUF];
	json_t *o;
	char *text;
	int ret;

	(void)arg;
	format_ms(r->ts_ms, when);
	o = json_pack("{s:I, s:s, s:I, s:s?, s:s, s:s, s:s, s:s?, s:o, s:o}",
	    "id", (json_int_t)r->id, "time", when, "ts_ms", (json_int_t)r->ts_ms,
	    "event", ev, "email", r->email, "client", r->client_addr,
	    "outcome", r->outcome, "key_fingerprint", r->key_fp,
	    "iat_ms", opt_int(r->iat_ms), "exp_ms", opt_int(r->exp_ms));
	if (o == NULL)
		return VEP_ERR_NOMEM;
	text = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
	if (text == NULL)
		return VEP_ERR_NOMEM;
	ret = puts(text) < 0 ? VEP_ERR_IO : VEP_OK;
	free(text);
	return ret;
}

int
cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "email", required_argument, NULL, 'e' },
		{ "since", required_argument, NULL, 't' },
		{ "limit", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct db_options dbo = { .readonly = 1 };
	struct db_audit_filter f = { 0 };
	const char *state = NULL;
	struct db *db = NULL;
	int64_t since_s = 0, limit = 0;
	int c, json = 0, ret = CMD_AUDIT_EXIT_USAGE, err;

	optind = 0;   /* GNU: restart the scan (the test calls us repeatedly) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+s:e:t:n:jh", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			state = optarg;
			break;
		case 'e':
			f.email = optarg;
			break;
		case 't':
			if (cmd_audit_parse_time(optarg, (int64_t)time(NULL), &since_s) != 0) {
				fprintf(stderr, "vep-keytool audit: --since: not a time: %s\n"
				    "  (use 2026-01-31T12:00:00Z, epoch seconds, or 1h, 7d)\n",
				    optarg);
				goto out;
			}
			break;
		case 'n':
			if (parse_digits(optarg, strlen(optarg), INT64_MAX / 2, &limit) != 0 ||
			    limit == 0) {
				fprintf(stderr,
				    "vep-keytool audit: --limit: not a positive number\n");
				goto out;
			}
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			fputs(cmd_audit_usage, stdout);
			ret = CMD_AUDIT_EXIT_OK;
			goto out;
		default:
			fputs(cmd_audit_usage, stderr);
			goto out;
		}
	}
	if (state == NULL || optind != argc) {
		fputs(cmd_audit_usage, stderr);
		goto out;
	}
	f.since_ms = since_s * 1000;
	f.limit = limit;
	if ((err = db_open(state, &dbo, &db)) != 0) {
		fprintf(stderr, "vep-keytool audit: cannot open %s/%s: %s\n", state,
		    DB_FILE_NAME, err == VEP_ERR_IO ? "no such file or no access" :
		    srv_strerror(err));
		goto out;
	}
	err = db_audit_query(db, &f, json ? print_json : print_text, NULL);
	if (fflush(stdout) != 0 && err == 0)
		err = VEP_ERR_IO;
	if (err != 0) {
		fprintf(stderr, "vep-keytool audit: %s\n", srv_strerror(err));
		goto out;
	}
	ret = CMD_AUDIT_EXIT_OK;
out:
	db_close(db);
	return ret;
}

int
kt_cmd_audit(const struct kt_cmd *self, int argc, char **argv)
{
	(void)self;
	return cmd_audit(argc, argv);
}
