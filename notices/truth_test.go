package notices_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/notices"
)

// A notice never says something happened that did not: whatever one read
// of the list answers between good reads, no booking is announced
// cancelled, new or moved, then or at the reads after it. Each case goes
// through the real client, so the read is classified as bookbot classifies
// it.
func TestOneBadReadAnnouncesNothing(t *testing.T) {
	t.Parallel()
	json := func(body string) bookingtest.Fault {
		return bookingtest.Fault{Status: http.StatusOK, ContentType: "application/json", Body: body}
	}
	// times is how often the fault is answered in a row: once, and as
	// often as one read is retried, so that the whole read fails.
	attempts := booking.DefaultBackoff.Attempts
	cases := []struct {
		name  string
		fault bookingtest.Fault
		times int
	}{
		{"200 without bookings", json(`{}`), attempts},
		{"200 error body", json(`{"error":"upstream timeout"}`), attempts},
		{"200 bookings null", json(`{"bookings":null}`), attempts},
		{"200 bookings object", json(`{"bookings":{}}`), attempts},
		{"200 bookings string", json(`{"bookings":"none"}`), attempts},
		{"200 array", json(`[]`), attempts},
		{"200 string", json(`"ok"`), attempts},
		{"200 null", json(`null`), attempts},
		{"200 truncated", json(`{"bookings":[{"booking_id":"bk_1","starts_at":"2026-`), attempts},
		{"200 not JSON", bookingtest.PlainText(http.StatusOK, "OK"), attempts},
		{"200 HTML", bookingtest.Fault{Status: http.StatusOK, ContentType: "text/html", Body: "<html>maintenance</html>"}, attempts},
		{"200 empty list once", json(`{"bookings":[]}`), 1},
		{"500 HTML", bookingtest.HTMLError(http.StatusInternalServerError), attempts},
		{"502 once", bookingtest.HTMLError(http.StatusBadGateway), 1},
		{"503 JSON", bookingtest.Fault{Status: http.StatusServiceUnavailable, ContentType: "application/json", Body: `{"error":"unavailable"}`}, attempts},
		{"401", bookingtest.Fault{Status: http.StatusUnauthorized, ContentType: "application/json", Body: `{"error":"invalid token"}`}, 1},
		{"429 without Retry-After", bookingtest.Fault{Status: http.StatusTooManyRequests, ContentType: "application/json", Body: `{"error":"too many"}`}, attempts},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			wt := w.watcher()
			w.poll(wt)
			for range c.times {
				w.sb.FailNext(bookingtest.EndpointListBookings, c.fault)
			}
			w.clock.Advance(time.Minute)
			_ = wt.Poll(t.Context()) // fails, or reads again: either way it must announce nothing
			for range 2 {
				w.clock.Advance(time.Minute)
				w.poll(wt)
			}
			if calls := w.pub.take(); len(calls) != 0 {
				t.Errorf("announced %v", kinds(calls))
			}
		})
	}
}

// The same bookings listed in another order are no change.
func TestAReorderedListAnnouncesNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)
	w.sb.EditAnswers(bookingtest.EndpointListBookings, func(body map[string]any) {
		list, _ := body["bookings"].([]any)
		slices.Reverse(list)
	})
	w.clock.Advance(time.Minute)
	w.poll(wt)
	w.sb.EditAnswers(bookingtest.EndpointListBookings, nil)
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("announced %v", kinds(calls))
	}
}

// With the API's clock 5 minutes ahead of bookbot's, or 5 minutes behind,
// a booking that leaves the list because it started there is not
// announced as cancelled; a booking really cancelled is.
func TestClockOffsetsAnnounceOnlyWhatHappened(t *testing.T) {
	t.Parallel()
	for _, off := range []time.Duration{5 * time.Minute, -5 * time.Minute} {
		t.Run(off.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			w.cfg.Skew = w.client.Skew
			w.sb.SetNow(func() time.Time { return w.clock.Now().Add(off) })
			consultation := "consultation"
			soon := w.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{
				EventType: &consultation, Start: w.clock.Now().Add(max(off, 0) + 2*time.Minute),
				BookerName: &consultation, BookerEmail: &consultation,
			})
			wt := w.watcher()
			w.poll(wt)
			if !listed(w.last(), soon) {
				t.Fatalf("test setup: %s is not in the baseline", soon)
			}
			gone := w.book("intro-call", 3, "Ada", "ada@example.com")
			w.clock.Advance(time.Minute)
			w.poll(wt)
			w.pub.take()
			if err := w.sb.CancelAsAttendee(gone); err != nil {
				t.Fatal(err)
			}
			// Just past the booking's start by the API's clock: ahead, that
			// is minutes before its start here.
			w.clock.Advance(max(-off, 0) + 2*time.Minute)
			w.poll(wt)
			if listed(w.last(), soon) {
				t.Fatalf("test setup: %s is still listed", soon)
			}
			if got := kinds(w.pub.take()); !slices.Equal(got, []string{"update cancelled " + gone, "reply cancelled " + gone}) {
				t.Errorf("announced %v, want only the cancellation of %s", got, gone)
			}
		})
	}
}

func listed(s notices.Snapshot, id string) bool {
	return slices.ContainsFunc(s.Bookings, func(b booking.Booking) bool { return b.ID == id })
}

// fillNights fills the owner's calendar with another tool's bookings, every
// quarter hour of the nights from tomorrow, until the list is full well
// before the last days the slots reach.
func fillNights(w *world) {
	name := "Night"
	for day := 1; len(w.sb.Bookings(bookingtest.DemoOwner)) < booking.MaxListed+20; day++ {
		for q := range 28 {
			start := time.Date(t0.Year(), t0.Month(), t0.Day()+day, 0, 15*q, 0, 0, time.UTC)
			w.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{Start: start, End: start.Add(10 * time.Minute), BookerName: &name})
		}
	}
}

// A booking bookbot made beyond the end of a full list, which its attendee
// then moves into the list, is not announced as new and nothing more: its
// notice says it was booked through bookbot before, and moved in since.
func TestABookingMovedIntoAFullListIsNotJustNew(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fillNights(w)
	wt := w.watcher()
	w.poll(wt)
	slots, err := w.client.Slots(t.Context(), "consultation")
	if err != nil || len(slots) < 2 {
		t.Fatalf("slots: %d, %v", len(slots), err)
	}
	res, err := w.client.Create(booking.WithActor(t.Context(), "UADA"), booking.CreateRequest{Slot: slots[len(slots)-1], Name: "Grace Hopper", Email: "grace@example.com"})
	if err != nil || res.Outcome != booking.Confirmed || res.Reason != booking.ReasonBeyondList {
		t.Fatalf("create beyond the list: %+v, %v", res, err)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 0 {
		t.Fatalf("a booking beyond the list was announced: %v", kinds(calls))
	}
	if err := w.sb.MoveAsAttendee(res.Booking.ID, slots[0].Start); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls := w.pub.take()
	if len(calls) != 1 || len(calls[0].ns) != 1 {
		t.Fatalf("after the move into the list: %v", kinds(calls))
	}
	if n := calls[0].ns[0]; n.Kind != notices.New || !n.Unsure || n.By == nil || n.By.Actor != "UADA" {
		t.Errorf("the notice: %s, unsure %v, by %+v; want it new or moved in, booked by UADA", n.Kind, n.Unsure, n.By)
	}
}

// A booking its attendee moves beyond the end of a full list leaves it as
// a cancelled one would: the notice says it was cancelled or moved, never
// that it was cancelled; moved back into view, it is announced moved from
// where it was, not new.
func TestAMoveBeyondAFullListIsNoCancellation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fillNights(w)
	wt := w.watcher()
	w.poll(wt)
	if !w.last().Full() {
		t.Fatal("test setup: the list is not full")
	}
	var moved booking.Booking
	for _, b := range w.last().Bookings {
		if b.EventType.Valid && moved.ID == "" {
			moved = b
		}
	}
	id := moved.ID
	slots := w.sb.Slots(bookingtest.DemoOwner, moved.EventType.String)
	later := slots[len(slots)-1].Start // the last one offered, beyond the list's end
	if err := w.sb.MoveAsAttendee(id, later); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls := w.pub.take()
	if len(calls) != 1 || len(calls[0].ns) != 1 || calls[0].ns[0].Kind != notices.Cancelled || !calls[0].ns[0].Unsure {
		t.Fatalf("after the move out of view: %v; want one notice, cancelled or moved", kinds(calls))
	}

	// Back into view: moved from where it was listed.
	back := slots[0].Start
	if err := w.sb.MoveAsAttendee(id, back); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Minute)
	w.poll(w.watcher()) // after a restart, too
	calls = w.pub.take()
	var got []notices.Notice
	for _, c := range calls {
		if c.call != "update" {
			got = append(got, c.ns...)
		}
	}
	if len(got) != 1 || got[0].Kind != notices.Moved || got[0].Booking.ID != id || !got[0].Was.Start.Equal(moved.Start) || !got[0].Booking.Start.Equal(back) {
		t.Fatalf("back in view: %v; want it moved", kinds(calls))
	}
}

// A booking pushed beyond the end of a full list, then cancelled there, is
// announced cancelled by the first read that lists every booking and not
// it: nothing was said of it when it left the list.
func TestACancelBeyondAFullListIsAnnouncedOnceTheListIsWhole(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fillNights(w)
	wt := w.watcher()
	w.poll(wt)
	listed := w.last().Bookings
	if len(listed) != booking.MaxListed {
		t.Fatal("test setup: the list is not full")
	}
	pushed := listed[len(listed)-1]
	name := "Early"
	early := listed[0].Start.Add(time.Minute)
	earlyID := w.sb.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{Start: early, End: early.Add(5 * time.Minute), BookerName: &name})
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 1 || len(calls[0].ns) != 1 || calls[0].ns[0].Booking.ID != earlyID {
		t.Fatalf("a booking that pushes the last beyond the end: %v; want it new, and nothing more", kinds(calls))
	}
	if err := w.sb.CancelAsAttendee(pushed.ID); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 0 {
		t.Fatalf("a cancel beyond a full list's end: %v; want nothing, as no read can see it", kinds(calls))
	}

	// The list becomes whole: the bookings never listed are cancelled, and
	// the early one.
	for _, b := range w.sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && (b.Start.After(pushed.Start) || b.ID == earlyID) {
			if err := w.sb.CancelAsAttendee(b.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	w.clock.Advance(time.Minute)
	w.poll(w.watcher()) // after a restart, too
	if w.last().Full() {
		t.Fatal("test setup: the list is still full")
	}
	var got []string
	for _, c := range w.pub.take() {
		if c.call == "update" {
			continue // a first notice shown as it is now
		}
		for _, n := range c.ns {
			if n.Kind != notices.Cancelled || n.Unsure {
				t.Errorf("%s %s, unsure %v; want cancelled, for sure", c.call, n.Kind, n.Unsure)
			}
			got = append(got, n.Booking.ID)
		}
	}
	if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values([]string{earlyID, pushed.ID}))) {
		t.Errorf("the whole list: announced %v cancelled; want %s and %s", got, earlyID, pushed.ID)
	}
}
