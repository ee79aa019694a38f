-- additive: a bookbot without this table runs on it; it offers no own calendars.
-- People's own calendars (account.Store): each allowed person's booking API
-- key, sealed by bookbot (AES-256-GCM under BOOKBOT_SECRET_KEY, the user ID
-- bound as additional data), never in the clear. user_id is bytea, an
-- opaque Go string as in 0001; instants are Unix seconds and nanoseconds.
-- last_used_s NULL: never used. notices: '' a DM, 'off', or a channel ID.
CREATE TABLE bookbot_accounts (
	user_id        bytea   PRIMARY KEY,
	sealed         bytea   NOT NULL,
	connected_s    bigint  NOT NULL,
	connected_ns   integer NOT NULL,
	last_used_s    bigint,
	last_used_ns   integer,
	state          text    NOT NULL,
	notices        text    NOT NULL DEFAULT ''
);

-- The last read of each connected person's calendar, for their live
-- notices (notices.Snapshots): notices.EncodeSnapshot's JSON, json not
-- jsonb as in 0001. Deleted with the account.
CREATE TABLE bookbot_account_notices (
	user_id  bytea PRIMARY KEY REFERENCES bookbot_accounts (user_id) ON DELETE CASCADE,
	snapshot json  NOT NULL
);
