package digest

// Rules of the booking API text (shared/booking-api.md) held against the
// digest runner, through real HTTP and the booking client.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
)

// §2 Booking and §3: listings hold only confirmed bookings, with status
// confirmed; cancelled ones are not listed. A booking of the day that its
// attendee has cancelled, listed all the same with status "cancelled", is
// not put in the day's digest: the list is not read (ErrBadResponse),
// nothing is posted but the failure notice, and once the list reads as
// documented the digest holds only the confirmed bookings.
func TestAPIRuleListedStatusOtherThanConfirmedIsNotInTheDigest(t *testing.T) {
	t.Parallel()
	env := newRunnerEnv(t)
	day := Tomorrow(env.clock.Now(), berlin)
	const gone = "5eed0000-0000-4000-8000-000000000002"

	req := httptest.NewRequest("GET", "/api/v1/bookings", nil)
	req.Header.Set("Authorization", "Bearer "+env.srv.Key)
	rec := httptest.NewRecorder()
	env.srv.ServeHTTP(rec, req)
	var before struct {
		Bookings []map[string]any `json:"bookings"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &before); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(before.Bookings, func(b map[string]any) bool { return b["booking_id"] == gone })
	if i < 0 {
		t.Fatalf("the sandbox does not list %s", gone)
	}
	ghost := before.Bookings[i]
	ghost["status"] = "cancelled"
	if err := env.srv.CancelAsAttendee(gone); err != nil {
		t.Fatal(err)
	}

	var on atomic.Bool
	on.Store(true)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !on.Load() || r.Method != "GET" || r.URL.Path != "/api/v1/bookings" {
			env.srv.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		env.srv.ServeHTTP(rec, r)
		var body struct {
			Bookings []map[string]any `json:"bookings"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Errorf("sandbox list: %v", err)
		}
		body.Bookings = append(body.Bookings, ghost)
		out, _ := json.Marshal(body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(out)
	}))
	t.Cleanup(front.Close)
	key, err := booking.NewKey(env.srv.Key)
	if err != nil {
		t.Fatal(err)
	}
	client, err := booking.NewClient(front.URL, key, booking.WithClock(env.clock.Now),
		booking.WithSleep(func(context.Context, time.Duration) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	env.runner.Source = client

	res, err := env.runner.Run(t.Context(), day)
	if !errors.Is(err, booking.ErrBadResponse) || res.Posted {
		t.Fatalf("run over a cancelled entry = %+v, %v; want ErrBadResponse, nothing posted", res, err)
	}
	if n := len(env.pub.Digests()); n != 0 {
		t.Fatalf("%d digests posted over a list with a cancelled entry", n)
	}
	if fails := env.pub.Failures(); len(fails) != 1 || fails[0].Reason != booking.ErrBadResponse.Error() {
		t.Errorf("failure notices = %+v, want one saying %q", fails, booking.ErrBadResponse)
	}

	on.Store(false)
	res, err = env.runner.Run(t.Context(), day)
	if err != nil || !res.Posted {
		t.Fatalf("once listed as documented: %+v, %v", res, err)
	}
	got := env.pub.Digests()
	if len(got) != 1 {
		t.Fatalf("%d digests", len(got))
	}
	if ids := ids(got[0].Digest); !slices.Equal(ids, []string{"5eed0000-0000-4000-8000-000000000001", "5eed0000-0000-4000-8000-000000000003"}) {
		t.Errorf("entries = %q, want the day's confirmed bookings only", ids)
	}
}
