package bookingtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/fakeclock"
	"github.com/bookbot/bookbot/internal/testutil"
)

// servedSignal reports each request the sandbox finishes handling.
func servedSignal(s *Server) <-chan struct{} {
	ch := make(chan struct{}, 100)
	s.lock()
	s.testHookServed = func() { ch <- struct{}{} }
	s.mu.Unlock()
	return ch
}

func waitServed(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second): // a bound for a broken sandbox, not a guess
		t.Fatal("handler did not return")
	}
}

func isDropped(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

func TestFailNextQueue(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	limited := JSONError(http.StatusServiceUnavailable, "maintenance", 0)
	limited.RetryAfter = "120"
	faults := []Fault{
		HTMLError(http.StatusServiceUnavailable),
		PlainText(http.StatusBadGateway, "upstream connect error"),
		MalformedJSON(http.StatusInternalServerError),
		limited,
		JSONError(http.StatusForbidden, "forbidden", http.StatusForbidden),
		{Status: http.StatusBadGateway, Body: "?"},
		{Body: "no status"},
	}
	for _, f := range faults {
		srv.FailNext(EndpointEventTypes, f)
	}
	for i, want := range []struct {
		status           int
		contentType      string
		body, retryAfter string
	}{
		{503, "text/html", "<h1>503 Service Unavailable</h1>", ""},
		{502, "text/plain; charset=utf-8", "upstream connect error", ""},
		{500, "application/json; charset=utf-8", `{"error":"internal server error","sta`, ""},
		{503, "application/json; charset=utf-8", `{"error":"maintenance"}`, "120"},
		{403, "application/json; charset=utf-8", `{"error":"forbidden","status":403}`, ""},
		{502, "", "?", ""},
		{500, "", "no status", ""},
	} {
		r := get(t, srv, DemoKey, "/api/v1/event-types")
		if r.status != want.status || r.header.Get("Content-Type") != want.contentType ||
			!strings.Contains(string(r.body), want.body) || r.header.Get("Retry-After") != want.retryAfter {
			t.Errorf("call %d: %d %q %q Retry-After %q, want %+v", i+1, r.status, r.header.Get("Content-Type"), r.body, r.header.Get("Retry-After"), want)
		}
		if _, ok := r.header["Content-Type"]; want.contentType == "" && ok {
			t.Errorf("call %d: Content-Type sent, want none", i+1)
		}
	}
	// The queue is empty: back to normal. Other endpoints were never affected.
	get(t, srv, DemoKey, "/api/v1/event-types").decode(t, &struct{}{})
	if bs := listBookings(t, srv, DemoKey); len(bs) == 0 {
		t.Error("no bookings")
	}
}

func TestFailNextCommitsNothing(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	before := len(srv.Bookings(DemoOwner))
	for range 5 {
		srv.FailNext(EndpointCreateBooking, HTMLError(http.StatusBadGateway))
	}
	// Faults come before auth, like an edge proxy's.
	r := post(t, srv, "", "/api/v1/bookings", bookForm("consultation", freeSlot, 30))
	if r.status != http.StatusBadGateway {
		t.Fatalf("unauthenticated call: %d, want the fault", r.status)
	}
	for range 4 {
		if r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", freeSlot, 30)); r.status != http.StatusBadGateway {
			t.Fatalf("got %d", r.status)
		}
	}
	if n := len(srv.Bookings(DemoOwner)) - before; n != 0 {
		t.Fatalf("%d bookings stored by failed calls", n)
	}
	// Failed calls never reached the rate limiter: five real attempts remain.
	for i := range 5 {
		if r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", freeSlot, 30)); r.status == http.StatusTooManyRequests {
			t.Fatalf("attempt %d limited", i+1)
		}
	}
}

func TestCommitThenFail(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	srv.CommitThenFail(EndpointCreateBooking, HTMLError(http.StatusServiceUnavailable))
	srv.CommitThenFail(EndpointCancelBooking, PlainText(http.StatusGatewayTimeout, "timeout"))

	r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", freeSlot, 30))
	if r.status != http.StatusServiceUnavailable || r.header.Get("Content-Type") != "text/html" {
		t.Fatalf("got %d %q", r.status, r.header.Get("Content-Type"))
	}
	// The booking exists anyway; reconciliation finds it.
	found := false
	for _, b := range listBookings(t, srv, DemoKey) {
		if b.EventType != nil && *b.EventType == "consultation" && mustTime(b.StartsAt).Equal(mustTime(freeSlot)) && b.BookerEmail != nil && *b.BookerEmail == "mary.jackson@example.com" {
			found = true
		}
	}
	if !found {
		t.Error("committed booking not listed")
	}

	if r := post(t, srv, DemoKey, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000001/cancel", nil); r.status != http.StatusGatewayTimeout {
		t.Fatalf("cancel: %d", r.status)
	}
	if b := srv.Bookings(DemoOwner)[1]; b.ID != "5eed0000-0000-4000-8000-000000000001" || !b.Cancelled {
		t.Errorf("%s cancelled = %v, want cancelled", b.ID, b.Cancelled)
	}
}

func TestCommitThenFailOnRejectedCall(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	srv.CommitThenFail(EndpointCreateBooking, HTMLError(http.StatusBadGateway))
	before := len(srv.Bookings(DemoOwner))
	// The call runs normally (a 409 commits nothing) and its answer is replaced.
	if r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", "2026-03-24T08:00:00Z", 30)); r.status != http.StatusBadGateway {
		t.Fatalf("got %d", r.status)
	}
	if n := len(srv.Bookings(DemoOwner)) - before; n != 0 {
		t.Errorf("%d stored", n)
	}
}

func TestCommitThenHang(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	served := servedSignal(srv)
	srv.CommitThenHang(EndpointCreateBooking)
	before := len(srv.Bookings(DemoOwner))

	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/v1/bookings", strings.NewReader(bookForm("consultation", freeSlot, 30).Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+DemoKey)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	_, err = doRequest(srv.Client(), req)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want a client timeout", err)
	}
	waitServed(t, served) // the handler gave up with the client
	if n := len(srv.Bookings(DemoOwner)) - before; n != 1 {
		t.Errorf("%d stored, want 1", n)
	}
	if log := srv.Requests(); log[len(log)-1].Status != 0 {
		t.Errorf("status %d logged for a hung call", log[len(log)-1].Status)
	}
}

// TestHoldNext: a held create has arrived (it is in the log) and commits
// nothing until it is released; then it is served as usual.
func TestHoldNext(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	release := srv.HoldNext(EndpointCreateBooking)
	before := len(srv.Bookings(DemoOwner))
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/api/v1/bookings", strings.NewReader(bookForm("consultation", freeSlot, 30).Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+DemoKey)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	done := make(chan int, 1)
	go func() {
		r, _ := doRequest(srv.Client(), req)
		done <- r.status
	}()
	testutil.Until(t.Context(), t, "the create logged", func() bool {
		log := srv.Requests()
		return len(log) > 0 && log[len(log)-1].Endpoint == EndpointCreateBooking
	})
	if n := len(srv.Bookings(DemoOwner)) - before; n != 0 {
		t.Fatalf("%d stored while the create is held", n)
	}
	release()
	release() // harmless twice
	if status := <-done; status != http.StatusCreated {
		t.Fatalf("released create answered %d", status)
	}
	if n := len(srv.Bookings(DemoOwner)) - before; n != 1 {
		t.Errorf("%d stored once released, want 1", n)
	}
	// Only the next call was held.
	if r := post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", "2026-03-24T09:00:00Z", 30)); r.status == 0 {
		t.Error("a second create was held too")
	}
}

func TestDrops(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		arm     func(*Server)
		path    string
		form    bool
		changed func(*Server) bool
	}{
		{"drop create", func(s *Server) { s.DropNext(EndpointCreateBooking) }, "/api/v1/bookings", true,
			func(s *Server) bool { return len(s.Bookings(DemoOwner)) != len(demoBookings) }},
		{"commit then drop create", func(s *Server) { s.CommitThenDrop(EndpointCreateBooking) }, "/api/v1/bookings", true,
			func(s *Server) bool { return len(s.Bookings(DemoOwner)) != len(demoBookings) }},
		{"drop cancel", func(s *Server) { s.DropNext(EndpointCancelBooking) }, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000001/cancel", false,
			func(s *Server) bool { return s.Bookings(DemoOwner)[1].Cancelled }},
		{"commit then drop cancel", func(s *Server) { s.CommitThenDrop(EndpointCancelBooking) }, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000001/cancel", false,
			func(s *Server) bool { return s.Bookings(DemoOwner)[1].Cancelled }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv, _ := newTestServer(t)
			tc.arm(srv)
			body := ""
			if tc.form {
				body = bookForm("consultation", freeSlot, 30).Encode()
			}
			_, err := trySend(t, srv.Client(), srv.URL, DemoKey, http.MethodPost, tc.path, "application/x-www-form-urlencoded", strings.NewReader(body))
			if !isDropped(err) {
				t.Fatalf("err = %v, want EOF", err)
			}
			commits := strings.HasPrefix(tc.name, "commit")
			if got := tc.changed(srv); got != commits {
				t.Errorf("committed = %v, want %v", got, commits)
			}
			// The fault is used up.
			if _, err := trySend(t, srv.Client(), srv.URL, DemoKey, http.MethodPost, tc.path, "application/x-www-form-urlencoded", strings.NewReader(body)); err != nil {
				t.Errorf("next call: %v", err)
			}
		})
	}

	t.Run("drop read", func(t *testing.T) {
		t.Parallel()
		srv, _ := newTestServer(t)
		srv.DropNext(EndpointListBookings)
		// A fresh connection: Go's transport would retry a GET on a reused one.
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		_, err := trySend(t, &http.Client{Transport: tr}, srv.URL, DemoKey, http.MethodGet, "/api/v1/bookings", "", nil)
		if !isDropped(err) {
			t.Fatalf("err = %v, want EOF", err)
		}
	})
}

func TestFaultQueueMixesKinds(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	srv.FailNext(EndpointCreateBooking, HTMLError(http.StatusBadGateway))
	srv.CommitThenFail(EndpointCreateBooking, HTMLError(http.StatusServiceUnavailable))
	before := len(srv.Bookings(DemoOwner))
	var got []int
	for _, start := range []string{freeSlot, freeSlot, "2026-03-24T10:00:00Z"} {
		got = append(got, post(t, srv, DemoKey, "/api/v1/bookings", bookForm("consultation", start, 30)).status)
		got = append(got, len(srv.Bookings(DemoOwner))-before)
	}
	if want := []int{502, 0, 503, 1, 201, 2}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("status, stored after each call: %v, want %v", got, want)
	}
}

// TestClearFaults: faults, latencies and the holds no call has taken go;
// a step that held a call that never came leaves nothing for the next.
func TestClearFaults(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	srv.FailNext(EndpointSlots, HTMLError(http.StatusServiceUnavailable))
	srv.DropNext(EndpointSlots)
	srv.SetLatency(EndpointSlots, time.Hour)
	srv.HoldNext(EndpointSlots)
	srv.ClearFaults()
	// Bounded, so that a held call fails the test rather than hangs it.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/api/v1/slots?event_type=consultation", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+DemoKey)
	if r, err := doRequest(srv.Client(), req); err != nil || r.status != http.StatusOK {
		t.Errorf("slots after ClearFaults: %d, %v", r.status, err)
	}
}

func TestEditAnswers(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	plain := get(t, srv, DemoKey, "/api/v1/bookings").text()
	listed := bookingIDs(listBookings(t, srv, DemoKey))
	types := get(t, srv, DemoKey, "/api/v1/event-types").text()
	ghost := map[string]any{"booking_id": "gone", "status": "cancelled"}
	srv.EditAnswers(EndpointListBookings, func(body map[string]any) {
		list := body["bookings"].([]any)
		list[0].(map[string]any)["status"] = "pending"
		body["bookings"] = append(list, ghost)
		body["held"] = len(srv.Bookings(DemoOwner)) // the edit may call the sandbox
	})

	var got struct {
		Bookings []wireBooking `json:"bookings"`
		Held     int           `json:"held"`
	}
	r := get(t, srv, DemoKey, "/api/v1/bookings")
	r.decode(t, &got)
	if ids := bookingIDs(got.Bookings); !slices.Equal(ids, append(listed, "gone")) || got.Bookings[0].Status != "pending" ||
		got.Bookings[1].Status != "confirmed" || got.Bookings[len(ids)-1].Status != "cancelled" || got.Held != len(srv.Bookings(DemoOwner)) {
		t.Errorf("edited list = %s", r.body)
	}
	if ct := r.header.Get("Content-Type"); ct != jsonContentType {
		t.Errorf("edited Content-Type %q", ct)
	}
	// Only successful, unfaulted answers of that endpoint are edited.
	get(t, srv, "wrong", "/api/v1/bookings").want(t, http.StatusUnauthorized, `{"error":"invalid token"}`)
	srv.FailNext(EndpointListBookings, JSONError(http.StatusServiceUnavailable, "maintenance", 0))
	get(t, srv, DemoKey, "/api/v1/bookings").want(t, http.StatusServiceUnavailable, `{"error":"maintenance"}`)
	if got := get(t, srv, DemoKey, "/api/v1/event-types").text(); got != types {
		t.Errorf("event types = %s, want them unedited: %s", got, types)
	}

	srv.EditAnswers(EndpointListBookings, nil)
	if got := get(t, srv, DemoKey, "/api/v1/bookings").text(); got != plain {
		t.Errorf("after EditAnswers(nil): %s, want %s", got, plain)
	}
	srv.EditAnswers(EndpointListBookings, func(body map[string]any) { clear(body) })
	srv.ClearFaults()
	if got := get(t, srv, DemoKey, "/api/v1/bookings").text(); got != plain {
		t.Errorf("after ClearFaults: %s, want %s", got, plain)
	}
}

func TestListedStatus(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	const id = "5eed0000-0000-4000-8000-000000000002"
	srv.EditAnswers(EndpointListBookings, ListedStatus(map[string]string{id: "cancelled", "unlisted": "pending"}))
	var got []string
	for _, b := range listBookings(t, srv, DemoKey) {
		if b.Status != "confirmed" {
			got = append(got, b.BookingID+" "+b.Status)
		}
	}
	if want := []string{id + " cancelled"}; !slices.Equal(got, want) {
		t.Errorf("listed not confirmed: %q, want %q", got, want)
	}
}

func TestUnknownEndpointNamePanics(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	for name, arm := range map[string]func(){
		"FailNext":   func() { srv.FailNext("GET /api/v1/slots", Fault{}) },
		"SetLatency": func() { srv.SetLatency("POST /bookings/cancel", time.Second) },
		"DropNext":   func() { srv.DropNext("get /slots") },
		"EditAnswers": func() {
			srv.EditAnswers("GET /bookings/", func(map[string]any) {})
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s accepted an unknown endpoint", name)
				}
			}()
			arm()
		}()
	}
}

func TestLatency(t *testing.T) {
	t.Parallel()

	t.Run("delays", func(t *testing.T) {
		t.Parallel()
		srv, _ := newTestServer(t)
		srv.SetLatency(EndpointEventTypes, 30*time.Millisecond)
		start := time.Now()
		get(t, srv, DemoKey, "/api/v1/event-types").decode(t, &struct{}{})
		if d := time.Since(start); d < 30*time.Millisecond {
			t.Errorf("answered after %v", d)
		}
		srv.SetLatency(EndpointEventTypes, 0) // removes it
	})

	t.Run("client gives up: nothing committed", func(t *testing.T) {
		t.Parallel()
		srv, _ := newTestServer(t)
		served := servedSignal(srv)
		srv.SetLatency(EndpointCreateBooking, time.Hour)
		ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/v1/bookings", strings.NewReader(bookForm("consultation", freeSlot, 30).Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+DemoKey)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if _, err := doRequest(srv.Client(), req); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v", err)
		}
		waitServed(t, served) // long before the hour is up
		if n := len(srv.Bookings(DemoOwner)); n != len(demoBookings) {
			t.Errorf("%d bookings, want %d", n, len(demoBookings))
		}
	})

	t.Run("wait", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if wait(ctx, time.Hour, nil) {
			t.Error("wait ignored a cancelled context")
		}
		quit := make(chan struct{})
		close(quit)
		if !wait(t.Context(), time.Hour, quit) {
			t.Error("wait ignored release")
		}
	})
}

func TestRequestLog(t *testing.T) {
	t.Parallel()
	srv, clock := newTestServer(t)
	const guess = "sandbox_guessed_key_123456"
	get(t, srv, DemoKey, "/api/v1/slots?event_type=consultation&api_key="+DemoKey) // a leaky client
	get(t, srv, guess, "/api/v1/event-types")
	clock.Advance(time.Minute)
	f := bookForm("consultation", freeSlot, 30)
	f.Set("q:booking-note", "my key is "+OtherKey)
	post(t, srv, DemoKey, "/api/v1/bookings", f)
	post(t, srv, OtherKey, "/api/v1/bookings/"+DemoKey+"/cancel", nil)

	log := srv.Requests()
	dump := fmt.Sprintf("%+v %#v", log, log)
	for _, secret := range []string{DemoKey, OtherKey, guess, "Bearer"} {
		if strings.Contains(dump, secret) {
			t.Errorf("request log contains %q", secret)
		}
	}
	if len(log) != 4 {
		t.Fatalf("%d entries", len(log))
	}
	for i, want := range []Request{
		{Method: "GET", Path: "/api/v1/slots", RawQuery: "event_type=consultation&api_key=[REDACTED]", Authorized: true, At: monday,
			Endpoint: EndpointSlots, Owner: DemoOwner, Status: 200, LeakedKey: true},
		{Method: "GET", Path: "/api/v1/event-types", Authorized: false, At: monday, Endpoint: EndpointEventTypes, Status: 401},
		{Method: "POST", Path: "/api/v1/bookings", ContentType: "application/x-www-form-urlencoded", Authorized: true, At: monday.Add(time.Minute),
			Endpoint: EndpointCreateBooking, Owner: DemoOwner, Status: 201, LeakedKey: true},
		{Method: "POST", Path: "/api/v1/bookings/[REDACTED]/cancel", ContentType: "application/x-www-form-urlencoded", Authorized: true, At: monday.Add(time.Minute),
			Endpoint: EndpointCancelBooking, Owner: OtherOwner, Status: 404, LeakedKey: true},
	} {
		got := log[i]
		if !strings.HasPrefix(got.RemoteAddr, "127.0.0.1:") {
			t.Errorf("entry %d RemoteAddr %q", i, got.RemoteAddr)
		}
		got.RemoteAddr, got.Form = "", nil
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, got, want)
		}
	}
	if got := log[0].Form; got.Get("event_type") != "consultation" || got.Get("api_key") != "[REDACTED]" {
		t.Errorf("query form %v", got)
	}
	if got := log[2].Form; got.Get("email") != "mary.jackson@example.com" || got.Get("start") != freeSlot || got.Get("q:booking-note") != "my key is [REDACTED]" {
		t.Errorf("body form %v", got)
	}
	if log[1].Form != nil {
		t.Errorf("form %v for a request without parameters", log[1].Form)
	}

	// Entries are copies.
	log[2].Form.Set("email", "changed")
	if srv.Requests()[2].Form.Get("email") != "mary.jackson@example.com" {
		t.Error("Requests shares its forms")
	}
	srv.ResetRequests()
	if n := len(srv.Requests()); n != 0 {
		t.Errorf("%d entries after reset", n)
	}
}

func TestConcurrentCreates(t *testing.T) {
	t.Parallel()
	srv, clock := newTestServer(t)
	srv.SetLimits(0, 0)
	const n = 20
	statuses := make(chan int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			f := bookForm("consultation", freeSlot, 30)
			f.Set("email", fmt.Sprintf("racer%d@example.com", i))
			r, err := trySend(t, srv.Client(), srv.URL, DemoKey, http.MethodPost, "/api/v1/bookings", "application/x-www-form-urlencoded", strings.NewReader(f.Encode()))
			if err != nil {
				t.Error(err)
				return
			}
			statuses <- r.status
		})
		// Inspection and the clock are safe alongside.
		wg.Go(func() {
			_ = srv.Requests()
			_ = srv.Bookings(DemoOwner)
			_ = srv.Slots(DemoOwner, "consultation")
			srv.SetNow(clock.Now)
		})
	}
	wg.Wait()
	close(statuses)
	count := map[int]int{}
	for st := range statuses {
		count[st]++
	}
	if count[201] != 1 || count[409] != n-1 {
		t.Errorf("statuses %v, want one 201 and %d 409", count, n-1)
	}
}

func TestSeed(t *testing.T) {
	t.Parallel()
	durations := map[string]time.Duration{}
	kinds := map[string]string{}
	for _, et := range New(Options{Seed: true}).EventTypes(DemoOwner) {
		durations[et.Slug] = time.Duration(et.DurationMinutes) * time.Minute
		kinds[et.Slug] = et.Kind
	}
	for _, now := range []time.Time{
		monday,
		time.Date(2026, 3, 27, 16, 30, 0, 0, time.UTC), // Friday after hours, DST ahead
		time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC),  // Saturday
		time.Date(2026, 3, 29, 23, 30, 0, 0, time.UTC), // Monday 01:30 in Berlin
		time.Date(2026, 10, 23, 21, 0, 0, 0, time.UTC), // Friday night before falling back
		time.Date(2026, 12, 30, 8, 0, 0, 0, time.UTC),  // across the new year
	} {
		t.Run(now.Format(time.RFC3339), func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t, WithClock(fakeclock.New(now).Now))
			listed := listBookings(t, srv, DemoKey)
			if len(listed) != 12 {
				t.Errorf("%d listed, want 12", len(listed))
			}
			for _, b := range listed {
				if st := mustTime(b.StartsAt); !st.After(now) || !st.Before(now.Add(14*24*time.Hour)) {
					t.Errorf("%s starts %s, not in the next 14 days", b.BookingID, b.StartsAt)
				}
			}
			legacy := 0
			for _, b := range srv.Bookings(DemoOwner) {
				switch {
				case b.Cancelled:
					continue
				case !b.End.After(now):
					continue // the past one
				case b.EventType == nil:
					if b.BookerName == nil && b.BookerEmail == nil {
						legacy++
					}
					continue
				case b.BookerEmail == nil:
					legacy++
				}
				slug := *b.EventType
				local := b.Start.In(berlin)
				fromNine := time.Duration(local.Hour()-9)*time.Hour + time.Duration(local.Minute())*time.Minute
				if wd := local.Weekday(); wd == time.Saturday || wd == time.Sunday || fromNine < 0 ||
					fromNine+durations[slug] > 8*time.Hour || fromNine%durations[slug] != 0 || b.End.Sub(b.Start) != durations[slug] {
					t.Errorf("%s (%s) at %v is not a slot", b.ID, slug, local)
				}
				if slug == "deep-dive" && !b.Start.Before(now.Add(7*24*time.Hour)) {
					t.Errorf("%s beyond deep-dive's 7 days", b.ID)
				}
				if kinds[slug] == KindSolo {
					for _, s := range srv.Slots(DemoOwner, slug) {
						if s.Start.Equal(b.Start) {
							t.Errorf("%s does not remove its slot", b.ID)
						}
					}
				}
			}
			if legacy != 2 {
				t.Errorf("%d legacy bookings listed, want 2", legacy)
			}
			if got := bookingIDs(listBookings(t, srv, OtherKey)); len(got) != 1 || got[0] != OtherBookingID {
				t.Errorf("other owner lists %q", got)
			}
		})
	}
}

func TestSeedingHelpers(t *testing.T) {
	t.Parallel()
	s := New(Options{Now: fakeclock.New(monday).Now})
	s.AddOwner("k_helpers_key", "o", berlin, Weekdays(9*time.Hour, 17*time.Hour))
	s.AddEventType("o", EventType{Slug: "c", Title: "C", DurationMinutes: 30})
	s.AddEventType("o", EventType{Slug: "c", Title: "C2", DurationMinutes: 20, PeriodDays: 1}) // replaces
	ets := s.EventTypes("o")
	if len(ets) != 1 || ets[0].Title != "C2" || ets[0].Kind != KindSolo || ets[0].ScheduleID == "" {
		t.Errorf("event types %+v", ets)
	}
	start := time.Date(2026, 3, 24, 9, 0, 0, 0, berlin)
	id := s.AddBooking("o", Booking{EventType: testutil.Ptr("c"), Start: start})
	bs := s.Bookings("o")
	if !bookingIDFormat.MatchString(id) || len(bs) != 1 || !bs[0].End.Equal(start.Add(20*time.Minute)) {
		t.Errorf("id %q bookings %+v", id, bs)
	}
	*bs[0].EventType = "changed"
	if *s.Bookings("o")[0].EventType != "c" {
		t.Error("Bookings shares memory with the sandbox")
	}
	// PeriodDays 1 from Monday 11:07 Berlin: only the rest of Monday and Tuesday morning.
	slots := s.Slots("o", "c")
	if last := slots[len(slots)-1].Start; !last.Before(monday.Add(24 * time.Hour)) {
		t.Errorf("last slot %v beyond one day", last)
	}
	if s.Slots("o", "nope") != nil || s.Slots("nobody", "c") != nil {
		t.Error("Slots for unknown owner or type")
	}

	for name, f := range map[string]func(){
		"booking for unknown owner":  func() { s.AddBooking("nobody", Booking{Start: start, End: start.Add(time.Hour)}) },
		"booking without end":        func() { s.AddBooking("o", Booking{Start: start}) },
		"key of another owner":       func() { s.AddOwner("k_helpers_key", "p", nil, nil) },
		"event type without minutes": func() { s.AddEventType("o", EventType{Slug: "z"}) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
