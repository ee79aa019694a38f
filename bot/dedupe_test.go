package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/internal/testutil"
)

// memSeen is a shared Seen in memory, standing for the database.
type memSeen struct {
	*seenSet
	acks *sync.Map // envelope ID → the ack kept, []byte
}

func newMemSeen(now func() time.Time) memSeen {
	return memSeen{newSeenSet(SeenTTL, now), new(sync.Map)}
}

func (m memSeen) FirstTime(_ context.Context, id string, now time.Time) (bool, error) {
	_, dup := m.reserve(id, now)
	return !dup, nil
}

func (m memSeen) KeepAck(_ context.Context, id string, ack []byte) error {
	m.acks.Store(id, bytes.Clone(ack))
	return nil
}

func (m memSeen) Ack(_ context.Context, id string) ([]byte, bool, error) {
	ack, kept := m.acks.Load(id)
	if !kept {
		return nil, false, nil
	}
	return ack.([]byte), true, nil
}

// failingSeen fails every question, after delay, or ignores its context
// and answers only when released.
type failingSeen struct {
	delay   time.Duration
	release chan struct{} // non-nil: answers once closed, whatever the context
	asked   chan string
}

func (f *failingSeen) FirstTime(ctx context.Context, id string, _ time.Time) (bool, error) {
	if f.asked != nil {
		f.asked <- id
	}
	return false, f.fail(ctx)
}

func (f *failingSeen) KeepAck(ctx context.Context, _ string, _ []byte) error { return f.fail(ctx) }

func (f *failingSeen) Ack(ctx context.Context, _ string) ([]byte, bool, error) {
	return nil, false, f.fail(ctx)
}

func (f *failingSeen) fail(ctx context.Context) error {
	if f.release != nil {
		<-f.release
		return nil
	}
	select {
	case <-time.After(f.delay):
		return errors.New("database unreachable")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Two replicas share a Seen: each remembers the envelopes it saw, and
// the shared one tells which replica saw an envelope first.
func TestSeenShared(t *testing.T) {
	now := time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	shared := newMemSeen(clock)
	a := newSeenSet(SeenTTL, clock).sharing(shared, nil)
	b := newSeenSet(SeenTTL, clock).sharing(shared, nil)

	if _, dup := a.check("E1"); dup || !a.sharedFirst("E1") {
		t.Fatal("E1 seen before it came")
	}
	a.store("E1", map[string]string{"text": "help"})
	if _, dup := b.check("E1"); dup {
		t.Error("E1 is in the other replica's own memory")
	}
	if b.sharedFirst("E1") {
		t.Error("E1 redelivered to the other replica is first there too")
	}
	if ack, dup := a.check("E1"); !dup || ack == nil {
		t.Errorf("E1 redelivered to the first replica: %v, %v; want its first ack", ack, dup)
	}
	if ack, dup := b.check("E1"); !dup || ack != nil {
		t.Errorf("E1 redelivered twice to the other replica: %v, %v; want a duplicate acked empty", ack, dup)
	}
	if _, dup := b.check("E2"); dup || !b.sharedFirst("E2") {
		t.Error("E2, first delivered to the other replica, is seen")
	}
	if _, dup := a.check(""); dup || !a.sharedFirst("") {
		t.Error("an envelope without ID is seen")
	}

	now = now.Add(SeenTTL + time.Nanosecond)
	if _, dup := b.check("E1"); dup || !b.sharedFirst("E1") {
		t.Error("E1 is seen after the TTL")
	}
}

// localSeen is a Seen in this process's memory that notes whether a
// question came with a deadline.
type localSeen struct {
	memSeen
	bounded atomic.Bool
}

func (l *localSeen) Local() bool { return true }

func (l *localSeen) FirstTime(ctx context.Context, id string, now time.Time) (bool, error) {
	if _, ok := ctx.Deadline(); ok {
		l.bounded.Store(true)
	}
	return l.memSeen.FirstTime(ctx, id, now)
}

// A Seen in this process's memory is asked directly, not within
// sharedSeenWait on a goroutine of its own, and what it says holds.
func TestSeenLocal(t *testing.T) {
	now := time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	l := &localSeen{memSeen: newMemSeen(clock)}
	s := newSeenSet(SeenTTL, clock).sharing(l, nil)
	if !s.sharedFirst("E1") || s.sharedFirst("E1") {
		t.Error("E1 not first once")
	}
	if l.bounded.Load() {
		t.Error("a Seen in memory asked within a deadline, on a goroutine of its own")
	}
}

// A shared Seen that fails, is slow or hangs leaves the answer to the
// replica's memory, within sharedSeenWait, and is logged.
func TestSeenSharedFails(t *testing.T) {
	hang := make(chan struct{})
	defer close(hang)
	for name, shared := range map[string]*failingSeen{
		"fails":               {delay: 0},
		"slow":                {delay: time.Hour},
		"ignores its context": {release: hang},
	} {
		t.Run(name, func(t *testing.T) {
			var logs testutil.Buffer
			log := slog.New(slog.NewTextHandler(&logs, nil))
			s := newSeenSet(SeenTTL, time.Now).sharing(shared, log)
			if _, dup := s.check("E1"); dup {
				t.Error("E1 seen before it came")
			}
			if !s.sharedFirst("E1") {
				t.Error("E1 not first when the shared Seen cannot tell")
			}
			if _, dup := s.check("E1"); !dup {
				t.Error("E1 redelivered to the same replica is not seen")
			}
			if !strings.Contains(logs.String(), "shared envelope memory failed") || !strings.Contains(logs.String(), "E1") {
				t.Errorf("the failure is not logged: %s", logs.String())
			}
			// A redelivered submission's ack is not found: acked empty.
			if ack := s.sharedAck("E1"); ack != nil {
				t.Errorf("ack found in a shared Seen that cannot tell: %s", ack)
			}
			if !strings.Contains(logs.String(), "redelivered submission acked empty") {
				t.Errorf("the ack not found is not logged: %s", logs.String())
			}
			if name == "fails" { // the others wait out the context they are given, or more
				s.keepShared(t.Context(), "E1")
				if !strings.Contains(logs.String(), "could not be shared") {
					t.Errorf("the ack not kept is not logged: %s", logs.String())
				}
			}
		})
	}
}

// lateKeep is a shared Seen whose first question about an ack comes before
// the ack is kept: it says so on polled.
type lateKeep struct {
	memSeen
	polled chan struct{}
	once   sync.Once
}

func (l *lateKeep) Ack(ctx context.Context, id string) ([]byte, bool, error) {
	ack, kept, err := l.memSeen.Ack(ctx, id)
	l.once.Do(func() { close(l.polled) })
	return ack, kept, err
}

// A redelivered submission is acked with the ack the replica that took it
// kept, waited for while it has not kept it yet, and remembered; an empty
// ack kept is empty there too, and none kept in time is an empty ack.
func TestSeenSharedAck(t *testing.T) {
	shared := &lateKeep{memSeen: newMemSeen(time.Now), polled: make(chan struct{})}
	var logs testutil.Buffer
	a := newSeenSet(SeenTTL, time.Now).sharing(shared, nil)
	b := newSeenSet(SeenTTL, time.Now).sharing(shared, slog.New(slog.NewTextHandler(&logs, nil)))
	took := func(id string, ack any) {
		t.Helper()
		if _, dup := a.check(id); dup || !a.sharedFirst(id) {
			t.Fatalf("%s seen before it came", id)
		}
		a.store(id, ack)
		if _, dup := b.check(id); dup || b.sharedFirst(id) {
			t.Fatalf("%s, redelivered to the other replica, is first there", id)
		}
	}

	took("E1", map[string]string{"response_action": "update"})
	got := make(chan any, 1)
	go func() { got <- b.sharedAck("E1") }()
	<-shared.polled // b has found nothing kept yet
	a.keepShared(t.Context(), "E1")
	want := `{"response_action":"update"}`
	if ack := <-got; !jsonEqual(ack, want) {
		t.Errorf("redelivered: acked %v, want %s", ack, want)
	}
	if ack, dup := b.check("E1"); !dup || !jsonEqual(ack, want) {
		t.Errorf("redelivered there again: %v, %v; want %s", ack, dup, want)
	}

	took("E2", nil)
	a.keepShared(t.Context(), "E2")
	if ack := b.sharedAck("E2"); ack != nil {
		t.Errorf("an empty ack kept: acked %s", ack)
	}

	took("E3", map[string]string{"response_action": "clear"}) // never kept
	if ack := b.sharedAck("E3"); ack != nil {
		t.Errorf("no ack kept: acked %s", ack)
	}
	if !strings.Contains(logs.String(), "redelivered submission acked empty") || !strings.Contains(logs.String(), "E3") {
		t.Errorf("an ack not found is not logged: %s", logs.String())
	}
}

// jsonEqual reports whether ack marshals to want.
func jsonEqual(ack any, want string) bool {
	b, err := json.Marshal(ack)
	return err == nil && ack != nil && string(b) == want
}

// countingSeen is a shared Seen that counts its questions.
type countingSeen struct {
	memSeen
	mu    sync.Mutex
	asked int
}

func (c *countingSeen) FirstTime(ctx context.Context, id string, now time.Time) (bool, error) {
	c.mu.Lock()
	c.asked++
	c.mu.Unlock()
	return c.memSeen.FirstTime(ctx, id, now)
}

// A redelivery this replica caught is not asked about again.
func TestSeenSharedAskedOnce(t *testing.T) {
	shared := &countingSeen{memSeen: newMemSeen(time.Now)}
	bot := New(Config{Allowed: func(string) bool { return true }, Seen: shared}, nil, nil)
	evt := socketmode.Event{
		Type:    socketmode.EventTypeSlashCommand,
		Data:    slack.SlashCommand{Command: "/booking", Text: "help", UserID: "UADA"},
		Request: &socketmode.Request{EnvelopeID: "E1"},
	}
	bot.Handle(evt, func(any) {})
	bot.Handle(evt, func(any) {})
	evt.Request.EnvelopeID = ""
	bot.Handle(evt, func(any) {})
	if shared.asked != 1 {
		t.Errorf("the shared Seen was asked %d times, want once", shared.asked)
	}
}

// cancelCounter is a Booker that counts the cancels asked of it, and
// fails them; nothing else is asked of it.
type cancelCounter struct {
	Booker
	cancels atomic.Int32
}

func (c *cancelCounter) Cancel(context.Context, string) (*booking.Result, error) {
	c.cancels.Add(1)
	return nil, errors.New("no booking API here")
}

// orderSeen is a shared Seen that notes when it is asked in a sequence the
// test's acks are noted in too.
type orderSeen struct {
	memSeen
	mu  sync.Mutex
	seq []string
}

func (o *orderSeen) note(s string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.seq = append(o.seq, s)
}

func (o *orderSeen) FirstTime(ctx context.Context, id string, now time.Time) (bool, error) {
	o.note("asked")
	return o.memSeen.FirstTime(ctx, id, now)
}

// Through Handle: a command is acked from the replica's memory, before the
// shared Seen is asked; a submission's ack waits for it, and the replica a
// redelivered submission reaches second acks it as the first did and does
// nothing.
func TestHandleSharedSeen(t *testing.T) {
	cfg := Config{Allowed: func(string) bool { return true }, ViewKey: ViewKey("xapp-replicas")}
	shared := &orderSeen{memSeen: newMemSeen(time.Now)}
	booker := &cancelCounter{}
	a, b := New(cfg, nil, nil), New(cfg, booker, nil)
	a.seen.sharing(shared, nil)
	b.seen.sharing(shared, nil)

	help := socketmode.Event{
		Type:    socketmode.EventTypeSlashCommand,
		Data:    slack.SlashCommand{Command: "/booking", Text: "help", UserID: "UADA"},
		Request: &socketmode.Request{EnvelopeID: "E1"},
	}
	var first, again any
	a.Handle(help, func(p any) { first = p; shared.note("acked") })
	help.Request.RetryAttempt = 1
	b.Handle(help, func(p any) { again = p; shared.note("acked") })
	if first == nil || !reflect.DeepEqual(first, again) {
		t.Errorf("command acks: first %v, redelivered %v; want the help twice", first, again)
	}
	if got := strings.Join(shared.seq, " "); got != "acked asked acked asked" {
		t.Errorf("command: %s; want each ack before its question", got)
	}

	shared.seq = nil
	submit := socketmode.Event{
		Type: socketmode.EventTypeInteractive,
		Data: slack.InteractionCallback{Type: slack.InteractionTypeViewSubmission, User: slack.User{ID: "UADA"},
			View: slack.View{ID: "V1", CallbackID: callbackBooking, PrivateMetadata: a.signer.sign(callbackBooking, modalMeta{}.encode())}},
		Request: &socketmode.Request{EnvelopeID: "E2"},
	}
	first, again = nil, nil
	a.Handle(submit, func(p any) { first = p; shared.note("acked") })
	submit.Request.RetryAttempt = 1
	b.Handle(submit, func(p any) { again = p; shared.note("acked") })
	if want, _ := json.Marshal(first); first == nil || !jsonEqual(again, string(want)) {
		t.Errorf("submission acks: first %v, redelivered %v; want the same answer twice", first, again)
	}
	if got := strings.Join(shared.seq, " "); got != "asked acked asked acked" {
		t.Errorf("submission: %s; want each question before its ack", got)
	}

	// A button another replica took is acked here, and not acted on: the
	// cancel it would start holds nothing.
	if first, err := shared.FirstTime(t.Context(), "E3", time.Now()); err != nil || !first {
		t.Fatal("E3 was seen")
	}
	press := socketmode.Event{
		Type: socketmode.EventTypeInteractive,
		Data: slack.InteractionCallback{Type: slack.InteractionTypeBlockActions, User: slack.User{ID: "UADA"},
			ActionCallback: slack.ActionCallbacks{BlockActions: []*slack.BlockAction{{ActionID: actionCancel, Value: "bk_1", Type: "button"}}}},
		Request: &socketmode.Request{EnvelopeID: "E3", RetryAttempt: 1},
	}
	acks := 0
	b.Handle(press, func(any) { acks++ })
	if acks != 1 || !b.creating.tryLock("cancel\x00bk_1") {
		t.Errorf("a button another replica took: %d acks, its cancel started here", acks)
	}
	if err := b.Idle(t.Context()); err != nil || booker.cancels.Load() != 0 {
		t.Errorf("a button another replica took: %d cancels sent here (%v)", booker.cancels.Load(), err)
	}

	// A command another replica took leaves none of its work counted here,
	// or a shutdown would wait for it.
	if first, err := shared.FirstTime(t.Context(), "E4", time.Now()); err != nil || !first {
		t.Fatal("E4 was seen")
	}
	list := socketmode.Event{
		Type:    socketmode.EventTypeSlashCommand,
		Data:    slack.SlashCommand{Command: "/booking", Text: "list", UserID: "UADA"},
		Request: &socketmode.Request{EnvelopeID: "E4", RetryAttempt: 1},
	}
	b.Handle(list, func(any) {})
	select {
	case <-b.work.idle():
	default:
		t.Error("a command another replica took is counted as work here")
	}
}

// A replica stopping while it handles an envelope acks it before closing
// its connection, and takes none that arrive meanwhile: Slack sends those
// to another replica, which answers them, as they were never seen.
func TestStoppingReplicaAcksThenCloses(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	sl := slacktest.NewServer(t, func(o *slacktest.Options) { o.Spread = true })
	shared := newMemSeen(time.Now)
	asked, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	holdFirst := func(string) bool { // holds the first envelope in Handle, before its ack
		once.Do(func() { close(asked); <-release })
		return true
	}
	var logA testutil.Buffer
	stopA := runReplica(t, sl, shared, holdFirst, &logA)
	if _, err := sl.WaitLiveConnections(ctx, 1); err != nil {
		t.Fatal(err)
	}
	runReplica(t, sl, shared, func(string) bool { return true }, nil)
	live, err := sl.WaitLiveConnections(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	a, b := live[0].ID, live[1].ID

	help := slacktest.SlashCommand{Command: "/booking", Text: "help", UserID: "UADA"}
	type result struct {
		ack slacktest.Ack
		err error
	}
	send := func() chan result {
		done := make(chan result, 1)
		go func() {
			ack, err := sl.SendSlashCommand(ctx, help)
			done <- result{ack, err}
		}()
		return done
	}
	first := send() // A's turn
	<-asked
	stopped := stopA()
	testutil.Until(ctx, t, "A to start stopping", func() bool { return strings.Contains(logA.String(), "taking no more envelopes") })
	if n := len(sl.LiveConnections()); n != 2 {
		t.Fatalf("A closed its connection with an envelope unacked: %d live", n)
	}
	if r := <-send(); r.err != nil || r.ack.ConnID != b { // B's turn
		t.Fatalf("second envelope: %v on %d, want B (%d)", r.err, r.ack.ConnID, b)
	}
	third := send() // A's turn: A is stopping
	testutil.Until(ctx, t, "the third envelope on A", func() bool {
		live := sl.LiveConnections()
		return len(live) > 0 && live[0].ID == a && live[0].Deliveries == 2
	})
	close(release)

	if r := <-first; r.err != nil || r.ack.ConnID != a || !strings.Contains(string(r.ack.Payload), "booking") {
		t.Errorf("first envelope: %v, acked on %d with %s; want A's (%d) help", r.err, r.ack.ConnID, r.ack.Payload, a)
	}
	r := <-third
	if r.err != nil || r.ack.ConnID != b || !strings.Contains(string(r.ack.Payload), "booking") {
		t.Errorf("third envelope: %v, acked on %d with %s; want B's (%d) help", r.err, r.ack.ConnID, r.ack.Payload, b)
	}
	if !strings.Contains(string(r.ack.Envelope), `"retry_attempt":1`) {
		t.Errorf("third envelope acked as delivered %s; want it redelivered", r.ack.Envelope)
	}
	if err := <-stopped; err != nil {
		t.Errorf("A's Run: %v", err)
	}
	if strings.Contains(logA.String(), "still unacked") {
		t.Errorf("A closed its connection before slack-go wrote its acks:\n%s", logA.String())
	}
	if strings.Contains(logA.String(), r.ack.EnvelopeID) || strings.Contains(logA.String(), "ack not sent") {
		t.Errorf("A took the envelope that came while it stopped:\n%s", logA.String())
	}
}

// runReplica runs a bot on sl sharing seen, allowing whom allowed says,
// logging to log (nil: nowhere), until the test ends or stop is called;
// stop's channel gives Run's result once it has returned.
func runReplica(t *testing.T, sl *slacktest.Server, seen Seen, allowed func(string) bool, log *testutil.Buffer) (stop func() <-chan error) {
	t.Helper()
	api := slack.New(sl.BotToken(), slack.OptionAPIURL(sl.APIURL), slack.OptionAppLevelToken(sl.AppToken()))
	cfg := Config{Allowed: allowed, Seen: seen}
	if log != nil {
		cfg.Log = slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	b := New(cfg, nil, api)
	ctx, cancel := context.WithCancel(context.Background())
	var err error
	done := make(chan struct{})
	go func() { err = b.Run(ctx, socketmode.New(api), 5*time.Second); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return func() <-chan error {
		cancel()
		c := make(chan error, 1)
		go func() { <-done; c <- err }()
		return c
	}
}
