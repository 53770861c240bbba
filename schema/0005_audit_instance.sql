-- 0005_audit_instance.sql - every audit row names the instance that wrote it.
--
-- instance: the writer's instance_name (its host name by default), so that
--           several instances sharing one store (PostgreSQL) leave one
--           trail that still says which machine did what. NULL on older
--           rows.
ALTER TABLE audit ADD COLUMN instance TEXT;
