package bolt

import (
	"context"
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
	seen  map[string]seenEnvelope
	swept time.Time // the last removal of expired envelopes, by the callers' clock
}

// seenEnvelope is an envelope seen at at, and the ack kept for it.
type seenEnvelope struct {
	at   time.Time
	ack  []byte
	kept bool
}

// NewDedupe returns an empty memory of envelopes, each remembered for ttl
// after it was first seen (bot.SeenTTL: longer than Slack's last
// redelivery). It panics when ttl is not positive.
func NewDedupe(ttl time.Duration) *Dedupe {
	if ttl <= 0 {
		panic("bolt: NewDedupe with a non-positive TTL")
	}
	return &Dedupe{ttl: ttl, seen: make(map[string]seenEnvelope)}
}

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
		d.swept = now
		for k, e := range d.seen {
			if now.Sub(e.at) > d.ttl {
				delete(d.seen, k)
			}
		}
	}
	if e, ok := d.seen[id]; ok && now.Sub(e.at) <= d.ttl {
		return false, nil
	}
	d.seen[id] = seenEnvelope{at: now}
	return true, nil
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
	if e, ok := d.seen[id]; ok {
		e.ack, e.kept = append([]byte{}, ack...), true
		d.seen[id] = e
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
	e, ok := d.seen[id]
	if !ok || !e.kept {
		return nil, false, nil
	}
	return append([]byte{}, e.ack...), true, nil
}
