package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/cmd/internal/app"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/store"
)

// digestReadTimeout bounds all of `bookbot digest`'s reads of the booking
// API together, retries included. Without it a hung API holds the command
// for every attempt's own timeout in turn, minutes in all. A variable so
// that a test can shorten it.
var digestReadTimeout = 30 * time.Second

// errBookingSlow is the cause of a read cut off by digestReadTimeout.
var errBookingSlow = errors.New("the booking API did not answer in time")

// deadlineSource is a digest.Source whose reads all end by one deadline.
type deadlineSource struct {
	src      digest.Source
	deadline time.Time
}

func (s deadlineSource) Bookings(ctx context.Context) ([]booking.Booking, error) {
	ctx, cancel := context.WithDeadlineCause(ctx, s.deadline, errBookingSlow)
	defer cancel()
	list, err := s.src.Bookings(ctx)
	return list, s.cause(ctx, err)
}

func (s deadlineSource) EventTypes(ctx context.Context) ([]booking.EventType, error) {
	ctx, cancel := context.WithDeadlineCause(ctx, s.deadline, errBookingSlow)
	defer cancel()
	types, err := s.src.EventTypes(ctx)
	return types, s.cause(ctx, err)
}

// cause marks an error as errBookingSlow when the deadline, not the caller
// or the API, ended the read; the client's error stays wrapped beneath, so
// the digest's failure notice still reads as a timeout.
func (s deadlineSource) cause(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errBookingSlow) {
		return fmt.Errorf("%w: %w", errBookingSlow, err)
	}
	return err
}

// runDigest builds the next-day digest once and posts it, or prints it with
// -dry-run. Posting goes through the same exactly-once ledger as the
// schedule, so an overlapping manual run never posts a date twice.
func runDigest(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("digest", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dryRun := fs.Bool("dry-run", false, "print the digest instead of posting it")
	date := fs.String("date", "", "the day to build, YYYY-MM-DD (default: tomorrow in DIGEST_TIMEZONE)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("digest: unexpected argument %q", fs.Arg(0))
	}
	need := config.NeedBooking
	if !*dryRun {
		need |= config.NeedSlack
	}
	cfg, err := config.Load(getenv, need)
	if err != nil {
		return err
	}
	if err := embeddedOnly(cfg, "digest"); err != nil {
		return err
	}
	if !*dryRun && cfg.DigestChannel == "" {
		return errors.New("digest: DIGEST_CHANNEL is not set; set it, or use -dry-run to print the digest")
	}
	log := app.NewLogger(cfg, stderr)
	cfg.LogWarnings(log)
	// The event types kept beside a `bookbot run` name the bookings the
	// list shows without one, as in the digest it posts.
	var (
		st    store.State
		types booking.TypeStore
	)
	if *dryRun {
		// A preview keeps nothing, and goes without them when the state
		// cannot be read.
		o := stateOf(cfg, store.ReadOnly)
		o.Log = log
		if st, err = store.Open(ctx, o); err == nil {
			defer st.Close()
			types = previewTypes{st.Types}
		}
	} else {
		// Beside a `bookbot run` on the same state directory: the ledger
		// is claimed per date in the file they share.
		o := stateOf(cfg, store.Beside)
		o.Log = log
		if st, err = store.Open(ctx, o); err != nil {
			return fmt.Errorf("digest: %w", err)
		}
		defer st.Close()
		types = st.Types
	}
	bk, err := app.NewBookingClient(cfg, version, log, booking.WithCalendar(booking.Owner, booking.Owner), booking.WithTypeStore(types))
	if err != nil {
		return err
	}
	var (
		api    *slack.Client
		ledger digest.Ledger
	)
	if !*dryRun {
		api, ledger = app.NewSlack(cfg, slackCallTimeout), st.Ledger
	}
	runner := app.NewDigestRunner(cfg, bk, api, ledger, log)
	day := digest.Tomorrow(time.Now(), cfg.DigestZone)
	if *date != "" {
		if day, err = digest.ParseDate(*date, cfg.DigestZone); err != nil {
			return fmt.Errorf("digest: -date: %w", err)
		}
	}

	// The bound starts here, with the first read.
	runner.Source = deadlineSource{src: bk, deadline: time.Now().Add(digestReadTimeout)}
	if *dryRun {
		d, err := runner.Preview(ctx, day)
		if errors.Is(err, errBookingSlow) {
			return fmt.Errorf("digest: the booking API did not answer within %v (all reads and their retries together); no digest was built. Check BOOKING_BASE_URL and the API's status, then run bookbot digest again", digestReadTimeout)
		}
		if err != nil {
			return fmt.Errorf("digest: %w", err)
		}
		fmt.Fprint(stdout, d.Text(cfg.DigestIncludeEmails))
		return nil
	}
	res, err := runner.Run(ctx, day)
	switch {
	case errors.Is(err, digest.ErrAlreadyPosted):
		fmt.Fprintf(stdout, "The digest for %s was already posted; not posting it again.\n", digest.DayTitle(day, cfg.DigestZone))
		return nil
	case errors.Is(err, errBookingSlow):
		return fmt.Errorf("digest: the booking API did not answer within %v (all reads and their retries together); the digest for %s was not posted. Check BOOKING_BASE_URL and the API's status, then run bookbot digest again", digestReadTimeout, digest.DayTitle(day, cfg.DigestZone))
	case err != nil:
		return fmt.Errorf("digest: %w", err)
	case res.Skipped:
		fmt.Fprintf(stdout, "No bookings on %s; nothing posted (DIGEST_SKIP_EMPTY).\n", digest.DayTitle(day, cfg.DigestZone))
	default:
		fmt.Fprintf(stdout, "Posted the digest for %s to %s: %d bookings.\n", digest.DayTitle(day, cfg.DigestZone), cfg.DigestChannel, res.Entries)
	}
	return nil
}

// previewTypes reads the event types kept and keeps none.
type previewTypes struct{ booking.TypeStore }

func (previewTypes) Keep(context.Context, string, []booking.KeptType) error { return nil }
