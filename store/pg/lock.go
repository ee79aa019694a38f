package pg

import (
	"context"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// namedLockClass sets WithLock's advisory locks apart from the leader's,
// the journal's and the migrations'.
const namedLockClass int32 = 0x6c6f636b // "lock"

// WithLock runs fn while holding the lock called name, which every
// replica's WithLock of that name waits for: work that reads what to do
// and records it done (the review reports) is then done once. The lock is
// the session's, on a connection held for fn; a replica that dies while
// holding it loses its session, and with it the lock.
func (db *DB) WithLock(ctx context.Context, name string, fn func(context.Context) error) error {
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	err := db.holding(ctx, "SELECT pg_advisory_lock($1::int4, $2::int4)", "SELECT pg_advisory_unlock($1::int4, $2::int4)",
		[]any{namedLockClass, int32(h.Sum32())}, func(*pgxpool.Conn) error { return fn(ctx) })
	if err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	return nil
}

// unlockTimeout bounds giving a session lock back.
const unlockTimeout = 5 * time.Second

// holding runs fn with a connection of its own, taken from the pool, whose
// session holds the advisory lock that the statement lock takes and unlock
// gives back, both with args. A session that cannot give it back is ended
// rather than put back in the pool holding it.
func (db *DB) holding(ctx context.Context, lock, unlock string, args []any, fn func(*pgxpool.Conn) error) error {
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, lock, args...); err != nil {
		return fmt.Errorf("lock: %w", err)
	}
	defer func() {
		// ctx may be done: unlock on a context of its own.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), unlockTimeout)
		defer cancel()
		if _, err := conn.Exec(uctx, unlock, args...); err != nil {
			_ = conn.Conn().Close(uctx)
		}
	}()
	return fn(conn)
}
