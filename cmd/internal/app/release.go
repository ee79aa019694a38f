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
type quietRelease struct {
	quiet   time.Duration
	release func()

	mu    sync.Mutex
	timer *time.Timer
}

func newQuietRelease(quiet time.Duration) *quietRelease {
	return &quietRelease{quiet: quiet, release: debug.FreeOSMemory}
}

// busy says the bot just did something: the release waits for quiet
// after it.
func (q *quietRelease) busy() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.timer == nil {
		q.timer = time.AfterFunc(q.quiet, q.release)
		return
	}
	q.timer.Reset(q.quiet)
}

// stop cancels a release not yet made.
func (q *quietRelease) stop() {
	q.mu.Lock()
	defer q.mu.Unlock()
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
