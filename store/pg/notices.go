package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookbot/bookbot/notices"
)

// Notices is the notices store in the database.
func (db *DB) Notices() notices.Store {
	return noticeStore{Claims: notices.Claims{Box: db.Outbox()}, pool: db.pool}
}

// noticeStore keeps the snapshot and the threads in tables of their own,
// the claims in the outbox.
type noticeStore struct {
	notices.Claims
	pool *pgxpool.Pool
}

func noticesErr(what string, err error) error {
	return fmt.Errorf("notices store (postgres): %s: %w", what, err)
}

func (s noticeStore) Last(ctx context.Context) (notices.Snapshot, bool, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, "SELECT snapshot FROM bookbot_notices_last").Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return notices.Snapshot{}, false, nil
	}
	if err != nil {
		return notices.Snapshot{}, false, noticesErr("last snapshot", err)
	}
	snap, err := notices.DecodeSnapshot(v)
	if err != nil {
		return notices.Snapshot{}, false, noticesErr("last snapshot", err)
	}
	return snap, true, nil
}

func (s noticeStore) SaveLast(ctx context.Context, snap notices.Snapshot) error {
	v, err := notices.EncodeSnapshot(snap)
	if err != nil {
		return noticesErr("snapshot", err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO bookbot_notices_last (snapshot) VALUES ($1)
		ON CONFLICT (id) DO UPDATE SET snapshot = excluded.snapshot`, v)
	if err != nil {
		return noticesErr("save snapshot", err)
	}
	return nil
}

// Posted records m on k's claim, failing when there is none, and with root
// makes m the booking's thread. The thread keeps the latest End it was
// posted under, for Prune.
func (s noticeStore) Posted(ctx context.Context, k notices.Key, m notices.Message, root bool) error {
	if err := s.PostedClaim(ctx, k, m); err != nil {
		return err
	}
	endS, endNS := unix(k.End)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		id := []byte(k.BookingID)
		if root {
			_, err := tx.Exec(ctx, `INSERT INTO bookbot_notice_threads (booking_id, channel, ts, end_s, end_ns)
				VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (booking_id) DO UPDATE SET channel = excluded.channel, ts = excluded.ts`,
				id, m.Channel, m.TS, endS, endNS)
			if err != nil {
				return err
			}
		}
		_, err := tx.Exec(ctx, `UPDATE bookbot_notice_threads SET end_s = $2, end_ns = $3
			WHERE booking_id = $1 AND (end_s, end_ns) < ($2::bigint, $3::integer)`, id, endS, endNS)
		return err
	})
	if err != nil {
		return noticesErr("posted", err)
	}
	return nil
}

func (s noticeStore) Thread(ctx context.Context, bookingID string) (notices.Message, bool, error) {
	var m notices.Message
	err := s.pool.QueryRow(ctx, "SELECT channel, ts FROM bookbot_notice_threads WHERE booking_id = $1",
		[]byte(bookingID)).Scan(&m.Channel, &m.TS)
	if errors.Is(err, pgx.ErrNoRows) {
		return notices.Message{}, false, nil
	}
	if err != nil {
		return notices.Message{}, false, noticesErr("thread", err)
	}
	return m, true, nil
}

// Prune deletes the claims of keys that ended before cutoff, and the
// thread of every booking whose latest end posted in it is before cutoff.
func (s noticeStore) Prune(ctx context.Context, cutoff time.Time) error {
	if err := s.PruneClaims(ctx, cutoff); err != nil {
		return err
	}
	cutS, cutNS := unix(cutoff)
	_, err := s.pool.Exec(ctx, `DELETE FROM bookbot_notice_threads WHERE (end_s, end_ns) < ($1::bigint, $2::integer)`, cutS, cutNS)
	if err != nil {
		return noticesErr("prune", err)
	}
	return nil
}
