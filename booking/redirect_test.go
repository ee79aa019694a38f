package booking

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
)

// redirectToken stands for what a redirect's query may carry; it must never
// show up in an error or a result.
const redirectToken = "token=redirect-secret-4f1c"

const noBookings = `{"bookings":[]}`

// redirectStatuses are the answers net/http would follow.
var redirectStatuses = []int{
	http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
	http.StatusTemporaryRedirect, http.StatusPermanentRedirect,
}

// redirectClients are the HTTP clients a Client may be given: none, one
// that follows every redirect, and a TLS one, so that the redirect goes from
// https to plain http on the same host.
var redirectClients = []struct {
	name  string
	tls   bool
	httpc func(front *httptest.Server) *http.Client // nil: the default
}{
	{"default client", false, nil},
	{"caller's client that follows redirects", false, func(*httptest.Server) *http.Client {
		// A transport of its own: the default one is shared with the
		// package's other tests, and each httptest.Server.Close closes
		// its idle connections, under a request about to reuse one.
		return &http.Client{
			Transport:     http.DefaultTransport.(*http.Transport).Clone(),
			CheckRedirect: func(*http.Request, []*http.Request) error { return nil },
		}
	}},
	{"caller's TLS client, https to http", true, func(front *httptest.Server) *http.Client { return front.Client() }},
}

// redirecting is a booking API (front) that answers one route with a
// redirect to another server (elsewhere) on the same host but another port.
// GET /bookings answers before until the route is asked, after from then on.
type redirecting struct {
	client    *Client
	front     *httptest.Server
	elsewhere *httptest.Server
	sleeps    *sleeps

	mu      sync.Mutex
	asked   []string // "METHOD path" of each request front received
	moved   bool     // the route has been asked
	reached []string // each request that reached elsewhere, described without its values
}

func newRedirecting(t *testing.T, tls bool, httpc func(*httptest.Server) *http.Client, status int, route, before, after string) *redirecting {
	t.Helper()
	rd := &redirecting{sleeps: &sleeps{}}
	rd.elsewhere = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rd.mu.Lock()
		rd.reached = append(rd.reached, fmt.Sprintf("%s %s (Authorization sent: %t, body bytes: %d)",
			r.Method, r.URL.Path, r.Header.Get("Authorization") != "", len(body)))
		rd.mu.Unlock()
		// What the API would answer, so that a followed redirect looks like success.
		switch {
		case r.URL.Path == "/api/v1/bookings" && r.Method == http.MethodPost:
			writeJSON(w, http.StatusCreated, `{"booking":{"booking_id":"bk_elsewhere","status":"confirmed","starts_at":"2030-03-23T09:00:00Z","ends_at":"2030-03-23T09:15:00Z"}}`)
		case strings.HasSuffix(r.URL.Path, "/cancel"):
			writeJSON(w, http.StatusOK, `{"cancelled":true}`)
		default:
			writeJSON(w, http.StatusOK, `{"event_types":[],"bookings":[]}`)
		}
	}))
	t.Cleanup(rd.elsewhere.Close)
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rd.mu.Lock()
		rd.asked = append(rd.asked, r.Method+" "+r.URL.Path)
		list := before
		if rd.moved {
			list = after
		}
		rd.moved = rd.moved || r.Method+" "+r.URL.Path == route
		rd.mu.Unlock()
		switch {
		case r.Method+" "+r.URL.Path == route:
			w.Header().Set("Location", rd.elsewhere.URL+r.URL.Path+"?"+redirectToken)
			w.WriteHeader(status)
		case r.Method == http.MethodGet && r.URL.Path == "/api/v1/bookings":
			writeJSON(w, http.StatusOK, list)
		default:
			t.Errorf("unexpected request %s %s", r.Method, r.URL.Path)
			w.WriteHeader(http.StatusNotFound)
		}
	})
	if tls {
		rd.front = httptest.NewTLSServer(handler)
	} else {
		rd.front = httptest.NewServer(handler)
	}
	t.Cleanup(rd.front.Close)

	key, err := NewKey(testKey)
	if err != nil {
		t.Fatal(err)
	}
	opts := []Option{WithSleep(rd.sleeps.sleep)}
	if httpc != nil {
		opts = append(opts, WithHTTPClient(httpc(rd.front)))
	}
	if rd.client, err = NewClient(rd.front.URL, key, opts...); err != nil {
		t.Fatal(err)
	}
	return rd
}

// check asserts that nothing reached elsewhere and that front was asked
// route exactly once.
func (rd *redirecting) check(t *testing.T, route string) {
	t.Helper()
	rd.mu.Lock()
	defer rd.mu.Unlock()
	if len(rd.reached) > 0 {
		t.Errorf("the redirect was followed: %q", rd.reached)
	}
	if n := countOf(rd.asked, route); n != 1 {
		t.Errorf("%s asked %d times, want once: %q", route, n, rd.asked)
	}
}

func countOf(list []string, s string) int {
	n := 0
	for _, l := range list {
		if l == s {
			n++
		}
	}
	return n
}

// assertNoLeak checks that text holds neither the key, nor the attendee's
// email, nor anything of the Location beyond its scheme and host.
func assertNoLeak(t *testing.T, text string) {
	t.Helper()
	for _, secret := range []string{testKey, "ada@example.com", redirectToken, "?"} {
		if strings.Contains(text, secret) {
			t.Errorf("%q appears in %q", secret, text)
		}
	}
}

func TestReadRedirectIsAnErrorNotFollowed(t *testing.T) {
	t.Parallel()
	const route = "GET /api/v1/event-types"
	for _, cl := range redirectClients {
		for _, status := range redirectStatuses {
			t.Run(fmt.Sprintf("%s/%d", cl.name, status), func(t *testing.T) {
				t.Parallel()
				var given *http.Client
				httpc := cl.httpc
				if httpc != nil {
					httpc = func(front *httptest.Server) *http.Client {
						given = cl.httpc(front)
						return given
					}
				}
				rd := newRedirecting(t, cl.tls, httpc, status, route, "", "")
				_, err := rd.client.EventTypes(t.Context())
				rd.check(t, route)
				if !errors.Is(err, ErrRedirect) || !errors.Is(err, ErrBadResponse) || errors.Is(err, ErrTransport) {
					t.Fatalf("err = %v, want ErrRedirect (an ErrBadResponse)", err)
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != status || apiErr.Location != rd.elsewhere.URL {
					t.Errorf("err = %#v, want status %d and Location %s", apiErr, status, rd.elsewhere.URL)
				}
				msg := err.Error()
				for _, want := range []string{fmt.Sprint(status), "redirecting to " + rd.elsewhere.URL + ":", "BOOKING_BASE_URL"} {
					if !strings.Contains(msg, want) {
						t.Errorf("error %q lacks %q", msg, want)
					}
				}
				assertNoLeak(t, msg)
				if w := rd.sleeps.waits(); len(w) != 0 {
					t.Errorf("a redirect was retried after %v", w)
				}
				if given != nil && given.CheckRedirect != nil && given.CheckRedirect(nil, nil) != nil {
					t.Error("the caller's http.Client was changed")
				}
			})
		}
	}
}

func TestRedirectLocationShowsSchemeAndHostOnly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		location string
		want     func(front string) string
	}{
		{"relative path", "/moved/api/v1/event-types?" + redirectToken, func(front string) string { return front }},
		{"credentials in the URL", "https://user:pw@api.example.com:8443/x?" + redirectToken,
			func(string) string { return "https://api.example.com:8443" }},
		{"none", "", func(string) string { return "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.location != "" {
					w.Header().Set("Location", tt.location)
				}
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(http.StatusFound)
				_, _ = io.WriteString(w, `<a href="/moved?`+redirectToken+`">moved to /moved?`+redirectToken+`</a>`)
			})
			front := c.base.Scheme + "://" + c.base.Host
			_, err := c.EventTypes(t.Context())
			var apiErr *APIError
			if !errors.As(err, &apiErr) || !errors.Is(err, ErrRedirect) {
				t.Fatalf("err = %v, want a redirect", err)
			}
			if want := tt.want(front); apiErr.Location != want {
				t.Errorf("Location = %q, want %q", apiErr.Location, want)
			}
			if apiErr.Sample != "" || apiErr.Message != "" {
				t.Errorf("the redirect's body was kept: %#v", apiErr)
			}
			assertNoLeak(t, err.Error())
			if strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "/moved") {
				t.Errorf("error %q shows more of the Location than scheme and host", err)
			}
		})
	}
}

func TestCreateRedirectIsSettledByListing(t *testing.T) {
	t.Parallel()
	const route = "POST /api/v1/bookings"
	// The list after the create: it alone says whether the booking exists.
	listed := `{"bookings":[{"booking_id":"bk_1","starts_at":"2030-03-23T09:00:00Z","ends_at":"2030-03-23T09:15:00Z","status":"confirmed","booker_name":"Ada","booker_email":"ada@example.com","event_type":"intro"}]}`
	lists := []struct {
		name  string
		after string
		want  Outcome
	}{
		{"not listed", noBookings, ProbablyNotBooked},
		{"listed", listed, Confirmed},
	}
	for _, cl := range redirectClients {
		for _, status := range redirectStatuses {
			for _, l := range lists {
				t.Run(fmt.Sprintf("%s/%d/%s", cl.name, status, l.name), func(t *testing.T) {
					t.Parallel()
					rd := newRedirecting(t, cl.tls, cl.httpc, status, route, noBookings, l.after)
					req := CreateRequest{Slot: testSlot(), Name: "Ada Lovelace", Email: "ada@example.com"}
					res, err := rd.client.Create(t.Context(), req)
					if err != nil {
						t.Fatal(err)
					}
					rd.check(t, route)
					rd.mu.Lock()
					asked := slices.Clone(rd.asked)
					rd.mu.Unlock()
					if i := slices.Index(asked, route); i < 0 || !slices.Contains(asked[i+1:], "GET /api/v1/bookings") {
						t.Errorf("requests = %q, want the create settled by a listing after it", asked)
					}
					if res.Outcome != l.want || !errors.Is(res.Err, ErrRedirect) || res.Receipt != nil {
						t.Fatalf("result = %s, err %v, receipt %v; want %s settled by listing; seen %q", res.Outcome, res.Err, res.Receipt, l.want, res.Seen)
					}
					if l.want == Confirmed && (!res.Reconciled || !res.Verified || res.Booking == nil || res.Booking.ID != "bk_1") {
						t.Errorf("confirmed without the listing: %+v", res)
					}
					if l.want != Confirmed && !res.NeedsHuman() {
						t.Errorf("%s must go to a human", res.Outcome)
					}
					seen := strings.Join(res.Seen, "; ")
					if !strings.Contains(seen, fmt.Sprint(status)) || !strings.Contains(seen, rd.elsewhere.URL) {
						t.Errorf("Seen = %q, want it to name the redirect", seen)
					}
					assertNoLeak(t, seen)
				})
			}
		}
	}
}

func TestCancelRedirectIsSettledByListing(t *testing.T) {
	t.Parallel()
	const route = "POST /api/v1/bookings/bk_1/cancel"
	listed := `{"bookings":[{"booking_id":"bk_1","starts_at":"2030-03-23T09:00:00Z","ends_at":"2030-03-23T09:15:00Z","status":"confirmed","event_type":"intro"}]}`
	// The list after the cancel: it alone says whether the booking is gone.
	lists := []struct {
		name       string
		after      string
		want       Outcome
		reconciled bool
	}{
		{"still listed", listed, NotCancelled, false},
		{"gone", noBookings, Cancelled, true},
	}
	for _, cl := range redirectClients {
		for _, status := range redirectStatuses {
			for _, l := range lists {
				t.Run(fmt.Sprintf("%s/%d/%s", cl.name, status, l.name), func(t *testing.T) {
					t.Parallel()
					rd := newRedirecting(t, cl.tls, cl.httpc, status, route, listed, l.after)
					res, err := rd.client.Cancel(t.Context(), "bk_1")
					if err != nil {
						t.Fatal(err)
					}
					rd.check(t, route)
					if res.Outcome != l.want || res.Reconciled != l.reconciled || !errors.Is(res.Err, ErrRedirect) {
						t.Fatalf("result = %s (reconciled %t), err %v; want %s; seen %q", res.Outcome, res.Reconciled, res.Err, l.want, res.Seen)
					}
					assertNoLeak(t, strings.Join(res.Seen, "; "))
				})
			}
		}
	}
}
