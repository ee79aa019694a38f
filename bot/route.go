package bot

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// A flow is what one flow file answers, registered there in one place, as
// slack-go's SocketmodeHandler registers handlers by ID: its subcommands
// with their help lines, the buttons and selects it handles (by action
// ID), the views submitted to it and the shortcuts that start it (by
// callback ID), the selects it suggests options for (by action ID), and
// the Events API events it handles (by type). Every handler runs at ack
// time: it answers from memory and queues its work in later.
type flow struct {
	commands    []command
	actions     map[string]func(b *Bot, later *jobs, p press)
	submissions map[string]func(b *Bot, later *jobs, cb slack.InteractionCallback) any
	suggestions map[string]func(query string) any
	shortcuts   map[string]func(b *Bot, later *jobs, cb slack.InteractionCallback)
	events      map[slackevents.EventsAPIType]func(b *Bot, later *jobs, ev slackevents.EventsAPIEvent)
	// public says that people not on the allow-list may use the flow's
	// actions and submissions (not its commands): an offer is their
	// permission, and the handlers answer only about it.
	public bool
	// background is work the flow does on its own while Run serves,
	// until ctx ends (reports, sweeps); nil: none.
	background func(b *Bot, ctx context.Context)
}

// flows are bookbot's flows, each registered by its file. The help lists
// their subcommands in this order.
func flows() []flow {
	return []flow{slotsFlow(), bookingFlow(), listFlow(), todayFlow(), offerFlow(), offerCancelFlow(), offerLeftFlow(), composeFlow(), linkFlow(), stepFlow(), personalFlow(), accountFlow(), digestFlow(), reviewFlow(), homeFlow()}
}

// A command is a subcommand of the slash command.
type command struct {
	name string // what is typed after the slash command, in lower case
	// usage is its arguments as the help shows them (mrkdwn), and brief
	// as the help's notification text does; "" for none.
	usage, brief string
	help         string // what it does, for the help (mrkdwn)
	// maxArgs is how many arguments it takes: with more, it is a
	// subcommand bookbot does not know. anyArgs: run reads them all.
	maxArgs int
	run     func(b *Bot, later *jobs, c call) any // returns the ack's payload
}

// anyArgs is the maxArgs of a command that reads its arguments itself.
const anyArgs = -1

// call is a subcommand as the person typed it. Its Command is always set:
// the one typed, or Config.Command.
type call struct {
	slack.SlashCommand
	args  []string      // the words after the subcommand
	reply func(message) // through the response_url
}

// press is a button pressed or an option chosen, in a message or a view.
type press struct {
	cb      slack.InteractionCallback
	a       *slack.BlockAction
	user    string
	reply   func(message) // to the person, where they pressed it, or by DM
	replace func(message) // in place of the message pressed in; as reply in a view
}

func (p press) inModal() bool { return p.cb.View.ID != "" && p.cb.View.Type == slack.VTModal }
func (p press) inHome() bool  { return p.cb.View.ID != "" && p.cb.View.Type == slack.VTHomeTab }

// routes are the flows' handlers by what they answer.
type routes struct {
	commands    map[string]command
	actions     map[string]func(b *Bot, later *jobs, p press)
	submissions map[string]func(b *Bot, later *jobs, cb slack.InteractionCallback) any
	suggestions map[string]func(query string) any
	shortcuts   map[string]func(b *Bot, later *jobs, cb slack.InteractionCallback)
	events      map[slackevents.EventsAPIType]func(b *Bot, later *jobs, ev slackevents.EventsAPIEvent)
	public      map[string]bool
	background  []func(b *Bot, ctx context.Context)
}

func newRoutes(fs []flow) routes {
	r := routes{
		commands:    map[string]command{},
		actions:     map[string]func(b *Bot, later *jobs, p press){},
		submissions: map[string]func(b *Bot, later *jobs, cb slack.InteractionCallback) any{},
		suggestions: map[string]func(query string) any{},
		shortcuts:   map[string]func(b *Bot, later *jobs, cb slack.InteractionCallback){},
		events:      map[slackevents.EventsAPIType]func(b *Bot, later *jobs, ev slackevents.EventsAPIEvent){},
		public:      map[string]bool{},
	}
	for _, f := range fs {
		if f.background != nil {
			r.background = append(r.background, f.background)
		}
		if f.public {
			for id := range f.actions {
				r.public[id] = true
			}
			for id := range f.submissions {
				r.public[id] = true
			}
		}
		for _, c := range f.commands {
			register(r.commands, "subcommand", c.name, c)
		}
		registerAll(r.actions, "action", f.actions)
		registerAll(r.submissions, "view callback", f.submissions)
		registerAll(r.suggestions, "suggestion", f.suggestions)
		registerAll(r.shortcuts, "shortcut", f.shortcuts)
		registerAll(r.events, "event", f.events)
	}
	return r
}

// register adds h under id. Two flows answering one ID is a mistake in
// bookbot itself, found by any test that makes a Bot.
func register[K ~string, H any](m map[K]H, what string, id K, h H) {
	if _, dup := m[id]; dup {
		panic(fmt.Sprintf("bot: %s %q is registered twice", what, id))
	}
	m[id] = h
}

func registerAll[K ~string, H any](m map[K]H, what string, hs map[K]H) {
	for id, h := range hs {
		register(m, what, id, h)
	}
}

// slashCommand answers /booking. Help and argument problems are answered in
// the ack; everything that needs the booking API replies via response_url.
func (b *Bot) slashCommand(later *jobs, cmd slack.SlashCommand) any {
	ok, refusal := b.permitted(cmd.TeamID, cmd.UserID)
	if !ok {
		if refusal != nil {
			return b.ephemeral(*refusal)
		}
		return nil
	}
	if cmd.Command == "" {
		cmd.Command = b.cfg.Command
	}
	fields := strings.Fields(cmd.Text)
	verb, args := "", []string(nil)
	if len(fields) > 0 {
		verb, args = strings.ToLower(fields[0]), fields[1:]
	}
	if verb == "" || verb == "help" {
		return b.ephemeral(helpMessage(cmd.Command, ""))
	}
	c, ok := b.routes.commands[verb]
	if !ok || c.maxArgs != anyArgs && len(args) > c.maxArgs {
		return b.ephemeral(helpMessage(cmd.Command, unknownCommand(cmd.Text)))
	}
	return c.run(b, later, call{SlashCommand: cmd, args: args, reply: b.responder(cmd.ResponseURL, cmd.UserID, false)})
}

// unknownCommand is the problem a subcommand bookbot does not know is
// answered with, as mrkdwn.
func unknownCommand(text string) string {
	return "I don't know " + code(clip(strings.TrimSpace(text), maxNameRunes)) + "."
}

// helpMessage is the help, after a problem when there is one: a line for
// each subcommand the flows register. problem is mrkdwn: the caller
// escapes the data in it, once.
func helpMessage(cmd, problem string) message {
	c := escape(cmd)
	lines := []string{"*bookbot* books meetings on the owner's calendar, or on your own once you connect it. What it answers here is visible only to you; the evening digest and live notices of bookings are posted to their channels for everyone there, and an offer's card to the conversation it was made in. Your reminders and agenda are also in App Home (*Change…*)."}
	var briefs []string
	for _, f := range flows() {
		for _, sub := range f.commands {
			lines = append(lines, "`"+c+" "+withArgs(sub.name, sub.usage)+"` – "+sub.help)
			briefs = append(briefs, withArgs(sub.name, sub.brief))
		}
	}
	var blocks []slack.Block
	if problem != "" {
		blocks = append(blocks, section(":warning: "+problem))
	}
	blocks = append(blocks,
		section(strings.Join(lines, "\n")),
		slack.NewActionBlock("help_actions",
			button(actionNewBooking, "New booking", "").WithStyle(slack.StylePrimary),
			button(actionListPage, "Upcoming bookings", "0"),
			button(actionShowTypes, "Event types", ""),
		),
	)
	text := "bookbot: " + c + " " + strings.Join(briefs, " | ")
	if problem != "" {
		text = problem + "\n" + text
	}
	return message{Text: text, Blocks: blocks}
}

func withArgs(name, args string) string {
	if args == "" {
		return name
	}
	return name + " " + args
}

// interaction handles buttons, selects, modal submissions, suggestions and
// shortcuts. The returned value is the ack payload.
func (b *Bot) interaction(later *jobs, cb slack.InteractionCallback) any {
	teamID := cb.Team.ID
	if teamID == "" {
		teamID = cb.User.TeamID
	}
	ok, refusal := true, (*message)(nil)
	if !b.routes.public[publicID(cb)] || b.cfg.TeamID != "" && teamID != "" && teamID != b.cfg.TeamID {
		ok, refusal = b.permitted(teamID, cb.User.ID)
	}
	if !ok {
		switch cb.Type {
		case slack.InteractionTypeBlockSuggestion:
			return map[string]any{"options": []any{}}
		case slack.InteractionTypeViewSubmission:
			return slack.NewClearViewSubmissionResponse()
		}
		answerable := cb.ResponseURL != "" || cb.Type == slack.InteractionTypeShortcut
		if refusal != nil && answerable {
			// A shortcut has no response_url: the refusal comes as a DM.
			reply := b.responder(cb.ResponseURL, cb.User.ID, false)
			later.add("refusal", func(context.Context) { reply(*refusal) })
		}
		return nil
	}
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		if len(cb.ActionCallback.BlockActions) == 0 {
			return nil
		}
		a := cb.ActionCallback.BlockActions[0]
		if pressed, ok := b.routes.actions[a.ActionID]; ok {
			user := cb.User.ID
			pressed(b, later, press{cb: cb, a: a, user: user,
				reply:   b.responder(cb.ResponseURL, user, false),
				replace: b.responder(cb.ResponseURL, user, cb.ResponseURL != ""),
			})
		}
	case slack.InteractionTypeViewSubmission:
		if submit, ok := b.routes.submissions[cb.View.CallbackID]; ok {
			return submit(b, later, cb)
		}
	case slack.InteractionTypeBlockSuggestion:
		if suggest, ok := b.routes.suggestions[cb.ActionID]; ok {
			return suggest(cb.Value)
		}
	case slack.InteractionTypeShortcut, slack.InteractionTypeMessageAction:
		if start, ok := b.routes.shortcuts[cb.CallbackID]; ok {
			start(b, later, cb)
		}
	case slack.InteractionTypeViewClosed:
		b.modals.drop(cb.View.ID)
	}
	return nil
}

// publicID is what an interaction answers: the action pressed, or the view
// submitted or closed.
func publicID(cb slack.InteractionCallback) string {
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		if len(cb.ActionCallback.BlockActions) > 0 {
			return cb.ActionCallback.BlockActions[0].ActionID
		}
	case slack.InteractionTypeViewSubmission, slack.InteractionTypeViewClosed:
		return cb.View.CallbackID
	}
	return ""
}

// eventsAPI handles Events API callbacks of the workspace.
func (b *Bot) eventsAPI(later *jobs, ev slackevents.EventsAPIEvent) {
	if b.cfg.TeamID != "" && ev.TeamID != "" && ev.TeamID != b.cfg.TeamID {
		return
	}
	if handle, ok := b.routes.events[slackevents.EventsAPIType(ev.InnerEvent.Type)]; ok {
		handle(b, later, ev)
	}
}
