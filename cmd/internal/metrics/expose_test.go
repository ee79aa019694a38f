package metrics

import (
	"bufio"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/testutil"
)

// stuckWriter is a scraper that stops reading: its first Write blocks
// until release is closed.
type stuckWriter struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (w *stuckWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	return len(p), nil
}

// A scraper that stops reading does not hold up what is being recorded:
// /metrics writes a copy of a family's series, not the series under their
// lock.
func TestSlowScraperDoesNotBlockRecording(t *testing.T) {
	f := newHistogram("bookbot_test_seconds", "A test histogram.", []float64{0.1, 1}, "kind")
	for i := range 200 { // more than a bufio.Writer holds
		f.observe(0.5, fmt.Sprintf("kind-%03d", i))
	}
	w := &stuckWriter{entered: make(chan struct{}), release: make(chan struct{})}
	t.Cleanup(func() { close(w.release) })
	go func() {
		bw := bufio.NewWriter(w)
		f.write(bw)
		bw.Flush()
	}()
	<-w.entered
	var observed atomic.Bool
	go func() {
		f.observe(0.5, "kind-000")
		observed.Store(true)
	}()
	testutil.WaitFor(t, 10*time.Second, "an observation while a scrape is stuck", observed.Load)
}
