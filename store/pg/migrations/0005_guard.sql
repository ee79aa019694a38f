-- The limiter in front of booking creates (booking.Limiter, DB.Limiter),
-- shared by every replica: the booking API counts attempts per IP address
-- and per event type, so replicas behind one address share its limits.
--
-- Instants are Unix seconds and nanoseconds, as in 0001_stores.sql, by the
-- clock of the replica that wrote them (store/pg/guard.go says what skew
-- between replicas does).

-- One row: the hold after a 429 and the 429s in a row. Reserve, Throttled
-- and Answered each lock it first (SELECT ... FOR UPDATE, or UPDATE), so
-- that a check of the attempts and the insert of one are a single step
-- for all replicas. The first hold is time.Time{}: no hold.
CREATE TABLE bookbot_guard (
	id      boolean PRIMARY KEY DEFAULT true CHECK (id),
	hold_s  bigint  NOT NULL, -- creates are held back until then
	hold_ns integer NOT NULL,
	strikes integer NOT NULL CHECK (strikes >= 0)
);
INSERT INTO bookbot_guard (hold_s, hold_ns, strikes) VALUES (-62135596800, 0, 0);

-- One row per attempt allowed. The event type is bytea, an opaque Go string
-- as in 0001. Reserve deletes the attempts older than an hour and a margin.
CREATE TABLE bookbot_guard_attempts (
	id         bigint  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	event_type bytea   NOT NULL,
	at_s       bigint  NOT NULL,
	at_ns      integer NOT NULL
);
CREATE INDEX bookbot_guard_attempts_at ON bookbot_guard_attempts (at_s, at_ns);
CREATE INDEX bookbot_guard_attempts_event ON bookbot_guard_attempts (event_type, at_s, at_ns);
