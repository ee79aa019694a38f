package bot

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
)

// message is an ephemeral reply or a DM: fallback text plus blocks.
type message struct {
	Text   string
	Blocks []slack.Block
}

// Action IDs. The contract's are stable for automation; the rest are ours.
const (
	actionEventType   = "event_type"     // contract
	actionSlotDay     = "slot_day"       // contract
	actionSlot        = "slot"           // contract
	actionName        = "name"           // contract
	actionEmail       = "email"          // contract
	actionBookerTZ    = "booker_tz"      // contract
	actionNote        = "note"           // contract
	actionCancel      = "cancel_booking" // contract
	actionBookSlot    = "book_slot"      // contract
	actionNewBooking  = "new_booking"
	actionListPage    = "list_page"
	actionListPrev    = "list_page_prev" // action IDs are unique within a block
	actionShowTypes   = "show_types"
	actionShowSlots   = "show_slots"
	actionPickAnother = "pick_another"
	actionRecheck     = "recheck"
	actionHomeRefresh = "home_refresh"

	callbackBooking  = "booking_create" // contract
	callbackShortcut = "book_meeting"
)

const notRecorded = "not recorded"

// listPageSize keeps a page of bookings well inside 50 blocks.
const listPageSize = 15

func plain(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.PlainTextType, clip(s, 150), true, false)
}

// mrkdwn is verbatim: Slack turns only explicit markup (<@U…>, <!date…>)
// into mentions and links, never a typed "@channel" or a bare URL in a name.
func mrkdwn(s string) *slack.TextBlockObject {
	return slack.NewTextBlockObject(slack.MarkdownType, clip(s, 3000), false, true)
}

func section(s string) *slack.SectionBlock { return slack.NewSectionBlock(mrkdwn(s), nil, nil) }

func contextLine(s string) *slack.ContextBlock {
	return slack.NewContextBlock("", mrkdwn(s))
}

func button(actionID, text, value string) *slack.ButtonBlockElement {
	return slack.NewButtonBlockElement(actionID, value, plain(clip(text, 75)))
}

// escape keeps user-provided text from becoming Slack markup (an attendee
// named "<!channel>" must not ping anyone) and on one line: a name with a
// newline must not add lines of its own to a list.
func escape(s string) string { return escaper.Replace(oneLine(s)) }

// oneLine collapses each run of whitespace and control characters into
// one space.
func oneLine(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return r != ' ' && breaksLine(r) }) < 0 {
		return s // the common case: nothing but plain spaces
	}
	return strings.Join(strings.FieldsFunc(s, breaksLine), " ")
}

func breaksLine(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }

// escaper is built once: a Replacer builds its tables on first use, which
// costs more than escaping a whole booking list.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// clip shortens s to n characters for Slack's limits.
func clip(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// when renders a time range in loc, always naming the day and the zone's
// abbreviation so it is never read in the wrong zone.
func when(start, end time.Time, loc *time.Location) string {
	s, e := start.In(loc), end.In(loc)
	out := s.Format("Mon 2 Jan, 15:04") + "–" + e.Format("15:04")
	if s.YearDay() != e.YearDay() || s.Year() != e.Year() {
		out = s.Format("Mon 2 Jan, 15:04") + " – " + e.Format("Mon 2 Jan, 15:04")
	}
	return out + " " + s.Format("MST")
}

// zoneName names a zone for a person: "Europe/Berlin (CET)".
func zoneName(loc *time.Location, at time.Time) string {
	abbr := at.In(loc).Format("MST")
	if abbr == loc.String() {
		return abbr
	}
	return loc.String() + " (" + abbr + ")"
}

func titleOf(slug booking.NullString, types []booking.EventType) string {
	if !slug.Valid {
		return "event " + notRecorded
	}
	for _, et := range types {
		if et.Slug == slug.String {
			return et.Title
		}
	}
	return slug.String
}

func refusalMessage(userID string) message {
	text := fmt.Sprintf("Sorry, bookbot is only open to the people the calendar owner has allowed, and your Slack ID (%s) is not on that list. Ask the owner to add it.", userID)
	return message{Text: text, Blocks: []slack.Block{section(":lock: " + text)}}
}

func helpMessage(cmd, problem string) message {
	var blocks []slack.Block
	if problem != "" {
		blocks = append(blocks, section(":warning: "+escape(problem)))
	}
	blocks = append(blocks,
		section(fmt.Sprintf("*bookbot* books meetings on the owner's calendar. Everything it shows you is visible only to you.\n"+
			"`%[1]s types` – event types\n"+
			"`%[1]s slots <event>` – free slots of an event type\n"+
			"`%[1]s new [event]` – book a slot for an attendee\n"+
			"`%[1]s list` – upcoming bookings, with Cancel buttons\n"+
			"`%[1]s cancel <booking-id>` – cancel one booking (asks first)\n"+
			"`%[1]s digest` – preview tomorrow's digest\n"+
			"`%[1]s audit` – bookings and cancellations made through bookbot in the last 24 hours", cmd)),
		slack.NewActionBlock("help_actions",
			button(actionNewBooking, "New booking", "").WithStyle(slack.StylePrimary),
			button(actionListPage, "Upcoming bookings", "0"),
			button(actionShowTypes, "Event types", ""),
		),
	)
	text := "bookbot: " + cmd + " types | slots <event> | new | list | cancel <id> | digest | audit"
	if problem != "" {
		text = problem + "\n" + text
	}
	return message{Text: text, Blocks: blocks}
}

func errorMessage(what string, err error) message {
	text := fmt.Sprintf("%s: %v", what, err)
	return message{Text: text, Blocks: []slack.Block{section(":warning: " + escape(text))}}
}

// typesMessage lists event types; solo ones get Slots and Book buttons,
// others say they go through the public booking page.
func typesMessage(types []booking.EventType) message {
	if len(types) == 0 {
		return message{Text: "There are no event types.", Blocks: []slack.Block{section("There are no event types on this calendar.")}}
	}
	blocks := []slack.Block{slack.NewHeaderBlock(plain("Event types"))}
	shown := 0
	for _, et := range types {
		if len(blocks) > 46 {
			break
		}
		shown++
		line := fmt.Sprintf("*%s* · %d min · `%s`", escape(et.Title), et.DurationMinutes, escape(et.Slug))
		if !et.Bookable() {
			line += fmt.Sprintf("\n_%s event: book it through the public booking page; the API does not support it reliably._", strings.ReplaceAll(string(et.SchedulingKind), "_", " "))
			blocks = append(blocks, section(line))
			continue
		}
		blocks = append(blocks, section(line), slack.NewActionBlock("type_"+clip(et.Slug, 200),
			button(actionShowSlots, "Free slots", et.Slug),
			button(actionNewBooking, "Book", et.Slug).WithStyle(slack.StylePrimary),
		))
	}
	if shown < len(types) {
		blocks = append(blocks, contextLine(fmt.Sprintf("%d more not shown.", len(types)-shown)))
	}
	return message{Text: fmt.Sprintf("%d event types", len(types)), Blocks: blocks}
}

// slotsMessage groups slots by day in loc; each day has a select that books
// one of its slots (book_slot). It stays within 50 blocks and 100 options.
func slotsMessage(et booking.EventType, slots []booking.Slot, loc *time.Location, now time.Time) message {
	head := fmt.Sprintf("Free slots: %s (%d min)", et.Title, et.DurationMinutes)
	if len(slots) == 0 {
		return message{Text: head + ": none", Blocks: []slack.Block{
			slack.NewHeaderBlock(plain(head)),
			section("No free slots in the next 14 days."),
		}}
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		contextLine(fmt.Sprintf("%d slots in the next 14 days. Times in %s. A slot is not held until it is booked.", len(slots), zoneName(loc, now))),
	}
	days := groupByDay(slots, loc)
	shownDays := 0
	for _, d := range days {
		for i := 0; i < len(d.slots); i += 100 {
			if len(blocks) >= 48 {
				break
			}
			chunk := d.slots[i:min(i+100, len(d.slots))]
			times := make([]string, len(chunk))
			opts := make([]*slack.OptionBlockObject, len(chunk))
			for j, s := range chunk {
				times[j] = s.Start.In(loc).Format("15:04")
				opts[j] = slack.NewOptionBlockObject(slotValue(s), plain(s.Start.In(loc).Format("15:04")+"–"+s.End.In(loc).Format("15:04")), nil)
			}
			sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Book…"), actionBookSlot, opts...)
			text := fmt.Sprintf("*%s*\n%s", d.label, strings.Join(times, " · "))
			blocks = append(blocks, slack.NewSectionBlock(mrkdwn(text), nil, slack.NewAccessory(sel)))
		}
		if len(blocks) < 48 {
			shownDays++
		}
	}
	if shownDays < len(days) {
		blocks = append(blocks, contextLine("More days are available in the booking form."))
	}
	return message{Text: fmt.Sprintf("%s: %d slots", head, len(slots)), Blocks: blocks}
}

type daySlots struct {
	key   string // YYYY-MM-DD in the zone
	label string // "Mon 23 Nov"
	slots []booking.Slot
}

func groupByDay(slots []booking.Slot, loc *time.Location) []daySlots {
	var days []daySlots
	for _, s := range slots {
		t := s.Start.In(loc)
		key := t.Format("2006-01-02")
		if len(days) == 0 || days[len(days)-1].key != key {
			days = append(days, daySlots{key: key, label: t.Format("Mon 2 Jan")})
		}
		days[len(days)-1].slots = append(days[len(days)-1].slots, s)
	}
	return days
}

// slotValue is what a book_slot option carries: the event and the slot's
// start exactly as the API sent it.
func slotValue(s booking.Slot) string { return s.EventType() + " " + s.RawStart() }

func parseSlotValue(v string) (eventType, rawStart string, ok bool) {
	eventType, rawStart, ok = strings.Cut(v, " ")
	return eventType, rawStart, ok && eventType != "" && rawStart != ""
}

// listMessage shows one page of upcoming bookings, each with a Cancel button.
func listMessage(list []booking.Booking, types []booking.EventType, loc *time.Location, page int, now time.Time) message {
	if len(list) == 0 {
		return message{Text: "No upcoming bookings.", Blocks: []slack.Block{section("No upcoming bookings.")}}
	}
	pages := (len(list) + listPageSize - 1) / listPageSize
	page = max(0, min(page, pages-1))
	from, to := page*listPageSize, min((page+1)*listPageSize, len(list))
	head := fmt.Sprintf("Upcoming bookings (%d)", len(list))
	if len(list) >= booking.MaxListed {
		head = fmt.Sprintf("Upcoming bookings (first %d)", len(list))
	}
	blocks := []slack.Block{
		slack.NewHeaderBlock(plain(head)),
		contextLine(fmt.Sprintf("Times in %s. Page %d of %d.", zoneName(loc, now), page+1, pages)),
	}
	for _, b := range list[from:to] {
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(bookingLine(b, types, loc, true)), nil,
			slack.NewAccessory(cancelButton(b.ID))))
	}
	if len(list) >= booking.MaxListed {
		blocks = append(blocks, contextLine(fmt.Sprintf(":warning: The booking API lists at most %d upcoming bookings, so later ones may be missing here.", booking.MaxListed)))
	}
	if pages > 1 {
		var nav []slack.BlockElement
		if page > 0 {
			nav = append(nav, button(actionListPrev, "Previous", strconv.Itoa(page-1)))
		}
		if page < pages-1 {
			nav = append(nav, button(actionListPage, "Next", strconv.Itoa(page+1)))
		}
		blocks = append(blocks, slack.NewActionBlock("list_nav", nav...))
	}
	return message{Text: head, Blocks: blocks}
}

// bookingLine describes a booking: time, event, attendee and ID. Legacy
// records without a name, email or event say so.
func bookingLine(b booking.Booking, types []booking.EventType, loc *time.Location, withEmail bool) string {
	attendee := escape(b.BookerName.Or(notRecorded))
	if b.BookerName.Valid && b.BookerName.String == "" {
		attendee = "(no name)"
	}
	if withEmail {
		attendee += " · " + escape(b.BookerEmail.Or("email "+notRecorded))
	}
	return fmt.Sprintf("*%s* · %s\n%s · `%s`", when(b.Start, b.End, loc), escape(titleOf(b.EventType, types)), attendee, escape(b.ID))
}

func cancelButton(id string) *slack.ButtonBlockElement {
	btn := button(actionCancel, "Cancel", id).WithStyle(slack.StyleDanger)
	btn.Confirm = slack.NewConfirmationBlockObject(
		plain("Cancel this booking?"),
		mrkdwn("The attendees may be notified of the cancellation. Grouped or series bookings may be cancelled together with it. This cannot be undone."),
		plain("Cancel booking"),
		plain("Keep it"),
	)
	btn.Confirm.WithStyle(slack.StyleDanger)
	return btn
}

// cancelConfirmMessage asks before cancelling; nothing is cancelled until
// the person presses the button.
func cancelConfirmMessage(id string, b *booking.Booking, types []booking.EventType, loc *time.Location, listFull bool) message {
	var detail string
	switch {
	case b != nil:
		detail = bookingLine(*b, types, loc, true)
	case listFull:
		detail = fmt.Sprintf("`%s` is not among the first %d upcoming bookings the API lists; it may be a later one.", escape(id), booking.MaxListed)
	default:
		detail = fmt.Sprintf("`%s` is not among the upcoming bookings. It may be past, already cancelled, or not this calendar's; cancelling it will most likely answer not found.", escape(id))
	}
	return message{
		Text: "Cancel booking " + id + "?",
		Blocks: []slack.Block{
			section("*Cancel this booking?*\n" + detail),
			slack.NewActionBlock("cancel_confirm", cancelButton(id)),
		},
	}
}

// cancelOutcomeMessage replaces the confirmation with what happened.
func cancelOutcomeMessage(id string, res *booking.Result) message {
	var text string
	switch res.Outcome {
	case booking.DryRun:
		text = fmt.Sprintf(":test_tube: *Dry run: nothing was cancelled.* %s", wouldSend(res.WouldSend))
		if res.Booking == nil {
			text += fmt.Sprintf("\n`%s` is not among the upcoming bookings, so the API would most likely answer not found.", escape(id))
		}
	case booking.Cancelled:
		text = fmt.Sprintf(":white_check_mark: Booking `%s` is cancelled.", escape(id))
		if !res.Verified {
			text += " The API confirmed it, but the bookings list could not be checked."
		}
	case booking.NotFound:
		text = fmt.Sprintf(":grey_question: Booking `%s` was not found: it does not exist, is not this calendar's, or is assigned to another host. Nothing was cancelled.", escape(id))
	case booking.NotCancelled:
		text = fmt.Sprintf(":x: Booking `%s` was not cancelled: the API did not answer clearly and the booking is still listed. Cancelling again is safe.", escape(id))
	case booking.RateLimited:
		text = fmt.Sprintf(":hourglass: The booking API is refusing requests for now; nothing was cancelled. Try again in %s.", waitText(res.RetryAfter))
	case booking.Rejected:
		text = fmt.Sprintf(":x: The booking API refused to cancel `%s`: %s", escape(id), escape(errText(res.Err)))
	default:
		text = fmt.Sprintf(":warning: It is unclear whether booking `%s` was cancelled. Check the calendar before trying again.", escape(id))
	}
	blocks := []slack.Block{section(text)}
	if len(res.Seen) > 0 && res.Outcome != booking.Cancelled && res.Outcome != booking.DryRun {
		blocks = append(blocks, contextLine(escape("What bookbot saw: "+strings.Join(res.Seen, "; "))))
	}
	return message{Text: text, Blocks: blocks}
}

func waitText(d time.Duration) string {
	if d <= 0 {
		return "a while (an event's limit can take up to an hour)"
	}
	return booking.HumanDuration(d)
}

func errText(err error) string {
	if err == nil {
		return "no details"
	}
	return err.Error()
}
