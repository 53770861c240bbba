/*
 * cmd_throttle.c - `vep-keytool throttle`: list the running sign-in counts
 * of an authority (per account and address, per account, per address) and
 * the addresses known to accounts; `throttle clear`: forget counts, so a
 * locked-out account or address may sign in again at once.
 *
 * The server checks the counts in the database on every attempt, so a
 * clear takes effect on the next one. Names are the counting forms the
 * server stores (store/throttle.h): the PAM account name, and a client
 * address as auth/throttle_key.h spells it (an IPv6 address as its /64),
 * into which a typed address is converted first.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cmd_state.h"
#include "state.h"
#include "auth/throttle_key.h"
#include "store/db.h"
#include "store/throttle.h"
#include "err.h"

static const char throttle_usage[] =
    "usage: vep-keytool throttle (--state DIR | --database CONNINFO) [--json]\n"
    "       vep-keytool throttle clear (--state DIR | --database CONNINFO)\n"
    "                                  (--account NAME | --address ADDR\n"
    "                                   | --account NAME --address ADDR | --all)\n"
    "Lists the running sign-in counts of the authority whose state directory\n"
    "is DIR, or of the authorities sharing the PostgreSQL store CONNINFO (a\n"
    "libpq connection string; keep its password in ~/.pgpass): kind (pair:\n"
    "one account from one address; account; address), account, address,\n"
    "attempts counted, and when the window ends; and the addresses each\n"
    "account signed in from recently (kind known), which are held only to\n"
    "the pair limit. --json prints one JSON object per line.\n"
    "clear forgets counts while the authority runs; the next sign-in is\n"
    "checked against what remains: --account every count of that PAM\n"
    "account name, --address every count of that client address (an IPv6\n"
    "address counts as its /64), both together the one pair, --all every\n"
    "count. Known addresses stay. Exit 1 when nothing matched.\n";

struct throttle_opts {
	struct kt_store store;
	const char *account;
	const char *addr;
	int all;
	int json;
};

/* parse_opts's answer when it printed the help: exit 0 without work. */
#define THROTTLE_HELP_DONE 100

/* Returns 0, THROTTLE_HELP_DONE, or the usage exit code after printing
 * why. */
static int
parse_opts(int argc, char **argv, int clear, struct throttle_opts *o)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, KT_STORE_OPT_STATE },
		{ "database", required_argument, NULL, KT_STORE_OPT_DATABASE },
		{ "account", required_argument, NULL, 'u' },
		{ "address", required_argument, NULL, 'a' },
		{ "all", no_argument, NULL, 'A' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;   /* GNU: restart the scan */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+s:D:u:a:Ajh", opts, NULL)) != -1) {
		switch (c) {
		case KT_STORE_OPT_STATE:
			o->store.state_dir = optarg;
			break;
		case KT_STORE_OPT_DATABASE:
			o->store.conninfo = optarg;
			break;
		case 'u':
			if (!clear)
				goto usage;
			o->account = optarg;
			break;
		case 'a':
			if (!clear)
				goto usage;
			o->addr = optarg;
			break;
		case 'A':
			if (!clear)
				goto usage;
			o->all = 1;
			break;
		case 'j':
			if (clear)
				goto usage;
			o->json = 1;
			break;
		case 'h':
			fputs(throttle_usage, stdout);
			return THROTTLE_HELP_DONE;
		default:
			goto usage;
		}
	}
	if (optind != argc || kt_store_check(clear ? "throttle clear" : "throttle",
	    &o->store) != 0)
		goto usage;
	if (clear && o->all == (o->account != NULL || o->addr != NULL)) {
		fprintf(stderr, "vep-keytool throttle clear: give --account, --address "
		    "(or both), or --all\n");
		return KT_STATE_EXIT_USAGE;
	}
	return 0;
usage:
	fputs(throttle_usage, stderr);
	return KT_STATE_EXIT_USAGE;
}

static int
print_text(const struct db_throttle_entry *e, void *arg)
{
	char account[DB_THROTTLE_NAME_MAX + 1], addr[DB_THROTTLE_NAME_MAX + 1];
	char until[KT_STATE_TIME_BUF];
	int *header = arg;

	if (!*header) {
		printf("%-8s %-24s %-28s %-6s %s\n", "KIND", "ACCOUNT", "ADDRESS", "COUNT",
		    "UNTIL");
		*header = 1;
	}
	kt_state_time_ms(e->window_end * 1000, until);
	printf("%-8s %-24s %-28s %-6lld %s\n", e->kind,
	    kt_state_printable(e->account, account, sizeof(account)),
	    kt_state_printable(e->addr, addr, sizeof(addr)), (long long)e->count, until);
	return ferror(stdout) ? VEP_ERR_IO : VEP_OK;
}

static int
print_json(const struct db_throttle_entry *e, void *arg)
{
	(void)arg;
	return kt_state_print_json(json_pack("{s:s, s:s?, s:s?, s:I, s:I}",
	    "kind", e->kind, "account", e->account, "address", e->addr,
	    "count", (json_int_t)e->count, "until", (json_int_t)e->window_end));
}

static int
throttle_clear(int argc, char **argv)
{
	struct throttle_opts o = { 0 };
	char addr[THROTTLE_KEY_ADDR_BUFSZ];
	struct db *db = NULL;
	int64_t n = 0;
	int ret, err;

	if ((ret = parse_opts(argc, argv, 1, &o)) != 0)
		return ret == THROTTLE_HELP_DONE ? KT_STATE_EXIT_OK : ret;
	ret = KT_STATE_EXIT_USAGE;
	/* The form the server counts under: 2001:db8::1 is 2001:db8::/64. */
	if (o.addr != NULL && throttle_key_addr(o.addr, addr, sizeof(addr)) != 0) {
		fprintf(stderr, "vep-keytool throttle clear: --address: too long\n");
		goto out;
	}
	if (kt_state_open("throttle clear", &o.store, KT_STATE_WRITE, &db) != 0)
		goto out;
	if ((err = db_throttle_clear(db, o.account, o.addr != NULL ? addr : NULL, &n)) != 0) {
		ret = kt_state_fail("throttle clear", err);
		goto out;
	}
	if (n == 0) {
		fprintf(stderr, "vep-keytool throttle clear: no count matched\n");
		ret = KT_STATE_EXIT_NONE;
		goto out;
	}
	printf("cleared %lld count%s\n", (long long)n, n == 1 ? "" : "s");
	ret = fflush(stdout) == 0 ? KT_STATE_EXIT_OK : KT_STATE_EXIT_USAGE;
out:
	db_close(db);
	return ret;
}

int
cmd_throttle(int argc, char **argv)
{
	struct throttle_opts o = { 0 };
	struct db *db = NULL;
	int ret, err, header = 0;

	if (argc >= 2 && strcmp(argv[1], "clear") == 0)
		return throttle_clear(argc - 1, argv + 1);
	if ((ret = parse_opts(argc, argv, 0, &o)) != 0)
		return ret == THROTTLE_HELP_DONE ? KT_STATE_EXIT_OK : ret;
	ret = KT_STATE_EXIT_USAGE;
	if (kt_state_open("throttle", &o.store, KT_STATE_READ, &db) != 0)
		goto out;
	err = db_throttle_list(db, (int64_t)time(NULL), o.json ? print_json : print_text,
	    &header);
	if (fflush(stdout) != 0 && err == 0)
		err = VEP_ERR_IO;
	if (err != 0) {
		ret = kt_state_fail("throttle", err);
		goto out;
	}
	if (!o.json && !header)
		fprintf(stderr, "no running counts\n");
	ret = KT_STATE_EXIT_OK;
out:
	db_close(db);
	return ret;
}

int
kt_cmd_throttle(const struct kt_cmd *self, int argc, char **argv)
{
	(void)self;
	return cmd_throttle(argc, argv);
}
