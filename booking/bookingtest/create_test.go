package bookingtest

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
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

	// Same event, start and email again: the slot is gone.
	post(t, srv, DemoKey, "/api/v1/bookings", form).want(t, http.StatusConflict, `{"error":"not booked","status":200}`)
}

func TestCreateBookingOutcomes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		key    string
		form   url.Values
		status int
		body   string // "" checks a receipt instead
	}{
		{name: "solo", form: bookForm("consultation", freeSlot, 30), status: 201},
		{name: "same instant with milliseconds", form: func() url.Values {
			f := bookForm("consultation", freeSlot, 30)
			f.Set("start", "2026-03-24T09:00:00.000Z")
			f.Set("end", "2026-03-24T09:30:00.000Z")
			return f
		}(), status: 409, body: `{"error":"not booked","status":200}`},
		{name: "same instant in another offset", form: func() url.Values {
			f := bookForm("consultation", freeSlot, 30)
			f.Set("start", "2026-03-24T10:00:00+01:00")
			f.Set("end", "2026-03-24T05:30:00-04:00")
			return f
		}(), status: 409, body: `{"error":"not booked","status":200}`},
		{name: "end written otherwise", form: func() url.Values {
			f := bookForm("consultation", freeSlot, 30)
			f.Set("end", "2026-03-24T09:30:00+00:00")
			return f
		}(), status: 409, body: `{"error":"not booked","status":200}`},
		{name: "round robin is unsupported", form: bookForm("team-sync", freeSlot, 30), status: 201, body: `{"booking":null}`},
		{name: "collective is unsupported", form: bookForm("board-review", "2026-03-24T08:45:00Z", 45), status: 201, body: `{"booking":null}`},
		{name: "taken by another type", form: bookForm("consultation", "2026-03-24T08:00:00Z", 30), status: 409, body: `{"error":"not booked","status":200}`},
		{name: "end of another slot", form: bookForm("consultation", freeSlot, 60), status: 409, body: `{"error":"not booked","status":200}`},
		{name: "not aligned", form: bookForm("consultation", "2026-03-24T09:10:00Z", 30), status: 409, body: `{"error":"not booked","status":200}`},
		{name: "in the past", form: bookForm("consultation", "2026-03-23T09:00:00Z", 30), status: 409, body: `{"error":"not booked","status":200}`},
		{name: "weekend", form: bookForm("consultation", "2026-03-28T09:00:00Z", 30), status: 409, body: `{"error":"not booked","status":200}`},
		{name: "beyond the window", form: bookForm("consultation", "2026-04-07T08:00:00Z", 30), status: 409, body: `{"error":"not booked","status":200}`},
		{name: "beyond the event's period", form: bookForm("deep-dive", "2026-03-31T08:00:00Z", 60), status: 409, body: `{"error":"not booked","status":200}`},
		{name: "unknown event type", form: bookForm("nope", freeSlot, 30), status: 404, body: `{"error":"event type not found"}`},
		{name: "removed event type", form: bookForm("legacy-demo", freeSlot, 30), status: 404, body: `{"error":"event type not found"}`},
		{name: "other owner's event type", form: bookForm("other-call", freeSlot, 30), status: 404, body: `{"error":"event type not found"}`},
		{name: "other owner books own type", key: OtherKey, form: bookForm("other-call", "2026-03-24T10:00:00Z", 30), status: 201},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newTestServer(t)
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
				if stored != 0 {
					t.Errorf("%d bookings stored", stored)
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

func TestCreateBookingValidation(t *testing.T) {
	t.Parallel()
	const form = "application/x-www-form-urlencoded"
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
	for _, tc := range []struct {
		name, contentType, body string
		status                  int
	}{
		{"valid", form, valid, 201},
		{"charset parameter", form + "; charset=utf-8", valid, 201},
		{"booker_tz", form, with("booker_tz", "Asia/Kolkata").Encode(), 201},
		{"note of 2000 characters", form, with("q:booking-note", strings.Repeat("a", 2000)).Encode(), 201},
		{"note of 1000 emoji is 2000 UTF-16 units", form, with("q:booking-note", strings.Repeat("😀", 1000)).Encode(), 201},
		{"custom answer and location", form, with("q:company", "NASA").Encode() + "&location_option=" + url.QueryEscape("integrations:daily"), 201},

		{"JSON body", "application/json", `{"event_type":"consultation","start":"` + freeSlot + `","end":"2026-03-24T09:30:00Z","name":"Mary","email":"mary@example.com"}`, 400},
		{"form body sent as JSON", "application/json", valid, 400},
		{"no content type", "", valid, 400},
		{"text/plain", "text/plain", valid, 400},
		{"multipart", "multipart/form-data; boundary=x", valid, 400},
		{"malformed form", form, valid + "&bad=%zz", 400},
		{"unknown field", form, with("guests", "amy@example.com").Encode(), 400},
		{"unknown field: timeZone", form, with("timeZone", "UTC").Encode(), 400},
		{"empty question ID", form, with("q:", "x").Encode(), 400},
		{"repeated field", form, valid + "&start=" + url.QueryEscape(freeSlot), 400},
		{"missing event_type", form, without("event_type").Encode(), 400},
		{"missing start", form, without("start").Encode(), 400},
		{"missing end", form, without("end").Encode(), 400},
		{"missing name", form, without("name").Encode(), 400},
		{"blank name", form, with("name", "   ").Encode(), 400},
		{"missing email", form, without("email").Encode(), 400},
		{"email without @", form, with("email", "mary.example.com").Encode(), 400},
		{"email with display name", form, with("email", "Mary <mary@example.com>").Encode(), 400},
		{"email without dotted domain", form, with("email", "mary@example").Encode(), 400},
		{"email with spaces", form, with("email", " mary@example.com").Encode(), 400},
		{"unknown zone", form, with("booker_tz", "Mars/Olympus_Mons").Encode(), 400},
		{"blank zone", form, with("booker_tz", "").Encode(), 400},
		{"Local zone", form, with("booker_tz", "Local").Encode(), 400},
		{"offset is not a zone name", form, with("booker_tz", "+01:00").Encode(), 400},
		{"note of 2001 characters", form, with("q:booking-note", strings.Repeat("a", 2001)).Encode(), 400},
		{"note of 1001 emoji", form, with("q:booking-note", strings.Repeat("😀", 1001)).Encode(), 400},
		{"note of 999 emoji and 3 letters", form, with("q:booking-note", strings.Repeat("😀", 999)+"abc").Encode(), 400},
		{"start not RFC 3339", form, with("start", "tomorrow 10am").Encode(), 400},
		{"start without zone", form, with("start", "2026-03-24T09:00:00").Encode(), 400},
		{"end as a date", form, with("end", "2026-03-24").Encode(), 400},

		{"over 64 KiB", form, with("q:booking-note", strings.Repeat("a", 64<<10)).Encode(), 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newTestServer(t)
			srv.SetLimits(0, 0)
			before := len(srv.Bookings(DemoOwner))
			r := send(t, srv, DemoKey, http.MethodPost, "/api/v1/bookings", tc.contentType, strings.NewReader(tc.body))
			stored := len(srv.Bookings(DemoOwner)) - before
			switch tc.status {
			case 201:
				if r.status != 201 || !strings.HasPrefix(r.text(), `{"booking":{"booking_id":"`) || stored != 1 {
					t.Fatalf("got %d %s, %d stored", r.status, r.body, stored)
				}
			case 400:
				r.want(t, 400, `{"error":"invalid input"}`)
			case 413:
				if r.status != 413 || r.text() != "request entity too large" || r.header.Get("Content-Type") != "text/plain; charset=utf-8" {
					t.Errorf("got %d %q %q", r.status, r.header.Get("Content-Type"), r.body)
				}
			}
			if tc.status != 201 && stored != 0 {
				t.Errorf("%d bookings stored", stored)
			}
		})
	}

	t.Run("stored extras", func(t *testing.T) {
		t.Parallel()
		srv, _ := newTestServer(t)
		f := bookForm("consultation", freeSlot, 30)
		f.Set("q:company", "NASA")
		f.Set("location_option", "integrations:daily")
		post(t, srv, DemoKey, "/api/v1/bookings", f)
		var b Booking
		for _, x := range srv.Bookings(DemoOwner) {
			if x.BookerEmail != nil && *x.BookerEmail == "mary.jackson@example.com" {
				b = x
			}
		}
		if b.Answers["company"] != "NASA" || b.LocationOption != "integrations:daily" || b.BookerTZ != "UTC" {
			t.Errorf("stored %+v", b)
		}
	})
}

func TestRateLimitPerIP(t *testing.T) {
	t.Parallel()
	srv, clock := newTestServer(t)
	// Failed attempts of every kind count.
	attempts := []url.Values{
		without(bookForm("consultation", freeSlot, 30), "name"), // 400
		bookForm("nope", freeSlot, 30),                          // 404
		bookForm("consultation", "2026-03-24T08:00:00Z", 30),    // 409
		bookForm("team-sync", freeSlot, 30),                     // 201 null
		bookForm("consultation", freeSlot, 30),                  // 201
	}
	for i, f := range attempts {
		if r := post(t, srv, DemoKey, "/api/v1/bookings", f); r.status == http.StatusTooManyRequests {
			t.Fatalf("attempt %d limited", i+1)
		}
	}
	next := bookForm("consultation", "2026-03-24T10:00:00Z", 30)
	r := post(t, srv, DemoKey, "/api/v1/bookings", next)
	r.want(t, http.StatusTooManyRequests, `{"error":"too many requests"}`)
	if ra := r.header.Get("Retry-After"); ra != "60" {
		t.Errorf("Retry-After %q, want 60", ra)
	}

	clock.Advance(40 * time.Second)
	r = post(t, srv, DemoKey, "/api/v1/bookings", next)
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") != "20" {
		t.Errorf("after 40s: %d Retry-After %q, want 429 and 20", r.status, r.header.Get("Retry-After"))
	}

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
		f := bookForm("consultation", freeSlot, 30)
		f.Set("email", "not-an-email") // failed attempts count
		if r := post(t, srv, DemoKey, "/api/v1/bookings", f); r.status != http.StatusBadRequest {
			t.Fatalf("attempt %d: %d %s", i+1, r.status, r.body)
		}
	}
	r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", freeSlot, 30))
	r.want(t, http.StatusTooManyRequests, `{"error":"too many requests"}`)
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
	srv.AddBooking(DemoOwner, Booking{ID: "bk/odd id", EventType: ptr("consultation"), Start: mustTime("2026-04-01T12:00:00Z")})
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
		{"unknown", DemoKey, "/api/v1/bookings/bk_nope000000/cancel", "", 404, `{"error":"booking not found"}`},
		{"slug is not an ID", DemoKey, "/api/v1/bookings/consultation/cancel", "", 404, `{"error":"booking not found"}`},
		{"other owner's booking", DemoKey, "/api/v1/bookings/" + OtherBookingID + "/cancel", "", 404, `{"error":"booking not found"}`},
		{"demo booking with other key", OtherKey, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000003/cancel", "", 404, `{"error":"booking not found"}`},
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
