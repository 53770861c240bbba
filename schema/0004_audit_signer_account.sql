-- 0004_audit_signer_account.sql - the audit trail learns who signed and who
-- signed in.
--
-- signer_fp: for cert_issued rows, the fingerprint (lowercase hex SHA-256 of
--            the public key, as vep-keytool pubkey --fingerprint prints it) of
--            the domain key that signed the certificate, so an administrator
--            can tell when the last certificate of a retired key expires
--            (vep-keytool retire asks exactly that). NULL on older rows and
--            other events.
-- account:   for sign-in rows, the PAM account the address mapped to (it
--            differs from the address's local part with account_aliases or
--            account_suffix); NULL when the name never reached PAM as an
--            account, and on older rows.
ALTER TABLE audit ADD COLUMN signer_fp TEXT;
ALTER TABLE audit ADD COLUMN account TEXT;
CREATE INDEX audit_signer_exp ON audit (signer_fp, exp_ms) WHERE signer_fp IS NOT NULL;
