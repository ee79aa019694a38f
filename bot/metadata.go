package bot

import (
	"maps"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/notices"
	"github.com/bookbot/bookbot/offer"
)

// The event types of the message metadata that automation reads, as the
// contract names them: people read names and times, machines read the
// booking's ID here.
const (
	eventBookingNew       = "bookbot_booking_new"
	eventBookingCancelled = "bookbot_booking_cancelled"
	eventBookingMoved     = "bookbot_booking_moved"
	eventReminder         = "bookbot_reminder"
	eventOfferBooked      = "bookbot_offer_booked"
	// eventOffer is an offer's card with nothing booked from it, or
	// nothing any more: a card updated in place keeps no booking it lost.
	eventOffer = "bookbot_offer"
	// eventBookingChanges is a burst's list in its summary's thread: the
	// IDs of the bookings its lines tell of, by kind of change.
	eventBookingChanges = "bookbot_booking_changes"
)

// The event types by which SlackFinder finds a post again (see carried).
const (
	// noticeEvent is the metadata event type of a burst's summary, and of
	// every notice an earlier bookbot posted; a notice of one change has
	// its kind's (eventBookingNew, …). Either's payload's claims are the
	// IDs (notices.Key.ID) of the changes a message tells of.
	noticeEvent = "bookbot_notice"
	// digestEvent is the metadata event type of a digest's first message;
	// its payload's date (YYYY-MM-DD) is the day it is for.
	digestEvent = "bookbot_digest"
)

// bookingMeta is the metadata of a message about one booking: its ID, its
// start and end (RFC 3339, UTC) and, when the record has one, its event
// type's slug.
func bookingMeta(event string, b booking.Booking) *slack.SlackMetadata {
	p := map[string]any{
		"booking_id": b.ID,
		"start":      b.Start.UTC().Format(time.RFC3339),
		"end":        b.End.UTC().Format(time.RFC3339),
	}
	if b.EventType.Valid && b.EventType.String != "" {
		p["event_slug"] = b.EventType.String
	}
	return &slack.SlackMetadata{EventType: event, EventPayload: p}
}

// noticeMeta is the metadata of a notice of n: its kind's event type and
// its booking, and for a move, the time it had. A change that may be a
// move across the end of a full list instead (its text says both) carries
// "or_moved": true, so that automation tells it from a sure one as people
// do.
func noticeMeta(n notices.Notice) *slack.SlackMetadata {
	var m *slack.SlackMetadata
	switch n.Kind {
	case notices.Cancelled:
		m = bookingMeta(eventBookingCancelled, n.Booking)
	case notices.Moved:
		m = bookingMeta(eventBookingMoved, n.Booking)
		m.EventPayload["was_start"] = n.Was.Start.UTC().Format(time.RFC3339)
		m.EventPayload["was_end"] = n.Was.End.UTC().Format(time.RFC3339)
	default:
		m = bookingMeta(eventBookingNew, n.Booking)
	}
	if unsure(n) {
		m.EventPayload["or_moved"] = true
	}
	return m
}

// changesMeta is the metadata of a burst's list: the IDs its lines tell
// of, space-separated by kind ("new", "moved", "cancelled", and
// "new_or_moved", "cancelled_or_moved" for changes that may be a move
// across the end of a full list).
func changesMeta(ns []notices.Notice) *slack.SlackMetadata {
	ids := map[string][]string{}
	for _, n := range ns {
		k := kindWord(n.Kind)
		if unsure(n) {
			k += "_or_moved" // as noticeMeta's or_moved
		}
		ids[k] = append(ids[k], n.Booking.ID)
	}
	p := map[string]any{}
	for k, v := range ids {
		p[k] = strings.Join(v, " ")
	}
	return &slack.SlackMetadata{EventType: eventBookingChanges, EventPayload: p}
}

// kindWord is a kind of change as metadata names it.
func kindWord(k notices.Kind) string {
	switch k {
	case notices.Cancelled:
		return "cancelled"
	case notices.Moved:
		return "moved"
	}
	return "new"
}

// withClaims is m with the claims a notice's post carries added to its
// payload, by which SlackFinder finds the post again (see carried); m
// itself is not changed. A message without metadata gets noticeEvent's.
func withClaims(m *slack.SlackMetadata, claims []string) *slack.SlackMetadata {
	out := slack.SlackMetadata{EventType: noticeEvent, EventPayload: map[string]any{}}
	if m != nil {
		out.EventType, out.EventPayload = m.EventType, maps.Clone(m.EventPayload)
	}
	out.EventPayload["claims"] = strings.Join(claims, " ")
	return &out
}

// offerCardMeta is the metadata of an offer's card, which every post and
// update of it carries (chat.update keeps metadata it is not given): once
// booked, the first meeting booked from it (booking_id, start, end,
// event_slug, and who booked it), and, when the offer booked several, all
// their IDs; while none is booked, the offer's own (offer_id, event_slug).
func offerCardMeta(o offer.Offer, booked []offer.Use) *slack.SlackMetadata {
	if o.Link != "" {
		return nil // an unfurl's card: chat.unfurl takes no metadata
	}
	if len(booked) == 0 {
		return &slack.SlackMetadata{EventType: eventOffer, EventPayload: map[string]any{"offer_id": o.ID, "event_slug": o.Event}}
	}
	first := booked[0]
	start, _ := time.Parse(time.RFC3339Nano, first.Start)
	m := bookingMeta(eventOfferBooked, booking.Booking{ID: first.Booking, Start: start, End: first.End, EventType: booking.Some(o.Event)})
	m.EventPayload["offer_id"] = o.ID
	m.EventPayload["booked_by"] = first.By
	if len(booked) > 1 {
		ids := make([]string, len(booked))
		for i, u := range booked {
			ids[i] = u.Booking
		}
		m.EventPayload["booking_ids"] = strings.Join(ids, " ")
	}
	return m
}

// unsure reports whether n may be a move across the end of a full list:
// for a cancellation, when no cancel of bookbot's says otherwise.
func unsure(n notices.Notice) bool { return n.Unsure && (n.Kind == notices.New || n.By == nil) }
