package app

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/store/bolt"
)

// The scheduled work forgets, at once and by the app's clock, the event
// types of bookings that ended longer ago than an attendee could have
// moved them, unseen, to a later time, and keeps the others.
func TestPruneTypesForgetsLongEndedBookings(t *testing.T) {
	t.Parallel()
	db, err := bolt.Open(t.TempDir(), bolt.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	types := db.Types()
	now := time.Date(2030, 11, 24, 9, 0, 0, 0, time.UTC)
	err = types.Keep(t.Context(), booking.Owner, []booking.KeptType{
		{BookingID: "long-ended", EventType: "consultation", End: now.Add(-16 * 24 * time.Hour)},
		{BookingID: "ended", EventType: "consultation", End: now.Add(-24 * time.Hour)},
		{BookingID: "upcoming", EventType: "consultation", End: now.Add(time.Hour)},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pruneTypes(ctx, types, func() time.Time { return now }, slog.New(slog.DiscardHandler))
	}()
	defer func() { cancel(); <-done }()
	kept := func() map[string]booking.KeptType {
		got, err := types.Types(t.Context(), booking.Owner, []string{"long-ended", "ended", "upcoming"})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	testutil.WaitFor(t, 10*time.Second, "the long-ended booking's event type pruned", func() bool {
		_, ok := kept()["long-ended"]
		return !ok
	})
	for _, id := range []string{"ended", "upcoming"} {
		if _, ok := kept()[id]; !ok {
			t.Errorf("the event type of %q was pruned too", id)
		}
	}
}

// prunes records the times a journal is pruned before.
type prunes struct {
	journal.Store
	before chan time.Time
}

func (p prunes) Prune(t time.Time) (int, error) {
	p.before <- t
	return 0, nil
}

// The journal is pruned at once, and by the app's clock, of the entries
// older than it keeps.
func TestPruneJournalByTheAppsClock(t *testing.T) {
	t.Parallel()
	now := time.Date(2030, 11, 24, 9, 0, 0, 0, time.UTC)
	jr := prunes{before: make(chan time.Time, 1)}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		pruneJournal(ctx, jr, 30*24*time.Hour, func() time.Time { return now }, slog.New(slog.DiscardHandler))
	}()
	defer func() { cancel(); <-done }()
	if got, want := <-jr.before, now.Add(-30*24*time.Hour); !got.Equal(want) {
		t.Errorf("pruned before %v, want %v", got, want)
	}
}
