package config_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/config"
)

// Distinctive secrets: no error or printout may ever contain these.
const (
	botSecret = "BOTSECRET9137"
	appSecret = "APPSECRET4521"
	keySecret = "KEYSECRET7788"
	urlSecret = "URLSECRET0042"
)

var secrets = []string{botSecret, appSecret, keySecret, urlSecret}

// base is a complete, valid environment for NeedAll with nothing else set.
func base() map[string]string {
	return map[string]string{
		"SLACK_BOT_TOKEN":       "xoxb-1-" + botSecret,
		"SLACK_APP_TOKEN":       "xapp-1-" + appSecret,
		"BOOKING_BASE_URL":      "https://api.example.com",
		"BOOKING_API_KEY":       "bk_" + keySecret,
		"BOOKBOT_ALLOWED_USERS": "U0123ABCD",
	}
}

func with(m map[string]string, kv ...string) map[string]string {
	m = maps.Clone(m)
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func without(m map[string]string, names ...string) map[string]string {
	m = maps.Clone(m)
	for _, n := range names {
		delete(m, n)
	}
	return m
}

func getenv(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func mustLoad(t *testing.T, m map[string]string, need config.Need) *config.Config {
	t.Helper()
	c, err := config.Load(getenv(m), need)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

// problems loads m expecting an *config.Error and checks that no secret
// leaks into it.
func problems(t *testing.T, m map[string]string, need config.Need) *config.Error {
	t.Helper()
	c, err := config.Load(getenv(m), need)
	if err == nil {
		t.Fatalf("Load succeeded, want an error; config %+v", c)
	}
	if c != nil {
		t.Errorf("Load returned a config with its error")
	}
	noSecrets(t, "error", err.Error())
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("Load error is %T, want *config.Error: %v", err, err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(ce.Problems)+1 {
		t.Errorf("error has %d lines for %d problems:\n%v", len(lines), len(ce.Problems), err)
	}
	for i, p := range ce.Problems {
		if !strings.HasPrefix(p.Msg, p.Var) || p.Var == "" {
			t.Errorf("problem %q does not start with its variable %q", p.Msg, p.Var)
		}
		if i+1 < len(lines) && lines[i+1] != "  - "+p.Msg {
			t.Errorf("line %d = %q, want %q", i+1, lines[i+1], "  - "+p.Msg)
		}
	}
	return ce
}

func problemVars(e *config.Error) []string {
	var v []string
	for _, p := range e.Problems {
		v = append(v, p.Var)
	}
	return v
}

func noSecrets(t *testing.T, what, s string) {
	t.Helper()
	for _, sec := range secrets {
		if strings.Contains(s, sec) {
			t.Errorf("%s contains the secret %s:\n%s", what, sec, s)
		}
	}
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, base(), config.NeedAll)
	want := config.Config{
		SlackAPIURL:    "https://slack.com/api/",
		BookingBaseURL: "https://api.example.com",
		AllowedUsers:   []string{"U0123ABCD"},
		Command:        "/booking",
		DigestSchedule: "0 17 * * *",
		DigestZone:     time.UTC,
		StateDir:       "./bookbot-state",
		JournalKeep:    90 * 24 * time.Hour,
		NotifyInterval: time.Minute,
		OfferTTL:       7 * 24 * time.Hour,
		HTTPAddr:       "127.0.0.1:8080",
		LogLevel:       slog.LevelInfo,
		LogFormat:      "json",
	}
	got := *c
	if got.SlackBotToken.Value() != "xoxb-1-"+botSecret || got.SlackAppToken.Value() != "xapp-1-"+appSecret {
		t.Errorf("tokens not loaded")
	}
	wantKey, _ := booking.NewKey("bk_" + keySecret)
	if k, err := got.BookingKey.Key(); err != nil || !k.Equal(wantKey) {
		t.Errorf("BookingKey.Key() = _, %v; want the key", err)
	}
	got.SlackBotToken, got.SlackAppToken, got.BookingKey = config.Secret{}, config.Secret{}, nil
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults:\n got %#v\nwant %#v", got, want)
	}
	if got.DigestChannel != "" || got.ReviewChannel != "" || got.AllowAll || got.DryRun || got.DigestIncludeEmails || got.DigestSkipEmpty {
		t.Errorf("optional settings not off by default: %+v", got)
	}
}

func TestValid(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		env   []string
		check func(*config.Config) bool
	}{
		{"slack api url kept", []string{"SLACK_API_URL", "https://slack.example.com/api/"}, func(c *config.Config) bool { return c.SlackAPIURL == "https://slack.example.com/api/" }},
		{"slack api url gets a slash", []string{"SLACK_API_URL", "http://127.0.0.1:9999/api"}, func(c *config.Config) bool { return c.SlackAPIURL == "http://127.0.0.1:9999/api/" }},
		{"slack api url host only", []string{"SLACK_API_URL", "http://localhost:1"}, func(c *config.Config) bool { return c.SlackAPIURL == "http://localhost:1/" }},
		{"booking base url with path", []string{"BOOKING_BASE_URL", "http://127.0.0.1:8787/base/"}, func(c *config.Config) bool { return c.BookingBaseURL == "http://127.0.0.1:8787/base/" }},
		{"booking base url trimmed", []string{"BOOKING_BASE_URL", "  https://api.example.com\n"}, func(c *config.Config) bool { return c.BookingBaseURL == "https://api.example.com" }},
		{"users trimmed and deduped", []string{"BOOKBOT_ALLOWED_USERS", " U0123ABCD , W99,U0123ABCD,, "}, func(c *config.Config) bool {
			return slices.Equal(c.AllowedUsers, []string{"U0123ABCD", "W99"})
		}},
		{"allow all", []string{"BOOKBOT_ALLOW_ALL", "true"}, func(c *config.Config) bool { return c.AllowAll }},
		{"allow all 1", []string{"BOOKBOT_ALLOW_ALL", "1"}, func(c *config.Config) bool { return c.AllowAll }},
		{"allow all false", []string{"BOOKBOT_ALLOW_ALL", "false"}, func(c *config.Config) bool { return !c.AllowAll }},
		{"allow all 0", []string{"BOOKBOT_ALLOW_ALL", "0"}, func(c *config.Config) bool { return !c.AllowAll }},
		// The owner's calendar's reviews need somewhere to go.
		{"allow all with nobody to review", []string{"BOOKBOT_ALLOWED_USERS", "", "BOOKBOT_ALLOW_ALL", "true"}, func(c *config.Config) bool {
			return len(c.Warnings) == 1 && c.Warnings[0].Var == "BOOKBOT_REVIEW_CHANNEL" && strings.Contains(c.Warnings[0].Msg, "would reach nobody")
		}},
		{"allow all with a review channel", []string{"BOOKBOT_ALLOWED_USERS", "", "BOOKBOT_ALLOW_ALL", "true", "BOOKBOT_REVIEW_CHANNEL", "C999"}, func(c *config.Config) bool { return c.Warnings == nil }},
		{"allow all with a first allowed user", []string{"BOOKBOT_ALLOW_ALL", "true"}, func(c *config.Config) bool { return c.Warnings == nil }},
		{"command", []string{"BOOKBOT_COMMAND", "/book-it_2"}, func(c *config.Config) bool { return c.Command == "/book-it_2" }},
		{"command 32 chars", []string{"BOOKBOT_COMMAND", "/" + strings.Repeat("a", 31)}, func(c *config.Config) bool { return len(c.Command) == 32 }},
		{"empty command is the default", []string{"BOOKBOT_COMMAND", " "}, func(c *config.Config) bool { return c.Command == "/booking" }},
		{"digest channel", []string{"DIGEST_CHANNEL", "C0123ABCD"}, func(c *config.Config) bool { return c.DigestChannel == "C0123ABCD" }},
		{"digest private channel", []string{"DIGEST_CHANNEL", "G01"}, func(c *config.Config) bool { return c.DigestChannel == "G01" }},
		{"digest schedule", []string{"DIGEST_SCHEDULE", "30 18 * * 1-5"}, func(c *config.Config) bool { return c.DigestSchedule == "30 18 * * 1-5" }},
		{"digest schedule descriptor", []string{"DIGEST_SCHEDULE", "@daily"}, func(c *config.Config) bool { return c.DigestSchedule == "@daily" }},
		{"digest schedule every", []string{"DIGEST_SCHEDULE", "@every 1h"}, func(c *config.Config) bool { return c.DigestSchedule == "@every 1h" }},
		{"digest timezone", []string{"DIGEST_TIMEZONE", "Europe/Berlin"}, func(c *config.Config) bool { return c.DigestZone.String() == berlin.String() }},
		{"digest include emails", []string{"DIGEST_INCLUDE_EMAILS", "true"}, func(c *config.Config) bool { return c.DigestIncludeEmails }},
		{"digest skip empty", []string{"DIGEST_SKIP_EMPTY", "1"}, func(c *config.Config) bool { return c.DigestSkipEmpty }},
		{"notify channel", []string{"NOTIFY_CHANNEL", "C0NOTES"}, func(c *config.Config) bool { return c.NotifyChannel == "C0NOTES" }},
		{"notify routes", []string{"NOTIFY_ROUTES", " intro-call=C01, deep-dive = G02 ,"}, func(c *config.Config) bool {
			return reflect.DeepEqual(c.NotifyRoutes, map[string]string{"intro-call": "C01", "deep-dive": "G02"})
		}},
		{"notify interval", []string{"NOTIFY_INTERVAL", "15s"}, func(c *config.Config) bool { return c.NotifyInterval == 15*time.Second }},
		{"notify include emails", []string{"NOTIFY_INCLUDE_EMAILS", "true"}, func(c *config.Config) bool { return c.NotifyIncludeEmails }},
		{"offer ttl", []string{"OFFER_TTL", "48h"}, func(c *config.Config) bool { return c.OfferTTL == 48*time.Hour }},
		{"database url", []string{"BOOKBOT_DATABASE_URL", "postgres://bookbot:s3cret@db.example.com:5432/bookbot?sslmode=require"}, func(c *config.Config) bool {
			return c.DatabaseURL.Value() == "postgres://bookbot:s3cret@db.example.com:5432/bookbot?sslmode=require" && fmt.Sprint(c.DatabaseURL) != c.DatabaseURL.Value()
		}},
		{"secret key", []string{"BOOKBOT_SECRET_KEY", secretKey}, func(c *config.Config) bool {
			return c.SecretKey.Value() == secretKey && !c.OwnCalendarsOnly()
		}},
		{"own calendars only", []string{"BOOKBOT_SECRET_KEY", secretKey, "BOOKING_API_KEY", ""}, func(c *config.Config) bool {
			return c.OwnCalendarsOnly() && !c.SecretKey.IsZero()
		}},
		{"database url postgresql", []string{"BOOKBOT_DATABASE_URL", "postgresql://db/bookbot"}, func(c *config.Config) bool { return !c.DatabaseURL.IsZero() }},
		{"review channel", []string{"BOOKBOT_REVIEW_CHANNEL", "C999"}, func(c *config.Config) bool { return c.ReviewChannel == "C999" }},
		{"booking page", []string{"BOOKING_PAGE_URL", "https://cal.example.com/ada?theme=dark"}, func(c *config.Config) bool {
			return c.BookingPage == "https://cal.example.com/ada?theme=dark" && c.Warnings == nil
		}},
		// The former name still works, and says to rename it.
		{"booking page by its former name", []string{"BOOKBOT_BOOKING_PAGE_URL", "https://cal.example.com/ada"}, func(c *config.Config) bool {
			return c.BookingPage == "https://cal.example.com/ada" && len(c.Warnings) == 1 && c.Warnings[0].Var == "BOOKBOT_BOOKING_PAGE_URL" &&
				strings.Contains(c.Warnings[0].Msg, "rename it BOOKING_PAGE_URL")
		}},
		{"dry run", []string{"BOOKBOT_DRY_RUN", "TRUE"}, func(c *config.Config) bool { return c.DryRun }},
		{"allow insecure http", []string{"BOOKBOT_ALLOW_INSECURE_HTTP", "true"}, func(c *config.Config) bool { return c.AllowInsecureHTTP && c.Warnings == nil }},
		{"journal kept 90 days by default", nil, func(c *config.Config) bool { return c.JournalKeep == 90*24*time.Hour }},
		{"journal kept 7 days", []string{"BOOKBOT_JOURNAL_KEEP_DAYS", "7"}, func(c *config.Config) bool { return c.JournalKeep == 7*24*time.Hour }},
		{"journal kept forever", []string{"BOOKBOT_JOURNAL_KEEP_DAYS", "0"}, func(c *config.Config) bool { return c.JournalKeep == 0 }},
		{"http addr", []string{"BOOKBOT_HTTP_ADDR", ":9090"}, func(c *config.Config) bool { return c.HTTPAddr == ":9090" }},
		{"http addr ipv6", []string{"BOOKBOT_HTTP_ADDR", "[::1]:0"}, func(c *config.Config) bool { return c.HTTPAddr == "[::1]:0" }},
		{"http addr off", []string{"BOOKBOT_HTTP_ADDR", "off"}, func(c *config.Config) bool { return c.HTTPAddr == "" }},
		{"http addr OFF", []string{"BOOKBOT_HTTP_ADDR", "OFF"}, func(c *config.Config) bool { return c.HTTPAddr == "" }},
		{"log level debug", []string{"LOG_LEVEL", "debug"}, func(c *config.Config) bool { return c.LogLevel == slog.LevelDebug }},
		{"log level WARN", []string{"LOG_LEVEL", "WARN"}, func(c *config.Config) bool { return c.LogLevel == slog.LevelWarn }},
		{"log level error", []string{"LOG_LEVEL", "error"}, func(c *config.Config) bool { return c.LogLevel == slog.LevelError }},
		{"log format text", []string{"LOG_FORMAT", "Text"}, func(c *config.Config) bool { return c.LogFormat == "text" }},
		{"state dir", []string{"BOOKBOT_STATE_DIR", "/var/lib/bookbot/"}, func(c *config.Config) bool { return c.StateDir == "/var/lib/bookbot" }},
		{"state dir wins", []string{"BOOKBOT_STATE_DIR", "/srv/b", "STATE_DIRECTORY", "/var/lib/bookbot", "HOME", "/home/ada"}, func(c *config.Config) bool { return c.StateDir == "/srv/b" }},
		{"state dir from systemd", []string{"STATE_DIRECTORY", "/var/lib/bookbot:/var/lib/other", "XDG_STATE_HOME", "/x", "HOME", "/home/ada"}, func(c *config.Config) bool { return c.StateDir == "/var/lib/bookbot" }},
		{"state dir from xdg", []string{"XDG_STATE_HOME", "/home/ada/.state", "HOME", "/home/ada"}, func(c *config.Config) bool { return c.StateDir == "/home/ada/.state/bookbot" }},
		{"relative xdg ignored", []string{"XDG_STATE_HOME", "rel", "HOME", "/home/ada"}, func(c *config.Config) bool { return c.StateDir == "/home/ada/.local/state/bookbot" }},
		{"state dir from home", []string{"HOME", "/home/ada"}, func(c *config.Config) bool { return c.StateDir == "/home/ada/.local/state/bookbot" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, with(base(), tt.env...), config.NeedAll)
			if !tt.check(c) {
				t.Errorf("%v gave %+v", tt.env, c)
			}
		})
	}
}

// secretKey is a BOOKBOT_SECRET_KEY: 32 bytes, base64.
const secretKey = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY="

func TestInvalid(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     []string
		want    string // the variable with the one problem
		contain string
	}{
		{"bot token prefix", []string{"SLACK_BOT_TOKEN", "xapp-1-" + botSecret}, "SLACK_BOT_TOKEN", `SLACK_BOT_TOKEN must be a bot token starting with "xoxb-"`},
		{"bot token prefix only", []string{"SLACK_BOT_TOKEN", "xoxb-"}, "SLACK_BOT_TOKEN", `starting with "xoxb-"`},
		{"bot token white space", []string{"SLACK_BOT_TOKEN", "xoxb-1 " + botSecret}, "SLACK_BOT_TOKEN", "white space"},
		{"app token prefix", []string{"SLACK_APP_TOKEN", "xoxb-1-" + appSecret}, "SLACK_APP_TOKEN", `SLACK_APP_TOKEN must be an app-level token starting with "xapp-"`},
		{"app token control", []string{"SLACK_APP_TOKEN", "xapp-1\x00" + appSecret}, "SLACK_APP_TOKEN", "control characters"},
		{"slack api url relative", []string{"SLACK_API_URL", "slack.com/api"}, "SLACK_API_URL", "absolute http(s) URL"},
		{"slack api url scheme", []string{"SLACK_API_URL", "ftp://slack.com/api/"}, "SLACK_API_URL", "absolute http(s) URL"},
		{"slack api url query", []string{"SLACK_API_URL", "https://slack.com/api/?token=" + urlSecret}, "SLACK_API_URL", "query"},
		{"booking url relative", []string{"BOOKING_BASE_URL", "api.example.com"}, "BOOKING_BASE_URL", "absolute http(s) URL"},
		{"booking url credentials", []string{"BOOKING_BASE_URL", "https://ada:" + urlSecret + "@api.example.com"}, "BOOKING_BASE_URL", "credentials"},
		{"booking url credentials bad scheme", []string{"BOOKING_BASE_URL", "ftp://" + urlSecret + "@api.example.com"}, "BOOKING_BASE_URL", "credentials"},
		{"booking url unparsable credentials", []string{"BOOKING_BASE_URL", "https://ada:%zz" + urlSecret + "@api.example.com"}, "BOOKING_BASE_URL", "not a valid URL"},
		{"booking url unparsable", []string{"BOOKING_BASE_URL", "http://[::1"}, "BOOKING_BASE_URL", `not a valid URL: "http://[::1"`},
		{"booking url query", []string{"BOOKING_BASE_URL", "https://api.example.com/?key=" + urlSecret}, "BOOKING_BASE_URL", "query"},
		{"booking url fragment", []string{"BOOKING_BASE_URL", "https://api.example.com/#" + urlSecret}, "BOOKING_BASE_URL", "fragment"},
		{"booking key white space", []string{"BOOKING_API_KEY", "bk_" + keySecret + " x"}, "BOOKING_API_KEY", "white space"},
		{"secret key short", []string{"BOOKBOT_SECRET_KEY", "c2hvcnQ="}, "BOOKBOT_SECRET_KEY", "32 random bytes"},
		{"secret key not base64", []string{"BOOKBOT_SECRET_KEY", "not*base64*" + keySecret}, "BOOKBOT_SECRET_KEY", "not base64"},
		{"no owner key and no secret key", []string{"BOOKING_API_KEY", ""}, "BOOKING_API_KEY", "BOOKING_API_KEY is required"},
		{"user id", []string{"BOOKBOT_ALLOWED_USERS", "U0123ABCD,ada"}, "BOOKBOT_ALLOWED_USERS", `"ada" is not a Slack user ID`},
		{"user ids", []string{"BOOKBOT_ALLOWED_USERS", "u0123abcd,C0123,U1"}, "BOOKBOT_ALLOWED_USERS", `"u0123abcd", "C0123", "U1" are not Slack user IDs`},
		{"many user ids", []string{"BOOKBOT_ALLOWED_USERS", "a,b,c,d,e,f,g"}, "BOOKBOT_ALLOWED_USERS", `"e", 2 more are not`},
		{"bad ids with allow all", []string{"BOOKBOT_ALLOWED_USERS", "ada", "BOOKBOT_ALLOW_ALL", "true"}, "BOOKBOT_ALLOWED_USERS", `"ada"`},
		{"allow all", []string{"BOOKBOT_ALLOW_ALL", "yes"}, "BOOKBOT_ALLOW_ALL", `BOOKBOT_ALLOW_ALL must be true or false (or 1 or 0); got "yes"`},
		{"bad allow all, no users", []string{"BOOKBOT_ALLOW_ALL", "yes", "BOOKBOT_ALLOWED_USERS", ""}, "BOOKBOT_ALLOW_ALL", "true or false"},
		{"command no slash", []string{"BOOKBOT_COMMAND", "booking"}, "BOOKBOT_COMMAND", `got "booking"`},
		{"command upper case", []string{"BOOKBOT_COMMAND", "/Booking"}, "BOOKBOT_COMMAND", "lowercase"},
		{"command slash only", []string{"BOOKBOT_COMMAND", "/"}, "BOOKBOT_COMMAND", "slash command"},
		{"command too long", []string{"BOOKBOT_COMMAND", "/" + strings.Repeat("a", 32)}, "BOOKBOT_COMMAND", "up to 31"},
		{"command space", []string{"BOOKBOT_COMMAND", "/book it"}, "BOOKBOT_COMMAND", "slash command"},
		{"digest channel name", []string{"DIGEST_CHANNEL", "#general"}, "DIGEST_CHANNEL", `DIGEST_CHANNEL must be a channel ID such as C0123ABCD (not a channel name); got "#general"`},
		{"digest channel user", []string{"DIGEST_CHANNEL", "U0123ABCD"}, "DIGEST_CHANNEL", "channel ID"},
		{"digest schedule", []string{"DIGEST_SCHEDULE", "every evening"}, "DIGEST_SCHEDULE", `"every evening"`},
		{"digest schedule seconds", []string{"DIGEST_SCHEDULE", "0 0 17 * * *"}, "DIGEST_SCHEDULE", "5-field"},
		{"digest schedule zone", []string{"DIGEST_SCHEDULE", "CRON_TZ=Europe/Berlin 0 17 * * *"}, "DIGEST_SCHEDULE", "DIGEST_TIMEZONE"},
		{"digest timezone", []string{"DIGEST_TIMEZONE", "Mars/Olympus"}, "DIGEST_TIMEZONE", `DIGEST_TIMEZONE: "Mars/Olympus" is not an IANA time zone`},
		{"digest timezone local", []string{"DIGEST_TIMEZONE", "Local"}, "DIGEST_TIMEZONE", "IANA"},
		{"digest include emails", []string{"DIGEST_INCLUDE_EMAILS", "sometimes"}, "DIGEST_INCLUDE_EMAILS", `got "sometimes"`},
		{"digest skip empty", []string{"DIGEST_SKIP_EMPTY", "2"}, "DIGEST_SKIP_EMPTY", "true or false"},
		{"notify channel name", []string{"NOTIFY_CHANNEL", "#bookings"}, "NOTIFY_CHANNEL", "not a channel name"},
		{"notify routes without =", []string{"NOTIFY_ROUTES", "intro-call"}, "NOTIFY_ROUTES", "slug=CHANNEL pairs"},
		{"notify routes channel name", []string{"NOTIFY_ROUTES", "intro-call=#intros"}, "NOTIFY_ROUTES", `"#intros" must be a channel ID`},
		{"notify routes twice", []string{"NOTIFY_ROUTES", "a=C01,a=C02"}, "NOTIFY_ROUTES", `two channels for "a"`},
		{"notify interval too short", []string{"NOTIFY_INTERVAL", "10s"}, "NOTIFY_INTERVAL", "from 15s"},
		{"notify interval not a duration", []string{"NOTIFY_INTERVAL", "5"}, "NOTIFY_INTERVAL", `got "5"`},
		{"offer ttl too long", []string{"OFFER_TTL", "1000h"}, "OFFER_TTL", "from 1m to 720h"},
		{"offer ttl not a duration", []string{"OFFER_TTL", "7d"}, "OFFER_TTL", `got "7d"`},
		{"notify include emails", []string{"NOTIFY_INCLUDE_EMAILS", "maybe"}, "NOTIFY_INCLUDE_EMAILS", "true or false"},
		{"database url not postgres", []string{"BOOKBOT_DATABASE_URL", "mysql://u:hunter2@db/bookbot"}, "BOOKBOT_DATABASE_URL", "postgres://bookbot@db.example.com"},
		{"database url without host", []string{"BOOKBOT_DATABASE_URL", "postgres:///bookbot"}, "BOOKBOT_DATABASE_URL", "not shown here"},
		{"review channel", []string{"BOOKBOT_REVIEW_CHANNEL", "reviews"}, "BOOKBOT_REVIEW_CHANNEL", `got "reviews"`},
		{"booking page not a URL", []string{"BOOKING_PAGE_URL", "cal.example.com/ada"}, "BOOKING_PAGE_URL", "absolute http(s) URL"},
		{"booking page with credentials", []string{"BOOKING_PAGE_URL", "https://u:p@cal.example.com/"}, "BOOKING_PAGE_URL", "credentials"},
		{"booking page by its former name not a URL", []string{"BOOKBOT_BOOKING_PAGE_URL", "cal.example.com/ada"}, "BOOKBOT_BOOKING_PAGE_URL", "absolute http(s) URL"},
		{"booking page under both names", []string{"BOOKING_PAGE_URL", "https://cal.example.com/ada", "BOOKBOT_BOOKING_PAGE_URL", "https://cal.example.com/ada"}, "BOOKING_PAGE_URL",
			"BOOKING_PAGE_URL and BOOKBOT_BOOKING_PAGE_URL are both set"},
		{"dry run", []string{"BOOKBOT_DRY_RUN", "y"}, "BOOKBOT_DRY_RUN", "true or false"},
		{"allow insecure http", []string{"BOOKBOT_ALLOW_INSECURE_HTTP", "yes"}, "BOOKBOT_ALLOW_INSECURE_HTTP", `BOOKBOT_ALLOW_INSECURE_HTTP must be true or false (or 1 or 0); got "yes"`},
		{"bad allow insecure http, plain http", []string{"BOOKBOT_ALLOW_INSECURE_HTTP", "yes", "BOOKING_BASE_URL", "http://api.example.com"}, "BOOKBOT_ALLOW_INSECURE_HTTP", "true or false"},
		{"journal keep unit", []string{"BOOKBOT_JOURNAL_KEEP_DAYS", "90d"}, "BOOKBOT_JOURNAL_KEEP_DAYS", `BOOKBOT_JOURNAL_KEEP_DAYS must be a whole number of days from 0 (keep forever) to 36500; got "90d"`},
		{"journal keep negative", []string{"BOOKBOT_JOURNAL_KEEP_DAYS", "-1"}, "BOOKBOT_JOURNAL_KEEP_DAYS", "whole number of days"},
		{"journal keep huge", []string{"BOOKBOT_JOURNAL_KEEP_DAYS", "999999999999"}, "BOOKBOT_JOURNAL_KEEP_DAYS", "whole number of days"},
		{"http addr no port", []string{"BOOKBOT_HTTP_ADDR", "127.0.0.1"}, "BOOKBOT_HTTP_ADDR", `got "127.0.0.1"`},
		{"http addr bare port", []string{"BOOKBOT_HTTP_ADDR", "8080"}, "BOOKBOT_HTTP_ADDR", "host:port"},
		{"http addr port range", []string{"BOOKBOT_HTTP_ADDR", ":70000"}, "BOOKBOT_HTTP_ADDR", "host:port"},
		{"http addr named port", []string{"BOOKBOT_HTTP_ADDR", "localhost:http"}, "BOOKBOT_HTTP_ADDR", "host:port"},
		{"log level", []string{"LOG_LEVEL", "verbose"}, "LOG_LEVEL", `LOG_LEVEL must be debug, info, warn or error; got "verbose"`},
		{"log format", []string{"LOG_FORMAT", "logfmt"}, "LOG_FORMAT", `got "logfmt"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := problems(t, with(base(), tt.env...), config.NeedAll)
			if got := problemVars(e); !slices.Equal(got, []string{tt.want}) {
				t.Errorf("problems about %v, want [%s]: %v", got, tt.want, e)
			}
			if !strings.Contains(e.Error(), tt.contain) {
				t.Errorf("error does not say %q:\n%v", tt.contain, e)
			}
		})
	}
}

func TestFileVariants(t *testing.T) {
	t.Parallel()
	type pair struct{ name, value, secret string }
	pairs := []pair{
		{"SLACK_BOT_TOKEN", "xoxb-2-" + botSecret, botSecret},
		{"SLACK_APP_TOKEN", "xapp-2-" + appSecret, appSecret},
		{"BOOKING_API_KEY", "bk_2_" + keySecret, keySecret},
	}
	value := func(c *config.Config, name string) string {
		switch name {
		case "SLACK_BOT_TOKEN":
			return c.SlackBotToken.Value()
		case "SLACK_APP_TOKEN":
			return c.SlackAppToken.Value()
		}
		k, err := c.BookingKey.Key()
		if err != nil {
			t.Errorf("BookingKey.Key(): %v", err)
		}
		want, _ := booking.NewKey("bk_2_" + keySecret)
		if k.Equal(want) {
			return "bk_2_" + keySecret
		}
		return "a different key"
	}
	for _, p := range pairs {
		fileVar := p.name + "_FILE"
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			for _, content := range []string{p.value, p.value + "\n", "  " + p.value + "\r\n\n"} {
				path := writeFile(t, "secret", content)
				c := mustLoad(t, with(without(base(), p.name), fileVar, path), config.NeedAll)
				if got := value(c, p.name); got != p.value {
					t.Errorf("%s with %q: got %q", fileVar, content, got)
				}
			}
		})
		t.Run(p.name+"/both set", func(t *testing.T) {
			t.Parallel()
			e := problems(t, with(base(), fileVar, writeFile(t, "s", p.value)), config.NeedAll)
			want := fmt.Sprintf("set %s or %s, not both", p.name, fileVar)
			if !slices.Equal(problemVars(e), []string{p.name}) || !strings.Contains(e.Error(), want) {
				t.Errorf("want one problem saying %q, got %v", want, e)
			}
		})
		t.Run(p.name+"/missing file", func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "no-such-file")
			e := problems(t, with(without(base(), p.name), fileVar, path), config.NeedAll)
			if !slices.Equal(problemVars(e), []string{fileVar}) || !strings.Contains(e.Error(), path) || !strings.Contains(e.Error(), "no such file") {
				t.Errorf("want one problem naming %s and %s, got %v", fileVar, path, e)
			}
		})
		t.Run(p.name+"/directory", func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			e := problems(t, with(without(base(), p.name), fileVar, dir), config.NeedAll)
			if !slices.Equal(problemVars(e), []string{fileVar}) || !strings.Contains(e.Error(), dir) {
				t.Errorf("want one problem naming %s and %s, got %v", fileVar, dir, e)
			}
		})
		t.Run(p.name+"/empty file", func(t *testing.T) {
			t.Parallel()
			path := writeFile(t, "empty", " \n")
			e := problems(t, with(without(base(), p.name), fileVar, path), config.NeedAll)
			if !slices.Equal(problemVars(e), []string{fileVar}) || !strings.Contains(e.Error(), path) || !strings.Contains(e.Error(), "empty") {
				t.Errorf("want one problem naming %s and %s, got %v", fileVar, path, e)
			}
		})
	}
	t.Run("wrong prefix in file", func(t *testing.T) {
		t.Parallel()
		path := writeFile(t, "bot", "xapp-9-"+botSecret+"\n")
		e := problems(t, with(without(base(), "SLACK_BOT_TOKEN"), "SLACK_BOT_TOKEN_FILE", path), config.NeedAll)
		want := `SLACK_BOT_TOKEN_FILE must name a file holding a bot token starting with "xoxb-"`
		if !slices.Equal(problemVars(e), []string{"SLACK_BOT_TOKEN_FILE"}) || !strings.Contains(e.Error(), want) || strings.Contains(e.Error(), "xapp-9") {
			t.Errorf("want %q, got %v", want, e)
		}
	})
	t.Run("key file with white space inside", func(t *testing.T) {
		t.Parallel()
		path := writeFile(t, "key", "bk "+keySecret)
		e := problems(t, with(without(base(), "BOOKING_API_KEY"), "BOOKING_API_KEY_FILE", path), config.NeedAll)
		if !slices.Equal(problemVars(e), []string{"BOOKING_API_KEY_FILE"}) || !strings.Contains(e.Error(), path) {
			t.Errorf("want one problem naming the file, got %v", e)
		}
	})
}

// TestFileLimit: a _FILE file is read up to 64 KiB. A larger one (a log, a
// wrong path) is refused, naming the variable and the file, never what it
// holds, and its problem is reported with the others.
func TestFileLimit(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	values := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-3-" + botSecret,
		"SLACK_APP_TOKEN": "xapp-3-" + appSecret,
		"BOOKING_API_KEY": "bk_3_" + keySecret,
	}
	// padded is value then newlines, len bytes in all: trimmed, it is value.
	padded := func(value string, n int) string { return value + strings.Repeat("\n", n-len(value)) }
	tests := []struct {
		name    string
		content func(value string) string
		refused bool
	}{
		{"exactly the limit", func(v string) string { return padded(v, limit) }, false},
		{"one byte over the limit", func(v string) string { return padded(v, limit+1) }, true},
		{"a secret followed by a log", func(v string) string { return v + "\n" + strings.Repeat("a line of a log\n", 10000) }, true},
	}
	for _, name := range slices.Sorted(maps.Keys(values)) {
		fileVar := name + "_FILE"
		for _, tt := range tests {
			t.Run(fileVar+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				path := writeFile(t, "secret", tt.content(values[name]))
				env := with(without(base(), name), fileVar, path)
				if !tt.refused {
					c := mustLoad(t, env, config.NeedAll)
					if got := secretValue(t, c, name); got != values[name] {
						t.Errorf("%s = %q, want %q", name, got, values[name])
					}
					return
				}
				// Another problem alongside: both are reported.
				e := problems(t, with(env, "LOG_FORMAT", "xml"), config.NeedAll)
				if got := problemVars(e); !slices.Equal(got, []string{fileVar, "LOG_FORMAT"}) {
					t.Errorf("problems about %v, want [%s LOG_FORMAT]:\n%v", got, fileVar, e)
				}
				if want := fmt.Sprintf("%s: %s is larger than 64 KiB", fileVar, path); !strings.Contains(e.Error(), want) {
					t.Errorf("error does not say %q:\n%v", want, e)
				}
				if strings.Contains(e.Error(), "a line of a log") {
					t.Errorf("error shows the file's contents:\n%v", e)
				}
			})
		}
	}
}

// secretValue is the loaded value of SLACK_BOT_TOKEN, SLACK_APP_TOKEN or
// BOOKING_API_KEY, for comparing with what a test wrote.
func secretValue(t *testing.T, c *config.Config, name string) string {
	t.Helper()
	switch name {
	case "SLACK_BOT_TOKEN":
		return c.SlackBotToken.Value()
	case "SLACK_APP_TOKEN":
		return c.SlackAppToken.Value()
	}
	k, err := c.BookingKey.Key()
	if err != nil {
		t.Fatalf("BookingKey.Key(): %v", err)
	}
	// A Key never shows its value; find which one it is equal to.
	for _, v := range []string{"bk_3_" + keySecret, "bk_2_" + keySecret, "bk_" + keySecret} {
		if want, _ := booking.NewKey(v); k.Equal(want) {
			return v
		}
	}
	return "a different key"
}

// TestPlainHTTP: BOOKING_BASE_URL and SLACK_API_URL carry the API key and
// the Slack tokens, so plain http:// is refused unless it stays on this
// machine, or BOOKBOT_ALLOW_INSECURE_HTTP=true turns the refusal into a
// warning.
func TestPlainHTTP(t *testing.T) {
	t.Parallel()
	tests := []struct {
		url      string
		loopback bool // plain http is fine without permission
	}{
		{"http://127.0.0.1:8787", true},
		{"http://127.0.0.1", true},
		{"http://127.1.2.3:80/base/", true},
		{"http://localhost:8080", true},
		{"http://LocalHost", true},
		{"http://[::1]:9999/api/", true},
		{"http://[::ffff:127.0.0.1]:1", true},
		{"https://api.example.com", true}, // encrypted: never in question
		{"https://10.1.2.3:8443", true},
		{"http://api.example.com", false},
		{"HTTP://api.example.com/base", false},
		{"http://10.1.2.3:8080", false},
		{"http://192.168.1.20", false},
		{"http://0.0.0.0:8080", false},
		{"http://[::2]:80", false},
		{"http://[fe80::1%25eth0]:80", false},
		{"http://localhost.example.com", false},
		{"http://localhost.:8080", false},
		{"http://127.0.0.1.nip.io", false},
	}
	what := map[string]string{"BOOKING_BASE_URL": "the booking API key", "SLACK_API_URL": "the Slack tokens"}
	for _, name := range []string{"BOOKING_BASE_URL", "SLACK_API_URL"} {
		for _, tt := range tests {
			for _, allow := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s=%s/allow=%v", name, tt.url, allow), func(t *testing.T) {
					t.Parallel()
					env := with(base(), name, tt.url)
					if allow {
						env = with(env, "BOOKBOT_ALLOW_INSECURE_HTTP", "true")
					}
					if !tt.loopback && !allow {
						e := problems(t, env, config.NeedAll)
						want := name + " is plain http:// to "
						if got := problemVars(e); !slices.Equal(got, []string{name}) || !strings.HasPrefix(e.Problems[0].Msg, want) ||
							!strings.Contains(e.Error(), what[name]) || !strings.Contains(e.Error(), "BOOKBOT_ALLOW_INSECURE_HTTP=true") {
							t.Errorf("want one problem starting %q, naming %s and BOOKBOT_ALLOW_INSECURE_HTTP=true; got %v", want, what[name], e)
						}
						return
					}
					c := mustLoad(t, env, config.NeedAll)
					if tt.loopback {
						if c.Warnings != nil {
							t.Errorf("warnings for %s: %v", tt.url, c.Warnings)
						}
						return
					}
					if len(c.Warnings) != 1 || c.Warnings[0].Var != name || !strings.HasPrefix(c.Warnings[0].Msg, name+" is plain http:// to ") ||
						!strings.Contains(c.Warnings[0].Msg, what[name]+" over it unencrypted") {
						t.Errorf("want one warning about %s sending %s unencrypted; got %v", name, what[name], c.Warnings)
					}
				})
			}
		}
	}
	t.Run("both, allowed: a warning each, logged", func(t *testing.T) {
		t.Parallel()
		c := mustLoad(t, with(base(), "BOOKING_BASE_URL", "http://booking.internal:8080", "SLACK_API_URL", "http://slack.internal/api/",
			"BOOKBOT_ALLOW_INSECURE_HTTP", "1"), config.NeedAll)
		if got := problemVars(&config.Error{Problems: c.Warnings}); !slices.Equal(got, []string{"SLACK_API_URL", "BOOKING_BASE_URL"}) {
			t.Fatalf("warnings about %v, want [SLACK_API_URL BOOKING_BASE_URL]: %v", got, c.Warnings)
		}
		if c.BookingBaseURL != "http://booking.internal:8080" || c.SlackAPIURL != "http://slack.internal/api/" {
			t.Errorf("URLs not kept: %q, %q", c.BookingBaseURL, c.SlackAPIURL)
		}
		var buf bytes.Buffer
		c.LogWarnings(slog.New(slog.NewJSONHandler(&buf, nil)))
		lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
		if len(lines) != 2 {
			t.Fatalf("logged %d lines, want 2:\n%s", len(lines), buf.String())
		}
		for i, name := range []string{"SLACK_API_URL", "BOOKING_BASE_URL"} {
			var rec struct{ Level, Msg, Var string }
			if err := json.Unmarshal([]byte(lines[i]), &rec); err != nil {
				t.Fatal(err)
			}
			if rec.Level != "WARN" || rec.Var != name || !strings.HasPrefix(rec.Msg, name+" is plain http://") {
				t.Errorf("line %d = %s, want a WARN about %s", i+1, lines[i], name)
			}
		}
		noSecrets(t, "log", buf.String())
	})
	t.Run("both, refused: reported together", func(t *testing.T) {
		t.Parallel()
		e := problems(t, with(base(), "BOOKING_BASE_URL", "http://booking.internal:8080", "SLACK_API_URL", "http://slack.internal/api/"), config.NeedAll)
		if got := problemVars(e); !slices.Equal(got, []string{"SLACK_API_URL", "BOOKING_BASE_URL"}) {
			t.Errorf("problems about %v, want [SLACK_API_URL BOOKING_BASE_URL]: %v", got, e)
		}
	})
}

func TestKeyFileRotation(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "key", "bk_one_"+keySecret+"\n")
	c := mustLoad(t, with(without(base(), "BOOKING_API_KEY"), "BOOKING_API_KEY_FILE", path), config.NeedAll)
	one, _ := booking.NewKey("bk_one_" + keySecret)
	two, _ := booking.NewKey("bk_rotated_" + keySecret)
	if k, err := c.BookingKey.Key(); err != nil || !k.Equal(one) {
		t.Fatalf("Key() before rotation = _, %v; want the first key", err)
	}
	if err := os.WriteFile(path, []byte("bk_rotated_"+keySecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	if k, err := c.BookingKey.Key(); err != nil || !k.Equal(two) {
		t.Fatalf("Key() after rotation = _, %v; want the rotated key", err)
	}
}

func TestNeed(t *testing.T) {
	t.Parallel()
	slack := []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"}
	book := []string{"BOOKING_BASE_URL", "BOOKING_API_KEY"}
	users := []string{"BOOKBOT_ALLOWED_USERS"}
	tests := []struct {
		name  string
		env   map[string]string
		need  config.Need
		wantP []string // the variables reported missing, in order
	}{
		{"nothing needed, nothing set", map[string]string{}, 0, nil},
		{"booking alone", with(without(base(), slack...), "BOOKBOT_ALLOWED_USERS", ""), config.NeedBooking, nil},
		{"booking missing", map[string]string{}, config.NeedBooking, book},
		{"slack missing", map[string]string{}, config.NeedSlack, slack},
		{"users missing", map[string]string{}, config.NeedUsers, users},
		{"users not needed with allow all", map[string]string{"BOOKBOT_ALLOW_ALL": "true"}, config.NeedUsers, nil},
		{"users needed with allow all false", map[string]string{"BOOKBOT_ALLOW_ALL": "false"}, config.NeedUsers, users},
		{"users only blanks", map[string]string{"BOOKBOT_ALLOWED_USERS": " , ,"}, config.NeedUsers, users},
		{"slack and booking", without(base(), "BOOKBOT_ALLOWED_USERS"), config.NeedSlack | config.NeedBooking, nil},
		{"all missing", map[string]string{}, config.NeedAll, append(append(slices.Clone(slack), book...), users...)},
		{"all but slack set", without(base(), slack...), config.NeedAll, slack},
		{"blank values are unset", map[string]string{"BOOKING_BASE_URL": "  ", "BOOKING_API_KEY": "\n"}, config.NeedBooking, book},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.wantP == nil {
				mustLoad(t, tt.env, tt.need)
				return
			}
			e := problems(t, tt.env, tt.need)
			if got := problemVars(e); !slices.Equal(got, tt.wantP) {
				t.Errorf("problems about %v, want %v:\n%v", got, tt.wantP, e)
			}
			for _, p := range e.Problems {
				if !strings.Contains(p.Msg, "required") {
					t.Errorf("problem %q does not say required", p.Msg)
				}
			}
		})
	}
	t.Run("set but not needed is still checked", func(t *testing.T) {
		t.Parallel()
		e := problems(t, map[string]string{"SLACK_BOT_TOKEN": "nope-" + botSecret, "BOOKING_BASE_URL": "x"}, 0)
		if got := problemVars(e); !slices.Equal(got, []string{"SLACK_BOT_TOKEN", "BOOKING_BASE_URL"}) {
			t.Errorf("problems about %v:\n%v", got, e)
		}
	})
	t.Run("not needed and unset stays zero", func(t *testing.T) {
		t.Parallel()
		c := mustLoad(t, map[string]string{}, 0)
		if !c.SlackBotToken.IsZero() || !c.SlackAppToken.IsZero() || c.BookingKey != nil || c.BookingBaseURL != "" || c.AllowedUsers != nil {
			t.Errorf("unset parts not zero: %+v", c)
		}
	})
}

func TestAllProblemsTogether(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"SLACK_BOT_TOKEN":      "xapp-1-" + botSecret,                         // wrong prefix
		"SLACK_APP_TOKEN":      "xapp-1-" + appSecret,                         // fine
		"SLACK_APP_TOKEN_FILE": filepath.Join(t.TempDir(), "gone"),            // conflict and unreadable
		"BOOKING_BASE_URL":     "https://u:" + urlSecret + "@api.example.com", // credentials
		"BOOKING_API_KEY":      "bk_" + keySecret,                             // fine
		"DIGEST_TIMEZONE":      "Nowhere/Special",                             // unknown zone
		"BOOKBOT_DRY_RUN":      "maybe",                                       // bad bool
		"LOG_FORMAT":           "xml",                                         // bad choice
		"BOOKBOT_ALLOW_ALL":    "false",                                       // and no users: missing
		"DIGEST_CHANNEL":       "C0123ABCD",                                   // fine
		"BOOKBOT_COMMAND":      "/booking",                                    // fine
		"DIGEST_SCHEDULE":      "@daily",                                      // fine
		"BOOKBOT_HTTP_ADDR":    "off",                                         // fine
		"LOG_LEVEL":            "debug",                                       // fine
	}
	e := problems(t, env, config.NeedAll)
	want := []string{
		"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_APP_TOKEN_FILE", "BOOKING_BASE_URL",
		"BOOKBOT_ALLOWED_USERS", "DIGEST_TIMEZONE", "BOOKBOT_DRY_RUN", "LOG_FORMAT",
	}
	if got := problemVars(e); !slices.Equal(got, want) {
		t.Errorf("problems about\n %v\nwant\n %v\n%v", got, want, e)
	}
	if !strings.HasPrefix(e.Error(), fmt.Sprintf("configuration: %d problems:\n  - SLACK_BOT_TOKEN ", len(want))) {
		t.Errorf("error starts %q", e.Error())
	}

	five := problems(t, map[string]string{
		"BOOKING_API_KEY": "bk_" + keySecret, "SLACK_BOT_TOKEN": "xoxb-1", "SLACK_APP_TOKEN": "xapp-1",
		"BOOKBOT_ALLOWED_USERS": "U1AB",
		"BOOKBOT_COMMAND":       "booking", // 1
		"DIGEST_CHANNEL":        "general", // 2
		"DIGEST_SCHEDULE":       "often",   // 3
		"LOG_LEVEL":             "loud",    // 4
	}, config.NeedAll) // 5: BOOKING_BASE_URL missing
	if n := len(strings.Split(five.Error(), "\n")) - 1; n != 5 || len(five.Problems) != 5 {
		t.Errorf("want 5 problem lines, got %d:\n%v", n, five)
	}
}

func TestOneProblem(t *testing.T) {
	t.Parallel()
	e := problems(t, with(base(), "LOG_FORMAT", "xml"), config.NeedAll)
	if want := "configuration: 1 problem:\n  - LOG_FORMAT must be json or text; got \"xml\""; e.Error() != want {
		t.Errorf("Error() = %q, want %q", e.Error(), want)
	}
}

func TestSecretsNeverShown(t *testing.T) {
	t.Parallel()
	keyFile := writeFile(t, "key", "bk_"+keySecret+"\n")
	botFile := writeFile(t, "bot", "xoxb-1-"+botSecret+"\n")
	envs := map[string]map[string]string{
		"values": base(),
		"files": with(without(base(), "BOOKING_API_KEY", "SLACK_BOT_TOKEN"),
			"BOOKING_API_KEY_FILE", keyFile, "SLACK_BOT_TOKEN_FILE", botFile),
	}
	for name, env := range envs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c := mustLoad(t, env, config.NeedAll)
			if c.SlackBotToken.IsZero() || c.SlackAppToken.IsZero() || c.BookingKey == nil {
				t.Fatal("secrets not loaded")
			}
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%T", "%10.3s"} {
				noSecrets(t, verb+" of *Config", fmt.Sprintf(verb, c))
				noSecrets(t, verb+" of Config", fmt.Sprintf(verb, *c))
				noSecrets(t, verb+" of the bot token", fmt.Sprintf(verb, c.SlackBotToken))
			}
			noSecrets(t, "Println", fmt.Sprintln(c, *c, c.SlackBotToken, c.SlackAppToken, c.BookingKey))
			j, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			noSecrets(t, "JSON", string(j))
			if !strings.Contains(string(j), `"SlackBotToken":"[REDACTED]"`) {
				t.Errorf("JSON does not redact the token: %s", j)
			}
			var buf bytes.Buffer
			slog.New(slog.NewJSONHandler(&buf, nil)).Info("loaded", "config", c, "bot", c.SlackBotToken, "key", c.BookingKey)
			slog.New(slog.NewTextHandler(&buf, nil)).Info("loaded", "config", c, "cfg", *c, "app", c.SlackAppToken, "key", c.BookingKey)
			noSecrets(t, "slog output", buf.String())
		})
	}
}

func TestSecret(t *testing.T) {
	t.Parallel()
	var zero config.Secret
	if !zero.IsZero() || zero.Value() != "" {
		t.Error("zero Secret is not zero")
	}
	c := mustLoad(t, base(), config.NeedSlack)
	s := c.SlackBotToken
	if s.IsZero() || s.Value() != "xoxb-1-"+botSecret {
		t.Errorf("Value() = %q", s.Value())
	}
	for _, got := range []string{s.String(), s.GoString(), fmt.Sprintf("%d", s), s.LogValue().String()} {
		if got != "[REDACTED]" {
			t.Errorf("got %q, want [REDACTED]", got)
		}
	}
	if b, _ := s.MarshalText(); string(b) != "[REDACTED]" {
		t.Errorf("MarshalText = %q", b)
	}
	if b, _ := s.MarshalJSON(); string(b) != `"[REDACTED]"` {
		t.Errorf("MarshalJSON = %q", b)
	}
	if b, _ := json.Marshal(map[config.Secret]int{s: 1}); strings.Contains(string(b), botSecret) {
		t.Errorf("map key JSON = %s", b)
	}
}

func TestAllowed(t *testing.T) {
	t.Parallel()
	c := mustLoad(t, with(base(), "BOOKBOT_ALLOWED_USERS", "U0123ABCD,W0456"), config.NeedAll)
	for id, want := range map[string]bool{"U0123ABCD": true, "W0456": true, "U999": false, "": false, "u0123abcd": false} {
		if got := c.Allowed(id); got != want {
			t.Errorf("Allowed(%q) = %v, want %v", id, got, want)
		}
	}
	all := mustLoad(t, with(base(), "BOOKBOT_ALLOW_ALL", "true"), config.NeedAll)
	if !all.Allowed("U999") || !all.Allowed("U0123ABCD") {
		t.Error("BOOKBOT_ALLOW_ALL=true does not let everyone in")
	}
	if !slices.Equal(all.AllowedUsers, []string{"U0123ABCD"}) {
		t.Errorf("AllowedUsers with allow all = %v", all.AllowedUsers)
	}
}

// TestVarsAreWhatLoadReads keeps Vars and Load from drifting: Load asks for
// exactly the listed names, and each of them changes Load's result.
func TestVarsAreWhatLoadReads(t *testing.T) {
	t.Parallel()
	var (
		mu   sync.Mutex
		read = map[string]bool{}
	)
	env := base()
	if _, err := config.Load(func(k string) string {
		mu.Lock()
		defer mu.Unlock()
		read[k] = true
		return env[k]
	}, config.NeedAll); err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, v := range config.Vars() {
		listed = append(listed, v.Name)
	}
	if got, want := slices.Sorted(maps.Keys(read)), slices.Sorted(slices.Values(listed)); !slices.Equal(got, want) {
		t.Errorf("Load reads\n %v\nVars lists\n %v", got, want)
	}

	keyFile := writeFile(t, "key", "bk_other")
	secretFile := writeFile(t, "secret", secretKey)
	// A value for each variable that changes Load's result, alone.
	effect := map[string]string{
		"BOOKBOT_SECRET_KEY":          secretKey,
		"BOOKBOT_SECRET_KEY_FILE":     secretFile,
		"SLACK_BOT_TOKEN":             "xoxb-2-other",
		"SLACK_BOT_TOKEN_FILE":        keyFile,
		"SLACK_APP_TOKEN":             "xapp-2-other",
		"SLACK_APP_TOKEN_FILE":        keyFile,
		"SLACK_API_URL":               "http://127.0.0.1:1/api/",
		"BOOKING_BASE_URL":            "http://127.0.0.1:8787",
		"BOOKING_API_KEY":             "bk_other",
		"BOOKING_API_KEY_FILE":        keyFile,
		"BOOKBOT_ALLOW_INSECURE_HTTP": "true",
		"BOOKBOT_ALLOWED_USERS":       "W0456",
		"BOOKBOT_ALLOW_ALL":           "true",
		"BOOKBOT_COMMAND":             "/book",
		"DIGEST_CHANNEL":              "C0123ABCD",
		"DIGEST_SCHEDULE":             "@daily",
		"DIGEST_TIMEZONE":             "Asia/Tokyo",
		"DIGEST_INCLUDE_EMAILS":       "true",
		"DIGEST_SKIP_EMPTY":           "true",
		"BOOKBOT_REVIEW_CHANNEL":      "C0456",
		"BOOKBOT_DATABASE_URL":        "postgres://bookbot:pw@db.example.com/bookbot",
		"BOOKBOT_DATABASE_URL_FILE":   keyFile,
		"NOTIFY_CHANNEL":              "C0789",
		"NOTIFY_ROUTES":               "intro-call=C0790",
		"NOTIFY_INTERVAL":             "30s",
		"OFFER_TTL":                   "24h",
		"NOTIFY_INCLUDE_EMAILS":       "true",
		"BOOKING_PAGE_URL":            "https://cal.example.com/ada",
		"BOOKBOT_BOOKING_PAGE_URL":    "https://cal.example.com/ada",
		"BOOKBOT_STATE_DIR":           "/srv/bookbot",
		"BOOKBOT_DRY_RUN":             "true",
		"BOOKBOT_JOURNAL_KEEP_DAYS":   "7",
		"BOOKBOT_HTTP_ADDR":           "off",
		"LOG_LEVEL":                   "debug",
		"LOG_FORMAT":                  "text",
		"STATE_DIRECTORY":             "/var/lib/bookbot",
		"XDG_STATE_HOME":              "/xdg",
		"HOME":                        "/home/ada",
	}
	before := mustLoad(t, env, config.NeedAll)
	for _, name := range listed {
		value, ok := effect[name]
		if !ok {
			t.Errorf("no test value for %s: add one to this test (and to TestValid and TestInvalid)", name)
			continue
		}
		after, err := config.Load(getenv(with(env, name, value)), config.NeedAll)
		if err == nil && reflect.DeepEqual(before, after) {
			t.Errorf("setting %s=%q changed nothing", name, value)
		}
	}
}

func TestVars(t *testing.T) {
	t.Parallel()
	vars := config.Vars()
	byName := map[string]config.Var{}
	for _, v := range vars {
		if _, dup := byName[v.Name]; dup {
			t.Errorf("%s listed twice", v.Name)
		}
		if v.Meaning == "" || strings.Contains(v.Meaning, "\n") {
			t.Errorf("%s: meaning %q is not one line", v.Name, v.Meaning)
		}
		byName[v.Name] = v
	}
	var secret []string
	for _, v := range vars {
		if v.Secret {
			secret = append(secret, v.Name)
		}
	}
	if want := []string{"SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "BOOKING_API_KEY", "BOOKBOT_SECRET_KEY", "BOOKBOT_DATABASE_URL"}; !slices.Equal(secret, want) {
		t.Errorf("secret variables %v, want %v", secret, want)
	}
	// The contract's names and defaults are fixed.
	for name, def := range map[string]string{
		"SLACK_BOT_TOKEN": "", "SLACK_BOT_TOKEN_FILE": "", "SLACK_APP_TOKEN": "", "SLACK_APP_TOKEN_FILE": "",
		"SLACK_API_URL": "https://slack.com/api/", "BOOKING_BASE_URL": "", "BOOKING_API_KEY": "", "BOOKING_API_KEY_FILE": "",
		"BOOKBOT_ALLOWED_USERS": "", "BOOKBOT_ALLOW_ALL": "false", "BOOKBOT_COMMAND": "/booking", "DIGEST_CHANNEL": "",
		"DIGEST_SCHEDULE": "0 17 * * *", "DIGEST_TIMEZONE": "UTC",
		"BOOKBOT_HTTP_ADDR": "127.0.0.1:8080", "LOG_LEVEL": "info", "LOG_FORMAT": "json",
	} {
		v, ok := byName[name]
		if !ok {
			t.Errorf("%s is not listed", name)
		} else if v.Default != def {
			t.Errorf("%s default %q, want %q", name, v.Default, def)
		}
	}
	if d := byName["BOOKBOT_STATE_DIR"].Default; !strings.Contains(d, "STATE_DIRECTORY") {
		t.Errorf("BOOKBOT_STATE_DIR default %q does not describe the computed default", d)
	}
	vars[0].Name = "CHANGED"
	if config.Vars()[0].Name == "CHANGED" {
		t.Error("Vars returns its own table, not a copy")
	}
}

// TestProcessEnvironmentIgnored checks that only getenv is consulted, never
// the process environment (caarlos0/env falls back to it without a map).
// Not parallel: it sets the process environment.
func TestProcessEnvironmentIgnored(t *testing.T) {
	t.Setenv("BOOKING_BASE_URL", "https://api.example.com")
	t.Setenv("BOOKING_API_KEY", "bk_"+keySecret)
	t.Setenv("LOG_LEVEL", "nonsense")
	e := problems(t, map[string]string{}, config.NeedBooking)
	if got := problemVars(e); !slices.Equal(got, []string{"BOOKING_BASE_URL", "BOOKING_API_KEY"}) {
		t.Errorf("problems about %v:\n%v", got, e)
	}
	c, err := config.Load(nil, 0)
	if err != nil || c.LogLevel != slog.LevelInfo {
		t.Errorf("Load(nil, 0) = %+v, %v", c, err)
	}
}

// A database URL bookbot cannot use is refused without quoting it: it may
// hold a password.
func TestDatabaseURLIsNeverQuoted(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"mysql://u:hunter2@db/x", "postgres://u:hunter2@/x", "hunter2"} {
		e := base()
		e["BOOKBOT_DATABASE_URL"] = u
		_, err := config.Load(func(k string) string { return e[k] }, config.NeedAll)
		if err == nil || !strings.Contains(err.Error(), "BOOKBOT_DATABASE_URL") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%q: %v", u, err)
		}
	}
}
