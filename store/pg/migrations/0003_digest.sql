-- The digest's exactly-once ledger (digest.Ledger, pg.DigestLedger).
--
-- One row per date and kind of post: the day's digest, or the notice that
-- its digest could not be built. Claim inserts the row, and the primary key
-- makes one of any number of replicas claiming at once win; Posted sets the
-- post's record on it; Release deletes it unless it was posted. A claim
-- that is never completed stays (see store/pg/ledger.go).
--
-- Instants are Unix seconds and nanoseconds, as in 0001_stores.sql.
CREATE TABLE bookbot_digest_ledger (
	day        date    NOT NULL, -- the calendar date, in the digest's zone
	kind       text    NOT NULL CHECK (kind IN ('digest', 'failure_notice')),
	-- When and by whom the date was claimed; NULL when Posted came without
	-- a claim. claimant is the host, process and a token of its own, so a
	-- replica can undo its own claim when it cannot tell whether it was
	-- recorded.
	claimed_s  bigint,
	claimed_ns integer,
	claimant   text,
	-- The post's record (digest.PostInfo), set together with posted.
	posted     boolean NOT NULL DEFAULT false,
	at_s       bigint,
	at_ns      integer,
	channel    text,
	ts         text,
	entries    bigint,
	empty      boolean,
	uncertain  boolean,
	PRIMARY KEY (day, kind),
	CHECK ((claimed_s IS NULL) = (claimed_ns IS NULL)),
	CHECK (posted OR claimed_s IS NOT NULL),
	CHECK (CASE WHEN posted THEN (at_s, at_ns, channel, ts, entries, empty, uncertain) IS NOT NULL
		ELSE (at_s, at_ns, channel, ts, entries, empty, uncertain) IS NULL END)
);
