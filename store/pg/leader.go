package pg

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/puddle/v2"
)

// Leader elects one replica among those sharing the database to do work
// that must run once (the digest schedule, the notices watcher, reminders,
// journal pruning, settling the writes of dead replicas). Create it with
// DB.Leader and start it with Run.
//
// The leader is the replica whose session holds a PostgreSQL advisory
// lock named after the Leader's name, on a connection of the Leader's own,
// taken from the pool and held. Each term writes a lease row (the
// replica, a fencing token, a heartbeat) that WhoLeads reads.
//
// # Takeover
//
// With C the check interval and L the lost-after bound (defaults 5 s and
// 15 s), a replica that does not lead tries the lock every C, and the
// leader confirms every C, on its connection, that it still holds it. The
// leader's session is told to end after L idle (idle_session_timeout):
//
//   - the leader's process dies (kill -9, a crash): the operating system
//     closes its connection, the server ends the session and frees the
//     lock; another replica leads within C.
//   - the leader is cut off (network loss, a frozen host): the server ends
//     the session at most L after the last query it answered; another
//     replica leads within L + C, 20 s with the defaults.
//   - the leader's session is ended from the server (pg_terminate_backend,
//     a restart): the leader learns it at once, as its connection is
//     watched between checks; another replica leads within C.
//
// A leader cut off stops acting before the lock can move: its lead context
// is cancelled when a check fails or is not answered within L - C of the
// last check answered, at least C before the server can end its session.
// When the server ends the session itself, the lock is free at once and
// the leader learns it at once too (in milliseconds): a replica trying the
// lock in between may begin its term before the old one's context is
// cancelled. Cancellation is cooperative besides: work the lead function
// started must stop when its context is done. Writes that must not be made
// twice should be fenced with Term.Token.
//
// The lock is a session's: the database must be reached directly or
// through a pooler in session mode, never in transaction mode.
type Leader struct {
	db   *DB
	name string
	key  int32 // the lock's second key; the first is leaderLockClass
	opts LeaderOptions
	log  *slog.Logger
}

// LeaderOptions tune a Leader. The zero value is the defaults.
type LeaderOptions struct {
	// Replica names this replica in the lease row; default host:pid.
	Replica string
	// Check is how often a replica that does not lead tries the lock, and
	// how often the leader checks that it holds it; default 5 s.
	Check time.Duration
	// LostAfter bounds how long the lock outlives a leader cut off from
	// the database; default 15 s, and at least 3 × Check (raised to it).
	LostAfter time.Duration
	// Log is told when a term begins and ends; nil: not told.
	Log *slog.Logger
}

// Term is one replica's stretch of leadership.
type Term struct {
	// Token is the fencing token: 1 for a name's first term, and one more
	// for each term after, whichever replica it goes to. A write made on a
	// term's behalf can be refused once a later term has begun.
	Token int64
	// Since is when the term began, by the database's clock.
	Since time.Time
}

// LeaderInfo is a name's current or last term, as recorded.
type LeaderInfo struct {
	Name    string
	Replica string // "" when no replica has led under this name
	Token   int64
	// Since and Heartbeat are when the term began and was last confirmed,
	// and Age how long ago that was, all by the database's clock.
	Since     time.Time
	Heartbeat time.Time
	Age       time.Duration
	// Leading is whether the term is current: the session that began it
	// still holds the lock. A leader cut off from the database stays
	// Leading, with a growing Age, until the server ends its session
	// (LostAfter); it stopped acting before that.
	Leading bool
}

// leaderLockClass is the first key of every leader's advisory lock, "book"
// in ASCII; the second is the name's hash. Migrate's lock is of the
// one-key form, which never meets a two-key one.
const leaderLockClass int32 = 0x626f6f6b

// Default leader timing.
const (
	DefaultLeaderCheck     = 5 * time.Second
	DefaultLeaderLostAfter = 15 * time.Second
)

// leaderKey is the lock's second key for name. Two names of one hash
// share a lock: one waits for the other's leader.
func leaderKey(name string) int32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int32(h.Sum32() & 0x7fffffff)
}

// Leader returns a Leader for name (say "singletons"): of the Leaders of
// one name, on every replica sharing the database, one at a time leads.
func (db *DB) Leader(name string, opts LeaderOptions) *Leader {
	if opts.Replica == "" {
		host, _ := os.Hostname()
		opts.Replica = host + ":" + strconv.Itoa(os.Getpid())
	}
	if opts.Check <= 0 {
		opts.Check = DefaultLeaderCheck
	}
	if opts.LostAfter <= 0 {
		opts.LostAfter = DefaultLeaderLostAfter
	}
	opts.LostAfter = max(opts.LostAfter, 3*opts.Check)
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("leader", name, "replica", opts.Replica)
	return &Leader{db: db, name: name, key: leaderKey(name), opts: opts, log: log}
}

// errClosed is Run's error when the DB is closed under it.
var errClosed = errors.New("the database handle was closed")

func (l *Leader) errorf(format string, args ...any) error {
	return fmt.Errorf("postgres leader %q: "+format, append([]any{l.name}, args...)...)
}

// Run campaigns until ctx is done, and runs lead for each term this
// replica wins, with a context cancelled when the term ends: when ctx is
// done, or leadership is lost (see Leader). Run waits for lead to return
// before it campaigns again or gives the lock back, so terms of one Leader
// never overlap.
//
// Run returns nil once ctx is done, or when lead returns of itself while
// leading: the lock is given back then. It returns an error when the DB
// is closed (the lock given back too) or the schema lacks the lease table
// (run bookbot migrate); a database that cannot be reached is tried again,
// every check interval, and logged.
func (l *Leader) Run(ctx context.Context, lead func(ctx context.Context, term Term)) error {
	if l.name == "" {
		return errors.New("postgres leader: no name")
	}
	var c *pgxpool.Conn // the dedicated connection, nil when there is none
	defer func() {
		if c != nil {
			l.drop(c)
		}
	}()
	for first := true; ; first = false {
		if !first && !sleep(ctx, l.opts.Check) || ctx.Err() != nil {
			return nil
		}
		if c == nil {
			var err error
			if c, err = l.session(ctx); err != nil {
				switch {
				case errors.Is(err, puddle.ErrClosedPool):
					return l.errorf("%w", errClosed)
				case ctx.Err() != nil:
					return nil
				}
				l.log.Warn("leader election: cannot reach the database; trying again", "err", err)
				continue
			}
		}
		sent := time.Now()
		won, err := l.tryLock(ctx, c)
		if err != nil {
			l.drop(c)
			c = nil
			if ctx.Err() != nil {
				return nil
			}
			l.log.Warn("leader election: the lock could not be tried; trying again", "err", err)
			continue
		}
		if !won {
			if l.db.closing.Load() {
				return l.errorf("%w", errClosed)
			}
			continue
		}
		term, err := l.begin(ctx, c)
		if err != nil {
			l.drop(c) // gives the lock back
			c = nil
			var pe *pgconn.PgError
			switch {
			case ctx.Err() != nil:
				return nil
			case errors.As(err, &pe) && strings.HasPrefix(pe.Code, "42"): // no such table or column: not migrated
				return l.errorf("begin a term: %w (has bookbot migrate run?)", err)
			}
			l.log.Warn("leader election: a term could not begin; trying again", "err", err)
			continue
		}
		// The session's last query was begin's, sent after sent.
		err = l.serve(ctx, c, term, sent, lead)
		c = nil // serve ended the session
		switch {
		case err != nil:
			return err
		case ctx.Err() != nil:
			return nil
		}
		// Lost, or lead returned of itself.
		if term.lost == nil {
			return nil
		}
		// Sit out a check, so that another replica, trying every check,
		// takes over rather than this one again.
		if !sleep(ctx, l.opts.Check) {
			return nil
		}
	}
}

// sleep waits d, and reports whether ctx is still live.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// opTimeout bounds each query on the dedicated connection: an answer later
// than L - C after it is sent could come after the server ended the
// session.
func (l *Leader) opTimeout() time.Duration { return l.opts.LostAfter - l.opts.Check }

// session takes the dedicated connection from the pool and sets it up: it
// is named in pg_stat_activity, and the server ends it after LostAfter
// idle, which frees the lock of a leader cut off from the database.
func (l *Leader) session(ctx context.Context) (*pgxpool.Conn, error) {
	c, err := l.db.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, l.opTimeout())
	defer cancel()
	_, err = c.Exec(ctx, "SELECT set_config('application_name', $1, false)", "bookbot leader "+l.name)
	if err == nil {
		_, err = c.Exec(ctx, "SELECT set_config('idle_session_timeout', $1, false)",
			strconv.FormatInt(l.opts.LostAfter.Milliseconds(), 10))
		var pe *pgconn.PgError
		if errors.As(err, &pe) && pe.Code == "42704" { // before PostgreSQL 14
			l.log.Warn("leader election: the server has no idle_session_timeout (PostgreSQL 14): a leader cut off from it keeps the lock until TCP gives up", "err", err)
			err = nil
		}
	}
	if err != nil {
		l.drop(c)
		return nil, err
	}
	return c, nil
}

func (l *Leader) tryLock(ctx context.Context, c *pgxpool.Conn) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, l.opTimeout())
	defer cancel()
	var won bool
	err := c.QueryRow(ctx, "SELECT pg_try_advisory_lock($1::int4, $2::int4)", leaderLockClass, l.key).Scan(&won)
	return won, err
}

// term is a Term as Run keeps it.
type term struct {
	Term
	lost error // why the term was lost; nil when it ended otherwise
}

// begin writes the lease row of a new term, under the lock.
func (l *Leader) begin(ctx context.Context, c *pgxpool.Conn) (*term, error) {
	ctx, cancel := context.WithTimeout(ctx, l.opTimeout())
	defer cancel()
	var t term
	err := c.QueryRow(ctx, `INSERT INTO bookbot_leaders AS l (name, replica, token, backend_pid, since, heartbeat)
		VALUES ($1, $2, 1, pg_backend_pid(), clock_timestamp(), clock_timestamp())
		ON CONFLICT (name) DO UPDATE SET replica = excluded.replica, token = l.token + 1,
			backend_pid = excluded.backend_pid, since = excluded.since, heartbeat = excluded.heartbeat
		RETURNING token, since`, l.name, l.opts.Replica).Scan(&t.Token, &t.Since)
	if err != nil {
		return nil, err
	}
	t.Since = t.Since.UTC()
	return &t, nil
}

// serve runs lead for the term and watches the connection until lead
// returns; it ends the session. lastOK is when the session's last query
// was sent. Its error is Run's.
func (l *Leader) serve(ctx context.Context, c *pgxpool.Conn, t *term, lastOK time.Time, lead func(context.Context, Term)) error {
	l.log.Info("leading", "token", t.Token)
	leadCtx, stopLead := context.WithCancel(ctx)
	defer stopLead()
	returned, markReturned := context.WithCancel(context.Background())
	go func() {
		defer markReturned()
		lead(leadCtx, t.Term)
	}()

	next := lastOK.Add(l.opts.Check)
	for t.lost == nil && returned.Err() == nil {
		// Between checks, wait on the connection: a session ended by the
		// server is seen at once.
		wctx, cancel := context.WithDeadline(returned, next)
		err := c.Conn().PgConn().WaitForNotification(wctx)
		woken := wctx.Err() != nil
		cancel()
		switch {
		case !woken && err != nil:
			t.lost = fmt.Errorf("the connection broke: %w", err)
		case !woken, returned.Err() != nil:
			// A notification (none is listened for), or lead returned.
		default:
			sent := time.Now()
			if err := l.heartbeat(c, t, lastOK.Add(l.opTimeout())); err != nil {
				t.lost = fmt.Errorf("the lock could not be confirmed: %w", err)
				break
			}
			lastOK, next = sent, sent.Add(l.opts.Check)
			if l.db.closing.Load() {
				t.lost = errClosed
			}
		}
	}
	if t.lost != nil {
		// Stop acting first, then end the session, which frees the lock
		// if the server still holds it.
		stopLead()
		l.drop(c)
		l.log.Warn("leadership lost", "token", t.Token, "why", t.lost.Error())
		<-returned.Done()
		if t.lost == errClosed {
			return l.errorf("%w", errClosed)
		}
		return nil
	}
	// lead has returned: only now may another replica lead.
	l.release(c)
	l.log.Info("leadership given back", "token", t.Token)
	return nil
}

// heartbeat confirms that the session still holds the term's lock, and
// records it, by deadline.
func (l *Leader) heartbeat(c *pgxpool.Conn, t *term, deadline time.Time) error {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	tag, err := c.Exec(ctx, `UPDATE bookbot_leaders SET heartbeat = clock_timestamp()
		WHERE name = $1 AND token = $2 AND backend_pid = pg_backend_pid()`, l.name, t.Token)
	if err == nil && tag.RowsAffected() != 1 {
		err = fmt.Errorf("the lease row of term %d is gone", t.Token)
	}
	return err
}

// release gives the lock back, and ends the session.
func (l *Leader) release(c *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), l.opTimeout())
	defer cancel()
	if _, err := c.Exec(ctx, "SELECT pg_advisory_unlock($1::int4, $2::int4)", leaderLockClass, l.key); err != nil {
		l.log.Warn("leadership: the lock could not be given back; ending the session instead", "err", err)
	}
	l.drop(c)
}

// drop ends the dedicated connection's session (its settings are not for
// the pool's other users), which frees any lock it holds.
func (l *Leader) drop(c *pgxpool.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.Conn().Close(ctx)
	c.Release() // a closed connection leaves the pool
}

// WhoLeads returns name's current or last term; a name no replica has led
// under has only its Name set.
func (db *DB) WhoLeads(ctx context.Context, name string) (LeaderInfo, error) {
	info := LeaderInfo{Name: name}
	err := db.pool.QueryRow(ctx, `SELECT l.replica, l.token, l.since, l.heartbeat, clock_timestamp() - l.heartbeat,
			EXISTS (SELECT 1 FROM pg_locks k, pg_database d
				WHERE k.locktype = 'advisory' AND k.database = d.oid AND d.datname = current_database()
				AND k.classid::bigint = $2 AND k.objid::bigint = $3 AND k.objsubid = 2
				AND k.granted AND k.pid = l.backend_pid)
		FROM bookbot_leaders l WHERE l.name = $1`, name, int64(leaderLockClass), int64(leaderKey(name))).
		Scan(&info.Replica, &info.Token, &info.Since, &info.Heartbeat, &info.Age, &info.Leading)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return LeaderInfo{Name: name}, nil
	case err != nil:
		return LeaderInfo{}, fmt.Errorf("postgres leader %q: who leads: %w", name, err)
	}
	info.Since, info.Heartbeat = info.Since.UTC(), info.Heartbeat.UTC()
	return info, nil
}
