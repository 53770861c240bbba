/*
 * cmd_audit.c - `vep-keytool audit`: print the audit trail (sign-ins,
 * sign-outs, revocations and issued certificates) from the authority's
 * database, as text for a person or as JSON Lines (one object per row) for
 * a program; and `audit prune`, which deletes rows past the retention.
 *
 * The store is a state directory's SQLite file (--state) or the PostgreSQL
 * store several instances share (--database), opened through state.h.
 * Reading opens it read-only through store/db.h and never writes it,
 * migrates it or creates files in the state directory (the authority may
 * run as another user). Pruning opens it read-write at exactly this
 * binary's schema version and deletes in bounded batches, so the running
 * server waits at most one batch for its write lock. Stored strings came
 * from the network (typed account names): control characters are never
 * written to a terminal as they are.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cmd_audit.h"
#include "state.h"
#include "store/db.h"
#include "store/audit.h"
#include "err.h"

/* Rows one prune transaction deletes at most (rows). */
#define CMD_AUDIT_PRUNE_BATCH 1000

static const char cmd_audit_usage[] =
    "usage: vep-keytool audit (--state DIR | --database CONNINFO)\n"
    "                         [--email ADDR|ACCOUNT] [--since TIME] [--limit N] [--json]\n"
    "       vep-keytool audit prune (--state DIR | --database CONNINFO) [--before TIME]\n"
    "Prints the audit trail of the authority whose state directory is DIR,\n"
    "or of the authorities sharing the PostgreSQL store CONNINFO (a libpq\n"
    "connection string; keep its password in ~/.pgpass): sign-in successes\n"
    "and failures, sign-outs and revoked sessions, and issued certificates,\n"
    "oldest first.\n"
    "--email ADDR keeps the rows of that address; --email ACCOUNT (no '@')\n"
    "those of the account name as typed at sign-in and of every address whose\n"
    "local part it is (alice: alice, alice@example.com, alice@example.org).\n"
    "--since TIME keeps rows at or after TIME: ISO-8601 UTC (2026-01-31,\n"
    "2026-01-31T12:00:00Z), epoch seconds, or an age such as 90m, 1h, 7d, 2w.\n"
    "--limit N keeps the newest N rows (still printed oldest first).\n"
    "--json prints one JSON object per line. The store is opened\n"
    "read-only.\n"
    "\n"
    "audit prune deletes the rows older than TIME (default 365d: one year,\n"
    "the default retention) while the authority runs, and prints how many.\n"
    "The authority itself never deletes audit rows.\n";

static int
print_text(const struct db_audit_row *r, void *arg)
{
	char when[KT_STATE_TIME_BUF], iat[KT_STATE_TIME_BUF], exp[KT_STATE_TIME_BUF];
	char email[DB_AUDIT_TEXT_MAX + 1], client[DB_AUDIT_TEXT_MAX + 1];
	char outcome[DB_AUDIT_TEXT_MAX + 1];
	const char *ev = db_audit_event_name(r->event);

	(void)arg;
	kt_state_time_ms(r->ts_ms, when);
	printf("%s %-13s %s from %s: %s", when, ev ? ev : "?",
	    kt_state_printable(r->email, email, sizeof(email)),
	    kt_state_printable(r->client_addr, client, sizeof(client)),
	    kt_state_printable(r->outcome, outcome, sizeof(outcome)));
	if (r->account != NULL)
		printf(" account %s", kt_state_printable(r->account, email, sizeof(email)));
	if (r->key_fp != NULL)
		printf(" key %s", kt_state_printable(r->key_fp, email, sizeof(email)));
	if (r->signer_fp != NULL)
		printf(" signed by %s", kt_state_printable(r->signer_fp, email, sizeof(email)));
	if (r->iat_ms != 0 || r->exp_ms != 0) {
		kt_state_time_ms(r->iat_ms, iat);
		kt_state_time_ms(r->exp_ms, exp);
		printf(" valid %s to %s", iat, exp);
	}
	if (r->instance != NULL)
		printf(" on %s", kt_state_printable(r->instance, email, sizeof(email)));
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
	char when[KT_STATE_TIME_BUF];

	(void)arg;
	kt_state_time_ms(r->ts_ms, when);
	return kt_state_print_json(json_pack(
		    "{s:I, s:s, s:I, s:s?, s:s, s:s, s:s, s:s?, s:o, s:o, s:s?, s:s?, s:s?}",
		    "id", (json_int_t)r->id, "time", when, "ts_ms", (json_int_t)r->ts_ms,
		    "event", ev, "email", r->email, "client", r->client_addr,
		    "outcome", r->outcome, "key_fingerprint", r->key_fp,
		    "iat_ms", opt_int(r->iat_ms), "exp_ms", opt_int(r->exp_ms),
		    "signer_fingerprint", r->signer_fp, "account", r->account,
		    "instance", r->instance));
}

/* audit prune: argv[0] is "prune". */
static int
cmd_audit_prune(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, KT_STORE_OPT_STATE },
		{ "database", required_argument, NULL, KT_STORE_OPT_DATABASE },
		{ "before", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int64_t now_s = (int64_t)time(NULL), before_s, n = 0, total = 0;
	struct kt_store store = { 0 };
	char when[KT_STATE_TIME_BUF];
	struct db *db = NULL;
	int c, ret = KT_STATE_EXIT_USAGE, err;

	before_s = now_s - CMD_AUDIT_RETENTION_DEFAULT_S;
	optind = 0;   /* GNU: restart the scan (the test calls us repeatedly) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+s:D:b:h", opts, NULL)) != -1) {
		switch (c) {
		case KT_STORE_OPT_STATE:
			store.state_dir = optarg;
			break;
		case KT_STORE_OPT_DATABASE:
			store.conninfo = optarg;
			break;
		case 'b':
			if (kt_state_parse_time(optarg, now_s, &before_s) != 0) {
				fprintf(stderr, "vep-keytool audit prune: --before: not a time: "
				    "%s\n  (use 2026-01-31T12:00:00Z, epoch seconds, or 90d)\n",
				    optarg);
				goto out;
			}
			break;
		case 'h':
			fputs(cmd_audit_usage, stdout);
			ret = KT_STATE_EXIT_OK;
			goto out;
		default:
			fputs(cmd_audit_usage, stderr);
			goto out;
		}
	}
	if (optind != argc || kt_store_check("audit prune", &store) != 0) {
		fputs(cmd_audit_usage, stderr);
		goto out;
	}
	if (kt_state_open("audit prune", &store, KT_STATE_WRITE, &db) != 0)
		goto out;
	do {
		if ((err = db_audit_prune(db, before_s * 1000, CMD_AUDIT_PRUNE_BATCH, &n)) != 0) {
			fprintf(stderr, "vep-keytool audit prune: %s (%lld rows deleted before "
			    "that)\n", srv_strerror(err), (long long)total);
			goto out;
		}
		total += n;
	} while (n == CMD_AUDIT_PRUNE_BATCH);
	kt_state_time_ms(before_s * 1000, when);
	printf("deleted %lld audit row%s older than %s\n", (long long)total,
	    total == 1 ? "" : "s", when);
	ret = fflush(stdout) == 0 ? KT_STATE_EXIT_OK : KT_STATE_EXIT_USAGE;
out:
	db_close(db);
	return ret;
}

int
cmd_audit(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, KT_STORE_OPT_STATE },
		{ "database", required_argument, NULL, KT_STORE_OPT_DATABASE },
		{ "email", required_argument, NULL, 'e' },
		{ "since", required_argument, NULL, 't' },
		{ "limit", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct db_audit_filter f = { 0 };
	struct kt_store store = { 0 };
	struct db *db = NULL;
	int64_t since_s = 0, limit = 0;
	int c, json = 0, ret = KT_STATE_EXIT_USAGE, err;

	if (argc >= 2 && strcmp(argv[1], "prune") == 0)
		return cmd_audit_prune(argc - 1, argv + 1);
	optind = 0;   /* GNU: restart the scan (the test calls us repeatedly) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+s:D:e:t:n:jh", opts, NULL)) != -1) {
		switch (c) {
		case KT_STORE_OPT_STATE:
			store.state_dir = optarg;
			break;
		case KT_STORE_OPT_DATABASE:
			store.conninfo = optarg;
			break;
		case 'e':
			f.email = optarg;
			break;
		case 't':
			if (kt_state_parse_time(optarg, (int64_t)time(NULL), &since_s) != 0) {
				fprintf(stderr, "vep-keytool audit: --since: not a time: %s\n"
				    "  (use 2026-01-31T12:00:00Z, epoch seconds, or 1h, 7d)\n",
				    optarg);
				goto out;
			}
			break;
		case 'n':
			if (kt_state_parse_count(optarg, INT64_MAX / 2, &limit) != 0) {
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
			ret = KT_STATE_EXIT_OK;
			goto out;
		default:
			fputs(cmd_audit_usage, stderr);
			goto out;
		}
	}
	if (optind != argc || kt_store_check("audit", &store) != 0) {
		fputs(cmd_audit_usage, stderr);
		goto out;
	}
	f.since_ms = since_s * 1000;
	f.limit = limit;
	if (kt_state_open("audit", &store, KT_STATE_READ, &db) != 0)
		goto out;
	err = db_audit_query(db, &f, json ? print_json : print_text, NULL);
	if (fflush(stdout) != 0 && err == 0)
		err = VEP_ERR_IO;
	if (err != 0) {
		ret = kt_state_fail("audit", err);
		goto out;
	}
	ret = KT_STATE_EXIT_OK;
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
