package metrics

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log destination the watch's timer may write to while the
// test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitLive polls live until it says want, or fails the test.
func waitLive(t *testing.T, m *Recorder, want bool) string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		ok, reason := m.live()
		if ok == want {
			return reason
		}
		if time.Now().After(deadline) {
			t.Fatalf("live = %v (%q), want %v", ok, reason, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Socket Mode down for longer than allowed fails liveness, said once in
// the log; connecting again passes it, also said once. Without a watch, or
// once stopped, nothing fails.
func TestWatchSocket(t *testing.T) {
	t.Parallel()
	m := New()
	m.Connected(false)
	if ok, _ := m.live(); !ok {
		t.Fatal("live fails before anything watches")
	}

	var logs syncBuffer
	stop := m.WatchSocket(t.Context(), 20*time.Millisecond, slog.New(slog.NewTextHandler(&logs, nil)))
	m.Connected(true)
	m.Connected(false)
	m.Connected(false) // every failed attempt is reported; the clock runs from the first
	reason := waitLive(t, m, false)
	if !strings.HasPrefix(reason, "socket mode not connected for over 20ms (since ") {
		t.Errorf("reason = %q", reason)
	}
	m.Connected(true)
	waitLive(t, m, true)
	if got := strings.Count(logs.String(), "Socket Mode not connected for too long"); got != 1 {
		t.Errorf("failure logged %d times, want once:\n%s", got, logs.String())
	}
	if got := strings.Count(logs.String(), "Socket Mode connected again"); got != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", got, logs.String())
	}

	stop()
	m.Connected(false)
	time.Sleep(60 * time.Millisecond)
	if ok, reason := m.live(); !ok {
		t.Errorf("live fails after stop: %q", reason)
	}
}

// A disconnect once the context is done is a shutdown, not a fault.
func TestWatchSocketShutdown(t *testing.T) {
	t.Parallel()
	m := New()
	ctx, cancel := context.WithCancel(t.Context())
	var logs syncBuffer
	stop := m.WatchSocket(ctx, 20*time.Millisecond, slog.New(slog.NewTextHandler(&logs, nil)))
	defer stop()
	m.Connected(true)
	cancel()
	m.Connected(false)
	time.Sleep(60 * time.Millisecond)
	if ok, reason := m.live(); !ok || logs.String() != "" {
		t.Errorf("live after a shutdown = %v %q; log:\n%s", ok, reason, logs.String())
	}
}
