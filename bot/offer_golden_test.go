package bot

import (
	"errors"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/offer"
)

// goldenOfferCases are the offer's card in each state, its modals, and
// what a clicker and the offerer are told.
func goldenOfferCases() []goldenCase {
	berlin, now := goldenBerlin, goldenNow
	open := offer.Offer{
		ID: "k33pbf2uufmb2i6n", Offerer: "U012ADA", Name: "Ada Lovelace", For: []string{"U0GRACE"}, Max: 1,
		Event: "intro-call", Title: "Intro call", Minutes: 15,
		Created: now, Expires: now.Add(DefaultOfferTTL),
	}
	hostile := open
	hostile.Name, hostile.Title, hostile.For, hostile.Max = goldenMention, goldenAttendee, nil, 3
	starts := []time.Time{goldenAt(23, 11, 15), goldenAt(23, 11, 30), goldenAt(23, 14, 0), goldenAt(24, 9, 0), goldenAt(24, 9, 15), goldenAt(24, 10, 0), goldenAt(25, 9, 0), goldenAt(26, 16, 45)}
	slots := func(t *testing.T) []booking.Slot { return goldenSlots(t, "intro-call", 15, starts...) }
	use := func(key, by, name string, start time.Time, id string) offer.Use {
		return offer.Use{Key: key, By: by, Name: name, Start: start.UTC().Format(time.RFC3339), End: start.Add(15 * time.Minute).UTC(), At: now, Booking: id}
	}
	booked := open
	booked.Uses = []offer.Use{use("V1", "U0GRACE", "Grace Hopper", starts[0], "a2972a0c-5697-4400-90ba-c80b6a7d56fc")}
	partly := hostile
	partly.Uses = []offer.Use{use("V1", "U0GRACE", goldenAttendee, starts[1], "b1")}
	withdrawn := open
	withdrawn.Withdrawn = now.Add(time.Hour)
	expired := open
	expired.Expires = now.Add(-time.Minute)
	pending := open
	pending.Uses = []offer.Use{use("V1", "U0GRACE", "Grace Hopper", starts[0], "")}
	bk := booking.Booking{ID: "a2972a0c-5697-4400-90ba-c80b6a7d56fc", Start: starts[0].UTC(), End: starts[0].Add(15 * time.Minute).UTC()}
	grace := person{name: "Grace Hopper", email: "grace@example.com", zone: goldenNewYork}
	meta := offerMeta{Offer: open.ID, Start: starts[0].UTC().Format(time.RFC3339), Card: "https://hooks.slack.test/actions/T1/1/x", Zone: "America/New_York"}

	var cases []goldenCase
	msg := func(name string, m func(t *testing.T) message) {
		cases = append(cases, goldenCase{name, rowsFree, func(t *testing.T) []goldenDoc { return msgDoc(m(t)) }})
	}
	fixed := func(name string, m message) { msg(name, func(*testing.T) message { return m }) }
	view := func(name string, v func(t *testing.T) slack.ModalViewRequest) {
		cases = append(cases, goldenCase{name, rowsFree, func(t *testing.T) []goldenDoc { return viewDoc(v(t)) }})
	}

	msg("offer_card", func(t *testing.T) message { return offerCard(open, slots(t), berlin, now) })
	msg("offer_card_hostile_partly_booked", func(t *testing.T) message { return offerCard(partly, slots(t), berlin, now) })
	fixed("offer_card_no_times", offerCard(hostile, nil, berlin, now))
	fixed("offer_card_booked", offerCard(booked, nil, berlin, now))
	fixed("offer_card_being_booked", offerCard(pending, nil, berlin, now))
	fixed("offer_card_withdrawn", offerCard(withdrawn, nil, berlin, now))
	fixed("offer_card_expired", offerCard(expired, nil, berlin, now))
	view("offer_form", func(*testing.T) slack.ModalViewRequest { return offerForm(open, meta.Start, grace, meta) })
	view("offer_form_hostile_no_profile", func(*testing.T) slack.ModalViewRequest {
		return offerForm(hostile, meta.Start, person{zone: time.UTC}, meta)
	})
	view("offer_times", func(t *testing.T) slack.ModalViewRequest {
		return offerTimesView(partly, slots(t), nil, goldenNewYork, now, meta)
	})
	view("offer_times_loading", func(*testing.T) slack.ModalViewRequest { return offerTimesView(open, nil, nil, time.UTC, now, meta) })
	view("offer_times_error", func(*testing.T) slack.ModalViewRequest {
		return offerTimesView(open, nil, booking.ErrUnavailable, time.UTC, now, meta)
	})
	view("offer_pending", func(*testing.T) slack.ModalViewRequest { return *offerPendingView(goldenAttendee) })
	view("offer_outcome_booked", func(*testing.T) slack.ModalViewRequest {
		return offerOutcomeView(offerBookedMessage(open, bk, "grace@example.com", goldenNewYork), meta)
	})
	fixed("offer_booked", offerBookedMessage(open, bk, "grace@example.com", goldenNewYork))
	fixed("offer_booked_dm", offerBookedDM(open, bk, "U0GRACE", "Grace Hopper", "grace@example.com", berlin))
	fixed("offer_refused_not_named", notNamedMessage(open))
	fixed("offer_refused_gone", offerGoneMessage())
	fixed("offer_refused_booked", offerClosedMessage(booked, offer.ErrUsedUp))
	fixed("offer_refused_withdrawn", offerClosedMessage(withdrawn, offer.ErrWithdrawn))
	fixed("offer_refused_expired", offerClosedMessage(expired, offer.ErrExpired))
	fixed("offer_refused_one_each", oneEachMessage(booked, booked.Uses[0], goldenNewYork))
	fixed("offer_refused_one_each_pending", oneEachMessage(pending, pending.Uses[0], goldenNewYork))
	refused := &NoCalendarError{Reconnect: true, Err: booking.ErrUnauthorized}
	turnedAway := func(err error) message { m, _, _ := offerCalendarMessage(open, err); return m }
	fixed("offer_refused_calendar_reconnect", turnedAway(refused))
	fixed("offer_refused_calendar_unopened", turnedAway(&NoCalendarError{Unopened: true}))
	fixed("offer_refused_calendar_gone", turnedAway(errOfferCalendarGone))
	fixed("offer_refused_calendar_owner_key", turnedAway(booking.ErrUnauthorized))
	fixed("offer_calendar_refused_dm", offerCalendarDM(open, "U0GRACE", refused))
	fixed("offer_calendar_unopened_dm", offerCalendarDM(open, "U0GRACE", &NoCalendarError{Unopened: true}))
	view("offer_times_calendar_refused", func(*testing.T) slack.ModalViewRequest {
		return offerTimesView(open, nil, refused, time.UTC, now, meta)
	})
	fixed("offer_given_back", offerGivenBackMessage(open, pending.Uses[0], "bookbot stopped before it sent your booking, so nothing was sent", goldenNewYork))
	fixed("offer_taken", offerTakenMessage())
	fixed("offer_unclear", offerUnclearMessage(open))
	fixed("offer_not_booked_rate_limited", offerNotBookedMessage(open, meta.Start, &booking.Result{Outcome: booking.RateLimited, Held: true, RetryAfter: 40 * time.Second}, nil, goldenNewYork, now))
	fixed("offer_not_booked_error", offerNotBookedMessage(open, meta.Start, nil, errors.Join(booking.ErrUnavailable), goldenNewYork, now))
	fixed("offer_not_booked_email_check", offerNotBookedMessage(open, meta.Start, &booking.Result{Outcome: booking.NotBooked, Err: goldenConflict(200)}, nil, goldenNewYork, now))
	fixed("offer_not_booked_full", offerNotBookedMessage(open, meta.Start, &booking.Result{Outcome: booking.NotBooked, Reason: booking.ReasonFull, Err: goldenNotBooked(503)}, nil, goldenNewYork, now))
	fixed("offer_not_booked_blocked", offerNotBookedMessage(open, meta.Start, &booking.Result{Outcome: booking.Rejected, Reason: booking.ReasonBlocked, Err: goldenNotBooked(403)}, nil, goldenNewYork, now))
	fixed("offer_not_booked_unanswered", offerNotBookedMessage(open, meta.Start, &booking.Result{Outcome: booking.Rejected, Reason: booking.ReasonUnanswered, Err: goldenNotBooked(400)}, nil, goldenNewYork, now))
	fixed("offer_not_booked_event_limit", offerNotBookedMessage(open, meta.Start, &booking.Result{Outcome: booking.RateLimited, Reason: booking.ReasonEventLimit, RetryAfter: time.Hour, Err: goldenNotBooked(429)}, nil, goldenNewYork, now))
	// The guest's own booking: cancelled by them, or not, and what the
	// offerer is told; a failure's Try again in the form.
	guestCancels := func(prefix string, o offer.Offer) {
		guestCancel := func(name string, res *booking.Result) {
			fixed(prefix+name, offerCancelOutcome(o, o.Uses[0], res, goldenNewYork, now))
		}
		guestCancel("cancelled", &booking.Result{Outcome: booking.Cancelled, Verified: true, Booking: &bk})
		guestCancel("already", &booking.Result{Outcome: booking.Cancelled})
		guestCancel("not_cancelled", &booking.Result{Outcome: booking.NotCancelled, Booking: &bk})
		guestCancel("rate_limited", &booking.Result{Outcome: booking.RateLimited, RetryAfter: 40 * time.Second})
		guestCancel("refused", &booking.Result{Outcome: booking.Rejected})
		guestCancel("unknown", &booking.Result{Outcome: booking.Unknown})
	}
	guestCancels("offer_guest_cancel_", booked)
	fixed("offer_guest_cancelled_dm", offerCancelledDM(booked, booked.Uses[0], berlin, now))
	fixed("offer_not_yours", notYourBookingMessage(booked))
	fixed("offer_booked_already", bookedAlreadyMessage(booked, booked.Uses[0], goldenNewYork, now))
	view("offer_outcome_not_booked", func(*testing.T) slack.ModalViewRequest {
		return offerOutcomeView(offerNotBookedMessage(open, meta.Start, &booking.Result{Outcome: booking.RateLimited, Held: true, RetryAfter: 40 * time.Second}, nil, goldenNewYork, now), meta)
	})

	// A link to the owner's booking page, and to a connected person's.
	link := offer.Offer{
		ID: "l33pbf2uufmb2i6n", Contact: "U012OPS", Max: linkMeetings, Event: "intro-call", Title: "Intro call", Minutes: 15,
		Created: now, Expires: now.Add(DefaultOfferTTL), Channel: "C0TEAM", TS: "1774257000.000100", Link: goldenPage + "/intro-call?utm=slack",
	}
	linkBooked := link
	linkBooked.Uses = []offer.Use{use("V1", "U0GRACE", "Grace Hopper", starts[0], "a2972a0c-5697-4400-90ba-c80b6a7d56fc")}
	linkExpired := link
	linkExpired.Expires = now.Add(-time.Minute)
	persons := link
	persons.Offerer, persons.Name, persons.Contact, persons.Link = "U012ADA", "Ada Lovelace", "", "https://book.example.com/ada/intro-call"
	msg("offer_link_card", func(t *testing.T) message { return offerCard(link, slots(t), berlin, now) })
	msg("offer_link_card_partly_booked", func(t *testing.T) message { return offerCard(linkBooked, slots(t), berlin, now) })
	msg("offer_link_card_of_a_persons_page", func(t *testing.T) message { return offerCard(persons, slots(t), berlin, now) })
	fixed("offer_link_card_expired", offerCard(linkExpired, nil, berlin, now))
	fixed("offer_link_unknown", linkUnknownMessage(goldenPage+"/no-such-type"))
	fixed("offer_link_not_bookable", linkNotBookableMessage(goldenTypes[4], goldenPage+"/team-sync"))
	view("offer_link_form", func(*testing.T) slack.ModalViewRequest { return offerForm(link, meta.Start, grace, meta) })
	fixed("offer_link_booked", offerBookedMessage(link, bk, "grace@example.com", goldenNewYork))
	fixed("offer_refused_booked_owner", offerClosedMessage(linkBooked, offer.ErrUsedUp))

	// A Workflow Builder step's card, on the owner's calendar.
	step := offer.Offer{
		ID: "s33pbf2uufmb2i6n", Contact: "U012OPS", For: []string{"U0GRACE"}, Max: 1, Event: "intro-call", Title: "Intro call", Minutes: 15,
		Created: now, Expires: now.Add(DefaultOfferTTL), Channel: "C0TEAM", TS: "1774257000.000200", Step: "Fx0001",
	}
	stepBooked := step
	stepBooked.Uses = booked.Uses
	stepWithdrawn := step
	stepWithdrawn.Withdrawn = now.Add(time.Minute)
	msg("offer_step_card", func(t *testing.T) message { return offerCard(step, slots(t), berlin, now) })
	fixed("offer_step_card_booked", offerCard(stepBooked, nil, berlin, now))
	fixed("offer_card_withdrawn_owner", offerCard(stepWithdrawn, nil, berlin, now))
	fixed("offer_refused_withdrawn_owner", offerClosedMessage(stepWithdrawn, offer.ErrWithdrawn))
	fixed("offer_unclear_owner", offerUnclearMessage(step))
	// Its guest cancels what they booked; nobody is told but them.
	guestCancels("offer_guest_cancel_owner_", stepBooked)
	fixed("offer_not_yours_owner", notYourBookingMessage(stepBooked))
	fixed("offer_booked_already_owner", bookedAlreadyMessage(stepBooked, stepBooked.Uses[0], goldenNewYork, now))
	view("offer_times_owner", func(t *testing.T) slack.ModalViewRequest {
		return offerTimesView(step, slots(t), nil, goldenNewYork, now, meta)
	})

	// "Offer times…" on a message.
	cm := composeMeta{Channel: "C0TEAM", Author: "U0GRACE"}
	view("offer_compose", func(*testing.T) slack.ModalViewRequest { return composeView(goldenTypes, "", cm) })
	view("offer_compose_nobody_picked", func(*testing.T) slack.ModalViewRequest {
		return composeView(goldenTypes[:1], "", composeMeta{Channel: "C0TEAM"})
	})
	view("offer_compose_loading", func(*testing.T) slack.ModalViewRequest { return composeView(nil, "", cm) })
	view("offer_compose_problem", func(*testing.T) slack.ModalViewRequest {
		return composeView([]booking.EventType{}, "The event types could not be loaded. "+failureText(booking.ErrUnavailable), cm)
	})
	view("offer_compose_none_bookable", func(*testing.T) slack.ModalViewRequest { return composeView(goldenTypes[4:], "", cm) })
	view("offer_compose_pending", func(*testing.T) slack.ModalViewRequest { return *composePendingView() })
	view("offer_compose_posted", func(*testing.T) slack.ModalViewRequest {
		return composeOutcomeView(composePostedMessage(goldenAttendee, []string{"U0GRACE", "U012BOB"}))
	})
	fixed("offer_compose_posted_dm", composePostedMessage("Intro call", nil))
	for _, code := range []string{"not_in_channel", "channel_not_found", "ratelimited"} {
		fixed("offer_compose_not_posted_"+code, composeNotPostedMessage("Intro call", goldenCmd, slack.SlackErrorResponse{Err: code}))
	}
	return cases
}
