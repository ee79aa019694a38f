package booking_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/store/bolt"
)

// keptTypes opens another handle on the event types kept under dir, as a
// process started again on the same state directory would.
func keptTypes(t *testing.T, dir string) booking.TypeStore {
	t.Helper()
	db, err := bolt.Open(dir, bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	return db.Types()
}

// countedTypes is a TypeStore that counts what it is asked, and fails
// while fail is set.
type countedTypes struct {
	booking.TypeStore

	mu    sync.Mutex
	asked [][]string
	kept  [][]booking.KeptType
	fail  error
}

func (c *countedTypes) Types(ctx context.Context, calendar string, ids []string) (map[string]booking.KeptType, error) {
	c.mu.Lock()
	c.asked = append(c.asked, slices.Clone(ids))
	fail := c.fail
	c.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	return c.TypeStore.Types(ctx, calendar, ids)
}

func (c *countedTypes) Keep(ctx context.Context, calendar string, kept []booking.KeptType) error {
	c.mu.Lock()
	c.kept = append(c.kept, slices.Clone(kept))
	fail := c.fail
	c.mu.Unlock()
	if fail != nil {
		return fail
	}
	return c.TypeStore.Keep(ctx, calendar, kept)
}

// calls returns what was asked and kept since the last call, and forgets it.
func (c *countedTypes) calls() (asked [][]string, kept [][]booking.KeptType) {
	c.mu.Lock()
	defer c.mu.Unlock()
	asked, kept, c.asked, c.kept = c.asked, c.kept, nil, nil
	return asked, kept
}

func listed(t *testing.T, c *booking.Client, id string) booking.Booking {
	t.Helper()
	list, err := c.Bookings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range list {
		if b.ID == id {
			return b
		}
	}
	t.Fatalf("%s is not listed", id)
	return booking.Booking{}
}

// A booking its attendee rescheduled is listed with event_type null from
// then on. A client started afresh on the same state (a restart, another
// replica) still lists it with the event type it was listed with before,
// kept on its calendar alone; the record follows the booking's new end,
// which it is kept until.
func TestBookingsKeepTheEventTypeAcrossARestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	c, srv := sandbox(t, booking.WithTypeStore(keptTypes(t, dir)), booking.WithCalendar(booking.Owner, booking.Owner))
	slot := firstSlot(t, c, "consultation")
	id, err := srv.BookAsAttendee(bookingtest.DemoOwner, "consultation", slot.Start, "Ada Lovelace", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if b := listed(t, c, id); b.EventType != booking.Some("consultation") {
		t.Fatalf("listed before the move as %+v", b)
	}
	to := srv.Slots(bookingtest.DemoOwner, "consultation")[3].Start
	if err := srv.MoveAsAttendee(id, to); err != nil {
		t.Fatal(err)
	}

	restarted := clientAt(t, srv.URL, srv, booking.WithTypeStore(keptTypes(t, dir)), booking.WithCalendar(booking.Owner, booking.Owner))
	moved := listed(t, restarted, id)
	if !moved.Start.Equal(to) || moved.EventType != booking.Some("consultation") {
		t.Errorf("after a restart the moved booking is listed as %+v, want a consultation at %v", moved, to)
	}
	kept, err := keptTypes(t, dir).Types(t.Context(), booking.Owner, []string{id})
	if err != nil || !kept[id].End.Equal(moved.End) {
		t.Errorf("kept %+v, %v; want it kept until the booking's new end %v", kept, err, moved.End)
	}

	// Another calendar's client, on the same store: the owner's records
	// are not its own.
	other := clientAt(t, srv.URL, srv, booking.WithTypeStore(keptTypes(t, dir)), booking.WithCalendar("UADA", "cal-ada"))
	if b := listed(t, other, id); b.EventType.Valid {
		t.Errorf("another calendar's client lists it as %+v, with the owner's record", b.EventType)
	}
}

// The store is written only when a list shows something it does not hold,
// and asked only about bookings the client does not know: a read that
// shows what the last one did costs it nothing, and a restart that finds
// everything kept writes nothing.
func TestBookingsWriteKeptTypesOnlyWhenTheyChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	counted := &countedTypes{TypeStore: keptTypes(t, dir)}
	c, srv := sandbox(t, booking.WithTypeStore(counted))
	first, err := c.Bookings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	typed := 0
	for _, b := range first {
		if b.EventType.Valid {
			typed++
		}
	}
	asked, kept := counted.calls()
	if len(asked) != 1 || len(asked[0]) != len(first) || len(kept) != 1 || len(kept[0]) != typed {
		t.Fatalf("first read: asked %v, kept %v; want one question of all %d, one write of the %d typed", asked, kept, len(first), typed)
	}
	for range 3 {
		listed(t, c, first[0].ID)
	}
	if asked, kept := counted.calls(); len(asked)+len(kept) != 0 {
		t.Errorf("reads that showed nothing new: asked %v, kept %v", asked, kept)
	}

	slot := firstSlot(t, c, "consultation")
	id, err := srv.BookAsAttendee(bookingtest.DemoOwner, "consultation", slot.Start, "Ada Lovelace", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	listed(t, c, id)
	if asked, kept := counted.calls(); len(asked) != 1 || !slices.Equal(asked[0], []string{id}) || len(kept) != 1 || len(kept[0]) != 1 || kept[0][0].BookingID != id {
		t.Errorf("a new booking: asked %v, kept %v; want it asked about and kept, alone", asked, kept)
	}
	if err := srv.MoveAsAttendee(id, srv.Slots(bookingtest.DemoOwner, "consultation")[3].Start); err != nil {
		t.Fatal(err)
	}
	moved := listed(t, c, id)
	if asked, kept := counted.calls(); len(asked) != 0 || len(kept) != 1 || len(kept[0]) != 1 || !kept[0][0].End.Equal(moved.End) || kept[0][0].EventType != "consultation" {
		t.Errorf("a move: asked %v, kept %v; want the new end kept, alone", asked, kept)
	}

	again := &countedTypes{TypeStore: keptTypes(t, dir)}
	restarted := clientAt(t, srv.URL, srv, booking.WithTypeStore(again))
	if b := listed(t, restarted, id); b.EventType != booking.Some("consultation") {
		t.Errorf("after a restart: %+v", b)
	}
	if asked, kept := again.calls(); len(asked) != 1 || len(kept) != 0 {
		t.Errorf("a restart that finds everything kept: asked %v, kept %v; want one question, no write", asked, kept)
	}
}

// A create's own lists (the one before it, the one that checks it) write
// nothing to the store, so that the person waiting for the outcome waits
// for no store write; the next read keeps the new booking's type.
func TestCreateLeavesKeepingToTheNextRead(t *testing.T) {
	t.Parallel()
	counted := &countedTypes{TypeStore: keptTypes(t, t.TempDir())}
	c, _ := sandbox(t, booking.WithTypeStore(counted))
	if _, err := c.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	counted.calls()
	res, err := c.Create(t.Context(), request(firstSlot(t, c, "consultation")))
	if err != nil || res.Outcome != booking.Confirmed {
		t.Fatalf("create: %+v, %v", res, err)
	}
	if _, kept := counted.calls(); len(kept) != 0 {
		t.Errorf("the create's own lists wrote %v", kept)
	}
	listed(t, c, res.Booking.ID)
	if _, kept := counted.calls(); len(kept) != 1 || len(kept[0]) != 1 || kept[0][0].BookingID != res.Booking.ID || kept[0][0].EventType != "consultation" {
		t.Errorf("the read after the create kept %v; want the new booking's type, alone", kept)
	}
}

// A store that fails costs no read: the list is shown, with what the
// client itself saw, and what it could not keep is kept at a later read.
func TestBookingsListWhenTheTypeStoreFails(t *testing.T) {
	t.Parallel()
	counted := &countedTypes{TypeStore: keptTypes(t, t.TempDir()), fail: errors.New("disk full")}
	c, srv := sandbox(t, booking.WithTypeStore(counted))
	slot := firstSlot(t, c, "consultation")
	id, err := srv.BookAsAttendee(bookingtest.DemoOwner, "consultation", slot.Start, "Ada Lovelace", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	listed(t, c, id)
	if err := srv.MoveAsAttendee(id, srv.Slots(bookingtest.DemoOwner, "consultation")[3].Start); err != nil {
		t.Fatal(err)
	}
	if b := listed(t, c, id); b.EventType != booking.Some("consultation") {
		t.Errorf("with the store failing: %+v, want the event type the client saw", b)
	}
	counted.calls()
	counted.mu.Lock()
	counted.fail = nil
	counted.mu.Unlock()
	listed(t, c, id)
	if _, kept := counted.calls(); len(kept) != 1 || !slices.ContainsFunc(kept[0], func(kt booking.KeptType) bool { return kt.BookingID == id }) {
		t.Errorf("once the store works: kept %v, want the moved booking among them", kept)
	}
}

// A booking bookbot made beyond the first MaxListed is shown by no list,
// so its receipt names it: when it comes into the list after its attendee
// moved it, it is listed with the event type it was made for.
func TestCreateBeyondTheListKeepsItsEventType(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t, booking.WithTypeStore(keptTypes(t, t.TempDir())))
	slots, err := c.Slots(t.Context(), "consultation")
	if err != nil {
		t.Fatal(err)
	}
	slot := slots[len(slots)-1]
	name := "Filler"
	var fillers []string
	for i := range booking.MaxListed {
		start := monday.Add(time.Duration(i+1) * time.Minute)
		fillers = append(fillers, srv.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{Start: start, End: start.Add(time.Minute), BookerName: &name}))
	}
	res, err := c.Create(t.Context(), request(slot))
	if err != nil {
		t.Fatal(err)
	}
	if res.Receipt == nil || res.Verified {
		t.Fatalf("create beyond the list: %+v, want a receipt the list does not show", res)
	}
	for _, id := range fillers[:40] {
		if err := srv.CancelAsAttendee(id); err != nil {
			t.Fatal(err)
		}
	}
	if err := srv.MoveAsAttendee(res.Receipt.ID, slots[len(slots)-2].Start); err != nil {
		t.Fatal(err)
	}
	if b := listed(t, c, res.Receipt.ID); b.EventType != booking.Some("consultation") {
		t.Errorf("the booking made beyond the list, moved, is listed as %+v", b.EventType)
	}
}

// A create whose outcome is not Confirmed keeps no event type for the
// receipt's ID: the receipt is found by start time alone, and one for
// another time may name another booking.
func TestCreateUnconfirmedKeepsNoEventType(t *testing.T) {
	t.Parallel()
	counted := &countedTypes{TypeStore: keptTypes(t, t.TempDir())}
	c, srv := sandbox(t, booking.WithTypeStore(counted))
	slots, err := c.Slots(t.Context(), "consultation")
	if err != nil {
		t.Fatal(err)
	}
	name := "Filler"
	for i := range booking.MaxListed {
		start := monday.Add(time.Duration(i+1) * time.Minute)
		srv.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{Start: start, End: start.Add(time.Minute), BookerName: &name})
	}
	srv.EditAnswers(bookingtest.EndpointCreateBooking, func(body map[string]any) {
		if b, ok := body["booking"].(map[string]any); ok {
			b["starts_at"] = slots[0].Start.Format(time.RFC3339)
		}
	})
	counted.calls()
	res, err := c.Create(t.Context(), request(slots[len(slots)-1]))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Unknown || res.Receipt == nil {
		t.Fatalf("create beyond the list answered for another time: %+v, want unknown, with its receipt", res)
	}
	if _, kept := counted.calls(); len(kept) != 0 {
		t.Errorf("an unknown create kept %v", kept)
	}
}
