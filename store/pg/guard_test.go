package pg_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/booking/guardtest"
	"github.com/bookbot/bookbot/internal/fakeclock"
)

func TestLimiter(t *testing.T) {
	t.Parallel()
	guardtest.Run(t, func(t *testing.T, limits booking.Limits, now func() time.Time) func() booking.Limiter {
		u := migrated(t)
		return func() booking.Limiter { return open(t, u).Limiter(limits, now) }
	})
}

var guardStart = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// attempts counts the attempts the database keeps.
func attempts(t *testing.T, u string) int {
	t.Helper()
	var n int
	if err := conn(t, u).QueryRow(t.Context(), "SELECT count(*) FROM bookbot_guard_attempts").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// Attempts are deleted once they are an hour and the margin old, not
// before: a replica whose clock is behind the one that prunes still counts
// them.
func TestLimiterPrunes(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	clock := fakeclock.New(guardStart) // 9:00
	limiter := func(skew time.Duration) booking.Limiter {
		return open(t, u).Limiter(booking.Limits{PerEventPerHour: 1}, func() time.Time { return clock.Now().Add(skew) })
	}
	onTime, ahead, behind := limiter(0), limiter(2*time.Minute), limiter(-2*time.Minute)
	reserve := func(l booking.Limiter, ev string) (time.Duration, bool) {
		t.Helper()
		wait, ok, err := l.Reserve(t.Context(), ev)
		if err != nil {
			t.Fatal(err)
		}
		return wait, ok
	}
	if _, ok := reserve(onTime, "intro"); !ok {
		t.Fatal("refused")
	}
	clock.Advance(time.Hour)
	// The replica ahead, at 10:02, prunes: 9:00 is past the hour by its clock,
	// but within the margin.
	if _, ok := reserve(ahead, "demo"); !ok {
		t.Fatal("refused")
	}
	if n := attempts(t, u); n != 2 {
		t.Errorf("%d attempts kept, want 2", n)
	}
	if wait, ok := reserve(behind, "intro"); ok || wait != 2*time.Minute {
		t.Errorf("replica 2m behind, at 9:58: Reserve = %v, %v; want refused for 2m, until 9:00 is an hour old by its clock", wait, ok)
	}
	if _, ok := reserve(onTime, "intro"); !ok {
		t.Error("refused at 10:00, when 9:00 is an hour old")
	}
	clock.Advance(time.Hour + 4*time.Minute)
	if _, ok := reserve(ahead, "demo"); !ok { // at 11:06, deleting those before 10:01
		t.Fatal("refused")
	}
	if n := attempts(t, u); n != 2 {
		t.Errorf("%d attempts kept at 11:06, want 2 (10:02's and 11:06's)", n)
	}
}

// A limiter whose database cannot be reached, or has lost the guard's row,
// fails and allows nothing.
func TestLimiterFailures(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	db := open(t, u)
	l := db.Limiter(booking.DefaultLimits, nil)
	if _, err := conn(t, u).Exec(t.Context(), "DELETE FROM bookbot_guard"); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := l.Reserve(t.Context(), "intro"); ok || err == nil || !strings.Contains(err.Error(), "bookbot_guard has no row") {
		t.Errorf("Reserve without the guard's row = %v, %v", ok, err)
	}
	if _, _, err := l.Throttled(t.Context(), "intro", 0); err == nil {
		t.Error("Throttled without the guard's row succeeded")
	}
	if n := attempts(t, u); n != 0 {
		t.Errorf("%d attempts recorded", n)
	}

	db.Close()
	_, ok, err := l.Reserve(t.Context(), "intro")
	if ok || err == nil {
		t.Errorf("Reserve on a closed pool = %v, %v", ok, err)
	}
	if _, _, err := l.Throttled(t.Context(), "intro", 0); err == nil {
		t.Error("Throttled on a closed pool succeeded")
	}
	if err := l.Answered(t.Context()); err == nil {
		t.Error("Answered on a closed pool succeeded")
	}
}

// bookingClient is a client of srv limited by l, on srv's clock.
func bookingClient(t *testing.T, srv *bookingtest.Server, now func() time.Time, l booking.Limiter) *booking.Client {
	t.Helper()
	key, err := booking.NewKey(srv.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := booking.NewClient(srv.URL, key, booking.WithClock(now), booking.WithLimiter(l),
		booking.WithSleep(func(ctx context.Context, _ time.Duration) error { return ctx.Err() }))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Two replicas' clients on one database send five creates a minute between
// them, and one whose database is gone sends none.
func TestLimiterSharedByReplicas(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	monday := func() time.Time { return time.Date(2026, 3, 23, 10, 7, 0, 0, time.UTC) }
	srv := bookingtest.NewServer(t, bookingtest.WithClock(monday))
	dbB := open(t, u)
	a := bookingClient(t, srv, monday, open(t, u).Limiter(booking.DefaultLimits, monday))
	b := bookingClient(t, srv, monday, dbB.Limiter(booking.DefaultLimits, monday))
	slots, err := a.Slots(t.Context(), "intro-call")
	if err != nil {
		t.Fatal(err)
	}
	create := func(c *booking.Client, i int) *booking.Result {
		t.Helper()
		srv.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(400, "not booked", 400))
		res, err := c.Create(t.Context(), booking.CreateRequest{Slot: slots[i], Name: "Ada Lovelace", Email: "ada@example.com"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for i := range 5 {
		if res := create([]*booking.Client{a, b}[i%2], i); res.Outcome != booking.Rejected {
			t.Fatalf("attempt %d: %+v", i+1, res)
		}
	}
	for i, c := range []*booking.Client{a, b} {
		if res := create(c, 5+i); !res.Held || res.RetryAfter != time.Minute || res.Err != nil {
			t.Errorf("6th attempt, on replica %d: %+v, want held back for a minute", i+1, res)
		}
	}

	dbB.Close()
	res := create(b, 7)
	if !res.Held || !errors.Is(res.Err, booking.ErrLimitUnchecked) {
		t.Errorf("create with the database closed: %+v, want held back, the limit unchecked", res)
	}
	if n := countCreates(srv); n != 5 {
		t.Errorf("POST calls = %d, want 5", n)
	}
}

func countCreates(srv *bookingtest.Server) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Endpoint == bookingtest.EndpointCreateBooking {
			n++
		}
	}
	return n
}

// BenchmarkLimiterReserve is one Reserve's round trips: allowed (lock,
// prune and check, insert, commit) and refused (no insert).
func BenchmarkLimiterReserve(b *testing.B) {
	u := migrated(b)
	clock := fakeclock.New(guardStart)
	l := open(b, u).Limiter(booking.DefaultLimits, clock.Now)
	ctx := context.Background()
	b.Run("allowed", func(b *testing.B) {
		for b.Loop() {
			clock.Advance(time.Hour)
			if _, ok, err := l.Reserve(ctx, "intro"); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("refused", func(b *testing.B) {
		for range 5 {
			_, _, _ = l.Reserve(ctx, "intro")
		}
		for b.Loop() {
			if _, ok, err := l.Reserve(ctx, "intro"); ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
	b.Run("in-memory", func(b *testing.B) {
		g := booking.NewGuard(booking.DefaultLimits, clock.Now)
		for b.Loop() {
			clock.Advance(time.Hour)
			if _, ok, err := g.Reserve(ctx, "intro"); !ok || err != nil {
				b.Fatal(ok, err)
			}
		}
	})
}
