package bot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/digest"
)

// ephemeral is a slash command's ack payload: an instant reply only the
// person sees.
func (b *Bot) ephemeral(m message) map[string]any {
	m = b.mark(m)
	return map[string]any{"response_type": "ephemeral", "text": m.Text, "blocks": m.Blocks}
}

// slashCommand answers /booking. Help and argument problems are answered in
// the ack; everything that needs the booking API replies via response_url.
func (b *Bot) slashCommand(later *jobs, cmd slack.SlashCommand) any {
	ok, refusal := b.permitted(cmd.TeamID, cmd.UserID)
	if !ok {
		if refusal != nil {
			return b.ephemeral(*refusal)
		}
		return nil
	}
	name := cmd.Command
	if name == "" {
		name = b.cfg.Command
	}
	fields := strings.Fields(cmd.Text)
	verb, args := "", []string(nil)
	if len(fields) > 0 {
		verb, args = strings.ToLower(fields[0]), fields[1:]
	}
	reply := b.responder(cmd.ResponseURL, cmd.UserID, false)
	switch {
	case verb == "" || verb == "help":
		return b.ephemeral(helpMessage(name, ""))
	case verb == "types" && len(args) == 0:
		later.add("types", func(ctx context.Context) { reply(b.typesReply(ctx)) })
	case verb == "slots" && len(args) == 1:
		later.add("slots", func(ctx context.Context) { reply(b.slotsReply(ctx, cmd.UserID, args[0])) })
	case verb == "slots":
		return b.ephemeral(helpMessage(name, fmt.Sprintf("Say which event type: `%s slots <event>` (see `%s types`).", name, name)))
	case verb == "new" && len(args) <= 1:
		meta := modalMeta{}
		if len(args) == 1 {
			meta.Event = args[0]
		}
		later.add("new", func(ctx context.Context) { b.openBookingModal(ctx, cmd.TriggerID, cmd.UserID, meta, reply) })
	case verb == "list" && len(args) == 0:
		later.add("list", func(ctx context.Context) { reply(b.listReply(ctx, cmd.UserID, 0)) })
	case verb == "cancel" && len(args) == 1:
		id := args[0]
		if err := booking.ValidateBookingID(id); err != nil {
			return b.ephemeral(helpMessage(name, "That is not a booking ID: "+err.Error()+". Booking IDs are shown by `"+name+" list`."))
		}
		later.add("cancel-confirm", func(ctx context.Context) { reply(b.cancelConfirmReply(ctx, cmd.UserID, id)) })
	case verb == "cancel":
		return b.ephemeral(helpMessage(name, fmt.Sprintf("Say which booking: `%s cancel <booking-id>` (IDs are shown by `%s list`).", name, name)))
	case verb == "audit" && len(args) == 0:
		later.add("audit", func(ctx context.Context) { reply(b.auditReply(ctx, cmd.UserID)) })
	case verb == "digest" && len(args) == 0:
		later.add("digest-preview", func(ctx context.Context) {
			for _, m := range b.digestReply(ctx) {
				reply(m)
			}
		})
	default:
		return b.ephemeral(helpMessage(name, fmt.Sprintf("I don't know `%s`.", escape(strings.TrimSpace(cmd.Text)))))
	}
	return nil
}

// responder replies to the person: through the response_url when there is
// one (ephemeral, optionally replacing the message the button was on), else
// as a direct message.
func (b *Bot) responder(responseURL, userID string, replace bool) func(message) {
	return func(m message) {
		m = b.mark(m)
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		if responseURL == "" {
			b.dm(ctx, userID, m)
			return
		}
		msg := &slack.WebhookMessage{ResponseType: slack.ResponseTypeEphemeral, Text: m.Text, Blocks: &slack.Blocks{BlockSet: m.Blocks}, ReplaceOriginal: replace}
		if err := b.postResponse(ctx, responseURL, msg); err != nil {
			b.log.Warn("reply via response_url failed; sending a direct message", "err", err)
			b.dm(ctx, userID, m)
		}
	}
}

// postResponse posts to a response_url. slack-go's webhook helper checks
// only the HTTP status, but Slack refuses an expired or used response_url
// with {"ok":false,"error":…}; that must count as a failure so the reply
// comes as a direct message instead of being lost.
func (b *Bot) postResponse(ctx context.Context, responseURL string, msg *slack.WebhookMessage) error {
	body, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, responseURL, bytes.NewReader(body))
	if err != nil {
		return errors.New("response_url is not usable")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := b.cfg.HTTPClient.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // the URL is a credential of sorts; keep it out of logs
		}
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("response_url answered %s", resp.Status)
	}
	var answer struct {
		OK    *bool  `json:"ok"`
		Error string `json:"error"`
	}
	if json.Unmarshal(raw, &answer) == nil && answer.OK != nil && !*answer.OK {
		return fmt.Errorf("response_url answered %s", answer.Error)
	}
	return nil
}

func (b *Bot) typesReply(ctx context.Context) message {
	types, err := b.types.get(ctx)
	if err != nil {
		return errorMessage("The event types could not be loaded", err)
	}
	return typesMessage(types)
}

func (b *Bot) slotsReply(ctx context.Context, userID, slug string) message {
	types, err := b.types.get(ctx)
	if err != nil {
		return errorMessage("The event types could not be loaded", err)
	}
	et, ok := findType(types, slug)
	switch {
	case !ok:
		return helpMessage(b.cfg.Command, fmt.Sprintf("There is no event type %q. `%s types` lists them.", slug, b.cfg.Command))
	case !et.Bookable():
		return message{Text: et.Title + " is booked through the public booking page.", Blocks: []slack.Block{section(fmt.Sprintf("*%s* is a %s event: book it through the public booking page; the booking API does not support it reliably.", escape(et.Title), strings.ReplaceAll(string(et.SchedulingKind), "_", " ")))}}
	}
	slots, err := b.booking.Slots(ctx, slug)
	if err != nil {
		return errorMessage("The free slots could not be loaded", err)
	}
	return slotsMessage(et, slots, b.users.zone(ctx, userID), b.cfg.Now())
}

func (b *Bot) listReply(ctx context.Context, userID string, page int) message {
	list, err := b.booking.Bookings(ctx)
	if err != nil {
		return errorMessage("The bookings could not be loaded", err)
	}
	types, _ := b.types.recent()
	if types == nil {
		types, _ = b.types.get(ctx) // titles only; slugs do when this fails
	}
	return listMessage(list, types, b.users.zone(ctx, userID), page, b.cfg.Now())
}

func (b *Bot) cancelConfirmReply(ctx context.Context, userID, id string) message {
	list, err := b.booking.Bookings(ctx)
	if err != nil {
		return errorMessage("The bookings could not be loaded to show this booking", err)
	}
	types, _ := b.types.recent()
	if types == nil {
		types, _ = b.types.get(ctx) // titles only; slugs do when this fails
	}
	var found *booking.Booking
	for i := range list {
		if list[i].ID == id {
			found = &list[i]
		}
	}
	return cancelConfirmMessage(id, found, types, b.users.zone(ctx, userID), len(list) >= booking.MaxListed)
}

func (b *Bot) digestReply(ctx context.Context) []message {
	if b.cfg.Digest == nil {
		return []message{{Text: "The digest is not set up.", Blocks: []slack.Block{section("The next-day digest is not set up on this bookbot.")}}}
	}
	day := digest.Tomorrow(b.cfg.Now(), b.cfg.DigestZone)
	d, err := b.cfg.Digest.Preview(ctx, day)
	if err != nil {
		return []message{errorMessage("Tomorrow's digest could not be built", err)}
	}
	var out []message
	for _, m := range DigestMessages(d, b.cfg.IncludeEmails) {
		out = append(out, message(m))
	}
	return out
}

// interaction handles buttons, selects, modal submissions, suggestions and
// shortcuts. The returned value is the ack payload.
func (b *Bot) interaction(later *jobs, cb slack.InteractionCallback) any {
	teamID := cb.Team.ID
	if teamID == "" {
		teamID = cb.User.TeamID
	}
	ok, refusal := b.permitted(teamID, cb.User.ID)
	if !ok {
		switch cb.Type {
		case slack.InteractionTypeBlockSuggestion:
			return map[string]any{"options": []any{}}
		case slack.InteractionTypeViewSubmission:
			return slack.NewClearViewSubmissionResponse()
		}
		answerable := cb.ResponseURL != "" || cb.Type == slack.InteractionTypeShortcut
		if refusal != nil && answerable {
			// A shortcut has no response_url: the refusal comes as a DM.
			reply := b.responder(cb.ResponseURL, cb.User.ID, false)
			later.add("refusal", func(context.Context) { reply(*refusal) })
		}
		return nil
	}
	switch cb.Type {
	case slack.InteractionTypeBlockActions:
		b.blockActions(later, cb)
	case slack.InteractionTypeViewSubmission:
		if cb.View.CallbackID == callbackBooking {
			return b.submitBooking(later, cb)
		}
	case slack.InteractionTypeBlockSuggestion:
		if cb.ActionID == actionBookerTZ {
			return zoneSuggestions(cb.Value)
		}
	case slack.InteractionTypeShortcut, slack.InteractionTypeMessageAction:
		if cb.CallbackID == callbackShortcut {
			reply := b.responder("", cb.User.ID, false)
			later.add("shortcut", func(ctx context.Context) { b.openBookingModal(ctx, cb.TriggerID, cb.User.ID, modalMeta{}, reply) })
		}
	case slack.InteractionTypeViewClosed:
		b.modals.drop(cb.View.ID)
	}
	return nil
}

func (b *Bot) blockActions(later *jobs, cb slack.InteractionCallback) {
	if len(cb.ActionCallback.BlockActions) == 0 {
		return
	}
	a := cb.ActionCallback.BlockActions[0]
	user := cb.User.ID
	inModal := cb.View.ID != "" && cb.View.Type == slack.VTModal
	inHome := cb.View.ID != "" && cb.View.Type == slack.VTHomeTab
	reply := b.responder(cb.ResponseURL, user, false)
	replace := b.responder(cb.ResponseURL, user, cb.ResponseURL != "")

	switch a.ActionID {
	case actionNewBooking:
		later.add("new", func(ctx context.Context) {
			b.openBookingModal(ctx, cb.TriggerID, user, modalMeta{Event: a.Value}, reply)
		})
	case actionBookSlot:
		event, start, ok := parseSlotValue(a.SelectedOption.Value)
		if !ok {
			return
		}
		later.add("book-slot", func(ctx context.Context) {
			b.openBookingModal(ctx, cb.TriggerID, user, modalMeta{Event: event, Start: start}, reply)
		})
	case actionShowTypes:
		later.add("types", func(ctx context.Context) { reply(b.typesReply(ctx)) })
	case actionShowSlots:
		later.add("slots", func(ctx context.Context) { reply(b.slotsReply(ctx, user, a.Value)) })
	case actionListPage, actionListPrev:
		page, _ := strconv.Atoi(a.Value)
		later.add("list", func(ctx context.Context) { replace(b.listReply(ctx, user, page)) })
	case actionCancel:
		id := a.Value
		if booking.ValidateBookingID(id) != nil {
			return
		}
		if !b.creating.tryLock("cancel\x00" + id) {
			return // a double click: the first press is already cancelling
		}
		later.add("cancel", func(ctx context.Context) {
			defer b.creating.unlock("cancel\x00" + id)
			if cb.ResponseURL != "" {
				replace(message{Text: "Cancelling " + id + "…", Blocks: []slack.Block{section(":hourglass_flowing_sand: Cancelling `" + escape(id) + "`…")}})
			}
			res, err := b.booking.Cancel(booking.WithActor(ctx, user), id)
			var m message
			if err != nil {
				m = errorMessage("Nothing was cancelled", err)
			} else {
				b.log.Info("booking cancel finished", "user", user, "booking_id", id, "result", res)
				m = cancelOutcomeMessage(id, res)
			}
			replace(m)
			b.ReportReviews(ctx)
			if inHome {
				b.publishHome(ctx, user)
			}
		})
	case actionEventType, actionSlotDay, actionPickAnother:
		if !inModal {
			if a.ActionID == actionPickAnother {
				// From the outcome message the person keeps: a new modal.
				later.add("new", func(ctx context.Context) {
					b.openBookingModal(ctx, cb.TriggerID, user, modalMeta{Event: a.Value}, reply)
				})
			}
			return
		}
		f := b.formFromView(cb.View)
		switch a.ActionID {
		case actionEventType:
			f.meta.Event, f.meta.Day, f.meta.Start = a.SelectedOption.Value, "", ""
			f.slots, f.loadedAt = nil, false
		case actionSlotDay:
			f.meta.Day, f.meta.Start = a.SelectedOption.Value, ""
		case actionPickAnother:
			f.meta.Start, f.meta.Day = "", ""
			f.slots, f.loadedAt = nil, false // fresh slots
		}
		b.modals.want(cb.View.ID, f.meta.Event)
		viewID := cb.View.ID
		later.add("form", func(ctx context.Context) {
			if a.ActionID != actionSlotDay {
				// Show the loading state at once; slots can take a while.
				if _, err := b.slack.UpdateViewContext(ctx, bookingForm(f), "", "", viewID); err != nil {
					b.log.Info("views.update failed", "err", err)
				}
			}
			b.refreshForm(ctx, viewID, user, f, false)
		})
	case actionRecheck:
		var meta modalMeta
		if json.Unmarshal([]byte(a.Value), &meta) != nil {
			return
		}
		viewID := ""
		if inModal {
			viewID = cb.View.ID
		}
		later.add("recheck", func(ctx context.Context) {
			m := b.recheck(ctx, meta)
			if viewID != "" {
				if _, err := b.slack.UpdateViewContext(ctx, outcomeView(meta, m), "", "", viewID); err != nil {
					b.log.Info("views.update failed", "err", err)
				}
				b.dm(ctx, user, m)
				return
			}
			replace(m)
		})
	case actionHomeRefresh:
		later.add("home", func(ctx context.Context) { b.publishHome(ctx, user) })
	case actionReviewed:
		b.markReviewed(later, cb, a.Value)
	}
}

// recheck looks for an unclear booking in the list again; it never books.
func (b *Bot) recheck(ctx context.Context, meta modalMeta) message {
	requester := time.UTC
	if loc, err := booking.LoadZone(meta.Zone); err == nil {
		requester = loc
	}
	types, _ := b.types.recent()
	start, err := time.Parse(time.RFC3339Nano, meta.Start)
	if err != nil {
		return errorMessage("This booking cannot be checked", err)
	}
	list, err := b.booking.Bookings(ctx)
	if err != nil {
		return createOutcome(meta, &booking.Result{Outcome: booking.Unknown, Seen: []string{"GET /bookings failed again: " + err.Error()}}, nil, requester, types)
	}
	found, conclusive := booking.Find(list, meta.Event, start, meta.Email)
	res := &booking.Result{Outcome: booking.ProbablyNotBooked, Seen: []string{fmt.Sprintf("checked again: GET /bookings (%d listed) does not show it", len(list))}}
	switch {
	case found != nil:
		res = &booking.Result{Outcome: booking.Confirmed, Booking: found, Verified: true, Reconciled: true}
	case !conclusive:
		res = &booking.Result{Outcome: booking.Unknown, Seen: []string{"checked again: the list is full and the slot lies beyond it"}}
	}
	return createOutcome(meta, res, nil, requester, types)
}

// zoneSuggestions answers the time zone select's search.
func zoneSuggestions(query string) map[string]any {
	q := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(query), " ", "_"))
	var opts []*slack.OptionBlockObject
	for _, z := range zoneNames() {
		if q == "" || strings.Contains(strings.ToLower(z), q) {
			opts = append(opts, zoneOption(z))
			if len(opts) == 100 {
				break
			}
		}
	}
	return map[string]any{"options": opts}
}

// eventsAPI handles Events API callbacks: App Home opens.
func (b *Bot) eventsAPI(later *jobs, ev slackevents.EventsAPIEvent) {
	inner, ok := ev.InnerEvent.Data.(*slackevents.AppHomeOpenedEvent)
	if !ok || inner.Tab != "home" {
		return
	}
	if b.cfg.TeamID != "" && ev.TeamID != "" && ev.TeamID != b.cfg.TeamID {
		return
	}
	user := inner.User
	later.add("home", func(ctx context.Context) { b.publishHome(ctx, user) })
}
