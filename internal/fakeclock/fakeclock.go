// Package fakeclock is the clock tests move by hand: it stands still until
// a test calls Advance or Set, so a test never sleeps to let time pass.
// Pass its Now wherever the code under test takes a func() time.Time.
// Only tests import it.
package fakeclock

import (
	"sync"
	"time"
)

// Clock is a clock that moves only when told. It is safe for concurrent
// use: the code under test may read it from its goroutines while the test
// moves it.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a Clock stopped at t.
func New(t time.Time) *Clock { return &Clock{now: t} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (back, if d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}
