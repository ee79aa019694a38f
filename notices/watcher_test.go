package notices_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/internal/fakeclock"
	"github.com/bookbot/bookbot/internal/pause"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/store/bolt"
)

// t0 is a Monday morning before the demo owner's working hours in Berlin.
var t0 = time.Date(2026, 3, 23, 7, 0, 0, 0, time.UTC)

// published is one call to the recording Publisher.
type published struct {
	call    string // post, reply, update, burst
	channel string
	thread  notices.Message
	ns      []notices.Notice
}

// recorder is a Publisher that remembers every call; fail makes the next
// posts fail with the errors given, in turn. A post failing with errLost
// is in Slack all the same, as when its answer is lost on the way.
type recorder struct {
	mu       sync.Mutex
	calls    []published
	fail     []error
	partSize int // notices per message of a burst; 0: all in one
	ts       int
	inSlack  []sent // every message posted, for Find
}

// errLost is a post's answer lost on the way: the post is in Slack.
var errLost = errors.New("answer lost")

type sent struct {
	m notices.Message
	p published
}

func (r *recorder) send(p published) (notices.Message, error) {
	var err error
	if len(r.fail) > 0 {
		err = r.fail[0]
		r.fail = r.fail[1:]
		if err != nil && !errors.Is(err, errLost) {
			return notices.Message{}, err
		}
	}
	r.ts++
	// A message posted to a user ID lands in their DM, as in Slack.
	ch := p.channel
	if strings.HasPrefix(ch, "U") {
		ch = "D" + ch[1:]
	}
	m := notices.Message{Channel: ch, TS: "1700000000." + strconv.Itoa(r.ts)}
	r.calls = append(r.calls, p)
	r.inSlack = append(r.inSlack, sent{m, p})
	if err != nil {
		return notices.Message{}, err
	}
	return m, nil
}

func (r *recorder) Post(_ context.Context, channel string, n notices.Notice) (notices.Message, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.send(published{call: "post", channel: channel, ns: []notices.Notice{n}})
}

func (r *recorder) Reply(_ context.Context, thread notices.Message, n notices.Notice) (notices.Message, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.send(published{call: "reply", channel: thread.Channel, thread: thread, ns: []notices.Notice{n}})
}

func (r *recorder) Update(_ context.Context, thread notices.Message, n notices.Notice) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, published{call: "update", channel: thread.Channel, thread: thread, ns: []notices.Notice{n}})
	return nil
}

// Burst sends ns in messages of partSize notices (all in one when 0), and
// stops at the first that fails.
func (r *recorder) Burst(_ context.Context, channel string, ns []notices.Notice) []notices.Sent {
	r.mu.Lock()
	defer r.mu.Unlock()
	size := r.partSize
	if size == 0 {
		size = len(ns)
	}
	var sent []notices.Sent
	for part := range slices.Chunk(ns, size) {
		m, err := r.send(published{call: "burst", channel: channel, ns: part})
		for range part {
			sent = append(sent, notices.Sent{Message: m, Err: err})
		}
		if err != nil {
			break
		}
	}
	return sent
}

// finder finds the recorder's messages by the claims of their notices; err
// makes every look fail.
type finder struct {
	r     *recorder
	err   error
	looks atomic.Int32
}

func (f *finder) Find(_ context.Context, channel string, threads []notices.Message, claims []string, _ time.Time) (map[string]notices.Found, error) {
	f.looks.Add(1)
	if f.err != nil {
		return nil, f.err
	}
	f.r.mu.Lock()
	defer f.r.mu.Unlock()
	out := map[string]notices.Found{}
	for _, s := range f.r.inSlack {
		inThread := s.p.call == "reply" && slices.Contains(threads, s.p.thread)
		if s.p.channel != channel || (s.p.call == "reply" && !inThread) {
			continue
		}
		for _, n := range s.p.ns {
			if slices.Contains(claims, n.Claim) {
				out[n.Claim] = notices.Found{Message: s.m, Burst: s.p.call == "burst"}
			}
		}
	}
	return out, nil
}

// finderWorld is a world whose watcher looks for notices among the
// recorder's messages; err makes every look fail.
func finderWorld(t *testing.T, err error) (*world, *finder) {
	t.Helper()
	f := &finder{err: err}
	w := newWorld(t, func(c *notices.Config) { c.Finder = f })
	f.r = w.pub
	return w, f
}

// take returns the calls made since the last take.
func (r *recorder) take() []published {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

type alerts struct {
	mu   sync.Mutex
	sent []string
}

func (a *alerts) Alert(_ context.Context, text string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sent = append(a.sent, text)
	return nil
}

func (a *alerts) take() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := a.sent
	a.sent = nil
	return out
}

type counts struct {
	mu      sync.Mutex
	polls   map[bool]int
	notices map[string]int
}

func (c *counts) NoticePoll(ok bool, _ time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.polls[ok]++
}

func (c *counts) Notice(k notices.Kind, result string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.notices[string(k)+" "+result]++
}

// switchable lists through whichever client it holds now.
type switchable struct {
	c atomic.Pointer[booking.Client]
}

func (s *switchable) Bookings(ctx context.Context) ([]booking.Booking, error) {
	return s.c.Load().Bookings(ctx)
}

func (s *switchable) EventTypes(ctx context.Context) ([]booking.EventType, error) {
	return s.c.Load().EventTypes(ctx)
}

type world struct {
	t       *testing.T
	clock   *fakeclock.Clock
	sb      *bookingtest.Server
	client  *booking.Client
	list    *switchable
	store   *bolt.Notices
	journal *bolt.Journal
	pub     *recorder
	alerts  *alerts
	counts  *counts
	cfg     notices.Config
	ahead   atomic.Int64 // the sandbox's clock minus the watcher's
	slept   atomic.Int64 // the watcher's waits, in all
}

func newWorld(t *testing.T, opts ...func(*notices.Config)) *world {
	t.Helper()
	w := &world{t: t, clock: fakeclock.New(t0), pub: &recorder{}, alerts: &alerts{},
		counts: &counts{polls: map[bool]int{}, notices: map[string]int{}}}
	w.sb = bookingtest.NewServer(t, bookingtest.WithClock(func() time.Time {
		return w.clock.Now().Add(time.Duration(w.ahead.Load()))
	}))
	dir := t.TempDir()
	db, err := bolt.Open(dir, bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	w.journal, w.store = db.Journal(), db.Notices()
	w.journal.Now = w.clock.Now // the watcher's clock, as bookbot's are one
	w.client = w.newClient(t, bookingtest.DemoKey)
	w.list = &switchable{}
	w.list.c.Store(w.client)
	w.cfg = notices.Config{
		List: w.list, Store: w.store, Publisher: w.pub, Alerter: w.alerts, Writes: w.journal, Metrics: w.counts,
		Channel: "CNOTES", Interval: time.Minute, Now: w.clock.Now,
		Sleep: func(_ context.Context, d time.Duration) error {
			w.slept.Add(int64(d))
			w.clock.Advance(d)
			return nil
		},
	}
	for _, o := range opts {
		o(&w.cfg)
	}
	return w
}

func (w *world) newClient(t *testing.T, key string) *booking.Client {
	t.Helper()
	k, err := booking.NewKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c, err := booking.NewClient(w.sb.URL, k, booking.WithClock(w.clock.Now), booking.WithJournal(w.journal),
		booking.WithSleep(func(context.Context, time.Duration) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// serviceAhead sets the booking API's clock d ahead of the watcher's (behind
// when d < 0), as the watcher's Skew tells it, for the watchers made after.
func (w *world) serviceAhead(d time.Duration) {
	w.ahead.Store(int64(d))
	w.cfg.Skew = func() (time.Duration, bool) { return d, true }
}

// watcher is a fresh Watcher over the world's store, as after a restart.
func (w *world) watcher() *notices.Watcher { return notices.NewWatcher(w.cfg) }

func (w *world) poll(wt *notices.Watcher) {
	w.t.Helper()
	if err := wt.Poll(w.t.Context()); err != nil {
		w.t.Fatalf("poll: %v", err)
	}
}

// slot is the n-th free slot of an event, as the attendee's page offers it.
func (w *world) slot(slug string, n int) time.Time {
	w.t.Helper()
	slots := w.sb.Slots(bookingtest.DemoOwner, slug)
	if len(slots) <= n {
		w.t.Fatalf("%s has %d slots", slug, len(slots))
	}
	return slots[n].Start
}

// cancelUpcoming cancels, as their attendees, all bookings starting after
// now: more than BurstSize, or it fails. It returns their IDs.
func (w *world) cancelUpcoming() []string {
	w.t.Helper()
	var ids []string
	for _, b := range w.sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && b.Start.After(w.clock.Now()) {
			if err := w.sb.CancelAsAttendee(b.ID); err != nil {
				w.t.Fatal(err)
			}
			ids = append(ids, b.ID)
		}
	}
	if len(ids) <= notices.BurstSize {
		w.t.Fatalf("only %d cancelled", len(ids))
	}
	return ids
}

// book books the n-th free slot of an event as an attendee on the
// booking page, and returns the booking's ID.
func (w *world) book(slug string, n int, name, email string) string {
	w.t.Helper()
	id, err := w.sb.BookAsAttendee(bookingtest.DemoOwner, slug, w.slot(slug, n), name, email)
	if err != nil {
		w.t.Fatal(err)
	}
	return id
}

func kinds(calls []published) []string {
	var out []string
	for _, c := range calls {
		for _, n := range c.ns {
			out = append(out, fmt.Sprintf("%s %s %s", c.call, n.Kind, n.Booking.ID))
		}
	}
	return out
}

func TestFirstReadIsTheBaseline(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.poll(w.watcher())
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("the first read announced %v", kinds(calls))
	}
	s, ok, err := w.store.Last(t.Context())
	if err != nil || !ok || len(s.Bookings) != len(w.sb.Bookings(bookingtest.DemoOwner))-2 || !s.At.Equal(t0) {
		t.Errorf("baseline = %d bookings at %s, %v, %v", len(s.Bookings), s.At, ok, err)
	}
}

// A booking made, moved and cancelled on the booking page is announced
// once each: the move and the cancel in the first notice's thread, which
// is updated in place.
func TestAttendeeChangesAreAnnounced(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)

	id := w.book("consultation", 2, "Grace <!here> Hopper", "grace@example.com")
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls := w.pub.take()
	if got := kinds(calls); !slices.Equal(got, []string{"post new " + id}) {
		t.Fatalf("after a booking: %v", got)
	}
	n := calls[0].ns[0]
	if calls[0].channel != "CNOTES" || n.Title != "Consultation" || n.By != nil || n.Booking.BookerName.String != "Grace <!here> Hopper" {
		t.Errorf("notice %+v in %s", n, calls[0].channel)
	}
	thread, ok, err := w.store.Thread(t.Context(), id)
	if err != nil || !ok || thread.Channel != "CNOTES" {
		t.Fatalf("thread %v %v %v", thread, ok, err)
	}

	w.clock.Advance(time.Minute)
	w.poll(wt) // nothing changed
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("an unchanged list announced %v", kinds(calls))
	}

	was := n.Booking
	if err := w.sb.MoveAsAttendee(id, w.slot("consultation", 6)); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls = w.pub.take()
	if got := kinds(calls); !slices.Equal(got, []string{"update moved " + id, "reply moved " + id}) {
		t.Fatalf("after a move: %v", got)
	}
	if m := calls[1].ns[0]; !m.Was.Start.Equal(was.Start) || m.Booking.Start.Equal(was.Start) || calls[1].thread != thread || calls[0].thread != thread {
		t.Errorf("move notice %+v, thread %v", m, calls[1].thread)
	}

	if err := w.sb.CancelAsAttendee(id); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"update cancelled " + id, "reply cancelled " + id}) {
		t.Fatalf("after a cancel: %v", got)
	}
	if w.counts.notices["new posted"] != 1 || w.counts.notices["moved posted"] != 1 || w.counts.notices["cancelled posted"] != 1 || w.counts.polls[true] != 5 {
		t.Errorf("metrics %v %v", w.counts.notices, w.counts.polls)
	}
}

// §2: removed event types are excluded from listings. A change to a
// booking of one is announced under the event's slug.
func TestRemovedEventTypeIsNamedBySlug(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)
	id := w.book("consultation", 0, "Ada", "ada@example.com")
	w.sb.RemoveEventType(bookingtest.DemoOwner, "consultation")
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls := w.pub.take()
	if got := kinds(calls); !slices.Equal(got, []string{"post new " + id}) {
		t.Fatalf("after a booking: %v", got)
	}
	if n := calls[0].ns[0]; n.Title != "consultation" {
		t.Errorf("title %q, want the slug", n.Title)
	}
}

// A booking that left the list because it started was not cancelled.
func TestStartedIsNotCancelled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)
	w.clock.Set(w.nextStart(t0).Add(time.Second))
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("a booking that started was announced: %v", kinds(calls))
	}
}

// nextStart is the start of the first booking after t.
func (w *world) nextStart(t time.Time) time.Time {
	w.t.Helper()
	var next time.Time
	for _, b := range w.sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && b.Start.After(t) && (next.IsZero() || b.Start.Before(next)) {
			next = b.Start
		}
	}
	if next.IsZero() {
		w.t.Fatalf("no booking after %s", t)
	}
	return next
}

// With the service's clock 4 minutes ahead, a booking that started there
// left the list: it was not cancelled, though it starts later here.
func TestStartedByTheServiceClock(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.serviceAhead(4 * time.Minute)
	wt := w.watcher()
	w.poll(wt)
	w.clock.Set(w.nextStart(t0.Add(5 * time.Minute)).Add(-2 * time.Minute))
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("a booking that started by the service's clock was announced: %v", kinds(calls))
	}
}

// With the service's clock 5 minutes behind, a booking cancelled 3 minutes
// before its start is announced as cancelled.
func TestCancelledJustBeforeItsStartBehindTheServiceClock(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.serviceAhead(-5 * time.Minute)
	wt := w.watcher()
	w.poll(wt)
	start := w.nextStart(t0.Add(5 * time.Minute))
	var id string
	for _, b := range w.sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && b.Start.Equal(start) {
			id = b.ID
		}
	}
	w.clock.Set(start.Add(-3 * time.Minute))
	if err := w.sb.CancelAsAttendee(id); err != nil {
		t.Fatal(err)
	}
	w.poll(wt)
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"post cancelled " + id}) {
		t.Errorf("a booking cancelled 3 minutes before its start: %v", got)
	}
}

// An attendee's reschedule keeps the booking's ID, and the service lists
// it without its event type from then on: the move, and what is saved for
// the reads after, keep the event type it had.
func TestRescheduleKeepsTheEventType(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)
	id := w.book("consultation", 2, "Grace", "grace@example.com")
	w.clock.Advance(time.Minute)
	w.poll(wt)
	w.pub.take()

	w.sb.EditAnswers(bookingtest.EndpointListBookings, func(body map[string]any) {
		for _, b := range body["bookings"].([]any) {
			if b := b.(map[string]any); b["booking_id"] == id {
				b["event_type"] = nil
			}
		}
	})
	if err := w.sb.MoveAsAttendee(id, w.slot("consultation", 6)); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls := w.pub.take()
	if got := kinds(calls); !slices.Equal(got, []string{"update moved " + id, "reply moved " + id}) {
		t.Fatalf("after the move: %v", got)
	}
	for _, c := range calls {
		if n := c.ns[0]; n.Booking.EventType != booking.Some("consultation") || n.Title != "Consultation" {
			t.Errorf("%s: event type %+v, title %q; want the consultation's", c.call, n.Booking.EventType, n.Title)
		}
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	s, _, err := w.store.Last(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range s.Bookings {
		if b.ID == id && b.EventType != booking.Some("consultation") {
			t.Errorf("saved after two reads without it: event type %+v", b.EventType)
		}
	}
}

// emptyList is a 200 with an empty list, as the service answers for a
// moment during a deploy or a failover.
var emptyList = bookingtest.Fault{Status: http.StatusOK, ContentType: "application/json", Body: `{"bookings":[]}`}

// last is the snapshot saved last.
func (w *world) last() notices.Snapshot {
	w.t.Helper()
	s, ok, err := w.store.Last(w.t.Context())
	if err != nil || !ok {
		w.t.Fatalf("no snapshot: %v", err)
	}
	return s
}

// One empty list between good reads announces nothing: the second read,
// ConfirmAfter later, lists the bookings again, and the empty one is never
// saved, so nothing is new afterwards. A booking made meanwhile is new.
func TestAnEmptyReadIsNotBelieved(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)
	listed := len(w.last().Bookings)
	id := w.book("intro-call", 0, "Ada", "ada@example.com")
	w.sb.FailNext(bookingtest.EndpointListBookings, emptyList)
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"post new " + id}) {
		t.Errorf("after an empty read: %v, want only the new booking", got)
	}
	if d := time.Duration(w.slept.Load()); d != notices.ConfirmAfter {
		t.Errorf("waited %s before reading again, want %s", d, notices.ConfirmAfter)
	}
	if s := w.last(); len(s.Bookings) != listed+1 {
		t.Errorf("saved %d bookings, want %d", len(s.Bookings), listed+1)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("the read after: %v", kinds(calls))
	}
}

// Many bookings cancelled at once are announced once a second read shows
// them cancelled too.
func TestManyCancellationsAreConfirmed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)
	ids := w.cancelUpcoming()
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls := w.pub.take()
	if len(calls) != 1 || calls[0].call != "burst" || len(calls[0].ns) != len(ids) {
		t.Errorf("after %d cancellations: %v", len(ids), kinds(calls))
	}
	if d := time.Duration(w.slept.Load()); d != notices.ConfirmAfter {
		t.Errorf("waited %s before announcing, want %s", d, notices.ConfirmAfter)
	}
}

// scripted lists through Lister, except that the reads numbered in answers
// (from 1) get that answer instead.
type scripted struct {
	notices.Lister
	answers map[int]error // nil: an empty list
	n       atomic.Int32
}

func (s *scripted) Bookings(ctx context.Context) ([]booking.Booking, error) {
	if err, ok := s.answers[int(s.n.Add(1))]; ok {
		return []booking.Booking{}, err
	}
	return s.Lister.Bookings(ctx)
}

// Two reads ConfirmAfter apart that cancel different bookings announce
// nothing and save nothing; so does a second read that fails. The next
// reads that agree announce each cancellation once.
func TestReadsThatDisagreeAnnounceNothing(t *testing.T) {
	t.Parallel()
	for name, second := range map[string]error{
		"empty second read":  nil,
		"failed second read": &booking.APIError{Endpoint: "GET /bookings", StatusCode: http.StatusServiceUnavailable},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			wt := w.watcher()
			w.poll(wt)
			base := w.last()
			// Half the bookings are cancelled: too many for one read.
			var ids []string
			for _, b := range base.Bookings[len(base.Bookings)/2:] {
				if err := w.sb.CancelAsAttendee(b.ID); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, b.ID)
			}
			cfg := w.cfg
			cfg.List = &scripted{Lister: w.list, answers: map[int]error{2: second}}
			wt = notices.NewWatcher(cfg)
			w.clock.Advance(time.Minute)
			if err := wt.Poll(t.Context()); err == nil {
				t.Error("reads that disagree reported nothing")
			}
			if calls := w.pub.take(); len(calls) != 0 {
				t.Errorf("reads that disagree announced %v", kinds(calls))
			}
			if s := w.last(); !s.At.Equal(base.At) {
				t.Errorf("saved the read of %s, want the baseline's still", s.At)
			}

			w.clock.Advance(time.Minute)
			w.poll(wt)
			var got []string
			for _, c := range w.pub.take() {
				for _, n := range c.ns {
					if n.Kind != notices.Cancelled {
						t.Errorf("%s %s %s", c.call, n.Kind, n.Booking.ID)
					}
					got = append(got, n.Booking.ID)
				}
			}
			slices.Sort(got)
			slices.Sort(ids)
			if !slices.Equal(got, ids) {
				t.Errorf("announced %v, want each of %v once", got, ids)
			}
		})
	}
}

// A change is announced once, also when bookbot stopped between posting
// it and recording the read; changes made while it was down are
// announced when it is back.
func TestNothingTwiceAcrossARestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.poll(w.watcher())
	id := w.book("intro-call", 0, "Ada", "ada@example.com")
	// The notice goes out, then the snapshot cannot be saved: as if the
	// process died in between.
	lost := &failingSave{Notices: w.store}
	cfg := w.cfg
	cfg.Store = lost
	w.clock.Advance(time.Minute)
	if err := notices.NewWatcher(cfg).Poll(t.Context()); err == nil {
		t.Fatal("poll did not report the lost save")
	}
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"post new " + id}) {
		t.Fatalf("first run: %v", got)
	}

	// While "down": the attendee cancels a booking of the baseline.
	var gone string
	for _, b := range w.sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && b.Start.After(t0.Add(24*time.Hour)) {
			gone = b.ID
		}
	}
	if err := w.sb.CancelAsAttendee(gone); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(10 * time.Minute)
	w.poll(w.watcher()) // a new process
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"post cancelled " + gone}) {
		t.Errorf("after the restart: %v, want only the cancel made while down", got)
	}
	w.poll(w.watcher())
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("a third run announced %v", kinds(calls))
	}
}

type failingSave struct{ *bolt.Notices }

func (failingSave) SaveLast(context.Context, notices.Snapshot) error {
	return errors.New("disk full")
}

// A notice Slack refused is tried again at the next read, and people are
// told once that notices are paused and once that they resumed; one whose
// answer was lost is not posted again.
func TestRefusedNoticeIsTriedAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)
	id := w.book("intro-call", 0, "Ada", "ada@example.com")
	refused := fmt.Errorf("%w: not_in_channel", notices.ErrNotPosted)
	w.pub.fail = []error{refused, refused}
	for range 2 {
		w.clock.Advance(time.Minute)
		if err := wt.Poll(t.Context()); err == nil {
			t.Fatal("a refused notice was not reported")
		}
	}
	if a := w.alerts.take(); len(a) != 1 || !containsAll(a[0], "not_in_channel", "tries again") {
		t.Errorf("alerts while refused: %q", a)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"post new " + id}) {
		t.Errorf("once Slack takes it: %v", got)
	}
	if a := w.alerts.take(); len(a) != 1 || !containsAll(a[0], "resumed") {
		t.Errorf("alerts on resuming: %q", a)
	}

	// The answer to this one is lost: it may be in the channel.
	other := w.book("intro-call", 3, "Alan", "alan@example.com")
	w.pub.fail = []error{context.DeadlineExceeded}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("a notice that may have been posted was posted again: %v", kinds(calls))
	}
	if w.counts.notices["new maybe_posted"] != 1 || w.counts.notices["new failed"] != 2 {
		t.Errorf("metrics %v (booking %s)", w.counts.notices, other)
	}
}

// A revoked key pauses notices with one alert, not one a minute; once the
// key works, what changed meanwhile is announced.
func TestRevokedKeyAlertsOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)
	w.list.c.Store(w.newClient(t, "revoked_key_000"))
	id := w.book("intro-call", 0, "Ada", "ada@example.com")
	for range 3 {
		w.clock.Advance(time.Minute)
		if err := wt.Poll(t.Context()); !errors.Is(err, booking.ErrUnauthorized) {
			t.Fatalf("poll = %v, want the 401", err)
		}
	}
	if a := w.alerts.take(); len(a) != 1 || !containsAll(a[0], "paused", "API key", "resume") {
		t.Errorf("alerts: %q", a)
	}
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("a failed read announced %v", kinds(calls))
	}
	w.list.c.Store(w.client)
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"post new " + id}) {
		t.Errorf("after the key works again: %v", got)
	}
	if a := w.alerts.take(); len(a) != 1 || !containsAll(a[0], "resumed") {
		t.Errorf("alerts on resuming: %q", a)
	}
	if w.counts.polls[false] != 3 {
		t.Errorf("failed polls %d", w.counts.polls[false])
	}
}

// Bookings made and cancelled through bookbot are announced once each,
// naming who asked.
func TestOwnWritesAreAttributed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)
	slots, err := w.client.Slots(t.Context(), "intro-call")
	if err != nil {
		t.Fatal(err)
	}
	res, err := w.client.Create(booking.WithActor(t.Context(), "UADA"), booking.CreateRequest{
		Slot: slots[0], Name: "Grace", Email: "grace@example.com", TimeZone: "UTC",
	})
	if err != nil || res.Outcome != booking.Confirmed {
		t.Fatalf("create: %v %v", res, err)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls := w.pub.take()
	if got := kinds(calls); !slices.Equal(got, []string{"post new " + res.Booking.ID}) {
		t.Fatalf("after a create: %v", got)
	}
	if by := calls[0].ns[0].By; by == nil || by.Actor != "UADA" {
		t.Errorf("create attributed to %+v", by)
	}
	if _, err := w.client.Cancel(booking.WithActor(t.Context(), "UBOB"), res.Booking.ID); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls = w.pub.take()
	if got := kinds(calls); !slices.Equal(got, []string{"update cancelled " + res.Booking.ID, "reply cancelled " + res.Booking.ID}) {
		t.Fatalf("after a cancel: %v", got)
	}
	if by := calls[1].ns[0].By; by == nil || by.Actor != "UBOB" {
		t.Errorf("cancel attributed to %+v", by)
	}
}

// A create bookbot sent before a read of a full list, and that the service
// made only after it, is new, not "moved into the list": that read could
// not list it, wherever it lies.
func TestACreateAnsweredAfterAReadIsNotMovedIn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fillNights(w)
	wt := w.watcher()
	w.poll(wt)
	if !w.last().Full() {
		t.Fatal("test setup: the list is not full")
	}
	slots, err := w.client.Slots(t.Context(), "consultation")
	if err != nil || len(slots) == 0 {
		t.Fatalf("slots: %d, %v", len(slots), err)
	}
	release := w.sb.HoldNext(bookingtest.EndpointCreateBooking)
	done := make(chan *booking.Result, 1)
	go func() {
		res, _ := w.client.Create(booking.WithActor(t.Context(), "UADA"), booking.CreateRequest{Slot: slots[0], Name: "Grace", Email: "grace@example.com"})
		done <- res
	}()
	testutil.WaitFor(t, 10*time.Second, "the create to reach the service", func() bool {
		return slices.ContainsFunc(w.sb.Requests(), func(r bookingtest.Request) bool { return r.Endpoint == bookingtest.EndpointCreateBooking })
	})
	w.clock.Advance(time.Minute)
	w.poll(wt) // the create is on its way: nothing to list yet
	release()
	res := <-done
	if res == nil || res.Outcome != booking.Confirmed {
		t.Fatalf("create: %+v", res)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls := w.pub.take()
	if got := kinds(calls); !slices.Equal(got, []string{"post new " + res.Booking.ID}) {
		t.Fatalf("after the create: %v", got)
	}
	if n := calls[0].ns[0]; n.Unsure || n.By == nil || n.By.Actor != "UADA" {
		t.Errorf("the notice: unsure %v, by %+v; want new, booked by UADA", n.Unsure, n.By)
	}
}

// writes is a journal holding the entries given.
type writes []journal.Entry

func (ws *writes) Since(time.Time) ([]journal.Entry, error) { return *ws, nil }

// creditWorld is a world whose journal holds ws.
func creditWorld(t *testing.T, ws *writes) (*world, *notices.Watcher) {
	t.Helper()
	w := newWorld(t, func(c *notices.Config) { c.Writes = ws })
	wt := w.watcher()
	w.poll(wt)
	return w, wt
}

// createOf is bookbot's create, asked by UADA, of the n-th intro call slot
// for Ada, in flight.
func (w *world) createOf(n int) journal.Entry {
	return journal.Entry{At: w.clock.Now(), Write: booking.Write{
		Op: booking.OpCreate, Actor: "UADA", EventType: "intro-call", Start: w.slot("intro-call", n).Format(time.RFC3339), Email: "ada@example.com",
	}}
}

// A new booking credits a Slack user only when bookbot's create of that
// booking ID was confirmed: one refused because the attendee booked the
// same time elsewhere ("already booked"), or blocked, failed, unclear or a
// dry run, made nothing bookbot can vouch for.
func TestOnlyConfirmedCreatesAreCredited(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		settle   func(e *journal.Entry, id string)
		credited bool
	}{
		{"confirmed", func(e *journal.Entry, id string) { e.Outcome, e.Created = booking.Confirmed, id }, true},
		{"confirmed, attendee in another case", func(e *journal.Entry, id string) {
			e.Outcome, e.Created, e.Email = booking.Confirmed, id, "ADA@example.com"
		}, true},
		{"already booked elsewhere", func(e *journal.Entry, id string) { e.Outcome, e.Created = booking.AlreadyBooked, id }, false},
		{"not booked", func(e *journal.Entry, _ string) { e.Outcome = booking.NotBooked }, false},
		{"rejected", func(e *journal.Entry, _ string) { e.Outcome = booking.Rejected }, false},
		{"rate limited", func(e *journal.Entry, _ string) { e.Outcome, e.Held = booking.RateLimited, true }, false},
		{"not confirmed", func(e *journal.Entry, _ string) { e.Outcome = booking.NotConfirmed }, false},
		{"probably not booked", func(e *journal.Entry, _ string) { e.Outcome = booking.ProbablyNotBooked }, false},
		{"unknown", func(e *journal.Entry, _ string) { e.Outcome = booking.Unknown }, false},
		{"unknown, listed", func(e *journal.Entry, id string) { e.Outcome, e.Created = booking.Unknown, id }, false},
		{"dry run", func(e *journal.Entry, id string) { e.Outcome, e.DryRun, e.Created = booking.DryRun, true, id }, false},
		{"confirmed, another booking", func(e *journal.Entry, _ string) { e.Outcome, e.Created = booking.Confirmed, "other" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ws writes
			w, wt := creditWorld(t, &ws)
			e := w.createOf(0)
			id := w.book("intro-call", 0, "Ada", "ada@example.com")
			tc.settle(&e, id)
			ws = writes{e}
			w.clock.Advance(time.Minute)
			w.poll(wt)
			calls := w.pub.take()
			if got := kinds(calls); !slices.Equal(got, []string{"post new " + id}) {
				t.Fatalf("after the booking: %v", got)
			}
			if by := calls[0].ns[0].By; (by != nil) != tc.credited || (by != nil && by.Actor != "UADA") {
				t.Errorf("credited to %+v, want credited: %v", by, tc.credited)
			}
		})
	}
}

// A cancel credits a Slack user only when bookbot's cancel of that
// booking was confirmed, by the API or by the list.
func TestOnlyConfirmedCancelsAreCredited(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		settle   func(e *journal.Entry)
		credited bool
	}{
		{"cancelled", func(e *journal.Entry) { e.Outcome = booking.Cancelled }, true},
		{"cancelled, verified by the list", func(e *journal.Entry) { e.Outcome, e.Verified = booking.Cancelled, true }, true},
		{"not cancelled", func(e *journal.Entry) { e.Outcome = booking.NotCancelled }, false},
		{"not found", func(e *journal.Entry) { e.Outcome = booking.NotFound }, false},
		{"rejected", func(e *journal.Entry) { e.Outcome = booking.Rejected }, false},
		{"unknown", func(e *journal.Entry) { e.Outcome = booking.Unknown }, false},
		{"dry run", func(e *journal.Entry) { e.Outcome, e.DryRun = booking.DryRun, true }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ws writes
			w, wt := creditWorld(t, &ws)
			id := w.last().Bookings[len(w.last().Bookings)-1].ID
			e := journal.Entry{At: w.clock.Now(), Write: booking.Write{Op: booking.OpCancel, Actor: "UBOB", BookingID: id}}
			tc.settle(&e)
			ws = writes{e}
			if err := w.sb.CancelAsAttendee(id); err != nil {
				t.Fatal(err)
			}
			w.clock.Advance(time.Minute)
			w.poll(wt)
			calls := w.pub.take()
			if got := kinds(calls); !slices.Equal(got, []string{"post cancelled " + id}) {
				t.Fatalf("after the cancel: %v", got)
			}
			if by := calls[0].ns[0].By; (by != nil) != tc.credited || (by != nil && by.Actor != "UBOB") {
				t.Errorf("credited to %+v, want credited: %v", by, tc.credited)
			}
		})
	}
}

// A change that bookbot's own write may have made, a write whose answer
// was unclear and that the list could not settle then, is not credited,
// and it is not called a stranger's either: its notice names that write.
// A change no such write matches names none.
func TestChangeAnUnclearWriteMayHaveMadeNamesIt(t *testing.T) {
	t.Parallel()
	for _, o := range []booking.Outcome{booking.Unknown, booking.ProbablyNotBooked} {
		t.Run("create "+string(o), func(t *testing.T) {
			t.Parallel()
			var ws writes
			w, wt := creditWorld(t, &ws)
			e := w.createOf(0)
			e.Outcome = o
			ws = writes{e}
			id := w.book("intro-call", 0, "Ada", "ada@example.com")
			other := w.book("consultation", 0, "Alan", "alan@example.com")
			w.clock.Advance(time.Minute)
			w.poll(wt)
			byID := map[string]notices.Notice{}
			for _, c := range w.pub.take() {
				for _, n := range c.ns {
					byID[n.Booking.ID] = n
				}
			}
			if n := byID[id]; n.By != nil || n.Unclear == nil || n.Unclear.Actor != "UADA" || !n.Unclear.At.Equal(e.At) {
				t.Errorf("the booking bookbot's %s create may have made: by %+v, unclear %+v; want bookbot's attempt by UADA", o, n.By, n.Unclear)
			}
			if n, ok := byID[other]; !ok || n.Unclear != nil {
				t.Errorf("another booking's notice: %+v", n)
			}
		})
	}
	t.Run("create unknown, its receipt's booking moved", func(t *testing.T) {
		t.Parallel()
		var ws writes
		w, wt := creditWorld(t, &ws)
		id := w.book("intro-call", 0, "Ada", "ada@example.com")
		if err := w.sb.MoveAsAttendee(id, w.slot("intro-call", 3)); err != nil {
			t.Fatal(err)
		}
		e := w.createOf(0)
		e.Outcome, e.Created = booking.Unknown, id
		ws = writes{e}
		w.clock.Advance(time.Minute)
		w.poll(wt)
		calls := w.pub.take()
		if len(calls) != 1 || calls[0].ns[0].Booking.ID != id {
			t.Fatalf("after the booking: %v", kinds(calls))
		}
		if n := calls[0].ns[0]; n.By != nil || n.Unclear == nil || n.Unclear.Actor != "UADA" {
			t.Errorf("by %+v, unclear %+v; want bookbot's attempt by UADA, which named it", n.By, n.Unclear)
		}
	})
	for _, tc := range []struct {
		outcome booking.Outcome
		named   bool
	}{{booking.Unknown, true}, {booking.NotCancelled, false}} {
		t.Run("cancel "+string(tc.outcome), func(t *testing.T) {
			t.Parallel()
			var ws writes
			w, wt := creditWorld(t, &ws)
			id := w.last().Bookings[len(w.last().Bookings)-1].ID
			ws = writes{{At: w.clock.Now(), Outcome: tc.outcome, Write: booking.Write{Op: booking.OpCancel, Actor: "UBOB", BookingID: id}}}
			if err := w.sb.CancelAsAttendee(id); err != nil {
				t.Fatal(err)
			}
			w.clock.Advance(time.Minute)
			w.poll(wt)
			calls := w.pub.take()
			if got := kinds(calls); !slices.Equal(got, []string{"post cancelled " + id}) {
				t.Fatalf("after the cancel: %v", got)
			}
			if n := calls[0].ns[0]; n.By != nil || (n.Unclear != nil) != tc.named || (n.Unclear != nil && n.Unclear.Actor != "UBOB") {
				t.Errorf("by %+v, unclear %+v; want bookbot's cancel named: %v", n.By, n.Unclear, tc.named)
			}
		})
	}
}

// A change that a write of bookbot's still in flight may have made waits
// for its answer: credited once it is confirmed, not once it is refused,
// and announced as made elsewhere when no answer comes within HoldFor.
// Other changes are announced meanwhile.
func TestChangeWaitsForAWriteInFlight(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		then     func(w *world, e *journal.Entry, id string)
		credited bool
	}{
		{"confirmed", func(_ *world, e *journal.Entry, id string) { e.Outcome, e.Created = booking.Confirmed, id }, true},
		{"already booked elsewhere", func(_ *world, e *journal.Entry, id string) { e.Outcome, e.Created = booking.AlreadyBooked, id }, false},
		{"no answer", func(w *world, _ *journal.Entry, _ string) { w.clock.Advance(notices.HoldFor) }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var ws writes
			w, wt := creditWorld(t, &ws)
			e := w.createOf(0)
			ws = writes{e}
			id := w.book("intro-call", 0, "Ada", "ada@example.com")
			other := w.book("consultation", 0, "Alan", "alan@example.com")
			w.clock.Advance(time.Minute)
			w.poll(wt)
			if got := kinds(w.pub.take()); !slices.Equal(got, []string{"post new " + other}) {
				t.Fatalf("while the create is in flight: %v, want only the other booking", got)
			}
			w.clock.Advance(time.Minute)
			w.poll(wt)
			if calls := w.pub.take(); len(calls) != 0 {
				t.Fatalf("a minute later, still in flight: %v", kinds(calls))
			}

			tc.then(w, &e, id)
			ws = writes{e}
			w.clock.Advance(time.Minute)
			w.poll(wt)
			calls := w.pub.take()
			if got := kinds(calls); !slices.Equal(got, []string{"post new " + id}) {
				t.Fatalf("once settled: %v", got)
			}
			if by := calls[0].ns[0].By; (by != nil) != tc.credited {
				t.Errorf("credited to %+v, want credited: %v", by, tc.credited)
			}
			w.clock.Advance(time.Minute)
			w.poll(wt)
			if calls := w.pub.take(); len(calls) != 0 {
				t.Errorf("the read after: %v", kinds(calls))
			}
		})
	}
}

// A cancel in flight holds the cancellation's notice as a create does.
func TestCancelWaitsForACancelInFlight(t *testing.T) {
	t.Parallel()
	var ws writes
	w, wt := creditWorld(t, &ws)
	id := w.last().Bookings[len(w.last().Bookings)-1].ID
	e := journal.Entry{At: w.clock.Now(), Write: booking.Write{Op: booking.OpCancel, Actor: "UBOB", BookingID: id}}
	ws = writes{e}
	if err := w.sb.CancelAsAttendee(id); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 0 {
		t.Fatalf("while the cancel is in flight: %v", kinds(calls))
	}
	e.Outcome = booking.Cancelled
	ws = writes{e}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls := w.pub.take()
	if got := kinds(calls); !slices.Equal(got, []string{"post cancelled " + id}) {
		t.Fatalf("once confirmed: %v", got)
	}
	if by := calls[0].ns[0].By; by == nil || by.Actor != "UBOB" {
		t.Errorf("credited to %+v, want UBOB", by)
	}
}

// Many changes at once to one channel are one message; routes send an
// event type's notices to its own channel, and with no channel for an
// event type its changes are not announced.
func TestBurstsAndRoutes(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *notices.Config) {
		c.Routes = map[string]string{"deep-dive": "CDEEP"}
	})
	wt := w.watcher()
	w.poll(wt)
	var cancelled []string
	for _, b := range w.sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && b.Start.After(t0) && (b.EventType == nil || *b.EventType != "deep-dive") {
			if err := w.sb.CancelAsAttendee(b.ID); err != nil {
				t.Fatal(err)
			}
			cancelled = append(cancelled, b.ID)
		}
	}
	deep := w.book("deep-dive", 0, "Alan", "alan@example.com")
	if len(cancelled) <= notices.BurstSize {
		t.Fatalf("only %d cancelled", len(cancelled))
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	calls := w.pub.take()
	var burst, routed []published
	for _, c := range calls {
		switch {
		case c.call == "burst":
			burst = append(burst, c)
		case c.channel == "CDEEP":
			routed = append(routed, c)
		default:
			t.Errorf("unexpected %s to %s", c.call, c.channel)
		}
	}
	if len(burst) != 1 || burst[0].channel != "CNOTES" || len(burst[0].ns) != len(cancelled) {
		t.Errorf("bursts %v, want one of %d", kinds(burst), len(cancelled))
	}
	if got := kinds(routed); !slices.Equal(got, []string{"post new " + deep}) {
		t.Errorf("routed %v", got)
	}

	// Without NOTIFY_CHANNEL, only routed event types are announced.
	w2 := newWorld(t, func(c *notices.Config) {
		c.Channel = ""
		c.Routes = map[string]string{"deep-dive": "CDEEP"}
	})
	wt2 := w2.watcher()
	w2.poll(wt2)
	w2.book("intro-call", 0, "Ada", "ada@example.com")
	w2.clock.Advance(time.Minute)
	w2.poll(wt2)
	if calls := w2.pub.take(); len(calls) != 0 {
		t.Errorf("an unrouted event type was announced: %v", kinds(calls))
	}
}

// BurstSize changes for one channel in one read are still posted one by
// one.
func TestBurstSizeIsPostedOneByOne(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)
	var want []string
	for i := range notices.BurstSize {
		id := w.book("intro-call", 0, "Ada", fmt.Sprintf("ada%d@example.com", i))
		want = append(want, "post new "+id)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	got := kinds(w.pub.take())
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%d changes: %v, want each posted: %v", notices.BurstSize, got, want)
	}
}

// A notice whose post's answer never came is looked for in Slack once its
// post has surely ended, by whichever process reads next: found, it is
// recorded and not posted again; not found, it is posted, once.
func TestCutShortPostIsSettledFromSlack(t *testing.T) {
	t.Parallel()
	w, f := finderWorld(t, nil)
	w.poll(w.watcher())

	// Ada's notice reaches Slack but its answer is lost; Alan's never
	// gets there.
	ada := w.book("intro-call", 0, "Ada", "ada@example.com")
	alan := w.book("intro-call", 3, "Alan", "alan@example.com")
	w.pub.fail = []error{errLost, context.DeadlineExceeded}
	w.clock.Advance(time.Minute)
	if err := w.watcher().Poll(t.Context()); err == nil {
		t.Fatal("poll with two notices unsettled reported nothing")
	}
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"post new " + ada}) {
		t.Fatalf("in Slack after the first read: %v", got)
	}

	// Before SettleAfter their posts may still be on the way (in another
	// replica): nothing is looked for or posted.
	w.clock.Advance(notices.SettleAfter / 2)
	if err := w.watcher().Poll(t.Context()); err == nil {
		t.Error("poll before SettleAfter reported nothing")
	}
	if calls := w.pub.take(); len(calls) != 0 || f.looks.Load() != 0 {
		t.Errorf("before SettleAfter: %v posted, %d looks", kinds(calls), f.looks.Load())
	}

	w.clock.Advance(notices.SettleAfter / 2)
	w.poll(w.watcher()) // another process
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"post new " + alan}) {
		t.Errorf("once settled: %v, want only Alan's notice, posted now", got)
	}
	if th, ok, err := w.store.Thread(t.Context(), ada); err != nil || !ok || th.TS != "1700000000.1" {
		t.Errorf("Ada's thread = %v, %v, %v; want the message found", th, ok, err)
	}
	if w.counts.notices["new posted"] != 2 || w.counts.notices["new maybe_posted"] != 0 {
		t.Errorf("metrics %v", w.counts.notices)
	}

	// What follows goes in the thread found.
	if err := w.sb.CancelAsAttendee(ada); err != nil {
		t.Fatal(err)
	}
	w.clock.Advance(time.Minute)
	w.poll(w.watcher())
	if calls := w.pub.take(); len(calls) != 2 || calls[1].call != "reply" || calls[1].thread.TS != "1700000000.1" {
		t.Errorf("the cancel: %v", kinds(calls))
	}
}

// A reply whose answer was lost is looked for in its booking's thread:
// found there, it is not posted again.
func TestCutShortReplyIsFoundInItsThread(t *testing.T) {
	t.Parallel()
	w, _ := finderWorld(t, nil)
	w.poll(w.watcher())
	ada := w.book("intro-call", 0, "Ada", "ada@example.com")
	w.clock.Advance(time.Minute)
	w.poll(w.watcher())
	w.pub.take()

	if err := w.sb.CancelAsAttendee(ada); err != nil {
		t.Fatal(err)
	}
	w.pub.fail = []error{errLost}
	w.clock.Advance(time.Minute)
	if err := w.watcher().Poll(t.Context()); err == nil {
		t.Fatal("a reply whose answer was lost was not reported")
	}
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"update cancelled " + ada, "reply cancelled " + ada}) {
		t.Fatalf("the cancel: %v", got)
	}
	w.clock.Advance(notices.SettleAfter)
	w.poll(w.watcher())
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"update cancelled " + ada}) {
		t.Errorf("once settled: %v, want the reply found and not posted again", got)
	}
	if w.counts.notices["cancelled posted"] != 1 {
		t.Errorf("metrics %v", w.counts.notices)
	}
}

// A burst whose answer was lost is found in Slack as a burst: its notices
// are settled, and none becomes a booking's thread.
func TestCutShortBurstIsSettledFromSlack(t *testing.T) {
	t.Parallel()
	w, f := finderWorld(t, nil)
	w.poll(w.watcher())
	cancelled := w.cancelUpcoming()
	w.pub.fail = []error{errLost}
	w.clock.Advance(time.Minute)
	if err := w.watcher().Poll(t.Context()); err == nil {
		t.Fatal("a burst whose answer was lost was not reported")
	}
	w.clock.Advance(notices.SettleAfter)
	w.poll(w.watcher())
	calls := w.pub.take()
	if len(calls) != 1 || calls[0].call != "burst" || len(calls[0].ns) != len(cancelled) {
		t.Errorf("calls %v, want the one burst", kinds(calls))
	}
	// Its notices are looked for together.
	if n := f.looks.Load(); n != 1 {
		t.Errorf("%d looks in Slack for one burst, want 1", n)
	}
	for _, id := range cancelled {
		if _, ok, err := w.store.Thread(t.Context(), id); err != nil || ok {
			t.Errorf("booking %s got a thread from a burst (%v)", id, err)
		}
	}
	if w.counts.notices["cancelled posted"] != len(cancelled) {
		t.Errorf("metrics %v", w.counts.notices)
	}
}

// announced counts, by booking ID, the notices in Slack.
func (r *recorder) announced() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, s := range r.inSlack {
		for _, n := range s.p.ns {
			out[n.Booking.ID]++
		}
	}
	return out
}

// wantEachOnce fails unless every one of ids is in Slack exactly once.
func (w *world) wantEachOnce(ids []string) {
	w.t.Helper()
	got := w.pub.announced()
	for _, id := range ids {
		if got[id] != 1 {
			w.t.Errorf("booking %s announced %d times, want once", id, got[id])
		}
	}
	if len(got) != len(ids) {
		w.t.Errorf("%d bookings announced, want %d", len(got), len(ids))
	}
}

// A burst whose second message Slack refuses (a 429 that outlasted the
// read) is settled notice by notice: the first message's notices are
// posted, the rest released and posted at the next read, each once.
func TestBurstIsSettledNoticeByNotice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.pub.partSize = 3
	wt := w.watcher()
	w.poll(wt)
	ids := w.cancelUpcoming()
	w.pub.fail = []error{nil, fmt.Errorf("%w: ratelimited", notices.ErrNotPosted)}
	w.clock.Advance(time.Minute)
	if err := wt.Poll(t.Context()); err == nil {
		t.Error("a burst cut short reported nothing")
	}
	if got := w.pub.announced(); len(got) != 3 {
		t.Errorf("after the refusal: %v, want the first message's 3", got)
	}
	if w.counts.notices["cancelled posted"] != 3 || w.counts.notices["cancelled failed"] != 3 {
		t.Errorf("metrics %v", w.counts.notices)
	}
	if a := w.alerts.take(); len(a) != 1 || !containsAll(a[0], "ratelimited") {
		t.Errorf("alerts: %q", a)
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	w.wantEachOnce(ids)
	w.clock.Advance(time.Minute)
	w.poll(wt)
	w.wantEachOnce(ids)
}

// A burst whose second message's answer is lost: that message's notices
// are looked for in Slack once SettleAfter has passed, and the notices
// after it, never sent, are posted at the next read; each is in Slack
// once.
func TestBurstWithALostAnswer(t *testing.T) {
	t.Parallel()
	w, _ := finderWorld(t, nil)
	w.pub.partSize = 3
	wt := w.watcher()
	w.poll(wt)
	ids := w.cancelUpcoming()
	w.pub.fail = []error{nil, errLost}
	w.clock.Advance(time.Minute)
	if err := wt.Poll(t.Context()); err == nil {
		t.Error("a burst cut short reported nothing")
	}
	if got := w.pub.announced(); len(got) != 6 {
		t.Errorf("after the lost answer: %v, want two messages' 6", got)
	}
	w.clock.Advance(notices.SettleAfter / 4)
	if err := wt.Poll(t.Context()); err == nil {
		t.Error("a read with a lost answer not yet settled reported nothing")
	}
	// The notices never sent were released: the next read posts them,
	// without waiting for the lost message to be looked for.
	if got := w.pub.announced(); len(got) != len(ids) {
		t.Errorf("the read after: %d notices in Slack, want all %d", len(got), len(ids))
	}
	w.clock.Advance(notices.SettleAfter)
	w.poll(wt)
	w.wantEachOnce(ids)
	if w.counts.notices["cancelled posted"] != len(ids) {
		t.Errorf("metrics %v", w.counts.notices)
	}
}

// After a notice Slack did not post, none of the same read overtakes it:
// they are posted at the next read, in order.
func TestRefusedNoticeIsNotOvertaken(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)
	var want []string
	for i, name := range []string{"Ada", "Alan", "Grace"} {
		id := w.book("intro-call", 0, name, fmt.Sprintf("guest%d@example.com", i))
		want = append(want, "post new "+id)
	}
	w.pub.fail = []error{nil, fmt.Errorf("%w: ratelimited", notices.ErrNotPosted)}
	w.clock.Advance(time.Minute)
	if err := wt.Poll(t.Context()); err == nil {
		t.Error("a refused notice was not reported")
	}
	if got := kinds(w.pub.take()); !slices.Equal(got, want[:1]) {
		t.Errorf("the read with the refusal posted %v, want %v", got, want[:1])
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if got := kinds(w.pub.take()); !slices.Equal(got, want[1:]) {
		t.Errorf("the next read posted %v, want %v", got, want[1:])
	}
}

// A burst found in Slack after its answer was lost updates the first
// notices of its bookings, as a burst whose answer came does.
func TestCutShortBurstUpdatesFirstNotices(t *testing.T) {
	t.Parallel()
	w, _ := finderWorld(t, nil)
	w.poll(w.watcher())
	ada := w.book("intro-call", 0, "Ada", "ada@example.com")
	w.clock.Advance(time.Minute)
	w.poll(w.watcher())
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"post new " + ada}) {
		t.Fatalf("Ada's booking: %v", got)
	}

	w.cancelUpcoming()
	w.pub.fail = []error{errLost}
	w.clock.Advance(time.Minute)
	if err := w.watcher().Poll(t.Context()); err == nil {
		t.Fatal("a burst whose answer was lost was not reported")
	}
	if calls := w.pub.take(); len(calls) != 1 || calls[0].call != "burst" {
		t.Fatalf("calls %v, want the one burst", kinds(calls))
	}
	w.clock.Advance(notices.SettleAfter)
	w.poll(w.watcher())
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"update cancelled " + ada}) {
		t.Errorf("once the burst is found: %v, want Ada's first notice updated", got)
	}
}

// When Slack's history cannot be read, a notice whose answer was lost is
// not posted again, and the next reads go on.
func TestCutShortPostCannotBeLookedFor(t *testing.T) {
	t.Parallel()
	w, f := finderWorld(t, fmt.Errorf("%w: missing_scope", notices.ErrCannotLook))
	wt := w.watcher()
	w.poll(wt)
	w.book("intro-call", 0, "Ada", "ada@example.com")
	w.pub.fail = []error{context.DeadlineExceeded}
	w.clock.Advance(time.Minute)
	if err := wt.Poll(t.Context()); err == nil {
		t.Fatal("an unsettled notice was not reported")
	}
	w.clock.Advance(notices.SettleAfter)
	w.poll(wt)
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 0 || f.looks.Load() != 1 {
		t.Errorf("posted %v after %d looks; want nothing after one", kinds(calls), f.looks.Load())
	}
	if w.counts.notices["new maybe_posted"] != 1 {
		t.Errorf("metrics %v", w.counts.notices)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// limited answers the first read of the bookings list with a 429 asking
// to wait retryAfter (none when 0), and lists through List after that.
// The first two reads are sent on reads.
type limited struct {
	notices.Lister
	retryAfter time.Duration
	reads      chan int
	n          atomic.Int32
}

func (l *limited) Bookings(ctx context.Context) ([]booking.Booking, error) {
	n := int(l.n.Add(1))
	if n <= 2 {
		l.reads <- n
	}
	if n == 1 {
		return nil, &booking.APIError{Endpoint: "GET /bookings", StatusCode: http.StatusTooManyRequests, RetryAfter: l.retryAfter}
	}
	return l.Lister.Bookings(ctx)
}

// §8: when a 429 is returned, the client stops and waits; §7: Retry-After
// is not guaranteed. Asked to wait longer than its interval, Run reads the
// list again only once the wait is over; asked nothing, at its next tick.
func TestRateLimitedReadWaits(t *testing.T) {
	t.Parallel()
	for _, retryAfter := range []time.Duration{0, 10 * time.Minute} {
		t.Run(retryAfter.String(), func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			lister := &limited{Lister: w.list, retryAfter: retryAfter, reads: make(chan int, 2)}
			looked := make(chan struct{}, 1) // Run's loop looked at the clock
			cfg := w.cfg
			cfg.List, cfg.Interval, cfg.Sleep = lister, time.Millisecond, pause.For // ticks of the machine's clock
			cfg.Now = func() time.Time {
				select {
				case looked <- struct{}{}:
				default:
				}
				return w.clock.Now()
			}
			ctx, cancel := context.WithCancel(t.Context())
			done := make(chan error, 1)
			go func() { done <- notices.NewWatcher(cfg).Run(ctx) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Error(err)
				}
			}()

			<-lister.reads // the 429
			if retryAfter > 0 {
				// Many ticks go by without a read while the clock stands.
				for range 20 {
					<-looked
				}
				if n := lister.n.Load(); n != 1 {
					t.Fatalf("%d reads before the wait was over, want 1", n)
				}
				w.clock.Advance(retryAfter)
			}
			if n := <-lister.reads; n != 2 {
				t.Fatalf("read %d, want the second", n)
			}
		})
	}
}

// slow is a Lister whose reads each take as long as it moves its clock by:
// the first takes[0], the next takes[1], and so on; the last for the rest.
type slow struct {
	notices.Lister
	clock *fakeclock.Clock
	takes []time.Duration
	n     atomic.Int32
}

func (l *slow) Bookings(ctx context.Context) ([]booking.Booking, error) {
	n := min(int(l.n.Add(1)), len(l.takes)) - 1
	l.clock.Advance(l.takes[n])
	return l.Lister.Bookings(ctx)
}

// Run waits between reads through Sleep, so that a test moves its clock
// rather than waiting: an interval after a read began, and not at all
// after a read that took longer.
func TestRunWaitsThroughSleep(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cfg := w.cfg
	cfg.List = &slow{Lister: w.list, clock: w.clock, takes: []time.Duration{10 * time.Second, 2 * cfg.Interval}}
	waits := make(chan time.Duration)
	cfg.Sleep = func(ctx context.Context, d time.Duration) error {
		select {
		case waits <- d:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- notices.NewWatcher(cfg).Run(ctx) }()
	wait := func() time.Duration {
		select {
		case d := <-waits:
			return d
		case <-time.After(10 * time.Second): // a broken Run's bound
			t.Fatal("Run did not wait through Sleep")
			return 0
		}
	}
	if d := wait(); d != cfg.Interval-10*time.Second {
		t.Errorf("after a read of 10 s, waited %v, want %v", d, cfg.Interval-10*time.Second)
	}
	if d := wait(); d > 0 {
		t.Errorf("after a read of two intervals, waited %v, want nothing", d)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Stopping Run ends its wait before reading again: nothing is announced
// yet, and the next start reads again. The read is not taken for the
// baseline.
func TestRunStoppedEndsItsWaitBeforeReadingAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.sb.FailNext(bookingtest.EndpointListBookings, emptyList)
	waiting, ended := make(chan struct{}), make(chan error, 1)
	cfg := w.cfg
	cfg.Sleep = func(ctx context.Context, d time.Duration) error {
		if d == notices.ConfirmAfter {
			close(waiting)
			<-ctx.Done()
			ended <- ctx.Err()
		}
		<-ctx.Done()
		return ctx.Err()
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- notices.NewWatcher(cfg).Run(ctx) }()
	<-waiting
	cancel()
	if err := <-ended; !errors.Is(err, context.Canceled) {
		t.Errorf("the wait before reading again ended with %v, want Run's cancellation", err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, ok, err := w.store.Last(t.Context()); ok || err != nil {
		t.Errorf("a baseline was taken (%v, %v)", ok, err)
	}
}

// pruned is a Store that sends each prune's cutoff on cutoffs.
type pruned struct {
	notices.Store
	cutoffs chan time.Time
}

func (s *pruned) Prune(ctx context.Context, cutoff time.Time) error {
	s.cutoffs <- cutoff
	return s.Store.Prune(ctx, cutoff)
}

// Run prunes at start, keeping the notices of bookings that ended within
// the last day: a late change of one finds its thread.
func TestRunPrunes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	st := &pruned{Store: w.store, cutoffs: make(chan time.Time, 1)}
	cfg := w.cfg
	cfg.Store, cfg.Interval, cfg.Sleep = st, time.Hour, pause.For // no tick comes during the test
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- notices.NewWatcher(cfg).Run(ctx) }()
	if cutoff := <-st.cutoffs; cutoff.After(t0.Add(-24 * time.Hour)) {
		t.Errorf("pruned up to %s, within a day of %s", cutoff, t0)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// An empty first read is not taken for the baseline at once: the list is
// read again, and the bookings that read lists are not announced as new
// later.
func TestAnEmptyFirstReadIsReadAgain(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.sb.FailNext(bookingtest.EndpointListBookings, emptyList)
	w.poll(wt)
	if d := time.Duration(w.slept.Load()); d != notices.ConfirmAfter {
		t.Errorf("waited %s before reading again, want %s", d, notices.ConfirmAfter)
	}
	listed := len(w.last().Bookings)
	if listed == 0 {
		t.Fatal("the empty read was taken for the baseline")
	}
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if calls := w.pub.take(); len(calls) != 0 {
		t.Errorf("the read after the baseline announced %v", kinds(calls))
	}
}

// A calendar with no bookings is a baseline all the same, once two reads
// agree; a booking made after it is announced.
func TestAnEmptyCalendarIsTheBaseline(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, b := range w.sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled {
			if err := w.sb.CancelAsAttendee(b.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	wt := w.watcher()
	w.poll(wt)
	if s, ok, err := w.store.Last(t.Context()); err != nil || !ok || len(s.Bookings) != 0 {
		t.Fatalf("baseline %d bookings, %v, %v; want an empty one", len(s.Bookings), ok, err)
	}
	id := w.book("intro-call", 0, "Ada", "ada@example.com")
	w.clock.Advance(time.Minute)
	w.poll(wt)
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"post new " + id}) {
		t.Errorf("after a booking: %v", got)
	}
}

// A list shared by another reader can be up to its age older than the
// poll: the snapshot is stamped with when the list was asked for, so a
// booking cancelled before that, a minute and a bit before its start, is
// announced as cancelled, not taken for started.
func TestSharedListIsDatedWhenAskedFor(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.cfg.List = w.client.Recent(15 * time.Second)
	wt := w.watcher()
	w.poll(wt)
	start := w.nextStart(t0.Add(5 * time.Minute))
	var id string
	for _, b := range w.sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && b.Start.Equal(start) {
			id = b.ID
		}
	}
	w.clock.Set(start.Add(-70 * time.Second))
	if err := w.sb.CancelAsAttendee(id); err != nil {
		t.Fatal(err)
	}
	if _, err := w.client.Bookings(t.Context()); err != nil { // someone's list, shared
		t.Fatal(err)
	}
	w.clock.Advance(12 * time.Second)
	w.poll(wt)
	if got := kinds(w.pub.take()); !slices.Equal(got, []string{"post cancelled " + id}) {
		t.Errorf("a booking cancelled 70 s before its start, in a list read 12 s before the poll: %v", got)
	}
}

// A booking that appears after bookbot's create of it was answered 409
// with body status 200 came of the email confirmation that create needed:
// its notice says so, and names who asked. A booking of another attendee
// at that time does not.
func TestNoticeOfABookingAfterAnEmailCheck(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	wt := w.watcher()
	w.poll(wt)
	start := w.slot("office-hours", 0)
	slots, err := w.client.Slots(t.Context(), "office-hours")
	if err != nil || len(slots) == 0 || !slots[0].Start.Equal(start) {
		t.Fatalf("slots: %v, %v", slots, err)
	}
	res, err := w.client.Create(booking.WithActor(t.Context(), "UADA"), booking.CreateRequest{Slot: slots[0], Name: "Grace Hopper", Email: "grace@example.com"})
	if err != nil || res.Outcome != booking.NotBooked || res.Conflict() != booking.ConflictRefused {
		t.Fatalf("create: %+v, %v", res, err)
	}
	id, err := w.sb.ConfirmEmail(bookingtest.DemoOwner, "office-hours", start, "grace@example.com")
	if err != nil {
		t.Fatal(err)
	}
	other := w.book("consultation", 3, "Ada Lovelace", "ada@example.com")
	w.poll(wt)
	byID := map[string]notices.Notice{}
	for _, c := range w.pub.take() {
		for _, n := range c.ns {
			byID[n.Booking.ID] = n
		}
	}
	if n := byID[id]; n.By != nil || n.EmailCheck == nil || n.EmailCheck.Actor != "UADA" {
		t.Errorf("the confirmed booking's notice: by %+v, email check %+v; want bookbot's attempt by UADA", n.By, n.EmailCheck)
	}
	if n, ok := byID[other]; !ok || n.EmailCheck != nil {
		t.Errorf("another booking's notice: %+v", n)
	}
}

// A person who chose another place for their notices after a booking's
// first notice is followed: a later change of that booking is posted where
// notices go now, not in the first notice's thread, which is updated in
// place; and a change after that replies there.
func TestNoticesFollowWhereTheyGoNow(t *testing.T) {
	t.Parallel()
	w := newWorld(t, func(c *notices.Config) { c.Channel = "UADA" })
	w.poll(w.watcher())
	id := w.book("consultation", 3, "Grace Hopper", "grace@example.com")
	w.poll(w.watcher())
	if calls := w.pub.take(); len(calls) != 1 || calls[0].call != "post" || calls[0].channel != "UADA" {
		t.Fatalf("first notice: %+v", calls)
	}
	// Still a DM: a move replies in the DM's thread.
	if err := w.sb.MoveAsAttendee(id, w.slot("consultation", 5)); err != nil {
		t.Fatal(err)
	}
	w.poll(w.watcher())
	if calls := w.pub.take(); len(calls) != 2 || calls[1].call != "reply" || calls[1].thread.Channel != "DADA" {
		t.Fatalf("a move while notices go to the DM: %+v", calls)
	}

	// `/booking notices here` in CTEAM: the watcher made afresh goes there.
	w.cfg.Channel = "CTEAM"
	if err := w.sb.MoveAsAttendee(id, w.slot("consultation", 6)); err != nil {
		t.Fatal(err)
	}
	w.poll(w.watcher())
	calls := w.pub.take()
	if len(calls) != 2 || calls[0].call != "update" || calls[0].channel != "DADA" || calls[1].call != "post" || calls[1].channel != "CTEAM" {
		t.Fatalf("a move after the person chose CTEAM: %+v; want the DM's first notice updated and a post in CTEAM", calls)
	}
	if err := w.sb.CancelAsAttendee(id); err != nil {
		t.Fatal(err)
	}
	w.poll(w.watcher())
	calls = w.pub.take()
	if len(calls) != 2 || calls[1].call != "reply" || calls[1].thread.Channel != "CTEAM" {
		t.Fatalf("a cancel after that: %+v; want a reply in CTEAM's thread", calls)
	}
}
