package config

import (
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/caarlos0/env/v11"
)

// settings is the single table of variables: Load parses the environment
// into it with caarlos0/env, and Vars describes it. A variable that is not a
// field here is neither read nor listed, so the two cannot drift apart.
//
// Tags: env and envDefault are caarlos0/env's; meaning is the one-line
// description; secret marks a value that must never be shown; default
// describes a default that is computed rather than fixed. The _FILE
// variables hold paths that Load reads itself, with a size limit: never give
// them caarlos0/env's ",file", which reads a file whole, however large.
type settings struct {
	SlackBotToken     string `env:"SLACK_BOT_TOKEN" secret:"true" meaning:"Slack bot token, xoxb-…; required (this or SLACK_BOT_TOKEN_FILE) by commands that talk to Slack"`
	SlackBotTokenFile string `env:"SLACK_BOT_TOKEN_FILE" meaning:"a file holding the Slack bot token, instead of SLACK_BOT_TOKEN"`
	SlackAppToken     string `env:"SLACK_APP_TOKEN" secret:"true" meaning:"Slack app-level token with connections:write, xapp-…; required (this or SLACK_APP_TOKEN_FILE) by commands that talk to Slack"`
	SlackAppTokenFile string `env:"SLACK_APP_TOKEN_FILE" meaning:"a file holding the Slack app-level token, instead of SLACK_APP_TOKEN"`
	SlackAPIURL       string `env:"SLACK_API_URL" envDefault:"https://slack.com/api/" meaning:"Slack Web API base URL; Socket Mode connects to whatever apps.connections.open on this base returns"`

	BookingBaseURL    string `env:"BOOKING_BASE_URL" meaning:"the booking API's {base_url}; bookbot appends /api/v1 itself; required by commands that call the API"`
	BookingAPIKey     string `env:"BOOKING_API_KEY" secret:"true" meaning:"the owner's booking API key, used intact; required (this or BOOKING_API_KEY_FILE) by commands that call the API"`
	BookingAPIKeyFile string `env:"BOOKING_API_KEY_FILE" meaning:"a file holding the booking API key, instead of BOOKING_API_KEY; re-read when it changes, so the key can be rotated without a restart"`

	SecretKey     string `env:"BOOKBOT_SECRET_KEY" secret:"true" meaning:"32 random bytes, base64 (openssl rand -base64 32): the key that encrypts people's own booking API keys at rest; without it /booking connect tells people the operator must set it; with it, BOOKING_API_KEY may be unset (own calendars only)"`
	SecretKeyFile string `env:"BOOKBOT_SECRET_KEY_FILE" meaning:"a file holding BOOKBOT_SECRET_KEY, instead of the variable"`

	AllowInsecureHTTP bool `env:"BOOKBOT_ALLOW_INSECURE_HTTP" envDefault:"false" meaning:"true allows plain http:// to a host other than this machine in BOOKING_BASE_URL and SLACK_API_URL, sending the API key or Slack tokens unencrypted (each command then warns); loopback needs no permission"`

	AllowedUsers []string `env:"BOOKBOT_ALLOWED_USERS" meaning:"comma-separated Slack user IDs (U…/W…) who may use the bot; everyone else is refused, except that a person an allowed user offered times to (/booking offer) may book one of them, and nothing else; required unless BOOKBOT_ALLOW_ALL=true"`
	AllowAll     bool     `env:"BOOKBOT_ALLOW_ALL" envDefault:"false" meaning:"true lets everyone in the workspace use the bot; BOOKBOT_ALLOWED_USERS is then not needed, and its first person gets the owner's calendar's reviews when no review channel is set"`
	Command      string   `env:"BOOKBOT_COMMAND" envDefault:"/booking" meaning:"the slash command name: a / then up to 31 lowercase letters, digits, - or _"`

	DigestChannel       string `env:"DIGEST_CHANNEL" meaning:"channel ID (C…/G…/D…) for the next-day digest; empty turns the digest off"`
	DigestSchedule      string `env:"DIGEST_SCHEDULE" envDefault:"0 17 * * *" meaning:"when the digest is posted: a 5-field cron spec or a descriptor such as @daily or @every 1h"`
	DigestTimezone      string `env:"DIGEST_TIMEZONE" envDefault:"UTC" meaning:"IANA time zone the schedule and \"tomorrow\" are computed in"`
	DigestIncludeEmails bool   `env:"DIGEST_INCLUDE_EMAILS" envDefault:"false" meaning:"true shows attendees' email addresses in the digest"`
	DigestSkipEmpty     bool   `env:"DIGEST_SKIP_EMPTY" envDefault:"false" meaning:"true posts no digest when there are no bookings tomorrow"`

	NotifyChannel       string `env:"NOTIFY_CHANNEL" meaning:"channel ID for live notices of new, cancelled and moved bookings; empty turns them off"`
	NotifyRoutes        string `env:"NOTIFY_ROUTES" meaning:"slug=CHANNEL,slug=CHANNEL: an event type's notices go to that channel instead of NOTIFY_CHANNEL"`
	NotifyInterval      string `env:"NOTIFY_INTERVAL" envDefault:"1m" meaning:"how often the bookings list is read for notices, a Go duration from 15s"`
	NotifyIncludeEmails bool   `env:"NOTIFY_INCLUDE_EMAILS" envDefault:"false" meaning:"true shows attendees' email addresses in notices"`

	OfferTTL string `env:"OFFER_TTL" envDefault:"168h" meaning:"how long an offer card (/booking offer) can be booked from, a Go duration from 1m to 720h"`

	ReviewChannel   string `env:"BOOKBOT_REVIEW_CHANNEL" meaning:"optional channel ID where the owner's calendar's outcomes that need a human look are posted; unset: a DM to the first allowed user acting on the owner's calendar, else to the first allowed user. A person's own calendar's go to the people acting on it, by DM"`
	BookingPage     string `env:"BOOKING_PAGE_URL" meaning:"optional address of the owner's public booking page, such as https://book.example.com/ada: linked wherever bookbot sends people there (team events, flows the API does not support), and a link posted in Slack to one of its event types (the page's address, then /event-slug) unfurls into a card of that event type's free times; empty turns unfurls off"`
	BookingPageOld  string `env:"BOOKBOT_BOOKING_PAGE_URL" meaning:"the former name of BOOKING_PAGE_URL, still read, with a warning at start; setting both is an error"`
	DatabaseURL     string `env:"BOOKBOT_DATABASE_URL" secret:"true" meaning:"postgres://… puts bookbot's state in PostgreSQL instead of BOOKBOT_STATE_DIR, so several replicas can share it; it may hold a password, so it is never shown"`
	DatabaseURLFile string `env:"BOOKBOT_DATABASE_URL_FILE" meaning:"a file holding BOOKBOT_DATABASE_URL, instead of the variable"`
	StateDir        string `env:"BOOKBOT_STATE_DIR" default:"$STATE_DIRECTORY, else $XDG_STATE_HOME/bookbot, else $HOME/.local/state/bookbot, else ./bookbot-state" meaning:"directory for bookbot's own state"`
	JournalKeep     string `env:"BOOKBOT_JOURNAL_KEEP_DAYS" envDefault:"90" meaning:"days a settled journal entry is kept (0: forever); entries still in flight or waiting for a person are kept however old"`
	DryRun          bool   `env:"BOOKBOT_DRY_RUN" envDefault:"false" meaning:"true sends no bookings or cancellations to the booking API; bookbot says what it would have done"`
	HTTPAddr        string `env:"BOOKBOT_HTTP_ADDR" envDefault:"127.0.0.1:8080" meaning:"host:port of the local HTTP listener; off disables it"`
	LogLevel        string `env:"LOG_LEVEL" envDefault:"info" meaning:"debug, info, warn or error"`
	LogFormat       string `env:"LOG_FORMAT" envDefault:"json" meaning:"json or text"`

	// Read only to find the default of BOOKBOT_STATE_DIR.
	StateDirectory string `env:"STATE_DIRECTORY" meaning:"set by systemd from StateDirectory=; the first path is the default BOOKBOT_STATE_DIR"`
	XDGStateHome   string `env:"XDG_STATE_HOME" meaning:"an absolute path here makes $XDG_STATE_HOME/bookbot the default BOOKBOT_STATE_DIR"`
	Home           string `env:"HOME" meaning:"the user's home directory; $HOME/.local/state/bookbot is the default BOOKBOT_STATE_DIR when neither of the above is set"`
}

// Var describes one environment variable Load reads.
type Var struct {
	Name    string
	Default string // "" when there is none; a description when it is computed
	Meaning string // one line
	Secret  bool   // the value is a credential and is never shown
}

// Vars lists every variable Load reads, in a stable order, for printing a
// configuration table (docs/configuration.md, generated from it, and
// `bookbot check`'s).
func Vars() []Var { return slices.Clone(table().vars) }

type varTable struct {
	vars   []Var
	byName map[string]int    // variable → index in vars
	field  map[string]string // struct field name → variable
}

// table is derived from settings once: the names and defaults as
// caarlos0/env itself reads the tags, the rest from our own tags.
var table = sync.OnceValue(func() varTable {
	params, err := env.GetFieldParamsWithOptions(&settings{}, env.Options{Environment: map[string]string{}})
	if err != nil {
		panic(fmt.Sprintf("config: bad settings tags: %v", err))
	}
	rt := reflect.TypeFor[settings]()
	if len(params) != rt.NumField() {
		panic("config: every settings field needs an env tag")
	}
	t := varTable{byName: map[string]int{}, field: map[string]string{}}
	for i, p := range params {
		f := rt.Field(i)
		v := Var{
			Name:    p.Key,
			Default: p.DefaultValue,
			Meaning: f.Tag.Get("meaning"),
			Secret:  f.Tag.Get("secret") == "true",
		}
		if !p.HasDefaultValue {
			v.Default = f.Tag.Get("default")
		}
		if _, dup := t.byName[v.Name]; dup || v.Meaning == "" {
			panic("config: settings field " + f.Name + " is a duplicate or has no meaning tag")
		}
		t.byName[v.Name] = len(t.vars)
		t.field[f.Name] = v.Name
		t.vars = append(t.vars, v)
	}
	return t
})
