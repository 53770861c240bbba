-- 0001_initial.sql - sessions, login throttling and the audit trail.
--
-- Times: sessions and throttle windows in seconds since the epoch; audit rows
-- in milliseconds (certificate iat/exp are milliseconds in BrowserID).
-- Secrets never land here: a session is found by the SHA-256 of its token,
-- and its CSRF token is kept only as a SHA-256 too.

CREATE TABLE sessions (
	id          INTEGER PRIMARY KEY,
	token_hash  BLOB    NOT NULL UNIQUE CHECK (length(token_hash) = 32),
	csrf_hash   BLOB    NOT NULL CHECK (length(csrf_hash) = 32),
	email       TEXT    NOT NULL,
	created     INTEGER NOT NULL,
	last_seen   INTEGER NOT NULL,
	idle_s      INTEGER NOT NULL CHECK (idle_s > 0),
	absolute_at INTEGER NOT NULL,
	-- min(last_seen + idle_s, absolute_at): one indexed column so lookups and
	-- purges compare against a single value.
	expires_at  INTEGER NOT NULL
);
CREATE INDEX sessions_expires ON sessions (expires_at);
CREATE INDEX sessions_email ON sessions (email, created);

-- One row per (kind, name) with a fixed window: the first failure opens it,
-- failures inside it count, a failure after window_end opens a new one.
-- kind: 1 = account name as typed, 2 = client address.
CREATE TABLE throttle (
	id          INTEGER PRIMARY KEY,
	kind        INTEGER NOT NULL CHECK (kind IN (1, 2)),
	name        TEXT    NOT NULL,
	window_end  INTEGER NOT NULL,
	failures    INTEGER NOT NULL CHECK (failures > 0),
	UNIQUE (kind, name)
);
-- Pruning walks expired windows oldest first.
CREATE INDEX throttle_window_end ON throttle (window_end);

-- The audit events, the same table as audit_event_names[] in store/audit.c
-- (a unit test checks they agree).
CREATE TABLE audit_events (
	id   INTEGER PRIMARY KEY,
	name TEXT NOT NULL UNIQUE
);
INSERT INTO audit_events (id, name) VALUES
	(1, 'login_success'),
	(2, 'login_failure'),
	(3, 'cert_issued'),
	(4, 'cert_refused'),
	(5, 'logout');

CREATE TABLE audit (
	id          INTEGER PRIMARY KEY,
	ts_ms       INTEGER NOT NULL,
	event       INTEGER NOT NULL REFERENCES audit_events (id),
	email       TEXT    NOT NULL,          -- address or account, or 'unknown'
	key_fp      TEXT,                      -- hex SHA-256 of the user key JSON
	iat_ms      INTEGER,
	exp_ms      INTEGER,
	client_addr TEXT    NOT NULL,
	outcome     TEXT    NOT NULL
);
CREATE INDEX audit_ts ON audit (ts_ms);
CREATE INDEX audit_email_ts ON audit (email, ts_ms);
