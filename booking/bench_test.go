package booking

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/testutil"
)

// listBody is a full GET /bookings answer whose first booking is the one
// benchCreate makes; before it is made, the first booking is another
// attendee's.
func listBody(tb testing.TB) []byte { return bookingsBody(tb, "attendee0@example.com") }

func bookingsBody(tb testing.TB, firstEmail string) []byte {
	tb.Helper()
	start := time.Date(2030, 3, 25, 8, 0, 0, 0, time.UTC)
	var w wireBookings
	for i := range MaxListed {
		s := start.Add(time.Duration(i) * 30 * time.Minute)
		email := fmt.Sprintf("attendee%d@example.com", i)
		if i == 0 {
			email = firstEmail
		}
		w.Bookings = append(w.Bookings, wireBooking{
			BookingID: fmt.Sprintf("00000000-0000-4000-8000-%012d", i),
			StartsAt:  s.Format("2006-01-02T15:04:05.000Z07:00"), // as the service writes them
			EndsAt:    s.Add(15 * time.Minute).Format("2006-01-02T15:04:05.000Z07:00"),
			Status:    "confirmed", BookerName: testutil.Ptr(fmt.Sprintf("Attendee %d", i)),
			BookerEmail: testutil.Ptr(email), EventType: testutil.Ptr("intro-call"),
		})
	}
	b, err := json.Marshal(w)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func BenchmarkDecodeBookings(b *testing.B) {
	raw := listBody(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		var w wireBookings
		if err := json.Unmarshal(raw, &w); err != nil {
			b.Fatal(err)
		}
		for _, wb := range w.Bookings {
			if _, err := wb.booking(); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// benchServer answers the calls of a create with precomputed bodies, so the
// figures measure the client and the loopback, not a fake's work. The list
// shows the booking from a create until it has been listed once.
func benchServer(b *testing.B) *httptest.Server {
	list, before := listBody(b), bookingsBody(b, "someone.else@example.com")
	var made atomic.Bool
	slots := []byte(`{"slots":[{"start":"2030-03-25T08:00:00Z","end":"2030-03-25T08:15:00Z"}]}`)
	receipt := []byte(`{"booking":{"booking_id":"00000000-0000-4000-8000-000000000000","starts_at":"2030-03-25T08:00:00.000Z","ends_at":"2030-03-25T08:15:00.000Z"}}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "POST":
			_, _ = io.Copy(io.Discard, r.Body)
			made.Store(true)
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(receipt)
		case strings.HasSuffix(r.URL.Path, "/slots"):
			_, _ = w.Write(slots)
		case made.Swap(false):
			_, _ = w.Write(list)
		default:
			_, _ = w.Write(before)
		}
	}))
	b.Cleanup(srv.Close)
	return srv
}

// BenchmarkCreateVerify compares one create, with the list that checks it
// does not exist yet and the list that verifies it, through the client with
// the same three requests made with net/http directly.
func BenchmarkCreateVerify(b *testing.B) {
	srv := benchServer(b)
	key, _ := NewKey(testKey)
	c, err := NewClient(srv.URL, key,
		WithHTTPClient(srv.Client()),
		WithLimiter(NewGuard(Limits{}, nil)), // measure the client, not the limits
		WithClock(func() time.Time { return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }))
	if err != nil {
		b.Fatal(err)
	}
	slots, err := c.Slots(b.Context(), "intro-call")
	if err != nil {
		b.Fatal(err)
	}
	req := CreateRequest{Slot: slots[0], Name: "Attendee 0", Email: "attendee0@example.com", TimeZone: "Europe/Berlin"}

	b.Run("client", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res, err := c.Create(b.Context(), req)
			if err != nil || res.Outcome != Confirmed {
				b.Fatalf("%+v %v", res, err)
			}
		}
	})
	b.Run("raw", func(b *testing.B) { rawCreateVerify(b, srv, slots[0], nil) })
	b.Run("raw+decode", func(b *testing.B) {
		rawCreateVerify(b, srv, slots[0], func(body []byte) {
			var w wireBookings
			if err := json.Unmarshal(body, &w); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// rawCreateVerify makes the client's three requests with net/http alone;
// decode, when set, gets each list body.
func rawCreateVerify(b *testing.B, srv *httptest.Server, slot Slot, decode func([]byte)) {
	b.ReportAllocs()
	h := srv.Client()
	form := url.Values{"event_type": {"intro-call"}, "start": {slot.RawStart()}, "end": {slot.RawEnd()},
		"name": {"Attendee 0"}, "email": {"attendee0@example.com"}, "booker_tz": {"Europe/Berlin"}}.Encode()
	list := func() {
		get, _ := http.NewRequestWithContext(b.Context(), "GET", srv.URL+"/api/v1/bookings", nil)
		get.Header.Set("Authorization", "Bearer "+testKey)
		body := rawCall(b, h, get)
		if decode != nil {
			decode(body)
		}
	}
	for b.Loop() {
		list()
		post, _ := http.NewRequestWithContext(b.Context(), "POST", srv.URL+"/api/v1/bookings", strings.NewReader(form))
		post.Header.Set("Authorization", "Bearer "+testKey)
		post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rawCall(b, h, post)
		list()
	}
}

func rawCall(b *testing.B, h *http.Client, req *http.Request) []byte {
	resp, err := h.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	return body
}
