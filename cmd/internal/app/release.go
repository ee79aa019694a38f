package app

import (
	"runtime/debug"
	"sync"
	"time"

	"github.com/bookbot/bookbot/cmd/internal/metrics"
)

// releaseAfter is how long the bot stays without an envelope before the
// memory its last burst used is handed back to the OS.
const releaseAfter = time.Minute

// quietRelease hands the heap's free pages back to the OS once the bot has
// been quiet for a while after work: a burst of commands grows the heap to
// tens of MB, and the runtime on its own keeps a good part of what it
// freed (spans holding a few live objects each, a margin of free pages)
// for the next burst, for good. Once per quiet spell, a collection and a
// scavenge cost a few milliseconds; nothing runs while nothing happens.
//
// The connections a burst opened are closed first: kept idle, each holds
// its buffers, TLS state and two goroutines, so the release would keep
// them, and net/http closes them only after 90 s idle, 30 s after it.
type quietRelease struct {
	quiet   time.Duration
	release func()
	after   func(time.Duration, func()) timer // time.AfterFunc; tests fire their own

	mu      sync.Mutex
	timer   timer
	stopped bool
}

// timer is what quietRelease uses of a *time.Timer.
type timer interface {
	Reset(time.Duration) bool
	Stop() bool
}

// newQuietRelease releases memory after quiet, closing idle connections
// with closeIdle first.
func newQuietRelease(quiet time.Duration, closeIdle func()) *quietRelease {
	release := func() {
		closeIdle()
		debug.FreeOSMemory()
	}
	return &quietRelease{quiet: quiet, release: release,
		after: func(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }}
}

// busy says the bot just did something: the release waits for quiet
// after it. After stop it does nothing: an envelope acked while the bot
// stops does not arm a release again.
func (q *quietRelease) busy() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.stopped {
		return
	}
	if q.timer == nil {
		q.timer = q.after(q.quiet, q.release)
		return
	}
	q.timer.Reset(q.quiet)
}

// stop cancels a release not yet made.
func (q *quietRelease) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	if q.timer != nil {
		q.timer.Stop()
	}
}

// ackWatch is the bot's metrics, also telling q of each envelope.
type ackWatch struct {
	*metrics.Recorder
	q *quietRelease
}

func (w ackWatch) Acked(kind string, took time.Duration) {
	w.Recorder.Acked(kind, took)
	w.q.busy()
}
