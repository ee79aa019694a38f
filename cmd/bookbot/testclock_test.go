package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bookbot/bookbot/internal/testutil"
)

// The clock the end-to-end tests move: not moved without its file, moved by
// the duration the file holds once it is read again, and left where it was
// by a file that holds no duration.
func TestFileClock(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "clock")
	c := &fileClock{path: path}
	ahead := func() time.Duration { return time.Until(c.Now()).Round(time.Minute) }
	if got := ahead(); got != 0 {
		t.Errorf("without a file: %v ahead, want 0", got)
	}
	for _, tc := range []struct {
		text string
		want time.Duration
	}{
		{"90m\n", 90 * time.Minute},
		{"not a duration", 90 * time.Minute},
		{"1m", time.Minute},
	} {
		if err := os.WriteFile(path, []byte(tc.text), 0o600); err != nil {
			t.Fatal(err)
		}
		c.read = time.Time{} // as if fileReread had passed
		if got := ahead(); got != tc.want {
			t.Errorf("file %q: %v ahead, want %v", tc.text, got, tc.want)
		}
	}
}

// A wait on the clock the end-to-end tests move ends once the file moves
// the clock past its end, and when its context ends.
func TestFileClockSleep(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "clock")
	c := &fileClock{path: path}
	done := make(chan error, 1)
	go func() { done <- c.Sleep(t.Context(), time.Hour) }()
	testutil.WaitFor(t, 10*time.Second, "the wait to read the clock", func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		return !c.read.IsZero()
	})
	if err := os.WriteFile(path, []byte("59m"), 0o600); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, "the clock to be read moved", func() bool { return time.Until(c.Now()) > 58*time.Minute })
	select {
	case err := <-done:
		t.Fatalf("a wait of an hour ended with the clock 59 minutes on: %v", err)
	default:
	}
	if err := os.WriteFile(path, []byte("61m"), 0o600); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("a wait of an hour, the clock moved past it: %v", err)
		}
	case <-time.After(10 * time.Second): // a broken Sleep's bound
		t.Fatal("a wait of an hour did not end with the clock moved past it")
	}

	ctx, cancel := context.WithCancel(t.Context())
	go func() { done <- c.Sleep(ctx, time.Hour) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("a wait whose context ended: %v, want context.Canceled", err)
	}
}

// The timing the end-to-end tests ask for: the machine's without the
// variables, their clock and leader check with them, each named for the
// warning the log gives.
func TestTestTiming(t *testing.T) {
	t.Parallel()
	tm, set := testTiming(func(string) string { return "" })
	if tm.now != nil || tm.sleep != nil || tm.leaderCheck != 0 || len(set) != 0 {
		t.Errorf("without the variables: %+v, %v set", tm, set)
	}
	env := map[string]string{testClockVar: filepath.Join(t.TempDir(), "clock"), testLeaderCheckVar: "250ms"}
	tm, set = testTiming(func(k string) string { return env[k] })
	if tm.now == nil || tm.sleep == nil || tm.leaderCheck != 250*time.Millisecond || len(set) != 2 {
		t.Errorf("with both: %+v, %v set", tm, set)
	}
	env[testLeaderCheckVar] = "soon"
	if tm, _ = testTiming(func(k string) string { return env[k] }); tm.leaderCheck != 0 {
		t.Errorf("a leader check that is no duration: %v", tm.leaderCheck)
	}
}
