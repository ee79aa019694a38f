package bot_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/bot"
)

// metricsRecorder is a bot.Metrics that keeps what it is told.
type metricsRecorder struct {
	mu      sync.Mutex
	acks    map[string][]time.Duration
	states  []bool
	changed chan struct{} // closed and replaced on every report
}

func newMetricsRecorder() *metricsRecorder {
	return &metricsRecorder{acks: map[string][]time.Duration{}, changed: make(chan struct{})}
}

func (r *metricsRecorder) Acked(kind string, took time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.acks[kind] = append(r.acks[kind], took)
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *metricsRecorder) Connected(up bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, up)
	close(r.changed)
	r.changed = make(chan struct{})
}

// waitStates waits until the connection states reported end with want.
func (r *metricsRecorder) waitStates(ctx context.Context, t *testing.T, want ...bool) {
	t.Helper()
	for {
		r.mu.Lock()
		states, ch := slices.Clone(r.states), r.changed
		r.mu.Unlock()
		if len(states) >= len(want) && slices.Equal(states[len(states)-len(want):], want) {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("connection states %v, want them to end with %v", states, want)
		}
	}
}

func (r *metricsRecorder) acked(kind string) []time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.acks[kind])
}

// The bot reports every ack it queues, by envelope type, and Socket Mode's
// state: up when connected, down while Slack has it reconnect, up again,
// and down once Run stops.
func TestMetricsSeeAcksAndConnectionState(t *testing.T) {
	t.Parallel()
	rec := newMetricsRecorder()
	h := newHarness(t, func(_ *harness, cfg *bot.Config) { cfg.Metrics = rec })
	rec.waitStates(h.ctx(), t, false, true) // connecting, connected

	h.slash(ada, "help")
	if _, err := h.sl.OpenAppHome(h.ctx(), ada); err != nil {
		t.Fatal(err)
	}
	h.drain() // the ack is reported before the envelope's handling counts as done
	for _, kind := range []string{"slash_commands", "events_api"} {
		got := rec.acked(kind)
		if len(got) != 1 {
			t.Fatalf("%s acks reported: %v, want 1", kind, got)
		}
		if got[0] <= 0 || got[0] > 3*time.Second {
			t.Errorf("%s ack took %v", kind, got[0])
		}
	}

	h.sl.Disconnect("refresh_requested")
	rec.waitStates(h.ctx(), t, false, true)
	if err := h.sl.WaitConnected(h.ctx()); err != nil {
		t.Fatal(err)
	}

	h.stop()
	rec.waitStates(h.ctx(), t, false)
}
