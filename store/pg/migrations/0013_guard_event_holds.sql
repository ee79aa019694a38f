-- additive: a new table; a bookbot without it holds every create back after any 429, as before, and never reads it.
-- The holds of one event type after a 429 of its hourly limit (booking.Limiter,
-- DB.Limiter): the service's answer names no limit, so a 429 while the
-- replicas' attempts of the last minute are under the limit per address is
-- taken for the event type's, and holds back that event type alone, until
-- then. (Under the limit: the attempts of the minute before the refused
-- one.) The event type is bytea, an opaque Go string as in 0001 (a person's
-- own calendar prefixes its ID, "<calendar ID>\x00intro-call"); instants
-- are Unix seconds and nanoseconds. Reserve and Throttled change it only
-- while they hold bookbot_guard's row, so every replica sees one hold per
-- event type.
CREATE TABLE bookbot_guard_event_holds (
	event_type bytea   PRIMARY KEY,
	hold_s     bigint  NOT NULL, -- creates of the event type are held back until then
	hold_ns    integer NOT NULL
);
