package pg_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/bookbot/bookbot/internal/testutil"
	"github.com/bookbot/bookbot/store/pg"
	"github.com/bookbot/bookbot/store/pg/pgtest"
)

// Work under one name never runs on two replicas at once.
func TestWithLock(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	dbs := []*pg.DB{open(t, url), open(t, url)}
	var inside, most, runs atomic.Int32
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			err := dbs[i%2].WithLock(t.Context(), "reviews", func(context.Context) error {
				n := inside.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				runs.Add(1)
				inside.Add(-1)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 || runs.Load() != 20 {
		t.Errorf("at most %d at once over %d runs, want 1 over 20", most.Load(), runs.Load())
	}
	// Runs that short rarely meet: so while one replica holds the lock,
	// another's waits for it in the database, and enters only after.
	admin := conn(t, url)
	entered := make(chan struct{})
	second := make(chan error, 1)
	if err := dbs[0].WithLock(t.Context(), "reviews", func(ctx context.Context) error {
		go func() {
			second <- dbs[1].WithLock(ctx, "reviews", func(context.Context) error { close(entered); return nil })
		}()
		testutil.WaitFor(t, 10*time.Second, "the second replica to wait for the lock", func() bool {
			select {
			case <-entered:
				t.Fatal("a second replica entered while the first held the lock")
			default:
			}
			return lockWaiters(t, admin) > 0
		})
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Error(err)
	}
	<-entered
	// Other names do not wait.
	if err := dbs[0].WithLock(t.Context(), "reviews", func(ctx context.Context) error {
		return dbs[1].WithLock(ctx, "other", func(context.Context) error { return nil })
	}); err != nil {
		t.Error(err)
	}
}

// lockWaiters counts the sessions of c's database waiting for an advisory
// lock; other tests' databases are not counted.
func lockWaiters(t *testing.T, c *pgx.Conn) int {
	t.Helper()
	var n int
	err := c.QueryRow(t.Context(), `SELECT count(*) FROM pg_locks k JOIN pg_database d ON d.oid = k.database
		WHERE k.locktype = 'advisory' AND NOT k.granted AND d.datname = current_database()`).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
