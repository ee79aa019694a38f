package booking

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// The windows the limits count attempts in.
const (
	MinuteWindow = time.Minute // Limits.PerMinute
	HourWindow   = time.Hour   // Limits.PerEventPerHour
)

// Limiter keeps creates inside the API's limits and holds them back after
// a 429. The client asks it before every create; *Guard is the in-memory
// one, for a single process, and a store shared by several replicas gives
// one that counts for all of them (store/pg's DB.Limiter). Its methods are
// safe for concurrent use.
//
// These semantics are checked by the booking/guardtest suite:
//   - Reserve counts an attempt for eventType when one is allowed now:
//     fewer than PerMinute attempts (of every event type) in the last
//     minute, fewer than PerEventPerHour of eventType in the last hour, and
//     no hold. Otherwise it counts nothing and returns how long until one
//     is allowed. An attempt leaves a window once it is exactly the
//     window's length old; a zero limit is no limit. Check and count are
//     one step: however many ask at once, no more are allowed than the
//     limits let through.
//   - Throttled records a 429 and holds every create back, for every event
//     type: for HoldAfter(n, retryAfter), n being the 429s in a row, and
//     never less than a hold already in place. It returns how long the
//     hold lasts from now.
//   - Answered records an answer that was not a 429, ending a run of them
//     (the next 429 is the first again); a hold in place stays.
//
// When a method fails it has recorded nothing, and Reserve's ok is false:
// a create whose limit could not be checked is not sent. With a context
// already done every method fails with the context's error.
type Limiter interface {
	Reserve(ctx context.Context, eventType string) (wait time.Duration, ok bool, err error)
	Throttled(ctx context.Context, retryAfter time.Duration) (hold time.Duration, err error)
	Answered(ctx context.Context) error
}

// ErrLimitUnchecked is the error of a create that was not sent because its
// Limiter failed: whether the limits allow it could not be told.
var ErrLimitUnchecked = errors.New("the shared booking limit could not be checked")

// HoldAfter is the hold after the nth 429 in a row (n ≥ 1): the
// Retry-After when the API sent one, but never less than a minute,
// doubling on each 429 in a row up to an hour. A longer Retry-After is
// kept whole.
func HoldAfter(n int, retryAfter time.Duration) time.Duration {
	hold := min(time.Minute<<min(max(n, 1)-1, 6), time.Hour)
	return max(hold, retryAfter)
}

// Guard is the in-memory Limiter: it keeps one process's creates inside the
// API's limits, so a busy team cannot burn the owner's hourly allowance, and
// holds creates back after a 429. It is safe for concurrent use. Replicas
// that share the API's per-IP limit need a shared Limiter instead: each
// Guard would allow the whole limit on its own.
type Guard struct {
	limits Limits
	now    func() time.Time

	mu        sync.Mutex
	recent    []time.Time            // attempts in the last minute
	perEvent  map[string][]time.Time // attempts in the last hour, per event type
	holdUntil time.Time
	strikes   int // 429s in a row
}

var _ Limiter = (*Guard)(nil)

// NewGuard returns a guard enforcing limits on the clock now.
func NewGuard(limits Limits, now func() time.Time) *Guard {
	if now == nil {
		now = time.Now
	}
	return &Guard{limits: limits, now: now, perEvent: make(map[string][]time.Time)}
}

// Reserve counts an attempt for eventType when one is allowed now. Otherwise
// it returns how long until one is, and counts nothing. It fails only when
// ctx is done.
func (g *Guard) Reserve(ctx context.Context, eventType string) (wait time.Duration, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return 0, false, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	g.recent = since(g.recent, now.Add(-MinuteWindow))
	events := since(g.perEvent[eventType], now.Add(-HourWindow))
	if len(events) == 0 {
		delete(g.perEvent, eventType)
	} else {
		g.perEvent[eventType] = events
	}

	if now.Before(g.holdUntil) {
		wait = g.holdUntil.Sub(now)
	}
	if n := g.limits.PerMinute; n > 0 && len(g.recent) >= n {
		wait = max(wait, g.recent[len(g.recent)-n].Add(MinuteWindow).Sub(now))
	}
	if n := g.limits.PerEventPerHour; n > 0 && len(events) >= n {
		wait = max(wait, events[len(events)-n].Add(HourWindow).Sub(now))
	}
	if wait > 0 {
		return wait, false, nil
	}
	g.recent = append(g.recent, now)
	g.perEvent[eventType] = append(events, now)
	return 0, true, nil
}

// Throttled records a 429 and holds every create back for
// HoldAfter(429s in a row, retryAfter), or longer when a longer hold is in
// place. It returns the hold from now. It fails only when ctx is done.
func (g *Guard) Throttled(ctx context.Context, retryAfter time.Duration) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.strikes++
	now := g.now()
	if until := now.Add(HoldAfter(g.strikes, retryAfter)); until.After(g.holdUntil) {
		g.holdUntil = until
	}
	return g.holdUntil.Sub(now), nil
}

// Answered records an answer that was not a 429, ending a run of them. It
// fails only when ctx is done.
func (g *Guard) Answered(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.Lock()
	g.strikes = 0
	g.mu.Unlock()
	return nil
}

// since drops the times at or before cutoff from a sorted slice.
func since(ts []time.Time, cutoff time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(cutoff) {
		i++
	}
	return ts[i:]
}

// limiterRetry is the RetryAfter of a create held back because its Limiter
// failed: when it will answer again is not known.
const limiterRetry = time.Minute

// reserve asks the limiter for a create, within the write's bound. Its
// error is an ErrLimitUnchecked.
func (c *Client) reserve(ctx context.Context, eventType string) (wait time.Duration, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.writeTimeout)
	defer cancel()
	wait, ok, err = c.limiter.Reserve(ctx, eventType)
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "booking limiter failed: create not sent", slog.Any("err", err))
		return limiterRetry, false, fmt.Errorf("%w: %w", ErrLimitUnchecked, err)
	}
	return wait, ok, nil
}

// throttled tells the limiter of a 429 and returns the hold. When the
// limiter fails, the hold is HoldAfter(1, retryAfter) and err says that it
// was not recorded.
func (c *Client) throttled(ctx context.Context, retryAfter time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, c.writeTimeout)
	defer cancel()
	hold, err := c.limiter.Throttled(ctx, retryAfter)
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "booking limiter failed: the hold after a 429 was not recorded", slog.Any("err", err))
		return HoldAfter(1, retryAfter), fmt.Errorf("the hold after the 429 could not be recorded: %w", err)
	}
	return hold, nil
}

// answered tells the limiter of an answer that was not a 429. A failure
// only makes the next 429's hold longer than it need be: it is logged.
func (c *Client) answered(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, c.writeTimeout)
	defer cancel()
	if err := c.limiter.Answered(ctx); err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "booking limiter failed: an answer was not recorded", slog.Any("err", err))
	}
}
