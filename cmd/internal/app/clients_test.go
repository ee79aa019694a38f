package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/store/bolt"
)

// The scheduled work forgets the event types of bookings that have ended,
// at once, and keeps those of upcoming ones.
func TestPruneTypesForgetsEndedBookings(t *testing.T) {
	t.Parallel()
	db, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	types := db.Types()
	now := time.Now()
	err = types.Keep(t.Context(), booking.Owner, []booking.KeptType{
		{BookingID: "ended", EventType: "consultation", End: now.Add(-time.Minute)},
		{BookingID: "upcoming", EventType: "consultation", End: now.Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); pruneTypes(ctx, types, slog.New(slog.DiscardHandler)) }()
	defer func() { cancel(); <-done }()
	kept := func() map[string]booking.KeptType {
		got, err := types.Types(t.Context(), booking.Owner, []string{"ended", "upcoming"})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	testutil.WaitFor(t, 10*time.Second, "the ended booking's event type pruned", func() bool {
		_, ok := kept()["ended"]
		return !ok
	})
	if _, ok := kept()["upcoming"]; !ok {
		t.Errorf("the upcoming booking's event type was pruned too")
	}
}
