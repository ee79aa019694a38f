package booking

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const testKey = "live_8c1f.region-eu.secretpart"

// setup returns a client wired to a test server running handler, and a
// recorder of the waits the client asked for between retries.
func setup(t *testing.T, handler http.HandlerFunc, opts ...Option) (*Client, *sleeps) {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	key, err := NewKey(testKey)
	if err != nil {
		t.Fatal(err)
	}
	sl := &sleeps{}
	c, err := NewClient(srv.URL, key, append([]Option{WithSleep(sl.sleep)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c, sl
}

type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) waits() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func TestRequestsCarryKeyInHeaderOnly(t *testing.T) {
	t.Parallel()
	var got *http.Request
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		got = r.Clone(context.Background())
		writeJSON(w, 200, `{"event_types":[]}`)
	})
	if _, err := c.EventTypes(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got.Method != "GET" || got.URL.Path != "/api/v1/event-types" {
		t.Errorf("request = %s %s, want GET /api/v1/event-types", got.Method, got.URL.Path)
	}
	if h := got.Header.Get("Authorization"); h != "Bearer "+testKey {
		t.Errorf("Authorization = %q, want the key intact", h)
	}
	if strings.Contains(got.URL.String(), testKey) {
		t.Errorf("key in URL %q", got.URL)
	}
}

func TestBaseURLWithPathAndSlash(t *testing.T) {
	t.Parallel()
	var path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path = r.URL.Path
		writeJSON(w, 200, `{"bookings":[]}`)
	}))
	t.Cleanup(srv.Close)
	key, _ := NewKey(testKey)
	c, err := NewClient(srv.URL+"/calendar/", key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	if path != "/calendar/api/v1/bookings" {
		t.Errorf("path = %q", path)
	}
}

func TestNewClientRejectsBadBaseURL(t *testing.T) {
	t.Parallel()
	key, _ := NewKey(testKey)
	for _, u := range []string{"", "example.com", "ftp://example.com", "https://user:pw@example.com", "https://example.com/?a=b"} {
		if _, err := NewClient(u, key); err == nil {
			t.Errorf("NewClient(%q) = nil error", u)
		} else if strings.Contains(err.Error(), "pw@") {
			t.Errorf("error repeats credentials: %v", err)
		}
	}
}

func TestDecodeTimestampsAndNulls(t *testing.T) {
	t.Parallel()
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"bookings":[
			{"booking_id":"a","starts_at":"2026-03-23T09:00:00Z","ends_at":"2026-03-23T09:30:00.5Z","status":"confirmed","booker_name":"Ada","booker_email":"ada@example.com","event_type":"intro","extra":1},
			{"booking_id":"b","starts_at":"2026-03-23T10:00:00+01:00","ends_at":"2026-03-23T10:30:00.123456789+01:00","status":"confirmed","booker_name":null,"booker_email":"","event_type":null}
		],"next":"ignored"}`)
	})
	list, err := c.Bookings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 {
		t.Fatalf("got %d bookings", len(list))
	}
	if want := time.Date(2026, 3, 23, 9, 0, 0, 0, time.UTC); !list[0].Start.Equal(want) || !list[1].Start.Equal(want) {
		t.Errorf("starts = %v, %v; want both %v", list[0].Start, list[1].Start, want)
	}
	if list[0].End.Nanosecond() != 5e8 {
		t.Errorf("fraction lost: %v", list[0].End)
	}
	b := list[1]
	if b.BookerName.Valid || b.EventType.Valid {
		t.Errorf("nulls decoded as known: %+v", b)
	}
	if !b.BookerEmail.Valid || b.BookerEmail.String != "" {
		t.Errorf("empty email decoded as unknown: %+v", b.BookerEmail)
	}
	if got := b.BookerName.Or("not recorded"); got != "not recorded" {
		t.Errorf("Or = %q", got)
	}
}

func TestSlotKeepsExactStrings(t *testing.T) {
	t.Parallel()
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if got := r.URL.Query().Get("event_type"); got != "intro call&x" {
			t.Errorf("event_type = %q", got)
		}
		writeJSON(w, 200, `{"slots":[{"start":"2026-03-23T09:00:00.000Z","end":"2026-03-23T09:15:00.000Z"}]}`)
	})
	slots, err := c.Slots(t.Context(), "intro call&x")
	if err != nil {
		t.Fatal(err)
	}
	s := slots[0]
	if s.RawStart() != "2026-03-23T09:00:00.000Z" || s.RawEnd() != "2026-03-23T09:15:00.000Z" || s.EventType() != "intro call&x" {
		t.Errorf("slot = %q %q %q", s.RawStart(), s.RawEnd(), s.EventType())
	}
	if s.IsZero() || !(Slot{Start: s.Start, End: s.End}).IsZero() {
		t.Error("a hand-made slot must be zero, a listed one must not")
	}
}

func TestBadTimestampIsBadResponse(t *testing.T) {
	t.Parallel()
	for _, body := range []string{
		`{"slots":[{"start":"2026-03-23 09:00","end":"2026-03-23T09:15:00Z"}]}`,
		`{"slots":[{"start":"2026-03-23T09:15:00Z","end":"2026-03-23T09:00:00Z"}]}`,
	} {
		c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) { writeJSON(w, 200, body) })
		_, err := c.Slots(t.Context(), "intro")
		if !errors.Is(err, ErrBadResponse) {
			t.Errorf("%s: err = %v, want ErrBadResponse", body, err)
		}
	}
}

func TestErrorResponses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		status      int
		contentType string
		body        string
		retryAfter  string
		kind        error
		message     string
		bodyStatus  int
		sample      string
		wait        time.Duration
	}{
		{"400", 400, "application/json", `{"error":"not booked","status":400}`, "", ErrInvalidInput, "not booked", 400, "", 0},
		{"401", 401, "application/json", `{"error":"invalid token"}`, "", ErrUnauthorized, "invalid token", 0, "", 0},
		{"403 edge html", 403, "text/html", `<html><body><h1>403 Forbidden</h1></body></html>`, "", ErrForbidden, "", 0, "403 Forbidden", 0},
		{"404", 404, "application/json; charset=utf-8", `{"error":"no such booking"}`, "", ErrNotFound, "no such booking", 0, "", 0},
		{"409 status 409", 409, "application/json", `{"error":"not booked","status":409}`, "", ErrNotBooked, "not booked", 409, "", 0},
		{"409 status 200", 409, "application/json", `{"error":"not booked","status":200}`, "", ErrNotBooked, "not booked", 200, "", 0},
		{"413 plain", 413, "text/plain", "request too large", "", ErrTooLarge, "", 0, "request too large", 0},
		{"429 retry-after", 429, "application/json", `{"error":"too many"}`, "30", ErrRateLimited, "too many", 0, "", 30 * time.Second},
		{"429 as the service answers", 429, "application/json", `{"error":"not booked","status":429}`, "", ErrRateLimited, "not booked", 429, "", 0},
		{"503 html", 503, "text/html; charset=utf-8", "<!doctype html><html><head><style>p{color:red}</style><script>var k=1</script></head><body><p>Service\n\tUnavailable</p></body></html>", "", ErrUnavailable, "", 0, "Service Unavailable", 0},
		{"502 json-typed garbage", 502, "application/json", `{"error":`, "", ErrUnavailable, "", 0, `{"error":`, 0},
		{"418 unknown", 418, "application/json", `{"error":"teapot"}`, "", ErrBadResponse, "teapot", 0, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.status)
				_, _ = io.WriteString(w, tt.body)
			}, WithBackoff(Backoff{Attempts: 1}))
			_, err := c.EventTypes(t.Context())
			if !errors.Is(err, tt.kind) {
				t.Fatalf("err = %v, want %v", err, tt.kind)
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("err %T is not *APIError", err)
			}
			if apiErr.StatusCode != tt.status || apiErr.Message != tt.message || apiErr.BodyStatus != tt.bodyStatus || apiErr.Sample != tt.sample || apiErr.RetryAfter != tt.wait {
				t.Errorf("got %+v", apiErr)
			}
			if !strings.Contains(err.Error(), "GET /event-types") {
				t.Errorf("error does not name the endpoint: %v", err)
			}
		})
	}
}

// A 200 that is JSON but not the list asked for is a failed read, never
// an empty list: read as one, {"error":"upstream timeout"} would say that
// every booking was cancelled.
func TestListWithoutItsArrayIsBadResponse(t *testing.T) {
	t.Parallel()
	reads := []struct {
		array string
		read  func(context.Context, *Client) (int, error)
	}{
		{"event_types", func(ctx context.Context, c *Client) (int, error) {
			l, err := c.EventTypes(ctx)
			return len(l), err
		}},
		{"slots", func(ctx context.Context, c *Client) (int, error) {
			l, err := c.Slots(ctx, "intro-call")
			return len(l), err
		}},
		{"bookings", func(ctx context.Context, c *Client) (int, error) {
			l, err := c.Bookings(ctx)
			return len(l), err
		}},
	}
	for _, r := range reads {
		bad := []string{
			`{}`, `{"error":"upstream timeout"}`, `{"error":"upstream timeout for ` + testKey + `"}`,
			`null`, `[]`, `"x"`, `0`,
			`{"ARRAY":null}`, `{"ARRAY":{}}`, `{"ARRAY":"x"}`, `{"ARRAY":1}`,
		}
		for _, body := range bad {
			body = strings.ReplaceAll(body, "ARRAY", r.array)
			t.Run(r.array+" "+body, func(t *testing.T) {
				t.Parallel()
				c, _ := setup(t, func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, body) },
					WithBackoff(Backoff{Attempts: 1}))
				n, err := r.read(t.Context(), c)
				if !errors.Is(err, ErrBadResponse) {
					t.Fatalf("200 %s read as %d entries, err %v; want ErrBadResponse", body, n, err)
				}
				var apiErr *APIError
				if !errors.As(err, &apiErr) || apiErr.StatusCode != 200 || apiErr.Sample == "" {
					t.Errorf("err = %#v, want an APIError with the status and a sample of the body", err)
				}
				if strings.Contains(err.Error(), testKey) {
					t.Errorf("the error shows the key: %v", err)
				}
			})
		}
		t.Run(r.array+" empty", func(t *testing.T) {
			t.Parallel()
			c, _ := setup(t, func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, `{"`+r.array+`":[]}`) })
			if n, err := r.read(t.Context(), c); n != 0 || err != nil {
				t.Errorf("an empty %s array = %d entries, %v; want none and no error", r.array, n, err)
			}
		})
	}
}

// A success the client cannot read is retried as a 5xx is: a proxy or an
// upstream answers one for a moment. The error names what was missing.
func TestListWithoutItsArrayIsRetried(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := 0
	c, sl := setup(t, func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			writeJSON(w, 200, `{"error":"upstream timeout"}`)
			return
		}
		writeJSON(w, 200, `{"bookings":[]}`)
	})
	if _, err := c.Bookings(t.Context()); err != nil {
		t.Fatalf("err = %v, want the retry's answer", err)
	}
	if calls != 2 || len(sl.waits()) != 1 {
		t.Errorf("calls = %d, waits = %v; want a second call after one wait", calls, sl.waits())
	}

	c, _ = setup(t, func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 200, `{"error":"upstream timeout"}`) },
		WithBackoff(Backoff{Attempts: 2}))
	_, err := c.Bookings(t.Context())
	if want := `booking API: GET /bookings: 200 OK, no "bookings" array, body: "{\"error\":\"upstream timeout\"}"`; err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestNonJSONSuccessIsBadResponse(t *testing.T) {
	t.Parallel()
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = io.WriteString(w, "<html>login</html>")
	})
	_, err := c.EventTypes(t.Context())
	if !errors.Is(err, ErrBadResponse) {
		t.Fatalf("err = %v", err)
	}
}

func TestOversizedBodyIsCapped(t *testing.T) {
	t.Parallel()
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"event_types":[`+strings.Repeat(" ", maxBody)+`]}`)
	})
	if _, err := c.EventTypes(t.Context()); !errors.Is(err, ErrBadResponse) {
		t.Fatalf("err = %v", err)
	}
}

func TestErrorSampleNeverShowsKey(t *testing.T) {
	t.Parallel()
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(502)
		// A misbehaving proxy echoing the request headers.
		_, _ = fmt.Fprintf(w, "bad gateway; Authorization: %s", r.Header.Get("Authorization"))
	}, WithBackoff(Backoff{Attempts: 1}))
	_, err := c.EventTypes(t.Context())
	if err == nil || strings.Contains(err.Error(), testKey) || !strings.Contains(err.Error(), "[REDACTED]") {
		t.Fatalf("err = %v", err)
	}
}

func TestReadRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		fail     func(w http.ResponseWriter)
		failures int
		calls    int
		ok       bool
		maxWaits []time.Duration
	}{
		{"5xx then ok", func(w http.ResponseWriter) { w.WriteHeader(503) }, 2, 3, true, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond}},
		{"429 retry-after honoured", func(w http.ResponseWriter) { w.Header().Set("Retry-After", "1"); w.WriteHeader(429) }, 1, 2, true, []time.Duration{time.Second}},
		{"429 retry-after beyond cap stops", func(w http.ResponseWriter) { w.Header().Set("Retry-After", "3600"); w.WriteHeader(429) }, 1, 1, false, nil},
		{"gives up after attempts", func(w http.ResponseWriter) { w.WriteHeader(500) }, 10, 4, false, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}},
		{"cap bounds the wait", func(w http.ResponseWriter) { w.WriteHeader(500) }, 10, 4, false, []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 250 * time.Millisecond}},
		{"4xx not retried", func(w http.ResponseWriter) { w.WriteHeader(404) }, 10, 1, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			calls := 0
			backoff := Backoff{Attempts: 4, Base: 100 * time.Millisecond, Max: 2 * time.Second}
			if tt.name == "cap bounds the wait" {
				backoff.Max = 250 * time.Millisecond
			}
			c, sl := setup(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				calls++
				n := calls
				mu.Unlock()
				if n <= tt.failures {
					tt.fail(w)
					return
				}
				writeJSON(w, 200, `{"event_types":[]}`)
			}, WithBackoff(backoff))
			_, err := c.EventTypes(t.Context())
			if (err == nil) != tt.ok {
				t.Fatalf("err = %v, want ok=%v", err, tt.ok)
			}
			if calls != tt.calls {
				t.Errorf("calls = %d, want %d", calls, tt.calls)
			}
			waits := sl.waits()
			if len(waits) != len(tt.maxWaits) {
				t.Fatalf("waits = %v, want %d of them", waits, len(tt.maxWaits))
			}
			for i, w := range waits {
				if w < 0 || w > tt.maxWaits[i] {
					t.Errorf("wait %d = %v, want within [0, %v]", i, w, tt.maxWaits[i])
				}
			}
		})
	}
}

func TestReadRetriesTransportErrors(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	calls := 0
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			hj, _ := w.(http.Hijacker)
			conn, _, _ := hj.Hijack()
			_ = conn.Close()
			return
		}
		writeJSON(w, 200, `{"bookings":[]}`)
	})
	if _, err := c.Bookings(t.Context()); err != nil {
		t.Fatalf("err = %v", err)
	}
	if calls != 2 {
		t.Errorf("calls = %d", calls)
	}
}

func TestCancelledContextIsNotRetried(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	calls := 0
	c, sl := setup(t, func(w http.ResponseWriter, r *http.Request) {
		calls++
		cancel()
		w.WriteHeader(503)
	})
	_, err := c.Slots(ctx, "intro-call") // not shared: a shared list runs on a context of its own
	if !errors.Is(err, context.Canceled) && !errors.Is(err, ErrUnavailable) {
		t.Fatalf("err = %v", err)
	}
	if calls != 1 || len(sl.waits()) != 0 {
		t.Errorf("calls = %d, waits = %v; want one call, no waits", calls, sl.waits())
	}
}

func TestTimeoutIsTyped(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	c, _ := setup(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}, WithBackoff(Backoff{Attempts: 1}))
	defer close(release)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err := c.EventTypes(ctx)
	if !errors.Is(err, ErrTimeout) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want ErrTimeout wrapping DeadlineExceeded", err)
	}
}

func TestParseRetryAfter(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC)
	tests := map[string]time.Duration{
		"":                              0,
		"0":                             0,
		"-5":                            0,
		"120":                           2 * time.Minute,
		"soon":                          0,
		"Mon, 23 Mar 2026 10:01:30 GMT": 90 * time.Second,
		"Mon, 23 Mar 2026 09:00:00 GMT": 0,
	}
	for in, want := range tests {
		if got := parseRetryAfter(in, now); got != want {
			t.Errorf("parseRetryAfter(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestHumanDuration(t *testing.T) {
	t.Parallel()
	tests := map[time.Duration]string{
		time.Second:                     "1 second",
		1500 * time.Millisecond:         "2 seconds",
		time.Minute:                     "1 minute",
		42 * time.Minute:                "42 minutes",
		time.Hour:                       "1 hour",
		time.Hour + 5*time.Minute:       "1 hour 5 minutes",
		2*time.Hour + 29*time.Second:    "2 hours",
		59*time.Minute + 50*time.Second: "1 hour",
	}
	for in, want := range tests {
		if got := HumanDuration(in); got != want {
			t.Errorf("HumanDuration(%v) = %q, want %q", in, got, want)
		}
	}
}

// FuzzDecode feeds arbitrary answers to every read over real HTTP: the client
// must never panic, and must either decode or return a typed error.
func FuzzDecode(f *testing.F) {
	f.Add(200, "application/json", `{"bookings":[{"booking_id":"a","starts_at":"2026-03-23T09:00:00Z","ends_at":"2026-03-23T09:30:00Z","booker_name":null}]}`)
	f.Add(200, "application/json", `{"slots":[{"start":"2026-03-23T09:00:00.000Z","end":"2026-03-23T09:15:00.000Z"}]}`)
	f.Add(200, "application/json", `{"event_types":[{"slug":"a","duration_minutes":"x"}]}`)
	f.Add(503, "text/html", "<html><body>down</body></html>")
	f.Add(409, "application/json", `{"error":"not booked","status":200}`)
	// As the service writes them: slots without a fraction, bookings with one.
	f.Add(200, "application/json", `{"slots":[{"start":"2026-03-23T09:00:00Z","end":"2026-03-23T09:15:00Z"}]}`)
	f.Add(200, "application/json", `{"bookings":[{"booking_id":"5eed0000-0000-4000-8000-000000000001","starts_at":"2026-03-23T09:00:00.000Z","ends_at":"2026-03-23T09:30:00.000Z","status":"confirmed","booker_name":null,"booker_email":null,"event_type":null}]}`)
	f.Add(429, "application/json", `{"error":"not booked","status":429}`)
	f.Add(413, "text/plain", "request too large")
	f.Add(200, "application/json", `{"bookings":null}`)
	f.Add(200, "application/json", `[]`)
	f.Add(204, "", "")
	type answer struct {
		status      int
		contentType string
		body        string
	}
	next := make(chan answer, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a := <-next
		if a.contentType != "" {
			w.Header().Set("Content-Type", a.contentType)
		}
		w.WriteHeader(a.status)
		_, _ = io.WriteString(w, a.body)
	}))
	f.Cleanup(srv.Close)
	key, _ := NewKey(testKey)
	c, err := NewClient(srv.URL, key, WithBackoff(Backoff{Attempts: 1}))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, status int, contentType, body string) {
		status = 200 + (status%400+400)%400 // 200..599
		if status < 200 || status > 599 || strings.ContainsAny(contentType, "\r\n\x00") {
			return
		}
		reads := []func() (int, error){
			func() (int, error) { l, err := c.EventTypes(t.Context()); return len(l), err },
			func() (int, error) { l, err := c.Slots(t.Context(), "e"); return len(l), err },
			func() (int, error) { l, err := c.Bookings(t.Context()); return len(l), err },
		}
		for _, read := range reads {
			next <- answer{status, contentType, body}
			_, err := read()
			if err == nil {
				if status < 200 || status > 299 {
					t.Fatalf("status %d decoded without error", status)
				}
				continue
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) && !errors.Is(err, ErrBadResponse) && !errors.Is(err, ErrTransport) {
				t.Fatalf("untyped error %T: %v", err, err)
			}
		}
	})
}

func TestCloseIdleConnections(t *testing.T) {
	t.Parallel()
	closed := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, 200, `{"event_types":[]}`)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			close(closed)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	key, err := NewKey(testKey)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(srv.URL, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.EventTypes(t.Context()); err != nil {
		t.Fatal(err)
	}
	c.CloseIdleConnections()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("the idle connection was kept")
	}
}
