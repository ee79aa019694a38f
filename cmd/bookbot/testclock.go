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

// testLeaderCheckVar is how often, as a Go duration, a replica that does
// not lead tries to lead (pg.LeaderOptions.Check): only the end-to-end
// tests set it, so that a replica takes over from one they killed within a
// fraction of the default 5 s. The store/pg tests prove the bounds in
// proportion to the check. Not configuration either.
const testLeaderCheckVar = "BOOKBOT_TEST_LEADER_CHECK"

// timing is how `bookbot run` keeps time: the zero value is the machine's
// clock and the default intervals. Only the end-to-end tests change it
// (testTiming), and the demo moves a clock of its own.
type timing struct {
	now         func() time.Time                           // nil: the machine's
	sleep       func(context.Context, time.Duration) error // nil: the machine's timers
	leaderCheck time.Duration                              // 0: pg.DefaultLeaderCheck
}

// testTiming is the timing the end-to-end tests ask for through the
// environment, and the names of the variables they set.
func testTiming(getenv func(string) string) (tm timing, set []string) {
	if path := getenv(testClockVar); path != "" {
		c := &fileClock{path: path}
		tm.now, tm.sleep = c.Now, c.Sleep
		set = append(set, testClockVar)
	}
	if d, err := time.ParseDuration(getenv(testLeaderCheckVar)); err == nil && d > 0 {
		tm.leaderCheck = d
		set = append(set, testLeaderCheckVar)
	}
	return tm, set
}

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
