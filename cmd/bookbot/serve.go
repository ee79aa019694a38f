package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/digest"
)

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
	if err := refuseDryRun(cfg); err != nil {
		return err
	}
	log := newLogger(cfg, stderr)
	bk, err := newBookingClient(cfg, log)
	if err != nil {
		return err
	}
	api := newSlack(cfg)
	auth, err := api.AuthTestContext(ctx)
	if err != nil {
		return fmt.Errorf("slack refused SLACK_BOT_TOKEN (auth.test: %s); check the bot token and that the app is installed", slackReason(err))
	}
	log.Info("bookbot starting", "version", version, "team", auth.Team, "bot", auth.User, "command", cfg.Command, "allowed_users", len(cfg.AllowedUsers), "allow_all", cfg.AllowAll)

	runner, err := newDigestRunner(cfg, bk, api, log)
	if err != nil {
		return err
	}
	b := bot.New(bot.Config{
		Command:       cfg.Command,
		Allowed:       cfg.Allowed,
		TeamID:        auth.TeamID,
		Digest:        runner,
		DigestZone:    cfg.DigestZone,
		IncludeEmails: cfg.DigestIncludeEmails,
		Log:           log,
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

	client := socketmode.New(api)
	err = b.Run(ctx, client, drainTimeout)
	log.Info("bookbot stopped")
	return err
}

// refuseDryRun stops a person who asked for a dry run from getting real
// bookings: this build has no dry-run mode yet.
func refuseDryRun(cfg *config.Config) error {
	if cfg.DryRun {
		return errors.New("BOOKBOT_DRY_RUN=true is not supported by this build; refusing to start, so that nothing is booked or cancelled by mistake")
	}
	return nil
}

func newLogger(cfg *config.Config, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}

func newBookingClient(cfg *config.Config, log *slog.Logger) (*booking.Client, error) {
	return booking.NewClient(cfg.BookingBaseURL, cfg.BookingKey,
		booking.WithLogger(log), booking.WithUserAgent("bookbot/"+version))
}

func newSlack(cfg *config.Config) *slack.Client {
	return slack.New(cfg.SlackBotToken.Value(),
		slack.OptionAPIURL(cfg.SlackAPIURL),
		slack.OptionAppLevelToken(cfg.SlackAppToken.Value()))
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
