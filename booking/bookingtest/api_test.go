package bookingtest

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/fakeclock"
)

func TestAuth(t *testing.T) {
	t.Parallel()
	endpoints := []struct{ method, path string }{
		{http.MethodGet, "/api/v1/event-types"},
		{http.MethodGet, "/api/v1/slots?event_type=consultation"},
		{http.MethodGet, "/api/v1/bookings"},
		{http.MethodPost, "/api/v1/bookings"},
		{http.MethodPost, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000001/cancel"},
	}
	headers := []struct {
		name   string
		values []string // none sends no header
		want   string   // the 401 body
	}{
		{"missing", nil, `{"error":"missing bearer token"}`},
		{"wrong key", []string{"Bearer sandbox_wrong_key_000000"}, `{"error":"invalid token"}`},
		// Present but not a bearer token: the service calls it invalid.
		{"no scheme", []string{DemoKey}, `{"error":"invalid token"}`},
		{"basic scheme", []string{"Basic " + DemoKey}, `{"error":"invalid token"}`},
		{"extended key", []string{"Bearer " + DemoKey + "0"}, `{"error":"invalid token"}`},
		{"truncated key", []string{"Bearer " + DemoKey[:len(DemoKey)-1]}, `{"error":"invalid token"}`},
		{"key with a space inside", []string{"Bearer " + DemoKey[:4] + " " + DemoKey[4:]}, `{"error":"invalid token"}`},
		{"empty key", []string{"Bearer "}, `{"error":"missing bearer token"}`},
		{"only spaces after the scheme", []string{"bearer     "}, `{"error":"missing bearer token"}`},
		{"repeated header", []string{"Bearer " + DemoKey, "Bearer " + DemoKey}, `{"error":"missing bearer token"}`},
	}
	for _, ep := range endpoints {
		for _, h := range headers {
			t.Run(ep.method+" "+ep.path+"/"+h.name, func(t *testing.T) {
				t.Parallel()
				srv, _ := newTestServer(t)
				form := bookForm("consultation", "2026-03-24T09:00:00Z", 30)
				req, err := http.NewRequestWithContext(t.Context(), ep.method, srv.URL+ep.path, strings.NewReader(form.Encode()))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				for _, v := range h.values {
					req.Header.Add("Authorization", v)
				}
				r, err := doRequest(srv.Client(), req)
				if err != nil {
					t.Fatal(err)
				}
				r.want(t, http.StatusUnauthorized, h.want)
				// Nothing happened.
				bs := srv.Bookings(DemoOwner)
				if len(bs) != len(demoBookings) || bs[1].ID != "5eed0000-0000-4000-8000-000000000001" || bs[1].Cancelled {
					t.Errorf("state changed by an unauthorized request: %d bookings, second %s cancelled=%v", len(bs), bs[1].ID, bs[1].Cancelled)
				}
			})
		}
	}
}

// The scheme is matched in any case, and spaces around the key are
// dropped, as the service does; the key itself is used intact.
func TestAuthSchemeAnyCase(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	for _, header := range []string{
		"Bearer " + DemoKey, "bearer " + DemoKey, "BEARER " + DemoKey, "bEaReR " + DemoKey,
		"bearer    " + DemoKey + "  ", "Bearer  " + DemoKey, "  Bearer " + DemoKey,
	} {
		t.Run(strings.ReplaceAll(header, DemoKey, "KEY"), func(t *testing.T) {
			t.Parallel()
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api/v1/bookings", nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Authorization", header)
			r, err := doRequest(srv.Client(), req)
			if err != nil {
				t.Fatal(err)
			}
			if r.status != http.StatusOK {
				t.Errorf("got %d %s", r.status, r.body)
			}
		})
	}
	t.Run("key in another case", func(t *testing.T) {
		t.Parallel()
		get(t, srv, strings.ToUpper(DemoKey), "/api/v1/bookings").want(t, http.StatusUnauthorized, `{"error":"invalid token"}`)
	})
}

func TestUnknownRoutes(t *testing.T) {
	t.Parallel()
	// A plain httptest server: under NewServer these would fail the test.
	sb := New(Options{Seed: true, Now: fakeclock.New(monday).Now})
	hs := httptest.NewServer(sb)
	t.Cleanup(hs.Close)
	for _, tc := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/nope"},
		{http.MethodGet, "/api/v2/event-types"},
		{http.MethodGet, "/event-types"},
		{http.MethodGet, "/api/v1/event-types/"},
		{http.MethodGet, "/api/v1/Event-Types"},
		{http.MethodPost, "/api/v1/event-types"},
		{http.MethodDelete, "/api/v1/bookings"},
		{http.MethodPut, "/api/v1/bookings"},
		{http.MethodGet, "/api/v1/bookings/"},
		{http.MethodPost, "/api/v1/bookings//cancel"},
		{http.MethodPost, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000001/cancel/"},
		{http.MethodPost, "/api/v1/bookings/5eed0000-0000-4000-8000-000000000001/reschedule"},
		{http.MethodGet, "/api/v1/schedules/sch_1002/slots"},
	} {
		for _, key := range []string{DemoKey, ""} {
			t.Run(tc.method+" "+tc.path+" key="+fmt.Sprint(key != ""), func(t *testing.T) {
				t.Parallel()
				r, err := trySend(t, hs.Client(), hs.URL, key, tc.method, tc.path, "", nil)
				if err != nil {
					t.Fatal(err)
				}
				r.want(t, http.StatusNotFound, `{"error":"no such endpoint"}`)
			})
		}
	}
}

// Any GET under /bookings/ is answered as GET /bookings, as the service
// does, key check included; under NewServer it still fails the test, as no
// client should rely on it.
func TestGetUnderBookingsLists(t *testing.T) {
	t.Parallel()
	rec := &recordingTB{TB: t}
	srv := NewServer(rec, WithClock(fakeclock.New(monday).Now))
	list := get(t, srv, DemoKey, "/api/v1/bookings")
	paths := []string{"/api/v1/bookings/x/cancel", "/api/v1/bookings/5eed0000-0000-4000-8000-000000000001", "/api/v1/bookings/x/y/z"}
	for _, path := range paths {
		r := get(t, srv, DemoKey, path)
		if r.status != http.StatusOK || r.text() != list.text() {
			t.Errorf("GET %s: %d %s, want 200 with the list", path, r.status, r.text())
		}
		get(t, srv, "", path).want(t, http.StatusUnauthorized, `{"error":"missing bearer token"}`)
	}
	if errs := rec.Errors(); len(errs) != 2*len(paths) || !strings.Contains(errs[0], "GET /api/v1/bookings/x/cancel (answered as GET /bookings, as the service does)") {
		t.Errorf("errors = %q, want one for each request naming its route", errs)
	}
	n := 0
	for _, r := range srv.Requests() {
		if r.Endpoint == EndpointListBookings {
			n++
		}
	}
	if n != 1+2*len(paths) {
		t.Errorf("the log has %d GET /bookings, want %d", n, 1+2*len(paths))
	}
}

// recordingTB captures Errorf so a test can check that NewServer fails loudly.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Helper() {}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordingTB) Errors() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.errors)
}

func TestNewServerFailsOnUnknownRoute(t *testing.T) {
	t.Parallel()
	rec := &recordingTB{TB: t}
	srv := NewServer(rec)
	get(t, srv, srv.Key, "/api/v1/event-types").decode(t, &struct{}{})
	if errs := rec.Errors(); len(errs) != 0 {
		t.Fatalf("known route reported: %q", errs)
	}
	get(t, srv, srv.Key, "/api/v1/bookings?limit=5").decode(t, &struct{}{}) // unknown query parameters are ignored, not a route
	r := get(t, srv, srv.Key, "/api/v1/event_types")
	r.want(t, http.StatusNotFound, `{"error":"no such endpoint"}`)
	errs := rec.Errors()
	if len(errs) != 1 || !strings.Contains(errs[0], "GET /api/v1/event_types") {
		t.Fatalf("errors = %q, want one naming the route", errs)
	}
}

func TestNewServerOptions(t *testing.T) {
	t.Parallel()
	srv := NewServer(t)
	if srv.Key != DemoKey || strings.HasSuffix(srv.URL, "/api/v1") || !strings.HasPrefix(srv.URL, "http://") {
		t.Errorf("Key %q URL %q", srv.Key, srv.URL)
	}
	if got := listBookings(t, srv, DemoKey); len(got) == 0 {
		t.Error("seeded server lists no bookings")
	}
	empty := NewServer(t, WithoutSeed())
	if empty.Key != "" || len(empty.Bookings(DemoOwner)) != 0 {
		t.Errorf("WithoutSeed: key %q", empty.Key)
	}
	get(t, empty, DemoKey, "/api/v1/event-types").want(t, http.StatusUnauthorized, `{"error":"invalid token"}`)
}

func TestZeroValueSandbox(t *testing.T) {
	t.Parallel()
	var sb Sandbox
	hs := httptest.NewServer(&sb)
	t.Cleanup(hs.Close)
	r, err := trySend(t, hs.Client(), hs.URL, DemoKey, http.MethodGet, "/api/v1/event-types", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.want(t, http.StatusUnauthorized, `{"error":"invalid token"}`)
	sb.AddOwner("k_zero_value_key", "o", nil, nil)
	sb.AddEventType("o", EventType{Slug: "x", Title: "X", DurationMinutes: 30})
	r, err = trySend(t, hs.Client(), hs.URL, "k_zero_value_key", http.MethodGet, "/api/v1/event-types", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r.want(t, http.StatusOK, `{"event_types":[{"schedule_id":"sch_9001","slug":"x","title":"X","duration_minutes":30,"scheduling_kind":"solo"}]}`)
}

func TestEventTypes(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	for _, tc := range []struct {
		key  string
		want []wireEventType
	}{
		// Sorted by slug, as the service lists them, not in the order
		// they were made.
		{DemoKey, []wireEventType{
			{"sch_1005", "board-review", "Board review", 45, "collective"},
			{"sch_1002", "consultation", "Consultation", 30, "solo"},
			{"sch_1003", "deep-dive", "Deep dive", 60, "solo"},
			{"sch_1001", "intro-call", "Intro call", 15, "solo"},
			// legacy-demo is removed and not listed.
			// The API does not tell that office-hours needs email verification.
			{"sch_1007", "office-hours", "Office hours", 30, "solo"},
			{"sch_1004", "team-sync", "Team sync", 30, "round_robin"},
		}},
		{OtherKey, []wireEventType{{"sch_2001", "other-call", "Other call", 30, "solo"}}},
	} {
		t.Run(tc.key, func(t *testing.T) {
			t.Parallel()
			r := get(t, srv, tc.key, "/api/v1/event-types")
			var body struct {
				EventTypes []wireEventType `json:"event_types"`
			}
			r.decode(t, &body)
			if r.status != http.StatusOK || !slices.Equal(body.EventTypes, tc.want) {
				t.Errorf("got %d %+v, want %+v", r.status, body.EventTypes, tc.want)
			}
		})
	}

	t.Run("added at runtime", func(t *testing.T) {
		t.Parallel()
		srv, _ := newTestServer(t)
		srv.AddEventType(DemoOwner, EventType{Slug: "a-first", Title: "A first", DurationMinutes: 30})
		srv.AddEventType(DemoOwner, EventType{Slug: "zz-last", Title: "Zz last", DurationMinutes: 30})
		var body struct {
			EventTypes []wireEventType `json:"event_types"`
		}
		get(t, srv, DemoKey, "/api/v1/event-types").decode(t, &body)
		var slugs []string
		for _, et := range body.EventTypes {
			slugs = append(slugs, et.Slug)
		}
		if want := []string{"a-first", "board-review", "consultation", "deep-dive", "intro-call", "office-hours", "team-sync", "zz-last"}; !slices.Equal(slugs, want) {
			t.Errorf("slugs %q, want %q", slugs, want)
		}
	})

	t.Run("removed at runtime", func(t *testing.T) {
		t.Parallel()
		srv, _ := newTestServer(t)
		srv.RemoveEventType(DemoOwner, "intro-call")
		r := get(t, srv, DemoKey, "/api/v1/event-types")
		if strings.Contains(r.text(), "intro-call") {
			t.Errorf("removed type listed: %s", r.body)
		}
		get(t, srv, DemoKey, "/api/v1/slots?event_type=intro-call").want(t, http.StatusNotFound, `{"error":"no such event type"}`)
		if n := len(srv.EventTypes(DemoOwner)); n != 7 {
			t.Errorf("EventTypes keeps removed ones: got %d, want 7", n)
		}
	})
}

var slotFormat = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$`)

// checkSlots checks invariants every slot list has: the wire format, order,
// length, the window and the owner's Mon–Fri 09:00–17:00 Berlin hours.
func checkSlots(t *testing.T, slots []wireSlot, now time.Time, minutes int, window time.Duration) {
	t.Helper()
	var prev time.Time
	for _, s := range slots {
		if !slotFormat.MatchString(s.Start) || !slotFormat.MatchString(s.End) {
			t.Fatalf("slot %+v not UTC without a fraction", s)
		}
		st, en := mustTime(s.Start), mustTime(s.End)
		if en.Sub(st) != time.Duration(minutes)*time.Minute {
			t.Errorf("slot %+v is not %d minutes", s, minutes)
		}
		if !st.After(now) || !st.Before(now.Add(window)) {
			t.Errorf("slot %+v outside window from %v", s, now)
		}
		if !st.After(prev) {
			t.Errorf("slot %+v not after previous %v", s, prev)
		}
		prev = st
		ls, le := st.In(berlin), en.In(berlin)
		if wd := ls.Weekday(); wd == time.Saturday || wd == time.Sunday {
			t.Errorf("slot %+v on %v", s, wd)
		}
		if ls.Hour() < 9 || le.Hour()*60+le.Minute() > 17*60 || ls.Day() != le.Day() {
			t.Errorf("slot %+v outside 09:00–17:00 Berlin (%v–%v)", s, ls, le)
		}
		if off := (ls.Hour()*60 + ls.Minute() - 9*60) % minutes; off != 0 {
			t.Errorf("slot %+v not aligned to %d minutes from 09:00", s, minutes)
		}
	}
}

func TestSlots(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	for _, tc := range []struct {
		slug        string
		minutes     int
		window      time.Duration
		first, last string
		offered     []string
		taken       []string
	}{
		{
			slug: "intro-call", minutes: 15, window: 14 * 24 * time.Hour,
			// Now is 11:07 in Berlin: the next quarter hour.
			first: "2026-03-23T10:15:00Z",
			// Tue 09:00 Berlin (08:00Z) is Ada's intro call.
			offered: []string{"2026-03-24T08:15:00Z"},
			taken:   []string{"2026-03-23T10:00:00Z", "2026-03-24T08:00:00Z"},
		},
		{
			slug: "consultation", minutes: 30, window: 14 * 24 * time.Hour,
			first: "2026-03-23T10:30:00Z",
			// The window ends Mon 6 April 10:07Z (12:07 CEST).
			last: "2026-04-06T10:00:00Z",
			offered: []string{
				"2026-03-24T08:30:00Z", // after Ada's 15-minute call
				"2026-03-24T09:00:00Z", // OtherOwner's booking does not block DemoOwner
				"2026-03-25T12:00:00Z", // John Backus cancelled
				"2026-03-30T07:30:00Z", // 09:30 CEST after the DST change
			},
			taken: []string{
				"2026-03-24T08:00:00Z", // overlaps Ada's intro call
				"2026-03-24T09:30:00Z", // Grace Hopper
				"2026-03-24T13:00:00Z", // Alan Turing's deep dive, 14:00–15:00 Berlin
				"2026-03-24T13:30:00Z",
				"2026-03-25T10:00:00Z", // a team-sync booking blocks every type
				"2026-03-26T15:30:00Z", // the legacy booking without event type
				"2026-03-28T09:00:00Z", // Saturday
				"2026-03-30T07:00:00Z", // Donald Knuth's intro call 09:00–09:15 CEST
			},
		},
		{
			slug: "deep-dive", minutes: 60, window: 7 * 24 * time.Hour,
			// PeriodDays 7 ends the window Mon 30 March 10:07Z (12:07 CEST).
			last:    "2026-03-30T10:00:00Z",
			offered: []string{"2026-03-24T10:00:00Z"},
			// Grace Hopper's consultation 10:30 Berlin, Alan Turing's deep dive, beyond 7 days.
			taken: []string{"2026-03-24T09:00:00Z", "2026-03-24T13:00:00Z", "2026-03-31T07:00:00Z"},
		},
		{slug: "board-review", minutes: 45, window: 14 * 24 * time.Hour, first: "2026-03-23T10:15:00Z"},
	} {
		t.Run(tc.slug, func(t *testing.T) {
			t.Parallel()
			slots := listSlots(t, srv, DemoKey, tc.slug)
			if len(slots) == 0 {
				t.Fatal("no slots")
			}
			checkSlots(t, slots, monday, tc.minutes, tc.window)
			if tc.first != "" && slots[0].Start != tc.first {
				t.Errorf("first slot %s, want %s", slots[0].Start, tc.first)
			}
			if tc.last != "" && slots[len(slots)-1].Start != tc.last {
				t.Errorf("last slot %s, want %s", slots[len(slots)-1].Start, tc.last)
			}
			starts := slotStarts(slots)
			for _, s := range tc.offered {
				if !starts[s] {
					t.Errorf("%s not offered", s)
				}
			}
			for _, s := range tc.taken {
				if starts[s] {
					t.Errorf("%s offered", s)
				}
			}
			// The helper agrees with the endpoint.
			if got := srv.Slots(DemoOwner, tc.slug); len(got) != len(slots) || slotTime(got[0].Start) != slots[0].Start {
				t.Errorf("Slots() = %d slots, GET /slots %d", len(got), len(slots))
			}
		})
	}
}

func TestSlotsDST(t *testing.T) {
	t.Parallel()
	hours := Weekdays(9*time.Hour, 17*time.Hour)
	// A Sunday range across the 02:00 → 03:00 jump: four wall-clock hours,
	// three real ones.
	hours[time.Sunday] = []TimeRange{{From: 1 * time.Hour, To: 5 * time.Hour}}
	for _, tc := range []struct {
		name   string
		now    time.Time
		first  map[string][2]string // day (UTC date) → first and last slot start
		sunday []string
	}{
		{
			name: "spring forward",
			now:  time.Date(2026, 3, 27, 6, 0, 0, 0, time.UTC),
			first: map[string][2]string{
				"2026-03-27": {"2026-03-27T08:00:00Z", "2026-03-27T15:00:00Z"}, // CET, +01:00
				"2026-03-30": {"2026-03-30T07:00:00Z", "2026-03-30T14:00:00Z"}, // CEST, +02:00
			},
			sunday: []string{"2026-03-29T00:00:00Z", "2026-03-29T01:00:00Z", "2026-03-29T02:00:00Z"},
		},
		{
			name: "fall back",
			now:  time.Date(2026, 10, 23, 5, 0, 0, 0, time.UTC),
			first: map[string][2]string{
				"2026-10-23": {"2026-10-23T07:00:00Z", "2026-10-23T14:00:00Z"},
				"2026-10-26": {"2026-10-26T08:00:00Z", "2026-10-26T15:00:00Z"},
			},
			// 01:00 CEST is 23:00Z; 03:00 CEST happens twice; 05:00 CET is 04:00Z: five real hours.
			sunday: []string{"2026-10-24T23:00:00Z", "2026-10-25T00:00:00Z", "2026-10-25T01:00:00Z", "2026-10-25T02:00:00Z", "2026-10-25T03:00:00Z"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := NewServer(t, WithoutSeed(), WithClock(fakeclock.New(tc.now).Now))
			srv.AddOwner("dst_owner_key_123", "dst", berlin, hours)
			srv.AddEventType("dst", EventType{Slug: "hour", Title: "Hour", DurationMinutes: 60})
			slots := listSlots(t, srv, "dst_owner_key_123", "hour")
			byDay := map[string][]string{}
			for _, s := range slots {
				byDay[s.Start[:10]] = append(byDay[s.Start[:10]], s.Start)
			}
			for day, want := range tc.first {
				got := byDay[day]
				if len(got) != 8 || got[0] != want[0] || got[len(got)-1] != want[1] {
					t.Errorf("%s: %q, want 8 slots %s … %s", day, got, want[0], want[1])
				}
			}
			var sunday []string
			for _, s := range slots {
				if mustTime(s.Start).In(berlin).Weekday() == time.Sunday {
					sunday = append(sunday, s.Start)
				}
			}
			if !slices.Equal(sunday[:len(tc.sunday)], tc.sunday) {
				t.Errorf("DST Sunday: %q, want %q", sunday, tc.sunday)
			}
		})
	}
}

func TestSlotsErrorsAndEmpty(t *testing.T) {
	t.Parallel()
	srv, _ := newTestServer(t)
	srv.AddOwner("idle_owner_key_123", "idle", berlin, nil)
	srv.AddEventType("idle", EventType{Slug: "never", Title: "Never", DurationMinutes: 30})
	for _, tc := range []struct {
		name, key, query string
		status           int
		body             string
	}{
		{"missing", DemoKey, "", 404, `{"error":"no such event type"}`},
		{"empty", DemoKey, "?event_type=", 404, `{"error":"no such event type"}`},
		{"blank", DemoKey, "?event_type=%20", 404, `{"error":"no such event type"}`},
		{"unknown", DemoKey, "?event_type=nope", 404, `{"error":"no such event type"}`},
		{"removed", DemoKey, "?event_type=legacy-demo", 404, `{"error":"no such event type"}`},
		{"schedule id is not a selector", DemoKey, "?event_type=sch_1002", 404, `{"error":"no such event type"}`},
		{"other owner's slug", DemoKey, "?event_type=other-call", 404, `{"error":"no such event type"}`},
		{"demo slug with other key", OtherKey, "?event_type=consultation", 404, `{"error":"no such event type"}`},
		{"no hours: empty, not null", "idle_owner_key_123", "?event_type=never", 200, `{"slots":[]}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			get(t, srv, tc.key, "/api/v1/slots"+tc.query).want(t, tc.status, tc.body)
		})
	}
}

func TestListBookings(t *testing.T) {
	t.Parallel()
	srv, clock := newTestServer(t)

	t.Run("seeded", func(t *testing.T) {
		bs := listBookings(t, srv, DemoKey)
		want := []string{
			"5eed0000-0000-4000-8000-000000000001", "5eed0000-0000-4000-8000-000000000002", "5eed0000-0000-4000-8000-000000000003", // Tue
			"5eed0000-0000-4000-8000-000000000004", "5eed0000-0000-4000-8000-000000000005", "5eed0000-0000-4000-8000-000000000006", // Wed; 000014 is cancelled
			"5eed0000-0000-4000-8000-000000000007", "5eed0000-0000-4000-8000-000000000008", "5eed0000-0000-4000-8000-000000000011", // Thu
			"5eed0000-0000-4000-8000-000000000012", "5eed0000-0000-4000-8000-000000000009", // Fri
			"5eed0000-0000-4000-8000-000000000010", // Mon after the DST change; 000013 is past
		}
		if got := bookingIDs(bs); !slices.Equal(got, want) {
			t.Fatalf("ids %q, want %q", got, want)
		}
		for _, b := range bs {
			if b.Status != "confirmed" {
				t.Errorf("%s status %q", b.BookingID, b.Status)
			}
		}
		// UTC with milliseconds, unlike the slots' form.
		if b := bs[0]; b.StartsAt != "2026-03-24T08:00:00.000Z" || b.EndsAt != "2026-03-24T08:15:00.000Z" ||
			*b.BookerName != "Ada Lovelace" || *b.BookerEmail != "ada.lovelace@example.com" || *b.EventType != "intro-call" {
			t.Errorf("first booking %+v", b)
		}
		// 09:00 CEST, after the DST change.
		if b := bs[len(bs)-1]; b.StartsAt != "2026-03-30T07:00:00.000Z" {
			t.Errorf("after DST: starts_at %q, want 2026-03-30T07:00:00.000Z", b.StartsAt)
		}
	})

	t.Run("legacy nulls", func(t *testing.T) {
		r := get(t, srv, DemoKey, "/api/v1/bookings")
		for _, want := range []string{
			`{"booking_id":"5eed0000-0000-4000-8000-000000000011","starts_at":"2026-03-26T15:30:00.000Z","ends_at":"2026-03-26T16:00:00.000Z","status":"confirmed","booker_name":null,"booker_email":null,"event_type":null}`,
			`{"booking_id":"5eed0000-0000-4000-8000-000000000012","starts_at":"2026-03-27T10:30:00.000Z","ends_at":"2026-03-27T11:00:00.000Z","status":"confirmed","booker_name":"Hedy Lamarr","booker_email":null,"event_type":"consultation"}`,
		} {
			if !strings.Contains(r.text(), want) {
				t.Errorf("missing %s in %s", want, r.body)
			}
		}
	})

	t.Run("other owner", func(t *testing.T) {
		bs := listBookings(t, srv, OtherKey)
		if got := bookingIDs(bs); !slices.Equal(got, []string{OtherBookingID}) {
			t.Errorf("ids %q", got)
		}
	})

	t.Run("upcoming means not yet started", func(t *testing.T) {
		srv := NewServer(t, WithoutSeed(), WithClock(clock.Now))
		srv.AddOwner("k_upcoming_key", "o", berlin, nil)
		srv.AddBooking("o", Booking{ID: "running", Start: monday.Add(-7 * time.Minute), End: monday.Add(23 * time.Minute)})
		srv.AddBooking("o", Booking{ID: "ended", Start: monday.Add(-30 * time.Minute), End: monday})
		srv.AddBooking("o", Booking{ID: "cancelled", Start: monday.Add(time.Hour), End: monday.Add(2 * time.Hour), Cancelled: true})
		srv.AddBooking("o", Booking{ID: "next", Start: monday.Add(time.Minute), End: monday.Add(31 * time.Minute)})
		if got := bookingIDs(listBookings(t, srv, "k_upcoming_key")); !slices.Equal(got, []string{"next"}) {
			t.Errorf("ids %q, want only the booking that has not started", got)
		}
		// The one in progress can still be cancelled.
		post(t, srv, "k_upcoming_key", "/api/v1/bookings/running/cancel", nil).want(t, http.StatusOK, `{"cancelled":true}`)
	})

	t.Run("at most 100, ordered by start then ID", func(t *testing.T) {
		srv := NewServer(t, WithoutSeed(), WithClock(clock.Now))
		srv.AddOwner("k_many_key", "o", time.UTC, nil)
		var want []string
		var adds []Booking
		for i := range 128 {
			id := fmt.Sprintf("bk_%03d", i)
			adds = append(adds, Booking{ID: id, Start: monday.Add(time.Duration(i+1) * time.Hour), End: monday.Add(time.Duration(i+1)*time.Hour + 30*time.Minute)})
			want = append(want, id)
		}
		// Two at the same start as bk_000, ordered by ID.
		same := monday.Add(time.Hour)
		adds = append(adds, Booking{ID: "bk_000b", Start: same, End: same.Add(time.Minute)}, Booking{ID: "bk_000a", Start: same, End: same.Add(time.Minute)})
		want = append([]string{"bk_000", "bk_000a", "bk_000b"}, want[1:]...)
		rand.Shuffle(len(adds), func(i, j int) { adds[i], adds[j] = adds[j], adds[i] })
		for _, b := range adds {
			srv.AddBooking("o", b)
		}
		got := bookingIDs(listBookings(t, srv, "k_many_key"))
		if !slices.Equal(got, want[:100]) {
			t.Errorf("got %d ids %q…, want the first 100 of %d", len(got), got[:min(5, len(got))], len(want))
		}
		if n := len(srv.Bookings("o")); n != 130 {
			t.Errorf("Bookings() = %d, want all 130", n)
		}
	})
}

// Every answer is dated by the sandbox's clock, as the service dates its
// answers by its own: a client reads the service's clock from it, and
// what "upcoming" means follows that clock, not the client's.
func TestAnswersAreDatedByTheSandboxClock(t *testing.T) {
	t.Parallel()
	srv, clock := newTestServer(t)
	clock.Advance(4*time.Minute + 700*time.Millisecond)
	want := "Mon, 23 Mar 2026 10:11:00 GMT"
	srv.FailNext(EndpointSlots, HTMLError(http.StatusServiceUnavailable)) // a fault's answer is dated too
	for _, path := range []string{"/api/v1/bookings", "/api/v1/event-types", "/api/v1/slots?event_type=intro-call"} {
		key := DemoKey
		if path == "/api/v1/event-types" {
			key = "" // a 401 is dated too
		}
		r, err := trySend(t, srv.Client(), srv.URL, key, "GET", path, "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.header.Get("Date"); got != want {
			t.Errorf("GET %s (%d): Date %q, want %q", path, r.status, got, want)
		}
	}
}
