package personal

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"github.com/bookbot/bookbot/booking"
)

// DefaultEvery is how often the Runner looks for what is due: reminders
// go out within this much of their time.
const DefaultEvery = 30 * time.Second

// keepClaims is how long the record of a sent message is kept: longer than
// any reminder's lead and a day's agenda, so none is sent twice.
const keepClaims = 8 * 24 * time.Hour

// ErrNotSent wraps a Sender's error when Slack certainly did not send the
// message (it answered with an error): the claim is released and the
// message is tried again at the next look. Any other error may have sent
// it, and it is not tried again.
var ErrNotSent = errors.New("message not sent")

// Sender sends a person their messages, rendered in their zone.
type Sender interface {
	SendReminder(ctx context.Context, d Due, loc *time.Location) error
	SendAgenda(ctx context.Context, d Due, loc *time.Location) error
}

// Zones says a person's time zone as their Slack profile has it now, so a
// move or a DST change is followed. An error means it is not known: nothing
// that depends on it is sent.
type Zones interface {
	PersonZone(ctx context.Context, user string) (*time.Location, error)
}

// Lister reads the bookings list (shared with everyone reading it at once).
type Lister interface {
	Bookings(ctx context.Context) ([]booking.Booking, error)
}

// Metrics is what the Runner reports.
type Metrics interface {
	Personal(kind Kind, result string) // result: sent, failed, maybe_sent
}

// Config configures a Runner.
type Config struct {
	List Lister // the owner's calendar
	// Calendar, when set, is the calendar each person's reminders and
	// agenda come from: its label (the owner's is "owner", read through
	// List when it is set) and its list.
	// An error leaves the person out of this look. Lists are read once a
	// look per calendar, and a claim names the calendar when it is not the
	// owner's, so each calendar's reminders are sent once.
	Calendar func(ctx context.Context, user string) (label string, list Lister, err error)
	Store    Store
	Send     Sender
	Zones    Zones
	Allowed  func(user string) bool // who may use bookbot now; others get nothing
	Metrics  Metrics                // nil: none

	Every time.Duration    // between looks; DefaultEvery when 0
	Now   func() time.Time // nil: time.Now
	Log   *slog.Logger     // nil: discarded
}

// Runner sends reminders and agendas when they are due.
type Runner struct {
	cfg  Config
	wake chan struct{}
}

// NewRunner returns a Runner.
func NewRunner(cfg Config) *Runner {
	if cfg.Every <= 0 {
		cfg.Every = DefaultEvery
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.Allowed == nil {
		cfg.Allowed = func(string) bool { return false }
	}
	return &Runner{cfg: cfg, wake: make(chan struct{}, 1)}
}

// Wake makes Run look now, as when someone changed their settings. It
// never blocks.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run looks at once, then every Every and whenever woken, until ctx ends;
// a look under way when ctx ends is finished first.
func (r *Runner) Run(ctx context.Context) error {
	tick := time.NewTicker(r.cfg.Every)
	defer tick.Stop()
	var pruned time.Time
	for {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 25*time.Second)
		if err := r.Tick(lctx); err != nil {
			r.cfg.Log.Warn("personal: reminders and agendas not sent this time", "error", err)
		}
		if now := r.cfg.Now(); now.Sub(pruned) > 24*time.Hour {
			if err := r.cfg.Store.Prune(lctx, now.Add(-keepClaims)); err != nil {
				r.cfg.Log.Warn("personal: pruning failed", "error", err)
			}
			pruned = now
		}
		cancel()
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		case <-r.wake:
			r.cfg.Log.Debug("personal: woken")
		}
	}
}

// Tick sends everything due now. The bookings list is read only when
// someone has something on, and right before sending, so a booking
// cancelled or moved since is never reminded of at its old time.
func (r *Runner) Tick(ctx context.Context) error {
	all, err := r.cfg.Store.AllSettings(ctx)
	if err != nil {
		return err
	}
	var users []string
	for u, s := range all {
		if !s.Off() && r.cfg.Allowed(u) {
			users = append(users, u)
		}
	}
	r.cfg.Log.Debug("personal: looking", "people", len(users))
	if len(users) == 0 {
		return nil
	}
	slices.Sort(users)
	lists := map[string][]booking.Booking{}
	now := r.cfg.Now()
	for _, u := range users {
		label, list, err := r.listOf(ctx, u, lists)
		if err != nil {
			if r.cfg.Calendar == nil {
				return err
			}
			r.cfg.Log.Info("personal: the person's calendar could not be read; nothing sent to them this time", "user", u, "error", err)
			continue
		}
		s := all[u]
		dues := Reminders(u, s, list, now)
		var loc *time.Location
		if len(dues) > 0 || s.Agenda != nil {
			if loc, err = r.cfg.Zones.PersonZone(ctx, u); err != nil {
				r.cfg.Log.Warn("personal: the person's zone is not known; nothing sent to them this time", "user", u, "error", err)
				continue
			}
		}
		if d, ok := AgendaDue(u, s, list, loc, now); ok {
			dues = append(dues, d)
		}
		for _, d := range dues {
			if label != Owner {
				d.Key = "cal\x00" + label + "\x00" + d.Key
			}
			if err := r.send(ctx, d, loc); err != nil {
				return err
			}
		}
	}
	return nil
}

// Owner is the label of the owner's calendar.
const Owner = "owner"

// listOf is the bookings of user's calendar, read once a look per
// calendar (lists holds those read).
func (r *Runner) listOf(ctx context.Context, user string, lists map[string][]booking.Booking) (string, []booking.Booking, error) {
	label, lister := Owner, r.cfg.List
	if r.cfg.Calendar != nil {
		var l Lister
		var err error
		if label, l, err = r.cfg.Calendar(ctx, user); err != nil {
			return "", nil, err
		}
		if label != Owner || lister == nil {
			lister = l // the owner's through List when it is given
		}
	}
	if list, ok := lists[label]; ok {
		return label, list, nil
	}
	list, err := lister.Bookings(ctx)
	if err != nil {
		return "", nil, err
	}
	lists[label] = list
	return label, list, nil
}

// send claims a message, sends it, and releases the claim when Slack
// certainly did not send it.
func (r *Runner) send(ctx context.Context, d Due, loc *time.Location) error {
	claimed, err := r.cfg.Store.Claim(ctx, d.Key, r.cfg.Now())
	if err != nil || !claimed {
		return err
	}
	if d.Kind == Reminder {
		err = r.cfg.Send.SendReminder(ctx, d, loc)
	} else {
		err = r.cfg.Send.SendAgenda(ctx, d, loc)
	}
	switch {
	case err == nil:
		r.metric(d.Kind, "sent")
		r.cfg.Log.Info("personal: sent", "kind", string(d.Kind), "user", d.User, "booking_id", d.Booking.ID, "late", d.Late)
	case errors.Is(err, ErrNotSent):
		r.metric(d.Kind, "failed")
		r.cfg.Log.Warn("personal: Slack refused the message; it is tried again", "kind", string(d.Kind), "user", d.User, "error", err)
		return r.cfg.Store.Release(ctx, d.Key)
	default:
		r.metric(d.Kind, "maybe_sent")
		r.cfg.Log.Warn("personal: the message may not have been sent; it is not sent again, so it cannot come twice",
			"kind", string(d.Kind), "user", d.User, "error", err)
	}
	return nil
}

func (r *Runner) metric(k Kind, result string) {
	if r.cfg.Metrics != nil {
		r.cfg.Metrics.Personal(k, result)
	}
}
