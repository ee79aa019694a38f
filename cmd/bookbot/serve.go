package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/cmd/internal/metrics"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
)

// socketUnhealthyAfter is how long Socket Mode may stay down before
// /healthz fails so that an orchestrator restarts bookbot: longer than a
// reconnect when Slack asks for one (a second or two) and than slack-go's
// first few retries of a failed connection. Tests shorten it.
var socketUnhealthyAfter = 2 * time.Minute

// drainTimeout bounds how long shutdown waits for bookings and cancels in
// flight to finish and be reported.
const drainTimeout = 30 * time.Second

// serve runs the bot until ctx is done: Socket Mode, the slash command,
// modals, App Home and, when DIGEST_CHANNEL is set, the digest schedule.
func serve(ctx context.Context, getenv func(string) string, stderr io.Writer) error {
	cfg, err := config.Load(getenv, config.NeedAll)
	if err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	cfg.LogWarnings(log)
	m := metrics.New()
	stopHTTP, err := startHTTP(cfg.HTTPAddr, m.Handler(), log)
	if err != nil {
		return err
	}
	defer stopHTTP()
	st, err := openStore(ctx, cfg, m, log)
	if err != nil {
		return err
	}
	defer st.close()
	jr := st.journal
	m.SetAwaitingReview(jr.AwaitingReview)
	writes := []booking.Option{booking.WithObserver(m), booking.WithJournal(jr)}
	if st.limiter != nil {
		writes = append(writes, booking.WithLimiter(st.limiter))
	}
	if cfg.DryRun {
		writes = append(writes, booking.WithDryRun())
		log.Warn("dry run: bookings and cancellations are not sent to the booking API (BOOKBOT_DRY_RUN=true)")
	}
	bk, err := newBookingClient(cfg, log, writes...)
	if err != nil {
		return err
	}
	if cfg.DatabaseURL.IsZero() {
		// One process: whatever is in flight was left by one that stopped.
		if err := recoverWrites(ctx, jr, bk, log); err != nil {
			return err
		}
	}
	api := newSlack(cfg, slack.OptionHTTPClient(&http.Client{Transport: m.SlackTransport(cfg.SlackAPIURL), Timeout: slackCallTimeout}))
	auth, err := api.AuthTestContext(ctx)
	if err != nil {
		if ctx.Err() != nil { // stopped while starting: nothing was refused
			log.Info("bookbot stopped before connecting to Slack")
			return nil
		}
		return authTestError(err, slackCallTimeout)
	}
	log.Info("bookbot starting", "version", version, "team", auth.Team, "bot", auth.User, "command", cfg.Command, "allowed_users", len(cfg.AllowedUsers), "allow_all", cfg.AllowAll)

	runner := newDigestRunner(cfg, bk, api, st.ledger, log)
	runner.Observe = m.DigestRun
	var reminders atomic.Pointer[personal.Runner]
	b := bot.New(bot.Config{
		Command:       cfg.Command,
		Allowed:       cfg.Allowed,
		TeamID:        auth.TeamID,
		ViewKey:       bot.ViewKey(cfg.SlackAppToken.Value()),
		Digest:        runner,
		DigestZone:    cfg.DigestZone,
		IncludeEmails: cfg.DigestIncludeEmails,
		Log:           log,
		Metrics:       m,
		DryRun:        cfg.DryRun,
		Journal:       jr,
		ReviewChannel: cfg.ReviewChannel,
		Reviewers:     cfg.AllowedUsers,
		Contact:       firstOf(cfg.AllowedUsers),
		BookingPage:   cfg.BookingPage,
		JournalKeep:   cfg.JournalKeep,
		Personal:      st.personal,
		Seen:          st.seen,
		ReviewLock:    st.reviewLock,
		// Reminders run where the scheduled work runs; a save on another
		// replica wakes them through the database (store.personalSaved).
		PersonalChanged: func() {
			if r := reminders.Load(); r != nil {
				r.Wake()
			}
		},
	}, bk, api)

	// The scheduled work, in this process or on the replica that leads.
	singletonCtx, stopSingleton := context.WithCancel(ctx)
	singletonDone := make(chan struct{})
	go func() {
		defer close(singletonDone)
		st.singleton(singletonCtx, func(ctx context.Context) {
			m.SetLeader(true)
			defer m.SetLeader(false)
			scheduled(ctx, cfg, st, bk, api, runner, b, &reminders, m, log)
		})
	}()
	defer func() { stopSingleton(); <-singletonDone }()

	stopWatch := m.WatchSocket(ctx, socketUnhealthyAfter, log)
	defer stopWatch()
	client := socketmode.New(api)
	err = b.Run(ctx, client, drainTimeout)
	log.Info("bookbot stopped")
	return err
}

// scheduled runs the work that must run in one process at a time until
// ctx ends, and waits for what is under way to finish: the digest
// schedule, notices, reminders, settling writes left behind and pruning.
func scheduled(ctx context.Context, cfg *config.Config, st *store, bk *booking.Client, api *slack.Client, runner *digest.Runner, b *bot.Bot, reminders *atomic.Pointer[personal.Runner], m *metrics.Recorder, log *slog.Logger) {
	var wg sync.WaitGroup
	defer wg.Wait()
	if !cfg.DatabaseURL.IsZero() {
		// Replicas: the leader settles the writes of replicas that died.
		wg.Go(func() { settleLeftBehind(ctx, st.journal, bk, log) })
	}
	wg.Go(func() { pruneJournal(ctx, st.journal, cfg.JournalKeep, log) })
	if cfg.DigestChannel != "" {
		sched, err := digest.NewScheduler(cfg.DigestSchedule, cfg.DigestZone, runner, log)
		if err == nil {
			err = sched.Start(ctx)
		}
		if err != nil {
			log.Error("digest schedule not started", "error", err)
		} else {
			defer func() {
				stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
				defer cancel()
				_ = sched.Stop(stop)
			}()
		}
	} else {
		log.Info("digest off: DIGEST_CHANNEL is not set")
	}
	if noticesOn(cfg) {
		pub := bot.SlackNoticePublisher{Slack: api, Zone: cfg.DigestZone, IncludeEmails: cfg.NotifyIncludeEmails}
		w := notices.NewWatcher(notices.Config{
			List:      bk,
			Store:     st.notices,
			Publisher: pub,
			Finder:    pub,
			Alerter:   b,
			Writes:    st.journal,
			Metrics:   m,
			Channel:   cfg.NotifyChannel,
			Routes:    cfg.NotifyRoutes,
			Interval:  cfg.NotifyInterval,
			Skew:      bk.Skew,
			Log:       log,
		})
		log.Info("notices on", "channel", cfg.NotifyChannel, "routes", len(cfg.NotifyRoutes), "interval", cfg.NotifyInterval.String())
		wg.Go(func() { _ = w.Run(ctx) })
	} else {
		log.Info("notices off: NOTIFY_CHANNEL is not set")
	}
	r := personal.NewRunner(personal.Config{
		List: bk, Store: st.personal, Send: b, Zones: b, Allowed: cfg.Allowed, Metrics: m, Log: log,
	})
	reminders.Store(r)
	defer reminders.Store(nil)
	wg.Go(func() { _ = r.Run(ctx) })
	if st.personalSaved != nil {
		wg.Go(func() { st.personalSaved(ctx, r.Wake) })
	}
	<-ctx.Done()
}

// noticesOn says whether live notices are posted: to one channel, or by
// event type.
func noticesOn(cfg *config.Config) bool {
	return cfg.NotifyChannel != "" || len(cfg.NotifyRoutes) > 0
}

// settleLeftBehind settles, every minute, the writes that replicas which
// died left in flight (see writeLeftAfter), and puts them in front of a
// person through the review queue.
func settleLeftBehind(ctx context.Context, jr journal.Store, bk *booking.Client, log *slog.Logger) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		if err := recoverWrites(ctx, jr, bk, log); err != nil && ctx.Err() == nil {
			log.Warn("journal: writes left behind could not be settled; tried again in a minute", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// newBookingClient is the booking client every command uses; opts add to
// (or override) its defaults.
func newBookingClient(cfg *config.Config, log *slog.Logger, opts ...booking.Option) (*booking.Client, error) {
	return booking.NewClient(cfg.BookingBaseURL, cfg.BookingKey,
		append([]booking.Option{booking.WithLogger(log), booking.WithUserAgent("bookbot/" + version)}, opts...)...)
}

// newSlack is the Slack client every command uses; opts add to (or
// override) its defaults. Each Web API call times out after
// slackCallTimeout; an HTTP client given in opts must do the same.
func newSlack(cfg *config.Config, opts ...slack.Option) *slack.Client {
	return slack.New(cfg.SlackBotToken.Value(),
		append([]slack.Option{
			slack.OptionAPIURL(cfg.SlackAPIURL),
			slack.OptionAppLevelToken(cfg.SlackAppToken.Value()),
			slack.OptionHTTPClient(&http.Client{Timeout: slackCallTimeout}),
		}, opts...)...)
}

// newDigestRunner wires the digest to the booking API, Slack and the
// ledger that keeps it to one post a date. The runner also serves
// `/booking digest` previews, so it exists even when the schedule is off;
// api nil (a dry run) and ledger nil (no DIGEST_CHANNEL) post nothing.
func newDigestRunner(cfg *config.Config, bk *booking.Client, api *slack.Client, ledger digest.Ledger, log *slog.Logger) *digest.Runner {
	r := &digest.Runner{
		Source:        bk,
		Channel:       cfg.DigestChannel,
		Zone:          cfg.DigestZone,
		IncludeEmails: cfg.DigestIncludeEmails,
		SkipEmpty:     cfg.DigestSkipEmpty,
		Ledger:        ledger,
		Log:           log,
	}
	if api != nil {
		pub := &bot.SlackDigestPublisher{Slack: api}
		r.Publisher, r.Finder = pub, pub
	}
	return r
}

// slackReason is Slack's short error code, which never carries a token.
func slackReason(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return "rate limited"
	}
	return "no answer: " + err.Error()
}

// pruneJournal deletes the journal's settled entries older than keep (0:
// none), now and then daily until ctx ends, so the file stops growing.
func pruneJournal(ctx context.Context, jr journal.Store, keep time.Duration, log *slog.Logger) {
	if keep <= 0 {
		return
	}
	t := time.NewTicker(24 * time.Hour)
	defer t.Stop()
	for {
		n, err := jr.Prune(time.Now().Add(-keep))
		switch {
		case err != nil:
			log.Warn("journal: old entries could not be pruned; they are tried again tomorrow", "err", err)
		case n > 0:
			log.Info("journal: old entries pruned", "entries", n, "kept_days", int(keep.Hours()/24))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// recoverWrites settles the writes a previous process left in flight, by
// listing bookings; the bot then reports them for review.
func recoverWrites(ctx context.Context, jr journal.Store, bk *booking.Client, log *slog.Logger) error {
	done, err := jr.Recover(ctx, bk.Reconcile)
	for _, e := range done {
		log.Warn("journal: a write left in flight by a stopped bookbot was settled by listing bookings",
			"seq", e.Seq, "op", string(e.Op), "outcome", string(e.Outcome), "booking_id", cmp.Or(e.BookingID, e.Created))
	}
	if err != nil {
		return fmt.Errorf("write journal: settling writes left in flight: %w", err)
	}
	return nil
}

// firstOf is the first of ids, "" when there is none.
func firstOf(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}
