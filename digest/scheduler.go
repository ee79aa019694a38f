package digest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/robfig/cron/v3"
)

// Scheduler runs a Runner on a cron schedule evaluated in a zone; each
// firing posts the digest of Tomorrow(now). The ledger is what makes the
// post exactly-once per date; the scheduler only avoids pointless overlap.
type Scheduler struct {
	spec  string
	sched cron.Schedule
	zone  *time.Location
	r     *Runner
	log   *slog.Logger
	cron  *cron.Cron

	// now is the clock for "today", "tomorrow" and the catch-up decision:
	// the Runner's clock, so tests move one fake clock for both.
	now func() time.Time

	jobMu sync.Mutex     // one digest run at a time: firings and the catch-up
	wg    sync.WaitGroup // the catch-up and settle goroutines

	mu      sync.Mutex
	started bool
	ctx     context.Context // jobs run in it; cancelled when Stop gives up waiting
	cancel  context.CancelFunc
	quit    chan struct{} // closed by Stop: a settle still waiting does not start
}

// NewScheduler parses spec (5 cron fields, or a descriptor such as @daily or
// @every 1h) for zone (nil: UTC; it should be r.Zone, the zone "tomorrow"
// is built in) and returns a scheduler for r. log nil discards.
func NewScheduler(spec string, zone *time.Location, r *Runner, log *slog.Logger) (*Scheduler, error) {
	if r == nil {
		return nil, errors.New("digest: scheduler has no runner")
	}
	if err := r.check(true); err != nil {
		return nil, err
	}
	zone = zoneOr(zone)
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	spec = strings.TrimSpace(spec)
	sched, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("digest schedule %q: %w (want 5 cron fields such as \"0 17 * * *\", or @daily, @every 1h)", spec, err)
	}
	s := &Scheduler{spec: spec, sched: sched, zone: zone, r: r, log: log, now: r.now}
	cl := cronLogger{log}
	s.cron = cron.New(
		cron.WithLocation(zone),
		cron.WithLogger(cl),
		// Recover keeps a panicking run from taking the bot down; Skip
		// drops a firing while the previous run is still going.
		cron.WithChain(cron.Recover(cl), cron.SkipIfStillRunning(cl)),
	)
	s.cron.Schedule(sched, cron.FuncJob(func() { s.runOnce("schedule") }))
	return s, nil
}

// Start starts the schedule and logs the next run time. If a scheduled time
// earlier today (local) was missed, because the process was not running,
// and tomorrow's digest is not in the ledger, it posts it now (catch-up, in
// the background; Stop waits for it). Jobs run in a context that keeps
// ctx's values but not its cancellation: Stop ends them.
func (s *Scheduler) Start(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return errors.New("digest: scheduler already started")
	}
	s.started = true
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	s.quit = make(chan struct{})

	now := s.now().In(s.zone)
	s.log.Info("digest scheduled", slog.String("schedule", s.spec), slog.String("zone", s.zone.String()),
		slog.String("channel", s.r.Channel), slog.Time("next_run", s.sched.Next(now)))

	if missed, ok := s.missedToday(now); ok {
		day := Tomorrow(now, s.zone)
		lctx, cancel := context.WithTimeout(s.ctx, ledgerTimeout)
		st, err := s.r.Ledger.Status(lctx, Key(day))
		cancel()
		switch {
		case err != nil:
			s.log.Error("digest catch-up: reading the ledger failed", slog.Any("err", err))
		case st.State == StateNone:
			s.log.Info("digest catch-up: a scheduled run was missed today, posting now",
				slog.Time("missed", missed), slog.String("date", dateKey(day)))
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.runOnce("catch-up")
			}()
		case st.State == StateClaimed && s.r.Finder != nil:
			// A run that did not finish: once its post has surely ended,
			// the channel tells whether it went out.
			wait := max(st.ClaimedAt.Add(SettleAfter).Sub(now), 0)
			s.log.Info("digest catch-up: a run that did not finish left the date claimed; looking in the channel",
				slog.String("date", dateKey(day)), slog.Duration("in", wait))
			quit := s.quit
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				if wait > 0 {
					t := time.NewTimer(wait)
					defer t.Stop()
					select {
					case <-quit:
						return
					case <-t.C:
					}
				}
				s.runOnce("settle")
			}()
		default:
			s.log.Debug("digest catch-up not needed", slog.String("date", dateKey(day)), slog.String("state", st.State.String()))
		}
	}
	s.cron.Start()
	return nil
}

// missedToday returns the first scheduled time of today (local) that is not
// after now, if there is one. An @every schedule counts from local midnight
// here, as if the process had been running all day.
func (s *Scheduler) missedToday(now time.Time) (time.Time, bool) {
	midnight := DayStart(now, s.zone)
	first := s.sched.Next(midnight.Add(-time.Second)) // Next is strictly after; midnight itself counts
	if first.IsZero() || first.After(now) || !first.Before(Tomorrow(now, s.zone)) {
		return time.Time{}, false
	}
	return first, true
}

// Stop stops the schedule and waits for a running job, bounded by ctx; when
// ctx ends first the job's context is cancelled and ctx's error returned.
func (s *Scheduler) Stop(ctx context.Context) error {
	s.mu.Lock()
	if s.quit != nil {
		select {
		case <-s.quit:
		default:
			close(s.quit)
		}
	}
	s.mu.Unlock()
	cronDone := s.cron.Stop()
	done := make(chan struct{})
	go func() {
		<-cronDone.Done()
		s.wg.Wait()
		close(done)
	}()
	s.mu.Lock()
	cancel := s.cancel
	s.mu.Unlock()
	if cancel == nil {
		cancel = func() {}
	}
	select {
	case <-done:
		cancel()
		return nil
	case <-ctx.Done():
		cancel()
		return ctx.Err()
	}
}

// Next is the next scheduled run after now.
func (s *Scheduler) Next() time.Time { return s.sched.Next(s.now().In(s.zone)) }

// runOnce posts tomorrow's digest once, unless a run is already going.
func (s *Scheduler) runOnce(trigger string) {
	if !s.jobMu.TryLock() {
		s.log.Warn("digest run still in progress; skipping", slog.String("trigger", trigger))
		return
	}
	defer s.jobMu.Unlock()
	s.mu.Lock()
	ctx := s.ctx
	s.mu.Unlock()
	if ctx == nil {
		ctx = context.Background()
	}

	day := Tomorrow(s.now(), s.zone)
	log := s.log.With(slog.String("trigger", trigger), slog.String("date", dateKey(day)))
	res, err := s.r.Run(ctx, day)
	switch {
	case errors.Is(err, ErrAlreadyPosted):
		log.Debug("digest already posted", slog.Any("detail", err))
	case err != nil:
		log.Error("digest run failed", slog.Any("err", err))
	case res.Skipped:
		log.Info("digest run: empty day recorded without a message")
	default:
		log.Info("digest run: posted", slog.Int("entries", res.Entries))
	}
}

// cronLogger sends cron's logging to slog: its routine chatter at debug,
// skipped firings at warn, errors (and recovered panics) at error.
type cronLogger struct{ log *slog.Logger }

func (l cronLogger) Info(msg string, kv ...any) {
	if msg == "skip" {
		l.log.Warn("digest firing skipped: the previous run is still going")
		return
	}
	l.log.Debug("cron: "+msg, kv...)
}

func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.log.Error("cron: "+msg, append([]any{slog.Any("err", err)}, kv...)...)
}
