package bot

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
)

const (
	callbackConnect = "account_connect" // contract
	actionAPIKey    = "api_key"         // contract
)

// connectCheck bounds the GET /event-types that checks a key before the
// submission's ack, inside Slack's 3 seconds.
const connectCheck = 2 * time.Second

// connectStore bounds storing a checked key, apart from the check: a slow
// check leaves the write its own time; both fit in Slack's 3 seconds.
const connectStore = 700 * time.Millisecond

// accountFlow is `connect`, `disconnect` and `account`: a person's own
// calendar.
func accountFlow() flow {
	return flow{
		commands: []command{
			{name: "connect", help: "act on your own calendar (your API key)", run: func(b *Bot, later *jobs, c call) any {
				if m, ok := b.cannotConnect(); !ok {
					return b.ephemeral(m)
				}
				later.add("connect", func(ctx context.Context) { b.openView(ctx, c.TriggerID, connectModal(), "connect form", c.reply) })
				return nil
			}},
			{name: "disconnect", help: "delete your key", run: func(b *Bot, later *jobs, c call) any {
				later.add("disconnect", func(ctx context.Context) { c.reply(b.disconnect(ctx, c.UserID)) })
				return nil
			}},
			{name: "notices", usage: "here|off", brief: "here|off", help: "your own calendar's changes: to this channel / off (default: a DM)", maxArgs: 1, run: (*Bot).noticesCommand},
			{name: "account", help: "which calendar you act on", run: func(b *Bot, later *jobs, c call) any {
				later.add("account", func(ctx context.Context) { c.reply(b.accountReply(ctx, c.UserID)) })
				return nil
			}},
		},
		actions: map[string]func(*Bot, *jobs, press){
			actionConnect: func(b *Bot, later *jobs, p press) {
				if m, ok := b.cannotConnect(); !ok {
					later.add("connect", func(context.Context) { p.reply(m) })
					return
				}
				later.add("connect", func(ctx context.Context) { b.openView(ctx, p.cb.TriggerID, connectModal(), "connect form", p.reply) })
			},
		},
		submissions: map[string]func(*Bot, *jobs, slack.InteractionCallback) any{
			callbackConnect: (*Bot).submitConnect,
		},
		events: map[slackevents.EventsAPIType]func(*Bot, *jobs, slackevents.EventsAPIEvent){
			slackevents.UserChange: (*Bot).userChanged,
		},
	}
}

// cannotConnect says why connecting is not possible on this bookbot, if
// it is not: no secret key, or no store.
func (b *Bot) cannotConnect() (message, bool) {
	if b.cfg.Accounts != nil && b.cfg.Sealer != nil && b.cfg.Calendars != nil {
		return message{}, true
	}
	text := "Connecting your own calendar is not set up on this bookbot: the operator must set BOOKBOT_SECRET_KEY (32 random bytes, base64), which encrypts people's keys. Until then you act on the owner's calendar."
	return message{Text: text, Blocks: []slack.Block{section(":lock: " + escape(text))}}, false
}

// submitConnect checks the key with GET /event-types, bounded to answer
// within Slack's 3 seconds, and stores it sealed only when the API takes
// it. A refused key is an error in the modal, and nothing is stored; a
// working one closes the modal and the person gets "Connected". The key is
// never shown back.
func (b *Bot) submitConnect(later *jobs, cb slack.InteractionCallback) any {
	user := cb.User.ID
	if _, ok := b.cannotConnect(); !ok {
		return slack.NewErrorsViewSubmissionResponse(map[string]string{actionAPIKey: "Connecting is not set up on this bookbot: the operator must set BOOKBOT_SECRET_KEY."})
	}
	var raw string
	if cb.View.State != nil {
		raw = cb.View.State.Values[actionAPIKey][actionAPIKey].Value
	}
	key, err := booking.NewKey(raw)
	if err != nil {
		return slack.NewErrorsViewSubmissionResponse(map[string]string{actionAPIKey: "Paste the whole key, with no spaces in it."})
	}
	var page string
	if cb.View.State != nil {
		page = strings.TrimSpace(cb.View.State.Values[actionBookingPage][actionBookingPage].Value)
	}
	if page != "" {
		p, problem := pageOf(page)
		if problem != "" {
			return slack.NewErrorsViewSubmissionResponse(map[string]string{actionBookingPage: problem})
		}
		if b.cfg.BookingPage != "" && samePage(p, b.cfg.BookingPage) {
			return slack.NewErrorsViewSubmissionResponse(map[string]string{actionBookingPage: "That is the owner's booking page: its links unfurl from the owner's calendar. Give your own page's address, or leave this empty."})
		}
		page = p
	}
	ctx, cancel := context.WithTimeout(context.Background(), connectCheck)
	defer cancel()
	// A fresh client: an older key's stays out of it. A refusal of this
	// key, not stored, changes nothing (KeyRefused).
	b.cfg.Calendars.Drop(user)
	bk, err := b.cfg.Calendars.For(user, b.cfg.Sealer.CalendarID(key), key)
	var types []booking.EventType
	if err == nil {
		types, err = bk.EventTypes(ctx)
	}
	if err != nil {
		b.cfg.Calendars.Drop(user)
		b.log.Info("a key offered to connect a calendar was not stored", "user", user, "err", err)
		why := "The booking service refused this key, so nothing was stored. Check that you copied the whole key and that it is not revoked."
		if !errors.Is(err, booking.ErrUnauthorized) {
			why = "The key could not be checked just now (" + failureText(err) + ") Nothing was stored; try again."
		}
		return slack.NewErrorsViewSubmissionResponse(map[string]string{actionAPIKey: why})
	}
	b.cfg.Calendars.Drop(user) // made again, with the refusal hook, when used
	sealed, err := b.cfg.Sealer.Seal(user, key)
	var others []string // who else acts on this calendar
	owners := false     // it is the owner's calendar
	if err == nil {
		sctx, scancel := context.WithTimeout(context.Background(), connectStore)
		defer scancel()
		now := b.cfg.Now()
		var all []account.Account
		if all, err = b.cfg.Accounts.All(sctx); err == nil {
			a := account.Account{User: user, Sealed: sealed, ConnectedAt: now, LastUsed: now, State: account.OK,
				Calendar: account.Connecting(key, b.cfg.Sealer, all), Page: page}
			for _, o := range all {
				switch {
				case o.User != user && page != "" && samePage(o.Page, page) && o.Calendar != a.Calendar:
					// A page is one calendar's: those who connected the
					// same key may name it too.
					return slack.NewErrorsViewSubmissionResponse(map[string]string{actionBookingPage: "Someone else connected this booking page. Give your own page's address, or leave this empty."})
				case o.User == user:
					a.Notices = o.Notices
				case o.Calendar == a.Calendar && o.State == account.OK && b.cfg.Allowed(o.User):
					others = append(others, o.User)
				}
			}
			owners = b.cfg.IsOwnerKey != nil && b.cfg.IsOwnerKey(key)
			err = b.cfg.Accounts.Put(sctx, a)
		}
	}
	if err != nil {
		b.log.Error("a checked key could not be stored", "user", user, "err", err)
		return slack.NewErrorsViewSubmissionResponse(map[string]string{actionAPIKey: "The key works, but bookbot could not store it (" + failureText(err) + ") Try again in a minute."})
	}
	b.cals.drop(user)
	b.accountsChanged()
	b.log.Info("calendar connected", "user", user, "event_types", len(types), "page", page != "")
	later.add("connected", func(ctx context.Context) {
		b.dm(ctx, user, connectedMessage(len(types), owners, others, page))
		b.publishHome(ctx, user)
	})
	return slack.NewClearViewSubmissionResponse()
}

// noticesCommand is `notices here`, `notices off` and `notices`: where a
// connected person's own calendar's changes go.
func (b *Bot) noticesCommand(later *jobs, c call) any {
	arg := ""
	if len(c.args) == 1 {
		arg = strings.ToLower(c.args[0])
	}
	if arg != "" && arg != "here" && arg != "off" {
		return b.ephemeral(helpMessage(c.Command, fmt.Sprintf("Say `%s notices here` (in the channel they should go to) or `%s notices off`.", escape(c.Command), escape(c.Command))))
	}
	user, channel := c.UserID, c.ChannelID
	later.add("notices", func(ctx context.Context) { c.reply(b.noticesReply(ctx, user, arg, channel)) })
	return nil
}

func (b *Bot) noticesReply(ctx context.Context, user, arg, channel string) message {
	var a account.Account
	var ok bool
	if b.cfg.Accounts != nil {
		var err error
		if a, ok, err = b.cfg.Accounts.Get(ctx, user); err != nil {
			return b.failed("Your notices setting could not be read", err)
		}
	}
	if !ok || a.State != account.OK {
		text := "Notices here are of your own calendar's changes, and you have none connected. The owner's calendar's notices go where the operator set them."
		return message{Text: text, Blocks: []slack.Block{section(escape(text)), slack.NewActionBlock("notices_actions", connectButton("Connect your calendar"))}}
	}
	switch {
	case arg == "off":
		a.Notices = account.NoticesOff
	case arg == "here" && (strings.HasPrefix(channel, "D") || channel == ""):
		a.Notices = account.NoticesDM
	case arg == "here":
		a.Notices = channel
	}
	if arg != "" {
		// Only the setting is written: a disconnect or a refusal since the
		// read above stays as it is.
		saved, err := b.cfg.Accounts.SetNotices(ctx, user, a.Notices)
		if err != nil {
			return b.failed("Your notices setting could not be saved", err)
		}
		b.accountsChanged()
		if !saved {
			return b.noticesReply(ctx, user, "", channel) // disconnected meanwhile: said so
		}
	}
	return noticesMessage(a.Notices, arg != "")
}

// accountsChanged tells whoever follows the accounts (the notices of own
// calendars) that one changed.
func (b *Bot) accountsChanged() {
	if b.cfg.AccountsChanged != nil {
		b.cfg.AccountsChanged()
	}
}

// noticesMessage says where a person's own calendar's notices go.
func noticesMessage(to string, changed bool) message {
	var text string
	switch to {
	case account.NoticesDM:
		text = "New, moved and cancelled bookings of your calendar come to you as direct messages."
	case account.NoticesOff:
		text = "Notices of your calendar are off."
	default:
		text = "New, moved and cancelled bookings of your calendar are posted in the channel where you typed `notices here` (bookbot must be a member there). " + escape(to)
	}
	if changed {
		text = "Saved. " + text
	}
	return message{Text: text, Blocks: []slack.Block{section(text)}}
}

// disconnect deletes the person's key.
func (b *Bot) disconnect(ctx context.Context, user string) message {
	if b.cfg.Accounts == nil {
		return accountMessage(account.Account{}, false, b.booking != nil)
	}
	deleted, err := b.cfg.Accounts.Delete(ctx, user)
	if err != nil {
		return b.failed("Your key could not be deleted", err)
	}
	b.forget(user)
	b.accountsChanged()
	if deleted {
		b.log.Info("calendar disconnected: the key is deleted", "user", user)
	}
	return disconnectedMessage(deleted, b.booking != nil)
}

// forget lets go of everything kept of user's own calendar in memory.
func (b *Bot) forget(user string) {
	b.cals.drop(user)
	if b.cfg.Calendars != nil {
		b.cfg.Calendars.Drop(user)
	}
}

func (b *Bot) accountReply(ctx context.Context, user string) message {
	var a account.Account
	var ok bool
	if b.cfg.Accounts != nil {
		var err error
		if a, ok, err = b.cfg.Accounts.Get(ctx, user); err != nil {
			return b.failed("Which calendar you act on could not be read", err)
		}
	}
	return accountMessage(a, ok, b.booking != nil)
}

// KeyRefused is told of every 401 the API answers a person's key (the
// Calendars' refusal hook): when key is still their account's, it marks
// the account "reconnect needed", deletes the key, stops using it, and
// tells them once. An older key's refusal (they connected again since,
// the old client still reading) changes nothing.
func (b *Bot) KeyRefused(user string, key booking.Key) {
	if b.cfg.Accounts == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.WorkTimeout)
	go func() {
		defer cancel()
		err := account.Refused(ctx, b.cfg.Accounts, b.cfg.Sealer, user, key)
		switch {
		case errors.Is(err, account.ErrNotHeld):
			b.log.Info("a refused key is not the account's key (connected again, or disconnected, since); the account is kept", "user", user)
			return
		case err != nil:
			b.log.Error("a refused key could not be marked; it is tried again at its next use", "user", user, "err", err)
			return
		}
		b.forget(user)
		b.accountsChanged()
		b.log.Warn("key deleted: the booking service refused it (401); the person is asked to connect again", "user", user)
		b.dm(ctx, user, reconnectMessage())
	}()
}

// userChanged deletes the key of a person Slack deactivated.
func (b *Bot) userChanged(later *jobs, ev slackevents.EventsAPIEvent) {
	inner, ok := ev.InnerEvent.Data.(*slackevents.UserChangeEvent)
	if !ok || !inner.User.Deleted || b.cfg.Accounts == nil {
		return
	}
	user := inner.User.ID
	later.add("user-deactivated", func(ctx context.Context) {
		if deleted, err := b.cfg.Accounts.Delete(ctx, user); err != nil {
			b.log.Error("a deactivated person's key could not be deleted; it is tried again at the next start", "user", user, "err", err)
		} else if deleted {
			b.log.Warn("key deleted: the person was deactivated in Slack", "user", user)
		}
		b.forget(user)
		b.accountsChanged() // their notices stop now, not at the next look
	})
}

// PurgeAccounts deletes the keys of people no longer allowed to use
// bookbot, at start; gone reports people Slack deactivated (nil: none is
// asked about).
func (b *Bot) PurgeAccounts(ctx context.Context, gone func(ctx context.Context, user string) bool) error {
	if b.cfg.Accounts == nil {
		return nil
	}
	all, err := b.cfg.Accounts.All(ctx)
	if err != nil {
		return err
	}
	for _, a := range all {
		why := ""
		switch {
		case !b.cfg.Allowed(a.User):
			why = "the person is no longer in BOOKBOT_ALLOWED_USERS"
		case gone != nil && gone(ctx, a.User):
			why = "the person was deactivated in Slack"
		default:
			continue
		}
		if _, err := b.cfg.Accounts.Delete(ctx, a.User); err != nil {
			return err
		}
		b.forget(a.User)
		b.log.Warn("key deleted: "+why, "user", a.User)
	}
	return nil
}

// connectModal asks for a person's API key, and their booking page.
func connectModal() slack.ModalViewRequest {
	input := slack.NewPlainTextInputBlockElement(plain("Paste your API key"), actionAPIKey)
	input.MaxLength = 1000
	page := slack.NewURLTextInputBlockElement(plain("https://book.example.com/you"), actionBookingPage)
	pageBlock := slack.NewInputBlock(actionBookingPage, plain("Your booking page"), plain("Links to its event types posted in Slack then unfurl into cards of your calendar's free times."), page)
	pageBlock.Optional = true
	return slack.ModalViewRequest{
		Type:       slack.VTModal,
		CallbackID: callbackConnect,
		Title:      plain("Connect your calendar"),
		Submit:     plain("Connect"),
		Close:      plain("Cancel"),
		Blocks: slack.Blocks{BlockSet: []slack.Block{
			section("From now on bookbot acts on *your own calendar* when you use it: event types, free slots, bookings, booking and cancelling."),
			section("Your API key gives full access to your calendar. Create one on the booking service's *API keys* page (it shows the whole key once) and paste it below."),
			slack.NewInputBlock(actionAPIKey, plain("API key"), plain("bookbot checks it before storing it, encrypted; it is never shown again. `disconnect` deletes it."), input),
			pageBlock,
		}},
	}
}

// connectedMessage answers a key that works: the owner's key is the
// owner's calendar, and a key others connected is theirs too, so the
// person knows whose bookings and reviews they now share.
func connectedMessage(types int, owners bool, others []string, page string) message {
	text := fmt.Sprintf("Connected: your calendar (%s). Your commands now act on it.", plural(types, "event type"))
	switch {
	case owners:
		text = fmt.Sprintf("Connected: this key is the owner's calendar (%s), which you share with everyone on it: its bookings, its audit and its reviews.", plural(types, "event type"))
	case len(others) > 0:
		text += " " + mentions(others) + " connected the same calendar: you share its bookings, its audit and its reviews."
	}
	if page != "" {
		text += " Links to " + pageLink(page, "your booking page") + "'s event types now unfurl into cards of your free times."
	}
	return message{Text: text, Blocks: []slack.Block{
		section(":white_check_mark: " + text),
		slack.NewActionBlock("connected_actions", button(actionShowTypes, "Event types", ""), upcomingButton()),
	}}
}

func disconnectedMessage(deleted, owner bool) message {
	next := "You act on the owner's calendar again."
	if !owner {
		next = "Connect a calendar to use bookbot again."
	}
	text := "Disconnected: your key is deleted. " + next
	if !deleted {
		text = "You had no calendar of your own connected. " + strings.TrimSuffix(strings.Replace(next, " again", "", 1), ".") + "."
	}
	return message{Text: text, Blocks: []slack.Block{
		section(escape(text)),
		slack.NewActionBlock("disconnected_actions", connectButton("Connect your calendar")),
	}}
}

// accountMessage says which calendar the person acts on.
func accountMessage(a account.Account, connected, owner bool) message {
	var text, fallback string
	var next slack.BlockElement = connectButton("Connect your calendar")
	switch {
	case connected && a.State == account.Reconnect:
		text = "Your calendar needs connecting again: the booking service refused its key. Until then bookbot does not act for you."
		next = connectButton("Connect again")
	case connected:
		text = "You act on *your own calendar*, connected " + moment(a.ConnectedAt, time.UTC)
		fallback = "You act on your own calendar, connected " + a.ConnectedAt.UTC().Format("2 Jan 2006") + "."
		if !a.LastUsed.IsZero() {
			text += ", last used " + moment(a.LastUsed, time.UTC)
		}
		text += ". Connect again to replace the key; `disconnect` deletes it."
		next = connectButton("Replace the key")
	case owner:
		text = "You act on *the owner's calendar*. Connect your own to act on it instead."
	default:
		text = "You have no calendar connected: this bookbot acts only on calendars people connect."
	}
	if fallback == "" {
		fallback = strings.ReplaceAll(text, "*", "")
	}
	return message{Text: fallback, Blocks: []slack.Block{
		section(text),
		slack.NewActionBlock("account_actions", next),
	}}
}
