-- additive: a new table, which a bookbot without offers never reads.
-- The offer cards posted in conversations (offer.Store, DB.Offers): an
-- offer's JSON (bytea, as Go strings are opaque in 0001: jsonb refuses a
-- NUL) by its ID. Update locks the row (SELECT ... FOR UPDATE), so
-- replicas taking a time from one offer take turns. Expiry is Unix
-- seconds and nanoseconds, as in 0001, for Prune.
CREATE TABLE bookbot_offers (
	id         bytea   PRIMARY KEY,
	offer      bytea   NOT NULL,
	expires_s  bigint  NOT NULL,
	expires_ns integer NOT NULL
);
CREATE INDEX bookbot_offers_expires ON bookbot_offers (expires_s, expires_ns);
