-- The notices store and the personal store (notices.Store, personal.Store).
--
-- Instants are two columns: Unix seconds (bigint) and nanoseconds within the
-- second (integer). timestamptz keeps only microseconds, and Unix nanoseconds
-- in a bigint cannot hold every time (time.Time{} among them); keys and Prune
-- compare instants to the nanosecond.
--
-- Booking IDs, Slack user IDs and claim keys are bytea: they are opaque Go
-- strings, which text cannot hold when they contain a NUL byte (claim keys
-- always do) or are not UTF-8.

-- The last good read of the bookings list: one row. json, not jsonb, so
-- that a string holding \u0000 is kept as it was.
CREATE TABLE bookbot_notices_last (
	id       boolean PRIMARY KEY DEFAULT true CHECK (id),
	snapshot json NOT NULL
);

-- One row per change whose notice was claimed; channel and ts are set when
-- it was posted (Posted), and a posted claim is never released.
CREATE TABLE bookbot_notice_claims (
	booking_id bytea   NOT NULL,
	kind       text    NOT NULL,
	start_s    bigint  NOT NULL,
	start_ns   integer NOT NULL,
	since_s    bigint  NOT NULL,
	since_ns   integer NOT NULL,
	end_s      bigint  NOT NULL, -- the booking's end, for Prune; not part of the key
	end_ns     integer NOT NULL,
	claimed_s  bigint  NOT NULL,
	claimed_ns integer NOT NULL,
	channel    text,
	ts         text,
	PRIMARY KEY (booking_id, kind, start_s, start_ns, since_s, since_ns)
);

-- A booking's thread: the message later notices update and reply to, and
-- the latest end of the keys posted under it, for Prune.
CREATE TABLE bookbot_notice_threads (
	booking_id bytea   PRIMARY KEY,
	channel    text    NOT NULL,
	ts         text    NOT NULL,
	end_s      bigint  NOT NULL,
	end_ns     integer NOT NULL
);

-- Each person's settings. agenda_minute is NULL when the agenda is off.
CREATE TABLE bookbot_personal_settings (
	user_id         bytea   PRIMARY KEY,
	remind_ns       bigint  NOT NULL,
	agenda_minute   integer,
	agenda_weekdays boolean NOT NULL,
	updated_s       bigint  NOT NULL,
	updated_ns      integer NOT NULL
);

-- One row per reminder or agenda claimed (personal.ReminderKey, AgendaKey).
CREATE TABLE bookbot_personal_claims (
	key        bytea   PRIMARY KEY,
	claimed_s  bigint  NOT NULL,
	claimed_ns integer NOT NULL
);
CREATE INDEX bookbot_personal_claims_claimed ON bookbot_personal_claims (claimed_s, claimed_ns);
