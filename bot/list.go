package bot

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
)

// listFlow is `list` and `cancel`: the upcoming bookings, a page at a time,
// and cancelling one, from the list or from any Cancel button.
func listFlow() flow {
	list := func(b *Bot, later *jobs, reply func(message), user string, page int, mark listMark) {
		later.add("list", func(ctx context.Context) { reply(b.listReply(ctx, user, page, mark)) })
	}
	page := func(b *Bot, later *jobs, p press) {
		n, _ := strconv.Atoi(p.a.Value)
		list(b, later, p.replace, p.user, n, listMark{})
	}
	return flow{
		commands: []command{
			{name: "list", help: "upcoming bookings, each with a menu to cancel it, book the attendee again or see its ID", run: func(b *Bot, later *jobs, c call) any {
				list(b, later, c.reply, c.UserID, 0, listMark{})
				return nil
			}},
			{name: "cancel", usage: "&lt;booking-id&gt;", brief: "&lt;id&gt;", help: "cancel one booking (asks first)", maxArgs: anyArgs, run: (*Bot).cancelCommand},
		},
		actions: map[string]func(*Bot, *jobs, press){
			actionShowList: func(b *Bot, later *jobs, p press) { list(b, later, p.reply, p.user, 0, listMark{}) },
			actionListFrom: func(b *Bot, later *jobs, p press) {
				n, _ := strconv.Atoi(p.a.Value)
				list(b, later, p.reply, p.user, n, listMark{})
			},
			actionListPage: page,
			actionListPrev: page,
			actionCancel:   (*Bot).cancelChosen,
			// An unclear cancel is checked by asking again: the booking is
			// shown with its Cancel button if it is still listed.
			actionCancelCheck: func(b *Bot, later *jobs, p press) {
				id := p.a.Value
				later.add("cancel-check", func(ctx context.Context) { p.replace(b.cancelConfirmReply(ctx, p.user, id)) })
			},
			actionKeep: func(b *Bot, later *jobs, p press) {
				if n, ok := listPage(p.a.BlockID); ok {
					list(b, later, p.replace, p.user, n, listMark{})
					return
				}
				later.add("keep", func(context.Context) { p.replace(keptMessage()) })
			},
		},
	}
}

// cancelCommand answers `cancel <booking-id>` with a confirmation; an ID
// that cannot be one is answered in the ack.
func (b *Bot) cancelCommand(later *jobs, c call) any {
	cmd := escape(c.Command)
	if len(c.args) != 1 {
		return b.ephemeral(helpMessage(c.Command, fmt.Sprintf("Say which booking: `%s cancel &lt;booking-id&gt;` (a booking's menu in `%s list` shows its ID).", cmd, cmd)))
	}
	id := c.args[0]
	if err := booking.ValidateBookingID(id); err != nil {
		return b.ephemeral(helpMessage(c.Command, "That is not a booking ID: "+escape(err.Error())+". A booking's menu in `"+cmd+" list` shows its ID."))
	}
	later.add("cancel-confirm", func(ctx context.Context) { c.reply(b.cancelConfirmReply(ctx, c.UserID, id)) })
	return nil
}

// cancelChosen answers cancel_booking: a Cancel button cancels; of a list
// row's menu, Cancel… asks in the row, Book again opens the form and
// Booking ID says the ID to the person alone.
func (b *Bot) cancelChosen(later *jobs, p press) {
	if p.a.Type != slack.ActionType(slack.METOverflow) {
		b.cancelPressed(later, p)
		return
	}
	page, inList := listPage(p.a.BlockID)
	v := p.a.SelectedOption.Value
	if meta, ok := strings.CutPrefix(v, bookAgain); ok {
		later.add("new", func(ctx context.Context) { b.openBookingModal(ctx, p.cb.TriggerID, p.user, pickedMeta(meta), p.reply) })
		return
	}
	if id, ok := strings.CutPrefix(v, showID); ok {
		later.add("booking-id", func(context.Context) { p.reply(bookingIDMessage(id)) })
		return
	}
	if !inList {
		// A card's menu (cancelMenu): Slack's dialog has asked already.
		a := *p.a
		a.Value = v
		p.a = &a
		b.cancelPressed(later, p)
		return
	}
	later.add("list", func(ctx context.Context) { p.replace(b.listReply(ctx, p.user, page, listMark{asking: v})) })
}

// listReply is a page of the bookings list, marked as mark says. The event
// types' titles are fetched when none are recent, so every page, the one
// asking about a cancel too, names them alike.
func (b *Bot) listReply(ctx context.Context, userID string, page int, mark listMark) message {
	cal, list, err := b.upcoming(ctx, userID)
	if err != nil {
		return b.failed("The bookings could not be loaded", err, tryAgain(actionListPage, strconv.Itoa(page)))
	}
	return listMessage(list, b.titles(ctx, cal), b.users.zone(ctx, userID), page, b.cfg.Now(), mark)
}

// listAfterCancel is the page a Cancel was pressed on, shown again: the
// booking struck through when it was cancelled, else with what happened
// above the rows; outcome when the list cannot be read. The list the
// cancel was settled by is shown when there is one: it was read a moment
// ago. res is nil when the cancel failed before an answer.
func (b *Bot) listAfterCancel(ctx context.Context, cal *calendar, user string, page int, res *booking.Result, outcome message) message {
	var list []booking.Booking
	mark := listMark{note: outcome.Blocks[0]}
	if res != nil {
		list = res.Listed
		if res.Outcome == booking.Cancelled && res.Booking != nil {
			mark = listMark{cancelled: res.Booking}
		}
	}
	if list == nil {
		var err error
		if list, err = cal.Bookings(ctx); err != nil {
			return outcome
		}
	}
	m := listMessage(list, b.titles(ctx, cal), b.users.zone(ctx, user), page, b.cfg.Now(), mark)
	m.Text = outcome.Text
	return m
}

func (b *Bot) cancelConfirmReply(ctx context.Context, userID, id string) message {
	cal, list, err := b.upcoming(ctx, userID)
	if err != nil {
		return b.failed("The bookings could not be loaded to show this booking", err, upcomingButton())
	}
	types := b.titles(ctx, cal)
	var found *booking.Booking
	for i := range list {
		if list[i].ID == id {
			found = &list[i]
		}
	}
	return cancelConfirmMessage(id, found, types, b.users.zone(ctx, userID), len(list) >= booking.MaxListed)
}

// listRowID is the block ID of a list's row: a Cancel pressed there says
// which page to show again, the booking struck through.
func listRowID(page int, id string) string { return "row:" + strconv.Itoa(page) + ":" + id }

// listPage is the page of the list a Cancel was pressed on; false when it
// was pressed elsewhere (a confirmation, App Home).
func listPage(blockID string) (int, bool) {
	rest, ok := strings.CutPrefix(blockID, "row:")
	if !ok {
		return 0, false
	}
	p, _, _ := strings.Cut(rest, ":")
	page, err := strconv.Atoi(p)
	return page, err == nil
}

// cancelPressed cancels a booking once a Cancel booking button is pressed. A
// double click finds the first press already cancelling and does nothing.
// While the booking service works, the message says what is being
// cancelled: its event, attendee and time, as the list read before the
// cancel shows them. Pressed in the list, the list comes back with the
// booking struck through, or with what happened above the rows; elsewhere
// the outcome replaces the message.
func (b *Bot) cancelPressed(later *jobs, p press) {
	user, id, replace := p.user, p.a.Value, p.replace
	inMessage, inHome := p.cb.ResponseURL != "", p.inHome()
	if booking.ValidateBookingID(id) != nil {
		return
	}
	lock := "cancel\x00" + id
	if !b.creating.tryLock(lock) {
		return
	}
	later.add("cancel", func(ctx context.Context) {
		defer b.creating.unlock(lock)
		cal, err := b.calendarFor(ctx, user)
		var res *booking.Result
		var types []booking.EventType
		loc := b.users.zone(ctx, user)
		// The interim message goes while the cancel is sent, and before
		// the outcome replaces it.
		var interim sync.WaitGroup
		if err == nil {
			types = b.titles(ctx, cal)
			cctx := booking.WithActor(ctx, user)
			if inMessage {
				cctx = booking.WithListed(cctx, func(bk *booking.Booking) {
					m := cancellingMessage(bk, types, loc, b.cfg.Now())
					interim.Go(func() { replace(m) })
				})
			}
			res, err = cal.Cancel(cctx, id)
		}
		interim.Wait()
		var m message
		if err != nil {
			m = b.failed("Nothing was cancelled", err, upcomingButton())
		} else {
			b.log.Info("booking cancel finished", "user", user, "booking_id", id, "result", res)
			m = cancelOutcomeMessage(id, user, res, types, loc, b.cfg.Now())
		}
		if page, ok := listPage(p.a.BlockID); ok && cal != nil {
			m = b.listAfterCancel(ctx, cal, user, page, res, m)
		}
		replace(m)
		b.ReportReviews(ctx)
		if inHome {
			b.publishHome(ctx, user)
		}
	})
}

// cancellingMessage stands in a message whose Cancel was pressed while
// the booking service works: what is being cancelled, as the list shows
// bk (nil: it does not), by event, attendee and time.
func cancellingMessage(bk *booking.Booking, types []booking.EventType, loc *time.Location, now time.Time) message {
	if bk == nil {
		return message{Text: "Cancelling this booking…", Blocks: []slack.Block{section(":hourglass_flowing_sand: Cancelling this booking…")}}
	}
	return message{
		Text:   "Cancelling: " + bookingWhat(*bk, types, dayTime(bk.Start, now, loc)) + "…",
		Blocks: []slack.Block{section(":hourglass_flowing_sand: *Cancelling:* " + bookingWhat(*bk, types, spanAt(bk.Start, bk.End, now, loc)) + "…")},
	}
}

// listMark is what a list page shows besides the bookings: a booking just
// cancelled, or one whose row asks whether to cancel it.
type listMark struct {
	cancelled *booking.Booking
	asking    string
	note      slack.Block // what a cancel pressed in the list did, when it did not cancel
}

// listMessage shows one page of upcoming bookings, each with a menu.
//
// A booking just cancelled is shown where it was, struck through, but not
// counted: the counts are of the bookings still upcoming.
func listMessage(list []booking.Booking, types []booking.EventType, loc *time.Location, page int, now time.Time, mark listMark) message {
	upcoming := len(list)
	struck := -1 // the cancelled booking's row
	if cancelled := mark.cancelled; cancelled != nil {
		if i := slices.IndexFunc(list, func(b booking.Booking) bool { return b.ID == cancelled.ID }); i >= 0 {
			// Still listed (the list was read before the cancel took): it
			// is not upcoming any more.
			list = slices.Delete(slices.Clone(list), i, i+1)
			upcoming--
		}
		// Shown where it was, struck through, until the list is asked for again.
		i, _ := slices.BinarySearchFunc(list, cancelled.Start, func(b booking.Booking, t time.Time) int { return b.Start.Compare(t) })
		list = slices.Insert(slices.Clone(list), i, *cancelled)
		struck = i
	}
	if len(list) == 0 {
		return message{Text: "No upcoming bookings.", Blocks: []slack.Block{
			section("No upcoming bookings."),
			slack.NewActionBlock("list_actions", button(actionNewBooking, "New booking", "").WithStyle(slack.StylePrimary)),
		}}
	}
	pages := (len(list) + listPageSize - 1) / listPageSize
	page = max(0, min(page, pages-1))
	from, to := page*listPageSize, min((page+1)*listPageSize, len(list))
	full := upcoming >= booking.MaxListed
	head := fmt.Sprintf("Upcoming bookings (%d)", upcoming)
	if full {
		head = fmt.Sprintf("Upcoming bookings (first %d)", upcoming)
	}
	// The page's upcoming bookings, numbered without the struck row.
	first, last := from+1, to
	if struck >= 0 && struck < from {
		first--
	}
	if struck >= 0 && struck < to {
		last--
	}
	where := fmt.Sprintf("%d–%d of %d", first, last, upcoming)
	switch {
	case first > last:
		where = fmt.Sprintf("%d upcoming", upcoming) // the page shows only the cancelled booking
	case first == last:
		where = fmt.Sprintf("%d of %d", first, upcoming)
	}
	if full && page == 0 {
		// Said once, where the list starts.
		where += fmt.Sprintf(". :warning: The booking service shows bookbot only the next %d bookings, so later ones may be missing here", booking.MaxListed)
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		contextLine(fmt.Sprintf("Times in %s. %s.", zoneName(loc, list[from].Start, pageEnd(list[from:to])), where)),
	}
	if mark.note != nil {
		blocks = append(blocks, mark.note)
	}
	day := ""
	for _, b := range list[from:to] {
		if d := dayHeadingOf(b.Start, now, loc); d != day {
			day = d
			blocks = append(blocks, section("*"+d+"*"))
		}
		// A page's rows share one message's text, whatever the names.
		line := cut(listRow(b, types, loc), (maxMessageText-3000)/listPageSize)
		switch {
		case mark.cancelled != nil && b.ID == mark.cancelled.ID:
			blocks = append(blocks, section("~"+line+"~ · :wastebasket: cancelled by you"))
		case b.ID == mark.asking:
			// The row asks once; its button needs no dialog asking again.
			blocks = append(blocks, section(line),
				contextLine("*Cancel this booking?* The attendees may be notified. Grouped or series bookings may be cancelled with it. This cannot be undone."),
				slack.NewActionBlock(listRowID(page, b.ID),
					button(actionCancel, "Cancel booking", b.ID).WithStyle(slack.StyleDanger),
					button(actionKeep, "Keep it", b.ID)))
		default:
			blocks = append(blocks, slack.NewSectionBlock(mrkdwn(line), nil, slack.NewAccessory(rowMenu(b)), slack.SectionBlockOptionBlockID(listRowID(page, b.ID))))
		}
	}
	if pages > 1 {
		blocks = append(blocks, pager("list_nav", actionListPrev, actionListPage, page, pages))
	}
	return message{Text: head, Blocks: blocks}
}

// pageEnd is when the last of a page's bookings ends.
func pageEnd(rows []booking.Booking) time.Time {
	end := rows[0].End
	for _, b := range rows {
		if b.End.After(end) {
			end = b.End
		}
	}
	return end
}

// listRow is a booking on one line, under its day: time, event, attendee
// and email, as parts says them. Its ID is behind the row's menu.
func listRow(b booking.Booking, types []booking.EventType, loc *time.Location) string {
	return fmt.Sprintf("*%s* · %s", hours(b.Start, b.End, loc),
		parts(short(titleOf(b.EventType, types)), short(b.BookerName.String), address(b.BookerEmail.String)))
}

// bookingLine describes a booking by what people know it by: time, event
// and attendee; "—" where a legacy record has nothing.
func bookingLine(b booking.Booking, types []booking.EventType, loc *time.Location, withEmail bool) string {
	attendee := orMissing(short(b.BookerName.String))
	if withEmail {
		attendee += " · " + orMissing(address(b.BookerEmail.String))
	}
	return fmt.Sprintf("*%s* · %s\n%s", span(b.Start, b.End, loc), orMissing(short(titleOf(b.EventType, types))), attendee)
}

// bookAgain marks the row menu's "Book again" option, and showID its
// "Booking ID"; the Cancel… option's value is the booking ID, as the
// contract has it for cancel_booking.
const (
	bookAgain = "book-again:"
	showID    = "booking-id:"
)

// rowMenu is a list row's menu: Cancel…, which asks in the row, Book
// again, which opens the form with the event and attendee filled in, and
// Booking ID, for search and support. An ID too long for an option's
// value gets the Cancel button instead.
func rowMenu(b booking.Booking) slack.BlockElement {
	if utf8.RuneCountInString(b.ID) > 150 {
		return cancelButton(b.ID)
	}
	opts := []*slack.OptionBlockObject{slack.NewOptionBlockObject(b.ID, plain("Cancel…"), nil)}
	if b.EventType.Valid {
		m := bookAgainMeta(b)
		for _, drop := range []func(){func() {}, func() { m.Name = "" }, func() { m.Email = "" }} {
			drop()
			if v := bookAgain + buttonMeta(m); utf8.RuneCountInString(v) <= 150 {
				opts = append(opts, slack.NewOptionBlockObject(v, plain("Book again"), nil))
				break
			}
		}
	}
	if v := showID + b.ID; utf8.RuneCountInString(v) <= 150 {
		opts = append(opts, slack.NewOptionBlockObject(v, plain("Booking ID"), nil))
	}
	return slack.NewOverflowBlockElement(actionCancel, opts...)
}

// bookingIDMessage answers a row menu's Booking ID, to the person alone:
// the ID, for search, support or `cancel`.
func bookingIDMessage(id string) message {
	text := "This booking's ID, for search, support or `cancel`: " + escape(id)
	return message{Text: "Booking ID: " + escape(id), Blocks: []slack.Block{
		section(text),
		slack.NewActionBlock("booking_id_actions", upcomingButton()),
	}}
}

// cancelConfirmMessage asks before cancelling; nothing is cancelled until
// the person presses the button. A booking the complete list does not show
// gets no button: it was cancelled already, has passed, or is not this
// calendar's, and the service answers a repeat cancel as it answers the
// first, so cancelling it could only notify its attendees again.
func cancelConfirmMessage(id string, b *booking.Booking, types []booking.EventType, loc *time.Location, listFull bool) message {
	var detail string
	switch {
	case b != nil:
		detail = bookingLine(*b, types, loc, true)
	case listFull:
		// Only the ID the person typed names it.
		detail = fmt.Sprintf("Booking %s is not among the next %d bookings, the most the booking service shows bookbot; it may be a later one.", escape(id), booking.MaxListed)
	default:
		text := "*Nothing to cancel.* This booking is not among the upcoming bookings: it was cancelled already, has passed, or is not on this calendar. Cancelling it again would change nothing, so bookbot sends nothing."
		return message{
			Text: "Nothing to cancel: that booking is not among the upcoming bookings.",
			Blocks: []slack.Block{
				section(":information_source: " + text),
				contextLine("Booking " + escape(id)),
				slack.NewActionBlock("cancel_confirm", button(actionShowList, "Upcoming bookings", "")),
			},
		}
	}
	// The message asks already: its button needs no dialog asking again.
	cancel := button(actionCancel, "Cancel booking", id).WithStyle(slack.StyleDanger)
	return message{
		Text: "Cancel this booking?",
		Blocks: []slack.Block{
			section("*Cancel this booking?*\n" + detail),
			slack.NewActionBlock("cancel_confirm", cancel, button(actionKeep, "Keep it", id)),
		},
	}
}
