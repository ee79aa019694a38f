package notices

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/bookbot/bookbot/booking"
)

// StartSlack is how soon after the next read, on the service's clock, a
// vanished booking still counts as started rather than cancelled: that
// clock is known to the second at best, and only when its answers carry a
// Date header.
const StartSlack = time.Minute

// Snapshot is one good read of GET /bookings.
type Snapshot struct {
	At time.Time // when the list was asked for, on bookbot's clock
	// ServiceAt is At on the booking API's clock, which decides when a
	// booking has started and leaves the list; zero when not known.
	ServiceAt time.Time
	Bookings  []booking.Booking // as listed
	// Of names which connection of a person's own calendar was read (see
	// ForCalendar); "" for the owner's.
	Of string
	// Unseen are bookings an earlier read listed that left a full list
	// before its end: cancelled, or moved beyond the end, which no read of
	// a full list can tell apart, and announced so. Beyond are those a
	// full list cut off beyond its end, of which nothing was said. Both
	// are kept, as last listed, until a read lists them again (moved, or
	// back in view), a complete read does not (they are gone), or they
	// would have started; one of Beyond that a read does not list where it
	// would is gone, as one a read listed before is (see Unseen).
	Unseen []booking.Booking
	Beyond []booking.Booking
}

// serviceTime is when the read was made on the service's clock, or on
// bookbot's when the service's is not known.
func (s Snapshot) serviceTime() time.Time {
	if s.ServiceAt.IsZero() {
		return s.At
	}
	return s.ServiceAt
}

// Full reports whether the list is at the cap of GET /bookings: bookings may
// lie beyond it.
func (s Snapshot) Full() bool { return len(s.Bookings) >= booking.MaxListed }

// view is how far a snapshot sees. A full list may have been cut short, and
// a booking at exactly its last start may have siblings that were cut off,
// so only starts strictly before that last start are known.
type view struct {
	horizon time.Time
	cut     bool
}

func (s Snapshot) view() view {
	if !s.Full() {
		return view{}
	}
	h := s.Bookings[0].Start
	for _, b := range s.Bookings[1:] {
		if b.Start.After(h) {
			h = b.Start
		}
	}
	return view{horizon: h, cut: true}
}

// shows reports whether the snapshot would list a booking starting at
// start if it existed.
func (v view) shows(start time.Time) bool { return !v.cut || start.Before(v.horizon) }

// Kind is what happened to a booking.
type Kind string

const (
	New       Kind = "new"
	Cancelled Kind = "cancelled"
	Moved     Kind = "moved"
)

// Change is one thing that happened between two snapshots.
type Change struct {
	Kind    Kind
	Booking booking.Booking // as now listed; for Cancelled, as last listed
	Was     booking.Booking // Moved only: as listed before
	// Unsure marks a change that may be a move across a full list's end:
	// a Cancelled booking that left a full list before its end (or moved
	// beyond it), a New one listed without an event type (a reschedule)
	// where a full list ended before (or moved into it from beyond), or
	// one bookbot booked, and had the answer to, before that list was
	// read (see Watcher).
	Unsure bool
}

// Diff returns what happened between prev and next, in order of the
// booking's (new) start, then ID. It reports only what the two reads prove:
//
//   - a booking that vanished and starts at or before next's time on the
//     service's clock (ServiceAt, else At) plus StartSlack has started,
//     because the list holds only bookings that have not started by that
//     clock;
//   - a booking that vanished from a full next list at or after its last
//     start may just have been cut off, so it is not Cancelled;
//   - a booking that vanished from a full next list before its last start
//     was cancelled, or moved beyond that start (an attendee's reschedule
//     keeps the ID), so it is Cancelled and Unsure;
//   - the first is kept in next's Beyond, the second in its Unseen (see
//     Unseen): listed again, either is Moved from where it was listed
//     last, or no change at that time; one of Beyond that a later read
//     does not list where it would is judged as one the read before
//     listed, as it was said nothing of;
//   - a booking that appeared at or after the last start of a full prev
//     list may have been cut off then, so it is not New; one before it,
//     listed without an event type (as a reschedule is), may have moved in
//     from beyond, so it is New and Unsure;
//   - a listed ID with a different start or end is Moved, wherever it lies;
//   - a reschedule under a new ID is a Cancelled and a New;
//   - changes to other fields (booker, event type) are not reported.
//
// Each list's cap limits only what that list can prove: a complete next
// list proves a cancellation at any start, and a complete prev list proves
// any booking new. When an answer lists an ID twice, its first entry
// counts. Diff does not modify the snapshots.
func Diff(prev, next Snapshot) []Change {
	changes, _, _ := track(prev, next)
	return changes
}

// Unseen is what next's Unseen and Beyond are to be, read after prev: the
// bookings that left a full next list before its end, or were cut off
// beyond it, and those of prev's that next, full again, does not list and
// that have not started.
func Unseen(prev, next Snapshot) (unseen, beyond []booking.Booking) {
	_, unseen, beyond = track(prev, next)
	return unseen, beyond
}

// advance is Diff of prev and next, read once: next's event types filled
// in from prev (keepEventTypes), and its Unseen and Beyond set.
func advance(prev Snapshot, next *Snapshot) []Change {
	next.Bookings = keepEventTypes(prev.Bookings, next.Bookings)
	changes, unseen, beyond := track(prev, *next)
	next.Unseen, next.Beyond = unseen, beyond
	return changes
}

// track is Diff and Unseen.
func track(prev, next Snapshot) (changes []Change, unseen, beyond []booking.Booking) {
	was, is := byID(prev.Bookings), byID(next.Bookings)
	hidden := byID(prev.Unseen)
	// A booking cut off beyond a full list's end, of which nothing was
	// said, is gone as one prev listed is once next does not list it.
	last := byID(prev.Beyond)
	maps.Copy(hidden, last)
	maps.Copy(last, was)
	before, after := prev.view(), next.view()
	started := next.serviceTime().Add(StartSlack)

	for id, b := range is {
		old, ok := was[id]
		if h, out := hidden[id]; !ok && out {
			// Back from beyond a full list's end.
			if !b.Start.Equal(h.Start) || !b.End.Equal(h.End) {
				changes = append(changes, Change{Kind: Moved, Booking: b, Was: h})
			}
			continue
		}
		switch {
		case !ok:
			if before.shows(b.Start) {
				changes = append(changes, Change{Kind: New, Booking: b, Unsure: before.cut && !b.EventType.Valid})
			}
		case !b.Start.Equal(old.Start) || !b.End.Equal(old.End):
			changes = append(changes, Change{Kind: Moved, Booking: b, Was: old})
		}
	}
	for id, old := range last {
		if _, ok := is[id]; ok || !old.Start.After(started) {
			continue
		}
		switch {
		case !after.shows(old.Start):
			beyond = append(beyond, old) // cut off, beyond the end
		case after.cut:
			changes = append(changes, Change{Kind: Cancelled, Booking: old, Unsure: true})
			unseen = append(unseen, old)
		default:
			changes = append(changes, Change{Kind: Cancelled, Booking: old})
		}
	}
	for id, h := range byID(prev.Unseen) {
		if _, ok := is[id]; ok || !after.cut || !h.Start.After(started) {
			continue // listed again, gone for sure, or started
		}
		if _, ok := last[id]; !ok {
			unseen = append(unseen, h)
		}
	}
	for _, bs := range [][]booking.Booking{unseen, beyond} {
		slices.SortFunc(bs, func(a, b booking.Booking) int {
			if c := a.Start.Compare(b.Start); c != 0 {
				return c
			}
			return strings.Compare(a.ID, b.ID)
		})
	}
	// IDs are unique among the changes, so the order is total.
	slices.SortFunc(changes, func(a, b Change) int {
		if c := a.Booking.Start.Compare(b.Booking.Start); c != 0 {
			return c
		}
		return strings.Compare(a.Booking.ID, b.Booking.ID)
	})
	return changes, unseen, beyond
}

// byID indexes a list by ID, keeping the first entry of an ID listed twice.
func byID(list []booking.Booking) map[string]booking.Booking {
	m := make(map[string]booking.Booking, len(list))
	for _, b := range list {
		if _, ok := m[b.ID]; !ok {
			m[b.ID] = b
		}
	}
	return m
}

// keepEventTypes returns list with the event type prev showed filled in for
// each booking listed now without one: the service lists a booking its
// attendee rescheduled with no event type from then on. list is not
// modified.
func keepEventTypes(prev, list []booking.Booking) []booking.Booking {
	was := byID(prev)
	out := slices.Clone(list)
	for i, b := range out {
		if old, ok := was[b.ID]; ok && !b.EventType.Valid && old.EventType.Valid {
			out[i].EventType = old.EventType
		}
	}
	return out
}
