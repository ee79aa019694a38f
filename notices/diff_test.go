package notices

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
)

// base is next.At unless a case says otherwise; offsets are in minutes
// from it.
var base = time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)

// slack is StartSlack in minutes.
const slack = int(StartSlack / time.Minute)

// bk is a 30-minute booking starting start minutes after base.
func bk(id string, start int) booking.Booking {
	s := base.Add(time.Duration(start) * time.Minute)
	return booking.Booking{
		ID:          id,
		Start:       s,
		End:         s.Add(30 * time.Minute),
		Status:      "confirmed",
		BookerName:  booking.Some("Ada " + id),
		BookerEmail: booking.Some(id + "@example.com"),
		EventType:   booking.Some("intro"),
	}
}

// ends returns b ending end minutes after base.
func ends(b booking.Booking, end int) booking.Booking {
	b.End = base.Add(time.Duration(end) * time.Minute)
	return b
}

// series is n hourly bookings p00, p01, … from start minutes after base.
func series(p string, n, start int) []booking.Booking {
	out := make([]booking.Booking, n)
	for i := range out {
		out[i] = bk(fmt.Sprintf("%s%02d", p, i), start+60*i)
	}
	return out
}

func list(parts ...any) []booking.Booking {
	var out []booking.Booking
	for _, p := range parts {
		switch p := p.(type) {
		case booking.Booking:
			out = append(out, p)
		case []booking.Booking:
			out = append(out, p...)
		default:
			panic(fmt.Sprintf("list: %T", p))
		}
	}
	return out
}

func added(b booking.Booking) Change      { return Change{Kind: New, Booking: b} }
func cancelled(b booking.Booking) Change  { return Change{Kind: Cancelled, Booking: b} }
func moved(was, b booking.Booking) Change { return Change{Kind: Moved, Booking: b, Was: was} }

// hidden is a booking that left a full list before its end: cancelled, or
// moved beyond the end.
func hidden(b booking.Booking) Change { return Change{Kind: Cancelled, Booking: b, Unsure: true} }

// untyped is b listed without an event type, as a booking its attendee
// rescheduled is.
func untyped(b booking.Booking) booking.Booking {
	b.EventType = booking.NullString{}
	return b
}

// f is a full list: f00 at base (started once next is read), f99 at +5940,
// the horizon.
var f = series("f", booking.MaxListed, 0)

func TestDiff(t *testing.T) {
	t.Parallel()
	renamed := bk("a", 60)
	renamed.BookerName = booking.Some("Grace")
	renamed.BookerEmail = booking.Some("grace@example.com")
	renamed.EventType = booking.NullString{}
	movedRenamed := bk("a", 120)
	movedRenamed.BookerName = booking.Some("Grace")
	sameInstant := bk("a", 60)
	sameInstant.Start = sameInstant.Start.In(time.FixedZone("CET", 3600))
	sameInstant.End = sameInstant.End.In(time.FixedZone("CET", 3600))

	tests := []struct {
		name       string
		prev, next []booking.Booking
		at         int  // next.At in minutes after base; prev.At is 5 minutes earlier
		full       full // which lists are at the cap, checked so a case cannot drift
		want       []Change
	}{
		// Plain lists.
		{name: "nothing changed",
			prev: list(bk("a", 60), bk("b", 120)), next: list(bk("a", 60), bk("b", 120))},
		{name: "both empty", prev: nil, next: nil},
		{name: "new booking is new",
			prev: list(bk("a", 60)), next: list(bk("a", 60), bk("b", 90)),
			want: []Change{added(bk("b", 90))}},
		{name: "vanished booking is cancelled",
			prev: list(bk("a", 60), bk("b", 90)), next: list(bk("a", 60)),
			want: []Change{cancelled(bk("b", 90))}},
		{name: "cancelled is reported as last listed",
			prev: list(renamed), next: nil,
			want: []Change{cancelled(renamed)}},

		// Rule 1: the list holds only bookings that have not started.
		{name: "started: vanished booking that started just before now is not cancelled",
			prev: list(bk("a", -1), bk("b", 60)), next: list(bk("b", 60)), at: 0},
		{name: "started: vanished booking starting at now is not cancelled",
			prev: list(bk("a", 0), bk("b", 60)), next: list(bk("b", 60))},
		{name: "started: vanished booking starting exactly at now+StartSlack is not cancelled",
			prev: list(bk("a", slack), bk("b", 60)), next: list(bk("b", 60))},
		{name: "started: vanished booking one minute past the slack is cancelled",
			prev: list(bk("a", slack+1), bk("b", 60)), next: list(bk("b", 60)),
			want: []Change{cancelled(bk("a", slack+1))}},
		{name: "started: the slack is measured from next.At",
			prev: list(bk("a", 30), bk("b", 60)), next: list(bk("b", 60)), at: 30 - slack,
			want: nil},
		{name: "started: a booking still listed after its start is no change",
			prev: list(bk("a", 0)), next: list(bk("a", 0)), at: 10},

		// Rule 2: a full list says nothing at or beyond its last start.
		{name: "full next: booking pushed beyond the horizon is not cancelled", full: nextFull,
			// Two new early bookings push z off a list that was 99 long.
			prev: list(f[1:99], bk("z", 9000)),
			next: list(bk("n", 30), bk("m", 45), f[1:99]),
			want: []Change{added(bk("n", 30)), added(bk("m", 45))}},
		{name: "full next: booking vanished before the horizon is cancelled, or moved beyond it", full: nextFull,
			prev: list(f[1:99], bk("z", 9000)),
			next: list(bk("n", 30), bk("m", 45), bk("o", 50), f[1:5], f[6:99]),
			want: []Change{added(bk("n", 30)), added(bk("m", 45)), added(bk("o", 50)), hidden(f[5])}},
		{name: "full next: vanished booking at exactly the horizon is not cancelled", full: nextFull,
			// y at the horizon may have been listed in z's place.
			prev: list(f[1:99], bk("z", 5940)),
			next: list(bk("n", 30), f[1:99], bk("y", 5940)),
			want: []Change{added(bk("n", 30)), added(bk("y", 5940))}},
		{name: "full next: new booking at exactly its horizon is new when prev was complete", full: nextFull,
			prev: list(f[1:99], bk("e", 20)),
			next: list(bk("e", 20), f[1:99], bk("y", 5940)),
			want: []Change{added(bk("y", 5940))}},
		{name: "full prev: booking coming into view as earlier ones start is not new", full: prevFull,
			prev: f,
			next: list(f[2:], bk("late", 6000)), at: 60,
			want: nil},
		{name: "full prev: new booking before the horizon is new", full: prevFull,
			prev: f,
			next: list(f[2:], bk("n", 90)), at: 60,
			want: []Change{added(bk("n", 90))}},
		{name: "full prev: booking appearing at exactly the horizon is not new", full: prevFull,
			// It may have been cut off from prev, sharing f99's start.
			prev: f,
			next: list(f[2:], bk("twin", 5940)), at: 60,
			want: nil},
		{name: "full prev: booking at exactly its horizon vanished from a complete next is cancelled", full: prevFull,
			prev: f,
			next: f[:99],
			want: []Change{cancelled(f[99])}},
		{name: "both full: booking pushed beyond next's horizon is not cancelled", full: bothFull,
			prev: f,
			next: list(bk("n", 30), f[:99]),
			want: []Change{added(bk("n", 30))}},
		{name: "both full: booking coming into view beyond prev's horizon is not new", full: bothFull,
			prev: f,
			next: list(f[2:], bk("late", 6000), bk("later", 6060)), at: 60,
			want: nil},
		{name: "both full: changes before both horizons are seen", full: bothFull,
			prev: f,
			next: list(f[2:10], bk("n", 630), f[11:], bk("late", 6000), bk("later", 6060)), at: 60,
			want: []Change{hidden(f[10]), added(bk("n", 630))}},
		{name: "both full: identical lists are no change", full: bothFull,
			prev: f, next: f},
		{name: "more than the cap is full too", full: bothFull,
			prev: list(f, bk("z", 9000)),
			next: list(bk("n", 30), f),
			want: []Change{added(bk("n", 30))}},

		// Rule 3: an ID in both lists with other times is Moved.
		{name: "moved later",
			prev: list(bk("a", 60), bk("b", 120)), next: list(bk("a", 180), bk("b", 120)),
			want: []Change{moved(bk("a", 60), bk("a", 180))}},
		{name: "moved earlier",
			prev: list(bk("a", 60), bk("b", 120)), next: list(bk("b", 30), bk("a", 60)),
			want: []Change{moved(bk("b", 120), bk("b", 30))}},
		{name: "moved: end only",
			prev: list(bk("a", 60)), next: list(ends(bk("a", 60), 150)),
			want: []Change{moved(bk("a", 60), ends(bk("a", 60), 150))}},
		{name: "moved: reported as now listed, other fields included",
			prev: list(bk("a", 60)), next: list(movedRenamed),
			want: []Change{moved(bk("a", 60), movedRenamed)}},
		{name: "moved beyond the horizon is still moved", full: bothFull,
			prev: f,
			next: list(f[:5], f[6:], bk("f05", 9000)),
			want: []Change{moved(f[5], bk("f05", 9000))}},
		{name: "moved from beyond next's horizon is still moved", full: nextFull,
			prev: list(f[1:99], bk("z", 9000)),
			next: list(bk("z", 30), bk("n", 45), f[1:99]),
			want: []Change{moved(bk("z", 9000), bk("z", 30)), added(bk("n", 45))}},
		{name: "moved to exactly the horizon is still moved", full: bothFull,
			prev: f,
			next: list(f[:5], f[6:], bk("f05", 5940)),
			want: []Change{moved(f[5], bk("f05", 5940))}},
		{name: "full prev: a rescheduled booking appearing before the horizon may have moved in", full: prevFull,
			prev: f,
			next: list(f[2:50], untyped(bk("r", 3030)), f[50:]), at: 60,
			want: []Change{{Kind: New, Booking: untyped(bk("r", 3030)), Unsure: true}}},
		{name: "complete prev: a rescheduled booking appearing is new",
			prev: list(bk("a", 60)), next: list(bk("a", 60), untyped(bk("r", 90))),
			want: []Change{added(untyped(bk("r", 90)))}},
		{name: "reschedule under a new ID is cancelled and new",
			prev: list(bk("a", 60), bk("b", 120)), next: list(bk("b", 120), bk("a2", 240)),
			want: []Change{cancelled(bk("a", 60)), added(bk("a2", 240))}},

		// Rule 5: an ID listed twice counts once, as first listed.
		{name: "duplicate ID in next: the first entry counts",
			prev: list(bk("a", 60)), next: list(bk("a", 60), bk("a", 180)),
			want: nil},
		{name: "duplicate ID in next: a moved first entry is moved once",
			prev: list(bk("a", 60)), next: list(bk("a", 180), bk("a", 60), bk("a", 240)),
			want: []Change{moved(bk("a", 60), bk("a", 180))}},
		{name: "duplicate ID in prev: the first entry counts",
			prev: list(bk("a", 180), bk("a", 60)), next: list(bk("a", 180)),
			want: nil},
		{name: "duplicate new ID is new once",
			prev: nil, next: list(bk("a", 60), bk("a", 60)),
			want: []Change{added(bk("a", 60))}},
		{name: "duplicate vanished ID is cancelled once",
			prev: list(bk("a", 60), bk("a", 90)), next: nil,
			want: []Change{cancelled(bk("a", 60))}},

		// Rule 6: the lists need not be in order.
		{name: "unordered input",
			prev: list(bk("c", 180), bk("a", 60), bk("d", 240), bk("b", 120)),
			next: list(bk("d", 300), bk("e", 30), bk("b", 120), bk("a", 60)),
			want: []Change{added(bk("e", 30)), cancelled(bk("c", 180)), moved(bk("d", 240), bk("d", 300))}},
		{name: "unordered full next: the horizon is the latest start, not the last entry", full: nextFull,
			prev: list(f[1:99], bk("z", 9000)),
			// Read by list order, the horizon would be m's start and f30's
			// cancellation would be missed.
			next: list(f[50:99], bk("n", 30), f[1:30], f[31:50], bk("o", 50), bk("m", 45)),
			want: []Change{added(bk("n", 30)), added(bk("m", 45)), added(bk("o", 50)), hidden(f[30])}},

		// Rule 7: empty lists.
		{name: "empty prev: every booking is new",
			prev: nil, next: list(bk("a", 60), bk("b", 120)),
			want: []Change{added(bk("a", 60)), added(bk("b", 120))}},
		{name: "empty prev, full next: every booking is new",
			prev: nil, next: f[1:], at: 1,
			want: func() []Change {
				var want []Change
				for _, b := range f[1:] {
					want = append(want, added(b))
				}
				return want
			}()},
		{name: "empty next: every booking not started is cancelled",
			prev: list(bk("a", 0), bk("b", 60), bk("c", 120)), next: nil,
			want: []Change{cancelled(bk("b", 60)), cancelled(bk("c", 120))}},
		{name: "full prev, empty next: every booking not started is cancelled", full: prevFull,
			prev: f, next: list(),
			want: func() []Change {
				var want []Change
				for _, b := range f[1:] { // f00 has started
					want = append(want, cancelled(b))
				}
				return want
			}()},

		// Rule 8: only the times make a change.
		{name: "changed name, email and event type only is no change",
			prev: list(bk("a", 60)), next: list(renamed)},
		{name: "same instant in another zone is no change",
			prev: list(bk("a", 60)), next: list(sameInstant)},

		// Rule 9: by start, then ID, whatever the kind.
		{name: "order is by start, then ID",
			prev: list(bk("c", 60), bk("m", 300), bk("x", 120)),
			next: list(bk("b", 60), bk("a", 60), bk("m", 60), bk("y", 120)),
			want: []Change{
				added(bk("a", 60)), added(bk("b", 60)), cancelled(bk("c", 60)), moved(bk("m", 300), bk("m", 60)),
				cancelled(bk("x", 120)), added(bk("y", 120)),
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			now := base.Add(time.Duration(tt.at) * time.Minute)
			prev := Snapshot{At: now.Add(-5 * time.Minute), Bookings: tt.prev}
			next := Snapshot{At: now, Bookings: tt.next}
			prevCopy, nextCopy := slices.Clone(tt.prev), slices.Clone(tt.next)
			if got := fullness(prev, next); got != tt.full {
				t.Fatalf("test setup: full = %v, want %v", got, tt.full)
			}

			got := Diff(prev, next)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Diff:\n got %s\nwant %s", show(got), show(tt.want))
			}
			if !reflect.DeepEqual(tt.prev, prevCopy) || !reflect.DeepEqual(tt.next, nextCopy) {
				t.Error("Diff modified the caller's slices")
			}
		})
	}
}

// full says which snapshots of a case are at the cap.
type full int

const (
	noneFull full = iota
	prevFull
	nextFull
	bothFull
)

func fullness(prev, next Snapshot) full {
	var f full
	if prev.Full() {
		f |= prevFull
	}
	if next.Full() {
		f |= nextFull
	}
	return f
}

// show prints changes compactly for failure messages.
func show(cs []Change) string {
	if len(cs) == 0 {
		return "[]"
	}
	var b strings.Builder
	for _, c := range cs {
		fmt.Fprintf(&b, "\n\t%s %s %s–%s", c.Kind, c.Booking.ID, clock(c.Booking.Start), clock(c.Booking.End))
		if c.Kind == Moved {
			fmt.Fprintf(&b, " (was %s–%s)", clock(c.Was.Start), clock(c.Was.End))
		}
	}
	return b.String()
}

func clock(t time.Time) string { return fmt.Sprintf("%+dm", int(t.Sub(base)/time.Minute)) }

// A booking that left a full list before its end is kept as unseen: when
// a read lists it again it is Moved from where it was last listed, once;
// when a complete read does not list it, or it would have started, it is
// forgotten, and nothing more is said of it.
func TestUnseenBookingsAreTracked(t *testing.T) {
	t.Parallel()
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
	snap := func(min int, bs []booking.Booking, unseen []booking.Booking) Snapshot {
		return Snapshot{At: at(min), Bookings: bs, Unseen: unseen}
	}
	// f05 leaves the full list: moved beyond its end, or cancelled.
	z := bk("z", 9000)
	prev := snap(0, list(f[1:], z), nil)
	next := snap(5, list(bk("n", 30), f[1:5], f[6:], z), nil)
	if got, want := Diff(prev, next), []Change{added(bk("n", 30)), hidden(f[5])}; !reflect.DeepEqual(got, want) {
		t.Fatalf("leaving: got %s, want %s", show(got), show(want))
	}
	next.Unseen, next.Beyond = Unseen(prev, next)
	if !reflect.DeepEqual(next.Unseen, []booking.Booking{f[5]}) || len(next.Beyond) != 0 {
		t.Fatalf("unseen after leaving: %v, beyond %v", next.Unseen, next.Beyond)
	}

	// Still full, still not listed: kept, no change.
	later := snap(10, next.Bookings, nil)
	if got := Diff(next, later); len(got) != 0 {
		t.Errorf("a read that still does not list it: %s", show(got))
	}
	later.Unseen, later.Beyond = Unseen(next, later)
	if !reflect.DeepEqual(later.Unseen, []booking.Booking{f[5]}) {
		t.Fatalf("unseen kept: %v", later.Unseen)
	}

	// Listed again at another time: moved from where it was, once.
	back := bk("f05", 400)
	again := snap(15, list(bk("n", 30), f[1:5], back, f[6:], z), nil)
	if got, want := Diff(later, again), []Change{moved(f[5], back)}; !reflect.DeepEqual(got, want) {
		t.Errorf("back in view: got %s, want %s", show(got), show(want))
	}
	if u, _ := Unseen(later, again); len(u) != 0 {
		t.Errorf("unseen once listed again: %v", u)
	}

	// A complete read that does not list it: gone, and forgotten.
	complete := snap(15, f[1:5], nil)
	if got := Diff(later, complete); slices.ContainsFunc(got, func(c Change) bool { return c.Booking.ID == "f05" }) {
		t.Errorf("a complete read: %s", show(got))
	}
	if u, _ := Unseen(later, complete); len(u) != 0 {
		t.Errorf("unseen after a complete read: %v", u)
	}

	// Its start passed: forgotten.
	passed := snap(300, later.Bookings, nil)
	if u, _ := Unseen(later, passed); len(u) != 0 {
		t.Errorf("unseen once it would have started: %v", u)
	}

	// Pushed beyond the end by new bookings: no change, and kept; back in
	// view at its time, no change; moved into view, moved.
	pushed := snap(5, list(bk("n", 30), bk("m", 40), f[1:99]), nil)
	if got, want := Diff(prev, pushed), []Change{added(bk("n", 30)), added(bk("m", 40))}; !reflect.DeepEqual(got, want) {
		t.Fatalf("pushed: got %s, want %s", show(got), show(want))
	}
	pushed.Unseen, pushed.Beyond = Unseen(prev, pushed)
	if ids := bookingIDs(pushed.Beyond); !slices.Equal(ids, []string{"f99", "z"}) || len(pushed.Unseen) != 0 {
		t.Fatalf("beyond once pushed there: %v, unseen %v", ids, pushed.Unseen)
	}
	inView := snap(10, list(bk("n", 30), f[1:99], f[99]), nil)
	if got := Diff(pushed, inView); slices.ContainsFunc(got, func(c Change) bool { return c.Booking.ID == "f99" }) {
		t.Errorf("back in view at its time: %s", show(got))
	}
	movedIn := bk("z", 35)
	if got := Diff(pushed, snap(10, list(bk("n", 30), movedIn, bk("m", 40), f[1:98]), nil)); !slices.Contains(got, moved(bk("z", 9000), movedIn)) {
		t.Errorf("moved into view: %s", show(got))
	}
}

// A booking a full list cut off beyond its end, said nothing of, and then
// cancelled is announced once a read proves it gone: a complete read,
// cancelled; a full one whose end has passed its start, cancelled or moved
// beyond, and not again.
func TestCutOffBookingsGoneAreAnnounced(t *testing.T) {
	t.Parallel()
	at := func(min int) time.Time { return base.Add(time.Duration(min) * time.Minute) }
	snap := func(min int, bs ...any) Snapshot { return Snapshot{At: at(min), Bookings: list(bs...)} }
	z, n, m := bk("z", 9000), bk("n", 30), bk("m", 40)
	prev := snap(0, f[1:], z)
	pushed := snap(5, n, m, f[1:99]) // f99 and z cut off
	pushed.Unseen, pushed.Beyond = Unseen(prev, pushed)

	// n, m and z cancelled: the list is no longer full.
	complete := snap(10, f[1:99], f[99])
	if got, want := Diff(pushed, complete), []Change{cancelled(n), cancelled(m), cancelled(z)}; !reflect.DeepEqual(got, want) {
		t.Errorf("a complete read: got %s, want %s", show(got), show(want))
	}

	// Full, its end now past f99 and z, which it does not list (nor f98).
	late := bk("late", 9500)
	inView := snap(10, n, m, f[1:98], late)
	if got, want := Diff(pushed, inView), []Change{hidden(f[98]), hidden(f[99]), hidden(z)}; !reflect.DeepEqual(got, want) {
		t.Errorf("a full read that shows where they were: got %s, want %s", show(got), show(want))
	}
	inView.Unseen, inView.Beyond = Unseen(pushed, inView)
	after := snap(15, n, f[1:98])
	if got, want := Diff(inView, after), []Change{cancelled(m), cancelled(late)}; !reflect.DeepEqual(got, want) {
		t.Errorf("a complete read after they were announced: got %s, want %s", show(got), show(want))
	}
}

func bookingIDs(bs []booking.Booking) []string {
	var ids []string
	for _, b := range bs {
		ids = append(ids, b.ID)
	}
	return ids
}

func TestSnapshotFull(t *testing.T) {
	t.Parallel()
	tests := []struct {
		n    int
		want bool
	}{
		{0, false},
		{booking.MaxListed - 1, false},
		{booking.MaxListed, true},
		{booking.MaxListed + 1, true},
	}
	for _, tt := range tests {
		s := Snapshot{At: base, Bookings: series("b", tt.n, 60)}
		if got := s.Full(); got != tt.want {
			t.Errorf("Full() with %d bookings = %v, want %v", tt.n, got, tt.want)
		}
	}
}

// TestDiffFullLists runs the cap's cases on lists built fresh at the cap,
// in case of a shared list being changed under the table.
func TestDiffFullLists(t *testing.T) {
	t.Parallel()
	full := series("g", booking.MaxListed+20, 60) // g00 at +60 … g119 at +7200
	prev := Snapshot{At: base.Add(-5 * time.Minute), Bookings: full[:booking.MaxListed]}
	horizon := prev.Bookings[len(prev.Bookings)-1].Start

	// An hour passes and g00 starts; the list slides one along.
	next := Snapshot{At: base.Add(time.Hour), Bookings: slices.Clone(full[1 : booking.MaxListed+1])}
	if got := Diff(prev, next); len(got) != 0 {
		t.Errorf("sliding full list: got %s, want none", show(got))
	}
	if !next.Bookings[len(next.Bookings)-1].Start.After(horizon) {
		t.Fatal("test setup: next should reach beyond prev's horizon")
	}

	// A new booking at the front pushes the last one off.
	next = Snapshot{At: base, Bookings: list(bk("n", 30), full[:booking.MaxListed-1])}
	want := []Change{added(bk("n", 30))}
	if got := Diff(prev, next); !reflect.DeepEqual(got, want) {
		t.Errorf("pushed off: got %s, want %s", show(got), show(want))
	}
}

// The list drops a booking when it starts by the service's clock: with
// that clock ahead, a booking that started there is not cancelled; with it
// behind, one that vanished before its start there was cancelled, though
// bookbot's clock has passed its start.
func TestDiffJudgesStartedByTheServiceClock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		ahead int // the service's clock minus bookbot's, in minutes
		prev  []booking.Booking
		want  []Change
	}{
		{name: "4 minutes ahead: started there is not cancelled", ahead: 4,
			prev: list(bk("a", 2), bk("b", 4+slack), bk("z", 60))},
		{name: "4 minutes ahead: past the slack there is cancelled", ahead: 4,
			prev: list(bk("a", 4+slack+1), bk("z", 60)),
			want: []Change{cancelled(bk("a", 4+slack+1))}},
		{name: "5 minutes behind: cancelled 3 minutes before its start", ahead: -5,
			prev: list(bk("a", 3), bk("z", 60)),
			want: []Change{cancelled(bk("a", 3))}},
		{name: "5 minutes behind: gone 2 minutes after its start here, before it there", ahead: -5,
			prev: list(bk("a", -2), bk("z", 60)),
			want: []Change{cancelled(bk("a", -2))}},
		{name: "5 minutes behind: started there is not cancelled", ahead: -5,
			prev: list(bk("a", -5+slack), bk("z", 60))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			prev := Snapshot{At: base.Add(-5 * time.Minute), Bookings: tt.prev}
			next := Snapshot{At: base, ServiceAt: base.Add(time.Duration(tt.ahead) * time.Minute), Bookings: list(bk("z", 60))}
			if got := Diff(prev, next); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Diff:\n got %s\nwant %s", show(got), show(tt.want))
			}
		})
	}
}

// A booking listed now without an event type keeps the one it was listed
// with before; one never listed with an event type has none.
func TestKeepEventTypes(t *testing.T) {
	t.Parallel()
	untyped := func(b booking.Booking) booking.Booking { b.EventType = booking.NullString{}; return b }
	retyped := bk("c", 90)
	retyped.EventType = booking.Some("deep-dive")
	prev := list(bk("a", 60), untyped(bk("legacy", 70)), bk("c", 90))
	next := list(untyped(bk("a", 120)), untyped(bk("legacy", 70)), retyped, untyped(bk("new", 30)))
	nextCopy := slices.Clone(next)
	got := keepEventTypes(prev, next)
	want := list(bk("a", 120), untyped(bk("legacy", 70)), retyped, untyped(bk("new", 30)))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("keepEventTypes:\n got %+v\nwant %+v", got, want)
	}
	if !reflect.DeepEqual(next, nextCopy) {
		t.Error("keepEventTypes modified the caller's list")
	}
}
