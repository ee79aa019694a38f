package booking_test

// Tests of rules of the booking API text (shared/booking-api.md) that no
// other test checks: each names the section it holds the client to.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/internal/fakeclock"
)

// fakeAPI is a hand-written booking API, on the fixed clock, with one slot
// of "intro-call" at 09:00–09:15 UTC on the day after monday. Its bookings list is empty until
// a create has been sent, and is listed() after.
type fakeAPI struct {
	t       *testing.T
	srv     *httptest.Server
	slots   string                                       // the GET /slots body
	create  func(w http.ResponseWriter, form url.Values) // answers POST /bookings
	listed  func() string                                // GET /bookings body after a create
	cancel  func(w http.ResponseWriter, r *http.Request) // answers POST /bookings/{id}/cancel
	mu      sync.Mutex
	posts   []*http.Request
	bodies  []string
	created bool
}

const (
	fakeSlotStart = "2026-03-24T09:00:00Z"
	fakeSlotEnd   = "2026-03-24T09:15:00Z"
)

func newFakeAPI(t *testing.T) *fakeAPI {
	t.Helper()
	f := &fakeAPI{t: t, slots: `{"slots":[{"start":"` + fakeSlotStart + `","end":"` + fakeSlotEnd + `"}]}`}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPI) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	// Its clock is the client's (fixed), as the service's is a real one's.
	w.Header().Set("Date", fixed().UTC().Format(http.TimeFormat))
	switch {
	case r.Method == "GET" && r.URL.Path == "/api/v1/slots":
		reply(w, 200, f.slots)
	case r.Method == "GET" && r.URL.Path == "/api/v1/bookings":
		if !f.created || f.listed == nil {
			reply(w, 200, `{"bookings":[]}`)
			return
		}
		reply(w, 200, f.listed())
	case r.Method == "POST":
		raw, _ := io.ReadAll(r.Body)
		f.posts = append(f.posts, r.Clone(r.Context()))
		f.bodies = append(f.bodies, string(raw))
		if strings.HasSuffix(r.URL.Path, "/cancel") {
			f.cancel(w, r)
			return
		}
		form, err := url.ParseQuery(string(raw))
		if err != nil {
			f.t.Errorf("create body %q is not form-encoded: %v", raw, err)
		}
		f.created = true
		f.create(w, form)
	default:
		reply(w, 404, `{"error":"not found"}`)
	}
}

func (f *fakeAPI) client(t *testing.T) *booking.Client {
	t.Helper()
	c, err := booking.NewClient(f.srv.URL, mustKey(t, "live_8c1f.region-eu.secretpart"), booking.WithClock(fixed))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// book sends a create of the first slot offered, through a client of its
// own, and returns its result.
func (f *fakeAPI) book(t *testing.T) *booking.Result {
	t.Helper()
	c := f.client(t)
	res, err := c.Create(t.Context(), request(firstSlot(t, c, "intro-call")))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (f *fakeAPI) postCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.posts)
}

// reply writes a JSON answer.
func reply(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func answer(status int, body string) func(http.ResponseWriter, url.Values) {
	return func(w http.ResponseWriter, _ url.Values) { reply(w, status, body) }
}

func listOf(entries ...string) func() string {
	return func() string { return `{"bookings":[` + strings.Join(entries, ",") + `]}` }
}

func entry(id, event, start, end, email string) string {
	e := "null"
	if email != "" {
		e = fmt.Sprintf("%q", email)
	}
	return fmt.Sprintf(`{"booking_id":%q,"starts_at":%q,"ends_at":%q,"status":"confirmed","booker_name":"Ada Lovelace","booker_email":%s,"event_type":%q}`,
		id, start, end, e, event)
}

// §2: timestamps are instants, whatever their offset or fraction. A slot
// offered in Z without a fraction, a receipt in +01:00 and a list in
// +05:30 with six fraction digits are the same booking; the create still
// sends the slot's strings byte for byte (§2 CreateBooking: "copied exactly").
func TestAPIRuleTimestampsAreInstants(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.create = answer(201, `{"booking":{"booking_id":"bk-1","starts_at":"2026-03-24T10:00:00+01:00","ends_at":"2026-03-24T10:15:00.000+01:00"}}`)
	f.listed = listOf(entry("bk-1", "intro-call", "2026-03-24T14:30:00.000000+05:30", "2026-03-24T14:45:00.000000+05:30", "ADA@example.com"))
	res := f.book(t)
	if res.Outcome != booking.Confirmed || !res.Verified || res.Reconciled || res.Booking == nil || res.Booking.ID != "bk-1" {
		t.Fatalf("result = %+v; seen %q", res, res.Seen)
	}
	form, _ := url.ParseQuery(f.bodies[0])
	if form.Get("start") != fakeSlotStart || form.Get("end") != fakeSlotEnd {
		t.Errorf("sent start %q end %q, want the slot's strings as offered", form.Get("start"), form.Get("end"))
	}
}

// §4 POST /bookings: the booking is verified against GET /bookings by ID,
// event, start AND end, and attendee email. A listed booking that differs
// in any of them does not confirm the create.
func TestAPIRuleReceiptIsVerifiedByEveryField(t *testing.T) {
	t.Parallel()
	const receipt = `{"booking":{"booking_id":"bk-1","starts_at":"` + fakeSlotStart + `","ends_at":"` + fakeSlotEnd + `"}}`
	tests := []struct {
		name  string
		entry string
	}{
		{"another end", entry("bk-1", "intro-call", fakeSlotStart, "2026-03-24T09:30:00Z", "ada@example.com")},
		{"another event", entry("bk-1", "deep-dive", fakeSlotStart, fakeSlotEnd, "ada@example.com")},
		{"another start", entry("bk-1", "intro-call", "2026-03-24T08:45:00Z", fakeSlotEnd, "ada@example.com")},
		{"another attendee", entry("bk-1", "intro-call", fakeSlotStart, fakeSlotEnd, "grace@example.com")},
		{"legacy null email", entry("bk-1", "intro-call", fakeSlotStart, fakeSlotEnd, "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.create = answer(201, receipt)
			f.listed = listOf(tt.entry)
			res := f.book(t)
			if res.Outcome == booking.Confirmed || res.Verified || !res.NeedsHuman() {
				t.Fatalf("a listed booking with %s confirmed the create: %+v; seen %q", tt.name, res, res.Seen)
			}
			if n := f.postCount(); n != 1 {
				t.Errorf("POST /bookings calls = %d, want 1", n)
			}
		})
	}
}

// §9: unknown fields in answers are not relied on, and do not break the
// client either: every answer with extra fields, at the top and inside
// each object, reads as without them.
func TestAPIRuleUnknownFieldsInAnswersAreIgnored(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.slots = `{"slots":[{"start":"` + fakeSlotStart + `","end":"` + fakeSlotEnd + `","capacity":3,"host":{"id":1}}],"window_days":14}`
	f.create = answer(201, `{"booking":{"booking_id":"bk-1","starts_at":"`+fakeSlotStart+`","ends_at":"`+fakeSlotEnd+`","uid":"x","attendees":[{"a":1}]},"message":"ok","video_url":null}`)
	f.listed = func() string {
		e := entry("bk-1", "intro-call", fakeSlotStart, fakeSlotEnd, "ada@example.com")
		return `{"bookings":[` + strings.TrimSuffix(e, "}") + `,"location":"zoom","meta":{"x":[1,2]}}],"total":1,"next_cursor":null}`
	}
	f.cancel = func(w http.ResponseWriter, _ *http.Request) {
		f.listed = listOf()
		reply(w, 200, `{"cancelled":true,"notified":["a"],"series":{"count":2}}`)
	}
	c := f.client(t)
	slots, err := c.Slots(t.Context(), "intro-call")
	if err != nil || len(slots) != 1 || slots[0].RawStart() != fakeSlotStart {
		t.Fatalf("slots = %+v, %v", slots, err)
	}
	res, err := c.Create(t.Context(), request(slots[0]))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Confirmed || res.Receipt == nil || res.Receipt.ID != "bk-1" {
		t.Fatalf("create = %+v; seen %q", res, res.Seen)
	}
	res, err = c.Cancel(t.Context(), "bk-1")
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Cancelled || !res.Verified {
		t.Fatalf("cancel = %+v; seen %q", res, res.Seen)
	}
}

// §7 rule 2: a 409 whose body status is 200 is no proof of a booking and
// is not resubmitted; the client calls it a refusal of this attendee at
// this time, not a taken slot, and does not send it to a human when the
// list does not show it.
func TestAPIRuleConflictWithBodyStatus200(t *testing.T) {
	t.Parallel()
	f := newFakeAPI(t)
	f.create = answer(409, `{"error":"not booked","status":200}`)
	res := f.book(t)
	if res.Outcome != booking.NotBooked || !errors.Is(res.Err, booking.ErrNotBooked) || res.Verified || res.Booking != nil {
		t.Fatalf("result = %+v; seen %q", res, res.Seen)
	}
	if got := res.Conflict(); got != booking.ConflictRefused {
		t.Errorf("Conflict() = %q, want %q", got, booking.ConflictRefused)
	}
	if n := f.postCount(); n != 1 {
		t.Errorf("POST /bookings calls = %d: a 409 must not be resubmitted", n)
	}
}

// §4 POST /bookings: "confirmed only when booking is non-null and
// booking_id is non-empty". A 201 without a booking field at all is no
// confirmation either, even when the list then shows nothing.
func TestAPIRuleCreatedWithoutBookingIsNotConfirmed(t *testing.T) {
	t.Parallel()
	for _, body := range []string{`{}`, `{"booking":{}}`, `{"booking":{"starts_at":"` + fakeSlotStart + `","ends_at":"` + fakeSlotEnd + `"}}`} {
		f := newFakeAPI(t)
		f.create = answer(201, body)
		res := f.book(t)
		if res.Outcome == booking.Confirmed || res.Verified || res.Receipt != nil {
			t.Errorf("201 %s: result = %+v", body, res)
		}
	}
}

// §4 POST /bookings: the answer is {booking: Receipt or null}. booking null
// says the flow is not supported (NotConfirmed); a 201 without a booking
// key says nothing of the kind, so it is an unclear answer, settled by
// listing like a dropped one: confirmed when the list shows the booking,
// for a person to check when it does not.
func TestAPIRuleCreatedWithoutBookingKeyIsUnclear(t *testing.T) {
	t.Parallel()
	listed := entry("bk-1", "intro-call", fakeSlotStart, fakeSlotEnd, "ada@example.com")
	tests := []struct {
		body   string
		listed func() string
		want   booking.Outcome
	}{
		{`{"booking":null}`, nil, booking.NotConfirmed},
		{`{}`, nil, booking.ProbablyNotBooked},
		{`{"error":"upstream timeout"}`, nil, booking.ProbablyNotBooked},
		{`null`, nil, booking.ProbablyNotBooked},
		{`{}`, listOf(listed), booking.Confirmed},
	}
	for _, tt := range tests {
		f := newFakeAPI(t)
		f.create = answer(201, tt.body)
		f.listed = tt.listed
		res := f.book(t)
		if res.Outcome != tt.want {
			t.Errorf("201 %s, listed %v: outcome %s, want %s; seen %q", tt.body, tt.listed != nil, res.Outcome, tt.want, res.Seen)
		}
		if tt.want != booking.NotConfirmed && !errors.Is(res.Err, booking.ErrBadResponse) {
			t.Errorf("201 %s: Err = %v, want ErrBadResponse", tt.body, res.Err)
		}
		if n := f.postCount(); n != 1 {
			t.Errorf("201 %s: POST /bookings calls = %d, want 1", tt.body, n)
		}
	}
}

// §4 cancel: the body is empty (and not JSON), the ID goes into the path
// exactly, and a repeat cancel of an already-cancelled booking, answered
// 200 {cancelled: true} again, is Cancelled, not an error. The list, which
// never showed the booking, verifies neither.
func TestAPIRuleCancelRequestShapeAndRepeat(t *testing.T) {
	t.Parallel()
	const id = "bk+1:é@x"
	f := newFakeAPI(t)
	f.cancel = func(w http.ResponseWriter, _ *http.Request) { reply(w, 200, `{"cancelled":true}`) }
	c := f.client(t)
	for range 2 {
		res, err := c.Cancel(t.Context(), id)
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != booking.Cancelled || res.Verified {
			t.Fatalf("cancel = %+v; seen %q", res, res.Seen)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.posts) != 2 {
		t.Fatalf("cancel requests = %d, want 2", len(f.posts))
	}
	for i, r := range f.posts {
		if r.URL.Path != "/api/v1/bookings/"+id+"/cancel" {
			t.Errorf("path = %q, want the exact ID", r.URL.Path)
		}
		if f.bodies[i] != "" {
			t.Errorf("cancel body = %q, want none", f.bodies[i])
		}
		if ct := r.Header.Get("Content-Type"); strings.Contains(ct, "json") {
			t.Errorf("cancel Content-Type = %q", ct)
		}
		if r.Header.Get("Authorization") != "Bearer live_8c1f.region-eu.secretpart" {
			t.Errorf("Authorization = %q, want the key intact", r.Header.Get("Authorization"))
		}
	}
}

// §4 cancel: the 200 answer is {cancelled: true}, always true. A 200 that
// does not say cancelled: true is no such answer: the cancel is settled by
// the list, as after any unclear answer (§7 rule 3), and is not sent again.
func TestAPIRuleCancelAnsweredWithoutCancelledTrueIsSettledByTheList(t *testing.T) {
	t.Parallel()
	listed := entry("bk-1", "intro-call", fakeSlotStart, fakeSlotEnd, "ada@example.com")
	for _, body := range []string{`{}`, `{"cancelled":false}`, `{"cancelled":null}`} {
		for _, tt := range []struct {
			after    string // the list after the cancel
			list     func() string
			want     booking.Outcome
			verified bool // by the list
		}{
			{"still listed", listOf(listed), booking.NotCancelled, false},
			{"gone", listOf(), booking.Cancelled, true},
		} {
			t.Run(body+"/"+tt.after, func(t *testing.T) {
				t.Parallel()
				f := newFakeAPI(t)
				f.created, f.listed = true, listOf(listed)
				f.cancel = func(w http.ResponseWriter, _ *http.Request) {
					f.listed = tt.list
					reply(w, 200, body)
				}
				res, err := f.client(t).Cancel(t.Context(), "bk-1")
				if err != nil {
					t.Fatal(err)
				}
				if res.Outcome != tt.want || res.Verified != tt.verified || res.Reconciled != tt.verified {
					t.Errorf("200 %s, then %s: %s verified %v reconciled %v, want %s as the list tells; seen %q",
						body, tt.after, res.Outcome, res.Verified, res.Reconciled, tt.want, res.Seen)
				}
				if n := f.postCount(); n != 1 {
					t.Errorf("cancel calls = %d, want 1", n)
				}
			})
		}
	}
}

// §3 and §4 cancel: a booking of the key owner is cancelled whether or not
// it has started (the API sets no condition on its start), but GET
// /bookings lists only upcoming bookings (§4, §8), so a started booking's
// absence from the list proves nothing either way. The cancel is sent, once;
// the API's own cancelled: true makes it Cancelled, but not verified by the
// list; an unclear answer leaves it Unknown for a person to check (§7 rule
// 3), never Cancelled from the list, and not NotCancelled either. This holds
// for a booking that had started before the cancel (so it was never listed)
// and for one listed before the cancel that starts while it is in flight.
func TestAPIRuleCancelOfStartedBookingIsNotSettledByTheList(t *testing.T) {
	t.Parallel()
	faults := []struct {
		name      string
		fault     func(*bookingtest.Server)
		want      booking.Outcome
		cancelled bool // whether the sandbox then holds it cancelled
	}{
		{"answered", nil, booking.Cancelled, true},
		{"503 after it took effect", func(s *bookingtest.Server) {
			s.CommitThenFail(bookingtest.EndpointCancelBooking, bookingtest.HTMLError(503))
		}, booking.Unknown, true},
		{"503 before it took effect", func(s *bookingtest.Server) {
			s.FailNext(bookingtest.EndpointCancelBooking, bookingtest.HTMLError(503))
		}, booking.Unknown, false},
		{"dropped before it took effect", func(s *bookingtest.Server) {
			s.DropNext(bookingtest.EndpointCancelBooking)
		}, booking.Unknown, false},
	}
	timings := []struct {
		name        string
		start       time.Duration // the booking's start, from the clock's first reading
		inFlight    time.Duration // how far the clock moves while the cancel is sent
		listedFirst bool
	}{
		{"started before the cancel", -7 * time.Minute, 0, false},
		{"starts while the cancel is sent", time.Minute, 2 * time.Minute, true},
	}
	for _, tm := range timings {
		for _, ft := range faults {
			t.Run(tm.name+"/"+ft.name, func(t *testing.T) {
				t.Parallel()
				clock := fakeclock.New(monday)
				srv := bookingtest.NewServer(t, bookingtest.WithClock(clock.Now))
				id := srv.AddBooking(bookingtest.DemoOwner, booking30(monday.Add(tm.start)))
				front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					if r.Method == http.MethodPost {
						clock.Advance(tm.inFlight)
					}
					srv.Sandbox.ServeHTTP(w, r)
				}))
				t.Cleanup(front.Close)
				c := clientAt(t, front.URL, srv, booking.WithClock(clock.Now))
				list, err := c.Bookings(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				if listed := slices.ContainsFunc(list, func(b booking.Booking) bool { return b.ID == id }); listed != tm.listedFirst {
					t.Fatalf("listed before the cancel: %v, want %v", listed, tm.listedFirst)
				}
				if ft.fault != nil {
					ft.fault(srv)
				}
				res, err := c.Cancel(t.Context(), id)
				if err != nil {
					t.Fatal(err)
				}
				if res.Outcome != ft.want || res.Verified || res.Reconciled {
					t.Errorf("cancel = %s verified %v reconciled %v, want %s, not verified by the list; seen %q",
						res.Outcome, res.Verified, res.Reconciled, ft.want, res.Seen)
				}
				if res.NeedsHuman() != (ft.want == booking.Unknown) {
					t.Errorf("NeedsHuman() = %v for %s", res.NeedsHuman(), res.Outcome)
				}
				if n := calls(srv, bookingtest.EndpointCancelBooking); n != 1 {
					t.Errorf("cancel calls = %d, want 1: a started booking can be cancelled, and a write is never retried", n)
				}
				if got := cancelledInSandbox(t, srv, id); got != ft.cancelled {
					t.Errorf("sandbox holds it cancelled: %v, want %v", got, ft.cancelled)
				}
			})
		}
	}
}

// booking30 is a 30-minute booking of the sandbox's owner at start.
func booking30(start time.Time) bookingtest.Booking {
	ev, name, email := "consultation", "Ada Lovelace", "ada@example.com"
	return bookingtest.Booking{EventType: &ev, Start: start, End: start.Add(30 * time.Minute), BookerName: &name, BookerEmail: &email}
}

func cancelledInSandbox(t *testing.T, srv *bookingtest.Server, id string) bool {
	t.Helper()
	for _, b := range srv.Bookings(bookingtest.DemoOwner) {
		if b.ID == id {
			return b.Cancelled
		}
	}
	t.Fatalf("the sandbox does not hold %s", id)
	return false
}

// withStatus is a list entry with another status: "-" leaves the field out.
func withStatus(entry, status string) string {
	repl := `"status":` + fmt.Sprintf("%q", status) + `,`
	if status == "-" {
		repl = ""
	}
	return strings.Replace(entry, `"status":"confirmed",`, repl, 1)
}

// otherStatuses are statuses §2 and §3 rule out of a listing: the states
// the text names besides confirmed, and none at all.
var otherStatuses = []string{"cancelled", "pending", "-"}

// §2 Booking and §3: status is required and always confirmed in listings,
// and cancelled bookings are not listed by any listing. A list holding an
// entry with another status is not read as upcoming confirmed bookings at
// all: GET /bookings answers something the text rules out, and the client
// says so (ErrBadResponse), as for an entry without an ID. So nothing that
// settles by the list takes such an entry for a booking: a create is not
// confirmed by it, nor found already booked after a 409, nor refused as a
// repeat before sending (nothing is sent, as the list could not be
// checked); a cancel is not verified by it, nor called not cancelled.
func TestAPIRuleListedStatusOtherThanConfirmedIsNoBooking(t *testing.T) {
	t.Parallel()
	const receipt = `{"booking":{"booking_id":"bk-1","starts_at":"` + fakeSlotStart + `","ends_at":"` + fakeSlotEnd + `"}}`
	listed := entry("bk-1", "intro-call", fakeSlotStart, fakeSlotEnd, "ada@example.com")
	cancelThen := func(f *fakeAPI, status int, body string, list func() string) func(http.ResponseWriter, *http.Request) {
		return func(w http.ResponseWriter, _ *http.Request) {
			f.listed = list
			reply(w, status, body)
		}
	}
	for _, status := range otherStatuses {
		other := withStatus(listed, status)
		t.Run(status+"/list", func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.created, f.listed = true, listOf(entry("bk-0", "intro-call", "2026-03-24T08:00:00Z", "2026-03-24T08:15:00Z", "grace@example.com"), other)
			list, err := f.client(t).Bookings(t.Context())
			if !errors.Is(err, booking.ErrBadResponse) {
				t.Fatalf("Bookings() = %+v, %v; want ErrBadResponse", list, err)
			}
		})
		t.Run(status+"/create verified", func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.create, f.listed = answer(201, receipt), listOf(other)
			res := f.book(t)
			if res.Outcome != booking.Unknown || res.Verified || res.Booking != nil || !res.NeedsHuman() {
				t.Fatalf("a receipt listed %s: %s verified %v; seen %q", status, res.Outcome, res.Verified, res.Seen)
			}
		})
		t.Run(status+"/create after 409", func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.create, f.listed = answer(409, `{"error":"not booked","status":200}`), listOf(other)
			res := f.book(t)
			if res.Outcome != booking.NotBooked || res.Verified || res.Booking != nil {
				t.Fatalf("a 409 then listed %s: %s verified %v; seen %q", status, res.Outcome, res.Verified, res.Seen)
			}
			if n := f.postCount(); n != 1 {
				t.Errorf("POST /bookings calls = %d, want 1", n)
			}
		})
		t.Run(status+"/create already listed", func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.created, f.listed = true, listOf(other)
			c := f.client(t)
			res, err := c.Create(t.Context(), request(firstSlot(t, c, "intro-call")))
			if !errors.Is(err, booking.ErrBadResponse) || res != nil {
				t.Fatalf("create over a list holding it %s = %+v, %v; want nothing sent, ErrBadResponse", status, res, err)
			}
			if n := f.postCount(); n != 0 {
				t.Errorf("POST /bookings calls = %d, want 0: the repeat check could not be made", n)
			}
		})
		t.Run(status+"/cancel answered", func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.created, f.listed = true, listOf(listed)
			f.cancel = cancelThen(f, 200, `{"cancelled":true}`, listOf(other))
			res, err := f.client(t).Cancel(t.Context(), "bk-1")
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != booking.Cancelled || res.Verified || res.Listed != nil {
				t.Fatalf("cancelled, then listed %s: %s verified %v; seen %q", status, res.Outcome, res.Verified, res.Seen)
			}
		})
		t.Run(status+"/cancel unclear", func(t *testing.T) {
			t.Parallel()
			f := newFakeAPI(t)
			f.created, f.listed = true, listOf(listed)
			f.cancel = cancelThen(f, 503, `{"error":"unavailable"}`, listOf(other))
			res, err := f.client(t).Cancel(t.Context(), "bk-1")
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != booking.Unknown || res.Verified || !res.NeedsHuman() {
				t.Fatalf("an unclear cancel, then listed %s: %s verified %v; seen %q", status, res.Outcome, res.Verified, res.Seen)
			}
			if n := f.postCount(); n != 1 {
				t.Errorf("cancel calls = %d, want 1", n)
			}
		})
	}
}

// §4 reads and §9: GET /event-types and GET /bookings take no parameters,
// GET /slots only event_type (there are no from/to or timezone
// parameters), and unknown parameters are not assumed to work, so the
// client sends no other; each read is a GET without a body. An empty slots
// array means no slots are offered: no slots, not an error.
func TestAPIRuleReadsSendOnlyDocumentedParameters(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		sent []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		mu.Lock()
		sent = append(sent, fmt.Sprintf("%s %s?%s %q", r.Method, r.URL.Path, r.URL.RawQuery, raw))
		mu.Unlock()
		reply(w, 200, map[string]string{
			"/api/v1/event-types": `{"event_types":[]}`,
			"/api/v1/slots":       `{"slots":[]}`,
			"/api/v1/bookings":    `{"bookings":[]}`,
		}[r.URL.Path])
	}))
	t.Cleanup(srv.Close)
	c, err := booking.NewClient(srv.URL, mustKey(t, "live_8c1f.region-eu.secretpart"), booking.WithClock(fixed))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.EventTypes(t.Context()); err != nil {
		t.Fatal(err)
	}
	if slots, err := c.Slots(t.Context(), "intro-call"); err != nil || len(slots) != 0 {
		t.Errorf("empty slots array = %v, %v; want no slots and no error", slots, err)
	}
	if _, err := c.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`GET /api/v1/event-types? ""`,
		`GET /api/v1/slots?event_type=intro-call ""`,
		`GET /api/v1/bookings? ""`,
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(sent, want) {
		t.Errorf("requests sent:\n%s\nwant:\n%s", strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
}

// §7 rule 4: reads are retried with bounded exponential backoff and
// jitter. TestReadRetries holds each wait within its bound; here a read's
// waits differ, drawn at random below the bound, so that clients failing
// together do not retry together.
func TestAPIRuleReadRetriesAreJittered(t *testing.T) {
	t.Parallel()
	var (
		mu    sync.Mutex
		waits []time.Duration
	)
	sleep := func(_ context.Context, d time.Duration) error {
		mu.Lock()
		waits = append(waits, d)
		mu.Unlock()
		return nil
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reply(w, 503, `{"error":"unavailable"}`)
	}))
	t.Cleanup(srv.Close)
	c, err := booking.NewClient(srv.URL, mustKey(t, "live_8c1f.region-eu.secretpart"), booking.WithSleep(sleep),
		booking.WithBackoff(booking.Backoff{Attempts: 11, Base: time.Second, Max: time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.EventTypes(t.Context()); !errors.Is(err, booking.ErrUnavailable) {
		t.Fatalf("EventTypes = %v, want ErrUnavailable after the retries", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(waits) != 10 {
		t.Fatalf("waits = %v, want 10", waits)
	}
	for _, w := range waits {
		if w < 0 || w > time.Second {
			t.Errorf("wait %v outside [0, 1s]", w)
		}
	}
	if slices.Min(waits) == slices.Max(waits) {
		t.Errorf("waits %v all alike: no jitter", waits)
	}
}

// The real service keeps a booking's ID when its attendee reschedules it
// and lists it with event_type null from then on. Bookings gives it the
// event type it last listed for that ID; a booking it never listed with
// one (a legacy record) stays null.
func TestBookingsKeepTheEventTypeOfARescheduledBooking(t *testing.T) {
	t.Parallel()
	const later = "2026-03-25T09:00:00Z"
	var (
		mu   sync.Mutex
		list string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		reply(w, 200, list)
	}))
	t.Cleanup(srv.Close)
	c, err := booking.NewClient(srv.URL, mustKey(t, "live_8c1f.region-eu.secretpart"), booking.WithClock(fixed))
	if err != nil {
		t.Fatal(err)
	}
	typed := func(id, event, start string) string {
		return entry(id, event, start, start, "ada@example.com")
	}
	untyped := func(id, start string) string {
		return strings.Replace(typed(id, "x", start), `"event_type":"x"`, `"event_type":null`, 1)
	}
	read := func(entries ...string) map[string]booking.NullString {
		t.Helper()
		mu.Lock()
		list = `{"bookings":[` + strings.Join(entries, ",") + `]}`
		mu.Unlock()
		got, err := c.Bookings(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		types := map[string]booking.NullString{}
		for _, b := range got {
			types[b.ID] = b.EventType
		}
		return types
	}

	read(typed("moved", "consultation", fakeSlotStart), untyped("legacy", fakeSlotStart))
	got := read(untyped("moved", later), untyped("legacy", later))
	if got["moved"] != booking.Some("consultation") {
		t.Errorf("the rescheduled booking's event type = %+v, want consultation as listed before", got["moved"])
	}
	if got["legacy"].Valid {
		t.Errorf("a booking never listed with an event type got %+v", got["legacy"])
	}
	if got := read(untyped("moved", later)); got["moved"] != booking.Some("consultation") {
		t.Errorf("listed null twice: %+v, want consultation still", got["moved"])
	}
	// One list that leaves it out for a moment does not make the next
	// forget it.
	read()
	if got := read(untyped("moved", later)); got["moved"] != booking.Some("consultation") {
		t.Errorf("after one list without it: %+v, want consultation still", got["moved"])
	}
	// Two lists without it, and it is forgotten: what is kept is bounded.
	read()
	read()
	if got := read(untyped("moved", later)); got["moved"].Valid {
		t.Errorf("after two lists without it: %+v, want null", got["moved"])
	}
	// A listed event type wins over what was seen.
	read(typed("retyped", "intro-call", fakeSlotStart))
	if got := read(typed("retyped", "deep-dive", later)); got["retyped"] != booking.Some("deep-dive") {
		t.Errorf("listed deep-dive, got %+v", got["retyped"])
	}
}

// Against the sandbox, whose attendee reschedule lists the booking with
// event_type null as the real service does.
func TestBookingsKeepTheEventTypeAfterAnAttendeeReschedule(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slot := firstSlot(t, c, "consultation")
	id, err := srv.BookAsAttendee(bookingtest.DemoOwner, "consultation", slot.Start, "Ada Lovelace", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	to := srv.Slots(bookingtest.DemoOwner, "consultation")[3].Start
	if err := srv.MoveAsAttendee(id, to); err != nil {
		t.Fatal(err)
	}
	list, err := c.Bookings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range list {
		if b.ID == id && (!b.Start.Equal(to) || b.EventType != booking.Some("consultation")) {
			t.Errorf("moved booking listed as %+v, want at %v, still a consultation", b, to)
		}
	}
	// A client that never listed it before the move cannot know.
	fresh := clientAt(t, srv.URL, srv)
	list, err = fresh.Bookings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range list {
		if b.ID == id && b.EventType.Valid {
			t.Errorf("a client that never saw its event type lists %+v", b.EventType)
		}
	}
}
