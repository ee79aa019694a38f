package main

import (
	"context"
	"os"
	"strings"
	"sync"
	"time"
)

// testClockVar names a file that moves `bookbot run`'s clock ahead by the
// Go duration it holds (no file, or no duration yet: not moved), and with
// it the waits on that clock. Only the end-to-end tests set it: they move
// the clock of the processes they start (a notice's post settling, the
// next read of the bookings) instead of waiting for the real one. It is not
// configuration, and docs/configuration.md does not list it.
const testClockVar = "BOOKBOT_TEST_CLOCK_FILE"

// fileReread is how stale fileClock's reading of its file may be.
const fileReread = 20 * time.Millisecond

// fileClock is the machine's clock moved ahead by the duration in a file.
type fileClock struct {
	path string

	mu    sync.Mutex
	read  time.Time // when the file was last read
	ahead time.Duration
}

func (c *fileClock) Now() time.Time {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.Sub(c.read) >= fileReread {
		c.read = now
		if b, err := os.ReadFile(c.path); err == nil {
			if d, err := time.ParseDuration(strings.TrimSpace(string(b))); err == nil {
				c.ahead = d
			}
		}
	}
	return now.Add(c.ahead)
}

// Sleep waits until the clock is d later than when it was called: d of the
// machine's time, or less once the file moves the clock past it; or until
// ctx ends, and then returns ctx's error.
func (c *fileClock) Sleep(ctx context.Context, d time.Duration) error {
	end := c.Now().Add(d)
	look := time.NewTicker(fileReread)
	defer look.Stop()
	for c.Now().Before(end) {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-look.C:
		}
	}
	return nil
}
