package booking_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/booking/journal/journaltest"
	"github.com/bookbot/bookbot/store/bolt"
)

// A create the bookings list already shows is not sent again, however
// long after the first one finished, and whoever asks.
func TestCreateOfAListedBookingIsNotSent(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slot := firstSlot(t, c, "intro-call")
	first, err := c.Create(t.Context(), request(slot))
	if err != nil || first.Outcome != booking.Confirmed {
		t.Fatalf("first create: %+v, %v", first, err)
	}
	again := request(slot)
	again.Email = "ADA@Example.com"
	again.Name = "Ada L."
	res, err := c.Create(booking.WithActor(t.Context(), "U2"), again)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.AlreadyBooked || res.Booking == nil || res.Booking.ID != first.Booking.ID || res.Prior != nil {
		t.Fatalf("second create: %+v", res)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 1 {
		t.Errorf("POST /bookings sent %d times, want 1", n)
	}
}

// With the journal, an earlier create stands in the way even where the list
// cannot show it, and across a restart, until a person has checked it.
func TestCreateRefusedByTheJournalAcrossARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	open := func() *bolt.Journal {
		db, err := bolt.Open(dir, bolt.Options{Beside: true})
		if err != nil {
			t.Fatal(err)
		}
		return db.Journal()
	}
	c, srv := sandbox(t, booking.WithJournal(open()))
	slot := firstSlot(t, c, "intro-call")
	srv.DropNext(bookingtest.EndpointCreateBooking)
	first, err := c.Create(booking.WithActor(t.Context(), "U1"), request(slot))
	if err != nil || first.Outcome != booking.ProbablyNotBooked {
		t.Fatalf("first create: %+v, %v", first, err)
	}

	// bookbot restarts: a new client on the same state directory.
	j := open()
	c = clientAt(t, srv.URL, srv, booking.WithJournal(j))
	res, err := c.Create(booking.WithActor(t.Context(), "U2"), request(slot))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.AlreadyBooked || res.Prior == nil || res.Prior.Actor != "U1" || res.Prior.Outcome != booking.ProbablyNotBooked {
		t.Fatalf("create after restart: %+v (prior %+v)", res, res.Prior)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 1 {
		t.Fatalf("POST /bookings sent %d times, want 1", n)
	}

	// A person checks the calendar and marks the unclear one checked.
	if _, err := j.MarkReviewed(res.Prior.Seq, "U9"); err != nil {
		t.Fatal(err)
	}
	res, err = c.Create(t.Context(), request(slot))
	if err != nil || res.Outcome != booking.Confirmed {
		t.Fatalf("create after the check: %+v, %v", res, err)
	}
	// Now it is confirmed, and stands in the way in its turn.
	res, err = c.Create(t.Context(), request(slot))
	if err != nil || res.Outcome != booking.AlreadyBooked || res.Prior == nil || res.Prior.Outcome != booking.Confirmed || res.Booking == nil {
		t.Fatalf("create after the confirmed one: %+v, %v", res, err)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 2 {
		t.Errorf("POST /bookings sent %d times, want 2", n)
	}
}

// When the list cannot be read, nothing is sent: bookbot cannot tell the
// booking does not exist already.
func TestCreateNeedsTheListBeforeSending(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slot := firstSlot(t, c, "intro-call")
	for range 4 {
		srv.FailNext(bookingtest.EndpointListBookings, bookingtest.HTMLError(502))
	}
	res, err := c.Create(t.Context(), request(slot))
	if err == nil || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("create with the list down: %+v, %v", res, err)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 0 {
		t.Errorf("POST /bookings sent %d times, want 0", n)
	}
}

// A write's request has its own time, whatever the caller spent before:
// a caller's deadline does not cut it short into an unclear outcome.
func TestWriteHasItsOwnTime(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slot := firstSlot(t, c, "intro-call")
	srv.SetLatency(bookingtest.EndpointCreateBooking, 400*time.Millisecond)
	srv.SetLatency(bookingtest.EndpointCancelBooking, 400*time.Millisecond)

	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	res, err := c.Create(ctx, request(slot))
	if err != nil || res.Outcome != booking.Confirmed || res.Reconciled {
		t.Fatalf("create: %+v, %v; want confirmed by the API's own answer", res, err)
	}
	ctx, cancel = context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	res, err = c.Cancel(ctx, res.Booking.ID)
	if err != nil || res.Outcome != booking.Cancelled || res.Reconciled {
		t.Fatalf("cancel: %+v, %v; want cancelled by the API's own answer", res, err)
	}
	// A caller that has already given up sends nothing.
	done, stop := context.WithCancel(t.Context())
	stop()
	if _, err := c.Create(done, request(firstSlot(t, c, "intro-call"))); !errors.Is(err, context.Canceled) {
		t.Errorf("create after the caller gave up: %v", err)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 1 {
		t.Errorf("POST /bookings sent %d times, want 1", n)
	}
}

func newFlakyJournal(t *testing.T) *journaltest.Flaky {
	t.Helper()
	db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	return journaltest.NewFlaky(db.Journal())
}

// An outcome the journal could not record when the create was answered is
// recorded once the journal is back: the entry does not stand in flight
// for good, and the same booking asked for again is already booked.
func TestCreateOutcomeRecordedOnceTheJournalIsBack(t *testing.T) {
	t.Parallel()
	j := newFlakyJournal(t)
	// The background waits before each try; the journal is back by the
	// end of the second wait, as the sleep says, so that the try after it
	// is the one that records, whatever the goroutines' order.
	var waits atomic.Int32
	c, srv := sandbox(t, booking.WithJournal(j), booking.WithSleep(func(ctx context.Context, d time.Duration) error {
		if waits.Add(1) == 2 {
			j.Down.Store(false)
		}
		return ctx.Err()
	}))
	slot := firstSlot(t, c, "intro-call")
	j.Down.Store(true)
	first, err := c.Create(booking.WithActor(t.Context(), "U1"), request(slot))
	if err != nil || first.Outcome != booking.Confirmed {
		t.Fatalf("first create: %+v, %v", first, err)
	}
	recorded := receive(t, j.Recorded, "the outcome recorded once the journal was back")
	if n := waits.Load(); n != 2 {
		t.Errorf("recorded after %d waits, want 2: one before each try again", n)
	}
	if recorded.Outcome != booking.Confirmed {
		t.Errorf("recorded %+v", recorded)
	}
	list, err := j.Since(time.Time{})
	if err != nil || len(list) != 1 || list[0].Open() || list[0].Outcome != booking.Confirmed || list[0].Created != first.Booking.ID {
		t.Fatalf("journal: %+v, %v; want the create confirmed", list, err)
	}

	res, err := c.Create(booking.WithActor(t.Context(), "U2"), request(slot))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.AlreadyBooked || res.Booking == nil || res.Booking.ID != first.Booking.ID || res.Prior == nil || res.Prior.Outcome != booking.Confirmed {
		t.Fatalf("the same booking again: %+v (prior %+v)", res, res.Prior)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 1 {
		t.Errorf("POST /bookings sent %d times, want 1", n)
	}
}

// While an earlier create's entry is in flight (its outcome not recorded
// yet), the same booking asked for again is already booked when the list
// shows it, and the entry is recorded as confirmed from the list.
func TestCreateSettlesAnEntryInFlightFromTheList(t *testing.T) {
	t.Parallel()
	j := newFlakyJournal(t)
	release := make(chan struct{})
	c, srv := sandbox(t, booking.WithJournal(j), booking.WithSleep(func(ctx context.Context, _ time.Duration) error {
		<-release // the background's first try again waits for the test's end
		return ctx.Err()
	}))
	t.Cleanup(func() {
		j.Down.Store(false)
		close(release)
		receive(t, j.Recorded, "the outcome recorded in the background")
	})
	slot := firstSlot(t, c, "intro-call")
	j.Down.Store(true)
	first, err := c.Create(booking.WithActor(t.Context(), "U1"), request(slot))
	if err != nil || first.Outcome != booking.Confirmed {
		t.Fatalf("first create: %+v, %v", first, err)
	}
	j.Down.Store(false)
	if list, _ := j.Since(time.Time{}); len(list) != 1 || !list[0].Open() {
		t.Fatalf("journal: %+v; want the create in flight", list)
	}

	res, err := c.Create(booking.WithActor(t.Context(), "U2"), request(slot))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.AlreadyBooked || res.Booking == nil || res.Booking.ID != first.Booking.ID ||
		res.Prior == nil || res.Prior.Actor != "U1" || res.Prior.Outcome != booking.Confirmed || res.Prior.BookingID != first.Booking.ID {
		t.Fatalf("the same booking again: %+v (prior %+v)", res, res.Prior)
	}
	list, err := j.Since(time.Time{})
	if err != nil || len(list) != 1 || list[0].Open() || list[0].Outcome != booking.Confirmed || list[0].Created != first.Booking.ID || list[0].NeedsReview {
		t.Fatalf("journal: %+v, %v; want the create confirmed from the list", list, err)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 1 {
		t.Errorf("POST /bookings sent %d times, want 1", n)
	}
}

// receive waits for a value from ch, failing the test when none comes.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("waited in vain for %s", what)
		var zero T
		return zero
	}
}
