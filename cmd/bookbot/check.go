package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/cmd/internal/app"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/store"
)

// checkTimeout bounds each network check on its own, so one hung service
// cannot hang the whole command.
const checkTimeout = 10 * time.Second

// outcome is how one check of the checklist went.
type outcome int

const (
	passed outcome = iota
	failed
	skipped
	// warned: worth a look, but not a fault of bookbot's configuration,
	// so it does not fail the command.
	warned
)

func (o outcome) mark() string {
	switch o {
	case passed:
		return "✓"
	case failed:
		return "✗"
	case warned:
		return "!"
	}
	return "–"
}

// result is one line of the checklist, with the lines under it.
type result struct {
	outcome outcome
	text    string   // what was found
	detail  []string // more about it, such as each configuration problem
	advice  string   // what to do; shown for failures and warnings only
}

func pass(format string, args ...any) result {
	return result{outcome: passed, text: fmt.Sprintf(format, args...)}
}

func fail(text, advice string) result {
	return result{outcome: failed, text: text, advice: advice}
}

func warn(text, advice string) result {
	return result{outcome: warned, text: text, advice: advice}
}

func skip(format string, args ...any) result {
	return result{outcome: skipped, text: fmt.Sprintf(format, args...)}
}

// checklist prints results as they come, so a slow check shows where it is,
// and counts them for the exit status.
type checklist struct {
	w                   io.Writer
	ran, failed, warned int
}

func (c *checklist) add(r result) {
	fmt.Fprintf(c.w, "%s %s\n", r.outcome.mark(), r.text)
	for _, d := range r.detail {
		fmt.Fprintf(c.w, "    %s\n", d)
	}
	if (r.outcome == failed || r.outcome == warned) && r.advice != "" {
		fmt.Fprintf(c.w, "    → %s\n", r.advice)
	}
	switch r.outcome {
	case skipped:
		return
	case failed:
		c.failed++
	case warned:
		c.warned++
	}
	c.ran++
}

// note prints information that is not a check.
func (c *checklist) note(format string, args ...any) {
	fmt.Fprintf(c.w, "• %s\n", fmt.Sprintf(format, args...))
}

// done prints the summary of a clean run, or returns the failure count as
// the error main prints.
func (c *checklist) done() error {
	if c.failed > 0 {
		return fmt.Errorf("%d of %d checks failed", c.failed, c.ran)
	}
	if c.warned > 0 {
		fmt.Fprintf(c.w, "No check failed; %d of %d warned (!).\n", c.warned, c.ran)
		return nil
	}
	fmt.Fprintf(c.w, "All %d checks passed.\n", c.ran)
	return nil
}

// runCheck verifies the configuration against the real services and prints
// a checklist. Nothing is booked or posted and no WebSocket is opened; the
// only write is a test file in the state directory, removed at once.
func runCheck(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("check: unexpected argument %q", fs.Arg(0))
	}
	list := &checklist{w: stdout}

	// The allow-list is asked for separately below: without it the services
	// can still be checked.
	cfg, err := config.Load(getenv, config.NeedBooking|config.NeedSlack)
	if err != nil {
		list.add(configFailure(err))
		for _, what := range []string{"allowed users", "booking API key", "booking API's clock", "bot token", "app token", "digest channel", "review channel", "state directory"} {
			list.add(skip("%s: not checked, the configuration has problems", what))
		}
		return list.done()
	}
	list.add(pass("configuration: every variable is valid"))
	for _, w := range cfg.Warnings {
		list.note("%s", w.Msg)
	}
	list.add(checkAllowList(getenv))
	if cfg.DryRun {
		list.note("BOOKBOT_DRY_RUN is on: no bookings or cancels are sent to the booking API")
	} else {
		list.note("BOOKBOT_DRY_RUN is off: bookings and cancels are sent to the booking API for real")
	}

	if cfg.SecretKey.IsZero() {
		list.note("people's own calendars off: BOOKBOT_SECRET_KEY is not set, so /booking connect tells people the operator must set it (32 random bytes, base64: openssl rand -base64 32)")
	} else {
		list.add(checkSecretKey(ctx, cfg))
	}
	if cfg.OwnCalendarsOnly() {
		list.note("own calendars only: BOOKING_API_KEY is not set, so each person acts on the calendar they connect; the digest, notices, reminders and agendas of the owner's calendar are off")
	} else {
		key, clock := checkBookingKey(ctx, cfg, secretSource(getenv, "BOOKING_API_KEY"), stderr)
		list.add(key)
		list.add(clock)
	}
	api := app.NewSlack(cfg, slackCallTimeout)
	auth, bot := checkBotToken(ctx, api, cfg, secretSource(getenv, "SLACK_BOT_TOKEN"))
	list.add(bot)
	list.add(checkAppToken(ctx, api, cfg, secretSource(getenv, "SLACK_APP_TOKEN")))
	list.add(checkChannel(ctx, api, cfg.SlackAPIURL, auth, channelCheck{
		what: "digest channel", variable: "DIGEST_CHANNEL", id: cfg.DigestChannel,
		unset: "digest off: DIGEST_CHANNEL is not set", history: true,
	}))
	list.add(checkChannel(ctx, api, cfg.SlackAPIURL, auth, channelCheck{
		what: "notice channel", variable: "NOTIFY_CHANNEL", id: cfg.NotifyChannel,
		unset: "notices off: NOTIFY_CHANNEL is not set", history: true,
	}))
	for _, slug := range slices.Sorted(maps.Keys(cfg.NotifyRoutes)) {
		list.add(checkChannel(ctx, api, cfg.SlackAPIURL, auth, channelCheck{
			what: "notice channel of " + slug, variable: "NOTIFY_ROUTES", id: cfg.NotifyRoutes[slug], history: true,
		}))
	}
	list.add(checkChannel(ctx, api, cfg.SlackAPIURL, auth, channelCheck{
		what: "review channel", variable: "BOOKBOT_REVIEW_CHANNEL", id: cfg.ReviewChannel,
		unset: "review channel not set: the owner's calendar's outcomes that need a human go by direct message to the first allowed user acting on it, else to the first allowed user",
	}))
	if cfg.DatabaseURL.IsZero() {
		list.add(checkStateDir(cfg.StateDir))
	} else {
		list.add(checkDatabase(ctx, cfg))
	}
	return list.done()
}

// checkSecretKey opens every stored key with BOOKBOT_SECRET_KEY: one that
// does not open was sealed under another secret key, which changed
// without `bookbot keys rotate`.
func checkSecretKey(ctx context.Context, cfg *config.Config) result {
	sealer, err := app.NewSealer(cfg)
	if err != nil {
		return fail("BOOKBOT_SECRET_KEY: "+err.Error(), "set 32 random bytes, base64 (openssl rand -base64 32)")
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	all, err := storedAccounts(ctx, cfg)
	if err != nil {
		return fail("BOOKBOT_SECRET_KEY is set, but the stored keys could not be read: "+err.Error(), "see the state directory or database line below")
	}
	stored, closed := 0, 0
	for _, a := range all {
		if len(a.Sealed) == 0 { // refused: deleted, kept only to say why
			continue
		}
		stored++
		if _, err := sealer.Open(a.User, a.Sealed); err != nil {
			closed++
		}
	}
	if closed > 0 {
		return fail(fmt.Sprintf("BOOKBOT_SECRET_KEY opens %d of %d stored keys: %d were sealed under another secret key", stored-closed, stored, closed),
			"set BOOKBOT_SECRET_KEY back to the secret key they were sealed with (to change it, stop bookbot and run bookbot keys rotate); otherwise those people must connect again")
	}
	return pass("BOOKBOT_SECRET_KEY is set: people can connect their own calendars (/booking connect), their keys encrypted with it; it opens all %d stored keys", stored)
}

// storedAccounts reads every account, beside a running bookbot.
func storedAccounts(ctx context.Context, cfg *config.Config) ([]account.Account, error) {
	st, err := store.Open(ctx, stateOf(cfg, store.ReadOnly))
	if err != nil {
		return nil, err
	}
	defer st.Close()
	all, err := st.Accounts.All(ctx)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // bookbot never ran here: no keys yet
	}
	return all, err
}

// configFailure shows every configuration problem; config.Error's messages
// name their variables and never hold a secret.
func configFailure(err error) result {
	r := fail("configuration: "+err.Error(), "fix the variables named above (docs/configuration.md lists them all) and run bookbot check again")
	var ce *config.Error
	if errors.As(err, &ce) {
		r.text = strings.TrimSuffix(strings.SplitN(ce.Error(), "\n", 2)[0], ":")
		for _, p := range ce.Problems {
			r.detail = append(r.detail, "- "+p.Msg)
		}
	}
	return r
}

// checkAllowList loads the configuration again, now also needing the
// allow-list: everything else has been checked, so a problem here is about
// the allow-list alone.
func checkAllowList(getenv func(string) string) result {
	cfg, err := config.Load(getenv, config.NeedAll)
	if err != nil {
		r := configFailure(err)
		r.text = "allowed users: `bookbot run` will not start without them"
		r.advice = "set BOOKBOT_ALLOWED_USERS to the Slack member IDs of the people who may book and cancel (profile → ⋯ → Copy member ID), or BOOKBOT_ALLOW_ALL=true"
		return r
	}
	if cfg.AllowAll {
		return pass("allowed users: everyone in the workspace (BOOKBOT_ALLOW_ALL=true)")
	}
	return pass("allowed users: %d (BOOKBOT_ALLOWED_USERS)", len(cfg.AllowedUsers))
}

// secretSource names where a secret comes from, the variable or the file,
// never the secret itself. Load has made sure only one of the two is set.
func secretSource(getenv func(string) string, name string) string {
	if path := strings.TrimSpace(getenv(name + "_FILE")); path != "" {
		return name + "_FILE " + path
	}
	return name
}

// checkBookingKey lists the event types: the cheapest read that proves the
// key, the base URL and the account. Whatever the API answered also tells
// its clock.
func checkBookingKey(ctx context.Context, cfg *config.Config, source string, stderr io.Writer) (key, clock result) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	bk, err := app.NewBookingClient(cfg, version, app.NewLogger(cfg, stderr))
	if err != nil {
		return fail("booking API client: "+err.Error(), "check BOOKING_BASE_URL"), skip("booking API's clock: not checked, the API cannot be asked")
	}
	types, err := bk.EventTypes(ctx)
	if err != nil {
		return bookingFailure(err, cfg.BookingBaseURL, source), checkAPIClock(bk)
	}
	bookable := 0
	for _, t := range types {
		if t.Bookable() {
			bookable++
		}
	}
	return pass("booking API key works: %d event types, %d bookable (key from %s)", len(types), bookable, source), checkAPIClock(bk)
}

// checkAPIClock compares the booking API's clock, from the Date of its
// answer, with this machine's. A skew warns rather than fails: it is no
// fault of bookbot's configuration, and bookbot goes by the API's clock.
func checkAPIClock(bk *booking.Client) result {
	d, ok := bk.Skew()
	apart := d.Abs().Round(time.Second)
	switch {
	case !ok:
		return skip("booking API's clock: not checked, no answer carried a Date header")
	case d.Abs() <= booking.SkewTolerance:
		return pass("booking API's clock agrees with this machine's: %v apart (up to %v is fine)", apart, booking.SkewTolerance)
	}
	way := "ahead"
	if d < 0 {
		way = "behind"
	}
	return warn(fmt.Sprintf("booking API's clock differs from this machine's by %v (it is %s)", apart, way),
		"check NTP on this machine (timedatectl) — bookbot judges whether a booking has started by the API's clock")
}

// bookingFailure turns an error of the booking client, which never carries
// the key, into a failure with advice.
func bookingFailure(err error, baseURL, source string) result {
	reach := fmt.Sprintf("check BOOKING_BASE_URL (%s) and that this machine can reach it", baseURL)
	var apiErr *booking.APIError
	switch {
	case errors.Is(err, booking.ErrRedirect) && errors.As(err, &apiErr):
		where := "elsewhere"
		if apiErr.Location != "" {
			where = "to " + apiErr.Location
		}
		return fail(fmt.Sprintf("booking API redirects %s (%d %s) %s: bookbot follows no redirect, so the key from %s could not be checked",
			apiErr.Endpoint, apiErr.StatusCode, http.StatusText(apiErr.StatusCode), where, source),
			fmt.Sprintf("set BOOKING_BASE_URL (%s) to the final address the API answers at, without /api/v1", baseURL))
	case errors.Is(err, booking.ErrUnauthorized):
		return fail("booking API refused the key from "+source+" (401): it is missing, revoked or invalid",
			"create a new key on the booking app's API keys page and put it in "+source)
	case errors.Is(err, booking.ErrNotFound):
		return fail("booking API: "+err.Error(),
			fmt.Sprintf("BOOKING_BASE_URL (%s) must be the API's {base_url}, without /api/v1, which bookbot appends", baseURL))
	case errors.Is(err, context.DeadlineExceeded):
		return fail(fmt.Sprintf("booking API did not answer within %v", checkTimeout), reach)
	case errors.Is(err, booking.ErrTransport):
		return fail(err.Error(), reach)
	case errors.Is(err, booking.ErrRateLimited), errors.Is(err, booking.ErrUnavailable):
		return fail(err.Error(), "the key could not be checked now; run bookbot check again later")
	}
	return fail("booking API: "+err.Error(), "check that BOOKING_BASE_URL ("+baseURL+") is the booking API's {base_url}")
}

// checkBotToken calls auth.test. The answer is nil when the token does not
// work; the channel checks need it.
func checkBotToken(ctx context.Context, api *slack.Client, cfg *config.Config, source string) (*slack.AuthTestResponse, result) {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	auth, err := api.AuthTestContext(ctx)
	if err != nil {
		reason := slackReason(err)
		advice := slackAdvice(reason, cfg.SlackAPIURL,
			"copy the Bot User OAuth Token (xoxb-…) from the app's OAuth & Permissions page into "+source+"; install the app again if it was removed")
		return nil, fail(slackVerdict("bot token", source, "auth.test", err), advice)
	}
	return auth, pass("bot token works: team %s, bot %s", auth.Team, auth.User)
}

// checkAppToken asks for a Socket Mode URL, as `bookbot run` does first,
// without connecting to it.
func checkAppToken(ctx context.Context, api *slack.Client, cfg *config.Config, source string) result {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	if _, _, err := api.StartSocketModeContext(ctx); err != nil {
		reason := slackReason(err)
		advice := slackAdvice(reason, cfg.SlackAPIURL,
			"generate an app-level token with the connections:write scope (Basic Information → App-Level Tokens), put it in "+source+", and make sure Socket Mode is turned on for the app")
		if reason == "rate limited" {
			advice += " (apps.connections.open allows about one call a minute, and a running bookbot uses it too)"
		}
		return fail(slackVerdict("app token", source, "apps.connections.open", err), advice)
	}
	return pass("app token works: Socket Mode can connect")
}

// slackVerdict says what a failed token check means: Slack refused the
// token only when it answered so; otherwise the token is not known to be bad.
func slackVerdict(token, source, call string, err error) string {
	if _, refused := errors.AsType[slack.SlackErrorResponse](err); refused {
		return fmt.Sprintf("Slack refused the %s from %s (%s: %s)", token, source, call, slackReason(err))
	}
	if timedOut(err) {
		return fmt.Sprintf("the %s from %s could not be checked: Slack did not answer %s within %v", token, source, call, min(checkTimeout, slackCallTimeout))
	}
	return fmt.Sprintf("the %s from %s could not be checked (%s: %s)", token, source, call, slackReason(err))
}

// slackAdvice says what to do about a Slack error: the same for every call
// when Slack was not reached or rate-limited, else the call's own advice.
func slackAdvice(reason, apiURL, otherwise string) string {
	switch {
	case strings.HasPrefix(reason, "no answer"):
		return fmt.Sprintf("check SLACK_API_URL (%s) and that this machine can reach Slack", apiURL)
	case reason == "rate limited":
		return "Slack is rate-limiting this call; run bookbot check again in a minute"
	}
	return otherwise
}

// channelCheck is a channel the bot posts into.
type channelCheck struct {
	what     string // "digest channel"
	variable string // "DIGEST_CHANNEL"
	id       string // "" when the variable is unset
	unset    string // the line shown when it is unset
	// history: bookbot reads the channel's history (digests and notices
	// cut short are looked for there).
	history bool
}

// checkChannel makes sure the channel exists and the bot is in it, so its
// posts will not fail with not_in_channel at the scheduled hour.
func checkChannel(ctx context.Context, api *slack.Client, apiURL string, auth *slack.AuthTestResponse, c channelCheck) result {
	if c.id == "" {
		return skip("%s", c.unset)
	}
	if auth == nil {
		return skip("%s %s: not checked, the bot token does not work", c.what, c.id)
	}
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	ch, err := api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: c.id})
	invite := fmt.Sprintf("/invite @%s in that channel", auth.User)
	if err != nil {
		reason := slackReason(err)
		text := fmt.Sprintf("%s %s (%s): conversations.info: %s", c.what, c.id, c.variable, reason)
		switch reason {
		case "missing_scope":
			return fail(text, "add the channels:read bot scope (and groups:read for a private channel) to the app, as in deploy/slack-app-manifest.yaml, then reinstall the app to the workspace")
		case "channel_not_found":
			return fail(text, fmt.Sprintf("check the channel ID in %s (channel details → About, at the bottom); for a private channel, %s first", c.variable, invite))
		}
		return fail(text, slackAdvice(reason, apiURL, "see Slack's error code above"))
	}
	name := ch.ID
	if ch.Name != "" {
		name = "#" + ch.Name + " (" + ch.ID + ")"
	}
	switch {
	case ch.IsArchived:
		return fail(fmt.Sprintf("%s %s is archived", c.what, name), "unarchive it, or set "+c.variable+" to another channel")
	case !ch.IsMember && !ch.IsIM:
		return fail(fmt.Sprintf("%s %s: the bot is not a member, so it cannot post there", c.what, name), invite)
	case !c.history:
		return pass("%s works: %s, the bot is a member", c.what, name)
	}
	if _, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: ch.ID, Limit: 1}); err != nil {
		reason := slackReason(err)
		text := fmt.Sprintf("%s %s: conversations.history: %s, so a post cut short cannot be looked for before it is posted again", c.what, name, reason)
		if reason == "missing_scope" {
			return fail(text, "add the channels:history bot scope (and groups:history for a private channel) to the app, as in deploy/slack-app-manifest.yaml, then reinstall the app to the workspace")
		}
		return fail(text, slackAdvice(reason, apiURL, "see Slack's error code above"))
	}
	return pass("%s works: %s, the bot is a member and can read its history", c.what, name)
}

// checkStateDir makes sure the state directory exists (creating it as
// `bookbot run` would) and takes a new file: the digest's exactly-once
// record and the write journal are written there.
func checkStateDir(dir string) result {
	advice := "make it writable by the user bookbot runs as, or set BOOKBOT_STATE_DIR to a directory that is"
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fail(fmt.Sprintf("state directory %s cannot be created: %v", dir, fileReason(err)), advice)
	}
	f, err := os.CreateTemp(dir, ".bookbot-check-*")
	if err != nil {
		return fail(fmt.Sprintf("state directory %s is not writable: %v", dir, fileReason(err)), advice)
	}
	if err := errors.Join(f.Close(), os.Remove(f.Name())); err != nil {
		return fail(fmt.Sprintf("state directory %s: a test file could not be written and removed: %v", dir, fileReason(err)), advice)
	}
	return pass("state directory %s is writable (the digest's exactly-once record and the write journal)", dir)
}

// fileReason drops the operation and path, which the line already shows.
func fileReason(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// checkDatabase makes sure the database answers, its schema is this
// binary's, and says which replica leads the scheduled work.
func checkDatabase(ctx context.Context, cfg *config.Config) result {
	ctx, cancel := context.WithTimeout(ctx, checkTimeout)
	defer cancel()
	st, err := store.Open(ctx, stateOf(cfg, store.ReadOnly))
	if err != nil {
		return fail(err.Error(), "check the URL, that PostgreSQL runs and accepts bookbot's connections from here")
	}
	defer st.Close()
	db := st.Database
	current, latest, err := db.Version(ctx)
	switch {
	case err != nil:
		return fail("database (BOOKBOT_DATABASE_URL): "+err.Error(), "check that the user may read the database")
	case current < latest:
		return fail(fmt.Sprintf("database schema is at version %d, this bookbot's is %d", current, latest), "run bookbot migrate (bookbot run also migrates at start)")
	}
	schema := fmt.Sprintf("schema version %d", current)
	if current > latest {
		b, err := db.Breaking(ctx)
		switch {
		case err != nil:
			return fail("database (BOOKBOT_DATABASE_URL): "+err.Error(), "check that the user may read the database")
		case b != 0:
			return fail(fmt.Sprintf("database schema is at version %d, newer than this bookbot's %d, and its step %d is not additive", current, latest, b), "run the bookbot version that migrated it, or a newer one")
		}
		schema += fmt.Sprintf(", newer than this bookbot's %d but only by additive steps, which it runs on", latest)
	}
	who, err := db.WhoLeads(ctx, "bookbot")
	switch {
	case err != nil:
		return fail("database: which replica leads cannot be read: "+err.Error(), "check that bookbot migrate has run")
	case who.Replica == "" || !who.Leading:
		return pass("database works: %s; no replica leads now (none runs, or one is taking over)", schema)
	}
	return pass("database works: %s; replica %s leads (term %d, confirmed %s ago)", schema, who.Replica, who.Token, who.Age.Round(time.Second))
}
