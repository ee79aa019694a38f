-- additive: a new table, which a bookbot that keeps event types only in memory never reads.
-- The event type each upcoming booking was last listed with, on each
-- calendar (booking.TypeStore, DB.Types): the service lists a booking its
-- attendee rescheduled with event_type null, and replicas, and a process
-- started since, fill it from here. calendar is the calendar's ID
-- ("owner", or the ID of the calendar a person's key acts on, as in 0011);
-- calendar, booking_id and event_type are bytea, opaque Go strings as in
-- 0001; the end is Unix seconds and nanoseconds, as in 0001, for Prune.
CREATE TABLE bookbot_booking_types (
	calendar   bytea   NOT NULL,
	booking_id bytea   NOT NULL,
	event_type bytea   NOT NULL,
	end_s      bigint  NOT NULL,
	end_ns     integer NOT NULL,
	PRIMARY KEY (calendar, booking_id)
);
CREATE INDEX bookbot_booking_types_end ON bookbot_booking_types (end_s, end_ns);
