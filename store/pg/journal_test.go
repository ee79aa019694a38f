package pg_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/store/pg"
)

var journalCreate = booking.Write{
	Op: booking.OpCreate, Actor: "U1", EventType: "intro-call",
	Start: "2026-11-24T09:30:00Z", End: "2026-11-24T09:45:00Z",
	Name: "Grace Hopper", Email: "grace@example.com",
}

// Replicas starting together each recover: every write left behind is
// settled and returned once, though each of them may list it.
func TestJournalRecoverConcurrent(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	gone := open(t, u).Journal("gone")
	const writes = 10
	for i := range writes {
		w := journalCreate
		w.Start = time.Date(2026, 11, 24, 9, i, 0, 0, time.UTC).Format(time.RFC3339)
		if _, err := gone.Begin(t.Context(), w); err != nil {
			t.Fatal(err)
		}
	}
	replicas := make([]journal.Store, 4)
	for i := range replicas {
		replicas[i] = open(t, u).Journal(fmt.Sprintf("replica-%d", i))
	}
	done := make([][]journal.Entry, len(replicas))
	errs := make([]error, len(replicas))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, r := range replicas {
		wg.Go(func() {
			<-start
			done[i], errs[i] = r.Recover(t.Context(), func(context.Context, booking.Write) *booking.Result {
				return &booking.Result{Outcome: booking.ProbablyNotBooked, Seen: []string{fmt.Sprintf("replica-%d", i)}}
			})
		})
	}
	close(start)
	wg.Wait()
	var settled []uint64
	by := map[uint64]string{}
	for i := range replicas {
		if errs[i] != nil {
			t.Errorf("replica %d: %v", i, errs[i])
		}
		for _, e := range done[i] {
			settled = append(settled, e.Seq)
			by[e.Seq] = e.Seen[0]
		}
	}
	slices.Sort(settled)
	if len(settled) != writes || len(slices.Compact(slices.Clone(settled))) != writes {
		t.Fatalf("settled %v, want each of %d writes once", settled, writes)
	}
	list, err := replicas[0].Since(time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range list {
		if e.Open() || !e.Recovered || e.Seen[0] != by[e.Seq] {
			t.Errorf("entry %d: %+v; returned as settled by %s", e.Seq, e, by[e.Seq])
		}
	}
}

// A failure to record an outcome is returned, and the entry is left in
// flight, for the writer to try again or a later Recover; a Begin that
// cannot record is no Begin.
func TestJournalOutcomeNotRecorded(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	db, err := pg.Open(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	j := db.Journal("replica")
	finish, err := j.Begin(t.Context(), journalCreate)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if err := finish(&booking.Result{Outcome: booking.Confirmed}); err == nil {
		t.Error("an outcome recorded on a closed pool")
	}
	if _, err := j.Begin(t.Context(), journalCreate); err == nil || errors.As(err, new(*booking.DuplicateError)) {
		t.Errorf("Begin on a closed pool: %v, want a failure", err)
	}
	list, err := open(t, u).Journal("other").Since(time.Time{})
	if err != nil || len(list) != 1 || !list[0].Open() {
		t.Fatalf("entries: %+v, %v; want the one in flight", list, err)
	}
}

// BenchmarkJournalBeginFinish is the journal's share of a booking: a
// create's check and record, and its outcome.
func BenchmarkJournalBeginFinish(b *testing.B) {
	j := open(b, migrated(b)).Journal("bench")
	res := &booking.Result{Outcome: booking.Confirmed, Verified: true}
	start := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	n := 0
	for b.Loop() {
		n++
		w := journalCreate
		w.Start = start.Add(time.Duration(n) * time.Minute).Format(time.RFC3339)
		finish, err := j.Begin(b.Context(), w)
		if err != nil {
			b.Fatal(err)
		}
		finish(res)
	}
}

// Begin refuses duplicates whatever isolation the database gives
// transactions by default: at REPEATABLE READ, the check would see no
// create committed while it waited for the lock.
func TestJournalBeginUnderRepeatableReadDefault(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	u += sep + "default_transaction_isolation=repeatable%20read"
	handles := []journal.Store{open(t, u).Journal("a"), open(t, u).Journal("b")}
	var level string
	if err := conn(t, u).QueryRow(t.Context(), "SHOW default_transaction_isolation").Scan(&level); err != nil || level != "repeatable read" {
		t.Fatalf("default_transaction_isolation = %q, %v", level, err)
	}
	const n = 20
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			_, errs[i] = handles[i%2].Begin(t.Context(), journalCreate)
		})
	}
	close(start)
	wg.Wait()
	proceeded := 0
	for _, err := range errs {
		switch {
		case err == nil:
			proceeded++
		case !errors.As(err, new(*booking.DuplicateError)):
			t.Errorf("Begin: %v", err)
		}
	}
	if proceeded != 1 {
		t.Errorf("%d of %d concurrent creates proceeded, want 1", proceeded, n)
	}
}

// With JournalLeftAfter, another replica's write in flight is settled only
// once it is older than a live replica's write can be.
func TestJournalLeftAfter(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db := open(t, migrated(t))
	now := time.Date(2026, 3, 23, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	a := db.Journal("replica-a", pg.JournalClock(clock))
	b := db.Journal("replica-b", pg.JournalClock(clock), pg.JournalLeftAfter(5*time.Minute))
	if _, err := a.Begin(ctx, booking.Write{Op: booking.OpCancel, BookingID: "bk_1"}); err != nil {
		t.Fatal(err)
	}
	settled := 0
	settle := func(context.Context, booking.Write) *booking.Result {
		settled++
		return &booking.Result{Outcome: booking.Cancelled}
	}
	now = now.Add(5 * time.Minute)
	if done, err := b.Recover(ctx, settle); err != nil || len(done) != 0 || settled != 0 {
		t.Errorf("at 5 minutes: %d settled, %v", len(done), err)
	}
	now = now.Add(time.Second)
	if done, err := b.Recover(ctx, settle); err != nil || len(done) != 1 || settled != 1 {
		t.Errorf("past 5 minutes: %d settled, %v", len(done), err)
	}
}
