package notices_test

// Rules of the booking API text (shared/booking-api.md) held against the
// watcher end to end: through real HTTP, the booking client's parsing, the
// diff and the store.

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
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
