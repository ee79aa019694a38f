package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/offer"
)

// What the flows that make, book and settle offers share: offer.go (the
// command, and the card's buttons and form), compose.go, links.go and
// steps.go (offers made without the command), offercancel.go and
// offerleft.go (what was booked from them, cancelled or left unsettled).
// Here are making an offer, the calendar it books on, its card as it is
// shown and shown again, and what whoever books from it is told.

// Offer cards show at most this many times, at most offerPerDay a day.
const (
	offerTimes    = 5
	offerPerDay   = 2
	maxOfferN     = 10 // meetings one offer may book
	maxOfferNamed = 20 // people one offer may name
)

// DefaultOfferTTL is how long an offer can be booked from when
// Config.OfferTTL is not set (OFFER_TTL).
const DefaultOfferTTL = 7 * 24 * time.Hour

// offerArgs are the arguments of `offer` as typed.
type offerArgs struct {
	event string
	named []string // Slack user IDs
	n     int
}

// makeOffer makes user's offer of args on their calendar and keeps it,
// and returns it with its card, ready to post; or, when it cannot be
// made, why, for user alone. name is theirs when Slack's profile has
// none.
func (b *Bot) makeOffer(ctx context.Context, user, name string, args offerArgs) (offer.Offer, message, *message) {
	fail := func(m message) (offer.Offer, message, *message) { return offer.Offer{}, message{}, &m }
	retry := button(actionShowTypes, "Event types", "")
	cal, err := b.calendarFor(ctx, user)
	if err != nil {
		return fail(b.failed("The offer could not be made", err, retry))
	}
	types, err := cal.EventTypes(ctx)
	if err != nil {
		return fail(b.failed("The offer could not be made: the event types could not be loaded", err, retry))
	}
	et, ok := findType(types, args.event)
	switch {
	case !ok:
		return fail(helpMessage(b.cfg.Command, fmt.Sprintf("There is no event type %s. `%s types` lists them.", escape(strconv.Quote(args.event)), escape(b.cfg.Command))))
	case !et.Bookable():
		return fail(message{Text: short(et.Title) + " cannot be offered: it is booked through the public booking page.", Blocks: []slack.Block{
			section(fmt.Sprintf("*%s* is a %s event, which bookbot cannot book; offer it through %s.", short(et.Title), kindText(et.SchedulingKind), publicPage(b.cfg.BookingPage))),
			slack.NewActionBlock("offer_actions", retry),
		}})
	}
	slots, err := cal.Slots(ctx, et.Slug)
	if err != nil {
		return fail(b.failed("The offer could not be made: the free slots could not be loaded", err, button(actionShowSlots, "Free slots", et.Slug)))
	}
	now, zone := b.cfg.Now(), b.users.zone(ctx, user)
	if len(pickTimes(slots, nil, zone, now)) == 0 {
		return fail(message{Text: "Nothing to offer: " + short(et.Title) + " has no free slots in the next 14 days.", Blocks: []slack.Block{
			section(fmt.Sprintf("Nothing was posted: *%s* has no free slots in the next 14 days. Another event type may have some.", short(et.Title))),
			slack.NewActionBlock("offer_actions", retry),
		}})
	}
	o := offer.Offer{
		ID: offer.NewID(), Offerer: user, Calendar: cal.calendarID(), Name: b.displayName(ctx, user, name), For: args.named, Max: args.n,
		Event: et.Slug, Title: et.Title, Minutes: et.DurationMinutes,
		Created: now, Expires: now.Add(b.offerTTL()),
	}
	if err := b.cfg.Offers.Create(ctx, o); err != nil {
		return fail(b.failed("The offer could not be made: bookbot could not keep it", err, retry))
	}
	// Offers long expired are of no use to anyone: they go as new ones come.
	if err := b.cfg.Offers.Prune(ctx, now.Add(-offerKeep)); err != nil {
		b.log.Warn("old offers could not be pruned", "err", err)
	}
	return o, offerCard(o, slots, zone, now), nil
}

// offerKeep is how long an expired offer is kept, so a late click on its
// card is told it expired rather than that it is unknown.
const offerKeep = 30 * 24 * time.Hour

// offerTTL is how long an offer can be booked from.
func (b *Bot) offerTTL() time.Duration {
	if b.cfg.OfferTTL > 0 {
		return b.cfg.OfferTTL
	}
	return DefaultOfferTTL
}

// offerMeta travels in the offer's modals' private_metadata, signed: which
// offer and time, where the card is (its response_url, to update it), and
// the clicker's zone.
type offerMeta struct {
	Offer string `json:"o"`
	Start string `json:"s,omitempty"`
	Card  string `json:"u,omitempty"`
	Zone  string `json:"z,omitempty"`
}

func (m offerMeta) encode() string { b, _ := json.Marshal(m); return string(b) }

// offerValue is what a time's button carries: the offer and the slot's
// start exactly as the API sent it.
func offerValue(id, rawStart string) string { return id + " " + rawStart }

// parseOfferValue reads what offerValue made.
func parseOfferValue(v string) (id, rawStart string, ok bool) {
	id, rawStart, ok = strings.Cut(v, " ")
	return id, rawStart, ok && id != "" && rawStart != ""
}

// showCard shows m in place of o's card, for everyone who sees it: with
// chat.unfurl for a link's card, with chat.update for one bookbot posted,
// else through responseURL, a click's on the card ("": not at all).
func (b *Bot) showCard(ctx context.Context, o offer.Offer, responseURL string, m message) {
	m = b.mark(m)
	var err error
	switch {
	case o.Link != "":
		err = b.unfurl(ctx, o.Channel, o.TS, map[string]message{o.Link: m})
	case o.TS != "":
		err = b.update(ctx, o.Channel, o.TS, m)
	case responseURL != "":
		msg := &slack.WebhookMessage{ResponseType: slack.ResponseTypeInChannel, ReplaceOriginal: true, Text: m.Text, Blocks: &slack.Blocks{BlockSet: m.Blocks}}
		err = b.postResponse(ctx, responseURL, msg, m.Metadata)
	default:
		return
	}
	if err != nil {
		b.log.Warn("offer card not updated", "offer", o.ID, "err", slackErr(err))
	}
}

// cardView is an offer's card as it is to be shown.
type cardView struct {
	o offer.Offer
	m message
}

// calendarSlots are the free slots of the offer's event on the offerer's
// calendar.
func (b *Bot) calendarSlots(ctx context.Context, o offer.Offer) ([]booking.Slot, error) {
	cal, err := b.offerCalendar(ctx, o)
	if err != nil {
		return nil, err
	}
	return cal.Slots(ctx, o.Event)
}

// turnedAway says, when err means o's calendar cannot be booked on now,
// why to user, who is booking from it; the offerer is told too, once an
// offer, when it is theirs to fix. ok is false for any other error.
func (b *Bot) turnedAway(ctx context.Context, o offer.Offer, user string, err error) (m message, ok bool) {
	m, tell, ok := offerCalendarMessage(o, err)
	if !ok {
		return message{}, false
	}
	b.log.Info("offer turned someone away: its calendar cannot be booked on", "offer", o.ID, "user", user, "err", err)
	if tell && o.Offerer != "" {
		switch _, werr := b.cfg.Offers.Update(ctx, o.ID, offer.Warn(b.cfg.Now())); {
		case werr == nil:
			b.dm(ctx, o.Offerer, offerCalendarDM(o, user, err))
		case !errors.Is(werr, offer.ErrWarned):
			b.log.Warn("an offerer could not be told their calendar turned someone away", "offer", o.ID, "err", werr)
		}
	}
	return m, true
}

// offerCalendarMessage is offerCalendarWords as a message.
func offerCalendarMessage(o offer.Offer, err error) (m message, tell, ok bool) {
	text, tell, ok := offerCalendarWords(o, err)
	return message{Text: text, Blocks: []slack.Block{section(":lock: " + text)}}, tell, ok
}

// offerCalendarWords says, in the words of someone booking from o, why
// its offerer's calendar cannot be booked on now (err), ending with whom
// to ask; tell says its offerer must act, and is to be told. ok is false
// when err is not about that calendar.
func offerCalendarWords(o offer.Offer, err error) (text string, tell, ok bool) {
	nc, isNC := errors.AsType[*NoCalendarError](err)
	ask := offerer(o)
	switch {
	case isNC && nc.Reconnect:
		return fmt.Sprintf("This offer cannot be booked now: the booking service refused the key of %s's calendar, which needs connecting again. Nothing was sent. %s has been told: ask them for a new offer.", short(o.Name), ask), true, true
	case isNC && nc.Unopened, errors.Is(err, errNoSecretKey):
		return fmt.Sprintf("This offer cannot be booked now: bookbot cannot open the key of %s's calendar. Nothing was sent. %s has been told: ask them when it can be booked.", short(o.Name), ask), true, true
	case isNC, errors.Is(err, errOfferCalendarGone):
		return fmt.Sprintf("This offer was made on a calendar that is no longer connected, so it cannot be booked. Nothing was sent. Ask %s for a new offer.", ask), false, true
	case errors.Is(err, booking.ErrUnauthorized):
		return fmt.Sprintf("This offer cannot be booked now: the booking service refused its calendar's key. Nothing was sent. Ask %s.", ask), false, true
	}
	return "", false, false
}

// offerCalendarDM tells an offerer that user was turned away from o
// because of err, their calendar's problem, and what to do.
func offerCalendarDM(o offer.Offer, user string, err error) message {
	nc, _ := errors.AsType[*NoCalendarError](err)
	why := "the booking service refused your calendar's key (revoked or rotated), so bookbot stopped using it and the offer cannot be booked. Connect your calendar again, then post a new offer."
	switch {
	case nc != nil && nc.Unopened:
		why = "bookbot cannot open your calendar's key: the operator's secret key changed. Ask the operator to fix it, and the offer can be booked again; or connect your calendar again and post a new offer."
	case errors.Is(err, errNoSecretKey):
		why = "bookbot cannot open your calendar's key: the operator has not set BOOKBOT_SECRET_KEY. Ask the operator to set it."
	}
	text := fmt.Sprintf("%s tried to book your offer of *%s*, and nothing was sent: %s", mention(user), short(o.Title), escape(why))
	return message{
		Text: fmt.Sprintf("%s tried to book your offer of %s, and nothing was sent: %s", mention(user), short(o.Title), escape(why)),
		Blocks: []slack.Block{
			section(":warning: " + text),
			slack.NewActionBlock("offer_calendar_actions", connectButton("Connect again")),
		},
	}
}

// freshCard is the offer's card with the times still free, or nil when
// they cannot be read.
func (b *Bot) freshCard(ctx context.Context, id string) *cardView {
	o, err := b.cfg.Offers.Get(ctx, id)
	if err != nil {
		return nil
	}
	slots, err := b.calendarSlots(ctx, o)
	if err != nil {
		return nil
	}
	return &cardView{o, offerCard(o, withoutTaken(slots, o), b.offererZone(ctx, o), b.cfg.Now())}
}

var errOfferCalendarGone error = said("this offer was made on a calendar that is no longer connected, so nothing was booked; ask its offerer for a new one")

// offerCalendar is the calendar o books on: the one it was made on, or
// errOfferCalendarGone when its offerer has connected or disconnected a
// calendar since.
func (b *Bot) offerCalendar(ctx context.Context, o offer.Offer) (*calendar, error) {
	if o.Offerer == "" {
		if b.booking == nil {
			return nil, errOfferCalendarGone
		}
		return b.cals.owner(b.booking), nil
	}
	cal, err := b.calendarFor(ctx, o.Offerer)
	if err == nil && o.Calendar != "" && cal.calendarID() != o.Calendar {
		return nil, errOfferCalendarGone
	}
	return cal, err
}

// withoutTaken are the slots an offer has not booked yet.
func withoutTaken(slots []booking.Slot, o offer.Offer) []booking.Slot {
	return slices.DeleteFunc(slices.Clone(slots), func(s booking.Slot) bool {
		return slices.ContainsFunc(o.Uses, func(u offer.Use) bool { return u.Start == s.RawStart() })
	})
}

// pickTimes are the times a card offers: the soonest free slots, at most
// offerPerDay on a day in loc, at most offerTimes, none the offer took.
func pickTimes(slots []booking.Slot, taken []offer.Use, loc *time.Location, now time.Time) []booking.Slot {
	var out []booking.Slot
	perDay := map[string]int{}
	for _, s := range slots {
		if !s.Start.After(now) || slices.ContainsFunc(taken, func(u offer.Use) bool { return u.Start == s.RawStart() }) {
			continue
		}
		day := s.Start.In(loc).Format("2006-01-02")
		if perDay[day] == offerPerDay {
			continue
		}
		perDay[day]++
		out = append(out, s)
		if len(out) == offerTimes {
			break
		}
	}
	return out
}

// offerHead is what the card offers, as mrkdwn.
func offerHead(o offer.Offer) string {
	if o.Offerer == "" || o.Link != "" {
		return fmt.Sprintf("*%s* · %d minutes%s", short(o.Title), o.Minutes, withHost(o, true))
	}
	return fmt.Sprintf("*%s* offers a %d-minute *%s*", short(o.Name), o.Minutes, short(o.Title))
}

// Whom an offer is with, in its messages: its offerer, or for an offer
// nobody made (a link to the owner's page, a workflow step), the
// calendar's owner.

// offerer is whom someone booking from o asks about it, as mrkdwn: its
// offerer, or for an offer nobody made, its contact, else the calendar's
// owner.
func offerer(o offer.Offer) string {
	switch {
	case o.Offerer != "":
		return mention(o.Offerer)
	case o.Contact != "":
		return mention(o.Contact)
	}
	return "the calendar's owner"
}

// withHost is " with Name" (bold as mrkdwn) for an offer someone made,
// "" for one nobody made.
func withHost(o offer.Offer, bold bool) string {
	switch {
	case o.Offerer == "" || o.Name == "":
		return ""
	case bold:
		return " with *" + short(o.Name) + "*"
	}
	return " with " + short(o.Name)
}

// hostName is the offerer's name as text (unescaped, for text escaped
// later), or "the calendar's owner".
func hostName(o offer.Offer) string {
	if o.Offerer == "" || o.Name == "" {
		return "the calendar's owner"
	}
	return o.Name
}

// whose is "Ada Lovelace's offer", or "the offer" for one nobody made.
func whose(o offer.Offer) string {
	if o.Offerer == "" || o.Name == "" {
		return "the offer"
	}
	return short(o.Name) + "'s offer"
}

// offererZone is the zone the offer's card spreads its times over days
// in: its offerer's, or for one on the owner's calendar, the digest's.
func (b *Bot) offererZone(ctx context.Context, o offer.Offer) *time.Location {
	if o.Offerer == "" {
		return b.cfg.DigestZone
	}
	return b.users.zone(ctx, o.Offerer)
}

// maxText is the most characters Slack takes in a block's text.
const maxText = 3000

// withBooked is prefix and a line for each of booked, made from o, joined
// by sep, within maxText characters: lines too long for it are written
// with the names in them clipped shorter, and at the last the lines that
// still do not fit are counted instead (mrkdwn would cut a token or a
// mention in two).
func withBooked(prefix, sep string, o offer.Offer, booked []offer.Use, loc *time.Location) string {
	room := maxText - utf8.RuneCountInString(prefix)
	var lines []string
	for _, n := range []int{maxNameRunes, 40, 16, 8} {
		lines = bookedLines(o, booked, loc, n)
		if text := strings.Join(lines, sep); utf8.RuneCountInString(text) <= room {
			return prefix + text
		}
	}
	for k := len(lines) - 1; k > 0; k-- {
		if text := strings.Join(lines[:k], sep) + fmt.Sprintf("%sand %d more", sep, len(lines)-k); utf8.RuneCountInString(text) <= room {
			return prefix + text
		}
	}
	return prefix + plural(len(lines), "booking")
}

// bookedLines are a line for each of booked, its names clipped to n
// characters. The bookings' IDs are in the card's metadata.
func bookedLines(o offer.Offer, booked []offer.Use, loc *time.Location, n int) []string {
	out := make([]string, len(booked))
	for i, u := range booked {
		start, _ := time.Parse(time.RFC3339Nano, u.Start)
		out[i] = fmt.Sprintf("%s, %s, with %s (booked by %s)", escape(clip(o.Title, n)), span(start, u.End, loc), escape(clip(u.Name, n)), mention(u.By))
	}
	return out
}

// offerCard is the card in the conversation: open, with its times
// (from slots, in loc for spreading them over days) and buttons; or,
// once booked, withdrawn or expired, what happened, without buttons.
func offerCard(o offer.Offer, slots []booking.Slot, loc *time.Location, now time.Time) message {
	booked := o.Booked()
	lines := func(prefix, sep string) string { return withBooked(prefix, sep, o, booked, loc) }
	closed := o.Open(now)
	switch {
	case errors.Is(closed, offer.ErrUsedUp) && len(booked) == o.Max:
		text := lines(":white_check_mark: *Booked:* ", "\n")
		if len(booked) > 1 {
			text = lines(":white_check_mark: *Booked:*\n", "\n")
		}
		first := booked[0]
		start, _ := time.Parse(time.RFC3339Nano, first.Start)
		fallback := fmt.Sprintf("Booked: %s, %s, with %s (booked by %s)", short(o.Title), start.In(loc).Format(momentLayout), short(first.Name), mention(first.By))
		if len(booked) > 1 {
			fallback = fmt.Sprintf("Booked: %s, %s from %s", plural(len(booked), "meeting"), short(o.Title), whose(o))
		}
		from := ""
		if o.Offerer != "" {
			from = "From " + whose(o) + ". "
		}
		return message{Text: fallback, Metadata: offerCardMeta(o, booked), Blocks: []slack.Block{section(text), contextLine(from + "Anything else about this meeting: ask " + offerer(o) + ".")}}
	case errors.Is(closed, offer.ErrUsedUp):
		text := fmt.Sprintf(":hourglass_flowing_sand: *Being booked:* %s of *%s* is taken; the booking is being made or checked.", whose(o), short(o.Title))
		if len(booked) > 0 {
			text = lines(text+"\n", "\n")
		}
		return message{Text: "Being booked: " + whose(o) + " of " + short(o.Title), Blocks: []slack.Block{section(text), contextLine("Ask " + offerer(o) + " for another time.")}, Metadata: offerCardMeta(o, booked)}
	case errors.Is(closed, offer.ErrWithdrawn):
		text := fmt.Sprintf(":no_entry_sign: *Withdrawn:* %s withdrew this offer of *%s*.", mention(o.Offerer), short(o.Title))
		if o.Offerer == "" {
			text = fmt.Sprintf(":no_entry_sign: *Withdrawn:* this offer of *%s* can no longer be booked.", short(o.Title))
		}
		if len(booked) > 0 {
			text = lines(text+" Booked from it:\n", "\n")
		}
		return message{Text: "Withdrawn: " + whose(o) + " of " + short(o.Title), Blocks: []slack.Block{section(text), contextLine("Ask " + offerer(o) + " for another time.")}, Metadata: offerCardMeta(o, booked)}
	case errors.Is(closed, offer.ErrExpired):
		text := fmt.Sprintf(":hourglass: *Expired:* this offer of *%s* could be booked until %s.", short(o.Title), moment(o.Expires, loc))
		if len(booked) > 0 {
			text = lines(text+" Booked from it:\n", "\n")
		}
		next := "Ask " + offerer(o) + " for a new one."
		if o.Link != "" {
			next = "Book on " + pageLink(o.Link, "the booking page") + ", or post the link again for a new card."
		}
		return message{Text: "Expired: " + whose(o) + " of " + short(o.Title), Blocks: []slack.Block{section(text), contextLine(next)}, Metadata: offerCardMeta(o, booked)}
	}

	head := offerHead(o) + " — pick a time"
	if who := mentions(o.For); who != "" {
		head = offerHead(o) + " for " + who + " — pick a time"
	}
	blocks := []slack.Block{section(":calendar: " + head)}
	times := pickTimes(slots, o.Uses, loc, now)
	for _, s := range times {
		blocks = append(blocks, slack.NewSectionBlock(mrkdwn(span(s.Start, s.End, loc)), nil,
			slack.NewAccessory(button(actionOfferSlot, "Book this time", offerValue(o.ID, s.RawStart())))))
	}
	if len(times) == 0 {
		blocks = append(blocks, section("No free times are left in the next 14 days."))
	}
	if len(booked) > 0 {
		blocks = append(blocks, contextLine(lines("Booked so far: ", "; ")))
	}
	left := "one meeting"
	if o.Left() > 1 {
		left = strconv.Itoa(o.Left()) + " meetings"
	}
	rules := fmt.Sprintf("Times show in your own time zone. Books %s, until %s.", left, day(o.Expires, loc))
	if o.Link != "" {
		rules = fmt.Sprintf("Times show in your own time zone. Anyone here books one time for themselves, until %s; or book on %s.", day(o.Expires, loc), pageLink(o.Link, "the booking page"))
	}
	actions := []slack.BlockElement{button(actionOfferMore, "More times", o.ID)}
	if o.Offerer != "" {
		actions = append(actions, button(actionOfferWithdraw, "Withdraw", o.ID))
	}
	blocks = append(blocks, contextLine(rules), slack.NewActionBlock("offer_actions", actions...))
	text := "Offer: " + short(o.Name) + " offers a " + strconv.Itoa(o.Minutes) + "-minute " + short(o.Title) + ", pick a time"
	if o.Offerer == "" || o.Link != "" {
		text = "Offer: " + short(o.Title) + " (" + strconv.Itoa(o.Minutes) + " minutes" + withHost(o, false) + "), pick a time"
	}
	if who := mentions(o.For); who != "" {
		text += " (for " + who + ")"
	}
	return message{Text: text, Blocks: blocks, Metadata: offerCardMeta(o, booked)}
}

// offerOutcomeView shows what happened in the form; meta, signed as the
// form's was, lets its Try again open the form in its place.
func offerOutcomeView(m message, meta offerMeta) slack.ModalViewRequest {
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      callbackOfferBook,
		Title:           plain("Book a time"),
		Close:           plain("Done"),
		Blocks:          slack.Blocks{BlockSet: m.Blocks},
		PrivateMetadata: meta.encode(),
	}
}

func offerGoneMessage() message {
	text := "This offer is no longer open: nothing was sent. Ask whoever posted it for a new one."
	return message{Text: text, Blocks: []slack.Block{section(":grey_question: " + text)}}
}

// offerBookedMessage tells whoever booked from o what they booked, in
// their words and zone, and offers to cancel it.
func offerBookedMessage(o offer.Offer, bk booking.Booking, email string, zone *time.Location) message {
	text := fmt.Sprintf("*Booked:* %s%s, %s.\nThe invitation goes to %s.", short(o.Title), withHost(o, false), span(bk.Start, bk.End, zone), address(email))
	return message{
		Text: fmt.Sprintf("Booked: %s%s, %s", short(o.Title), withHost(o, false), bk.Start.In(zone).Format(momentLayout)),
		Blocks: []slack.Block{
			section(":white_check_mark: " + text),
			slack.NewActionBlock("offer_booked_actions", offerCancelButton(o.ID, bk.ID, "Cancel this booking…")),
		},
	}
}

// offerUseWhat names the meeting u booked from o, in loc where now is:
// its event, with (" with Name", or ""), and its time; plain is the same
// for a notification.
func offerUseWhat(o offer.Offer, u offer.Use, with string, loc *time.Location, now time.Time) (what, plain string) {
	what = short(o.Title) + with
	plain = what
	if start, err := time.Parse(time.RFC3339Nano, u.Start); err == nil {
		end := u.End
		if end.IsZero() {
			end = start.Add(time.Duration(o.Minutes) * time.Minute)
		}
		what += ", " + spanAt(start, end, now, loc)
		plain += " " + atPlain(start, now, loc)
	}
	return what, plain
}

// bookedAlreadyMessage tells whoever booked u's time from o, in loc where
// now is, that it was booked before for the address they gave, by someone
// else or outside bookbot, so it was not booked again: which booking that
// is, and when it is now (its attendee may have moved it), is not theirs
// to know.
func bookedAlreadyMessage(o offer.Offer, u offer.Use, loc *time.Location, now time.Time) message {
	what, plain := offerUseWhat(o, u, withHost(o, false), loc, now)
	return message{
		Text:   "Not booked: " + plain + " was already booked for that email address before.",
		Blocks: []slack.Block{section(":x: *Not booked:* " + what + " was already booked for that email address before, so it was not booked again. Ask " + offerer(o) + " about it.")},
	}
}

// offerBookedDM tells the offerer a time was booked from their offer.
func offerBookedDM(o offer.Offer, bk booking.Booking, by, name, email string, loc *time.Location) message {
	text := fmt.Sprintf(":white_check_mark: *Booked from your offer:* %s, %s, with %s (%s), booked by %s.", short(o.Title), span(bk.Start, bk.End, loc), short(name), address(email), mention(by))
	return message{
		Text: fmt.Sprintf("Booked from your offer: %s, %s, with %s", short(o.Title), bk.Start.In(loc).Format(momentLayout), short(name)),
		Blocks: []slack.Block{
			section(text),
			slack.NewActionBlock("offer_booked_actions", upcomingButton(), cancelButton(bk.ID)),
		},
	}
}

// offerCancelValue is what a guest's Cancel carries: the offer and the
// booking their use of it made.
func offerCancelValue(offerID, bookingID string) string { return offerID + " " + bookingID }

// offerCancelButton cancels the booking a guest made from an offer, after
// Slack's own dialog has asked, as every Cancel does.
func offerCancelButton(offerID, bookingID, label string) *slack.ButtonBlockElement {
	btn := button(actionOfferCancel, label, offerCancelValue(offerID, bookingID))
	btn.Confirm = cancelButton(bookingID).Confirm
	return btn
}

// offerLeftAfter is how long a time taken from an offer may stay
// unsettled before the sweep takes the process that took it for gone: the
// form's work (the free slots read, then the list before the create, the
// create and the list after it, each with its own bound) is long done by
// then. It is the bound replicas give each other's writes in flight.
const offerLeftAfter = 5 * time.Minute
