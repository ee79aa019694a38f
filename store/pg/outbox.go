package pg

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookbot/bookbot/outbox"
)

// Outbox is the record of every message posted exactly once
// (outbox.Store) in the database, shared by every replica on it: the table
// bookbot_outbox (migrations/0009_outbox.sql).
//
// A replica that dies between claiming a key and recording its post
// leaves the claim, a row with posted false, in the table. No Claim takes
// it over: every later Claim of the key, by any replica, returns false;
// the poster looks in Slack to settle it, takes it over (Takeover) once
// it is stale, or a person deletes the row (which is what Release does) to
// have it posted again.
func (db *DB) Outbox() outbox.Store {
	return &outboxStore{pool: db.pool, who: outbox.Claimant()}
}

type outboxStore struct {
	pool *pgxpool.Pool
	who  string // host and process, for claimant
}

// outboxUndoTimeout bounds undoing a claim whose outcome is unknown.
const outboxUndoTimeout = 10 * time.Second

func outboxErr(what, key string, err error) error {
	return fmt.Errorf("outbox (postgres): %s %q: %w", what, key, err)
}

// Claim inserts the claim unless the key holds one; the primary key makes
// one of concurrent claims, from any replica, win.
func (o *outboxStore) Claim(ctx context.Context, key string, at, keep time.Time) (bool, error) {
	if err := outbox.CheckKey(key); err != nil {
		return false, err
	}
	token := make([]byte, 8)
	_, _ = rand.Read(token) // never fails
	claimant := o.who + " claim " + hex.EncodeToString(token)
	atS, atNS := unix(at)
	keepS, keepNS := unix(keep)
	tag, err := o.pool.Exec(ctx, `INSERT INTO bookbot_outbox (key, claimed_s, claimed_ns, keep_s, keep_ns, claimant)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING`, []byte(key), atS, atNS, keepS, keepNS, claimant)
	if err != nil {
		// The insert may have been committed all the same (the answer was
		// lost): undo this claim, and only this one, so the key is not
		// blocked by a claim nobody owns.
		uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), outboxUndoTimeout)
		defer cancel()
		_, uerr := o.pool.Exec(uctx, `DELETE FROM bookbot_outbox WHERE key = $1 AND claimant = $2 AND NOT posted`,
			[]byte(key), claimant)
		if uerr != nil {
			uerr = fmt.Errorf("undoing claim %s failed too; if it was recorded, it stays until a look in Slack settles it: %w", claimant, uerr)
		}
		return false, outboxErr("claim", key, errors.Join(err, uerr))
	}
	return tag.RowsAffected() == 1, nil
}

// Posted records p on key's claim, failing when there is none.
func (o *outboxStore) Posted(ctx context.Context, key string, p outbox.Post) error {
	atS, atNS := unix(p.At)
	var detail []byte
	if len(p.Detail) > 0 {
		detail = p.Detail
	}
	tag, err := o.pool.Exec(ctx, `UPDATE bookbot_outbox SET posted = true, at_s = $2, at_ns = $3, channel = $4, ts = $5, detail = $6
		WHERE key = $1`, []byte(key), atS, atNS, p.Channel, p.TS, detail)
	if err != nil {
		return outboxErr("record", key, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("outbox (postgres): %q holds no claim", key)
	}
	return nil
}

// Release deletes key's claim unless a post was recorded on it, and fails
// when one was: the check and the delete are one statement.
func (o *outboxStore) Release(ctx context.Context, key string) error {
	var channel, ts string
	err := o.pool.QueryRow(ctx, `WITH released AS (
			DELETE FROM bookbot_outbox WHERE key = $1 AND NOT posted
		)
		SELECT coalesce(channel, ''), coalesce(ts, '') FROM bookbot_outbox WHERE key = $1 AND posted`,
		[]byte(key)).Scan(&channel, &ts)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return outboxErr("release", key, err)
	}
	return fmt.Errorf("outbox (postgres): %q was posted (%s %s) and cannot be released", key, channel, ts)
}

// Takeover re-claims key in one conditional update: only the unposted
// row claimed at staleAt changes, so one of concurrent takeovers wins.
func (o *outboxStore) Takeover(ctx context.Context, key string, staleAt, at time.Time) (bool, error) {
	staleS, staleNS := unix(staleAt)
	atS, atNS := unix(at)
	tag, err := o.pool.Exec(ctx, `UPDATE bookbot_outbox SET claimed_s = $4, claimed_ns = $5, claimant = $6
		WHERE key = $1 AND NOT posted AND claimed_s = $2 AND claimed_ns = $3`,
		[]byte(key), staleS, staleNS, atS, atNS, o.who)
	if err != nil {
		return false, outboxErr("take over", key, err)
	}
	return tag.RowsAffected() == 1, nil
}

// Lookup returns key's record.
func (o *outboxStore) Lookup(ctx context.Context, key string) (outbox.Record, bool, error) {
	var (
		claimedS, keepS   int64
		claimedNS, keepNS int32
		atS               *int64
		atNS              *int32
		claimant          string
		posted            bool
		channel, ts       *string
		detail            []byte
	)
	err := o.pool.QueryRow(ctx, `SELECT claimed_s, claimed_ns, keep_s, keep_ns, claimant, posted, at_s, at_ns, channel, ts, detail
		FROM bookbot_outbox WHERE key = $1`, []byte(key)).
		Scan(&claimedS, &claimedNS, &keepS, &keepNS, &claimant, &posted, &atS, &atNS, &channel, &ts, &detail)
	if errors.Is(err, pgx.ErrNoRows) {
		return outbox.Record{}, false, nil
	}
	if err != nil {
		return outbox.Record{}, false, outboxErr("look up", key, err)
	}
	r := outbox.Record{ClaimedAt: fromUnix(claimedS, claimedNS), Keep: fromUnix(keepS, keepNS), Claimant: claimant}
	if posted {
		p := &outbox.Post{Detail: detail}
		if at, ok := fromNullUnix(atS, atNS); ok {
			p.At = at
		}
		if channel != nil {
			p.Channel = *channel
		}
		if ts != nil {
			p.TS = *ts
		}
		r.Posted = p
	}
	return r, true, nil
}

// Prune deletes the rows under prefix whose keep time is before cutoff.
func (o *outboxStore) Prune(ctx context.Context, prefix string, cutoff time.Time) error {
	cutS, cutNS := unix(cutoff)
	_, err := o.pool.Exec(ctx, `DELETE FROM bookbot_outbox
		WHERE substring(key FROM 1 FOR octet_length($1::bytea)) = $1::bytea
		AND (keep_s, keep_ns) < ($2::bigint, $3::integer)`, []byte(prefix), cutS, cutNS)
	if err != nil {
		return outboxErr("prune", prefix, err)
	}
	return nil
}
