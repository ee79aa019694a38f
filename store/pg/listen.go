package pg

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/puddle/v2"
)

// PersonalChannel is the channel every save of someone's reminder and
// agenda settings notifies, from any replica: the replica that runs
// reminders listens on it, so a change made elsewhere is looked at once.
const PersonalChannel = "bookbot_personal"

// Listen timing.
const (
	// listenCheck is how long the connection may stay silent before it is
	// pinged: a connection a NAT or firewall dropped without a word is
	// seen, and an idle one is kept from being dropped.
	listenCheck = 30 * time.Second
	// listenRetry and listenRetryMax bound the wait before each attempt
	// to listen again, doubled from the first to the cap.
	listenRetry    = 200 * time.Millisecond
	listenRetryMax = 15 * time.Second
)

// Listen calls fn for each notification on channel (sent by any session,
// with NOTIFY or pg_notify) until ctx is done, on a connection of its own
// taken out of the pool. fn is called once more each time listening
// begins, the first time included: a notification sent while no session
// listened is lost, so the caller should look again then.
//
// A connection that breaks is replaced, with a wait doubled after each
// failure up to 15 s, and logged on log (nil: not logged). Listen returns
// nil once ctx is done, and an error only when the DB is closed or
// channel is empty. The pool's Close does not wait for it.
func (db *DB) Listen(ctx context.Context, channel string, log *slog.Logger, fn func()) error {
	if channel == "" {
		return errors.New("postgres listen: no channel")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	wait := listenRetry
	for {
		listened, err := db.listen(ctx, channel, fn)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, puddle.ErrClosedPool):
			return fmt.Errorf("postgres listen %q: %w", channel, errClosed)
		}
		if listened {
			wait = listenRetry
		}
		log.Warn("postgres listen: not listening; trying again", "channel", channel, "retry_in", wait.String(), "err", err)
		if !sleep(ctx, wait) {
			return nil
		}
		wait = min(2*wait, listenRetryMax)
	}
}

// listen listens on one connection until it fails or ctx is done, and
// reports whether it got as far as listening.
func (db *DB) listen(ctx context.Context, channel string, fn func()) (bool, error) {
	pc, err := db.pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	// Out of the pool: the session listens until it ends, and Close need
	// not wait for it.
	c := pc.Hijack()
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = c.Close(cctx)
	}()
	// Named in pg_stat_activity. One round trip on the new session: the
	// simple protocol takes both statements at once, and prepares none.
	if _, err := c.Exec(ctx, "SELECT set_config('application_name', $1, false); LISTEN "+pgx.Identifier{channel}.Sanitize(),
		pgx.QueryExecModeSimpleProtocol, "bookbot listen "+channel); err != nil {
		return false, err
	}
	fn()
	for {
		wctx, cancel := context.WithTimeout(ctx, listenCheck)
		_, err := c.WaitForNotification(wctx)
		silent := wctx.Err() != nil
		cancel()
		switch {
		case ctx.Err() != nil:
			return true, ctx.Err()
		case err == nil:
			fn()
		case !silent:
			return true, err
		default:
			if err := ping(ctx, c); err != nil {
				return true, err
			}
		}
	}
}

// ping checks that the connection still answers, within a bound.
func ping(ctx context.Context, c *pgx.Conn) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return c.Ping(ctx)
}
