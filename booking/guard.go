package booking

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
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

// AnswerSlack is how much longer than MinuteWindow Throttled counts the
// attempts of the minute back: a 429 comes a round trip after its attempt,
// and the service's clock sees the attempts later than bookbot's, so an
// attempt that has just left bookbot's minute may still have been in the
// service's when it refused.
const AnswerSlack = 5 * time.Second

// Limiter keeps creates inside the API's limits and holds them back after
// a 429. The client asks it before every create; *Guard is the in-memory
// one, for a single process, and a store shared by several replicas gives
// one that counts for all of them (store/pg's DB.Limiter). Its methods are
// safe for concurrent use.
//
// These semantics are checked by the booking/guardtest suite:
//   - Reserve counts an attempt for eventType when one is allowed now:
//     fewer than PerMinute attempts (of every event type) in the last
//     minute, fewer than PerEventPerHour of eventType in the last hour, no
//     hold of every create, and no hold of eventType. Otherwise it counts
//     nothing and returns how long until one is allowed. An attempt leaves
//     a window once it is exactly the window's length old, and one a clock
//     ahead counted, later than now, is in it; a zero limit is no limit.
//     Check and count are one step: however many ask at once, no more are
//     allowed than the limits let through.
//   - Throttled records a 429 to a create of eventType. The answer does
//     not say which limit it met, so the limiter tells by its own count.
//     The API refuses an attempt per address once PerMinute came before it
//     in the minute, so with more than PerMinute attempts (of every event
//     type, this one among them) in the last minute and AnswerSlack, as
//     when Reserve let one through the moment the first left the minute,
//     or a replica whose clock is ahead let one through, it was the limit
//     per address, and every create, of every event type, is held back for
//     HoldAfter(n, retryAfter), n being the 429s of that limit in a row;
//     otherwise it was eventType's hourly limit, and only eventType is
//     held back, for EventHold(retryAfter). Neither hold is ever shortened
//     by a later one. It returns how long the hold lasts from now, and
//     every: whether it holds every create.
//   - Answered records an answer that was not a 429, ending a run of them
//     (the next 429 is the first again); holds in place stay.
//
// When a method fails it has recorded nothing, and Reserve's ok is false:
// a create whose limit could not be checked is not sent. With a context
// already done every method fails with the context's error.
type Limiter interface {
	Reserve(ctx context.Context, eventType string) (wait time.Duration, ok bool, err error)
	Throttled(ctx context.Context, eventType string, retryAfter time.Duration) (hold time.Duration, every bool, err error)
	Answered(ctx context.Context) error
}

// ErrLimitUnchecked is the error of a create that was not sent because its
// Limiter failed: whether the limits allow it could not be told.
var ErrLimitUnchecked = errors.New("the shared booking limit could not be checked")

// EventHold is the hold of one event type after a 429 of its hourly limit:
// the Retry-After when the API sent one (never less than a minute), else
// the hour the API says such a limit can take.
func EventHold(retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return max(retryAfter, time.Minute)
	}
	return HourWindow
}

// HoldAfter is the hold of every create after the nth 429 in a row of the
// limit per address (n ≥ 1): the Retry-After when the API sent one, but
// never less than a minute, doubling on each 429 in a row up to an hour. A
// longer Retry-After is kept whole.
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

	mu         sync.Mutex
	recent     []time.Time            // attempts in the last hour, in order (see Reserve)
	perEvent   map[string][]time.Time // attempts in the last hour, per event type, in order
	holdUntil  time.Time              // of every create
	eventHolds map[string]time.Time   // of one event type, until then
	strikes    int                    // 429s of the limit per address in a row
}

var _ Limiter = (*Guard)(nil)

// NewGuard returns a guard enforcing limits on the clock now.
func NewGuard(limits Limits, now func() time.Time) *Guard {
	if now == nil {
		now = time.Now
	}
	return &Guard{limits: limits, now: now, perEvent: make(map[string][]time.Time), eventHolds: make(map[string]time.Time)}
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
	// Attempts are kept the hour, as the shared limiter keeps them, so
	// that a clock stepped back still counts the minute's.
	g.recent = since(g.recent, now.Add(-HourWindow))
	minute := since(g.recent, now.Add(-MinuteWindow))
	events := since(g.perEvent[eventType], now.Add(-HourWindow))
	if len(events) == 0 {
		delete(g.perEvent, eventType)
	} else {
		g.perEvent[eventType] = events
	}

	if now.Before(g.holdUntil) {
		wait = g.holdUntil.Sub(now)
	}
	if until, ok := g.eventHolds[eventType]; ok && now.Before(until) {
		wait = max(wait, until.Sub(now))
	} else if ok {
		delete(g.eventHolds, eventType)
	}
	if n := g.limits.PerMinute; n > 0 && len(minute) >= n {
		wait = max(wait, minute[len(minute)-n].Add(MinuteWindow).Sub(now))
	}
	if n := g.limits.PerEventPerHour; n > 0 && len(events) >= n {
		wait = max(wait, events[len(events)-n].Add(HourWindow).Sub(now))
	}
	if wait > 0 {
		return wait, false, nil
	}
	g.recent = insert(g.recent, now)
	g.perEvent[eventType] = insert(events, now)
	return 0, true, nil
}

// Throttled records a 429 to a create of eventType, and holds back every
// create when the attempts of the last minute and AnswerSlack before this
// one reached the limit per address, else eventType alone (see Limiter).
// It returns the hold from now. It fails only when ctx is done.
func (g *Guard) Throttled(ctx context.Context, eventType string, retryAfter time.Duration) (time.Duration, bool, error) {
	if err := ctx.Err(); err != nil {
		return 0, false, err
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if n := g.limits.PerMinute; n > 0 && len(since(g.recent, now.Add(-MinuteWindow-AnswerSlack))) > n {
		g.strikes++
		if until := now.Add(HoldAfter(g.strikes, retryAfter)); until.After(g.holdUntil) {
			g.holdUntil = until
		}
		return g.holdUntil.Sub(now), true, nil
	}
	until := now.Add(EventHold(retryAfter))
	if held := g.eventHolds[eventType]; held.After(until) {
		until = held
	}
	g.eventHolds[eventType] = until
	return until.Sub(now), false, nil
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

// insert puts t into a sorted slice, after the times at or before it: with
// a clock stepped back it goes before those counted ahead.
func insert(ts []time.Time, t time.Time) []time.Time {
	return slices.Insert(ts, sort.Search(len(ts), func(i int) bool { return ts[i].After(t) }), t)
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

// throttled tells the limiter of a 429 to a create of eventType and
// returns the hold, and whether it holds every create. When the limiter
// fails, which limit was met cannot be told and nothing is held: the wait
// to advise is the longer, EventHold(retryAfter), and err says that it was
// not recorded.
func (c *Client) throttled(ctx context.Context, eventType string, retryAfter time.Duration) (time.Duration, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, c.writeTimeout)
	defer cancel()
	hold, every, err := c.limiter.Throttled(ctx, eventType, retryAfter)
	if err != nil {
		c.log.LogAttrs(ctx, slog.LevelWarn, "booking limiter failed: the hold after a 429 was not recorded", slog.Any("err", err))
		return EventHold(retryAfter), false, fmt.Errorf("the hold after the 429 could not be recorded: %w", err)
	}
	return hold, every, nil
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
