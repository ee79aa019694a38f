-- The replicas' shared state: who leads the singleton work (Leader,
-- WhoLeads), and the Socket Mode envelopes already seen (Dedupe).

-- One row per leader name: its current or last term. Only the session
-- holding the name's advisory lock writes it, so token only grows: the
-- fencing token, 1 for the first term and one more for each next. since and
-- heartbeat are by the database's clock (no replica's clock is compared
-- with another's); backend_pid is the session that holds the lock, for
-- WhoLeads to tell a current term from a dead one.
CREATE TABLE bookbot_leaders (
	name        text        PRIMARY KEY,
	replica     text        NOT NULL,
	token       bigint      NOT NULL,
	backend_pid integer     NOT NULL,
	since       timestamptz NOT NULL,
	heartbeat   timestamptz NOT NULL
);

-- One row per envelope ID seen, with when it was first seen (as the
-- replica's clock said: Unix seconds and nanoseconds, as in 0001). The ID
-- is bytea, an opaque Go string as in 0001.
CREATE TABLE bookbot_envelopes_seen (
	id      bytea   PRIMARY KEY,
	seen_s  bigint  NOT NULL,
	seen_ns integer NOT NULL
);
CREATE INDEX bookbot_envelopes_seen_at ON bookbot_envelopes_seen (seen_s, seen_ns);
