package bolt_test

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	bbolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/notices"
)

var (
	start     = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	noticeKey = notices.Key{BookingID: "b1", Kind: notices.New, Start: start, End: start.Add(30 * time.Minute), Since: start.Add(-time.Hour)}
	snap      = notices.Snapshot{At: start.Add(-time.Hour), Bookings: []booking.Booking{{
		ID: "b1", Start: start, End: start.Add(30 * time.Minute), Status: "confirmed",
		BookerName: booking.Some("Ada"), BookerEmail: booking.Some("ada@example.com"),
	}}}
)

// TestNoticesFormat pins what the file holds, so that a change of the
// records' JSON does not change it unnoticed; the claims are the outbox's
// (TestOutboxFormat).
func TestNoticesFormat(t *testing.T) {
	t.Parallel()
	db := openBeside(t, t.TempDir())
	path, s := db.Path(), db.Notices()
	if err := s.SaveLast(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Claim(t.Context(), noticeKey, start); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := s.Posted(t.Context(), noticeKey, notices.Message{Channel: "C1", TS: "1.2"}, true); err != nil {
		t.Fatal(err)
	}
	raw, err := bbolt.Open(path, 0o600, &bbolt.Options{Timeout: time.Second, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	err = raw.View(func(tx *bbolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bbolt.Bucket) error {
			if string(name) == "outbox" { // TestOutboxFormat
				return nil
			}
			return b.ForEach(func(k, v []byte) error {
				got[fmt.Sprintf("%s %x", name, k)] = string(v)
				return nil
			})
		})
	})
	if cerr := raw.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"meta 76657273696f6e": "\x00\x00\x00\x00\x00\x00\x00\x02", // version
		"notices.last 6c617374": `{"at":"2026-11-24T08:00:00Z","bookings":[{"id":"b1","start":"2026-11-24T09:00:00Z","end":"2026-11-24T09:30:00Z",` +
			`"status":"confirmed","booker_name":"Ada","booker_email":"ada@example.com","event_type":null}]}`,
		"notices.threads 6231": `{"channel":"C1","ts":"1.2","end":"2026-11-24T09:30:00Z"}`,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%q = %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("the file holds %q, want %q", got, want)
	}
}

func TestFileRemoved(t *testing.T) {
	t.Parallel()
	db := openBeside(t, t.TempDir())
	path, s := db.Path(), db.Notices()
	if ok, err := s.Claim(t.Context(), noticeKey, start); err != nil || !ok {
		t.Fatal(ok, err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	// Its claims went with it: claiming afresh could post a notice again.
	if ok, err := s.Claim(t.Context(), noticeKey, start); err == nil || ok || !strings.Contains(err.Error(), "bookbot store "+path+": not a bookbot store") {
		t.Errorf("Claim after the file was removed: %v, %v; want an error naming the store", ok, err)
	}
}
