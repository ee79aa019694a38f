package booking

import (
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/fakeclock"
)

func TestGuardPerMinute(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC))
	g := NewGuard(DefaultLimits, clock.Now)
	for i := range 5 {
		if _, ok := g.Reserve("intro"); !ok {
			t.Fatalf("attempt %d refused", i+1)
		}
		clock.Advance(time.Second)
	}
	wait, ok := g.Reserve("other-event")
	if ok {
		t.Fatal("6th attempt within a minute allowed; the per-minute limit is for all events")
	}
	if wait != 55*time.Second {
		t.Errorf("wait = %v, want 55s (until the first attempt is a minute old)", wait)
	}
	clock.Advance(wait)
	if _, ok := g.Reserve("other-event"); !ok {
		t.Error("refused after the wait")
	}
}

func TestGuardPerEventPerHour(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC))
	g := NewGuard(DefaultLimits, clock.Now)
	for i := range 20 {
		if _, ok := g.Reserve("intro"); !ok {
			t.Fatalf("attempt %d refused", i+1)
		}
		clock.Advance(time.Minute) // stay under 5 a minute
	}
	wait, ok := g.Reserve("intro")
	if ok || wait != 40*time.Minute {
		t.Fatalf("21st attempt in an hour: ok=%v wait=%v, want refused for 40m", ok, wait)
	}
	if _, ok := g.Reserve("consultation"); !ok {
		t.Error("another event type refused; the hourly limit is per event")
	}
	clock.Advance(40 * time.Minute)
	if _, ok := g.Reserve("intro"); !ok {
		t.Error("refused after the oldest attempt left the hour")
	}
}

func TestGuardRefusalsDoNotCount(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC))
	g := NewGuard(Limits{PerMinute: 1, PerEventPerHour: 10}, clock.Now)
	g.Reserve("intro")
	for range 10 {
		g.Reserve("intro")
	}
	clock.Advance(time.Minute)
	if _, ok := g.Reserve("intro"); !ok {
		t.Error("refused attempts were counted")
	}
}

func TestGuardHoldsAfter429(t *testing.T) {
	t.Parallel()
	clock := fakeclock.New(time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC))
	g := NewGuard(Limits{}, clock.Now)
	tests := []struct {
		retryAfter, want time.Duration
	}{
		{0, time.Minute},
		{0, 2 * time.Minute},
		{10 * time.Second, 4 * time.Minute},
		{0, 8 * time.Minute},
		{0, 16 * time.Minute},
		{0, 32 * time.Minute},
		{0, time.Hour},
		{0, time.Hour},
		{90 * time.Minute, 90 * time.Minute},
	}
	for i, tt := range tests {
		hold := g.Throttled(tt.retryAfter)
		if hold != tt.want {
			t.Errorf("429 #%d (Retry-After %v): hold = %v, want %v", i+1, tt.retryAfter, hold, tt.want)
		}
		if wait, ok := g.Reserve("intro"); ok || wait != hold {
			t.Errorf("429 #%d: Reserve = %v, %v; want refused for %v", i+1, wait, ok, hold)
		}
		clock.Advance(hold)
	}
	g.Answered()
	if hold := g.Throttled(0); hold != time.Minute {
		t.Errorf("after a normal answer the hold starts again at a minute, got %v", hold)
	}
}
