package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/offer"
)

// A guest who booked from an offer (often not on the allow-list) cancels
// that booking, and no other: the offer's record names the booking their
// own use of it made, and the cancel goes to the offer's calendar, through
// the write path every cancel takes (journal, never retried, settled by
// listing).

// offerCancelFlow is a guest's Cancel of the booking they made from an
// offer: like the offer's own buttons, it answers people not on the
// allow-list, and only about the booking their use of the offer made.
func offerCancelFlow() flow {
	return flow{
		actions: map[string]func(*Bot, *jobs, press){
			actionOfferCancel: (*Bot).offerCancelPressed,
		},
		public: true,
	}
}

// offerCancelPressed answers a guest's Cancel, in the message or the form
// it was pressed in. Only the person whose use of the offer made the
// booking may cancel it; a double press cancels once.
func (b *Bot) offerCancelPressed(later *jobs, p press) {
	id, bookingID, ok := strings.Cut(p.a.Value, " ")
	if !ok || booking.ValidateBookingID(bookingID) != nil {
		return
	}
	show := p.replace
	if p.inModal() {
		viewID := p.cb.View.ID
		show = func(m message) {
			ctx, cancel := context.WithTimeout(context.Background(), reportTimeout)
			defer cancel()
			if err := b.updateView(ctx, *b.markView(ptr(offerOutcomeView(m, offerMeta{}))), viewID); err != nil {
				b.log.Info("views.update failed; the outcome goes as a message", "err", slackErr(err))
				p.reply(m)
			}
		}
	}
	lock := "cancel\x00" + bookingID
	if !b.creating.tryLock(lock) {
		return
	}
	later.add("offer-cancel", func(ctx context.Context) {
		defer b.creating.unlock(lock)
		if b.cfg.Offers == nil {
			show(offerGoneMessage())
			return
		}
		o, err := b.cfg.Offers.Get(ctx, id)
		if errors.Is(err, offer.ErrNotFound) {
			show(offerGoneMessage())
			return
		}
		if err != nil {
			show(b.failed("Nothing was cancelled: bookbot could not read the offer", err, offerCancelButton(id, bookingID, "Try again")))
			return
		}
		u, mine := o.UseOf(p.user)
		if !mine || u.Booking != bookingID {
			b.log.Info("offer cancel refused: the presser did not make this booking", "offer", o.ID, "user", p.user)
			p.reply(notYourBookingMessage(o)) // to them, leaving where they pressed it as it is
			return
		}
		zone := b.users.zone(ctx, p.user)
		cal, err := b.offerCalendar(ctx, o)
		var res *booking.Result
		if err == nil {
			res, err = cal.Cancel(booking.WithActor(ctx, p.user), bookingID)
		}
		if err != nil {
			if m, ok := b.turnedAway(ctx, o, p.user, err); ok {
				show(m)
				return
			}
			show(b.failed("Nothing was cancelled", err, offerCancelButton(id, bookingID, "Try again")))
			return
		}
		b.log.Info("offer booking cancel finished", "offer", o.ID, "user", p.user, "result", res)
		show(offerCancelOutcome(o, u, res, zone, b.cfg.Now()))
		if res.Outcome == booking.Cancelled && (res.Booking != nil || res.Reason == booking.ReasonBeyondList) {
			// The meeting is gone: its time is the offer's again, on the
			// card, and the guest may book another.
			if _, err := b.cfg.Offers.Update(ctx, o.ID, offer.Cancelled(bookingID)); err != nil {
				b.log.Error("a booking cancelled through an offer could not be given back to it", "offer", o.ID, "booking", bookingID, "err", err)
			} else if card := b.freshCard(ctx, o.ID); card != nil {
				b.showCard(ctx, card.o, u.Card, card.m)
			}
			if o.Offerer != "" {
				b.dm(ctx, o.Offerer, offerCancelledDM(o, u, b.users.zone(ctx, o.Offerer), b.cfg.Now()))
			}
		}
		b.ReportReviews(ctx)
	})
}

// notYourBookingMessage answers a Cancel pressed by someone whose use of
// the offer did not make the booking.
func notYourBookingMessage(o offer.Offer) message {
	text := "Only the person who booked this time from the offer can cancel it: nothing was cancelled. Ask " + offerer(o) + "."
	return message{Text: text, Blocks: []slack.Block{section(":lock: " + text)}}
}

// offerCancelOutcome tells a guest what became of their cancel of u's
// booking, and what to do when it did not go through.
func offerCancelOutcome(o offer.Offer, u offer.Use, res *booking.Result, loc *time.Location, now time.Time) message {
	what, plain := offerUseWhat(o, u, withHost(o, false), loc, now)
	// Only an offerer is told of a guest's cancel: of an offer nobody made,
	// the guest asks whom it names.
	ask, told := offerer(o), o.Offerer != ""
	var text, head string
	var next []slack.BlockElement
	switch {
	case res.Outcome == booking.DryRun:
		head, text = "Dry run, nothing cancelled", ":test_tube: *Dry run: nothing was cancelled.* "+what+" stands. Ask "+ask+" about it."
	case res.Outcome == booking.Cancelled && (res.Booking != nil || res.Reason == booking.ReasonBeyondList):
		next := "Ask " + ask + " for another time."
		if told {
			next = ask + " has been told; ask them for another time."
		}
		head, text = "Cancelled", ":wastebasket: *Cancelled:* "+what+". "+next
	case res.Outcome == booking.Cancelled, res.Outcome == booking.NotFound:
		head, text = "Nothing to cancel", ":information_source: *Nothing to cancel:* "+what+" was cancelled already, so nothing changed. Ask "+ask+" for another time."
	case res.Outcome == booking.NotCancelled:
		head, text = "Not cancelled", ":x: *Not cancelled:* "+what+" still stands. Cancelling again is safe."
		next = append(next, offerCancelButton(o.ID, u.Booking, "Cancel again…"))
	case res.Outcome == booking.RateLimited:
		head, text = "Not cancelled", fmt.Sprintf(":stopwatch: *Not cancelled: the booking service is busy.* %s still stands. Try again in %s.", what, waitText(res.RetryAfter))
		next = append(next, offerCancelButton(o.ID, u.Booking, "Try again…"))
	case res.Outcome == booking.Rejected:
		head, text = "Not cancelled", ":x: *Not cancelled: the booking service refused.* "+what+" still stands. Ask "+ask+" to cancel it."
	default:
		next := "Ask " + ask + " whether it still stands."
		if told {
			next = ask + " has been told and will check their calendar."
		}
		head, text = "Not sure it was cancelled", ":warning: *Not sure it was cancelled:* "+what+". The booking service did not say, and the bookings list could not settle it. "+next
	}
	blocks := []slack.Block{section(text)}
	if len(next) > 0 {
		blocks = append(blocks, slack.NewActionBlock("offer_cancel_actions", next...))
	}
	return message{Text: head + ": " + plain + ".", Blocks: blocks}
}

// offerCancelledDM tells the offerer that the booking u made from their
// offer was cancelled by whoever booked it.
func offerCancelledDM(o offer.Offer, u offer.Use, loc *time.Location, now time.Time) message {
	what, plain := offerUseWhat(o, u, " with "+short(u.Name), loc, now)
	return message{
		Text: fmt.Sprintf("Cancelled by %s: %s, booked from your offer.", mention(u.By), plain),
		Blocks: []slack.Block{
			section(fmt.Sprintf(":wastebasket: *Cancelled by %s:* %s, which they booked from your offer.", mention(u.By), what)),
			slack.NewActionBlock("offer_cancelled_actions", upcomingButton()),
		},
	}
}
