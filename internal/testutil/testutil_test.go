package testutil

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fatalTB records Fatalf instead of failing the test that runs it.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls fn on a goroutine of its own, as a test does, and returns what
// it failed with, if anything.
func run(t *testing.T, fn func(tb testing.TB)) string {
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f.msg
}

func TestUntilHolds(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	go func() {
		for range 3 {
			n.Add(1)
		}
	}()
	Until(t.Context(), t, "three", func() bool { return n.Load() == 3 })
}

func TestUntilSaysWhatItWaitedFor(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	msg := run(t, func(tb testing.TB) { Until(ctx, tb, "the moon", func() bool { return false }) })
	if msg != "waiting for the moon: context canceled" {
		t.Errorf("Until failed with %q", msg)
	}
}

func TestWaitForSaysHowLong(t *testing.T) {
	t.Parallel()
	msg := run(t, func(tb testing.TB) { WaitFor(tb, time.Millisecond, "the moon", func() bool { return false }) })
	if msg != "waiting for the moon: not within 1ms" {
		t.Errorf("WaitFor failed with %q", msg)
	}
}

func TestZone(t *testing.T) {
	t.Parallel()
	if z := Zone("Europe/Berlin"); z.String() != "Europe/Berlin" {
		t.Errorf("Zone = %v", z)
	}
	defer func() {
		if recover() == nil {
			t.Error("Zone of no zone did not panic")
		}
	}()
	Zone("Nowhere/Atlantis")
}

func TestPtr(t *testing.T) {
	t.Parallel()
	s := "a"
	p := Ptr(s)
	s = "b"
	if *p != "a" {
		t.Errorf("*Ptr = %q, want a copy of the value", *p)
	}
}

// For -race: writers and a reader at once.
func TestBuffer(t *testing.T) {
	t.Parallel()
	var b Buffer
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				_, _ = b.Write([]byte("x"))
				_ = b.String()
			}
		})
	}
	wg.Wait()
	if got := b.String(); got != strings.Repeat("x", 400) {
		t.Errorf("%d bytes, want 400", len(got))
	}
}
