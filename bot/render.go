package bot

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/internal/plaintext"
	"github.com/bookbot/bookbot/personal"
)

// message is an ephemeral reply or a DM: fallback text plus blocks, and
// for automation, when it carries any, message metadata.
type message struct {
	Text     string
	Blocks   []slack.Block
	Metadata *slack.SlackMetadata
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
	actionListFrom    = "list_from"      // the list from a page, in a reply of its own
	actionShowTypes   = "show_types"
	actionTypesPage   = "types_page"
	actionTypesPrev   = "types_page_prev"
	actionShowSlots   = "show_slots"
	actionPickAnother = "pick_another"
	actionRecheck     = "recheck"
	actionKeep        = "cancel_keep"
	actionCancelCheck = "cancel_check"
	actionShowList    = "show_list"
	actionSlotsMore   = "slots_more"
	actionEditBooking = "edit_booking"
	actionSlotsBack   = "slots_back"
	actionHomeRefresh = "home_refresh"
	actionReviewed    = "review_checked"
	actionConnect     = "connect_calendar"

	actionPersonalSettings = "personal_settings"
	actionRemindOff        = "remind_off"
	actionRemindLead       = "remind_lead"
	actionAgendaTime       = "agenda_time"
	actionAgendaDays       = "agenda_days"

	actionOfferSlot     = "offer_slot" // contract
	actionOfferPick     = "offer_pick"
	actionOfferMore     = "offer_more"
	actionOfferWithdraw = "offer_withdraw"
	actionOfferRetry    = "offer_retry"  // a time's form again, after it was not booked
	actionOfferCancel   = "offer_cancel" // a guest's own booking from an offer

	callbackBooking      = "booking_create"   // contract
	callbackOfferBook    = "offer_book"       // contract
	callbackOfferTimes   = "offer_times"      // contract: the message shortcut "Offer times…"
	callbackOfferCompose = "offer_compose"    // contract
	callbackOfferStep    = "offer_times_step" // contract: the Workflow Builder step
	callbackOfferMore    = "offer_more_times"
	// callbackOfferMoreOld is the "More times" modal's callback_id before
	// the message shortcut took offer_times: such a modal, opened before
	// an upgrade, is still answered.
	callbackOfferMoreOld = "offer_times"
	callbackShortcut     = "book_meeting"
	callbackPersonal     = "personal_settings"

	actionPeople      = "people" // contract
	actionCount       = "count"
	actionBookingPage = "booking_page"
)

// missing stands for what a record does not have (a legacy booking's
// event, name or email, or an empty one) wherever a line names a
// booking's parts.
const missing = "—"

// orMissing is s, or missing when s is empty.
func orMissing(s string) string {
	if s == "" {
		return missing
	}
	return s
}

// firstNonEmpty is a, or b when a is empty.
func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// ptr is v's address: a view made here, for what takes one by pointer.
func ptr[T any](v T) *T { return &v }

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

// Limits every message keeps to, whatever the data.
const (
	// maxMessageText caps the text of all blocks of one message together:
	// chat.postMessage answers msg_blocks_too_long from about 12,000
	// characters in all, long before 50 full sections.
	maxMessageText = 11000

	// Names, titles and emails are clipped, so that a line about one
	// booking always fits, and a page of them a message, even when every
	// character needs escaping (& is 5 bytes).
	maxNameRunes  = 120
	maxEmailRunes = 254
)

// short is a name or a title as data: escaped and clipped.
func short(s string) string { return escape(clip(s, maxNameRunes)) }

// address is an email address as data: escaped and clipped.
func address(s string) string { return escape(clip(s, maxEmailRunes)) }

// escape keeps user-provided text from becoming Slack markup (an attendee
// named "<!channel>" must not ping anyone) and on one line: a name with a
// newline must not add lines of its own to a list.
func escape(s string) string { return escaper.Replace(plaintext.Line(s)) }

// code is data shown as inline code (an ID, a slug, a typed command):
// escaped, and each backtick shown as ˋ (U+02CB), so that none ends the
// code span early.
func code(s string) string { return "`" + escape(strings.ReplaceAll(s, "`", "ˋ")) + "`" }

// bookingID is a booking's ID where it is named for search and support:
// plain, as the last and quietest thing on its line. A backtick is shown
// as code() shows it, so that none starts a code span.
func bookingID(id string) string { return "ID " + escape(strings.ReplaceAll(id, "`", "ˋ")) }

// mention is a Slack user by ID, as a mention.
func mention(userID string) string { return "<@" + escape(userID) + ">" }

// mentions are Slack users by ID, as mentions in a list people read:
// "<@A>, <@B> and <@C>".
func mentions(userIDs []string) string {
	var out string
	for i, id := range userIDs {
		switch {
		case i == 0:
		case i == len(userIDs)-1:
			out += " and "
		default:
			out += ", "
		}
		out += mention(id)
	}
	return out
}

// escaper is built once: a Replacer builds its tables on first use, which
// costs more than escaping a whole booking list.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// plural is n of a noun, as a person says it: "1 slot", "2 slots".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// clip shortens s to n characters for Slack's limits.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// cut shortens escaped text to at most n bytes without splitting a
// character or an entity.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	if amp := strings.LastIndexByte(s[:cut], '&'); amp >= 0 && !strings.Contains(s[amp:cut], ";") {
		cut = amp
	}
	return s[:cut] + "…"
}

// One vocabulary of days and times wherever bookbot writes them itself:
// a day, a time of day, and a moment (a day and a time with its zone).
const (
	dayLayout    = "Mon 2 Jan"
	timeLayout   = "15:04"
	momentLayout = "Mon 2 Jan, 15:04 MST"
)

// Times that stay in Slack are date tokens: each reader sees them in their
// own zone and clock setting. bookbot's own formatting in loc is the
// tokens' fallback, and what it writes where tokens cannot go (select
// options, notification text, another person's zone).

// moment is a day and a time of day.
func moment(t time.Time, loc *time.Location) string {
	return dateTokenAs(t, "{date_short_pretty} {time}", t.In(loc).Format(momentLayout))
}

// day is the day of t, where the time of day is said already.
func day(t time.Time, loc *time.Location) string {
	return dateTokenAs(t, "{date_short_pretty}", t.In(loc).Format(dayLayout))
}

// span is a booking's time: its day, start and end.
func span(start, end time.Time, loc *time.Location) string {
	return tokenRange(start, end, loc, "{date_short_pretty} {time}")
}

// hours is a booking's time under a heading that names its day.
func hours(start, end time.Time, loc *time.Location) string {
	return tokenRange(start, end, loc, "{time}")
}

func tokenRange(start, end time.Time, loc *time.Location, startFormat string) string {
	from, to, sep := rangeText(start, end, loc, startFormat != "{time}")
	endFormat := "{time}"
	if sep != "–" {
		endFormat = "{date_short_pretty} {time}"
	}
	return dateTokenAs(start, startFormat, from) + sep + dateTokenAs(end, endFormat, to)
}

// localSpan is a time range in bookbot's own formatting, always naming the
// day and the zone so it is never read in the wrong zone.
func localSpan(start, end time.Time, loc *time.Location) string {
	from, to, sep := rangeText(start, end, loc, true)
	return from + sep + to
}

// rangeText is a range's two ends in bookbot's own formatting: the start's
// day when withDay, the end's when it is another day, and the zone after
// the end, or after both ends when the clocks change in between.
func rangeText(start, end time.Time, loc *time.Location, withDay bool) (from, to, sep string) {
	s, e := start.In(loc), end.In(loc)
	from, to, sep = s.Format(timeLayout), e.Format(timeLayout), "–"
	if withDay {
		from = s.Format(dayLayout + ", " + timeLayout)
	}
	if !sameDay(start, end, loc) {
		to, sep = e.Format(dayLayout+", "+timeLayout), " – "
	}
	if s.Format("MST") != e.Format("MST") {
		from += " " + s.Format("MST")
	}
	return from, to + " " + e.Format("MST"), sep
}

func sameDay(a, b time.Time, loc *time.Location) bool {
	y1, m1, d1 := a.In(loc).Date()
	y2, m2, d2 := b.In(loc).Date()
	return y1 == y2 && m1 == m2 && d1 == d2
}

// zoneName names a zone for a person, for the times from to to:
// "Europe/Berlin (CET)", or "Europe/Berlin (CET, then CEST from Sun 29
// Mar)" when the clocks change in between. More changes than that are left
// to the times themselves: it names the zone only.
func zoneName(loc *time.Location, from, to time.Time) string {
	abbr := from.In(loc).Format("MST")
	if abbr == loc.String() {
		return abbr
	}
	changes, ok := zoneChanges(loc, from, to, 2)
	if !ok {
		return loc.String()
	}
	name := loc.String() + " (" + abbr
	for _, c := range changes {
		name += ", then " + c.In(loc).Format("MST") + " from " + c.In(loc).Format(dayLayout)
	}
	return name + ")"
}

// zoneChanges are the moments after from, up to to, at which loc's zone
// abbreviation changes; false when there are more than limit.
func zoneChanges(loc *time.Location, from, to time.Time, limit int) ([]time.Time, bool) {
	var out []time.Time
	abbr := from.In(loc).Format("MST")
	for t := from; ; {
		_, next := t.In(loc).ZoneBounds()
		if next.IsZero() || next.After(to) || !next.After(t) {
			return out, true
		}
		if a := next.In(loc).Format("MST"); a != abbr {
			if len(out) == limit {
				return nil, false
			}
			out, abbr = append(out, next), a
		}
		t = next
	}
}

// zonesOf are the zone abbreviations of times in loc, in order, each
// change once: [CET CEST] over the night the clocks go forward.
func zonesOf(loc *time.Location, times ...time.Time) []string {
	var out []string
	for _, t := range times {
		if a := t.In(loc).Format("MST"); len(out) == 0 || out[len(out)-1] != a {
			out = append(out, a)
		}
	}
	return out
}

// titleOf is the title of the event type slug names, the slug when the
// type is not among types, and "" when a legacy record has no event type.
func titleOf(slug booking.NullString, types []booking.EventType) string {
	if !slug.Valid {
		return ""
	}
	for _, et := range types {
		if et.Slug == slug.String {
			return et.Title
		}
	}
	return slug.String
}

// publicPage names the owner's public booking page, as a link when its
// address is known.
func publicPage(addr string) string {
	if addr == "" {
		return "the public booking page"
	}
	return pageLink(addr, "the public booking page")
}

// pageLink is a link to addr shown as text, as mrkdwn: addr is made safe
// in the link's markup.
func pageLink(addr, text string) string {
	return "<" + strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C", " ", "%20").Replace(addr) + "|" + escape(text) + ">"
}

// refusalMessage tells someone not on the allow-list so, and whom to ask.
func refusalMessage(userID, contact string) message {
	ask := "Ask the calendar's owner to add it."
	if contact != "" {
		ask = "Ask " + mention(contact) + " to add it."
	}
	text := fmt.Sprintf("Sorry, bookbot is only open to the people the calendar owner has allowed, and your Slack ID (%s) is not on that list. %s", escape(userID), ask)
	return message{Text: text, Blocks: []slack.Block{section(":lock: " + text)}}
}

// tryAgain is a button that asks for the same thing again.
func tryAgain(actionID, value string) *slack.ButtonBlockElement {
	return button(actionID, "Try again", value)
}

// pager is the Previous and Next buttons of page of pages, each carrying
// the page it shows; the two action IDs differ, as Slack wants within a
// block.
func pager(blockID, prev, next string, page, pages int) *slack.ActionBlock {
	var nav []slack.BlockElement
	if page > 0 {
		nav = append(nav, button(prev, "Previous", strconv.Itoa(page-1)))
	}
	if page < pages-1 {
		nav = append(nav, button(next, "Next", strconv.Itoa(page+1)))
	}
	return slack.NewActionBlock(blockID, nav...)
}

// upcomingButton shows the upcoming bookings.
func upcomingButton() *slack.ButtonBlockElement {
	return button(actionShowList, "Upcoming bookings", "")
}

// dateTokenAs is a Slack date token in format; fallback is what a client
// that cannot show tokens shows instead.
func dateTokenAs(t time.Time, format, fallback string) string {
	return "<!date^" + strconv.FormatInt(t.Unix(), 10) + "^" + format + "|" + escape(fallback) + ">"
}

// splitLines packs a heading and lines into texts of at most limit
// characters, never cutting a line (a single overlong line is clipped), so
// a busy day spreads over several sections instead of losing bookings.
func splitLines(heading string, lines []string, limit int) []string {
	var out []string
	cur := heading
	for _, l := range lines {
		if len(cur)+1+len(l) > limit && cur != "" {
			out = append(out, cur)
			cur = ""
		}
		if cur == "" {
			cur = clip(l, limit)
		} else {
			cur += "\n" + l
		}
	}
	if cur != "" {
		out = append(out, cur)
	}
	return out
}

// dayHeading is a heading that names a day, in the one style of every
// day's header and heading: "Today, Mon 23 Mar", "Your day, Tue 24 Mar".
func dayHeading(label string, t time.Time, loc *time.Location) string {
	return label + ", " + t.In(loc).Format(dayLayout)
}

// dayHeadingOf is the heading of t's day in loc among other days: "Today,
// Mon 23 Mar", "Tomorrow, Tue 24 Mar", "Wed 25 Mar".
func dayHeadingOf(t, now time.Time, loc *time.Location) string {
	if l := dayLabel(t, now, loc); l == "Today" || l == "Tomorrow" {
		return dayHeading(l, t, loc)
	}
	return t.In(loc).Format(dayLayout)
}

// dayName is the day of t in loc as a sentence says it, where now is:
// "today", "tomorrow", "yesterday", or "Thu 26 Mar". Slack's date tokens
// say the day as "Tomorrow" and "Mar 26, 2026": a sentence that names a
// day names it in these words, and its time as a {time} token.
func dayName(t, now time.Time, loc *time.Location) string {
	d, n := t.In(loc), now.In(loc)
	today := time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	switch {
	case !d.Before(today.AddDate(0, 0, -1)) && d.Before(today):
		return "yesterday"
	case !d.Before(today) && d.Before(today.AddDate(0, 0, 1)):
		return "today"
	case !d.Before(today.AddDate(0, 0, 1)) && d.Before(today.AddDate(0, 0, 2)):
		return "tomorrow"
	}
	return d.Format(dayLayout)
}

// at is a moment as a sentence says it: "tomorrow at 09:00", "Thu 26 Mar
// at 09:00" (with on: "on Thu 26 Mar at 09:00"), the time a token.
func at(t, now time.Time, loc *time.Location, on bool) string {
	d := dayName(t, now, loc)
	if on && d[0] >= 'A' && d[0] <= 'Z' {
		d = "on " + d
	}
	return d + " at " + dateTokenAs(t, "{time}", t.In(loc).Format(timeLayout+" MST"))
}

// atPlain is at in bookbot's own formatting, for a notification: "tomorrow
// at 09:00 CET", "on Thu 26 Mar at 09:00 CET".
func atPlain(t, now time.Time, loc *time.Location) string {
	d := dayName(t, now, loc)
	if d[0] >= 'A' && d[0] <= 'Z' {
		d = "on " + d
	}
	return d + " at " + t.In(loc).Format(timeLayout+" MST")
}

// spanAt is a booking's time as a sentence says it: "tomorrow,
// 09:00–09:30", its start's day in words, its times tokens.
func spanAt(start, end, now time.Time, loc *time.Location) string {
	return dayName(start, now, loc) + ", " + hours(start, end, loc)
}

// dayLabel names the day of t in loc as a person says it: Today,
// Tomorrow, or the date.
func dayLabel(t, now time.Time, loc *time.Location) string {
	d, n := t.In(loc), now.In(loc)
	today := time.Date(n.Year(), n.Month(), n.Day(), 0, 0, 0, 0, loc)
	switch {
	case d.Before(today):
	case d.Before(today.AddDate(0, 0, 1)):
		return "Today"
	case d.Before(today.AddDate(0, 0, 2)):
		return "Tomorrow"
	}
	return d.Format(dayLayout)
}

// Buttons that more than one flow's messages show.

// cancelButton cancels a booking, after Slack's own dialog has asked. It is
// neutral: the loudest thing beside a booking must not be what undoes it;
// the dialog is where the danger is said.
func cancelButton(id string) *slack.ButtonBlockElement {
	btn := button(actionCancel, "Cancel…", id)
	btn.Confirm = slack.NewConfirmationBlockObject(
		plain("Cancel this booking?"),
		mrkdwn("The attendees may be notified of the cancellation. Grouped or series bookings may be cancelled together with it. This cannot be undone."),
		plain("Cancel booking"),
		plain("Keep it"),
	)
	btn.Confirm.WithStyle(slack.StyleDanger)
	return btn
}

// cancelMenu is a booking card's "⋯" menu, whose one item cancels it after
// Slack's own dialog has asked: on a reminder or right after "Booked.",
// undoing the booking is not a button beside the next step.
func cancelMenu(id string) slack.BlockElement {
	if utf8.RuneCountInString(id) > 150 {
		return cancelButton(id) // an option's value holds at most 150
	}
	menu := slack.NewOverflowBlockElement(actionCancel, slack.NewOptionBlockObject(id, plain("Cancel…"), nil))
	menu.Confirm = cancelButton(id).Confirm
	return menu
}

// parts is what a line says of a booking's event and attendee, and of
// more (an email), each escaped, "" where the record has none: "—" for
// an event or a name missing, nothing for a missing email, and for an
// older record with neither event nor attendee, so in words.
func parts(title, name string, more ...string) string {
	if title == "" && name == "" {
		return "_no event or attendee on record_"
	}
	s := orMissing(title) + " · " + orMissing(name)
	for _, m := range more {
		if m != "" {
			s += " · " + m
		}
	}
	return s
}

// settingsButton opens the settings modal.
func settingsButton() *slack.ButtonBlockElement {
	return button(actionPersonalSettings, "Change…", "")
}

// connectButton opens the connect form.
func connectButton(text string) *slack.ButtonBlockElement {
	return button(actionConnect, text, "").WithStyle(slack.StylePrimary)
}

// reviewButton marks a journal entry checked.
func reviewButton(seq uint64) *slack.ButtonBlockElement {
	return button(actionReviewed, "Mark as checked", strconv.FormatUint(seq, 10)).WithStyle(slack.StylePrimary)
}

// findType is the event type slug names, among types.
func findType(types []booking.EventType, slug string) (booking.EventType, bool) {
	for _, et := range types {
		if et.Slug == slug {
			return et, true
		}
	}
	return booking.EventType{}, false
}

// kindText is an event type's scheduling kind in words, as data.
func kindText(k booking.Kind) string { return escape(strings.ReplaceAll(string(k), "_", " ")) }

// Free slots by day, as the slots message and the booking form offer them.

// daySlots are the free slots of one day in a zone.
type daySlots struct {
	key   string // YYYY-MM-DD in the zone
	label string // "Mon 23 Nov"
	slots []booking.Slot
}

func (d daySlots) start() time.Time { return d.slots[0].Start }

func (d daySlots) end() time.Time { return d.slots[len(d.slots)-1].End }

// zones are the zone abbreviations the day's slots are in: one, or two on
// a day the clocks change.
func (d daySlots) zones(loc *time.Location) []string {
	times := make([]time.Time, 0, 2*len(d.slots))
	for _, s := range d.slots {
		times = append(times, s.Start, s.End)
	}
	return zonesOf(loc, times...)
}

// zoneNote is what a day says of its zone abbreviations: nothing when it
// is all in base, else "CEST", or "CET, then CEST" on the day of a change.
func zoneNote(zones []string, base string) string {
	if len(zones) == 1 && zones[0] == base {
		return ""
	}
	return strings.Join(zones, ", then ")
}

// clock is a time of day in loc, with its zone abbreviation when withZone.
func clock(t time.Time, loc *time.Location, withZone bool) string {
	if withZone {
		return t.In(loc).Format(timeLayout + " MST")
	}
	return t.In(loc).Format(timeLayout)
}

// slotLabel is a slot's start and end in loc, for a select's option. On a
// day the clocks change the abbreviation is given, after both ends when
// the slot spans the change: the same clock time can come twice.
func slotLabel(s booking.Slot, loc *time.Location, withZone bool) string {
	a, b := s.Start.In(loc), s.End.In(loc)
	if withZone && a.Format("MST") != b.Format("MST") {
		return clock(a, loc, true) + "–" + clock(b, loc, true)
	}
	return clock(a, loc, false) + "–" + clock(b, loc, withZone)
}

func groupByDay(slots []booking.Slot, loc *time.Location, now time.Time) []daySlots {
	var days []daySlots
	for _, s := range slots {
		t := s.Start.In(loc)
		key := t.Format("2006-01-02")
		if len(days) == 0 || days[len(days)-1].key != key {
			days = append(days, daySlots{key: key, label: dayHeadingOf(t, now, loc)})
		}
		days[len(days)-1].slots = append(days[len(days)-1].slots, s)
	}
	return days
}

// A day's bookings, as today and the agenda list them.

// listPageSize keeps a page of the upcoming bookings list well inside 50
// blocks.
const listPageSize = 15

// dayRows is the most bookings today and the agenda show, the day's
// first: a phone shows them without scrolling far. The upcoming bookings
// list has the rest, a page further on.
const dayRows = listPageSize

// dayBlocks are day, the bookings of d in loc, under a header, one line
// each, at most dayRows of them and within a message's limits, then how
// many more there are with the list page they start on; empty is said
// when there are none, note (mrkdwn) under the count, and that there may
// be more when the list was full and the day may go on past its last
// booking. day is the day's upcoming bookings, the first of the upcoming
// list: the day is today.
func dayBlocks(header string, d personal.Date, day []booking.Booking, types []booking.EventType, loc *time.Location, empty, note string, incomplete bool) []slack.Block {
	blocks := []slack.Block{slack.NewHeaderBlock(plain(header))}
	zone := zoneName(loc, time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, loc), time.Date(d.Year, d.Month, d.Day+1, 0, 0, 0, 0, loc))
	count := "Times in " + zone + "."
	if len(day) > 0 {
		count = "*" + plural(len(day), "booking") + "* · times in " + zone + "."
	}
	blocks = append(blocks, contextLine(count))
	if note != "" {
		blocks = append(blocks, contextLine(note))
	}
	perhaps := fmt.Sprintf("the booking service shows bookbot only the next %d bookings", booking.MaxListed)
	actions := []slack.BlockElement{button(actionShowList, "Upcoming bookings", "")}
	if len(day) == 0 {
		blocks = append(blocks, section(empty))
	} else {
		lines, _ := dayLines(day[:min(len(day), dayRows)], types, loc, maxMessageText-1500)
		for _, s := range splitLines("", lines, 3000) {
			blocks = append(blocks, section(s))
		}
		if more := len(day) - len(lines); more > 0 {
			last := day[len(day)-1]
			text := fmt.Sprintf("*%d more*, the last at %s.", more, dateTokenAs(last.Start, "{time}", last.Start.In(loc).Format(timeLayout+" MST")))
			if incomplete {
				text = fmt.Sprintf("*%d more*, the last at %s, and perhaps others after them: %s.", more, dateTokenAs(last.Start, "{time}", last.Start.In(loc).Format(timeLayout+" MST")), perhaps)
				incomplete = false
			}
			blocks = append(blocks, contextLine(text))
			// The list's pages start with the day's bookings: its rows
			// after the first page's are the rest.
			actions = append([]slack.BlockElement{button(actionListFrom, "Show the rest", strconv.Itoa(len(lines)/listPageSize))}, actions...)
		}
	}
	if incomplete {
		blocks = append(blocks, contextLine(":warning: The day goes on past the last of these, and there may be more: "+perhaps+"."))
	}
	return append(blocks, slack.NewActionBlock("day_actions", actions...))
}

// minParts is the least a line of dayLines keeps of a booking's event and
// attendee, in bytes of mrkdwn.
const minParts = 60

// dayLines are a day's bookings, one line each under a heading that names
// the day: time, event and attendee. Together they keep to avail bytes:
// the event and attendee are cut to share what the times leave (keeping
// at least minParts); bookings past what fits are counted in more.
func dayLines(day []booking.Booking, types []booking.EventType, loc *time.Location, avail int) (lines []string, more int) {
	used := 0
	for i, bk := range day {
		fixed := hours(bk.Start, bk.End, loc) + "  " + " · "
		budget := max(avail/len(day)-len(fixed), minParts)
		title := orMissing(short(titleOf(bk.EventType, types)))
		title = cut(title, max(budget/2, budget-len(orMissing(short(bk.BookerName.String)))))
		name := cut(orMissing(short(bk.BookerName.String)), budget-len(title))
		line := fmt.Sprintf("%s  %s · %s", hours(bk.Start, bk.End, loc), title, name)
		if !bk.EventType.Valid && bk.BookerName.String == "" {
			line = fmt.Sprintf("%s  %s", hours(bk.Start, bk.End, loc), parts("", ""))
		}
		if used+len(line)+1 > avail {
			return lines, len(day) - i
		}
		used += len(line) + 1
		lines = append(lines, line)
	}
	return lines, 0
}
