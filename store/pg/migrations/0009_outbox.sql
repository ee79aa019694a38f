-- The outbox (outbox.Store, pg.Outbox): every message bookbot posts
-- exactly once, the digest, its failure notice, live notices, reminders
-- and agendas, in one table instead of one per kind.
--
-- One row per key. Claim inserts the row, and the primary key makes one of
-- any number of replicas claiming at once win; Posted sets the post on it;
-- Release deletes it unless it was posted; Prune deletes the rows of a
-- kind whose keep time has passed. A claim that is never settled stays.
--
-- The key is bytea, an opaque Go string as in 0001 ("personal/…" keys hold
-- NUL bytes); it begins with its kind: "digest/2026-11-24",
-- "digest-failure/2026-11-24", "notice/<hex>", "personal/…". Instants are
-- Unix seconds and nanoseconds, as in 0001.
--
-- Not additive: the claims of the tables it replaces are carried over, and
-- those tables dropped, so that no claim is made twice, in the old tables
-- and here; older replicas must stop first. One still running waits: the
-- lock below lets a claim it is making commit before the copy, or wait and
-- fail on the dropped table after it, and never be lost between the two.
LOCK TABLE bookbot_digest_ledger, bookbot_notice_claims, bookbot_personal_claims IN ACCESS EXCLUSIVE MODE;

CREATE TABLE bookbot_outbox (
	key        bytea   PRIMARY KEY,
	claimed_s  bigint  NOT NULL,
	claimed_ns integer NOT NULL,
	-- Prune counts from it: the claim's time, or a notice's booking's end.
	keep_s     bigint  NOT NULL,
	keep_ns    integer NOT NULL,
	-- The host and process that claimed the key, and a token of its own, so
	-- a replica can undo its own claim when it cannot tell whether it was
	-- recorded.
	claimant   text    NOT NULL,
	-- Where the message was posted, set together with posted; detail is
	-- the poster's own record of it (the digest's entries).
	posted     boolean NOT NULL DEFAULT false,
	at_s       bigint,
	at_ns      integer,
	channel    text,
	ts         text,
	detail     jsonb,
	CHECK ((at_s IS NULL) = (at_ns IS NULL)),
	CHECK (posted OR (at_s, channel, ts, detail) IS NULL)
);
CREATE INDEX bookbot_outbox_keep ON bookbot_outbox (keep_s, keep_ns);

-- The digest ledger: a date's digest or failure notice.
INSERT INTO bookbot_outbox (key, claimed_s, claimed_ns, keep_s, keep_ns, claimant, posted, at_s, at_ns, channel, ts, detail)
SELECT convert_to(CASE kind WHEN 'digest' THEN 'digest/' ELSE 'digest-failure/' END || to_char(day, 'YYYY-MM-DD'), 'UTF8'),
	coalesce(claimed_s, at_s), coalesce(claimed_ns, at_ns), coalesce(claimed_s, at_s), coalesce(claimed_ns, at_ns),
	coalesce(claimant, ''), posted, at_s, at_ns, channel, ts,
	CASE WHEN posted THEN jsonb_build_object('entries', entries, 'empty', empty, 'uncertain', uncertain) END
FROM bookbot_digest_ledger;

-- Notices: the key is "notice/" and the hex of notices.Key.Bytes(): the
-- booking ID and the kind, each after its length, then the start and
-- since, each as seconds (sign bit flipped) and nanoseconds. A claim is
-- kept until its booking's end.
INSERT INTO bookbot_outbox (key, claimed_s, claimed_ns, keep_s, keep_ns, claimant, posted, channel, ts)
SELECT convert_to('notice/' || encode(
		int4send(length(booking_id)) || booking_id ||
		int4send(octet_length(kind)) || convert_to(kind, 'UTF8') ||
		int8send(start_s # (-9223372036854775807 - 1)) || int4send(start_ns) ||
		int8send(since_s # (-9223372036854775807 - 1)) || int4send(since_ns), 'hex'), 'UTF8'),
	claimed_s, claimed_ns, end_s, end_ns, '', channel IS NOT NULL, channel, ts
FROM bookbot_notice_claims;

-- Reminders and agendas: the key is "personal/" and the claim's key.
INSERT INTO bookbot_outbox (key, claimed_s, claimed_ns, keep_s, keep_ns, claimant)
SELECT convert_to('personal/', 'UTF8') || key, claimed_s, claimed_ns, claimed_s, claimed_ns, ''
FROM bookbot_personal_claims;

DROP TABLE bookbot_digest_ledger, bookbot_notice_claims, bookbot_personal_claims;
