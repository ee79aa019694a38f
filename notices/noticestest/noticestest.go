// Package noticestest checks an implementation of notices.Store against
// the semantics its documentation gives. It is for tests only.
package noticestest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/notices"
)

// Run runs the conformance suite, each subtest against a store of its own.
//
// fresh makes that store: it is called once by each subtest, with the
// subtest's t, and must make an empty store no other subtest sees (a file
// under t.TempDir(), a database schema of its own). It returns open, which
// returns a new handle on that same store each time it is called, as a
// restarted process would get one: the suite calls it more than once to
// check that what a handle recorded is there for the next, and that
// handles used at once agree. open is called on the subtest's goroutine;
// it reports a failure with t.Fatal, and registers with t.Cleanup the
// closing of what it opens, if anything needs it.
//
// Where notices.Store's documentation leaves room, the suite holds a store
// to these readings of it:
//   - a Key's times count as instants: the same instant in another zone,
//     or with no monotonic reading, is the same key; End is not compared;
//   - Posted of a key that holds no claim fails, and sets no thread;
//   - Posted with root replaces the booking's thread, if it had one;
//   - Prune forgets a claim once its key's End is before cutoff, and a
//     booking's thread once the latest End posted in it is (a booking moved
//     later keeps its thread until its new end); an end of exactly cutoff
//     is kept;
//   - with a context already cancelled every method fails with an error
//     that is context.Canceled, and records nothing.
//
// What every claim does, whatever it claims (one winner among many at
// once, release, unsettled claims), is the outbox's, which outboxtest
// checks.
//
// The subtests run in parallel with each other.
func Run(t *testing.T, fresh func(t *testing.T) (open func() notices.Store)) {
	cases.Run(t, fresh)
}

var cases = testutil.Suite[notices.Store]{
	{"Last/before any save", lastBeforeSave},
	{"SaveLast/round trip", saveLastRoundTrip},
	{"SaveLast/full list", saveLastFull},
	{"SaveLast/no bookings", saveLastEmpty},
	{"SaveLast/replaces", saveLastReplaces},
	{"SaveLast/unseen", saveLastUnseen},
	{"Claim/once", claimOnce},
	{"Claim/distinct changes", claimDistinct},
	{"Claim/same instants in other zones", claimSameInstants},
	{"Posted/unclaimed", postedUnclaimed},
	{"Posted/root sets the thread", postedRoot},
	{"Posted/root replaces the thread", postedRootReplaces},
	{"Posted/reply leaves the thread", postedReply},
	{"Thread/unknown", threadUnknown},
	{"Prune/ended before cutoff", pruneEnded},
	{"Prune/moved booking", pruneMoved},
	{"Reopen", reopen},
	{"Context/cancelled", cancelled},
}

// base is the time the fixtures are built around.
var base = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// at is base plus minutes.
func at(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }

// bk is a 30-minute booking with every field known, starting start minutes
// after base.
func bk(id string, start int) booking.Booking {
	return booking.Booking{
		ID:          id,
		Start:       at(start),
		End:         at(start + 30),
		Status:      "confirmed",
		BookerName:  booking.Some("Ada " + id),
		BookerEmail: booking.Some(id + "@example.com"),
		EventType:   booking.Some("intro-call"),
	}
}

// key is the key of the kind of change to b found against the list read
// since minutes after base.
func key(b booking.Booking, kind notices.Kind, since int) notices.Key {
	return notices.Key{BookingID: b.ID, Kind: kind, Start: b.Start, End: b.End, Since: at(since)}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func claim(t *testing.T, s notices.Store, k notices.Key) bool {
	t.Helper()
	ok, err := s.Claim(t.Context(), k, base)
	must(t, err)
	return ok
}

// wantClaim claims k and fails unless the claim was new exactly when want
// says so.
func wantClaim(t *testing.T, s notices.Store, k notices.Key, want bool) {
	t.Helper()
	if got := claim(t, s, k); got != want {
		t.Errorf("Claim(%s) = %v, want %v", show(k), got, want)
	}
}

func show(k notices.Key) string {
	return fmt.Sprintf("{%q %s start %s end %s since %s}", k.BookingID, k.Kind,
		k.Start.Format(time.RFC3339Nano), k.End.Format(time.RFC3339Nano), k.Since.Format(time.RFC3339Nano))
}

// wantThread fails unless the booking's thread is m (none when m is nil).
func wantThread(t *testing.T, s notices.Store, bookingID string, m *notices.Message) {
	t.Helper()
	got, ok, err := s.Thread(t.Context(), bookingID)
	must(t, err)
	switch {
	case m == nil && ok:
		t.Errorf("Thread(%q) = %+v, want none", bookingID, got)
	case m != nil && !ok:
		t.Errorf("Thread(%q): none, want %+v", bookingID, *m)
	case m != nil && got != *m:
		t.Errorf("Thread(%q) = %+v, want %+v", bookingID, got, *m)
	}
}

// sameSnapshot fails unless got is want: the same bookings in the same
// order, every field equal and every time the same instant.
func sameSnapshot(t *testing.T, got, want notices.Snapshot) {
	t.Helper()
	if !got.At.Equal(want.At) {
		t.Errorf("At = %v, want %v", got.At, want.At)
	}
	if !got.ServiceAt.Equal(want.ServiceAt) {
		t.Errorf("ServiceAt = %v, want %v", got.ServiceAt, want.ServiceAt)
	}
	sameBookings(t, "bookings", got.Bookings, want.Bookings)
	sameBookings(t, "unseen", got.Unseen, want.Unseen)
	sameBookings(t, "beyond", got.Beyond, want.Beyond)
}

func sameBookings(t *testing.T, what string, got, want []booking.Booking) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d %s, want %d", len(got), what, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.ID != w.ID || g.Status != w.Status || !g.Start.Equal(w.Start) || !g.End.Equal(w.End) ||
			g.BookerName != w.BookerName || g.BookerEmail != w.BookerEmail || g.EventType != w.EventType {
			t.Errorf("%s %d = %+v\nwant %+v", what, i, g, w)
		}
	}
}

// roundTrip saves want and fails unless Last, on the same handle and on a
// new one, returns it.
func roundTrip(t *testing.T, open func() notices.Store, want notices.Snapshot) {
	t.Helper()
	s := open()
	must(t, s.SaveLast(t.Context(), want))
	for _, s := range []notices.Store{s, open()} {
		got, ok, err := s.Last(t.Context())
		must(t, err)
		if !ok {
			t.Fatal("Last after SaveLast: none")
		}
		sameSnapshot(t, got, want)
	}
}

func lastBeforeSave(t *testing.T, open func() notices.Store) {
	got, ok, err := open().Last(t.Context())
	must(t, err)
	if ok {
		t.Errorf("Last before any SaveLast = %+v, true; want ok false", got)
	}
}

func saveLastRoundTrip(t *testing.T, open func() notices.Store) {
	legacy := bk("legacy", 60)
	legacy.BookerName, legacy.BookerEmail, legacy.EventType = booking.NullString{}, booking.NullString{}, booking.NullString{}
	empty := bk("empty", 90)
	empty.Status = ""
	empty.BookerName, empty.BookerEmail, empty.EventType = booking.Some(""), booking.Some(""), booking.Some("")
	zoned := bk("zoned", 120)
	zoned.Start = zoned.Start.In(time.FixedZone("IST", 5*3600+1800))
	zoned.End = zoned.End.In(time.FixedZone("", -7*3600)).Add(123456789)
	odd := bk(`odd "id"/\x`, 150)
	odd.BookerName, odd.BookerEmail = booking.Some("Zoë 李 \"Z\"\n"), booking.Some(`"o'brien"@example.com`)
	twice := bk("twice", 180)
	twice2 := bk("twice", 240) // an ID listed twice, in order

	now := time.Now() // with a monotonic reading
	roundTrip(t, open, notices.Snapshot{
		At:        now,
		ServiceAt: now.Add(4*time.Minute + 123).In(time.FixedZone("", 3600)),
		Bookings:  []booking.Booking{bk("plain", 30), legacy, empty, zoned, odd, twice, twice2},
	})
}

func saveLastFull(t *testing.T, open func() notices.Store) {
	list := make([]booking.Booking, booking.MaxListed)
	for i := range list {
		list[i] = bk(fmt.Sprintf("b%03d", i), 60*i)
	}
	want := notices.Snapshot{At: base, Bookings: list}
	roundTrip(t, open, want)
	got, _, err := open().Last(t.Context())
	must(t, err)
	if !got.Full() {
		t.Errorf("a list of %d is no longer full", len(got.Bookings))
	}
}

func saveLastEmpty(t *testing.T, open func() notices.Store) {
	roundTrip(t, open, notices.Snapshot{At: at(1)})
	roundTrip(t, open, notices.Snapshot{At: at(2), Bookings: []booking.Booking{}})
}

// The bookings that left a full list, before its end or beyond it, are
// kept with the list, and replaced with it.
func saveLastUnseen(t *testing.T, open func() notices.Store) {
	list := make([]booking.Booking, booking.MaxListed)
	for i := range list {
		list[i] = bk(fmt.Sprintf("b%03d", i), 60*i)
	}
	roundTrip(t, open, notices.Snapshot{At: base, Bookings: list, Unseen: []booking.Booking{bk("gone", 90), bk("moved", 150)}, Beyond: []booking.Booking{bk("cut", 9000)}})
	roundTrip(t, open, notices.Snapshot{At: base, Bookings: list})
}

func saveLastReplaces(t *testing.T, open func() notices.Store) {
	s := open()
	must(t, s.SaveLast(t.Context(), notices.Snapshot{At: at(1), Bookings: []booking.Booking{bk("a", 30), bk("b", 60), bk("c", 90)}}))
	roundTrip(t, open, notices.Snapshot{At: at(2), Bookings: []booking.Booking{bk("d", 120)}})
}

func claimOnce(t *testing.T, open func() notices.Store) {
	s := open()
	k := key(bk("b1", 60), notices.New, 0)
	wantClaim(t, s, k, true)
	wantClaim(t, s, k, false)
	wantClaim(t, open(), k, false)
}

func claimDistinct(t *testing.T, open func() notices.Store) {
	s := open()
	b := bk("b1", 60)
	k := key(b, notices.Moved, 0)
	vary := map[string]func(*notices.Key){
		"since 1ns later":   func(k *notices.Key) { k.Since = k.Since.Add(1) },
		"since 1min later":  func(k *notices.Key) { k.Since = k.Since.Add(time.Minute) },
		"since zero":        func(k *notices.Key) { k.Since = time.Time{} },
		"start 1ns later":   func(k *notices.Key) { k.Start = k.Start.Add(1) },
		"start 1h earlier":  func(k *notices.Key) { k.Start = k.Start.Add(-time.Hour) },
		"start and since":   func(k *notices.Key) { k.Start, k.Since = k.Since, k.Start },
		"kind new":          func(k *notices.Key) { k.Kind = notices.New },
		"kind cancelled":    func(k *notices.Key) { k.Kind = notices.Cancelled },
		"ID b10":            func(k *notices.Key) { k.BookingID = "b10" },
		"ID b":              func(k *notices.Key) { k.BookingID = "b" },
		"ID b1 NUL":         func(k *notices.Key) { k.BookingID = "b1\x00" },
		"ID B1":             func(k *notices.Key) { k.BookingID = "B1" },
		"ID with the kind":  func(k *notices.Key) { k.BookingID, k.Kind = "b1"+string(notices.Moved), "" },
		"kind with the ID":  func(k *notices.Key) { k.BookingID, k.Kind = "", "b1"+notices.Moved },
		"ID and kind split": func(k *notices.Key) { k.BookingID, k.Kind = "b1m", "oved" },
	}
	wantClaim(t, s, k, true)
	for name, f := range vary {
		v := k
		f(&v)
		if got := claim(t, s, v); !got {
			t.Errorf("%s: Claim(%s) = false, want true: a different change", name, show(v))
		}
	}
	wantClaim(t, s, k, false)
	for name, f := range vary {
		v := k
		f(&v)
		if got := claim(t, s, v); got {
			t.Errorf("%s: second Claim(%s) = true, want false", name, show(v))
		}
	}
}

func claimSameInstants(t *testing.T, open func() notices.Store) {
	s := open()
	now := time.Now() // with a monotonic reading
	k := notices.Key{BookingID: "b1", Kind: notices.New, Start: at(60), End: at(90), Since: now}
	wantClaim(t, s, k, true)
	same := k
	same.Start = k.Start.In(time.FixedZone("IST", 5*3600+1800))
	same.End = k.End.In(time.FixedZone("", -5*3600))
	same.Since = now.Round(0).In(time.FixedZone("", 3600))
	wantClaim(t, s, same, false)
	wantClaim(t, open(), same, false)
}

func postedUnclaimed(t *testing.T, open func() notices.Store) {
	s := open()
	b := bk("b1", 60)
	k := key(b, notices.New, 0)
	if err := s.Posted(t.Context(), k, notices.Message{Channel: "C1", TS: "1.1"}, true); err == nil {
		t.Error("Posted of a key never claimed: no error")
	}
	wantThread(t, s, b.ID, nil)

	// A claim of another change of the booking does not do.
	wantClaim(t, s, key(b, notices.New, 1), true)
	if err := s.Posted(t.Context(), k, notices.Message{Channel: "C1", TS: "1.1"}, true); err == nil {
		t.Error("Posted of a key never claimed, another key of the booking claimed: no error")
	}
	wantThread(t, s, b.ID, nil)
}

func postedRoot(t *testing.T, open func() notices.Store) {
	s := open()
	b := bk("b1", 60)
	k := key(b, notices.New, 0)
	m := notices.Message{Channel: "C1", TS: "1700000000.000100"}
	wantClaim(t, s, k, true)
	must(t, s.Posted(t.Context(), k, m, true))
	wantThread(t, s, b.ID, &m)
	wantThread(t, open(), b.ID, &m)
	wantThread(t, s, "b", nil)
	wantThread(t, s, "b10", nil)
}

func postedRootReplaces(t *testing.T, open func() notices.Store) {
	s := open()
	b := bk("b1", 60)
	k1 := key(b, notices.New, 0)
	m1 := notices.Message{Channel: "C1", TS: "1.1"}
	wantClaim(t, s, k1, true)
	must(t, s.Posted(t.Context(), k1, m1, true))

	moved := bk("b1", 120)
	k2 := key(moved, notices.Moved, 1)
	m2 := notices.Message{Channel: "C2", TS: "2.2"}
	wantClaim(t, s, k2, true)
	must(t, s.Posted(t.Context(), k2, m2, true))
	wantThread(t, s, b.ID, &m2)
	wantThread(t, open(), b.ID, &m2)
}

func postedReply(t *testing.T, open func() notices.Store) {
	s := open()
	b := bk("b1", 60)
	k1 := key(b, notices.New, 0)
	m1 := notices.Message{Channel: "C1", TS: "1.1"}
	wantClaim(t, s, k1, true)
	must(t, s.Posted(t.Context(), k1, m1, true))

	k2 := key(bk("b1", 120), notices.Moved, 1)
	wantClaim(t, s, k2, true)
	must(t, s.Posted(t.Context(), k2, notices.Message{Channel: "C1", TS: "2.2"}, false))
	wantThread(t, s, b.ID, &m1)

	// A reply about a booking with no thread does not start one.
	other := bk("b2", 60)
	k3 := key(other, notices.Cancelled, 1)
	wantClaim(t, s, k3, true)
	must(t, s.Posted(t.Context(), k3, notices.Message{Channel: "C1", TS: "3.3"}, false))
	wantThread(t, s, other.ID, nil)
	wantThread(t, open(), b.ID, &m1)
}

func threadUnknown(t *testing.T, open func() notices.Store) {
	s := open()
	wantThread(t, s, "b1", nil)
	wantThread(t, s, "", nil)
}

// posted claims k and posts its notice as m, the booking's thread.
func posted(t *testing.T, s notices.Store, k notices.Key, m notices.Message) {
	t.Helper()
	wantClaim(t, s, k, true)
	must(t, s.Posted(t.Context(), k, m, true))
}

func pruneEnded(t *testing.T, open func() notices.Store) {
	s := open()
	must(t, s.Prune(t.Context(), at(0))) // nothing to prune

	cutoff := at(240)
	ended := bk("ended", 60)      // ends at 90
	edge := bk("edge", 210)       // ends at the cutoff
	later := bk("later", 300)     // ends after it
	justEnded := bk("just", 209)  // ends 1 minute before it
	unposted := bk("unposted", 0) // claimed, never posted
	mEnded, mEdge, mLater, mJust := notices.Message{Channel: "C", TS: "1"}, notices.Message{Channel: "C", TS: "2"},
		notices.Message{Channel: "C", TS: "3"}, notices.Message{Channel: "C", TS: "4"}
	posted(t, s, key(ended, notices.New, 0), mEnded)
	posted(t, s, key(edge, notices.New, 0), mEdge)
	posted(t, s, key(later, notices.New, 0), mLater)
	posted(t, s, key(justEnded, notices.New, 0), mJust)
	wantClaim(t, s, key(unposted, notices.Cancelled, 0), true)

	must(t, s.Prune(t.Context(), cutoff))
	for _, s := range []notices.Store{s, open()} {
		wantThread(t, s, ended.ID, nil)
		wantThread(t, s, justEnded.ID, nil)
		wantThread(t, s, edge.ID, &mEdge)
		wantThread(t, s, later.ID, &mLater)
	}
	if err := s.Posted(t.Context(), key(ended, notices.New, 0), mEnded, false); err == nil {
		t.Error("Posted of a pruned key: no error")
	}
	wantClaim(t, s, key(ended, notices.New, 0), true)
	wantClaim(t, s, key(justEnded, notices.New, 0), true)
	wantClaim(t, s, key(unposted, notices.Cancelled, 0), true)
	wantClaim(t, s, key(edge, notices.New, 0), false)
	wantClaim(t, s, key(later, notices.New, 0), false)

	// Pruning again changes nothing more.
	must(t, s.Prune(t.Context(), cutoff))
	wantThread(t, s, edge.ID, &mEdge)
	wantClaim(t, s, key(edge, notices.New, 0), false)
}

func pruneMoved(t *testing.T, open func() notices.Store) {
	s := open()
	b := bk("b1", 60) // ends at 90
	k1 := key(b, notices.New, 0)
	m1 := notices.Message{Channel: "C", TS: "1"}
	posted(t, s, k1, m1)
	moved := bk("b1", 600) // now ends at 630
	k2 := key(moved, notices.Moved, 1)
	wantClaim(t, s, k2, true)
	must(t, s.Posted(t.Context(), k2, notices.Message{Channel: "C", TS: "2"}, false))

	// The booking has not ended: its thread stays, and the claim of the
	// move; the claim of its first time goes (the change was found against
	// a snapshot long replaced, so it cannot come back).
	must(t, s.Prune(t.Context(), at(120)))
	wantThread(t, s, b.ID, &m1)
	wantClaim(t, s, k2, false)
	wantClaim(t, s, k1, true)

	must(t, s.Prune(t.Context(), at(631)))
	wantThread(t, s, b.ID, nil)
	wantClaim(t, s, k2, true)
}

func reopen(t *testing.T, open func() notices.Store) {
	s := open()
	snap := notices.Snapshot{At: at(5), Bookings: []booking.Booking{bk("b1", 60), bk("b2", 90)}}
	must(t, s.SaveLast(t.Context(), snap))
	k1, k2 := key(snap.Bookings[0], notices.New, 0), key(snap.Bookings[1], notices.New, 0)
	m := notices.Message{Channel: "C1", TS: "1.1"}
	posted(t, s, k1, m)
	wantClaim(t, s, k2, true) // claimed, and the process died before posting

	again := open()
	got, ok, err := again.Last(t.Context())
	must(t, err)
	if !ok {
		t.Fatal("Last after reopening: none")
	}
	sameSnapshot(t, got, snap)
	wantClaim(t, again, k1, false)
	wantClaim(t, again, k2, false)
	wantThread(t, again, "b1", &m)
	wantThread(t, again, "b2", nil)
	// The claim of k2 is there to post on.
	m2 := notices.Message{Channel: "C1", TS: "2.2"}
	must(t, again.Posted(t.Context(), k2, m2, true))
	wantThread(t, s, "b2", &m2)
}

func cancelled(t *testing.T, open func() notices.Store) {
	s := open()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	b := bk("b1", 60)
	k := key(b, notices.New, 0)
	m := notices.Message{Channel: "C1", TS: "1.1"}
	wantCanceled := func(op string, err error) {
		t.Helper()
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v, want an error that is context.Canceled", op, err)
		}
	}

	_, _, err := s.Last(ctx)
	wantCanceled("Last", err)
	wantCanceled("SaveLast", s.SaveLast(ctx, notices.Snapshot{At: base, Bookings: []booking.Booking{b}}))
	ok, err := s.Claim(ctx, k, base)
	wantCanceled("Claim", err)
	if ok {
		t.Error("Claim with a cancelled context = true")
	}
	wantCanceled("Prune", s.Prune(ctx, at(1000)))
	_, _, err = s.Thread(ctx, b.ID)
	wantCanceled("Thread", err)

	// Nothing was saved or claimed.
	if _, ok, err := s.Last(t.Context()); err != nil || ok {
		t.Errorf("Last after a cancelled SaveLast: ok %v, err %v; want none", ok, err)
	}
	wantClaim(t, s, k, true)
	wantCanceled("Posted", s.Posted(ctx, k, m, true))
	wantThread(t, s, b.ID, nil)
	must(t, s.Posted(t.Context(), k, m, true))
	wantThread(t, s, b.ID, &m)
}
