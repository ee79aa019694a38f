// Package guardtest checks an implementation of booking.Limiter against the
// semantics its documentation gives. It is for tests only.
package guardtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/fakeclock"
)

// Run runs the conformance suite, each subtest against a limiter of its
// own.
//
// fresh makes that limiter: it is called once by each subtest, with the
// subtest's t, the limits to enforce and the clock to read (a fake one the
// subtest moves), and must make a limiter that has counted nothing and that
// no other subtest sees. It returns open, which returns a handle on that
// same limiter each time it is called, as another replica would get one:
// the suite calls it more than once to check that what one handle counted
// and held counts for the others, and that handles used at once never let
// more through than the limits. open is called on the subtest's goroutine;
// it reports a failure with t.Fatal, and registers with t.Cleanup the
// closing of what it opens, if anything needs it.
//
// Waits and holds are compared to the nanosecond: the limiter must keep
// the clock's instants exactly.
//
// The subtests run in parallel with each other.
func Run(t *testing.T, fresh func(t *testing.T, limits booking.Limits, now func() time.Time) (open func() booking.Limiter)) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clock := fakeclock.New(base)
			c.run(t, &env{clock: clock, open: fresh(t, c.limits, clock.Now)})
		})
	}
}

// base is the time the subtests start at.
var base = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// one and two are limits small enough to reach in a few steps.
var (
	one = booking.Limits{PerMinute: 1, PerEventPerHour: 10}
	two = booking.Limits{PerMinute: 2, PerEventPerHour: 2}
	// perAddress is a limit a minute alone, of two, so that one attempt
	// past it (overfill) makes no limit's wait longer than a minute.
	perAddress = booking.Limits{PerMinute: 2}
)

var cases = []struct {
	name   string
	limits booking.Limits
	run    func(t *testing.T, e *env)
}{
	{"Reserve/per minute across event types", booking.DefaultLimits, perMinute},
	{"Reserve/per event type per hour", booking.DefaultLimits, perEventPerHour},
	{"Reserve/refusals do not count", one, refusalsDoNotCount},
	{"Reserve/minute window slides", two, minuteSlides},
	{"Reserve/hour window slides", booking.Limits{PerEventPerHour: 2}, hourSlides},
	{"Reserve/a clock stepped back", booking.Limits{PerEventPerHour: 2}, steppedBack},
	{"Reserve/no limits", booking.Limits{}, noLimits},
	{"Reserve/event types are opaque", booking.Limits{PerEventPerHour: 1}, opaqueEventTypes},
	{"Reserve/the longest wait", booking.Limits{PerMinute: 2, PerEventPerHour: 1}, longestWait},
	{"Reserve/handles share attempts", booking.DefaultLimits, handlesShare},
	{"Throttled/growing pause", perAddress, growingPause},
	{"Throttled/Retry-After", perAddress, retryAfter},
	{"Throttled/holds every event type and handle", booking.DefaultLimits, holdsEveryone},
	{"Throttled/at the minute's limit, an event type's", booking.DefaultLimits, atTheLimit},
	{"Throttled/past the minute's limit a round trip ago, every create", booking.DefaultLimits, roundTrip},
	{"Throttled/a shorter hold keeps the longer", booking.Limits{PerMinute: 2}, longerHoldKept},
	{"Throttled/an event type's limit holds it alone, for an hour", booking.DefaultLimits, eventHoldsAlone},
	{"Throttled/an event type's Retry-After", booking.DefaultLimits, eventRetryAfter},
	{"Throttled/an event type's 429 is no strike", booking.Limits{PerMinute: 2}, eventNoStrike},
	{"Throttled/without a limit per address", booking.Limits{}, noLimitPerAddress},
	{"Answered/resets the strikes", perAddress, answeredResets},
	{"Answered/from another handle", perAddress, answeredShared},
	{"Answered/keeps the hold", perAddress, answeredKeepsHold},
	{"Concurrent/20 goroutines", booking.DefaultLimits, concurrentOne},
	{"Concurrent/two handles", booking.DefaultLimits, concurrentTwo},
	{"Concurrent/per event type", booking.Limits{PerEventPerHour: 3}, concurrentPerEvent},
	{"Concurrent/every 429 counts", perAddress, concurrentThrottled},
	{"Context/cancelled", booking.DefaultLimits, cancelled},
}

// env is a subtest's clock and limiter.
type env struct {
	clock   *fakeclock.Clock
	open    func() booking.Limiter
	fillers int // event types overfill made up
}

// overfill has l count one attempt more in the last minute than its limit
// per address, as a shared limiter does when a replica whose clock is ahead
// let one through: it reserves attempts, of event types of their own, until
// one is refused, then that one on a clock ahead by the wait. A 429 now is
// the limit per address's. No hold may be in place.
func (e *env) overfill(t *testing.T, l booking.Limiter) {
	t.Helper()
	for {
		e.fillers++
		ev := fmt.Sprintf("filler-%d", e.fillers)
		wait, ok, err := l.Reserve(t.Context(), ev)
		if err != nil {
			t.Fatalf("Reserve(%q): %v", ev, err)
		}
		if !ok {
			e.clock.Advance(wait)
			allow(t, l, ev)
			e.clock.Advance(-wait)
			return
		}
	}
}

// allow checks that l allows an attempt for ev now.
func allow(t *testing.T, l booking.Limiter, ev string) {
	t.Helper()
	wait, ok, err := l.Reserve(t.Context(), ev)
	if err != nil {
		t.Fatalf("Reserve(%q): %v", ev, err)
	}
	if !ok {
		t.Fatalf("Reserve(%q) refused for %v, want allowed", ev, wait)
	}
}

// refuse checks that l refuses an attempt for ev now, for want.
func refuse(t *testing.T, l booking.Limiter, ev string, want time.Duration) {
	t.Helper()
	wait, ok, err := l.Reserve(t.Context(), ev)
	if err != nil {
		t.Fatalf("Reserve(%q): %v", ev, err)
	}
	if ok {
		t.Fatalf("Reserve(%q) allowed, want refused for %v", ev, want)
	}
	if wait != want {
		t.Fatalf("Reserve(%q) refused for %v, want %v", ev, wait, want)
	}
}

// throttled records a 429 to a create of ev with retryAfter and checks the
// hold, and that it holds every create.
func throttled(t *testing.T, l booking.Limiter, ev string, retryAfter, want time.Duration, every bool) {
	t.Helper()
	hold, all, err := l.Throttled(t.Context(), ev, retryAfter)
	if err != nil {
		t.Fatalf("Throttled(%q, %v): %v", ev, retryAfter, err)
	}
	if hold != want || all != every {
		t.Fatalf("Throttled(%q, %v) = %v, every %v; want %v, every %v", ev, retryAfter, hold, all, want, every)
	}
}

func answered(t *testing.T, l booking.Limiter) {
	t.Helper()
	if err := l.Answered(t.Context()); err != nil {
		t.Fatalf("Answered: %v", err)
	}
}

// Five a minute, whatever the event type: the API counts per IP.
func perMinute(t *testing.T, e *env) {
	l := e.open()
	for i, ev := range []string{"intro", "consultation", "intro", "demo", "consultation"} {
		allow(t, l, ev)
		if i < 4 {
			e.clock.Advance(time.Second)
		}
	}
	refuse(t, l, "other-event", 56*time.Second) // until the first is a minute old
	e.clock.Advance(56 * time.Second)
	allow(t, l, "other-event")
	refuse(t, l, "intro", time.Second) // the second is now the oldest
}

// Twenty an hour per event type; other event types are not held.
func perEventPerHour(t *testing.T, e *env) {
	l := e.open()
	for range 20 {
		allow(t, l, "intro")
		e.clock.Advance(time.Minute) // stay under 5 a minute
	}
	refuse(t, l, "intro", 40*time.Minute)
	allow(t, l, "consultation")
	e.clock.Advance(40 * time.Minute)
	allow(t, l, "intro")
	refuse(t, l, "intro", time.Minute) // the second left the hour: the third is the oldest
}

// A refused attempt is not an attempt.
func refusalsDoNotCount(t *testing.T, e *env) {
	l := e.open()
	allow(t, l, "intro")
	for i := range 10 {
		refuse(t, l, "intro", time.Minute-time.Duration(i)*time.Second)
		e.clock.Advance(time.Second)
	}
	e.clock.Advance(50 * time.Second)
	allow(t, l, "intro")
	refuse(t, l, "intro", time.Minute)
}

// An attempt leaves the minute when it is exactly a minute old, to the
// nanosecond.
func minuteSlides(t *testing.T, e *env) {
	l := e.open()
	allow(t, l, "a")
	e.clock.Advance(20*time.Second + 1)
	allow(t, l, "b")
	refuse(t, l, "c", 40*time.Second-1)
	e.clock.Advance(40*time.Second - 2)
	refuse(t, l, "c", 1) // a nanosecond before the first is a minute old
	e.clock.Advance(1)
	allow(t, l, "c")
	refuse(t, l, "d", 20*time.Second+1) // b is the oldest now
	e.clock.Advance(time.Hour)
	allow(t, l, "d")
	allow(t, l, "e")
}

// An attempt leaves its event type's hour when it is exactly an hour old.
func hourSlides(t *testing.T, e *env) {
	l := e.open()
	allow(t, l, "intro")
	e.clock.Advance(10 * time.Minute)
	allow(t, l, "intro")
	refuse(t, l, "intro", 50*time.Minute)
	e.clock.Advance(50*time.Minute - 1)
	refuse(t, l, "intro", 1)
	e.clock.Advance(1)
	allow(t, l, "intro")
	refuse(t, l, "intro", 10*time.Minute)
}

// An attempt counted on a clock ahead stays in its event type's hour until
// it is an hour old, and one counted after it, on the clock stepped back,
// leaves before it.
func steppedBack(t *testing.T, e *env) {
	l := e.open()
	e.clock.Advance(10 * time.Minute)
	allow(t, l, "intro")
	e.clock.Advance(-10 * time.Minute)
	allow(t, l, "intro")
	refuse(t, l, "intro", time.Hour) // until the second is an hour old
	e.clock.Advance(time.Hour)
	allow(t, l, "intro")
	refuse(t, l, "intro", 10*time.Minute) // the first is the oldest
}

// A zero limit is no limit.
func noLimits(t *testing.T, e *env) {
	l := e.open()
	for range 50 {
		allow(t, l, "intro")
	}
}

// Event types differing in any byte are distinct, even those no text type
// could hold.
func opaqueEventTypes(t *testing.T, e *env) {
	l := e.open()
	evs := []string{"a\x00b", "a\x00c", "a", "\xff\xfe", "", "A"}
	for _, ev := range evs {
		allow(t, l, ev)
	}
	for _, ev := range evs {
		refuse(t, l, ev, time.Hour)
	}
	allow(t, l, "a\x00")
}

// A wait is the longest of the hold's and the limits'.
func longestWait(t *testing.T, e *env) {
	l := e.open()
	allow(t, l, "intro")
	e.overfill(t, l)
	throttled(t, l, "intro", 90*time.Second, 90*time.Second, true)
	refuse(t, l, "consultation", 90*time.Second) // the hold is longer than the minute
	refuse(t, l, "intro", time.Hour)             // intro's hour is longer than the hold
	e.clock.Advance(90 * time.Second)
	allow(t, l, "consultation")
}

// What one handle counts, every handle counts.
func handlesShare(t *testing.T, e *env) {
	a, b := e.open(), e.open()
	for range 3 {
		allow(t, a, "intro")
	}
	e.clock.Advance(time.Second)
	allow(t, b, "intro")
	allow(t, b, "consultation")
	refuse(t, a, "demo", 59*time.Second)
	refuse(t, b, "demo", 59*time.Second)
	refuse(t, e.open(), "demo", 59*time.Second) // a handle opened later, as a restarted replica
}

// Without Retry-After the hold of every create, after a 429 with the
// minute's attempts past their limit, starts at a minute and doubles on each
// 429 in a row, up to an hour; a Retry-After longer than that is kept
// whole.
func growingPause(t *testing.T, e *env) {
	l := e.open()
	for i, tt := range []struct{ retryAfter, want time.Duration }{
		{0, time.Minute},
		{0, 2 * time.Minute},
		{10 * time.Second, 4 * time.Minute},
		{0, 8 * time.Minute},
		{0, 16 * time.Minute},
		{0, 32 * time.Minute},
		{0, time.Hour},
		{0, time.Hour},
		{90 * time.Minute, 90 * time.Minute},
		{0, time.Hour},
	} {
		t.Logf("429 #%d, Retry-After %v", i+1, tt.retryAfter)
		allow(t, l, "intro")
		e.overfill(t, l)
		throttled(t, l, "intro", tt.retryAfter, tt.want, true)
		refuse(t, l, "demo", tt.want)
		e.clock.Advance(tt.want - 1)
		refuse(t, l, "demo", 1)
		e.clock.Advance(1)
	}
	allow(t, l, "intro")
}

// The first 429's hold is its Retry-After, when longer than a minute.
func retryAfter(t *testing.T, e *env) {
	l := e.open()
	allow(t, l, "intro")
	e.overfill(t, l)
	throttled(t, l, "intro", 10*time.Minute+1, 10*time.Minute+1, true)
	refuse(t, l, "intro", 10*time.Minute+1)
	e.clock.Advance(10*time.Minute + 1)
	allow(t, l, "intro")
	answered(t, l)
	e.overfill(t, l)
	throttled(t, l, "intro", 30*time.Second, time.Minute, true) // never less than a minute
	answered(t, l)
	e.clock.Advance(time.Minute)
	allow(t, l, "intro")
	e.overfill(t, l)
	throttled(t, l, "intro", 3*time.Hour, 3*time.Hour, true) // nor cut to an hour
}

// A hold of every create keeps every create back, from every handle, for
// every event type: a 429 met with six attempts in the minute.
func holdsEveryone(t *testing.T, e *env) {
	a, b := e.open(), e.open()
	for _, ev := range []string{"intro", "consultation", "intro", "demo", "consultation"} {
		allow(t, []booking.Limiter{a, b}[len(ev)%2], ev)
	}
	e.overfill(t, b)
	throttled(t, a, "consultation", 5*time.Minute, 5*time.Minute, true)
	e.clock.Advance(time.Minute)
	for _, ev := range []string{"intro", "consultation", "demo"} {
		refuse(t, a, ev, 4*time.Minute)
		refuse(t, b, ev, 4*time.Minute)
	}
	e.clock.Advance(4 * time.Minute)
	allow(t, b, "intro")
	allow(t, a, "intro")
}

// A 429 to the fifth attempt of a minute, which the API's limit per
// address lets through (it refuses the sixth), is the event type's: it
// alone is held, for the hour, and others book once the minute allows. Its
// answer comes a round trip later, and an attempt that is then exactly
// AnswerSlack past the minute is not counted.
func atTheLimit(t *testing.T, e *env) {
	a, b := e.open(), e.open()
	allow(t, b, "demo")
	e.clock.Advance(time.Minute)
	for i, ev := range []string{"intro", "consultation", "intro", "demo", "consultation"} {
		if i > 0 {
			e.clock.Advance(time.Second)
		}
		allow(t, []booking.Limiter{a, b}[len(ev)%2], ev)
	}
	e.clock.Set(base.Add(booking.MinuteWindow + booking.AnswerSlack)) // the answer
	throttled(t, a, "consultation", 0, time.Hour, false)
	wait := 2*time.Minute - booking.MinuteWindow - booking.AnswerSlack // until the first of the five is a minute old
	refuse(t, b, "intro", wait)
	e.clock.Advance(wait)
	allow(t, b, "intro")
	refuse(t, a, "consultation", time.Hour-wait)
}

// The sixth attempt, which Reserve lets through the moment the first is a
// minute old, may still be the sixth of the service's minute: it sees the
// attempts later than they are sent, and a 429 comes a round trip after
// its attempt. Such a 429 is the limit per address's.
func roundTrip(t *testing.T, e *env) {
	a, b := e.open(), e.open()
	for i, ev := range []string{"intro", "consultation", "intro", "demo", "consultation"} {
		allow(t, []booking.Limiter{a, b}[i%2], ev)
		e.clock.Advance(time.Second)
	}
	e.clock.Advance(55 * time.Second)
	allow(t, a, "demo")
	e.clock.Advance(300 * time.Millisecond)
	throttled(t, b, "demo", 0, time.Minute, true)
	refuse(t, a, "intro", time.Minute)
}

// A 429 whose hold ends sooner than the one in place (a create sent before
// the hold, answered after it) does not shorten it; it still counts as a
// strike.
func longerHoldKept(t *testing.T, e *env) {
	a, b := e.open(), e.open()
	allow(t, a, "intro")
	allow(t, b, "demo")
	e.overfill(t, a)
	throttled(t, a, "intro", 30*time.Minute, 30*time.Minute, true)
	e.clock.Advance(30 * time.Second)
	throttled(t, b, "demo", 0, 29*time.Minute+30*time.Second, true)
	refuse(t, a, "intro", 29*time.Minute+30*time.Second)
	e.clock.Advance(29*time.Minute + 30*time.Second)
	allow(t, a, "intro")
	allow(t, b, "demo")
	e.overfill(t, b)
	throttled(t, a, "intro", 0, 4*time.Minute, true) // the third 429 in a row
}

// A 429 met with the minute's attempts under their limit is the event
// type's hourly limit: that event type alone is held back, from every
// handle, for the hour such a limit can take; others book on.
func eventHoldsAlone(t *testing.T, e *env) {
	a, b := e.open(), e.open()
	allow(t, a, "intro")
	throttled(t, a, "intro", 0, time.Hour, false)
	refuse(t, b, "intro", time.Hour)
	allow(t, b, "consultation")
	allow(t, a, "demo")
	e.clock.Advance(time.Hour - 1)
	refuse(t, a, "intro", 1)
	allow(t, e.open(), "consultation") // a handle opened later, as a restarted replica
	refuse(t, e.open(), "intro", 1)
	e.clock.Advance(1)
	allow(t, b, "intro")
}

// An event type's hold is its Retry-After when the API sent one, never
// less than a minute, and a shorter one keeps the longer.
func eventRetryAfter(t *testing.T, e *env) {
	l := e.open()
	throttled(t, l, "intro", 10*time.Minute, 10*time.Minute, false)
	e.clock.Advance(time.Minute)
	throttled(t, l, "intro", 30*time.Second, 9*time.Minute, false)
	throttled(t, l, "demo", 20*time.Second, time.Minute, false)
	refuse(t, l, "intro", 9*time.Minute)
	refuse(t, l, "demo", time.Minute)
	allow(t, l, "consultation")
	throttled(t, l, "demo", 0, time.Hour, false) // without one, the hour
}

// An event type's 429 is not one of the limit per address: the next 429
// of that limit is still its first.
func eventNoStrike(t *testing.T, e *env) {
	l := e.open()
	allow(t, l, "intro")
	throttled(t, l, "intro", 0, time.Hour, false)
	throttled(t, l, "intro", 0, time.Hour, false)
	allow(t, l, "demo")
	e.overfill(t, l)
	throttled(t, l, "demo", 0, time.Minute, true)
	refuse(t, l, "consultation", time.Minute)
	refuse(t, l, "intro", time.Hour)
}

// Without a limit per address, every 429 is an event type's.
func noLimitPerAddress(t *testing.T, e *env) {
	l := e.open()
	for range 10 {
		allow(t, l, "demo")
	}
	throttled(t, l, "demo", 0, time.Hour, false)
	allow(t, l, "intro")
}

// An answer that is not a 429 ends the run: the next hold is a minute.
func answeredResets(t *testing.T, e *env) {
	l := e.open()
	for _, want := range []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute} {
		allow(t, l, "intro")
		e.overfill(t, l)
		throttled(t, l, "intro", 0, want, true)
		e.clock.Advance(want)
	}
	answered(t, l)
	allow(t, l, "intro")
	e.overfill(t, l)
	throttled(t, l, "intro", 0, time.Minute, true)
	e.clock.Advance(time.Minute)
	answered(t, l)
	answered(t, l) // twice is once
	allow(t, l, "intro")
	e.overfill(t, l)
	throttled(t, l, "intro", 0, time.Minute, true)
}

// Strikes are shared: a run of 429s and its end count for every handle.
func answeredShared(t *testing.T, e *env) {
	a, b := e.open(), e.open()
	allow(t, a, "intro")
	e.overfill(t, a)
	throttled(t, a, "intro", 0, time.Minute, true)
	e.clock.Advance(time.Minute)
	allow(t, b, "intro")
	e.overfill(t, b)
	throttled(t, b, "intro", 0, 2*time.Minute, true)
	e.clock.Advance(2 * time.Minute)
	answered(t, b)
	allow(t, a, "intro")
	e.overfill(t, a)
	throttled(t, a, "intro", 0, time.Minute, true)
}

// An answer during a hold (a create sent before it) does not end the hold,
// of every create or of an event type.
func answeredKeepsHold(t *testing.T, e *env) {
	l := e.open()
	throttled(t, l, "demo", 0, time.Hour, false)
	allow(t, l, "intro")
	e.overfill(t, l)
	throttled(t, l, "intro", 0, time.Minute, true)
	e.clock.Advance(10 * time.Second)
	answered(t, l)
	refuse(t, l, "intro", 50*time.Second)
	refuse(t, l, "demo", time.Hour-10*time.Second)
}

// race calls Reserve for evs[i] on handles[i%len(handles)], all at once,
// and returns how many were allowed. Every refusal must wait want.
func race(t *testing.T, handles []booking.Limiter, evs []string, want time.Duration) int {
	t.Helper()
	var (
		start   = make(chan struct{})
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
	)
	for i, ev := range evs {
		l := handles[i%len(handles)]
		wg.Go(func() {
			<-start
			wait, ok, err := l.Reserve(t.Context(), ev)
			switch {
			case err != nil:
				t.Errorf("Reserve(%q): %v", ev, err)
			case ok:
				mu.Lock()
				allowed++
				mu.Unlock()
			case wait != want:
				t.Errorf("Reserve(%q) refused for %v, want %v", ev, wait, want)
			}
		})
	}
	close(start)
	wg.Wait()
	return allowed
}

// events returns n event types: the same one when same, n distinct ones
// otherwise.
func events(n int, same bool) []string {
	evs := make([]string, n)
	for i := range evs {
		evs[i] = "intro"
		if !same {
			evs[i] = fmt.Sprintf("event-%d", i)
		}
	}
	return evs
}

// Twenty at once on one handle: five are allowed.
func concurrentOne(t *testing.T, e *env) {
	if n := race(t, []booking.Limiter{e.open()}, events(20, false), time.Minute); n != 5 {
		t.Fatalf("%d of 20 concurrent attempts allowed, want 5", n)
	}
	refuse(t, e.open(), "intro", time.Minute)
}

// Twenty at once on two handles, as two replicas: five are allowed, and a
// second round at once, a second later, allows none.
func concurrentTwo(t *testing.T, e *env) {
	handles := []booking.Limiter{e.open(), e.open()}
	if n := race(t, handles, events(20, false), time.Minute); n != 5 {
		t.Fatalf("%d of 20 concurrent attempts on two handles allowed, want 5", n)
	}
	e.clock.Advance(time.Second)
	if n := race(t, handles, events(20, true), 59*time.Second); n != 0 {
		t.Fatalf("%d of 20 more allowed within the minute, want 0", n)
	}
	e.clock.Advance(59 * time.Second)
	if n := race(t, handles, events(20, true), time.Minute); n != 5 {
		t.Fatalf("%d of 20 allowed a minute later, want 5", n)
	}
}

// Twenty at once for one event type on two handles: its hourly limit holds.
func concurrentPerEvent(t *testing.T, e *env) {
	handles := []booking.Limiter{e.open(), e.open()}
	if n := race(t, handles, events(20, true), time.Hour); n != 3 {
		t.Fatalf("%d of 20 concurrent attempts for one event type allowed, want 3", n)
	}
	allow(t, handles[0], "other")
}

// Six 429s at once, on two handles, are six in a row: none is lost.
func concurrentThrottled(t *testing.T, e *env) {
	handles := []booking.Limiter{e.open(), e.open()}
	allow(t, handles[0], "intro")
	e.overfill(t, handles[1])
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range 6 {
		l := handles[i%2]
		wg.Go(func() {
			<-start
			if _, every, err := l.Throttled(t.Context(), "intro", 0); err != nil || !every {
				t.Errorf("Throttled: every %v, %v; want every create held", every, err)
			}
		})
	}
	close(start)
	wg.Wait()
	refuse(t, handles[0], "intro", 32*time.Minute)
	e.clock.Advance(32 * time.Minute)
	allow(t, handles[1], "intro")
	e.overfill(t, handles[0])
	throttled(t, handles[1], "intro", 0, time.Hour, true) // the seventh
}

// With a context already cancelled every method fails with an error that
// is context.Canceled, and records nothing.
func cancelled(t *testing.T, e *env) {
	l := e.open()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	wantCanceled := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want an error that is context.Canceled", op, err)
		}
	}
	for range 5 {
		allow(t, l, "intro")
	}
	e.overfill(t, l)
	throttled(t, l, "intro", 0, time.Minute, true)
	e.clock.Advance(2 * time.Minute) // past the hold, and the minute of the attempt ahead

	for range 5 {
		_, ok, err := l.Reserve(ctx, "intro")
		wantCanceled("Reserve", err)
		if ok {
			t.Error("Reserve with a cancelled context allowed an attempt")
		}
	}
	_, _, err := l.Throttled(ctx, "demo", time.Hour)
	wantCanceled("Throttled", err)
	wantCanceled("Answered", l.Answered(ctx))

	// Nothing was counted, held, or answered: five are allowed, demo too,
	// and the next 429 is the second in a row.
	for _, ev := range []string{"intro", "intro", "demo", "intro", "intro"} {
		allow(t, l, ev)
	}
	refuse(t, l, "intro", time.Minute)
	e.overfill(t, l)
	throttled(t, l, "intro", 0, 2*time.Minute, true)
}
