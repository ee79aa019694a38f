package booking_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/internal/fakeclock"
)

// dateServer answers every GET /bookings with an empty list and the Date
// header date() gives: "" sends none at all.
func dateServer(t *testing.T, date func() string, opts ...booking.Option) *booking.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if d := date(); d != "" {
			w.Header().Set("Date", d)
		} else {
			w.Header()["Date"] = nil // net/http adds none then
		}
		reply(w, 200, `{"bookings":[]}`)
	}))
	t.Cleanup(srv.Close)
	c, err := booking.NewClient(srv.URL, mustKey(t, "live_8c1f.region-eu.secretpart"),
		append([]booking.Option{booking.WithClock(fixed)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func httpDate(t time.Time) string { return t.UTC().Format(http.TimeFormat) }

// The API's clock is read from each answer's Date header, against the
// client's own clock, within the header's one second.
func TestSkewFromDateHeader(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		date string
		want time.Duration // within a second
		ok   bool
	}{
		{"4 minutes ahead", httpDate(monday.Add(4 * time.Minute)), 4 * time.Minute, true},
		{"5 minutes behind", httpDate(monday.Add(-5 * time.Minute)), -5 * time.Minute, true},
		{"the same second", httpDate(monday), 0, true},
		{"in another form HTTP allows", monday.Add(4 * time.Minute).Format(time.RFC850), 4 * time.Minute, true},
		{"no Date", "", 0, false},
		{"garbage", "soon", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := dateServer(t, func() string { return tt.date })
			if d, ok := c.Skew(); ok || d != 0 {
				t.Fatalf("before any answer Skew() = %v, %v; want 0, false", d, ok)
			}
			if _, err := c.Bookings(t.Context()); err != nil {
				t.Fatal(err)
			}
			d, ok := c.Skew()
			if ok != tt.ok || (d-tt.want).Abs() > time.Second {
				t.Errorf("Skew() = %v, %v; want %v (±1s), %v", d, ok, tt.want, tt.ok)
			}
		})
	}
}

// An answer without a usable Date leaves what the last one told; a clock
// within the header's resolution is no skew at all.
func TestSkewKeepsTheLastReading(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	date := httpDate(monday.Add(4 * time.Minute))
	c := dateServer(t, func() string { mu.Lock(); defer mu.Unlock(); return date })
	set := func(d string) {
		mu.Lock()
		date = d
		mu.Unlock()
		if _, err := c.Bookings(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	set(date)
	for _, d := range []string{"", "garbage"} {
		set(d)
		if got, ok := c.Skew(); !ok || (got-4*time.Minute).Abs() > time.Second {
			t.Errorf("after a Date of %q Skew() = %v, %v; want the 4 minutes read before", d, got, ok)
		}
	}
	set(httpDate(monday))
	if got, ok := c.Skew(); !ok || got != 0 {
		t.Errorf("after a Date of this very second Skew() = %v, %v; want 0, true", got, ok)
	}
}

// A skew beyond SkewTolerance is warned about when it starts and said to be
// over when it ends, once each, not at every answer; every reading goes to
// the observer.
func TestSkewWarnsOncePerChange(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		date string
		logs bytes.Buffer
	)
	rec := &recorder{}
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
	c := dateServer(t, func() string { mu.Lock(); defer mu.Unlock(); return date },
		booking.WithLogger(log), booking.WithObserver(rec))
	offsets := []time.Duration{0, 4 * time.Minute, 4 * time.Minute, 31 * time.Second, 20 * time.Second, 20 * time.Second, -2 * time.Minute}
	for _, off := range offsets {
		mu.Lock()
		date = httpDate(monday.Add(off))
		mu.Unlock()
		if _, err := c.Bookings(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	for line := range strings.Lines(logs.String()) {
		if strings.Contains(line, "clock") {
			level, _, _ := strings.Cut(strings.SplitN(line, "level=", 2)[1], " ")
			skew, _, _ := strings.Cut(strings.SplitN(line, "skew=", 2)[1], "\n")
			got = append(got, level+" "+skew)
		}
	}
	want := []string{"WARN 4m0.5s", "INFO 20.5s", "WARN -1m59.5s"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("clock log lines = %q, want %q:\n%s", got, want, logs.String())
	}
	if !strings.Contains(logs.String(), "check NTP on this machine (timedatectl)") {
		t.Errorf("the warning does not say what to do:\n%s", logs.String())
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.skews) != len(offsets) {
		t.Fatalf("observer told %v, want one reading per answer (%d)", rec.skews, len(offsets))
	}
	for i, off := range offsets {
		if (rec.skews[i] - off).Abs() > time.Second {
			t.Errorf("reading %d = %v, want %v (±1s)", i, rec.skews[i], off)
		}
	}
}

// The sandbox dates its answers by its own clock, so a client on another
// clock reads the difference, as it would of the real service.
func TestSkewOfTheSandbox(t *testing.T) {
	t.Parallel()
	srv := bookingtest.NewServer(t, bookingtest.WithClock(func() time.Time { return monday.Add(4 * time.Minute) }))
	c := clientAt(t, srv.URL, srv)
	if _, err := c.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d, ok := c.Skew(); !ok || (d-4*time.Minute).Abs() > time.Second {
		t.Errorf("Skew() = %v, %v; want 4m (±1s), true", d, ok)
	}
}

// aheadSandbox is a sandbox whose clock runs 4 minutes ahead of the
// client's, behind a front that moves both clocks by inFlight() while a
// write is being sent; the client is on the behind clock.
func aheadSandbox(t *testing.T, inFlight func() time.Duration) (*booking.Client, *bookingtest.Server, *fakeclock.Clock) {
	t.Helper()
	clock := fakeclock.New(monday)
	srv := bookingtest.NewServer(t, bookingtest.WithClock(func() time.Time { return clock.Now().Add(4 * time.Minute) }))
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			clock.Advance(inFlight())
		}
		srv.Sandbox.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	return clientAt(t, front.URL, srv, booking.WithClock(clock.Now)), srv, clock
}

// The list leaves a booking out once it has started by the API's clock. A
// cancel whose answer was lost, of a booking that started there meanwhile
// though not yet here, is not settled as cancelled by its absence.
func TestCancelSettledByTheAPIClock(t *testing.T) {
	t.Parallel()
	c, srv, _ := aheadSandbox(t, func() time.Duration { return 2 * time.Minute })
	id := srv.AddBooking(bookingtest.DemoOwner, booking30(monday.Add(5*time.Minute))) // in 1 minute there, in 5 here
	srv.FailNext(bookingtest.EndpointCancelBooking, bookingtest.HTMLError(503))
	res, err := c.Cancel(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Unknown || res.Verified {
		t.Errorf("cancel = %s verified %v, want unknown: it started by the API's clock, so the list cannot tell; seen %q", res.Outcome, res.Verified, res.Seen)
	}
	if cancelledInSandbox(t, srv, id) {
		t.Error("the sandbox holds it cancelled")
	}
}

// The same for a create whose answer was lost: a slot that started by the
// API's clock cannot be in the list, whatever the create did.
func TestCreateSettledByTheAPIClock(t *testing.T) {
	t.Parallel()
	var slot booking.Slot
	c, srv, _ := aheadSandbox(t, func() time.Duration {
		// Past the slot's start there, not yet here.
		return slot.Start.Sub(monday.Add(4*time.Minute)) + time.Minute
	})
	slot = firstSlot(t, c, "consultation")
	srv.FailNext(bookingtest.EndpointCreateBooking, bookingtest.HTMLError(503))
	res, err := c.Create(t.Context(), request(slot))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.Unknown {
		t.Errorf("create = %s, want unknown: the slot started by the API's clock, so the list cannot tell; seen %q", res.Outcome, res.Seen)
	}
}
