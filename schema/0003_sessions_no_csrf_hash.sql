-- 0003_sessions_no_csrf_hash.sql - sessions forget the CSRF token's hash.
--
-- The CSRF token is HMAC-SHA256(session token, "vep-csrf"), derived again
-- from the cookie on every request (auth/token.h); the stored hash was never
-- consulted. Existing sessions stay valid: they are found by token_hash,
-- which is kept, and their CSRF tokens derive from their cookies as before.
-- csrf_hash is in no index and its CHECK names only itself, so SQLite
-- (3.35 and later) can drop it in place.
ALTER TABLE sessions DROP COLUMN csrf_hash;
