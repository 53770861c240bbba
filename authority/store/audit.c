/*
 * store/audit.c - the SQL of the audit trail: append rows (one, or a batch in
 * one transaction) and read them back by address and time.
 *
 * It must never report success for a row that is not committed, never leave
 * part of a batch behind, and never store a token, password or key: only
 * the key's fingerprint.
 */
#include <stdlib.h>
#include <string.h>

#include "store/audit.h"
#include "store/internal.h"

static const struct db_sql sql_insert = {
	"INSERT INTO audit (ts_ms, event, email, key_fp, iat_ms, exp_ms,"
	" client_addr, outcome, signer_fp, account, instance)"
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)", NULL
};
/* The newest ?2 rows that match (a negative ?2: all), handed back oldest
 * first. ?3 NULL matches every row; an address matches itself; an account
 * name (no '@') matches itself and every address whose local part it is,
 * as typed at sign-in (store/audit.h). SQLite's LIMIT -1 is PostgreSQL's
 * LIMIT NULL, SQLite's instr() PostgreSQL's strpos(). */
static const struct db_sql sql_query = {
	"SELECT * FROM (SELECT id, ts_ms, event, email, key_fp, iat_ms, exp_ms,"
	" client_addr, outcome, signer_fp, account, instance FROM audit WHERE ts_ms >= ?1"
	" AND (CAST(?3 AS TEXT) IS NULL OR email = ?3 OR (instr(?3, '@') = 0"
	" AND substr(email, 1, length(?3) + 1) = ?3 || '@'))"
	" ORDER BY ts_ms DESC, id DESC LIMIT ?2) ORDER BY ts_ms, id",
	"SELECT * FROM (SELECT id, ts_ms, event, email, key_fp, iat_ms, exp_ms,"
	" client_addr, outcome, signer_fp, account, instance FROM audit WHERE ts_ms >= $1"
	" AND (CAST($3 AS TEXT) IS NULL OR email = $3 OR (strpos($3, '@') = 0"
	" AND substr(email, 1, length($3) + 1) = $3 || '@'))"
	" ORDER BY ts_ms DESC, id DESC"
	" LIMIT CASE WHEN $2 < 0 THEN NULL ELSE $2 END) AS newest ORDER BY ts_ms, id"
};
static const struct db_sql sql_prune = {
	"DELETE FROM audit WHERE id IN (SELECT id FROM audit WHERE ts_ms < ?1"
	" ORDER BY ts_ms LIMIT ?2)", NULL
};
static const struct db_sql sql_signer_expiry = {
	"SELECT max(exp_ms) FROM audit WHERE signer_fp = ?1", NULL
};

/* Must agree with the audit_events rows of schema/0001_initial.sql. */
static const struct {
	enum db_audit_event ev;
	const char *name;
} audit_events[] = {
	{ DB_AUDIT_LOGIN_SUCCESS, "login_success" },
	{ DB_AUDIT_LOGIN_FAILURE, "login_failure" },
	{ DB_AUDIT_CERT_ISSUED, "cert_issued" },
	{ DB_AUDIT_CERT_REFUSED, "cert_refused" },
	{ DB_AUDIT_LOGOUT, "logout" },
};
#define AUDIT_EVENTS (sizeof(audit_events) / sizeof(audit_events[0]))

struct db_audit_batch {
	struct db_audit_row *rows;   /* strings owned, one block per row */
	size_t count;
};

const char *
db_audit_event_name(enum db_audit_event ev)
{
	size_t i;

	for (i = 0; i < AUDIT_EVENTS; i++)
		if (audit_events[i].ev == ev)
			return audit_events[i].name;
	return NULL;
}

int
db_audit_event_from_name(const char *name, enum db_audit_event *out)
{
	size_t i;

	if (out == NULL)
		return VEP_ERR_ARG;
	*out = 0;
	if (name == NULL)
		return VEP_ERR_INVALID;
	for (i = 0; i < AUDIT_EVENTS; i++) {
		if (strcmp(audit_events[i].name, name) == 0) {
			*out = audit_events[i].ev;
			return VEP_OK;
		}
	}
	return VEP_ERR_INVALID;
}

size_t
db_audit_event_count(void)
{
	return AUDIT_EVENTS;
}

enum db_audit_event
db_audit_event_at(size_t i)
{
	return i < AUDIT_EVENTS ? audit_events[i].ev : 0;
}

static int
audit_text_ok(const char *s, int required)
{
	if (s == NULL)
		return required ? VEP_ERR_ARG : VEP_OK;
	if (*s == '\0')
		return VEP_ERR_ARG;
	return strlen(s) > DB_AUDIT_TEXT_MAX ? VEP_ERR_TOOBIG : VEP_OK;
}

static int
audit_fp_ok(const char *fp)
{
	size_t i;

	if (fp == NULL)
		return VEP_OK;
	for (i = 0; i < DB_AUDIT_FP_CHARS; i++)
		if (!((fp[i] >= '0' && fp[i] <= '9') || (fp[i] >= 'a' && fp[i] <= 'f')))
			return VEP_ERR_ARG;
	return fp[i] == '\0' ? VEP_OK : VEP_ERR_ARG;
}

static int
audit_row_ok(const struct db_audit_row *r)
{
	int ret;

	if (r == NULL || db_audit_event_name(r->event) == NULL ||
	    r->ts_ms < 0 || r->iat_ms < 0 || r->exp_ms < 0)
		return VEP_ERR_ARG;
	/* An issued certificate always names its address, key and signer. */
	if (r->event == DB_AUDIT_CERT_ISSUED && (r->email == NULL || r->key_fp == NULL ||
	    r->signer_fp == NULL))
		return VEP_ERR_ARG;
	if ((ret = audit_text_ok(r->email, 0)) != 0 ||
	    (ret = audit_text_ok(r->client_addr, 0)) != 0 ||
	    (ret = audit_text_ok(r->outcome, 1)) != 0 ||
	    (ret = audit_text_ok(r->account, 0)) != 0 ||
	    (ret = audit_fp_ok(r->signer_fp)) != 0)
		return ret;
	return audit_fp_ok(r->key_fp);
}

static void
bind_opt_int(struct db_st *st, int col, int64_t v)
{
	if (v == 0)
		db_st_null_int(st, col);
	else
		db_st_int(st, col, v);
}

static int
audit_insert(struct db *db, const struct db_audit_row *r)
{
	struct db_st *st;
	int ret;

	if ((ret = db_stmt(db, DB_STMT_AUDIT_INSERT, &sql_insert, &st)) != 0)
		return ret;
	db_st_int(st, 1, r->ts_ms);
	db_st_int(st, 2, r->event);
	db_st_text(st, 3, r->email ? r->email : DB_AUDIT_UNKNOWN);
	db_st_text(st, 4, r->key_fp);
	bind_opt_int(st, 5, r->iat_ms);
	bind_opt_int(st, 6, r->exp_ms);
	db_st_text(st, 7, r->client_addr ? r->client_addr : DB_AUDIT_UNKNOWN);
	db_st_text(st, 8, r->outcome);
	db_st_text(st, 9, r->signer_fp);
	db_st_text(st, 10, r->account);
	db_st_text(st, 11, db->instance);
	return db_st_queue(st);
}

/* Writes the rows of n lists (rows[i], count[i]) in one transaction: all
 * of them, or none. */
static int
audit_write(struct db *db, const struct db_audit_row *const *rows, const size_t *count,
    size_t n)
{
	size_t i, k;
	int ret;

	/* One round trip for the whole batch where the engine allows. */
	if ((ret = db_batch_begin(db)) != 0)
		return ret;
	for (i = 0; i < n; i++)
		for (k = 0; k < count[i]; k++)
			if ((ret = audit_insert(db, &rows[i][k])) != 0)
				goto out;
	return db_batch_end(db);
out:
	db_batch_abort(db);
	return ret;
}

int
db_audit_add(struct db *db, const struct db_audit_row *row)
{
	size_t one = 1;
	int ret;

	if (db == NULL)
		return VEP_ERR_ARG;
	if ((ret = audit_row_ok(row)) != 0)
		return ret;
	return audit_write(db, &row, &one, 1);
}

int
db_audit_batch_new(struct db_audit_batch **out)
{
	if (out == NULL)
		return VEP_ERR_ARG;
	*out = calloc(1, sizeof(**out));
	return *out == NULL ? VEP_ERR_NOMEM : VEP_OK;
}

/* Copies s into *p (advancing it); NULL stays NULL. */
static const char *
batch_copy(char **p, const char *s)
{
	char *d = *p;
	size_t n;

	if (s == NULL)
		return NULL;
	n = strlen(s) + 1;
	memcpy(d, s, n);
	*p += n;
	return d;
}

int
db_audit_batch_add(struct db_audit_batch *b, const struct db_audit_row *row)
{
	const char *texts[6];
	struct db_audit_row *rows, *r;
	size_t i, need = 0;
	char *block, *p;
	int ret;

	if (b == NULL)
		return VEP_ERR_ARG;
	if ((ret = audit_row_ok(row)) != 0)
		return ret;
	if (b->count >= DB_AUDIT_BATCH_MAX)
		return VEP_ERR_TOOBIG;
	texts[0] = row->email;
	texts[1] = row->key_fp;
	texts[2] = row->client_addr;
	texts[3] = row->outcome;
	texts[4] = row->signer_fp;
	texts[5] = row->account;
	for (i = 0; i < 6; i++)
		need += texts[i] ? strlen(texts[i]) + 1 : 0;
	if ((block = malloc(need)) == NULL)
		return VEP_ERR_NOMEM;
	/* Grow one row at a time: DB_AUDIT_BATCH_MAX keeps this small. */
	rows = realloc(b->rows, (b->count + 1) * sizeof(*rows));
	if (rows == NULL) {
		free(block);
		return VEP_ERR_NOMEM;
	}
	b->rows = rows;
	r = &rows[b->count];
	*r = *row;
	p = block;
	/* outcome is required, so block is never empty; the row owns the
	 * block through its first non-NULL string, found again on free. */
	r->outcome = batch_copy(&p, row->outcome);
	r->email = batch_copy(&p, row->email);
	r->key_fp = batch_copy(&p, row->key_fp);
	r->client_addr = batch_copy(&p, row->client_addr);
	r->signer_fp = batch_copy(&p, row->signer_fp);
	r->account = batch_copy(&p, row->account);
	r->id = 0;
	b->count++;
	return VEP_OK;
}

size_t
db_audit_batch_count(const struct db_audit_batch *b)
{
	return b == NULL ? 0 : b->count;
}

static void
batch_clear(struct db_audit_batch *b)
{
	size_t i;

	for (i = 0; i < b->count; i++)
		free((void *)(uintptr_t)b->rows[i].outcome);
	free(b->rows);
	b->rows = NULL;
	b->count = 0;
}

int
db_audit_batch_commit(struct db *db, struct db_audit_batch *b)
{
	return db_audit_batches_commit(db, &b, 1);
}

int
db_audit_batches_commit(struct db *db, struct db_audit_batch *const *b, size_t n)
{
	const struct db_audit_row *rows[DB_AUDIT_COMMIT_BATCHES_MAX];
	size_t count[DB_AUDIT_COMMIT_BATCHES_MAX], i, all = 0;
	int ret;

	if (db == NULL || b == NULL || n > DB_AUDIT_COMMIT_BATCHES_MAX)
		return VEP_ERR_ARG;
	for (i = 0; i < n; i++) {
		if (b[i] == NULL)
			return VEP_ERR_ARG;
		rows[i] = b[i]->rows;
		count[i] = b[i]->count;
		all += count[i];
	}
	if (all == 0)
		return VEP_OK;
	if ((ret = audit_write(db, rows, count, n)) != 0)
		return ret;
	for (i = 0; i < n; i++)
		batch_clear(b[i]);
	return VEP_OK;
}

void
db_audit_batch_free(struct db_audit_batch *b)
{
	if (b == NULL)
		return;
	batch_clear(b);
	free(b);
}

static int64_t
col_opt_int(struct db_st *st, int col)
{
	return db_st_col_null(st, col) ? 0 : db_st_col_int(st, col);
}

int
db_audit_query(struct db *db, const struct db_audit_filter *f,
    db_audit_cb cb, void *arg)
{
	struct db_audit_row r;
	struct db_st *st = NULL;
	int rc, ret;

	if (db == NULL || cb == NULL || (f != NULL && (f->limit < 0)))
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_AUDIT_QUERY, &sql_query, &st)) != 0)
		return ret;
	db_st_int(st, 1, f != NULL ? f->since_ms : 0);
	/* LIMIT -1 is SQLite's "no limit". */
	db_st_int(st, 2, f != NULL && f->limit > 0 ? f->limit : -1);
	db_st_text(st, 3, f != NULL ? f->email : NULL);
	while ((rc = db_st_step(st)) == DB_ROW) {
		memset(&r, 0, sizeof(r));
		r.id = db_st_col_int(st, 0);
		r.ts_ms = db_st_col_int(st, 1);
		r.event = (enum db_audit_event)(int)db_st_col_int(st, 2);
		r.email = db_st_col_text(st, 3);
		r.key_fp = db_st_col_text(st, 4);
		r.iat_ms = col_opt_int(st, 5);
		r.exp_ms = col_opt_int(st, 6);
		r.client_addr = db_st_col_text(st, 7);
		r.outcome = db_st_col_text(st, 8);
		r.signer_fp = db_st_col_text(st, 9);
		r.account = db_st_col_text(st, 10);
		r.instance = db_st_col_text(st, 11);
		if (r.email == NULL || r.client_addr == NULL || r.outcome == NULL) {
			ret = DB_ERR_CORRUPT;
			goto out;
		}
		if ((ret = cb(&r, arg)) != 0)
			goto out;
	}
	ret = rc;
out:
	db_stmt_done(st);
	return ret;
}

int
db_audit_signer_last_expiry(struct db *db, const char *signer_fp, int64_t *exp_ms)
{
	struct db_st *st = NULL;
	int rc, ret;

	if (exp_ms == NULL)
		return VEP_ERR_ARG;
	*exp_ms = 0;
	if (db == NULL || signer_fp == NULL || audit_fp_ok(signer_fp) != 0)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_AUDIT_SIGNER_EXPIRY, &sql_signer_expiry, &st)) != 0)
		return ret;
	db_st_text(st, 1, signer_fp);
	rc = db_st_step(st);
	if (rc == DB_ROW) {
		*exp_ms = col_opt_int(st, 0);
		ret = VEP_OK;
	} else {
		ret = rc == 0 ? DB_ERR_INTERNAL : rc;
	}
	db_stmt_done(st);
	return ret;
}

int
db_audit_prune(struct db *db, int64_t before_ms, int64_t max_rows, int64_t *count)
{
	struct db_st *st;
	int ret;

	if (count != NULL)
		*count = 0;
	if (db == NULL || before_ms < 0 || max_rows <= 0)
		return VEP_ERR_ARG;
	if ((ret = db_stmt(db, DB_STMT_AUDIT_PRUNE, &sql_prune, &st)) != 0)
		return ret;
	db_st_int(st, 1, before_ms);
	db_st_int(st, 2, max_rows);
	if ((ret = db_step_done(st)) != 0)
		return ret;
	if (count != NULL)
		*count = db_st_changes(st);
	return VEP_OK;
}
