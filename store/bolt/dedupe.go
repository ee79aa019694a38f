package bolt

import (
	"context"
	"maps"
	"sync"
	"time"
)

// Dedupe remembers the Socket Mode envelopes seen (bot.Seen) in this
// process's memory, not in the file: with the embedded store one process
// serves Slack, so every redelivery reaches the process that saw the first
// delivery, and what it remembers need not outlive it. It is safe for
// concurrent use.
type Dedupe struct {
	ttl time.Duration

	mu    sync.Mutex
	seen  map[string]time.Time // when each envelope was seen
	acks  map[string][]byte    // the acks kept, of envelopes in seen
	peak  int                  // the most envelopes seen has held since it was made
	swept time.Time            // the last removal of expired envelopes, by the callers' clock
}

// NewDedupe returns an empty memory of envelopes, each remembered for ttl
// after it was first seen (bot.SeenTTL: longer than Slack's last
// redelivery). It panics when ttl is not positive.
func NewDedupe(ttl time.Duration) *Dedupe {
	if ttl <= 0 {
		panic("bolt: NewDedupe with a non-positive TTL")
	}
	return &Dedupe{ttl: ttl, seen: make(map[string]time.Time), acks: make(map[string][]byte)}
}

// Local says that the envelopes are in this process's memory, which
// answers at once: the bot asks it directly (bot.Seen).
func (*Dedupe) Local() bool { return true }

// FirstTime reports whether the envelope id is seen for the first time
// within the TTL, and records it as seen at now: an envelope is forgotten
// once now is more than the TTL after it was seen. Of concurrent calls for
// one id, one reports true. With a context already done it records nothing.
func (d *Dedupe) FirstTime(ctx context.Context, id string, now time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if now.Sub(d.swept) > time.Minute || now.Before(d.swept) { // a sweep per envelope would cost O(n) each
		d.sweep(now)
	}
	if at, ok := d.seen[id]; ok && now.Sub(at) <= d.ttl {
		return false, nil
	}
	d.seen[id] = now
	d.peak = max(d.peak, len(d.seen))
	if len(d.acks) > 0 {
		delete(d.acks, id)
	}
	return true, nil
}

// sweep forgets the envelopes expired at now, and makes the maps anew
// once a burst they grew for has expired: a map keeps its size.
func (d *Dedupe) sweep(now time.Time) {
	d.swept = now
	for id, at := range d.seen {
		if now.Sub(at) > d.ttl {
			delete(d.seen, id)
			delete(d.acks, id)
		}
	}
	if 4*len(d.seen) < d.peak {
		seen, acks := make(map[string]time.Time, len(d.seen)), make(map[string][]byte, len(d.acks))
		maps.Copy(seen, d.seen)
		maps.Copy(acks, d.acks)
		d.seen, d.acks, d.peak = seen, acks, len(seen)
	}
}

// KeepAck records ack, the JSON payload of the ack sent for the envelope id
// (empty: an empty ack), for a redelivery. An id not seen within the TTL
// keeps nothing.
func (d *Dedupe) KeepAck(ctx context.Context, id string, ack []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.seen[id]; ok {
		d.acks[id] = append([]byte{}, ack...)
	}
	return nil
}

// Ack returns the ack kept for the envelope id; kept is false while none is.
func (d *Dedupe) Ack(ctx context.Context, id string) (ack []byte, kept bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	a, ok := d.acks[id]
	if !ok {
		return nil, false, nil
	}
	return append([]byte{}, a...), true, nil
}
