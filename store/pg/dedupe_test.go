package pg_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/store/pg"
)

var _ bot.Seen = (*pg.Dedupe)(nil)

// What one handle remembers is dedupetest's, which TestStore runs; these
// are what replicas sharing the database see of each other's envelopes,
// and the rows kept.

// Two replicas see an envelope: one of them first.
func TestDedupeTwoReplicas(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	a, b := open(t, u).Dedupe(bot.SeenTTL), open(t, u).Dedupe(bot.SeenTTL)
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	for i, want := range []struct {
		d     *pg.Dedupe
		id    string
		first bool
	}{
		{a, "E1", true}, {b, "E1", false}, {a, "E1", false},
		{b, "E2", true}, {a, "E2", false},
		{a, "e1", true},        // IDs are compared as bytes
		{b, "E\x00\xff", true}, // any Go string
		{a, "E\x00\xff", false},
	} {
		first, err := want.d.FirstTime(t.Context(), want.id, now.Add(time.Duration(i)*time.Second))
		if err != nil || first != want.first {
			t.Errorf("%d: FirstTime(%q) = %v, %v; want %v", i, want.id, first, err, want.first)
		}
	}
}

// Of 20 concurrent calls for one envelope, over two replicas, one is first,
// whatever their clocks say within the TTL.
func TestDedupeConcurrent(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	replicas := []*pg.Dedupe{open(t, u).Dedupe(bot.SeenTTL), open(t, u).Dedupe(bot.SeenTTL)}
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	for round := range 10 {
		id := fmt.Sprintf("E%d", round)
		var firsts, fails atomic.Int32
		var wg sync.WaitGroup
		start := make(chan struct{})
		for g := range 20 {
			wg.Go(func() {
				<-start
				first, err := replicas[g%2].FirstTime(t.Context(), id, now.Add(time.Duration(g)*time.Millisecond))
				if err != nil {
					t.Error(err)
					fails.Add(1)
				}
				if first {
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

// An envelope is forgotten once more than the TTL has passed, to the
// nanosecond, as the bot's memory forgets it; expired rows are deleted.
func TestDedupeTTL(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	const ttl = 15 * time.Minute
	a, b := open(t, u).Dedupe(ttl), open(t, u).Dedupe(ttl)
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 123456789, time.UTC)
	first := func(d *pg.Dedupe, id string, at time.Time) bool {
		t.Helper()
		ok, err := d.FirstTime(t.Context(), id, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !first(a, "E1", t0) {
		t.Fatal("E1 seen before it came")
	}
	if first(b, "E1", t0.Add(ttl)) {
		t.Error("E1 forgotten at the TTL exactly")
	}
	if !first(b, "E1", t0.Add(ttl+time.Nanosecond)) {
		t.Error("E1 still seen a nanosecond after the TTL")
	}
	// Seen again, at t0 + ttl + 1 ns: remembered from there.
	if first(a, "E1", t0.Add(2*ttl)) {
		t.Error("E1, seen again, forgotten within the TTL of then")
	}

	// Expired rows go, all at once, about once a minute per handle.
	for i := range 50 {
		first(a, fmt.Sprintf("old%d", i), t0)
	}
	later := t0.Add(3 * ttl)
	first(b, "new", later) // b's first call: prunes
	// E1 (last seen at t0 + ttl + 1 ns) and the fifty went; "new" stays.
	var rows int
	if err := conn(t, u).QueryRow(t.Context(), "SELECT count(*) FROM bookbot_envelopes_seen").Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Errorf("after the prune: %d rows; want only the new one", rows)
	}
	for i := range 50 {
		if !first(a, fmt.Sprintf("old%d", i), later) {
			t.Errorf("old%d still seen after the TTL", i)
		}
	}
}

// The ack one replica keeps for an envelope is the other's to read, as
// kept: none before it is kept, an empty one as empty, none for an
// envelope not seen, and none once the envelope is seen anew after the TTL.
func TestDedupeAck(t *testing.T) {
	t.Parallel()
	u := migrated(t)
	const ttl = 15 * time.Minute
	a, b := open(t, u).Dedupe(ttl), open(t, u).Dedupe(ttl)
	t0 := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	ack := func(id string) string {
		t.Helper()
		got, kept, err := b.Ack(t.Context(), id)
		switch {
		case err != nil:
			t.Fatal(err)
		case !kept && got != nil:
			t.Errorf("Ack(%q) = %q, not kept", id, got)
		case !kept:
			return "none"
		}
		return fmt.Sprintf("%q", got)
	}
	for _, id := range []string{"E1", "E2"} {
		if first, err := a.FirstTime(t.Context(), id, t0); err != nil || !first {
			t.Fatalf("FirstTime(%s) = %v, %v", id, first, err)
		}
	}
	if got := ack("E1"); got != "none" {
		t.Errorf("before it is kept: %s", got)
	}
	view := []byte(`{"response_action":"update","view":{"type":"modal"}}`)
	for id, kept := range map[string][]byte{"E1": view, "E2": nil, "unseen": view} {
		if err := a.KeepAck(t.Context(), id, kept); err != nil {
			t.Fatal(err)
		}
	}
	for id, want := range map[string]string{"E1": fmt.Sprintf("%q", view), "E2": `""`, "unseen": "none"} {
		if got := ack(id); got != want {
			t.Errorf("Ack(%s) = %s, want %s", id, got, want)
		}
	}
	if first, err := b.FirstTime(t.Context(), "E1", t0.Add(ttl+time.Nanosecond)); err != nil || !first {
		t.Fatalf("E1 after the TTL: %v, %v; want first", first, err)
	}
	if got := ack("E1"); got != "none" {
		t.Errorf("E1 seen anew: the old ack %s", got)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, _, err := b.Ack(ctx, "E2"); !errors.Is(err, context.Canceled) {
		t.Errorf("Ack with a cancelled context: %v", err)
	}
}

// BenchmarkDedupeFirstTime is one envelope's check: one round trip.
func BenchmarkDedupeFirstTime(b *testing.B) {
	d := open(b, migrated(b)).Dedupe(bot.SeenTTL)
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	i := 0
	for b.Loop() {
		i++
		if first, err := d.FirstTime(b.Context(), fmt.Sprintf("E%d", i), now); err != nil || !first {
			b.Fatal(first, err)
		}
	}
}
