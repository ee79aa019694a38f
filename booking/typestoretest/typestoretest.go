// Package typestoretest checks an implementation of booking.TypeStore
// against the semantics its documentation gives. It is for tests only.
package typestoretest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/testutil"
)

// Run runs the conformance suite, each subtest against a store of its own.
//
// fresh makes that store: it is called once by each subtest, with the
// subtest's t, and must make an empty store no other subtest sees. It
// returns open, which returns a new handle on that same store each time
// it is called, as a restarted process (or another replica) would get
// one. open reports a failure with t.Fatal and registers with t.Cleanup
// the closing of what it opens.
//
// Where booking.TypeStore's documentation leaves room, the suite holds a
// store to these readings of it:
//   - an end is kept as an instant: its zone and monotonic reading need
//     not be;
//   - calendar labels, booking IDs and slugs are opaque strings, kept as
//     they are (a NUL, a long one);
//   - Prune keeps a booking that ended at exactly cutoff;
//   - with a context already cancelled every method fails with an error
//     that is context.Canceled, and records nothing.
func Run(t *testing.T, fresh func(t *testing.T) (open func() booking.TypeStore)) {
	cases.Run(t, fresh)
}

var cases = testutil.Suite[booking.TypeStore]{
	{"Types/none kept", noneKept},
	{"Keep/round trip", roundTrip},
	{"Keep/replaces", replaces},
	{"Keep/last of a booking given twice", lastOfTwice},
	{"Keep/calendars apart", calendarsApart},
	{"Keep/opaque strings", opaque},
	{"Keep/concurrent handles", concurrent},
	{"Prune/ended before cutoff", prune},
	{"Context/cancelled", cancelled},
}

// base is the time the fixtures are built around.
var base = time.Date(2026, 11, 24, 9, 0, 0, 0, time.FixedZone("CET", 3600))

func kept(id, slug string, end time.Time) booking.KeptType {
	return booking.KeptType{BookingID: id, EventType: slug, End: end}
}

func mustKeep(t *testing.T, s booking.TypeStore, calendar string, kt ...booking.KeptType) {
	t.Helper()
	if err := s.Keep(t.Context(), calendar, kt); err != nil {
		t.Fatalf("Keep: %v", err)
	}
}

func types(t *testing.T, s booking.TypeStore, calendar string, ids ...string) map[string]booking.KeptType {
	t.Helper()
	got, err := s.Types(t.Context(), calendar, ids)
	if err != nil {
		t.Fatalf("Types: %v", err)
	}
	return got
}

// want checks that got holds exactly want, ends compared as instants.
func want(t *testing.T, what string, got map[string]booking.KeptType, want ...booking.KeptType) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d kept (%+v), want %d (%+v)", what, len(got), got, len(want), want)
		return
	}
	for _, w := range want {
		g, ok := got[w.BookingID]
		if !ok || g.BookingID != w.BookingID || g.EventType != w.EventType || !g.End.Equal(w.End) {
			t.Errorf("%s: %q = %+v (kept: %v), want %+v", what, w.BookingID, g, ok, w)
		}
	}
}

func noneKept(t *testing.T, open func() booking.TypeStore) {
	want(t, "Types of an empty store", types(t, open(), "owner", "b1", "b2"))
	want(t, "Types of no IDs", types(t, open(), "owner"))
}

func roundTrip(t *testing.T, open func() booking.TypeStore) {
	a, b := kept("b1", "consultation", base.Add(time.Hour)), kept("b2", "intro-call", base.Add(90*time.Minute+5))
	mustKeep(t, open(), "owner", a, b)
	want(t, "Types from another handle", types(t, open(), "owner", "b1", "b2", "b3"), a, b)
	want(t, "Types of one", types(t, open(), "owner", "b2"), b)
}

func replaces(t *testing.T, open func() booking.TypeStore) {
	mustKeep(t, open(), "owner", kept("b1", "consultation", base.Add(time.Hour)), kept("b2", "intro-call", base))
	moved := kept("b1", "consultation", base.Add(26*time.Hour))
	mustKeep(t, open(), "owner", moved)
	want(t, "after Keep of a moved booking", types(t, open(), "owner", "b1", "b2"), moved, kept("b2", "intro-call", base))
	retyped := kept("b1", "deep-dive", base.Add(26*time.Hour))
	mustKeep(t, open(), "owner", retyped)
	want(t, "after Keep of another event type", types(t, open(), "owner", "b1"), retyped)
}

func lastOfTwice(t *testing.T, open func() booking.TypeStore) {
	last := kept("b1", "deep-dive", base.Add(2*time.Hour))
	mustKeep(t, open(), "owner", kept("b1", "consultation", base.Add(time.Hour)), last)
	want(t, "a booking given twice", types(t, open(), "owner", "b1"), last)
}

// calendarsApart: one calendar's records never answer for another's,
// even for the same booking ID.
func calendarsApart(t *testing.T, open func() booking.TypeStore) {
	mine := kept("b1", "consultation", base.Add(time.Hour))
	mustKeep(t, open(), "UADA", mine)
	want(t, "another calendar", types(t, open(), "owner", "b1"))
	want(t, "a calendar whose label begins alike", types(t, open(), "UAD", "b1"))
	theirs := kept("b1", "other-call", base.Add(2*time.Hour))
	mustKeep(t, open(), "owner", theirs)
	want(t, "UADA's", types(t, open(), "UADA", "b1"), mine)
	want(t, "the owner's", types(t, open(), "owner", "b1"), theirs)
}

func opaque(t *testing.T, open func() booking.TypeStore) {
	long := string(make([]byte, 600))
	odd := []booking.KeptType{
		kept("b\x00", "slug\x00x", base),
		kept(long+"1", "é-ü", base.Add(time.Nanosecond)),
		kept("x", long, base.Add(-time.Nanosecond)),
	}
	for _, cal := range []string{"cal\x00endar", long} {
		mustKeep(t, open(), cal, odd...)
		want(t, fmt.Sprintf("calendar %.12q", cal), types(t, open(), cal, "b\x00", long+"1", "x", "b"), odd...)
	}
	want(t, "the calendar before the NUL", types(t, open(), "cal", "b\x00"))
}

// concurrent: replicas keep the same bookings at once; each booking ends
// up with one of what they kept, whole.
func concurrent(t *testing.T, open func() booking.TypeStore) {
	handles := []booking.TypeStore{open(), open(), open()}
	var wg sync.WaitGroup
	for i, s := range handles {
		wg.Go(func() {
			var batch []booking.KeptType
			for j := range 20 {
				batch = append(batch, kept(fmt.Sprint("b", j), fmt.Sprint("type", i), base.Add(time.Duration(i)*time.Hour)))
			}
			for range 5 {
				if err := s.Keep(t.Context(), "owner", batch); err != nil {
					t.Errorf("Keep from handle %d: %v", i, err)
				}
			}
		})
	}
	wg.Wait()
	var ids []string
	for j := range 20 {
		ids = append(ids, fmt.Sprint("b", j))
	}
	got := types(t, open(), "owner", ids...)
	if len(got) != 20 {
		t.Fatalf("%d kept, want 20: %+v", len(got), got)
	}
	for id, kt := range got {
		var i int
		if _, err := fmt.Sscanf(kt.EventType, "type%d", &i); err != nil || !kt.End.Equal(base.Add(time.Duration(i)*time.Hour)) {
			t.Errorf("%s = %+v: not one handle's record whole", id, kt)
		}
	}
}

func prune(t *testing.T, open func() booking.TypeStore) {
	s := open()
	mustKeep(t, s, "owner", kept("gone", "a", base.Add(-time.Nanosecond)), kept("at", "b", base), kept("later", "c", base.Add(time.Hour)))
	mustKeep(t, s, "UADA", kept("gone2", "a", base.Add(-time.Hour)), kept("later2", "c", base.Add(time.Nanosecond)))
	if err := open().Prune(t.Context(), base); err != nil {
		t.Fatal(err)
	}
	want(t, "the owner's after Prune", types(t, open(), "owner", "gone", "at", "later"), kept("at", "b", base), kept("later", "c", base.Add(time.Hour)))
	want(t, "UADA's after Prune", types(t, open(), "UADA", "gone2", "later2"), kept("later2", "c", base.Add(time.Nanosecond)))
	if err := open().Prune(t.Context(), base); err != nil {
		t.Fatalf("Prune again: %v", err)
	}
}

func cancelled(t *testing.T, open func() booking.TypeStore) {
	s := open()
	mustKeep(t, s, "owner", kept("b1", "consultation", base))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	checks := map[string]error{}
	checks["Keep"] = s.Keep(ctx, "owner", []booking.KeptType{kept("b2", "intro-call", base), kept("b1", "deep-dive", base)})
	_, checks["Types"] = s.Types(ctx, "owner", []string{"b1"})
	checks["Prune"] = s.Prune(ctx, base.Add(365*24*time.Hour))
	for name, err := range checks {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled context: %v", name, err)
		}
	}
	want(t, "after cancelled calls", types(t, open(), "owner", "b1", "b2"), kept("b1", "consultation", base))
}
