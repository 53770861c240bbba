/*
 * state.c - the store commands' shared parts (contract in state.h):
 * naming and opening the store with an administrator's messages, safe
 * text, times and JSON Lines.
 *
 * Must never open the store in a mode that migrates or creates it, nor
 * print a connection string (it may carry a password).
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "state.h"
#include "store/db.h"
#include "err.h"
#include "kt.h"

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
kt_state_parse_time(const char *s, int64_t now_s, int64_t *out_s)
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
	if (parse_digits(s, len, KT_STATE_TIME_MAX_S, &n) == 0) {
		*out_s = n;
		return VEP_OK;
	}
	for (i = 0; i < sizeof(age_units) / sizeof(age_units[0]); i++) {
		if (s[len - 1] != age_units[i].unit)
			continue;
		if (parse_digits(s, len - 1, KT_STATE_TIME_MAX_S / age_units[i].seconds,
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
		if ((t = timegm(&tm)) == (time_t)-1 || t < 0 || t > KT_STATE_TIME_MAX_S)
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


int
kt_state_parse_count(const char *s, int64_t max, int64_t *out)
{
	int ret;

	*out = 0;
	if (s == NULL || (ret = parse_digits(s, strlen(s), max, out)) != 0)
		return VEP_ERR_INVALID;
	if (*out == 0)
		return VEP_ERR_INVALID;
	return VEP_OK;
}

void
kt_state_time_ms(int64_t ms, char out[KT_STATE_TIME_BUF])
{
	struct tm tm;
	time_t t = (time_t)(ms / 1000);

	if (ms < 0 || gmtime_r(&t, &tm) == NULL) {
		(void)snprintf(out, KT_STATE_TIME_BUF, "(invalid time)");
		return;
	}
	(void)snprintf(out, KT_STATE_TIME_BUF, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
	    tm.tm_sec, (int)(ms % 1000));
}

const char *
kt_state_printable(const char *s, char *buf, size_t buflen)
{
	size_t i;

	if (s == NULL)
		return "-";
	if (buflen == 0)
		return "";
	for (i = 0; s[i] != '\0' && i + 1 < buflen; i++)
		buf[i] = ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) ? '?' : s[i];
	buf[i] = '\0';
	return buf;
}

int
kt_state_print_json(json_t *o)
{
	return kt_print_json(o);
}

int
kt_state_fail(const char *cmd, int err)
{
	fprintf(stderr, "vep-keytool %s: %s\n", cmd, srv_strerror(err));
	return KT_STATE_EXIT_USAGE;
}

int
kt_store_check(const char *cmd, const struct kt_store *store)
{
	int dir = store->state_dir != NULL, pg = store->conninfo != NULL;

	if (dir + pg == 1 && (dir ? store->state_dir : store->conninfo)[0] != '\0')
		return 0;
	fprintf(stderr, "vep-keytool %s: give exactly one of --state DIR and "
	    "--database CONNINFO%s\n", cmd, dir + pg == 1 ? " (not empty)" : "");
	return KT_STATE_EXIT_USAGE;
}

/* Why the store did not open, as an administrator reads it: srv_strerror's
 * reason, with the causes behind it that they can fix. */
static const char *
open_reason(const struct kt_store *store, int err)
{
	if (err == DB_ERR_SCHEMA)
		return "not at this vep-keytool's schema version (start this version's "
		    "vep-authority on it once)";
	if (store->conninfo == NULL)
		return err == VEP_ERR_IO ? "no such file or no access" : srv_strerror(err);
	switch (err) {
	case DB_ERR_DOWN:
		/* libpq's refusals (no server, a wrong password, no such role
		 * or database, a malformed string) all come back as this. */
		return "database server unreachable, or it refused the connection "
		    "(check host, port, user and dbname, and the password in "
		    "~/.pgpass)";
	case VEP_ERR_ARG:
		return "the connection string is too long";
	default:
		return srv_strerror(err);
	}
}

int
kt_state_open(const char *cmd, const struct kt_store *store, enum kt_state_mode mode,
    struct db **out)
{
	struct db_options dbo = { 0 };
	int err;

	*out = NULL;
	if (mode == KT_STATE_READ) {
		dbo.readonly = 1;
	} else {
		dbo.existing = 1;
		dbo.busy_timeout_ms = KT_STATE_BUSY_TIMEOUT_MS;
		/* The audit rows an administrator's change writes say who. */
		dbo.instance = KT_STATE_INSTANCE;
	}
	if (store->conninfo != NULL) {
		dbo.pg_conninfo = store->conninfo;
		/* PostgreSQL bounds each statement by a little more than the
		 * busy timeout: a reader's scan of a year of audit rows needs
		 * a writer's room, not the server's one second. */
		dbo.busy_timeout_ms = KT_STATE_BUSY_TIMEOUT_MS;
	}
	if ((err = db_open(store->state_dir, &dbo, out)) == 0)
		return VEP_OK;
	/* Never the connection string itself: it may carry a password. */
	if (store->conninfo != NULL)
		fprintf(stderr, "vep-keytool %s: cannot open the PostgreSQL store: %s\n", cmd,
		    open_reason(store, err));
	else
		fprintf(stderr, "vep-keytool %s: cannot open %s/%s: %s\n", cmd, store->state_dir,
		    DB_FILE_NAME, open_reason(store, err));
	return err;
}
