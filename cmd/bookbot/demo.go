package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/bookingtest"
	"github.com/bookbot/bookbot/bot/slacktest"
	"github.com/bookbot/bookbot/cmd/bookbot/internal/console"
	"github.com/bookbot/bookbot/digest"
	"github.com/bookbot/bookbot/personal"
)

// stdin is the demo console's input; tests replace it.
var stdin io.Reader = os.Stdin

const (
	demoUser    = "UDEMO"
	demoChannel = "CDIGEST"
	demoGrace   = "UGRACE"
	// demoPage is the owner's booking page in the demo: links to its event
	// types (:link) unfurl into cards of free times.
	demoPage = "https://book.example.com/demo"
)

// demoStep is the Workflow Builder step as deploy/slack-app-manifest.yaml
// declares it (a test holds the two together), for :step.
var demoStep = slacktest.Function{
	CallbackID: "offer_times_step",
	Title:      "Offer times",
	Inputs: []slacktest.Param{
		{Name: "channel_id", Type: "slack#/types/channel_id", Required: true},
		{Name: "count", Type: "integer"},
		{Name: "event_type", Type: "string", Required: true},
		{Name: "people", Type: "array", Items: "slack#/types/user_id"},
	},
	Outputs: []slacktest.Param{
		{Name: "attendee", Type: "slack#/types/user_id", Required: true},
		{Name: "booking_id", Type: "string", Required: true},
		{Name: "start_time", Type: "slack#/types/timestamp", Required: true},
	},
}

// runDemo runs bookbot on this machine with no credentials: the sandbox
// booking API, the Slack stand-in and the real bot between them over a real
// Socket Mode WebSocket, worked from a console.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	script := fs.String("script", "", "run the console lines in `FILE` instead of reading the terminal")
	faults := fs.Bool("faults", false, "allow :fault commands that break the sandbox booking API on purpose")
	tz := fs.String("tz", "", "the demo person's Slack time zone (IANA name; default: this machine's)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("demo takes no arguments, only flags: %q", fs.Args())
	}
	zone, err := demoZone(*tz)
	if err != nil {
		return err
	}
	in := stdin
	if *script != "" {
		f, err := os.Open(*script)
		if err != nil {
			return fmt.Errorf("demo script: %w", err)
		}
		defer f.Close()
		in = f
	}

	dir, err := os.MkdirTemp("", "bookbot-demo")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	logFile, err := os.Create(filepath.Join(dir, "bookbot.log"))
	if err != nil {
		return err
	}
	defer logFile.Close()

	// The sandbox booking API, seeded with sample data.
	// One clock for the whole demo, which :later moves ahead.
	clock := &demoClock{}
	sandbox := bookingtest.New(bookingtest.Options{Seed: true, Now: clock.Now})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	api := &http.Server{Handler: sandbox, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = api.Serve(ln) }()
	defer api.Close()
	sandboxURL := "http://" + ln.Addr().String()

	// The Slack stand-in, with the demo person and a digest channel.
	sl := slacktest.New(slacktest.Options{UnfurlDomains: []string{"book.example.com"}})
	defer sl.Close()
	sl.AddUser(slacktest.User{ID: demoUser, Name: "demo", RealName: "Demo Person", TZ: zone.String()})
	// Grace is someone the demo person offers times to (:as grace): not on
	// the allow-list, in another zone, with an email on her profile.
	graceZone, err := demoZone("America/New_York")
	if err != nil {
		return err
	}
	sl.AddUser(slacktest.User{ID: demoGrace, Name: "grace", RealName: "Grace Hopper", TZ: "America/New_York", Email: "grace@example.com"})
	sl.AddChannel(slacktest.Channel{ID: demoChannel, Name: "bookings", Members: []string{sl.BotUserID(), demoUser, demoGrace}})

	// The real bot, started as `bookbot run` starts it, from an environment
	// that points it at the stand-ins, on the demo's clock.
	env := map[string]string{
		"BOOKING_BASE_URL":      sandboxURL,
		"BOOKING_API_KEY":       bookingtest.DemoKey,
		"SLACK_BOT_TOKEN":       sl.BotToken(),
		"SLACK_APP_TOKEN":       sl.AppToken(),
		"SLACK_API_URL":         sl.APIURL,
		"BOOKBOT_ALLOWED_USERS": demoUser,
		"DIGEST_CHANNEL":        demoChannel,
		"DIGEST_TIMEZONE":       zone.String(),
		"NOTIFY_CHANNEL":        demoChannel,
		"BOOKBOT_STATE_DIR":     filepath.Join(dir, "state"),
		"BOOKBOT_HTTP_ADDR":     "off",
		"BOOKBOT_SECRET_KEY":    demoSecret(),
		"BOOKING_PAGE_URL":      demoPage,
		"LOG_LEVEL":             "debug",
		"LOG_FORMAT":            "text",
	}
	a, log, stop, err := start(ctx, func(k string) string { return env[k] }, logFile, timing{now: clock.Now})
	if errors.Is(err, errStopped) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("demo: %w", err)
	}
	defer stop()

	// Slack is served until the console ends, however it ends.
	botCtx, stopBot := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- a.Serve(botCtx) }()
	defer func() {
		stopBot()
		<-done
	}()
	wait, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	if err := sl.WaitConnected(wait); err != nil {
		return fmt.Errorf("demo: bookbot did not connect to the local Slack: %w", err)
	}

	// The scheduled work is the console's to drive, not timers': live
	// notices go to #bookings, read each time the console waits for
	// bookbot, so a notice shows right after the change that caused it;
	// reminders and agendas are looked for then too; :digest posts the
	// digest.
	watcher, reminders := a.NewWatcher(), a.NewReminders()
	if err := watcher.Poll(ctx); err != nil {
		return fmt.Errorf("demo: notices: %w", err)
	}
	idle := func(ctx context.Context) error {
		if err := a.Bot.Idle(ctx); err != nil {
			return err
		}
		if err := watcher.Poll(ctx); err != nil {
			log.Warn("demo: notices", "error", err)
		}
		if err := reminders.Tick(ctx); err != nil {
			log.Warn("demo: reminders", "error", err)
		}
		return a.Bot.Idle(ctx)
	}

	c := &console.Console{
		Slack: sl, User: demoUser, Zone: zone, Command: "/booking", Out: stdout, Channel: demoChannel,
		People: map[string]console.Person{"grace": {ID: demoGrace, Name: "Grace Hopper", Zone: graceZone}},
		Idle:   idle, Now: clock.Now, Step: &demoStep,
		Later: func(ctx context.Context, arg string) (string, error) {
			return demoLater(ctx, clock, arg, a.Booking, a.State.Personal, zone)
		},
		Digest: func(ctx context.Context) (string, error) {
			res, err := a.Digest.Run(ctx, digest.Tomorrow(clock.Now(), zone))
			switch {
			case errors.Is(err, digest.ErrAlreadyPosted):
				return "Tomorrow's digest was posted already in this session (it posts once per date).", nil
			case err != nil:
				return "", fmt.Errorf("the digest could not be posted: %v", err)
			}
			return fmt.Sprintf("Posted the digest for %s to #bookings (%d bookings).", res.Day.Format("Monday 2 January"), res.Entries), nil
		},
	}
	c.Connect = func(ctx context.Context) (string, error) { return demoConnect(ctx, sl) }
	if *faults {
		c.Fault = func(args []string) (string, error) { return demoFault(sandbox, args) }
	}
	c.Attendee = &demoAttendee{sandbox: sandbox}

	fmt.Fprintf(stdout, `bookbot demo: the real bot, a sandbox booking API and a local Slack, all on this machine.
Nothing here reaches a real calendar or workspace. You are %s, a Slack user in %s.
Bookbot's log: %s
Type /booking help to start, :help for console commands, :quit to leave.
Where scheduling starts: :link %s/intro-call posts a booking link, :say then :menu
offers times from a message's menu, :step intro-call @grace runs the Workflow Builder step.
`, "Demo Person", zone, logFile.Name(), demoPage)
	return demoLoop(ctx, c, in, stdout, *script != "")
}

// demoClock is the demo's time: the machine's, moved ahead by :later.
type demoClock struct{ ahead atomic.Int64 }

func (c *demoClock) Now() time.Time { return time.Now().Add(time.Duration(c.ahead.Load())) }

// demoLater moves the demo's clock ahead: by a duration, or to the demo
// person's next reminder or agenda, so one arrives without waiting.
func demoLater(ctx context.Context, clock *demoClock, arg string, client *booking.Client, people personal.Store, zone *time.Location) (string, error) {
	now := clock.Now()
	var to time.Time
	switch arg {
	case "reminder", "agenda":
		s, _, err := people.Settings(ctx, demoUser)
		if err != nil {
			return "", err
		}
		if arg == "agenda" {
			to = personal.NextAgenda(s, zone, now)
		} else {
			list, err := client.Bookings(ctx)
			if err != nil {
				return "", err
			}
			to, _ = personal.NextReminder(s, list, now)
		}
		if to.IsZero() {
			return "", fmt.Errorf("no %s to come: turn it on first (/booking remind 15m or /booking agenda 08:00)", arg)
		}
	default:
		d, err := time.ParseDuration(arg)
		if err != nil || d <= 0 {
			return "", fmt.Errorf("usage: :later reminder, :later agenda or :later DURATION (such as 2h)")
		}
		to = now.Add(d)
	}
	clock.ahead.Add(int64(to.Sub(now)))
	ahead := strings.TrimSuffix(to.Sub(now).Round(time.Minute).String(), "0s")
	return fmt.Sprintf("⏩ the demo's clock jumps ahead %s, to %s", ahead, to.In(zone).Format("Mon 2 Jan, 15:04 MST")), nil
}

// demoLoop reads console lines until EOF, :quit or ctx ends. In a script a
// line that fails stops the run with an error.
func demoLoop(ctx context.Context, c *console.Console, in io.Reader, out io.Writer, script bool) error {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			case <-ctx.Done():
				return
			}
		}
	}()
	for n := 1; ; n++ {
		fmt.Fprint(out, "\nyou> ")
		var line string
		var ok bool
		select {
		case <-ctx.Done():
			fmt.Fprintln(out)
			return nil
		case line, ok = <-lines:
		}
		if !ok {
			fmt.Fprintln(out)
			return nil
		}
		if script {
			fmt.Fprintln(out, line)
		}
		err := c.Exec(ctx, line)
		switch {
		case errors.Is(err, console.ErrQuit):
			return nil
		case err != nil && script:
			return fmt.Errorf("script line %d (%q): %v", n, line, err)
		case err != nil:
			fmt.Fprintln(out, "! "+err.Error())
		}
	}
}

// demoZone is the -tz zone, else this machine's zone by IANA name.
func demoZone(name string) (*time.Location, error) {
	if name == "" {
		name = localZoneName()
	}
	loc, err := booking.LoadZone(name)
	if err != nil {
		return nil, fmt.Errorf("-tz %q is not an IANA time zone (for example Europe/Berlin or America/New_York)", name)
	}
	return loc, nil
}

// localZoneName finds the machine's zone name: $TZ, then /etc/localtime's
// link into the zone database, else UTC.
func localZoneName() string {
	if tz := strings.TrimPrefix(os.Getenv("TZ"), ":"); tz != "" {
		return tz
	}
	if target, err := os.Readlink("/etc/localtime"); err == nil {
		if i := strings.Index(target, "zoneinfo/"); i >= 0 {
			return target[i+len("zoneinfo/"):]
		}
	}
	return "UTC"
}

const faultHelp = `Fault knobs (they act once, on the next call to that endpoint, unless noted):
  :fault create 409      the slot is taken (not booked)
  :fault create repeat   the service refuses this attendee at this time, as it does
                         for a repeat of an earlier booking, even a cancelled one,
                         and for an attendee who must confirm by email
  :fault create 429      the API's rate limit
  :fault create 400      the API refuses the request
  :fault create 500      an HTML error page, nothing stored (outcome unclear until bookbot checks)
  :fault create commit   stored, then an HTML 503 (bookbot finds it by listing)
  :fault create drop     stored, then the connection drops
  :fault list 503        GET /bookings fails (bookbot retries reads)
  :fault cancel 404      the booking is unknown to the API
  :fault slow ENDPOINT 2s  every call to ENDPOINT takes that long (until :fault off)
The owner's settings, as the service answers them (until :fault off):
  :fault create full     the calendar holds as many bookings as it takes: 503 "not booked"
  :fault create hourly EVENT  other clients used up EVENT's 20 attempts this hour:
                         429 without Retry-After for an hour (:fault off keeps it, as
                         the service would; :later 1h lets it pass)
  :fault block WHO       an address or a domain the owner refuses: 403 "not booked"
  :fault note EVENT      EVENT requires a note: a create without one answers 400
  :fault question EVENT  EVENT requires an answer bookbot cannot send: 400
  :fault off             no faults, no delays, the owner's settings as seeded
Endpoints: types, slots, list, create, cancel. A team-sync booking (round robin)
goes to whichever host is free with the fewer bookings: :attendee book team-sync 1.`

var demoEndpoints = map[string]string{
	"types": bookingtest.EndpointEventTypes, "slots": bookingtest.EndpointSlots,
	"list": bookingtest.EndpointListBookings, "create": bookingtest.EndpointCreateBooking,
	"cancel": bookingtest.EndpointCancelBooking,
}

// demoFault applies a :fault command to the sandbox.
func demoFault(s *bookingtest.Sandbox, args []string) (string, error) {
	if len(args) == 0 || args[0] == "help" {
		return faultHelp, nil
	}
	if args[0] == "off" {
		s.ClearFaults()
		for _, ep := range demoEndpoints {
			s.SetLatency(ep, 0)
		}
		s.SetBlocked(bookingtest.DemoOwner)
		s.SetCeiling(bookingtest.DemoOwner, -1)
		for _, et := range s.EventTypes(bookingtest.DemoOwner) {
			if et.RequiresNote || len(et.RequiredQuestions) > 0 {
				et.RequiresNote, et.RequiredQuestions = false, nil
				s.AddEventType(bookingtest.DemoOwner, et)
			}
		}
		return "Faults and delays cleared; the owner's settings are as seeded.", nil
	}
	if msg, ok, err := demoSetting(s, args); ok {
		return msg, err
	}
	if args[0] == "slow" {
		if len(args) != 3 {
			return "", errors.New("usage: :fault slow ENDPOINT DURATION, e.g. :fault slow slots 2s")
		}
		ep, ok := demoEndpoints[args[1]]
		d, err := time.ParseDuration(args[2])
		if !ok || err != nil || d < 0 || d > time.Minute {
			return "", errors.New("usage: :fault slow ENDPOINT DURATION (up to 1m); endpoints: types, slots, list, create, cancel")
		}
		s.SetLatency(ep, d)
		return fmt.Sprintf("Every %s now takes %v.", ep, d), nil
	}
	if len(args) != 2 {
		return "", errors.New("usage: :fault ENDPOINT WHAT; :fault help lists them")
	}
	ep, ok := demoEndpoints[args[0]]
	if !ok {
		return "", fmt.Errorf("unknown endpoint %q; endpoints: types, slots, list, create, cancel", args[0])
	}
	switch what := args[1]; what {
	case "commit":
		s.CommitThenFail(ep, bookingtest.HTMLError(http.StatusServiceUnavailable))
	case "drop":
		s.CommitThenDrop(ep)
	case "409": // as the service answers for a time that is not free
		s.FailNext(ep, bookingtest.JSONError(http.StatusConflict, "not booked", http.StatusConflict))
	case "repeat": // as the service answers a repeat, or an email still to verify
		s.FailNext(ep, bookingtest.JSONError(http.StatusConflict, "not booked", http.StatusOK))
	case "429": // as the service answers: no Retry-After
		s.FailNext(ep, bookingtest.JSONError(http.StatusTooManyRequests, "not booked", http.StatusTooManyRequests))
	default:
		code, err := strconv.Atoi(what)
		if err != nil || code < 400 || code > 599 {
			return "", fmt.Errorf("%q is not a fault; :fault help lists them", what)
		}
		if code >= 500 {
			s.FailNext(ep, bookingtest.HTMLError(code))
		} else {
			s.FailNext(ep, bookingtest.JSONError(code, strings.ToLower(http.StatusText(code)), 0))
		}
	}
	return fmt.Sprintf("The next %s will fail (%s).", ep, args[1]), nil
}

// demoSetting applies a :fault that changes the owner's settings, as the
// service then answers them; ok is false for any other :fault.
func demoSetting(s *bookingtest.Sandbox, args []string) (msg string, ok bool, err error) {
	event := func(slug string) (bookingtest.EventType, error) {
		for _, et := range s.EventTypes(bookingtest.DemoOwner) {
			if et.Slug == slug && !et.Removed {
				return et, nil
			}
		}
		return bookingtest.EventType{}, fmt.Errorf("there is no event type %q; /booking types lists them", slug)
	}
	switch {
	case len(args) == 2 && args[0] == "create" && args[1] == "full":
		s.Full(bookingtest.DemoOwner)
		return `The calendar is full: a create answers 503 {"error":"not booked"} until :fault off.`, true, nil
	case len(args) == 3 && args[0] == "create" && args[1] == "hourly":
		if _, err := event(args[2]); err != nil {
			return "", true, err
		}
		s.ExhaustEventLimit(bookingtest.DemoOwner, args[2])
		return fmt.Sprintf("Other clients used up this hour's attempts of %s: a create of it answers 429, without Retry-After, for an hour.", args[2]), true, nil
	case len(args) == 2 && args[0] == "block":
		s.SetBlocked(bookingtest.DemoOwner, args[1])
		return fmt.Sprintf(`The owner's settings refuse %s: a booking for it answers 403 {"error":"not booked"} until :fault off.`, args[1]), true, nil
	case len(args) == 2 && (args[0] == "note" || args[0] == "question"):
		et, err := event(args[1])
		if err != nil {
			return "", true, err
		}
		what := "a note"
		if args[0] == "note" {
			et.RequiresNote = true
		} else {
			et.RequiredQuestions, what = []string{"company"}, "an answer to a question the API cannot send"
		}
		s.AddEventType(bookingtest.DemoOwner, et)
		return fmt.Sprintf("%s requires %s: a create without it answers 400 until :fault off.", args[1], what), true, nil
	case args[0] == "block" || args[0] == "note" || args[0] == "question" || (len(args) > 1 && args[0] == "create" && (args[1] == "full" || args[1] == "hourly")):
		return "", true, errors.New("usage: :fault create full, :fault create hourly EVENT, :fault block WHO, :fault note EVENT, :fault question EVENT")
	}
	return "", false, nil
}

// demoAttendees take turns booking on the demo owner's booking page.
var demoAttendees = []struct{ name, email string }{
	{"Ada Lovelace", "ada@example.com"},
	{"Mary Jackson", "mary@example.com"},
	{"Emmy Noether", "emmy@example.org"},
	{"Hedy Lamarr", "hedy@example.net"},
}

// demoAttendee is an attendee on the demo owner's public booking page
// (:attendee): the sandbox books, moves and cancels behind the API's back,
// as the page does.
type demoAttendee struct {
	sandbox *bookingtest.Sandbox
	turn    int // the next of demoAttendees to book
}

var _ console.Attendee = (*demoAttendee)(nil)

func (a *demoAttendee) Book(slug string, n int) (console.AttendeeBooking, error) {
	start, err := a.slot(slug, n)
	if err != nil {
		return console.AttendeeBooking{}, err
	}
	who := demoAttendees[a.turn%len(demoAttendees)]
	a.turn++ // a refused attendee makes way for the next
	id, err := a.sandbox.BookAsAttendee(bookingtest.DemoOwner, slug, start, who.name, who.email)
	switch {
	case errors.Is(err, bookingtest.ErrNotOffered):
		return console.AttendeeBooking{}, fmt.Errorf("slot %d of %s was taken just now; try again", n, slug)
	case err != nil:
		return console.AttendeeBooking{}, fmt.Errorf("the booking page refused %s: %s", who.name, strings.TrimPrefix(err.Error(), "bookingtest: "))
	}
	b, _, err := a.find(id)
	return b, err
}

func (a *demoAttendee) Move(id string, n int) (before, after console.AttendeeBooking, err error) {
	before, cancelled, err := a.find(id)
	switch {
	case err != nil:
		return before, after, err
	case cancelled:
		return before, after, fmt.Errorf("booking %s is cancelled; there is nothing to move", id)
	case before.Event == "":
		return before, after, fmt.Errorf("booking %s is a legacy record without an event type; it cannot be moved", id)
	}
	start, err := a.slot(before.Event, n)
	if err != nil {
		return before, after, err
	}
	err = a.sandbox.MoveAsAttendee(id, start)
	switch {
	case errors.Is(err, bookingtest.ErrNotOffered):
		return before, after, fmt.Errorf("slot %d of %s was taken just now; try again", n, before.Event)
	case err != nil:
		return before, after, fmt.Errorf("the booking page refused the move: %s", strings.TrimPrefix(err.Error(), "bookingtest: "))
	}
	after, _, err = a.find(id)
	return before, after, err
}

func (a *demoAttendee) Cancel(id string) (console.AttendeeBooking, error) {
	b, cancelled, err := a.find(id)
	switch {
	case err != nil:
		return b, err
	case cancelled:
		return b, fmt.Errorf("booking %s is cancelled already", id)
	}
	if err := a.sandbox.CancelAsAttendee(id); err != nil {
		return b, fmt.Errorf("the booking page refused the cancel: %s", strings.TrimPrefix(err.Error(), "bookingtest: "))
	}
	return b, nil
}

func (a *demoAttendee) Confirm() (console.AttendeeBooking, error) {
	pending := a.sandbox.Pending(bookingtest.DemoOwner)
	if len(pending) == 0 {
		return console.AttendeeBooking{}, errors.New("no booking waits for an email confirmation: book office-hours, which needs one, first")
	}
	p := pending[len(pending)-1]
	id, err := a.sandbox.ConfirmEmail(bookingtest.DemoOwner, *p.EventType, p.Start, *p.BookerEmail)
	switch {
	case errors.Is(err, bookingtest.ErrNotOffered):
		return console.AttendeeBooking{}, fmt.Errorf("the link books nothing: %s at that time was taken meanwhile", *p.EventType)
	case err != nil:
		return console.AttendeeBooking{}, fmt.Errorf("the link books nothing: %s", strings.TrimPrefix(err.Error(), "bookingtest: "))
	}
	b, _, err := a.find(id)
	return b, err
}

// slot is the start of free slot n (from 1) of the demo owner's event type.
func (a *demoAttendee) slot(slug string, n int) (time.Time, error) {
	slots := a.sandbox.Slots(bookingtest.DemoOwner, slug)
	switch {
	case slots == nil:
		return time.Time{}, fmt.Errorf("there is no event type %q; /booking types lists them", slug)
	case len(slots) == 0:
		return time.Time{}, fmt.Errorf("%s has no free slots", slug)
	case n > len(slots):
		return time.Time{}, fmt.Errorf("%s has free slots 1–%d", slug, len(slots))
	}
	return slots[n-1].Start, nil
}

// find looks a booking up in the demo owner's calendar, then in the round
// robin teammate's.
func (a *demoAttendee) find(id string) (b console.AttendeeBooking, cancelled bool, err error) {
	for _, owner := range []string{bookingtest.DemoOwner, bookingtest.DemoTeammate} {
		for _, sb := range a.sandbox.Bookings(owner) {
			if sb.ID != id {
				continue
			}
			b = console.AttendeeBooking{ID: sb.ID, Start: sb.Start, End: sb.End, Unseen: owner != bookingtest.DemoOwner}
			if sb.EventType != nil {
				b.Event = *sb.EventType
			}
			if sb.BookerName != nil {
				b.Name = *sb.BookerName
			}
			if sb.BookerEmail != nil {
				b.Email = *sb.BookerEmail
			}
			return b, sb.Cancelled, nil
		}
	}
	return b, false, fmt.Errorf("there is no booking %q in the demo calendar; /booking list shows the IDs", id)
}

// demoSecret is the demo's BOOKBOT_SECRET_KEY, new each session.
func demoSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.StdEncoding.EncodeToString(b)
}

// demoConnect is :connect: /booking connect, the form filled with the key
// of the sandbox's second calendar, submitted.
func demoConnect(ctx context.Context, sl *slacktest.Server) (string, error) {
	prior := map[string]bool{}
	for _, v := range sl.Views() {
		prior[v.ID] = true
	}
	if _, err := sl.SendSlashCommand(ctx, slacktest.SlashCommand{Command: "/booking", Text: "connect", UserID: demoUser}); err != nil {
		return "", err
	}
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := sl.WaitView(wait, func(v slacktest.View) bool {
		return v.CallbackID == "account_connect" && !v.Closed && !prior[v.ID]
	})
	if err != nil {
		return "", fmt.Errorf("the connect form did not open: %w", err)
	}
	if _, err := sl.SubmitInputs(ctx, demoUser, v.ID, map[string]string{"api_key": bookingtest.OtherKey}); err != nil {
		return "", err
	}
	return "Connected the sandbox's second calendar (its key typed into /booking connect). /booking types and /booking list now show it; /booking account says which calendar you act on.", nil
}
