package app

import (
	"context"
	"log/slog"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/config"
)

// calendars adapts *booking.Calendars to bot.Calendars.
type calendars struct{ *booking.Calendars }

func (c calendars) For(user string, key booking.Key, refused func()) (bot.Booker, error) {
	cl, err := c.Calendars.For(user, key, refused)
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// NewSealer is the sealer of people's keys under BOOKBOT_SECRET_KEY; nil
// when it is not set.
func NewSealer(cfg *config.Config) (*account.Sealer, error) {
	if cfg.SecretKey.IsZero() {
		return nil, nil
	}
	secret, err := account.ParseSecret(cfg.SecretKey.Value())
	if err != nil {
		return nil, err
	}
	return account.NewSealer(secret)
}

// ownerBooker is the owner's client as the bot takes it: nil, not a nil
// *booking.Client, when there is no owner's key.
func ownerBooker(bk *booking.Client) bot.Booker {
	if bk == nil {
		return nil
	}
	return bk
}

// reconciler settles a write left in flight with the client of the
// calendar it went to: the owner's, or a connected person's, whose key is
// opened for it. A write whose calendar can no longer be reached (the key
// deleted or refused) is left unknown, for a person to check.
func reconciler(owner *booking.Client, cals *booking.Calendars, accounts account.Store, sealer *account.Sealer, log *slog.Logger) func(context.Context, booking.Write) *booking.Result {
	unknown := func(w booking.Write, why string) *booking.Result {
		log.Warn("journal: a write left in flight cannot be settled by listing: "+why, "calendar", w.Calendar)
		return &booking.Result{Outcome: booking.Unknown, Reconciled: true}
	}
	return func(ctx context.Context, w booking.Write) *booking.Result {
		if w.Calendar == "" || w.Calendar == booking.Owner {
			if owner == nil {
				return unknown(w, "the owner's key is no longer set")
			}
			return owner.Reconcile(ctx, w)
		}
		if accounts == nil || sealer == nil {
			return unknown(w, "own calendars are not set up")
		}
		a, ok, err := accounts.Get(ctx, w.Calendar)
		if err != nil || !ok || a.State != account.OK {
			return unknown(w, "the person's calendar is no longer connected")
		}
		key, err := sealer.Open(a.User, a.Sealed)
		if err != nil {
			return unknown(w, "the person's key does not open")
		}
		c, err := cals.For(a.User, key, func() {})
		if err != nil {
			return unknown(w, err.Error())
		}
		return c.Reconcile(ctx, w)
	}
}
