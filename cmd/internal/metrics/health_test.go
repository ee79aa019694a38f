package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/testutil"
)

// waitLive waits until live says want, and returns its reason.
func waitLive(t *testing.T, m *Recorder, want bool) (reason string) {
	t.Helper()
	testutil.WaitFor(t, 5*time.Second, fmt.Sprintf("live to be %v", want), func() bool {
		var ok bool
		ok, reason = m.live()
		return ok == want
	})
	return reason
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

	var logs testutil.Buffer
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
	var logs testutil.Buffer
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
