package bot

import (
	"encoding/json"
	"sync"
	"time"
)

// seenSet remembers envelope IDs (and the ack sent) for ttl, longer than
// Slack's last redelivery (5 minutes). The ack is kept as the JSON it goes
// out as, not as the Block Kit values it was made from: a redelivery needs
// only the bytes, and the values (a help message, a whole modal view for a
// submission) take several times the space, for ttl, for every envelope.
// An ack equal to the one before shares its bytes (a run of help answers).
type seenSet struct {
	ttl time.Duration
	now func() time.Time

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

// check reports whether id was handled, and the ack it got. An unseen id is
// reserved at once, so a redelivery racing the first is caught too.
func (s *seenSet) check(id string) (any, bool) {
	if id == "" {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
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
	if id == "" {
		return
	}
	var b []byte
	if payload != nil {
		b, _ = json.Marshal(payload) // on error, as slack-go's Ack fails too
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
