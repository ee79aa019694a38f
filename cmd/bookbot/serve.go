package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/cmd/bookbot/internal/metrics"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/statedir"
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
	if err := embeddedOnly(cfg, "run"); err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	cfg.LogWarnings(log)
	// The embedded store serves one process: a second one would settle
	// this one's writes in flight as abandoned.
	lock, err := statedir.Acquire(cfg.StateDir)
	if err != nil {
		if _, held := errors.AsType[*statedir.LockedError](err); held {
			return err
		}
		return fmt.Errorf("state directory (BOOKBOT_STATE_DIR %s): %w", cfg.StateDir, err)
	}
	defer lock.Release()
	m := metrics.New()
	stopHTTP, err := startHTTP(cfg.HTTPAddr, m.Handler(), log)
	if err != nil {
		return err
	}
	defer stopHTTP()
	jr, err := openJournal(cfg, log)
	if err != nil {
		return err
	}
	jr.Owner = lock.Owner
	m.SetAwaitingReview(jr.AwaitingReview)
	writes := []booking.Option{booking.WithObserver(m), booking.WithJournal(jr)}
	if cfg.DryRun {
		writes = append(writes, booking.WithDryRun())
		log.Warn("dry run: bookings and cancellations are not sent to the booking API (BOOKBOT_DRY_RUN=true)")
	}
	bk, err := newBookingClient(cfg, log, writes...)
	if err != nil {
		return err
	}
	if err := recoverWrites(ctx, jr, bk, log); err != nil {
		return err
	}
	go pruneJournal(ctx, jr, cfg.JournalKeep, log)
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

	people, err := personal.OpenBolt(filepath.Join(cfg.StateDir, personal.BoltFileName))
	if err != nil {
		return fmt.Errorf("reminder and agenda settings (BOOKBOT_STATE_DIR %s): %w", cfg.StateDir, err)
	}
	var reminders *personal.Runner
	runner, err := newDigestRunner(cfg, bk, api, log)
	if err != nil {
		return err
	}
	runner.Observe = m.DigestRun
	b := bot.New(bot.Config{
		Command:       cfg.Command,
		Allowed:       cfg.Allowed,
		TeamID:        auth.TeamID,
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
		Personal:      people,
		// Set before the bot runs: reminders starts below.
		PersonalChanged: func() { reminders.Wake() },
	}, bk, api)

	if cfg.DigestChannel != "" {
		sched, err := digest.NewScheduler(cfg.DigestSchedule, cfg.DigestZone, runner, log)
		if err != nil {
			return err
		}
		if err := sched.Start(ctx); err != nil {
			return err
		}
		defer func() {
			stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), drainTimeout)
			defer cancel()
			_ = sched.Stop(stop)
		}()
	} else {
		log.Info("digest off: DIGEST_CHANNEL is not set")
	}

	stopNotices, err := startNotices(ctx, cfg, bk, api, b, jr, m, log)
	if err != nil {
		return err
	}
	defer stopNotices()

	reminders, stopPersonal := startPersonal(ctx, cfg, bk, people, b, m, log)
	defer stopPersonal()

	stopWatch := m.WatchSocket(ctx, socketUnhealthyAfter, log)
	defer stopWatch()
	client := socketmode.New(api)
	err = b.Run(ctx, client, drainTimeout)
	log.Info("bookbot stopped")
	return err
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

// newDigestRunner wires the digest to the booking API and Slack. The runner
// also serves `/booking digest` previews, so it exists even when the
// schedule is off.
func newDigestRunner(cfg *config.Config, bk *booking.Client, api *slack.Client, log *slog.Logger) (*digest.Runner, error) {
	r := &digest.Runner{
		Source:        bk,
		Channel:       cfg.DigestChannel,
		Zone:          cfg.DigestZone,
		IncludeEmails: cfg.DigestIncludeEmails,
		SkipEmpty:     cfg.DigestSkipEmpty,
		Log:           log,
	}
	if api != nil {
		r.Publisher = &bot.SlackDigestPublisher{Slack: api}
	}
	if cfg.DigestChannel != "" {
		ledger, err := digest.OpenLedger(cfg.StateDir)
		if err != nil {
			return nil, fmt.Errorf("digest state (BOOKBOT_STATE_DIR %s): %w", cfg.StateDir, err)
		}
		r.Ledger = ledger
	}
	return r, nil
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

// startNotices starts the watcher of live notices when a notice channel is
// set; the returned stop waits for a read in progress to finish.
func startNotices(ctx context.Context, cfg *config.Config, bk *booking.Client, api *slack.Client, alerter notices.Alerter, jr *journal.Journal, m *metrics.Recorder, log *slog.Logger) (stop func(), err error) {
	if cfg.NotifyChannel == "" && len(cfg.NotifyRoutes) == 0 {
		log.Info("notices off: NOTIFY_CHANNEL is not set")
		return func() {}, nil
	}
	store, err := notices.OpenBolt(filepath.Join(cfg.StateDir, notices.BoltFileName))
	if err != nil {
		return nil, fmt.Errorf("notices state (BOOKBOT_STATE_DIR %s): %w", cfg.StateDir, err)
	}
	w := notices.NewWatcher(notices.Config{
		List:      bk,
		Store:     store,
		Publisher: bot.SlackNoticePublisher{Slack: api, Zone: cfg.DigestZone, IncludeEmails: cfg.NotifyIncludeEmails},
		Alerter:   alerter,
		Writes:    jr,
		Metrics:   m,
		Channel:   cfg.NotifyChannel,
		Routes:    cfg.NotifyRoutes,
		Interval:  cfg.NotifyInterval,
		Log:       log,
	})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = w.Run(ctx)
	}()
	log.Info("notices on", "channel", cfg.NotifyChannel, "routes", len(cfg.NotifyRoutes), "interval", cfg.NotifyInterval.String())
	return func() { cancel(); <-done }, nil
}

// startPersonal starts sending reminders and agendas; the returned stop
// waits for a look under way to finish.
func startPersonal(ctx context.Context, cfg *config.Config, bk *booking.Client, store personal.Store, b *bot.Bot, m *metrics.Recorder, log *slog.Logger) (r *personal.Runner, stop func()) {
	r = personal.NewRunner(personal.Config{
		List: bk, Store: store, Send: b, Zones: b, Allowed: cfg.Allowed, Metrics: m, Log: log,
	})
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = r.Run(ctx)
	}()
	return r, func() { cancel(); <-done }
}

// openJournal opens the write journal under BOOKBOT_STATE_DIR.
func openJournal(cfg *config.Config, log *slog.Logger) (*journal.Journal, error) {
	jr, err := journal.Open(cfg.StateDir, journal.Options{})
	if err != nil {
		return nil, fmt.Errorf("write journal (BOOKBOT_STATE_DIR %s): %w", cfg.StateDir, err)
	}
	jr.Log = log
	return jr, nil
}

// pruneJournal deletes the journal's settled entries older than keep (0:
// none), now and then daily until ctx ends, so the file stops growing.
func pruneJournal(ctx context.Context, jr *journal.Journal, keep time.Duration, log *slog.Logger) {
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
func recoverWrites(ctx context.Context, jr *journal.Journal, bk *booking.Client, log *slog.Logger) error {
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
