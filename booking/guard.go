package booking

import (
	"sync"
	"time"
)

// Limits are the API's booking-attempt limits. Failed attempts count too.
type Limits struct {
	PerMinute       int // all creates from this process (the API counts per IP)
	PerEventPerHour int // creates for one event type
}

// DefaultLimits are the limits the API documents.
var DefaultLimits = Limits{PerMinute: 5, PerEventPerHour: 20}

// Guard keeps creates inside the API's limits, so a busy team cannot burn the
// owner's hourly allowance, and holds creates back after a 429. It is safe
// for concurrent use.
type Guard struct {
	limits Limits
	now    func() time.Time

	mu        sync.Mutex
	recent    []time.Time            // attempts in the last minute
	perEvent  map[string][]time.Time // attempts in the last hour, per event type
	holdUntil time.Time
	strikes   int // 429s in a row
}

// NewGuard returns a guard enforcing limits on the clock now.
func NewGuard(limits Limits, now func() time.Time) *Guard {
	if now == nil {
		now = time.Now
	}
	return &Guard{limits: limits, now: now, perEvent: make(map[string][]time.Time)}
}

// Reserve counts an attempt for eventType when one is allowed now. Otherwise
// it returns how long until one is, and counts nothing.
func (g *Guard) Reserve(eventType string) (wait time.Duration, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.recent = since(g.recent, now.Add(-time.Minute))
	events := since(g.perEvent[eventType], now.Add(-time.Hour))
	g.perEvent[eventType] = events

	if now.Before(g.holdUntil) {
		wait = g.holdUntil.Sub(now)
	}
	if n := g.limits.PerMinute; n > 0 && len(g.recent) >= n {
		wait = max(wait, g.recent[len(g.recent)-n].Add(time.Minute).Sub(now))
	}
	if n := g.limits.PerEventPerHour; n > 0 && len(events) >= n {
		wait = max(wait, events[len(events)-n].Add(time.Hour).Sub(now))
	}
	if wait > 0 {
		return wait, false
	}
	g.recent = append(g.recent, now)
	g.perEvent[eventType] = append(events, now)
	return 0, true
}

// Throttled records a 429 and holds every create back: for the Retry-After
// when the API sent one, else for a minute, doubling on each 429 in a row up
// to an hour. It returns the hold.
func (g *Guard) Throttled(retryAfter time.Duration) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.strikes++
	hold := min(time.Minute<<min(g.strikes-1, 6), time.Hour)
	hold = max(hold, retryAfter)
	g.holdUntil = g.now().Add(hold)
	return hold
}

// Answered records an answer that was not a 429, ending a run of them.
func (g *Guard) Answered() {
	g.mu.Lock()
	g.strikes = 0
	g.mu.Unlock()
}

// since drops the times before cutoff from a sorted slice.
func since(ts []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(cutoff) {
		i++
	}
	return ts[i:]
}
