-- pg/0002_throttle_pairs.sql - PostgreSQL's text of 0002_throttle_pairs.sql:
-- the throttle learns kinds 3 (account from one address) and 4 (an address
-- the account signed in from). PostgreSQL changes the CHECK in place.
ALTER TABLE throttle DROP CONSTRAINT throttle_kind_check;
ALTER TABLE throttle ADD CONSTRAINT throttle_kind_check CHECK (kind IN (1, 2, 3, 4));
