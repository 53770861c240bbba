-- pg/0003_sessions_no_csrf_hash.sql - PostgreSQL's text of
-- 0003_sessions_no_csrf_hash.sql: sessions forget the CSRF token's hash.
ALTER TABLE sessions DROP COLUMN csrf_hash;
