package bot

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
)

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
	if f.release != nil {
		<-f.release
		return false, nil
	}
	select {
	case <-time.After(f.delay):
		return false, errors.New("database unreachable")
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

// Two replicas share a Seen: an envelope redelivered to the other one is
// acked empty there and not acted on; to the first, with its first ack.
func TestSeenShared(t *testing.T) {
	now := time.Date(2026, 3, 23, 10, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	shared := newSeenSet(SeenTTL, clock) // the in-memory Seen, standing for the database
	a := newSeenSet(SeenTTL, clock).sharing(shared, nil)
	b := newSeenSet(SeenTTL, clock).sharing(shared, nil)

	if _, dup := a.check("E1"); dup {
		t.Fatal("E1 seen before it came")
	}
	a.store("E1", map[string]string{"text": "help"})
	if ack, dup := b.check("E1"); !dup || ack != nil {
		t.Errorf("E1 redelivered to the other replica: %v, %v; want a duplicate acked empty", ack, dup)
	}
	if ack, dup := a.check("E1"); !dup || ack == nil {
		t.Errorf("E1 redelivered to the first replica: %v, %v; want its first ack", ack, dup)
	}
	if ack, dup := b.check("E1"); !dup || ack != nil {
		t.Errorf("E1 redelivered twice to the other replica: %v, %v; want a duplicate acked empty", ack, dup)
	}
	if _, dup := b.check("E2"); dup {
		t.Error("E2, first delivered to the other replica, is seen")
	}
	if _, dup := a.check(""); dup {
		t.Error("an envelope without ID is seen")
	}

	now = now.Add(SeenTTL + time.Nanosecond)
	if _, dup := b.check("E1"); dup {
		t.Error("E1 is seen after the TTL")
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
			var logs bytes.Buffer
			var mu sync.Mutex
			log := slog.New(slog.NewTextHandler(lockedWriter{&mu, &logs}, nil))
			s := newSeenSet(SeenTTL, time.Now).sharing(shared, log)
			start := time.Now()
			if _, dup := s.check("E1"); dup {
				t.Error("E1 seen before it came")
			}
			if took := time.Since(start); took > sharedSeenWait+250*time.Millisecond {
				t.Errorf("the check took %v, over %v", took, sharedSeenWait)
			}
			if _, dup := s.check("E1"); !dup {
				t.Error("E1 redelivered to the same replica is not seen")
			}
			mu.Lock()
			defer mu.Unlock()
			if !strings.Contains(logs.String(), "shared envelope memory failed") || !strings.Contains(logs.String(), "E1") {
				t.Errorf("the failure is not logged: %s", logs.String())
			}
		})
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A redelivery this replica caught is not asked about again.
func TestSeenSharedAskedOnce(t *testing.T) {
	shared := &failingSeen{delay: 0, asked: make(chan string, 10)}
	s := newSeenSet(SeenTTL, time.Now).sharing(shared, nil)
	s.check("E1")
	s.check("E1")
	s.check("")
	if n := len(shared.asked); n != 1 {
		t.Errorf("the shared Seen was asked %d times, want once", n)
	}
}

// Through Handle: of two bots sharing a Seen, the one a redelivery reaches
// second acks it empty and does nothing.
func TestHandleSharedSeen(t *testing.T) {
	shared := newSeenSet(SeenTTL, time.Now)
	cfg := Config{Allowed: func(string) bool { return true }}
	a, b := New(cfg, nil, nil), New(cfg, nil, nil)
	a.seen.sharing(shared, nil)
	b.seen.sharing(shared, nil)
	evt := socketmode.Event{
		Type:    socketmode.EventTypeSlashCommand,
		Data:    slack.SlashCommand{Command: "/booking", Text: "help", UserID: "UADA"},
		Request: &socketmode.Request{EnvelopeID: "E1"},
	}
	var first, again any
	acked := 0
	a.Handle(evt, func(p any) { first = p; acked++ })
	evt.Request.RetryAttempt = 1
	b.Handle(evt, func(p any) { again = p; acked++ })
	if acked != 2 || first == nil || again != nil {
		t.Errorf("acks: %d, first %v, redelivered %v; want 2, the help, nil", acked, first != nil, again)
	}
}
