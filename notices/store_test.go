package notices_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/notices"
)

// A snapshot saved before snapshots kept the service's time reads as one
// whose service time is not known; one that has it keeps it.
func TestSnapshotServiceTime(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	old := `{"at":"2026-11-24T08:00:00Z","bookings":[]}`
	got, err := notices.DecodeSnapshot([]byte(old))
	if err != nil || !got.At.Equal(start.Add(-time.Hour)) || !got.ServiceAt.IsZero() {
		t.Errorf("an old snapshot: %+v, %v; want its time and no service time", got, err)
	}
	s := notices.Snapshot{At: start.Add(-time.Hour), Bookings: []booking.Booking{{
		ID: "b1", Start: start, End: start.Add(30 * time.Minute), Status: "confirmed",
		BookerName: booking.Some("Ada"), BookerEmail: booking.Some("ada@example.com"),
	}}}
	s.ServiceAt = s.At.Add(4 * time.Minute)
	v, err := notices.EncodeSnapshot(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(v), `"service_at":"2026-11-24T08:04:00Z"`) {
		t.Errorf("encoded %s, want the service time", v)
	}
	if got, err := notices.DecodeSnapshot(v); err != nil || !got.ServiceAt.Equal(s.ServiceAt) {
		t.Errorf("decoded %+v, %v; want service time %s", got, err, s.ServiceAt)
	}
}
