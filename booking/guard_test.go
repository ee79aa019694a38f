package booking_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/booking/guardtest"
)

func TestGuard(t *testing.T) {
	t.Parallel()
	guardtest.Run(t, func(t *testing.T, limits booking.Limits, now func() time.Time) func() booking.Limiter {
		g := booking.NewGuard(limits, now)
		return func() booking.Limiter { return g } // one process: every handle is the guard
	})
}

func TestHoldAfter(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		n                int
		retryAfter, want time.Duration
	}{
		{0, 0, time.Minute}, // as the first
		{1, 0, time.Minute},
		{1, 59 * time.Second, time.Minute},
		{1, 61 * time.Second, 61 * time.Second},
		{2, 0, 2 * time.Minute},
		{7, 0, time.Hour},
		{1000, 0, time.Hour},
		{1000, 2 * time.Hour, 2 * time.Hour},
	} {
		if got := booking.HoldAfter(tt.n, tt.retryAfter); got != tt.want {
			t.Errorf("HoldAfter(%d, %v) = %v, want %v", tt.n, tt.retryAfter, got, tt.want)
		}
	}
}

// fakeLimiter is a Limiter whose methods fail with the errors set, and
// otherwise allow everything. It records whether each call's context had a
// deadline.
type fakeLimiter struct {
	reserveErr, throttledErr, answeredErr error

	mu        sync.Mutex
	calls     []string
	unbounded []string // calls whose context had no deadline
}

func (f *fakeLimiter) called(ctx context.Context, name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, name)
	if _, ok := ctx.Deadline(); !ok {
		f.unbounded = append(f.unbounded, name)
	}
}

func (f *fakeLimiter) Reserve(ctx context.Context, _ string) (time.Duration, bool, error) {
	f.called(ctx, "Reserve")
	return 0, f.reserveErr == nil, f.reserveErr
}

func (f *fakeLimiter) Throttled(ctx context.Context, _ string, _ time.Duration) (time.Duration, bool, error) {
	f.called(ctx, "Throttled")
	return 7 * time.Minute, true, f.throttledErr
}

func (f *fakeLimiter) Answered(ctx context.Context) error {
	f.called(ctx, "Answered")
	return f.answeredErr
}

func (f *fakeLimiter) check(t *testing.T, want ...string) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if strings.Join(f.calls, " ") != strings.Join(want, " ") {
		t.Errorf("limiter calls %q, want %q", f.calls, want)
	}
	if len(f.unbounded) > 0 {
		t.Errorf("limiter calls without a deadline: %q", f.unbounded)
	}
}

// A limiter that cannot tell whether a create is allowed stops it: nothing
// is sent, and the result says why.
func TestLimiterFailureSendsNothing(t *testing.T) {
	t.Parallel()
	down := errors.New("connection refused")
	l := &fakeLimiter{reserveErr: down}
	c, srv := sandbox(t, booking.WithLimiter(l))
	res, err := c.Create(t.Context(), request(firstSlot(t, c, "intro-call")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.RateLimited || !res.Held || res.RetryAfter != time.Minute {
		t.Errorf("result %+v, want held back, to try again in a minute", res)
	}
	if !errors.Is(res.Err, booking.ErrLimitUnchecked) || !errors.Is(res.Err, down) {
		t.Errorf("Err = %v, want ErrLimitUnchecked wrapping the limiter's error", res.Err)
	}
	if msg := res.Err.Error(); msg != "the shared booking limit could not be checked: connection refused" {
		t.Errorf("Err says %q", msg)
	}
	if errors.Is(res.Err, booking.ErrRateLimited) {
		t.Error("Err is ErrRateLimited: the booking service did not refuse anything")
	}
	if len(res.Seen) != 1 || !strings.Contains(res.Seen[0], "not sent: the shared booking limit could not be checked") {
		t.Errorf("Seen = %q", res.Seen)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 0 {
		t.Errorf("POST calls = %d, want none", n)
	}
	l.check(t, "Reserve")
}

// A 429 whose hold the limiter could not record has no limit it is said
// to be of, and nothing held: the wait it advises is the longer of the
// two, the hour an event type's limit can take, and the result says the
// hold was not recorded.
func TestLimiterThrottledFailure(t *testing.T) {
	t.Parallel()
	l := &fakeLimiter{throttledErr: errors.New("connection reset")}
	c, srv := sandbox(t, booking.WithLimiter(l))
	srv.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(429, "not booked", 429))
	res, _ := c.Create(t.Context(), request(firstSlot(t, c, "intro-call")))
	if res.Outcome != booking.RateLimited || res.Held || res.Reason != "" || res.RetryAfter != time.Hour || !errors.Is(res.Err, booking.ErrRateLimited) {
		t.Errorf("result %+v, want the API's 429, of no known limit, to wait an hour", res)
	}
	if last := res.Seen[len(res.Seen)-1]; last != "POST /bookings answered 429: refused by the booking service, too many attempts; the hold after the 429 could not be recorded: connection reset, so which limit it met is not known; wait 1 hour before trying again" {
		t.Errorf("Seen ends %q", last)
	}
	l.check(t, "Reserve", "Throttled")
}

// The limiter's hold is the result's, and an answer is reported; a failure
// to record it changes nothing for the person.
func TestLimiterHoldAndAnswer(t *testing.T) {
	t.Parallel()
	l := &fakeLimiter{answeredErr: errors.New("connection reset")}
	c, srv := sandbox(t, booking.WithLimiter(l))
	slots, err := c.Slots(t.Context(), "intro-call")
	if err != nil {
		t.Fatal(err)
	}
	srv.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(429, "not booked", 429))
	if res, _ := c.Create(t.Context(), request(slots[0])); res.RetryAfter != 7*time.Minute || res.Reason != booking.ReasonMinuteLimit {
		t.Errorf("429: %+v, want the limiter's hold of 7m, of every create", res)
	}
	if res, _ := c.Create(t.Context(), request(slots[1])); res.Outcome != booking.Confirmed {
		t.Errorf("create: %+v", res)
	}
	l.check(t, "Reserve", "Throttled", "Reserve", "Answered")
}

// Two clients with one limiter, as two replicas with a shared one: five
// creates a minute between them.
func TestLimiterSharedByClients(t *testing.T) {
	t.Parallel()
	srv := bookingtest.NewServer(t, bookingtest.WithClock(fixed))
	l := booking.NewGuard(booking.DefaultLimits, fixed)
	a := clientAt(t, srv.URL, srv, booking.WithLimiter(l))
	b := clientAt(t, srv.URL, srv, booking.WithLimiter(l))
	slots, err := a.Slots(t.Context(), "intro-call")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		c := []*booking.Client{a, b}[i%2]
		srv.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(400, "not booked", 400))
		res, _ := c.Create(t.Context(), request(slots[i]))
		if want := i < 5; (res.Outcome == booking.Rejected) != want || res.Held == want {
			t.Fatalf("attempt %d: %+v", i+1, res)
		}
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 5 {
		t.Errorf("POST calls = %d, want 5", n)
	}
}

// WithLimiter(nil) keeps the default guard.
func TestNilLimiterKeepsDefault(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t, booking.WithLimiter(nil))
	slots, err := c.Slots(t.Context(), "intro-call")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		srv.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(400, "not booked", 400))
		res, _ := c.Create(t.Context(), request(slots[i]))
		if res.Held != (i == 5) {
			t.Fatalf("attempt %d: %+v", i+1, res)
		}
	}
}
