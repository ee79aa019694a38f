-- additive: a bookbot without this column runs on it.
-- The booking page a connected person gave (account.Account.Page): links to
-- its event types unfurl into cards of their own calendar's free times. ''
-- when they gave none.
ALTER TABLE bookbot_accounts ADD COLUMN page text NOT NULL DEFAULT '';
