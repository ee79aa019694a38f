package pg_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/store/dedupetest"
	"github.com/bookbot/bookbot/store/pg"
)

var _ bot.Seen = (*pg.Dedupe)(nil)

// Replicas sharing the database see each other's envelopes and acks: the
// suite TestStore runs on one handle, run on two.
func TestDedupeReplicas(t *testing.T) {
	t.Parallel()
	dedupetest.RunShared(t, func(t *testing.T) func() bot.Seen {
		u := migrated(t)
		return func() bot.Seen { return open(t, u).Dedupe(bot.SeenTTL) }
	})
}

// Expired rows are deleted, all at once, about once a minute per handle.
func TestDedupeExpiredRowsGo(t *testing.T) {
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
	for i := range 50 {
		first(a, fmt.Sprintf("old%d", i), t0)
	}
	later := t0.Add(3 * ttl)
	first(b, "new", later) // b's first call: prunes
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
