package pg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/bookbot/bookbot/booking"
)

// pruneMargin is how much longer than the hour attempts are kept: a
// replica whose clock is behind the one that prunes still counts them.
const pruneMargin = 5 * time.Minute

// Limiter returns the limiter in front of booking creates that every
// replica using this database shares (booking.Limiter's semantics): the
// attempts of all of them count against limits, and a hold after a 429 any
// of them met holds all of them back, of every create or of one event
// type. limits are this replica's: replicas configured alike agree.
//
// Each call is a transaction that first locks the one row of
// bookbot_guard, so the check of the attempts and the insert of one are a
// single step for every replica: no two replicas can both take the last
// place in a window.
//
// Time is now's, the replica's clock, not the database's, and it is read
// once the row is locked. Replicas' clocks must agree (NTP keeps them
// within milliseconds): one that is ahead records attempts and holds that
// others see as later than they were, which only holds them back longer;
// one that is behind sees the others' attempts as older than they are, so
// it may let an attempt through up to its lag early, and the API's own
// limit may then answer 429. Attempts are
// kept pruneMargin past the hour, so a replica up to that far behind the
// one that prunes still counts them.
func (db *DB) Limiter(limits booking.Limits, now func() time.Time) booking.Limiter {
	if now == nil {
		now = time.Now
	}
	return &limiter{pool: db.pool, limits: limits, now: now}
}

type limiter struct {
	pool   *pgxpool.Pool
	limits booking.Limits
	now    func() time.Time
}

func limiterErr(what string, err error) error {
	return fmt.Errorf("booking limiter (postgres): %s: %w", what, err)
}

// errNoGuardRow is the error when bookbot_guard has lost its row, which
// only a hand on the database can do: Migrate inserts it.
var errNoGuardRow = errors.New("bookbot_guard has no row: the database was changed by hand")

// lock locks bookbot_guard's row until tx ends and returns the hold and
// the 429s in a row it records.
func lock(ctx context.Context, tx pgx.Tx) (hold time.Time, strikes int, err error) {
	var s int64
	var ns int32
	err = tx.QueryRow(ctx, "SELECT hold_s, hold_ns, strikes FROM bookbot_guard WHERE id FOR UPDATE").Scan(&s, &ns, &strikes)
	if errors.Is(err, pgx.ErrNoRows) {
		err = errNoGuardRow
	}
	return fromUnix(s, ns), strikes, err
}

// windows deletes the attempts before prune and the event holds that ended
// before it, and returns the nth latest attempt after minute, the nth
// latest of the event type after hour (n being the limit; nil when there
// are fewer, or no limit), and the event type's hold (nil when none).
const windows = `WITH pruned AS (
		DELETE FROM bookbot_guard_attempts WHERE (at_s, at_ns) < ($1::bigint, $2::integer)
	), ended AS (
		DELETE FROM bookbot_guard_event_holds WHERE (hold_s, hold_ns) < ($1::bigint, $2::integer)
	)
	SELECT m.at_s, m.at_ns, e.at_s, e.at_ns, h.hold_s, h.hold_ns
	FROM (SELECT) one
	LEFT JOIN LATERAL (
		SELECT at_s, at_ns FROM bookbot_guard_attempts
		WHERE $5::integer > 0 AND (at_s, at_ns) > ($3::bigint, $4::integer)
		ORDER BY at_s DESC, at_ns DESC OFFSET greatest($5 - 1, 0) LIMIT 1
	) m ON true
	LEFT JOIN LATERAL (
		SELECT at_s, at_ns FROM bookbot_guard_attempts
		WHERE $9::integer > 0 AND event_type = $6 AND (at_s, at_ns) > ($7::bigint, $8::integer)
		ORDER BY at_s DESC, at_ns DESC OFFSET greatest($9 - 1, 0) LIMIT 1
	) e ON true
	LEFT JOIN bookbot_guard_event_holds h ON h.event_type = $6`

func (l *limiter) Reserve(ctx context.Context, eventType string) (wait time.Duration, ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return 0, false, limiterErr("reserve", err)
	}
	err = pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		hold, _, err := lock(ctx, tx)
		if err != nil {
			return err
		}
		// Read after the lock, and each statement from here sees what every
		// replica committed before it: READ COMMITTED takes a snapshot per
		// statement.
		now := l.now()
		pruneS, pruneNS := unix(now.Add(-booking.HourWindow - pruneMargin))
		minS, minNS := unix(now.Add(-booking.MinuteWindow))
		hourS, hourNS := unix(now.Add(-booking.HourWindow))
		var ms, es, hs *int64
		var mns, ens, hns *int32
		err = tx.QueryRow(ctx, windows, pruneS, pruneNS,
			minS, minNS, l.limits.PerMinute,
			[]byte(eventType), hourS, hourNS, l.limits.PerEventPerHour).Scan(&ms, &mns, &es, &ens, &hs, &hns)
		if err != nil {
			return err
		}
		wait = 0
		if now.Before(hold) {
			wait = hold.Sub(now)
		}
		if t, ok := fromNullUnix(hs, hns); ok && now.Before(t) {
			wait = max(wait, t.Sub(now))
		}
		if t, ok := fromNullUnix(ms, mns); ok {
			wait = max(wait, t.Add(booking.MinuteWindow).Sub(now))
		}
		if t, ok := fromNullUnix(es, ens); ok {
			wait = max(wait, t.Add(booking.HourWindow).Sub(now))
		}
		if wait > 0 {
			return nil
		}
		atS, atNS := unix(now)
		_, err = tx.Exec(ctx, "INSERT INTO bookbot_guard_attempts (event_type, at_s, at_ns) VALUES ($1, $2, $3)",
			[]byte(eventType), atS, atNS)
		return err
	})
	if err != nil {
		return 0, false, limiterErr("reserve", err)
	}
	return wait, wait <= 0, nil
}

// eventHold records until as the event type's hold, unless a longer one
// is in place, and returns the hold in place after.
const eventHold = `INSERT INTO bookbot_guard_event_holds AS h (event_type, hold_s, hold_ns) VALUES ($1, $2, $3)
	ON CONFLICT (event_type) DO UPDATE SET hold_s = excluded.hold_s, hold_ns = excluded.hold_ns
		WHERE (excluded.hold_s, excluded.hold_ns) > (h.hold_s, h.hold_ns)
	RETURNING hold_s, hold_ns`

func (l *limiter) Throttled(ctx context.Context, eventType string, retryAfter time.Duration) (hold time.Duration, every bool, err error) {
	if err := ctx.Err(); err != nil {
		return 0, false, limiterErr("throttled", err)
	}
	err = pgx.BeginFunc(ctx, l.pool, func(tx pgx.Tx) error {
		until, strikes, err := lock(ctx, tx)
		if err != nil {
			return err
		}
		now := l.now()
		// Which limit the 429 met is told by the replicas' own attempts
		// of the last minute, this one among them, counted
		// booking.AnswerSlack further back as the 429 comes a round trip
		// after its attempt (booking.Limiter).
		minS, minNS := unix(now.Add(-booking.MinuteWindow - booking.AnswerSlack))
		var recent int
		if n := l.limits.PerMinute; n > 0 {
			err = tx.QueryRow(ctx, "SELECT count(*) FROM bookbot_guard_attempts WHERE (at_s, at_ns) > ($1::bigint, $2::integer)",
				minS, minNS).Scan(&recent)
			if err != nil {
				return err
			}
			every = recent > n
		}
		if !every {
			s, ns := unix(now.Add(booking.EventHold(retryAfter)))
			var hs int64
			var hns int32
			err := tx.QueryRow(ctx, eventHold, []byte(eventType), s, ns).Scan(&hs, &hns)
			if errors.Is(err, pgx.ErrNoRows) { // a longer hold is in place
				err = tx.QueryRow(ctx, "SELECT hold_s, hold_ns FROM bookbot_guard_event_holds WHERE event_type = $1",
					[]byte(eventType)).Scan(&hs, &hns)
			}
			hold = fromUnix(hs, hns).Sub(now)
			return err
		}
		strikes++
		if t := now.Add(booking.HoldAfter(strikes, retryAfter)); t.After(until) {
			until = t
		}
		s, ns := unix(until)
		_, err = tx.Exec(ctx, "UPDATE bookbot_guard SET hold_s = $1, hold_ns = $2, strikes = $3 WHERE id", s, ns, strikes)
		hold = until.Sub(now)
		return err
	})
	if err != nil {
		return 0, false, limiterErr("throttled", err)
	}
	return hold, every, nil
}

func (l *limiter) Answered(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return limiterErr("answered", err)
	}
	// Most answers end no run of 429s: then the row is not written.
	if _, err := l.pool.Exec(ctx, "UPDATE bookbot_guard SET strikes = 0 WHERE id AND strikes <> 0"); err != nil {
		return limiterErr("answered", err)
	}
	return nil
}
