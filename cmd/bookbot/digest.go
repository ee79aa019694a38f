package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/digest"
)

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
	if !*dryRun && cfg.DigestChannel == "" {
		return errors.New("digest: DIGEST_CHANNEL is not set; set it, or use -dry-run to print the digest")
	}
	log := newLogger(cfg, stderr)
	cfg.LogWarnings(log)
	bk, err := newBookingClient(cfg, log)
	if err != nil {
		return err
	}
	var runner *digest.Runner
	if *dryRun {
		runner, err = newDigestRunner(cfg, bk, nil, log)
	} else {
		runner, err = newDigestRunner(cfg, bk, newSlack(cfg), log)
	}
	if err != nil {
		return err
	}
	day := digest.Tomorrow(time.Now(), cfg.DigestZone)
	if *date != "" {
		if day, err = digest.ParseDate(*date, cfg.DigestZone); err != nil {
			return fmt.Errorf("digest: -date: %w", err)
		}
	}

	if *dryRun {
		d, err := runner.Preview(ctx, day)
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
	case err != nil:
		return fmt.Errorf("digest: %w", err)
	case res.Skipped:
		fmt.Fprintf(stdout, "No bookings on %s; nothing posted (DIGEST_SKIP_EMPTY).\n", digest.DayTitle(day, cfg.DigestZone))
	default:
		fmt.Fprintf(stdout, "Posted the digest for %s to %s: %d bookings.\n", digest.DayTitle(day, cfg.DigestZone), cfg.DigestChannel, res.Entries)
	}
	return nil
}
