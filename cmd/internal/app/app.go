// Package app wires bookbot's components into the bot that runs: the
// booking client, the digest runner, the Slack bot, live notices, reminders
// and agendas, and the settling of writes left behind. `bookbot run`,
// `bookbot demo` and bookbot-perf's measured bot all start it here, so the
// demo and the measurements are of the bot as it runs. What differs between
// them is given to New: the configuration (the demo's sandbox and Slack
// stand-in are URLs and tokens in it), the state, the clock, and whether
// the scheduled work runs on its timers (Run) or is driven by a console
// (Serve, NewWatcher, NewReminders).
package app

import (
	"cmp"
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/cmd/internal/metrics"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/personal"
	"github.com/bookbot/bookbot/store"
)

const (
	// SlackCallTimeout bounds every Slack Web API call, whatever its
	// context: without it a Slack that accepts a connection and never
	// answers hangs auth.test at start-up and apps.connections.open on a
	// reconnect for good. The Socket Mode WebSocket is not cut by it:
	// slack-go dials that with a dialer of its own.
	SlackCallTimeout = 10 * time.Second

	// DrainTimeout bounds how long stopping waits for bookings and cancels
	// in flight to finish and be reported.
	DrainTimeout = 30 * time.Second

	// SocketUnhealthyAfter is how long Socket Mode may stay down before
	// /healthz fails so that an orchestrator restarts bookbot: longer than
	// a reconnect when Slack asks for one (a second or two) and than
	// slack-go's first few retries of a failed connection.
	SocketUnhealthyAfter = 2 * time.Minute
)

// Deps is what New wires the bot from.
type Deps struct {
	Config *config.Config
	// State is what the bot keeps beyond the process, as store.Open opens
	// it for either backend.
	State   store.State
	Metrics *metrics.Recorder
	Log     *slog.Logger
	// Version is bookbot's, sent in the booking client's User-Agent.
	Version string
	// Now is the bot's clock, of every component; nil: the machine's. The
	// demo's :later moves it ahead, and bookbot-perf moves it to see the
	// bot's time windows close.
	Now func() time.Time
	// Sleep is every component's wait on the clock (between reads for
	// notices, before a read again, out a 429): it waits d, or less when
	// ctx ends first, and then returns ctx's error. nil: the machine's
	// timers. The end-to-end tests end a wait by moving their clock past it.
	Sleep func(ctx context.Context, d time.Duration) error

	// SlackTimeout bounds each Slack Web API call; 0: SlackCallTimeout.
	SlackTimeout time.Duration
	// Drain bounds how long stopping waits for writes in flight; 0:
	// DrainTimeout.
	Drain time.Duration
	// SocketUnhealthyAfter is how long Socket Mode may stay down before
	// /healthz fails; 0: SocketUnhealthyAfter.
	SocketUnhealthyAfter time.Duration
	// Booking adds options to every booking client, after bookbot's own:
	// a test shortens a write's wait for an answer that never comes, or
	// skips the waits between a read's retries (their number stays).
	Booking []booking.Option
}

// App is the bot wired and started up: connected to nothing yet but
// Slack's auth.test, until Run or Serve.
type App struct {
	Booking *booking.Client // the owner's; nil without BOOKING_API_KEY (own calendars only)
	// Calendars are the clients of people's own calendars.
	Calendars *booking.Calendars
	Digest    *digest.Runner // also behind `/booking digest` previews, so made even with the schedule off
	Bot       *bot.Bot
	State     store.State

	cfg   *config.Config
	m     *metrics.Recorder
	log   *slog.Logger
	now   func() time.Time
	sleep func(ctx context.Context, d time.Duration) error // nil: the machine's
	slack *slack.Client
	// slackTransport carries every call to Slack: the Web API's and
	// response URLs'.
	slackTransport http.RoundTripper
	drain          time.Duration
	down           time.Duration // SocketUnhealthyAfter

	sealer *account.Sealer // nil without BOOKBOT_SECRET_KEY
	// refusals gets the 401s of people's keys once the bot is made.
	refusals atomic.Pointer[bot.Bot]
	// accountsChanged wakes the notices of own calendars.
	accountsChanged chan struct{}
	// reconcile settles a write left in flight on its calendar.
	reconcile func(context.Context, booking.Write) *booking.Result

	// reminders is the runner of the scheduled work under way, nil when
	// none is: a save of someone's settings wakes it.
	reminders atomic.Pointer[personal.Runner]

	release *quietRelease // after a burst, once quiet
}

// AuthTestError is Slack's auth.test failing at start-up: Slack refused
// the bot token, or gave no answer.
type AuthTestError struct{ Err error }

func (e *AuthTestError) Error() string { return "slack auth.test: " + e.Err.Error() }
func (e *AuthTestError) Unwrap() error { return e.Err }

// New wires the bot: the booking client (writes journalled, observed,
// limited, not sent in a dry run), with the writes a stopped bookbot left
// in flight settled when this process holds the state alone; the Slack
// client, checked with auth.test; the digest runner; and the bot. It
// starts nothing: Run and Serve do.
func New(ctx context.Context, d Deps) (*App, error) {
	cfg, st, m, log := d.Config, d.State, d.Metrics, d.Log
	a := &App{
		State: st, cfg: cfg, m: m, log: log, now: d.Now, sleep: d.Sleep,
		drain: cmp.Or(d.Drain, DrainTimeout), down: cmp.Or(d.SocketUnhealthyAfter, SocketUnhealthyAfter),
	}
	a.release = newQuietRelease(releaseAfter, a.CloseIdleConnections)
	m.SetAwaitingReview(st.Journal.AwaitingReview)
	writes := []booking.Option{booking.WithObserver(m), booking.WithJournal(st.Journal), booking.WithTypeStore(st.Types)}
	limiter := st.Limiter
	if d.Now != nil {
		writes = append(writes, booking.WithClock(d.Now))
	}
	if d.Sleep != nil {
		writes = append(writes, booking.WithSleep(d.Sleep))
	}
	writes = append(writes, d.Booking...)
	if cfg.DryRun {
		writes = append(writes, booking.WithDryRun())
		log.Warn("dry run: bookings and cancellations are not sent to the booking API (BOOKBOT_DRY_RUN=true)")
	}
	sealer, err := NewSealer(cfg)
	if err != nil {
		return nil, err
	}
	a.Calendars = booking.NewCalendars(cfg.BookingBaseURL, limiter, a.keyRefused,
		append([]booking.Option{booking.WithLogger(log), booking.WithUserAgent("bookbot/" + d.Version)}, writes...)...)
	if !cfg.OwnCalendarsOnly() {
		bk, err := NewBookingClient(cfg, d.Version, log, append(writes, booking.WithLimiter(limiter), booking.WithCalendar(booking.Owner, booking.Owner))...)
		if err != nil {
			return nil, err
		}
		a.Booking = bk
	} else {
		log.Info("own calendars only: BOOKING_API_KEY is not set, so each person acts on the calendar they connect")
	}
	a.reconcile = reconciler(a.Booking, a.Calendars, st.Accounts, sealer, log)
	a.sealer, a.accountsChanged = sealer, make(chan struct{}, 1)
	if cfg.DatabaseURL.IsZero() {
		// One process: whatever is in flight was left by one that stopped.
		if err := recoverWrites(ctx, st.Journal, a.reconcile, log); err != nil {
			return nil, err
		}
	}
	timeout := cmp.Or(d.SlackTimeout, SlackCallTimeout)
	a.slackTransport = newSlackTransport()
	webAPI := &http.Client{Transport: m.SlackTransport(cfg.SlackAPIURL, a.slackTransport), Timeout: timeout}
	a.slack = NewSlack(cfg, timeout, slack.OptionHTTPClient(webAPI))
	auth, err := a.slack.AuthTestContext(ctx)
	if err != nil {
		return nil, &AuthTestError{Err: err}
	}
	log.Info("bookbot starting", "version", d.Version, "team", auth.Team, "bot", auth.User, "command", cfg.Command, "allowed_users", len(cfg.AllowedUsers), "allow_all", cfg.AllowAll)

	a.Digest = NewDigestRunner(cfg, a.Booking, a.slack, st.Ledger, log)
	a.Digest.Observe = m.DigestRun
	a.Digest.Now = d.Now
	a.Bot = bot.New(bot.Config{
		Command:       cfg.Command,
		Allowed:       cfg.Allowed,
		TeamID:        auth.TeamID,
		ViewKey:       bot.ViewKey(cfg.SlackAppToken.Value()),
		Digest:        a.Digest,
		DigestZone:    cfg.DigestZone,
		IncludeEmails: cfg.DigestIncludeEmails,
		Log:           log,
		Metrics:       ackWatch{m, a.release},
		DryRun:        cfg.DryRun,
		Journal:       st.Journal,
		ReviewChannel: cfg.ReviewChannel,
		Reviewers:     cfg.AllowedUsers,
		Contact:       firstOf(cfg.AllowedUsers),
		BookingPage:   cfg.BookingPage,
		JournalKeep:   cfg.JournalKeep,
		Personal:      st.Personal,
		Accounts:      st.Accounts,
		Sealer:        sealer,
		Calendars:     calendars{a.Calendars},
		IsOwnerKey:    isOwnerKey(a.Booking),
		RecentList:    recentList,
		AccountsChanged: func() {
			select {
			case a.accountsChanged <- struct{}{}:
			default:
			}
		},
		Noticed:  func(slug string) bool { return cfg.NotifyChannel != "" || cfg.NotifyRoutes[slug] != "" },
		Offers:   st.Offers,
		OfferTTL: cfg.OfferTTL,
		Steps:    bot.NewFunctionSteps(webAPI, cfg.SlackAPIURL, cfg.SlackBotToken.Value()),
		// Replicas share the offers; the embedded store is one process's.
		OffersShared: !cfg.DatabaseURL.IsZero(),
		Seen:         st.Seen,
		Outbox:       st.Outbox,
		Now:          d.Now,
		HTTPClient:   &http.Client{Transport: a.slackTransport, Timeout: timeout},
		// Reminders run where the scheduled work runs; a save on another
		// replica wakes them through the state (State.PersonalSaved).
		PersonalChanged: func() {
			if r := a.reminders.Load(); r != nil {
				r.Wake()
			}
		},
	}, ownerBooker(a.Booking), slackViews{Client: a.slack, http: webAPI, api: cfg.SlackAPIURL, token: cfg.SlackBotToken.Value()})
	a.refusals.Store(a.Bot)
	// People no longer allowed, or deactivated in Slack, keep no key.
	if err := a.Bot.PurgeAccounts(ctx, a.Bot.Deactivated); err != nil {
		log.Error("accounts: the keys of people no longer allowed could not be checked; tried again at the next start", "err", err)
	}
	return a, nil
}

// Run serves Slack until ctx ends, with the scheduled work in this process
// or on the replica that leads (State.Singleton).
func (a *App) Run(ctx context.Context) error {
	singletonCtx, stopSingleton := context.WithCancel(ctx)
	singletonDone := make(chan struct{})
	go func() {
		defer close(singletonDone)
		a.State.Singleton(singletonCtx, func(ctx context.Context) {
			a.m.SetLeader(true)
			defer a.m.SetLeader(false)
			a.scheduled(ctx)
		})
	}()
	defer func() { stopSingleton(); <-singletonDone }()
	return a.Serve(ctx)
}

// Serve serves Slack over Socket Mode until ctx ends, then drains the
// writes in flight. It runs none of the scheduled work: Run does, or a
// console that drives it.
func (a *App) Serve(ctx context.Context) error {
	stopWatch := a.m.WatchSocket(ctx, a.down, a.log)
	defer stopWatch()
	defer a.release.stop()
	return a.Bot.Run(ctx, socketmode.New(a.slack), a.drain)
}

// CloseIdleConnections closes the idle connections kept to the booking
// API and to Slack.
func (a *App) CloseIdleConnections() {
	if a.Booking != nil {
		a.Booking.CloseIdleConnections()
	}
	if a.Calendars != nil {
		a.Calendars.CloseIdleConnections()
	}
	if t, ok := a.slackTransport.(interface{ CloseIdleConnections() }); ok {
		t.CloseIdleConnections()
	}
}

// recentList is how old a bookings list, read for anyone, the notices and
// the reminders of a calendar (the owner's, and each connected one through
// bot.Config.RecentList) take rather than reading their own: half the
// reminders' look, so the two, looking at about the same moments, cost one
// read between them (booking.Recent), and neither acts on a list more than
// 15 s older than it would have read.
const recentList = personal.DefaultEvery / 2

// NewWatcher returns a watcher of the bookings list that posts live
// notices, nil when they are off. Run makes one for each term it leads.
func (a *App) NewWatcher() *notices.Watcher {
	if !a.cfg.NoticesOn() || a.Booking == nil {
		return nil
	}
	pub := bot.SlackNoticePublisher{Slack: a.slack, Zone: a.cfg.DigestZone, IncludeEmails: a.cfg.NotifyIncludeEmails, Now: a.now, Sleep: a.sleep}
	return notices.NewWatcher(notices.Config{
		List:      a.Booking.Recent(recentList),
		Store:     a.State.Notices,
		Publisher: pub,
		Finder:    bot.SlackFinder{Slack: a.slack},
		Alerter:   a.Bot,
		Writes:    writesOn(a.State.Journal, booking.Owner, booking.Owner),
		Metrics:   a.m,
		Channel:   a.cfg.NotifyChannel,
		Routes:    a.cfg.NotifyRoutes,
		Interval:  a.cfg.NotifyInterval,
		Skew:      a.Booking.Skew,
		Now:       a.now,
		Sleep:     a.sleep,
		Log:       a.log,
	})
}

// NewReminders returns the runner of people's reminders and agendas. Run
// makes one for each term it leads.
func (a *App) NewReminders() *personal.Runner {
	var owner personal.Lister
	if a.Booking != nil {
		owner = a.Booking.Recent(recentList)
	}
	return personal.NewRunner(personal.Config{
		List: owner, Calendar: a.Bot.CalendarOf,
		Store: a.State.Personal, Send: a.Bot, Zones: a.Bot, Allowed: a.cfg.Allowed, Metrics: a.m, Now: a.now, Log: a.log,
	})
}

// scheduled runs the work that must run in one process at a time until
// ctx ends, and waits for what is under way to finish: the digest
// schedule, notices, reminders, settling writes left behind and pruning
// (the journal, and the event types of bookings that ended).
func (a *App) scheduled(ctx context.Context) {
	cfg, st, log := a.cfg, a.State, a.log
	var wg sync.WaitGroup
	defer wg.Wait()
	if !cfg.DatabaseURL.IsZero() {
		// Replicas: the leader settles the writes of replicas that died.
		wg.Go(func() { settleLeftBehind(ctx, st.Journal, a.reconcile, log) })
	}
	wg.Go(func() { pruneJournal(ctx, st.Journal, cfg.JournalKeep, a.now, log) })
	wg.Go(func() { pruneTypes(ctx, st.Types, a.now, log) })
	if cfg.DigestChannel != "" {
		sched, err := digest.NewScheduler(cfg.DigestSchedule, cfg.DigestZone, a.Digest, log)
		if err == nil {
			err = sched.Start(ctx)
		}
		if err != nil {
			log.Error("digest schedule not started", "error", err)
		} else {
			defer func() {
				stop, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.drain)
				defer cancel()
				_ = sched.Stop(stop)
			}()
		}
	} else {
		log.Info("digest off: DIGEST_CHANNEL is not set")
	}
	if w := a.NewWatcher(); w != nil {
		log.Info("notices on", "channel", cfg.NotifyChannel, "routes", len(cfg.NotifyRoutes), "interval", cfg.NotifyInterval.String())
		wg.Go(func() { _ = w.Run(ctx) })
	} else {
		log.Info("notices off: NOTIFY_CHANNEL is not set")
	}
	r := a.NewReminders()
	a.reminders.Store(r)
	defer a.reminders.Store(nil)
	wg.Go(func() { _ = r.Run(ctx) })
	wg.Go(func() { st.PersonalSaved(ctx, r.Wake) })
	wg.Go(func() { a.personNotices(ctx) })
	<-ctx.Done()
}

// firstOf is the first of ids, "" when there is none.
func firstOf(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ids[0]
}
