package oracle_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/cmd/internal/app"
	"github.com/bookbot/bookbot/cmd/internal/metrics"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/internal/fakeclock"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/store"
	"github.com/bookbot/bookbot/store/bolt"
)

// A long run is these flags: see docs/sandbox.md.
var (
	firstSeed = flag.Uint64("seed", 1, "the oracle's first seed")
	seedCount = flag.Int("seeds", 2, "how many seeds the oracle runs, from -seed on")
	stepCount = flag.Int("steps", 120, "the steps of each seed")
)

// TestOracle drives the real bot against the sandbox, seed after seed, and
// holds what it tells people to what the sandbox knows happened.
func TestOracle(t *testing.T) {
	for seed := *firstSeed; seed < *firstSeed+uint64(*seedCount); seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			// Side by side: a run mostly waits, for its state's file and
			// for answers that never come.
			t.Parallel()
			w := newWorld(t, seed)
			w.run(*stepCount)
		})
	}
}

// The people: two allowed, in different zones. Reports of the owner's
// calendar go to ada, the first allowed user, by direct message.
const (
	ada     = "UADA"
	bob     = "UBOB"
	notes   = "CNOTES" // live notices
	owner   = bookingtest.DemoOwner
	blocked = "blocked.example" // the domain the owner's block list can refuse
)

var zoneOf = map[string]string{ada: "Europe/Berlin", bob: "America/New_York"}

// base is a Monday morning; each seed starts at a time of the week after it.
var base = time.Date(2026, 3, 23, 6, 0, 0, 0, time.UTC)

// writeTimeout is how long the bot waits for the answer to a create or a
// cancel: each answer that never comes costs this much real time, and an
// answer that does come, however loaded the machine, comes well before.
const writeTimeout = time.Second

// world is one seed's run: the sandbox, the Slack stand-in, the bot (one
// generation of it at a time, on one state directory), and what the
// oracle knows happened.
type world struct {
	t     *testing.T
	seed  uint64
	rng   *rand.Rand
	clock *fakeclock.Clock
	sb    *bookingtest.Server
	sl    *slacktest.Server
	dir   string
	env   map[string]string
	logs  *tail

	gen   *generation
	gens  int
	step  int
	trail []string // the step log

	// Where this step's messages and views begin in the stand-in's record.
	msgs, views int

	truth *truth
	began time.Time
}

// generation is one start of the bot on the state directory.
type generation struct {
	n       int
	app     *app.App
	state   store.State
	journal *stoppable
	watcher *notices.Watcher
	stop    context.CancelFunc
	done    chan error
}

func newWorld(t *testing.T, seed uint64) *world {
	w := &world{
		t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, 0x6f7261636c65)),
		dir: t.TempDir(), logs: &tail{max: 80}, began: time.Now(),
	}
	w.clock = fakeclock.New(base.Add(time.Duration(w.rng.IntN(7*24*4)) * 15 * time.Minute))
	w.sb = bookingtest.NewServer(t, bookingtest.WithClock(w.clock.Now))
	w.sl = slacktest.NewServer(t)
	w.sl.AddUser(slacktest.User{ID: ada, Name: "ada", RealName: "Ada Lovelace", TZ: zoneOf[ada]})
	w.sl.AddUser(slacktest.User{ID: bob, Name: "bob", RealName: "Bob Kahn", TZ: zoneOf[bob]})
	w.sl.AddChannel(slacktest.Channel{ID: notes, Name: "bookings", Members: []string{w.sl.BotUserID(), ada, bob}})
	w.env = map[string]string{
		"BOOKING_BASE_URL":      w.sb.URL,
		"BOOKING_API_KEY":       bookingtest.DemoKey,
		"SLACK_BOT_TOKEN":       w.sl.BotToken(),
		"SLACK_APP_TOKEN":       w.sl.AppToken(),
		"SLACK_API_URL":         w.sl.APIURL,
		"BOOKBOT_ALLOWED_USERS": ada + "," + bob,
		"NOTIFY_CHANNEL":        notes,
		"BOOKBOT_STATE_DIR":     w.dir,
		"BOOKBOT_HTTP_ADDR":     "off",
		"LOG_LEVEL":             "info",
		"LOG_FORMAT":            "text",
	}
	w.truth = newTruth(w)
	w.note("start %s, the sandbox seeded", w.clock.Now().Format(time.RFC3339))
	if w.rng.IntN(2) == 0 {
		// Half the runs start beyond what the list shows: another tool
		// holds about a hundred bookings at night.
		w.note("another tool holds %d bookings at night", len(w.addFillers(90+w.rng.IntN(25))))
	}
	w.start()
	t.Cleanup(func() {
		if w.gen != nil {
			w.stop()
		}
	})
	// The first read is the notices' baseline: every change after it is
	// announced.
	w.poll()
	w.truth.baseline()
	return w
}

// run takes n steps, each checked as it ends, then the checks of the
// whole run.
func (w *world) run(n int) {
	for w.step = 1; w.step <= n; w.step++ {
		w.begin()
		w.pick()()
		w.end()
	}
	w.step = n
	w.truth.final()
	if testing.Verbose() {
		w.t.Logf("the steps:\n%s", strings.Join(w.trail, "\n"))
	}
}

// begin starts a step: the clock moves on, and the stand-ins' records are
// read from here.
func (w *world) begin() {
	w.msgs += len(w.sl.MessagesFrom(w.msgs))
	w.views += len(w.sl.ViewsFrom(w.views))
	w.sb.ResetRequests()
	// Mostly a minute or three between steps, as people work; now and
	// then a rush, within the API's minute.
	d := time.Duration(30+w.rng.IntN(150)) * time.Second
	if w.rng.IntN(10) == 0 {
		d = time.Duration(w.rng.IntN(8)) * time.Second
	}
	w.clock.Advance(d)
	// What the list shows now, bookings that started meanwhile gone.
	w.truth.begin()
}

// end settles a step: the bot's work done, the notices read, and every
// claim checked.
func (w *world) end() {
	w.idle()
	reqs := w.sb.Requests() // the step's own, before the notices' read
	w.sb.ClearFaults()
	w.poll()
	w.truth.end(reqs)
}

// idle waits for the bot's work to end.
func (w *world) idle() {
	ctx, cancel := w.ctx()
	defer cancel()
	if err := w.gen.app.Bot.Idle(ctx); err != nil {
		w.fatal("the bot's work did not end: %v", err)
	}
}

// poll reads the bookings list for notices, as the bot's schedule does
// every minute; it posts what changed.
func (w *world) poll() {
	ctx, cancel := w.ctx()
	defer cancel()
	if err := w.gen.watcher.Poll(ctx); err != nil {
		w.note("notices: %v", err)
	}
	w.idle()
}

// start starts a generation of the bot on the state directory, as `bookbot
// run` starts it: the writes a stopped one left in flight settled first,
// then Socket Mode, the review reports and the notices.
func (w *world) start() {
	w.gens++
	g := &generation{n: w.gens, done: make(chan error, 1)}
	cfg, err := config.Load(func(k string) string { return w.env[k] }, config.NeedAll)
	if err != nil {
		w.fatal("config: %v", err)
	}
	log := slog.New(slog.NewTextHandler(w.logs, &slog.HandlerOptions{Level: slog.LevelInfo})).With("gen", g.n)
	if g.state, err = store.Open(context.Background(), store.Options{StateDir: w.dir, Log: log, Now: w.clock.Now}); err != nil {
		w.fatal("state: %v", err)
	}
	j := g.state.Journal.(*bolt.Journal)
	// Each generation is a process of its own: its Recover settles what
	// the one before left in flight.
	j.Owner, j.Now = fmt.Sprintf("oracle generation %d", g.n), w.clock.Now
	g.journal = &stoppable{Store: j}
	st := g.state
	st.Journal = g.journal
	ctx, cancel := w.ctx()
	defer cancel()
	g.app, err = app.New(ctx, app.Deps{
		Config: cfg, State: st, Metrics: metrics.New(), Log: log, Version: "oracle", Now: w.clock.Now,
		Drain: 50 * time.Millisecond,
		Booking: []booking.Option{
			booking.WithWriteTimeout(writeTimeout),
			booking.WithBackoff(booking.Backoff{Attempts: booking.DefaultBackoff.Attempts}),
		},
	})
	if err != nil {
		w.fatal("app.New: %v", err)
	}
	serve, stop := context.WithCancel(context.Background())
	g.stop = stop
	go func() { g.done <- g.app.Serve(serve) }()
	if err := w.sl.WaitConnections(ctx, g.n); err != nil {
		w.fatal("generation %d did not connect to Slack: %v", g.n, err)
	}
	if _, err := w.sl.WaitLiveConnections(ctx, 1); err != nil {
		w.fatal("the generation before %d did not leave Slack: %v", g.n, err)
	}
	g.watcher = g.app.NewWatcher()
	w.gen = g
	// The reports Run makes at start, made here so that the step waits
	// for them.
	g.app.Bot.ReportReviews(ctx)
}

// stop stops the generation as SIGTERM does, with nothing in flight.
func (w *world) stop() {
	g := w.gen
	w.idle()
	g.stop()
	w.wait(g)
}

// kill stops the generation as SIGKILL does, with a write in flight: from
// now on its journal records nothing, so it neither records the write's
// outcome nor tells anyone, and the next generation finds the write in
// flight.
func (w *world) kill() {
	g := w.gen
	g.journal.halt()
	g.stop()
	w.wait(g)
}

func (w *world) wait(g *generation) {
	select {
	case err := <-g.done:
		if err != nil {
			w.fatal("generation %d stopped: %v", g.n, err)
		}
	case <-time.After(30 * time.Second):
		w.fatal("generation %d did not stop", g.n)
	}
	// Its idle connections go: a server closing waits for one its client
	// opened and never used.
	g.app.CloseIdleConnections()
	g.state.Close()
	w.gen = nil
}

// note adds a line to the step log.
func (w *world) note(format string, args ...any) {
	w.trail = append(w.trail, fmt.Sprintf("step %d %s %.3fs: ", w.step, w.clock.Now().UTC().Format("Mon 15:04:05"), time.Since(w.began).Seconds())+fmt.Sprintf(format, args...))
}

// disagree fails the run: what a person was told is not what happened.
func (w *world) disagree(format string, args ...any) {
	w.t.Helper()
	w.report("DISAGREEMENT: "+format, args...)
}

// fatal fails the run for a reason of the run's own.
func (w *world) fatal(format string, args ...any) {
	w.t.Helper()
	w.report(format, args...)
}

func (w *world) report(format string, args ...any) {
	w.t.Helper()
	from := max(0, len(w.trail)-40)
	w.t.Fatalf("oracle seed %d, step %d: %s\n\nrun it again: go test ./cmd/internal/oracle -run TestOracle -seed %d -seeds 1 -steps %d\n\nthe last steps:\n%s\n\nthe bot's log, its end:\n%s",
		w.seed, w.step, fmt.Sprintf(format, args...), w.seed, max(w.step, 1), strings.Join(w.trail[from:], "\n"), w.logs)
}

// ctx bounds one wait of a step, or of the stop that ends the run (the
// test's own context is cancelled before that).
func (w *world) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 30*time.Second)
}

// stoppable is a journal that stops answering when its process is
// killed: every call from then on waits for good.
type stoppable struct {
	journal.Store
	mu      sync.Mutex
	halted  bool
	waiting int
}

var never = make(chan struct{})

func (s *stoppable) halt() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.halted = true
}

// stuck is how many calls wait.
func (s *stoppable) stuck() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.waiting
}

func (s *stoppable) gate() {
	s.mu.Lock()
	if !s.halted {
		s.mu.Unlock()
		return
	}
	s.waiting++
	s.mu.Unlock()
	<-never
}

func (s *stoppable) Begin(ctx context.Context, w booking.Write) (func(*booking.Result) error, error) {
	s.gate()
	finish, err := s.Store.Begin(ctx, w)
	if err != nil {
		return nil, err
	}
	return func(res *booking.Result) error { s.gate(); return finish(res) }, nil
}

func (s *stoppable) Finish(seq uint64, res *booking.Result, recovered bool) (journal.Entry, error) {
	s.gate()
	return s.Store.Finish(seq, res, recovered)
}

func (s *stoppable) Settle(ctx context.Context, seq uint64, res *booking.Result) error {
	s.gate()
	return s.Store.Settle(ctx, seq, res)
}

func (s *stoppable) Unreported() ([]journal.Entry, error) {
	s.gate()
	return s.Store.Unreported()
}

func (s *stoppable) MarkReported(seq uint64, to string) error {
	s.gate()
	return s.Store.MarkReported(seq, to)
}

func (s *stoppable) MarkReviewed(seq uint64, by string) (journal.Entry, error) {
	s.gate()
	return s.Store.MarkReviewed(seq, by)
}

func (s *stoppable) Entry(seq uint64) (journal.Entry, error) {
	s.gate()
	return s.Store.Entry(seq)
}

func (s *stoppable) Since(t time.Time) ([]journal.Entry, error) {
	s.gate()
	return s.Store.Since(t)
}

// tail keeps the last lines written to it: the end of the bot's log.
type tail struct {
	mu    sync.Mutex
	max   int
	lines []string
	part  string
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.part + string(p)
	for {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok {
			break
		}
		t.lines = append(t.lines, line)
		s = rest
	}
	t.part = s
	if over := len(t.lines) - t.max; over > 0 {
		t.lines = append(t.lines[:0], t.lines[over:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, "\n")
}

var errNoView = errors.New("no such view")
