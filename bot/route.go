package bot

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/bookbot/bookbot/booking"
)

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
	c := escape(name) // in the problems' mrkdwn
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
		later.add("slots", func(ctx context.Context) { reply(b.slotsReply(ctx, cmd.UserID, args[0], 0)) })
	case verb == "slots":
		return b.ephemeral(helpMessage(name, fmt.Sprintf("Say which event type: `%s slots &lt;event&gt;` (see `%s types`).", c, c)))
	case verb == "new" && len(args) <= 1:
		meta := modalMeta{}
		if len(args) == 1 {
			meta.Event = args[0]
		}
		later.add("new", func(ctx context.Context) { b.openBookingModal(ctx, cmd.TriggerID, cmd.UserID, meta, reply) })
	case verb == "list" && len(args) == 0:
		later.add("list", func(ctx context.Context) { reply(b.listReply(ctx, cmd.UserID, 0, listMark{})) })
	case verb == "cancel" && len(args) == 1:
		id := args[0]
		if err := booking.ValidateBookingID(id); err != nil {
			return b.ephemeral(helpMessage(name, "That is not a booking ID: "+escape(err.Error())+". Booking IDs are shown by `"+c+" list`."))
		}
		later.add("cancel-confirm", func(ctx context.Context) { reply(b.cancelConfirmReply(ctx, cmd.UserID, id)) })
	case verb == "cancel":
		return b.ephemeral(helpMessage(name, fmt.Sprintf("Say which booking: `%s cancel &lt;booking-id&gt;` (IDs are shown by `%s list`).", c, c)))
	case verb == "audit" && len(args) == 0:
		later.add("audit", func(ctx context.Context) { reply(b.auditReply(ctx, cmd.UserID)) })
	case verb == "today" && len(args) == 0:
		later.add("today", func(ctx context.Context) { reply(b.todayReply(ctx, cmd.UserID)) })
	case verb == "remind" || verb == "agenda":
		return b.personalCommand(later, name, cmd.UserID, verb, args, reply)
	case verb == "digest" && len(args) == 0:
		later.add("digest-preview", func(ctx context.Context) {
			for _, m := range b.digestReply(ctx) {
				reply(m)
			}
		})
	default:
		return b.ephemeral(helpMessage(name, unknownCommand(cmd.Text)))
	}
	return nil
}

// unknownCommand is the problem a subcommand bookbot does not know is
// answered with, as mrkdwn.
func unknownCommand(text string) string {
	return "I don't know " + code(clip(strings.TrimSpace(text), maxNameRunes)) + "."
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
		switch cb.View.CallbackID {
		case callbackBooking:
			return b.submitBooking(later, cb)
		case callbackPersonal:
			return b.submitSettings(later, cb)
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
		later.add("slots", func(ctx context.Context) { reply(b.slotsReply(ctx, user, a.Value, 0)) })
	case actionSlotsMore, actionSlotsBack:
		slug, p, _ := strings.Cut(a.Value, " ")
		page, _ := strconv.Atoi(p)
		later.add("slots", func(ctx context.Context) { replace(b.slotsReply(ctx, user, slug, page)) })
	case actionShowList:
		later.add("list", func(ctx context.Context) { reply(b.listReply(ctx, user, 0, listMark{})) })
	case actionListPage, actionListPrev:
		page, _ := strconv.Atoi(a.Value)
		later.add("list", func(ctx context.Context) { replace(b.listReply(ctx, user, page, listMark{})) })
	case actionCancel:
		if a.Type != slack.ActionType(slack.METOverflow) {
			b.cancelPressed(later, user, a.Value, a.BlockID, cb.ResponseURL != "", inHome, replace)
			return
		}
		page, _ := listPage(a.BlockID)
		v := a.SelectedOption.Value
		if meta, ok := strings.CutPrefix(v, bookAgain); ok {
			later.add("new", func(ctx context.Context) { b.openBookingModal(ctx, cb.TriggerID, user, pickedMeta(meta), reply) })
			return
		}
		later.add("list", func(ctx context.Context) { replace(b.listReply(ctx, user, page, listMark{asking: v})) })
	case actionKeep:
		id := a.Value
		if page, ok := listPage(a.BlockID); ok {
			later.add("list", func(ctx context.Context) { replace(b.listReply(ctx, user, page, listMark{})) })
			return
		}
		later.add("keep", func(context.Context) { replace(keptMessage(id)) })
	case actionEventType, actionSlotDay, actionPickAnother, actionEditBooking:
		if !inModal {
			if a.ActionID == actionPickAnother || a.ActionID == actionEditBooking {
				// From the outcome message the person keeps: a new modal.
				later.add("new", func(ctx context.Context) {
					b.openBookingModal(ctx, cb.TriggerID, user, pickedMeta(a.Value), reply)
				})
			}
			return
		}
		b.formChanged(later, cb.View, user, a)
	case actionRecheck:
		viewID := ""
		if inModal {
			viewID = cb.View.ID
		}
		b.recheckPressed(later, user, a.Value, viewID, replace)
	case actionHomeRefresh:
		later.add("home", func(ctx context.Context) { b.publishHome(ctx, user) })
	case actionPersonalSettings:
		later.add("personal-settings", func(ctx context.Context) { b.openSettings(ctx, cb.TriggerID, user, reply) })
	case actionRemindOff:
		b.remindOffPressed(later, user, reply)
	case actionReviewed:
		b.markReviewed(later, cb, a.Value)
	}
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
