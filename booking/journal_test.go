package booking_test

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
)

// recorder is a journal and observer that remembers what it was told, and
// what the sandbox had seen when each write began.
type recorder struct {
	srv *bookingtest.Server
	err error // Begin fails with it

	mu       sync.Mutex
	begun    []booking.Write
	sentThen []int // POSTs the sandbox had seen when each write began
	finished []*booking.Result
	requests []string
	wrote    []booking.Outcome
	skews    []time.Duration
}

func (r *recorder) Begin(ctx context.Context, w booking.Write) (func(*booking.Result) error, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return nil, r.err
	}
	r.begun = append(r.begun, w)
	r.sentThen = append(r.sentThen, calls(r.srv, bookingtest.EndpointCreateBooking)+calls(r.srv, bookingtest.EndpointCancelBooking))
	return func(res *booking.Result) error {
		r.mu.Lock()
		r.finished = append(r.finished, res)
		r.mu.Unlock()
		return nil
	}, nil
}

func (r *recorder) Settle(context.Context, uint64, *booking.Result) error {
	return errors.New("recorder: nothing to settle")
}

func (r *recorder) Request(endpoint string, status int, _ time.Duration) {
	r.mu.Lock()
	r.requests = append(r.requests, endpoint+" "+strconv.Itoa(status))
	r.mu.Unlock()
}

func (r *recorder) Wrote(op booking.Op, res *booking.Result) {
	r.mu.Lock()
	r.wrote = append(r.wrote, booking.Outcome(string(op)+":"+string(res.Outcome)))
	r.mu.Unlock()
}

func (r *recorder) ClockSkew(d time.Duration) {
	r.mu.Lock()
	r.skews = append(r.skews, d)
	r.mu.Unlock()
}

func journaled(t *testing.T, opts ...booking.Option) (*booking.Client, *bookingtest.Server, *recorder) {
	t.Helper()
	rec := &recorder{}
	c, srv := sandbox(t, append([]booking.Option{booking.WithJournal(rec), booking.WithObserver(rec)}, opts...)...)
	rec.srv = srv
	return c, srv, rec
}

func TestJournalRecordsEachWriteBeforeItIsSent(t *testing.T) {
	t.Parallel()
	c, _, rec := journaled(t)
	ctx := booking.WithActor(t.Context(), "U123")
	res, err := c.Create(ctx, request(firstSlot(t, c, "intro-call")))
	if err != nil || res.Outcome != booking.Confirmed {
		t.Fatalf("create: %+v, %v", res, err)
	}
	if _, err := c.Cancel(ctx, res.Booking.ID); err != nil {
		t.Fatal(err)
	}
	if len(rec.begun) != 2 || rec.sentThen[0] != 0 || rec.sentThen[1] != 1 {
		t.Fatalf("begun %+v with %v writes already sent; each must be recorded before its request", rec.begun, rec.sentThen)
	}
	w := rec.begun[0]
	if w.Op != booking.OpCreate || w.Actor != "U123" || w.EventType != "intro-call" || w.Email != "ada@example.com" ||
		w.Start == "" || w.Name != "Ada Lovelace" {
		t.Errorf("create recorded as %+v", w)
	}
	if c := rec.begun[1]; c.Op != booking.OpCancel || c.BookingID != res.Booking.ID || c.Actor != "U123" ||
		c.Start != res.Booking.Start.UTC().Format(time.RFC3339Nano) || c.EventType != "intro-call" || c.Name != "Ada Lovelace" {
		t.Errorf("cancel recorded as %+v; it should say what the list showed of the booking", c)
	}
	if len(rec.finished) != 2 || rec.finished[0] != res || rec.finished[1].Outcome != booking.Cancelled {
		t.Errorf("outcomes recorded: %+v", rec.finished)
	}
	want := []booking.Outcome{"create:confirmed", "cancel:cancelled"}
	if len(rec.wrote) != 2 || rec.wrote[0] != want[0] || rec.wrote[1] != want[1] {
		t.Errorf("observer told %v, want %v", rec.wrote, want)
	}
	if len(rec.requests) == 0 || rec.requests[0] != "GET /slots 200" {
		t.Errorf("observer saw requests %v", rec.requests)
	}
}

func TestNothingIsSentWhenTheJournalFails(t *testing.T) {
	t.Parallel()
	c, srv, rec := journaled(t)
	slot := firstSlot(t, c, "intro-call")
	rec.err = errors.New("disk full")
	if res, err := c.Create(t.Context(), request(slot)); err == nil {
		t.Fatalf("create went ahead without a journal entry: %+v", res)
	}
	if res, err := c.Cancel(t.Context(), "bk_1"); err == nil {
		t.Fatalf("cancel went ahead without a journal entry: %+v", res)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking) + calls(srv, bookingtest.EndpointCancelBooking); n != 0 {
		t.Fatalf("%d writes sent", n)
	}
}

func TestGuardRefusalsAreJournaledToo(t *testing.T) {
	t.Parallel()
	c, srv, rec := journaled(t, booking.WithLimiter(booking.NewGuard(booking.Limits{PerMinute: 1}, fixed)))
	slots, err := c.Slots(t.Context(), "intro-call")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range slots[:2] {
		if _, err := c.Create(t.Context(), request(s)); err != nil {
			t.Fatal(err)
		}
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != 1 {
		t.Fatalf("POSTs = %d, want 1", n)
	}
	if len(rec.finished) != 2 || rec.finished[1].Outcome != booking.RateLimited {
		t.Fatalf("finished: %+v", rec.finished)
	}
}

func TestDryRunSendsNoWrite(t *testing.T) {
	t.Parallel()
	c, srv, rec := journaled(t, booking.WithDryRun())
	slot := firstSlot(t, c, "intro-call")
	res, err := c.Create(t.Context(), request(slot))
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.DryRun || res.WouldSend == nil || res.NeedsHuman() {
		t.Fatalf("create: %+v", res)
	}
	ws := res.WouldSend
	if ws.Method != "POST" || ws.Path != "/api/v1/bookings" || ws.Form.Get("start") != slot.RawStart() ||
		ws.Form.Get("email") != "ada@example.com" || ws.Form.Get("q:booking-note") != "Agenda: engines" {
		t.Errorf("would send %+v", ws)
	}

	list, err := c.Bookings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	listed := list[0].ID
	res, err = c.Cancel(t.Context(), listed)
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != booking.DryRun || res.WouldSend.Path != "/api/v1/bookings/"+listed+"/cancel" || res.Booking == nil || res.Booking.ID != listed {
		t.Fatalf("cancel: %+v", res)
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking) + calls(srv, bookingtest.EndpointCancelBooking); n != 0 {
		t.Fatalf("a dry run sent %d writes", n)
	}
	if len(rec.begun) != 2 || !rec.begun[0].DryRun || !rec.begun[1].DryRun {
		t.Errorf("dry runs journaled as %+v", rec.begun)
	}
}

func TestReconcileSettlesAnInterruptedWriteByListing(t *testing.T) {
	t.Parallel()
	c, srv := sandbox(t)
	slots, err := c.Slots(t.Context(), "intro-call")
	if err != nil {
		t.Fatal(err)
	}
	made, err := c.Create(t.Context(), request(slots[0]))
	if err != nil || made.Outcome != booking.Confirmed {
		t.Fatal(made, err)
	}
	write := func(s booking.Slot) booking.Write {
		return booking.Write{Op: booking.OpCreate, EventType: "intro-call", Start: s.RawStart(), End: s.RawEnd(), Email: "ADA@example.com"}
	}
	posts := calls(srv, bookingtest.EndpointCreateBooking)

	tests := []struct {
		name string
		w    booking.Write
		want booking.Outcome
	}{
		{"create that went through", write(slots[0]), booking.Confirmed},
		{"create that did not", write(slots[1]), booking.ProbablyNotBooked},
		{"unreadable slot", booking.Write{Op: booking.OpCreate, Start: "soon"}, booking.Unknown},
		{"cancel of a listed booking", booking.Write{Op: booking.OpCancel, BookingID: made.Booking.ID}, booking.NotCancelled},
		{"cancel of an unlisted booking", booking.Write{Op: booking.OpCancel, BookingID: "bk_gone", Start: slots[2].RawStart()}, booking.Cancelled},
		// Gone from the list because it has started, or perhaps so: the
		// list shows only upcoming bookings, so it cannot tell.
		{"create whose slot has passed", booking.Write{Op: booking.OpCreate, EventType: "intro-call",
			Start: "2026-03-23T09:00:00Z", End: "2026-03-23T09:15:00Z", Email: "ada@example.com"}, booking.Unknown},
		{"cancel of a booking that has started", booking.Write{Op: booking.OpCancel, BookingID: "bk_gone", Start: "2026-03-23T09:00:00Z"}, booking.Unknown},
		{"cancel of a booking whose start is not known", booking.Write{Op: booking.OpCancel, BookingID: "bk_gone"}, booking.Unknown},
	}
	for _, tt := range tests {
		res := c.Reconcile(t.Context(), tt.w)
		if res.Outcome != tt.want || !res.Reconciled {
			t.Errorf("%s: %+v, want %s", tt.name, res, tt.want)
		}
	}
	if n := calls(srv, bookingtest.EndpointCreateBooking); n != posts || calls(srv, bookingtest.EndpointCancelBooking) != 0 {
		t.Errorf("Reconcile wrote: %d creates, %d cancels", n-posts, calls(srv, bookingtest.EndpointCancelBooking))
	}
}
