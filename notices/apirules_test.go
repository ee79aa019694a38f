package notices_test

// Rules of the booking API text (shared/booking-api.md) held against the
// watcher end to end: through real HTTP, the booking client's parsing, the
// diff and the store.

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
)

// reformat writes every timestamp of a GET /bookings answer as the same
// instant in +05:30 with six fraction digits, and adds fields the API text
// does not document.
func reformat(t *testing.T) func(body map[string]any) {
	return func(body map[string]any) {
		ist := time.FixedZone("IST", 5*3600+1800)
		list := body["bookings"].([]any)
		for _, e := range list {
			b := e.(map[string]any)
			for _, f := range []string{"starts_at", "ends_at"} {
				at, err := time.Parse(time.RFC3339Nano, b[f].(string))
				if err != nil {
					t.Errorf("sandbox %s %q: %v", f, b[f], err)
					return
				}
				b[f] = at.In(ist).Format("2006-01-02T15:04:05.000000-07:00")
			}
			b["location"] = map[string]any{"kind": "video"}
			b["rescheduled_from"] = nil
		}
		body["total"] = len(list)
	}
}

// §2: clients parse timestamps as instants and do not depend on a
// particular fractional-second format; §9: unknown fields are not relied
// on. The same bookings listed in another offset, another fraction and
// with extra fields are no change: nothing is announced as moved, new or
// cancelled, neither by the running watcher nor by one started anew over
// the stored snapshot.
func TestAPIRuleSameInstantInAnotherFormatIsNoChange(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt) // the baseline, as the sandbox formats times
	w.sb.EditAnswers(bookingtest.EndpointListBookings, reformat(t))
	if list, err := w.client.Bookings(t.Context()); err != nil || len(list) == 0 {
		t.Fatalf("reformatted list: %d, %v", len(list), err)
	} else if _, off := list[0].Start.Zone(); off != 5*3600+1800 {
		t.Fatalf("the list was not reformatted: %s", list[0].Start)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("the same bookings in another format announced %v", kinds(calls))
	}
	w.clock.Advance(time.Minute)
	w.poll(w.watcher()) // after a restart, against the stored snapshot
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("after a restart, the same bookings in another format announced %v", kinds(calls))
	}
	w.sb.EditAnswers(bookingtest.EndpointListBookings, nil)
	w.clock.Advance(time.Minute)
	w.poll(wt) // and back
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("back to the sandbox's format announced %v", kinds(calls))
	}

	// A real change is still seen through the other format.
	w.sb.EditAnswers(bookingtest.EndpointListBookings, reformat(t))
	id := w.book("intro-call", 0, "Ada", "ada@example.com")
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls := w.pub.take()
	if len(calls) != 1 || len(calls[0].ns) != 1 || calls[0].ns[0].Kind != "new" || calls[0].ns[0].Booking.ID != id {
		t.Errorf("a booking made through the other format: %v, want one new %s", kinds(calls), id)
	}
}

// §2 Booking and §3: listings hold only confirmed bookings, with status
// confirmed; cancelled ones are not listed. A read listing a booking the
// attendee has cancelled as "cancelled", and a new one as "pending", is
// not taken for bookings: the poll fails as an unexpected answer and
// nothing is announced from it, neither the pending booking as new nor
// the cancelled one as still there. Once the list reads as documented
// again, the cancel and the new booking are each announced once.
func TestAPIRuleListedStatusOtherThanConfirmedIsNotAnnounced(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt) // the baseline

	list, err := w.client.Bookings(t.Context())
	if err != nil || len(list) == 0 {
		t.Fatalf("list: %d, %v", len(list), err)
	}
	goneID := list[0].ID
	newID := w.book("intro-call", 0, "Ada", "ada@example.com")
	// The attendee's cancel and the new booking are listed first against
	// the text, with statuses cancelled and pending, then as documented.
	w.sb.EditAnswers(bookingtest.EndpointListBookings,
		bookingtest.ListedStatus(map[string]string{goneID: "cancelled", newID: "pending"}))

	for range 2 {
		w.clock.Advance(time.Minute)
		if err := wt.Poll(t.Context()); !errors.Is(err, booking.ErrBadResponse) {
			t.Fatalf("poll over entries not confirmed = %v, want ErrBadResponse", err)
		}
		if calls := w.pub.take(); len(calls) != 0 {
			t.Fatalf("entries not confirmed announced %v", kinds(calls))
		}
	}

	if err := w.sb.CancelAsAttendee(goneID); err != nil {
		t.Fatal(err)
	}
	w.sb.EditAnswers(bookingtest.EndpointListBookings, nil)
	w.clock.Advance(time.Minute)
	w.poll(wt)
	got := kinds(w.pub.take())
	slices.Sort(got)
	want := []string{"post cancelled " + goneID, "post new " + newID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("once listed as documented: %v, want %v", got, want)
	}
}
