package bolt_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/fakeclock"
	"github.com/bookbot/bookbot/store/bolt"
)

// open opens a journal in dir whose entries' times come from the returned
// clock.
func open(t *testing.T, dir string) (*bolt.Journal, *fakeclock.Clock) {
	t.Helper()
	j := openBeside(t, dir).Journal()
	c := fakeclock.New(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
	j.Now = c.Now
	return j, c
}

var create = booking.Write{
	Op: booking.OpCreate, Actor: "U1", EventType: "intro-call",
	Start: "2026-11-24T09:30:00Z", End: "2026-11-24T09:45:00Z",
	Name: "Grace Hopper", Email: "grace@example.com",
}

// createAt is create n days later: another booking, which no earlier one
// stands in the way of.
func createAt(n int) booking.Write {
	w := create
	start, _ := time.Parse(time.RFC3339, w.Start)
	start = start.AddDate(0, 0, n)
	w.Start, w.End = start.Format(time.RFC3339), start.Add(15*time.Minute).Format(time.RFC3339)
	return w
}

// Another process reads the journal, read-only, while a write is in flight
// and after.
func TestReadOnlyReaderSeesWritesInFlight(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, _ := open(t, dir)
	finish, err := j.Begin(t.Context(), create)
	if err != nil {
		t.Fatal(err)
	}
	reader := openReadOnly(t, dir).Journal()
	list, err := reader.Since(time.Time{})
	if err != nil || len(list) != 1 || !list[0].Open() {
		t.Fatalf("in flight: %+v, %v", list, err)
	}
	finish(&booking.Result{Outcome: booking.Confirmed, Verified: true, Booking: &booking.Booking{ID: "bk_1"}})
	if list, _ = reader.Since(time.Time{}); len(list) != 1 || list[0].Created != "bk_1" {
		t.Fatalf("finished: %+v", list)
	}
	if n, err := reader.AwaitingReview(); n != 0 || err != nil {
		t.Errorf("awaiting review = %d, %v; want 0", n, err)
	}
	if _, err := reader.MarkReviewed(list[0].Seq, "U1"); err == nil {
		t.Error("a read-only journal recorded a review")
	}
}

func TestReadOnlyWithoutAJournal(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "none")
	j := openReadOnly(t, dir).Journal()
	list, err := j.Since(time.Time{})
	if err != nil || len(list) != 0 {
		t.Fatalf("since = %v, %v", list, err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("a read-only open created %s", dir)
	}
	if _, err := j.Begin(t.Context(), create); err == nil {
		t.Error("a read-only journal recorded a write")
	}
}

func TestBeginFailsWhenTheJournalCannotBeWritten(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, _ := open(t, dir)
	// The file is replaced by a directory: every open fails.
	if err := os.Remove(j.Path()); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(j.Path(), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := j.Begin(t.Context(), create); err == nil {
		t.Fatal("Begin succeeded without a journal file")
	}
}

// BenchmarkBeginFinish is the journal's share of a booking: the record
// made before the request is sent and the outcome after, each a file
// opened, a committed (fsync'd) transaction and the file closed.
func BenchmarkBeginFinish(b *testing.B) {
	db, err := bolt.Open(b.TempDir(), bolt.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	j := db.Journal()
	res := &booking.Result{Outcome: booking.Confirmed, Verified: true}
	n := 0
	for b.Loop() {
		n++ // each booking another: a confirmed one stands in the way of its repeat
		finish, err := j.Begin(b.Context(), createAt(n))
		if err != nil {
			b.Fatal(err)
		}
		finish(res)
	}
}

// Pruned entries leave no trace in the file, and the kept ones still work.
func TestPruneRemovesTheBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, clk := open(t, dir)
	old := createAt(1)
	old.Name, old.Email = "Pruned Person", "pruned.person@example.com"
	finish, err := j.Begin(t.Context(), old)
	if err != nil {
		t.Fatal(err)
	}
	finish(&booking.Result{Outcome: booking.Confirmed, Booking: &booking.Booking{ID: "bk_old"}})
	clk.Advance(100 * 24 * time.Hour)
	finish, err = j.Begin(t.Context(), create)
	if err != nil {
		t.Fatal(err)
	}
	finish(&booking.Result{Outcome: booking.Confirmed, Booking: &booking.Booking{ID: "bk_kept"}})

	if n, err := j.Prune(clk.Now().Add(-90 * 24 * time.Hour)); n != 1 || err != nil {
		t.Fatalf("Prune = %d, %v", n, err)
	}
	raw, err := os.ReadFile(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"Pruned Person", "pruned.person@example.com", "bk_old"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the file still holds %q after pruning", s)
		}
	}
	list, err := j.Since(time.Time{})
	if err != nil || len(list) != 1 || list[0].Created != "bk_kept" {
		t.Fatalf("after pruning: %+v, %v", list, err)
	}
	var dup *booking.DuplicateError
	if _, err := j.Begin(t.Context(), create); !errors.As(err, &dup) {
		t.Errorf("the kept booking no longer stands in the way of a duplicate: %v", err)
	}
	if _, err := j.Begin(t.Context(), old); err != nil {
		t.Errorf("the pruned booking still stands in the way: %v", err)
	}
}
