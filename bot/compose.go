package bot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/slack-go/slack"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/offer"
)

// composeFlow is the message shortcut "Offer times…" (offer_times): on
// any message, it opens offer_compose (an event type, the people, how many
// meetings), whose submission posts an offer card into the message's
// conversation, as `offer` would, on the calendar of the person who chose
// it. The message's author is the person picked to begin with: "let's
// talk" is answered with times they can book. bookbot posts the card
// itself (chat.postMessage), so it must be in the conversation; when it
// is not, the form says so and what to do.
func composeFlow() flow {
	return flow{
		shortcuts: map[string]func(*Bot, *jobs, slack.InteractionCallback){
			callbackOfferTimes: (*Bot).offerTimesChosen,
		},
		submissions: map[string]func(*Bot, *jobs, slack.InteractionCallback) any{
			callbackOfferCompose: func(b *Bot, later *jobs, cb slack.InteractionCallback) any { return b.submitCompose(later, cb) },
		},
	}
}

// composeMeta travels in offer_compose's private_metadata, signed: where
// the card goes (the message's conversation, and its thread when the
// message was in one) and whom to pick to begin with.
type composeMeta struct {
	Channel string `json:"c"`
	Thread  string `json:"t,omitempty"`
	Author  string `json:"a,omitempty"`
}

func (m composeMeta) encode() string { b, _ := json.Marshal(m); return string(b) }

// offerTimesChosen opens the form, at once with the event types this
// process has, else loading them after.
func (b *Bot) offerTimesChosen(later *jobs, cb slack.InteractionCallback) {
	user, trigger := cb.User.ID, cb.TriggerID
	meta := composeMeta{Channel: cb.Channel.ID, Thread: cb.Message.ThreadTimestamp, Author: cb.Message.User}
	if meta.Author == user || cb.Message.BotID != "" {
		meta.Author = "" // an offer to oneself, or to a bot, is no one's
	}
	reply := b.responder(cb.ResponseURL, user, false)
	types, _, fresh := b.recentTypes(user)
	later.add("compose", func(ctx context.Context) {
		if b.cfg.Offers == nil {
			reply(message{Text: "Offers are not set up on this bookbot.", Blocks: []slack.Block{section("Offers are not set up on this bookbot: it has no state store for them. The operator can find out why in bookbot's log.")}})
			return
		}
		if fresh {
			b.openView(ctx, trigger, composeView(types, "", meta), "offer form", reply)
			return
		}
		viewID, ok := b.openView(ctx, trigger, composeView(nil, "", meta), "offer form", reply)
		if !ok {
			return
		}
		problem := ""
		cal, err := b.calendarFor(ctx, user)
		if err == nil {
			types, err = cal.types.get(ctx)
		}
		if err != nil {
			b.log.Warn("event types could not be loaded for the offer form", "user", user, "err", err)
			problem, types = "The event types could not be loaded. "+failureText(err), []booking.EventType{}
			if nc, isNC := errors.AsType[*NoCalendarError](err); isNC {
				problem = nc.Error() + ": " + b.cfg.Command + " connect."
			}
		}
		if err := b.updateView(ctx, composeView(types, problem, meta), viewID); err != nil {
			b.log.Info("views.update failed", "err", err)
		}
	})
}

// submitCompose checks the form in memory and answers at once: field
// errors, or "Posting…" while the offer is made and posted.
func (b *Bot) submitCompose(later *jobs, cb slack.InteractionCallback) any {
	s, ours := b.signer.open(cb.View.CallbackID, cb.View.PrivateMetadata)
	var meta composeMeta
	if !ours || json.Unmarshal([]byte(s), &meta) != nil || meta.Channel == "" {
		b.log.Warn("offer form submission refused: its metadata does not carry bookbot's signature", "user", cb.User.ID, "view_id", cb.View.ID)
		return slack.NewErrorsViewSubmissionResponse(map[string]string{actionEventType: "This form did not come from bookbot as it is, so nothing was posted. Close it and choose Offer times… on the message again."})
	}
	var args offerArgs
	if cb.View.State != nil {
		v := cb.View.State.Values
		args.event = v[actionEventType][actionEventType].SelectedOption.Value
		for _, u := range v[actionPeople][actionPeople].SelectedUsers {
			if !slices.Contains(args.named, u) {
				args.named = append(args.named, u)
			}
		}
		args.n, _ = strconv.Atoi(v[actionCount][actionCount].SelectedOption.Value)
	}
	errs := map[string]string{}
	switch k := len(args.named); {
	case args.event == "":
		errs[actionEventType] = "Pick the event type to offer."
	case args.n < 1 || args.n > maxOfferN:
		errs[actionCount] = fmt.Sprintf("Pick from 1 to %d meetings.", maxOfferN)
	case k > maxOfferNamed:
		errs[actionPeople] = fmt.Sprintf("An offer names at most %d people, and this one names %d: pick fewer, or nobody, so that anyone there can book.", maxOfferNamed, k)
	case k > 0 && args.n > k:
		people := strconv.Itoa(k) + " people"
		if k == 1 {
			people = "1 person"
		}
		errs[actionCount] = fmt.Sprintf("Each person books one meeting, and you picked %s: pick %d or fewer meetings, more people, or nobody, so that anyone there can book.", people, k)
	}
	if len(errs) > 0 {
		return slack.NewErrorsViewSubmissionResponse(errs)
	}
	pending := composePendingView()
	pending.ExternalID = fmt.Sprintf("compose-%s-%d", cb.View.ID, b.cfg.Now().UnixNano())
	user, name := cb.User.ID, cb.User.Name
	later.add("compose-post", func(ctx context.Context) {
		m := b.composeOffer(ctx, user, name, meta, args)
		ctxReport, cancel := context.WithTimeout(context.WithoutCancel(ctx), reportTimeout)
		defer cancel()
		if err := b.updateSubmitted(ctxReport, *b.markView(ptr(composeOutcomeView(m))), pending.ExternalID); err != nil {
			b.log.Info("offer form outcome not shown (modal closed?)", "err", slackErr(err))
			b.dm(ctxReport, user, m)
		}
	})
	return slack.NewUpdateViewSubmissionResponse(b.markView(pending))
}

// composeOffer makes the offer and posts its card in the conversation of
// meta; what it returns is what the person who chose it is told.
func (b *Bot) composeOffer(ctx context.Context, user, name string, meta composeMeta, args offerArgs) message {
	o, card, problem := b.makeOffer(ctx, user, name, args)
	if problem != nil {
		return *problem
	}
	opts := noUnfurl()
	if meta.Thread != "" {
		opts = append(opts, slack.MsgOptionTS(meta.Thread))
	}
	channel, ts, err := b.post(ctx, meta.Channel, card, opts...)
	if err != nil {
		b.log.Warn("offer card not posted", "offer", o.ID, "channel", meta.Channel, "err", slackErr(err))
		// Perhaps posted after all, when Slack's answer was lost: nobody
		// books from it.
		if _, werr := b.cfg.Offers.Update(ctx, o.ID, offer.Withdraw(user, b.cfg.Now())); werr != nil {
			b.log.Warn("an offer whose card was not posted could not be withdrawn", "offer", o.ID, "err", werr)
		}
		return composeNotPostedMessage(o.Title, b.cfg.Command, err)
	}
	if _, err := b.cfg.Offers.Update(ctx, o.ID, offer.Placed(channel, ts)); err != nil {
		b.log.Error("an offer's card was posted, but where was not recorded: it changes only when someone clicks it", "offer", o.ID, "err", err)
	}
	b.log.Info("offer posted from a message's menu", "offer", o.ID, "user", user, "event", o.Event, "named", len(args.named), "n", args.n)
	return composePostedMessage(o.Title, args.named)
}

// The form and what it says.

// composeView is the form: the person's calendar's bookable event types
// (nil: still loading; problem says why there are none), the people
// (meta.Author to begin with) and how many meetings.
func composeView(types []booking.EventType, problem string, meta composeMeta) slack.ModalViewRequest {
	v := slack.ModalViewRequest{
		Type:            slack.VTModal,
		CallbackID:      callbackOfferCompose,
		Title:           plain("Offer times"),
		Close:           plain("Cancel"),
		PrivateMetadata: meta.encode(),
	}
	var bookable []*slack.OptionBlockObject
	for _, et := range types {
		if et.Bookable() && len(bookable) < 100 {
			bookable = append(bookable, slack.NewOptionBlockObject(et.Slug, plain(fmt.Sprintf("%s (%d min)", clip(et.Title, 60), et.DurationMinutes)), nil))
		}
	}
	intro := section("A card of your free times, posted in this conversation: the people you pick (anyone there, when you pick nobody) book one each with a click.")
	switch {
	case types == nil:
		v.Blocks = slack.Blocks{BlockSet: []slack.Block{intro, section(":hourglass_flowing_sand: Loading your event types…")}}
		return v
	case problem != "":
		v.Blocks = slack.Blocks{BlockSet: []slack.Block{intro, section(":warning: " + escape(problem))}}
		return v
	case len(bookable) == 0:
		v.Blocks = slack.Blocks{BlockSet: []slack.Block{intro, section("Your calendar has no event type bookbot can book (one-on-one): nothing to offer.")}}
		return v
	}
	event := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("Pick an event type"), actionEventType, bookable...)
	if len(bookable) == 1 {
		event.InitialOption = bookable[0]
	}
	people := slack.NewOptionsMultiSelectBlockElement(slack.MultiOptTypeUser, plain("Anyone in the conversation"), actionPeople)
	if meta.Author != "" {
		people.InitialUsers = []string{meta.Author}
	}
	peopleBlock := slack.NewInputBlock(actionPeople, plain("For"), plain("Nobody picked: anyone in the conversation can book."), people)
	peopleBlock.Optional = true
	var counts []*slack.OptionBlockObject
	for n := 1; n <= maxOfferN; n++ {
		counts = append(counts, slack.NewOptionBlockObject(strconv.Itoa(n), plain(plural(n, "meeting")), nil))
	}
	count := slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, plain("How many"), actionCount, counts...)
	count.InitialOption = counts[0]
	v.Submit = plain("Post offer")
	v.Blocks = slack.Blocks{BlockSet: []slack.Block{
		intro,
		slack.NewInputBlock(actionEventType, plain("Event type"), nil, event),
		peopleBlock,
		slack.NewInputBlock(actionCount, plain("How many meetings"), plain("Each person books one."), count),
	}}
	return v
}

// composePendingView is the form's "Posting…" while the offer is made.
func composePendingView() *slack.ModalViewRequest {
	return &slack.ModalViewRequest{
		Type:       slack.VTModal,
		CallbackID: callbackOfferCompose,
		Title:      plain("Offer times"),
		Close:      plain("Close"),
		Blocks:     slack.Blocks{BlockSet: []slack.Block{section(":hourglass_flowing_sand: Posting your offer…\nYou can close this window: the outcome then comes to you as a message from bookbot.")}},
	}
}

// composeOutcomeView shows in the form what happened: m's words, without
// its buttons, which belong in a message.
func composeOutcomeView(m message) slack.ModalViewRequest {
	var blocks []slack.Block
	for _, bl := range m.Blocks {
		if bl.BlockType() != slack.MBTAction {
			blocks = append(blocks, bl)
		}
	}
	return slack.ModalViewRequest{
		Type:       slack.VTModal,
		CallbackID: callbackOfferCompose,
		Title:      plain("Offer times"),
		Close:      plain("Done"),
		Blocks:     slack.Blocks{BlockSet: blocks},
	}
}

// composePostedMessage says the card is in the conversation.
func composePostedMessage(title string, named []string) message {
	who := "anyone there can book one time"
	if len(named) > 0 {
		who = mentions(named) + " can book one time"
		if len(named) > 1 {
			who += " each"
		}
	}
	text := fmt.Sprintf(":white_check_mark: *Posted:* your offer of *%s* is in the conversation: %s. You get a message from bookbot for each booking.", short(title), who)
	return message{Text: "Posted: your offer of " + short(title) + " is in the conversation.", Blocks: []slack.Block{section(text)}}
}

// composeNotPostedMessage says why the card is not in the conversation,
// and what to do instead.
func composeNotPostedMessage(title, cmd string, err error) message {
	how := fmt.Sprintf("Type `%s offer …` in the conversation instead: Slack lets a command post anywhere.", escape(cmd))
	var why string
	switch slackErr(err) {
	case "not_in_channel":
		why = "bookbot is not a member of this conversation, so it cannot post there. Add it (`/invite @bookbot`) and choose Offer times… again, or " + lowerFirst(how)
	case "channel_not_found":
		why = "bookbot cannot post in this conversation: it is a private channel or a direct message bookbot is not part of. " + how
	case "is_archived":
		why = "This conversation is archived: nothing can be posted in it."
	default:
		why = "Slack did not take the card (" + escape(slackErr(err)) + "). Choose Offer times… again in a minute, or " + lowerFirst(how)
	}
	text := fmt.Sprintf("*Not posted:* your offer of *%s*. %s", short(title), why)
	return message{Text: "Not posted: your offer of " + short(title) + ". " + why, Blocks: []slack.Block{section(":x: " + text)}}
}

func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return string(s[0]|0x20) + s[1:]
}
