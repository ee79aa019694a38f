package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/offer"
)

// The offers' sweep: a time taken from an offer stays taken until the
// form that took it books it or gives it back. When the process stops in
// between (a crash, a kill -9), or its store fails it, the time would stay
// "being booked" until the offer expires. The sweep settles such a time:
// given back when its create was never sent, recorded as booked when the
// write's journal entry says it was, given back when the entry says
// nothing was booked, and left while the write is in flight or awaits a
// person's check.

const (
	// offerSweepEvery is how often the sweep looks, after it looks at start.
	offerSweepEvery = time.Minute
	// offerClockSlack widens the journal read around a time's take, for
	// the clocks of other replicas.
	offerClockSlack = time.Hour
)

// offerLeftFlow is the offers' sweep, which runs on its own.
func offerLeftFlow() flow {
	return flow{background: (*Bot).offerLoop}
}

// offerLoop settles offers' times left unsettled at start, then every
// offerSweepEvery until ctx ends.
func (b *Bot) offerLoop(ctx context.Context) {
	if b.cfg.Offers == nil {
		return
	}
	t := time.NewTicker(offerSweepEvery)
	defer t.Stop()
	for {
		b.SettleOffers(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// leftTime is a time taken from an offer and left unsettled.
type leftTime struct {
	o offer.Offer
	u offer.Use
}

// SettleOffers settles the times taken from offers that the process which
// took them left unsettled, and ends the Workflow Builder steps whose
// offers closed (settleSteps). A time is taken for left by another
// process, when this one holds the store alone (it stopped, or this one
// could not have started), or by any process once offerLeftAfter has
// passed. Every replica may run it: each
// time is settled by one Update of its offer that finds it still held as
// it was read (offer.ReleaseLeft, offer.ConfirmLeft), and only the process
// whose Update settled it tells anyone. Run calls it at start and every
// minute.
func (b *Bot) SettleOffers(ctx context.Context) {
	if b.cfg.Offers == nil {
		return
	}
	b.settleLeftTimes(ctx)
	b.settleSteps(ctx)
}

// settleLeftTimes settles the times of SettleOffers.
func (b *Bot) settleLeftTimes(ctx context.Context) {
	list, err := b.cfg.Offers.Unsettled(ctx)
	if err != nil {
		if ctx.Err() == nil {
			b.log.Error("offers: the times being booked could not be read; tried again in a minute", "err", err)
		}
		return
	}
	now := b.cfg.Now()
	var left []leftTime
	var since time.Time // the earliest take whose write must be looked up
	for _, o := range list {
		for _, u := range o.Pending() {
			if !b.leftBehind(u, now) {
				continue
			}
			left = append(left, leftTime{o, u})
			if mayHaveSent(u) && (since.IsZero() || u.At.Before(since)) {
				since = u.At
			}
		}
	}
	var entries []journal.Entry
	read := b.cfg.Journal != nil
	if read && !since.IsZero() {
		if entries, err = b.cfg.Journal.Since(since.Add(-offerClockSlack)); err != nil {
			b.log.Error("offers: the journal could not be read to settle times left being booked; tried again in a minute", "err", err)
			read = false
		}
	}
	for _, l := range left {
		wctx, cancel := context.WithTimeout(ctx, b.cfg.WorkTimeout)
		b.settleLeft(wctx, l, entries, read)
		cancel()
	}
}

// leftBehind reports whether the process that took u is taken for gone.
func (b *Bot) leftBehind(u offer.Use, now time.Time) bool {
	alone := !b.cfg.OffersShared && u.Owner != b.replica
	return alone || now.Sub(u.At) > offerLeftAfter
}

// mayHaveSent reports whether u's create may have been sent: it was
// handed to the write path, or it was taken before bookbot recorded that.
func mayHaveSent(u offer.Use) bool { return !u.Sent.IsZero() || u.Owner == "" }

// settleLeft settles l by what its write did; entries are the journal's
// since before l was taken, read says whether the journal could be read.
func (b *Bot) settleLeft(ctx context.Context, l leftTime, entries []journal.Entry, read bool) {
	o, u := l.o, l.u
	// Whoever the process that took it told, it told itself; but an
	// unclear outcome it could not tell.
	told := u.Owner == b.replica
	if !mayHaveSent(u) {
		b.giveBack(ctx, l, "bookbot stopped before it sent your booking, so nothing was sent", told)
		return
	}
	if !read {
		return // nothing else says what the write did
	}
	e, found := leftEntry(entries, o, u)
	switch {
	case !found && b.cfg.JournalKeep > 0 && b.cfg.Now().Sub(u.At) > b.cfg.JournalKeep:
		// Its entry may have been pruned: what it did is not known here.
		b.log.Warn("offers: a time left being booked has no journal entry, which may have been pruned; it stays taken", "offer", o.ID)
	case !found:
		// The journal records a create before it is sent.
		b.giveBack(ctx, l, "bookbot stopped before it sent your booking, so nothing was sent", told)
	case e.Open():
		// In flight: the journal's settling of writes left behind comes first.
	case e.Outcome == booking.AlreadyBooked:
		// The list showed a booking at that time for that address before
		// or after sending: not one this person asked for, as the journal
		// records nothing of a create it refuses as a repeat of an earlier.
		if b.giveBack(ctx, l, "already booked for that email address", true) && !told {
			b.dm(ctx, l.u.By, bookedAlreadyMessage(o, l.u, b.users.zone(ctx, l.u.By), b.cfg.Now()))
		}
	case e.Created != "" && e.Outcome == booking.Confirmed:
		end, err := time.Parse(time.RFC3339Nano, e.End)
		if err != nil {
			start, _ := time.Parse(time.RFC3339Nano, u.Start)
			end = start.Add(time.Duration(o.Minutes) * time.Minute)
		}
		b.confirmLeft(ctx, l, e, e.Created, end, e.Recovered, told)
	case e.Outcome == booking.Unknown || e.Outcome == booking.ProbablyNotBooked:
		if !e.AwaitingReview() {
			b.recheckLeft(ctx, l, e)
		}
	default:
		b.giveBack(ctx, l, "the booking service did not book it", told)
	}
}

// leftEntry is the journal entry of u's create: the newest create by u's
// booker of the offer's event at u's start on the offer's calendar, begun
// after u was taken.
func leftEntry(entries []journal.Entry, o offer.Offer, u offer.Use) (journal.Entry, bool) {
	start, err := time.Parse(time.RFC3339Nano, u.Start)
	if err != nil {
		return journal.Entry{}, false
	}
	for _, e := range slices.Backward(entries) {
		if e.Op != booking.OpCreate || e.Actor != u.By || e.EventType != o.Event || e.At.Before(u.At.Add(-offerClockSlack)) || !offerEntry(o, e) {
			continue
		}
		if s, err := time.Parse(time.RFC3339Nano, e.Start); err == nil && s.Equal(start) {
			return e, true
		}
	}
	return journal.Entry{}, false
}

// offerEntry reports whether e went to the calendar o books on, by the
// calendar's label (Write.Calendar): the owner's, or its offerer's own.
// An offer older than its record of which calendar (Calendar "") may have
// been on either.
func offerEntry(o offer.Offer, e journal.Entry) bool {
	label := cmp.Or(e.Calendar, booking.Owner)
	switch {
	case o.Offerer == "" || o.Calendar == booking.Owner:
		return label == booking.Owner
	case o.Calendar == "":
		return label == booking.Owner || label == o.Offerer
	}
	return label == o.Offerer
}

// recheckLeft settles a time whose unclear write a person has checked by
// what the bookings list shows now, and tells of it; it stays taken while
// the list cannot say.
func (b *Bot) recheckLeft(ctx context.Context, l leftTime, e journal.Entry) {
	start, err := time.Parse(time.RFC3339Nano, e.Start)
	if err != nil {
		return
	}
	cal, err := b.offerCalendar(ctx, l.o)
	if err != nil {
		b.log.Info("offers: a checked time's calendar could not be read; tried again in a minute", "offer", l.o.ID, "err", err)
		return
	}
	res := cal.Recheck(ctx, l.o.Event, start, e.Email)
	switch {
	case res.Outcome == booking.Confirmed && res.Booking != nil:
		b.confirmLeft(ctx, l, e, res.Booking.ID, res.Booking.End, false, false)
	case res.Outcome == booking.ProbablyNotBooked:
		b.giveBack(ctx, l, "the bookings list does not show it", false)
	}
}

// giveBack gives l's time back to its offer and, unless they were told,
// tells the person who took it why; the card shows the time again. It
// reports whether this call gave it back.
func (b *Bot) giveBack(ctx context.Context, l leftTime, why string, told bool) bool {
	o, err := b.cfg.Offers.Update(ctx, l.o.ID, offer.ReleaseLeft(l.u))
	switch {
	case errors.Is(err, offer.ErrSettled):
		return false // settled meanwhile, by whoever tells of it
	case err != nil:
		b.log.Error("offers: a time left being booked could not be given back; tried again in a minute", "offer", l.o.ID, "err", err)
		return false
	}
	b.log.Info("offers: a time left being booked was given back", "offer", o.ID, "user", l.u.By, "why", why)
	b.leftCard(ctx, o, l.u)
	if !told {
		b.dm(ctx, l.u.By, offerGivenBackMessage(o, l.u, why, b.users.zone(ctx, l.u.By)))
	}
	return true
}

// confirmLeft records in l's offer the booking its write made and, unless
// they were told, tells the offerer and the person who booked; recovered
// says the write was settled after a restart, which the review queue
// reports (to its booker, and to whoever checks that calendar): whom it
// reaches is not told here again.
func (b *Bot) confirmLeft(ctx context.Context, l leftTime, e journal.Entry, id string, end time.Time, recovered, told bool) {
	start, _ := time.Parse(time.RFC3339Nano, l.u.Start)
	o, err := b.cfg.Offers.Update(ctx, l.o.ID, offer.ConfirmLeft(l.u, id, end))
	switch {
	case errors.Is(err, offer.ErrSettled):
		return
	case err != nil:
		b.log.Error("offers: a booking made from an offer could not be recorded in it; tried again in a minute", "offer", l.o.ID, "booking", id, "err", err)
		return
	}
	b.log.Info("offers: a booking left unrecorded in its offer was recorded", "offer", o.ID, "booking", id, "user", l.u.By)
	b.leftCard(ctx, o, l.u)
	// Its step ends once the person who booked heard of it.
	defer b.endStep(ctx, o)
	if told {
		return
	}
	bk := booking.Booking{ID: id, Start: start, End: end}
	if o.Offerer != "" && (!recovered || !b.reviewReaches(ctx, e, o.Offerer)) {
		b.dm(ctx, o.Offerer, offerBookedDM(o, bk, l.u.By, e.Name, e.Email, b.users.zone(ctx, o.Offerer)))
	}
	if !recovered {
		b.dm(ctx, l.u.By, offerBookedMessage(o, bk, e.Email, b.users.zone(ctx, l.u.By)))
	}
}

// leftCard shows o as it is now on its card, through the response_url of
// the click that opened u's form. Slack takes that for 30 minutes and 5
// posts: after that the card stays as it was until someone clicks it,
// which shows the offer as it is.
func (b *Bot) leftCard(ctx context.Context, o offer.Offer, u offer.Use) {
	if u.Card == "" {
		return
	}
	var slots []booking.Slot
	if o.Open(b.cfg.Now()) == nil {
		s, err := b.calendarSlots(ctx, o)
		if err != nil {
			b.log.Info("offers: the card of a time settled was left as it is: the free slots could not be read", "offer", o.ID, "err", err)
			return
		}
		slots = withoutTaken(s, o)
	}
	b.showCard(ctx, o, u.Card, offerCard(o, slots, b.offererZone(ctx, o), b.cfg.Now()))
}

// offerGivenBackMessage tells the person who took u that it was not
// booked, and why.
func offerGivenBackMessage(o offer.Offer, u offer.Use, why string, loc *time.Location) message {
	when := ""
	if start, err := time.Parse(time.RFC3339Nano, u.Start); err == nil {
		when = ", " + span(start, start.Add(time.Duration(o.Minutes)*time.Minute), loc)
	}
	next := "The time is free again: pick it on the card if you still want it, or ask " + offerer(o) + "."
	text := fmt.Sprintf("*Not booked:* your *%s*%s%s: %s. %s", short(o.Title), withHost(o, true), when, escape(why), next)
	return message{
		Text:   fmt.Sprintf("Not booked: your %s%s: %s. %s", short(o.Title), withHost(o, false), escape(why), next),
		Blocks: []slack.Block{section(":x: " + text)},
	}
}
