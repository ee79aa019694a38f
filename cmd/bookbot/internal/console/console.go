package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/bot/slacktest"
)

// ErrQuit is returned by Exec for :quit.
var ErrQuit = errors.New("quit")

// Console is a person at a terminal using bookbot through the Slack
// stand-in: slash commands, button presses, selects, inputs, submit and
// close, with every change shown as text.
type Console struct {
	Slack   *slacktest.Server
	User    string         // the person's Slack user ID
	Zone    *time.Location // the person's Slack time zone
	Command string         // the slash command, e.g. "/booking"
	Out     io.Writer
	// Channel is the conversation slash commands are typed in; "": the
	// person's DM with bookbot.
	Channel string
	// People are the others the person can act as, by name (:as NAME), to
	// book from an offer card as someone not on the allow-list would.
	People map[string]Person

	// Idle waits until bookbot has finished the work the last action
	// started, so output is complete before the next prompt.
	Idle func(ctx context.Context) error
	// Digest posts tomorrow's digest now (for :digest); nil: not offered.
	Digest func(ctx context.Context) (string, error)
	// Fault applies a :fault command; nil: fault knobs are off.
	Fault func(args []string) (string, error)
	// Attendee acts on the public booking page for :attendee; nil: not
	// offered.
	Attendee Attendee
	// Later moves the demo's clock ahead for :later; nil: not offered.
	Later func(ctx context.Context, arg string) (string, error)
	// Now is the demo's clock, for "Today" in dates; nil: time.Now.
	Now func() time.Time
	// Connect connects the person's own calendar (a second one the
	// sandbox serves) through /booking connect, for :connect; nil: not
	// offered.
	Connect func(ctx context.Context) (string, error)
	// Step is the Workflow Builder step the app declares, for :step; nil:
	// not offered.
	Step *slacktest.Function

	shownMsgs  int
	shownViews map[string]int // view ID → updates shown
	controls   []Control
	modal      string            // the open modal's view ID
	inputs     map[string]string // values typed into the open modal, by action_id
	confirm    *Control          // a button waiting for yes
	attendeeID string            // the booking the attendee made last, for "last"
	me         *Person           // the person the console started as, once :as was used
	runs       []string          // the steps run with :step, until they are shown ended
}

// Person is someone the console can act as.
type Person struct {
	ID   string
	Name string // as shown, such as "Grace Hopper"
	Zone *time.Location
}

// Attendee is an attendee of the calendar's public booking page, who books,
// moves and cancels there, outside the booking API and bookbot. Slots are
// numbered from 1 in the order GET /slots gives them.
type Attendee interface {
	// Book books free slot n of the event type with this slug.
	Book(slug string, n int) (AttendeeBooking, error)
	// Move moves the booking to free slot n of its event type, keeping its
	// ID; it returns the booking before and after.
	Move(id string, n int) (before, after AttendeeBooking, err error)
	// Cancel cancels the booking and returns it as it was.
	Cancel(id string) (AttendeeBooking, error)
	// Confirm follows the link the service mailed the attendee of the
	// latest create that needed their email confirmation, which books it.
	Confirm() (AttendeeBooking, error)
}

// AttendeeBooking is a booking an [Attendee] made, moved or cancelled.
type AttendeeBooking struct {
	ID          string
	Event       string // the event type's slug
	Name, Email string // the attendee's
	Start, End  time.Time
	// Unseen: a round robin gave it to a teammate, so bookbot cannot see it.
	Unseen bool
}

// Help is the console's command list.
const Help = `Commands:
  /booking …              a slash command, e.g. /booking list, /booking new, /booking slots intro-call
  N  or  :press N         press button N (a button asking for confirmation waits for :yes)
  :yes / :no              answer a confirmation
  :pick N M               choose option M of select N
  :set N TEXT             type TEXT into input N (or a time zone into the zone search)
  :submit                 submit the open form
  :close                  close the open form
  :show                   show the open form again
  :home                   open bookbot's App Home
  :digest                 post tomorrow's digest to the digest channel now
  :fault …                break the sandbox booking API (demo -faults): :fault help
  :attendee book EVENT N  an attendee books free slot N of EVENT on the public booking page
  :attendee book EVENT N COUNT  COUNT attendees book it and the slots after it at once
  :attendee move ID N     the attendee of booking ID moves it to free slot N of its event
  :attendee cancel ID     the attendee of booking ID cancels it on the booking page
                          (ID last: the booking the attendee made last)
  :attendee confirm       the attendee of the last booking that needed their email
                          confirmation follows the link the service mailed them
  :connect                connect your own calendar (the sandbox's second one) with /booking connect;
                          /booking disconnect goes back to the owner's
  :later reminder|agenda  move the demo's clock to your next reminder or agenda
  :later DURATION         move the demo's clock ahead, such as :later 2h
  :as NAME / :as me       act as another person in the conversation (such as grace), or as yourself again
  :say TEXT               post TEXT in the conversation, as whoever you are
  :link URL               post a link in the conversation; a booking page's link unfurls into a card
  :menu                   choose "Offer times…" in the "⋯" menu of the last message someone posted here
  :step EVENT [@NAME …] [n=N]
                          a Workflow Builder workflow runs the "Offer times" step in the conversation
  :help                   this list
  :quit                   leave (or Ctrl-D)
`

// Exec runs one console line. An error is a problem with the line, to be
// shown to the person; ErrQuit ends the session.
func (c *Console) Exec(ctx context.Context, line string) error {
	if c.shownViews == nil {
		c.shownViews = map[string]int{}
		c.inputs = map[string]string{}
	}
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return nil
	}
	if c.confirm != nil && line != ":yes" && line != "yes" && line != "y" {
		c.confirm = nil
		fmt.Fprintln(c.Out, "(not confirmed; nothing was done)")
		if line == ":no" || line == "no" || line == "n" {
			return nil
		}
	}
	if strings.HasPrefix(line, "/") {
		return c.slash(ctx, line)
	}
	if n, err := strconv.Atoi(line); err == nil {
		return c.press(ctx, n)
	}
	fields := strings.Fields(line)
	switch cmd, args := fields[0], fields[1:]; cmd {
	case ":help", "help":
		fmt.Fprint(c.Out, Help)
		return nil
	case ":quit", "quit", ":q", "exit":
		return ErrQuit
	case ":press":
		n, err := number(args, 1)
		if err != nil {
			return err
		}
		return c.press(ctx, n[0])
	case ":yes", "yes", "y":
		if c.confirm == nil {
			return errors.New("nothing is waiting for a confirmation")
		}
		ctl := *c.confirm
		c.confirm = nil
		return c.use(ctx, ctl, ctl.Value)
	case ":no", "no", "n":
		return errors.New("nothing is waiting for a confirmation")
	case ":pick":
		n, err := number(args, 2)
		if err != nil {
			return err
		}
		return c.pick(ctx, n[0], n[1])
	case ":set":
		if len(args) < 1 {
			return errors.New("usage: :set N TEXT")
		}
		n, err := strconv.Atoi(args[0])
		if err != nil {
			return fmt.Errorf("%q is not a control number", args[0])
		}
		text := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(strings.TrimPrefix(line, cmd)), args[0]))
		return c.set(ctx, n, text)
	case ":submit":
		return c.submit(ctx)
	case ":close":
		return c.close(ctx)
	case ":show":
		if c.modal == "" {
			return errors.New("no form is open")
		}
		delete(c.shownViews, c.modal)
		c.show()
		return nil
	case ":home":
		if _, err := c.Slack.OpenAppHome(ctx, c.User); err != nil {
			return err
		}
		return c.settle(ctx)
	case ":digest":
		if c.Digest == nil {
			return errors.New("the digest is not set up in this session")
		}
		msg, err := c.Digest(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(c.Out, msg)
		return c.settle(ctx)
	case ":fault":
		if c.Fault == nil {
			return errors.New("fault knobs are off: start the demo with -faults")
		}
		msg, err := c.Fault(args)
		if err != nil {
			return err
		}
		fmt.Fprintln(c.Out, msg)
		return nil
	case ":attendee":
		return c.attendee(ctx, args)
	case ":connect":
		if c.Connect == nil {
			return errors.New("own calendars are not offered in this session")
		}
		msg, err := c.Connect(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintln(c.Out, msg)
		return c.settle(ctx)
	case ":say", ":link":
		text := strings.TrimSpace(strings.TrimPrefix(line, cmd))
		if text == "" {
			return fmt.Errorf("usage: %s TEXT", cmd)
		}
		if cmd == ":link" {
			if len(args) != 1 || !strings.HasPrefix(args[0], "http") {
				return errors.New("usage: :link URL, such as :link https://book.example.com/demo/intro-call")
			}
			text = "<" + args[0] + ">"
		}
		if _, err := c.Slack.Say(ctx, c.User, c.conversation(), text); err != nil {
			return fmt.Errorf("slack: %v", err)
		}
		return c.settle(ctx)
	case ":menu":
		return c.menu(ctx)
	case ":step":
		return c.step(ctx, args)
	case ":as":
		if len(args) != 1 {
			return errors.New("usage: :as NAME (such as :as grace), or :as me")
		}
		return c.as(args[0])
	case ":later":
		if c.Later == nil {
			return errors.New("the clock cannot be moved in this session")
		}
		if len(args) != 1 {
			return errors.New("usage: :later reminder, :later agenda or :later DURATION (such as 2h)")
		}
		msg, err := c.Later(ctx, args[0])
		if err != nil {
			return err
		}
		fmt.Fprintln(c.Out, msg)
		return c.settle(ctx)
	}
	return fmt.Errorf("%q is not a command; :help lists them", fields[0])
}

// conversation is where the console's people talk: its channel, or the
// person's DM with bookbot.
func (c *Console) conversation() string {
	if c.Channel != "" {
		return c.Channel
	}
	return c.Slack.DMChannel(c.User)
}

// menu chooses "Offer times…" on the newest message someone posted in
// the conversation.
func (c *Console) menu(ctx context.Context) error {
	msgs := c.Slack.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if m := msgs[i]; m.Kind == "user" && m.Channel == c.conversation() {
			if _, err := c.Slack.SendInteraction(ctx, slacktest.MessageShortcut(c.User, "offer_times", m)); err != nil {
				return fmt.Errorf("slack: %v", err)
			}
			return c.settle(ctx)
		}
	}
	return errors.New("nobody has posted a message here yet: :say something first")
}

// step runs the Workflow Builder step in the conversation: an event
// type, the people named, how many meetings.
func (c *Console) step(ctx context.Context, args []string) error {
	if c.Step == nil {
		return errors.New("the Workflow Builder step is not offered in this session")
	}
	if len(args) == 0 {
		return errors.New("usage: :step EVENT [@NAME …] [n=N], such as :step intro-call @grace")
	}
	inputs := map[string]any{"event_type": args[0], "channel_id": c.conversation()}
	var people []string
	for _, a := range args[1:] {
		switch {
		case strings.HasPrefix(a, "@"):
			p, ok := c.People[strings.ToLower(strings.TrimPrefix(a, "@"))]
			if !ok {
				return fmt.Errorf("there is no %s here", a)
			}
			people = append(people, p.ID)
		case strings.HasPrefix(a, "n="):
			n, err := strconv.Atoi(strings.TrimPrefix(a, "n="))
			if err != nil {
				return fmt.Errorf("%q is not a number of meetings", a)
			}
			inputs["count"] = n
		default:
			return fmt.Errorf("%q is neither @NAME nor n=N", a)
		}
	}
	if len(people) > 0 {
		inputs["people"] = people
	}
	run, err := c.Slack.RunFunction(ctx, *c.Step, inputs)
	if err != nil {
		return fmt.Errorf("slack: %v", err)
	}
	fmt.Fprintf(c.Out, "A workflow reached the step %q (run %s).\n", c.Step.Title, run.ExecutionID)
	c.runs = append(c.runs, run.ExecutionID)
	if err := c.settle(ctx); err != nil {
		return err
	}
	if r, ok := c.Slack.Step(run.ExecutionID); ok && r.State == "running" {
		fmt.Fprintln(c.Out, "(the step runs until someone books a time from its card)")
	}
	return nil
}

// as makes the console act as the person named, or as itself again for
// "me": what they see and press from then on is theirs.
func (c *Console) as(name string) error {
	if c.me == nil {
		c.me = &Person{ID: c.User, Name: "yourself", Zone: c.Zone}
	}
	p, ok := c.People[strings.ToLower(name)]
	if strings.EqualFold(name, "me") {
		p, ok = *c.me, true
	}
	if !ok {
		var names []string
		for n := range c.People {
			names = append(names, n)
		}
		sort.Strings(names)
		return fmt.Errorf("there is no %q here; you can be %s, or me", name, strings.Join(names, ", "))
	}
	c.User, c.Zone = p.ID, p.Zone
	c.modal, c.inputs, c.confirm = "", map[string]string{}, nil
	if p.ID == c.me.ID {
		fmt.Fprintln(c.Out, "You are yourself again.")
		return nil
	}
	fmt.Fprintf(c.Out, "You are now %s (%s, %s), who is not on bookbot's allow-list. Buttons shown before can be pressed; :as me to come back.\n", name, p.Name, p.Zone)
	return nil
}

const attendeeUsage = "usage: :attendee book EVENT N [COUNT], :attendee move BOOKING-ID N, :attendee cancel BOOKING-ID (BOOKING-ID may be last: the attendee's last booking) or :attendee confirm"

// attendee runs an :attendee command: someone acting on the public booking
// page, which bookbot does not hear about.
func (c *Console) attendee(ctx context.Context, args []string) error {
	if c.Attendee == nil {
		return errors.New("the booking page's attendee is not set up in this session")
	}
	if len(args) >= 2 && args[0] != "book" && args[1] == "last" {
		if c.attendeeID == "" {
			return errors.New("the attendee has booked nothing yet in this session: :attendee book EVENT N first")
		}
		args[1] = c.attendeeID // a script cannot know the ID in advance
	}
	slot := func(arg string) (int, error) {
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 {
			return 0, fmt.Errorf("%q is not a slot number; free slots count from 1", arg)
		}
		return n, nil
	}
	switch {
	case (len(args) == 3 || len(args) == 4) && args[0] == "book":
		n, err := slot(args[2])
		if err != nil {
			return err
		}
		// Several at once (a COUNT) are booked before bookbot next reads
		// the list, as a busy booking page does: they come as one burst.
		count := 1
		if len(args) == 4 {
			if count, err = strconv.Atoi(args[3]); err != nil || count < 1 || count > 50 {
				return fmt.Errorf("%q is not a count of bookings from 1 to 50", args[3])
			}
		}
		for range count {
			b, err := c.Attendee.Book(args[1], n)
			if err != nil {
				return err
			}
			c.attendeeID = b.ID
			fmt.Fprintf(c.Out, "attendee booked %s at %s (booking %s) as %s <%s>%s\n", b.Event, c.when(b), b.ID, b.Name, b.Email, unseen(b))
		}
		return c.settle(ctx)
	case len(args) == 3 && args[0] == "move":
		n, err := slot(args[2])
		if err != nil {
			return err
		}
		before, after, err := c.Attendee.Move(args[1], n)
		if err != nil {
			return err
		}
		fmt.Fprintf(c.Out, "attendee moved %s from %s to %s (booking %s)%s\n", after.Event, c.when(before), c.when(after), after.ID, unseen(after))
		return c.settle(ctx)
	case len(args) == 2 && args[0] == "cancel":
		b, err := c.Attendee.Cancel(args[1])
		if err != nil {
			return err
		}
		fmt.Fprintf(c.Out, "attendee cancelled %s at %s (booking %s)%s\n", b.Event, c.when(b), b.ID, unseen(b))
		return c.settle(ctx)
	case len(args) == 1 && args[0] == "confirm":
		b, err := c.Attendee.Confirm()
		if err != nil {
			return err
		}
		c.attendeeID = b.ID
		fmt.Fprintf(c.Out, "attendee confirmed by email: %s at %s (booking %s) as %s <%s>%s\n", b.Event, c.when(b), b.ID, b.Name, b.Email, unseen(b))
		return c.settle(ctx)
	}
	return errors.New(attendeeUsage)
}

// when is a booking's time in the person's zone: "Tue 24 Mar, 10:00–10:30 CET".
func (c *Console) when(b AttendeeBooking) string {
	zone := c.Zone
	if zone == nil {
		zone = time.UTC
	}
	start, end := b.Start.In(zone), b.End.In(zone)
	if start.Format(time.DateOnly) != end.Format(time.DateOnly) {
		return start.Format("Mon 2 Jan, 15:04 MST") + " – " + end.Format("Mon 2 Jan, 15:04 MST")
	}
	return start.Format("Mon 2 Jan, 15:04") + "–" + end.Format("15:04 MST")
}

func unseen(b AttendeeBooking) string {
	if b.Unseen {
		return "; a round robin gave it to a teammate, so bookbot cannot see it"
	}
	return ""
}

func number(args []string, n int) ([]int, error) {
	if len(args) != n {
		return nil, fmt.Errorf("expected %d number(s)", n)
	}
	out := make([]int, n)
	for i, a := range args {
		v, err := strconv.Atoi(a)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", a)
		}
		out[i] = v
	}
	return out, nil
}

func (c *Console) slash(ctx context.Context, line string) error {
	name, text, _ := strings.Cut(line, " ")
	if name != c.Command {
		return fmt.Errorf("bookbot answers %s here", c.Command)
	}
	// Slack sends a mention picked while typing as the person's ID
	// (should_escape), as bookbot's manifest asks.
	for n, p := range c.People {
		text = mentionOf(n).ReplaceAllString(text, "${1}<@"+p.ID+"|"+n+">")
	}
	if _, err := c.Slack.SendSlashCommand(ctx, slacktest.SlashCommand{Command: name, Text: strings.TrimSpace(text), UserID: c.User, ChannelID: c.Channel}); err != nil {
		return fmt.Errorf("slack: %v", err)
	}
	return c.settle(ctx)
}

// mentionOf matches "@name" typed as a word.
func mentionOf(name string) *regexp.Regexp {
	return regexp.MustCompile(`(^|\s)@` + regexp.QuoteMeta(name) + `\b`)
}

func (c *Console) control(n int) (Control, error) {
	if n < 1 || n > len(c.controls) {
		if len(c.controls) == 0 {
			return Control{}, errors.New("nothing on screen can be used; try /booking help")
		}
		return Control{}, fmt.Errorf("there is no control %d (1–%d)", n, len(c.controls))
	}
	return c.controls[n-1], nil
}

func (c *Console) press(ctx context.Context, n int) error {
	ctl, err := c.control(n)
	if err != nil {
		return err
	}
	if ctl.Kind != "button" {
		return fmt.Errorf("[%d] is not a button; use :pick or :set", n)
	}
	if ctl.Confirm != "" {
		c.confirm = &ctl
		fmt.Fprintf(c.Out, "%s\n(:yes to go ahead, :no to stop)\n", ctl.Confirm)
		return nil
	}
	return c.use(ctx, ctl, ctl.Value)
}

func (c *Console) pick(ctx context.Context, n, m int) error {
	ctl, err := c.control(n)
	if err != nil {
		return err
	}
	if ctl.Kind != "select" || ctl.Type == "external_select" {
		return fmt.Errorf("[%d] is not a select with options; use :set for it", n)
	}
	if m < 1 || m > len(ctl.Options) {
		return fmt.Errorf("[%d] has options 1–%d", n, len(ctl.Options))
	}
	value := ctl.Options[m-1].Value
	if ctl.Where.ViewID != "" && !ctl.Dispatch {
		c.inputs[ctl.ActionID] = value
		fmt.Fprintf(c.Out, "%s: %s\n", ctl.Label, ctl.Options[m-1].Text)
		return nil
	}
	return c.use(ctx, ctl, value)
}

func (c *Console) set(ctx context.Context, n int, text string) error {
	ctl, err := c.control(n)
	if err != nil {
		return err
	}
	if ctl.Where.ViewID == "" {
		return fmt.Errorf("[%d] is not an input", n)
	}
	switch {
	case ctl.Type == "external_select":
		ack, err := c.Slack.Suggest(ctx, c.User, ctl.Where.ViewID, ctl.ActionID, text)
		if err != nil {
			return err
		}
		var answer struct {
			Options []struct {
				Text  struct{ Text string } `json:"text"`
				Value string                `json:"value"`
			} `json:"options"`
		}
		if err := json.Unmarshal(ack.Payload, &answer); err != nil || len(answer.Options) == 0 {
			return fmt.Errorf("nothing matches %q", text)
		}
		for _, o := range answer.Options {
			if strings.EqualFold(o.Value, text) {
				c.inputs[ctl.ActionID] = o.Value
				fmt.Fprintf(c.Out, "%s: %s\n", ctl.Label, o.Text.Text)
				return nil
			}
		}
		var names []string
		for i, o := range answer.Options {
			if i == 8 {
				names = append(names, "…")
				break
			}
			names = append(names, o.Value)
		}
		return fmt.Errorf("%q matches %s; set one of them exactly", text, strings.Join(names, ", "))
	case ctl.Kind == "input":
		c.inputs[ctl.ActionID] = text
		fmt.Fprintf(c.Out, "%s: %s\n", ctl.Label, text)
		return nil
	}
	return fmt.Errorf("[%d] is a %s; use :pick or :press", n, ctl.Kind)
}

// use sends a block action for a button press or a select choice.
func (c *Console) use(ctx context.Context, ctl Control, value string) error {
	opts := []slacktest.ActionOption{slacktest.WithBlockID(ctl.BlockID)}
	if ctl.Where.ViewID != "" {
		v, ok := c.Slack.View(ctl.Where.ViewID)
		if !ok || v.Closed {
			return errors.New("that form is closed")
		}
		opts = append(opts, slacktest.InView(v))
	} else {
		msgs := c.Slack.Messages()
		if ctl.Where.Message < 0 || ctl.Where.Message >= len(msgs) {
			return errors.New("that message is gone")
		}
		if m := msgs[ctl.Where.Message]; m.Kind == "unfurl" {
			opts = append(opts, slacktest.InUnfurl(m))
		} else {
			opts = append(opts, slacktest.InMessage(m))
		}
	}
	if _, err := c.Slack.SendInteraction(ctx, slacktest.BlockAction(c.User, ctl.ActionID, value, opts...)); err != nil {
		return fmt.Errorf("slack: %v", err)
	}
	return c.settle(ctx)
}

func (c *Console) submit(ctx context.Context) error {
	if c.modal == "" {
		return errors.New("no form is open")
	}
	ack, err := c.Slack.SubmitInputs(ctx, c.User, c.modal, c.inputs)
	if err != nil {
		return fmt.Errorf("not submitted: %v", err)
	}
	if ack.Late {
		fmt.Fprintln(c.Out, "(bookbot answered after Slack's 3 seconds)")
	}
	return c.settle(ctx)
}

func (c *Console) close(ctx context.Context) error {
	if c.modal == "" {
		return errors.New("no form is open")
	}
	if _, err := c.Slack.Cancel(ctx, c.User, c.modal); err != nil {
		return err
	}
	return c.settle(ctx)
}

// settle waits for bookbot to finish, then shows what changed.
func (c *Console) settle(ctx context.Context) error {
	if c.Idle != nil {
		wait, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := c.Idle(wait); err != nil {
			fmt.Fprintln(c.Out, "(bookbot is still working; its answer will show after your next command)")
		}
	}
	c.show()
	return nil
}

// Show prints whatever changed since the last call (for a caller that
// waited on the stand-in itself).
func (c *Console) Show() {
	if c.shownViews == nil {
		c.shownViews = map[string]int{}
		c.inputs = map[string]string{}
	}
	c.show()
}

func (c *Console) show() {
	r := &Renderer{Zone: c.Zone, Typed: c.inputs, Now: c.Now}
	msgs := c.Slack.Messages()
	for i := c.shownMsgs; i < len(msgs); i++ {
		m := msgs[i]
		head := c.messageHeading(m)
		if head == "" {
			continue
		}
		body := r.Blocks(m.Blocks, Where{Message: i}, nil, nil)
		if body == "" {
			body = r.Mrkdwn(m.Text)
		}
		if meta := metadataLine(m.Metadata); meta != "" {
			body += "\n" + meta
		}
		fmt.Fprintf(c.Out, "\n%s\n%s\n", head, indent(body))
	}
	c.shownMsgs = len(msgs)

	// The newest open modal of the person is the one being worked on.
	open := ""
	views := c.Slack.Views()
	for _, v := range views {
		if v.Type == "modal" && v.TriggerUser == c.User && !v.Closed {
			open = v.ID
		}
	}
	if open != c.modal {
		if c.modal != "" && open == "" {
			fmt.Fprintln(c.Out, "\n(form closed)")
		}
		c.modal, c.inputs = open, map[string]string{}
	}
	for _, v := range views {
		if v.TriggerUser != c.User || v.Closed || (v.Type == "modal" && v.ID != open) {
			continue
		}
		if n, seen := c.shownViews[v.ID]; seen && n == v.Updates && len(v.Errors) == 0 {
			continue
		}
		c.shownViews[v.ID] = v.Updates
		title := "App Home"
		if v.Type == "modal" {
			title = "Form: " + v.Title
		}
		body := r.Blocks(v.Blocks, Where{Message: -1, ViewID: v.ID}, stateValues(v.State), v.Errors)
		fmt.Fprintf(c.Out, "\n┌ %s\n%s\n", title, indent(body))
		if v.Type == "modal" {
			fmt.Fprintln(c.Out, "└ :submit to send, :close to close")
		}
	}
	// Steps that ended since they were shown running.
	running := c.runs[:0]
	for _, id := range c.runs {
		run, ok := c.Slack.Step(id)
		switch {
		case !ok:
		case run.State == "completed":
			start, _ := run.Outputs["start_time"].(float64)
			fmt.Fprintf(c.Out, "\n── Workflow Builder: the step ended, the workflow goes on with booking_id %v, start_time %d, attendee %v ──\n", run.Outputs["booking_id"], int64(start), run.Outputs["attendee"])
		case run.State == "failed":
			fmt.Fprintf(c.Out, "\n── Workflow Builder: the step failed: %s ──\n", run.Error)
		default:
			running = append(running, id)
		}
	}
	c.runs = running
	// Controls are numbered across what was just shown; older ones keep
	// working until something new is shown.
	if len(r.Controls) > 0 {
		c.controls = r.Controls
	}
	if c.modal != "" && len(r.Controls) > 0 && r.Controls[len(r.Controls)-1].Where.ViewID != c.modal {
		fmt.Fprintln(c.Out, "(your form is still open: :show brings it back)")
	}
}

func (c *Console) messageHeading(m slacktest.Message) string {
	switch m.Kind {
	case "response_url", "ack":
		if m.ResponseType == "in_channel" && m.ReplaceOriginal {
			return "── bookbot updated its message " + m.OriginalTS + " in channel " + m.Channel + " (everyone there sees it) ──"
		}
		if m.ResponseType == "in_channel" {
			return "── bookbot in channel " + m.Channel + " (message " + m.TS + ", everyone there sees it) ──"
		}
		fallthrough
	case "ephemeral":
		if m.User != "" && m.User != c.User {
			return ""
		}
		if m.ReplaceOriginal {
			return "── bookbot (only you see this; replaces its earlier message) ──"
		}
		return "── bookbot (only you see this) ──"
	case "message":
		if m.Channel == c.User || m.Channel == c.Slack.DMChannel(c.User) {
			return "── bookbot, in your DMs ──"
		}
		if c.me != nil && (m.Channel == c.me.ID || m.Channel == c.Slack.DMChannel(c.me.ID)) {
			return "── bookbot, in your own DMs (you are someone else just now) ──"
		}
		if m.ThreadTS != "" && m.Broadcast {
			return "── bookbot in channel " + m.Channel + ", in the thread of " + m.ThreadTS + " and also sent to the channel ──"
		}
		if m.ThreadTS != "" {
			return "── bookbot in channel " + m.Channel + ", in the thread of " + m.ThreadTS + " ──"
		}
		return "── bookbot in channel " + m.Channel + " (message " + m.TS + ") ──"
	case "update":
		return "── bookbot updated message " + m.TS + " in " + m.Channel + " ──"
	case "user":
		who := m.User
		if m.User == c.User {
			who = "you"
		}
		for n, p := range c.People {
			if p.ID == m.User && m.User != c.User {
				who = n
			}
		}
		return "── " + who + " in channel " + m.Channel + " (message " + m.TS + ") ──"
	case "unfurl":
		if m.Channel == "COMPOSER" {
			return ""
		}
		return "── bookbot's card under the link " + m.Link + " in message " + m.TS + " (everyone there sees it) ──"
	}
	return ""
}

// metadataLine is what a message carries for machines about a booking,
// which Slack does not show people: its event type and the booking's ID,
// on a line of its own; "" for none. A notice's claims are bookbot's own,
// and left out.
func metadataLine(raw json.RawMessage) string {
	var m struct {
		EventType    string         `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m.EventType == "" {
		return ""
	}
	id, ok := m.EventPayload["booking_id"].(string)
	if !ok {
		return ""
	}
	return "(for machines, not shown in Slack: " + m.EventType + ", booking_id " + id + ")"
}

func indent(s string) string {
	if s == "" {
		return "  (empty)"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// stateValues flattens a view's state to the values a person sees.
func stateValues(st map[string]map[string]slack.BlockAction) map[string]map[string]string {
	out := map[string]map[string]string{}
	for blockID, actions := range st {
		out[blockID] = map[string]string{}
		ids := make([]string, 0, len(actions))
		for id := range actions {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			a := actions[id]
			v := a.Value
			switch {
			case a.SelectedOption.Value != "":
				v = a.SelectedOption.Value
			case a.SelectedDate != "":
				v = a.SelectedDate
			case a.SelectedUser != "":
				v = a.SelectedUser
			case len(a.SelectedUsers) > 0:
				v = strings.Join(a.SelectedUsers, ", ")
			}
			out[blockID][id] = v
		}
	}
	return out
}
