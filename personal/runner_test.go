package personal_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/internal/fakeclock"
	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/store/bolt"
)

// r0 is Monday 2026-03-23 06:00 UTC (07:00 in Berlin): before the demo
// owner's first booking of the day.
var r0 = time.Date(2026, 3, 23, 6, 0, 0, 0, time.UTC)

type sent struct {
	kind personal.Kind
	user string
	id   string // reminder: the booking
	day  string // agenda: the local date
	late bool
	n    int // agenda: bookings
}

type sender struct {
	mu   sync.Mutex
	sent []sent
	fail []error
}

func (s *sender) next() error {
	if len(s.fail) == 0 {
		return nil
	}
	err := s.fail[0]
	s.fail = s.fail[1:]
	return err
}

// record records x, unless loc is nil or the next send is to fail.
func (s *sender) record(loc *time.Location, x sent) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if loc == nil {
		return errors.New("no zone")
	}
	if err := s.next(); err != nil {
		return err
	}
	s.sent = append(s.sent, x)
	return nil
}

func (s *sender) SendReminder(_ context.Context, d personal.Due, loc *time.Location) error {
	return s.record(loc, sent{kind: d.Kind, user: d.User, id: d.Booking.ID, late: d.Late})
}

func (s *sender) SendAgenda(_ context.Context, d personal.Due, loc *time.Location) error {
	return s.record(loc, sent{kind: d.Kind, user: d.User, day: d.Day.String(), late: d.Late, n: len(d.Bookings)})
}

func (s *sender) take() []sent {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sent
	s.sent = nil
	return out
}

type zones map[string]*time.Location

func (z zones) PersonZone(_ context.Context, user string) (*time.Location, error) {
	if loc, ok := z[user]; ok {
		return loc, nil
	}
	return nil, fmt.Errorf("users.info %s: user_not_found", user)
}

type tally struct {
	mu sync.Mutex
	n  map[string]int
}

func (t *tally) Personal(k personal.Kind, result string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n[string(k)+" "+result]++
}

type place struct {
	t       *testing.T
	clock   *fakeclock.Clock
	sb      *bookingtest.Server
	store   *bolt.Personal
	send    *sender
	tally   *tally
	allowed map[string]bool
	cfg     personal.Config
}

func newPlace(t *testing.T) *place {
	t.Helper()
	p := &place{t: t, clock: fakeclock.New(r0), send: &sender{}, tally: &tally{n: map[string]int{}},
		allowed: map[string]bool{"UADA": true, "UBOB": true}}
	p.sb = bookingtest.NewServer(t, bookingtest.WithClock(p.clock.Now))
	key, err := booking.NewKey(bookingtest.DemoKey)
	if err != nil {
		t.Fatal(err)
	}
	client, err := booking.NewClient(p.sb.URL, key, booking.WithClock(p.clock.Now),
		booking.WithSleep(func(context.Context, time.Duration) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(t.TempDir(), bolt.Options{Beside: true})
	if err != nil {
		t.Fatal(err)
	}
	p.store = db.Personal()
	p.cfg = personal.Config{
		List: client, Store: p.store, Send: p.send, Metrics: p.tally,
		Zones:   zones{"UADA": berlin, "UBOB": testutil.Zone("America/New_York")},
		Allowed: func(u string) bool { return p.allowed[u] },
		Now:     p.clock.Now,
	}
	return p
}

func (p *place) set(user string, s personal.Settings) {
	p.t.Helper()
	if err := p.store.SaveSettings(p.t.Context(), user, s); err != nil {
		p.t.Fatal(err)
	}
}

// tick runs one look with a fresh Runner, as after a restart.
func (p *place) tick() {
	p.t.Helper()
	if err := personal.NewRunner(p.cfg).Tick(p.t.Context()); err != nil {
		p.t.Fatalf("tick: %v", err)
	}
}

// onDay counts the owner's bookings starting on a local day, from the
// clock on.
func (p *place) onDay(y int, m time.Month, d int, loc *time.Location) int {
	from, to := time.Date(y, m, d, 0, 0, 0, 0, loc), time.Date(y, m, d+1, 0, 0, 0, 0, loc)
	n := 0
	for _, b := range p.sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && !b.Start.Before(from) && b.Start.Before(to) && b.Start.After(p.clock.Now()) {
			n++
		}
	}
	return n
}

// first is the owner's next booking after the clock.
func (p *place) first() bookingtest.Booking {
	p.t.Helper()
	var out bookingtest.Booking
	for _, b := range p.sb.Bookings(bookingtest.DemoOwner) {
		if !b.Cancelled && b.Start.After(p.clock.Now()) && (out.ID == "" || b.Start.Before(out.Start)) {
			out = b
		}
	}
	if out.ID == "" {
		p.t.Fatal("no upcoming booking")
	}
	return out
}

// of is what was sent about one booking.
func of(ss []sent, id string) []string {
	var out []sent
	for _, s := range ss {
		if s.id == id {
			out = append(out, s)
		}
	}
	return reminders(out)
}

func reminders(ss []sent) []string {
	var out []string
	for _, s := range ss {
		out = append(out, fmt.Sprintf("%s %s %s late=%v", s.kind, s.user, s.id+s.day, s.late))
	}
	return out
}

// A reminder comes once, at its time, also across a restart; a person
// without reminders, or no longer allowed, gets none.
func TestReminderComesOnceAtItsTime(t *testing.T) {
	t.Parallel()
	p := newPlace(t)
	p.set("UADA", personal.Settings{Remind: 15 * time.Minute})
	p.set("UBOB", personal.Settings{Remind: 15 * time.Minute})
	p.set("UEVE", personal.Settings{Remind: 15 * time.Minute}) // not allowed
	p.set("UKIW", personal.Settings{})                         // off
	p.allowed["UKIW"] = true
	b := p.first()

	p.clock.Set(b.Start.Add(-16 * time.Minute))
	p.tick()
	if got := p.send.take(); len(got) != 0 {
		t.Errorf("a minute early: %v", reminders(got))
	}
	p.clock.Set(b.Start.Add(-15 * time.Minute))
	p.tick()
	got := reminders(p.send.take())
	want := []string{"reminder UADA " + b.ID + " late=false", "reminder UBOB " + b.ID + " late=false"}
	if !slices.Equal(got, want) {
		t.Errorf("at the time: %v, want %v", got, want)
	}
	p.clock.Advance(30 * time.Second)
	p.tick() // a new Runner: as after a restart
	if got := p.send.take(); len(got) != 0 {
		t.Errorf("again: %v", reminders(got))
	}
	if p.tally.n["reminder sent"] != 2 {
		t.Errorf("metrics %v", p.tally.n)
	}
}

// A booking cancelled before its reminder is not reminded of; one moved
// is reminded of at its new time, once; a reminder missed while bookbot
// was down comes late while the meeting has not started, and never after.
func TestReminderFollowsTheList(t *testing.T) {
	t.Parallel()
	p := newPlace(t)
	p.set("UADA", personal.Settings{Remind: 30 * time.Minute})
	b := p.first()
	p.clock.Set(b.Start.Add(-30 * time.Minute))
	p.tick()
	if got := reminders(p.send.take()); len(got) != 1 {
		t.Fatalf("first reminder: %v", got)
	}

	// Moved two hours later: reminded again, at the new time.
	to := b.Start.Add(2 * time.Hour)
	if err := p.sb.MoveAsAttendee(b.ID, to); err != nil {
		t.Fatal(err)
	}
	p.clock.Set(to.Add(-31 * time.Minute))
	p.tick()
	if got := of(p.send.take(), b.ID); len(got) != 0 {
		t.Errorf("before the new time: %v", got)
	}
	p.clock.Set(to.Add(-30 * time.Minute))
	p.tick()
	p.tick()
	if got := of(p.send.take(), b.ID); !slices.Equal(got, []string{"reminder UADA " + b.ID + " late=false"}) {
		t.Errorf("at the new time: %v", got)
	}

	// The next one is cancelled before its time: no reminder.
	p.clock.Set(to)
	next := p.first()
	if err := p.sb.CancelAsAttendee(next.ID); err != nil {
		t.Fatal(err)
	}
	p.clock.Set(next.Start.Add(-10 * time.Minute))
	p.tick()
	for _, s := range p.send.take() {
		if s.id == next.ID {
			t.Errorf("a cancelled booking was reminded of")
		}
	}

	// Down through the reminder time of the one after: late, while it has
	// not started.
	later := p.first()
	p.clock.Set(later.Start.Add(-5 * time.Minute))
	p.tick()
	if got := reminders(p.send.take()); !slices.Contains(got, "reminder UADA "+later.ID+" late=true") {
		t.Errorf("a missed reminder: %v", got)
	}
	p.clock.Set(later.Start)
	after := p.first()
	p.clock.Set(after.Start.Add(time.Second))
	p.tick()
	for _, s := range p.send.take() {
		if s.id == after.ID {
			t.Errorf("a reminder came after the meeting started")
		}
	}
}

// The agenda comes once a day at the person's own morning time, only on
// weekdays when asked, and a missed one only the same morning.
func TestAgendaComesOncePerLocalDay(t *testing.T) {
	t.Parallel()
	p := newPlace(t)
	p.set("UADA", personal.Settings{Agenda: &personal.Agenda{Minute: 8 * 60, Weekdays: true}})
	p.set("UBOB", personal.Settings{Agenda: &personal.Agenda{Minute: 8 * 60}})

	p.clock.Set(time.Date(2026, 3, 23, 7, 59, 0, 0, berlin))
	p.tick()
	if got := p.send.take(); len(got) != 0 {
		t.Errorf("before 08:00: %v", reminders(got))
	}
	p.clock.Set(time.Date(2026, 3, 23, 8, 0, 0, 0, berlin))
	p.tick()
	p.tick()
	got := p.send.take()
	if len(got) != 1 || got[0].user != "UADA" || got[0].day != "2026-03-23" || got[0].n != p.onDay(2026, 3, 23, berlin) {
		t.Errorf("at 08:00 in Berlin: %+v, want the %d bookings of the day", got, p.onDay(2026, 3, 23, berlin))
	}
	// New York's 08:00 is later; Bob's bookbot was down until 12:30 there.
	p.clock.Set(time.Date(2026, 3, 23, 12, 30, 0, 0, testutil.Zone("America/New_York")))
	p.tick()
	if got := p.send.take(); len(got) != 0 {
		t.Errorf("a missed agenda came after its morning: %v", reminders(got))
	}
	// Saturday: Ada asked for weekdays only; Bob gets his.
	p.clock.Set(time.Date(2026, 3, 28, 8, 1, 0, 0, testutil.Zone("America/New_York")))
	p.tick()
	got = p.send.take()
	if len(got) != 1 || got[0].user != "UBOB" || got[0].day != "2026-03-28" {
		t.Errorf("on Saturday: %+v", got)
	}
	if p.tally.n["agenda sent"] != 2 {
		t.Errorf("metrics %v", p.tally.n)
	}
}

// A message Slack refused is tried again at the next look; one whose
// answer was lost is not sent again; nothing goes to a person whose zone
// Slack cannot tell; without settings the list is not read.
func TestRunnerFailures(t *testing.T) {
	t.Parallel()
	p := newPlace(t)
	p.tick()
	if n := len(p.sb.Requests()); n != 0 {
		t.Errorf("%d booking API requests with nothing on", n)
	}
	p.set("UADA", personal.Settings{Remind: 15 * time.Minute})
	p.set("UNOZONE", personal.Settings{Remind: 15 * time.Minute})
	p.allowed["UNOZONE"] = true
	b := p.first()
	p.clock.Set(b.Start.Add(-15 * time.Minute))
	p.send.fail = []error{fmt.Errorf("%w: ratelimited", personal.ErrNotSent)}
	p.tick()
	if got := p.send.take(); len(got) != 0 {
		t.Fatalf("refused, yet sent: %v", reminders(got))
	}
	p.clock.Advance(30 * time.Second)
	p.tick()
	if got := reminders(p.send.take()); !slices.Equal(got, []string{"reminder UADA " + b.ID + " late=false"}) {
		t.Errorf("tried again: %v", got)
	}

	p.clock.Set(b.Start)
	next := p.first()
	p.clock.Set(next.Start.Add(-15 * time.Minute))
	p.send.fail = []error{context.DeadlineExceeded}
	p.tick()
	p.clock.Advance(30 * time.Second)
	p.tick()
	if got := p.send.take(); len(got) != 0 {
		t.Errorf("a reminder that may have been sent was sent again: %v", reminders(got))
	}
	if p.tally.n["reminder failed"] != 1 || p.tally.n["reminder maybe_sent"] != 1 || p.tally.n["reminder sent"] != 1 {
		t.Errorf("metrics %v", p.tally.n)
	}
}

// watched is a Store that tells of each look at everyone's settings and
// each prune.
type watched struct {
	personal.Store
	looks   chan struct{}
	cutoffs chan time.Time
}

func (s *watched) AllSettings(ctx context.Context) (map[string]personal.Settings, error) {
	s.looks <- struct{}{}
	return s.Store.AllSettings(ctx)
}

func (s *watched) Prune(ctx context.Context, cutoff time.Time) error {
	s.cutoffs <- cutoff
	return s.Store.Prune(ctx, cutoff)
}

// Run looks at once and whenever woken, and forgets claims only once no
// reminder or agenda can be due again: past the longest lead and a day.
func TestRunLooksWhenWokenAndPrunes(t *testing.T) {
	t.Parallel()
	p := newPlace(t)
	st := &watched{Store: p.store, looks: make(chan struct{}), cutoffs: make(chan time.Time, 2)}
	cfg := p.cfg
	cfg.Store, cfg.Every = st, time.Hour // no tick comes during the test
	r := personal.NewRunner(cfg)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()

	<-st.looks
	r.Wake()
	<-st.looks // the first look's pruning is done
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	select {
	case cutoff := <-st.cutoffs:
		if cutoff.After(r0.Add(-personal.MaxRemind - 24*time.Hour)) {
			t.Errorf("claims pruned up to %s, less than a longest lead and a day before %s", cutoff, r0)
		}
	default:
		t.Fatal("claims not pruned at start")
	}
	select {
	case cutoff := <-st.cutoffs:
		t.Errorf("pruned again, up to %s, within a day", cutoff)
	default:
	}
}
