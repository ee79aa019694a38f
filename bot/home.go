package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/personal"
)

// homeFlow is App Home: shown when the person opens it, and refreshed.
func homeFlow() flow {
	return flow{
		actions: map[string]func(*Bot, *jobs, press){
			actionHomeRefresh: func(b *Bot, later *jobs, p press) {
				later.add("home", func(ctx context.Context) { b.publishHome(ctx, p.user) })
			},
		},
		events: map[slackevents.EventsAPIType]func(*Bot, *jobs, slackevents.EventsAPIEvent){
			slackevents.AppHomeOpened: func(b *Bot, later *jobs, ev slackevents.EventsAPIEvent) {
				inner, ok := ev.InnerEvent.Data.(*slackevents.AppHomeOpenedEvent)
				if !ok || inner.Tab != "home" {
					return
				}
				later.add("home", func(ctx context.Context) { b.publishHome(ctx, inner.User) })
			},
		},
	}
}

// App Home is read at a glance: today's and tomorrow's bookings, at most
// homeRows of them, titles and names clipped to homeRunes; the list has the
// rest.
const (
	homeDays  = 2
	homeRows  = 15
	homeRunes = 40
)

// publishHome shows the person's App Home, their desk: the next days'
// bookings, their reminders and agenda, and what they can do. People not
// allowed are told so, and shown nothing about bookings.
func (b *Bot) publishHome(ctx context.Context, userID string) {
	var blocks []slack.Block
	if !b.cfg.Allowed(userID) {
		blocks = refusalMessage(userID, b.cfg.Contact).Blocks
	} else {
		cal, list, err := b.upcoming(ctx, userID)
		if err != nil {
			// App Home says it in words (see homeBlocks); the detail is here.
			b.log.Warn(homeFailed, "user", userID, "err", err)
		}
		loc, known := b.personZone(ctx, userID)
		var d *desk
		if b.cfg.Personal != nil {
			s, _, serr := b.cfg.Personal.Settings(ctx, userID)
			if serr != nil {
				b.log.Warn("App Home: the reminder and agenda settings could not be read", "user", userID, "err", serr)
			}
			d = &desk{settings: s, err: serr, known: known}
		}
		blocks = homeBlocks(list, err, b.titles(ctx, cal), loc, b.cfg.Now(), d)
	}
	b.publishHomeView(ctx, userID, blocks)
}

// homeFailed is what App Home says when the bookings cannot be read.
const homeFailed = "The bookings could not be loaded"

// homeBlocks is App Home: what to do first (New booking and Refresh, or
// Connect when there is no calendar to act on), then today's and
// tomorrow's bookings in loc, at most homeRows, then how many more the list
// has (err is said in words, as every message says it); then the person's
// reminders and agenda when bookbot keeps them (d not nil).
func homeBlocks(list []booking.Booking, err error, types []booking.EventType, loc *time.Location, now time.Time, d *desk) []slack.Block {
	var tail []slack.Block
	if d != nil {
		tail = append(tail, deskBlocks(*d, list, err, loc, now)...)
	}
	blocks := []slack.Block{slack.NewHeaderBlock(plain("Upcoming bookings"))}
	refresh := button(actionHomeRefresh, "Refresh", "")
	if nc, ok := errors.AsType[*NoCalendarError](err); ok {
		// Nothing to book on until a calendar is connected: Connect is the
		// step to take.
		m := noCalendarMessage(nc)
		blocks = append(blocks, slack.NewActionBlock("home_actions", connectButton(connectLabel(nc)), refresh), m.Blocks[0])
		return append(blocks, tail...)
	}
	blocks = append(blocks, slack.NewActionBlock("home_actions",
		button(actionNewBooking, "New booking", "").WithStyle(slack.StylePrimary), refresh))
	if err != nil {
		blocks = append(blocks, errorMessage(homeFailed, err).Blocks...)
		return append(blocks, tail...)
	}
	today := now.In(loc)
	end := time.Date(today.Year(), today.Month(), today.Day()+homeDays, 0, 0, 0, 0, loc)
	days := map[string][]string{}
	var order []string
	soon, shown := 0, 0
	for _, bk := range list {
		if !bk.Start.Before(end) {
			break
		}
		soon++
		if shown == homeRows {
			continue
		}
		key := dayHeadingOf(bk.Start, now, loc)
		if _, ok := days[key]; !ok {
			order = append(order, key)
		}
		days[key] = append(days[key], fmt.Sprintf("%s  %s", hours(bk.Start, bk.End, loc),
			parts(escape(clip(titleOf(bk.EventType, types), homeRunes)), escape(clip(bk.BookerName.String, homeRunes)))))
		shown++
	}
	blocks = append(blocks, contextLine(fmt.Sprintf("%s today and tomorrow. Times in %s.", plural(soon, "booking"), zoneName(loc, now, end))))
	if soon == 0 {
		blocks = append(blocks, section("Nothing booked today or tomorrow."))
	}
	for _, key := range order {
		for _, text := range splitLines("*"+key+"*", days[key], 3000) {
			blocks = append(blocks, section(text))
		}
	}
	if text := homeMore(soon-shown, len(list)-soon, len(list) >= booking.MaxListed); text != "" {
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(text), nil, slack.NewAccessory(upcomingButton()), slack.SectionBlockOptionBlockID("home_more")))
	}
	return append(blocks, tail...)
}

// connectLabel is the Connect button's words for e: again when a
// calendar was connected before.
func connectLabel(e *NoCalendarError) string {
	if e.Unopened || e.Reconnect {
		return "Connect again"
	}
	return "Connect your calendar"
}

// homeMore says how many bookings App Home does not show: soon more
// today and tomorrow, later after them, and, when the list was full, that
// there may be others still, in numbers that add up with the rows shown to
// the list's. "" when it shows them all.
func homeMore(soon, later int, full bool) string {
	var text string
	switch {
	case soon > 0 && later > 0:
		text = fmt.Sprintf("*%d more* today and tomorrow, and *%d* after that.", soon, later)
	case soon > 0:
		text = fmt.Sprintf("*%d more* today and tomorrow.", soon)
	case later > 0:
		text = fmt.Sprintf("*%d more* after tomorrow.", later)
	}
	if full {
		text += fmt.Sprintf(" There may be others after them: the booking service shows bookbot only the next %d bookings.", booking.MaxListed)
	}
	return strings.TrimSpace(text)
}

// desk is what App Home shows of a person's reminders and agenda.
type desk struct {
	settings personal.Settings
	err      error // they could not be read
	known    bool  // the zone is the one Slack names, not a guess
}

// deskBlocks say the person's reminders and agenda in words, when the next
// come, and offer to change them. list (unless listErr) says when the next
// reminder comes.
func deskBlocks(d desk, list []booking.Booking, listErr error, loc *time.Location, now time.Time) []slack.Block {
	lines := []string{"*Your reminders and agenda*"}
	var next []string
	s := d.settings
	switch {
	case d.err != nil:
		lines = append(lines, ":warning: They could not be read just now. Refresh to try again.")
	default:
		if s.Remind > 0 {
			lines = append(lines, ":alarm_clock: Reminders: a direct message "+leadWords(s.Remind)+" before each booking on the calendar.")
			if t, _ := personal.NextReminder(s, list, now); listErr == nil && !t.IsZero() {
				next = append(next, "Next reminder: "+at(t, now, loc, false))
			}
		} else {
			lines = append(lines, ":no_bell: Reminders: off.")
		}
		if s.Agenda != nil {
			lines = append(lines, ":sunrise: Agenda: the day's bookings in a direct message, "+agendaWords(*s.Agenda)+" "+yourZone(loc, d.known)+".")
			if t := personal.NextAgenda(s, loc, now); d.known && !t.IsZero() {
				next = append(next, "Next agenda: "+dayName(t, now, loc))
			}
		} else {
			lines = append(lines, ":no_bell: Agenda: off.")
		}
	}
	blocks := []slack.Block{
		slack.NewDividerBlock(),
		slack.NewSectionBlock(mrkdwn(strings.Join(lines, "\n")), nil, slack.NewAccessory(settingsButton()), slack.SectionBlockOptionBlockID("personal_desk")),
	}
	if len(next) > 0 {
		blocks = append(blocks, contextLine(strings.Join(next, " · ")))
	}
	return blocks
}
