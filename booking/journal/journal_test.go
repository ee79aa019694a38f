package journal_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/internal/fakeclock"
)

// open opens a journal in dir whose entries' times come from the returned
// clock.
func open(t *testing.T, dir string) (*journal.Journal, *fakeclock.Clock) {
	t.Helper()
	j, err := journal.Open(dir, journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
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
	for i, o := range []booking.Outcome{booking.Unknown, booking.ProbablyNotBooked, booking.NotBooked} {
		finish, err := j.Begin(t.Context(), createAt(i))
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
	for i := range 3 {
		if _, err := j.Begin(t.Context(), createAt(i)); err != nil {
			t.Fatal(err)
		}
		c.Advance(time.Hour)
	}
	list, err := j.Since(c.Now().Add(-2 * time.Hour))
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

// Pruning removes old entries nobody needs, and keeps those a person must
// still see, however old.
func TestPruneKeepsWhatNeedsAPerson(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	j, clk := open(t, dir)
	n := 0
	record := func(o booking.Outcome) uint64 {
		t.Helper()
		n++
		finish, err := j.Begin(t.Context(), createAt(n))
		if err != nil {
			t.Fatal(err)
		}
		if o != "" {
			finish(&booking.Result{Outcome: o, Verified: o == booking.Confirmed})
		}
		list, _ := j.Since(clk.Now())
		return list[len(list)-1].Seq
	}
	confirmed := record(booking.Confirmed)
	unknown := record(booking.Unknown) // needs a person, not yet checked
	checked := record(booking.Unknown)
	if _, err := j.MarkReviewed(checked, "U1"); err != nil {
		t.Fatal(err)
	}
	inFlight := record("") // in flight when the process died
	clk.Advance(100 * 24 * time.Hour)
	recent := record(booking.Confirmed)

	n, err := j.Prune(clk.Now().Add(-90 * 24 * time.Hour))
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
	if n, err := j.Prune(clk.Now().Add(-90 * 24 * time.Hour)); n != 0 || err != nil {
		t.Errorf("pruning again: %d, %v; want nothing", n, err)
	}
}

// A create is refused while an earlier one of the same event, start and
// attendee stands: in flight, confirmed, or unclear and unchecked. The
// start may be written differently and the email in another case.
func TestBeginRefusesWhatAnEarlierCreateStandsFor(t *testing.T) {
	t.Parallel()
	same := create
	same.Start, same.Email, same.Actor = "2026-11-24T10:30:00+01:00", "Grace@Example.com", "U2"
	tests := []struct {
		name    string
		outcome booking.Outcome // "" leaves the earlier one in flight
		then    func(*testing.T, *journal.Journal, uint64)
		refused bool
	}{
		{"in flight", "", nil, true},
		{"confirmed", booking.Confirmed, nil, true},
		{"unknown", booking.Unknown, nil, true},
		{"probably not booked", booking.ProbablyNotBooked, nil, true},
		{"unknown, checked by a person", booking.Unknown, func(t *testing.T, j *journal.Journal, seq uint64) {
			if _, err := j.MarkReviewed(seq, "U9"); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"confirmed, then cancelled through bookbot", booking.Confirmed, func(t *testing.T, j *journal.Journal, _ uint64) {
			finish, err := j.Begin(t.Context(), booking.Write{Op: booking.OpCancel, BookingID: "bk_1"})
			if err != nil {
				t.Fatal(err)
			}
			finish(&booking.Result{Outcome: booking.Cancelled, Verified: true})
		}, false},
		{"not booked (409)", booking.NotBooked, nil, false},
		{"refused (400)", booking.Rejected, nil, false},
		{"held back", booking.RateLimited, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			j, _ := open(t, dir)
			finish, err := j.Begin(t.Context(), create)
			if err != nil {
				t.Fatal(err)
			}
			if tt.outcome != "" {
				finish(&booking.Result{Outcome: tt.outcome, Booking: &booking.Booking{ID: "bk_1"}})
			}
			if tt.then != nil {
				tt.then(t, j, 1)
			}
			// A restart in between changes nothing: the journal is the file.
			again, _ := open(t, dir)
			_, err = again.Begin(t.Context(), same)
			var dup *booking.DuplicateError
			if got := errors.As(err, &dup); got != tt.refused {
				t.Fatalf("second create: %v; refused = %v, want %v", err, got, tt.refused)
			}
			if !tt.refused {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if p := dup.Prior; p.Seq != 1 || p.Actor != "U1" || p.Outcome != tt.outcome || (tt.outcome != "" && p.BookingID != "bk_1") {
				t.Errorf("prior = %+v", p)
			}
			list, _ := again.Since(time.Time{})
			for _, e := range list {
				if e.Op == booking.OpCreate && e.Seq != 1 {
					t.Errorf("the refused create was recorded: %+v", e)
				}
			}
		})
	}
}

// Other events, times and attendees are not duplicates, and neither is a
// dry run.
func TestBeginAllowsOtherBookings(t *testing.T) {
	t.Parallel()
	j, _ := open(t, t.TempDir())
	if _, err := j.Begin(t.Context(), create); err != nil {
		t.Fatal(err)
	}
	other := func(change func(*booking.Write)) booking.Write {
		w := create
		change(&w)
		return w
	}
	for _, w := range []booking.Write{
		createAt(1),
		other(func(w *booking.Write) { w.EventType = "deep-dive" }),
		other(func(w *booking.Write) { w.Email = "ada@example.com" }),
		other(func(w *booking.Write) { w.DryRun = true }),
	} {
		if _, err := j.Begin(t.Context(), w); err != nil {
			t.Errorf("Begin(%+v): %v", w, err)
		}
	}
}

// Recover leaves the writes of its own process alone: they are in flight
// here, not left behind by a process that is gone.
func TestRecoverLeavesItsOwnWritesInFlight(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	gone, _ := open(t, dir)
	gone.Owner = "host/1/old"
	if _, err := gone.Begin(t.Context(), create); err != nil {
		t.Fatal(err)
	}
	j, _ := open(t, dir)
	j.Owner = "host/1/new"
	if _, err := j.Begin(t.Context(), createAt(1)); err != nil {
		t.Fatal(err)
	}
	var settled []string
	done, err := j.Recover(t.Context(), func(_ context.Context, w booking.Write) *booking.Result {
		settled = append(settled, w.Start)
		return &booking.Result{Outcome: booking.ProbablyNotBooked}
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 1 || len(settled) != 1 || settled[0] != create.Start || done[0].Owner != "host/1/old" {
		t.Fatalf("settled %v (%+v); only the gone process's write", settled, done)
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

// A journal written before notes were dropped loses them on open, bytes
// included, and its creates are indexed.
func TestOpenRewritesAnOlderJournal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db, err := bolt.Open(filepath.Join(dir, journal.FileName), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	v1 := `{"seq":1,"at":"2026-11-23T09:00:00Z","op":"create","actor":"U1","event_type":"intro-call",` +
		`"start":"2026-11-24T09:30:00Z","end":"2026-11-24T09:45:00Z","name":"Grace Hopper","email":"grace@example.com",` +
		`"booker_tz":"Europe/Berlin","note":"a very private note","outcome":"confirmed","created":"bk_1","verified":true}`
	err = db.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("entries"))
		if err != nil {
			return err
		}
		if _, err := tx.CreateBucket([]byte("attention")); err != nil {
			return err
		}
		if _, err := b.NextSequence(); err != nil {
			return err
		}
		return b.Put(binary.BigEndian.AppendUint64(nil, 1), []byte(v1))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	j, _ := open(t, dir)
	raw, err := os.ReadFile(j.Path())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"a very private note", "Europe/Berlin"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("the file still holds %q", s)
		}
	}
	list, err := j.Since(time.Time{})
	if err != nil || len(list) != 1 || list[0].Email != "grace@example.com" || list[0].Created != "bk_1" {
		t.Fatalf("entries: %+v, %v", list, err)
	}
	var dup *booking.DuplicateError
	if _, err := j.Begin(t.Context(), create); !errors.As(err, &dup) {
		t.Errorf("the older journal's booking does not stand in the way of a duplicate: %v", err)
	}
	finish, err := j.Begin(t.Context(), createAt(1))
	if err != nil {
		t.Fatal(err)
	}
	finish(&booking.Result{Outcome: booking.Confirmed})
	if list, _ := j.Since(time.Time{}); len(list) != 2 || list[1].Seq != 2 {
		t.Errorf("the sequence did not carry over: %+v", list)
	}
}

// A 429 bookbot held back and one the service answered are told apart, as
// are the kinds of 409.
func TestFinishKeepsWhyNothingWasBooked(t *testing.T) {
	t.Parallel()
	j, _ := open(t, t.TempDir())
	results := []*booking.Result{
		{Outcome: booking.RateLimited, Held: true},
		{Outcome: booking.RateLimited, Err: &booking.APIError{StatusCode: 429}},
		{Outcome: booking.NotBooked, Err: &booking.APIError{StatusCode: 409, BodyStatus: 409}},
		{Outcome: booking.NotBooked, Err: &booking.APIError{StatusCode: 409, BodyStatus: 200}},
	}
	for i, res := range results {
		finish, err := j.Begin(t.Context(), createAt(i))
		if err != nil {
			t.Fatal(err)
		}
		finish(res)
	}
	list, err := j.Since(time.Time{})
	if err != nil || len(list) != 4 {
		t.Fatalf("entries: %+v, %v", list, err)
	}
	if !list[0].Held || list[1].Held || list[2].Conflict != booking.ConflictTimeNotFree || list[3].Conflict != booking.ConflictRefused {
		t.Errorf("entries: %+v", list)
	}
}
