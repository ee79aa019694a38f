package bookingtest

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/testutil"
)

// findListed returns the booking GET /bookings lists with this ID, or nil.
func findListed(t *testing.T, srv *Server, id string) *wireBooking {
	t.Helper()
	for _, b := range listBookings(t, srv, DemoKey) {
		if b.BookingID == id {
			return &b
		}
	}
	return nil
}

// storedBooking is the sandbox's own record of the demo owner's booking id.
func storedBooking(srv *Server, id string) Booking {
	for _, b := range srv.Bookings(DemoOwner) {
		if b.ID == id {
			return b
		}
	}
	return Booking{}
}

func stored(srv *Server, ownerID, id string) *Booking {
	for _, b := range srv.Bookings(ownerID) {
		if b.ID == id {
			return &b
		}
	}
	return nil
}

// A booking made on the booking page is listed exactly as one made by a
// create, and takes its time from the slots of every event type.
func TestBookAsAttendee(t *testing.T) {
	t.Parallel()
	srv, clock := newTestServer(t)
	// The page may send the instant in any form.
	id, err := srv.BookAsAttendee(DemoOwner, "consultation", mustTime(freeSlot).In(berlin), "Ada Lovelace", "ada@example.com")
	if err != nil || !bookingIDFormat.MatchString(id) {
		t.Fatalf("BookAsAttendee = %q, %v", id, err)
	}
	b := findListed(t, srv, id)
	if b == nil {
		t.Fatalf("%s not listed", id)
	}
	if b.StartsAt != "2026-03-24T09:00:00.000Z" || b.EndsAt != "2026-03-24T09:30:00.000Z" || b.Status != "confirmed" ||
		b.BookerName == nil || *b.BookerName != "Ada Lovelace" || b.BookerEmail == nil || *b.BookerEmail != "ada@example.com" ||
		b.EventType == nil || *b.EventType != "consultation" {
		t.Errorf("listed %+v", b)
	}
	if st := stored(srv, DemoOwner, id); st == nil || st.BookerTZ != "UTC" || st.Cancelled {
		t.Errorf("stored %+v", st)
	}
	if slotStarts(listSlots(t, srv, DemoKey, "consultation"))[freeSlot] {
		t.Error("the booked slot is still offered")
	}
	if slotStarts(listSlots(t, srv, DemoKey, "intro-call"))["2026-03-24T09:15:00Z"] {
		t.Error("an overlapping slot of another event type is still offered")
	}
	// The API finds the slot taken, as after a create.
	post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", freeSlot, 30)).want(t, http.StatusConflict, `{"error":"not booked","status":409}`)

	for _, tc := range []struct {
		name, slug, start string
	}{
		{"taken by the attendee before", "consultation", freeSlot},
		{"taken by another type", "consultation", "2026-03-24T08:00:00Z"},
		{"not aligned", "consultation", "2026-03-24T09:10:00Z"},
		{"in the past", "consultation", "2026-03-23T09:00:00Z"},
		{"outside the hours", "consultation", "2026-03-24T17:00:00Z"},
		{"weekend", "consultation", "2026-03-28T09:00:00Z"},
		{"beyond the window", "consultation", "2026-04-07T08:00:00Z"},
		{"beyond the event's period", "deep-dive", "2026-03-31T08:00:00Z"},
	} {
		if _, err := srv.BookAsAttendee(DemoOwner, tc.slug, mustTime(tc.start), "Grace Hopper", "grace@example.com"); !errors.Is(err, ErrNotOffered) {
			t.Errorf("%s: err = %v, want ErrNotOffered", tc.name, err)
		}
	}
	for _, tc := range []struct {
		name, owner, slug, person, email string
	}{
		{"unknown event type", DemoOwner, "nope", "Grace Hopper", "grace@example.com"},
		{"removed event type", DemoOwner, "legacy-demo", "Grace Hopper", "grace@example.com"},
		{"another owner's event type", DemoOwner, "other-call", "Grace Hopper", "grace@example.com"},
		{"unknown owner", "owner_nobody", "consultation", "Grace Hopper", "grace@example.com"},
		{"no name", DemoOwner, "consultation", " ", "grace@example.com"},
		{"no email", DemoOwner, "consultation", "Grace Hopper", ""},
	} {
		if _, err := srv.BookAsAttendee(tc.owner, tc.slug, mustTime("2026-03-24T10:00:00Z"), tc.person, tc.email); err == nil || errors.Is(err, ErrNotOffered) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}

	// The attendee confirms their email on the page: such an event type
	// books here although a create cannot.
	if id, err := srv.BookAsAttendee(DemoOwner, "office-hours", mustTime("2026-03-24T10:00:00Z"), "Grace Hopper", "grace@example.com"); err != nil || findListed(t, srv, id) == nil {
		t.Errorf("office-hours: %q, %v, or not listed", id, err)
	}

	// A repeat of a cancelled booking is refused for good, as a create's is;
	// another attendee gets the freed slot.
	if err := srv.CancelAsAttendee(id); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.BookAsAttendee(DemoOwner, "consultation", mustTime(freeSlot), "Ada Lovelace", "ada@example.com"); err == nil || errors.Is(err, ErrNotOffered) {
		t.Errorf("repeat: err = %v", err)
	}
	if _, err := srv.BookAsAttendee(DemoOwner, "consultation", mustTime(freeSlot), "Dorothy Vaughan", "dorothy@example.com"); err != nil {
		t.Errorf("another attendee: %v", err)
	}

	// The sandbox's clock decides what is past.
	first := mustTime("2026-03-23T10:30:00Z") // the first consultation slot
	clock.Advance(30 * time.Minute)
	if _, err := srv.BookAsAttendee(DemoOwner, "consultation", first, "Grace Hopper", "grace@example.com"); !errors.Is(err, ErrNotOffered) {
		t.Errorf("a slot gone by: err = %v", err)
	}
}

// A round robin booking from the page goes to the free host with the
// fewest upcoming bookings, as a create's does, and a move keeps its host,
// who must be free at the new time.
func TestBookAsAttendeeRoundRobin(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	toTeammate, err := srv.BookAsAttendee(DemoOwner, "team-sync", mustTime(freeSlot), "Ada Lovelace", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if findListed(t, srv, toTeammate) != nil || stored(srv, DemoTeammate, toTeammate) == nil {
		t.Error("the teammate's booking is listed for the owner, or not in the teammate's calendar")
	}
	// The teammate is busy then: the owner takes it.
	toOwner, err := srv.BookAsAttendee(DemoOwner, "team-sync", mustTime(freeSlot), "Grace Hopper", "grace@example.com")
	if err != nil || findListed(t, srv, toOwner) == nil {
		t.Errorf("the owner's booking: %v, or not listed", err)
	}
	// The teammate again, for a create: it has fewer bookings.
	post(t, srv, DemoKey, "/api/v1/bookings", bookForm("team-sync", "2026-03-24T10:30:00Z", 30)).want(t, http.StatusCreated, `{"booking":null}`)
	// The teammate cannot move to a time it is busy at, though the owner is free then.
	if err := srv.MoveAsAttendee(toTeammate, mustTime("2026-03-24T10:30:00Z")); !errors.Is(err, ErrNotOffered) {
		t.Errorf("move to a time the host is busy at: %v", err)
	}
	// The attendee's links work for the teammate's booking too.
	if err := srv.MoveAsAttendee(toTeammate, mustTime("2026-03-24T11:00:00Z")); err != nil {
		t.Errorf("move: %v", err)
	}
	if err := srv.CancelAsAttendee(toTeammate); err != nil {
		t.Errorf("cancel: %v", err)
	}
	if b := stored(srv, DemoTeammate, toTeammate); b == nil || !b.Cancelled || !b.Start.Equal(mustTime("2026-03-24T11:00:00Z")) {
		t.Errorf("teammate's booking %+v", b)
	}
}

// The page refuses what a create is refused for by the owner's settings:
// an attendee on the block list, and any booking while the calendar is
// full. A required question is no obstacle: the page asks it.
func TestBookAsAttendeeRefused(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	srv.SetBlocked(DemoOwner, "example.net")
	if _, err := srv.BookAsAttendee(DemoOwner, "consultation", mustTime(freeSlot), "Eve", "eve@Example.NET"); !errors.Is(err, ErrRefused) {
		t.Errorf("a blocked attendee: %v", err)
	}
	srv.Full(DemoOwner)
	if _, err := srv.BookAsAttendee(DemoOwner, "consultation", mustTime(freeSlot), "Ada", "ada@example.com"); !errors.Is(err, ErrRefused) {
		t.Errorf("a full calendar: %v", err)
	}
	srv.SetCeiling(DemoOwner, -1)
	srv.AddEventType(DemoOwner, EventType{Slug: "intake", Title: "Intake", DurationMinutes: 30, RequiresNote: true, RequiredQuestions: []string{"company"}})
	if id, err := srv.BookAsAttendee(DemoOwner, "intake", mustTime(freeSlot), "Ada", "ada@example.com"); err != nil || findListed(t, srv, id) == nil {
		t.Errorf("required questions on the page: %v", err)
	}
}

func TestCancelAsAttendee(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	id, err := srv.BookAsAttendee(DemoOwner, "consultation", mustTime(freeSlot), "Ada Lovelace", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	before := len(listBookings(t, srv, DemoKey))
	if err := srv.CancelAsAttendee(id); err != nil {
		t.Fatal(err)
	}
	if n := len(listBookings(t, srv, DemoKey)); n != before-1 || findListed(t, srv, id) != nil {
		t.Errorf("%d listed (was %d), or the cancelled booking is", n, before)
	}
	if b := stored(srv, DemoOwner, id); b == nil || !b.Cancelled {
		t.Errorf("stored %+v", b)
	}
	if !slotStarts(listSlots(t, srv, DemoKey, "consultation"))[freeSlot] {
		t.Error("the freed slot is not offered again")
	}

	// A booking made through the API, and a seeded one, cancel the same way.
	r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("intro-call", "2026-03-24T10:00:00Z", 15))
	var receipt wireReceipt
	r.decode(t, &receipt)
	if r.status != http.StatusCreated || receipt.Booking == nil {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	for _, id := range []string{receipt.Booking.BookingID, "5eed0000-0000-4000-8000-000000000001"} {
		if err := srv.CancelAsAttendee(id); err != nil || findListed(t, srv, id) != nil {
			t.Errorf("cancel %s: %v, or still listed", id, err)
		}
	}
	// The owner cancelling afterwards is a repeat cancel, as ever.
	post(t, srv, DemoKey, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000001/cancel", nil).want(t, http.StatusOK, `{"cancelled":true}`)

	for name, id := range map[string]string{
		"again":             id,
		"seeded cancelled":  "5eed0000-0000-4000-8000-000000000014",
		"unknown":           "00000000-0000-4000-8000-000000000000",
		"a slug is not one": "consultation",
	} {
		if err := srv.CancelAsAttendee(id); !errors.Is(err, ErrNoBooking) {
			t.Errorf("%s: err = %v, want ErrNoBooking", name, err)
		}
	}
}

func TestMoveAsAttendee(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	id, err := srv.BookAsAttendee(DemoOwner, "consultation", mustTime(freeSlot), "Ada Lovelace", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	before := len(listBookings(t, srv, DemoKey))
	const to = "2026-03-24T10:00:00Z"
	if err := srv.MoveAsAttendee(id, mustTime(to)); err != nil {
		t.Fatal(err)
	}
	listed := listBookings(t, srv, DemoKey)
	b := findListed(t, srv, id)
	if len(listed) != before || b == nil || b.StartsAt != "2026-03-24T10:00:00.000Z" || b.EndsAt != "2026-03-24T10:30:00.000Z" ||
		*b.BookerEmail != "ada@example.com" || *b.BookerName != "Ada Lovelace" {
		t.Fatalf("after the move: %d listed (was %d), %+v", len(listed), before, b)
	}
	// As upstream lists a booking its attendee rescheduled: event_type
	// null, though it is still a consultation.
	if raw := get(t, srv, DemoKey, "/api/v1/bookings").text(); b.EventType != nil ||
		!strings.Contains(raw, `"booking_id":"`+id+`","starts_at":"2026-03-24T10:00:00.000Z","ends_at":"2026-03-24T10:30:00.000Z","status":"confirmed","booker_name":"Ada Lovelace","booker_email":"ada@example.com","event_type":null}`) {
		t.Errorf("the moved booking is listed with event_type %v, want null:\n%s", b.EventType, raw)
	}
	if stored := storedBooking(srv, id); stored.EventType == nil || *stored.EventType != "consultation" || !stored.Rescheduled {
		t.Errorf("stored after the move: %+v, want a rescheduled consultation", stored)
	}
	slots := slotStarts(listSlots(t, srv, DemoKey, "consultation"))
	if !slots[freeSlot] || slots[to] {
		t.Errorf("old slot offered %v, new slot offered %v", slots[freeSlot], slots[to])
	}
	// Its own time does not stand in its way.
	if err := srv.MoveAsAttendee(id, mustTime(to)); err != nil {
		t.Errorf("to its own time: %v", err)
	}

	for _, tc := range []struct{ name, start string }{
		{"taken", "2026-03-24T09:30:00Z"},
		{"taken by another type", "2026-03-24T08:00:00Z"},
		{"not aligned", "2026-03-24T10:40:00Z"},
		{"in the past", "2026-03-23T09:00:00Z"},
		{"weekend", "2026-03-28T09:00:00Z"},
		{"beyond the window", "2026-04-07T08:00:00Z"},
	} {
		if err := srv.MoveAsAttendee(id, mustTime(tc.start)); !errors.Is(err, ErrNotOffered) {
			t.Errorf("%s: err = %v, want ErrNotOffered", tc.name, err)
		}
	}
	if b := findListed(t, srv, id); b == nil || b.StartsAt != "2026-03-24T10:00:00.000Z" {
		t.Errorf("refused moves changed the booking: %+v", b)
	}

	// A booking off the slot grid blocks the two slots it overlaps, but not
	// for itself.
	odd := srv.AddBooking(DemoOwner, Booking{EventType: testutil.Ptr("consultation"), Start: mustTime("2026-03-24T11:15:00Z"),
		BookerName: testutil.Ptr("Mary Jackson"), BookerEmail: testutil.Ptr("mary@example.com")})
	if slotStarts(listSlots(t, srv, DemoKey, "consultation"))["2026-03-24T11:30:00Z"] {
		t.Fatal("a slot overlapping the booking is offered")
	}
	if err := srv.MoveAsAttendee(odd, mustTime("2026-03-24T11:30:00Z")); err != nil {
		t.Errorf("onto a slot overlapping its own time: %v", err)
	}
	if b := findListed(t, srv, odd); b == nil || b.StartsAt != "2026-03-24T11:30:00.000Z" || b.EndsAt != "2026-03-24T12:00:00.000Z" {
		t.Errorf("moved %+v", b)
	}

	// A booking made through the API moves the same way.
	r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("intro-call", "2026-03-24T12:00:00Z", 15))
	var receipt wireReceipt
	r.decode(t, &receipt)
	if r.status != http.StatusCreated || receipt.Booking == nil {
		t.Fatalf("create: %d %s", r.status, r.body)
	}
	if err := srv.MoveAsAttendee(receipt.Booking.BookingID, mustTime("2026-03-25T12:00:00Z")); err != nil {
		t.Errorf("API booking: %v", err)
	}
	if b := findListed(t, srv, receipt.Booking.BookingID); b == nil || b.StartsAt != "2026-03-25T12:00:00.000Z" || b.EndsAt != "2026-03-25T12:15:00.000Z" {
		t.Errorf("moved API booking %+v", b)
	}

	// Deep dive has a 7-day period: a seeded one cannot go beyond it.
	if err := srv.MoveAsAttendee("5eed0000-0000-4000-8000-000000000003", mustTime("2026-03-31T08:00:00Z")); !errors.Is(err, ErrNotOffered) {
		t.Errorf("beyond the period: err = %v", err)
	}
	if err := srv.MoveAsAttendee("5eed0000-0000-4000-8000-000000000011", mustTime(freeSlot)); err == nil || errors.Is(err, ErrNoBooking) {
		t.Errorf("legacy booking without an event type: err = %v", err)
	}
	srv.AddEventType(DemoOwner, EventType{Slug: "gone", Title: "Gone", DurationMinutes: 30})
	gone, err := srv.BookAsAttendee(DemoOwner, "gone", mustTime("2026-03-25T09:00:00Z"), "Ada Lovelace", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	srv.RemoveEventType(DemoOwner, "gone")
	if err := srv.MoveAsAttendee(gone, mustTime("2026-03-25T09:30:00Z")); err == nil || errors.Is(err, ErrNoBooking) {
		t.Errorf("removed event type: err = %v", err)
	}
	if err := srv.CancelAsAttendee(id); err != nil {
		t.Fatal(err)
	}
	for name, id := range map[string]string{"cancelled": id, "unknown": "00000000-0000-4000-8000-000000000000"} {
		if err := srv.MoveAsAttendee(id, mustTime(freeSlot)); !errors.Is(err, ErrNoBooking) {
			t.Errorf("%s: err = %v, want ErrNoBooking", name, err)
		}
	}
}

// The booking page is not the API: its bookings spend none of the API's
// rate limits and leave no trace in the request log.
func TestAttendeeOutsideTheAPI(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	srv.SetLimits(5, 5)
	slots := srv.Slots(DemoOwner, "consultation") // no request
	var ids []string
	for i := range 6 {
		id, err := srv.BookAsAttendee(DemoOwner, "consultation", slots[i].Start, "Ada Lovelace", "ada@example.com")
		if err != nil {
			t.Fatalf("booking %d: %v", i+1, err)
		}
		ids = append(ids, id)
	}
	if _, err := srv.BookAsAttendee(DemoOwner, "consultation", slots[0].Start, "Grace Hopper", "grace@example.com"); !errors.Is(err, ErrNotOffered) {
		t.Errorf("a taken slot: %v", err) // a refused attempt, not counted either
	}
	if err := srv.MoveAsAttendee(ids[0], slots[6].Start); err != nil {
		t.Fatal(err)
	}
	if err := srv.CancelAsAttendee(ids[1]); err != nil {
		t.Fatal(err)
	}
	if reqs := srv.Requests(); len(reqs) != 0 {
		t.Errorf("the request log holds %+v", reqs)
	}

	// Per IP and per event, the API still has its full budget of five.
	for i := range 5 {
		if r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", slotTime(slots[7+i].Start), 30)); r.status != http.StatusCreated {
			t.Fatalf("create %d after the attendee's bookings: %d %s", i+1, r.status, r.body)
		}
	}
	post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", slotTime(slots[12].Start), 30)).want(t, http.StatusTooManyRequests, `{"error":"not booked","status":429}`)
	// And a page booking works when the API's budget is spent.
	if _, err := srv.BookAsAttendee(DemoOwner, "consultation", slots[12].Start, "Ada Lovelace", "ada@example.com"); err != nil {
		t.Errorf("the page when the API is limited: %v", err)
	}
	if n := len(srv.Requests()); n != 6 {
		t.Errorf("%d requests logged, want the 6 creates", n)
	}
	listed := map[string]bool{}
	for _, id := range bookingIDs(listBookings(t, srv, DemoKey)) {
		listed[id] = true
	}
	if !listed[ids[0]] || listed[ids[1]] || !listed[ids[5]] {
		t.Errorf("listed %v; attendee bookings %v", listed, ids)
	}
}

// The attendee works alongside API clients without a race.
func TestAttendeeConcurrentWithAPI(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	slots := srv.Slots(DemoOwner, "intro-call")
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 10 {
			if id, err := srv.BookAsAttendee(DemoOwner, "intro-call", slots[i].Start, "Ada Lovelace", "ada@example.com"); err == nil && i%2 == 0 {
				_ = srv.MoveAsAttendee(id, slots[20+i].Start)
			}
		}
	}()
	for range 10 {
		listBookings(t, srv, DemoKey)
		listSlots(t, srv, DemoKey, "intro-call")
	}
	<-done
	if n := len(listBookings(t, srv, DemoKey)); n != 12+10 {
		t.Errorf("%d listed, want the 12 seeded upcoming and 10 more", n)
	}
}
