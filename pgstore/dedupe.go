package pgstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Dedupe remembers the Socket Mode envelopes seen by every replica sharing
// the database, so that an envelope Slack redelivers to another replica is known
// there too (bot.Seen). It is safe for concurrent use.
type Dedupe struct {
	pool  *pgxpool.Pool
	ttl   time.Duration
	every time.Duration // between prunes

	mu     sync.Mutex
	pruned time.Time // the last prune this handle made, by the callers' clock
}

// Dedupe returns the envelopes seen, each remembered for ttl after it was
// first seen (bot.SeenTTL: longer than Slack's last redelivery). It panics
// when ttl is not positive.
func (db *DB) Dedupe(ttl time.Duration) *Dedupe {
	if ttl <= 0 {
		panic("pgstore: Dedupe with a non-positive TTL")
	}
	return &Dedupe{pool: db.pool, ttl: ttl, every: min(ttl, time.Minute)}
}

// firstTime inserts the envelope, or takes over its row when that has
// expired: either way one row is affected, and for concurrent calls, from
// any replica, once. A row expires as the in-memory set's entries do, when
// now is more than the TTL after it. $4 and $5 are now - TTL.
const firstTime = `INSERT INTO bookbot_envelopes_seen AS s (id, seen_s, seen_ns) VALUES ($1, $2, $3)
	ON CONFLICT (id) DO UPDATE SET seen_s = excluded.seen_s, seen_ns = excluded.seen_ns
	WHERE (s.seen_s, s.seen_ns) < ($4::bigint, $5::integer)`

// firstTimePruning is firstTime, and deletes every other expired row in
// the same round trip.
const firstTimePruning = `WITH pruned AS (
		DELETE FROM bookbot_envelopes_seen WHERE (seen_s, seen_ns) < ($4::bigint, $5::integer) AND id <> $1
	) ` + firstTime

// FirstTime reports whether the envelope id is seen for the first time
// within the TTL, by any replica, and records it as seen at now. Of
// concurrent calls for one id, one reports true. It is one round trip;
// about once a minute it also deletes the expired rows.
func (d *Dedupe) FirstTime(ctx context.Context, id string, now time.Time) (bool, error) {
	query := firstTime
	d.mu.Lock()
	if now.Sub(d.pruned) >= d.every || now.Before(d.pruned) {
		d.pruned = now // taken even if the prune fails: the next is due a minute later
		query = firstTimePruning
	}
	d.mu.Unlock()
	nowS, nowNS := unix(now)
	cutS, cutNS := unix(now.Add(-d.ttl))
	tag, err := d.pool.Exec(ctx, query, []byte(id), nowS, nowNS, cutS, cutNS)
	if err != nil {
		return false, fmt.Errorf("envelopes seen (postgres): %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
