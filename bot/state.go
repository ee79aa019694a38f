package bot

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"
)

// SeenTTL is how long envelopes are remembered: longer than Slack's last
// redelivery (5 minutes).
const SeenTTL = 15 * time.Minute

// Seen remembers the envelopes seen. With replicas, a redelivery may reach
// another replica than the first delivery did: a Seen they share (the
// PostgreSQL one, pg.Dedupe, made with SeenTTL) tells it so. The
// bot's own memory is asked first in any case, and alone without one.
//
// A submission's ack is the view the person sees next, and only the
// replica that acts on the submission can make it: that replica keeps it
// there (KeepAck), and one a redelivery reaches sends the same (Ack).
//
// A Seen of one process, in its memory (the embedded store's,
// bolt.Dedupe), says so with Local: it answers at once, and is asked
// directly rather than on a goroutine bounded by sharedSeenWait, which
// costs an envelope several times what the rest of its ack does.
type Seen interface {
	// FirstTime reports whether id is seen for the first time within the
	// TTL, and records it as seen at now. Of concurrent calls for one id,
	// one reports true.
	FirstTime(ctx context.Context, id string, now time.Time) (bool, error)
	// KeepAck records the JSON of the ack sent for id (empty: none).
	KeepAck(ctx context.Context, id string, ack []byte) error
	// Ack returns the ack kept for id; kept is false while none is.
	Ack(ctx context.Context, id string) (ack []byte, kept bool, err error)
}

// local is a Seen in this process's memory.
type local interface{ Local() bool }

// sharedSeenWait bounds each question to the shared Seen: the ack waits
// for the answer, and must reach Slack within 3 s. Without an answer in
// time, this replica's memory answers.
const sharedSeenWait = 500 * time.Millisecond

// ackPoll is how often a redelivered submission's ack is looked for while
// the replica that took it has not kept it yet (it does so just after its
// own ack).
const ackPoll = 20 * time.Millisecond

// seenSet remembers envelope IDs (and the ack sent) for ttl, longer than
// Slack's last redelivery (5 minutes). The ack is kept as the JSON it goes
// out as, not as the Block Kit values it was made from: a redelivery needs
// only the bytes, and the values (a help message, a whole modal view for a
// submission) take several times the space, for ttl, for every envelope.
// An ack equal to the one before shares its bytes (a run of help answers).
//
// With a shared Seen, an envelope new here is also asked about there: one
// another replica saw first is a redelivery, not acted on here.
type seenSet struct {
	ttl time.Duration
	now func() time.Time

	shared Seen         // nil: this replica's memory only
	local  bool         // shared is in this process's memory: asked directly
	log    *slog.Logger // with shared: its failures

	mu      sync.Mutex
	seen    map[string]seenEntry
	peak    int       // most entries the map has held since it was made
	swept   time.Time // last removal of expired entries
	lastAck string    // the last non-empty ack stored
}

type seenEntry struct {
	at  time.Time
	ack string // the ack payload's JSON, "" for none
}

func newSeenSet(ttl time.Duration, now func() time.Time) *seenSet {
	return &seenSet{ttl: ttl, now: now, seen: make(map[string]seenEntry)}
}

// sharing makes s ask shared too (nil: not), logging its failures to log.
func (s *seenSet) sharing(shared Seen, log *slog.Logger) *seenSet {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s.shared, s.log = shared, log
	if l, ok := shared.(local); ok {
		s.local = l.Local()
	}
	return s
}

// check reports whether this replica handled id, and the ack it got. An
// unseen id is reserved at once, so a redelivery racing the first is
// caught too.
func (s *seenSet) check(id string) (any, bool) {
	if id == "" {
		return nil, false
	}
	return s.reserve(id, s.now())
}

// sharedFirst asks the shared Seen whether id is new: true without one. It
// answers true (new, as this replica's memory says) also when the question
// fails or takes longer than sharedSeenWait, even if the Seen ignores its
// context.
func (s *seenSet) sharedFirst(id string) bool {
	if s.shared == nil || id == "" {
		return true
	}
	now := s.now()
	var first bool
	var err error
	if s.local {
		first, err = s.shared.FirstTime(context.Background(), id, now)
	} else {
		first, err = bounded(func(ctx context.Context) (bool, error) { return s.shared.FirstTime(ctx, id, now) })
	}
	if err != nil {
		s.log.Warn("shared envelope memory failed; this replica's memory answers", "envelope_id", id, "err", err)
		return true
	}
	return first
}

// keepShared keeps the ack stored for id in the shared Seen, for a
// redelivery that reaches another replica.
func (s *seenSet) keepShared(ctx context.Context, id string) {
	s.mu.Lock()
	ack := s.seen[id].ack
	s.mu.Unlock()
	if err := s.shared.KeepAck(ctx, id, []byte(ack)); err != nil {
		s.log.Warn("the ack could not be shared; a redelivery to another replica will be acked empty", "envelope_id", id, "err", err)
	}
}

// sharedAck is the ack the replica that took id kept in the shared Seen,
// looked for until sharedSeenWait has passed, or nil. It is remembered
// here for a further redelivery.
func (s *seenSet) sharedAck(id string) any {
	ack, err := bounded(func(ctx context.Context) ([]byte, error) {
		tick := time.NewTicker(ackPoll)
		defer tick.Stop()
		for {
			ack, kept, err := s.shared.Ack(ctx, id)
			if err != nil || kept {
				return ack, err
			}
			select {
			case <-ctx.Done():
				return nil, errors.New("the replica that took it has kept no ack")
			case <-tick.C:
			}
		}
	})
	if err != nil {
		s.log.Warn("redelivered submission acked empty", "envelope_id", id, "err", err)
		return nil
	}
	s.storeJSON(id, ack)
	if len(ack) == 0 {
		return nil
	}
	return json.RawMessage(ack)
}

// bounded runs fn with sharedSeenWait, and returns when that has passed
// even if fn ignores its context.
func bounded[T any](fn func(ctx context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(context.Background(), sharedSeenWait)
	defer cancel()
	type answer struct {
		v   T
		err error
	}
	done := make(chan answer, 1)
	go func() {
		v, err := fn(ctx)
		done <- answer{v, err}
	}()
	select {
	case a := <-done:
		return a.v, a.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}

// reserve is check in this replica's memory, at now.
func (s *seenSet) reserve(id string, now time.Time) (any, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now.Sub(s.swept) > time.Minute { // a sweep per envelope would cost O(n) each
		s.swept = now
		for k, e := range s.seen {
			if now.Sub(e.at) > s.ttl {
				delete(s.seen, k)
			}
		}
		s.seen, s.peak = shrunk(s.seen, s.peak) // once a burst has expired
	}
	if e, ok := s.seen[id]; ok && now.Sub(e.at) <= s.ttl {
		if e.ack == "" {
			return nil, true
		}
		return json.RawMessage(e.ack), true // marshals to the same bytes as the first ack
	}
	s.seen[id] = seenEntry{at: now}
	s.peak = max(s.peak, len(s.seen))
	return nil, false
}

func (s *seenSet) store(id string, payload any) {
	var b []byte
	if payload != nil {
		b, _ = json.Marshal(payload) // on error, as slack-go's Ack fails too
	}
	s.storeJSON(id, b)
}

// storeJSON is store with the ack's JSON.
func (s *seenSet) storeJSON(id string, b []byte) {
	if id == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var ack string
	switch {
	case len(b) == 0:
	case string(b) == s.lastAck:
		ack = s.lastAck
	default:
		ack = string(b)
		s.lastAck = ack
	}
	s.seen[id] = seenEntry{at: s.now(), ack: ack}
}

// keyLock admits one holder per key: at most one create per event, start
// and attendee at a time, across modals and people.
type keyLock struct {
	mu   sync.Mutex
	held map[string]bool
}

func newKeyLock() *keyLock { return &keyLock{held: make(map[string]bool)} }

func (l *keyLock) tryLock(key string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held[key] {
		return false
	}
	l.held[key] = true
	return true
}

func (l *keyLock) unlock(key string) {
	l.mu.Lock()
	delete(l.held, key)
	l.mu.Unlock()
}

// inflight counts work in flight and says when there is none.
type inflight struct {
	mu   sync.Mutex
	n    int
	zero chan struct{} // closed while n is 0
}

func (f *inflight) add(delta int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.zero == nil {
		f.zero = make(chan struct{})
		close(f.zero)
	}
	if f.n == 0 && delta > 0 {
		f.zero = make(chan struct{})
	}
	f.n += delta
	if f.n == 0 && delta < 0 {
		close(f.zero)
	}
}

func (f *inflight) idle() <-chan struct{} {
	f.add(0)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.zero
}
