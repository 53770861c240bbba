-- 0002_throttle_pairs.sql - the throttle learns two more kinds of row.
--
-- kind 3: one account from one client address (or IPv6 /64): the low limit
--         that lets an attacker's guesses from one place never lock the
--         owner out of another.
-- kind 4: an address the account signed in from recently: attempts from it
--         are not held to the account-wide limit (store/throttle.h). Its
--         window_end is when that trust lapses; failures is always 1.
-- SQLite cannot alter a CHECK constraint, so the table is rebuilt; existing
-- rows (kinds 1 and 2) are kept as they are.
CREATE TABLE throttle_next (
	id          INTEGER PRIMARY KEY,
	kind        INTEGER NOT NULL CHECK (kind IN (1, 2, 3, 4)),
	name        TEXT    NOT NULL,
	window_end  INTEGER NOT NULL,
	failures    INTEGER NOT NULL CHECK (failures > 0),
	UNIQUE (kind, name)
);
INSERT INTO throttle_next (id, kind, name, window_end, failures)
	SELECT id, kind, name, window_end, failures FROM throttle;
DROP TABLE throttle;
ALTER TABLE throttle_next RENAME TO throttle;
CREATE INDEX throttle_window_end ON throttle (window_end);
