package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/offer"
)

// offerFlow is `offer`: a card of free times posted in a conversation,
// from which the people it names (anyone there, when it names none) book
// one with a click and a short form. The offer is the clicker's
// permission: its buttons and form answer people not on the allow-list,
// and only ever about that offer.
func offerFlow() flow {
	return flow{
		commands: []command{
			{name: "offer", usage: "&lt;event&gt; [@person …] [n=N]", brief: "&lt;event&gt;", help: "post free times here; the people named (anyone here, when none is) book one with a click", maxArgs: anyArgs, run: (*Bot).offerCommand},
		},
		actions: map[string]func(*Bot, *jobs, press){
			actionOfferSlot:     (*Bot).offerSlotPressed,
			actionOfferPick:     (*Bot).offerSlotPressed,
			actionOfferMore:     (*Bot).offerMorePressed,
			actionOfferWithdraw: (*Bot).offerWithdrawPressed,
			actionOfferRetry:    (*Bot).offerSlotPressed,
		},
		submissions: map[string]func(*Bot, *jobs, slack.InteractionCallback) any{
			callbackOfferBook: func(b *Bot, later *jobs, cb slack.InteractionCallback) any { return b.submitOffer(later, cb) },
		},
		public: true,
	}
}

// mentionRE is a user mention as Slack escapes it in a command's text.
var mentionRE = regexp.MustCompile(`<@([UW][A-Z0-9]+)(?:\|[^>]*)?>`)

// parseOfferArgs reads `offer`'s text after the subcommand; problem is
// mrkdwn, "" when the arguments are good.
func parseOfferArgs(text string) (a offerArgs, problem string) {
	a.n = 1
	for _, m := range mentionRE.FindAllStringSubmatch(text, -1) {
		if !slices.Contains(a.named, m[1]) {
			a.named = append(a.named, m[1])
		}
	}
	for _, f := range strings.Fields(mentionRE.ReplaceAllString(text, " ")) {
		switch {
		case strings.HasPrefix(f, "@"):
			return a, "I can't tell who " + code(f) + " is: pick the person from Slack's list as you type @, so the name becomes a mention."
		case strings.HasPrefix(strings.ToLower(f), "n="):
			n, err := strconv.Atoi(f[2:])
			if err != nil || n < 1 || n > maxOfferN {
				return a, fmt.Sprintf("%s: say how many meetings the offer may book, from 1 to %d, such as `n=3`.", code(f), maxOfferN)
			}
			a.n = n
		case a.event == "":
			a.event = f
		default:
			return a, "One event type only: " + code(f) + " is a second."
		}
	}
	if a.event == "" {
		return a, "Say which event type to offer."
	}
	if len(a.named) > maxOfferNamed {
		return a, fmt.Sprintf("An offer names at most %d people, and this one names %d: leave out the names, and anyone who sees the card can book, or make one offer for each group.", maxOfferNamed, len(a.named))
	}
	// Each person books one meeting of an offer: more meetings than people
	// named would never all be booked.
	if k := len(a.named); k > 0 && a.n > k {
		people := strconv.Itoa(k) + " people"
		if k == 1 {
			people = "1 person"
		}
		return a, fmt.Sprintf("`n=%d` asks for %d meetings, but the offer names %s and each person books one: say `n=%d`, name more people, or name nobody, so that anyone here can book.", a.n, a.n, people, k)
	}
	return a, ""
}

// offerCommand answers `offer`: argument problems in the ack; the card is
// posted into the conversation through the response_url.
func (b *Bot) offerCommand(later *jobs, c call) any {
	cmd := escape(c.Command)
	args, problem := parseOfferArgs(strings.Join(c.args, " "))
	if problem != "" {
		return b.ephemeral(helpMessage(c.Command, problem+fmt.Sprintf(" For example: `%s offer intro-call @grace` (see `%s types`).", cmd, cmd)))
	}
	if b.cfg.Offers == nil {
		return b.ephemeral(message{Text: "Offers are not set up on this bookbot.", Blocks: []slack.Block{section("Offers are not set up on this bookbot: it has no state store for them. The operator can find out why in bookbot's log.")}})
	}
	if c.ResponseURL == "" {
		return b.ephemeral(message{Text: "An offer is posted where the command is typed, and Slack gave no way to post here.", Blocks: []slack.Block{section("An offer is posted where the command is typed, and Slack gave no way to post here. Try again in a channel or a direct message.")}})
	}
	later.add("offer", func(ctx context.Context) { b.postOffer(ctx, c, args) })
	return nil
}

// postOffer makes the offer, keeps it, and posts its card in the
// conversation; what goes wrong is told to the offerer alone.
func (b *Bot) postOffer(ctx context.Context, c call, args offerArgs) {
	o, card, problem := b.makeOffer(ctx, c.UserID, c.UserName, args)
	if problem != nil {
		c.reply(*problem)
		return
	}
	card = b.mark(card)
	msg := &slack.WebhookMessage{ResponseType: slack.ResponseTypeInChannel, Text: card.Text, Blocks: &slack.Blocks{BlockSet: card.Blocks}}
	if err := b.postResponse(ctx, c.ResponseURL, msg, nil); err != nil {
		b.log.Warn("offer card not posted", "offer", o.ID, "err", err)
		b.dm(ctx, c.UserID, message{Text: "Your offer could not be posted. Try again.", Blocks: []slack.Block{
			section(":warning: Your offer of *" + short(o.Title) + "* could not be posted in the conversation (" + escape(err.Error()) + "). Type the command again."),
		}})
		return
	}
	b.log.Info("offer posted", "offer", o.ID, "user", c.UserID, "event", o.Event, "named", len(args.named), "n", args.n)
}

// offerMetaOf is the metadata of an offer modal, and whether bookbot
// signed it.
func (b *Bot) offerMetaOf(v slack.View) (offerMeta, bool) {
	s, ok := b.signer.open(v.CallbackID, v.PrivateMetadata)
	var m offerMeta
	if !ok || json.Unmarshal([]byte(s), &m) != nil || m.Offer == "" {
		return offerMeta{}, false
	}
	return m, true
}

// offerAt reads the offer a click is about and says whether the clicker
// may go on: when not, they (and, when the offer is closed, the card)
// were told why, and nothing else happens.
func (b *Bot) offerAt(ctx context.Context, id, user, card string, reply func(message)) (offer.Offer, bool) {
	if b.cfg.Offers == nil {
		reply(offerGoneMessage())
		return offer.Offer{}, false
	}
	o, err := b.cfg.Offers.Get(ctx, id)
	switch {
	case errors.Is(err, offer.ErrNotFound):
		reply(offerGoneMessage())
		return o, false
	case err != nil:
		reply(b.failed("This offer could not be read", err))
		return o, false
	case !o.Named(user):
		reply(notNamedMessage(o))
		return o, false
	case o.Offerer != "" && !b.cfg.Allowed(o.Offerer):
		reply(offerGoneMessage())
		return o, false
	}
	if err := o.Open(b.cfg.Now()); err != nil {
		reply(offerClosedMessage(o, err))
		b.showCard(ctx, o, card, offerCard(o, nil, time.UTC, b.cfg.Now()))
		return o, false
	}
	if u, ok := o.UseOf(user); ok {
		reply(oneEachMessage(o, u, b.users.zone(ctx, user)))
		return o, false
	}
	return o, true
}

// offerSlotPressed answers a time on the card, one picked among "More
// times", or Try again on a time not booked: the form to book it, with the
// clicker's name, email and zone from their Slack profile.
func (b *Bot) offerSlotPressed(later *jobs, p press) {
	value := p.a.Value
	if p.a.ActionID == actionOfferPick {
		value = p.a.SelectedOption.Value
	}
	id, start, ok := parseOfferValue(value)
	if !ok {
		return
	}
	card, viewID := p.cb.ResponseURL, ""
	if p.a.ActionID == actionOfferRetry {
		card = "" // pressed on an outcome, not on the card: the form's own tells where the card is
	}
	if p.inModal() {
		// The times of "More times", or Try again in a form's outcome.
		switch cid := p.cb.View.CallbackID; {
		case cid == callbackOfferMore, cid == callbackOfferMoreOld:
		case cid == callbackOfferBook && p.a.ActionID == actionOfferRetry:
		default:
			return
		}
		meta, ours := b.offerMetaOf(p.cb.View)
		if !ours || meta.Offer != id {
			return
		}
		card, viewID = meta.Card, p.cb.View.ID
	}
	later.add("offer-slot", func(ctx context.Context) {
		o, ok := b.offerAt(ctx, id, p.user, card, p.reply)
		if !ok {
			return
		}
		if slices.ContainsFunc(o.Uses, func(u offer.Use) bool { return u.Start == start }) {
			p.reply(message{Text: "That time is taken. Pick another.", Blocks: []slack.Block{section(":information_source: That time was booked from this offer already. Pick another.")}})
			return
		}
		prof := b.profile(ctx, p.user)
		view := offerForm(o, start, prof, offerMeta{Offer: o.ID, Start: start, Card: card, Zone: prof.zone.String()})
		if viewID != "" {
			if err := b.updateView(ctx, view, viewID); err != nil {
				b.log.Info("views.update failed", "err", err)
			}
			return
		}
		b.openView(ctx, p.cb.TriggerID, *b.markView(&view), "booking form", p.reply)
	})
}

// offerMorePressed opens every free time of the offer's event, for the
// person who pressed it, in a modal.
func (b *Bot) offerMorePressed(later *jobs, p press) {
	id, card := p.a.Value, p.cb.ResponseURL
	later.add("offer-more", func(ctx context.Context) {
		o, ok := b.offerAt(ctx, id, p.user, card, p.reply)
		if !ok {
			return
		}
		meta := offerMeta{Offer: o.ID, Card: card}
		viewID, ok := b.openView(ctx, p.cb.TriggerID, *b.markView(ptr(offerTimesView(o, nil, nil, time.UTC, b.cfg.Now(), meta))), "list of times", p.reply)
		if !ok {
			return
		}
		loc := b.users.zone(ctx, p.user)
		meta.Zone = loc.String()
		var problem error
		slots, err := b.calendarSlots(ctx, o)
		if err != nil {
			b.log.Warn("free slots could not be loaded for an offer", "offer", o.ID, "err", err)
			problem = err
			b.turnedAway(ctx, o, p.user, err) // tells the offerer when it is theirs to fix
		}
		view := offerTimesView(o, slots, problem, loc, b.cfg.Now(), meta)
		view.PrivateMetadata = meta.encode()
		if err := b.updateView(ctx, *b.markView(&view), viewID); err != nil {
			b.log.Info("views.update failed", "err", err)
		}
	})
}

// offerWithdrawPressed withdraws the offer when its offerer pressed it.
func (b *Bot) offerWithdrawPressed(later *jobs, p press) {
	id, card := p.a.Value, p.cb.ResponseURL
	later.add("offer-withdraw", func(ctx context.Context) {
		if b.cfg.Offers == nil {
			p.reply(offerGoneMessage())
			return
		}
		o, err := b.cfg.Offers.Update(ctx, id, offer.Withdraw(p.user, b.cfg.Now()))
		switch {
		case errors.Is(err, offer.ErrNotNamed):
			p.reply(message{Text: "Only the person who made this offer can withdraw it.", Blocks: []slack.Block{
				section(":lock: Only " + offerer(o) + " can withdraw this offer."),
			}})
			return
		case errors.Is(err, offer.ErrNotFound):
			p.reply(offerGoneMessage())
			return
		case err != nil:
			p.reply(b.failed("The offer could not be withdrawn", err))
			return
		}
		b.log.Info("offer withdrawn", "offer", o.ID, "user", p.user)
		b.showCard(ctx, o, card, offerCard(o, nil, time.UTC, b.cfg.Now()))
	})
}

// submitOffer checks the offer's form in memory and answers at once: field
// errors, or "Booking…" while the time is taken, checked and booked.
func (b *Bot) submitOffer(later *jobs, cb slack.InteractionCallback) any {
	meta, ours := b.offerMetaOf(cb.View)
	if !ours {
		b.log.Warn("offer form submission refused: its metadata does not carry bookbot's signature", "user", cb.User.ID, "view_id", cb.View.ID)
		return slack.NewErrorsViewSubmissionResponse(map[string]string{
			actionName: "This form did not come from bookbot as it is, so nothing was booked. Close it and pick the time on the card again.",
		})
	}
	in := readInputs(cb.View)
	errs := map[string]string{}
	if in.name == "" {
		errs[actionName] = "Enter your name."
	}
	if p := booking.EmailProblem(in.email); p != "" {
		errs[actionEmail] = p
	}
	if n := booking.NoteLength(in.note); n > booking.MaxNote {
		errs[actionNote] = fmt.Sprintf("The note is %d characters long (an emoji counts as two); the limit is %d.", n, booking.MaxNote)
	}
	if len(errs) > 0 {
		return slack.NewErrorsViewSubmissionResponse(errs)
	}
	pending := offerPendingView(in.name)
	pending.ExternalID = fmt.Sprintf("offer-%s-%d", cb.View.ID, b.cfg.Now().UnixNano())
	user, key := cb.User.ID, cb.View.ID
	later.add("offer-book", func(ctx context.Context) {
		m, card := b.bookOffer(ctx, user, key, meta, in)
		// The booking may have used up the work's time: telling the
		// person and the card gets its own.
		ctxReport, cancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
		defer cancel()
		if err := b.updateSubmitted(ctxReport, *b.markView(ptr(offerOutcomeView(m, meta))), pending.ExternalID); err != nil {
			b.log.Info("offer outcome view not shown (modal closed?)", "err", slackErr(err))
			b.dm(ctxReport, user, m)
		}
		if card != nil {
			b.showCard(ctxReport, card.o, meta.Card, card.m)
			// Its step ends once the person heard what they booked.
			b.endStep(ctxReport, card.o)
		}
	})
	return slack.NewUpdateViewSubmissionResponse(b.markView(pending))
}

// errOfferTimeGivenBack is why a form books nothing when the offers'
// sweep gave its time back while it waited (SettleOffers).
var errOfferTimeGivenBack error = said("This form waited so long that its time was given back: nothing was sent. Pick a time on the card again")

// bookOffer takes the time from the offer, checks it is still free and
// books it on the offerer's calendar, through the write path every booking
// takes (journal, limits, verification; never retried). It returns what
// the clicker is told and, when the card must change, its new face.
func (b *Bot) bookOffer(ctx context.Context, user, key string, meta offerMeta, in inputs) (message, *cardView) {
	now := b.cfg.Now()
	zone, err := booking.LoadZone(meta.Zone)
	if err != nil {
		zone = time.UTC
	}
	if b.cfg.Offers == nil {
		return offerGoneMessage(), nil
	}
	o, err := b.cfg.Offers.Update(ctx, meta.Offer, offer.Take(offer.Use{Key: key, By: user, Name: in.name, Start: meta.Start, At: now, Owner: b.replica, Card: meta.Card}))
	if err == nil && o.Offerer != "" && !b.cfg.Allowed(o.Offerer) {
		b.release(ctx, o.ID, key)
		return offerGoneMessage(), nil
	}
	switch {
	case errors.Is(err, offer.ErrNotFound):
		return offerGoneMessage(), nil
	case errors.Is(err, offer.ErrNotNamed):
		return notNamedMessage(o), nil
	case errors.Is(err, offer.ErrOneEach):
		u, _ := o.UseOf(user)
		return oneEachMessage(o, u, zone), nil
	case errors.Is(err, offer.ErrUsedUp), errors.Is(err, offer.ErrWithdrawn), errors.Is(err, offer.ErrExpired):
		return offerClosedMessage(o, err), &cardView{o, offerCard(o, nil, time.UTC, now)}
	case errors.Is(err, offer.ErrTaken):
		b.log.Info("offer time held by another form", "offer", meta.Offer, "user", user)
		return offerTakenMessage(), b.freshCard(ctx, meta.Offer)
	case err != nil:
		return b.failed("Nothing was booked: bookbot could not read the offer", err, button(actionOfferRetry, "Try again", offerValue(meta.Offer, meta.Start))), nil
	}
	refresh := func(slots []booking.Slot) *cardView {
		o, err := b.cfg.Offers.Get(ctx, o.ID)
		if err != nil {
			return nil
		}
		return &cardView{o, offerCard(o, slots, b.offererZone(ctx, o), b.cfg.Now())}
	}
	cal, err := b.offerCalendar(ctx, o)
	if err != nil {
		b.release(ctx, o.ID, key)
		return b.offerNotSent(ctx, o, user, meta.Start, zone, "its calendar could not be reached", err), nil
	}
	slots, err := cal.Slots(ctx, o.Event)
	if err != nil {
		b.release(ctx, o.ID, key)
		return b.offerNotSent(ctx, o, user, meta.Start, zone, "the time could not be checked", err), nil
	}
	slot, free := shownSlots{slots: slots}.find(meta.Start)
	if !free {
		b.release(ctx, o.ID, key)
		b.log.Info("offer time taken meanwhile", "offer", o.ID, "user", user)
		return offerTakenMessage(), refresh(slots)
	}
	// From here the write's outcome settles the time: it is recorded as
	// sent first, so that a time whose process stopped before this point
	// is known to have booked nothing, and is given back (SettleOffers).
	if _, err := b.cfg.Offers.Update(ctx, o.ID, offer.Send(key, b.cfg.Now())); err != nil {
		if errors.Is(err, offer.ErrSettled) {
			return b.failed("Not booked", errOfferTimeGivenBack), b.freshCard(ctx, o.ID)
		}
		b.release(ctx, o.ID, key)
		return b.offerNotSent(ctx, o, user, meta.Start, zone, "bookbot could not record that it was booking it", err), nil
	}
	res, err := cal.Create(booking.WithActor(ctx, user), booking.CreateRequest{Slot: slot, Name: in.name, Email: in.email, TimeZone: zone.String(), Note: in.note})
	if res != nil {
		b.log.Info("offer booking finished", "offer", o.ID, "user", user, "result", res)
	}
	switch {
	case res != nil && res.Outcome == booking.AlreadyBooked && (res.Prior == nil || res.Prior.Actor != user):
		// The booking the journal or the list shows at this time for this
		// address was not asked for by this person (another's, since
		// moved, perhaps): it is not theirs to see or cancel.
		b.release(ctx, o.ID, key)
		b.log.Info("offer time already booked for that address by someone else; given back", "offer", o.ID, "user", user)
		return bookedAlreadyMessage(o, offer.Use{Start: meta.Start}, zone, b.cfg.Now()), nil
	case res != nil && res.Booking != nil && (res.Outcome == booking.Confirmed || res.Outcome == booking.AlreadyBooked):
		bk := *res.Booking
		// On a store error the offer as taken still names the offerer and
		// the meeting: both messages are sent in full.
		confirmed, err := b.cfg.Offers.Update(ctx, o.ID, offer.Confirm(key, bk.ID, bk.End))
		if err != nil {
			b.log.Error("a booking made from an offer could not be recorded in it", "offer", meta.Offer, "booking", bk.ID, "err", err)
		} else {
			o = confirmed
		}
		if o.Offerer != "" {
			b.dm(ctx, o.Offerer, offerBookedDM(o, bk, user, in.name, in.email, b.offererZone(ctx, o)))
		}
		var card *cardView
		switch {
		case err == nil && o.Left() > 0:
			card = refresh(withoutTaken(slots, o))
		case err == nil:
			card = refresh(nil)
		}
		return offerBookedMessage(o, bk, in.email, zone), card
	case res != nil && res.NeedsHuman():
		// It may be booked: the time stays taken from the offer, and the
		// offerer, whose calendar it is, is asked to check: by the review
		// report when it reaches them, which has both actions, else by
		// the outcome.
		if o.Offerer != "" && !b.reviewsByDMTo(ctx, o.Offerer) {
			b.dm(ctx, o.Offerer, createOutcome(modalMeta{Event: o.Event, Start: meta.Start, Name: in.name, Email: in.email, TZ: zone.String(), Zone: zone.String()}, res, nil, b.offererZone(ctx, o), b.cfg.Now(), b.titles(ctx, cal), b.cfg.BookingPage, b.noticed(ctx, cal, o.Event)))
		}
		b.ReportReviews(ctx)
		return offerUnclearMessage(o), nil
	}
	b.release(ctx, o.ID, key)
	why := err
	if res != nil && why == nil {
		why = res.Err // a refusal of the offerer's key, say
	}
	if m, ok := b.turnedAway(ctx, o, user, why); ok {
		return m, nil
	}
	var card *cardView
	if res != nil && res.Conflict() == booking.ConflictTimeNotFree {
		card = refresh(withoutTaken(slots, o))
	}
	return offerNotBookedMessage(o, meta.Start, res, err, zone, now), card
}

// offerNotSent is what someone booking o's time start is told when
// nothing was sent because of err (why, for the log): in their words when
// it is o's calendar's problem, which is its offerer's to fix
// (turnedAway), else what was not booked, why, and Try again.
func (b *Bot) offerNotSent(ctx context.Context, o offer.Offer, user, start string, zone *time.Location, why string, err error) message {
	if m, ok := b.turnedAway(ctx, o, user, err); ok {
		return m
	}
	b.log.Warn("nothing was booked from an offer: "+why, "offer", o.ID, "user", user, "err", err)
	return offerNotBookedMessage(o, start, nil, err, zone, b.cfg.Now())
}

// release gives the time back to the offer: nothing was booked.
func (b *Bot) release(ctx context.Context, id, key string) {
	if _, err := b.cfg.Offers.Update(context.WithoutCancel(ctx), id, offer.Release(key)); err != nil {
		b.log.Warn("an offer's time could not be given back", "offer", id, "err", err)
	}
}

// The offer's messages and views.

// offerForm is the form that books time start from the offer: the time in
// the clicker's zone, their name and email from Slack, a note.
func offerForm(o offer.Offer, start string, p person, meta offerMeta) slack.ModalViewRequest {
	t, _ := time.Parse(time.RFC3339Nano, start)
	end := t.Add(time.Duration(o.Minutes) * time.Minute)
	name := slack.NewPlainTextInputBlockElement(plain("Your name"), actionName)
	name.InitialValue, name.MaxLength = p.name, 200
	email := slack.NewEmailTextInputBlockElement(plain("you@example.com"), actionEmail)
	email.InitialValue = p.email
	note := slack.NewPlainTextInputBlockElement(plain("Agenda, context, links…"), actionNote)
	note.Multiline, note.MaxLength = true, booking.MaxNote
	shared := "the calendar's owner"
	if o.Offerer != "" && o.Name != "" {
		shared = clip(o.Name, 100)
	}
	noteBlock := slack.NewInputBlock(actionNote, plain("Note"), plain("Shared with "+shared+"."), note)
	noteBlock.Optional = true
	blocks := []slack.Block{
		section(fmt.Sprintf("*%s*%s\n%s", short(o.Title), withHost(o, true), span(t, end, p.zone))),
		slack.NewInputBlock(actionName, plain("Your name"), nil, name),
		slack.NewInputBlock(actionEmail, plain("Your email"), plain("The invitation goes to this address."), email),
		noteBlock,
		contextLine("Your time zone, from your Slack profile: " + zoneName(p.zone, t, end) + "."),
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      callbackOfferBook,
		Title:           plain("Book a time"),
		Submit:          plain("Book"),
		Close:           plain("Cancel"),
		Blocks:          slack.Blocks{BlockSet: blocks},
		PrivateMetadata: meta.encode(),
	}
}

// offerTimesView is "More times": every free time of the offer's event
// not taken from it, a select a day, in the clicker's zone. slots nil:
// still loading, or problem says why there are none.
func offerTimesView(o offer.Offer, slots []booking.Slot, problem error, loc *time.Location, now time.Time, meta offerMeta) slack.ModalViewRequest {
	blocks := []slack.Block{section(fmt.Sprintf("*%s* (%d min)%s", short(o.Title), o.Minutes, withHost(o, true)))}
	switch {
	case problem != nil:
		if text, _, ok := offerCalendarWords(o, problem); ok {
			blocks = append(blocks, section(":lock: "+text))
			break
		}
		blocks = append(blocks, section(":warning: "+escape("The free times could not be loaded. "+failureText(problem))))
	case slots == nil:
		blocks = append(blocks, section(":hourglass_flowing_sand: Loading free times…"))
	default:
		var free []booking.Slot
		for _, s := range withoutTaken(slots, o) {
			if s.Start.After(now) {
				free = append(free, s)
			}
		}
		days := groupByDay(free, loc, now)
		if len(days) == 0 {
			blocks = append(blocks, section("No free times in the next 14 days."))
		} else {
			blocks = append(blocks, contextLine("Times in "+zoneName(loc, days[0].start(), days[len(days)-1].end())+". Pick one to book it."))
		}
		for _, d := range days[:min(len(days), 90)] {
			changes := len(d.zones(loc)) > 1
			var opts []*slack.OptionBlockObject
			for _, s := range d.slots[:min(len(d.slots), 100)] {
				opts = append(opts, slack.NewOptionBlockObject(offerValue(o.ID, s.RawStart()), plain(slotLabel(s, loc, changes)), nil))
			}
			sel := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Pick a time"), actionOfferPick, opts...)
			blocks = append(blocks, slack.NewSectionBlock(mrkdwn(fmt.Sprintf("*%s* · %d free", d.label, len(d.slots))), nil, slack.NewAccessory(sel)))
		}
	}
	return slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      callbackOfferMore,
		Title:           plain("More times"),
		Close:           plain("Close"),
		Blocks:          slack.Blocks{BlockSet: blocks},
		PrivateMetadata: meta.encode(),
	}
}

// offerPendingView is the form's "Booking…" while the time is booked.
func offerPendingView(name string) *slack.ModalViewRequest {
	return &slack.ModalViewRequest{
		Type:       slack.VTModal,
		CallbackID: callbackOfferBook,
		Title:      plain("Book a time"),
		Close:      plain("Close"),
		Blocks:     slack.Blocks{BlockSet: []slack.Block{section(fmt.Sprintf(":hourglass_flowing_sand: Booking for %s…\nYou can close this window: if it closes before the outcome is shown, the outcome comes to you as a message from bookbot.", short(name)))}},
	}
}

// What a clicker is told. Each says what happened and that nothing else
// was sent; none offers more than this offer.

func notNamedMessage(o offer.Offer) message {
	text := "This offer is for " + mentions(o.For) + ": nothing was sent. Ask " + offerer(o) + " for a time of your own."
	return message{Text: text, Blocks: []slack.Block{section(":lock: " + text)}}
}

func offerClosedMessage(o offer.Offer, why error) message {
	var text, fallback string
	switch {
	case errors.Is(why, offer.ErrUsedUp):
		text = "This offer is already booked: nothing was sent. Ask " + offerer(o) + " for another time."
	case errors.Is(why, offer.ErrWithdrawn) && o.Offerer == "":
		text = "This offer was withdrawn: nothing was sent. Ask " + offerer(o) + " for another time."
	case errors.Is(why, offer.ErrWithdrawn):
		text = mention(o.Offerer) + " withdrew this offer: nothing was sent. Ask them for another time."
	default:
		text = "This offer expired " + moment(o.Expires, time.UTC) + ": nothing was sent. Ask " + offerer(o) + " for a new one."
		fallback = "This offer expired " + o.Expires.UTC().Format(momentLayout) + ": nothing was sent. Ask " + offerer(o) + " for a new one."
	}
	return message{Text: firstNonEmpty(fallback, text), Blocks: []slack.Block{section(":information_source: " + text)}}
}

// oneEachMessage answers someone who took u from the offer already: each
// person books one meeting of an offer.
func oneEachMessage(o offer.Offer, u offer.Use, loc *time.Location) message {
	next := "Each person books one meeting of an offer: ask " + offerer(o) + " for another."
	if u.Booking == "" {
		text := "Your booking from this offer is still being made or checked: nothing else was sent. " + next
		return message{Text: text, Blocks: []slack.Block{section(":hourglass_flowing_sand: " + text)}}
	}
	when := ""
	if start, err := time.Parse(time.RFC3339Nano, u.Start); err == nil && !u.End.IsZero() {
		when = ", " + span(start, u.End, loc)
	}
	text := "You already booked a meeting from this offer" + when + ": nothing was sent. " + next
	return message{Text: "You already booked a meeting from this offer: nothing was sent. " + next, Blocks: []slack.Block{
		section(":information_source: " + text),
		slack.NewActionBlock("offer_booked_actions", offerCancelButton(o.ID, u.Booking, "Cancel your booking…")),
	}}
}

func offerTakenMessage() message {
	text := "*Not booked: that time was just taken.* Nothing was sent. The card now shows the times still free: pick another there."
	return message{Text: "Not booked: that time was just taken. Pick another on the card.", Blocks: []slack.Block{section(":x: " + text)}}
}

func offerUnclearMessage(o offer.Offer) message {
	text := fmt.Sprintf("*Not sure it was booked.* The booking service did not answer clearly. Do not book it again: %s has been told and will check their calendar.", offerer(o))
	who := "the calendar's owner"
	if o.Offerer != "" {
		who = short(o.Name)
	}
	return message{Text: "Not sure it was booked: " + who + " will check.", Blocks: []slack.Block{section(":warning: " + text)}}
}

// offerNotBookedMessage tells whoever booked from o what was not booked
// (the time start, in zone where now is), why, and what to do next: Try
// again, which opens the form for the same time, where another try may
// go through, and else whom to ask.
func offerNotBookedMessage(o offer.Offer, start string, res *booking.Result, err error, zone *time.Location, now time.Time) message {
	why := failureText(err)
	again := "Try again"
	switch {
	case res == nil:
	case res.Outcome == booking.DryRun:
		why, again = "This is a dry run: bookbot sends no bookings. Ask {ask} about it.", ""
	case res.Outcome == booking.NotBooked && res.Conflict() == booking.ConflictTimeNotFree:
		why, again = "That time was just taken. The card now shows the times still free: pick another there, or ask {ask}.", ""
	case res.Outcome == booking.NotBooked && res.Conflict() == booking.ConflictRefused:
		why, again = "The booking service has not booked it yet: it answers so when you had this booking before, or when you must confirm your email address, and then it has mailed you a link that books this time. Look in your inbox before picking another time, or ask {ask}.", ""
	case res.Outcome == booking.NotBooked && res.Reason == booking.ReasonFull:
		why, again = "The booking service takes no new bookings on this calendar: it holds as many as it takes. Ask {ask}.", ""
	case res.Outcome == booking.RateLimited && res.Reason == booking.ReasonEventLimit:
		why = "The booking service takes only so many bookings of this event type an hour, from everyone, and that can take up to an hour to clear. Try again in " + waitText(res.RetryAfter) + ", or ask {ask}."
	case res.Outcome == booking.RateLimited:
		why = "The booking service takes only a few bookings at a time. Try again in " + waitText(res.RetryAfter) + "."
	case res.Outcome == booking.Rejected && res.Reason == booking.ReasonBlocked:
		why, again = "The booking service refused this booking for your email address: the calendar owner's settings may refuse it or its domain. Ask {ask}.", ""
	case res.Outcome == booking.Rejected && res.Reason == booking.ReasonUnanswered:
		why, again = "The booking service refused it without a reason: the event type may require a note or an answer this form cannot send. Add a note and try again, or ask {ask}.", "Add a note"
	case res.Outcome == booking.Rejected:
		why, again = "The booking service refused it: "+failureText(res.Err)+" Ask {ask}.", ""
	default:
		why, again = "The booking service did not book it. Pick another time on the card, or ask {ask}.", ""
	}
	what := short(o.Title) + withHost(o, false)
	plain := what
	if t, err := time.Parse(time.RFC3339Nano, start); err == nil {
		what += ", " + spanAt(t, t.Add(time.Duration(o.Minutes)*time.Minute), now, zone)
		plain += " " + atPlain(t, now, zone)
	}
	text := ":x: *Not booked:* " + what + ". " + strings.ReplaceAll(escape(why), "{ask}", offerer(o))
	blocks := []slack.Block{section(text)}
	if again != "" {
		blocks = append(blocks, slack.NewActionBlock("offer_outcome_actions", button(actionOfferRetry, again, offerValue(o.ID, start))))
	}
	return message{Text: "Not booked: " + plain + ". " + strings.ReplaceAll(escape(why), "{ask}", escape(hostName(o))), Blocks: blocks}
}
