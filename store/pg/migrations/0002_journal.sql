-- The write journal (journal.Store): every create and cancel bookbot sends,
-- recorded before it is sent and its outcome after.
--
-- entry is the journal.Entry as JSON, as the bbolt journal keeps it, so the
-- two read back the same; json, not jsonb, so that a string holding \u0000
-- is kept as it was. The other columns are what the queries select by,
-- derived from entry by bookbot and rewritten with it:
--   at_s, at_ns  Entry.At (Since, Prune), Unix seconds and nanoseconds as
--                in 0001;
--   create_key   journal.CreateKey of a create (a hash of its event, start
--                and attendee email); NULL for a cancel, a dry run, a start
--                that does not parse;
--   created      Entry.Created, the booking a create made; NULL when none;
--   cancelled    the booking a cancel cancelled (outcome cancelled, not a
--                dry run); NULL otherwise;
--   attention    in flight, or awaiting a person's review: what Recover,
--                Unreported and AwaitingReview look among, and Prune keeps.
--
-- The create index is not unique: whether an earlier create stands in the
-- way of another depends on its outcome, on its review and on cancels in
-- other rows. Begin makes its check and its insert one step under a
-- transaction-level advisory lock on the create key (see store/pg/journal.go).
CREATE TABLE bookbot_journal_entries (
	seq        bigserial PRIMARY KEY,
	at_s       bigint  NOT NULL,
	at_ns      integer NOT NULL,
	create_key bytea,
	created    bytea,
	cancelled  bytea,
	attention  boolean NOT NULL,
	entry      json    NOT NULL
);
CREATE INDEX bookbot_journal_entries_create_key ON bookbot_journal_entries (create_key, seq)
	WHERE create_key IS NOT NULL;
CREATE INDEX bookbot_journal_entries_cancelled ON bookbot_journal_entries (cancelled)
	WHERE cancelled IS NOT NULL;
CREATE INDEX bookbot_journal_entries_attention ON bookbot_journal_entries (seq)
	WHERE attention;
CREATE INDEX bookbot_journal_entries_at ON bookbot_journal_entries (at_s, at_ns);
