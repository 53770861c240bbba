-- pg/0005_audit_instance.sql - PostgreSQL's text of 0005_audit_instance.sql:
-- every audit row names the instance that wrote it.
ALTER TABLE audit ADD COLUMN instance TEXT COLLATE "C";
