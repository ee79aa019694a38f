package digest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/outbox"
)

// Source is where bookings come from. *booking.Client satisfies it.
type Source interface {
	Bookings(ctx context.Context) ([]booking.Booking, error)
	EventTypes(ctx context.Context) ([]booking.EventType, error)
}

// Publisher posts digests. Package bot implements it for Slack.
//
// A publisher that cannot tell whether a post reached the channel (a
// timeout after sending, or a digest split into several messages of which
// some were sent) returns an error matching ErrMaybePosted; the Runner then
// records the date as posted instead of trying it again.
type Publisher interface {
	PublishDigest(ctx context.Context, channel string, d Digest, includeEmails bool) error
	// PublishFailure posts a short notice that the digest of day could not
	// be built. reason is a short, safe phrase: no secrets or stack traces.
	PublishFailure(ctx context.Context, channel string, day time.Time, zone *time.Location, reason string) error
}

// SettleAfter is how long after its claim a date no run finished is looked
// for in the channel: by then the run that claimed it has ended
// (runTimeout, then ledgerTimeout), in whichever process made it, with
// half a minute to spare for clocks that disagree.
const SettleAfter = runTimeout + ledgerTimeout + 30*time.Second

// TSPublisher is a Publisher that also reports the timestamp of the (first)
// message it posted, which the ledger keeps.
type TSPublisher interface {
	PublishDigestTS(ctx context.Context, channel string, d Digest, includeEmails bool) (ts string, err error)
}

var (
	// ErrAlreadyPosted means the ledger has the date: posted, being posted
	// by another run, or claimed by a run that died (see Ledger).
	ErrAlreadyPosted = errors.New("digest: already posted for this date")
	// ErrMaybePosted means the digest may have reached the channel, fully
	// or in part, so it must not be posted again.
	ErrMaybePosted = errors.New("digest: the post may have reached the channel")
	// ErrDayOver means the day has ended: the booking API lists only
	// upcoming bookings, so its digest cannot be built.
	ErrDayOver = errors.New("digest: the day is over and the booking API lists only upcoming bookings")
)

// runTimeout bounds one Run, well below DefaultStaleAfter, so a live run
// never holds a claim long enough for it to look abandoned.
const runTimeout = 4 * time.Minute

// noticeTimeout bounds posting a failure notice after the run's own
// deadline may have passed.
const noticeTimeout = 30 * time.Second

// ledgerTimeout bounds a call that records in the ledger how a run ended.
// Such a call ignores the run's cancellation (see afterwards), so that a
// post that went out is recorded, and a claim released, during a
// shutdown too.
const ledgerTimeout = 30 * time.Second

// afterwards makes a ledger call that records how a run ended, on a context
// with ctx's values, not its cancellation, and a deadline of its own.
func afterwards(ctx context.Context, call func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ledgerTimeout)
	defer cancel()
	return call(ctx)
}

// Runner builds and posts the digest of one day.
type Runner struct {
	Source    Source
	Publisher Publisher
	Ledger    Ledger // NewLedger, over the store's outbox
	// Finder, when set, settles a date no run finished (see SettleAfter)
	// by finding its digest's first message, which carries the date's Key;
	// without it such a date is never posted again.
	Finder outbox.Finder

	Channel       string
	Zone          *time.Location // nil: UTC
	IncludeEmails bool           // show attendee emails in the channel
	SkipEmpty     bool           // record an empty day as posted without a message

	Now func() time.Time // nil: time.Now
	Log *slog.Logger     // nil: discarded

	// Observe, when set, is told how each Run ended: "posted",
	// "already_posted", "skipped_empty" or "failed". It must be quick.
	Observe func(result string)
}

// Result is what a Run did.
type Result struct {
	Day     time.Time // local midnight of the day
	Posted  bool      // a digest was posted
	Skipped bool      // the day was empty and SkipEmpty is set: recorded, not posted
	Entries int
}

// Run builds and posts the digest for day once (day's calendar date in its
// own location, in r.Zone).
//
// It returns ErrAlreadyPosted when the ledger has the day. When the
// bookings cannot be read (after the client's own read retries) it posts a
// failure notice (once per date), releases the claim so a later firing can
// still post the real digest, and returns the error. With SkipEmpty an
// empty day is recorded as posted without a message. Event types failing to
// load do not stop the digest: it shows slugs instead of titles.
func (r *Runner) Run(ctx context.Context, day time.Time) (Result, error) {
	res, err := r.run(ctx, day)
	if r.Observe != nil {
		r.Observe(runResult(res, err))
	}
	return res, err
}

// runResult names how a Run ended, for Observe.
func runResult(res Result, err error) string {
	switch {
	case errors.Is(err, ErrAlreadyPosted):
		return "already_posted"
	case err != nil:
		return "failed"
	case res.Skipped:
		return "skipped_empty"
	}
	return "posted"
}

func (r *Runner) run(ctx context.Context, day time.Time) (Result, error) {
	if err := r.check(true); err != nil {
		return Result{}, err
	}
	zone := zoneOr(r.Zone)
	day = DayStart(day, zone)
	res := Result{Day: day}
	log := r.log().With(slog.String("date", dateKey(day)), slog.String("zone", zone.String()))
	if err := r.checkDay(day, zone); err != nil {
		return res, err
	}

	runCtx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()

	ok, err := r.Ledger.Claim(runCtx, Key(day))
	if err != nil {
		return res, err
	}
	if !ok {
		st, err := r.Ledger.Status(runCtx, Key(day))
		if err != nil {
			return res, err
		}
		if ok, err = r.settle(runCtx, day, st, log); err != nil {
			return res, err
		}
		if !ok {
			log.Debug("digest already in the ledger", slog.String("state", st.State.String()), slog.Bool("stale_claim", st.Stale))
			return res, fmt.Errorf("%w (%s: %s)", ErrAlreadyPosted, dateKey(day), describe(st))
		}
	}

	d, err := r.build(runCtx, day, zone, log)
	if err != nil {
		r.release(ctx, day, log)
		if ctx.Err() == nil { // not a shutdown: people should know
			r.notifyFailure(ctx, day, zone, err, log)
		}
		return res, fmt.Errorf("digest for %s: %w", dateKey(day), err)
	}
	res.Entries = len(d.Entries)
	info := PostInfo{Channel: r.Channel, Entries: len(d.Entries), Empty: len(d.Entries) == 0}

	if info.Empty && r.SkipEmpty {
		info.At = r.now()
		if err := r.posted(ctx, day, info); err != nil {
			return res, err
		}
		res.Skipped = true
		log.Info("digest skipped: no bookings")
		return res, nil
	}

	ts, err := r.publish(runCtx, d)
	info.At, info.TS = r.now(), ts
	if err != nil {
		if errors.Is(err, ErrMaybePosted) {
			// Never twice: record the date as posted and have a person look.
			info.Uncertain = true
			if lerr := r.posted(ctx, day, info); lerr != nil {
				log.Error("digest: recording an uncertain post failed; the claim stays and will be treated as posted", slog.Any("err", lerr))
			}
			log.Error("digest may have been posted, or posted in part; not retrying it, check the channel",
				slog.String("channel", r.Channel), slog.Any("err", err))
			return res, fmt.Errorf("digest for %s: %w", dateKey(day), err)
		}
		r.release(ctx, day, log)
		return res, fmt.Errorf("digest for %s: posting: %w", dateKey(day), err)
	}
	res.Posted = true
	if err := r.posted(ctx, day, info); err != nil {
		// The claim stays, so this date is not posted again (it goes stale
		// and is treated as posted), but the ledger's problem needs a
		// person.
		log.Error("digest posted but not recorded", slog.Any("err", err))
		return res, fmt.Errorf("digest for %s was posted but could not be recorded: %w", dateKey(day), err)
	}
	log.Info("digest posted", slog.String("channel", r.Channel), slog.Int("entries", res.Entries),
		slog.Bool("maybe_incomplete", d.MaybeIncomplete))
	return res, nil
}

// settle settles a date whose claim no run finished: its process died
// between claiming the date and recording the post. SettleAfter its claim,
// that post has ended, and the Finder tells whether it is in the channel:
// found, it is recorded; not found, the date is claimed again for this
// run. It reports whether this run is to post the date.
func (r *Runner) settle(ctx context.Context, day time.Time, st Status, log *slog.Logger) (bool, error) {
	if r.Finder == nil || st.State != StateClaimed || r.now().Sub(st.ClaimedAt) < SettleAfter {
		return false, nil
	}
	log = log.With(slog.Time("claimed_at", st.ClaimedAt))
	found, err := r.Finder.Find(ctx, r.Channel, nil, []string{Key(day)}, st.ClaimedAt.Add(-time.Minute))
	if err != nil {
		log.Error("digest: a run that did not finish left the date claimed, and the channel could not be read to tell whether it posted; not posting it again, check the channel",
			slog.String("channel", r.Channel), slog.Any("err", err))
		return false, nil
	}
	if m, ok := found[Key(day)]; ok {
		log.Info("digest: a run that did not finish had posted the date; recorded", slog.String("ts", m.TS))
		return false, r.posted(ctx, day, PostInfo{At: r.now(), Channel: r.Channel, TS: m.TS})
	}
	log.Info("digest: a run that did not finish left the date claimed, and it is not in the channel; posting it now")
	if err := r.Ledger.Release(ctx, Key(day)); err != nil {
		return false, err
	}
	return r.Ledger.Claim(ctx, Key(day))
}

// Preview builds the digest of day without posting or recording it, for
// `/booking digest` and `bookbot digest -dry-run`.
func (r *Runner) Preview(ctx context.Context, day time.Time) (Digest, error) {
	if err := r.check(false); err != nil {
		return Digest{}, err
	}
	zone := zoneOr(r.Zone)
	day = DayStart(day, zone)
	if err := r.checkDay(day, zone); err != nil {
		return Digest{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, runTimeout)
	defer cancel()
	log := r.log().With(slog.String("date", dateKey(day)), slog.String("zone", zone.String()))
	return r.build(ctx, day, zone, log)
}

func (r *Runner) check(posting bool) error {
	switch {
	case r.Source == nil:
		return errors.New("digest: runner has no bookings source")
	case !posting:
		return nil
	case r.Publisher == nil:
		return errors.New("digest: runner has no publisher")
	case r.Ledger == nil:
		return errors.New("digest: runner has no ledger")
	case r.Channel == "":
		return errors.New("digest: runner has no channel")
	}
	return nil
}

func (r *Runner) checkDay(day time.Time, zone *time.Location) error {
	if end := (Digest{Date: day, Zone: zone}).End(); !end.After(r.now()) {
		return fmt.Errorf("%w (%s)", ErrDayOver, dateKey(day))
	}
	return nil
}

// build reads the bookings and, when the day has any with an event type,
// the event types; when those cannot be read it falls back to slugs.
func (r *Runner) build(ctx context.Context, day time.Time, zone *time.Location, log *slog.Logger) (Digest, error) {
	bookings, err := r.Source.Bookings(ctx)
	if err != nil {
		return Digest{}, fmt.Errorf("reading bookings: %w", err)
	}
	d := Build(bookings, nil, day, zone)
	needTitles := false
	for _, e := range d.Entries {
		needTitles = needTitles || e.EventKnown
	}
	if !needTitles {
		return d, nil
	}
	types, err := r.Source.EventTypes(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return Digest{}, fmt.Errorf("reading event types: %w", err)
		}
		log.Warn("event types could not be read; the digest shows event slugs instead of titles", slog.Any("err", err))
		return d, nil
	}
	return Build(bookings, types, day, zone), nil
}

func (r *Runner) publish(ctx context.Context, d Digest) (string, error) {
	if p, ok := r.Publisher.(TSPublisher); ok {
		return p.PublishDigestTS(ctx, r.Channel, d, r.IncludeEmails)
	}
	return "", r.Publisher.PublishDigest(ctx, r.Channel, d, r.IncludeEmails)
}

// posted records the post in the ledger, even when ctx was cancelled
// after it went out.
func (r *Runner) posted(ctx context.Context, day time.Time, info PostInfo) error {
	return afterwards(ctx, func(ctx context.Context) error { return r.Ledger.Posted(ctx, Key(day), info) })
}

// release drops the claim of a post that certainly failed, even when ctx
// was cancelled: otherwise the claim would go stale and the date be
// treated as posted.
func (r *Runner) release(ctx context.Context, day time.Time, log *slog.Logger) {
	if err := afterwards(ctx, func(ctx context.Context) error { return r.Ledger.Release(ctx, Key(day)) }); err != nil {
		log.Error("digest: releasing the claim failed; the date will not be retried until the claim goes stale", slog.Any("err", err))
	}
}

// notifyFailure posts the failure notice once per date. It has its own
// deadline, as the run's may be what failed.
func (r *Runner) notifyFailure(ctx context.Context, day time.Time, zone *time.Location, cause error, log *slog.Logger) {
	var ok bool
	err := afterwards(ctx, func(ctx context.Context) (err error) {
		ok, err = r.Ledger.Claim(ctx, FailureKey(day))
		return err
	})
	if err != nil {
		log.Error("digest: failure notice not sent", slog.Any("err", err))
		return
	}
	if !ok {
		log.Warn("digest could not be built; the failure notice was sent earlier", slog.Any("err", cause))
		_ = afterwards(ctx, func(ctx context.Context) error {
			_, err := r.Ledger.Status(ctx, FailureKey(day)) // logs a claim that was never completed
			return err
		})
		return
	}
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), noticeTimeout)
	defer cancel()
	reason := FailureReason(cause)
	if err := r.Publisher.PublishFailure(pctx, r.Channel, day, zone, reason); err != nil {
		log.Error("digest: posting the failure notice failed", slog.Any("err", err), slog.Any("cause", cause))
		if !errors.Is(err, ErrMaybePosted) {
			if err := afterwards(ctx, func(ctx context.Context) error { return r.Ledger.Release(ctx, FailureKey(day)) }); err != nil {
				log.Error("digest: releasing the failure notice claim failed", slog.Any("err", err))
			}
			return
		}
	}
	info := PostInfo{At: r.now(), Channel: r.Channel}
	if err := afterwards(ctx, func(ctx context.Context) error { return r.Ledger.Posted(ctx, FailureKey(day), info) }); err != nil {
		log.Error("digest: recording the failure notice failed", slog.Any("err", err))
	}
	log.Warn("digest could not be built; failure notice posted", slog.String("reason", reason), slog.Any("err", cause))
}

// FailureReason turns an error from reading bookings into a short phrase
// that is safe to post: fixed text by kind, never the error's own text,
// which may carry a response sample.
func FailureReason(err error) string {
	for _, kind := range []error{
		booking.ErrUnauthorized, booking.ErrForbidden, booking.ErrRateLimited,
		booking.ErrUnavailable, booking.ErrTimeout, booking.ErrTransport, booking.ErrBadResponse,
	} {
		if errors.Is(err, kind) {
			return kind.Error()
		}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return booking.ErrTimeout.Error()
	}
	return "the bookings could not be read"
}

func describe(st Status) string {
	switch {
	case st.State == StatePosted:
		return "posted " + st.Info.At.Format(time.RFC3339)
	case st.Stale:
		return "claimed " + st.ClaimedAt.Format(time.RFC3339) + " and never completed; treated as posted"
	}
	return "being posted since " + st.ClaimedAt.Format(time.RFC3339)
}

func (r *Runner) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Runner) log() *slog.Logger {
	if r.Log != nil {
		return r.Log
	}
	return slog.New(slog.DiscardHandler)
}
