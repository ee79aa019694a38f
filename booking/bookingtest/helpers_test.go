package bookingtest

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/fakeclock"
	"github.com/bookbot/bookbot/internal/testutil"
)

// monday is Monday 2026-03-23 10:07 UTC, 11:07 in Berlin, the week before
// the Europe/Berlin DST change on Sunday 2026-03-29.
var monday = time.Date(2026, 3, 23, 10, 7, 0, 0, time.UTC)

var berlin = testutil.Zone("Europe/Berlin")

// newTestServer is a seeded server whose clock starts at monday.
func newTestServer(t *testing.T, opts ...func(*Options)) (*Server, *fakeclock.Clock) {
	t.Helper()
	clock := fakeclock.New(monday)
	return NewServer(t, append([]func(*Options){WithClock(clock.Now)}, opts...)...), clock
}

type response struct {
	status     int
	statusLine string // "413 Payload Too Large"
	header     http.Header
	body       []byte
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decoding %q: %v", r.body, err)
	}
}

// text is the body without the encoder's trailing newline.
func (r response) text() string { return strings.TrimSuffix(string(r.body), "\n") }

func (r response) want(t *testing.T, status int, body string) {
	t.Helper()
	if r.status != status || r.text() != body {
		t.Fatalf("got %d %s, want %d %s", r.status, r.text(), status, body)
	}
	if ct := r.header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q, want JSON", ct)
	}
}

func send(t *testing.T, srv *Server, key, method, path, contentType string, body io.Reader) response {
	t.Helper()
	resp, err := trySend(t, srv.Client(), srv.URL, key, method, path, contentType, body)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func trySend(t *testing.T, c *http.Client, base, key, method, path, contentType string, body io.Reader) (response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, base+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	return doRequest(c, req)
}

func doRequest(c *http.Client, req *http.Request) (response, error) {
	resp, err := c.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return response{status: resp.StatusCode, statusLine: resp.Status, header: resp.Header, body: b}, err
}

func get(t *testing.T, srv *Server, key, path string) response {
	t.Helper()
	return send(t, srv, key, http.MethodGet, path, "", nil)
}

func post(t *testing.T, srv *Server, key, path string, form url.Values) response {
	t.Helper()
	return send(t, srv, key, http.MethodPost, path, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
}

// Wire shapes, written from the API text rather than reusing the sandbox's
// own types, so a wrong tag there fails here.
type wireEventType struct {
	ScheduleID      string `json:"schedule_id"`
	Slug            string `json:"slug"`
	Title           string `json:"title"`
	DurationMinutes int    `json:"duration_minutes"`
	SchedulingKind  string `json:"scheduling_kind"`
}

type wireSlot struct {
	Start string `json:"start"`
	End   string `json:"end"`
}

type wireBooking struct {
	BookingID   string  `json:"booking_id"`
	StartsAt    string  `json:"starts_at"`
	EndsAt      string  `json:"ends_at"`
	Status      string  `json:"status"`
	BookerName  *string `json:"booker_name"`
	BookerEmail *string `json:"booker_email"`
	EventType   *string `json:"event_type"`
}

type wireReceipt struct {
	Booking *struct {
		BookingID string `json:"booking_id"`
		StartsAt  string `json:"starts_at"`
		EndsAt    string `json:"ends_at"`
	} `json:"booking"`
}

func listSlots(t *testing.T, srv *Server, key, slug string) []wireSlot {
	t.Helper()
	r := get(t, srv, key, "/api/v1/slots?event_type="+url.QueryEscape(slug))
	if r.status != http.StatusOK {
		t.Fatalf("slots %s: %d %s", slug, r.status, r.body)
	}
	var body struct {
		Slots []wireSlot `json:"slots"`
	}
	r.decode(t, &body)
	return body.Slots
}

func listBookings(t *testing.T, srv *Server, key string) []wireBooking {
	t.Helper()
	r := get(t, srv, key, "/api/v1/bookings")
	if r.status != http.StatusOK {
		t.Fatalf("bookings: %d %s", r.status, r.body)
	}
	var body struct {
		Bookings []wireBooking `json:"bookings"`
	}
	r.decode(t, &body)
	return body.Bookings
}

func bookingIDs(bs []wireBooking) []string {
	var ids []string
	for _, b := range bs {
		ids = append(ids, b.BookingID)
	}
	return ids
}

func slotStarts(slots []wireSlot) map[string]bool {
	m := map[string]bool{}
	for _, s := range slots {
		m[s.Start] = true
	}
	return m
}

// bookForm is a valid create form for a slot of the given length.
func bookForm(slug, start string, minutes int) url.Values {
	st, err := time.Parse(time.RFC3339, start)
	if err != nil {
		panic(err)
	}
	return url.Values{
		"event_type": {slug},
		"start":      {start},
		"end":        {st.Add(time.Duration(minutes) * time.Minute).UTC().Format(time.RFC3339)},
		"name":       {"Mary Jackson"},
		"email":      {"mary.jackson@example.com"},
	}
}

func mustTime(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
