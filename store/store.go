// Package store opens bookbot's state, whole, the one way every command
// opens it: the embedded store under BOOKBOT_STATE_DIR (store/bolt), which
// one process holds, or PostgreSQL (store/pg), which replicas share. What
// differs between the two is decided here, once; the commands and the
// wiring (cmd/internal/app) get a State whose every part is there,
// whichever backs it.
package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/offer"
	"github.com/bookbot/bookbot/outbox"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/statedir"
	"github.com/bookbot/bookbot/store/bolt"
	"github.com/bookbot/bookbot/store/pg"
)

// Mode is how the state is opened beside other processes on it.
type Mode int

const (
	// Hold serves from the state, as `bookbot run` does: the embedded
	// store's directory is held until Close, and a second process that
	// would hold it is refused.
	Hold Mode = iota
	// Beside opens the embedded store beside the process that holds it,
	// as `bookbot digest` does; they share its file.
	Beside
	// ReadOnly reads and changes nothing, beside whatever holds the state
	// (`bookbot audit`, `digest -dry-run`, `check`): the embedded store's
	// missing file reads as empty, and PostgreSQL's sessions are
	// read-only.
	ReadOnly
)

// Options are how Open opens the state. With PostgreSQL, which replicas
// share, Hold and Beside are alike.
type Options struct {
	// StateDir is the embedded store's directory (BOOKBOT_STATE_DIR), the
	// state when DatabaseURL is empty.
	StateDir string
	// DatabaseURL is PostgreSQL's (BOOKBOT_DATABASE_URL), a secret as it
	// may hold a password.
	DatabaseURL config.Secret
	Mode        Mode
	// Migrate brings PostgreSQL's schema up to this bookbot's before
	// anything is read, under a lock replicas starting together share;
	// a schema newer by additive steps only is left as it is. Not with
	// ReadOnly.
	Migrate bool
	// Replica names this process among the replicas sharing PostgreSQL,
	// in the journal's writes and the leader's lease; "": its host,
	// process ID and a random part.
	Replica string
	// LeaderCheck is how often a replica that does not lead tries to
	// lead; 0: pg.DefaultLeaderCheck.
	LeaderCheck time.Duration
	// OnQueryError is called for every statement PostgreSQL did not carry
	// out, for a metric.
	OnQueryError func()
	// Now is the clock the embedded state's booking limits count attempts
	// by (nil: the machine's); replicas count theirs in PostgreSQL by the
	// machine's clock.
	Now func() time.Time
	// Log receives what opening did (an earlier bookbot's files imported,
	// the schema), and later the leader's terms and a stale digest claim;
	// nil: discarded.
	Log *slog.Logger
}

// State is what bookbot keeps beyond a process, opened for one. Every
// field is set, whichever backend keeps it, but Database.
type State struct {
	Journal journal.Store
	// Ledger is the digest's record of the dates posted, in Outbox.
	Ledger   digest.Ledger
	Notices  notices.Store
	Personal personal.Store
	Offers   offer.Store
	Accounts account.Store // people's own calendars
	// AccountNotices keeps the last read of each person's own calendar,
	// for their live notices.
	AccountNotices notices.Snapshots
	// Types keeps the event type each upcoming booking of each calendar
	// was last listed with.
	Types booking.TypeStore
	// Seen is the envelopes seen: by every replica, in PostgreSQL; in this
	// process's memory with the embedded store, which one process serves
	// Slack from.
	Seen bot.Seen
	// Outbox is where every post made exactly once is claimed first.
	Outbox outbox.Store
	// Limiter counts the booking API's limits: for all replicas together
	// in PostgreSQL, this process's with the embedded store.
	Limiter booking.Limiter
	// Singleton runs work that must run in one process at a time (the
	// digest schedule, notices, reminders, settling writes left behind,
	// pruning) until ctx ends: at once with the embedded store, while
	// this replica leads with PostgreSQL.
	Singleton func(ctx context.Context, work func(ctx context.Context))
	// PersonalSaved calls wake whenever another replica saves someone's
	// settings, until ctx ends. With the embedded store no other process
	// saves any: a save in this one wakes the reminders itself
	// (bot.Config.PersonalChanged), and PersonalSaved only waits.
	PersonalSaved func(ctx context.Context, wake func())
	// Database is PostgreSQL, for what only it has: its schema, which
	// replica leads, a ping for readiness. nil with the embedded store.
	Database *pg.DB

	close func()
}

// Close gives the state up: the embedded store's directory, or
// PostgreSQL's connections.
func (s State) Close() {
	if s.close != nil {
		s.close()
	}
}

// writeLeftAfter is how long another replica's write may stay in flight
// before the leader settles it as left behind: each step of a write (the
// list before it, the request, the list after it) has 30 seconds of its
// own, so a live replica's write is long done by then.
const writeLeftAfter = 5 * time.Minute

// Open opens the state that o names. Its errors name the variable that
// chose the backend, never a password; one that says another bookbot holds
// the state directory is a *statedir.LockedError, as it is.
func Open(ctx context.Context, o Options) (State, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Migrate && o.Mode == ReadOnly {
		return State{}, errors.New("store: the state is opened read-only, and cannot be migrated")
	}
	if o.DatabaseURL.IsZero() {
		return openEmbedded(o)
	}
	return openShared(ctx, o)
}

func openEmbedded(o Options) (State, error) {
	db, err := bolt.Open(o.StateDir, bolt.Options{Beside: o.Mode == Beside, ReadOnly: o.Mode == ReadOnly, Log: o.Log})
	if err != nil {
		if _, held := errors.AsType[*statedir.LockedError](err); held {
			return State{}, err
		}
		return State{}, fmt.Errorf("state (BOOKBOT_STATE_DIR %s): %w", o.StateDir, err)
	}
	return State{
		Journal:        db.Journal(),
		Ledger:         digest.NewLedger(db.Outbox(), digest.LedgerOptions{Log: o.Log}),
		Notices:        db.Notices(),
		Personal:       db.Personal(),
		Offers:         db.Offers(),
		Accounts:       db.Accounts(),
		AccountNotices: db.Accounts(),
		Types:          db.Types(),
		Seen:           bolt.NewDedupe(bot.SeenTTL),
		Outbox:         db.Outbox(),
		// One guard for the owner's calendar and people's own: the API
		// counts attempts a minute per IP address.
		Limiter:       booking.NewGuard(booking.DefaultLimits, o.Now),
		Singleton:     func(ctx context.Context, work func(context.Context)) { work(ctx) },
		PersonalSaved: func(ctx context.Context, _ func()) { <-ctx.Done() },
		close:         func() { _ = db.Close() },
	}, nil
}

func openShared(ctx context.Context, o Options) (State, error) {
	var opts []pg.Option
	if o.OnQueryError != nil {
		opts = append(opts, pg.OnQueryError(o.OnQueryError))
	}
	if o.Mode == ReadOnly {
		opts = append(opts, pg.ReadOnly())
	}
	db, err := pg.Open(ctx, o.DatabaseURL.Value(), opts...)
	if err != nil {
		return State{}, fmt.Errorf("database (BOOKBOT_DATABASE_URL): %w", err)
	}
	if o.Migrate {
		from, _, err := db.Migrate(ctx)
		if err != nil {
			db.Close()
			return State{}, fmt.Errorf("database (BOOKBOT_DATABASE_URL): %w", err)
		}
		if from > pg.Latest() {
			o.Log.Info("the database's schema is newer than this bookbot's, by additive steps only: this bookbot runs on it (replicas being upgraded or rolled back)",
				"schema_version", from, "this_bookbot", pg.Latest())
		}
	}
	log, owner := o.Log, o.Replica
	if owner == "" {
		owner = replicaName()
	}
	leader := db.Leader("bookbot", pg.LeaderOptions{Replica: owner, Check: o.LeaderCheck, Log: log})
	st := State{
		Journal:        db.Journal(owner, pg.JournalLeftAfter(writeLeftAfter)),
		Ledger:         digest.NewLedger(db.Outbox(), digest.LedgerOptions{Log: log}),
		Notices:        db.Notices(),
		Personal:       db.Personal(),
		Offers:         db.Offers(),
		Accounts:       db.Accounts(),
		AccountNotices: db.AccountNotices(),
		Types:          db.Types(),
		Seen:           db.Dedupe(bot.SeenTTL),
		Outbox:         db.Outbox(),
		Limiter:        db.Limiter(booking.DefaultLimits, time.Now),
		Singleton: func(ctx context.Context, work func(context.Context)) {
			err := leader.Run(ctx, func(ctx context.Context, term pg.Term) {
				log.Info("leading: the digest, notices, reminders and settling writes run here", "replica", owner, "term", term.Token)
				work(ctx)
				log.Info("no longer leading", "replica", owner, "term", term.Token)
			})
			if err != nil && ctx.Err() == nil {
				log.Error("leader election stopped: this replica serves Slack but runs no scheduled work", "error", err)
			}
		},
		PersonalSaved: func(ctx context.Context, wake func()) {
			if err := db.Listen(ctx, pg.PersonalChannel, log, wake); err != nil {
				log.Error("settings saved on other replicas wake reminders only at their next look", "error", err)
			}
		},
		Database: db,
		close:    db.Close,
	}
	log.Info("state in PostgreSQL", "replica", owner)
	return st, nil
}

// replicaName names this process among replicas: host, process ID and a
// random part, as no two starts share.
func replicaName() string {
	host, _ := os.Hostname()
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s:%d:%s", host, os.Getpid(), hex.EncodeToString(b))
}
