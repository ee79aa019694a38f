package metrics

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/testutil"
)

// timers stand for time.AfterFunc in a socketWatch: a timer fires when the
// test says.
type timers struct {
	mu    sync.Mutex
	after []time.Duration // of each timer armed
	funcs []func()
}

func watchedBy(m *Recorder) *timers {
	ts := &timers{}
	m.socket.afterFunc = func(d time.Duration, f func()) func() bool {
		ts.mu.Lock()
		defer ts.mu.Unlock()
		ts.after, ts.funcs = append(ts.after, d), append(ts.funcs, f)
		return func() bool { return true }
	}
	return ts
}

// fireAll fires every timer armed so far, stopped or not, as time.AfterFunc
// may fire one that is being stopped, and returns how long each was set
// for.
func (ts *timers) fireAll() []time.Duration {
	ts.mu.Lock()
	after, funcs := slices.Clone(ts.after), slices.Clone(ts.funcs)
	ts.mu.Unlock()
	for _, f := range funcs {
		f()
	}
	return after
}

// Socket Mode down for longer than allowed fails liveness, said once in
// the log; connecting again passes it, also said once. Without a watch, or
// once stopped, nothing fails, whatever timer fires.
func TestWatchSocket(t *testing.T) {
	t.Parallel()
	m := New()
	ts := watchedBy(m)
	m.Connected(false)
	if ok, _ := m.live(); !ok {
		t.Fatal("live fails before anything watches")
	}

	var logs testutil.Buffer
	stop := m.WatchSocket(t.Context(), 20*time.Millisecond, slog.New(slog.NewTextHandler(&logs, nil)))
	m.Connected(true)
	m.Connected(false)
	m.Connected(false) // every failed attempt is reported; the clock runs from the first
	if ok, _ := m.live(); !ok {
		t.Fatal("live fails before its time")
	}
	for _, d := range ts.fireAll() {
		if d != 20*time.Millisecond {
			t.Errorf("a timer set for %v, want 20ms", d)
		}
	}
	ok, reason := m.live()
	if ok || !strings.HasPrefix(reason, "socket mode not connected for over 20ms (since ") {
		t.Errorf("live = %v, %q", ok, reason)
	}
	m.Connected(true)
	if ok, reason := m.live(); !ok {
		t.Errorf("live fails once connected again: %q", reason)
	}
	ts.fireAll() // their time is past
	if ok, reason := m.live(); !ok {
		t.Errorf("live fails once connected again, when old timers fire: %q", reason)
	}
	if got := strings.Count(logs.String(), "Socket Mode not connected for too long"); got != 1 {
		t.Errorf("failure logged %d times, want once:\n%s", got, logs.String())
	}
	if got := strings.Count(logs.String(), "Socket Mode connected again"); got != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", got, logs.String())
	}

	stop()
	m.Connected(false)
	ts.fireAll()
	if ok, reason := m.live(); !ok {
		t.Errorf("live fails after stop: %q", reason)
	}
}

// A disconnect once the context is done is a shutdown, not a fault.
func TestWatchSocketShutdown(t *testing.T) {
	t.Parallel()
	m := New()
	ts := watchedBy(m)
	ctx, cancel := context.WithCancel(t.Context())
	var logs testutil.Buffer
	stop := m.WatchSocket(ctx, 20*time.Millisecond, slog.New(slog.NewTextHandler(&logs, nil)))
	defer stop()
	m.Connected(true)
	cancel()
	m.Connected(false)
	if len(ts.fireAll()) == 0 {
		t.Fatal("no timer was armed")
	}
	if ok, reason := m.live(); !ok || logs.String() != "" {
		t.Errorf("live after a shutdown = %v %q; log:\n%s", ok, reason, logs.String())
	}
}
