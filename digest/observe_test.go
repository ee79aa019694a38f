package digest

import (
	"slices"
	"sync"
	"testing"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
)

// Observe hears how every Run ended: posted, already posted, skipped as
// empty, failed.
func TestRunObserve(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	var mu sync.Mutex
	var got []string
	env.runner.Observe = func(result string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, result)
	}
	ctx := t.Context()
	day := Tomorrow(env.clock.Now(), berlin)

	for range booking.DefaultBackoff.Attempts {
		env.srv.FailNext(bookingtest.EndpointListBookings, bookingtest.HTMLError(503))
	}
	_, _ = env.runner.Run(ctx, day) // failed
	_, _ = env.runner.Run(ctx, day) // posted
	_, _ = env.runner.Run(ctx, day) // already posted
	env.runner.SkipEmpty = true
	_, _ = env.runner.Run(ctx, date(t, "2026-11-29", berlin)) // a Sunday without bookings
	if _, err := env.runner.Preview(ctx, day); err != nil {   // not a run
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	if want := []string{"failed", "posted", "already_posted", "skipped_empty"}; !slices.Equal(got, want) {
		t.Errorf("observed %q, want %q", got, want)
	}
}
