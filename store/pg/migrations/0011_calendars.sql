-- additive: a bookbot without this column runs on it.
-- The ID of the calendar each connected key acts on (account.Account.Calendar):
-- the same for every account holding the same key, a keyed hash of it that
-- holds nothing of the key. '' in rows connected before it was recorded.
ALTER TABLE bookbot_accounts ADD COLUMN calendar text NOT NULL DEFAULT '';
