package bookingtest

import (
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/testutil"
)

// freeSlot is a free consultation slot on Tue 24 March, 10:00 in Berlin.
const freeSlot = "2026-03-24T09:00:00Z"

var bookingIDFormat = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// receiptFormat is how bookings and receipts write times: UTC with
// milliseconds, unlike slots.
var receiptFormat = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func TestCreateBooking(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	slot := listSlots(t, srv, DemoKey, "consultation")[0]
	form := url.Values{
		"event_type":     {"consultation"},
		"start":          {slot.Start},
		"end":            {slot.End},
		"name":           {"Mary Jackson"},
		"email":          {"mary.jackson@example.com"},
		"booker_tz":      {"America/New_York"},
		"q:booking-note": {"Agenda: wind tunnels"},
	}
	r := post(t, srv, DemoKey, "/api/v1/bookings", form)
	var receipt wireReceipt
	r.decode(t, &receipt)
	if r.status != http.StatusCreated || receipt.Booking == nil || !bookingIDFormat.MatchString(receipt.Booking.BookingID) {
		t.Fatalf("got %d %s", r.status, r.body)
	}
	// Receipts are UTC with milliseconds, not the slots' form.
	if slot.Start != "2026-03-23T10:30:00Z" || receipt.Booking.StartsAt != "2026-03-23T10:30:00.000Z" || receipt.Booking.EndsAt != "2026-03-23T11:00:00.000Z" {
		t.Errorf("receipt times %+v, slot %+v", receipt.Booking, slot)
	}

	listed := listBookings(t, srv, DemoKey)
	if b := listed[0]; b.BookingID != receipt.Booking.BookingID || b.StartsAt != receipt.Booking.StartsAt || b.EndsAt != receipt.Booking.EndsAt ||
		*b.BookerEmail != "mary.jackson@example.com" || *b.EventType != "consultation" || *b.BookerName != "Mary Jackson" {
		t.Errorf("listed first %+v", b)
	}
	if slotStarts(listSlots(t, srv, DemoKey, "consultation"))[slot.Start] {
		t.Error("booked slot still offered")
	}
	if slotStarts(listSlots(t, srv, DemoKey, "intro-call"))["2026-03-23T10:45:00Z"] {
		t.Error("slot of another type overlapping the booking still offered")
	}
	var stored *Booking
	for _, b := range srv.Bookings(DemoOwner) {
		if b.ID == receipt.Booking.BookingID {
			stored = &b
		}
	}
	if stored == nil || stored.BookerTZ != "America/New_York" || stored.Note != "Agenda: wind tunnels" || stored.Cancelled {
		t.Errorf("stored %+v", stored)
	}

	// Someone else for the same slot: it is taken.
	other := url.Values{}
	maps.Copy(other, form)
	other.Set("email", "katherine.johnson@example.com")
	post(t, srv, DemoKey, "/api/v1/bookings", other).want(t, http.StatusConflict, `{"error":"not booked","status":409}`)
	// Same event, start and email again: a repeat, which the body status tells apart.
	post(t, srv, DemoKey, "/api/v1/bookings", form).want(t, http.StatusConflict, `{"error":"not booked","status":200}`)
}

func TestCreateBookingOutcomes(t *testing.T) {
	t.Parallel()
	const (
		taken   = `{"error":"not booked","status":409}`
		refused = `{"error":"not booked","status":200}`
	)
	withForm := func(f url.Values, kv ...string) url.Values {
		for i := 0; i < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return f
	}
	// intake's form has a required note, and review's a required question.
	asking := func(s *Server) {
		s.AddEventType(DemoOwner, EventType{Slug: "intake", Title: "Intake", DurationMinutes: 30, RequiresNote: true})
		s.AddEventType(DemoOwner, EventType{Slug: "review", Title: "Review", DurationMinutes: 30, RequiredQuestions: []string{"company"}})
	}
	for _, tc := range []struct {
		name   string
		setup  func(*Server) // the owner's settings, before the create
		key    string
		form   url.Values
		status int
		body   string // "" checks a receipt instead
	}{
		{name: "solo", form: bookForm("consultation", freeSlot, 30), status: 201},
		{name: "collective", form: bookForm("board-review", "2026-03-24T08:45:00Z", 45), status: 201},
		// The seeded team-sync's teammate has fewer bookings than the owner.
		{name: "round robin to a teammate", form: bookForm("team-sync", freeSlot, 30), status: 201, body: `{"booking":null}`},
		{name: "same instant with milliseconds", form: func() url.Values {
			f := bookForm("consultation", freeSlot, 30)
			f.Set("start", "2026-03-24T09:00:00.000Z")
			f.Set("end", "2026-03-24T09:30:00.000Z")
			return f
		}(), status: 409, body: taken},
		{name: "same instant in another offset", form: func() url.Values {
			f := bookForm("consultation", freeSlot, 30)
			f.Set("start", "2026-03-24T10:00:00+01:00")
			f.Set("end", "2026-03-24T05:30:00-04:00")
			return f
		}(), status: 409, body: taken},
		{name: "end written otherwise", form: func() url.Values {
			f := bookForm("consultation", freeSlot, 30)
			f.Set("end", "2026-03-24T09:30:00+00:00")
			return f
		}(), status: 409, body: taken},
		{name: "taken by another type", form: bookForm("consultation", "2026-03-24T08:00:00Z", 30), status: 409, body: taken},
		{name: "end of another slot", form: bookForm("consultation", freeSlot, 60), status: 409, body: taken},
		{name: "not aligned", form: bookForm("consultation", "2026-03-24T09:10:00Z", 30), status: 409, body: taken},
		{name: "in the past", form: bookForm("consultation", "2026-03-23T09:00:00Z", 30), status: 409, body: taken},
		{name: "weekend", form: bookForm("consultation", "2026-03-28T09:00:00Z", 30), status: 409, body: taken},
		{name: "beyond the window", form: bookForm("consultation", "2026-04-07T08:00:00Z", 30), status: 409, body: taken},
		{name: "beyond the event's period", form: bookForm("deep-dive", "2026-03-31T08:00:00Z", 60), status: 409, body: taken},
		{name: "repeat of a cancelled booking", form: func() url.Values {
			// John Backus's consultation, cancelled; its slot is offered again.
			f := bookForm("consultation", "2026-03-25T12:00:00Z", 30)
			f.Set("email", "john.backus@example.com")
			return f
		}(), status: 409, body: refused},
		{name: "repeat of a confirmed booking", form: func() url.Values {
			f := bookForm("intro-call", "2026-03-24T08:00:00Z", 15)
			f.Set("email", "ada.lovelace@example.com")
			return f
		}(), status: 409, body: refused},
		{name: "needs email verification", form: bookForm("office-hours", freeSlot, 30), status: 409, body: refused},
		{name: "unknown event type", form: bookForm("nope", freeSlot, 30), status: 404, body: `{"error":"no such event type"}`},
		{name: "removed event type", form: bookForm("legacy-demo", freeSlot, 30), status: 404, body: `{"error":"no such event type"}`},
		{name: "schedule ID is not a selector", form: bookForm("sch_1002", freeSlot, 30), status: 404, body: `{"error":"no such event type"}`},
		{name: "other owner's event type", form: bookForm("other-call", freeSlot, 30), status: 404, body: `{"error":"no such event type"}`},
		{name: "other owner books own type", key: OtherKey, form: bookForm("other-call", "2026-03-24T10:00:00Z", 30), status: 201},
		// The owner's block list: an address or a whole domain, in any case.
		{name: "attendee's address blocked", setup: func(s *Server) { s.SetBlocked(DemoOwner, "Mary.Jackson@example.com") },
			form: bookForm("consultation", freeSlot, 30), status: 403, body: `{"error":"not booked","status":403}`},
		{name: "attendee's domain blocked", setup: func(s *Server) { s.SetBlocked(DemoOwner, "@EXAMPLE.com") },
			form: bookForm("consultation", freeSlot, 30), status: 403, body: `{"error":"not booked","status":403}`},
		{name: "another domain blocked", setup: func(s *Server) { s.SetBlocked(DemoOwner, "example.org", "eve@example.com") },
			form: bookForm("consultation", freeSlot, 30), status: 201},
		// The ceiling of confirmed bookings: a full service refuses, in JSON.
		{name: "calendar full", setup: func(s *Server) { s.Full(DemoOwner) },
			form: bookForm("consultation", freeSlot, 30), status: 503, body: `{"error":"not booked","status":503}`},
		{name: "calendar under its ceiling", setup: func(s *Server) { s.SetCeiling(DemoOwner, 100) },
			form: bookForm("consultation", freeSlot, 30), status: 201},
		{name: "ceiling removed", setup: func(s *Server) { s.Full(DemoOwner); s.SetCeiling(DemoOwner, -1) },
			form: bookForm("consultation", freeSlot, 30), status: 201},
		// Required questions, which the API cannot name.
		{name: "required note missing", setup: asking, form: bookForm("intake", freeSlot, 30), status: 400, body: `{"error":"not booked","status":400}`},
		{name: "required note blank", setup: asking, form: withForm(bookForm("intake", freeSlot, 30), "q:booking-note", "  "), status: 400, body: `{"error":"not booked","status":400}`},
		{name: "required note given", setup: asking, form: withForm(bookForm("intake", freeSlot, 30), "q:booking-note", "About the intake"), status: 201},
		{name: "required question unanswered", setup: asking, form: withForm(bookForm("review", freeSlot, 30), "q:booking-note", "a note is no answer"), status: 400, body: `{"error":"not booked","status":400}`},
		{name: "required question answered", setup: asking, form: withForm(bookForm("review", freeSlot, 30), "q:company", "Analytical Engines"), status: 201},
		// An event type's hour used up by other clients: 429, no Retry-After;
		// other event types still book.
		{name: "event type's hour used up", setup: func(s *Server) { s.ExhaustEventLimit(DemoOwner, "consultation") },
			form: bookForm("consultation", freeSlot, 30), status: 429, body: `{"error":"not booked","status":429}`},
		{name: "another event type's hour used up", setup: func(s *Server) { s.ExhaustEventLimit(DemoOwner, "intro-call") },
			form: bookForm("consultation", freeSlot, 30), status: 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newTestServer(t)
			if tc.setup != nil {
				tc.setup(srv)
			}
			key := tc.key
			if key == "" {
				key = DemoKey
			}
			owner := map[string]string{DemoKey: DemoOwner, OtherKey: OtherOwner}[key]
			before := len(srv.Bookings(owner))
			r := post(t, srv, key, "/api/v1/bookings", tc.form)
			stored := len(srv.Bookings(owner)) - before
			if tc.body != "" {
				r.want(t, tc.status, tc.body)
				if ra := r.header.Get("Retry-After"); ra != "" {
					t.Errorf("Retry-After %q: the service sends none", ra)
				}
				if stored != 0 {
					t.Errorf("%d bookings stored for the owner", stored)
				}
				return
			}
			var receipt wireReceipt
			r.decode(t, &receipt)
			if r.status != tc.status || receipt.Booking == nil || stored != 1 {
				t.Fatalf("got %d %s, %d stored", r.status, r.body, stored)
			}
			if !receiptFormat.MatchString(receipt.Booking.StartsAt) || !receiptFormat.MatchString(receipt.Booking.EndsAt) ||
				!mustTime(receipt.Booking.StartsAt).Equal(mustTime(tc.form.Get("start"))) {
				t.Errorf("receipt %+v for %s", receipt.Booking, tc.form.Get("start"))
			}
		})
	}
}

// An event that needs the attendee to verify their email is never booked
// through the API, and its slot is not held; the link the attendee is
// mailed books it later, while the time is free.
func TestCreateNeedsEmailVerification(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	for range 2 {
		post(t, srv, DemoKey, "/api/v1/bookings", bookForm("office-hours", freeSlot, 30)).want(t, http.StatusConflict, `{"error":"not booked","status":200}`)
	}
	if n := len(srv.Bookings(DemoOwner)); n != len(demoBookings) {
		t.Errorf("%d bookings, want the %d seeded", n, len(demoBookings))
	}
	if !slotStarts(listSlots(t, srv, DemoKey, "office-hours"))[freeSlot] {
		t.Error("slot no longer offered")
	}
	if _, err := srv.ConfirmEmail(DemoOwner, "office-hours", mustTime(freeSlot), "grace@example.com"); !errors.Is(err, ErrNoConfirmation) {
		t.Errorf("a link never mailed: %v", err)
	}
	if p := srv.Pending(DemoOwner); len(p) != 2 || *p[1].EventType != "office-hours" || !p[1].Start.Equal(mustTime(freeSlot)) ||
		!p[1].End.Equal(mustTime("2026-03-24T09:30:00Z")) || *p[1].BookerEmail != "mary.jackson@example.com" || p[1].ID != "" {
		t.Fatalf("pending confirmations: %+v", p)
	}

	// The attendee follows the link: booked, listed, and a repeat from then on.
	id, err := srv.ConfirmEmail(DemoOwner, "office-hours", mustTime(freeSlot), "MARY.JACKSON@example.com")
	if err != nil {
		t.Fatal(err)
	}
	b := findListed(t, srv, id)
	if b == nil || *b.EventType != "office-hours" || *b.BookerEmail != "mary.jackson@example.com" || b.StartsAt != "2026-03-24T09:00:00.000Z" {
		t.Fatalf("the confirmed booking is listed as %+v", b)
	}
	post(t, srv, DemoKey, "/api/v1/bookings", bookForm("office-hours", freeSlot, 30)).want(t, http.StatusConflict, `{"error":"not booked","status":200}`)
	if p := srv.Pending(DemoOwner); len(p) != 2 {
		t.Errorf("pending after one was confirmed and one more asked: %d, want 2", len(p))
	}
	// The second create's link books nothing more: the time is taken.
	if _, err := srv.ConfirmEmail(DemoOwner, "office-hours", mustTime(freeSlot), "mary.jackson@example.com"); !errors.Is(err, ErrNotOffered) {
		t.Errorf("a second link for a time now taken: %v", err)
	}
	if r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", "2026-03-24T10:00:00Z", 30)); r.status != http.StatusCreated {
		t.Errorf("another event at another time: %d %s", r.status, r.body)
	}
}

// A repeat (same event type, start and attendee email) is refused with body
// status 200 for good, even once the first booking is cancelled and its slot
// is free again.
func TestCreateRepeatAfterCancel(t *testing.T) {
	t.Parallel()
	srv, clock := newTestServer(t)
	const refused = `{"error":"not booked","status":200}`
	form := bookForm("consultation", freeSlot, 30)
	r := post(t, srv, DemoKey, "/api/v1/bookings", form)
	var receipt wireReceipt
	r.decode(t, &receipt)
	if r.status != http.StatusCreated || receipt.Booking == nil {
		t.Fatalf("got %d %s", r.status, r.body)
	}
	post(t, srv, DemoKey, "/api/v1/bookings/"+receipt.Booking.BookingID+"/cancel", nil).want(t, http.StatusOK, `{"cancelled":true}`)
	if !slotStarts(listSlots(t, srv, DemoKey, "consultation"))[freeSlot] {
		t.Fatal("the cancelled booking's slot is not offered again")
	}
	for _, advance := range []time.Duration{0, time.Hour, 20 * time.Hour} {
		clock.Advance(advance)
		post(t, srv, DemoKey, "/api/v1/bookings", form).want(t, http.StatusConflict, refused)
	}
	// The slot itself is free: another attendee gets it, and the same
	// attendee gets another time.
	other := bookForm("consultation", freeSlot, 30)
	other.Set("email", "dorothy.vaughan@example.com")
	if r := post(t, srv, DemoKey, "/api/v1/bookings", other); r.status != http.StatusCreated {
		t.Errorf("another attendee: %d %s", r.status, r.body)
	}
	if r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", "2026-03-24T10:00:00Z", 30)); r.status != http.StatusCreated {
		t.Errorf("the same attendee at another time: %d %s", r.status, r.body)
	}
}

func TestCreateTeamEvents(t *testing.T) {
	t.Parallel()
	// Four free consultation-length slots on Tuesday 24 March.
	starts := []string{freeSlot, "2026-03-24T10:00:00Z", "2026-03-24T10:30:00Z", "2026-03-24T11:00:00Z"}

	t.Run("round robin to the free host with the fewest upcoming bookings", func(t *testing.T) {
		t.Parallel()
		srv, _ := newTestServer(t)
		srv.AddEventType(DemoOwner, EventType{Slug: "rota", Title: "Rota", DurationMinutes: 30, Kind: KindRoundRobin,
			Hosts: []string{DemoOwner, "host_b", "host_c"}})
		srv.SetLimits(0, 0)
		book := func(start, email string) string {
			t.Helper()
			f := bookForm("rota", start, 30)
			f.Set("email", email)
			r := post(t, srv, DemoKey, "/api/v1/bookings", f)
			if r.status != http.StatusCreated {
				t.Fatalf("%s for %s: %d %s", start, email, r.status, r.body)
			}
			var receipt wireReceipt
			r.decode(t, &receipt)
			if receipt.Booking == nil {
				return "null"
			}
			return receipt.Booking.StartsAt
		}
		// The owner has the seeded bookings; b and c have none, b first on
		// a tie; then c has fewer.
		got := []string{book(starts[0], "a@example.com"), book(starts[1], "b@example.com"), book(starts[2], "c@example.com")}
		if want := []string{"null", "null", "null"}; !slices.Equal(got, want) {
			t.Fatalf("receipts %q, want %q", got, want)
		}
		hostOf := func(host string) []string {
			var out []string
			for _, b := range srv.Bookings(host) {
				out = append(out, slotTime(b.Start))
			}
			return out
		}
		if b, c := hostOf("host_b"), hostOf("host_c"); !slices.Equal(b, []string{starts[0], starts[2]}) || !slices.Equal(c, []string{starts[1]}) {
			t.Fatalf("host_b holds %q, host_c %q", b, c)
		}
		// At 09:00 b is busy: c, though it is as busy as b otherwise; then
		// only the owner is free, whatever it holds.
		if got := book(starts[0], "d@example.com"); got != "null" || !slices.Contains(hostOf("host_c"), starts[0]) {
			t.Fatalf("second booking at 09:00: %s, host_c holds %q", got, hostOf("host_c"))
		}
		if got := book(starts[0], "e@example.com"); got != "2026-03-24T09:00:00.000Z" {
			t.Fatalf("third booking at 09:00: %s, want the owner's receipt", got)
		}
		// With every host busy, the time is no longer offered and is taken.
		if slotStarts(listSlots(t, srv, DemoKey, "rota"))[starts[0]] {
			t.Error("a time no host is free at is offered")
		}
		f := bookForm("rota", starts[0], 30)
		f.Set("email", "f@example.com")
		post(t, srv, DemoKey, "/api/v1/bookings", f).want(t, http.StatusConflict, `{"error":"not booked","status":409}`)
		// A teammate's booking is invisible to the key: not listed, not cancellable.
		listed := bookingIDs(listBookings(t, srv, DemoKey))
		for _, host := range []string{"host_b", "host_c"} {
			for _, b := range srv.Bookings(host) {
				if slices.Contains(listed, b.ID) {
					t.Errorf("teammate's booking %s listed", b.ID)
				}
				post(t, srv, DemoKey, "/api/v1/bookings/"+b.ID+"/cancel", nil).want(t, http.StatusNotFound, `{"error":"no such booking"}`)
			}
		}
		// A teammate's booking does not fill the owner's calendar.
		if !slotStarts(listSlots(t, srv, DemoKey, "consultation"))[starts[1]] {
			t.Error("slot given to a teammate no longer offered")
		}
	})

	t.Run("round robin without hosts is the owner's", func(t *testing.T) {
		t.Parallel()
		srv, _ := newTestServer(t)
		srv.AddEventType(DemoOwner, EventType{Slug: "rota", Title: "Rota", DurationMinutes: 30, Kind: KindRoundRobin})
		for _, st := range starts[:2] {
			r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("rota", st, 30))
			var receipt wireReceipt
			r.decode(t, &receipt)
			if r.status != http.StatusCreated || receipt.Booking == nil {
				t.Errorf("%s: %d %s", st, r.status, r.body)
			}
		}
	})

	t.Run("seeded team-sync goes to the teammate, who has fewer bookings", func(t *testing.T) {
		t.Parallel()
		srv, _ := newTestServer(t)
		for _, st := range starts {
			post(t, srv, DemoKey, "/api/v1/bookings", bookForm("team-sync", st, 30)).want(t, http.StatusCreated, `{"booking":null}`)
		}
		if n := len(srv.Bookings(DemoTeammate)); n != len(starts) {
			t.Errorf("%d bookings for the teammate, want %d", n, len(starts))
		}
	})

	t.Run("collective is the owner's", func(t *testing.T) {
		t.Parallel()
		srv, _ := newTestServer(t)
		r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("board-review", "2026-03-24T08:45:00Z", 45))
		var receipt wireReceipt
		r.decode(t, &receipt)
		if r.status != http.StatusCreated || receipt.Booking == nil {
			t.Fatalf("got %d %s", r.status, r.body)
		}
		if !slices.Contains(bookingIDs(listBookings(t, srv, DemoKey)), receipt.Booking.BookingID) {
			t.Error("collective booking not listed")
		}
	})
}

func TestCreateBookingValidation(t *testing.T) {
	t.Parallel()
	const (
		form    = "application/x-www-form-urlencoded"
		invalid = `{"error":"not booked","status":400}`
	)
	with := func(k, v string) url.Values {
		f := bookForm("consultation", freeSlot, 30)
		f.Set(k, v)
		return f
	}
	without := func(k string) url.Values {
		f := bookForm("consultation", freeSlot, 30)
		f.Del(k)
		return f
	}
	valid := bookForm("consultation", freeSlot, 30).Encode()
	emoji := func(n int) string { return strings.Repeat("😀", n) }
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
		want                    string               // the body of a refusal
		stored                  func(Booking) string // checks a 201's booking: "" when right
	}{
		{name: "valid", contentType: form, body: valid, status: 201, stored: func(b Booking) string {
			return unless(b.BookerTZ == "UTC" && b.Note == "", "booker_tz %q note %q, want UTC and none", b.BookerTZ, b.Note)
		}},
		{name: "charset parameter", contentType: form + "; charset=utf-8", body: valid, status: 201},
		{name: "booker_tz", contentType: form, body: with("booker_tz", "Asia/Kolkata").Encode(), status: 201, stored: func(b Booking) string {
			return unless(b.BookerTZ == "Asia/Kolkata", "booker_tz %q", b.BookerTZ)
		}},
		{name: "any time zone name", contentType: form, body: with("booker_tz", "Mars/Base").Encode(), status: 201, stored: func(b Booking) string {
			return unless(b.BookerTZ == "Mars/Base", "booker_tz %q", b.BookerTZ)
		}},
		{name: "any email", contentType: form, body: with("email", "not-an-email").Encode(), status: 201, stored: func(b Booking) string {
			return unless(*b.BookerEmail == "not-an-email", "email %q", *b.BookerEmail)
		}},
		{name: "unknown fields are ignored", contentType: form, body: with("guests", "amy@example.com").Encode() + "&timeZone=UTC&q:=x", status: 201, stored: func(b Booking) string {
			return unless(len(b.Answers) == 0, "answers %v", b.Answers)
		}},
		{name: "custom answer and location", contentType: form, body: with("q:company", "NASA").Encode() + "&location_option=" + url.QueryEscape("integrations:daily"), status: 201, stored: func(b Booking) string {
			return unless(b.Answers["company"] == "NASA" && b.LocationOption == "integrations:daily", "answers %v location %q", b.Answers, b.LocationOption)
		}},
		{name: "note of 2000 characters", contentType: form, body: with("q:booking-note", strings.Repeat("a", 2000)).Encode(), status: 201, stored: func(b Booking) string {
			return unless(b.Note == strings.Repeat("a", 2000), "note of %d bytes", len(b.Note))
		}},
		{name: "note of 2001 characters is cut", contentType: form, body: with("q:booking-note", strings.Repeat("a", 2001)).Encode(), status: 201, stored: func(b Booking) string {
			return unless(b.Note == strings.Repeat("a", 2000), "note of %d bytes", len(b.Note))
		}},
		{name: "note of 1000 emoji is 2000 UTF-16 units", contentType: form, body: with("q:booking-note", emoji(1000)).Encode(), status: 201, stored: func(b Booking) string {
			return unless(b.Note == emoji(1000), "note of %d bytes", len(b.Note))
		}},
		{name: "note of 1001 emoji is cut to 1000", contentType: form, body: with("q:booking-note", emoji(1001)).Encode(), status: 201, stored: func(b Booking) string {
			return unless(b.Note == emoji(1000), "note of %d bytes", len(b.Note))
		}},
		{name: "a cut never splits an emoji", contentType: form, body: with("q:booking-note", emoji(999)+"a"+emoji(1)).Encode(), status: 201, stored: func(b Booking) string {
			return unless(b.Note == emoji(999)+"a", "note of %d bytes", len(b.Note))
		}},
		{name: "note dropped when the event asks for none", contentType: form, body: func() string {
			f := bookForm("deep-dive", "2026-03-24T10:00:00Z", 60)
			f.Set("q:booking-note", "Agenda: orbits")
			return f.Encode()
		}(), status: 201, stored: func(b Booking) string {
			return unless(b.Note == "", "note %q kept", b.Note)
		}},
		// Upstream reads the body as a form whatever the Content-Type says.
		{name: "form body under another Content-Type", contentType: "text/plain", body: valid, status: 201},
		{name: "form body without Content-Type", contentType: "", body: valid, status: 201},

		{name: "JSON body", contentType: "application/json", body: `{"event_type":"consultation","start":"` + freeSlot + `","end":"2026-03-24T09:30:00Z","name":"Mary","email":"mary@example.com"}`,
			status: 404, want: `{"error":"no such event type"}`},
		{name: "missing event_type", contentType: form, body: without("event_type").Encode(), status: 404, want: `{"error":"no such event type"}`},

		{name: "malformed form", contentType: form, body: valid + "&bad=%zz", status: 400, want: invalid},
		{name: "repeated field", contentType: form, body: valid + "&start=" + url.QueryEscape(freeSlot), status: 400, want: invalid},
		{name: "missing start", contentType: form, body: without("start").Encode(), status: 400, want: invalid},
		{name: "missing end", contentType: form, body: without("end").Encode(), status: 400, want: invalid},
		{name: "missing name", contentType: form, body: without("name").Encode(), status: 400, want: invalid},
		{name: "blank name", contentType: form, body: with("name", "   ").Encode(), status: 400, want: invalid},
		{name: "missing email", contentType: form, body: without("email").Encode(), status: 400, want: invalid},
		{name: "start not RFC 3339", contentType: form, body: with("start", "tomorrow 10am").Encode(), status: 400, want: invalid},
		{name: "start without zone", contentType: form, body: with("start", "2026-03-24T09:00:00").Encode(), status: 400, want: invalid},
		{name: "end as a date", contentType: form, body: with("end", "2026-03-24").Encode(), status: 400, want: invalid},

		{name: "over 64 KiB", contentType: form, body: with("q:booking-note", strings.Repeat("a", 64<<10)).Encode(), status: 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newTestServer(t)
			srv.SetLimits(0, 0)
			before := map[string]bool{}
			for _, b := range srv.Bookings(DemoOwner) {
				before[b.ID] = true
			}
			r := send(t, srv, DemoKey, http.MethodPost, "/api/v1/bookings", tc.contentType, strings.NewReader(tc.body))
			var made []Booking
			for _, b := range srv.Bookings(DemoOwner) {
				if !before[b.ID] {
					made = append(made, b)
				}
			}
			switch tc.status {
			case 201:
				var receipt wireReceipt
				r.decode(t, &receipt)
				if r.status != 201 || receipt.Booking == nil || len(made) != 1 || made[0].ID != receipt.Booking.BookingID {
					t.Fatalf("got %d %s, %d stored", r.status, r.body, len(made))
				}
				if tc.stored != nil {
					if msg := tc.stored(made[0]); msg != "" {
						t.Error(msg)
					}
				}
			case 413:
				if r.status != 413 || r.text() != "request too large" || r.header.Get("Content-Type") != "text/plain" {
					t.Errorf("got %d %q %q", r.status, r.header.Get("Content-Type"), r.body)
				}
			default:
				r.want(t, tc.status, tc.want)
			}
			if tc.status != 201 && len(made) != 0 {
				t.Errorf("%d bookings stored", len(made))
			}
		})
	}
}

// unless returns the formatted message when ok is false, else "".
func unless(ok bool, format string, args ...any) string {
	if ok {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

// A body over the cap is refused before the key is looked at, and is not an
// attempt the rate limits count.
func TestCreateTooLargeBeforeKey(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	huge := bookForm("consultation", freeSlot, 30)
	huge.Set("q:booking-note", strings.Repeat("a", 64<<10))
	for _, key := range []string{"", "sandbox_wrong_key_000000", DemoKey, DemoKey, DemoKey, DemoKey} {
		r := post(t, srv, key, "/api/v1/bookings", huge)
		if r.status != http.StatusRequestEntityTooLarge || r.text() != "request too large" || r.header.Get("Content-Type") != "text/plain" {
			t.Fatalf("key %v: got %d %q %q", key != "", r.status, r.header.Get("Content-Type"), r.body)
		}
		// In the service's words, not net/http's "Request Entity Too Large".
		if r.statusLine != "413 Payload Too Large" || r.header.Get("Date") == "" {
			t.Errorf("key %v: status line %q, Date %q; want 413 Payload Too Large, dated", key != "", r.statusLine, r.header.Get("Date"))
		}
	}
	// The limit of 5 a minute is untouched.
	for i := range DefaultPerIPPerMinute {
		if r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", freeSlot, 30)); r.status == http.StatusTooManyRequests {
			t.Fatalf("attempt %d limited", i+1)
		}
	}
	// Just under the cap is read.
	f := bookForm("consultation", "2026-03-24T10:00:00Z", 30)
	f.Set("q:booking-note", "")
	pad := 64<<10 - len(f.Encode())
	f.Set("q:booking-note", strings.Repeat("a", pad))
	srv.SetLimits(0, 0)
	if r := post(t, srv, DemoKey, "/api/v1/bookings", f); r.status != http.StatusCreated {
		t.Errorf("body of exactly 64 KiB: %d %s", r.status, r.body)
	}
}

func TestRateLimitPerIP(t *testing.T) {
	t.Parallel()
	srv, clock := newTestServer(t)
	const limited = `{"error":"not booked","status":429}`
	huge := bookForm("consultation", freeSlot, 30)
	huge.Set("q:booking-note", strings.Repeat("a", 64<<10))
	// Failed attempts of every kind count once the event type is known; an
	// unknown one and a body over the cap do not.
	for i, tc := range []struct {
		form   url.Values
		status int
	}{
		{without(bookForm("consultation", freeSlot, 30), "name"), 400},
		{bookForm("nope", freeSlot, 30), 404},
		{bookForm("consultation", "2026-03-24T08:00:00Z", 30), 409},
		{huge, 413},
		{bookForm("team-sync", freeSlot, 30), 201}, // with a null booking
		{bookForm("consultation", "2026-03-28T09:00:00Z", 30), 409},
		{bookForm("legacy-demo", freeSlot, 30), 404},
		{bookForm("consultation", freeSlot, 30), 201},
	} {
		if r := post(t, srv, DemoKey, "/api/v1/bookings", tc.form); r.status != tc.status {
			t.Fatalf("attempt %d: %d %s, want %d", i+1, r.status, r.body, tc.status)
		}
	}
	next := bookForm("consultation", "2026-03-24T10:00:00Z", 30)
	r := post(t, srv, DemoKey, "/api/v1/bookings", next)
	r.want(t, http.StatusTooManyRequests, limited)
	if ra, ok := r.header["Retry-After"]; ok {
		t.Errorf("Retry-After %q sent", ra)
	}
	// An unknown event type is answered before the limit.
	post(t, srv, DemoKey, "/api/v1/bookings", bookForm("nope", freeSlot, 30)).want(t, http.StatusNotFound, `{"error":"no such event type"}`)

	clock.Advance(40 * time.Second)
	post(t, srv, DemoKey, "/api/v1/bookings", next).want(t, http.StatusTooManyRequests, limited)

	// Another client IP has its own budget.
	req := httptest.NewRequestWithContext(t.Context(), http.MethodPost, "/api/v1/bookings", strings.NewReader(next.Encode()))
	req.RemoteAddr = "192.0.2.7:40000"
	req.Header.Set("Authorization", "Bearer "+DemoKey)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Errorf("other IP: %d %s", rec.Code, rec.Body)
	}

	// Reads and cancels are not limited.
	get(t, srv, DemoKey, "/api/v1/event-types").decode(t, &struct{}{})
	if r := post(t, srv, DemoKey, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000002/cancel", nil); r.status != http.StatusOK {
		t.Errorf("cancel: %d", r.status)
	}

	clock.Advance(20 * time.Second) // the window slides past the first attempt
	r = post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", "2026-03-24T10:30:00Z", 30))
	if r.status != http.StatusCreated {
		t.Errorf("after the window: %d %s", r.status, r.body)
	}
}

func without(f url.Values, k string) url.Values {
	f.Del(k)
	return f
}

func TestRateLimitPerEvent(t *testing.T) {
	t.Parallel()
	srv, clock := newTestServer(t)
	srv.SetLimits(100, 20)
	for i := range 20 {
		// Failed attempts count.
		if r := post(t, srv, DemoKey, "/api/v1/bookings", without(bookForm("consultation", freeSlot, 30), "name")); r.status != http.StatusBadRequest {
			t.Fatalf("attempt %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", freeSlot, 30))
	r.want(t, http.StatusTooManyRequests, `{"error":"not booked","status":429}`)
	if ra, ok := r.header["Retry-After"]; ok {
		t.Errorf("event limit sent Retry-After %q", ra)
	}
	// Other event types are not affected.
	if r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("intro-call", freeSlot, 15)); r.status != http.StatusCreated {
		t.Errorf("other event type: %d %s", r.status, r.body)
	}
	clock.Advance(59 * time.Minute)
	if r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", "2026-03-24T10:00:00Z", 30)); r.status != http.StatusTooManyRequests {
		t.Errorf("after 59 minutes: %d", r.status)
	}
	clock.Advance(time.Minute)
	if r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", "2026-03-24T10:00:00Z", 30)); r.status != http.StatusCreated {
		t.Errorf("after an hour: %d %s", r.status, r.body)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	srv.AddBooking(DemoOwner, Booking{ID: "bk/odd id", EventType: testutil.Ptr("consultation"), Start: mustTime("2026-04-01T12:00:00Z")})
	for _, tc := range []struct {
		name, key, path, body string
		status                int
		want                  string
	}{
		{"cancel", DemoKey, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000001/cancel", "", 200, `{"cancelled":true}`},
		{"again", DemoKey, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000001/cancel", "", 200, `{"cancelled":true}`},
		{"already cancelled", DemoKey, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000014/cancel", "", 200, `{"cancelled":true}`},
		{"body ignored", DemoKey, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000002/cancel", "reason=because", 200, `{"cancelled":true}`},
		{"escaped ID segment", DemoKey, "/api/v1/bookings/bk%2Fodd%20id/cancel", "", 200, `{"cancelled":true}`},
		{"unknown", DemoKey, "/api/v1/bookings/00000000-0000-4000-8000-000000000000/cancel", "", 404, `{"error":"no such booking"}`},
		{"slug is not an ID", DemoKey, "/api/v1/bookings/consultation/cancel", "", 404, `{"error":"no such booking"}`},
		{"other owner's booking", DemoKey, "/api/v1/bookings/" + OtherBookingID + "/cancel", "", 404, `{"error":"no such booking"}`},
		{"demo booking with other key", OtherKey, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000003/cancel", "", 404, `{"error":"no such booking"}`},
	} {
		// Sequential: "again" depends on "cancel".
		t.Run(tc.name, func(t *testing.T) {
			send(t, srv, tc.key, http.MethodPost, tc.path, "application/x-www-form-urlencoded", strings.NewReader(tc.body)).want(t, tc.status, tc.want)
		})
	}

	cancelled := map[string]bool{}
	for _, b := range append(srv.Bookings(DemoOwner), srv.Bookings(OtherOwner)...) {
		cancelled[b.ID] = b.Cancelled
	}
	for id, want := range map[string]bool{
		"5eed0000-0000-4000-8000-000000000001": true, "5eed0000-0000-4000-8000-000000000002": true, "bk/odd id": true, "5eed0000-0000-4000-8000-000000000014": true,
		"5eed0000-0000-4000-8000-000000000003": false, OtherBookingID: false,
	} {
		if cancelled[id] != want {
			t.Errorf("%s cancelled = %v, want %v", id, cancelled[id], want)
		}
	}
	ids := bookingIDs(listBookings(t, srv, DemoKey))
	if ids[0] != "5eed0000-0000-4000-8000-000000000003" {
		t.Errorf("cancelled bookings still listed: %q", ids)
	}
	// The freed slot is offered again.
	if !slotStarts(listSlots(t, srv, DemoKey, "intro-call"))["2026-03-24T08:00:00Z"] {
		t.Error("slot of the cancelled booking not offered")
	}
	// The owner of the other booking can cancel it.
	post(t, srv, OtherKey, "/api/v1/bookings/"+OtherBookingID+"/cancel", nil).want(t, 200, `{"cancelled":true}`)
}
