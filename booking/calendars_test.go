package booking_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
)

func TestCalendarsOneClientPerKey(t *testing.T) {
	t.Parallel()
	var refused atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = w.Write([]byte(`{"error":"unauthorized"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"event_types":[]}`))
	}))
	t.Cleanup(srv.Close)
	good, _ := booking.NewKey("good")
	bad, _ := booking.NewKey("bad")
	// One hook for every client, told which calendar and which key: a
	// client made by whoever asked first cannot lose a refusal.
	cals := booking.NewCalendars(srv.URL, booking.NewGuard(booking.DefaultLimits, nil), func(label string, key booking.Key) {
		if label == "U1" && key.Equal(bad) {
			refused.Add(1)
		}
	})
	a, err := cals.For("U1", "cal-1", good)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := cals.For("U1", "cal-1", good); again != a {
		t.Fatal("the same key got a second client")
	}
	if a.Calendar() != "U1" {
		t.Fatalf("Calendar() = %q", a.Calendar())
	}
	if _, err := a.EventTypes(t.Context()); err != nil {
		t.Fatal(err)
	}
	b, _ := cals.For("U1", "cal-1", bad)
	if b == a {
		t.Fatal("a new key kept the old key's client")
	}
	if _, err := b.EventTypes(t.Context()); err == nil {
		t.Fatal("a refused key listed event types")
	}
	if refused.Load() != 1 {
		t.Fatalf("refused told %d times of U1's bad key; want once", refused.Load())
	}
}

// TestForCalendarCountsEventTypesApart: twenty creates of one event type on
// one calendar leave the same event type of another calendar free, while
// the limit a minute (the API's, per IP address) stays shared.
func TestForCalendarCountsEventTypesApart(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	g := booking.NewGuard(booking.Limits{PerMinute: 100, PerEventPerHour: 2}, func() time.Time { return now })
	u1, u2 := booking.ForCalendar(g, "U1"), booking.ForCalendar(g, "U2")
	ctx := context.Background()
	for range 2 {
		if _, ok, _ := u1.Reserve(ctx, "intro"); !ok {
			t.Fatal("U1's attempt was held back early")
		}
	}
	if _, ok, _ := u1.Reserve(ctx, "intro"); ok {
		t.Fatal("U1's third attempt in the hour was let through")
	}
	if _, ok, _ := u2.Reserve(ctx, "intro"); !ok {
		t.Fatal("U2's first attempt was held back by U1's")
	}
	if _, ok, _ := booking.ForCalendar(g, booking.Owner).Reserve(ctx, "intro"); !ok {
		t.Fatal("the owner's first attempt was held back by U1's")
	}
}

// TestForCalendarSharesTheMinute: the API counts booking attempts per IP
// address, 5 a minute (booking-api.md, "Rate limits"), whatever the key,
// so attempts on every calendar bookbot acts on count towards one limit.
func TestForCalendarSharesTheMinute(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	g := booking.NewGuard(booking.Limits{PerMinute: 5, PerEventPerHour: 20}, func() time.Time { return now })
	ctx := context.Background()
	for i, label := range []string{"U1", "U1", "U2", "U2", booking.Owner} {
		if _, ok, _ := booking.ForCalendar(g, label).Reserve(ctx, fmt.Sprintf("event-%d", i)); !ok {
			t.Fatalf("attempt %d (%s) held back within the minute's five", i+1, label)
		}
	}
	for _, label := range []string{"U1", "U3", booking.Owner} {
		if _, ok, _ := booking.ForCalendar(g, label).Reserve(ctx, "event-other"); ok {
			t.Errorf("a sixth attempt in the minute, on %s's calendar, was let through", label)
		}
	}
}
