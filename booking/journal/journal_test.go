package journal_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
)

// clock is a settable clock for entries' times.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func open(t *testing.T, dir string) (*journal.Journal, *clock) {
	t.Helper()
	j, err := journal.Open(dir, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)}
	j.Now = c.now
	return j, c
}

var create = booking.Write{
	Op: booking.OpCreate, Actor: "U1", EventType: "intro-call",
	Start: "2026-11-24T09:30:00Z", End: "2026-11-24T09:45:00Z",
	Name: "Grace Hopper", Email: "grace@example.com",
}

func TestBeginRecordsTheIntentBeforeTheOutcome(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, _ := open(t, dir)
	finish, err := j.Begin(t.Context(), create)
	if err != nil {
		t.Fatal(err)
	}

	// Another process reads the journal while the write is in flight.
	reader, err := journal.Open(dir, journal.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	list, err := reader.Since(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || !list[0].Open() || list[0].Actor != "U1" || list[0].Email != "grace@example.com" {
		t.Fatalf("in flight: %+v", list)
	}

	finish(&booking.Result{Outcome: booking.Confirmed, Verified: true, Booking: &booking.Booking{ID: "bk_1"}, Seen: []string{"listed"}})
	list, _ = reader.Since(time.Time{})
	e := list[0]
	if e.Open() || e.Outcome != booking.Confirmed || e.Created != "bk_1" || !e.Verified || e.NeedsReview {
		t.Fatalf("finished: %+v", e)
	}
	if n, _ := j.AwaitingReview(); n != 0 {
		t.Errorf("awaiting review = %d, want 0", n)
	}
}

func TestUnclearOutcomesAwaitReviewUntilChecked(t *testing.T) {
	t.Parallel()
	j, _ := open(t, t.TempDir())
	for _, o := range []booking.Outcome{booking.Unknown, booking.ProbablyNotBooked, booking.NotBooked} {
		finish, err := j.Begin(t.Context(), create)
		if err != nil {
			t.Fatal(err)
		}
		finish(&booking.Result{Outcome: o})
	}
	un, err := j.Unreported()
	if err != nil {
		t.Fatal(err)
	}
	if len(un) != 2 || un[0].Outcome != booking.Unknown || un[1].Outcome != booking.ProbablyNotBooked {
		t.Fatalf("unreported = %+v", un)
	}
	if err := j.MarkReported(un[0].Seq, "C123"); err != nil {
		t.Fatal(err)
	}
	if un, _ = j.Unreported(); len(un) != 1 {
		t.Fatalf("after one report, unreported = %d", len(un))
	}
	if n, _ := j.AwaitingReview(); n != 2 {
		t.Errorf("awaiting review = %d, want 2 (reported is not reviewed)", n)
	}
	e, err := j.MarkReviewed(un[0].Seq, "U2")
	if err != nil || e.ReviewedBy != "U2" {
		t.Fatalf("reviewed: %+v, %v", e, err)
	}
	if e, _ = j.MarkReviewed(un[0].Seq, "U3"); e.ReviewedBy != "U2" {
		t.Errorf("a second check replaced the first: %+v", e)
	}
	if n, _ := j.AwaitingReview(); n != 1 {
		t.Errorf("awaiting review = %d, want 1", n)
	}
	if _, err := j.MarkReviewed(999, "U2"); err == nil {
		t.Error("an unknown entry was marked reviewed")
	}
}

func TestRecoverSettlesWritesOfADeadProcess(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, _ := open(t, dir)
	if _, err := j.Begin(t.Context(), create); err != nil { // the process dies here
		t.Fatal(err)
	}
	dry := create
	dry.DryRun = true
	if _, err := j.Begin(t.Context(), dry); err != nil {
		t.Fatal(err)
	}
	finish, _ := j.Begin(t.Context(), booking.Write{Op: booking.OpCancel, BookingID: "bk_9"})
	finish(&booking.Result{Outcome: booking.Cancelled, Verified: true})

	// A new process opens the same journal.
	again, _ := open(t, dir)
	var settled []booking.Write
	done, err := again.Recover(t.Context(), func(_ context.Context, w booking.Write) *booking.Result {
		settled = append(settled, w)
		return &booking.Result{Outcome: booking.Confirmed, Verified: true, Reconciled: true, Booking: &booking.Booking{ID: "bk_2"}}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(settled) != 1 || settled[0].Email != "grace@example.com" {
		t.Fatalf("settled %+v; only the real, open create is reconciled", settled)
	}
	if len(done) != 2 || !done[0].Recovered || !done[0].NeedsReview || done[0].Created != "bk_2" ||
		done[1].Outcome != booking.DryRun || done[1].NeedsReview {
		t.Fatalf("recovered %+v", done)
	}
	// Nothing is left to recover, and the recovered create is reported once.
	if more, _ := again.Recover(t.Context(), nil); len(more) != 0 {
		t.Fatalf("recovered twice: %+v", more)
	}
	if un, _ := again.Unreported(); len(un) != 1 || un[0].Seq != done[0].Seq {
		t.Fatalf("unreported = %+v", un)
	}
}

func TestSinceReadsAWindow(t *testing.T) {
	t.Parallel()
	j, c := open(t, t.TempDir())
	for range 3 {
		if _, err := j.Begin(t.Context(), create); err != nil {
			t.Fatal(err)
		}
		c.t = c.t.Add(time.Hour)
	}
	list, err := j.Since(c.t.Add(-2 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Seq != 2 || list[1].Seq != 3 {
		t.Fatalf("since: %+v", list)
	}
}

func TestReadOnlyWithoutAJournal(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "none")
	j, err := journal.Open(dir, journal.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
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
	j, err := journal.Open(b.TempDir(), journal.Options{})
	if err != nil {
		b.Fatal(err)
	}
	res := &booking.Result{Outcome: booking.Confirmed, Verified: true}
	for b.Loop() {
		finish, err := j.Begin(b.Context(), create)
		if err != nil {
			b.Fatal(err)
		}
		finish(res)
	}
}

// Pruning removes old entries nobody needs, and keeps those a person must
// still see, however old.
func TestPruneKeepsWhatNeedsAPerson(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, clk := open(t, dir)
	record := func(o booking.Outcome) uint64 {
		t.Helper()
		finish, err := j.Begin(t.Context(), create)
		if err != nil {
			t.Fatal(err)
		}
		if o != "" {
			finish(&booking.Result{Outcome: o, Verified: o == booking.Confirmed})
		}
		list, _ := j.Since(clk.t)
		return list[len(list)-1].Seq
	}
	confirmed := record(booking.Confirmed)
	unknown := record(booking.Unknown) // needs a person, not yet checked
	checked := record(booking.Unknown)
	if _, err := j.MarkReviewed(checked, "U1"); err != nil {
		t.Fatal(err)
	}
	inFlight := record("") // in flight when the process died
	clk.t = clk.t.Add(100 * 24 * time.Hour)
	recent := record(booking.Confirmed)

	n, err := j.Prune(clk.t.Add(-90 * 24 * time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Errorf("pruned %d entries, want 2 (the old confirmed and the old checked one)", n)
	}
	list, err := j.Since(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var kept []uint64
	for _, e := range list {
		kept = append(kept, e.Seq)
	}
	if want := []uint64{unknown, inFlight, recent}; !slices.Equal(kept, want) {
		t.Errorf("kept %v, want %v (confirmed %d and checked %d pruned)", kept, want, confirmed, checked)
	}
	if n, _ := j.AwaitingReview(); n != 1 {
		t.Errorf("awaiting review = %d, want 1", n)
	}
	if n, err := j.Prune(clk.t.Add(-90 * 24 * time.Hour)); n != 0 || err != nil {
		t.Errorf("pruning again: %d, %v; want nothing", n, err)
	}
}
