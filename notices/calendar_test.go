package notices_test

import (
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/store/bolt"
)

// A person's calendar connected again (another key, perhaps another
// calendar) starts from a read of its own, even when the watcher of the
// connection before saves its read after the new connection was made:
// compared with the other calendar's bookings, every one of them would be
// announced as cancelled.
func TestCalendarConnectedAgainStartsAfresh(t *testing.T) {
	t.Parallel()
	db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ctx := t.Context()
	at := time.Date(2026, 3, 23, 9, 0, 0, 0, time.UTC)
	before := notices.ForCalendar(db.Notices(), db.Accounts(), "UADA", "2026-03-23T08:00:00Z")
	since := notices.ForCalendar(db.Notices(), db.Accounts(), "UADA", "2026-03-23T08:59:00Z")

	old := notices.Snapshot{At: at, Bookings: []booking.Booking{{ID: "bk_old", Start: at.Add(time.Hour), End: at.Add(2 * time.Hour)}}}
	if err := before.SaveLast(ctx, old); err != nil {
		t.Fatal(err)
	}
	if s, ok, err := since.Last(ctx); err != nil || ok {
		t.Fatalf("the calendar connected since has the last read %+v (%v) of the one before", s, err)
	}

	fresh := notices.Snapshot{At: at.Add(time.Minute), Bookings: []booking.Booking{{ID: "bk_new", Start: at.Add(3 * time.Hour), End: at.Add(4 * time.Hour)}}}
	if err := since.SaveLast(ctx, fresh); err != nil {
		t.Fatal(err)
	}
	s, ok, err := since.Last(ctx)
	if err != nil || !ok || len(s.Bookings) != 1 || s.Bookings[0].ID != "bk_new" {
		t.Fatalf("Last after its own read = %+v, %v, %v; want bk_new", s, ok, err)
	}
	if _, ok, err := before.Last(ctx); err != nil || ok {
		t.Errorf("the connection before takes the read of the one since (%v)", err)
	}
}
