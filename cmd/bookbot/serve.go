package main

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/bookbot/bookbot/cmd/internal/app"
	"github.com/bookbot/bookbot/cmd/internal/metrics"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/store"
)

// socketUnhealthyAfter is how long Socket Mode may stay down before
// /healthz fails (app.SocketUnhealthyAfter). Tests shorten it.
var socketUnhealthyAfter = app.SocketUnhealthyAfter

// drainTimeout bounds how long shutdown waits for bookings and cancels in
// flight to finish and be reported.
const drainTimeout = app.DrainTimeout

// errStopped means ctx ended while bookbot was starting: nothing was
// refused, and there is nothing to say.
var errStopped = errors.New("stopped while starting")

// serve runs the bot until ctx is done: Socket Mode, the slash command,
// modals, App Home and, when DIGEST_CHANNEL is set, the digest schedule.
func serve(ctx context.Context, getenv func(string) string, stderr io.Writer) error {
	tm, set := testTiming(getenv)
	a, log, stop, err := start(ctx, getenv, stderr, tm)
	if errors.Is(err, errStopped) {
		return nil
	}
	if err != nil {
		return err
	}
	defer stop()
	for _, name := range set {
		log.Warn(name + " is set, which only tests set: bookbot keeps time as they say")
	}
	err = a.Run(ctx)
	log.Info("bookbot stopped")
	return err
}

// start wires bookbot from the environment getenv gives, logging to logTo,
// keeping time as tm says: the one start-up of `bookbot run` and `bookbot
// demo`. It serves the HTTP listener, opens the store and checks Slack;
// stop closes them once the app has stopped.
func start(ctx context.Context, getenv func(string) string, logTo io.Writer, tm timing) (a *app.App, log *slog.Logger, stop func(), err error) {
	cfg, err := config.Load(getenv, config.NeedAll)
	if err != nil {
		return nil, nil, nil, err
	}
	log = app.NewLogger(cfg, logTo)
	cfg.LogWarnings(log)
	m := metrics.New()
	stopHTTP, err := startHTTP(cfg.HTTPAddr, m.Handler(), log)
	if err != nil {
		return nil, nil, nil, err
	}
	o := stateOf(cfg, store.Hold)
	o.Migrate, o.LeaderCheck, o.OnQueryError, o.Now, o.Log = true, tm.leaderCheck, m.StoreError, tm.now, log
	octx, cancel := context.WithTimeout(ctx, migrateTimeout)
	st, err := store.Open(octx, o)
	cancel()
	if err != nil {
		stopHTTP()
		return nil, nil, nil, err
	}
	if st.Database != nil {
		m.SetDatabase(st.Database.Ping)
	}
	stop = func() {
		st.Close()
		stopHTTP()
	}
	a, err = app.New(ctx, app.Deps{
		Config: cfg, State: st, Metrics: m, Log: log, Version: version, Now: tm.now, Sleep: tm.sleep,
		SlackTimeout: slackCallTimeout, Drain: drainTimeout, SocketUnhealthyAfter: socketUnhealthyAfter,
	})
	if err != nil {
		stop()
		if ae, ok := errors.AsType[*app.AuthTestError](err); ok {
			if ctx.Err() != nil {
				log.Info("bookbot stopped before connecting to Slack")
				return nil, nil, nil, errStopped
			}
			return nil, nil, nil, authTestError(ae.Err, slackCallTimeout)
		}
		return nil, nil, nil, err
	}
	return a, log, stop, nil
}

// stateOf is how a command opens the state cfg names, in mode: PostgreSQL
// when BOOKBOT_DATABASE_URL is set, else the embedded store under
// BOOKBOT_STATE_DIR.
func stateOf(cfg *config.Config, mode store.Mode) store.Options {
	return store.Options{StateDir: cfg.StateDir, DatabaseURL: cfg.DatabaseURL, Mode: mode}
}
