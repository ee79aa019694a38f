package pgstore

import (
	"context"
	"fmt"
	"hash/fnv"
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
	conn, err := db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	defer conn.Release()
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	key := int32(h.Sum32())
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock($1::int4, $2::int4)", namedLockClass, key); err != nil {
		return fmt.Errorf("lock %s: %w", name, err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock($1::int4, $2::int4)", namedLockClass, key); err != nil {
			// A session that cannot unlock is not put back in the pool
			// holding the lock.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	return fn(ctx)
}
