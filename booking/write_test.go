package booking_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
)

// monday is a fixed working-day morning; the sandbox's owner works 9–17 in Berlin.
var monday = time.Date(2026, 3, 23, 10, 7, 0, 0, time.UTC)

func fixed() time.Time { return monday }

// sandbox returns a client wired to a seeded sandbox over real HTTP. Waits
// between read retries are skipped.
func sandbox(t *testing.T, opts ...booking.Option) (*booking.Client, *bookingtest.Server) {
	t.Helper()
	srv := bookingtest.NewServer(t, bookingtest.WithClock(fixed))
	return clientAt(t, srv.URL, srv, opts...), srv
}

// clientAt is a client of srv's owner for the API at url (srv's, or a
// proxy in front of it), on the fixed clock, skipping waits between retries.
func clientAt(t *testing.T, url string, srv *bookingtest.Server, opts ...booking.Option) *booking.Client {
	t.Helper()
	key, err := booking.NewKey(srv.Key)
	if err != nil {
		t.Fatal(err)
	}
	base := []booking.Option{
		booking.WithClock(fixed),
		booking.WithSleep(func(ctx context.Context, _ time.Duration) error { return ctx.Err() }),
	}
	c, err := booking.NewClient(url, key, append(base, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func firstSlot(t *testing.T, c *booking.Client, eventType string) booking.Slot {
	t.Helper()
	slots, err := c.Slots(t.Context(), eventType)
	if err != nil {
		t.Fatal(err)
	}
	if len(slots) == 0 {
		t.Fatalf("no slots for %s", eventType)
	}
	return slots[0]
}

func request(slot booking.Slot) booking.CreateRequest {
	return booking.CreateRequest{Slot: slot, Name: "Ada Lovelace", Email: "ada@example.com", TimeZone: "Europe/Berlin", Note: "Agenda: engines"}
}

// listsFailAfterWrite returns a client for srv through a proxy whose
// GET /bookings answers 502 once a write has gone through it: an API whose
// reads fail just when a write needs settling.
func listsFailAfterWrite(t *testing.T, srv *bookingtest.Server, opts ...booking.Option) *booking.Client {
	t.Helper()
	var wrote atomic.Bool
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			wrote.Store(true)
		}
		if wrote.Load() && r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/bookings") {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "<html><body><h1>502 Bad Gateway</h1></body></html>")
			return
		}
		srv.Sandbox.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return clientAt(t, front.URL, srv, opts...)
}

// calls counts the sandbox's requests to an endpoint.
func calls(srv *bookingtest.Server, endpoint string) int {
	n := 0
	for _, r := range srv.Requests() {
		if r.Endpoint == endpoint {
			n++
		}
	}
	return n
}

// TestCreateConfirmed also holds the create to §1 rule 5 and §2
// CreateBooking: it is form-encoded, never JSON, and sends the documented
// fields and no other (other fields are not supported).
func TestCreateConfirmed(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slot := firstSlot(t, c, "intro-call")
	res, err := c.Create(t.Context(), request(slot))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Confirmed || !res.Verified || res.Reconciled {
		t.Fatalf("result = %+v", res)
	}
	if res.Receipt == nil || res.Booking == nil || res.Booking.ID != res.Receipt.ID {
		t.Fatalf("receipt %+v, booking %+v", res.Receipt, res.Booking)
	}
	if !res.Booking.Start.Equal(slot.Start) || !res.Booking.End.Equal(slot.End) {
		t.Errorf("booking %v–%v, slot %v–%v", res.Booking.Start, res.Booking.End, slot.Start, slot.End)
	}

	var post *bookingtest.Request
	for _, r := range srv.Requests() {
		if r.Endpoint == bookingtest.EndpointCreateBooking {
			post = &r
		}
	}
	if post == nil {
		t.Fatal("no POST /bookings")
	}
	if post.ContentType != "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type = %q", post.ContentType)
	}
	want := url.Values{
		"event_type": {"intro-call"}, "start": {slot.RawStart()}, "end": {slot.RawEnd()},
		"name": {"Ada Lovelace"}, "email": {"ada@example.com"}, "booker_tz": {"Europe/Berlin"},
		"q:booking-note": {"Agenda: engines"},
	}
	if fmt.Sprint(post.Form) != fmt.Sprint(want) {
		t.Errorf("form = %v\nwant   %v", post.Form, want)
	}
	if n := calls(srv, bookingtest.EndpointListBookings); n != 2 {
		t.Errorf("GET /bookings calls = %d, want 2 (the check for an existing booking, the verification)", n)
	}
	for _, s := range res.Seen {
		if strings.Contains(s, "ada@example.com") {
			t.Errorf("Seen holds the attendee email: %q", s)
		}
	}
}

func TestCreateOmitsOptionalFields(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	req := request(firstSlot(t, c, "intro-call"))
	req.TimeZone, req.Note = "", ""
	if res, err := c.Create(t.Context(), req); err != nil || res.Outcome != booking.Confirmed {
		t.Fatalf("Create = %+v, %v", res, err)
	}
	for _, r := range srv.Requests() {
		if r.Endpoint == bookingtest.EndpointCreateBooking && (r.Form.Has("booker_tz") || r.Form.Has("q:booking-note")) {
			t.Errorf("empty optional fields sent: %v", r.Form)
		}
	}
}

func TestCreateTakenSlotIsNotBookedAndNotResubmitted(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slot := firstSlot(t, c, "intro-call")
	if res, _ := c.Create(t.Context(), request(slot)); res.Outcome != booking.Confirmed {
		t.Fatalf("first create: %+v", res)
	}
	other := request(slot)
	other.Email = "grace@example.com"
	res, err := c.Create(t.Context(), other)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.NotBooked || !errors.Is(res.Err, booking.ErrNotBooked) {
		t.Fatalf("second create = %+v", res)
	}
	// The service tells a taken slot by body status 409.
	var apiErr *booking.APIError
	if !errors.As(res.Err, &apiErr) || apiErr.BodyStatus != 409 {
		t.Errorf("409 body status not kept: %v", res.Err)
	}
	if !strings.Contains(res.Err.Error(), "do not resubmit") {
		t.Errorf("409 error does not warn against resubmitting: %v", res.Err)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 2 {
		t.Errorf("POST /bookings calls = %d, want 2: a 409 is never retried", n)
	}
}

func TestCreateTeamEventIsNotConfirmed(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	// The seeded round robin gives its first booking to a teammate: the
	// receipt is null and the booking is not this key's to see.
	res, err := c.Create(t.Context(), request(firstSlot(t, c, "team-sync")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.NotConfirmed || res.Receipt != nil || res.NeedsHuman() {
		t.Fatalf("result = %+v", res)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 1 {
		t.Errorf("POST calls = %d", n)
	}
}

func TestCreateRejected(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		fault bookingtest.Fault
		kind  error
	}{
		// As the service answers each, apart from the edge's 403.
		{"400", bookingtest.JSONError(400, "not booked", 400), booking.ErrInvalidInput},
		{"403 edge", bookingtest.HTMLError(403), booking.ErrForbidden},
		{"404", bookingtest.JSONError(404, "no such event type", 0), booking.ErrNotFound},
		{"413 plain", bookingtest.Fault{Status: 413, ContentType: "text/plain", Body: "request too large"}, booking.ErrTooLarge},
		{"401", bookingtest.JSONError(401, "invalid token", 0), booking.ErrUnauthorized},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := sandbox(t)
			slot := firstSlot(t, c, "intro-call")
			srv.FailNext(bookingtest.EndpointCreateBooking, tt.fault)
			res, err := c.Create(t.Context(), request(slot))
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != booking.Rejected || !errors.Is(res.Err, tt.kind) || res.NeedsHuman() {
				t.Fatalf("result = %+v", res)
			}
			if n := calls(srv, bookingtest.EndpointCreateBooking); n != 1 {
				t.Errorf("POST calls = %d, want 1", n)
			}
		})
	}
}

// A service that takes no new bookings answers 503 with the create's JSON
// refusal: a plain "not booked", which the list confirms, not an outage
// whose outcome a person must check, and nothing in it says to try again
// in a few minutes.
func TestCreateFullServiceIsNotBooked(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slot := firstSlot(t, c, "intro-call")
	srv.Full(bookingtest.DemoOwner)
	res, err := c.Create(t.Context(), request(slot))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.NotBooked || res.Reason != booking.ReasonFull || res.NeedsHuman() {
		t.Fatalf("result = %+v", res)
	}
	if !errors.Is(res.Err, booking.ErrFull) || errors.Is(res.Err, booking.ErrUnavailable) {
		t.Errorf("err = %v, want ErrFull and not ErrUnavailable", res.Err)
	}
	said := res.Err.Error() + " " + strings.Join(res.Seen, " ")
	for _, untrue := range []string{"few minutes", "down", "no clear answer", "unclear"} {
		if strings.Contains(said, untrue) {
			t.Errorf("what bookbot saw says %q: %s", untrue, said)
		}
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 1 {
		t.Errorf("POST /bookings calls = %d, want 1", n)
	}
	if n := calls(srv, bookingtest.EndpointListBookings); n != 2 {
		t.Errorf("GET /bookings calls = %d, want 2: the check before and the list that confirms nothing was booked", n)
	}
}

// An attendee the owner's settings refuse is answered 403 with the
// create's JSON refusal: refused for this attendee, which is no key or
// access problem. An edge's HTML 403 stays one (TestCreateRejected).
func TestCreateBlockedAttendeeIsRefused(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	srv.SetBlocked(bookingtest.DemoOwner, "example.com")
	res, err := c.Create(t.Context(), request(firstSlot(t, c, "intro-call")))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Rejected || res.Reason != booking.ReasonBlocked || res.NeedsHuman() {
		t.Fatalf("result = %+v", res)
	}
	if !errors.Is(res.Err, booking.ErrBlocked) || errors.Is(res.Err, booking.ErrForbidden) || strings.Contains(res.Err.Error(), "access") {
		t.Errorf("err = %v, want ErrBlocked, not a refusal of access", res.Err)
	}
}

// A 400 to a create sent without a note says the event type may require
// one; with a note, a 400 is any other refused input.
func TestCreateWithoutANoteRefusedAsUnanswered(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	srv.AddEventType(bookingtest.DemoOwner, bookingtest.EventType{Slug: "intake", Title: "Intake", DurationMinutes: 30, RequiresNote: true, RequiredQuestions: []string{"company"}})
	slots, err := c.Slots(t.Context(), "intake")
	if err != nil || len(slots) < 2 {
		t.Fatalf("slots: %v, %v", slots, err)
	}
	bare := request(slots[0])
	bare.Note = ""
	res, err := c.Create(t.Context(), bare)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Rejected || res.Reason != booking.ReasonUnanswered || !errors.Is(res.Err, booking.ErrInvalidInput) {
		t.Fatalf("without a note: %+v", res)
	}
	// With a note the required question is still unanswered: a 400 like any.
	res, err = c.Create(t.Context(), request(slots[1]))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Rejected || res.Reason != "" {
		t.Fatalf("with a note: %+v", res)
	}
}

func TestCreateUnclearAnswersAreReconciled(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fault    func(*bookingtest.Server)
		timeout  time.Duration // the write's own
		listDown bool          // GET /bookings fails once the write is sent
		want     booking.Outcome
	}{
		{"commit then 503 html", func(s *bookingtest.Server) {
			s.CommitThenFail(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
		}, 0, false, booking.Confirmed},
		{"commit then drop", func(s *bookingtest.Server) { s.CommitThenDrop(bookingtest.EndpointCreateBooking) }, 0, false, booking.Confirmed},
		{"commit then hang past the write's deadline", func(s *bookingtest.Server) { s.CommitThenHang(bookingtest.EndpointCreateBooking) }, 300 * time.Millisecond, false, booking.Confirmed},
		{"commit then malformed 201", func(s *bookingtest.Server) {
			s.CommitThenFail(bookingtest.EndpointCreateBooking, bookingtest.MalformedJSON(201))
		}, 0, false, booking.Confirmed},
		{"503 without commit", func(s *bookingtest.Server) {
			s.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
		}, 0, false, booking.ProbablyNotBooked},
		{"drop without commit", func(s *bookingtest.Server) { s.DropNext(bookingtest.EndpointCreateBooking) }, 0, false, booking.ProbablyNotBooked},
		{"503 and the list is down too", func(s *bookingtest.Server) {
			s.CommitThenFail(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
		}, 0, true, booking.Unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var opts []booking.Option
			if tt.timeout > 0 {
				opts = append(opts, booking.WithWriteTimeout(tt.timeout))
			}
			c, srv := sandbox(t, opts...)
			if tt.listDown {
				c = listsFailAfterWrite(t, srv, opts...)
			}
			slot := firstSlot(t, c, "intro-call")
			tt.fault(srv)
			res, err := c.Create(t.Context(), request(slot))
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tt.want {
				t.Fatalf("outcome = %s, want %s; seen: %q", res.Outcome, tt.want, res.Seen)
			}
			if tt.want == booking.Confirmed && (!res.Reconciled || res.Booking == nil) {
				t.Errorf("confirmed without reconciliation: %+v", res)
			}
			if tt.want != booking.Confirmed && !res.NeedsHuman() {
				t.Errorf("%s must go to a human", res.Outcome)
			}
			if n := calls(srv, bookingtest.EndpointCreateBooking); n != 1 {
				t.Errorf("POST /bookings calls = %d: a write must never be retried", n)
			}
			if len(res.Seen) < 2 {
				t.Errorf("Seen = %q, want the create and the listing", res.Seen)
			}
		})
	}
}

func TestCreateBeyondFullListIsUnknown(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slots, err := c.Slots(t.Context(), "consultation")
	if err != nil {
		t.Fatal(err)
	}
	slot := slots[len(slots)-1]
	// A full list, all before the slot: the list cannot show the new booking.
	fillList(srv)
	srv.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(504))
	res, err := c.Create(t.Context(), request(slot))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Unknown || !res.NeedsHuman() {
		t.Fatalf("outcome = %s, want unknown; seen %q", res.Outcome, res.Seen)
	}
	if !strings.Contains(strings.Join(res.Seen, " "), "full") {
		t.Errorf("Seen does not say the list is full: %q", res.Seen)
	}
}

// fillList adds MaxListed bookings to srv's owner, all starting before
// the last slot of the day after: the list shows them and nothing after.
func fillList(srv *bookingtest.Server) {
	name := "Filler"
	for i := range booking.MaxListed {
		start := monday.Add(time.Duration(i+1) * time.Minute)
		srv.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{Start: start, End: start.Add(time.Minute), BookerName: &name})
	}
}

// A create answered 201 with a receipt for its slot, which lies beyond the
// full list, is booked as the service answered: the list cannot check it,
// which the result says, and that is no unclear answer. A receipt for
// another time is no answer for this slot: unknown.
func TestCreateBeyondFullListWithReceiptIsBooked(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slots, err := c.Slots(t.Context(), "consultation")
	if err != nil {
		t.Fatal(err)
	}
	slot := slots[len(slots)-1]
	fillList(srv)
	res, err := c.Create(t.Context(), request(slot))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Confirmed || res.Reason != booking.ReasonBeyondList || res.Verified || res.NeedsHuman() {
		t.Fatalf("result = %+v; seen %q", res, res.Seen)
	}
	b := res.Booking
	if b == nil || res.Receipt == nil || b.ID != res.Receipt.ID || !b.Start.Equal(slot.Start) || !b.End.Equal(slot.End) ||
		b.EventType != booking.Some("consultation") || b.BookerEmail != booking.Some("ada@example.com") || b.BookerName != booking.Some("Ada Lovelace") {
		t.Fatalf("booking %+v, receipt %+v", b, res.Receipt)
	}
	if strings.Contains(strings.Join(res.Seen, " "), "unclear") {
		t.Errorf("Seen calls it unclear: %q", res.Seen)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 1 {
		t.Errorf("POST /bookings calls = %d, want 1", n)
	}

	// A receipt of the right ID for another time: not this slot's booking.
	other := slots[len(slots)-2]
	srv.EditAnswers(bookingtest.EndpointCreateBooking, func(body map[string]any) {
		body["booking"].(map[string]any)["starts_at"] = slot.Start.Format(time.RFC3339)
	})
	res, err = c.Create(t.Context(), request(other))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Unknown || res.Reason != "" || !res.NeedsHuman() {
		t.Fatalf("a receipt for another time beyond the list: %+v", res)
	}
}

// A cancel the service confirmed of a booking beyond the full list is
// cancelled as the service answered, beyond the list, also when the list
// read after it fails: the list before said where it lies.
func TestCancelBeyondFullListWithTheListDownAfter(t *testing.T) {
	t.Parallel()
	_, srv := sandbox(t)
	c := listsFailAfterWrite(t, srv)
	fillList(srv)
	id := srv.AddBooking(bookingtest.DemoOwner, booking30(monday.Add(5*24*time.Hour)))
	res, err := c.Cancel(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Cancelled || res.Reason != booking.ReasonBeyondList || res.NeedsHuman() {
		t.Fatalf("cancel = %+v; seen %q", res, res.Seen)
	}
}

// A full list settles a cancel of a booking it showed before, at a start
// before its last: absent, it is cancelled. Only from where the list ends
// can a booking lie beyond it.
func TestCancelUnclearSettledByAFullList(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	fillList(srv)
	list, err := c.Bookings(t.Context())
	if err != nil || len(list) != booking.MaxListed {
		t.Fatalf("the list: %d, %v", len(list), err)
	}
	id := list[10].ID
	srv.CommitThenFail(bookingtest.EndpointCancelBooking, bookingtest.HTMLError(503))
	res, err := c.Cancel(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Cancelled || !res.Verified || !res.Reconciled || res.NeedsHuman() {
		t.Fatalf("cancel = %+v; seen %q", res, res.Seen)
	}
}

// A create answered 201 with a receipt for its slot is booked as the
// service answered when the list that would check it cannot be read: the
// result says the list could not check it, and that is no unclear answer.
// An unclear answer with the list down stays unknown
// (TestCreateUnclearAnswersAreReconciled).
func TestCreateWithReceiptIsBookedWhenTheListIsDown(t *testing.T) {
	t.Parallel()
	_, srv := sandbox(t)
	c := listsFailAfterWrite(t, srv)
	slot := firstSlot(t, c, "intro-call")
	res, err := c.Create(t.Context(), request(slot))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Confirmed || res.Reason != booking.ReasonListUnread || res.Verified || res.NeedsHuman() {
		t.Fatalf("result = %+v; seen %q", res, res.Seen)
	}
	b := res.Booking
	if b == nil || res.Receipt == nil || b.ID != res.Receipt.ID || !b.Start.Equal(slot.Start) || !b.End.Equal(slot.End) ||
		b.EventType != booking.Some("intro-call") || b.BookerEmail != booking.Some("ada@example.com") {
		t.Fatalf("booking %+v, receipt %+v", b, res.Receipt)
	}
	if seen := strings.Join(res.Seen, " "); strings.Contains(seen, "unclear") || !strings.Contains(seen, "could not be read") {
		t.Errorf("Seen = %q, want the list unread and no unclear answer", res.Seen)
	}
}

// A cancel the service confirmed when the list before it could not be
// read is cancelled as the service answered, with the list before it
// unread: not "most likely cancelled already", which bookbot cannot know.
func TestCancelConfirmedWithTheListUnreadBefore(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	list, err := c.Bookings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	id := list[0].ID
	for range booking.DefaultBackoff.Attempts {
		srv.FailNext(bookingtest.EndpointListBookings, bookingtest.HTMLError(503))
	}
	res, err := c.Cancel(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Cancelled || res.Reason != booking.ReasonListUnread || res.Booking != nil || res.NeedsHuman() {
		t.Fatalf("cancel = %+v; seen %q", res, res.Seen)
	}
	if !cancelledInSandbox(t, srv, id) {
		t.Error("the sandbox did not cancel it")
	}
}

// A cancel the service confirmed, of a booking the full list did not show,
// is Cancelled as the service answered, beyond the list; not "most likely
// cancelled already". An unclear answer there stays unknown.
func TestCancelBeyondFullList(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	fillList(srv)
	beyond := monday.Add(5 * 24 * time.Hour)
	id := srv.AddBooking(bookingtest.DemoOwner, booking30(beyond))
	res, err := c.Cancel(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Cancelled || res.Reason != booking.ReasonBeyondList || res.Verified || res.NeedsHuman() {
		t.Fatalf("cancel = %+v; seen %q", res, res.Seen)
	}
	if !cancelledInSandbox(t, srv, id) {
		t.Error("the sandbox did not cancel it")
	}

	unclear := srv.AddBooking(bookingtest.DemoOwner, booking30(beyond.Add(time.Hour)))
	srv.FailNext(bookingtest.EndpointCancelBooking, bookingtest.HTMLError(503))
	res, err = c.Cancel(t.Context(), unclear)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Unknown || res.Reason != "" || !res.NeedsHuman() {
		t.Fatalf("an unclear cancel beyond the list = %+v", res)
	}
}

// receiptServer answers POST /bookings with a canned 201 and sends everything
// else to the sandbox, to test receipts the sandbox would never give.
func receiptServer(t *testing.T, receipt func(seeded []bookingtest.Booking) string) *booking.Client {
	t.Helper()
	sb := bookingtest.NewServer(t, bookingtest.WithClock(fixed))
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" && r.URL.Path == "/api/v1/bookings" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(201)
			_, _ = io.WriteString(w, receipt(sb.Sandbox.Bookings(bookingtest.DemoOwner)))
			return
		}
		sb.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	c, err := booking.NewClient(front.URL, mustKey(t, sb.Key), booking.WithClock(fixed))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCreateReceiptIsVerified(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		receipt func([]bookingtest.Booking) string
		want    booking.Outcome
	}{
		{"receipt names someone else's booking", func(seeded []bookingtest.Booking) string {
			for _, b := range seeded {
				if !b.Cancelled && b.Start.After(monday) && b.BookerEmail != nil {
					return fmt.Sprintf(`{"booking":{"booking_id":%q,"starts_at":%q,"ends_at":%q}}`,
						b.ID, b.Start.Format(time.RFC3339), b.End.Format(time.RFC3339))
				}
			}
			panic("no seeded upcoming booking")
		}, booking.Unknown},
		{"receipt not listed", func([]bookingtest.Booking) string {
			return `{"booking":{"booking_id":"0b0d1e5e-0000-4000-8000-000000000000","starts_at":"2026-03-23T10:00:00.000Z","ends_at":"2026-03-23T10:15:00.000Z"}}`
		}, booking.Unknown},
		{"empty booking_id", func([]bookingtest.Booking) string {
			return `{"booking":{"booking_id":"","starts_at":"2026-03-23T10:00:00Z","ends_at":"2026-03-23T10:15:00Z"}}`
		}, booking.ProbablyNotBooked},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := receiptServer(t, tt.receipt)
			res, err := c.Create(t.Context(), request(firstSlot(t, c, "intro-call")))
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tt.want || !res.NeedsHuman() {
				t.Fatalf("outcome = %s, want %s; seen %q", res.Outcome, tt.want, res.Seen)
			}
		})
	}
}

func TestCreateRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slot := firstSlot(t, c, "intro-call")

	bad := request(slot)
	bad.Email = "not-an-address"
	if _, err := c.Create(t.Context(), bad); err == nil {
		t.Error("invalid request sent")
	}
	if _, err := c.Create(t.Context(), booking.CreateRequest{Slot: booking.Slot{Start: slot.Start, End: slot.End}, Name: "A", Email: "a@example.com"}); err == nil {
		t.Error("hand-made slot sent")
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := c.Create(ctx, request(slot)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
	late, _ := booking.NewClient(srv.URL, mustKey(t, srv.Key), booking.WithClock(func() time.Time { return slot.Start.Add(time.Minute) }))
	if _, err := late.Create(t.Context(), request(slot)); err == nil {
		t.Error("a slot that has started was sent")
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 0 {
		t.Errorf("POST /bookings calls = %d, want 0", n)
	}
}

func mustKey(t *testing.T, s string) booking.Key {
	t.Helper()
	k, err := booking.NewKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestCreateGuardKeepsWithinLimits(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slots, err := c.Slots(t.Context(), "intro-call")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		srv.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(400, "not booked", 400))
		if res, _ := c.Create(t.Context(), request(slots[i])); res.Outcome != booking.Rejected {
			t.Fatalf("attempt %d: %+v", i+1, res)
		}
	}
	res, err := c.Create(t.Context(), request(slots[5]))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.RateLimited || res.RetryAfter != time.Minute || !res.Held {
		t.Fatalf("6th attempt in a minute = %+v, want held back for a minute", res)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 5 {
		t.Errorf("POST calls = %d, want 5: the guard must stop the 6th locally", n)
	}
}

// A 429 without Retry-After while bookbot's own attempts of the last minute
// are under the limit per address is an event type's hourly limit, as
// when other clients used up its hour: that event type is held back for
// the hour it can take, never a minute, and another event type, under its
// limits, still books.
func TestCreateAfter429HoldsBackOnlyItsEventType(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	intro, err := c.Slots(t.Context(), "intro-call")
	if err != nil {
		t.Fatal(err)
	}
	srv.ExhaustEventLimit(bookingtest.DemoOwner, "intro-call")
	res, _ := c.Create(t.Context(), request(intro[0]))
	if res.Outcome != booking.RateLimited || res.Reason != booking.ReasonEventLimit || res.RetryAfter != time.Hour ||
		!errors.Is(res.Err, booking.ErrRateLimited) || res.Held {
		t.Fatalf("429 without Retry-After = %+v, want intro-call held an hour (the API's refusal, not bookbot's)", res)
	}
	res, _ = c.Create(t.Context(), request(intro[1]))
	if res.Outcome != booking.RateLimited || res.Err != nil || !res.Held || res.RetryAfter != time.Hour {
		t.Fatalf("intro-call during the hold = %+v, want refused locally for the hour", res)
	}
	if res, _ := c.Create(t.Context(), request(firstSlot(t, c, "consultation"))); res.Outcome != booking.Confirmed {
		t.Fatalf("consultation during intro-call's hold = %+v, want booked", res)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 2 {
		t.Errorf("POST calls = %d, want 2", n)
	}
}

// The fifth create of a minute is one the service's limit per address lets
// through (it refuses the sixth): a 429 to it is the event type's hourly
// limit, as when other clients used up its hour, and only that event type
// is held back, for the hour.
func TestCreateAfter429AtTheMinutesLimitHoldsItsEventType(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slots, err := c.Slots(t.Context(), "consultation")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 4 {
		srv.FailNext(bookingtest.EndpointCreateBooking, bookingtest.JSONError(400, "not booked", 400))
		if res, _ := c.Create(t.Context(), request(slots[i])); res.Outcome != booking.Rejected {
			t.Fatalf("attempt %d: %+v", i+1, res)
		}
	}
	srv.ExhaustEventLimit(bookingtest.DemoOwner, "intro-call")
	res, _ := c.Create(t.Context(), request(firstSlot(t, c, "intro-call")))
	if res.Outcome != booking.RateLimited || res.Reason != booking.ReasonEventLimit || res.RetryAfter != time.Hour || res.Held {
		t.Fatalf("429 to the minute's fifth create = %+v, want intro-call held an hour", res)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 5 {
		t.Errorf("POST calls = %d, want 5", n)
	}
}

func TestCreateSandboxRateLimit(t *testing.T) {
	t.Parallel()
	// With bookbot's guard loosened, the sandbox's own per-event limit answers
	// 429 without Retry-After, and the client turns it into a hold.
	c, srv := sandbox(t, booking.WithLimiter(booking.NewGuard(booking.Limits{}, fixed)))
	srv.SetLimits(100, 2)
	slots, _ := c.Slots(t.Context(), "intro-call")
	for i := range 2 {
		if res, _ := c.Create(t.Context(), request(slots[i])); res.Outcome != booking.Confirmed {
			t.Fatalf("create %d: %+v", i, res)
		}
	}
	res, _ := c.Create(t.Context(), request(slots[2]))
	if res.Outcome != booking.RateLimited || res.RetryAfter < time.Minute {
		t.Fatalf("3rd create = %+v", res)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	list, err := c.Bookings(t.Context())
	if err != nil || len(list) == 0 {
		t.Fatal(err)
	}
	id := list[0].ID
	res, err := c.Cancel(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Cancelled || !res.Verified || res.Reconciled {
		t.Fatalf("cancel = %+v", res)
	}
	for _, r := range srv.Requests() {
		if r.Endpoint == bookingtest.EndpointCancelBooking && r.Path != "/api/v1/bookings/"+id+"/cancel" {
			t.Errorf("path = %q", r.Path)
		}
	}
	again, _ := c.Cancel(t.Context(), id)
	if again.Outcome != booking.Cancelled {
		t.Errorf("repeat cancel = %+v", again)
	}
}

// A cancel tells WithListed's fn what it cancels, as the list shows it,
// before it sends anything, and nil for a booking the list does not show.
func TestCancelSaysWhatItCancelsFirst(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	list, err := c.Bookings(t.Context())
	if err != nil || len(list) == 0 {
		t.Fatal(err)
	}
	var seen []*booking.Booking
	sent := 0
	ctx := booking.WithListed(t.Context(), func(b *booking.Booking) {
		seen = append(seen, b)
		for _, r := range srv.Requests() {
			if r.Endpoint == bookingtest.EndpointCancelBooking {
				sent++
			}
		}
	})
	if _, err := c.Cancel(ctx, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0] == nil || seen[0].ID != list[0].ID || seen[0].BookerName != list[0].BookerName || sent != 0 {
		t.Fatalf("told %+v, with %d cancels sent before; want the listed booking, before any", seen, sent)
	}
	if _, err := c.Cancel(ctx, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[1] != nil {
		t.Errorf("told %+v for a booking no longer listed, want nil", seen[1:])
	}
}

func TestCancelOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		id    func(*bookingtest.Server, []booking.Booking) string
		fault func(*bookingtest.Server)
		want  booking.Outcome
	}{
		{"unknown id", func(*bookingtest.Server, []booking.Booking) string { return "00000000-0000-4000-8000-000000000000" }, nil, booking.NotFound},
		{"another owner's booking", func(s *bookingtest.Server, _ []booking.Booking) string {
			return s.Sandbox.Bookings(bookingtest.OtherOwner)[0].ID
		}, nil, booking.NotFound},
		{"commit then 503", nil, func(s *bookingtest.Server) {
			s.CommitThenFail(bookingtest.EndpointCancelBooking, bookingtest.HTMLError(503))
		}, booking.Cancelled},
		{"503 without commit", nil, func(s *bookingtest.Server) {
			s.FailNext(bookingtest.EndpointCancelBooking, bookingtest.HTMLError(503))
		}, booking.NotCancelled},
		{"drop without commit, list down", nil, func(s *bookingtest.Server) {
			s.DropNext(bookingtest.EndpointCancelBooking)
		}, booking.Unknown},
		{"429", nil, func(s *bookingtest.Server) {
			s.FailNext(bookingtest.EndpointCancelBooking, bookingtest.Fault{Status: 429, RetryAfter: "30", ContentType: "application/json", Body: `{"error":"slow down"}`})
		}, booking.RateLimited},
		{"403", nil, func(s *bookingtest.Server) {
			s.FailNext(bookingtest.EndpointCancelBooking, bookingtest.HTMLError(403))
		}, booking.Rejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, srv := sandbox(t)
			if strings.Contains(tt.name, "list down") {
				c = listsFailAfterWrite(t, srv)
			}
			list, _ := c.Bookings(t.Context())
			id := list[0].ID
			if tt.id != nil {
				id = tt.id(srv, list)
			}
			if tt.fault != nil {
				tt.fault(srv)
			}
			res, err := c.Cancel(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tt.want {
				t.Fatalf("outcome = %s, want %s; seen %q", res.Outcome, tt.want, res.Seen)
			}
			if n := calls(srv, bookingtest.EndpointCancelBooking); n != 1 {
				t.Errorf("cancel calls = %d: a write must never be retried", n)
			}
		})
	}
}

func TestCancelSaidButStillListed(t *testing.T) {
	t.Parallel()
	sb := bookingtest.NewServer(t, bookingtest.WithClock(fixed))
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/cancel") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"cancelled":true}`)
			return
		}
		sb.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	c, _ := booking.NewClient(front.URL, mustKey(t, sb.Key))
	list, _ := c.Bookings(t.Context())
	res, err := c.Cancel(t.Context(), list[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Unknown || res.Booking == nil || !res.NeedsHuman() {
		t.Fatalf("cancel said but still listed = %+v", res)
	}
}

func TestCancelRefusedBeforeSending(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	for _, id := range []string{"", "..", "a/b", "x?y", "bk 1"} {
		if _, err := c.Cancel(t.Context(), id); err == nil {
			t.Errorf("Cancel(%q) sent", id)
		}
	}
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("requests = %d, want 0", n)
	}
}

func TestOwnerScopingAndAuth(t *testing.T) {
	t.Parallel()
	_, srv := sandbox(t)
	wrong, _ := booking.NewClient(srv.URL, mustKey(t, "sandbox_wrong_key"), booking.WithBackoff(booking.Backoff{Attempts: 1}))
	if _, err := wrong.EventTypes(t.Context()); !errors.Is(err, booking.ErrUnauthorized) {
		t.Errorf("wrong key: err = %v", err)
	}
	other, _ := booking.NewClient(srv.URL, mustKey(t, bookingtest.OtherKey), booking.WithClock(fixed))
	types, err := other.EventTypes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, et := range types {
		if et.Slug == "intro-call" {
			t.Error("another owner sees the demo owner's event types")
		}
	}
	if _, err := other.Slots(t.Context(), "intro-call"); !errors.Is(err, booking.ErrNotFound) {
		t.Errorf("another owner's slots: err = %v", err)
	}
}

func TestEventTypesAndBookable(t *testing.T) {
	t.Parallel()
	c, _ := sandbox(t)
	types, err := c.EventTypes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]booking.Kind{}
	for _, et := range types {
		kinds[et.Slug] = et.SchedulingKind
		if et.Bookable() != (et.SchedulingKind == booking.KindSolo) {
			t.Errorf("%s: Bookable = %v", et.Slug, et.Bookable())
		}
	}
	if _, ok := kinds["legacy-demo"]; ok {
		t.Error("removed event type listed")
	}
	if kinds["intro-call"] != booking.KindSolo || kinds["team-sync"] != booking.KindRoundRobin || kinds["board-review"] != booking.KindCollective {
		t.Errorf("kinds = %v", kinds)
	}
}

func TestBookingsListIsCappedAndOrdered(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	for i := range 130 {
		start := monday.Add(time.Duration(i+1) * time.Hour)
		srv.AddBooking(bookingtest.DemoOwner, bookingtest.Booking{Start: start, End: start.Add(time.Minute)})
	}
	list, err := c.Bookings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != booking.MaxListed {
		t.Fatalf("len = %d", len(list))
	}
	for i := 1; i < len(list); i++ {
		if list[i].Start.Before(list[i-1].Start) {
			t.Fatalf("not ordered at %d", i)
		}
	}
	legacy := 0
	for _, b := range list {
		if !b.BookerName.Valid && !b.BookerEmail.Valid && !b.EventType.Valid {
			legacy++
		}
	}
	if legacy == 0 {
		t.Error("no legacy booking with nulls decoded as unknown")
	}
}
