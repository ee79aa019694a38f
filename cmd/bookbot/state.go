package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/cmd/internal/app"
	"github.com/bookbot/bookbot/cmd/internal/metrics"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/statedir"
	"github.com/bookbot/bookbot/store/bolt"
	"github.com/bookbot/bookbot/store/pg"
)

// writeLeftAfter is how long another replica's write may stay in flight
// before the leader settles it as left behind: each step of a write (the
// list before it, the request, the list after it) has 30 seconds of its
// own, so a live replica's write is long done by then.
const writeLeftAfter = 5 * time.Minute

// store is where `bookbot run` keeps what must outlive the process: the
// embedded store's file under BOOKBOT_STATE_DIR, which one process holds,
// or PostgreSQL, which replicas share. Its Singleton runs the work at once
// with the embedded store, and while this replica leads with PostgreSQL.
type store struct {
	app.State
	close func()
}

// openStore opens the store BOOKBOT_DATABASE_URL or BOOKBOT_STATE_DIR names.
// With PostgreSQL, a replica that does not lead tries to lead every
// leaderCheck (0: pg.DefaultLeaderCheck).
func openStore(ctx context.Context, cfg *config.Config, m *metrics.Recorder, log *slog.Logger, leaderCheck time.Duration) (*store, error) {
	if cfg.DatabaseURL.IsZero() {
		return openEmbedded(cfg, log)
	}
	return openShared(ctx, cfg, m, log, leaderCheck)
}

func openEmbedded(cfg *config.Config, log *slog.Logger) (*store, error) {
	// The embedded store serves one process, which holds the directory: a
	// second one would settle this one's writes in flight as abandoned.
	db, err := bolt.Open(cfg.StateDir, bolt.Options{Log: log})
	if err != nil {
		if _, held := errors.AsType[*statedir.LockedError](err); held {
			return nil, err
		}
		return nil, fmt.Errorf("state (BOOKBOT_STATE_DIR %s): %w", cfg.StateDir, err)
	}
	st := &store{close: func() { _ = db.Close() }}
	st.Journal, st.Personal, st.Outbox, st.Offers = db.Journal(), db.Personal(), db.Outbox(), db.Offers()
	st.Accounts, st.Types = db.Accounts(), db.Types()
	if cfg.DigestChannel != "" {
		st.Ledger = digest.NewLedger(db.Outbox(), digest.LedgerOptions{Log: log})
	}
	if noticesOn(cfg) || !cfg.SecretKey.IsZero() {
		st.Notices = db.Notices()
	}
	st.AccountNotices = db.Accounts()
	return st, nil
}

func openShared(ctx context.Context, cfg *config.Config, m *metrics.Recorder, log *slog.Logger, leaderCheck time.Duration) (*store, error) {
	octx, cancel := context.WithTimeout(ctx, migrateTimeout)
	defer cancel()
	db, err := pg.Open(octx, cfg.DatabaseURL.Value(), pg.OnQueryError(m.StoreError))
	if err != nil {
		return nil, fmt.Errorf("database (BOOKBOT_DATABASE_URL): %w", err)
	}
	from, _, err := db.Migrate(octx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("database (BOOKBOT_DATABASE_URL): %w", err)
	}
	if from > pg.Latest() {
		log.Info("the database's schema is newer than this bookbot's, by additive steps only: this bookbot runs on it (replicas being upgraded or rolled back)",
			"schema_version", from, "this_bookbot", pg.Latest())
	}
	m.SetDatabase(db.Ping)
	owner := replicaName()
	st := &store{close: db.Close, State: app.State{
		Journal:        db.Journal(owner, pg.JournalLeftAfter(writeLeftAfter)),
		Notices:        db.Notices(),
		Personal:       db.Personal(),
		Offers:         db.Offers(),
		Accounts:       db.Accounts(),
		AccountNotices: db.AccountNotices(),
		Types:          db.Types(),
		Seen:           db.Dedupe(bot.SeenTTL),
		Limiter:        db.Limiter(booking.DefaultLimits, time.Now),
		Outbox:         db.Outbox(),
	}}
	if cfg.DigestChannel != "" {
		st.Ledger = digest.NewLedger(db.Outbox(), digest.LedgerOptions{Log: log})
	}
	st.PersonalSaved = func(ctx context.Context, wake func()) {
		if err := db.Listen(ctx, pg.PersonalChannel, log, wake); err != nil {
			log.Error("settings saved on other replicas wake reminders only at their next look", "error", err)
		}
	}
	leader := db.Leader("bookbot", pg.LeaderOptions{Replica: owner, Check: leaderCheck, Log: log})
	st.Singleton = func(ctx context.Context, work func(context.Context)) {
		err := leader.Run(ctx, func(ctx context.Context, term pg.Term) {
			log.Info("leading: the digest, notices, reminders and settling writes run here", "replica", owner, "term", term.Token)
			work(ctx)
			log.Info("no longer leading", "replica", owner, "term", term.Token)
		})
		if err != nil && ctx.Err() == nil {
			log.Error("leader election stopped: this replica serves Slack but runs no scheduled work", "error", err)
		}
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
