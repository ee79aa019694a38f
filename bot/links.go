package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/offer"
)

// linkFlow is booking links: a link posted in Slack to an event type of a
// booking page bookbot knows (the owner's, BOOKING_PAGE_URL, or one a
// connected person gave) unfurls into a card of that event type's free
// times. The card is an offer that names nobody: whoever sees it books
// one time for themselves, as on the public page, through the offer's
// buttons and form (offer.go), one per person, at most linkMeetings in
// all, for OFFER_TTL. A link posted again is a new card: each message's
// link is one offer.
func linkFlow() flow {
	return flow{
		events: map[slackevents.EventsAPIType]func(*Bot, *jobs, slackevents.EventsAPIEvent){
			slackevents.LinkShared: (*Bot).linkShared,
		},
	}
}

// linkMeetings is how many meetings one link's card books, one a person:
// a public page books any number, but a card in a busy channel should not
// fill a calendar on its own.
const linkMeetings = 20

// maxUnfurls is how many links of one message bookbot unfurls, as Slack
// offers at most that many.
const maxUnfurls = 5

// sharedLinks is a link_shared event as Slack sends it: slack-go's
// LinkSharedEvent leaves out where it comes from (the composer, or a
// posted message) and its unfurl_id.
type sharedLinks struct {
	Channel   string `json:"channel"`
	User      string `json:"user"`
	MessageTS string `json:"message_ts"`
	UnfurlID  string `json:"unfurl_id"`
	Source    string `json:"source"`
	Links     []struct {
		Domain string `json:"domain"`
		URL    string `json:"url"`
	} `json:"links"`
}

// linkShared answers link_shared of a posted message. Links still in the
// composer are left alone: Slack sends them again once the message is
// posted, and a card is made for a message, not a draft.
func (b *Bot) linkShared(later *jobs, ev slackevents.EventsAPIEvent) {
	cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent)
	if !ok || cb.InnerEvent == nil {
		return
	}
	var ls sharedLinks
	if err := json.Unmarshal(*cb.InnerEvent, &ls); err != nil {
		b.log.Warn("link_shared not read", "err", err)
		return
	}
	if ls.Source == "composer" || ls.Channel == "COMPOSER" || ls.Channel == "" || ls.MessageTS == "" {
		b.log.Debug("links in the composer left alone until posted", "links", len(ls.Links))
		return
	}
	later.add("unfurl", func(ctx context.Context) { b.unfurlLinks(ctx, ls) })
}

// unfurlLinks unfurls the links of ls to event types of the booking pages
// bookbot knows; other links are left alone.
func (b *Bot) unfurlLinks(ctx context.Context, ls sharedLinks) {
	if b.cfg.Offers == nil {
		b.log.Warn("a booking link was not unfurled: offers have no state store")
		return
	}
	cards := map[string]message{}
	pages := b.bookingPages(ctx)
	for i, l := range ls.Links {
		if i == maxUnfurls {
			break
		}
		for _, p := range pages {
			slug, ok := slugOf(p.addr, l.URL)
			if !ok {
				continue
			}
			if m, ok := b.linkCard(ctx, ls, l.URL, p, slug); ok {
				cards[l.URL] = b.mark(m)
			}
			break
		}
	}
	if len(cards) == 0 {
		return
	}
	if err := b.unfurl(ctx, ls.Channel, ls.MessageTS, cards); err != nil {
		b.log.Warn("booking links not unfurled", "channel", ls.Channel, "err", slackErr(err))
		return
	}
	b.log.Info("booking links unfurled", "channel", ls.Channel, "links", len(cards))
}

// bookingPage is a booking page bookbot unfurls links to: the owner's
// (user ""), or a connected person's.
type bookingPage struct {
	addr string
	user string
}

// bookingPages are the pages links are matched against, the owner's first.
func (b *Bot) bookingPages(ctx context.Context) []bookingPage {
	var pages []bookingPage
	if b.cfg.BookingPage != "" && b.booking != nil {
		pages = append(pages, bookingPage{addr: b.cfg.BookingPage})
	}
	if b.cfg.Accounts == nil {
		return pages
	}
	all, err := b.cfg.Accounts.All(ctx)
	if err != nil {
		b.log.Warn("people's booking pages could not be read; only the owner's links unfurl", "err", err)
		return pages
	}
	for _, a := range all {
		if a.Page != "" && a.State == account.OK && b.cfg.Allowed(a.User) {
			pages = append(pages, bookingPage{addr: a.Page, user: a.User})
		}
	}
	return pages
}

// linkCard is the card of a link to event type slug on page p: an offer's
// card, made once for the link in its message, or a short card when the
// page has no such event type or bookbot cannot book it. ok is false when
// the link is left alone: its calendar or free times could not be read.
func (b *Bot) linkCard(ctx context.Context, ls sharedLinks, link string, p bookingPage, slug string) (message, bool) {
	var cal *calendar
	var err error
	name := ""
	if p.user == "" {
		cal = b.cals.owner(b.booking)
	} else {
		cal, err = b.calendarFor(ctx, p.user)
		name = b.displayName(ctx, p.user, "")
	}
	var types []booking.EventType
	if err == nil {
		types, err = cal.types.get(ctx)
	}
	if err != nil {
		b.log.Warn("a booking link was not unfurled: its calendar's event types could not be read", "err", err)
		return message{}, false
	}
	et, found := findType(types, slug)
	switch {
	case !found:
		return linkUnknownMessage(link), true
	case !et.Bookable():
		return linkNotBookableMessage(et, link), true
	}
	now := b.cfg.Now()
	o := offer.Offer{
		ID: offer.IDOf("link", ls.Channel, ls.MessageTS, link), Offerer: p.user, Calendar: cal.calendarID(), Name: name, Max: linkMeetings,
		Contact: b.cfg.Contact,
		Event:   et.Slug, Title: et.Title, Minutes: et.DurationMinutes, Created: now, Expires: now.Add(b.offerTTL()),
		Channel: ls.Channel, TS: ls.MessageTS, Link: link,
	}
	switch err := b.cfg.Offers.Create(ctx, o); {
	case errors.Is(err, offer.ErrExists):
		// Unfurled before (another replica, the same event again): the
		// card shows that offer as it is.
		if o, err = b.cfg.Offers.Get(ctx, o.ID); err != nil {
			b.log.Warn("a booking link's offer could not be read", "err", err)
			return message{}, false
		}
	case err != nil:
		b.log.Warn("a booking link was not unfurled: bookbot could not keep its offer", "err", err)
		return message{}, false
	default:
		b.log.Info("booking link offered", "offer", o.ID, "channel", ls.Channel, "event", et.Slug, "page_of", p.user)
		if err := b.cfg.Offers.Prune(ctx, now.Add(-offerKeep)); err != nil {
			b.log.Warn("old offers could not be pruned", "err", err)
		}
	}
	slots, err := b.calendarSlots(ctx, o)
	if err != nil {
		b.log.Warn("a booking link was not unfurled: its free slots could not be read", "offer", o.ID, "err", err)
		return message{}, false
	}
	return offerCard(o, slots, b.users.zone(ctx, ls.User), now), true
}

// The short cards of links bookbot cannot offer times of.

// linkUnknownMessage answers a link to an event type the page does not
// have (or no longer has).
func linkUnknownMessage(link string) message {
	text := "This booking link names no event type that can be booked: open " + pageLink(link, "the link") + " to see what the page offers."
	return message{Text: "No event type at this booking link.", Blocks: []slack.Block{section(":grey_question: " + text)}}
}

// linkNotBookableMessage answers a link to an event type the booking API
// cannot book (round robin, collective).
func linkNotBookableMessage(et booking.EventType, link string) message {
	text := fmt.Sprintf("*%s* is a %s event, which bookbot cannot book here: book it on %s.", short(et.Title), kindText(et.SchedulingKind), pageLink(link, "its booking page"))
	return message{Text: short(et.Title) + " is booked on its booking page.", Blocks: []slack.Block{section(":calendar: " + text)}}
}
