-- pg/0004_audit_signer_account.sql - PostgreSQL's text of
-- 0004_audit_signer_account.sql: the signing key's fingerprint and the PAM
-- account of each audit row.
ALTER TABLE audit ADD COLUMN signer_fp TEXT COLLATE "C";
ALTER TABLE audit ADD COLUMN account TEXT COLLATE "C";
CREATE INDEX audit_signer_exp ON audit (signer_fp, exp_ms) WHERE signer_fp IS NOT NULL;
