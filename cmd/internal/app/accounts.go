package app

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/bookbot/bookbot/account"
	"github.com/bookbot/bookbot/booking"
	"github.com/bookbot/bookbot/booking/journal"
	"github.com/bookbot/bookbot/bot"
	"github.com/bookbot/bookbot/config"
	"github.com/bookbot/bookbot/notices"
)

// calendars adapts *booking.Calendars to bot.Calendars.
type calendars struct{ *booking.Calendars }

func (c calendars) For(user, id string, key booking.Key) (bot.Booker, error) {
	cl, err := c.Calendars.For(user, id, key)
	if err != nil {
		return nil, err
	}
	return cl, nil
}

// keyRefused is told of every 401 a person's key gets, from any client
// of it: the bot's, the notices', a reconciliation's. Before the bot is
// made (writes recovered at start) the account is marked here, unsaid.
func (a *App) keyRefused(user string, key booking.Key) {
	if b := a.refusals.Load(); b != nil {
		b.KeyRefused(user, key)
		return
	}
	if a.State.Accounts == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	switch err := account.Refused(ctx, a.State.Accounts, a.sealer, user, key); {
	case err == nil:
		a.log.Warn("key deleted: the booking service refused it (401); the person is asked to connect again at their next use", "user", user)
	case !errors.Is(err, account.ErrNotHeld):
		a.log.Error("a refused key could not be marked; it is tried again at its next use", "user", user, "err", err)
	}
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

// isOwnerKey is bot.Config.IsOwnerKey of the owner's client: nil when
// there is none.
func isOwnerKey(owner *booking.Client) func(booking.Key) bool {
	if owner == nil {
		return nil
	}
	return owner.Holds
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
		a, key, err := account.Open(ctx, accounts, sealer, w.Calendar)
		switch {
		case errors.Is(err, account.ErrOpen):
			return unknown(w, "the person's key does not open")
		case err != nil:
			return unknown(w, "the person's calendar is no longer connected")
		}
		c, err := cals.For(a.User, account.CalendarOf(a, key, sealer, isOwnerKey(owner)), key)
		if err != nil {
			return unknown(w, err.Error())
		}
		return c.Reconcile(ctx, w)
	}
}

// personNotices keeps a watcher of live notices running for each
// connected person whose notices are on (DM by default, or the channel
// they chose with `/booking notices here`), until ctx ends. It looks at
// the accounts every NOTIFY_INTERVAL, so a person who connects, moves or
// stops their notices is followed within one.
func (a *App) personNotices(ctx context.Context) {
	st := a.State
	if st.Accounts == nil || st.AccountNotices == nil || st.Notices == nil || a.sealer == nil {
		return
	}
	type running struct {
		channel string
		list    notices.Lister
		stop    context.CancelFunc
		done    chan struct{}
	}
	watchers := map[string]*running{}
	stop := func(user string) {
		r := watchers[user]
		r.stop()
		<-r.done
		delete(watchers, user)
	}
	defer func() {
		for u := range watchers {
			stop(u)
		}
	}()
	pub := bot.SlackNoticePublisher{Slack: a.slack, Zone: a.cfg.DigestZone, IncludeEmails: a.cfg.NotifyIncludeEmails, Now: a.now, Sleep: a.sleep}
	look := func() {
		all, err := st.Accounts.All(ctx)
		if err != nil {
			a.log.Warn("notices of own calendars: the accounts could not be read; looked at again in a while", "err", err)
			return
		}
		on := map[string]bool{}
		for _, acc := range all {
			if acc.State != account.OK || acc.Notices == account.NoticesOff || len(acc.Sealed) == 0 || !a.cfg.Allowed(acc.User) {
				continue
			}
			id, list, err := a.Bot.NoticesOf(ctx, acc)
			if err != nil {
				continue
			}
			channel := acc.Notices
			if channel == account.NoticesDM {
				channel = acc.User // chat.postMessage to a user ID: their DM with bookbot
			}
			on[acc.User] = true
			if r := watchers[acc.User]; r != nil {
				if r.channel == channel && r.list == list {
					continue
				}
				stop(acc.User)
			}
			w := notices.NewWatcher(notices.Config{
				List:      list,
				Store:     notices.ForCalendar(st.Notices, st.AccountNotices, acc.User, acc.ConnectedAt.UTC().Format(time.RFC3339Nano)),
				Publisher: pub,
				Finder:    bot.SlackFinder{Slack: a.slack},
				Writes:    writesOn(st.Journal, id, acc.User),
				Channel:   channel,
				Interval:  a.cfg.NotifyInterval,
				Now:       a.now,
				Sleep:     a.sleep,
				Log:       a.log.With("calendar", acc.User),
			})
			wctx, cancel := context.WithCancel(ctx)
			r := &running{channel: channel, list: list, stop: cancel, done: make(chan struct{})}
			watchers[acc.User] = r
			a.log.Info("notices of an own calendar on", "calendar", acc.User, "to", channel)
			go func() { defer close(r.done); _ = w.Run(wctx) }()
		}
		for u := range watchers {
			if !on[u] {
				stop(u)
				a.log.Info("notices of an own calendar off", "calendar", u)
			}
		}
	}
	t := time.NewTicker(a.cfg.NotifyInterval)
	defer t.Stop()
	for {
		look()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-a.accountsChanged:
		}
	}
}

// writesOn is the journal of one calendar's writes, for its notices: id
// is the calendar's (booking.Owner, or account.CalendarOf), label whose it
// is, for entries older than calendar IDs. Another calendar's write of the
// same event, start and attendee made none of this one's changes, and is
// not named in its notices.
func writesOn(all notices.Writes, id, label string) notices.Writes {
	return calendarWrites{all: all, id: id, label: label}
}

type calendarWrites struct {
	all       notices.Writes
	id, label string
}

func (c calendarWrites) Since(t time.Time) ([]journal.Entry, error) {
	list, err := c.all.Since(t)
	return slices.DeleteFunc(list, func(e journal.Entry) bool {
		if id := e.CalendarOf(); id != "" {
			return id != c.id
		}
		return e.Calendar != c.label
	}), err
}
