package fakeclock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/fakeclock"
)

var start = time.Date(2026, 3, 23, 10, 7, 0, 0, time.UTC)

func TestMovesOnlyWhenTold(t *testing.T) {
	t.Parallel()
	c := fakeclock.New(start)
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now() = %v, want %v", got, start)
	}
	real := time.Now()
	for !time.Now().After(real) { // the machine's clock moves, in nanoseconds
	}
	if got := c.Now(); !got.Equal(start) {
		t.Fatalf("Now() after the machine's clock moved = %v, want %v", got, start)
	}

	c.Advance(90 * time.Second)
	if got, want := c.Now(), start.Add(90*time.Second); !got.Equal(want) {
		t.Errorf("after Advance: Now() = %v, want %v", got, want)
	}

	berlin := time.FixedZone("CET", 3600)
	later := time.Date(2026, 11, 24, 17, 0, 0, 0, berlin)
	c.Set(later)
	if got := c.Now(); got != later {
		t.Errorf("after Set: Now() = %v, want %v, zone and all", got, later)
	}
}

// TestConcurrentUse is for -race: readers and a writer at once.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	c := fakeclock.New(start)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_ = c.Now()
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			c.Advance(time.Second)
		}
	})
	wg.Wait()
	if got, want := c.Now(), start.Add(100*time.Second); !got.Equal(want) {
		t.Errorf("Now() = %v, want %v", got, want)
	}
}
