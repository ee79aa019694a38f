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
	actionKeep        = "cancel_keep"
	actionShowList    = "show_list"
	actionSlotsMore   = "slots_more"
	actionEditBooking = "edit_booking"
	actionSlotsBack   = "slots_back"
	actionHomeRefresh = "home_refresh"

	callbackBooking  = "booking_create" // contract
	callbackShortcut = "book_meeting"
)

const notRecorded = "not recorded"

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

// escaper is built once: a Replacer builds its tables on first use, which
// costs more than escaping a whole booking list.
var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

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

// when renders a time range in loc, always naming the day and the zone's
// abbreviation so it is never read in the wrong zone.
func when(start, end time.Time, loc *time.Location) string {
	s, e := start.In(loc), end.In(loc)
	out := s.Format(dayLayout+", "+timeLayout) + "–" + e.Format(timeLayout)
	if s.YearDay() != e.YearDay() || s.Year() != e.Year() {
		out = s.Format(dayLayout+", "+timeLayout) + " – " + e.Format(dayLayout+", "+timeLayout)
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

// publicPage names the owner's public booking page, as a link when its
// address is known.
func publicPage(addr string) string {
	if addr == "" {
		return "the public booking page"
	}
	return "<" + strings.NewReplacer("|", "%7C", ">", "%3E", "<", "%3C").Replace(addr) + "|the public booking page>"
}

// refusalMessage tells someone not on the allow-list so, and whom to ask.
func refusalMessage(userID, contact string) message {
	ask := "Ask the calendar's owner to add it."
	if contact != "" {
		ask = fmt.Sprintf("Ask <@%s> to add it.", escape(contact))
	}
	text := fmt.Sprintf("Sorry, bookbot is only open to the people the calendar owner has allowed, and your Slack ID (%s) is not on that list. %s", escape(userID), ask)
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

// errorMessage says what failed and what to do, in words; the error
// itself goes to the log (see Bot.failed).
func errorMessage(what string, err error) message {
	text := what + ". " + failureText(err)
	return message{Text: text, Blocks: []slack.Block{section(":warning: " + escape(text))}}
}

// dateToken shows t in each reader's own zone and clock setting.
func dateToken(t time.Time) string {
	return dateTokenAs(t, "{date_short_pretty} {time}", t.UTC().Format("2006-01-02 15:04 UTC"))
}

// dateTokenAs is a Slack date token in format; fallback is what a client
// that cannot show tokens shows instead.
func dateTokenAs(t time.Time, format, fallback string) string {
	return "<!date^" + strconv.FormatInt(t.Unix(), 10) + "^" + format + "|" + escape(fallback) + ">"
}
