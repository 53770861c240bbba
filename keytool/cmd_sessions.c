/*
 * cmd_sessions.c - `vep-keytool sessions`: list the signed-in sessions of
 * a running authority, and `sessions revoke`: end some of them (Dovecot's
 * `doveadm who` and `kick`).
 *
 * A session is shown and named by its row id, which leads to nothing: the
 * database holds only the SHA-256 of a session's token, and this file never
 * reads even that. A revocation deletes the row; the server looks every
 * cookie up in the database on every request, so the revoked cookie is
 * refused on its next one. Each revocation is recorded in the audit trail
 * (event logout, outcome "revoked", client "vep-keytool").
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <jansson.h>

#include "cmd_state.h"
#include "state.h"
#include "store/audit.h"
#include "store/db.h"
#include "store/sessions.h"
#include "err.h"

/* What a revocation records as the client and the outcome. */
#define SESSIONS_AUDIT_CLIENT "vep-keytool"
#define SESSIONS_AUDIT_OUTCOME "revoked"

static const char sessions_usage[] =
    "usage: vep-keytool sessions (--state DIR | --database CONNINFO) [--email ADDR]\n"
    "                            [--json]\n"
    "       vep-keytool sessions revoke (--state DIR | --database CONNINFO)\n"
    "                                   (--id N | --email ADDR | --all)\n"
    "Lists the live sessions of the authority whose state directory is DIR,\n"
    "or of the authorities sharing the PostgreSQL store CONNINFO (a libpq\n"
    "connection string; keep its password in ~/.pgpass): id, address, when\n"
    "signed in, last seen, when it expires. The id names a session for\n"
    "revoke; it is no secret and leads to no token. --json prints one JSON\n"
    "object per line.\n"
    "revoke ends the session with that id, every session of ADDR, or all of\n"
    "them, while the authority runs: the cookie is refused from its next\n"
    "request on, and each is recorded in the audit trail. Exit 1 when no live\n"
    "session matched.\n";

/* The options both forms take. */
struct sessions_opts {
	struct kt_store store;
	char *email;          /* owned: the domain folded to lower case */
	int64_t id;
	int all;
	int json;
};

/* Addresses are stored with their domain in lower case (the domain of an
 * address compares case-insensitively); an administrator may type it either
 * way. */
static char *
email_folded(const char *s)
{
	char *copy = strdup(s), *at;

	if (copy != NULL && (at = strrchr(copy, '@')) != NULL)
		for (; *at != '\0'; at++)
			if (*at >= 'A' && *at <= 'Z')
				*at = (char)(*at - 'A' + 'a');
	return copy;
}

/* parse_opts's answer when it printed the help: exit 0 without work. */
#define SESSIONS_HELP_DONE 100

/* Returns 0, SESSIONS_HELP_DONE, or the usage exit code after printing
 * why. */
static int
parse_opts(int argc, char **argv, int revoke, struct sessions_opts *o)
{
	static const struct option opts[] = {
		{ "state", required_argument, NULL, KT_STORE_OPT_STATE },
		{ "database", required_argument, NULL, KT_STORE_OPT_DATABASE },
		{ "email", required_argument, NULL, 'e' },
		{ "id", required_argument, NULL, 'i' },
		{ "all", no_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 0;   /* GNU: restart the scan */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+s:D:e:i:ajh", opts, NULL)) != -1) {
		switch (c) {
		case KT_STORE_OPT_STATE:
			o->store.state_dir = optarg;
			break;
		case KT_STORE_OPT_DATABASE:
			o->store.conninfo = optarg;
			break;
		case 'e':
			free(o->email);
			if ((o->email = email_folded(optarg)) == NULL)
				return kt_state_fail("sessions", VEP_ERR_NOMEM);
			break;
		case 'i':
			if (!revoke || kt_state_parse_count(optarg, INT64_MAX, &o->id) != 0) {
				fprintf(stderr, "vep-keytool sessions: --id: not a session id\n");
				return KT_STATE_EXIT_USAGE;
			}
			break;
		case 'a':
			if (!revoke)
				goto usage;
			o->all = 1;
			break;
		case 'j':
			if (revoke)
				goto usage;
			o->json = 1;
			break;
		case 'h':
			fputs(sessions_usage, stdout);
			return SESSIONS_HELP_DONE;
		default:
			goto usage;
		}
	}
	if (optind != argc || kt_store_check(revoke ? "sessions revoke" : "sessions",
	    &o->store) != 0)
		goto usage;
	if (revoke && (o->id != 0) + (o->email != NULL) + o->all != 1) {
		fprintf(stderr, "vep-keytool sessions revoke: give exactly one of --id, "
		    "--email, --all\n");
		return KT_STATE_EXIT_USAGE;
	}
	return 0;
usage:
	fputs(sessions_usage, stderr);
	return KT_STATE_EXIT_USAGE;
}

static int
print_text(const struct db_session *s, void *arg)
{
	char email[DB_SESSION_EMAIL_MAX + 1], created[KT_STATE_TIME_BUF];
	char seen[KT_STATE_TIME_BUF], expires[KT_STATE_TIME_BUF];
	int *header = arg;

	if (!*header) {
		printf("%-8s %-32s %-24s %-24s %s\n", "ID", "ADDRESS", "SIGNED IN",
		    "LAST SEEN", "EXPIRES");
		*header = 1;
	}
	kt_state_time_ms(s->created * 1000, created);
	kt_state_time_ms(s->last_seen * 1000, seen);
	kt_state_time_ms(s->expires_at * 1000, expires);
	printf("%-8lld %-32s %-24s %-24s %s\n", (long long)s->id,
	    kt_state_printable(s->email, email, sizeof(email)), created, seen, expires);
	return ferror(stdout) ? VEP_ERR_IO : VEP_OK;
}

static int
print_json(const struct db_session *s, void *arg)
{
	(void)arg;
	return kt_state_print_json(json_pack("{s:I, s:s, s:I, s:I, s:I, s:I}",
	    "id", (json_int_t)s->id, "email", s->email, "created", (json_int_t)s->created,
	    "last_seen", (json_int_t)s->last_seen, "expires", (json_int_t)s->expires_at,
	    "absolute_expiry", (json_int_t)s->absolute_at));
}

/* The sessions a revocation ends, gathered before any is deleted (the
 * list's callback must not write through the same connection). */
struct victims {
	int64_t *ids;
	char (*emails)[DB_SESSION_EMAIL_MAX + 1];
	size_t n, cap;
	int64_t only_id;
};

static int
gather(const struct db_session *s, void *arg)
{
	struct victims *v = arg;
	void *p;

	if (v->only_id != 0 && s->id != v->only_id)
		return VEP_OK;
	if (v->n == v->cap) {
		v->cap = v->cap == 0 ? 16 : v->cap * 2;
		if ((p = realloc(v->ids, v->cap * sizeof(*v->ids))) == NULL)
			return VEP_ERR_NOMEM;
		v->ids = p;
		if ((p = realloc(v->emails, v->cap * sizeof(*v->emails))) == NULL)
			return VEP_ERR_NOMEM;
		v->emails = p;
	}
	v->ids[v->n] = s->id;
	memcpy(v->emails[v->n], s->email, sizeof(v->emails[v->n]));
	v->n++;
	return VEP_OK;
}

static int64_t
now_ms(void)
{
	struct timeval tv;

	(void)gettimeofday(&tv, NULL);
	return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* Ends each gathered session and records it. A session that ended
 * meanwhile (signed out, expired and purged) is skipped silently. */
static int
revoke_all(struct db *db, const struct victims *v, size_t *done)
{
	struct db_audit_row row = { 0 };
	char email[DB_SESSION_EMAIL_MAX + 1];
	size_t i;
	int err;

	*done = 0;
	for (i = 0; i < v->n; i++) {
		err = db_session_revoke(db, v->ids[i]);
		if (err == DB_ERR_NOTFOUND)
			continue;
		if (err != 0)
			return err;
		(*done)++;
		printf("revoked session %lld of %s\n", (long long)v->ids[i],
		    kt_state_printable(v->emails[i], email, sizeof(email)));
		row.ts_ms = now_ms();
		row.event = DB_AUDIT_LOGOUT;
		row.email = v->emails[i];
		row.client_addr = SESSIONS_AUDIT_CLIENT;
		row.outcome = SESSIONS_AUDIT_OUTCOME;
		if ((err = db_audit_add(db, &row)) != 0)
			return err;
	}
	return VEP_OK;
}

static int
sessions_revoke(int argc, char **argv)
{
	struct sessions_opts o = { 0 };
	struct victims v = { 0 };
	struct db *db = NULL;
	size_t done = 0;
	int ret, err;

	if ((ret = parse_opts(argc, argv, 1, &o)) != 0) {
		ret = ret == SESSIONS_HELP_DONE ? KT_STATE_EXIT_OK : ret;
		goto out;
	}
	ret = KT_STATE_EXIT_USAGE;
	if (kt_state_open("sessions revoke", &o.store, KT_STATE_WRITE, &db) != 0)
		goto out;
	v.only_id = o.id;
	if ((err = db_session_list(db, o.email, (int64_t)time(NULL), gather, &v)) != 0 ||
	    (err = revoke_all(db, &v, &done)) != 0) {
		ret = kt_state_fail("sessions revoke", err);
		goto out;
	}
	if (done == 0) {
		fprintf(stderr, "vep-keytool sessions revoke: no live session matched\n");
		ret = KT_STATE_EXIT_NONE;
		goto out;
	}
	ret = fflush(stdout) == 0 ? KT_STATE_EXIT_OK : KT_STATE_EXIT_USAGE;
out:
	free(v.ids);
	free(v.emails);
	free(o.email);
	db_close(db);
	return ret;
}

int
cmd_sessions(int argc, char **argv)
{
	struct sessions_opts o = { 0 };
	struct db *db = NULL;
	int ret, err, header = 0;

	if (argc >= 2 && strcmp(argv[1], "revoke") == 0)
		return sessions_revoke(argc - 1, argv + 1);
	if ((ret = parse_opts(argc, argv, 0, &o)) != 0) {
		ret = ret == SESSIONS_HELP_DONE ? KT_STATE_EXIT_OK : ret;
		goto out;
	}
	ret = KT_STATE_EXIT_USAGE;
	if (kt_state_open("sessions", &o.store, KT_STATE_READ, &db) != 0)
		goto out;
	err = db_session_list(db, o.email, (int64_t)time(NULL),
	    o.json ? print_json : print_text, &header);
	if (fflush(stdout) != 0 && err == 0)
		err = VEP_ERR_IO;
	if (err != 0) {
		ret = kt_state_fail("sessions", err);
		goto out;
	}
	if (!o.json && !header)
		fprintf(stderr, "no live sessions\n");
	ret = KT_STATE_EXIT_OK;
out:
	free(o.email);
	db_close(db);
	return ret;
}

int
kt_cmd_sessions(const struct kt_cmd *self, int argc, char **argv)
{
	(void)self;
	return cmd_sessions(argc, argv);
}
