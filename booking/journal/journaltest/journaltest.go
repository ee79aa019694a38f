// Package journaltest checks an implementation of journal.Store against
// the semantics of bookbot's write journal, as the embedded store's
// journal (store/bolt) has them. It is for tests only.
package journaltest

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
	"github.com/bookbot/bookbot/internal/fakeclock"
)

// Run runs the conformance suite, each subtest against a store of its own.
// The subtests run in parallel with each other.
//
// fresh makes that store: it is called once by each subtest (by several
// at once), with the
// subtest's t and the subtest's clock, and must make an empty store no
// other subtest sees (a file under t.TempDir(), a database of its own).
// It returns open, which returns a new handle on that same store each time
// it is called, for the process named owner, whose entries' times come
// from now: the suite opens several, to check that what one handle
// recorded is there for the next (a restarted process), and that handles
// of other owners used at once agree (replicas). open is called on the
// subtest's goroutine; it reports a failure with t.Fatal, and registers
// with t.Cleanup the closing of what it opens, if anything needs it.
//
// Where the journal's documentation leaves room, the suite holds a store
// to these readings of it:
//   - an entry's Seq is unique and greater than that of every entry begun
//     before it; the suite does not assume Seqs start at 1 or leave no
//     gaps;
//   - times are kept as instants, to the nanosecond: their zone and
//     monotonic reading need not be;
//   - strings are kept as they were, NUL bytes included;
//   - Since and Prune select by the At an entry was begun with, and Since
//     lists in the order of Seq; the suite begins entries in the order of
//     their At.
func Run(t *testing.T, fresh func(t *testing.T, now func() time.Time) (open func(owner string) journal.Store)) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			clk := fakeclock.New(base)
			c.run(t, env{open: fresh(t, clk.Now), clock: clk})
		})
	}
}

// env is what a subtest has: its store and its clock.
type env struct {
	open  func(owner string) journal.Store
	clock *fakeclock.Clock
}

type testCase struct {
	name string
	run  func(t *testing.T, e env)
}

func cases() []testCase {
	cs := []testCase{
		{"Begin/records the intent before the outcome", beginRecordsIntent},
		{"Begin/allows other bookings", beginAllowsOthers},
		{"Begin/one calendar, whoever's key", beginOneCalendar},
		{"Begin/concurrent creates of one booking", beginConcurrent},
		{"Begin/concurrent creates of one booking across replicas", beginConcurrentReplicas},
		{"Begin/concurrent creates of other bookings", beginConcurrentOthers},
		{"Finish/keeps why nothing was booked", finishKeepsWhy},
		{"Finish/what a create made", finishCreated},
		{"Finish/who must look", finishNeedsReview},
		{"Finish/unknown entry", finishUnknown},
		{"Settle/an entry in flight, from the list", settleFromList},
		{"Recover/settles the writes of a process that is gone", recoverSettles},
		{"Recover/leaves its own writes in flight", recoverLeavesOwn},
		{"Review/unclear outcomes await review until checked", reviewQueue},
		{"Review/concurrent checks keep one", reviewConcurrent},
		{"Review/unknown entry", reviewUnknown},
		{"Since/window", sinceWindow},
		{"Since/nothing recorded", sinceEmpty},
		{"Prune/keeps what needs a person", pruneKeeps},
		{"Prune/a pruned booking no longer stands", pruneStands},
		{"Reopen/every field kept", reopenEveryField},
	}
	for _, r := range refusals {
		cs = append(cs, testCase{"Begin/after an earlier create " + r.name, r.run})
	}
	return cs
}

// base is the time every subtest's clock starts at.
var base = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

var create = booking.Write{
	Op: booking.OpCreate, Actor: "U1", EventType: "intro-call",
	Start: "2026-11-24T09:30:00Z", End: "2026-11-24T09:45:00Z",
	Name: "Grace Hopper", Email: "grace@example.com",
}

// same is create, written otherwise, by someone else: the same booking.
var same = func() booking.Write {
	w := create
	w.Start, w.Email, w.Actor = "2026-11-24T10:30:00+01:00", "Grace@Example.com", "U2"
	return w
}()

// createAt is create n days later: another booking, which no earlier one
// stands in the way of.
func createAt(n int) booking.Write {
	w := create
	start, _ := time.Parse(time.RFC3339, w.Start)
	start = start.AddDate(0, 0, n)
	w.Start, w.End = start.Format(time.RFC3339), start.Add(15*time.Minute).Format(time.RFC3339)
	return w
}

func cancelOf(id string) booking.Write {
	return booking.Write{Op: booking.OpCancel, Actor: "U1", BookingID: id}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// all is every entry of s, oldest first.
func all(t *testing.T, s journal.Store) []journal.Entry {
	t.Helper()
	list, err := s.Since(time.Time{})
	must(t, err)
	return list
}

// begin begins w and returns the new entry's Seq (the store's newest) and
// the function that finishes it.
func begin(t *testing.T, s journal.Store, w booking.Write) (uint64, func(*booking.Result) error) {
	t.Helper()
	finish, err := s.Begin(t.Context(), w)
	if err != nil {
		t.Fatalf("Begin(%+v): %v", w, err)
	}
	list := all(t, s)
	if len(list) == 0 {
		t.Fatalf("Begin(%+v) recorded nothing", w)
	}
	return list[len(list)-1].Seq, finish
}

func seqs(list []journal.Entry) []uint64 {
	var out []uint64
	for _, e := range list {
		out = append(out, e.Seq)
	}
	return out
}

// creates counts the create entries of s.
func creates(t *testing.T, s journal.Store) int {
	t.Helper()
	n := 0
	for _, e := range all(t, s) {
		if e.Op == booking.OpCreate {
			n++
		}
	}
	return n
}

// wantDuplicate fails unless err is a refusal naming the prior seq.
func wantDuplicate(t *testing.T, err error, seq uint64) *booking.DuplicateError {
	t.Helper()
	var dup *booking.DuplicateError
	if !errors.As(err, &dup) {
		t.Fatalf("Begin = %v, want a *booking.DuplicateError", err)
	}
	if dup.Prior.Seq != seq {
		t.Errorf("refused for entry %d, want %d", dup.Prior.Seq, seq)
	}
	return dup
}

func awaiting(t *testing.T, s journal.Store) int {
	t.Helper()
	n, err := s.AwaitingReview()
	must(t, err)
	return n
}

// A write is recorded before it is sent, visible to another handle, and
// its outcome after.
func beginRecordsIntent(t *testing.T, e env) {
	j := e.open("replica-a")
	finish, err := j.Begin(t.Context(), create)
	must(t, err)

	other := e.open("replica-b")
	list := all(t, other)
	if len(list) != 1 || !list[0].Open() || list[0].Actor != "U1" || list[0].Email != "grace@example.com" ||
		list[0].Owner != "replica-a" || !list[0].At.Equal(base) || list[0].Write != create {
		t.Fatalf("in flight: %+v", list)
	}
	if n := awaiting(t, other); n != 0 {
		t.Errorf("awaiting review while in flight = %d, want 0", n)
	}

	e.clock.Advance(time.Second)
	finish(&booking.Result{Outcome: booking.Confirmed, Verified: true, Booking: &booking.Booking{ID: "bk_1"}, Seen: []string{"listed"}})
	list = all(t, other)
	got := list[0]
	if len(list) != 1 || got.Open() || got.Outcome != booking.Confirmed || got.Created != "bk_1" || !got.Verified ||
		got.NeedsReview || got.Recovered || !got.DoneAt.Equal(base.Add(time.Second)) || !slices.Equal(got.Seen, []string{"listed"}) {
		t.Fatalf("finished: %+v", list)
	}
	if n := awaiting(t, j); n != 0 {
		t.Errorf("awaiting review = %d, want 0", n)
	}
}

// refusals are the cases of an earlier create of the same event, start and
// attendee: a second one is refused while the first stands (in flight,
// confirmed, or unclear and unchecked), across a restart and from another
// replica. The start may be written differently and the email in another
// case.
var refusals = func() []testCase {
	tests := []struct {
		name    string
		outcome booking.Outcome // "" leaves the earlier one in flight
		then    func(*testing.T, journal.Store, uint64)
		refused bool
	}{
		{"in flight", "", nil, true},
		{"confirmed", booking.Confirmed, nil, true},
		{"unknown", booking.Unknown, nil, true},
		{"probably not booked", booking.ProbablyNotBooked, nil, true},
		{"unknown, reported", booking.Unknown, func(t *testing.T, j journal.Store, seq uint64) {
			must(t, j.MarkReported(seq, "C1"))
		}, true},
		{"unknown, checked by a person", booking.Unknown, func(t *testing.T, j journal.Store, seq uint64) {
			_, err := j.MarkReviewed(seq, "U9")
			must(t, err)
		}, false},
		{"confirmed, then cancelled through bookbot", booking.Confirmed, func(t *testing.T, j journal.Store, _ uint64) {
			_, finish := begin(t, j, cancelOf("bk_1"))
			finish(&booking.Result{Outcome: booking.Cancelled, Verified: true})
		}, false},
		{"confirmed, then a cancel of it in flight", booking.Confirmed, func(t *testing.T, j journal.Store, _ uint64) {
			begin(t, j, cancelOf("bk_1"))
		}, true},
		{"confirmed, then a cancel of it not confirmed", booking.Confirmed, func(t *testing.T, j journal.Store, _ uint64) {
			_, finish := begin(t, j, cancelOf("bk_1"))
			finish(&booking.Result{Outcome: booking.NotCancelled})
		}, true},
		{"confirmed, then a dry-run cancel of it", booking.Confirmed, func(t *testing.T, j journal.Store, _ uint64) {
			w := cancelOf("bk_1")
			w.DryRun = true
			_, finish := begin(t, j, w)
			finish(&booking.Result{Outcome: booking.Cancelled})
		}, true},
		{"confirmed, then another booking cancelled", booking.Confirmed, func(t *testing.T, j journal.Store, _ uint64) {
			_, finish := begin(t, j, cancelOf("bk_other"))
			finish(&booking.Result{Outcome: booking.Cancelled, Verified: true})
		}, true},
		{"not booked (409)", booking.NotBooked, nil, false},
		{"refused (400)", booking.Rejected, nil, false},
		{"held back", booking.RateLimited, nil, false},
		{"not confirmed", booking.NotConfirmed, nil, false},
	}
	var out []testCase
	for _, tt := range tests {
		out = append(out, testCase{tt.name, func(t *testing.T, e env) {
			j := e.open("replica-a")
			seq, finish := begin(t, j, create)
			if tt.outcome != "" {
				finish(&booking.Result{Outcome: tt.outcome, Booking: &booking.Booking{ID: "bk_1"}})
			}
			if tt.then != nil {
				tt.then(t, j, seq)
			}
			// A restart, or another replica, changes nothing.
			for _, again := range []journal.Store{e.open("replica-a"), e.open("replica-b")} {
				before := all(t, again)
				_, err := again.Begin(t.Context(), same)
				if !tt.refused {
					must(t, err)
					if n := creates(t, again); n != 2 {
						t.Fatalf("%d creates recorded, want 2", n)
					}
					return
				}
				dup := wantDuplicate(t, err, seq)
				if p := dup.Prior; p.Actor != "U1" || p.Outcome != tt.outcome || !p.At.Equal(base) ||
					(tt.outcome != "" && p.BookingID != "bk_1") || (tt.outcome == "" && p.BookingID != "") {
					t.Errorf("prior = %+v", p)
				}
				if after := all(t, again); !slices.Equal(seqs(after), seqs(before)) {
					t.Errorf("the refused create was recorded: %+v", after)
				}
			}
		}})
	}
	return out
}()

// Other events, times and attendees are not duplicates, and neither is a
// dry run, nor a create whose start does not parse.
func beginAllowsOthers(t *testing.T, e env) {
	j := e.open("")
	first, _ := begin(t, j, create)
	other := func(change func(*booking.Write)) booking.Write {
		w := create
		change(&w)
		return w
	}
	for _, w := range []booking.Write{
		createAt(1),
		other(func(w *booking.Write) { w.EventType = "deep-dive" }),
		other(func(w *booking.Write) { w.Email = "ada@example.com" }),
		other(func(w *booking.Write) { w.Start = "2026-11-24T09:30:00.000000001Z" }),
		other(func(w *booking.Write) { w.DryRun = true }),
		other(func(w *booking.Write) { w.DryRun = true }),
		other(func(w *booking.Write) { w.Start = "tomorrow" }),
		other(func(w *booking.Write) { w.Start = "tomorrow" }),
		cancelOf("bk_1"),
		cancelOf("bk_1"),
	} {
		if _, err := j.Begin(t.Context(), w); err != nil {
			t.Errorf("Begin(%+v): %v", w, err)
		}
	}
	if n := len(all(t, j)); n != 11 {
		t.Errorf("%d entries, want 11", n)
	}
	// The dry run stands in the way of nothing, but the create still does.
	_, err := j.Begin(t.Context(), same)
	wantDuplicate(t, err, first)
}

// One calendar is one calendar whichever person's key reaches it: a create
// in flight through one refuses the same booking through another (two
// people who connected one key, or someone who connected the owner's),
// and stands in the way of nothing on another calendar.
func beginOneCalendar(t *testing.T, e env) {
	type key struct{ label, id, actor string }
	j := e.open("")
	for i, c := range []struct {
		name          string
		first, second key
	}{
		{"two people's keys", key{"U1", "cal-x", "U1"}, key{"U2", "cal-x", "U2"}},
		{"the owner's key, connected", key{booking.Owner, booking.Owner, "U1"}, key{"U2", booking.Owner, "U2"}},
		{"the owner's, in an entry older than IDs", key{"", "", "U1"}, key{"U2", booking.Owner, "U2"}},
	} {
		on := func(k key) booking.Write {
			w := createAt(i) // each case a booking of its own
			w.Calendar, w.CalendarID, w.Actor = k.label, k.id, k.actor
			return w
		}
		first, _ := begin(t, j, on(c.first))
		_, err := j.Begin(t.Context(), on(c.second))
		if _, ok := errors.AsType[*booking.DuplicateError](err); !ok {
			t.Errorf("%s: the same booking through another key of its calendar = %v, want refused", c.name, err)
			continue
		}
		wantDuplicate(t, err, first)
		// The same event, time and attendee on another calendar is
		// another booking.
		if _, err := j.Begin(t.Context(), on(key{"U3", "cal-other", "U3"})); err != nil {
			t.Errorf("%s: the same event, time and attendee on another calendar = %v, want begun", c.name, err)
		}
	}
}

// raceCreates has n goroutines begin the same create at once, on handles
// in turn: exactly one proceeds, and every other is refused for its entry.
func raceCreates(t *testing.T, handles []journal.Store) {
	const n = 20
	start := make(chan struct{})
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		h := handles[i%len(handles)]
		w := create
		w.Actor = fmt.Sprintf("U%d", i)
		wg.Go(func() {
			<-start
			_, errs[i] = h.Begin(t.Context(), w)
		})
	}
	close(start)
	wg.Wait()

	list := all(t, handles[0])
	if len(list) != 1 {
		var who []string
		for _, e := range list {
			who = append(who, fmt.Sprintf("%d by %s on %s", e.Seq, e.Actor, e.Owner))
		}
		t.Fatalf("%d entries recorded, want 1: %s", len(list), strings.Join(who, ", "))
	}
	proceeded := 0
	for i, err := range errs {
		if err == nil {
			proceeded++
			if want := fmt.Sprintf("U%d", i); list[0].Actor != want {
				t.Errorf("the entry is %s's, but %s's create proceeded", list[0].Actor, want)
			}
			continue
		}
		if dup := wantDuplicate(t, err, list[0].Seq); dup.Prior.Outcome != "" {
			t.Errorf("prior = %+v, want it in flight", dup.Prior)
		}
	}
	if proceeded != 1 {
		t.Errorf("%d of %d concurrent creates proceeded, want 1", proceeded, n)
	}

	// Once it is settled as not booked, the next one proceeds.
	_, err := handles[len(handles)-1].Finish(list[0].Seq, &booking.Result{Outcome: booking.NotBooked}, false)
	must(t, err)
	_, err = handles[0].Begin(t.Context(), same)
	must(t, err)
}

func beginConcurrent(t *testing.T, e env) {
	raceCreates(t, []journal.Store{e.open("replica-a")})
}

func beginConcurrentReplicas(t *testing.T, e env) {
	raceCreates(t, []journal.Store{e.open("replica-a"), e.open("replica-b")})
}

// Creates of other bookings, begun at once on two replicas, all proceed,
// each with a Seq of its own.
func beginConcurrentOthers(t *testing.T, e env) {
	handles := []journal.Store{e.open("replica-a"), e.open("replica-b")}
	const n = 20
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			finish, err := handles[i%2].Begin(t.Context(), createAt(i))
			if err == nil {
				finish(&booking.Result{Outcome: booking.Confirmed, Booking: &booking.Booking{ID: fmt.Sprintf("bk_%d", i)}})
			}
			errs[i] = err
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("create %d: %v", i, err)
		}
	}
	list := all(t, handles[1])
	got := seqs(list)
	if len(got) != n || !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != n {
		t.Fatalf("seqs %v, want %d distinct, in order", got, n)
	}
	for _, e := range list {
		if e.Outcome != booking.Confirmed {
			t.Errorf("entry %d: %+v", e.Seq, e)
		}
	}
}

// A 429 bookbot held back and one the service answered are told apart, as
// are the kinds of 409 and the reasons of plain refusals; a retry-after is
// kept.
func finishKeepsWhy(t *testing.T, e env) {
	j := e.open("")
	results := []*booking.Result{
		{Outcome: booking.RateLimited, Held: true, RetryAfter: 90 * time.Second},
		{Outcome: booking.RateLimited, Err: &booking.APIError{StatusCode: 429}, RetryAfter: time.Hour, Reason: booking.ReasonEventLimit},
		{Outcome: booking.NotBooked, Err: &booking.APIError{StatusCode: 409, BodyStatus: 409}},
		{Outcome: booking.NotBooked, Err: &booking.APIError{StatusCode: 409, BodyStatus: 200}},
		{Outcome: booking.NotBooked, Err: &booking.APIError{StatusCode: 409}},
		{Outcome: booking.NotBooked, Err: &booking.APIError{StatusCode: 503, Message: "not booked", BodyStatus: 503}, Reason: booking.ReasonFull},
		{Outcome: booking.Rejected, Err: &booking.APIError{StatusCode: 403, Message: "not booked", BodyStatus: 403}, Reason: booking.ReasonBlocked},
	}
	for i, res := range results {
		_, finish := begin(t, j, createAt(i))
		finish(res)
	}
	list := all(t, e.open(""))
	if len(list) != len(results) {
		t.Fatalf("entries: %+v", list)
	}
	if !list[0].Held || list[0].RetryAfter != 90*time.Second || list[1].Held || list[1].RetryAfter != time.Hour ||
		list[2].Conflict != booking.ConflictTimeNotFree || list[3].Conflict != booking.ConflictRefused ||
		list[4].Conflict != booking.ConflictUnstated || list[0].Conflict != "" || list[5].Conflict != "" {
		t.Errorf("entries: %+v", list)
	}
	for i, want := range []booking.Reason{"", booking.ReasonEventLimit, "", "", "", booking.ReasonFull, booking.ReasonBlocked} {
		if list[i].Reason != want {
			t.Errorf("entry %d: reason %q, want %q", list[i].Seq, list[i].Reason, want)
		}
	}
	for _, e := range list {
		if e.NeedsReview || e.Open() {
			t.Errorf("entry %d needs review or is open: %+v", e.Seq, e)
		}
	}
}

// A create keeps the booking it made: the listed one, else the receipt's.
// A cancel's outcome records none.
func finishCreated(t *testing.T, e env) {
	j := e.open("")
	a, _ := begin(t, j, createAt(1))
	b, _ := begin(t, j, createAt(2))
	c, _ := begin(t, j, cancelOf("bk_x"))
	e.clock.Advance(time.Minute)
	got, err := j.Finish(a, &booking.Result{Outcome: booking.Confirmed, Verified: true,
		Booking: &booking.Booking{ID: "bk_listed"}, Receipt: &booking.Receipt{ID: "bk_receipt"}}, false)
	must(t, err)
	if got.Seq != a || got.Created != "bk_listed" || !got.Verified || !got.DoneAt.Equal(base.Add(time.Minute)) {
		t.Errorf("Finish returned %+v", got)
	}
	_, err = j.Finish(b, &booking.Result{Outcome: booking.Confirmed, Receipt: &booking.Receipt{ID: "bk_receipt"}}, false)
	must(t, err)
	_, err = j.Finish(c, &booking.Result{Outcome: booking.Cancelled, Booking: &booking.Booking{ID: "bk_x"}}, false)
	must(t, err)
	list := all(t, e.open(""))
	if list[0].Created != "bk_listed" || list[1].Created != "bk_receipt" || list[1].Verified ||
		list[2].Created != "" || list[2].BookingID != "bk_x" || list[2].Outcome != booking.Cancelled {
		t.Errorf("entries: %+v", list)
	}
	equal(t, "Finish", []journal.Entry{got}, list[:1])
}

// Unclear outcomes, recovered writes and a create booked as the service
// answered where the list could not check it, beyond what it shows or
// unread (§7 rule 3 of the API), need a person; dry runs never do.
func finishNeedsReview(t *testing.T, e env) {
	j := e.open("")
	dry := createAt(9)
	dry.DryRun = true
	tests := []struct {
		w         booking.Write
		res       booking.Result
		recovered bool
		want      bool
	}{
		{createAt(1), booking.Result{Outcome: booking.Unknown}, false, true},
		{createAt(2), booking.Result{Outcome: booking.ProbablyNotBooked}, false, true},
		{createAt(3), booking.Result{Outcome: booking.Confirmed}, false, false},
		{createAt(4), booking.Result{Outcome: booking.Confirmed, Reconciled: true}, true, true},
		{createAt(5), booking.Result{Outcome: booking.Confirmed, Reason: booking.ReasonBeyondList}, false, true},
		{createAt(6), booking.Result{Outcome: booking.Confirmed, Reason: booking.ReasonListUnread}, false, true},
		{cancelOf("bk_3"), booking.Result{Outcome: booking.Cancelled, Reason: booking.ReasonBeyondList}, false, false},
		{cancelOf("bk_4"), booking.Result{Outcome: booking.Cancelled, Reason: booking.ReasonListUnread}, false, false},
		{cancelOf("bk_1"), booking.Result{Outcome: booking.NotCancelled}, false, false},
		{cancelOf("bk_2"), booking.Result{Outcome: booking.Cancelled}, true, true},
		{dry, booking.Result{Outcome: booking.Unknown}, true, false},
	}
	for _, tt := range tests {
		seq, _ := begin(t, j, tt.w)
		got, err := j.Finish(seq, &tt.res, tt.recovered)
		must(t, err)
		if got.NeedsReview != tt.want || got.Recovered != tt.recovered || got.AwaitingReview() != tt.want {
			t.Errorf("%+v finished with %+v (recovered %v): %+v; want needs review %v", tt.w, tt.res, tt.recovered, got, tt.want)
		}
	}
	if n := awaiting(t, e.open("")); n != 6 {
		t.Errorf("awaiting review = %d, want 6", n)
	}
}

func finishUnknown(t *testing.T, e env) {
	j := e.open("")
	if _, err := j.Finish(999, &booking.Result{Outcome: booking.Confirmed}, false); !errors.Is(err, journal.ErrNoEntry) {
		t.Errorf("Finish of an unknown entry: %v, want journal.ErrNoEntry", err)
	}
	if n := len(all(t, j)); n != 0 {
		t.Errorf("%d entries after finishing an unknown one", n)
	}
}

// An entry in flight (or left so, its outcome lost) is settled from what
// the bookings list shows, on any replica: it then stands as confirmed, and
// needs no one. An entry with an outcome is left as it was.
func settleFromList(t *testing.T, e env) {
	j := e.open("replica-a")
	seq, _ := begin(t, j, create)
	e.clock.Advance(time.Minute)
	listed := &booking.Result{Outcome: booking.Confirmed, Verified: true, Reconciled: true, Booking: &booking.Booking{ID: "bk_1"}, Seen: []string{"listed"}}
	must(t, e.open("replica-b").Settle(t.Context(), seq, listed))
	got := all(t, j)[0]
	if got.Open() || got.Outcome != booking.Confirmed || got.Created != "bk_1" || !got.Verified || got.NeedsReview || got.Recovered ||
		!got.DoneAt.Equal(base.Add(time.Minute)) || !slices.Equal(got.Seen, []string{"listed"}) {
		t.Fatalf("settled: %+v", got)
	}
	_, err := e.open("replica-b").Begin(t.Context(), same)
	if dup := wantDuplicate(t, err, seq); dup.Prior.Outcome != booking.Confirmed || dup.Prior.BookingID != "bk_1" {
		t.Errorf("prior = %+v, want it confirmed", dup.Prior)
	}
	must(t, j.Settle(t.Context(), seq, &booking.Result{Outcome: booking.Unknown}))
	if got := all(t, j)[0]; got.Outcome != booking.Confirmed || got.NeedsReview {
		t.Errorf("settled again: %+v, want it left as it was", got)
	}
	if err := j.Settle(t.Context(), 999, listed); !errors.Is(err, journal.ErrNoEntry) {
		t.Errorf("Settle of an unknown entry: %v, want journal.ErrNoEntry", err)
	}
}

// Writes left in flight by a process that is gone are settled once, by
// listing; a dry run is settled without. Entries of no owner count as
// another's.
func recoverSettles(t *testing.T, e env) {
	j := e.open("")
	begin(t, j, create) // the process dies here
	dry := create
	dry.DryRun = true
	begin(t, j, dry)
	_, finish := begin(t, j, cancelOf("bk_9"))
	finish(&booking.Result{Outcome: booking.Cancelled, Verified: true})

	// A new process opens the same journal.
	again := e.open("")
	e.clock.Advance(time.Hour)
	var settled []booking.Write
	done, err := again.Recover(t.Context(), func(_ context.Context, w booking.Write) *booking.Result {
		settled = append(settled, w)
		return &booking.Result{Outcome: booking.Confirmed, Verified: true, Reconciled: true, Booking: &booking.Booking{ID: "bk_2"}}
	})
	must(t, err)
	if len(settled) != 1 || settled[0] != create {
		t.Fatalf("settled %+v; only the real, open create is reconciled", settled)
	}
	if len(done) != 2 || !done[0].Recovered || !done[0].NeedsReview || done[0].Created != "bk_2" || done[0].Outcome != booking.Confirmed ||
		!done[0].DoneAt.Equal(base.Add(time.Hour)) || done[1].Outcome != booking.DryRun || done[1].NeedsReview || !done[1].Recovered ||
		!slices.Equal(done[1].Seen, []string{"dry run: nothing was sent"}) || done[0].Seq >= done[1].Seq {
		t.Fatalf("recovered %+v", done)
	}
	// Nothing is left to recover, and the recovered create is reported once.
	if more, err := e.open("").Recover(t.Context(), nil); len(more) != 0 || err != nil {
		t.Fatalf("recovered twice: %+v, %v", more, err)
	}
	if un, _ := again.Unreported(); len(un) != 1 || un[0].Seq != done[0].Seq {
		t.Fatalf("unreported = %+v", un)
	}
	// The recovered create, confirmed, stands in the way of a repeat.
	_, err = again.Begin(t.Context(), same)
	wantDuplicate(t, err, done[0].Seq)
}

// Recover leaves the writes of its own process alone: they are in flight
// here, not left behind by a process that is gone.
func recoverLeavesOwn(t *testing.T, e env) {
	gone := e.open("host/1/old")
	begin(t, gone, create)
	j := e.open("host/1/new")
	own, _ := begin(t, j, createAt(1))
	var settled []string
	done, err := j.Recover(t.Context(), func(_ context.Context, w booking.Write) *booking.Result {
		settled = append(settled, w.Start)
		return &booking.Result{Outcome: booking.ProbablyNotBooked}
	})
	must(t, err)
	if len(done) != 1 || len(settled) != 1 || settled[0] != create.Start || done[0].Owner != "host/1/old" {
		t.Fatalf("settled %v (%+v); only the gone process's write", settled, done)
	}
	list := all(t, j)
	if len(list) != 2 || list[1].Seq != own || !list[1].Open() || list[1].Owner != "host/1/new" {
		t.Fatalf("entries: %+v; its own stays in flight", list)
	}
	// Another handle of the same owner leaves it too.
	if more, err := e.open("host/1/new").Recover(t.Context(), nil); len(more) != 0 || err != nil {
		t.Fatalf("recovered its own write: %+v, %v", more, err)
	}
}

func reviewQueue(t *testing.T, e env) {
	j := e.open("")
	for i, o := range []booking.Outcome{booking.Unknown, booking.ProbablyNotBooked, booking.NotBooked} {
		_, finish := begin(t, j, createAt(i))
		finish(&booking.Result{Outcome: o})
	}
	un, err := j.Unreported()
	must(t, err)
	if len(un) != 2 || un[0].Outcome != booking.Unknown || un[1].Outcome != booking.ProbablyNotBooked {
		t.Fatalf("unreported = %+v", un)
	}
	e.clock.Advance(time.Minute)
	must(t, j.MarkReported(un[0].Seq, "C123"))
	other := e.open("")
	if left, _ := other.Unreported(); len(left) != 1 || left[0].Seq != un[1].Seq {
		t.Fatalf("after one report, unreported = %+v", left)
	}
	if n := awaiting(t, other); n != 2 {
		t.Errorf("awaiting review = %d, want 2 (reported is not reviewed)", n)
	}
	list := all(t, other)
	if r := list[0]; r.ReportedTo != "C123" || !r.ReportedAt.Equal(base.Add(time.Minute)) || !r.ReviewedAt.IsZero() {
		t.Errorf("reported: %+v", r)
	}

	e.clock.Advance(time.Minute)
	got, err := j.MarkReviewed(un[1].Seq, "U2")
	if err != nil || got.ReviewedBy != "U2" || !got.ReviewedAt.Equal(base.Add(2*time.Minute)) || got.Seq != un[1].Seq {
		t.Fatalf("reviewed: %+v, %v", got, err)
	}
	e.clock.Advance(time.Minute)
	if got, _ = other.MarkReviewed(un[1].Seq, "U3"); got.ReviewedBy != "U2" || !got.ReviewedAt.Equal(base.Add(2*time.Minute)) {
		t.Errorf("a second check replaced the first: %+v", got)
	}
	if n := awaiting(t, j); n != 1 {
		t.Errorf("awaiting review = %d, want 1", n)
	}
	// A reviewed entry is not reported any more, even though it never was.
	if un, _ := j.Unreported(); len(un) != 0 {
		t.Errorf("unreported after review = %+v", un)
	}
	// Marking an entry that needs no one is recorded all the same.
	got, err = j.MarkReviewed(list[2].Seq, "U4")
	if err != nil || got.ReviewedBy != "U4" {
		t.Errorf("reviewed a settled entry: %+v, %v", got, err)
	}
	if n := awaiting(t, j); n != 1 {
		t.Errorf("awaiting review = %d, want 1", n)
	}
}

// People checking one entry at once, on two replicas: the first record is
// kept, and every one of them is told whose it is.
func reviewConcurrent(t *testing.T, e env) {
	handles := []journal.Store{e.open("replica-a"), e.open("replica-b")}
	seq, finish := begin(t, handles[0], create)
	finish(&booking.Result{Outcome: booking.Unknown})
	const n = 10
	got := make([]journal.Entry, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			got[i], errs[i] = handles[i%2].MarkReviewed(seq, fmt.Sprintf("U%d", i))
		})
	}
	close(start)
	wg.Wait()
	stored := all(t, handles[0])[0]
	for i := range n {
		if errs[i] != nil || got[i].ReviewedBy != stored.ReviewedBy || stored.ReviewedBy == "" {
			t.Errorf("check %d: %+v, %v; the store holds %q", i, got[i], errs[i], stored.ReviewedBy)
		}
	}
	if n := awaiting(t, handles[1]); n != 0 {
		t.Errorf("awaiting review = %d, want 0", n)
	}
}

func reviewUnknown(t *testing.T, e env) {
	j := e.open("")
	begin(t, j, create)
	if _, err := j.MarkReviewed(999, "U2"); !errors.Is(err, journal.ErrNoEntry) {
		t.Errorf("MarkReviewed of an unknown entry: %v, want journal.ErrNoEntry", err)
	}
	if err := j.MarkReported(999, "C1"); !errors.Is(err, journal.ErrNoEntry) {
		t.Errorf("MarkReported of an unknown entry: %v, want journal.ErrNoEntry", err)
	}
	if _, err := j.Entry(999); !errors.Is(err, journal.ErrNoEntry) {
		t.Errorf("Entry of an unknown entry: %v, want journal.ErrNoEntry", err)
	}
}

func sinceWindow(t *testing.T, e env) {
	j := e.open("")
	var want []uint64
	for i := range 3 {
		seq, _ := begin(t, j, createAt(i))
		want = append(want, seq)
		e.clock.Advance(time.Hour)
	}
	// The clock is an hour past the last entry.
	for _, tt := range []struct {
		since time.Time
		want  []uint64
	}{
		{e.clock.Now().Add(-2 * time.Hour), want[1:]},
		{base.Add(time.Hour), want[1:]}, // at exactly t counts
		{base.Add(time.Hour + time.Nanosecond), want[2:]},
		{base.Add(time.Hour).In(time.FixedZone("x", 3600)), want[1:]},
		{e.clock.Now(), nil},
		{base, want},
	} {
		list, err := e.open("").Since(tt.since)
		must(t, err)
		if !slices.Equal(seqs(list), tt.want) {
			t.Errorf("Since(%s) = %v, want %v", tt.since, seqs(list), tt.want)
		}
	}
}

func sinceEmpty(t *testing.T, e env) {
	j := e.open("")
	list, err := j.Since(time.Time{})
	if err != nil || len(list) != 0 {
		t.Errorf("Since = %+v, %v; want nothing", list, err)
	}
	for name, f := range map[string]func() (int, error){
		"AwaitingReview": j.AwaitingReview,
		"Prune":          func() (int, error) { return j.Prune(base) },
		"Unreported": func() (int, error) {
			l, err := j.Unreported()
			return len(l), err
		},
		"Recover": func() (int, error) {
			l, err := j.Recover(t.Context(), nil)
			return len(l), err
		},
	} {
		if n, err := f(); n != 0 || err != nil {
			t.Errorf("%s = %d, %v; want 0", name, n, err)
		}
	}
}

// Pruning removes old entries nobody needs, and keeps those a person must
// still see, however old.
func pruneKeeps(t *testing.T, e env) {
	j := e.open("")
	n := 0
	record := func(o booking.Outcome) uint64 {
		t.Helper()
		n++
		seq, finish := begin(t, j, createAt(n))
		if o != "" {
			finish(&booking.Result{Outcome: o, Verified: o == booking.Confirmed})
		}
		return seq
	}
	confirmed := record(booking.Confirmed)
	unknown := record(booking.Unknown) // needs a person, not yet checked
	reported := record(booking.Unknown)
	must(t, j.MarkReported(reported, "C1"))
	checked := record(booking.Unknown)
	_, err := j.MarkReviewed(checked, "U1")
	must(t, err)
	inFlight := record("") // in flight when the process died
	e.clock.Advance(10 * 24 * time.Hour)
	edge := record(booking.Confirmed) // recorded at exactly the cutoff
	e.clock.Advance(90 * 24 * time.Hour)
	recent := record(booking.Confirmed)

	n, err = e.open("").Prune(base.Add(10 * 24 * time.Hour))
	must(t, err)
	if n != 2 {
		t.Errorf("pruned %d entries, want 2 (the old confirmed and the old checked one)", n)
	}
	kept := seqs(all(t, j))
	if want := []uint64{unknown, reported, inFlight, edge, recent}; !slices.Equal(kept, want) {
		t.Errorf("kept %v, want %v (confirmed %d and checked %d pruned)", kept, want, confirmed, checked)
	}
	if n := awaiting(t, j); n != 2 {
		t.Errorf("awaiting review = %d, want 2", n)
	}
	if n, err := j.Prune(base.Add(10 * 24 * time.Hour)); n != 0 || err != nil {
		t.Errorf("pruning again: %d, %v; want nothing", n, err)
	}
	for _, seq := range []uint64{confirmed, checked} {
		if _, err := j.MarkReviewed(seq, "U1"); !errors.Is(err, journal.ErrNoEntry) {
			t.Errorf("MarkReviewed of pruned entry %d: %v, want journal.ErrNoEntry", seq, err)
		}
	}
	// The in-flight one, once settled, goes next time.
	_, err = j.Finish(inFlight, &booking.Result{Outcome: booking.NotBooked}, false)
	must(t, err)
	if n, err := j.Prune(base.Add(10 * 24 * time.Hour)); n != 1 || err != nil {
		t.Errorf("pruning after the in-flight one was settled: %d, %v; want 1", n, err)
	}
}

// A pruned booking no longer stands in the way of a repeat; a kept one
// still does, and the Seqs of later entries go on past the pruned ones.
func pruneStands(t *testing.T, e env) {
	j := e.open("")
	old := createAt(1)
	old.Name, old.Email = "Pruned Person", "pruned.person@example.com"
	oldSeq, finish := begin(t, j, old)
	finish(&booking.Result{Outcome: booking.Confirmed, Booking: &booking.Booking{ID: "bk_old"}})
	e.clock.Advance(100 * 24 * time.Hour)
	kept, finish := begin(t, j, create)
	finish(&booking.Result{Outcome: booking.Confirmed, Booking: &booking.Booking{ID: "bk_kept"}})

	if n, err := j.Prune(e.clock.Now().Add(-90 * 24 * time.Hour)); n != 1 || err != nil {
		t.Fatalf("Prune = %d, %v", n, err)
	}
	list := all(t, j)
	if len(list) != 1 || list[0].Created != "bk_kept" {
		t.Fatalf("after pruning: %+v", list)
	}
	again := e.open("")
	_, err := again.Begin(t.Context(), same)
	wantDuplicate(t, err, kept)
	seq, _ := begin(t, again, old)
	if seq <= kept || seq <= oldSeq {
		t.Errorf("a new entry after pruning has seq %d, not past %d", seq, kept)
	}
}

// Every field of an entry is kept as it was, for another handle: times to
// the nanosecond, strings with NUL bytes.
func reopenEveryField(t *testing.T, e env) {
	j := e.open("host\x00/1")
	e.clock.Set(base.Add(123456789 * time.Nanosecond).In(time.FixedZone("", -5*3600)))
	w := booking.Write{
		Op: booking.OpCreate, Actor: "U\x001", Calendar: "U\x002", CalendarID: "cal-\x00", EventType: "intro\x00call",
		Start: "2026-11-24T09:30:00.5-05:00", End: "2026-11-24T09:45:00.5-05:00",
		Name: "Grace \x00 Höpper", Email: "grace\x00@example.com",
	}
	seq, finish := begin(t, j, w)
	e.clock.Advance(time.Nanosecond)
	finish(&booking.Result{Outcome: booking.Unknown, Verified: true, Receipt: &booking.Receipt{ID: "bk_\x00r"}, Reason: "why \x00 so",
		RetryAfter: 1500 * time.Millisecond, Held: true, Seen: []string{"first", "second \x00 one", ""}})
	e.clock.Advance(time.Nanosecond)
	must(t, j.MarkReported(seq, "C\x00 1"))
	e.clock.Advance(time.Nanosecond)
	last, err := j.MarkReviewed(seq, "U\x009")
	must(t, err)
	cancel := cancelOf("bk_\x00r")
	cancel.EventType, cancel.Start, cancel.Name, cancel.DryRun = "intro-call", w.Start, "Grace", true
	cseq, finish := begin(t, j, cancel)
	finish(&booking.Result{Outcome: booking.DryRun, Err: &booking.APIError{StatusCode: 409, BodyStatus: 409}})

	t0 := base.Add(123456789 * time.Nanosecond)
	want := []journal.Entry{{
		Seq: seq, At: t0, Owner: "host\x00/1", Write: w,
		Outcome: booking.Unknown, DoneAt: t0.Add(1), Created: "bk_\x00r", Verified: true, Reason: "why \x00 so",
		RetryAfter: 1500 * time.Millisecond, Held: true, Seen: []string{"first", "second \x00 one", ""},
		NeedsReview: true, ReportedAt: t0.Add(2), ReportedTo: "C\x00 1", ReviewedAt: t0.Add(3), ReviewedBy: "U\x009",
	}, {
		Seq: cseq, At: t0.Add(3), Owner: "host\x00/1", Write: cancel,
		Outcome: booking.DryRun, DoneAt: t0.Add(3), Conflict: booking.ConflictTimeNotFree,
	}}
	equal(t, "MarkReviewed", []journal.Entry{last}, want[:1])
	equal(t, "Since", all(t, e.open("")), want)
	for _, w := range want {
		got, err := e.open("").Entry(w.Seq)
		must(t, err)
		equal(t, "Entry", []journal.Entry{got}, []journal.Entry{w})
	}
}

// equal fails unless got and want hold the same entries, times as instants.
func equal(t *testing.T, what string, got, want []journal.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, want %d: %+v", what, len(got), len(want), got)
	}
	for i := range got {
		g, w := got[i], want[i]
		if !g.At.Equal(w.At) || !g.DoneAt.Equal(w.DoneAt) || !g.ReportedAt.Equal(w.ReportedAt) || !g.ReviewedAt.Equal(w.ReviewedAt) {
			t.Errorf("%s: entry %d times: at %s done %s reported %s reviewed %s; want %s %s %s %s", what, i,
				g.At, g.DoneAt, g.ReportedAt, g.ReviewedAt, w.At, w.DoneAt, w.ReportedAt, w.ReviewedAt)
		}
		if !slices.Equal(g.Seen, w.Seen) {
			t.Errorf("%s: entry %d seen %q, want %q", what, i, g.Seen, w.Seen)
		}
		g.At, g.DoneAt, g.ReportedAt, g.ReviewedAt, g.Seen = w.At, w.DoneAt, w.ReportedAt, w.ReviewedAt, w.Seen
		if fmt.Sprintf("%#v", g) != fmt.Sprintf("%#v", w) {
			t.Errorf("%s: entry %d\n got %#v\nwant %#v", what, i, got[i], want[i])
		}
	}
}
