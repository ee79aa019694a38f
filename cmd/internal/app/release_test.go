package app

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/cmd/internal/metrics"
	"github.com/bookbot/bookbot/internal/testutil"
)

// Memory is handed back once after a spell of envelopes, when they stop,
// and again after the next spell.
func TestQuietReleaseAfterEachSpellOfWork(t *testing.T) {
	t.Parallel()
	var released atomic.Int32
	q := &quietRelease{quiet: 20 * time.Millisecond, release: func() { released.Add(1) }}
	w := ackWatch{metrics.New(), q}
	for range 50 {
		w.Acked("slash_commands", time.Millisecond)
	}
	testutil.WaitFor(t, 10*time.Second, "one release after the first spell", func() bool { return released.Load() == 1 })
	w.Acked("interactive", time.Millisecond)
	testutil.WaitFor(t, 10*time.Second, "one release after the second spell", func() bool { return released.Load() == 2 })
	q.stop()
}

// A bot that stops before it was quiet long enough releases nothing.
func TestQuietReleaseStops(t *testing.T) {
	t.Parallel()
	released := make(chan struct{}, 1)
	q := &quietRelease{quiet: time.Hour, release: func() { released <- struct{}{} }}
	q.busy()
	q.stop()
	q.mu.Lock()
	stopped := !q.timer.Stop() // already stopped: nothing can fire
	q.mu.Unlock()
	if !stopped {
		t.Error("the release was still armed after stop")
	}
}
