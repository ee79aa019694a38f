package pg

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Dedupe remembers the Socket Mode envelopes seen by every replica sharing
// the database, so that an envelope Slack redelivers to another replica is known
// there too (bot.Seen). It is safe for concurrent use.
//
// The questions asked at once go to the database together, one statement
// at a time: a burst of envelopes is a few round trips, not one each, and
// leaves the database's CPU to the rest of the work.
type Dedupe struct {
	pool  *pgxpool.Pool
	ttl   time.Duration
	every time.Duration // between prunes

	mu       sync.Mutex
	pruned   time.Time  // the last prune this handle made, by the callers' clock
	queue    []*seenAsk // questions waiting for the next statement
	flushing bool       // a goroutine is asking the database
}

// seenAsk is one FirstTime call waiting for its answer.
type seenAsk struct {
	id     string
	now    time.Time
	answer chan seenAnswer // buffered: the asker may have gone
}

type seenAnswer struct {
	first bool
	err   error
}

// dedupeTimeout bounds one statement, whoever waits for it.
const dedupeTimeout = 10 * time.Second

// Dedupe returns the envelopes seen, each remembered for ttl after it was
// first seen (bot.SeenTTL: longer than Slack's last redelivery). It panics
// when ttl is not positive.
func (db *DB) Dedupe(ttl time.Duration) *Dedupe {
	if ttl <= 0 {
		panic("pg: Dedupe with a non-positive TTL")
	}
	return &Dedupe{pool: db.pool, ttl: ttl, every: min(ttl, time.Minute)}
}

// firstTimes inserts the envelopes ($1, seen at $2 s and $3 ns), or takes
// over the row of one that has expired: a row expires as the in-memory
// set's entries do, when its envelope's now is more than the TTL ($4, in
// ns) after it. It returns the IDs seen for the first time; for
// concurrent statements, from any replica, each ID once.
const firstTimes = `INSERT INTO bookbot_envelopes_seen AS s (id, seen_s, seen_ns)
	SELECT * FROM unnest($1::bytea[], $2::bigint[], $3::integer[])
	ON CONFLICT (id) DO UPDATE SET seen_s = excluded.seen_s, seen_ns = excluded.seen_ns, ack = NULL
	WHERE s.seen_s::numeric * 1000000000 + s.seen_ns < excluded.seen_s::numeric * 1000000000 + excluded.seen_ns - $4
	RETURNING id`

// firstTimesPruning is firstTimes, and deletes every other row expired by
// $5 s and $6 ns in the same round trip.
const firstTimesPruning = `WITH pruned AS (
		DELETE FROM bookbot_envelopes_seen WHERE (seen_s, seen_ns) < ($5::bigint, $6::integer) AND id <> ALL($1::bytea[])
	) ` + firstTimes

// FirstTime reports whether the envelope id is seen for the first time
// within the TTL, by any replica, and records it as seen at now. Of
// concurrent calls for one id, one reports true. With a context already
// done it records nothing.
func (d *Dedupe) FirstTime(ctx context.Context, id string, now time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	a := &seenAsk{id: id, now: now, answer: make(chan seenAnswer, 1)}
	d.mu.Lock()
	d.queue = append(d.queue, a)
	start := !d.flushing
	d.flushing = true
	d.mu.Unlock()
	if start {
		go d.flush()
	}
	select {
	case r := <-a.answer:
		return r.first, r.err
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// flush asks the database about the questions queued, a statement at a
// time, until none are left.
func (d *Dedupe) flush() {
	for {
		d.mu.Lock()
		batch := d.queue
		d.queue = nil
		if len(batch) == 0 {
			d.flushing = false
			d.mu.Unlock()
			return
		}
		query := firstTimes
		if oldest := batch[0].now; oldest.Sub(d.pruned) >= d.every || oldest.Before(d.pruned) {
			d.pruned = oldest // taken even if the prune fails: the next is due a minute later
			query = firstTimesPruning
		}
		d.mu.Unlock()
		d.ask(query, batch)
	}
}

// ask runs one statement for batch and answers each question. Of the
// questions about one ID, the first gets the database's answer and the
// others are not first.
func (d *Dedupe) ask(query string, batch []*seenAsk) {
	var ids [][]byte
	var secs []int64
	var nsecs []int32
	asked := map[string]bool{}
	oldest := batch[0].now
	for _, a := range batch {
		if asked[a.id] {
			continue
		}
		asked[a.id] = true
		s, ns := unix(a.now)
		ids, secs, nsecs = append(ids, []byte(a.id)), append(secs, s), append(nsecs, ns)
		if a.now.Before(oldest) {
			oldest = a.now
		}
	}
	args := []any{ids, secs, nsecs, d.ttl.Nanoseconds()}
	if query == firstTimesPruning {
		cutS, cutNS := unix(oldest.Add(-d.ttl))
		args = append(args, cutS, cutNS)
	}
	ctx, cancel := context.WithTimeout(context.Background(), dedupeTimeout)
	defer cancel()
	first := map[string]bool{}
	rows, err := d.pool.Query(ctx, query, args...)
	if err == nil {
		var id []byte
		_, err = pgx.ForEachRow(rows, []any{&id}, func() error {
			first[string(id)] = true
			return nil
		})
	}
	if err != nil {
		err = fmt.Errorf("envelopes seen (postgres): %w", err)
	}
	for _, a := range batch {
		a.answer <- seenAnswer{first: err == nil && first[a.id], err: err}
		delete(first, a.id) // later questions about it are not first
	}
}

// KeepAck records ack, the JSON payload of the ack sent for the envelope id
// (empty: an empty ack), for a redelivery another replica gets. An id not
// seen within the TTL keeps nothing.
func (d *Dedupe) KeepAck(ctx context.Context, id string, ack []byte) error {
	if ack == nil {
		ack = []byte{} // NULL is "none kept"
	}
	_, err := d.pool.Exec(ctx, "UPDATE bookbot_envelopes_seen SET ack = $2 WHERE id = $1", []byte(id), ack)
	if err != nil {
		return fmt.Errorf("envelope ack (postgres): %w", err)
	}
	return nil
}

// Ack returns the ack kept for the envelope id; kept is false while none is.
func (d *Dedupe) Ack(ctx context.Context, id string) (ack []byte, kept bool, err error) {
	err = d.pool.QueryRow(ctx, "SELECT ack FROM bookbot_envelopes_seen WHERE id = $1", []byte(id)).Scan(&ack)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, false, nil
	case err != nil:
		return nil, false, fmt.Errorf("envelope ack (postgres): %w", err)
	}
	return ack, ack != nil, nil
}
