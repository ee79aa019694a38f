package bot

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/slack-go/slack/slackevents"

	"github.com/bookbot/bookbot/offer"
	"github.com/bookbot/bookbot/outbox"
)

// stepFlow is the Workflow Builder step "Offer times" (offer_times_step):
// a workflow posts a card of free times of the owner's calendar in a
// channel, for the people it names (anyone there, when none), and the
// step ends with the card's first booking (outputs booking_id, start_time
// and attendee), or with an error when the card cannot be posted, or it
// expires or is withdrawn without one. The card is an offer like any
// other: signed, journaled, one create per booking. A step's run is one
// offer (offer.IDOf), a refused run's too, so that of the replicas and
// redeliveries one posts its card, and its end is claimed in the outbox,
// so that one ends it; the offers' sweep ends the steps whose offers
// closed, or whose end Slack did not take or a stopped process left
// undone.
func stepFlow() flow {
	return flow{
		events: map[slackevents.EventsAPIType]func(*Bot, *jobs, slackevents.EventsAPIEvent){
			slackevents.FunctionExecuted: (*Bot).functionExecuted,
		},
	}
}

// stepRun is a run of the step, as its inputs give it.
type stepRun struct {
	execution string
	event     string
	channel   string
	people    []string
	count     int
	problem   string // what is wrong with the inputs; "" when nothing
}

// functionExecuted answers function_executed of the step. Its
// bot_access_token is neither kept nor used: it lasts while the step
// runs, at most 15 minutes, and the step ends when someone books,
// however much later; bookbot's own token ends it.
func (b *Bot) functionExecuted(later *jobs, ev slackevents.EventsAPIEvent) {
	fe, ok := ev.InnerEvent.Data.(*slackevents.FunctionExecutedEvent)
	if !ok || fe.Function.CallbackID != callbackOfferStep || fe.FunctionExecutionID == "" {
		return
	}
	run := stepRunOf(fe.FunctionExecutionID, fe.Inputs)
	later.add("step", func(ctx context.Context) { b.runStep(ctx, run) })
}

// stepRunOf reads a run's inputs, as Slack sends them in JSON.
func stepRunOf(execution string, inputs map[string]any) stepRun {
	r := stepRun{execution: execution, count: 1}
	r.event, _ = inputs["event_type"].(string)
	r.channel, _ = inputs["channel_id"].(string)
	if list, ok := inputs["people"].([]any); ok {
		for _, p := range list {
			if id, ok := p.(string); ok && id != "" && !slices.Contains(r.people, id) {
				r.people = append(r.people, id)
			}
		}
	}
	if n, ok := inputs["count"].(float64); ok {
		r.count = int(math.Max(math.Min(n, math.MaxInt32), math.MinInt32))
	}
	switch {
	case r.event == "":
		r.problem = "The step needs an event type: give the slug of one of the calendar's event types, such as intro-call."
	case r.channel == "":
		r.problem = "The step needs a channel to post the offer in."
	case r.count < 1 || r.count > maxOfferN:
		r.problem = fmt.Sprintf("The number of meetings must be from 1 to %d, and it is %d.", maxOfferN, r.count)
	case len(r.people) > maxOfferNamed:
		r.problem = fmt.Sprintf("An offer names at most %d people, and this one names %d.", maxOfferNamed, len(r.people))
	case len(r.people) > 0 && r.count > len(r.people):
		r.problem = fmt.Sprintf("The offer is for %d meetings but names %d people, and each person books one: name more people, or fewer meetings.", r.count, len(r.people))
	}
	return r
}

// runStep makes the run's offer on the owner's calendar and posts its
// card in the run's channel; when it cannot, the step ends with why, and
// nothing is asked of the booking API that cannot be offered.
func (b *Bot) runStep(ctx context.Context, run stepRun) {
	if b.cfg.Steps == nil || b.cfg.Offers == nil {
		b.log.Error("a Workflow Builder step was not run: offers or steps are not set up on this bookbot", "execution", run.execution)
		return
	}
	now := b.cfg.Now()
	fail := func(reason string) {
		b.log.Info("a Workflow Builder step was refused", "execution", run.execution, "why", reason)
		// Kept as the run's offer, withdrawn at once, so that the sweep
		// ends the step when Slack does not take its end now.
		o := offer.Offer{ID: offer.IDOf("step", run.execution), Step: run.execution, Created: now, Expires: now, Withdrawn: now, StepError: reason}
		switch err := b.cfg.Offers.Create(ctx, o); {
		case errors.Is(err, offer.ErrExists):
			return // delivered again: the first delivery ends it, else the sweep
		case err != nil:
			b.log.Warn("a refused Workflow Builder step could not be kept: unless Slack takes its end now, it stays running", "execution", run.execution, "err", err)
			o.ID = ""
		}
		b.endStep(ctx, o)
	}
	if run.problem != "" {
		fail(run.problem)
		return
	}
	if b.booking == nil {
		fail("bookbot has no owner's calendar to offer (BOOKING_API_KEY is not set): the step offers the owner's calendar.")
		return
	}
	cal := b.cals.owner(b.booking)
	types, err := cal.types.get(ctx)
	if err != nil {
		fail("The calendar's event types could not be read: " + failureText(err) + " Run the workflow again.")
		return
	}
	et, ok := findType(types, run.event)
	switch {
	case !ok:
		fail(fmt.Sprintf("There is no event type %q on the calendar: give the slug of one of its event types (/booking types lists them).", run.event))
		return
	case !et.Bookable():
		fail(fmt.Sprintf("%s is a %s event, which bookbot cannot book: offer a one-on-one event type.", et.Title, kindText(et.SchedulingKind)))
		return
	}
	slots, err := cal.Slots(ctx, et.Slug)
	if err != nil {
		fail("The free times of " + et.Title + " could not be read: " + failureText(err) + " Run the workflow again.")
		return
	}
	zone := b.cfg.DigestZone
	if len(pickTimes(slots, nil, zone, now)) == 0 {
		fail(et.Title + " has no free times in the next 14 days, so no offer was posted.")
		return
	}
	o := offer.Offer{
		ID: offer.IDOf("step", run.execution), Calendar: cal.calendarID(), For: run.people, Max: run.count, Contact: b.cfg.Contact,
		Event: et.Slug, Title: et.Title, Minutes: et.DurationMinutes,
		Created: now, Expires: now.Add(b.offerTTL()), Step: run.execution,
	}
	switch err := b.cfg.Offers.Create(ctx, o); {
	case errors.Is(err, offer.ErrExists):
		b.log.Info("a Workflow Builder step delivered again: its offer is made already", "offer", o.ID)
		return
	case err != nil:
		fail("bookbot could not keep the offer: " + failureText(err) + " Run the workflow again.")
		return
	}
	channel, ts, postErr := b.post(ctx, run.channel, offerCard(o, slots, zone, now), noUnfurl()...)
	if postErr != nil {
		b.log.Warn("a Workflow Builder step's card was not posted", "offer", o.ID, "channel", run.channel, "err", slackErr(postErr))
		// Perhaps posted after all, when Slack's answer was lost: nobody
		// books from it.
		w, err := b.cfg.Offers.Update(ctx, o.ID, offer.Unposted(stepPostFailure(postErr), b.cfg.Now()))
		if err != nil {
			b.log.Error("a Workflow Builder step's offer could not be withdrawn; the sweep ends the step", "offer", o.ID, "err", err)
			return
		}
		b.endStep(ctx, w)
		return
	}
	if _, err := b.cfg.Offers.Update(ctx, o.ID, offer.Placed(channel, ts)); err != nil {
		b.log.Error("a Workflow Builder step's card was posted, but where was not recorded: unless someone books from it first, the sweep takes it for never posted, withdraws it and ends the step", "offer", o.ID, "after", offerLeftAfter, "err", err)
	}
	b.log.Info("offer posted by a Workflow Builder step", "offer", o.ID, "channel", channel, "event", et.Slug, "named", len(run.people), "n", run.count)
}

// stepPostFailure is the reason a step ends with when its card could not
// be posted: what to do about it.
func stepPostFailure(err error) string {
	switch slackErr(err) {
	case "not_in_channel":
		return "bookbot is not in that channel, so it could not post the offer there: add it (/invite @bookbot), then run the workflow again."
	case "channel_not_found":
		return "bookbot cannot see that channel, so it could not post the offer there: add it to the channel (a private one needs an invitation), then run the workflow again."
	case "is_archived":
		return "That channel is archived, so the offer could not be posted there."
	}
	return "The offer could not be posted in the channel (" + slackErr(err) + "). Run the workflow again."
}

// endStep ends o's step once, when it has one still running: with the
// first time booked from it, or, once o closed without one, with an error
// saying why (o.StepError, when bookbot recorded it). An offer still open,
// or with a time being booked, ends its step later.
func (b *Bot) endStep(ctx context.Context, o offer.Offer) {
	if !o.StepOpen() || b.cfg.Steps == nil {
		return
	}
	if booked := o.Booked(); len(booked) > 0 {
		u := booked[0]
		start, err := time.Parse(time.RFC3339Nano, u.Start)
		if err != nil {
			b.log.Error("a Workflow Builder step cannot end: its booking's start is no time", "offer", o.ID, "start", u.Start)
			return
		}
		outputs := map[string]any{"booking_id": u.Booking, "start_time": start.Unix(), "attendee": u.By}
		b.endStepWith(ctx, o, func(ctx context.Context) error { return b.cfg.Steps.CompleteStep(ctx, o.Step, outputs) })
		return
	}
	if len(o.Pending()) > 0 {
		return // the write that settles it ends the step, or its sweep
	}
	reason := ""
	switch closed := o.Open(b.cfg.Now()); {
	case o.StepError != "":
		reason = o.StepError
	case errors.Is(closed, offer.ErrExpired):
		reason = "The offer expired " + o.Expires.UTC().Format(momentLayout) + " without a booking."
	case errors.Is(closed, offer.ErrWithdrawn):
		reason = "The offer was withdrawn before anyone booked a time from it."
	default:
		return // open
	}
	b.endStepWith(ctx, o, func(ctx context.Context) error { return b.cfg.Steps.FailStep(ctx, o.Step, reason) })
}

// stepKey is the outbox key of a step's end.
func stepKey(execution string) string { return "step/" + execution }

// stepStale is how old the claim of a step's end whose answer never came
// must be before it is made again: Slack ends a step once, and answers a
// second end execution_not_in_running_state, so one made twice is safe.
const stepStale = offerLeftAfter

// endStepWith ends o's step with end, when this process claims it, and
// records that it ended: in the outbox, then in the offer (when there is
// one), which the sweep then no longer lists. An end Slack refused for
// certain is given back to the sweep; one whose answer never came waits
// stepStale, then is made again.
func (b *Bot) endStepWith(ctx context.Context, o offer.Offer, end func(context.Context) error) {
	key := stepKey(o.Step)
	if !b.claimStepEnd(ctx, o, key) {
		return
	}
	err := end(ctx)
	code := ""
	if err != nil {
		code = slackErr(err)
	}
	switch {
	case err == nil:
		b.log.Info("Workflow Builder step ended", "execution", o.Step, "offer", o.ID)
	case code == "execution_not_in_running_state" || code == "function_execution_not_found":
		// Ended before (the answer to an end was lost), or by Slack.
		b.log.Info("Workflow Builder step had ended already", "execution", o.Step, "offer", o.ID, "slack", code)
	case notPosted(err):
		b.log.Warn("a Workflow Builder step could not be ended; tried again in a minute", "execution", o.Step, "err", code)
		if b.cfg.Outbox != nil {
			if err := b.cfg.Outbox.Release(ctx, key); err != nil {
				b.log.Error("a Workflow Builder step's claim could not be released; it is ended again once the claim is stale", "execution", o.Step, "err", err)
			}
		}
		return
	default:
		b.log.Warn("a Workflow Builder step's end got no clear answer; it is ended again once the claim is stale", "execution", o.Step, "err", code)
		return
	}
	now := b.cfg.Now()
	if b.cfg.Outbox != nil {
		if err := b.cfg.Outbox.Posted(ctx, key, outbox.Post{At: now}); err != nil {
			b.log.Error("a Workflow Builder step ended, but its claim was not settled", "execution", o.Step, "err", err)
		}
		// Steps ended long ago are of no use to anyone: they go as new
		// ones end.
		if err := b.cfg.Outbox.Prune(ctx, "step/", now.Add(-offerKeep)); err != nil {
			b.log.Warn("old Workflow Builder steps' claims could not be pruned", "err", err)
		}
	}
	b.stepEnded(ctx, o, now)
}

// stepEnded records in o, when there is an offer, that its step ended.
func (b *Bot) stepEnded(ctx context.Context, o offer.Offer, at time.Time) {
	if o.ID == "" {
		return
	}
	if _, err := b.cfg.Offers.Update(ctx, o.ID, offer.EndStep(at)); err != nil && !errors.Is(err, offer.ErrStepEnded) {
		b.log.Error("a Workflow Builder step ended, but its offer does not say so; the sweep ends it again", "offer", o.ID, "err", err)
	}
}

// claimStepEnd claims the end of o's step in the outbox, and reports
// whether this process is to end it. One ended and not recorded in its
// offer is recorded now; one whose claim went stale is claimed afresh.
func (b *Bot) claimStepEnd(ctx context.Context, o offer.Offer, key string) bool {
	if b.cfg.Outbox == nil {
		return true
	}
	now := b.cfg.Now()
	ok, err := b.cfg.Outbox.Claim(ctx, key, now, now)
	if err != nil || ok {
		if err != nil {
			b.log.Error("a Workflow Builder step's end could not be claimed; tried again in a minute", "execution", o.Step, "err", err)
		}
		return ok
	}
	r, found, err := b.cfg.Outbox.Lookup(ctx, key)
	switch {
	case err != nil:
		b.log.Error("a Workflow Builder step's claim could not be read; tried again in a minute", "execution", o.Step, "err", err)
	case !found: // released since: the sweep tries again
	case r.Posted != nil:
		b.stepEnded(ctx, o, r.Posted.At)
	case now.Sub(r.ClaimedAt) > stepStale:
		b.log.Warn("a Workflow Builder step's end was claimed and never settled; it is ended again", "execution", o.Step, "claimant", r.Claimant)
		ok, err := b.cfg.Outbox.Takeover(ctx, key, r.ClaimedAt, now)
		if err != nil {
			b.log.Error("a stale Workflow Builder step's claim could not be taken over", "execution", o.Step, "err", err)
		}
		return ok && err == nil
	}
	return false
}

// settleSteps ends the steps whose offers closed, or were booked by a
// write settled after a restart, or whose end a stopped process left
// undone; and withdraws the offer of a step whose card a stopped process
// never recorded as posted, and ends it.
func (b *Bot) settleSteps(ctx context.Context) {
	if b.cfg.Offers == nil || b.cfg.Steps == nil {
		return
	}
	list, err := b.cfg.Offers.Steps(ctx)
	if err != nil {
		if ctx.Err() == nil {
			b.log.Error("offers: the Workflow Builder steps running could not be read; tried again in a minute", "err", err)
		}
		return
	}
	now := b.cfg.Now()
	for _, o := range list {
		wctx, cancel := context.WithTimeout(ctx, b.cfg.WorkTimeout)
		if o.TS == "" && len(o.Uses) == 0 && o.Withdrawn.IsZero() && now.Sub(o.Created) > offerLeftAfter {
			// Made, and never recorded as posted: whether its card is
			// there is not known, so nobody books from it.
			if w, err := b.cfg.Offers.Update(wctx, o.ID, offer.Unposted("bookbot stopped before it knew whether the offer's card was posted, so nobody can book from it: run the workflow again.", now)); err == nil {
				b.log.Warn("offers: a Workflow Builder step's card was never recorded as posted; its offer is withdrawn and the step ended", "offer", o.ID)
				b.endStep(wctx, w)
			}
		} else {
			b.endStep(wctx, o)
		}
		cancel()
	}
}
