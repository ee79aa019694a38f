// Package config reads bookbot's configuration from the environment: parsed
// once, validated once, with every problem reported together, each naming
// its variable, and no secret ever in an error or a printed Config.
//
// The variables, their defaults and meanings are listed by Vars. Choices
// worth knowing:
//
//   - An empty or all-white-space variable counts as unset; values and the
//     contents of _FILE files are trimmed of surrounding white space.
//   - A _FILE file must be a regular file (or a link to one) of at most
//     64 KiB (a token or key is far smaller): a named pipe, a directory or
//     a device such as /dev/zero is refused, never waited on or read
//     forever.
//   - A variable that is set is always checked, whether or not the command
//     needs it; Need only decides which unset variables are missing.
//   - BOOKBOT_ALLOW_ALL=true wins over BOOKBOT_ALLOWED_USERS: the list is
//     still checked (a typo is still reported) but Allowed lets everyone in.
//   - BOOKBOT_HTTP_ADDR=off turns the HTTP listener off: HTTPAddr is "".
//   - SLACK_API_URL, like BOOKING_BASE_URL, may carry no credentials, query
//     or fragment: the Web API method name is appended to it.
//   - Either may be plain http:// only to this machine (localhost,
//     127.0.0.0/8, ::1), unless BOOKBOT_ALLOW_INSECURE_HTTP=true; then each
//     such URL gives a warning in Warnings, which commands log at start.
//   - DIGEST_SCHEDULE may not carry its own CRON_TZ=/TZ=; the zone is
//     DIGEST_TIMEZONE's.
package config

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/secretfile"
	"github.com/caarlos0/env/v11"
	"github.com/robfig/cron/v3"
)

// Need says which parts a command needs; Load reports missing required
// variables only for those. Variables that are set are checked regardless.
type Need uint8

const (
	NeedBooking Need = 1 << iota // BOOKING_BASE_URL + BOOKING_API_KEY[_FILE]
	NeedSlack                    // SLACK_BOT_TOKEN[_FILE] + SLACK_APP_TOKEN[_FILE]
	NeedUsers                    // BOOKBOT_ALLOWED_USERS unless BOOKBOT_ALLOW_ALL=true
)

// NeedAll is what `bookbot run` needs.
const NeedAll = NeedBooking | NeedSlack | NeedUsers

// Config is bookbot's configuration. Fields a command did not need and that
// were not set are zero (BookingKey nil, tokens IsZero, BookingBaseURL "").
type Config struct {
	SlackBotToken  Secret            // SLACK_BOT_TOKEN or the contents of SLACK_BOT_TOKEN_FILE; starts "xoxb-"
	SlackAppToken  Secret            // SLACK_APP_TOKEN or the contents of SLACK_APP_TOKEN_FILE; starts "xapp-"
	SlackAPIURL    string            // SLACK_API_URL, absolute http(s), ends with "/"
	BookingBaseURL string            // BOOKING_BASE_URL, absolute http(s), no userinfo/query/fragment
	BookingKey     booking.KeySource // BOOKING_API_KEY (a booking.Key) or BOOKING_API_KEY_FILE (a booking.KeyFile, re-read on change, that prints redacted); nil in own-calendars-only mode
	// SecretKey is BOOKBOT_SECRET_KEY or the contents of its _FILE, base64
	// of 32 bytes (account.ParseSecret reads it); zero: people cannot
	// connect their own calendars.
	SecretKey Secret

	AllowedUsers []string // BOOKBOT_ALLOWED_USERS: Slack user IDs, trimmed, deduplicated, in the order given
	AllowAll     bool     // BOOKBOT_ALLOW_ALL; wins over AllowedUsers
	Command      string   // BOOKBOT_COMMAND, such as "/booking"

	DigestChannel       string         // DIGEST_CHANNEL; "" means no digest
	DigestSchedule      string         // DIGEST_SCHEDULE; parses with cron.ParseStandard
	DigestZone          *time.Location // DIGEST_TIMEZONE
	DigestIncludeEmails bool           // DIGEST_INCLUDE_EMAILS
	DigestSkipEmpty     bool           // DIGEST_SKIP_EMPTY

	NotifyChannel       string            // NOTIFY_CHANNEL; "" means no notices (unless routes name channels)
	NotifyRoutes        map[string]string // NOTIFY_ROUTES: event slug → channel ID
	NotifyInterval      time.Duration     // NOTIFY_INTERVAL, at least 15 seconds
	NotifyIncludeEmails bool              // NOTIFY_INCLUDE_EMAILS

	OfferTTL time.Duration // OFFER_TTL: how long an offer card can be booked from

	ReviewChannel string        // BOOKBOT_REVIEW_CHANNEL; "" means none
	BookingPage   string        // BOOKING_PAGE_URL (or its former name, BOOKBOT_BOOKING_PAGE_URL), an absolute http(s) URL; "" means none
	DatabaseURL   Secret        // BOOKBOT_DATABASE_URL or the contents of BOOKBOT_DATABASE_URL_FILE: postgres:// or postgresql://; zero for the embedded store
	StateDir      string        // BOOKBOT_STATE_DIR or its computed default
	JournalKeep   time.Duration // BOOKBOT_JOURNAL_KEEP_DAYS in days; 0 keeps entries forever
	DryRun        bool          // BOOKBOT_DRY_RUN
	HTTPAddr      string        // BOOKBOT_HTTP_ADDR as host:port; "" when set to "off"
	LogLevel      slog.Level    // LOG_LEVEL
	LogFormat     string        // LOG_FORMAT: "json" or "text"

	AllowInsecureHTTP bool // BOOKBOT_ALLOW_INSECURE_HTTP

	// Warnings are settings that work but put something at risk, such as
	// a secret sent unencrypted; each Msg starts with its variable. A
	// command logs them at start (LogWarnings), so they are never silent.
	Warnings []Problem
}

// LogWarnings logs each of c.Warnings at warning level.
func (c *Config) LogWarnings(log *slog.Logger) {
	for _, w := range c.Warnings {
		log.Warn(w.Msg, slog.String("var", w.Var))
	}
}

// NoticesOn reports whether live notices are posted: to one channel, or
// by event type.
func (c *Config) NoticesOn() bool {
	return c.NotifyChannel != "" || len(c.NotifyRoutes) > 0
}

// Allowed reports whether a Slack user may use the bot.
func (c *Config) Allowed(userID string) bool {
	return c.AllowAll || slices.Contains(c.AllowedUsers, userID)
}

// scheduleParser is the parser DIGEST_SCHEDULE is checked with: five fields
// or a descriptor such as @daily or @every 1h. It accepts what
// cron.ParseStandard and cron.New's default parser accept.
var scheduleParser = cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// maxSecretFile bounds what is read of a _FILE file. Tokens and keys are
// far smaller; the bound stops a wrong path (a log, /dev/zero) from being
// read into memory without end.
const maxSecretFile = 64 << 10

// maxKeepDays bounds BOOKBOT_JOURNAL_KEEP_DAYS (100 years), so the
// duration cannot overflow.
const maxKeepDays = 36500

var (
	userID    = regexp.MustCompile(`^[UW][A-Z0-9]{2,}$`)
	channelID = regexp.MustCompile(`^[CGD][A-Z0-9]{2,}$`)
	command   = regexp.MustCompile(`^/[a-z0-9_-]{1,31}$`)
)

// Load reads the configuration through getenv (os.Getenv in cmd, a map in
// tests) and checks all of it. The error is an *Error listing every problem.
func Load(getenv func(string) string, need Need) (*Config, error) {
	t := table()
	l := &loader{env: make(map[string]string, len(t.vars)), bad: map[string]bool{}}
	for _, v := range t.vars {
		if getenv == nil {
			break
		}
		if s := strings.TrimSpace(getenv(v.Name)); s != "" {
			l.env[v.Name] = s
		}
	}

	// The map must be non-nil, or caarlos0/env falls back to os.Environ.
	var s settings
	if err := env.ParseWithOptions(&s, env.Options{Environment: l.env}); err != nil {
		l.envError(err)
	}

	c := &Config{
		AllowAll:            s.AllowAll,
		DigestIncludeEmails: s.DigestIncludeEmails,
		DigestSkipEmpty:     s.DigestSkipEmpty,
		NotifyIncludeEmails: s.NotifyIncludeEmails,
		DryRun:              s.DryRun,
		AllowInsecureHTTP:   s.AllowInsecureHTTP,
	}
	c.SlackBotToken = l.token("SLACK_BOT_TOKEN", s.SlackBotToken, "xoxb-", "bot token", need&NeedSlack != 0)
	c.SlackAppToken = l.token("SLACK_APP_TOKEN", s.SlackAppToken, "xapp-", "app-level token", need&NeedSlack != 0)
	if u := l.url("SLACK_API_URL", s.SlackAPIURL, false); u != nil && l.clearText("SLACK_API_URL", u, s.AllowInsecureHTTP, "the Slack tokens") {
		if !strings.HasSuffix(u.Path, "/") {
			u.Path += "/"
			u.RawPath = ""
		}
		c.SlackAPIURL = u.String()
	}

	if s.BookingBaseURL == "" {
		if need&NeedBooking != 0 {
			l.add("BOOKING_BASE_URL", "BOOKING_BASE_URL is required: the booking API's {base_url}, such as https://api.example.com")
		}
	} else if u := l.url("BOOKING_BASE_URL", s.BookingBaseURL, false); u != nil && l.clearText("BOOKING_BASE_URL", u, s.AllowInsecureHTTP, "the booking API key") {
		c.BookingBaseURL = u.String()
	}
	c.SecretKey = l.secretKey(s.SecretKey)
	// With a secret key people can connect their own calendars, so the
	// owner's key is not needed: unset, everyone connects their own.
	c.BookingKey = l.bookingKey(s.BookingAPIKey, need&NeedBooking != 0 && c.SecretKey.IsZero() && !l.bad["BOOKBOT_SECRET_KEY"] && !l.bad["BOOKBOT_SECRET_KEY_FILE"])

	c.AllowedUsers = l.users(s.AllowedUsers)
	if len(c.AllowedUsers) == 0 && !c.AllowAll && need&NeedUsers != 0 && !l.bad["BOOKBOT_ALLOWED_USERS"] && !l.bad["BOOKBOT_ALLOW_ALL"] {
		l.add("BOOKBOT_ALLOWED_USERS", "BOOKBOT_ALLOWED_USERS is required: the comma-separated Slack user IDs (such as U0123ABCD) who may use the bot, or set BOOKBOT_ALLOW_ALL=true to let everyone in the workspace use it")
	}
	if command.MatchString(s.Command) {
		c.Command = s.Command
	} else {
		l.add("BOOKBOT_COMMAND", "BOOKBOT_COMMAND must be a slash command such as /booking: a \"/\" then up to 31 lowercase letters, digits, \"-\" or \"_\"; got %q", clip(s.Command))
	}

	c.DigestChannel = l.channel("DIGEST_CHANNEL", s.DigestChannel)
	c.DigestSchedule = l.schedule(s.DigestSchedule)
	if loc, err := booking.LoadZone(s.DigestTimezone); err != nil {
		l.add("DIGEST_TIMEZONE", "DIGEST_TIMEZONE: %v", err)
	} else {
		c.DigestZone = loc
	}

	c.NotifyChannel = l.channel("NOTIFY_CHANNEL", s.NotifyChannel)
	c.NotifyRoutes = l.routes(s.NotifyRoutes)
	if d, err := time.ParseDuration(s.NotifyInterval); err == nil && d >= 15*time.Second && d <= 24*time.Hour {
		c.NotifyInterval = d
	} else {
		l.add("NOTIFY_INTERVAL", "NOTIFY_INTERVAL must be a duration from 15s to 24h, such as 1m or 30s; got %q", clip(s.NotifyInterval))
	}

	if d, err := time.ParseDuration(s.OfferTTL); err == nil && d >= time.Minute && d <= 720*time.Hour {
		c.OfferTTL = d
	} else {
		l.add("OFFER_TTL", "OFFER_TTL must be a duration from 1m to 720h, such as 168h (a week); got %q", clip(s.OfferTTL))
	}

	c.ReviewChannel = l.channel("BOOKBOT_REVIEW_CHANNEL", s.ReviewChannel)
	if c.AllowAll && len(c.AllowedUsers) == 0 && s.ReviewChannel == "" && c.BookingKey != nil {
		// The owner's calendar's reviews go to the review channel, else to
		// the first allowed user: with neither, nobody would see them.
		l.warnings = append(l.warnings, Problem{Var: "BOOKBOT_REVIEW_CHANNEL", Msg: "BOOKBOT_REVIEW_CHANNEL is unset and BOOKBOT_ALLOW_ALL=true lists nobody: the owner's calendar's outcomes that need a human look would reach nobody; set BOOKBOT_REVIEW_CHANNEL, or BOOKBOT_ALLOWED_USERS, whose first person gets them"})
	}
	c.BookingPage = l.bookingPage(s.BookingPage, s.BookingPageOld)
	c.DatabaseURL = l.databaseURL(s.DatabaseURL)
	c.StateDir = stateDir(s)
	if days, err := strconv.Atoi(s.JournalKeep); err == nil && days >= 0 && days <= maxKeepDays {
		c.JournalKeep = time.Duration(days) * 24 * time.Hour
	} else {
		l.add("BOOKBOT_JOURNAL_KEEP_DAYS", "BOOKBOT_JOURNAL_KEEP_DAYS must be a whole number of days from 0 (keep forever) to %d; got %q", maxKeepDays, clip(s.JournalKeep))
	}
	c.HTTPAddr = l.httpAddr(s.HTTPAddr)
	switch strings.ToLower(s.LogLevel) {
	case "debug":
		c.LogLevel = slog.LevelDebug
	case "info":
		c.LogLevel = slog.LevelInfo
	case "warn":
		c.LogLevel = slog.LevelWarn
	case "error":
		c.LogLevel = slog.LevelError
	default:
		l.add("LOG_LEVEL", "LOG_LEVEL must be debug, info, warn or error; got %q", clip(s.LogLevel))
	}
	switch f := strings.ToLower(s.LogFormat); f {
	case "json", "text":
		c.LogFormat = f
	default:
		l.add("LOG_FORMAT", "LOG_FORMAT must be json or text; got %q", clip(s.LogFormat))
	}

	if len(l.problems) > 0 {
		slices.SortStableFunc(l.problems, func(a, b Problem) int {
			return cmp.Compare(t.index(a.Var), t.index(b.Var))
		})
		return nil, &Error{Problems: l.problems}
	}
	c.Warnings = l.warnings
	return c, nil
}

func (t varTable) index(name string) int {
	if i, ok := t.byName[name]; ok {
		return i
	}
	return len(t.vars)
}

// loader collects problems while Load works through the variables.
type loader struct {
	env      map[string]string // the set variables, trimmed
	problems []Problem
	warnings []Problem
	bad      map[string]bool // variables with a problem already
}

// add records a problem; msg starts with the variable's name and must not
// hold a secret value.
func (l *loader) add(name, format string, args ...any) {
	l.problems = append(l.problems, Problem{Var: name, Msg: fmt.Sprintf(format, args...)})
	l.bad[name] = true
}

// envError turns caarlos0/env's errors, which name struct fields and quote
// values, into problems that name variables.
func (l *loader) envError(err error) {
	var agg env.AggregateError
	if !errors.As(err, &agg) {
		agg.Errors = []error{err}
	}
	for _, e := range agg.Errors {
		var pe env.ParseError
		switch {
		case errors.As(e, &pe):
			name := table().field[pe.Name]
			if pe.Type.Kind() == reflect.Bool {
				l.add(name, "%s must be true or false (or 1 or 0); got %q", name, clip(l.env[name]))
			} else {
				// Not reached with today's fields; the value is left out in
				// case the field is ever a secret.
				l.add(name, "%s cannot be parsed", name)
			}
		default:
			l.add("", "%v", e)
		}
	}
}

// pathReason drops the path and operation from a file error, leaving the
// reason (an *os.PathError never holds file contents).
func pathReason(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// pick resolves a NAME / NAME_FILE pair, reading the file NAME_FILE names.
// It reports conflicts, unreadable files and, when required, absence, and
// returns the variable the value came from ("" for none) with the value,
// trimmed.
func (l *loader) pick(name, value string, required bool, what string) (src, v string) {
	fileVar := name + "_FILE"
	_, direct := l.env[name]
	_, file := l.env[fileVar]
	var contents []byte
	if file {
		// Read even when both are set, so an unreadable file is reported
		// with the conflict rather than after it is fixed.
		var ok bool
		if contents, ok = l.readFile(fileVar); !ok && !direct {
			return "", ""
		}
	}
	switch {
	case direct && file:
		l.add(name, "%s and %s are both set: set %s or %s, not both", name, fileVar, name, fileVar)
		return "", ""
	case direct:
		return name, value
	case file:
		return fileVar, strings.TrimSpace(string(contents))
	case required:
		l.add(name, "%s is required (or %s naming a file that holds it): %s", name, fileVar, what)
	}
	return "", ""
}

// readFile reads the file the variable name names, up to maxSecretFile
// bytes, and reports a file it cannot read, that is not a regular file
// (a pipe or a device would make the read wait) or that is larger. The
// problems name the file, never its contents.
func (l *loader) readFile(name string) ([]byte, bool) {
	path := l.env[name]
	b, err := secretfile.Read(path, maxSecretFile)
	var notRegular *secretfile.NotRegularError
	var tooLarge *secretfile.TooLargeError
	switch {
	case errors.As(err, &notRegular), errors.As(err, &tooLarge):
		l.add(name, "%s: %v", name, err)
	case err != nil:
		l.add(name, "%s: cannot read %s: %v", name, path, pathReason(err))
	default:
		return b, true
	}
	return nil, false
}

func (l *loader) token(name, value, prefix, kind string, required bool) Secret {
	src, v := l.pick(name, value, required, fmt.Sprintf("the Slack %s, %s…", kind, prefix))
	if src == "" {
		return Secret{}
	}
	holds := src + " must be"
	if src != name {
		holds = fmt.Sprintf("%s must name a file holding", src)
		if v == "" {
			l.add(src, "%s names an empty file, %s", src, l.env[src])
			return Secret{}
		}
	}
	article := "a"
	if strings.ContainsRune("aeiou", rune(kind[0])) {
		article = "an"
	}
	switch {
	case !strings.HasPrefix(v, prefix) || len(v) == len(prefix):
		l.add(src, "%s %s %s starting with %q", holds, article, kind, prefix)
	case strings.IndexFunc(v, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0:
		l.add(src, "%s %s %s without white space or control characters", holds, article, kind)
	default:
		return Secret{value: v}
	}
	return Secret{}
}

func (l *loader) bookingKey(value string, required bool) booking.KeySource {
	src, v := l.pick("BOOKING_API_KEY", value, required, "the owner's booking API key")
	switch src {
	case "BOOKING_API_KEY":
		k, err := booking.NewKey(v)
		if err != nil {
			l.add(src, "%s: %v", src, err) // NewKey's errors never hold the key
			return nil
		}
		return k
	case "BOOKING_API_KEY_FILE":
		// pick read it first, for a message of our own; booking.NewKeyFile
		// then owns the file and re-reads it when it changes.
		path := l.env[src]
		if _, err := booking.NewKey(v); err != nil {
			l.add(src, "%s: in %s, %v", src, path, err)
			return nil
		}
		kf, err := booking.NewKeyFile(path)
		if err != nil {
			l.add(src, "%s: %v", src, err) // holds the path and reason, never the key
			return nil
		}
		return keyFile{kf}
	}
	return nil
}

// url checks an absolute http(s) URL: a base URL that paths are appended
// to, which may have no query, or (query) a page's address, which may. A
// URL may carry credentials, so it is quoted in a problem only when it
// cannot have any.
func (l *loader) url(name, raw string, query bool) *url.URL {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		if strings.Contains(raw, "@") {
			l.add(name, "%s is not a valid URL", name)
		} else {
			l.add(name, "%s is not a valid URL: %q", name, clip(raw))
		}
	case u.User != nil:
		l.add(name, "%s must not carry credentials (user:password@)", name)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "":
		l.add(name, "%s must be an absolute http(s) URL such as https://example.com; got %q", name, clip(raw))
	case !query && (u.RawQuery != "" || u.ForceQuery || u.Fragment != ""):
		l.add(name, "%s must not have a query or a fragment", name)
	default:
		return u
	}
	return nil
}

// bookingPage reads BOOKING_PAGE_URL, or its former name: that one is
// still read, with a warning, so a deployment keeps its unfurls and links
// until it renames the variable; both set is a mistake either way.
func (l *loader) bookingPage(raw, old string) string {
	const name, oldName = "BOOKING_PAGE_URL", "BOOKBOT_BOOKING_PAGE_URL"
	switch {
	case raw != "" && old != "":
		l.add(name, "%s and %s are both set: %s is the former name of %s; unset it", name, oldName, oldName, name)
		return ""
	case old != "":
		l.warnings = append(l.warnings, Problem{Var: oldName, Msg: oldName + " is the former name of " + name + ": rename it " + name + "; the old name will stop working in a later release"})
		return l.page(oldName, old)
	}
	return l.page(name, raw)
}

// page checks the address of a web page people are sent to; its query (the
// page's own parameters) stays.
func (l *loader) page(name, raw string) string {
	if raw == "" {
		return ""
	}
	if u := l.url(name, raw, true); u != nil {
		return u.String()
	}
	return ""
}

// clearText checks that an http(s) URL that carries secrets (what) is
// encrypted, or goes no further than this machine, where plain http is as
// private as the machine itself (the demo, the sandbox, a local proxy).
// BOOKBOT_ALLOW_INSECURE_HTTP=true turns the refusal into a warning.
func (l *loader) clearText(name string, u *url.URL, allow bool, what string) bool {
	if u.Scheme != "http" || loopback(u.Hostname()) {
		return true
	}
	if allow {
		l.warnings = append(l.warnings, Problem{Var: name, Msg: fmt.Sprintf(
			"%s is plain http:// to %s, not this machine: bookbot sends %s over it unencrypted (BOOKBOT_ALLOW_INSECURE_HTTP=true allows this)", name, u.Host, what)})
		return true
	}
	if l.bad["BOOKBOT_ALLOW_INSECURE_HTTP"] {
		return false // its own problem says what to set
	}
	l.add(name, "%s is plain http:// to %s, not this machine: bookbot would send %s over it unencrypted; use https://, or set BOOKBOT_ALLOW_INSECURE_HTTP=true to allow it", name, u.Host, what)
	return false
}

// loopback reports whether host, as URL.Hostname gives it, is this machine:
// localhost, an address in 127.0.0.0/8 or ::1. Any other name could resolve
// anywhere.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func (l *loader) users(list []string) []string {
	var ids, wrong []string
	for _, id := range list {
		id = strings.TrimSpace(id)
		switch {
		case id == "" || slices.Contains(ids, id):
		case userID.MatchString(id):
			ids = append(ids, id)
		default:
			wrong = append(wrong, strconv.Quote(clip(id)))
		}
	}
	switch {
	case len(wrong) == 1:
		l.add("BOOKBOT_ALLOWED_USERS", "BOOKBOT_ALLOWED_USERS: %s is not a Slack user ID such as U0123ABCD", wrong[0])
	case len(wrong) > 5:
		wrong = append(wrong[:5], fmt.Sprintf("%d more", len(wrong)-5))
		fallthrough
	case len(wrong) > 1:
		l.add("BOOKBOT_ALLOWED_USERS", "BOOKBOT_ALLOWED_USERS: %s are not Slack user IDs such as U0123ABCD", strings.Join(wrong, ", "))
	}
	return ids
}

func (l *loader) channel(name, id string) string {
	if id == "" || channelID.MatchString(id) {
		return id
	}
	l.add(name, "%s must be a channel ID such as C0123ABCD (not a channel name); got %q", name, clip(id))
	return ""
}

// databaseURL reads BOOKBOT_DATABASE_URL[_FILE]. Its problems never quote
// it: it may hold a password.
func (l *loader) databaseURL(value string) Secret {
	src, v := l.pick("BOOKBOT_DATABASE_URL", value, false, "")
	if src == "" {
		return Secret{}
	}
	u, err := url.Parse(v)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "postgres" && u.Scheme != "postgresql"):
		l.add(src, "%s must be a URL such as postgres://bookbot@db.example.com:5432/bookbot (not shown here: it may hold a password)", src)
		return Secret{}
	}
	return Secret{value: v}
}

// secretKey reads BOOKBOT_SECRET_KEY[_FILE]: 32 bytes, base64.
func (l *loader) secretKey(value string) Secret {
	src, v := l.pick("BOOKBOT_SECRET_KEY", value, false, "")
	if src == "" {
		return Secret{}
	}
	if _, err := account.ParseSecret(v); err != nil {
		l.add(src, "%s: %v", src, err) // ParseSecret's errors never hold the value
		return Secret{}
	}
	return Secret{value: v}
}

// OwnCalendarsOnly reports whether there is no owner's key: everyone acts
// on the calendar they connected.
func (c *Config) OwnCalendarsOnly() bool { return c.BookingKey == nil }

// routes reads NOTIFY_ROUTES: slug=CHANNEL pairs, comma-separated.
func (l *loader) routes(spec string) map[string]string {
	if spec == "" {
		return nil
	}
	out := map[string]string{}
	for _, pair := range strings.Split(spec, ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		slug, ch, ok := strings.Cut(strings.TrimSpace(pair), "=")
		slug, ch = strings.TrimSpace(slug), strings.TrimSpace(ch)
		switch {
		case !ok || slug == "" || ch == "":
			l.add("NOTIFY_ROUTES", "NOTIFY_ROUTES must be slug=CHANNEL pairs separated by commas, such as intro-call=C0123ABCD; got %q", clip(pair))
			return nil
		case !channelID.MatchString(ch):
			l.add("NOTIFY_ROUTES", "NOTIFY_ROUTES: %q must be a channel ID such as C0123ABCD (not a channel name)", clip(ch))
			return nil
		case out[slug] != "" && out[slug] != ch:
			l.add("NOTIFY_ROUTES", "NOTIFY_ROUTES names two channels for %q", clip(slug))
			return nil
		}
		out[slug] = ch
	}
	return out
}

func (l *loader) schedule(spec string) string {
	if strings.HasPrefix(spec, "TZ=") || strings.HasPrefix(spec, "CRON_TZ=") {
		l.add("DIGEST_SCHEDULE", "DIGEST_SCHEDULE must not set a time zone; set DIGEST_TIMEZONE instead")
		return ""
	}
	if _, err := scheduleParser.Parse(spec); err != nil {
		l.add("DIGEST_SCHEDULE", "DIGEST_SCHEDULE must be a 5-field cron spec such as \"0 17 * * *\" or a descriptor such as @daily; %q: %v", clip(spec), err)
		return ""
	}
	return spec
}

func (l *loader) httpAddr(addr string) string {
	if strings.EqualFold(addr, "off") {
		return ""
	}
	_, port, err := net.SplitHostPort(addr)
	if err == nil {
		if n, perr := strconv.ParseUint(port, 10, 16); perr == nil && strconv.FormatUint(n, 10) == port {
			return addr
		}
	}
	l.add("BOOKBOT_HTTP_ADDR", "BOOKBOT_HTTP_ADDR must be host:port such as 127.0.0.1:8080, or off; got %q", clip(addr))
	return ""
}

// stateDir is BOOKBOT_STATE_DIR, else the first of systemd's
// STATE_DIRECTORY, else the XDG state directory, else ./bookbot-state.
func stateDir(s settings) string {
	switch first, _, _ := strings.Cut(s.StateDirectory, ":"); {
	case s.StateDir != "":
		return filepath.Clean(s.StateDir)
	case first != "":
		return filepath.Clean(first)
	case filepath.IsAbs(s.XDGStateHome): // the XDG spec ignores relative paths
		return filepath.Join(s.XDGStateHome, "bookbot")
	case s.Home != "":
		return filepath.Join(s.Home, ".local", "state", "bookbot")
	}
	return "./bookbot-state"
}

// clip shortens a (non-secret) value quoted in a problem.
func clip(s string) string {
	const max = 60
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}
