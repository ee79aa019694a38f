package notices_test

// Rules of the booking API text (shared/booking-api.md) held against the
// watcher end to end: through real HTTP, the booking client's parsing, the
// diff and the store.

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
)

// reformatting sits in front of the sandbox and, once on, rewrites every
// timestamp of GET /bookings to the same instant in +05:30 with six
// fraction digits, and adds fields the API text does not document.
type reformatting struct {
	on atomic.Bool
}

func (rf *reformatting) front(t *testing.T, sb *bookingtest.Server) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !rf.on.Load() || r.Method != "GET" || r.URL.Path != "/api/v1/bookings" {
			sb.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		sb.ServeHTTP(rec, r)
		var body map[string]any
		if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &body) != nil {
			t.Errorf("sandbox list: %d %s", rec.Code, rec.Body)
			return
		}
		ist := time.FixedZone("IST", 5*3600+1800)
		list, _ := body["bookings"].([]any)
		for _, e := range list {
			b := e.(map[string]any)
			for _, f := range []string{"starts_at", "ends_at"} {
				at, err := time.Parse(time.RFC3339Nano, b[f].(string))
				if err != nil {
					t.Errorf("sandbox %s %q: %v", f, b[f], err)
					return
				}
				b[f] = at.In(ist).Format("2006-01-02T15:04:05.000000-07:00")
			}
			b["location"] = map[string]any{"kind": "video"}
			b["rescheduled_from"] = nil
		}
		body["total"] = len(list)
		out, _ := json.Marshal(body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// §2: clients parse timestamps as instants and do not depend on a
// particular fractional-second format; §9: unknown fields are not relied
// on. The same bookings listed in another offset, another fraction and
// with extra fields are no change: nothing is announced as moved, new or
// cancelled, neither by the running watcher nor by one started anew over
// the stored snapshot.
func TestAPIRuleSameInstantInAnotherFormatIsNoChange(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rf := &reformatting{}
	front := rf.front(t, w.sb)
	c, err := booking.NewClient(front.URL, mustKeyOf(t, bookingtest.DemoKey), booking.WithClock(w.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	w.list.c.Store(c)

	wt := w.watcher()
	w.poll(wt) // the baseline, as the sandbox formats times
	rf.on.Store(true)
	if list, err := c.Bookings(t.Context()); err != nil || len(list) == 0 {
		t.Fatalf("list through the front: %d, %v", len(list), err)
	} else if _, off := list[0].Start.Zone(); off != 5*3600+1800 {
		t.Fatalf("the front did not reformat: %s", list[0].Start)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("the same bookings in another format announced %v", kinds(calls))
	}
	w.clock.Advance(time.Minute)
	w.poll(w.watcher()) // after a restart, against the stored snapshot
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("after a restart, the same bookings in another format announced %v", kinds(calls))
	}
	rf.on.Store(false)
	w.clock.Advance(time.Minute)
	w.poll(wt) // and back
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("back to the sandbox's format announced %v", kinds(calls))
	}

	// A real change is still seen through the other format.
	rf.on.Store(true)
	id, err := w.sb.BookAsAttendee(bookingtest.DemoOwner, "intro-call", w.slot("intro-call", 0), "Ada", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls := w.pub.take()
	if len(calls) != 1 || len(calls[0].ns) != 1 || calls[0].ns[0].Kind != "new" || calls[0].ns[0].Booking.ID != id {
		t.Errorf("a booking made through the other format: %v, want one new %s", kinds(calls), id)
	}
}

func mustKeyOf(t *testing.T, s string) booking.Key {
	t.Helper()
	k, err := booking.NewKey(s)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// restating sits in front of the sandbox and, once on, gives entries of
// GET /bookings another status by ID, and lists ghosts: entries the
// sandbox no longer lists, as they were.
type restating struct {
	mu     sync.Mutex
	on     bool
	status map[string]string
	ghosts []map[string]any
}

func (rs *restating) set(on bool, status map[string]string, ghosts ...map[string]any) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.on, rs.status, rs.ghosts = on, status, ghosts
}

func (rs *restating) front(t *testing.T, sb *bookingtest.Server) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		if !rs.on || r.Method != "GET" || r.URL.Path != "/api/v1/bookings" {
			sb.ServeHTTP(w, r)
			return
		}
		var body struct {
			Bookings []map[string]any `json:"bookings"`
		}
		if err := json.Unmarshal(sandboxList(t, sb, r), &body); err != nil {
			t.Errorf("sandbox list: %v", err)
			return
		}
		for _, b := range body.Bookings {
			if s, ok := rs.status[b["booking_id"].(string)]; ok {
				b["status"] = s
			}
		}
		body.Bookings = append(body.Bookings, rs.ghosts...)
		out, _ := json.Marshal(body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// sandboxList is the sandbox's own answer to a GET /bookings.
func sandboxList(t *testing.T, sb *bookingtest.Server, r *http.Request) []byte {
	t.Helper()
	rec := httptest.NewRecorder()
	sb.ServeHTTP(rec, r)
	if rec.Code != 200 {
		t.Errorf("sandbox list: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.Bytes()
}

// §2 Booking and §3: listings hold only confirmed bookings, with status
// confirmed; cancelled ones are not listed. A read listing a booking the
// attendee has cancelled as "cancelled", and a new one as "pending", is
// not taken for bookings: the poll fails as an unexpected answer and
// nothing is announced from it, neither the pending booking as new nor
// the cancelled one as still there. Once the list reads as documented
// again, the cancel and the new booking are each announced once.
func TestAPIRuleListedStatusOtherThanConfirmedIsNotAnnounced(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	rs := &restating{}
	front := rs.front(t, w.sb)
	c, err := booking.NewClient(front.URL, mustKeyOf(t, bookingtest.DemoKey), booking.WithClock(w.clock.Now))
	if err != nil {
		t.Fatal(err)
	}
	w.list.c.Store(c)
	wt := w.watcher()
	w.poll(wt) // the baseline

	var before struct {
		Bookings []map[string]any `json:"bookings"`
	}
	req := httptest.NewRequest("GET", "/api/v1/bookings", nil)
	req.Header.Set("Authorization", "Bearer "+bookingtest.DemoKey)
	if err := json.Unmarshal(sandboxList(t, w.sb, req), &before); err != nil || len(before.Bookings) == 0 {
		t.Fatalf("sandbox list: %v", err)
	}
	gone := before.Bookings[0]
	goneID := gone["booking_id"].(string)
	if err := w.sb.CancelAsAttendee(goneID); err != nil {
		t.Fatal(err)
	}
	gone["status"] = "cancelled"
	newID, err := w.sb.BookAsAttendee(bookingtest.DemoOwner, "intro-call", w.slot("intro-call", 0), "Ada", "ada@example.com")
	if err != nil {
		t.Fatal(err)
	}
	rs.set(true, map[string]string{newID: "pending"}, gone)

	for range 2 {
		w.clock.Advance(time.Minute)
		if err := wt.Poll(t.Context()); !errors.Is(err, booking.ErrBadResponse) {
			t.Fatalf("poll over entries not confirmed = %v, want ErrBadResponse", err)
		}
		if calls := w.pub.take(); len(calls) != 0 {
			t.Fatalf("entries not confirmed announced %v", kinds(calls))
		}
	}

	rs.set(false, nil)
	w.clock.Advance(time.Minute)
	w.poll(wt)
	got := kinds(w.pub.take())
	slices.Sort(got)
	want := []string{"post cancelled " + goneID, "post new " + newID}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("once listed as documented: %v, want %v", got, want)
	}
}
