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
func (db *DB) Notices() notices.Store { return noticeStore{db.pool} }

type noticeStore struct{ pool *pgxpool.Pool }

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

// keyArgs are a key's identity, $1 to $6 of keyMatch: End is not part of
// it, and times count as instants.
func keyArgs(k notices.Key) []any {
	startS, startNS := unix(k.Start)
	sinceS, sinceNS := unix(k.Since)
	return []any{[]byte(k.BookingID), string(k.Kind), startS, startNS, sinceS, sinceNS}
}

const keyMatch = `booking_id = $1 AND kind = $2 AND start_s = $3 AND start_ns = $4 AND since_s = $5 AND since_ns = $6`

// Claim inserts the claim unless the key holds one; the primary key makes
// concurrent claims of one key, from any replica, yield one true.
func (s noticeStore) Claim(ctx context.Context, k notices.Key, at time.Time) (bool, error) {
	endS, endNS := unix(k.End)
	atS, atNS := unix(at)
	tag, err := s.pool.Exec(ctx, `INSERT INTO bookbot_notice_claims
		(booking_id, kind, start_s, start_ns, since_s, since_ns, end_s, end_ns, claimed_s, claimed_ns)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
		append(keyArgs(k), endS, endNS, atS, atNS)...)
	if err != nil {
		return false, noticesErr("claim", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Posted records m on k's claim, failing when there is none, and with root
// makes m the booking's thread. The thread keeps the latest End it was
// posted under, for Prune.
func (s noticeStore) Posted(ctx context.Context, k notices.Key, m notices.Message, root bool) error {
	endS, endNS := unix(k.End)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE bookbot_notice_claims SET channel = $7, ts = $8 WHERE `+keyMatch,
			append(keyArgs(k), m.Channel, m.TS)...)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("no claim of the %s", k)
		}
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
		_, err = tx.Exec(ctx, `UPDATE bookbot_notice_threads SET end_s = $2, end_ns = $3
			WHERE booking_id = $1 AND (end_s, end_ns) < ($2::bigint, $3::integer)`, id, endS, endNS)
		return err
	})
	if err != nil {
		return noticesErr("posted", err)
	}
	return nil
}

// Release deletes k's claim unless a message was recorded on it, and fails
// when one was: the check and the delete are one statement.
func (s noticeStore) Release(ctx context.Context, k notices.Key) error {
	var m notices.Message
	err := s.pool.QueryRow(ctx, `WITH released AS (
			DELETE FROM bookbot_notice_claims WHERE `+keyMatch+` AND channel IS NULL
		)
		SELECT channel, ts FROM bookbot_notice_claims WHERE `+keyMatch+` AND channel IS NOT NULL`,
		keyArgs(k)...).Scan(&m.Channel, &m.TS)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return noticesErr("release", err)
	}
	return fmt.Errorf("notices store (postgres): the %s was posted (%s %s): its claim stays", k, m.Channel, m.TS)
}

// Unsettled returns when k was claimed, if no message is recorded on it.
func (s noticeStore) Unsettled(ctx context.Context, k notices.Key) (time.Time, bool, error) {
	var sec int64
	var nsec int32
	err := s.pool.QueryRow(ctx, `SELECT claimed_s, claimed_ns FROM bookbot_notice_claims WHERE `+keyMatch+` AND channel IS NULL`,
		keyArgs(k)...).Scan(&sec, &nsec)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return time.Time{}, false, nil
	case err != nil:
		return time.Time{}, false, noticesErr("unsettled", err)
	}
	return fromUnix(sec, nsec), true, nil
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

// Prune deletes the claims and thread of every booking none of whose ends
// (over its claims and thread) is at or after cutoff. Both deletes see the
// same snapshot, so they agree on which bookings ended.
func (s noticeStore) Prune(ctx context.Context, cutoff time.Time) error {
	cutS, cutNS := unix(cutoff)
	_, err := s.pool.Exec(ctx, `WITH kept AS (
			SELECT booking_id FROM bookbot_notice_claims WHERE (end_s, end_ns) >= ($1::bigint, $2::integer)
			UNION
			SELECT booking_id FROM bookbot_notice_threads WHERE (end_s, end_ns) >= ($1::bigint, $2::integer)
		), claims AS (
			DELETE FROM bookbot_notice_claims WHERE booking_id NOT IN (SELECT booking_id FROM kept)
		)
		DELETE FROM bookbot_notice_threads WHERE booking_id NOT IN (SELECT booking_id FROM kept)`, cutS, cutNS)
	if err != nil {
		return noticesErr("prune", err)
	}
	return nil
}
