package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
)

// slotsFlow is `types` and `slots`, and the buttons that show them.
func slotsFlow() flow {
	types := func(b *Bot, later *jobs, user string, reply func(message), page int) {
		later.add("types", func(ctx context.Context) { reply(b.typesReply(ctx, user, page)) })
	}
	typesPage := func(b *Bot, later *jobs, p press) {
		n, _ := strconv.Atoi(p.a.Value)
		types(b, later, p.user, p.replace, n)
	}
	return flow{
		commands: []command{
			{name: "types", help: "event types", run: func(b *Bot, later *jobs, c call) any {
				types(b, later, c.UserID, c.reply, 0)
				return nil
			}},
			{name: "slots", usage: "&lt;event&gt;", brief: "&lt;event&gt;", help: "free slots of an event type", maxArgs: anyArgs, run: (*Bot).slotsCommand},
		},
		actions: map[string]func(*Bot, *jobs, press){
			actionShowTypes: func(b *Bot, later *jobs, p press) { types(b, later, p.user, p.reply, 0) },
			actionTypesPage: typesPage,
			actionTypesPrev: typesPage,
			actionShowSlots: func(b *Bot, later *jobs, p press) {
				later.add("slots", func(ctx context.Context) { p.reply(b.slotsReply(ctx, p.user, p.a.Value, 0)) })
			},
			actionSlotsMore: (*Bot).slotsPagePressed,
			actionSlotsBack: (*Bot).slotsPagePressed,
		},
	}
}

// slotsCommand answers `slots <event>`; without one event, the help says
// what to type.
func (b *Bot) slotsCommand(later *jobs, c call) any {
	if len(c.args) != 1 {
		cmd := escape(c.Command)
		return b.ephemeral(helpMessage(c.Command, fmt.Sprintf("Say which event type: `%s slots &lt;event&gt;` (see `%s types`).", cmd, cmd)))
	}
	later.add("slots", func(ctx context.Context) { c.reply(b.slotsReply(ctx, c.UserID, c.args[0], 0)) })
	return nil
}

// slotsPagePressed shows the next or the earlier days of free slots in
// place of the message.
func (b *Bot) slotsPagePressed(later *jobs, p press) {
	slug, page, _ := strings.Cut(p.a.Value, " ")
	n, _ := strconv.Atoi(page)
	later.add("slots", func(ctx context.Context) { p.replace(b.slotsReply(ctx, p.user, slug, n)) })
}

func (b *Bot) typesReply(ctx context.Context, user string, page int) message {
	cal, err := b.calendarFor(ctx, user)
	var types []booking.EventType
	if err == nil {
		types, err = cal.types.get(ctx)
	}
	if err != nil {
		return b.failed("The event types could not be loaded", err, tryAgain(actionTypesPage, strconv.Itoa(page)))
	}
	return typesMessage(types, b.cfg.BookingPage, page)
}

func (b *Bot) slotsReply(ctx context.Context, userID, slug string, page int) message {
	cal, err := b.calendarFor(ctx, userID)
	var types []booking.EventType
	if err == nil {
		types, err = cal.types.get(ctx)
	}
	if err != nil {
		return b.failed("The event types could not be loaded", err, tryAgain(actionShowSlots, slug))
	}
	et, ok := findType(types, slug)
	switch {
	case !ok:
		return helpMessage(b.cfg.Command, fmt.Sprintf("There is no event type %s. `%s types` lists them.", escape(strconv.Quote(slug)), escape(b.cfg.Command)))
	case !et.Bookable():
		return message{Text: short(et.Title) + " is booked through the public booking page.", Blocks: []slack.Block{
			section(fmt.Sprintf("*%s* is a %s event: book it through %s; the booking API does not support it reliably.", short(et.Title), kindText(et.SchedulingKind), publicPage(b.cfg.BookingPage))),
			slack.NewActionBlock("slots_actions", button(actionShowTypes, "Event types", "")),
		}}
	}
	slots, err := cal.Slots(ctx, slug)
	if err != nil {
		return b.failed("The free slots could not be loaded", err, tryAgain(actionShowSlots, slug))
	}
	return slotsMessage(et, slots, b.users.zone(ctx, userID), b.cfg.Now(), page)
}

// typesPageSize keeps a page of event types short enough to read on a
// phone, and every type reachable through the pages.
const typesPageSize = 8

// typesMessage lists event types, a page at a time; solo ones get Free
// slots and Book buttons, others say they go through the public booking
// page. The buttons are neutral: a page of them has no one first choice.
func typesMessage(types []booking.EventType, page string, n int) message {
	if len(types) == 0 {
		text := "There are no event types on this calendar. The calendar's owner adds them on the booking service."
		return message{Text: "There are no event types.", Blocks: []slack.Block{
			section(text),
			slack.NewActionBlock("types_actions", upcomingButton()),
		}}
	}
	pages := (len(types) + typesPageSize - 1) / typesPageSize
	n = max(0, min(n, pages-1))
	shown := types[n*typesPageSize : min((n+1)*typesPageSize, len(types))]
	blocks := []slack.Block{slack.NewHeaderBlock(plain("Event types"))}
	if pages > 1 {
		first := n*typesPageSize + 1
		blocks = append(blocks, contextLine(fmt.Sprintf("%d–%d of %d.", first, first+len(shown)-1, len(types))))
	}
	for _, et := range shown {
		line := fmt.Sprintf("*%s* · %d min · %s", short(et.Title), et.DurationMinutes, code(et.Slug))
		if !et.Bookable() {
			line += fmt.Sprintf("\n_%s event: book it through %s; the API does not support it reliably._", kindText(et.SchedulingKind), publicPage(page))
			blocks = append(blocks, section(line))
			continue
		}
		blocks = append(blocks, section(line), slack.NewActionBlock("type_"+clip(et.Slug, 200),
			button(actionShowSlots, "Free slots", et.Slug),
			button(actionNewBooking, "Book…", et.Slug),
		))
	}
	if pages > 1 {
		blocks = append(blocks, pager("types_nav", actionTypesPrev, actionTypesPage, n, pages))
	}
	return message{Text: plural(len(types), "event type"), Blocks: blocks}
}

// slotDays is how many days of free slots one message shows.
const slotDays = 5

// slotsMessage shows free slots a few days at a time: each day on one
// line (how many, the first and the last) with its own "Book…" select,
// which opens the form on the time picked.
func slotsMessage(et booking.EventType, slots []booking.Slot, loc *time.Location, now time.Time, page int) message {
	head := fmt.Sprintf("Free slots: %s (%d min)", et.Title, et.DurationMinutes)
	// The notification text is read for mentions like mrkdwn; the header,
	// plain text, is not.
	fallback := fmt.Sprintf("Free slots: %s (%d min)", short(et.Title), et.DurationMinutes)
	if len(slots) == 0 {
		return message{Text: fallback + ": none", Blocks: []slack.Block{
			slack.NewHeaderBlock(plain(head)),
			section("No free slots in the next 14 days. Another event type may have some."),
			slack.NewActionBlock("slots_actions", button(actionShowTypes, "Event types", "")),
		}}
	}
	days := groupByDay(slots, loc, now)
	pages := (len(days) + slotDays - 1) / slotDays
	page = max(0, min(page, pages-1))
	shown := days[page*slotDays : min((page+1)*slotDays, len(days))]
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		contextLine(fmt.Sprintf("%s on %s in the next 14. Times in %s. A slot is not held until it is booked.", plural(len(slots), "slot"), plural(len(days), "day"), zoneName(loc, shown[0].start(), shown[len(shown)-1].end()))),
	}
	// The times are the clock's, which a select's options cannot show as
	// date tokens: a day in another zone abbreviation than the page's
	// first says so, and a day the clocks change on gives each time its own.
	base := shown[0].start().In(loc).Format("MST")
	for _, d := range shown {
		zones := d.zones(loc)
		heading := "*" + d.label + "*"
		if note := zoneNote(zones, base); note != "" {
			heading += " (" + note + ")"
		}
		changes := len(zones) > 1
		// From the first start to the last end: every free meeting of the
		// day lies between the two.
		text := fmt.Sprintf("%s\n%d free times between %s and %s", heading, len(d.slots), clock(d.start(), loc, changes), clock(d.end(), loc, changes))
		if len(d.slots) == 1 {
			text = fmt.Sprintf("%s\n1 free time, %s", heading, slotLabel(d.slots[0], loc, changes))
		}
		var opts []*slack.OptionBlockObject
		for _, s := range d.slots[:min(len(d.slots), 100)] {
			opts = append(opts, slack.NewOptionBlockObject(slotValue(s), plain(slotLabel(s, loc, changes)), nil))
		}
		sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Book…"), actionBookSlot, opts...)
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(text), nil, slack.NewAccessory(sel)))
	}
	if pages > 1 {
		var nav []slack.BlockElement
		if page > 0 {
			nav = append(nav, button(actionSlotsBack, "Earlier days", et.Slug+" "+strconv.Itoa(page-1)))
		}
		if page < pages-1 {
			nav = append(nav, button(actionSlotsMore, "More days", et.Slug+" "+strconv.Itoa(page+1)))
		}
		blocks = append(blocks, slack.NewActionBlock("slots_nav", nav...))
	}
	return message{Text: fallback + ": " + plural(len(slots), "slot"), Blocks: blocks}
}
