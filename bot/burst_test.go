package bot_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/bot"
)

// holdFirst is a shared Seen whose first question waits until released,
// or until the bot gives up on it: the envelope asked about stays in
// Handle meanwhile, as one asking a slow database does.
type holdFirst struct {
	asked, release chan struct{}
	once           sync.Once

	mu   sync.Mutex
	seen map[string]bool
}

func (s *holdFirst) FirstTime(ctx context.Context, id string, _ time.Time) (bool, error) {
	first := false
	s.once.Do(func() { first = true; close(s.asked) })
	if first {
		select {
		case <-s.release:
		case <-ctx.Done():
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.seen[id] {
		return false, nil
	}
	s.seen[id] = true
	return true, nil
}

func (s *holdFirst) KeepAck(context.Context, string, []byte) error { return nil }

func (s *holdFirst) Ack(context.Context, string) ([]byte, bool, error) { return nil, false, nil }

// The work an envelope starts waits for the envelopes still being handled,
// so that a burst's acks go out first; but only so long.
func TestWorkWaitsForAnEnvelopeStillBeingHandled(t *testing.T) {
	t.Parallel()
	seen := &holdFirst{asked: make(chan struct{}), release: make(chan struct{}), seen: map[string]bool{}}
	h := newHarness(t, func(_ *harness, c *bot.Config) { c.Seen = seen })

	// Ada's list is acked, then stays in Handle: its question to the
	// shared memory, asked after the ack, is held.
	h.slash(ada, "list")
	select {
	case <-seen.asked:
	case <-h.ctx().Done():
		t.Fatal("the shared memory was not asked about Ada's list")
	}
	// Bob's list is handled meanwhile: its work waits for Ada's envelope,
	// then goes ahead without it.
	h.slash(bob, "list")
	h.reply(bob, "Upcoming bookings")
	if got := bot.HeldOut(h.bot); got != 1 {
		t.Errorf("work that waited its most for an envelope being handled: %d, want 1 (Bob's list)", got)
	}
	close(seen.release)
	h.reply(ada, "Upcoming bookings")
}
