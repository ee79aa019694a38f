// Package testutil holds the small helpers tests of every package would
// otherwise copy: waiting for a condition, a zone, a pointer, a buffer the
// code under test writes to while the test reads it. Only tests import it.
//
// A test that needs time to pass moves a clock (internal/fakeclock); the
// waits here are for other goroutines and processes to get somewhere, and
// their bounds are for a broken test, not a guess at how long that takes.
package testutil

import (
	"bytes"
	"context"
	"flag"
	"strconv"
	"sync"
	"testing"
	"time"
	_ "time/tzdata" // Zone needs no zoneinfo database on the machine
)

// pollEvery is how often Until and WaitFor look at their condition.
const pollEvery = 5 * time.Millisecond

// Until looks at cond every few milliseconds until it holds, and fails the
// test, saying what it waited for, when ctx ends first.
func Until(ctx context.Context, t testing.TB, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, context.Cause(ctx))
		case <-tick.C:
		}
	}
}

// WaitFor is Until bounded by within, and by the test's end.
func WaitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeoutCause(t.Context(), within, timeout(within))
	defer cancel()
	Until(ctx, t, what, cond)
}

// timeout is the cause WaitFor gives when within has passed.
type timeout time.Duration

func (d timeout) Error() string { return "not within " + time.Duration(d).String() }

// Parallel has a package's tests run n at once, unless -test.parallel says
// how many. Call it from TestMain, before m.Run, where the tests wait on
// other processes or a server rather than on this machine's processors,
// whose number is the default.
func Parallel(n int) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic(err)
		}
	}
}

// Zone loads the named zone from the tz database (the machine's, or the
// one built in), and panics when it cannot: a test that names a zone
// cannot run without it. It may initialise a package variable.
func Zone(name string) *time.Location {
	z, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return z
}

// Ptr returns a pointer to a copy of v.
func Ptr[T any](v T) *T { return &v }

// Buffer is a bytes.Buffer that goroutines of the code under test may
// write to (a logger's destination, say) while the test reads it. Its zero
// value is empty and ready to use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Suite is the cases of a conformance suite on a store S: each a name and
// a check given open, which returns a new handle on the case's own store
// each time it is called, as another process or replica would get one.
type Suite[S any] []struct {
	Name string
	Run  func(t *testing.T, open func() S)
}

// Run runs every case in parallel, each against a store of its own that
// fresh makes (called with the case's t) and returns open for.
func (s Suite[S]) Run(t *testing.T, fresh func(t *testing.T) (open func() S)) {
	for _, c := range s {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			c.Run(t, fresh(t))
		})
	}
}
