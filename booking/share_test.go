package booking

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/internal/fakeclock"
	"github.com/bookbot/bookbot/internal/testutil"
)

var shareNow = time.Date(2026, 3, 23, 10, 7, 0, 0, time.UTC)

// heldLists is a sandbox whose first GET /bookings is held until release
// is closed; every other request is answered at once.
type heldLists struct {
	c        *Client
	sandbox  *bookingtest.Server
	release  chan struct{}
	lists    atomic.Int32
	held     chan struct{} // closed when the held request has arrived
	heldGone chan struct{} // closed when its client went away
	onCreate func()        // if set, runs before POST /bookings is answered
	holdNth  atomic.Int32  // which GET /bookings is held; 0 is the first
}

func newHeldLists(t *testing.T) *heldLists {
	t.Helper()
	h := &heldLists{
		sandbox:  bookingtest.NewServer(t, bookingtest.WithClock(func() time.Time { return shareNow })),
		release:  make(chan struct{}),
		held:     make(chan struct{}),
		heldGone: make(chan struct{}),
	}
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "GET" && r.URL.Path == "/api/v1/bookings" && h.lists.Add(1) == max(h.holdNth.Load(), 1) {
			close(h.held)
			select {
			case <-h.release:
			case <-r.Context().Done():
				close(h.heldGone)
				return
			}
		}
		if r.Method == "POST" && r.URL.Path == "/api/v1/bookings" && h.onCreate != nil {
			h.onCreate()
		}
		h.sandbox.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
	})
	key, err := NewKey(h.sandbox.Key)
	if err != nil {
		t.Fatal(err)
	}
	h.c, err = NewClient(front.URL, key, WithClock(func() time.Time { return shareNow }))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// book books the first intro-call slot for Ada and checks the booking API
// confirmed it. Had the confirming list joined a held one, it would have
// timed out.
func (h *heldLists) book(t *testing.T) Slot {
	t.Helper()
	slots, err := h.c.Slots(t.Context(), "intro-call")
	if err != nil || len(slots) == 0 {
		t.Fatalf("slots: %v (%d)", err, len(slots))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	res, err := h.c.Create(ctx, CreateRequest{Slot: slots[0], Name: "Ada Lovelace", Email: "ada@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Outcome != Confirmed || !res.Verified {
		t.Fatalf("outcome %s, verified %v; seen %q", res.Outcome, res.Verified, res.Seen)
	}
	return slots[0]
}

func (s *sharedList[T]) waiting() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur == nil {
		return 0
	}
	return s.cur.waiters
}

func TestListsInFlightShareOneRequest(t *testing.T) {
	t.Parallel()
	h := newHeldLists(t)
	const n = 20
	lists := make([][]Booking, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { lists[i], errs[i] = h.c.Bookings(t.Context()) })
	}
	testutil.WaitFor(t, 10*time.Second, "every caller to wait for the list in flight", func() bool { return h.c.lists.waiting() == n })
	close(h.release)
	wg.Wait()

	if got := h.lists.Load(); got != 1 {
		t.Errorf("GET /bookings sent %d times for %d calls in flight together, want 1", got, n)
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if len(lists[i]) == 0 || len(lists[i]) != len(lists[0]) {
			t.Fatalf("call %d got %d bookings, call 0 got %d", i, len(lists[i]), len(lists[0]))
		}
	}
	// Each caller owns its list: sorting or editing one leaves the others.
	first := lists[1][0].ID
	lists[0][0].ID = "changed"
	if lists[1][0].ID != first {
		t.Error("callers share one backing array")
	}
	// A call after the flight ended asks again.
	if _, err := h.c.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := h.lists.Load(); got != 2 {
		t.Errorf("GET /bookings sent %d times after a later call, want 2", got)
	}
}

// Event types asked for together cost one GET /event-types; one asked for
// after it answered asks anew, so a type removed meanwhile is gone.
func TestEventTypesInFlightShareOneRequest(t *testing.T) {
	t.Parallel()
	sb := bookingtest.NewServer(t, bookingtest.WithClock(func() time.Time { return shareNow }))
	release := make(chan struct{})
	var asked atomic.Int32
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/v1/event-types" && asked.Add(1) == 1 {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		sb.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	key, err := NewKey(sb.Key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(front.URL, key)
	if err != nil {
		t.Fatal(err)
	}
	const n = 20
	got := make([][]EventType, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { got[i], errs[i] = c.EventTypes(t.Context()) })
	}
	testutil.WaitFor(t, 10*time.Second, "every caller to wait for the types in flight", func() bool { return c.types.waiting() == n })
	close(release)
	wg.Wait()
	if a := asked.Load(); a != 1 {
		t.Errorf("GET /event-types sent %d times for %d calls in flight together, want 1", a, n)
	}
	for i := range n {
		if errs[i] != nil || len(got[i]) == 0 || len(got[i]) != len(got[0]) {
			t.Fatalf("call %d: %d types, %v", i, len(got[i]), errs[i])
		}
	}
	gone := got[0][0].Slug
	sb.RemoveEventType(bookingtest.DemoOwner, gone)
	after, err := c.EventTypes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, et := range after {
		if et.Slug == gone {
			t.Errorf("%s was removed, and a later call still lists it", gone)
		}
	}
	if a := asked.Load(); a != 2 {
		t.Errorf("GET /event-types sent %d times after a later call, want 2", a)
	}
}

func TestListAfterWriteIsNeverOneAskedForBefore(t *testing.T) {
	t.Parallel()
	h := newHeldLists(t)
	before := make(chan []Booking, 1)
	go func() {
		list, _ := h.c.Bookings(t.Context())
		before <- list
	}()
	<-h.held
	slot := h.book(t)

	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	after, err := h.c.Bookings(ctx)
	if err != nil {
		t.Fatalf("a list asked for after the booking joined one asked for before: %v", err)
	}
	if b, _ := Find(after, "intro-call", slot.Start, "ada@example.com"); b == nil {
		t.Error("a list asked for after the booking does not show it")
	}
	if got := h.lists.Load(); got != 4 {
		t.Errorf("GET /bookings sent %d times, want 4 (held, the check before the create, verification, after)", got)
	}

	close(h.release)
	<-before
}

func TestVerificationNeverJoinsAListAskedForDuringTheWrite(t *testing.T) {
	t.Parallel()
	h := newHeldLists(t)
	h.holdNth.Store(2) // the first is the create's own check for an existing booking
	during := make(chan struct{})
	h.onCreate = func() {
		// Someone lists while the create is on its way: the API has not
		// made the booking yet, so this list cannot show it.
		go func() {
			_, _ = h.c.Bookings(t.Context())
			close(during)
		}()
		<-h.held
	}
	h.book(t)
	close(h.release)
	<-during
}

func TestCallerGivingUpLeavesOthersTheirList(t *testing.T) {
	t.Parallel()
	h := newHeldLists(t)

	stays := make(chan error, 1)
	go func() {
		_, err := h.c.Bookings(t.Context())
		stays <- err
	}()
	ctx, cancel := context.WithCancel(t.Context())
	leaves := make(chan error, 1)
	go func() {
		_, err := h.c.Bookings(ctx)
		leaves <- err
	}()
	testutil.WaitFor(t, 10*time.Second, "both callers to wait", func() bool { return h.c.lists.waiting() == 2 })

	cancel()
	err := <-leaves
	if !errors.Is(err, ErrTransport) || !errors.Is(err, context.Canceled) {
		t.Errorf("the caller that gave up got %v, want a transport error wrapping context.Canceled", err)
	}
	close(h.release)
	if err := <-stays; err != nil {
		t.Errorf("the caller still waiting got %v, want the list", err)
	}
	if got := h.lists.Load(); got != 1 {
		t.Errorf("GET /bookings sent %d times, want 1", got)
	}
}

func TestLastCallerGivingUpEndsTheRequest(t *testing.T) {
	t.Parallel()
	h := newHeldLists(t)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := h.c.Bookings(ctx)
		done <- err
	}()
	<-h.held
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want context.Canceled", err)
	}
	select {
	case <-h.heldGone:
	case <-time.After(10 * time.Second):
		t.Fatal("the request went on after its only caller gave up")
	}
}

// A panic while fetching reaches the caller, where the bot's recover logs
// it, rather than ending the process on the fetch's own goroutine.
func TestPanicInTheFetchReachesTheCaller(t *testing.T) {
	t.Parallel()
	var s sharedList[Booking]
	got := func() (r any) {
		defer func() { r = recover() }()
		_, _ = s.do(t.Context(), func(context.Context) ([]Booking, error) { panic("key source broke") })
		return nil
	}()
	if got != "key source broke" {
		t.Errorf("caller recovered %v, want the fetch's panic", got)
	}
	// The flight is over: the next call fetches again.
	list, err := s.do(t.Context(), func(context.Context) ([]Booking, error) { return []Booking{{ID: "bk_1"}}, nil })
	if err != nil || len(list) != 1 {
		t.Errorf("after a panic: %v, %v", list, err)
	}
}

// newRecentLists is a sandbox that holds nothing, with a client whose
// clock the test moves.
func newRecentLists(t *testing.T) (*heldLists, *fakeclock.Clock) {
	t.Helper()
	h := newHeldLists(t)
	h.holdNth.Store(1 << 30)
	clk := fakeclock.New(shareNow)
	h.c.now, h.c.lists.now = clk.Now, clk.Now
	return h, clk
}

func recentRead(t *testing.T, r *Recent) []Booking {
	t.Helper()
	list, err := r.Bookings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// Two periodic readers take each other's recent lists: one read between
// them, never a reader's own list twice, never one older than maxAge.
func TestRecentReadersShareOneRead(t *testing.T) {
	t.Parallel()
	h, clk := newRecentLists(t)
	reminders, notices := h.c.Recent(15*time.Second), h.c.Recent(15*time.Second)
	want := func(n int32, what string) {
		t.Helper()
		if got := h.lists.Load(); got != n {
			t.Errorf("%s: GET /bookings sent %d times, want %d", what, got, n)
		}
	}
	first := recentRead(t, reminders)
	want(1, "the first reader")
	clk.Advance(10 * time.Second)
	if got := recentRead(t, notices); len(got) != len(first) || len(got) == 0 {
		t.Fatalf("the second reader got %d bookings, the first %d", len(got), len(first))
	}
	want(1, "a second reader within 15 s")
	recentRead(t, reminders)
	want(2, "a reader whose own list is the latest")
	clk.Advance(15 * time.Second)
	recentRead(t, notices)
	want(2, "the other reader, 15 s after that read")
	clk.Advance(time.Second)
	recentRead(t, reminders)
	want(3, "a reader 16 s after the latest read")

	// Anyone's read counts, and each reader gets a list of its own.
	clk.Advance(time.Minute)
	person, err := h.c.Bookings(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want(4, "a person's list")
	got := recentRead(t, notices)
	want(4, "a reader after a person's list")
	got[0].ID = "changed"
	if person[0].ID == "changed" {
		t.Error("a reader shares its backing array with the person's list")
	}
}

// A write through the client means no list asked for before it is handed
// to a reader: the next one reads, and shows the booking.
func TestRecentReaderAfterWriteReadsAgain(t *testing.T) {
	t.Parallel()
	h, _ := newRecentLists(t)
	notices := h.c.Recent(time.Hour)
	if _, err := h.c.Bookings(t.Context()); err != nil {
		t.Fatal(err)
	}
	n := h.lists.Load()
	slot := h.book(t) // reads the list before and after the create
	if h.lists.Load() != n+2 {
		t.Fatalf("a create sent %d list reads, want 2", h.lists.Load()-n)
	}
	list := recentRead(t, notices)
	if got := h.lists.Load(); got != n+3 {
		t.Errorf("the reader after the write took a list asked for during it (%d reads, want %d)", got, n+3)
	}
	if b, _ := Find(list, "intro-call", slot.Start, "ada@example.com"); b == nil {
		t.Error("the reader's list after the booking does not show it")
	}
}

// A failed read is not handed on: the other reader asks again.
func TestRecentReaderNeverTakesAFailure(t *testing.T) {
	t.Parallel()
	h, _ := newRecentLists(t)
	h.c.backoff = Backoff{Attempts: 1}
	h.sandbox.FailNext(bookingtest.EndpointListBookings, bookingtest.Fault{Status: http.StatusServiceUnavailable})
	if _, err := h.c.Recent(time.Hour).Bookings(t.Context()); err == nil {
		t.Fatal("the sandbox's 503 was not an error")
	}
	recentRead(t, h.c.Recent(time.Hour))
	if got := h.lists.Load(); got != 2 {
		t.Errorf("GET /bookings sent %d times, want 2", got)
	}
}
