package bot

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/personal"
)

// The Bot is what the personal Runner sends through, and how it learns
// each person's zone.
var (
	_ personal.Sender = (*Bot)(nil)
	_ personal.Zones  = (*Bot)(nil)
)

// personalFlow is `remind` and `agenda`, their settings modal, and
// "Stop reminders".
func personalFlow() flow {
	return flow{
		commands: []command{
			{name: "remind", usage: "15m", help: "a direct message that long before each booking (`remind off` stops them)", maxArgs: anyArgs, run: (*Bot).remindCommand},
			{name: "agenda", usage: "08:00 [weekdays]", help: "the day's bookings every morning at that time of yours, in a direct message (`agenda off` stops it)", maxArgs: anyArgs, run: (*Bot).agendaCommand},
		},
		actions: map[string]func(*Bot, *jobs, press){
			actionPersonalSettings: func(b *Bot, later *jobs, p press) {
				later.add("personal-settings", func(ctx context.Context) { b.openSettings(ctx, p.cb.TriggerID, p.user, p.reply) })
			},
			actionRemindOff: (*Bot).remindOffPressed,
		},
		submissions: map[string]func(*Bot, *jobs, slack.InteractionCallback) any{
			callbackPersonal: (*Bot).submitSettings,
		},
	}
}

// remindCommand answers `remind`. Arguments bookbot cannot read are
// answered in the ack; the setting is read or saved, and said, in the
// reply.
func (b *Bot) remindCommand(later *jobs, c call) any {
	return b.settingCommand(later, c, "remind", func(s *personal.Settings) { s.Remind = 0 },
		func(args []string) (func(*personal.Settings), string) {
			lead, problem := parseLead(strings.Join(args, " "), escape(c.Command))
			return func(s *personal.Settings) { s.Remind = lead }, problem
		}, b.remindReply)
}

// agendaCommand answers `agenda`, as remindCommand answers `remind`.
func (b *Bot) agendaCommand(later *jobs, c call) any {
	return b.settingCommand(later, c, "agenda", func(s *personal.Settings) { s.Agenda = nil },
		func(args []string) (func(*personal.Settings), string) {
			a, problem := parseAgenda(args, escape(c.Command))
			return func(s *personal.Settings) { s.Agenda = &a }, problem
		}, b.agendaReply)
}

// settingCommand answers a command that shows a setting (no arguments),
// turns it off ("off") or sets it (arguments parse reads); reply saves the
// change, if any, and says the setting.
func (b *Bot) settingCommand(later *jobs, c call, name string, off func(*personal.Settings),
	parse func([]string) (func(*personal.Settings), string),
	reply func(context.Context, string, func(*personal.Settings)) message) any {
	if b.cfg.Personal == nil {
		return b.ephemeral(notSetUpMessage())
	}
	var change func(*personal.Settings)
	switch {
	case len(c.args) == 0:
	case len(c.args) == 1 && strings.EqualFold(c.args[0], "off"):
		change = off
	default:
		var problem string
		if change, problem = parse(c.args); problem != "" {
			return b.ephemeral(helpMessage(c.Command, problem))
		}
	}
	later.add(name, func(ctx context.Context) { c.reply(reply(ctx, c.UserID, change)) })
	return nil
}

// remindReply saves a change to the person's reminders, when there is one,
// and says the setting and when the next reminder comes.
func (b *Bot) remindReply(ctx context.Context, user string, change func(*personal.Settings)) message {
	s, err := b.personalSettings(ctx, user, change)
	if err != nil {
		return b.personalFailed(change != nil, err)
	}
	loc, known := b.personZone(ctx, user)
	next := reminderNext{}
	if s.Remind > 0 {
		cal, list, err := b.upcoming(ctx, user)
		if err != nil {
			b.log.Warn("the bookings could not be loaded to say the next reminder", "user", user, "err", err)
			next.err = err
		} else {
			next.at, next.booking = personal.NextReminder(s, list, b.cfg.Now())
			next.types = b.titles(ctx, cal)
		}
	}
	return remindSetting(b.cfg.Command, s, change != nil, next, loc, known)
}

// agendaReply saves a change to the person's agenda, when there is one,
// and says the setting and when the next agenda comes.
func (b *Bot) agendaReply(ctx context.Context, user string, change func(*personal.Settings)) message {
	s, err := b.personalSettings(ctx, user, change)
	if err != nil {
		return b.personalFailed(change != nil, err)
	}
	loc, known := b.personZone(ctx, user)
	var next time.Time
	if known {
		next = personal.NextAgenda(s, loc, b.cfg.Now())
	}
	return agendaSetting(b.cfg.Command, s, change != nil, next, loc, known)
}

// remindOffPressed is "Stop reminders", on a reminder or a reply: the
// reminders are turned off, the agenda kept.
func (b *Bot) remindOffPressed(later *jobs, p press) {
	later.add("remind-off", func(ctx context.Context) {
		if b.cfg.Personal == nil {
			p.reply(notSetUpMessage())
			return
		}
		p.reply(b.remindReply(ctx, p.user, func(s *personal.Settings) { s.Remind = 0 }))
	})
}

// personalSettings reads the person's settings and, when change is not
// nil, changes them and saves them, the rest kept as it was.
func (b *Bot) personalSettings(ctx context.Context, user string, change func(*personal.Settings)) (personal.Settings, error) {
	s, _, err := b.cfg.Personal.Settings(ctx, user)
	if err != nil || change == nil {
		return s, err
	}
	change(&s)
	s.Updated = b.cfg.Now()
	if err := b.cfg.Personal.SaveSettings(ctx, user, s); err != nil {
		return personal.Settings{}, err
	}
	b.log.Info("personal settings saved", "user", user, "remind", s.Remind.String(), "agenda", s.Agenda != nil)
	if b.cfg.PersonalChanged != nil {
		b.cfg.PersonalChanged()
	}
	return s, nil
}

// personalFailed says that the settings could not be read or saved; the
// store's error, which may name files or hosts, goes to the log only.
func (b *Bot) personalFailed(saving bool, err error) message {
	what := "Your reminder and agenda settings could not be read"
	if saving {
		what = "Your setting was not saved"
	}
	b.log.Warn(what, "err", err)
	text := what + ": bookbot could not reach the place it keeps them. Try again in a minute; if it keeps happening, tell the calendar's owner."
	return message{Text: text, Blocks: []slack.Block{section(":warning: " + text)}}
}

// openSettings opens the settings modal with the person's settings in it.
func (b *Bot) openSettings(ctx context.Context, triggerID, user string, reply func(message)) {
	if b.cfg.Personal == nil {
		reply(notSetUpMessage())
		return
	}
	s, _, err := b.cfg.Personal.Settings(ctx, user)
	if err != nil {
		reply(b.personalFailed(false, err))
		return
	}
	loc, known := b.personZone(ctx, user)
	b.openView(ctx, triggerID, settingsModal(s, loc, known), "settings", reply)
}

// submitSettings reads the modal in memory and closes it; the settings are
// saved after the ack, and App Home shows them. A failure comes as a
// direct message: the modal is gone by then.
func (b *Bot) submitSettings(later *jobs, cb slack.InteractionCallback) any {
	if b.cfg.Personal == nil {
		return slack.NewErrorsViewSubmissionResponse(map[string]string{actionRemindLead: "Reminders are not set up on this bookbot."})
	}
	remind, agenda, errs := readSettings(cb.View)
	if len(errs) > 0 {
		return slack.NewErrorsViewSubmissionResponse(errs)
	}
	user := cb.User.ID
	later.add("personal-save", func(ctx context.Context) {
		_, err := b.personalSettings(ctx, user, func(s *personal.Settings) { s.Remind, s.Agenda = remind, agenda })
		if err != nil {
			b.dm(ctx, user, b.personalFailed(true, err))
			return
		}
		b.publishHome(ctx, user)
	})
	return nil
}

// PersonZone is the person's zone as their Slack profile names it
// (users.info, cached for an hour; through a failure the last known zone
// is kept). When Slack cannot say and no zone of theirs is known, it is an
// error: nothing is sent at a guessed time.
func (b *Bot) PersonZone(ctx context.Context, user string) (*time.Location, error) {
	return b.users.known(ctx, user)
}

// SendReminder sends d's reminder to its person, as a direct message with
// times in loc. An error that proves Slack did not post it wraps
// personal.ErrNotSent.
func (b *Bot) SendReminder(ctx context.Context, d personal.Due, loc *time.Location) error {
	return b.sendPersonal(ctx, d.User, reminderMessage(d, b.titlesFor(ctx, d.User), loc, b.cfg.Now()))
}

// SendAgenda sends d's agenda to its person, as a direct message with
// times in loc. An error that proves Slack did not post it wraps
// personal.ErrNotSent.
func (b *Bot) SendAgenda(ctx context.Context, d personal.Due, loc *time.Location) error {
	return b.sendPersonal(ctx, d.User, agendaMessage(d, b.titlesFor(ctx, d.User), loc))
}

// sendPersonal posts m to the person (chat.postMessage to a user ID is
// their DM with bookbot). Slack's error answers, a rate limit and a
// connection never made prove it was not posted; any other error is
// returned as it is, as it may have been.
func (b *Bot) sendPersonal(ctx context.Context, user string, m message) error {
	_, _, err := b.post(ctx, user, m, noUnfurl()...)
	if err != nil && notPosted(err) {
		return fmt.Errorf("%w: slack chat.postMessage: %w", personal.ErrNotSent, err)
	}
	return err
}

// Reading what people type.

// leadUnits are the units a reminder's lead may be given in, besides Go's.
var leadUnits = map[string]time.Duration{
	"m": time.Minute, "min": time.Minute, "mins": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"h": time.Hour, "hr": time.Hour, "hrs": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
}

// parseLead reads how long before a booking its reminder comes: a Go
// duration ("15m", "90m", "1h30m") or whole numbers with units ("15 min",
// "2 hours", "1 day"), from a minute to a day. problem is mrkdwn, with the
// command c (escaped) in its example.
func parseLead(s, c string) (time.Duration, string) {
	d, ok := readLead(s)
	switch {
	case !ok:
		return 0, fmt.Sprintf("I can't read %s as a time before a booking. Say how long before each booking its reminder should come, from 1 minute to 24 hours: `%s remind 15m` (or `1h`, `90m`, `1h30m`); `%s remind off` stops them.", code(clip(s, maxNameRunes)), c, c)
	case d < personal.MinRemind || d > personal.MaxRemind:
		return 0, fmt.Sprintf("A reminder can come from 1 minute to 24 hours before a booking, and %s is not in between. For example: `%s remind 15m`.", code(clip(s, maxNameRunes)), c)
	}
	return d, ""
}

func readLead(s string) (time.Duration, bool) {
	s = strings.ToLower(strings.Join(strings.Fields(s), ""))
	if d, err := time.ParseDuration(s); err == nil {
		return d.Truncate(time.Second), true
	}
	if s == "" {
		return 0, false
	}
	var total time.Duration
	for s != "" {
		i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
		if i <= 0 || i > 4 {
			return 0, false // no number, no unit, or a number too long to mean anything here
		}
		n, _ := strconv.Atoi(s[:i])
		s = s[i:]
		j := strings.IndexFunc(s, func(r rune) bool { return r >= '0' && r <= '9' })
		if j < 0 {
			j = len(s)
		}
		unit, ok := leadUnits[s[:j]]
		if !ok {
			return 0, false
		}
		total += time.Duration(n) * unit
		s = s[j:]
	}
	return total, true
}

// parseAgenda reads `agenda`'s arguments: a time of day and optionally
// "weekdays". problem is mrkdwn, with the command c (escaped) in its
// example.
func parseAgenda(args []string, c string) (personal.Agenda, string) {
	example := fmt.Sprintf("Say the time of your day on the 24-hour clock: `%s agenda 08:00` (or `8:00`, `8am`, `8:30pm`); add `weekdays` for Monday to Friday only. `%s agenda off` stops it.", c, c)
	args = slices.Clone(args)
	if len(args) > 1 && (strings.EqualFold(args[1], "am") || strings.EqualFold(args[1], "pm")) {
		args = append([]string{args[0] + args[1]}, args[2:]...) // "8 am"
	}
	minute, ok := parseClock(args[0])
	if !ok {
		return personal.Agenda{}, "I can't read " + code(clip(args[0], maxNameRunes)) + " as a time of day. " + example
	}
	a := personal.Agenda{Minute: minute}
	for _, arg := range args[1:] {
		switch strings.ToLower(arg) {
		case "weekdays", "weekday":
			a.Weekdays = true
		case "daily":
		default:
			return personal.Agenda{}, "I don't know " + code(clip(strings.Join(args[1:], " "), maxNameRunes)) + " after the time. " + example
		}
	}
	return a, ""
}

// parseClock reads a time of day: "08:00" or "8:00" on the 24-hour clock,
// or "8am", "8:30pm", "12am" (midnight) on the 12-hour one. It is minutes
// after midnight.
func parseClock(s string) (int, bool) {
	s = strings.ToLower(s)
	half := ""
	for _, suffix := range []string{"am", "pm"} {
		if t, ok := strings.CutSuffix(s, suffix); ok {
			s, half = t, suffix
		}
	}
	h, m, colon := strings.Cut(s, ":")
	if !colon {
		if half == "" {
			return 0, false
		}
		m = "00"
	}
	hour, ok1 := digits(h, 1, 2)
	minute, ok2 := digits(m, 2, 2)
	if !ok1 || !ok2 || minute > 59 {
		return 0, false
	}
	switch half {
	case "":
		if hour > 23 {
			return 0, false
		}
	default:
		if hour < 1 || hour > 12 {
			return 0, false
		}
		hour %= 12
		if half == "pm" {
			hour += 12
		}
	}
	return hour*60 + minute, true
}

// digits reads a number of min to max decimal digits, nothing else.
func digits(s string, minLen, maxLen int) (int, bool) {
	if len(s) < minLen || len(s) > maxLen || strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// readSettings reads the settings modal: the reminder's lead (0: off) and
// the agenda (nil: off), or the problems, by input block.
func readSettings(v slack.View) (time.Duration, *personal.Agenda, map[string]string) {
	var lead, at string
	weekdays := false
	if v.State != nil {
		for _, actions := range v.State.Values {
			for actionID, a := range actions {
				switch actionID {
				case actionRemindLead:
					lead = a.SelectedOption.Value
				case actionAgendaTime:
					at = a.SelectedOption.Value
				case actionAgendaDays:
					for _, o := range a.SelectedOptions {
						weekdays = weekdays || o.Value == "weekdays"
					}
				}
			}
		}
	}
	errs := map[string]string{}
	var remind time.Duration
	if lead != "off" {
		d, err := time.ParseDuration(lead)
		if err != nil || d < personal.MinRemind || d > personal.MaxRemind {
			errs[actionRemindLead] = "Choose when reminders come, or Off."
		}
		remind = d
	}
	var agenda *personal.Agenda
	if at != "off" {
		m, ok := parseClock(at)
		if !ok {
			errs[actionAgendaTime] = "Choose a time for the agenda, or Off."
		}
		agenda = &personal.Agenda{Minute: m, Weekdays: weekdays}
	}
	return remind, agenda, errs
}

// Views.

// notSetUpMessage is what the personal commands say when bookbot keeps no
// settings.
func notSetUpMessage() message {
	text := "Reminders and agendas are not set up on this bookbot: it has nowhere to keep your settings. The calendar's owner can turn them on."
	return message{Text: text, Blocks: []slack.Block{section(":no_bell: " + text)}}
}

// reminderNext is what a reply says of the next reminder.
type reminderNext struct {
	at      time.Time        // zero: none
	booking *booking.Booking // the booking it is for
	types   []booking.EventType
	err     error // the list could not be read
}

// remindSetting says the person's reminder setting, just saved when set,
// and when the next reminder comes.
func remindSetting(cmd string, s personal.Settings, set bool, next reminderNext, loc *time.Location, known bool) message {
	c := escape(cmd)
	var head, text string
	switch {
	case s.Remind > 0 && set:
		head = fmt.Sprintf(":white_check_mark: *Reminders on.* bookbot sends you a direct message %s before each booking on the calendar.", leadWords(s.Remind))
		text = fmt.Sprintf("Reminders on: a direct message %s before each booking.", leadWords(s.Remind))
	case s.Remind > 0:
		head = fmt.Sprintf(":alarm_clock: *Reminders:* a direct message %s before each booking on the calendar.", leadWords(s.Remind))
		text = fmt.Sprintf("Reminders: a direct message %s before each booking.", leadWords(s.Remind))
	case set:
		head = fmt.Sprintf(":no_bell: *Reminders off.* bookbot sends you no reminders. `%s remind 15m` turns them on again.", c)
		text = "Reminders off."
	default:
		head = fmt.Sprintf(":no_bell: *Reminders are off.* `%s remind 15m` sends you a direct message 15 minutes before each booking on the calendar.", c)
		text = "Reminders are off."
	}
	lines := []string{head}
	if s.Remind > 0 {
		switch {
		case next.err != nil:
			lines = append(lines, "The bookings could not be loaded, so when the next reminder comes cannot be said now.")
		case next.at.IsZero():
			lines = append(lines, "None of the upcoming bookings has a reminder still to come.")
		case next.booking != nil:
			bk := next.booking
			lines = append(lines, fmt.Sprintf("Next reminder: %s, for %s", moment(next.at, loc),
				parts(short(titleOf(bk.EventType, next.types)), short(bk.BookerName.String))))
		default:
			lines = append(lines, "Next reminder: "+moment(next.at, loc)+".")
		}
	}
	if s.Agenda != nil {
		lines = append(lines, "Your agenda stays as it is: "+agendaWords(*s.Agenda)+".")
	}
	zone := "Times in " + escape(loc.String()) + " — your Slack time zone; bookbot follows it if you change it."
	if !known {
		zone = "Times in UTC: bookbot could not read your Slack time zone just now."
	}
	elems := []slack.BlockElement{settingsButton()}
	if s.Remind > 0 {
		elems = append(elems, button(actionRemindOff, "Stop reminders", ""))
	}
	return message{Text: text, Blocks: []slack.Block{
		section(strings.Join(lines, "\n")),
		contextLine(zone),
		slack.NewActionBlock("personal_actions", elems...),
	}}
}

// agendaSetting says the person's agenda setting, just saved when set,
// and when the next agenda comes (zero: not known).
func agendaSetting(cmd string, s personal.Settings, set bool, next time.Time, loc *time.Location, known bool) message {
	c := escape(cmd)
	var lines []string
	var text string
	switch a := s.Agenda; {
	case a != nil && set:
		lines = append(lines, fmt.Sprintf(":white_check_mark: *Agenda on:* %s %s. It comes as a direct message listing the day's bookings.", agendaWords(*a), yourZone(loc, known)))
		text = "Agenda on: " + agendaWords(*a) + "."
	case a != nil:
		lines = append(lines, fmt.Sprintf(":sunrise: *Agenda:* %s %s. It comes as a direct message listing the day's bookings.", agendaWords(*a), yourZone(loc, known)))
		text = "Agenda: " + agendaWords(*a) + "."
	case set:
		lines = append(lines, fmt.Sprintf(":no_bell: *Agenda off.* `%s agenda 08:00` turns it on again.", c))
		text = "Agenda off."
	default:
		lines = append(lines, fmt.Sprintf(":no_bell: *No agenda.* `%s agenda 08:00` sends you the day's bookings every day at 08:00 your time, in a direct message; add `weekdays` for Monday to Friday only.", c))
		text = "No agenda."
	}
	if s.Agenda != nil && !next.IsZero() {
		lines = append(lines, "Next agenda: "+day(next, loc)+".")
	}
	if s.Remind > 0 {
		lines = append(lines, "Your reminders stay as they are: "+leadWords(s.Remind)+" before each booking.")
	}
	return message{Text: text, Blocks: []slack.Block{
		section(strings.Join(lines, "\n")),
		slack.NewActionBlock("personal_actions", settingsButton()),
	}}
}

// Lead options of the settings modal: Off, then these.
var leadChoices = []time.Duration{5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 24 * time.Hour}

// settingsModal is the modal of a person's reminder and agenda settings,
// s chosen in it.
func settingsModal(s personal.Settings, loc *time.Location, known bool) slack.ModalViewRequest {
	// The reminder: Off, the usual leads, and the person's own if it is another.
	leads := slices.Clone(leadChoices)
	if s.Remind > 0 && !slices.Contains(leads, s.Remind) {
		leads = append(leads, s.Remind)
		slices.Sort(leads)
	}
	off := slack.NewOptionBlockObject("off", plain("Off"), nil)
	leadOpts := []*slack.OptionBlockObject{off}
	leadInitial := off
	for _, d := range leads {
		o := slack.NewOptionBlockObject(d.String(), plain(leadWords(d)+" before"), nil)
		leadOpts = append(leadOpts, o)
		if d == s.Remind {
			leadInitial = o
		}
	}
	lead := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Choose when"), actionRemindLead, leadOpts...)
	lead.InitialOption = leadInitial

	// The agenda: Off, every half hour, and the person's own time if it is another.
	minutes := make([]int, 0, 49)
	for m := 0; m < 24*60; m += 30 {
		minutes = append(minutes, m)
	}
	if a := s.Agenda; a != nil && !slices.Contains(minutes, a.Minute) && a.Minute >= 0 && a.Minute < 24*60 {
		minutes = append(minutes, a.Minute)
		slices.Sort(minutes)
	}
	agendaOff := slack.NewOptionBlockObject("off", plain("Off"), nil)
	timeOpts := []*slack.OptionBlockObject{agendaOff}
	timeInitial := agendaOff
	for _, m := range minutes {
		o := slack.NewOptionBlockObject(clockText(m), plain(clockText(m)), nil)
		timeOpts = append(timeOpts, o)
		if s.Agenda != nil && s.Agenda.Minute == m {
			timeInitial = o
		}
	}
	at := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Choose a time"), actionAgendaTime, timeOpts...)
	at.InitialOption = timeInitial

	weekdays := slack.NewOptionBlockObject("weekdays", plain("Weekdays only"), plain("Monday to Friday"))
	days := slack.NewCheckboxGroupsBlockElement(actionAgendaDays, weekdays)
	if s.Agenda != nil && s.Agenda.Weekdays {
		days.InitialOptions = []*slack.OptionBlockObject{weekdays}
	}
	daysInput := slack.NewInputBlock(actionAgendaDays, plain("Days"), nil, days)
	daysInput.Optional = true

	zone := "Your Slack time zone: " + escape(loc.String()) + ". bookbot follows it if you change it."
	if !known {
		zone = "bookbot could not read your Slack time zone just now; the agenda comes at this time in it, and follows it if you change it."
	}
	return slack.ModalViewRequest{
		Type:       slack.VTModal,
		CallbackID: callbackPersonal,
		Title:      plain("Reminders and agenda"),
		Submit:     plain("Save"),
		Close:      plain("Cancel"),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			section("bookbot can send you direct messages: a reminder before each booking on the calendar, and an agenda of the day's bookings at a time of your morning."),
			slack.NewInputBlock(actionRemindLead, plain("Reminder before each booking"), nil, lead),
			slack.NewInputBlock(actionAgendaTime, plain("Agenda"), plain("A time of your day."), at),
			daysInput,
			contextLine(zone),
		}},
	}
}

// startsIn is how long until a booking starts, as a person says it.
func startsIn(d time.Duration) string {
	if d < time.Minute {
		return "starts in less than a minute"
	}
	return "starts in " + leadWords(d.Round(time.Minute))
}

// reminderMessage is the direct message before a booking. Its fallback
// text begins with "Reminder", as the contract has it, and its metadata
// carries the booking's ID.
func reminderMessage(d personal.Due, types []booking.EventType, loc *time.Location, now time.Time) message {
	bk := d.Booking
	title := short(titleOf(bk.EventType, types))
	name := short(bk.BookerName.String)

	what := "a booking"
	if title != "" {
		what = title
	}
	text := "Reminder: " + what + " at " + escape(bk.Start.In(loc).Format(momentLayout))
	if name != "" {
		text += " with " + name
	}

	head := ":alarm_clock: *Reminder*: " + what + " " + startsIn(bk.Start.Sub(now)) + "."
	if d.Late {
		head += " bookbot could not remind you earlier."
	}
	with := "With " + name
	if name == "" {
		with = "_No attendee on record._"
	}
	body := fmt.Sprintf("%s\n*%s*\n%s", head, span(bk.Start, bk.End, loc), with)
	return message{Text: text, Metadata: bookingMeta(eventReminder, bk), Blocks: []slack.Block{
		section(body),
		slack.NewActionBlock("reminder_actions",
			button(actionShowList, "Upcoming bookings", ""),
			button(actionPersonalSettings, "Reminder settings…", ""),
			cancelMenu(bk.ID),
		),
	}}
}

// agendaMessage is the direct message of a person's day. Its fallback text
// begins with "Agenda", as the contract has it.
func agendaMessage(d personal.Due, types []booking.EventType, loc *time.Location) message {
	day := time.Date(d.Day.Year, d.Day.Month, d.Day.Day, 12, 0, 0, 0, time.UTC).Format(dayLayout)
	text := "Agenda for " + day + ": no bookings."
	if n := len(d.Bookings); n > 0 {
		first := d.Bookings[0]
		text = fmt.Sprintf("Agenda for %s: %s, first at %s — %s.", day, plural(n, "booking"), first.Start.In(loc).Format(timeLayout), cut(bookingWhat(first, types, ""), 100))
	}
	var late string
	if d.Late {
		late = "Later than your " + d.At.In(loc).Format(timeLayout) + ": bookbot could not send it earlier."
	}
	return message{Text: text, Blocks: dayBlocks("Your day, "+day, d.Day, d.Bookings, types, loc, "Nothing booked today.", late, d.Incomplete)}
}
