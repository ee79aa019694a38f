// Package dedupetest checks an implementation of bot.Seen, the envelopes
// seen, against the semantics its documentation gives. It is for tests
// only.
package dedupetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/internal/testutil"
)

// Run runs the suite, each subtest against envelopes seen of its own,
// remembered for bot.SeenTTL.
//
// fresh makes them: it is called once by each subtest, with the subtest's
// t, and must make an empty memory no other subtest sees. It returns open,
// which each subtest calls once: what one handle saw is all the suite
// asks about, as the embedded store keeps the envelopes in the memory of
// the one process that serves Slack (RunShared asks it of two). open
// reports a failure with t.Fatal and registers with t.Cleanup the closing
// of what it opens.
//
// The subtests, which run in parallel with each other:
//
//	FirstTime/once          the first sighting is first, the next are not; IDs are bytes
//	FirstTime/concurrent    of 20 goroutines asking about one envelope, one is first
//	FirstTime/burst         300 envelopes asked about at once are each first once
//	FirstTime/TTL           forgotten once more than the TTL has passed, to the nanosecond, and remembered anew from then
//	FirstTime/expired       of many envelopes, those past the TTL are forgotten and the others kept
//	Ack/kept                none before it is kept, an empty one as empty, none for an envelope not seen, none once seen anew
//	Context/cancelled       with a cancelled context every method fails and FirstTime records nothing
func Run(t *testing.T, fresh func(t *testing.T) (open func() bot.Seen)) {
	cases.Run(t, fresh)
}

// RunShared runs the suite against two handles on each subtest's memory,
// as two replicas sharing it hold them: each envelope seen is asked about
// of the two in turn, an ack is kept through one and read through the
// other. open is as Run's, called twice by each subtest.
func RunShared(t *testing.T, fresh func(t *testing.T) (open func() bot.Seen)) {
	cases.Run(t, func(t *testing.T) func() bot.Seen {
		open := fresh(t)
		return func() bot.Seen { return &replicas{a: open(), b: open()} }
	})
}

// replicas is two handles on one memory, one Seen.
type replicas struct {
	a, b bot.Seen
	n    atomic.Uint32
}

func (r *replicas) FirstTime(ctx context.Context, id string, now time.Time) (bool, error) {
	if r.n.Add(1)%2 == 0 {
		return r.a.FirstTime(ctx, id, now)
	}
	return r.b.FirstTime(ctx, id, now)
}

func (r *replicas) KeepAck(ctx context.Context, id string, ack []byte) error {
	return r.a.KeepAck(ctx, id, ack)
}

func (r *replicas) Ack(ctx context.Context, id string) ([]byte, bool, error) {
	return r.b.Ack(ctx, id)
}

var cases = testutil.Suite[bot.Seen]{
	{"FirstTime/once", once},
	{"FirstTime/concurrent", concurrent},
	{"FirstTime/burst", burst},
	{"FirstTime/TTL", ttl},
	{"FirstTime/expired", expired},
	{"Ack/kept", kept},
	{"Context/cancelled", cancelled},
}

// base is the time the fixtures are built around.
var base = time.Date(2026, 11, 24, 9, 0, 0, 123456789, time.UTC)

func first(t *testing.T, s bot.Seen, id string, at time.Time) bool {
	t.Helper()
	ok, err := s.FirstTime(t.Context(), id, at)
	if err != nil {
		t.Fatalf("FirstTime(%q): %v", id, err)
	}
	return ok
}

func once(t *testing.T, open func() bot.Seen) {
	s := open()
	for i, want := range []struct {
		id    string
		first bool
	}{
		{"E1", true}, {"E1", false}, {"E2", true}, {"E1", false},
		{"e1", true},        // IDs are compared as bytes
		{"E\x00\xff", true}, // any Go string
		{"E\x00\xff", false},
		{"E\x00", true},
	} {
		if got := first(t, s, want.id, base.Add(time.Duration(i)*time.Second)); got != want.first {
			t.Errorf("%d: FirstTime(%q) = %v, want %v", i, want.id, got, want.first)
		}
	}
}

func concurrent(t *testing.T, open func() bot.Seen) {
	s := open()
	for round := range 10 {
		id := fmt.Sprintf("E%d", round)
		var firsts, fails atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := range 20 {
			wg.Go(func() {
				<-start
				ok, err := s.FirstTime(t.Context(), id, base.Add(time.Duration(g)*time.Millisecond))
				if err != nil {
					t.Error(err)
					fails.Add(1)
				}
				if ok {
					firsts.Add(1)
				}
			})
		}
		close(start)
		wg.Wait()
		if firsts.Load() != 1 || fails.Load() != 0 {
			t.Errorf("%s: %d first, %d failed, of 20; want 1 and 0", id, firsts.Load(), fails.Load())
		}
	}
}

func burst(t *testing.T, open func() bot.Seen) {
	s := open()
	for round, want := range []bool{true, false} {
		var wrong atomic.Int32
		var wg sync.WaitGroup
		for i := range 300 {
			wg.Go(func() {
				ok, err := s.FirstTime(t.Context(), fmt.Sprintf("E%d", i), base.Add(time.Duration(round)*time.Second))
				if err != nil || ok != want {
					wrong.Add(1)
				}
			})
		}
		wg.Wait()
		if n := wrong.Load(); n != 0 {
			t.Errorf("round %d: %d of 300 answers not %v", round, n, want)
		}
	}
}

func ttl(t *testing.T, open func() bot.Seen) {
	s := open()
	if !first(t, s, "E1", base) {
		t.Fatal("E1 seen before it came")
	}
	if first(t, s, "E1", base.Add(bot.SeenTTL)) {
		t.Error("E1 forgotten at the TTL exactly")
	}
	if !first(t, s, "E1", base.Add(bot.SeenTTL+time.Nanosecond)) {
		t.Error("E1 still seen a nanosecond after the TTL")
	}
	// Seen again, at base + TTL + 1 ns: remembered from there.
	if first(t, s, "E1", base.Add(2*bot.SeenTTL)) {
		t.Error("E1, seen again, forgotten within the TTL of then")
	}
}

func expired(t *testing.T, open func() bot.Seen) {
	s := open()
	for i := range 50 {
		first(t, s, fmt.Sprintf("old%d", i), base)
		first(t, s, fmt.Sprintf("recent%d", i), base.Add(bot.SeenTTL/2))
	}
	// Later than the TTL after the old ones, and by more than a minute,
	// so that a memory that forgets at intervals has done so.
	later := base.Add(bot.SeenTTL + 2*time.Minute)
	first(t, s, "new", later)
	for i := range 50 {
		if first(t, s, fmt.Sprintf("recent%d", i), later) {
			t.Errorf("recent%d forgotten within the TTL", i)
		}
		if !first(t, s, fmt.Sprintf("old%d", i), later) {
			t.Errorf("old%d still seen after the TTL", i)
		}
	}
	if first(t, s, "new", later) {
		t.Error("new forgotten at once")
	}
}

func kept(t *testing.T, open func() bot.Seen) {
	s := open()
	ack := func(id string) string {
		t.Helper()
		got, ok, err := s.Ack(t.Context(), id)
		switch {
		case err != nil:
			t.Fatal(err)
		case !ok && got != nil:
			t.Errorf("Ack(%q) = %q, not kept", id, got)
		case !ok:
			return "none"
		}
		return fmt.Sprintf("%q", got)
	}
	for _, id := range []string{"E1", "E2"} {
		if !first(t, s, id, base) {
			t.Fatalf("%s not first", id)
		}
	}
	if got := ack("E1"); got != "none" {
		t.Errorf("before it is kept: %s", got)
	}
	view := []byte(`{"response_action":"update","view":{"type":"modal"}}`)
	for id, a := range map[string][]byte{"E1": view, "E2": nil, "unseen": view} {
		if err := s.KeepAck(t.Context(), id, a); err != nil {
			t.Fatal(err)
		}
	}
	view[0] = 'X' // the caller's bytes are its own again
	for id, want := range map[string]string{"E1": `"{\"response_action\":\"update\",\"view\":{\"type\":\"modal\"}}"`, "E2": `""`, "unseen": "none"} {
		if got := ack(id); got != want {
			t.Errorf("Ack(%s) = %s, want %s", id, got, want)
		}
	}
	if !first(t, s, "E1", base.Add(bot.SeenTTL+time.Nanosecond)) {
		t.Fatal("E1 after the TTL: not first")
	}
	if got := ack("E1"); got != "none" {
		t.Errorf("E1 seen anew: the old ack %s", got)
	}
}

func cancelled(t *testing.T, open func() bot.Seen) {
	s := open()
	first(t, s, "E1", base)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.FirstTime(ctx, "late", base); !errors.Is(err, context.Canceled) {
		t.Errorf("FirstTime with a cancelled context: %v", err)
	}
	if err := s.KeepAck(ctx, "E1", []byte(`{}`)); !errors.Is(err, context.Canceled) {
		t.Errorf("KeepAck with a cancelled context: %v", err)
	}
	if _, _, err := s.Ack(ctx, "E1"); !errors.Is(err, context.Canceled) {
		t.Errorf("Ack with a cancelled context: %v", err)
	}
	if !first(t, s, "late", base) {
		t.Error("after a cancelled question: not first")
	}
}
