package app

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/digest"
)

// NewLogger is the logger every command logs to w with: LOG_FORMAT and
// LOG_LEVEL.
func NewLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

// NewBookingClient is the booking client every command uses, telling the
// API it is bookbot at version; opts add to (or override) its defaults.
func NewBookingClient(cfg *config.Config, version string, log *slog.Logger, opts ...booking.Option) (*booking.Client, error) {
	return booking.NewClient(cfg.BookingBaseURL, cfg.BookingKey,
		append([]booking.Option{booking.WithLogger(log), booking.WithUserAgent("bookbot/" + version)}, opts...)...)
}

// NewSlack is the Slack client every command uses; opts add to (or
// override) its defaults. Each Web API call times out after timeout; an
// HTTP client given in opts must do the same.
func NewSlack(cfg *config.Config, timeout time.Duration, opts ...slack.Option) *slack.Client {
	return slack.New(cfg.SlackBotToken.Value(),
		append([]slack.Option{
			slack.OptionAPIURL(cfg.SlackAPIURL),
			slack.OptionAppLevelToken(cfg.SlackAppToken.Value()),
			slack.OptionHTTPClient(&http.Client{Timeout: timeout}),
		}, opts...)...)
}

// slackConnsPerHost is how many connections the Slack transport opens, and
// keeps idle, to each host. A burst of people opening the booking form at
// once makes as many views.open calls: with net/http's default of two idle
// connections all but two would dial, and handshake, anew. A burst of 300
// replies to response URLs takes turns on them rather than dialling 300
// connections (each a TLS handshake with Slack) for a few milliseconds
// each.
const slackConnsPerHost = 64

// newSlackTransport is the transport of every call to Slack, Web API and
// response URLs: net/http's default, with slackConnsPerHost connections a
// host, pooled apart from the other clients', so that they do not wait on
// each other's pool.
func newSlackTransport() http.RoundTripper {
	t, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport // replaced, say by instrumentation: keep it
	}
	t = t.Clone()
	t.MaxIdleConnsPerHost = slackConnsPerHost
	t.MaxConnsPerHost = slackConnsPerHost
	return t
}

// NewDigestRunner wires the digest to the booking API, Slack and the
// ledger that keeps it to one post a date. api nil (a dry run) and ledger
// nil (no DIGEST_CHANNEL) post nothing.
func NewDigestRunner(cfg *config.Config, bk *booking.Client, api *slack.Client, ledger digest.Ledger, log *slog.Logger) *digest.Runner {
	var src digest.Source
	if bk != nil {
		src = bk
	}
	r := &digest.Runner{
		Source:        src,
		Channel:       cfg.DigestChannel,
		Zone:          cfg.DigestZone,
		IncludeEmails: cfg.DigestIncludeEmails,
		SkipEmpty:     cfg.DigestSkipEmpty,
		Ledger:        ledger,
		Log:           log,
	}
	if api != nil {
		r.Publisher, r.Finder = &bot.SlackDigestPublisher{Slack: api}, bot.SlackFinder{Slack: api}
	}
	return r
}

// recoverWrites settles the writes a previous process left in flight, by
// listing bookings; the bot then reports them for review.
func recoverWrites(ctx context.Context, jr journal.Store, reconcile func(context.Context, booking.Write) *booking.Result, log *slog.Logger) error {
	done, err := jr.Recover(ctx, reconcile)
	for _, e := range done {
		log.Warn("journal: a write left in flight by a stopped bookbot was settled by listing bookings",
			"seq", e.Seq, "op", string(e.Op), "outcome", string(e.Outcome), "booking_id", cmp.Or(e.BookingID, e.Created))
	}
	if err != nil {
		return fmt.Errorf("write journal: settling writes left in flight: %w", err)
	}
	return nil
}

// settleLeftBehind settles, every minute, the writes that replicas which
// died left in flight, and puts them in front of a person through the
// review queue.
func settleLeftBehind(ctx context.Context, jr journal.Store, reconcile func(context.Context, booking.Write) *booking.Result, log *slog.Logger) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		if err := recoverWrites(ctx, jr, reconcile, log); err != nil && ctx.Err() == nil {
			log.Warn("journal: writes left behind could not be settled; tried again in a minute", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pruneJournal deletes the journal's settled entries older than keep (0:
// none) on the clock now (nil: the machine's), now and then daily until
// ctx ends, so the file stops growing.
func pruneJournal(ctx context.Context, jr journal.Store, keep time.Duration, now func() time.Time, log *slog.Logger) {
	if keep <= 0 {
		return
	}
	if now == nil {
		now = time.Now
	}
	t := time.NewTicker(24 * time.Hour)
	defer t.Stop()
	for {
		n, err := jr.Prune(now().Add(-keep))
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

// typesKeptPastEnd is how long after a booking's end, as last listed, its
// event type is kept: its attendee may have moved it to a later time where
// no list showed it (beyond the first MaxListed, or while bookbot was
// stopped), up to the API's slot window of 14 days ahead, and a list
// showing it there needs the event type still.
const typesKeptPastEnd = 15 * 24 * time.Hour

// pruneTypes forgets the event types kept of bookings that ended more than
// typesKeptPastEnd ago on the clock now (nil: the machine's), now and then
// daily until ctx ends.
func pruneTypes(ctx context.Context, types booking.TypeStore, now func() time.Time, log *slog.Logger) {
	if now == nil {
		now = time.Now
	}
	t := time.NewTicker(24 * time.Hour)
	defer t.Stop()
	for {
		if err := types.Prune(ctx, now().Add(-typesKeptPastEnd)); err != nil && ctx.Err() == nil {
			log.Warn("event types: those of bookings that ended long ago could not be pruned; they are tried again tomorrow", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
